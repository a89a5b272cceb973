"""`qdecode plot` / `threshold` / `combine`: input paths, --out, per-round --max-discard, pooled counts, messages.

Each test pins one fix of issue 43: a directory given as a stats CSV is named as such (one shared
check, :func:`qdecode.cli.common.check_input_file`); ``plot --out`` without an extension names the
``.png`` it writes; ``threshold --max-discard --per-round`` converts its rates per round; a custom
count only some pooled rows carry is a one-line error; a strong_id conflict names the field that
differs; a p that a log axis cannot show names the ``--xscale`` flag; a single-p file is drawn.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.sims.gap_bins import GAP_BINS_KEY, GAP_BINS_TAG, discard_curve, gap_bin_counts
from qdecode.sims.stats import shot_error_rate_to_per_round
from qdecode.sims.store import StatsRow, StatsWriter


def _write(path, rows):
    with StatsWriter(path, fsync=False) as w:
        for row in rows:
            w.append(row)
    return str(path)


@pytest.mark.parametrize("command", [["plot", "--out", "x.png"], ["threshold"], ["combine"]])
def test_a_directory_is_named_as_one(tmp_path, cli_error, command):
    folder = tmp_path / "results"
    folder.mkdir()
    argv = [command[0], str(folder), *command[1:]]
    assert cli_error(argv).endswith(f"{folder}: is a directory, expected a stats CSV file")
    argv = [command[0], str(tmp_path / "nope.csv"), *command[1:]]
    assert cli_error(argv).endswith("nope.csv: no such file")


def test_plot_out_without_extension_names_the_png_written(tmp_path, capsys, cli_error):
    csv = _write(tmp_path / "s.csv", [StatsRow("a", "pm", {"d": 3, "p": 0.002}, shots=1000, errors=4)])
    capsys.readouterr()
    assert main(["plot", csv, "--out", str(tmp_path / "fig")]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"qdecode plot: {tmp_path / 'fig'}.png"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png", "s.csv", "s.csv.lock"]
    err = cli_error(["plot", csv, "--out", str(tmp_path / "fig.xyz")])
    assert "--out" in err and "'.xyz' is not an image format" in err and not (tmp_path / "fig.xyz").exists()


def _gap_csv(tmp_path, shots=30_000, seed=5):
    rng = np.random.default_rng(seed)
    rows = []
    for d in (3, 5):
        gaps = rng.gamma(2.0 + d, 5.0, size=shots).astype(np.float32)
        errors = rng.random(shots) < 0.5 * np.exp(-gaps / 2.5)
        md = {"d": d, "p": 0.003, "r": d, GAP_BINS_KEY: GAP_BINS_TAG}
        rows.append(StatsRow(f"pm-{d}", "pymatching", md, shots=shots, errors=int(errors.sum()),
                             custom_counts=gap_bin_counts(gaps, errors)))
    return _write(tmp_path / "gap.csv", rows), rows


def test_threshold_max_discard_honours_per_round(tmp_path, capsys):
    csv, rows = _gap_csv(tmp_path)
    tables = {}
    for flag in ([], ["--per-round"]):
        capsys.readouterr()
        assert main(["threshold", csv, "--max-discard", "0.05", *flag]) == 0
        tables[bool(flag)] = capsys.readouterr().out.strip().splitlines()
    assert tables[True][1].split("\t")[5:] == ["LER_per_round_kept", "LER_per_round_kept_low",
                                               "LER_per_round_kept_high", "LER_per_round_all"]
    assert "rates per round" in tables[True][0] and "per round" not in tables[False][0]
    for row, shot_line, round_line in zip(rows, tables[False][2:], tables[True][2:]):
        shot, per_round = shot_line.split("\t"), round_line.split("\t")
        assert shot[:5] == per_round[:5]  # threshold, discarded, kept, kept errors: unchanged
        r = row.json_metadata["r"]
        for got, per_shot in zip(per_round[5:], shot[5:]):
            assert float(got) == pytest.approx(shot_error_rate_to_per_round(float(per_shot), r), rel=2e-3)
        full = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)[0].fit.best
        assert float(per_round[8]) == pytest.approx(shot_error_rate_to_per_round(full, r), rel=1e-3)
        assert float(per_round[8]) < float(shot[8]) / 2 and float(per_round[5]) <= float(shot[5]) / 2


def test_plot_refuses_a_count_only_some_pooled_rows_carry(tmp_path, capsys, cli_error):
    md = {"d": 3, "p": 0.002, "r": 3}
    ours = _write(tmp_path / "sweep.csv", [
        StatsRow("task", "relay-bp", md, shots=5000, errors=10,
                 custom_counts={"iterations": 52_000, "legs": 100, f"seed=9@{i * 5000}": 5000}) for i in range(2)])
    theirs = _write(tmp_path / "sinter.csv", [StatsRow("task", "relay-bp", md, shots=10_000, errors=21)])
    out = str(tmp_path / "it.png")
    for key in ("iterations", "legs"):
        err = cli_error(["plot", ours, theirs, "--y", key, "--out", out])
        assert f"the custom count {key!r}" in err and "missing from 10000 of the 20000 shots" in err
    # the sweep's file alone plots; its seed keys are not offered as y
    capsys.readouterr()
    assert main(["plot", ours, "--y", "iterations", "--out", out]) == 0
    err = cli_error(["plot", ours, "--y", "seed=9@0", "--out", out])
    assert "seed-stream record" in err and "(keys present: iterations, legs)" in err
    # --filter picks the tasks before the check: a filtered-out pooled task does not block the plot
    other = _write(tmp_path / "other.csv", [StatsRow("t2", "relay-bp", {"d": 5, "p": 0.002, "r": 5}, shots=100,
                                                     errors=0, custom_counts={"iterations": 900})])
    capsys.readouterr()
    assert main(["plot", ours, theirs, other, "--y", "iterations", "--filter", "d=5", "--out", out]) == 0


def test_messages_name_the_difference_and_the_flag(tmp_path, cli_error):
    a = _write(tmp_path / "a.csv", [StatsRow("s", "pymatching", {"d": 3, "p": 0.002, "noise": "sd6"}, shots=10)])
    b = _write(tmp_path / "b.csv", [StatsRow("s", "pymatching", {"d": 3, "p": 0.002, "noise": "si1000"}, shots=10)])
    for command in (["plot", a, b, "--out", str(tmp_path / "x.png")], ["threshold", a, b]):
        assert 'differ in json_metadata noise: "sd6" vs "si1000"' in cli_error(command)
    zero = _write(tmp_path / "zero.csv", [StatsRow(f"z{p}", "pm", {"d": 3, "p": p}, shots=100, errors=1)
                                          for p in (0.0, 0.001)])
    assert "--xscale linear" in cli_error(["plot", zero, "--out", str(tmp_path / "x.png")])


def test_threshold_with_p_zero_points_prints_no_numpy_warnings(tmp_path, capsys):
    rows = []
    for d in (3, 5, 7):
        for p in (0.0, 0.006, 0.008, 0.01, 0.012, 0.014):
            errors = max(1, int(20_000 * min(0.5, 0.1 * (p / 0.01) ** ((d + 1) / 2))))
            rows.append(StatsRow(f"{d}-{p}", "pm", {"d": d, "p": p, "r": d}, shots=20_000, errors=errors))
    csv = _write(tmp_path / "s.csv", rows)
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["threshold", csv, "--bootstrap", "30"]) == 0
        assert main(["plot", csv, "--xscale", "linear", "--out", str(tmp_path / "x.png")]) == 0
    captured = capsys.readouterr()
    assert "Warning" not in captured.err and "threshold: p_th = 0.01" in captured.out


def test_a_single_p_file_is_drawn(tmp_path, capsys):
    import matplotlib.image

    csv = _write(tmp_path / "s.csv", [StatsRow(f"d{d}", "pm", {"d": d, "p": 0.002, "r": d}, shots=20_000, errors=e)
                                      for d, e in ((3, 70), (5, 13))])
    png = tmp_path / "single.png"
    capsys.readouterr()
    assert main(["plot", csv, "--out", str(png)]) == 0
    image = matplotlib.image.imread(png)[..., :3]
    # the two Okabe-Ito colours of d = 3 and 5 are drawn well beyond the legend's short samples
    for colour in ("#0072B2", "#D55E00"):
        rgb = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        assert np.sum(np.all(np.abs(image - rgb) < 0.02, axis=-1)) > 400, colour


def test_sweep_plot_names_the_file_written_and_refuses_a_bad_format_before_sampling(tmp_path, capsys):
    sweep = ["sweep", "--code", "surface", "--d", "3", "--p", "0.005", "--noise", "sd6", "--decoder", "pymatching",
             "--max-shots", "500", "--workers", "0", "--quiet", "--out", str(tmp_path / "s.csv")]
    assert main([*sweep, "--plot", str(tmp_path / "noext")]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"qdecode sweep: plot -> {tmp_path / 'noext.png'}"
    assert (tmp_path / "noext.png").is_file()
    assert main([*sweep, "--out", str(tmp_path / "t.csv"), "--plot", str(tmp_path / "f.xyz")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "'.xyz' is not an image format" in line and not (tmp_path / "t.csv").exists()  # nothing sampled
