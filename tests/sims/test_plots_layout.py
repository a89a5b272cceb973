"""Layout facts of qdecode.sims.plots figures, read back from matplotlib's renderer.

Each figure kind a user gets from ``qdecode plot`` (threshold plot of several decoders, fit
against d, block-error plot with reference curves, custom counts) is drawn from small synthetic
rows, and the test checks what a reader relies on: short legend labels, one colour per decoder
and one marker per distance, integer ticks on integer axes, notes inside the axes and clear of
the tick labels, reference curves in a style of their own and inside the y range, a subtitle
naming what the rows share.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from qdecode.sims.plots import (
    OKABE_ITO,
    PlotOptions,
    Reference,
    plot_threshold,
    short_decoder_labels,
    split_decoder_label,
    subtitle_text,
)
from qdecode.sims.store import StatsRow
from qdecode.sims.threshold import ThresholdEstimate, threshold_report
from tests.sims.figure_geometry import drawn_renderer, inside, overlap_area

BPOSD = "bposd[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=10,schedule=flooding]"
RELAY = ("relay-bp[alpha=1.0,bits=0,frac_bits=3,gamma0=0.15,gamma_hi=0.622,gamma_lo=-0.226,leg_iter=60,"
         "legs=300,pre_iter=80,seed=0,stop_after=5]")
SURFACE = {"code": "surface", "noise": "sd6", "b": "Z"}


def _ler(p, p_th, d):
    return min(0.5, 0.08 * (p / p_th) ** ((d + 1) / 2))


def _rows(decoders=((BPOSD, 0.007), (RELAY, 0.02), ("chromobius", 0.008)), ds=(3, 5, 7), bases=("Z",),
          ps=(0.004, 0.005, 0.006, 0.007, 0.008, 0.009), shots=100_000, seed=0):
    """Rows around a threshold per decoder (relay-bp's lies beyond the p range: no crossing)."""
    rng = np.random.default_rng(seed)
    rows = []
    for decoder, p_th in decoders:
        for basis in bases:
            for d in ds:
                for p in ps:
                    md = {**SURFACE, "b": basis, "d": d, "p": p, "r": d}
                    rows.append(StatsRow(f"{decoder}-{basis}-{d}-{p}", decoder, md, shots=shots,
                                         errors=int(rng.binomial(shots, _ler(p, p_th, d)))))
    return rows


def _curves(fig):
    return [line for line in fig.axes[0].get_lines() if (line.get_gid() or "").startswith("curve:")]


def _legend_texts(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def _assert_legend_clear_of_curves(fig):
    """An inside legend covers no point of any curve (sampled along its segments)."""
    ax = fig.axes[0]
    legend = ax.get_legend()
    box = legend.get_window_extent(drawn_renderer(fig))
    if not inside(box, ax.get_window_extent(drawn_renderer(fig))):
        return  # beside the axes
    for line in _curves(fig):
        xy = ax.transData.transform(np.column_stack(line.get_data()).astype(float))
        t = np.linspace(0, 1, 50)[:, None]
        pts = xy if len(xy) < 2 else np.concatenate([a + t * (b - a) for a, b in zip(xy[:-1], xy[1:])])
        hit = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
        assert not hit.any(), f"legend covers {line.get_label()}"


# ------------------------------------------------------------------ threshold plot, several decoders


@pytest.fixture(scope="module")
def threshold_figure():
    rows = _rows()
    reports = threshold_report(rows, group_keys=("decoder",), n_bootstrap=10)
    estimates = [r.threshold for r in reports.values() if r.threshold is not None]
    return plot_threshold(rows, out_path=None, threshold=estimates)


def test_legend_labels_are_short_and_colours_follow_the_decoder(threshold_figure):
    fig = threshold_figure
    texts = _legend_texts(fig)
    # The legend lists each decoder (colour) and each distance (marker) once.
    assert texts[:6] == ["bposd", "chromobius", "relay-bp", "d=3", "d=5", "d=7"]
    assert max(len(line) for t in texts for line in t.split("\n")) < 70
    assert not any("alpha=" in t or "gamma0" in t for t in texts)
    colours: dict[str, set] = {}
    markers: dict[int, set] = {}
    for line in _curves(fig):
        decoder, d = line.get_label().split(", d=")
        colours.setdefault(decoder, set()).add(to_rgba(line.get_color()))
        markers.setdefault(int(d), set()).add(line.get_marker())
    assert all(len(c) == 1 for c in colours.values())  # one colour per decoder
    assert len({next(iter(c)) for c in colours.values()}) == 3  # distinct between decoders
    assert {next(iter(c)) for c in colours.values()} <= {to_rgba(c) for c in OKABE_ITO}
    assert all(len(m) == 1 for m in markers.values()) and len({next(iter(m)) for m in markers.values()}) == 3
    # The threshold lines are drawn in their decoder's colour.
    bposd = next(iter(colours["bposd"]))
    th = [line for line in fig.axes[0].get_lines() if line.get_gid() == "threshold"]
    assert th and all(to_rgba(line.get_color()) in {bposd, next(iter(colours["chromobius"]))} for line in th)
    _assert_legend_clear_of_curves(fig)


def test_threshold_note_is_inside_the_axes_and_clear_of_tick_labels(threshold_figure):
    fig = threshold_figure
    ax = fig.axes[0]
    renderer = drawn_renderer(fig)
    (note,) = [a for a in ax.artists if a.get_gid() == "threshold-note"]
    assert "threshold (relay-bp): no crossing in range" in note.txt.get_text()
    box = note.get_window_extent(renderer)
    assert inside(box, ax.get_window_extent(renderer))
    assert inside(box, fig.bbox)
    for axis in (ax.xaxis, ax.yaxis):
        assert overlap_area(box, axis.get_tightbbox(renderer)) == 0
    labels = [t for t in ax.xaxis.get_ticklabels(which="both") + ax.yaxis.get_ticklabels(which="both")
              if t.get_visible() and t.get_text()]
    assert labels and all(overlap_area(box, t.get_window_extent(renderer)) == 0 for t in labels)
    legend = ax.get_legend().get_window_extent(renderer)
    assert overlap_area(box, legend) == 0


def test_a_long_note_is_wrapped_to_fit_the_axes():
    rows = _rows(decoders=((BPOSD, 0.007),))
    # Six estimates outside the data range, for groups with long names, on a small figure.
    far = [ThresholdEstimate(p_th=0.05, low=0.04, high=0.06, nu=1.0, method="fss", group=(f"{BPOSD}-{i}",))
           for i in range(6)]
    fig = plot_threshold(rows, out_path=None, threshold=far, figsize=(4.0, 3.0))
    ax = fig.axes[0]
    renderer = drawn_renderer(fig)
    (note,) = [a for a in ax.artists if a.get_gid() == "threshold-note"]
    box = note.get_window_extent(renderer)
    assert inside(box, ax.get_window_extent(renderer)) and inside(box, fig.bbox)
    assert " ".join(note.txt.get_text().split()).count("outside the data range") == 6
    assert max(len(line) for line in note.txt.get_text().split("\n")) < 80  # wrapped


def test_subtitle_names_what_the_rows_share(threshold_figure):
    assert threshold_figure.axes[0].get_title() == "surface code, sd6 noise, basis Z, rounds = d"


# ------------------------------------------------------------------ fit plot against d


def test_fit_against_d_has_integer_ticks_at_the_distances(tmp_path):
    rows = _rows(decoders=(("pymatching", 0.007), (BPOSD, 0.0065)), ps=(0.003, 0.004, 0.005))
    fig = plot_threshold(rows, out_path=tmp_path / "lam.png", x_key="d", group_keys=("decoder", "p"),
                         xscale="linear", options=PlotOptions(fit=True))
    drawn_renderer(fig)
    ax = fig.axes[0]
    assert list(ax.get_xticks()) == [3, 5, 7]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["3", "5", "7"]
    texts = _legend_texts(fig)
    assert "bposd, p=0.003 (Lambda = " in " ".join(texts) and not any("alpha=" in t for t in texts)
    # Many distances: integer ticks chosen by matplotlib, still never between two integers.
    many = [StatsRow(f"{d}", "pm", {"d": d, "p": 0.001}, shots=10**5, errors=int(10**5 * 0.3 / 1.3**d))
            for d in range(3, 40, 2)]
    fig = plot_threshold(many, out_path=None, x_key="d", group_keys=("decoder", "p"), xscale="linear")
    drawn_renderer(fig)
    ticks = [t for t in fig.axes[0].get_xticks() if 3 <= t <= 39]
    assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks)


def test_float_axes_keep_automatic_ticks():
    rows = [StatsRow(f"{x}", "pm", {"ebn0": x}, shots=1000, errors=int(500 / (1 + x) ** 3))
            for x in (0.0, 1.0, 2.0, 3.0)]
    fig = plot_threshold(rows, out_path=None, x_key="ebn0", group_keys=("decoder",), xscale="linear")
    drawn_renderer(fig)
    assert any(not float(t).is_integer() for t in fig.axes[0].get_xticks())  # 0.5 steps: ebn0 is not an integer


# ------------------------------------------------------------------ block-error plot with references


def _classical_rows():
    rows = []
    for code, shift in (("polar32_16", 0.0), ("polar64_22", 0.8)):
        for dec, loss in (("sc", 1.0), ("scl[crc=auto,list_size=8]", 0.4), ("scl[crc=auto,list_size=32]", 0.2)):
            for x in (1.0, 2.0, 3.0):
                rate = 0.5 * math.exp(-1.6 * (x + shift - loss))
                rows.append(StatsRow(f"{code}{dec}{x}", dec, {"code": code, "noise": "awgn", "n": 32, "k": 16,
                                                               "ebn0": x}, shots=20_000, errors=int(20_000 * rate)))
    return rows


def test_reference_curves_have_their_own_style_and_fit_the_y_range():
    rows = _classical_rows()
    grid = np.linspace(0.75, 3.25, 30)
    refs = [Reference(f"normal approximation ({code})", grid, 0.2 * np.exp(-2.5 * (grid + shift)),
                      "normal approximation", {"code": code}) for code, shift in (("polar32_16", 0), ("polar64_22", 1))]
    refs.append(("ML lower bound", [1.0, 2.0, 3.0], [0.05, 0.004, 0.0002]))
    fig = plot_threshold(rows, out_path=None, x_key="ebn0", group_keys=("code", "decoder"), xscale="linear",
                         references=refs, xlabel="Eb/N0 (dB)")
    ax = fig.axes[0]
    curves = _curves(fig)
    ref_lines = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("ref:")]
    assert len(ref_lines) == 3
    curve_colours = {to_rgba(c.get_color()) for c in curves}
    curve_styles = {c.get_linestyle() for c in curves}
    for ref in ref_lines:
        assert to_rgba(ref.get_color()) not in curve_colours
        assert ref.get_linestyle() not in curve_styles  # no decoder curve is dashed here
        assert ref.get_linewidth() < curves[0].get_linewidth()
    # Each reference carries the marker of its code's curves; the legend names each kind once.
    marker_of = {c.get_label().split(", ")[0]: c.get_marker() for c in curves}
    assert ref_lines[0].get_marker() == marker_of["code=polar32_16"] != ref_lines[1].get_marker()
    texts = _legend_texts(fig)
    assert texts.count("normal approximation") == 1 and "ML lower bound" in texts
    assert texts[:3] == ["sc", "scl[list_size=8]", "scl[list_size=32]"]
    # The y range shows the references over the data's x range.
    low, high = ax.get_ylim()
    for ref in ref_lines:
        x, y = ref.get_data()
        shown = np.asarray(y)[(np.asarray(x) >= 1.0) & (np.asarray(x) <= 3.0)]
        assert low <= shown.min() and shown.max() <= high
    assert fig.axes[0].get_title() == "n = 32, k = 16, awgn noise"


# ------------------------------------------------------------------ labels, subtitle, custom counts


def test_decoder_labels_parse_as_the_registry_does():
    from qdecode.decoders.registry import split_label

    for label in (BPOSD, RELAY, "chromobius", "scl[list_size=8]", "window[inner=gdg,W=3,F=1]", "x[ a = 1 ]"):
        assert split_decoder_label(label) == split_label(label)
    assert split_decoder_label("qd-bposd[osd_order=4]") == ("bposd", {"osd_order": "4"})
    assert split_decoder_label("not a label") is None
    short = short_decoder_labels([BPOSD, RELAY, "qd-chromobius", "scl[crc=auto,list_size=8]",
                                  "scl[crc=auto,list_size=32]"])
    assert short == {BPOSD: "bposd", RELAY: "relay-bp", "qd-chromobius": "chromobius",
                     "scl[crc=auto,list_size=8]": "scl[list_size=8]", "scl[crc=auto,list_size=32]": "scl[list_size=32]"}
    # Labels that would read the same keep their full text.
    assert short_decoder_labels(["qd-bposd", "bposd"]) == {"qd-bposd": "qd-bposd", "bposd": "bposd"}


def test_subtitle_text_rules():
    rows = [StatsRow(f"{d}{p}", "pm", {**SURFACE, "d": d, "p": p, "r": 2 * d}) for d in (3, 5) for p in (0.1, 0.2)]
    assert subtitle_text(rows, exclude={"p", "d"})[0] == "surface code, sd6 noise, basis Z, rounds = 2d"
    rows5 = [r for r in rows if r.json_metadata["d"] == 5]
    text, keys = subtitle_text(rows5, exclude={"p"})
    assert text == "surface code, sd6 noise, basis Z, rounds = 10, d = 5" and "d" in keys
    # The distance said in the subtitle is not repeated as the legend title.
    rows5 = [StatsRow(dec + r.strong_id, dec, r.json_metadata, shots=1000, errors=10 + i)
             for i, r in enumerate(rows5) for dec in ("a", "b")]
    fig = plot_threshold(rows5, out_path=None)
    assert fig.axes[0].get_legend().get_title().get_text() == ""
    assert fig.axes[0].get_title().endswith("d = 5")
    fig = plot_threshold(rows5, out_path=None, subtitle="", title="T")
    assert fig.axes[0].get_title() == "T" and fig.axes[0].get_legend().get_title().get_text() == "d=5"
    fig = plot_threshold(rows5, out_path=None, subtitle="{common}; 10^3 shots")
    assert fig.axes[0].get_title() == "surface code, sd6 noise, basis Z, rounds = 10, d = 5; 10^3 shots"
    fig = plot_threshold(rows5, out_path=None, subtitle="my run", title="T")
    assert fig.axes[0].get_title() == "my run" and fig._suptitle.get_text() == "T"


def _poisson_edges(count: int, trials: int, factor: float) -> tuple[float, float]:
    from scipy.optimize import brentq

    def drop(mu):
        return (count * math.log(count / mu) if count else 0.0) + mu - count - math.log(factor)

    return brentq(drop, 1e-9, count) / trials, brentq(drop, count, 10 * count + 50) / trials


def test_detection_events_and_counts_above_one_per_shot():
    rows = []
    for d in (3, 5):
        for p, events in ((0.001, 1500), (0.002, 3100)):
            rows.append(StatsRow(f"{d}{p}", "pm", {"d": d, "p": p}, shots=1000, errors=5,
                                 custom_counts={"detection_events": events * d, "detectors_checked": 20_000 * d}))
    for y in ("detection_events", "detection_events/detectors_checked"):
        fig = plot_threshold(rows, out_path=None, options=PlotOptions(y=y))
        d3 = [line for line in _curves(fig) if line.get_label() == "d=3"][0]
        assert np.allclose(d3.get_ydata(), [1500 / 20_000, 3100 / 20_000])
        assert fig.axes[0].get_ylabel().startswith("Fraction of detectors that fired")
    # custom:KEY counts per kept shot: 4.5 events a shot is a mean count with a Poisson band.
    fig = plot_threshold(rows, out_path=None, options=PlotOptions(y="custom:detection_events"))
    d3 = [line for line in _curves(fig) if line.get_label() == "d=3"][0]
    assert np.allclose(d3.get_ydata(), [4.5, 9.3])
    assert fig.axes[0].get_ylabel() == "Mean detection_events per kept shot"
    assert fig.axes[0].get_ylim()[1] > 9.3  # not capped at 1 as a rate is
    band = fig.axes[0].collections[0].get_paths()[0].vertices
    at = band[np.isclose(band[:, 0], 0.001)][:, 1]
    low, high = _poisson_edges(4500, 1000, 1e3)
    assert at.min() == pytest.approx(low, rel=1e-6) and at.max() == pytest.approx(high, rel=1e-6)
    with pytest.raises(ValueError, match="--per-round does not apply .* mean count"):
        plot_threshold(rows, out_path=None, per_round=True, options=PlotOptions(y="custom:detection_events"))
    with pytest.raises(ValueError, match="no row has the custom count 'shots_checked'"):
        plot_threshold(rows, out_path=None, options=PlotOptions(y="detection_events/shots_checked"))


def test_one_decoder_colours_its_distances():
    rows = _rows(decoders=(("pymatching", 0.007),))
    fig = plot_threshold(rows, out_path=None)
    colours = {to_rgba(line.get_color()) for line in _curves(fig)}
    assert colours == {to_rgba(c) for c in OKABE_ITO[:3]}
    assert fig.axes[0].get_legend().get_title().get_text() == "pymatching"
    _assert_legend_clear_of_curves(fig)


def test_line_style_tells_apart_the_other_key_and_its_threshold():
    rows = _rows(decoders=((BPOSD, 0.007), (RELAY, 0.0075)), bases=("X", "Z"))
    reports = threshold_report(rows, group_keys=("decoder", "b"), n_bootstrap=0)
    fig = plot_threshold(rows, out_path=None, group_keys=("decoder", "b", "d"),
                         threshold=[r.threshold for r in reports.values() if r.threshold is not None])
    texts = _legend_texts(fig)
    assert texts[:7] == ["bposd", "relay-bp", "b=X", "b=Z", "d=3", "d=5", "d=7"]
    by_label = {line.get_label(): line for line in _curves(fig)}
    assert by_label["bposd, b=X, d=3"].get_color() == by_label["bposd, b=Z, d=3"].get_color()
    assert by_label["bposd, b=X, d=3"].get_linestyle() != by_label["bposd, b=Z, d=3"].get_linestyle()
    th = {t.split(")")[0]: t for t in texts if t.startswith("threshold")}
    assert set(th) == {"threshold (bposd, b=X", "threshold (bposd, b=Z", "threshold (relay-bp, b=X",
                       "threshold (relay-bp, b=Z"}
    lines = [line for line in fig.axes[0].get_lines() if line.get_gid() == "threshold"]
    assert len({line.get_linestyle() for line in lines}) == 2
    assert "basis" not in fig.axes[0].get_title()  # the basis varies: it is in the legend, not the subtitle


def test_one_decoder_two_bases_colours_the_bases():
    rows = _rows(decoders=((BPOSD, 0.007),), bases=("X", "Z"))
    fig = plot_threshold(rows, out_path=None, group_keys=("decoder", "b", "d"))
    assert _legend_texts(fig)[:5] == ["b=X", "b=Z", "d=3", "d=5", "d=7"]
    assert fig.axes[0].get_legend().get_title().get_text() == "bposd"
    by_label = {line.get_label(): line for line in _curves(fig)}
    assert by_label["b=X, d=3"].get_color() != by_label["b=Z, d=3"].get_color()


def test_a_missing_key_reads_unknown_not_none():
    from qdecode.sims.plots import _part

    assert _part("d", None, {}) == "d unknown"
    assert _part("d", 5, {}) == "d=5"


def test_nested_decoders_are_told_apart_by_the_parameters_they_share():
    from qdecode.sims.plots import short_decoder_labels

    gdg = "window[F=1,W=3,inner=gdg,max_tree_depth=3]"
    bposd = "window[F=1,W=3,inner=bposd,osd_order=10]"
    wide = "window[F=2,W=5,inner=gdg,max_tree_depth=3]"
    assert short_decoder_labels([gdg, bposd, wide]) == {
        gdg: "window[F=1,W=3,inner=gdg]", bposd: "window[F=1,W=3,inner=bposd]", wide: "window[F=2,W=5,inner=gdg]"}
    # when the shared parameters are not enough, the others are shown too
    deep = "window[F=1,W=3,inner=gdg,max_tree_depth=5]"
    assert short_decoder_labels([gdg, deep])[deep] == "window[max_tree_depth=5]"
