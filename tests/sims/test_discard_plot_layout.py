"""Layout facts of the discard-vs-error figure (``qdecode plot --y discard_vs_error``).

Synthetic gap-histogram rows (two decoders x d = 3, 5; the error probability of a shot falls with
its gap) are drawn by :func:`qdecode.sims.plots.plot_discard_vs_error`, and the figure is read back
from matplotlib's renderer: short legend labels, one Okabe-Ito colour per decoder and one marker per
distance, the 0 % lines in grey, kept-shot rates falling with the discard rate, a log x axis of
discard fractions, and the note inside the axes, clear of the tick labels and the legend.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from qdecode.sims.gap_bins import GAP_BINS_KEY, GAP_BINS_TAG, gap_bin_counts
from qdecode.sims.plots import OKABE_ITO, plot_discard_vs_error
from qdecode.sims.store import StatsRow
from tests.sims.figure_geometry import drawn_renderer, inside, overlap_area

PYMATCHING = "pymatching"
CORRELATED = "pymatching-correlated"


def _rows(shots=200_000, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for decoder, scale in ((PYMATCHING, 1.0), (CORRELATED, 1.3)):
        for d in (3, 5):
            gaps = rng.gamma(2.0 + d, 5.0 * scale, size=shots).astype(np.float32)
            errors = rng.random(shots) < 0.5 * np.exp(-gaps / 2.5)  # the gap's meaning: weight difference
            md = {"code": "surface", "noise": "si1000", "b": "Z", "d": d, "p": 0.003, "r": d,
                  GAP_BINS_KEY: GAP_BINS_TAG}
            rows.append(StatsRow(f"{decoder}-{d}", decoder, md, shots=shots, errors=int(errors.sum()),
                                 custom_counts=gap_bin_counts(gaps, errors)))
    return rows


@pytest.fixture(scope="module")
def figure():
    return plot_discard_vs_error(_rows(), out_path=None, group_keys=("decoder", "d", "p"))


def test_legend_colours_markers_and_zero_lines(figure):
    ax = figure.axes[0]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    # four curves: listing colours and markers once would not be shorter, so each curve has its entry
    assert texts[:4] == [f"{PYMATCHING}, d=3", f"{PYMATCHING}, d=5", f"{CORRELATED}, d=3", f"{CORRELATED}, d=5"]
    assert texts[4:8] == [f"no post-selection ({PYMATCHING}, d=3)", f"no post-selection ({PYMATCHING}, d=5)",
                          f"no post-selection ({CORRELATED}, d=3)", f"no post-selection ({CORRELATED}, d=5)"]
    assert not any(GAP_BINS_KEY in t for t in texts) and GAP_BINS_KEY not in ax.get_title()
    assert "surface code, si1000 noise" in ax.get_title() and "p = 0.003" in ax.get_title()
    curves = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("curve:")]
    assert len(curves) == 4
    colours, markers = {}, {}
    for line in curves:
        decoder, d = line.get_label().split(", d=")
        colours.setdefault(decoder, set()).add(to_rgba(line.get_color()))
        markers.setdefault(d, set()).add(line.get_marker())
        ys = line.get_ydata()
        assert ys[-1] < ys[0] / 10  # the kept-shot rate falls with the discard rate
        xs = line.get_xdata()
        assert np.all(np.diff(xs) > 0) and 0 < xs[0] and xs[-1] < 1
    assert all(len(c) == 1 for c in colours.values()) and len({next(iter(c)) for c in colours.values()}) == 2
    assert {next(iter(c)) for c in colours.values()} <= {to_rgba(c) for c in OKABE_ITO}
    assert all(len(m) == 1 for m in markers.values()) and len({next(iter(m)) for m in markers.values()}) == 2
    zero = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("ref:")]
    assert len(zero) == 4 and all(to_rgba(line.get_color())[:3] == to_rgba("0.45")[:3] for line in zero)


def test_axes_ticks_and_note(figure):
    ax = figure.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Discard rate (fraction of shots discarded)"
    assert ax.get_ylabel() == "Logical error rate among kept shots"
    renderer = drawn_renderer(figure)
    lo, hi = ax.get_xlim()
    assert 0 < lo and hi <= 1.5
    (note,) = [a for a in ax.artists if a.get_gid() == "threshold-note"]
    assert "gap is below t dB" in note.txt.get_text()
    box = note.get_window_extent(renderer)
    assert inside(box, ax.get_window_extent(renderer)) and inside(box, figure.bbox)
    labels = [t for t in ax.xaxis.get_ticklabels(which="both") + ax.yaxis.get_ticklabels(which="both")
              if t.get_visible() and t.get_text()]
    assert labels and all(overlap_area(box, t.get_window_extent(renderer)) == 0 for t in labels)
    assert overlap_area(box, ax.get_legend().get_window_extent(renderer)) == 0


def test_linear_x_draws_the_zero_point_on_the_curve():
    fig = plot_discard_vs_error(_rows(shots=50_000), out_path=None, xscale="linear")
    ax = fig.axes[0]
    curves = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("curve:")]
    assert curves and all(line.get_xdata()[0] == 0.0 for line in curves)
    assert not [line for line in ax.get_lines() if (line.get_gid() or "").startswith("ref:")]
