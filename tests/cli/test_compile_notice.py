"""A first run says that it is compiling, and for how long; a warm run says nothing; ``qdecode warmup``
fills the cache (qdecode/cli/compile_notice.py, qdecode/cli/warmup.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np
import stim

from qdecode.cli.compile_notice import CompileWatch, compile_notice
from qdecode.cli.main import main

_OUR_ENV = ("NUMBA_CACHE_DIR", "QDECODE_CACHE_DIR", "_QDECODE_NUMBA_CACHE_DIR", "_QDECODE_USER_NUMBA_CACHE_DIR")


def _fresh_kernel():
    """A jitted function never compiled before (no disk cache): its first call is a cache miss."""

    @numba.njit
    def triple(x):
        return 3 * x

    return triple


def test_a_compilation_is_announced_and_summed_up():
    lines: list[str] = []
    f = _fresh_kernel()
    with compile_notice("demo", say=lines.append) as watch:
        assert f(2) == 6
    assert len(lines) == 2, lines
    assert lines[0].startswith("qdecode: compiling demo's kernels (first use with this compile cache")
    assert lines[1].startswith("qdecode: compiled 1 kernel for demo in ")
    assert watch.kernels == 1 and watch.seconds > 0


def test_a_compiled_kernel_says_nothing():
    f = _fresh_kernel()
    f(1)  # compiled outside the notice
    lines: list[str] = []
    with compile_notice("demo", say=lines.append) as watch:
        assert f(4) == 12
        assert f(np.int64(5)) == 15
    assert lines == [] and watch.kernels == 0


def test_quiet_says_nothing():
    lines: list[str] = []
    with compile_notice("demo", quiet=True, say=lines.append) as watch:
        _fresh_kernel()(1)
    assert watch is None and lines == []


def test_the_ticker_says_how_long_it_has_taken():
    now = [100.0]
    lines: list[str] = []
    watch = CompileWatch("bposd", lines.append, clock=lambda: now[0])
    watch.tick()  # nothing compiling yet
    assert lines == []
    watch.on_start(None)
    watch.on_start(None)  # a callee, nested: not a second kernel
    now[0] = 112.4
    watch.tick()
    assert lines[-1] == "qdecode: still compiling (12 s so far)"
    watch.on_end(None)
    watch.on_end(None)
    now[0] = 130.0
    watch.tick()  # between compilations (decoding): quiet
    assert len(lines) == 2
    assert watch.kernels == 1 and abs(watch.seconds - 12.4) < 1e-9
    assert watch.summary() == ("qdecode: compiled 1 kernel for bposd in 12.4 s; later runs load them from the "
                               "cache")


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _OUR_ENV}
    env.update(extra)
    return env


def _qdecode(args: list[str], cache) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qdecode.cli.main", *args], capture_output=True, text=True,
                          env=_clean_env(QDECODE_CACHE_DIR=str(cache)), timeout=600)


def test_warmup_fills_the_cache_and_predict_then_starts_quietly(tmp_path):
    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=0.01)
    dem = c.detector_error_model(decompose_errors=True)
    (tmp_path / "m.dem").write_text(str(dem))
    stim.write_shot_data_file(data=c.compile_detector_sampler(seed=1).sample(40), path=tmp_path / "d.b8",
                              format="b8", num_detectors=dem.num_detectors)
    predict = ["predict", "--dem", str(tmp_path / "m.dem"), "--dets", str(tmp_path / "d.b8"), "--decoder", "uf",
               "--obs-out", str(tmp_path / "o.b8")]

    cold = _qdecode(predict, tmp_path / "cold")  # an empty cache: compiling is announced
    assert cold.returncode == 0, cold.stderr
    lines = cold.stderr.splitlines()
    assert lines[0].startswith("qdecode: compiling uf[") and "first use with this compile cache" in lines[0]
    assert lines[-1].startswith("qdecode: compiled ") and " for uf[" in lines[-1], lines

    first = _qdecode(["warmup", "--decoder", "uf"], tmp_path / "warm")
    assert first.returncode == 0, first.stderr
    line = [x for x in first.stdout.splitlines() if x.startswith("uf: ")]
    assert line and int(line[0].split()[1]) > 0, first.stdout
    again = _qdecode(["warmup", "--decoder", "uf"], tmp_path / "warm")
    assert "uf: 0 kernels compiled" in again.stdout, again.stdout

    warm = _qdecode(predict, tmp_path / "warm")
    assert warm.returncode == 0, warm.stderr
    assert "compil" not in warm.stderr, warm.stderr
    assert (tmp_path / "o.b8").read_bytes()


def test_warmup_refuses_a_bad_decoder_name(capsys):
    assert main(["warmup", "--decoder", "no-such-decoder"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no-such-decoder" in err
    assert main(["warmup", "--jobs", "0"]) == 2


def test_is_empty_looks_for_numba_index_files(tmp_path):
    from qdecode import compile_cache

    assert compile_cache.is_empty(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "kernels.bp.bp_decode-12.py311.nbi").write_bytes(b"")
    assert not compile_cache.is_empty(tmp_path)


def test_a_sweep_on_an_empty_cache_says_so_first(tmp_path):
    out = _qdecode(["sweep", "--code", "surface", "--d", "3", "--rounds", "3", "--noise", "sd6", "--p", "0.01",
                    "--decoder", "pymatching", "--max-shots", "200", "--max-errors", "1000", "--workers", "1",
                    "--out", str(tmp_path / "s.csv")], tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    lines = [x for x in out.stderr.splitlines() if "compile cache" in x]
    assert lines and "is empty: each decoder's first batch compiles its kernels first" in lines[0], out.stderr
