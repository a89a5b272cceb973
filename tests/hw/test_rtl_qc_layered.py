"""The Z-wide layered QC-LDPC min-sum RTL (``qdecode.hw.rtl.qc_layered``): shape and cycle formula, refusals, and
bit-exact replay of the kernel ``qc_minsum_range`` (``early_stop=False``) in Icarus Verilog, mutants caught.

Frames are noisy LLRs of the all-zero codeword (a codeword of every code) or, for 5G NR codes, random encoded
messages over BPSK/AWGN, noisy enough that some frames converge and some do not.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.errors import InputError
from qdecode.hw.rtl import run_synth
from qdecode.hw.rtl.qc_contract import MUTATIONS, QcRtlConfig, check_qc_vectors, qc_config_from_params, write_qc_vectors
from qdecode.hw.rtl.qc_layered import (
    design_from_qc_decoder,
    export_qc_vectors,
    generate_qc_layered,
    latency_cycles,
    qc_shape,
    simulate_qc,
    widths,
)
from qdecode.hw.vectors import bits_from_hex, read_lines

# Corner cases: an empty base row (layer of degree 0), a degree-1 row, an empty column, shifts >= Z (taken mod Z)
CORNERS = np.array([
    [1, 2, 3, 3, 0, 0, -1],
    [1, -1, 0, -1, -1, 1, -1],
    [-1, -1, -1, -1, -1, -1, -1],
    [-1, -1, -1, 6, -1, -1, -1],
    [0, 3, 1, 1, 2, 2, -1],
])


def _config(bits=8, normalized=False, max_iter=6, mutation=None):
    lim = (1 << (bits - 1)) - 1
    return QcRtlConfig(bits=bits, lim=lim, msg_lim=(1 << (bits - 3)) - 1, normalized=normalized,
                       beta=2 if bits == 8 else 40, num=192, shift=8, max_iter=max_iter, mutation=mutation)


def _frames(shifts, z, cfg, count, seed, sigma=0.8):
    """Quantised LLRs of the all-zero codeword over AWGN, within the decoder's channel limit."""
    rng = np.random.default_rng(seed)
    frac = 2 if cfg.bits == 8 else 8
    y = 1.0 + sigma * rng.standard_normal((count, shifts.shape[1] * z))
    top = cfg.msg_lim - cfg.beta - 1
    return np.clip(np.rint(2 * y / sigma**2 * 2**frac), -top, top).astype(np.int64)


def _replay(tmp_path, shifts, z, cfg, count=48, seed=1, mutation=None):
    llr = _frames(shifts, z, cfg, count, seed)
    vm = write_qc_vectors(shifts, z, cfg.kernel_params(), cfg.bits, llr, tmp_path / "v")
    design = cfg if mutation is None else QcRtlConfig(**{**cfg.__dict__, "mutation": mutation})
    generate_qc_layered(shifts, z, design, tmp_path / "r", frames=count)
    return vm, simulate_qc(tmp_path / "r", tmp_path / "v")


def test_shape_widths_and_cycle_formula():
    sh = qc_shape(CORNERS, 4)
    assert (sh["rows"], sh["cols"], sh["nnz"], sh["max_degree"]) == (5, 7, 16, 6)
    assert sh["degrees"] == [6, 3, 0, 1, 6] and sh["layer_ptr"] == [0, 6, 9, 9, 10, 16]
    assert sh["edge_col"][:6] == [0, 1, 2, 3, 4, 5] and sh["edge_shift"][9] == 6 % 4
    assert sh["cycles_per_iteration"] == 2 * 16 + 5  # sum over layers of 2 d + 1
    assert latency_cycles(sh, 6) == 6 * 37 + 16 + 7 + 3
    wd = widths(sh, _config())
    assert (wd["W"], wd["MW"], wd["MSW"], wd["QW"], wd["SB"], wd["XW"]) == (8, 5, 6, 8, 2, 3)
    wd16 = widths(sh, _config(bits=16))
    assert (wd16["MW"], wd16["MSW"], wd16["QW"]) == (13, 14, 16)
    from qdecode.codes.nr5g import Nr5gCode

    code = Nr5gCode.from_params(bg=2, K=512, E=1024)
    assert qc_shape(code.shifts, code.Z)["cycles_per_iteration"] == 436  # BG2: 197 blocks, 42 rows


def test_generate_is_deterministic_and_complete():
    cfg = _config()
    files = generate_qc_layered(CORNERS, 4, cfg, frames=3)
    assert {"qc_top.v", "tb_qc.v", "rtl_manifest.json", "README.md", "synth_ice40.ys", "synth_xc7.ys"} <= set(files)
    assert generate_qc_layered(CORNERS, 4, cfg, frames=3) == files
    v = files["qc_top.v"]
    assert re.findall(r"^module (\w+)", v, re.M) == ["qc_rot", "qc_top"]
    assert "reg [31:0] post_mem [0:6];" in v and "reg [23:0] msg_mem [0:15];" in v
    mf = json.loads(files["rtl_manifest.json"])
    assert mf["top"] == "qc_top" and mf["architecture"] == "qc-layered"
    assert mf["cycles_per_iteration"] == 37 and mf["latency_cycles"] == latency_cycles(qc_shape(CORNERS, 4), 6)
    assert "-top qc_top" in files["synth_xc7.ys"]
    assert "localparam S = 3" in files["tb_qc.v"]
    assert generate_qc_layered(CORNERS, 4, _config(mutation="beta-plus-one"))["qc_top.v"] != v


def test_refusals():
    for kw in ({"bits": 3}, {"msg_lim": 127}, {"beta": 200}, {"max_iter": 0}, {"mutation": "nope"},
               {"normalized": True, "num": 300}):
        with pytest.raises(InputError):
            QcRtlConfig(**{**_config().__dict__, **kw})
    for bad in (np.array([[0, -2]]), np.array([0, 1]), np.array([[-1, -1]]), np.array([[0.5, 1.0]])):
        with pytest.raises(InputError):
            qc_shape(bad, 4)
    with pytest.raises(InputError, match="Z"):
        qc_shape(CORNERS, 0)
    with pytest.raises(InputError, match="layered"):
        qc_config_from_params(_config().kernel_params()._replace(flooding=True), 8)
    with pytest.raises(InputError, match="QcMinSumDecoder"):
        design_from_qc_decoder(object())
    with pytest.raises(InputError, match="Z, bits"):
        check_qc_vectors({"Z": 4, "bits": 8}, {"Z": 5, "bits": 16})


CASES = [  # (Z, bits, normalized)
    (4, 8, False),
    (4, 8, True),
    (5, 16, False),  # Z not a power of two: the rotator's stages wrap
]


@pytest.mark.parametrize("z, bits, normalized", CASES, ids=["z4-oms8", "z4-nms8", "z5-oms16"])
def test_bit_exact_small_base_matrix(tmp_path, z, bits, normalized):
    rng = np.random.default_rng(z + bits + normalized)
    base = rng.integers(0, z, size=(3, 6))
    base[rng.random(base.shape) < 0.3] = -1
    base[:, 0] = rng.integers(0, z, size=3)
    cfg = _config(bits, normalized)
    vm, report = _replay(tmp_path, base, z, cfg, count=48, seed=z)
    assert report.shots == 48 and report.ok, report.summary()
    assert 0 < vm["converged_frames"] < 48  # both outcomes of the syndrome test
    assert report.total_cycles == 48 * latency_cycles(qc_shape(base, z), cfg.max_iter)


def test_bit_exact_corner_cases(tmp_path):
    cfg = _config(max_iter=3)
    vm, report = _replay(tmp_path, CORNERS, 4, cfg, count=24, seed=3)
    assert report.ok, report.summary()
    assert 0 < vm["converged_frames"] < 24


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutants_are_caught(tmp_path, mutation):
    base = np.array([[1, 2, 3, 3, 0, 0], [1, -1, 0, -1, -1, 1], [1, 3, 1, 1, 2, 2]])
    cfg = _config(normalized=mutation == "nms-round")
    _, report = _replay(tmp_path, base, 4, cfg, count=48, seed=1, mutation=mutation)
    assert report.failed > 0 and report.mismatches["hard"] > 0, report.summary()


def _nr5g_frames(code, count, ebn0, seed):
    from qdecode.sims.channels import BpskAwgn

    rng = np.random.default_rng(seed)
    words = code.encode(rng.integers(0, 2, (count, code.K), dtype=np.uint8))
    return BpskAwgn(ebn0, code.rate).transmit(words, rng)


def test_bit_exact_nr5g_bg2_from_the_decoder(tmp_path):
    """nr5g[bg=2,k=40,n=80]: Z = 7, the decoder's defaults (8-bit OMS, beta 0.5 = 2 steps, 10 iterations)."""
    from qdecode.codes.catalog import get_code
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder

    code = get_code("nr5g[bg=2,k=40,n=80]")
    dec = QcMinSumDecoder(code)
    shifts, z, cfg = design_from_qc_decoder(dec)
    assert (z, cfg.bits, cfg.beta, cfg.max_iter, cfg.normalized) == (7, 8, 2, 10, False)
    vm = export_qc_vectors(dec, _nr5g_frames(code, 16, 1.0, 5), tmp_path / "v")
    mf = json.loads(generate_qc_layered(shifts, z, cfg, tmp_path / "r")["rtl_manifest.json"])
    report = simulate_qc(tmp_path / "r", tmp_path / "v")
    assert report.shots == 16 and report.ok, report.summary()
    assert 0 < vm["converged_frames"] < 16
    assert report.total_cycles == 16 * mf["latency_cycles"] == 16 * (10 * 436 + 197 + 52 + 3)
    # the expected values are the decoder's own result without early stop
    full = QcMinSumDecoder(code, early_stop=False)
    hard = full.decode_mother_llr_batch(_nr5g_frames(code, 16, 1.0, 5))
    expected = bits_from_hex(read_lines(tmp_path / "v" / "expected_hard.hex", 16 * 52), 7).reshape(16, 52 * 7)
    assert np.array_equal(hard, expected)
    assert int(full.last_info.converged.sum()) == vm["converged_frames"]


def test_cli_nr5g_16_bit_nms_simulates(tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["export-rtl", "--code", "nr5g[bg=2,k=20,n=40]", "--bits", "16", "--frac-bits", "6", "--alpha",
                 "0.75", "--max-iter", "4", "--frames", "10", "--ebn0", "0.5", "--simulate", "--out", str(out)])
    text = capsys.readouterr()
    assert code == 0, text
    assert "10 shots, 10 passed, 0 failed" in text.out
    mf = json.loads((out / "rtl_manifest.json").read_text())
    assert (mf["Z"], mf["bits"], mf["normalized"], mf["num"], mf["max_iter"]) == (4, 16, True, 192, 4)
    vm = json.loads((out / "vectors" / "qc_vectors.json").read_text())
    assert vm["frames"] == 10 and vm["description"]["ebn0"] == 0.5


def test_cli_refusals(tmp_path, cli_error):
    base = ["export-rtl", "--out", str(tmp_path / "r"), "--code", "nr5g[bg=2,k=20,n=40]"]
    assert "not both" in cli_error(base + ["--alpha", "0.75", "--beta", "1"])
    assert "--simulate needs --frames" in cli_error(base + ["--simulate"])
    assert "go together" in cli_error(base + ["--frames", "3"])
    assert "--frames must be >= 1" in cli_error(base + ["--frames", "0", "--ebn0", "1"])
    assert "--parallelism does not apply" in cli_error(base + ["--parallelism", "2"])
    assert "--p does not apply" in cli_error(base + ["--p", "0.1"])
    assert "must be one of [8, 16]" in cli_error(base + ["--bits", "12"])
    assert "need a QC-LDPC code" in cli_error(["export-rtl", "--out", str(tmp_path / "s"), "--code", "surface",
                                               "--d", "3", "--noise", "code-capacity", "--p", "0.05", "--frames", "2"])


def test_synth_smoke_ice40(tmp_path):
    """yosys maps both memories of a small design to iCE40 block RAM."""
    generate_qc_layered(CORNERS, 4, _config(), tmp_path / "r")
    r = run_synth(tmp_path / "r", "ice40", top="qc_top")
    assert r.resources["luts"] > 0 and r.resources["ffs"] > 0 and r.resources["bram"] > 0
