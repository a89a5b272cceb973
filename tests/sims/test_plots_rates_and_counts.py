"""Per-round reference lines, single-x figures, pooled custom counts, figure paths, p = 0 in threshold fits.

Each test pins one fix of issue 43 (plots and per-round rates): the "no post-selection" lines of
the discard-vs-error figure converted per round like its curves; a figure whose points share one x
value (a single-p sweep) drawn with a real x range; a custom count that only some pooled rows
carry refused, with ``seed=...`` provenance keys never offered as ``y``; the file a figure is
actually written to; threshold fits that take p = 0 sanity points without numpy warnings; and the
strong_id conflict message naming the field that differs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from qdecode.sims.gap_bins import GAP_BINS_KEY, GAP_BINS_TAG, gap_bin_counts
from qdecode.sims.plots import (
    PlotOptions,
    check_custom_key,
    figure_path,
    plot_discard_vs_error,
    plot_threshold,
)
from qdecode.sims.stats import rounds_of, shot_error_rate_to_per_round
from qdecode.sims.store import StatsRow
from qdecode.sims.threshold import threshold_report


def _gap_rows(shots=40_000, seed=3):
    """d = 3, 5 gap-histogram rows with r = d: a shot's error probability falls with its gap."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in (3, 5):
        gaps = rng.gamma(2.0 + d, 5.0, size=shots).astype(np.float32)
        errors = rng.random(shots) < 0.5 * np.exp(-gaps / 2.5)
        md = {"code": "surface", "d": d, "p": 0.003, "r": d, GAP_BINS_KEY: GAP_BINS_TAG}
        rows.append(StatsRow(f"pm-{d}", "pymatching", md, shots=shots, errors=int(errors.sum()),
                             custom_counts=gap_bin_counts(gaps, errors)))
    return rows


def _reference_levels(fig) -> dict[str, float]:
    out = {}
    for line in fig.axes[0].get_lines():
        gid = line.get_gid() or ""
        if gid.startswith("ref:"):
            ys = np.asarray(line.get_ydata(), dtype=np.float64)
            assert len(set(ys.tolist())) == 1  # a horizontal line
            out[gid[len("ref:"):]] = float(ys[0])
    return out


def test_no_post_selection_lines_are_converted_per_round_like_the_curves():
    rows = _gap_rows()
    per_shot = _reference_levels(plot_discard_vs_error(rows, out_path=None))
    per_round = _reference_levels(plot_discard_vs_error(rows, out_path=None, per_round=True))
    assert len(per_shot) == 2 and per_shot.keys() == per_round.keys()
    for row in rows:
        label = next(k for k in per_shot if k.endswith(f"d={row.json_metadata['d']})"))
        assert per_shot[label] == pytest.approx(row.errors / row.shots, rel=1e-12)
        expected = shot_error_rate_to_per_round(row.errors / row.shots, row.json_metadata["r"])
        assert per_round[label] == pytest.approx(expected, rel=1e-12)
        assert per_round[label] < per_shot[label] / 2  # d = 3, 5 rounds: a visibly different level
    # the curve's first point (smallest discard) sits near its own line, in the same unit
    fig = plot_discard_vs_error(rows, out_path=None, per_round=True)
    curves = {line.get_label(): line for line in fig.axes[0].get_lines()
              if (line.get_gid() or "").startswith("curve:")}
    for label, level in per_round.items():
        d = label.rsplit("d=", 1)[1].rstrip(")")
        first = float(next(c for name, c in curves.items() if name.endswith(f"d={d}")).get_ydata()[0])
        assert 0.5 * level < first <= level * 1.01


@pytest.mark.parametrize("xscale", ["log", "linear"])
def test_a_single_x_value_gets_an_x_range_that_shows_its_points(xscale):
    rows = [StatsRow(f"d{d}", "pymatching", {"d": d, "p": 0.002, "r": d}, shots=20_000, errors=e)
            for d, e in ((3, 70), (5, 13), (7, 0))]
    fig = plot_threshold(rows, out_path=None, xscale=xscale)
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    assert low < 0.002 < high
    if xscale == "log":
        assert high / low == pytest.approx(4.0)  # a factor 2 either side
    else:
        assert high - low == pytest.approx(0.002)
    # every point, upper bounds included, lies inside the axes' box in display coordinates
    fig.canvas.draw()
    box = ax.get_window_extent()
    for line in ax.get_lines():
        if (line.get_gid() or "").startswith(("curve:", "upper:")):
            for x, y in ax.transData.transform(np.column_stack(line.get_data()).astype(float)):
                assert box.x0 + 5 < x < box.x1 - 5 and box.y0 < y < box.y1
    # explicit limits still win
    fig = plot_threshold(rows, out_path=None, xscale=xscale, options=PlotOptions(xmin=0.001, xmax=0.01))
    assert fig.axes[0].get_xlim() == pytest.approx((0.001, 0.01))


def _pooled(key_rows_shots=(5000, 5000), bare_shots=10_000):
    """One task: qdecode-sweep rows with ``iterations`` (10.4 per shot) and a sinter row without it."""
    md = {"d": 3, "p": 0.002, "r": 3}
    rows = [StatsRow("task", "relay-bp", md, shots=s, errors=10,
                     custom_counts={"iterations": 52 * s // 5, "not_converged": 0, f"seed=7@{i * s}": s})
            for i, s in enumerate(key_rows_shots)]
    return rows + ([StatsRow("task", "relay-bp", md, shots=bare_shots, errors=21)] if bare_shots else [])


def test_a_count_only_some_pooled_rows_carry_is_refused():
    with pytest.raises(ValueError) as info:
        check_custom_key(_pooled(), "iterations")
    text = str(info.value)
    assert "'iterations'" in text and "10000 of the 20000 shots" in text and "\n" not in text
    with pytest.raises(ValueError, match="missing from 10000 of the 20000"):
        plot_threshold(_pooled(), out_path=None, options=PlotOptions(y="iterations"))
    # a count written as 0 is carried; the rows of one source alone are fine, and give the true mean
    check_custom_key(_pooled(), "error_rate")
    check_custom_key(_pooled(bare_shots=0), "iterations")
    check_custom_key(_pooled(bare_shots=0), "not_converged")
    fig = plot_threshold(_pooled(bare_shots=0), out_path=None, options=PlotOptions(y="iterations"))
    (line,) = [ln for ln in fig.axes[0].get_lines() if (ln.get_gid() or "").startswith("curve:")]
    assert float(line.get_ydata()[0]) == pytest.approx(10.4)
    # a ratio checks its denominator too: here every row records detection_events, not iterations
    rows = [StatsRow(r.strong_id, r.decoder, r.json_metadata, shots=r.shots, errors=r.errors,
                     custom_counts={**r.custom_counts, "detection_events": r.shots}) for r in _pooled()]
    check_custom_key(rows, "detection_events")
    with pytest.raises(ValueError, match="'iterations' of y=detection_events/iterations is missing from 10000"):
        check_custom_key(rows, "detection_events/iterations")


def test_counts_written_only_when_non_zero_are_not_refused():
    md = {"d": 3, "p": 0.002}
    rows = [StatsRow("t", "pm", md, shots=100, errors=3, custom_counts={"obs_mistake_mask=E": 3, "g5": 100, "g5E": 3}),
            StatsRow("t", "pm", md, shots=100, errors=0, custom_counts={"g7": 100})]
    for y in ("obs_mistake_mask=E", "g5", "g5E"):
        check_custom_key(rows, y)


def test_seed_stream_keys_are_not_offered_as_y():
    rows = _pooled(bare_shots=0)
    with pytest.raises(ValueError, match="seed-stream record") as info:
        check_custom_key(rows, "seed=7@0")
    assert "keys present: iterations, not_converged)" in str(info.value)
    with pytest.raises(ValueError) as info:
        check_custom_key(rows, "legs")
    assert "seed=" not in str(info.value) and "iterations" in str(info.value)


def test_figure_path_names_the_file_written(tmp_path):
    assert figure_path("a/fig.pdf") == "a/fig.pdf"
    assert figure_path(tmp_path / "noext") == str(tmp_path / "noext.png")
    assert figure_path("dir.v/noext") == "dir.v/noext.png"
    with pytest.raises(ValueError, match=r"'\.xyz' is not an image format"):
        figure_path("fig.xyz")
    rows = [StatsRow("a", "pm", {"d": 3, "p": 0.002}, shots=100, errors=2)]
    plot_threshold(rows, out_path=tmp_path / "noext")
    assert [p.name for p in tmp_path.iterdir()] == ["noext.png"]


def _crossing_rows(with_zero_p: bool):
    rows = []
    for d in (3, 5, 7):
        for p in ((0.0,) if with_zero_p else ()) + (0.006, 0.008, 0.01, 0.012, 0.014):
            rate = min(0.5, 0.1 * (p / 0.01) ** ((d + 1) / 2))
            errors = max(1, int(20_000 * rate))  # an error even at p = 0 (a leaky sanity point)
            rows.append(StatsRow(f"{d}-{p}", "pm", {"d": d, "p": p, "r": d}, shots=20_000, errors=errors))
    return rows


@pytest.mark.parametrize("per_round", [False, True])
def test_threshold_fits_skip_p_zero_without_numpy_warnings(per_round):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with_zero = threshold_report(_crossing_rows(True), per_round=per_round, n_bootstrap=40)
    without = threshold_report(_crossing_rows(False), per_round=per_round, n_bootstrap=40)
    (a,), (b,) = with_zero.values(), without.values()
    assert a.threshold.found and a.threshold.p_th == pytest.approx(b.threshold.p_th, rel=1e-9)
    assert [c.p for c in a.crossings] == pytest.approx([c.p for c in b.crossings])


def test_rounds_of_and_the_strong_id_conflict_message():
    assert rounds_of(StatsRow("a", "pm", {"r": None, "rounds": 4})) == 4.0
    with pytest.raises(ValueError, match="per-round rates need 'r' or 'rounds'"):
        rounds_of(StatsRow("a", "pm", {"d": 3}))
    a = StatsRow("s", "pm", {"d": 3, "noise": "sd6"}, shots=10)
    with pytest.raises(ValueError, match='json_metadata noise: "sd6" vs "si1000"'):
        a + StatsRow("s", "pm", {"d": 3, "noise": "si1000"}, shots=10)
    with pytest.raises(ValueError, match=r"decoder 'pm' vs 'bposd', json_metadata b: \(absent\) vs \"X\""):
        a + StatsRow("s", "bposd", {"d": 3, "noise": "sd6", "b": "X"}, shots=10)
