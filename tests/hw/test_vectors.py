"""Fixed-point test vectors: hex encodings, export/replay round trip, corruption detection, manifest, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.codes.alist import write_alist
from qdecode.decoders.bp import BpDecoder
from qdecode.hw.vectors import (
    VectorFormatError,
    bits_from_hex,
    bits_to_hex,
    export_vectors,
    h_sha256,
    int_from_hex,
    int_to_hex,
    load_vectors,
    replay_vectors,
)
from qdecode.problem import DecodingProblem


# ------------------------------------------------------------------ encodings
def test_int_to_hex_twos_complement():
    assert int_to_hex([-3, 5, 127, -127, -128, 0, -1], 8) == ["fd", "05", "7f", "81", "80", "00", "ff"]
    assert int_to_hex([-1, 31, -32], 6) == ["3f", "1f", "20"]  # 6 bits -> 2 digits, high bits zero
    assert int_to_hex([-1, 511, -511], 10) == ["3ff", "1ff", "201"]  # posterior width bits + 2
    assert int_to_hex([-1, 1], 4) == ["f", "1"]
    assert int_to_hex(np.array([-2], dtype=np.int32), 3) == ["6"]


@pytest.mark.parametrize("bits", [2, 3, 4, 5, 6, 8, 10, 12])
def test_int_hex_round_trip_full_range(bits):
    values = np.arange(-(1 << (bits - 1)), 1 << (bits - 1))
    words = int_to_hex(values, bits)
    assert {len(w) for w in words} == {(bits + 3) // 4}
    assert [int_from_hex(w, bits) for w in words] == values.tolist()


def test_int_hex_errors():
    with pytest.raises(ValueError, match="does not fit"):
        int_to_hex([128], 8)
    with pytest.raises(ValueError, match="does not fit"):
        int_to_hex([-33], 6)
    with pytest.raises(ValueError, match="hex digits"):
        int_from_hex("0fd", 8)
    with pytest.raises(ValueError, match="above bit"):
        int_from_hex("7f", 6)
    with pytest.raises(ValueError, match="not a hex"):
        int_from_hex("zz", 8)


def test_bits_to_hex_bit_order_and_width():
    # bit i = detector i = 2^i; MSB first; exactly ceil(w/4) digits
    row = np.zeros(6, np.uint8)
    row[[0, 5]] = 1
    assert bits_to_hex(row) == ["21"]
    assert bits_to_hex(np.array([[1, 0, 0, 0]])) == ["1"]
    assert bits_to_hex(np.array([[0, 0, 0, 1]])) == ["8"]
    assert bits_to_hex(np.array([[0, 0, 0, 0, 1]])) == ["10"]
    assert bits_to_hex(np.eye(9, dtype=np.uint8)[8:]) == ["100"]
    one_hot = np.eye(24, dtype=np.uint8)
    assert bits_to_hex(one_hot) == [format(1 << i, "06x") for i in range(24)]


@pytest.mark.parametrize("width", [1, 3, 4, 5, 24, 219])
def test_bits_hex_round_trip(width):
    rng = np.random.default_rng(width)
    rows = rng.integers(0, 2, size=(17, width), dtype=np.uint8)
    lines = bits_to_hex(rows)
    assert all(len(ln) == (width + 3) // 4 for ln in lines)
    assert [int(ln, 16) for ln in lines] == [sum(int(b) << i for i, b in enumerate(r)) for r in rows]
    assert np.array_equal(bits_from_hex(lines, width), rows)


def test_bits_from_hex_errors():
    with pytest.raises(ValueError, match="bits set above bit 5"):
        bits_from_hex(["40"], 6)
    with pytest.raises(ValueError, match="expected 2 hex digits"):
        bits_from_hex(["021"], 6)


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def surface():
    import stim

    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    problem = DecodingProblem.from_dem(c.detector_error_model(decompose_errors=True))
    dets = c.compile_detector_sampler(seed=5).sample(300).astype(np.uint8)
    # shots needing many iterations first, so the per-iteration dumps have several lines
    dec = BpDecoder(problem, max_iter=20, alpha=0.625, bits=8, frac_bits=3)
    dec.decode_batch(dets)
    order = np.argsort(-dec.last_info.iterations, kind="stable")
    order = np.concatenate([order[:2], order[-2:], order[2:-2]])  # two long, two short, then the rest
    return problem, dets[order]


@pytest.fixture(scope="module")
def exported(surface, tmp_path_factory):
    problem, dets = surface
    out = tmp_path_factory.mktemp("vec") / "surface"
    dec = BpDecoder(problem, max_iter=20, alpha=0.625, bits=8, frac_bits=3)
    manifest = export_vectors(problem, dec, dets, out, description={"code": "surface", "d": 3}, dump_messages=4)
    return out, manifest, problem, dets


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


# ---------------------------------------------------------------- round trip
def test_round_trip_zero_mismatches(exported):
    out, manifest, problem, dets = exported
    report = replay_vectors(out)
    assert report.ok, report.summary()
    assert report.shots == dets.shape[0] and report.dumped_shots == 4
    vs = load_vectors(out)
    assert np.array_equal(vs.syndromes, dets)
    assert (vs.H != problem.H).nnz == 0
    dec = BpDecoder(problem, max_iter=20, alpha=0.625, bits=8, frac_bits=3)
    assert np.array_equal(vs.priors_q, dec.prior_llr[0])
    assert np.array_equal(vs.expected_hard, dec.decode_batch(dets))
    assert np.array_equal(vs.expected_iters, dec.last_info.iterations)
    assert not vs.expected_converged.all()  # max_iter=20 at p=1% leaves some shots unconverged


@pytest.mark.parametrize("cfg", [dict(schedule="layered", alpha=0.75, bits=6, frac_bits=2),
                                 dict(alpha=0.0, bits=7, frac_bits=2, beta=0.5)])
def test_round_trip_other_configs(surface, tmp_path, cfg):
    problem, dets = surface
    dec = BpDecoder(problem, max_iter=15, **cfg)
    manifest = export_vectors(problem, dec, dets[:80], tmp_path, description={}, dump_messages=2)
    assert manifest["schedule"] == cfg.get("schedule", "flooding")
    assert manifest["adaptive_alpha"] == (cfg["alpha"] == 0)
    report = replay_vectors(tmp_path)
    assert report.ok, report.summary()


def test_dumps_are_the_posteriors_after_each_iteration(exported):
    out, manifest, problem, dets = exported
    vs = load_vectors(out)
    assert sorted(vs.dumps) == [0, 1, 2, 3]
    T = max(a.shape[0] for a in vs.dumps.values())
    assert T >= 3
    for k, arr in vs.dumps.items():
        assert arr.shape == (vs.expected_iters[k], problem.num_errors)
        assert np.array_equal((arr[-1] <= 0).astype(np.uint8), vs.expected_hard[k])
        assert np.abs(arr).max() <= manifest["post_lim"]
    # independent path: the batch kernel with max_iter = t gives the same posteriors
    for t in range(1, T + 1):
        dec = BpDecoder(problem, max_iter=t, alpha=0.625, bits=8, frac_bits=3)
        _, post = dec.decode_soft_batch(dets[:4])
        for k, arr in vs.dumps.items():
            if t <= arr.shape[0]:
                assert np.array_equal(np.rint(post[k] * 8).astype(np.int64), arr[t - 1]), (k, t)


# ----------------------------------------------------------------- corruption
def _flip_hex_line(path, lineno):
    lines = path.read_text().split("\n")
    ln = lines[lineno - 1]
    last = int(ln[-1], 16) ^ 1
    lines[lineno - 1] = ln[:-1] + format(last, "x")
    path.write_text("\n".join(lines))


def test_corrupted_expected_lines_reported_with_line_numbers(exported, tmp_path):
    out = _copy(exported[0], tmp_path / "v")
    _flip_hex_line(out / "expected_hard.hex", 5)
    lines = (out / "expected_iters.txt").read_text().split("\n")
    lines[6] = str(int(lines[6]) + 1)
    (out / "expected_iters.txt").write_text("\n".join(lines))
    lines = (out / "expected_converged.txt").read_text().split("\n")
    lines[2] = "0" if lines[2] == "1" else "1"
    (out / "expected_converged.txt").write_text("\n".join(lines))
    report = replay_vectors(out)
    assert not report.ok
    got = {(m.file, m.line, m.shot) for m in report.mismatches}
    assert got == {("expected_hard.hex", 5, 4), ("expected_iters.txt", 7, 6), ("expected_converged.txt", 3, 2)}
    assert "expected_hard.hex:5: shot 4: hard" in report.summary()


def test_corrupted_dump_and_h_detected(exported, tmp_path):
    out = _copy(exported[0], tmp_path / "v")
    _flip_hex_line(out / "post_shot1.hex", 2)
    report = replay_vectors(out)
    assert [(m.file, m.line, m.shot) for m in report.mismatches] == [("post_shot1.hex", 2, 1)]
    # a different H (one entry moved) changes the hash and is reported
    problem = exported[2]
    H = problem.H.tolil()
    i, j = problem.H.nonzero()[0][0], problem.H.nonzero()[1][0]
    H[i, j] = 0
    write_alist(H.tocsr(), out / "H.alist")
    report = replay_vectors(out)
    assert report.mismatches[0].field == "h_sha256"


def test_malformed_lines_raise_with_file_and_line(exported, tmp_path):
    out = _copy(exported[0], tmp_path / "v")
    lines = (out / "syndromes.hex").read_text().split("\n")
    lines[2] = "zz" + lines[2][2:]
    (out / "syndromes.hex").write_text("\n".join(lines))
    with pytest.raises(VectorFormatError, match=r"syndromes\.hex:3: "):
        load_vectors(out)
    out2 = _copy(exported[0], tmp_path / "w")
    lines = (out2 / "priors_q.hex").read_text().split("\n")
    del lines[0]
    (out2 / "priors_q.hex").write_text("\n".join(lines))
    with pytest.raises(VectorFormatError, match="priors_q.hex: .* lines, the manifest says"):
        load_vectors(out2)


# ------------------------------------------------------------------- manifest
def test_manifest_fields(exported):
    out, manifest, problem, dets = exported
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest
    from qdecode import __version__

    assert manifest["qdecode_version"] == __version__
    assert manifest["source"] == {"code": "surface", "d": 3}
    assert (manifest["m"], manifest["n"], manifest["nnz"]) == (problem.num_detectors, problem.num_errors, problem.H.nnz)
    assert manifest["h_sha256"] == h_sha256(problem.H) and len(manifest["h_sha256"]) == 64
    assert manifest["shots"] == dets.shape[0]
    assert (manifest["bits"], manifest["frac_bits"], manifest["alpha"]) == (8, 3, 0.625)
    assert (manifest["alpha_num"], manifest["alpha_shift"], manifest["max_iter"]) == (160, 8, 20)
    assert (manifest["msg_lim"], manifest["post_lim"], manifest["schedule"]) == (127, 511, "flooding")
    files = manifest["files"]
    assert set(files) == {p.name for p in out.iterdir()} - {"manifest.json"}
    assert files["syndromes.hex"]["width_bits"] == problem.num_detectors
    assert files["syndromes.hex"]["hex_digits"] == (problem.num_detectors + 3) // 4
    assert "bit i" in files["syndromes.hex"]["bit_order"] and "MSB first" in files["syndromes.hex"]["bit_order"]
    assert files["priors_q.hex"]["word_bits"] == 8 and files["post_shot0.hex"]["word_bits"] == 10
    assert files["expected_hard.hex"]["width_bits"] == problem.num_errors


def test_h_hash_depends_on_structure():
    a = h_sha256(np.array([[1, 1, 0], [0, 1, 1]]))
    assert a == h_sha256(np.array([[1, 1, 0], [0, 1, 1]], dtype=np.int64))
    assert a != h_sha256(np.array([[1, 1, 0], [0, 1, 0]]))
    assert a != h_sha256(np.array([[1, 1, 0, 0], [0, 1, 1, 0]]))


def test_export_rejects_float_decoder(surface, tmp_path):
    problem, dets = surface
    with pytest.raises(ValueError, match="fixed-point"):
        export_vectors(problem, BpDecoder(problem), dets[:2], tmp_path, description={})


# ------------------------------------------------------------------------ CLI


def test_cli_alist_export_and_replay(tmp_path, capsys):
    H = np.array([[1, 1, 0, 1, 0, 0, 1], [0, 1, 1, 0, 1, 0, 1], [1, 0, 1, 0, 0, 1, 1]], dtype=np.uint8)
    write_alist(np.kron(np.eye(4, dtype=np.uint8), H), tmp_path / "h.alist")
    out = tmp_path / "v"
    assert main(["export-vectors", "--alist", str(tmp_path / "h.alist"), "--p", "0.05", "--shots", "64",
                 "--seed", "3", "--bits", "6", "--frac-bits", "2", "--alpha", "0", "--max-iter", "10",
                 "--dump-messages", "2", "--out", str(out)]) == 0
    mf = json.loads((out / "manifest.json").read_text())
    assert mf["source"]["source"] == "alist" and mf["source"]["seed"] == 3 and mf["adaptive_alpha"]
    assert (mf["m"], mf["n"], mf["shots"]) == (12, 28, 64)
    capsys.readouterr()
    assert main(["export-vectors", "--replay", str(out)]) == 0
    assert "all match" in capsys.readouterr().out
    _flip_hex_line(out / "expected_hard.hex", 9)
    assert main(["export-vectors", "--replay", str(out)]) == 1
    assert "expected_hard.hex:9" in capsys.readouterr().out


def test_cli_code_export(tmp_path):
    out = tmp_path / "s"
    assert main(["export-vectors", "--code", "surface", "--d", "3", "--rounds", "2", "--noise", "sd6",
                 "--p", "0.01", "--shots", "40", "--schedule", "layered", "--out", str(out)]) == 0
    mf = json.loads((out / "manifest.json").read_text())
    assert mf["source"]["code"] == "surface" and mf["source"]["rounds"] == 2 and mf["schedule"] == "layered"
    assert replay_vectors(out).ok


def test_cli_errors(tmp_path, capsys, cli_error):
    base = ["export-vectors", "--out", str(tmp_path / "x")]
    assert "exactly one of" in cli_error(base)
    assert "exactly one of" in cli_error(base + ["--code", "surface", "--dem", "x.dem"])
    assert "--noise" in cli_error(base + ["--code", "surface", "--d", "3", "--p", "0.01"])
    assert "--shots" in cli_error(base + ["--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01",
                                             "--shots", "0"])
    assert "bits" in cli_error(base + ["--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01",
                                          "--bits", "30"])
    assert "--out" in cli_error(["export-vectors", "--code", "surface"])
    assert "manifest.json" in cli_error(["export-vectors", "--replay", str(tmp_path)])
