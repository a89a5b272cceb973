"""`qdecode learn-noise`, and `--learned-noise` in `qdecode predict` / `qdecode sweep`."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import stim

from qdecode.cli.main import main
from qdecode.problem import decoding_dem
from qdecode.sims.circuits import build_circuit
from qdecode.sims.store import read_rows

_STRIP = re.compile(r"^error\([^)]*\)", re.M)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("learn")
    truth = build_circuit("surface", d=3, rounds=3, noise="sd6", p=0.005)
    ref_circuit = build_circuit("surface", d=3, rounds=3, noise="sd6", p=0.001)
    (d / "ref.stim").write_text(str(ref_circuit))
    (d / "ref.dem").write_text(str(decoding_dem(ref_circuit)))
    (d / "true.dem").write_text(str(decoding_dem(truth)))
    dets = truth.compile_detector_sampler(seed=11).sample(30_000)
    m = truth.num_detectors
    for fmt in ("b8", "01"):
        stim.write_shot_data_file(data=dets, path=d / f"dets.{fmt}", format=fmt, num_detectors=m)
    return d


def _learn(d, *extra):
    return main(["learn-noise", "--dets", str(d / "dets.b8"), *extra])


def test_round_trip_from_files(files, capsys):
    d = files
    assert _learn(d, "--reference-dem", str(d / "ref.dem"), "--out", str(d / "a.dem")) == 0
    out = capsys.readouterr().out
    assert "shots: 30000" in out and "learned DEM ->" in out
    learned = stim.DetectorErrorModel((d / "a.dem").read_text())
    ref = stim.DetectorErrorModel((d / "ref.dem").read_text())
    assert _STRIP.sub("e", str(learned)) == _STRIP.sub("e", str(ref.flattened()))
    assert str(learned) != str(ref.flattened())
    # the 01 file streams to the same DEM; a reference circuit gives the same sectors here
    assert main(["learn-noise", "--dets", str(d / "dets.01"), "--dets-format", "01",
                 "--reference-dem", str(d / "ref.dem"), "--out", str(d / "b.dem")]) == 0
    assert (d / "b.dem").read_text() == (d / "a.dem").read_text()
    capsys.readouterr()
    assert _learn(d, "--reference-circuit", str(d / "ref.stim"), "--out", str(d / "c.dem"), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["shots"] == 30000 and set(report["sector_sizes"]) == {"X", "Z"}
    assert (d / "c.dem").read_text() == (d / "a.dem").read_text()


def test_on_the_fly_is_seeded(tmp_path, capsys):
    argv = ["learn-noise", "--code", "surface", "--d", "3", "--rounds", "d", "--noise", "sd6", "--p", "0.004",
            "--shots", "5000", "--reference-p", "0.002", "--seed", "7", "--mixed", "geomean"]
    assert main([*argv, "--out", str(tmp_path / "x.dem")]) == 0
    assert main([*argv, "--out", str(tmp_path / "y.dem")]) == 0
    assert (tmp_path / "x.dem").read_text() == (tmp_path / "y.dem").read_text()
    assert "mixed-sector [geomean]" in capsys.readouterr().out


def test_predict_with_learned_noise(files):
    d = files
    assert _learn(d, "--reference-dem", str(d / "ref.dem"), "--out", str(d / "p.dem")) == 0
    base = ["predict", "--dem", str(d / "true.dem"), "--dets", str(d / "dets.b8"), "--decoder", "pymatching"]
    assert main([*base, "--learned-noise", str(d / "p.dem"), "--obs-out", str(d / "learned.01")]) == 0
    assert main([*base, "--obs-out", str(d / "true.01")]) == 0
    a = np.array([line for line in (d / "learned.01").read_text().split()])
    b = np.array([line for line in (d / "true.01").read_text().split()])
    assert len(a) == len(b) == 30_000
    assert np.mean(a != b) < 0.01  # learned and true weights decode almost every shot alike


def test_sweep_with_learned_noise_records_it(files, tmp_path):
    d = files
    assert _learn(d, "--reference-dem", str(d / "ref.dem"), "--out", str(d / "s.dem")) == 0
    out = tmp_path / "stats.csv"
    common = ["sweep", "--code", "surface", "--d", "3", "--rounds", "3", "--noise", "sd6", "--p", "0.005",
              "--decoder", "pymatching", "--max-shots", "2000", "--workers", "0", "--quiet", "--out", str(out)]
    assert main([*common, "--learned-noise", str(d / "s.dem")]) == 0
    assert main(common) == 0
    rows = read_rows(out)
    learned = {r.strong_id for r in rows if "learned_noise" in r.json_metadata}
    plain = {r.strong_id for r in rows if "learned_noise" not in r.json_metadata}
    assert len(learned) == 1 and len(plain) == 1 and learned != plain


def _err(capsys, argv):
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert len(err.splitlines()) == 1, err
    return err


def test_bad_inputs(files, tmp_path, capsys):
    d = files
    ref = ["--reference-dem", str(d / "ref.dem")]
    # wrong detector count: a b8 file whose size is not whole shots of 3 bytes
    (tmp_path / "bad.b8").write_bytes(b"\x00" * 7)
    assert "b8 shots" in _err(capsys, ["learn-noise", "--dets", str(tmp_path / "bad.b8"), *ref])
    (tmp_path / "bad.01").write_text("0101\n")
    assert "detectors" in _err(capsys, ["learn-noise", "--dets", str(tmp_path / "bad.01"), "--dets-format", "01", *ref])
    (tmp_path / "bad.dem").write_text("error(0.1) D0 Q\n")
    assert "not a valid detector error model" in _err(capsys, _dets(d, "--reference-dem", str(tmp_path / "bad.dem")))
    (tmp_path / "bad.stim").write_text("H 0\nNOT_A_GATE 1\n")
    assert "not a valid stim circuit" in _err(capsys, _dets(d, "--reference-circuit", str(tmp_path / "bad.stim")))
    assert "at least 100000" in _err(capsys, _dets(d, *ref, "--min-shots", "100000"))
    assert "exactly one" in _err(capsys, _dets(d))
    assert "give --dets" in _err(capsys, ["learn-noise"])
    fly = ["learn-noise", "--code", "surface", "--d", "3", "--noise", "sd6", "--shots", "5000"]
    assert "inside (0, 1)" in _err(capsys, [*fly, "--p", "0", "--reference-p", "0.001"])
    assert "inside (0, 1)" in _err(capsys, [*fly, "--p", "0.01", "--reference-p", "1.5"])
    assert "--reference-p" in _err(capsys, [*fly, "--p", "0.01"])
    assert "below --min-shots" in _err(capsys, [*fly, "--p", "0.01", "--reference-p", "0.001", "--shots", "10"])
    # learned DEM of the wrong size for predict / sweep
    other = tmp_path / "other.dem"
    other.write_text(str(decoding_dem(build_circuit("surface", d=5, rounds=5, noise="sd6", p=0.001))))
    err = _err(capsys, ["predict", "--dem", str(d / "true.dem"), "--dets", str(d / "dets.b8"), "--decoder",
                        "pymatching", "--learned-noise", str(other), "--obs-out", str(tmp_path / "o.01")])
    assert "120 detectors" in err
    err = _err(capsys, ["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.005", "--decoder",
                        "pymatching", "--learned-noise", str(other), "--workers", "0", "--quiet",
                        "--out", str(tmp_path / "x.csv")])
    assert "120 detectors" in err
    err = _err(capsys, ["sweep", "--code", "bch127_64", "--noise", "awgn", "--ebn0", "3", "--decoder", "bm",
                        "--learned-noise", str(d / "ref.dem"), "--workers", "0", "--quiet",
                        "--out", str(tmp_path / "y.csv")])
    assert "classical" in err


def _dets(d, *extra):
    return ["learn-noise", "--dets", str(d / "dets.b8"), *extra]
