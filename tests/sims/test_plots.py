"""Tests of qdecode.sims.plots.plot_threshold."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.sims.plots import LineFit, PlotOptions, fit_curves, hits_and_trials, plot_threshold
from qdecode.sims.stats import (
    Fit,
    fit_binomial,
    rows_to_curves,
    shot_error_rate_to_per_round,
)
from qdecode.sims.store import StatsRow
from qdecode.sims.threshold import estimate_thresholds, suppression_factors

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rows(decoders=("pymatching", "bp"), ds=(3, 5, 7), shots=20000, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for k, decoder in enumerate(decoders):
        p_th = 0.0075 * (1 - 0.2 * k)
        for d in ds:
            for p in np.geomspace(0.003, 0.012, 6):
                rate = min(0.5, 0.1 * (p / p_th) ** ((d + 1) / 2))
                rows.append(StatsRow(f"{decoder}-{d}-{p!r}", decoder, {"d": d, "p": float(p), "r": d},
                                     shots=shots, errors=int(rng.binomial(shots, rate))))
    return rows


def _gids(fig, prefix):
    ax = fig.axes[0]
    return [line for line in ax.get_lines() if (line.get_gid() or "").startswith(prefix)]


def _notes(fig):
    """The lines of the box of threshold notes (an AnchoredText inside the axes), [] without one."""
    boxes = [a for a in fig.axes[0].artists if a.get_gid() == "threshold-note"]
    return [line for box in boxes for line in box.txt.get_text().split("\n")]


def test_plot_writes_png_with_one_line_per_curve(tmp_path):
    rows = _rows()
    est = estimate_thresholds(rows, n_bootstrap=20)
    out = tmp_path / "sub" / "threshold.png"
    fig = plot_threshold(rows, out_path=out, threshold=est, title="test")
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    curves = _gids(fig, "curve:")
    assert len(curves) == 6  # 2 decoders x 3 distances
    assert len(_gids(fig, "threshold")) == 2
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Physical error rate p"
    assert ax.get_ylabel() == "Logical error rate per shot"
    # Colour follows the decoder, the marker follows d.
    by_label = {line.get_label(): line for line in curves}
    assert by_label["pymatching, d=3"].get_color() != by_label["bp, d=3"].get_color()
    assert by_label["pymatching, d=3"].get_color() == by_label["pymatching, d=5"].get_color()
    assert by_label["pymatching, d=3"].get_marker() == by_label["bp, d=3"].get_marker()
    assert by_label["pymatching, d=3"].get_marker() != by_label["pymatching, d=5"].get_marker()
    # One band per curve.
    assert len(ax.collections) >= 6


def test_plot_points_are_sinter_fits_and_per_round(tmp_path):
    rows = _rows(decoders=("pymatching",), ds=(5,))
    fig = plot_threshold(rows, out_path=tmp_path / "r.png", per_round=True, highlight_max_likelihood_factor=1e3)
    (line,) = _gids(fig, "curve:")
    assert line.get_label() == "pymatching, d=5"  # a lone curve keeps its full label
    assert fig.axes[0].get_ylabel() == "Logical error probability per round"
    expected = []
    for row in sorted(rows, key=lambda r: r.json_metadata["p"]):
        fit = fit_binomial(num_shots=row.shots, num_hits=row.errors)
        expected.append(shot_error_rate_to_per_round(fit, 5).best)
    assert np.allclose(line.get_ydata(), expected, rtol=1e-12)


def test_plot_zero_error_points_are_upper_bounds(tmp_path):
    rows = [
        StatsRow("a", "pm", {"d": 3, "p": 0.001}, shots=1000, errors=10),
        StatsRow("b", "pm", {"d": 3, "p": 0.002}, shots=1000, errors=30),
        StatsRow("c", "pm", {"d": 5, "p": 0.001}, shots=1000, errors=0),
        StatsRow("d", "pm", {"d": 5, "p": 0.002}, shots=1000, errors=12),
    ]
    fig = plot_threshold(rows, out_path=tmp_path / "z.png", threshold=Fit(0.0012, 0.0015, 0.0018))
    (upper,) = _gids(fig, "upper:")
    assert upper.get_marker() == "v"
    assert upper.get_ydata()[0] == pytest.approx(fit_binomial(num_shots=1000, num_hits=0).high)
    d5 = [line for line in _gids(fig, "curve:") if line.get_label() == "d=5"][0]
    assert len(d5.get_xdata()) == 1  # the zero-error point is not on the line
    assert len(_gids(fig, "threshold")) == 1
    legend_texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "no errors (upper bound)" in legend_texts
    assert any("$p_{th}$ = 0.0015\ninterval [0.0012, 0.0018]" in t for t in legend_texts)


def test_plot_without_saving_and_errors(tmp_path):
    rows = _rows(decoders=("pm",), ds=(3,))
    fig = plot_threshold(rows, out_path=None, threshold=0.0075)
    assert len(_gids(fig, "curve:")) == 1
    no_rounds = [StatsRow("a", "pm", {"d": 3, "p": 0.001}, shots=10, errors=1)]
    with pytest.raises(ValueError, match="per-round rates need 'r' or 'rounds'"):
        plot_threshold(no_rounds, out_path=None, per_round=True)
    dup = no_rounds + [StatsRow("b", "pm", {"d": 3, "p": 0.001, "b": "Z"}, shots=10, errors=1)]
    with pytest.raises(ValueError, match="share p=0.001"):
        plot_threshold(dup, out_path=None)
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_threshold([StatsRow("a", "pm", {"d": 3}, shots=10)], out_path=None)
    assert not list(tmp_path.iterdir())


def test_plot_says_when_there_is_no_crossing():
    rows = [StatsRow(f"{d}{p}", "pm", {"d": d, "p": p}, shots=10**4, errors=int(10**4 * p * 30 / d**2))
            for d in (3, 5, 7) for p in (0.001, 0.002, 0.003)]
    est = estimate_thresholds(rows, n_bootstrap=0)
    assert not est[("pm",)].found
    fig = plot_threshold(rows, out_path=None, threshold=est)
    assert not _gids(fig, "threshold")
    assert _notes(fig) == ["threshold: no crossing in range"]


def test_decoder_labels_drop_shared_family_parameters():
    from qdecode.sims.plots import short_decoder_labels

    names = ["bm", "osd[order=2]", "sem-osd[beam=8,context=decoded,order=2]",
             "sem-osd[beam=8,context=genie,order=2]", "sem-osd[beam=8,context=decoded,order=2,prior=transformer]"]
    short = short_decoder_labels(names)
    assert short["bm"] == "bm" and short["osd[order=2]"] == "osd"  # a decoder alone in its name: just the name
    assert short["sem-osd[beam=8,context=decoded,order=2]"] == "sem-osd[context=decoded]"
    assert short["sem-osd[beam=8,context=genie,order=2]"] == "sem-osd[context=genie]"
    assert (short["sem-osd[beam=8,context=decoded,order=2,prior=transformer]"]
            == "sem-osd[context=decoded,prior=transformer]")
    # a family whose members differ only in a parameter one of them lacks stays distinguishable
    two = short_decoder_labels(["x[a=1]", "x[a=1,b=2]"])
    assert two == {"x[a=1]": "x", "x[a=1,b=2]": "x[b=2]"}


def test_long_legends_go_outside_the_axes(tmp_path):
    # Labels that stay long after shortening: the differing parameters of one decoder name.
    decs = ("sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8]",
            "sem-osd[beam=16,context=genie,lam=0.5,lm_order=5,omega=2,order=3,top_k=16]")
    rows = [StatsRow(f"{dec}-{p}", dec, {"d": 3, "p": p}, shots=1000, errors=e)
            for dec in decs for p, e in ((0.001, 5), (0.002, 20))]
    fig = plot_threshold(rows, out_path=tmp_path / "l.png")
    legend = fig.axes[0].get_legend()
    assert legend._loc == 2  # "upper left", anchored to the right of the axes
    assert (tmp_path / "l.png").read_bytes().startswith(PNG_MAGIC)
    # Short labels stay inside.
    rows = [StatsRow(f"{dec}-{p}", dec, {"d": 3, "p": p}, shots=1000, errors=e)
            for dec in ("sem-osd[beam=8,context=decoded,lam=1.0]", "osd[order=2]")
            for p, e in ((0.001, 5), (0.002, 20))]
    fig = plot_threshold(rows, out_path=None)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:2] == ["osd", "sem-osd"]
    assert fig.axes[0].get_legend()._loc != 2


def test_threshold_label_names_the_interval_and_out_of_range_estimates_are_not_drawn():
    rows = _rows(decoders=("pm",))
    (est,) = estimate_thresholds(rows, n_bootstrap=20).values()
    fig = plot_threshold(rows, out_path=None, threshold=est)
    (line,) = _gids(fig, "threshold")
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    label = [t for t in texts if t.startswith("threshold")][0]
    assert f"$p_{{th}}$ = {est.p_th:.3g} (finite-size-scaling fit)" in label
    assert f"95% bootstrap interval [{est.low:.3g}, {est.high:.3g}]" in label
    # The same estimate outside the p range of the data is named, not drawn.
    fig = plot_threshold(rows, out_path=None, threshold=Fit(0.02, 0.03, 0.04))
    assert not _gids(fig, "threshold")
    assert "estimate 0.03 outside the data range [0.003, 0.012], not drawn" in " ".join(_notes(fig))


def _discard_rows():
    return [StatsRow(f"{d}-{p}", "pm", {"d": d, "p": p}, shots=1000, errors=e, discards=k,
                     custom_counts={"not_converged": c} if c else {})
            for d, p, e, k, c in ((3, 0.001, 10, 100, 3), (3, 0.002, 30, 200, 0), (5, 0.001, 2, 150, 7),
                                  (5, 0.002, 12, 300, 9))]


def test_y_quantities_discard_rate_and_custom_counts():
    rows = _discard_rows()
    assert hits_and_trials(rows[0], "error_rate") == (10, 900)
    assert hits_and_trials(rows[0], "discard_rate") == (100, 1000)
    assert hits_and_trials(rows[0], "custom:not_converged") == (3, 900)
    assert hits_and_trials(rows[1], "custom:not_converged") == (0, 800)  # absent count: 0
    fig = plot_threshold(rows, out_path=None, options=PlotOptions(y="discard_rate"))
    d3 = [line for line in _gids(fig, "curve:") if line.get_label() == "d=3"][0]
    assert np.allclose(d3.get_ydata(), [0.1, 0.2])
    assert fig.axes[0].get_ylabel() == "Discard rate per shot"
    fig = plot_threshold(rows, out_path=None, options=PlotOptions(y="custom:not_converged"))
    assert fig.axes[0].get_ylabel() == "Rate of not_converged per kept shot"
    assert len(_gids(fig, "upper:")) == 1  # d=3, p=0.002 has no such count
    with pytest.raises(ValueError, match="unknown y quantity 'custom:'"):
        PlotOptions(y="custom:")
    with pytest.raises(ValueError, match="unknown y quantity 'a/b/c'"):
        PlotOptions(y="a/b/c")
    # A bare key is a custom count; one that no row has is an unknown quantity.
    with pytest.raises(ValueError, match="unknown y quantity 'errors': .*keys present: not_converged"):
        plot_threshold(rows, out_path=None, options=PlotOptions(y="errors"))
    fig = plot_threshold(rows, out_path=None, options=PlotOptions(y="not_converged"))
    assert fig.axes[0].get_ylabel() == "Rate of not_converged per kept shot"
    with pytest.raises(ValueError, match="does not apply to discard_rate"):
        plot_threshold(rows, out_path=None, per_round=True, options=PlotOptions(y="discard_rate"))


def test_axis_scales_and_limits():
    rows = _discard_rows()
    fig = plot_threshold(rows, out_path=None, xscale="linear",
                         options=PlotOptions(yscale="linear", xmin=0.0005, xmax=0.0025, ymax=0.1))
    ax = fig.axes[0]
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "linear"
    assert ax.get_xlim() == (0.0005, 0.0025) and ax.get_ylim()[1] == 0.1
    assert not _gids(fig, "upper:")  # zero is drawable on a linear axis
    with pytest.raises(ValueError, match="--xmin .* must be below --xmax"):
        PlotOptions(xmin=0.01, xmax=0.001)
    with pytest.raises(ValueError, match="--ymin 0 cannot be used on a log axis"):
        plot_threshold(rows, out_path=None, options=PlotOptions(ymin=0.0))
    with pytest.raises(ValueError, match="yscale must be one of"):
        PlotOptions(yscale="sqrt")


def test_fit_against_distance_gives_the_suppression_factor():
    rows = _rows(decoders=("pm",), ds=(3, 5, 7, 9), shots=200000, seed=3)
    # x = d, one curve per p: the fit is the same weighted line as suppression_factors.
    fits = fit_curves(rows, x_key="d", group_keys=("decoder", "p"), xscale="linear")
    (curves,) = rows_to_curves(rows).values()
    lambdas = {s.p: s.lambda_ for s in suppression_factors(curves, n_bootstrap=0)}
    assert len(fits) == 6
    for label, fit in fits.items():
        assert fit.model == "suppression" and fit.num_points >= 2
        p = min(lambdas, key=lambda q: abs(q - float(label.split("p=")[1])))  # labels round p to 6 digits
        assert fit.lambda_ == pytest.approx(lambdas[p], rel=1e-9)
    # Below threshold the model's Lambda is p_th / p exactly.
    low_p = min(fits, key=lambda k: float(k.split("p=")[1]))
    assert fits[low_p].lambda_ == pytest.approx(0.0075 / 0.003, rel=0.1)
    fig = plot_threshold(rows, out_path=None, x_key="d", group_keys=("decoder", "p"), xscale="linear",
                         options=PlotOptions(fit=True))
    assert len(_gids(fig, "fit:")) == 6
    labels = [line.get_label() for line in _gids(fig, "curve:")]
    assert all("(Lambda = " in t for t in labels)


def test_power_law_fit_against_p():
    # rate = 0.1 (p / 0.0075)^((d+1)/2): the exponent of d=5 is 3.
    rows = [StatsRow(f"{p}", "pm", {"d": 5, "p": p}, shots=10**7, errors=int(1e7 * 0.1 * (p / 0.0075) ** 3))
            for p in (0.001, 0.002, 0.004)]
    rows.append(StatsRow("zero", "pm", {"d": 5, "p": 0.0001}, shots=100, errors=0))  # no hits: left out
    (fit,) = fit_curves(rows).values()
    assert isinstance(fit, LineFit) and fit.model == "power" and fit.num_points == 3
    assert fit.slope == pytest.approx(3.0, abs=0.01)
    assert fit.y_at(0.002) == pytest.approx(0.1 * (0.002 / 0.0075) ** 3, rel=0.01)
    assert fit.describe() == "exponent 3"
