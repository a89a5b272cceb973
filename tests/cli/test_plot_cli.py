"""`qdecode plot` options: --x, --y, --filter, scales, limits, the band factor, --fit, the threshold marker."""

from __future__ import annotations

import re

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.cli.plot import apply_filters, parse_filters
from qdecode.sims.store import StatsRow, StatsWriter

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
P_TH = 0.0075


def _rows(seed=0, shots=200_000):
    """Two decoders, two bases, d = 3, 5, 7, 9 around a threshold at 0.0075, with discards and custom counts."""
    rng = np.random.default_rng(seed)
    rows = []
    for decoder in ("pymatching", "bp"):
        for basis in ("X", "Z"):
            for d in (3, 5, 7, 9):
                for p in np.geomspace(0.004, 0.012, 5):
                    p = float(p)
                    rate = min(0.5, 0.1 * (p / P_TH) ** ((d + 1) / 2))
                    discards = int(rng.binomial(shots, 0.01 * d))
                    errors = int(rng.binomial(shots - discards, rate))
                    rows.append(StatsRow(f"{decoder}-{basis}-{d}-{p!r}", decoder,
                                         {"b": basis, "d": d, "p": p, "r": d}, shots=shots, errors=errors,
                                         discards=discards, seconds=1.0,
                                         custom_counts={"not_converged": errors // 3,
                                                        "obs_mistake_mask=E_": errors // 2}))
    return rows


@pytest.fixture(scope="module")
def stats_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("plot") / "stats.csv"
    with StatsWriter(path, fsync=False) as w:
        for row in _rows():
            w.append(row)
    return str(path)


def _plot(capsys, argv):
    capsys.readouterr()
    code = main(["plot", *argv])
    err = capsys.readouterr().err
    assert code == 0, err
    return err




def test_default_plot_and_filters(tmp_path, capsys, stats_csv):
    out = tmp_path / "f.png"
    err = _plot(capsys, [stats_csv, "--out", str(out), "--filter", "b=X", "--filter", "decoder=pymatching"])
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert f"qdecode plot: {out}" in err
    # --filter d=5 --filter d=7: values of one key are alternatives; d parsed as an int.
    out2 = tmp_path / "g.svg"
    _plot(capsys, [stats_csv, "--out", str(out2), "--filter", "d=5", "--filter", "d=7", "--per-round",
                   "--highlight-max-likelihood-factor", "1"])
    assert out2.read_text().lstrip().startswith("<?xml")


def test_filter_parsing():
    assert parse_filters(["d=5", "p=0.001", "b=X", "decoder=7", "name=a=b"]) == \
        {"d": [5], "p": [0.001], "b": ["X"], "decoder": ["7"], "name": ["a=b"]}
    rows = _rows(shots=1000)
    kept = apply_filters(rows, ["d=5", "b=Z", "decoder=bp"])
    assert len(kept) == 5
    assert {(r.decoder, r.json_metadata["b"], r.json_metadata["d"]) for r in kept} == {("bp", "Z", 5)}
    assert len(apply_filters(rows, [])) == len(rows)


def test_y_quantities_and_axes(tmp_path, capsys, stats_csv):
    for y in ("discard_rate", "custom:not_converged", "custom:obs_mistake_mask=E_"):
        out = tmp_path / f"{y.replace(':', '_').replace('=', '_')}.png"
        _plot(capsys, [stats_csv, "--out", str(out), "--y", y, "--filter", "b=X", "--yscale", "linear",
                       "--xscale", "linear", "--xmin", "0.003", "--xmax", "0.013", "--ymin", "0"])
        assert out.read_bytes().startswith(PNG_MAGIC)


def test_fit_against_d_prints_lambda(tmp_path, capsys, stats_csv):
    out = tmp_path / "lam.png"
    err = _plot(capsys, [stats_csv, "--out", str(out), "--x", "d", "--fit", "--filter", "b=Z",
                         "--filter", "decoder=pymatching"])
    assert out.read_bytes().startswith(PNG_MAGIC)
    found = dict(re.findall(r"fit p=([0-9.e-]+): Lambda = ([0-9.]+)", err))
    assert len(found) == 5, err
    lambdas = {float(p): float(lam) for p, lam in found.items()}
    # The model's Lambda is p_th / p where no rate is clipped at 0.5 (below threshold).
    for p, lam in lambdas.items():
        if p < P_TH:
            assert lam == pytest.approx(P_TH / p, rel=0.1), (p, lam)
    assert lambdas[max(lambdas)] < 1  # above threshold larger codes are worse
    assert "LER = A / Lambda^((d+1)/2)" in err


def test_fit_against_p_prints_exponents(tmp_path, capsys, stats_csv):
    err = _plot(capsys, [stats_csv, "--out", str(tmp_path / "pow.png"), "--fit", "--filter", "b=Z",
                         "--filter", "decoder=bp", "--no-threshold"])
    exps = {int(d): float(k) for d, k in re.findall(r"fit d=(\d+): exponent ([0-9.]+)", err)}
    assert set(exps) == {3, 5, 7, 9}, err
    for d in (3, 5):  # rate = 0.1 (p / p_th)^((d+1)/2), not clipped at 0.5 for these d
        assert exps[d] == pytest.approx((d + 1) / 2, rel=0.1), (d, exps[d])


def test_bad_input_is_one_line(tmp_path, capsys, stats_csv, cli_error):
    out = str(tmp_path / "x.png")
    assert "unknown y quantity 'ler'" in cli_error(["plot", stats_csv, "--out", out, "--y", "ler"])
    assert "unknown y quantity 'custom:'" in cli_error(["plot", stats_csv, "--out", out, "--y", "custom:"])
    assert "--filter expects KEY=VALUE" in cli_error(["plot", stats_csv, "--out", out, "--filter", "d5"])
    assert "--filter expects KEY=VALUE" in cli_error(["plot", stats_csv, "--out", out, "--filter", "=5"])
    err = cli_error(["plot", stats_csv, "--out", out, "--filter", "d=11"])
    assert "no rows match --filter d=11" in err and "d takes 3, 5, 7, 9" in err
    assert "nope.csv: no such file" in cli_error(["plot", str(tmp_path / "nope.csv"), "--out", out])
    assert "--xmin (0.01) must be below --xmax (0.005)" in cli_error(["plot", stats_csv, "--out", out,
                                                                      "--xmin", "0.01", "--xmax", "0.005"])
    assert "--ymin (0.1) must be below --ymax (0.1)" in cli_error(["plot", stats_csv, "--out", out,
                                                                   "--ymin", "0.1", "--ymax", "0.1"])
    assert "--xscale must be linear or log" in cli_error(["plot", stats_csv, "--out", out, "--xscale", "sqrt"])
    assert "cannot be used on a log axis" in cli_error(["plot", stats_csv, "--out", out, "--ymin", "0"])
    assert "must be >= 1" in cli_error(["plot", stats_csv, "--out", out,
                                           "--highlight-max-likelihood-factor", "0.5"])
    assert "does not apply to discard_rate" in cli_error(["plot", stats_csv, "--out", out,
                                                         "--y", "discard_rate", "--per-round"])
    assert "no rows match" in cli_error(["threshold", stats_csv, "--filter", "noise=sd6"])
    assert not (tmp_path / "x.png").exists()


def test_threshold_marker_only_inside_the_data_range(tmp_path, capsys):
    from qdecode.cli.plot import draw
    from qdecode.sims.plots import PlotOptions, plot_threshold

    rows = [r for r in _rows(shots=20_000) if r.decoder == "pymatching" and r.json_metadata["b"] == "X"]
    fig_rows = [r for r in rows if r.json_metadata["p"] < 0.0065]  # all below the crossing at 0.0075
    # draw() estimates the threshold; below the crossing there is none to mark.
    draw(fig_rows, out_path=str(tmp_path / "below.png"))
    assert (tmp_path / "below.png").exists()
    from qdecode.sims.threshold import threshold_report

    (report,) = threshold_report(rows, group_keys=("decoder",), n_bootstrap=20).values()
    est = report.threshold
    assert est.found and est.method == "fss"
    fig = plot_threshold(rows, out_path=None, threshold=est, options=PlotOptions())
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("finite-size-scaling fit" in t and "95% bootstrap interval" in t for t in texts), texts
    fig = plot_threshold(fig_rows, out_path=None, threshold=est)
    assert not [line for line in fig.axes[0].get_lines() if line.get_gid() == "threshold"]
    notes = [a.txt.get_text() for a in fig.axes[0].artists if a.get_gid() == "threshold-note"]
    assert any("outside the data range" in t for t in notes)


def test_help_states_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--x KEY", "--y QUANTITY", "--filter", "--xscale", "--yscale", "--xmin", "--ymax",
                 "--highlight-max-likelihood-factor", "--fit", "--no-threshold", "--per-round", "--group",
                 "--line_fits", "--line-fits", "--subtitle TEXT", "--dpi", "--fig_size W H", "--fig-size", "--show"):
        assert flag in text
    assert text.count("(default:") >= 15
    assert "default: 1000, as sinter" in text


def test_classical_rows_default_to_ebn0(tmp_path, capsys, cli_error):
    path = tmp_path / "bch.csv"
    with StatsWriter(path, fsync=False) as w:
        for ebn0, errors in ((2.0, 400), (3.0, 60), (4.0, 5)):
            w.append(StatsRow(f"bch-{ebn0}", "osd[order=1]",
                              {"code": "bch127_64", "noise": "awgn", "n": 127, "k": 64, "ebn0": ebn0},
                              shots=3000, errors=errors, custom_counts={"ml_lb": errors // 2}))
    err = _plot(capsys, [str(path), "--out", str(tmp_path / "bch.png"), "--fit"])
    assert "exponential" not in err and "ln rate = a + k x" in err  # linear Eb/N0 axis: ln BLER linear in x
    _plot(capsys, [str(path), "--out", str(tmp_path / "ml.png"), "--y", "custom:ml_lb"])
    assert "does not apply to classical" in cli_error(["plot", str(path), "--out", str(tmp_path / "x.png"),
                                                          "--per-round"])


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_sinter_figure_flags(tmp_path, capsys, stats_csv, cli_error):
    one = ["--filter", "b=X", "--filter", "decoder=pymatching", "--filter", "d=5", "--filter", "d=9"]
    out = tmp_path / "size.png"
    _plot(capsys, [stats_csv, "--out", str(out), *one, "--dpi", "80", "--fig_size", "640", "480"])
    assert _png_size(out) == (640, 480)  # a short legend stays inside: the size asked for
    _plot(capsys, [stats_csv, "--out", str(out), *one, "--dpi", "100", "--fig-size", "500", "400",
                   "--subtitle", "{common}, my run", "--title", "T"])
    width, height = _png_size(out)  # too small to hold the legend inside: it goes beside the axes
    assert width > 500 and 380 <= height <= 400
    _plot(capsys, [stats_csv, "--out", str(out), *one, "--subtitle", ""])
    assert _png_size(out) == (1050, 750)  # the defaults: 7 x 5 inches at 150 dpi
    assert "--dpi takes positive integers, got '0'" in cli_error(["plot", stats_csv, "--out", str(out), "--dpi", "0"])
    assert "--fig_size" in cli_error(["plot", stats_csv, "--out", str(out), "--fig_size", "10"])


def test_line_fits_is_fit(tmp_path, capsys, stats_csv):
    args = [stats_csv, "--x", "d", "--filter", "b=Z", "--filter", "decoder=pymatching"]
    fit = _plot(capsys, [*args, "--out", str(tmp_path / "a.png"), "--fit"])
    for flag in ("--line_fits", "--line-fits"):
        line_fits = _plot(capsys, [*args, "--out", str(tmp_path / "a.png"), flag])
        assert line_fits == fit and "Lambda = " in fit


def test_show_parses_and_still_writes_the_file(tmp_path, capsys, stats_csv, monkeypatch):
    import matplotlib

    monkeypatch.setenv("MPLBACKEND", "Agg")
    matplotlib.use("Agg")  # non-interactive: --show says it cannot open a window
    out = tmp_path / "show.png"
    err = _plot(capsys, [stats_csv, "--out", str(out), "--filter", "b=X", "--show"])
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert "--show: matplotlib's backend 'agg' cannot open a window" in err.lower()
    from qdecode.cli.plot import interactive_backend

    assert interactive_backend("TkAgg") and interactive_backend("module://matplotlib_inline.backend_inline")
    assert not interactive_backend("agg") and not interactive_backend("pdf")


def test_y_takes_custom_counts_keys(tmp_path, capsys, cli_error):
    path = tmp_path / "det.csv"
    with StatsWriter(path, fsync=False) as w:
        for d in (3, 5):
            for p in (0.002, 0.004):
                w.append(StatsRow(f"{d}-{p}", "pymatching", {"d": d, "p": p, "r": d}, shots=1000, errors=20,
                                  custom_counts={"detection_events": int(8e5 * p) * d, "detectors_checked": 8000 * d,
                                                 "not_converged": 3}))
    for y in ("detection_events", "detection_events/detectors_checked", "custom:detection_events", "not_converged"):
        out = tmp_path / f"{y.replace('/', '_').replace(':', '_')}.png"
        _plot(capsys, [str(path), "--out", str(out), "--y", y])
        assert out.read_bytes().startswith(PNG_MAGIC)
    err = cli_error(["plot", str(path), "--out", str(tmp_path / "x.png"), "--y", "detection_event"])
    assert "unknown y quantity 'detection_event'" in err and "keys present: detection_events, detectors_checked" in err
    err = cli_error(["plot", str(path), "--out", str(tmp_path / "x.png"), "--y", "detection_events/shots"])
    assert "no row has the custom count 'shots' that y='detection_events/shots' divides by" in err
    err = cli_error(["plot", str(path), "--out", str(tmp_path / "x.png"), "--y", "detection_events", "--per-round"])
    assert "--per-round does not apply to y=detection_events" in err
