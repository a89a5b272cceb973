"""Threshold plots from sinter-format stats rows.

:func:`plot_threshold` draws what ``sinter plot --type error_rate`` (or ``discard_rate``, or
an error rate built from a custom count) draws -- the ``fit_binomial`` best estimate of each
point, with its likelihood-ratio band shaded -- and adds what a threshold plot needs:
colour per distance and line style per decoder, upper-bound markers for points without
errors, the threshold estimate with its interval, optional least-squares fits of every
curve (:class:`LineFit`), and axis labels that say whether the rate is per shot or per round.
:class:`PlotOptions` collects the choices of the y quantity, the fits and the axes.

matplotlib is imported inside the functions, and the figure is drawn on an Agg canvas of
its own (no pyplot, no global backend switch), so this works headless, in threads and in
worker processes.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from qdecode.sims.stats import (
    Fit,
    _group_value,  # same grouping rule as the threshold fits
    fit_binomial,
    metadata_number,
    shot_error_rate_to_per_round,
)
from qdecode.sims.store import StatsRow, merge_rows
from qdecode.sims.threshold import ThresholdEstimate

__all__ = ["PlotOptions", "LineFit", "plot_threshold", "fit_curves", "parse_y", "hits_and_trials",
           "check_custom_key", "short_decoder_labels"]

SCALES = ("linear", "log")
Y_QUANTITIES = ("error_rate", "discard_rate", "custom:KEY")

_MARKERS = ("o", "s", "^", "D", "P", "X", "*", "h", "<", ">", "p", "d")  # 'v' marks upper bounds
_LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))
_FIT_LINESTYLE = (0, (2, 2))
_METHOD_NAMES = {"fss": "finite-size-scaling fit", "pairwise": "median of pairwise crossings"}


# ---------------------------------------------------------------------------------------
# What is plotted
# ---------------------------------------------------------------------------------------


def parse_y(y: str) -> tuple[str, str | None]:
    """``("error_rate", None)``, ``("discard_rate", None)`` or ``("custom", KEY)`` for ``"custom:KEY"``.

    Raises:
        ValueError: anything else (an unknown quantity, or ``custom:`` without a key).
    """
    if y in ("error_rate", "discard_rate"):
        return y, None
    if isinstance(y, str) and y.startswith("custom:") and len(y) > len("custom:"):
        return "custom", y[len("custom:"):]
    raise ValueError(f"unknown y quantity {y!r}; use error_rate, discard_rate or custom:KEY (a custom_counts key)")


def hits_and_trials(row: StatsRow, y: str) -> tuple[int, int]:
    """The binomial ``(hits, trials)`` whose ratio the quantity ``y`` of ``row`` is.

    * ``error_rate``: ``(errors, shots - discards)`` (sinter's error rate);
    * ``discard_rate``: ``(discards, shots)``;
    * ``custom:KEY``: ``(custom_counts[KEY], shots - discards)``, 0 hits where the row has no
      such count (as ``sinter plot --custom_error_count_keys``).

    Raises:
        ValueError: an unknown ``y``, or a custom count larger than the kept shots.
    """
    kind, key = parse_y(y)
    kept = row.shots - row.discards
    if kind == "error_rate":
        return row.errors, kept
    if kind == "discard_rate":
        return row.discards, row.shots
    hits = int((row.custom_counts or {}).get(key, 0))
    if hits > kept:
        raise ValueError(
            f"custom count {key!r} = {hits} exceeds the kept shots ({kept}) of row {row.strong_id[:12]}; "
            f"it is not a rate per kept shot"
        )
    return hits, kept


def check_custom_key(rows: Iterable[StatsRow], y: str) -> None:
    """For ``y = "custom:KEY"``: at least one row must have KEY in its custom_counts.

    A row without the count is 0 hits (as sinter), which is right for a counter that
    stayed at zero in some rows, but when *no* row has it the key is a typo, and the
    plot would be all "no errors (upper bound)" markers. Checked on the rows as read (a
    merged row drops counts that sum to zero), so a count written as 0 still counts as present.

    Raises:
        ValueError: no row has the key; the message lists the custom_counts keys that exist.
    """
    kind, key = parse_y(y)
    if kind != "custom":
        return
    present: set[str] = set()
    for row in rows:
        present.update(row.custom_counts or {})
        if key in present:
            return
    listed = sorted(present)
    if not listed:
        known = "the rows have no custom_counts at all"
    else:
        shown = ", ".join(listed[:20]) + (f", ... ({len(listed)} keys)" if len(listed) > 20 else "")
        known = f"keys present: {shown}"
    raise ValueError(f"no row has the custom count {key!r} asked for by y='custom:{key}' ({known})")


def _check_limits(name: str, low: float | None, high: float | None) -> None:
    if low is not None and high is not None and not low < high:
        raise ValueError(f"--{name}min ({low:g}) must be below --{name}max ({high:g})")


@dataclasses.dataclass(frozen=True)
class PlotOptions:
    """What goes on the y axis, whether curves get fitted lines, and the axis ranges.

    Attributes:
        y: ``"error_rate"`` (errors / (shots - discards)), ``"discard_rate"``
            (discards / shots) or ``"custom:KEY"`` (custom_counts[KEY] / (shots - discards));
            see :func:`hits_and_trials`.
        fit: draw a weighted least-squares line through every curve (:class:`LineFit`).
        yscale: ``"log"`` or ``"linear"``.
        xmin, xmax, ymin, ymax: axis limits; None leaves that end automatic.

    Raises:
        ValueError: unknown ``y`` or ``yscale``, or ``xmin >= xmax`` / ``ymin >= ymax``.
    """

    y: str = "error_rate"
    fit: bool = False
    yscale: str = "log"
    xmin: float | None = None
    xmax: float | None = None
    ymin: float | None = None
    ymax: float | None = None

    def __post_init__(self) -> None:
        parse_y(self.y)
        if self.yscale not in SCALES:
            raise ValueError(f"yscale must be one of {', '.join(SCALES)}, got {self.yscale!r}")
        _check_limits("x", self.xmin, self.xmax)
        _check_limits("y", self.ymin, self.ymax)


class _Point(NamedTuple):
    hits: int
    trials: int
    fit: Fit  # per round when the plot is


def _rounds_of(row: StatsRow, md: Mapping) -> float:
    key = "r" if md.get("r") is not None else "rounds"
    if md.get(key) is None:
        raise ValueError(
            f"per_round needs 'r' or 'rounds' in json_metadata; row {row.strong_id[:12]} "
            f"({row.decoder}, {md}) has neither"
        )
    return metadata_number(row, key, "the number of rounds of a per-round rate")


def _collect_points(
    merged: Sequence[StatsRow], *, x_key: str, group_keys: tuple, per_round: bool, factor: float, y: str,
    xscale: str,
) -> dict[tuple, dict[float, _Point]]:
    """``{group: {x: _Point}}``: each row's ``fit_binomial(trials, hits, factor)`` of quantity ``y``,
    converted per round when asked. Rows without ``x_key`` or without trials are skipped."""
    if per_round and parse_y(y)[0] == "discard_rate":
        raise ValueError("--per-round does not apply to discard_rate (a discard is not a parity of rounds)")
    curves: dict[tuple, dict[float, _Point]] = {}
    for row in merged:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        hits, trials = hits_and_trials(row, y)
        if md.get(x_key) is None or trials <= 0:
            continue
        x = metadata_number(row, x_key, "the x axis")
        if xscale == "log" and not x > 0:
            raise ValueError(
                f"{x_key}={x} cannot be drawn on a log x axis (row {row.strong_id[:12]}); use xscale='linear'"
            )
        fit = fit_binomial(num_shots=trials, num_hits=hits, max_likelihood_factor=factor)
        if per_round:
            fit = shot_error_rate_to_per_round(fit, _rounds_of(row, md))
        group = tuple(_group_value(row, k) for k in group_keys)
        points = curves.setdefault(group, {})
        if x in points:
            raise ValueError(
                f"two rows of the curve {dict(zip(group_keys, group))} share {x_key}={x}; add the metadata key "
                f"that tells them apart to group_keys or filter the rows"
            )
        points[x] = _Point(hits, trials, fit)
    if not curves:
        raise ValueError(f"nothing to plot: no row has {x_key!r} in json_metadata and trials > 0 for {y}")
    return curves


# ---------------------------------------------------------------------------------------
# Curve labels and styles
# ---------------------------------------------------------------------------------------


def _sort_key(value: Any) -> tuple:
    """Sort numbers numerically before strings, None last, without comparing mixed types."""
    if value is None:
        return (2, "")
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value))
    return (1, str(value))


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


def _value_text(value: Any) -> str:
    """Floats with 6 significant digits (``p=0.00526430``, not the full repr), anything else as str."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value)


def _curve_labels(groups: Sequence[tuple], group_keys: tuple) -> tuple[dict[tuple, str], str | None]:
    """``({group: legend label}, legend title)``: a key with one value across all curves is said
    once, in the title, rather than in every label (a lone curve keeps its full label)."""
    constant = [i for i, k in enumerate(group_keys) if len({g[i] for g in groups}) == 1]
    dec_index = group_keys.index("decoder") if "decoder" in group_keys else None
    short = short_decoder_labels(str(g[dec_index]) for g in groups) if dec_index is not None else {}
    many = len(groups) > 1

    def part(i: int, value: Any) -> str:
        if group_keys[i] == "decoder":
            return short.get(str(value), str(value))
        return f"{group_keys[i]}={_value_text(value)}"

    labels = {}
    for g in groups:
        parts = [part(i, v) for i, v in enumerate(g) if not (i in constant and many)]
        labels[g] = ", ".join(parts) or "all"
    first = next(iter(groups))
    title = ", ".join(part(i, first[i]) for i in constant) if many and constant else None
    return labels, title


@dataclasses.dataclass(frozen=True)
class _Styles:
    """Colour and marker follow ``"d"`` if it is a group key (else the last key); line style the other keys."""

    colour_index: int | None
    style_indices: tuple
    colours: dict
    markers: dict
    linestyles: dict

    def colour_value(self, g: tuple) -> Any:
        return g[self.colour_index] if self.colour_index is not None else None

    def style_value(self, g: tuple) -> tuple:
        return tuple(g[i] for i in self.style_indices)

    def of(self, g: tuple) -> tuple:
        """(colour, marker, linestyle) of curve ``g``."""
        c = self.colour_value(g)
        return self.colours[c], self.markers[c], self.linestyles[self.style_value(g)]

    def order(self, groups: Iterable[tuple]) -> list[tuple]:
        """Curves sorted by line style, then colour (the legend order)."""
        return sorted(groups, key=lambda g: (tuple(_sort_key(v) for v in self.style_value(g)),
                                             _sort_key(self.colour_value(g))))


def _styles(groups: Sequence[tuple], group_keys: tuple) -> _Styles:
    import matplotlib as mpl

    colour_key = "d" if "d" in group_keys else (group_keys[-1] if group_keys else None)
    colour_index = group_keys.index(colour_key) if colour_key is not None else None
    style_indices = tuple(i for i in range(len(group_keys)) if i != colour_index)
    colour_values = sorted({g[colour_index] if colour_index is not None else None for g in groups}, key=_sort_key)
    style_values = sorted({tuple(g[i] for i in style_indices) for g in groups},
                          key=lambda t: tuple(_sort_key(v) for v in t))
    if len(colour_values) <= 10:
        palette = [mpl.colormaps["tab10"](i) for i in range(len(colour_values))]
    else:
        palette = [mpl.colormaps["viridis"](v) for v in np.linspace(0, 0.92, len(colour_values))]
    return _Styles(
        colour_index=colour_index,
        style_indices=style_indices,
        colours={v: palette[i] for i, v in enumerate(colour_values)},
        markers={v: _MARKERS[i % len(_MARKERS)] for i, v in enumerate(colour_values)},
        linestyles={v: _LINESTYLES[i % len(_LINESTYLES)] for i, v in enumerate(style_values)},
    )


# ---------------------------------------------------------------------------------------
# Line fits
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LineFit:
    """A weighted least-squares line through the logarithm of one curve's rates.

    ``model`` says what is fitted (``y`` is the plotted rate, per shot or per round):

    * ``"suppression"`` (x is the distance d): ``ln y = intercept + slope d``, i.e.
      ``y = A / Lambda^((d+1)/2)`` with ``Lambda = exp(-2 slope)``, the error suppression
      factor ``eps_d / eps_(d+2)``;
    * ``"power"`` (log x axis, e.g. x = p): ``ln y = intercept + slope ln x``, i.e.
      ``y = exp(intercept) x^slope``;
    * ``"exponential"`` (linear x axis, e.g. Eb/N0): ``ln y = intercept + slope x``.

    Each point with at least one hit is weighted by ``hits / (1 - hits/trials)``, the
    inverse of the delta-method binomial variance of ``ln(rate)``; points without hits are
    left out (the per-round conversion is taken to keep the relative uncertainty).

    Attributes:
        label: the curve's legend label.
        model: ``"suppression"``, ``"power"`` or ``"exponential"``.
        slope, intercept: the fitted line (see above).
        x_low, x_high: range of the fitted points.
        num_points: points used (those with hits).
    """

    label: str
    model: str
    slope: float
    intercept: float
    x_low: float
    x_high: float
    num_points: int

    @property
    def lambda_(self) -> float:
        """``exp(-2 slope)`` for the suppression model, NaN otherwise."""
        return math.exp(-2 * self.slope) if self.model == "suppression" else math.nan

    def y_at(self, x: Any) -> np.ndarray:
        """The fitted rate at ``x``."""
        x = np.asarray(x, dtype=np.float64)
        return np.exp(self.intercept + self.slope * (np.log(x) if self.model == "power" else x))

    def describe(self) -> str:
        """``"Lambda = 2.31"``, ``"y ~ x^3.02"`` or ``"ln y slope 1.2 per unit x"``."""
        if self.model == "suppression":
            return f"Lambda = {self.lambda_:.3g}"
        if self.model == "power":
            return f"exponent {self.slope:.3g}"
        return f"ln-rate slope {self.slope:.3g}"


def _fit_model(x_key: str, xscale: str) -> str:
    if x_key == "d":
        return "suppression"
    return "power" if xscale == "log" else "exponential"


def _fit_line(points: Mapping[float, _Point], model: str, label: str) -> LineFit | None:
    """The :class:`LineFit` of one curve, or None with fewer than two distinct x with hits."""
    used = sorted((x, pt) for x, pt in points.items() if pt.hits > 0 and pt.fit.best > 0)
    if len({x for x, _ in used}) < 2:
        return None
    xs = np.array([x for x, _ in used], dtype=np.float64)
    ys = np.log([pt.fit.best for _, pt in used])
    weights = np.array([pt.hits / max(1.0 - pt.hits / pt.trials, 0.5 / pt.trials) for _, pt in used])
    u = np.log(xs) if model == "power" else xs
    slope, intercept = np.polyfit(u, ys, 1, w=np.sqrt(weights))  # polyfit's w multiplies the residuals
    return LineFit(label=label, model=model, slope=float(slope), intercept=float(intercept),
                   x_low=float(xs.min()), x_high=float(xs.max()), num_points=len(used))


def fit_curves(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    x_key: str = "p",
    group_keys: Sequence[str] = ("decoder", "d"),
    per_round: bool = False,
    y: str = "error_rate",
    xscale: str = "log",
) -> dict[str, LineFit]:
    """The :class:`LineFit` of every curve that :func:`plot_threshold` would draw with ``fit``.

    Same rows, grouping and rates as the plot; keys are the curves' legend labels. Curves
    with fewer than two x values with hits have no fit (and no key).
    """
    group_keys = tuple(group_keys)
    if isinstance(rows, Mapping):
        rows = rows.values()
    curves = _collect_points(list(merge_rows(rows).values()), x_key=x_key, group_keys=group_keys,
                             per_round=per_round, factor=1.0, y=y, xscale=xscale)
    labels, _ = _curve_labels(list(curves), group_keys)
    model = _fit_model(x_key, xscale)
    fits = {labels[g]: _fit_line(curves[g], model, labels[g]) for g in curves}
    return {label: f for label, f in fits.items() if f is not None}


# ---------------------------------------------------------------------------------------
# Threshold markers
# ---------------------------------------------------------------------------------------


class _Marker(NamedTuple):
    group: tuple
    p_th: float
    low: float
    high: float
    note: str
    interval: str  # what [low, high] is, e.g. "95% bootstrap interval"
    method: str  # how p_th was found, "" when unknown


def _threshold_items(threshold: Any) -> list[_Marker]:
    """Normalise ``threshold`` (see :func:`plot_threshold`) to a list of markers."""
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
            interval = f"{item.confidence:.0%} bootstrap interval"
            method = _METHOD_NAMES.get(item.method, item.method)
            out.append(_Marker(tuple(item.group), item.p_th, item.low, item.high, item.note, interval, method))
        elif isinstance(item, Fit):
            out.append(_Marker((), item.best, item.low, item.high, "", "interval", ""))
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            low, best, high = (float(v) for v in item)
            out.append(_Marker((), best, low, high, "", "interval", ""))
        elif isinstance(item, (int, float, np.floating, np.integer)):
            out.append(_Marker((), float(item), math.nan, math.nan, "", "interval", ""))
        else:
            raise TypeError(
                f"threshold must be a ThresholdEstimate, Fit, (low, best, high), float, or a list/dict of "
                f"them; got {type(item).__name__}"
            )
    return out


def _threshold_label(prefix: str, m: _Marker) -> str:
    """``threshold p_th = 0.0071 (finite-size-scaling fit)`` and, on a second line, the interval and its kind."""
    text = f"{prefix} $p_{{th}}$ = {m.p_th:.3g}" + (f" ({m.method})" if m.method else "")
    if np.isfinite(m.low) and np.isfinite(m.high):
        text += f"\n{m.interval} [{m.low:.3g}, {m.high:.3g}]"
    return text


def _draw_thresholds(ax, markers: Sequence[_Marker], styles: _Styles, x_range: tuple[float, float]):
    """Dashed vertical line (and shaded interval) per threshold inside ``x_range``.

    Returns ``(handles, labels, notes)``: legend entries of the drawn lines, and one text line
    per threshold that is not drawn (no crossing, or an estimate outside the data's x range).
    """
    handles, labels, notes = [], [], []
    several = len(set(styles.linestyles)) > 1
    for m in markers:
        name = ", ".join(str(v) for v in m.group)
        prefix = f"threshold ({name})" if name and several else "threshold"
        if not np.isfinite(m.p_th):
            # The full reason is in the estimate's note; the plot only says that there is none.
            notes.append(f"{prefix}: no crossing in range" if "no crossing" in (m.note or "") else f"{prefix}: none")
            continue
        if not x_range[0] <= m.p_th <= x_range[1]:
            notes.append(f"{prefix}: estimate {m.p_th:.3g} outside the data range "
                         f"[{x_range[0]:.3g}, {x_range[1]:.3g}], not drawn")
            continue
        if np.isfinite(m.low) and np.isfinite(m.high):
            ax.axvspan(m.low, m.high, color="0.3", alpha=0.15, linewidth=0, zorder=-200, gid="threshold-span")
        # Same line style as the curves of that decoder, when the estimate's group names one.
        line_style = styles.linestyles.get(m.group, (0, (4, 2))) if several else (0, (4, 2))
        handles.append(ax.axvline(m.p_th, color="0.15", linestyle=line_style, linewidth=1.2, gid="threshold"))
        labels.append(_threshold_label(prefix, m))
    return handles, labels, notes


# ---------------------------------------------------------------------------------------
# Axes
# ---------------------------------------------------------------------------------------


def _ylabel(y: str, per_round: bool) -> str:
    kind, key = parse_y(y)
    if kind == "discard_rate":
        return "Discard rate per shot"
    if kind == "custom":
        return f"Rate of {key} per round" if per_round else f"Rate of {key} per kept shot"
    return "Logical error probability per round" if per_round else "Logical error rate per shot"


def _apply_limits(ax, options: PlotOptions, xscale: str, y_shown: Sequence[float]) -> None:
    """Automatic y range on a log axis (a factor 5 below / 3 above the data), then the explicit limits.

    Raises:
        ValueError: a non-positive limit on a log axis, or a one-sided limit beyond the other end.
    """
    for name, value, scale in (("xmin", options.xmin, xscale), ("xmax", options.xmax, xscale),
                               ("ymin", options.ymin, options.yscale), ("ymax", options.ymax, options.yscale)):
        if value is not None and scale == "log" and not value > 0:
            raise ValueError(f"--{name} {value:g} cannot be used on a log axis")
    y = np.array([v for v in y_shown if v > 0])
    if options.yscale == "log" and len(y):
        ax.set_ylim(max(y.min() / 5, 1e-300), min(1.0, y.max() * 3))
    if options.xmin is not None or options.xmax is not None:
        ax.set_xlim(left=options.xmin, right=options.xmax)
    if options.ymin is not None or options.ymax is not None:
        ax.set_ylim(bottom=options.ymin, top=options.ymax)
    for axis, (lo, hi) in (("x", ax.get_xlim()), ("y", ax.get_ylim())):
        if not lo < hi:
            raise ValueError(f"the {axis} limits [{lo:g}, {hi:g}] are empty; give both --{axis}min and --{axis}max")


# ---------------------------------------------------------------------------------------
# The plot
# ---------------------------------------------------------------------------------------


def _draw_curve(ax, xs, points, style, label, factor, log_y):
    """Markers and line at the best estimates, the band, and upper-bound markers for zero hits.

    Returns the y values shown (for the automatic y range) and whether upper bounds were drawn.
    """
    colour, marker, linestyle = style
    hits = np.array([points[x].hits for x in xs])
    low = np.array([points[x].fit.low for x in xs], dtype=np.float64)
    best = np.array([points[x].fit.best for x in xs], dtype=np.float64)
    high = np.array([points[x].fit.high for x in xs], dtype=np.float64)
    has = hits > 0 if log_y else np.ones(len(xs), dtype=bool)  # zero is drawable on a linear axis
    ax.plot(xs[has], best[has], color=colour, marker=marker, linestyle=linestyle, linewidth=1.5, markersize=5,
            label=label, gid=f"curve:{label}")
    shown = list(best[has])
    if factor > 1 and has.sum() > 1:
        ax.fill_between(xs[has], low[has], high[has], color=colour, alpha=0.2, linewidth=0, zorder=-100)
    elif factor > 1 and has.sum() == 1:
        ax.errorbar(xs[has], best[has], yerr=([best[has][0] - low[has][0]], [high[has][0] - best[has][0]]),
                    color=colour, marker="", linestyle="none", elinewidth=1, capsize=4)
    upper = bool((~has).any())
    if upper:
        ax.plot(xs[~has], high[~has], color=colour, marker="v", markerfacecolor="none", linestyle="none",
                markersize=6, gid=f"upper:{label}")
        shown.extend(high[~has])
    return shown, upper


def _draw_fit(ax, fit: LineFit, colour) -> None:
    grid = (np.geomspace if fit.model == "power" else np.linspace)(fit.x_low, fit.x_high, 50)
    ax.plot(grid, fit.y_at(grid), color=colour, linestyle=_FIT_LINESTYLE, linewidth=1.0, alpha=0.9,
            label="_nolegend_", gid=f"fit:{fit.label}")


def _fit_legend_text(model: str, x_key: str) -> str:
    if model == "suppression":
        return "least-squares fit: rate = A / Lambda^((d+1)/2)"
    if model == "power":
        return f"least-squares fit: rate = A {x_key}^k"
    return f"least-squares fit: rate = A exp(k {x_key})"


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
    options: PlotOptions | None = None,
):
    """Plot a rate (by default the logical error rate) against ``x_key`` (by default p).

    One curve per value of ``group_keys`` (by default one per decoder and distance). Each
    point is ``fit_binomial(trials, hits, highlight_max_likelihood_factor)`` of the quantity
    ``options.y`` (:func:`hits_and_trials`; for the error rate ``trials = shots - discards``,
    ``hits = errors``), exactly as ``sinter plot`` computes it: the marker sits at the best
    estimate and the band (alpha 0.2) spans the rates whose likelihood is within that factor
    of the best. With ``per_round`` every value is converted with
    ``P_round = 1/2 - 1/2 (1 - 2 P_shot)^(1/r)`` using the ``r`` (or ``rounds``) metadata.
    On a log y axis points without hits have no best estimate; they are drawn as hollow
    'v' markers at their upper bound. Colour (and marker) follow the distance, line style
    the decoder (more precisely: colour follows ``"d"`` if it is a group key, else the last
    key; line style the other keys). With ``options.fit`` every curve gets a dotted
    :class:`LineFit` and its legend label says the fitted Lambda or exponent.

    Args:
        rows: stats rows (merged by strong_id here) or the dict from ``merge_rows``. Rows
            without ``x_key`` in their metadata or with no trials are skipped.
        out_path: where to save the figure (format from the suffix, e.g. ``.png``, ``.pdf``);
            None to only return it. Parent folders are created.
        per_round: plot the rate per round instead of per shot (not for discard rates).
        x_key: metadata key of the x value.
        group_keys: keys separating curves; ``"decoder"`` is the decoder label, others are
            metadata keys.
        highlight_max_likelihood_factor: Bayes factor of the band (>= 1); None or 1 for no
            band.
        threshold: a :class:`~qdecode.sims.threshold.ThresholdEstimate`, a
            :class:`~qdecode.sims.stats.Fit` ``(low, best, high)``, a ``(low, best, high)``
            tuple, a float, or a list/dict of those (e.g. the result of
            ``estimate_thresholds``). An estimate inside the data's x range is drawn as a
            dashed vertical line with its interval shaded, and labelled with the method and
            the kind of interval (e.g. "95% bootstrap interval"); an estimate outside the
            range, or one without a crossing, is written in a box on the plot instead.
        title: figure title.
        xlabel: x-axis label; default "Physical error rate p" for ``x_key="p"``, else the key.
        ylabel: y-axis label; default from the quantity, e.g. "Logical error rate per shot"
            or "Logical error probability per round".
        xscale: "log" (default) or "linear".
        dpi: resolution of the saved file.
        figsize: (width, height) in inches.
        references: extra ``(label, xs, ys)`` curves drawn as thin black lines (e.g. the
            normal approximation or an ML lower bound on block-error plots), ``gid="ref:<label>"``.
        options: the y quantity, line fits, y scale and axis limits (:class:`PlotOptions`);
            default ``PlotOptions()`` (error rate, log y, automatic limits, no fits).

    Returns:
        The ``matplotlib.figure.Figure``. Its curve lines carry ``gid="curve:<label>"``,
        upper-bound markers ``gid="upper:<label>"``, fitted lines ``gid="fit:<label>"`` and
        threshold lines ``gid="threshold"``.

    Raises:
        ValueError: no plottable rows, two rows of one curve at the same x (a metadata key
            is missing from ``group_keys``), non-positive x or limits on a log axis, or
            per-round without rounds metadata.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    options = options or PlotOptions()
    if xscale not in SCALES:
        raise ValueError(f"xscale must be one of {', '.join(SCALES)}, got {xscale!r}")
    factor = 1.0 if highlight_max_likelihood_factor is None else float(highlight_max_likelihood_factor)
    if not factor >= 1:
        raise ValueError(f"highlight_max_likelihood_factor must be >= 1, got {highlight_max_likelihood_factor}")
    group_keys = tuple(group_keys)
    if isinstance(rows, Mapping):
        rows = rows.values()
    curves = _collect_points(list(merge_rows(rows).values()), x_key=x_key, group_keys=group_keys,
                             per_round=per_round, factor=factor, y=options.y, xscale=xscale)
    styles = _styles(list(curves), group_keys)
    labels, legend_title = _curve_labels(list(curves), group_keys)
    model = _fit_model(x_key, xscale)

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale(xscale)
    ax.set_yscale(options.yscale)

    y_shown: list[float] = []
    any_upper = any_fit = False
    for g in styles.order(curves):
        xs = np.array(sorted(curves[g]), dtype=np.float64)
        fit = _fit_line(curves[g], model, labels[g]) if options.fit else None
        label = labels[g] + (f" ({fit.describe()})" if fit is not None else "")
        shown, upper = _draw_curve(ax, xs, curves[g], styles.of(g), label, factor, options.yscale == "log")
        y_shown.extend(shown)
        any_upper = any_upper or upper
        if fit is not None:
            _draw_fit(ax, fit, styles.of(g)[0])
            any_fit = True

    for i, (ref_label, ref_x, ref_y) in enumerate(references):
        rx, ry = np.asarray(ref_x, dtype=np.float64), np.asarray(ref_y, dtype=np.float64)
        keep = np.isfinite(ry) & (ry > 0)
        ax.plot(rx[keep], ry[keep], color="0.1", linestyle=((0, (5, 2)), (0, (1, 1)), "-.")[i % 3], linewidth=1.0,
                marker="x" if keep.sum() < 10 else "", markersize=5, label=ref_label, gid=f"ref:{ref_label}")
    handles, legend_labels = ax.get_legend_handles_labels()
    all_x = [x for points in curves.values() for x in points]
    th_handles, th_labels, notes = _draw_thresholds(ax, _threshold_items(threshold), styles, (min(all_x), max(all_x)))
    if notes:
        ax.text(0.98, 0.02, "\n".join(notes), transform=ax.transAxes, ha="right", va="bottom",
                fontsize="small", bbox=dict(boxstyle="round", facecolor="white", edgecolor="0.7", alpha=0.85))
    extra_handles, extra_labels = list(th_handles), list(th_labels)
    if factor > 1:
        extra_handles.append(Patch(color="0.5", alpha=0.3, linewidth=0))
        extra_labels.append(f"likelihood within {factor:g}x of max")
    if any_upper:
        extra_handles.append(Line2D([], [], color="0.3", marker="v", markerfacecolor="none", linestyle="none"))
        extra_labels.append("no errors (upper bound)")
    if any_fit:
        extra_handles.append(Line2D([], [], color="0.3", linestyle=_FIT_LINESTYLE, linewidth=1.0))
        extra_labels.append(_fit_legend_text(model, x_key))

    _apply_limits(ax, options, xscale, y_shown)
    ax.grid(True, which="major", alpha=0.5)
    ax.grid(True, which="minor", alpha=0.15)
    ax.set_xlabel(xlabel or ("Physical error rate p" if x_key == "p" else x_key))
    ax.set_ylabel(ylabel or _ylabel(options.y, per_round))
    # Many or long curve entries would cover the curves: the legend then goes to the right of the axes.
    all_labels = legend_labels + extra_labels
    outside = len(all_labels) > 8 or max((len(t) for t in legend_labels), default=0) > 40
    placement = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0)) if outside else dict(loc="best")
    ax.legend(handles + extra_handles, all_labels, title=legend_title, fontsize="small", title_fontsize="small",
              ncol=2 if len(all_labels) > 12 and not outside else 1, framealpha=0.85, **placement)
    if title:
        ax.set_title(title)
    if not outside:  # an outside legend is fitted by bbox_inches="tight" when saving instead
        fig.tight_layout()
    if out_path is not None:
        parent = os.path.dirname(os.path.abspath(os.fspath(out_path)))
        os.makedirs(parent, exist_ok=True)
        fig.savefig(out_path, dpi=dpi, bbox_inches="tight" if outside else None)
    return fig
