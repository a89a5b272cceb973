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


# ------------------------------------------------------------------ shot counts (b8 records no width)
@pytest.fixture(scope="module")
def wide_b8(tmp_path_factory):
    """A b8 file of 40 shots written for 120 detectors (15 bytes a shot) and a 24-detector DEM (3 bytes a
    shot): 600 bytes is a whole number of 3-byte shots and 24 detectors leave no padding bits to check."""
    d = tmp_path_factory.mktemp("wide")
    big = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=15,
                                 after_clifford_depolarization=0.01)
    small = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                   after_clifford_depolarization=0.01)
    assert (big.num_detectors, small.num_detectors) == (120, 24)
    stim.write_shot_data_file(data=big.compile_detector_sampler(seed=1).sample(40), path=d / "wide.b8",
                              format="b8", num_detectors=120)
    (d / "small.dem").write_text(str(small.detector_error_model(decompose_errors=True)))
    return d


def test_num_shots_catches_a_b8_file_of_another_width(wide_b8, capsys, cli_error):
    d = wide_b8
    predict = ["predict", "--dem", str(d / "small.dem"), "--dets", str(d / "wide.b8"), "--decoder", "pymatching",
               "--obs-out", str(d / "o.01")]
    learn = ["learn-noise", "--reference-dem", str(d / "small.dem"), "--dets", str(d / "wide.b8"), "--min-shots", "1"]
    for argv in (predict, learn):
        err = cli_error([*argv, "--num-shots", "40"])
        assert "wide.b8: holds 200 b8 shots of 24 detectors, but --num-shots says 40" in err
        assert "15 bytes each (113 to 120 detectors)" in err
    assert not (d / "o.01").exists()  # nothing written
    assert main([*predict, "--num-shots", "200"]) == 0  # the count it does hold passes (sizes cannot tell)
    assert len((d / "o.01").read_text().split()) == 200
    assert "--num-shots checks a --dets file" in cli_error(["learn-noise", "--code", "surface", "--d", "3",
                                                            "--noise", "sd6", "--p", "0.01", "--reference-p",
                                                            "0.01", "--shots", "2000", "--num-shots", "5"])


def test_num_shots_counts_every_format(files, capsys, cli_error):
    d, _ = files
    for fmt in ("b8", "01", "r8", "ptb64", "hits", "dets"):
        assert main([*_predict(d, dets=f"dets.{fmt}", fmt=fmt, out=f"n_{fmt}.01"), "--num-shots", "64"]) == 0
        err = cli_error([*_predict(d, dets=f"dets.{fmt}", fmt=fmt, out=f"n_{fmt}.01"), "--num-shots", "65"])
        assert f"holds 64 {fmt} shots of 12 detectors, but --num-shots says 65" in err


def test_help_says_b8_has_no_width(capsys):
    for cmd in ("predict", "learn-noise"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "cannot carry their own width" in text and "--num-shots N" in text


# ------------------------------------------------------------------ sweep: options, recipes, files
_SWEEP = ["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.002", "--decoder", "pymatching",
          "--quiet"]


@pytest.mark.parametrize("flags, message", [
    (["--max-shots", "0"], "--max-shots must be >= 1, got 0"),
    (["--max-errors", "0"], "--max-errors must be >= 1, got 0"),
    (["--max-batch-size", "0"], "--max-batch-size must be >= 1, got 0"),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--workers", "-2"], "--workers must be >= 0 (0 runs inline, in this process), got -2"),
    (["--dask-workers", "0"], "--dask-workers must be >= 1, got 0"),
    (["--decoder", "bposd[osd_order=3,osd_order=4]"], "parameter 'osd_order' is given twice"),
    (["--param", "max_iter=3", "--param", "max_iter=4"], "--param max_iter is given twice"),
    (["--workers", "abc"], "argument --workers: invalid int value: 'abc' (see qdecode sweep --help)"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag (see qdecode sweep --help)"),
])
def test_bad_sweep_options(tmp_path, capsys, cli_error, flags, message):
    out = tmp_path / "x.csv"
    err = cli_error([*_SWEEP, "--out", str(out), *flags])  # refused before any worker starts
    assert message in err and "min_batch_size" not in err
    assert not out.exists() or len(out.read_text().splitlines()) <= 1  # no row recorded


def test_argparse_errors_are_one_line(capsys, cli_error):
    err = cli_error(["predict", "--dem", "x.dem"])
    assert err == ("qdecode predict: error: the following arguments are required: --dets, --decoder, --obs-out "
                   "(see qdecode predict --help)")
    assert "invalid choice: 'xx'" in cli_error(["learn-noise", "--dets-format", "xx"])
    capsys.readouterr()
    assert main(["nosuchcommand"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("qdecode: error: argument COMMAND: invalid choice: 'nosuchcommand'")


def test_max_batch_size_below_the_first_batch_runs(tmp_path, capsys):
    out = tmp_path / "b.csv"
    assert main([*_SWEEP, "--out", str(out), "--workers", "0", "--max-batch-size", "1", "--max-shots", "5"]) == 0
    from qdecode.sims.store import read_rows

    assert [r.shots for r in read_rows(out)] == [1] * 5


def test_more_workers_than_cores_warns_once_and_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    out = tmp_path / "w.csv"
    assert main([*_SWEEP, "--out", str(out), "--workers", "2", "--max-shots", "300"]) == 0
    warnings = [x for x in capsys.readouterr().err.splitlines() if "warning" in x]
    assert warnings == ["qdecode sweep: warning: 2 worker processes (--workers) on a machine with 1 cores; "
                        "running them anyway (the extra ones only compete for the cores)"]


_TABLE = 'code = "surface"\nnoise = "sd6"\n'


@pytest.mark.parametrize("table, message", [
    ('d = 3\np = 0.002\ndecoders = []', "[[tasks]] #1: decoders is an empty list, so this table would run no task"),
    ('d = 3\np = []\ndecoders = ["pymatching"]', "[[tasks]] #1: p is an empty list"),
    ('d = []\np = 0.002\ndecoders = ["pymatching"]', "[[tasks]] #1: d is an empty list"),
    ('d = 3\np = 0.002\ndecoders = ["bposd[osd_order=3,osd_order=4]"]', "parameter 'osd_order' is given twice"),
    ('d = 3\np = 0.002\ndecoders = ["bposd"]\nmax_shots = 0', "max_shots must be >= 1, got 0"),
])
def test_recipes_that_run_nothing_or_hide_a_value(tmp_path, capsys, cli_error, table, message):
    recipe = tmp_path / "r.toml"
    top, _, task = table.rpartition("\nmax_shots")  # max_shots is a top-level key: before the task table
    head = f'out = "{tmp_path / "r.csv"}"\n' + ("max_shots" + task + "\n" if top else "")
    recipe.write_text(f"{head}[[tasks]]\n{_TABLE}{top or table}\n")
    err = cli_error(["sweep", str(recipe), "--workers", "0", "--quiet"])
    assert str(recipe) in err and message in err
    assert not (tmp_path / "r.csv").exists()


def test_bad_files_are_named(tmp_path, capsys, cli_error):
    out = ["--out", str(tmp_path / "o.csv"), "--workers", "0", "--quiet", "--decoder", "pymatching"]
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00 garbage")
    assert f"{binary}: not a text TOML recipe (binary data, or not UTF-8)" in cli_error(["sweep", str(binary)])
    # stim reports the end of a truncated file as byte 0xFF inside its message: not a UTF-8 problem of the file
    for name, text, what in (("cut.stim", "M 0\nDETECTOR rec[-", "--circuit"),
                             ("cut.dem", "error(0.1) D0\ndetector D", "--dem")):
        (tmp_path / name).write_text(text)
        err = cli_error(["sweep", what, str(tmp_path / name), *out])
        assert f"{tmp_path / name}: not a valid" in err
        assert "Expected a digit but got the end of the file (is the file truncated?)" in err
        assert "utf-8" not in err
    crlf = tmp_path / "cr.csv"
    crlf.write_bytes(b"\rshots,errors\n")
    err = cli_error([*_SWEEP, "--out", str(crlf), "--workers", "0"])
    assert f"{crlf}: refusing to append, not a sinter stats CSV: unparsable header line" in err
    assert crlf.read_bytes() == b"\rshots,errors\n"


def test_a_task_stim_refuses_is_named(tmp_path, capsys, cli_error):
    err = cli_error(["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.001,0.9",
                     "--decoder", "pymatching", "--quiet", "--workers", "0", "--out", str(tmp_path / "m.csv")])
    assert "task code=surface, d=3, p=0.9, noise=sd6, basis=Z, decoder=pymatching: " in err
    assert "over-mixing" in err


def test_a_decoder_refusing_a_task_stops_the_sweep_before_any_shot(tmp_path, capsys, cli_error):
    """Chromobius needs colour-code detectors: the surface task is refused when its decoder is built,
    before pymatching's task (listed first) samples anything, naming the task."""
    out = tmp_path / "refused.csv"
    err = cli_error(["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.005",
                     "--decoder", "pymatching", "--decoder", "chromobius", "--quiet", "--workers", "0",
                     "--out", str(out)])
    assert "task code=surface, d=3, p=0.005, noise=sd6, basis=Z, decoder=chromobius: chromobius cannot decode" in err
    assert len(out.read_text().splitlines()) <= 1  # at most the header: no shot was sampled


def test_the_lock_follows_symbolic_links(tmp_path, capsys, cli_error):
    """``--out link.csv`` (a link to stats.csv) while stats.csv is being written, and the other way round."""
    from qdecode.sims.store import StatsWriter

    real, link = tmp_path / "stats.csv", tmp_path / "link.csv"
    link.symlink_to(real.name)
    messages = {}
    for held, given in ((real, link), (link, real)):
        with StatsWriter(held):
            messages[given.name] = cli_error([*_SWEEP, "--out", str(given), "--workers", "0", "--max-shots", "100"])
        assert len(real.read_text().splitlines()) == 1  # the header only: nothing recorded
    assert f"link.csv (the same file as {real.resolve()}): another qdecode sweep is writing" in messages["link.csv"]
    assert "stats.csv: another qdecode sweep is writing" in messages["stats.csv"]


# ------------------------------------------------------------------ plot and threshold
@pytest.fixture(scope="module")
def odd_csv(tmp_path_factory):
    """Rows with a custom count that is 0 in every row, and a row whose p came from a file name as text."""
    from qdecode.sims.store import StatsRow, StatsWriter

    path = tmp_path_factory.mktemp("odd") / "odd.csv"
    with StatsWriter(path, fsync=False) as w:
        for d in (3, 5):
            for p in (0.001, 0.002):
                for _ in range(2):  # two batches: merging them drops the count that stayed 0
                    w.append(StatsRow(f"{d}-{p}", "pymatching", {"d": d, "p": p, "r": d}, shots=100, errors=1,
                                      custom_counts={"not_converged": 0, "detection_events": 7}))
        w.append(StatsRow("abc", "pymatching", {"d": 5, "p": "abc", "r": 5}, shots=100, errors=1))
    return str(path)


def test_plot_refuses_a_custom_count_no_row_has(odd_csv, tmp_path, capsys, cli_error):
    out = str(tmp_path / "c.png")
    err = cli_error(["plot", odd_csv, "--out", out, "--y", "custom:typo_key", "--filter", "r=3"])
    assert ("no row has the custom count 'typo_key' asked for by y='custom:typo_key' "
            "(keys present: detection_events, not_converged)") in err
    assert not (tmp_path / "c.png").exists()
    # a count that is 0 in every row is present, not a typo
    assert main(["plot", odd_csv, "--out", out, "--y", "custom:not_converged", "--filter", "r=3", "--x", "d"]) == 0


def test_text_metadata_on_an_axis_is_one_line(odd_csv, tmp_path, capsys, cli_error):
    out = str(tmp_path / "t.png")
    err = cli_error(["plot", odd_csv, "--out", out, "--no-threshold"])
    assert ("json_metadata p='abc' (row abc, decoder pymatching) is not a number, so it cannot be used as "
            "the x axis") in err
    err = cli_error(["threshold", odd_csv])
    assert "p='abc'" in err and "cannot be used as p in a threshold fit" in err
    # other axes still plot, and filtering the text value out plots p
    assert main(["plot", odd_csv, "--out", out, "--x", "d", "--no-threshold"]) == 0
    assert main(["plot", odd_csv, "--out", out, "--filter", "p=0.001", "--filter", "p=0.002"]) == 0


def test_text_metadata_from_a_file_name_is_kept(tmp_path, capsys, cli_error):
    circuit = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2, after_clifford_depolarization=0.05)
    (tmp_path / "d=3,p=abc.stim").write_text(str(circuit))
    csv = tmp_path / "f.csv"
    assert main(["sweep", "--circuit", str(tmp_path / "d=3,p=abc.stim"), "--decoder", "pymatching", "--out", str(csv),
                 "--workers", "0", "--quiet", "--max-shots", "100"]) == 0
    from qdecode.sims.store import read_rows

    assert read_rows(csv)[0].json_metadata == {"d": 3, "p": "abc"}
    assert "p='abc'" in cli_error(["plot", str(csv), "--out", str(tmp_path / "f.png")])


# ------------------------------------------------------------------ internal errors
@pytest.mark.parametrize("bug", [KeyError("d"), ValueError("math domain error"), TypeError("'NoneType'"),
                                 IndexError("index 3 is out of bounds"), ImportError("cannot import name 'x'")])
def test_an_internal_bug_is_never_called_bad_input(capsys, monkeypatch, bug):
    """A bug (here injected into ``qdecode codes``) exits 1 as an internal error with its type and where it
    happened, not 2 with a bare message: a KeyError from a bug used to print just ``error: d``."""
    import qdecode.cli.codes as codes

    def broken(args):
        raise bug

    monkeypatch.setattr(codes, "run", broken)
    capsys.readouterr()
    assert main(["codes"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"qdecode: internal error (please report): {type(bug).__name__}: "), err
    assert "error: " not in err.splitlines()[0].split("report): ")[0]
    assert "test_errors_cli.py" in err  # the frames that raised it


@pytest.mark.parametrize("exc", ["input", "refused", "capability", "missing", "file"])
def test_the_user_error_kinds_exit_2(capsys, monkeypatch, exc, cli_error):
    """Each kind of :mod:`qdecode.errors` that is the user's doing exits 2 in one line."""
    import qdecode.cli.codes as codes
    from qdecode.decoders.base import DecoderCapabilityError, DecoderRefusedError
    from qdecode.errors import InputError, MissingPackageError

    raised = {"input": InputError("p must lie in (0, 1)"), "refused": DecoderRefusedError("uf: hyperedges"),
              "capability": DecoderCapabilityError("tesseract predicts observable flips only"),
              "missing": MissingPackageError("needs torch: pip install 'qdecode[neural]'"),
              "file": FileNotFoundError(2, "No such file or directory", "x.dem")}[exc]

    def broken(args):
        raise raised

    monkeypatch.setattr(codes, "run", broken)
    err = cli_error(["codes"])
    assert str(raised).split()[0] in err
