"""Tests of qdecode.sims.plots.plot_threshold."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from qdecode.sims.plots import plot_threshold  # noqa: E402
from qdecode.sims.stats import Fit, fit_binomial, shot_error_rate_to_per_round  # noqa: E402
from qdecode.sims.store import StatsRow  # noqa: E402
from qdecode.sims.threshold import estimate_thresholds  # noqa: E402

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
    # Colour follows d, line style follows the decoder.
    by_label = {line.get_label(): line for line in curves}
    assert by_label["pymatching, d=3"].get_color() == by_label["bp, d=3"].get_color()
    assert by_label["pymatching, d=3"].get_color() != by_label["pymatching, d=5"].get_color()
    assert by_label["pymatching, d=3"].get_linestyle() != by_label["bp, d=3"].get_linestyle()
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
    assert any("0.0015 [0.0012, 0.0018]" in t for t in legend_texts)


def test_plot_without_saving_and_errors(tmp_path):
    rows = _rows(decoders=("pm",), ds=(3,))
    fig = plot_threshold(rows, out_path=None, threshold=0.0075)
    assert len(_gids(fig, "curve:")) == 1
    no_rounds = [StatsRow("a", "pm", {"d": 3, "p": 0.001}, shots=10, errors=1)]
    with pytest.raises(ValueError, match="per_round needs 'r' or 'rounds'"):
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
    assert [t.get_text() for t in fig.axes[0].texts] == ["threshold: no crossing in range"]


def test_decoder_labels_drop_shared_family_parameters():
    from qdecode.sims.plots import short_decoder_labels

    names = ["bm", "osd[order=2]", "sem-osd[beam=8,context=decoded,order=2]",
             "sem-osd[beam=8,context=genie,order=2]", "sem-osd[beam=8,context=decoded,order=2,prior=transformer]"]
    short = short_decoder_labels(names)
    assert short["bm"] == "bm" and short["osd[order=2]"] == "osd[order=2]"  # lone family members keep all
    assert short["sem-osd[beam=8,context=decoded,order=2]"] == "sem-osd[context=decoded]"
    assert short["sem-osd[beam=8,context=genie,order=2]"] == "sem-osd[context=genie]"
    assert short["sem-osd[beam=8,context=decoded,order=2,prior=transformer]"] == "sem-osd[context=decoded,prior=transformer]"
    # a family whose members differ only in a parameter one of them lacks stays distinguishable
    two = short_decoder_labels(["x[a=1]", "x[a=1,b=2]"])
    assert two == {"x[a=1]": "x", "x[a=1,b=2]": "x[b=2]"}


def test_long_legends_go_outside_the_axes(tmp_path):
    rows = [StatsRow(f"{dec}-{p}", dec, {"d": 3, "p": p}, shots=1000, errors=e)
            for dec in ("sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8]", "osd[order=2]")
            for p, e in ((0.001, 5), (0.002, 20))]
    fig = plot_threshold(rows, out_path=tmp_path / "l.png")
    legend = fig.axes[0].get_legend()
    assert legend._loc == 2  # "upper left", anchored to the right of the axes
    assert (tmp_path / "l.png").read_bytes().startswith(PNG_MAGIC)
