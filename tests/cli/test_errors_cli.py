"""Bad input to the commands is one line naming the real problem, exit status 2.

Model and shot files (`predict`, `learn-noise`, `bench --dem`), unknown code names,
classical codes where a circuit is needed, and Gilbert-Elliott without its parameters.
"""

from __future__ import annotations

import pytest
import stim

from qdecode.cli.main import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("errors")
    c = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=5, after_clifford_depolarization=0.02)
    dem = c.detector_error_model(decompose_errors=True)
    assert dem.num_detectors == 12  # b8 shots of 2 bytes, 4 padding bits
    (d / "model.dem").write_text(str(dem))
    dets = c.compile_detector_sampler(seed=1).sample(64)  # ptb64 needs whole groups of 64
    for fmt in ("b8", "01", "r8", "ptb64", "hits", "dets"):
        stim.write_shot_data_file(data=dets, path=d / f"dets.{fmt}", format=fmt, num_detectors=dem.num_detectors)
    (d / "garbage.dem").write_text("this is not a detector error model\n")
    (d / "empty.dem").write_text("")
    (d / "binary.dem").write_bytes(b"\x00\xff\xfe\x01" * 10)
    (d / "obs_only.dem").write_text("logical_observable L0\n")
    (d / "empty.shots").write_bytes(b"")
    return d, dem




def _predict(d, dem="model.dem", dets="dets.b8", fmt="b8", out="o.01"):
    return ["predict", "--dem", str(d / dem), "--dets", str(d / dets), "--dets-format", fmt,
            "--decoder", "pymatching", "--obs-out", str(d / out)]


# ------------------------------------------------------------------ model files
@pytest.mark.parametrize("model, message", [
    ("garbage.dem", "not a valid detector error model"),
    ("empty.dem", "the detector error model is empty"),
    ("binary.dem", "not a text detector error model file"),
    ("nothere.dem", "no such detector error model file"),
])
def test_predict_bad_dem(files, capsys, model, message, cli_error):
    d, _ = files
    err = cli_error(_predict(d, dem=model))
    assert model in err and message in err


def test_empty_dem_with_shots_is_an_error_not_an_empty_prediction(files, capsys, cli_error):
    d, _ = files
    (d / "o_empty.01").unlink(missing_ok=True)
    assert "is empty" in cli_error(_predict(d, dem="empty.dem", out="o_empty.01"))
    assert not (d / "o_empty.01").exists()


def test_dem_without_detectors(files, capsys, cli_error):
    d, _ = files
    assert "has no detectors" in cli_error(_predict(d, dem="obs_only.dem"))


def test_bad_learned_noise_dem(files, capsys, cli_error):
    d, _ = files
    err = cli_error([*_predict(d), "--learned-noise", str(d / "garbage.dem")])
    assert "garbage.dem: not a valid detector error model" in err


# ------------------------------------------------------------------ shot files
def test_zero_shots_give_an_empty_prediction_file(files):
    d, _ = files
    for fmt in ("b8", "01", "dets"):
        out = d / f"zero_{fmt}.01"
        assert main(_predict(d, dets="empty.shots", fmt=fmt, out=out.name)) == 0
        assert out.read_bytes() == b""


@pytest.mark.parametrize("fmt, data, message", [
    ("b8", b"\x00" * 7, "is not a whole number of b8 shots"),
    ("b8", b"\x00\x00\x00\xff", "b8 shot 1 has bits set past detector 11"),
    ("ptb64", b"\x00" * 10, "is not a whole number of ptb64 groups"),
    ("01", b"0101\n", "line has 4 bits"),
    ("01", b"hello!\n", "characters other than 0/1"),
    ("01", b"\x00\x01\x02\x03\xff\n", "not 01 text (binary data"),
    ("01", b"010101010101", "does not end with a newline"),
    ("r8", b"\x01", "cannot read r8 shots"),
    ("hits", b"1,2\nabc\n", "cannot read hits shots"),
    ("hits", b"99\n", "cannot read hits shots"),
    ("dets", b"garbage\n", "cannot read dets shots"),
])
def test_bad_shot_files(files, tmp_path, capsys, fmt, data, message, cli_error):
    d, _ = files
    bad = tmp_path / f"bad.{fmt}"
    bad.write_bytes(data)
    err = cli_error(["predict", "--dem", str(d / "model.dem"), "--dets", str(bad), "--dets-format", fmt,
                        "--decoder", "pymatching", "--obs-out", str(tmp_path / "o.01")])
    assert str(bad) in err and message in err


def test_text_given_as_b8_says_which_format(files, capsys, cli_error):
    d, _ = files
    for fmt in ("01", "dets"):
        err = cli_error(_predict(d, dets=f"dets.{fmt}", fmt="b8"))
        assert f"looks like {fmt} text, not b8 data (pass --dets-format {fmt})" in err


def test_every_format_still_reads(files):
    d, _ = files
    for fmt in ("b8", "01", "r8", "ptb64", "hits", "dets"):
        assert main(_predict(d, dets=f"dets.{fmt}", fmt=fmt, out=f"ok_{fmt}.01")) == 0
    assert len((d / "ok_b8.01").read_text().split()) == 64
    assert len({(d / f"ok_{fmt}.01").read_text() for fmt in ("b8", "01", "r8", "ptb64", "hits", "dets")}) == 1


def test_missing_shot_file(files, capsys, cli_error):
    d, _ = files
    assert "no such shot file" in cli_error(_predict(d, dets="nothere.b8"))


def test_learn_noise_files(files, tmp_path, capsys, cli_error):
    d, _ = files
    base = ["learn-noise", "--reference-dem"]
    assert "not a valid detector error model" in cli_error([*base, str(d / "garbage.dem"), "--dets",
                                                               str(d / "dets.b8")])
    assert "is empty" in cli_error([*base, str(d / "empty.dem"), "--dets", str(d / "dets.b8")])
    assert "has no detectors" in cli_error([*base, str(d / "obs_only.dem"), "--dets", str(d / "dets.b8")])
    (tmp_path / "pad.b8").write_bytes(b"\x00\xf0" * 3)
    assert "bits set past detector" in cli_error([*base, str(d / "model.dem"), "--dets", str(tmp_path / "pad.b8")])
    assert "looks like 01 text" in cli_error([*base, str(d / "model.dem"), "--dets", str(d / "dets.01")])
    (tmp_path / "bad.r8").write_bytes(b"\x01")
    assert "cannot read r8 shots" in cli_error([*base, str(d / "model.dem"), "--dets", str(tmp_path / "bad.r8"),
                                                   "--dets-format", "r8"])
    # zero shots: an empty file is read, then --min-shots rejects it
    assert "only 0 shots" in cli_error([*base, str(d / "model.dem"), "--dets", str(d / "empty.shots")])
    (tmp_path / "empty.stim").write_text("H 0\n")
    assert "declares no DETECTOR" in cli_error(["learn-noise", "--reference-circuit", str(tmp_path / "empty.stim"),
                                                   "--dets", str(d / "dets.b8")])


def test_bench_dem_file(files, capsys, cli_error):
    d, _ = files
    assert "not a valid detector error model" in cli_error(["bench", "--dem", str(d / "garbage.dem"),
                                                               "--decoder", "pymatching"])


# ------------------------------------------------------------------ names and channels
_KNOWN = "surface, bb72_12_6"


def test_unknown_code_names(tmp_path, capsys, cli_error):
    out = ["--out", str(tmp_path / "x.csv"), "--workers", "0", "--quiet"]
    err = cli_error(["sweep", "--code", "nosuchcode", "--d", "3", "--noise", "sd6", "--p", "0.01",
                        "--decoder", "pymatching", *out])
    assert "unknown code 'nosuchcode'" in err and _KNOWN in err
    err = cli_error(["sweep", "--code", "nosuchcode", "--noise", "awgn", "--ebn0", "2", "--decoder", "bm", *out])
    assert "unknown code 'nosuchcode'" in err and "ebn0" not in err
    err = cli_error(["circuit", "nosuchcode", "--p", "0.01"])
    assert "unknown code 'nosuchcode'" in err and _KNOWN in err
    err = cli_error(["bench", "--code", "nosuchcode", "--noise", "sd6", "--p", "0.01", "--decoder", "pymatching"])
    assert "unknown code 'nosuchcode'" in err


def test_classical_code_has_no_circuit(capsys, cli_error):
    err = cli_error(["circuit", "bch63_45", "--p", "0.01"])
    assert "'bch63_45' is a classical-linear code: it has no memory-experiment circuit" in err
    err = cli_error(["circuit", "surface", "--d", "3", "--p", "0.01", "--noise", "awgn"])
    assert "'awgn' is a channel for classical codes" in err and "sd6" in err


def test_gilbert_elliott_needs_its_parameters(tmp_path, capsys, cli_error):
    out = ["--out", str(tmp_path / "x.csv"), "--workers", "0", "--quiet", "--max-shots", "10"]
    err = cli_error(["sweep", "--code", "bch63_45", "--noise", "ge", "--decoder", "bm", *out])
    assert "needs the transition probabilities p_gb and p_bg" in err
    assert "channel = { p_gb = 0.01, p_bg = 0.2 }" in err
    err = cli_error(["sweep", "--code", "bch63_45", "--noise", "ge-awgn", "--ebn0", "3", "--decoder", "bm", *out])
    assert "p_gb and p_bg" in err and "delta_db" in err
    recipe = tmp_path / "ge.toml"
    recipe.write_text('[[tasks]]\ncode = "bch63_45"\nnoise = "ge"\ndecoders = ["bm"]\nchannel = { p_gb = 0.01 }\n')
    err = cli_error(["sweep", str(recipe), *out])
    assert "needs the transition probabilities p_bg;" in err
