"""Threshold plots from sinter-format stats rows.

:func:`plot_threshold` draws what ``sinter plot --type error_rate`` draws (the
``fit_binomial`` best estimate of each point, with its likelihood-ratio band shaded) and
adds what a threshold plot needs: colour per distance and line style per decoder,
upper-bound markers for points without errors, the threshold estimate with its interval,
and axis labels that say whether the rate is per shot or per round.

matplotlib is imported inside the function, and the figure is drawn on an Agg canvas of
its own (no pyplot, no global backend switch), so this works headless, in threads and in
worker processes.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from qdecode.sims.stats import Fit, fit_binomial, shot_error_rate_to_per_round
from qdecode.sims.stats import _group_value  # same grouping rule as the threshold fits
from qdecode.sims.store import StatsRow, merge_rows
from qdecode.sims.threshold import ThresholdEstimate

__all__ = ["plot_threshold"]

_MARKERS = ("o", "s", "^", "D", "P", "X", "*", "h", "<", ">", "p", "d")  # 'v' marks upper bounds
_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))


def _sort_key(value: Any) -> tuple:
    """Sort numbers numerically before strings, None last, without comparing mixed types."""
    if value is None:
        return (2, "")
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value))
    return (1, str(value))


def _threshold_items(threshold: Any) -> list[tuple[tuple, float, float, float, str]]:
    """Normalise ``threshold`` to [(group, p_th, low, high, note)]."""
    if threshold is None:
        return []
    if isinstance(threshold, Mapping):
        items = list(threshold.values())
    elif isinstance(threshold, (list, tuple)) and threshold and not all(
        isinstance(v, (int, float, np.floating, np.integer)) for v in threshold
    ):
        items = list(threshold)
    else:
        items = [threshold]
    out = []
    for item in items:
        if isinstance(item, ThresholdEstimate):
            out.append((tuple(item.group), item.p_th, item.low, item.high, item.note))
        elif isinstance(item, Fit):
            out.append(((), item.best, item.low, item.high, ""))
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            low, best, high = (float(v) for v in item)
            out.append(((), best, low, high, ""))
        elif isinstance(item, (int, float, np.floating, np.integer)):
            out.append(((), float(item), math.nan, math.nan, ""))
        else:
            raise TypeError(
                f"threshold must be a ThresholdEstimate, Fit, (low, best, high), float, or a list/dict of "
                f"them; got {type(item).__name__}"
            )
    return out


def short_decoder_labels(names: Iterable[str]) -> dict[str, str]:
    """Legend names for decoder labels: within a family (the text before ``[``) of two or more
    configurations, the parameters every member shares are dropped, so that
    ``sem-osd[beam=8,...,prior=transformer,...]`` next to ``sem-osd[beam=8,...]`` reads
    ``sem-osd[prior=transformer]`` and ``sem-osd``. A family's only member keeps its full label.
    """
    names = sorted(set(names))
    parsed: dict[str, tuple[str, list[str]]] = {}
    for name in names:
        family, sep, rest = name.partition("[")
        params = rest[:-1].split(",") if sep and rest.endswith("]") and rest[:-1] else []
        parsed[name] = (family, params)
    out = {}
    for name, (family, params) in parsed.items():
        members = [p for f, p in parsed.values() if f == family]
        if len(members) < 2 or not params:
            out[name] = name
            continue
        shared = set.intersection(*(set(m) for m in members))
        kept = [p for p in params if p not in shared]
        out[name] = f"{family}[{','.join(kept)}]" if kept else family
    if len(set(out.values())) < len(out):  # never merge two curves under one name
        return {name: name for name in names}
    return out


def plot_threshold(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    out_path: str | os.PathLike | None,
    per_round: bool = False,
    x_key: str = "p",
    group_keys: Sequence[str] = ("decoder", "d"),
    highlight_max_likelihood_factor: float | None = 1e3,
    threshold: Any = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    xscale: str = "log",
    dpi: int = 150,
    figsize: tuple[float, float] = (7.0, 5.0),
    references: Sequence[tuple[str, Sequence[float], Sequence[float]]] = (),
):
    """Log-log plot of the logical error rate against the physical error rate.

    One curve per value of ``group_keys`` (by default one per decoder and distance). Each
    point is ``fit_binomial(shots - discards, errors, highlight_max_likelihood_factor)``,
    exactly as ``sinter plot`` computes it: the marker sits at the best estimate and the
    band (alpha 0.2) spans the rates whose likelihood is within that factor of the best.
    With ``per_round`` every value is converted with
    ``P_round = 1/2 - 1/2 (1 - 2 P_shot)^(1/r)`` using the ``r`` (or ``rounds``) metadata.
    Points without errors have no best estimate on a log axis; they are drawn as hollow
    'v' markers at their upper bound. Colour (and marker) follow the distance, line style
    the decoder (more precisely: colour follows ``"d"`` if it is a group key, else the last
    key; line style the other keys).

    Args:
        rows: stats rows (merged by strong_id here) or the dict from ``merge_rows``. Rows
            without ``x_key`` in their metadata or with no kept shots are skipped.
        out_path: where to save the figure (format from the suffix, e.g. ``.png``, ``.pdf``);
            None to only return it. Parent folders are created.
        per_round: plot "Logical error probability per round" instead of per shot.
        x_key: metadata key of the x value.
        group_keys: keys separating curves; ``"decoder"`` is the decoder label, others are
            metadata keys.
        highlight_max_likelihood_factor: Bayes factor of the band (>= 1); None or 1 for no
            band.
        threshold: a :class:`~qdecode.sims.threshold.ThresholdEstimate`, a
            :class:`~qdecode.sims.stats.Fit` ``(low, best, high)``, a ``(low, best, high)``
            tuple, a float, or a list/dict of those (e.g. the result of
            ``estimate_thresholds``). Drawn as a dashed vertical line with the interval
            shaded; an estimate without a crossing is written on the plot instead.
        title: figure title.
        references: extra ``(label, xs, ys)`` curves drawn as thin black lines (e.g. the
            normal approximation or an ML lower bound on block-error plots), ``gid="ref:<label>"``.
        xlabel: x-axis label; default "Physical error rate p" for ``x_key="p"``.
        ylabel: y-axis label; default "Logical error rate per shot" or "Logical error
            probability per round".
        xscale: "log" (default) or "linear".
        dpi: resolution of the saved file.
        figsize: (width, height) in inches.

    Returns:
        The ``matplotlib.figure.Figure``. Its curve lines carry ``gid="curve:<label>"``,
        upper-bound markers ``gid="upper:<label>"`` and threshold lines ``gid="threshold"``.

    Raises:
        ValueError: no plottable rows, two rows of one curve at the same x (a metadata key
            is missing from ``group_keys``), non-positive x on a log axis, or per-round
            without rounds metadata.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    import matplotlib as mpl

    factor = 1.0 if highlight_max_likelihood_factor is None else float(highlight_max_likelihood_factor)
    if not factor >= 1:
        raise ValueError(f"highlight_max_likelihood_factor must be >= 1, got {highlight_max_likelihood_factor}")
    group_keys = tuple(group_keys)
    if isinstance(rows, Mapping):
        rows = rows.values()
    merged = list(merge_rows(rows).values())

    # group -> {x: (errors, Fit)}
    curves: dict[tuple, dict[float, tuple[int, Fit]]] = {}
    for row in merged:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        kept = row.shots - row.discards
        if md.get(x_key) is None or kept <= 0:
            continue
        x = float(md[x_key])
        if xscale == "log" and not x > 0:
            raise ValueError(
                f"{x_key}={x} cannot be drawn on a log x axis (row {row.strong_id[:12]}); use xscale='linear'"
            )
        fit = fit_binomial(num_shots=kept, num_hits=row.errors, max_likelihood_factor=factor)
        if per_round:
            rounds = md.get("r", md.get("rounds"))
            if rounds is None:
                raise ValueError(
                    f"per_round needs 'r' or 'rounds' in json_metadata; row {row.strong_id[:12]} "
                    f"({row.decoder}, {md}) has neither"
                )
            fit = shot_error_rate_to_per_round(fit, float(rounds))
        group = tuple(_group_value(row, k) for k in group_keys)
        points = curves.setdefault(group, {})
        if x in points:
            raise ValueError(
                f"two rows of the curve {dict(zip(group_keys, group))} share {x_key}={x}; add the metadata key "
                f"that tells them apart to group_keys or filter the rows"
            )
        points[x] = (row.errors, fit)
    if not curves:
        raise ValueError(f"nothing to plot: no row has {x_key!r} in json_metadata and shots > discards")

    colour_key = "d" if "d" in group_keys else (group_keys[-1] if group_keys else None)
    colour_index = group_keys.index(colour_key) if colour_key is not None else None
    style_indices = [i for i in range(len(group_keys)) if i != colour_index]

    def colour_value(g: tuple) -> Any:
        return g[colour_index] if colour_index is not None else None

    def style_value(g: tuple) -> tuple:
        return tuple(g[i] for i in style_indices)

    colour_values = sorted({colour_value(g) for g in curves}, key=_sort_key)
    style_values = sorted({style_value(g) for g in curves}, key=lambda t: tuple(_sort_key(v) for v in t))
    if len(colour_values) <= 10:
        palette = [mpl.colormaps["tab10"](i) for i in range(len(colour_values))]
    else:
        palette = [mpl.colormaps["viridis"](v) for v in np.linspace(0, 0.92, len(colour_values))]
    colour_of = {v: palette[i] for i, v in enumerate(colour_values)}
    marker_of = {v: _MARKERS[i % len(_MARKERS)] for i, v in enumerate(colour_values)}
    style_of = {v: _LINESTYLES[i % len(_LINESTYLES)] for i, v in enumerate(style_values)}
    # A key with a single value across all curves is said once (legend title), not per curve.
    constant = [i for i, k in enumerate(group_keys) if len({g[i] for g in curves}) == 1]

    dec_index = group_keys.index("decoder") if "decoder" in group_keys else None
    short = short_decoder_labels(str(g[dec_index]) for g in curves) if dec_index is not None else {}

    def label_of(g: tuple) -> str:
        parts = []
        for i, k in enumerate(group_keys):
            if i in constant and len(curves) > 1:
                continue
            parts.append(short.get(str(g[i]), str(g[i])) if k == "decoder" else f"{k}={g[i]}")
        return ", ".join(parts) or "all"

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale(xscale)
    ax.set_yscale("log")

    y_shown: list[float] = []
    any_upper = False
    order = sorted(curves, key=lambda g: (tuple(_sort_key(v) for v in style_value(g)), _sort_key(colour_value(g))))
    for g in order:
        xs = np.array(sorted(curves[g]), dtype=np.float64)
        errors = np.array([curves[g][x][0] for x in xs])
        fits = [curves[g][x][1] for x in xs]
        low = np.array([f.low for f in fits], dtype=np.float64)
        best = np.array([f.best for f in fits], dtype=np.float64)
        high = np.array([f.high for f in fits], dtype=np.float64)
        has = errors > 0
        colour, marker, style = colour_of[colour_value(g)], marker_of[colour_value(g)], style_of[style_value(g)]
        label = label_of(g)
        ax.plot(xs[has], best[has], color=colour, marker=marker, linestyle=style, linewidth=1.5, markersize=5,
                label=label, gid=f"curve:{label}")
        y_shown.extend(best[has])
        if factor > 1 and has.sum() > 1:
            ax.fill_between(xs[has], low[has], high[has], color=colour, alpha=0.2, linewidth=0, zorder=-100)
        elif factor > 1 and has.sum() == 1:
            ax.errorbar(xs[has], best[has], yerr=([best[has][0] - low[has][0]], [high[has][0] - best[has][0]]),
                        color=colour, marker="", linestyle="none", elinewidth=1, capsize=4)
        if (~has).any():
            any_upper = True
            ax.plot(xs[~has], high[~has], color=colour, marker="v", markerfacecolor="none", linestyle="none",
                    markersize=6, gid=f"upper:{label}")
            y_shown.extend(high[~has])

    for i, (ref_label, ref_x, ref_y) in enumerate(references):
        rx, ry = np.asarray(ref_x, dtype=np.float64), np.asarray(ref_y, dtype=np.float64)
        keep = np.isfinite(ry) & (ry > 0)
        ax.plot(rx[keep], ry[keep], color="0.1", linestyle=((0, (5, 2)), (0, (1, 1)), "-.")[i % 3], linewidth=1.0,
                marker="x" if keep.sum() < 10 else "", markersize=5, label=ref_label, gid=f"ref:{ref_label}")
    handles, labels = ax.get_legend_handles_labels()
    no_threshold: list[str] = []
    for group, p_th, lo, hi, note in _threshold_items(threshold):
        name = ", ".join(str(v) for v in group)
        prefix = f"threshold ({name})" if name and len(style_values) > 1 else "threshold"
        if not np.isfinite(p_th):
            # The full reason is in the estimate's note; the plot only says that there is none.
            no_threshold.append(f"{prefix}: no crossing in range" if "no crossing" in (note or "") else
                                f"{prefix}: none")
            continue
        text = f"{prefix} $p_{{th}}$ = {p_th:.3g}"
        if np.isfinite(lo) and np.isfinite(hi):
            text += f" [{lo:.3g}, {hi:.3g}]"
            ax.axvspan(lo, hi, color="0.3", alpha=0.15, linewidth=0, zorder=-200, gid="threshold-span")
        # Same line style as the curves of that decoder, when the estimate's group names one.
        line_style = style_of.get(group, (0, (4, 2))) if len(style_values) > 1 else (0, (4, 2))
        line = ax.axvline(p_th, color="0.15", linestyle=line_style, linewidth=1.2, gid="threshold")
        handles.append(line)
        labels.append(text)
    if no_threshold:
        ax.text(0.98, 0.02, "\n".join(no_threshold), transform=ax.transAxes, ha="right", va="bottom",
                fontsize="small", bbox=dict(boxstyle="round", facecolor="white", edgecolor="0.7", alpha=0.85))
    if factor > 1:
        handles.append(Patch(color="0.5", alpha=0.3, linewidth=0))
        labels.append(f"likelihood within {factor:g}x of max")
    if any_upper:
        handles.append(Line2D([], [], color="0.3", marker="v", markerfacecolor="none", linestyle="none"))
        labels.append("no errors (upper bound)")

    if y_shown:
        y = np.array(y_shown)
        y = y[y > 0]
        if len(y):
            ax.set_ylim(max(y.min() / 5, 1e-300), min(1.0, y.max() * 3))
    ax.grid(True, which="major", alpha=0.5)
    ax.grid(True, which="minor", alpha=0.15)
    ax.set_xlabel(xlabel or ("Physical error rate p" if x_key == "p" else x_key))
    ax.set_ylabel(ylabel or ("Logical error probability per round" if per_round else "Logical error rate per shot"))
    legend_title = ", ".join(
        (str(next(iter(curves))[i]) if group_keys[i] == "decoder" else f"{group_keys[i]}={next(iter(curves))[i]}")
        for i in constant
    ) if len(curves) > 1 and constant else None
    # Many or long entries would cover the curves: the legend then goes to the right of the axes.
    outside = len(labels) > 8 or max((len(t) for t in labels), default=0) > 40
    placement = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0)) if outside else dict(loc="best")
    ax.legend(handles, labels, title=legend_title, fontsize="small", title_fontsize="small",
              ncol=2 if len(labels) > 12 and not outside else 1, framealpha=0.85, **placement)
    if title:
        ax.set_title(title)
    if not outside:  # an outside legend is fitted by bbox_inches="tight" when saving instead
        fig.tight_layout()
    if out_path is not None:
        parent = os.path.dirname(os.path.abspath(os.fspath(out_path)))
        os.makedirs(parent, exist_ok=True)
        fig.savefig(out_path, dpi=dpi, bbox_inches="tight" if outside else None)
    return fig
