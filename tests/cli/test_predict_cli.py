"""`qdecode predict` against `sinter predict`, and its bad-input errors."""

from __future__ import annotations

import pytest
import sinter
import stim

from qdecode.cli.main import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("predict")
    c = stim.Circuit.generated(
        "surface_code:rotated_memory_x", distance=3, rounds=3,
        after_clifford_depolarization=0.01, before_measure_flip_probability=0.01,
    )
    dem = c.detector_error_model(decompose_errors=True)
    (d / "model.dem").write_text(str(dem))
    dets, obs = c.compile_detector_sampler(seed=2).sample(500, separate_observables=True)
    stim.write_shot_data_file(data=dets, path=d / "dets.b8", format="b8", num_detectors=dem.num_detectors)
    stim.write_shot_data_file(data=dets, path=d / "dets.01", format="01", num_detectors=dem.num_detectors)
    return d, dem


@pytest.mark.parametrize("fmt", ["b8", "01"])
def test_same_predictions_as_sinter_predict(files, fmt):
    d, dem = files
    out = d / f"ours_{fmt}.01"
    assert main(["predict", "--dem", str(d / "model.dem"), "--dets", str(d / f"dets.{fmt}"),
                 "--dets-format", fmt, "--decoder", "pymatching", "--obs-out", str(out)]) == 0
    sinter.predict_on_disk(
        decoder="pymatching", dem_path=d / "model.dem", dets_path=d / f"dets.{fmt}", dets_format=fmt,
        obs_out_path=d / f"theirs_{fmt}.01", obs_out_format="01",
    )
    assert out.read_text() == (d / f"theirs_{fmt}.01").read_text()


def test_obs_out_b8_round_trips(files):
    d, dem = files
    out = d / "ours.b8"
    assert main(["predict", "--dem", str(d / "model.dem"), "--dets", str(d / "dets.b8"),
                 "--decoder", "pymatching", "--obs-out", str(out), "--obs-out-format", "b8"]) == 0
    got = stim.read_shot_data_file(path=out, format="b8", num_observables=1)
    assert got.shape == (500, 1)


def _err(capsys, argv):
    capsys.readouterr()  # drop earlier output
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert len(err.splitlines()) == 1, err
    return err


def test_wrong_shot_file_width(files, tmp_path, capsys):
    d, dem = files
    bad = tmp_path / "bad.b8"
    bad.write_bytes((d / "dets.b8").read_bytes()[:-1])
    err = _err(capsys, ["predict", "--dem", str(d / "model.dem"), "--dets", str(bad), "--decoder", "pymatching",
                        "--obs-out", str(tmp_path / "o")])
    assert "not a whole number of b8 shots" in err
    bad01 = tmp_path / "bad.01"
    bad01.write_text("0101\n")
    err = _err(capsys, ["predict", "--dem", str(d / "model.dem"), "--dets", str(bad01), "--dets-format", "01",
                        "--decoder", "pymatching", "--obs-out", str(tmp_path / "o")])
    assert "line has 4 bits" in err


def test_malformed_dem(files, tmp_path, capsys):
    d, _ = files
    dem = tmp_path / "bad.dem"
    dem.write_text("error(0.1) D0 Q3\n")
    err = _err(capsys, ["predict", "--dem", str(dem), "--dets", str(d / "dets.b8"), "--decoder", "pymatching",
                        "--obs-out", str(tmp_path / "o")])
    assert "not a valid detector error model" in err


def test_unknown_decoder_and_parameter(files, tmp_path, capsys):
    d, _ = files
    base = ["predict", "--dem", str(d / "model.dem"), "--dets", str(d / "dets.b8"), "--obs-out", str(tmp_path / "o")]
    assert "unknown decoder 'nope'" in _err(capsys, base + ["--decoder", "nope"])
    assert "has no parameter 'alpha'" in _err(capsys, base + ["--decoder", "pymatching", "--param", "alpha=1"])


def test_missing_file(files, tmp_path, capsys):
    err = _err(capsys, ["predict", "--dem", str(tmp_path / "none.dem"), "--dets", "x", "--decoder", "pymatching",
                        "--obs-out", str(tmp_path / "o")])
    assert "none.dem" in err
