"""Threshold plots from sinter-format stats rows, readable without redrawing.

:func:`plot_threshold` draws what ``sinter plot --type error_rate`` (or ``discard_rate``, or a
rate built from a custom count) draws -- the ``fit_binomial`` best estimate of each point, with
its likelihood-ratio band shaded -- and adds what a reader needs to use the figure as it is:

* short legend labels: a decoder's name plus only the parameters that tell its curves apart
  (:func:`short_decoder_labels`; a sinter ``qd-`` prefix is dropped);
* one colour per decoder, from the colour-blind-safe Okabe-Ito palette, and one marker per
  distance (or per the other grouping key); when several curves share colours, markers and line
  styles, the legend lists each once instead of every curve;
* a subtitle naming the code, noise, basis and rounds that every drawn row shares
  (:func:`subtitle_text`, sinter's ``{common}``);
* the threshold estimate with its interval, and notes about estimates that cannot be drawn, in a
  box kept inside the axes (never over the tick labels);
* integer ticks on integer axes (x = d, rounds, n...);
* reference curves (bounds, approximations; :class:`Reference`) in grey with dash patterns that
  no data curve uses, inside the automatic y range;
* optional least-squares fits of every curve (:class:`LineFit`), and axis labels that say
  whether the rate is per shot or per round.

:class:`PlotOptions` collects the choices of the y quantity, the fits and the axes.

matplotlib is imported inside the functions, and the figure is drawn on an Agg canvas of
its own (no pyplot, no global backend switch), so this works headless, in threads and in
worker processes.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import textwrap
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from qdecode.decoders.registry import SINTER_PREFIX, split_label
from qdecode.errors import InputError
from qdecode.sims.gap_bins import GAP_BINS_KEY, discard_curve, has_gap_bins
from qdecode.sims.seed_streams import is_seed_key
from qdecode.sims.stats import Fit, fit_binomial, metadata_number, rounds_of, shot_error_rate_to_per_round
from qdecode.sims.store import StatsRow, merge_rows
from qdecode.sims.threshold import ThresholdEstimate

__all__ = ["PlotOptions", "LineFit", "Reference", "plot_threshold", "plot_deadline", "DEADLINE_X_KEY", "fit_curves",
           "parse_y", "hits_and_trials",
           "y_denominator", "check_custom_key", "short_decoder_labels", "split_decoder_label",
           "common_metadata", "subtitle_text", "plot_discard_vs_error", "DISCARD_X_KEY", "figure_path"]

SCALES = ("linear", "log")

#: Okabe & Ito's colour-blind-safe palette without black (black and grey are the threshold and
#: reference lines), yellow last because it is faint on white.
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442")
_MARKERS = ("o", "s", "^", "D", "P", "X", "*", "h", "<", ">", "p", "d")  # 'v' marks upper bounds
_LINESTYLES = ("-", "--", "-.", (0, (3, 1, 1, 1, 1, 1)))  # data curves; none of them is a reference's
_FIT_LINESTYLE = (0, (2, 2))
_THRESHOLD_LINESTYLE = (0, (4, 2))
_REF_COLOUR = "0.45"
_REF_DASHES = ((0, (10, 3)), (0, (1, 2)), (0, (10, 3, 1, 3)), (0, (5, 5)))
_METHOD_NAMES = {"fss": "finite-size-scaling fit", "pairwise": "median of pairwise crossings"}
_MAX_FIXED_TICKS = 12


# ---------------------------------------------------------------------------------------
# What is plotted
# ---------------------------------------------------------------------------------------


def parse_y(y: str) -> tuple[str, str | None]:
    """``("error_rate", None)``, ``("discard_rate", None)`` or ``("custom", KEY)``.

    ``KEY`` is a custom_counts key, written ``custom:KEY`` or bare (``--y detection_events``), or
    a ratio of two keys ``NUM/DEN`` (e.g. ``detection_events/detectors_checked``), kept whole here.
    Whether such a key exists is checked against the rows by :func:`check_custom_key`.

    Raises:
        ValueError: an empty key (``custom:``), a key with spaces, or a malformed ratio.
    """
    if y in ("error_rate", "discard_rate"):
        return y, None
    key = y[len("custom:"):] if isinstance(y, str) and y.startswith("custom:") else y
    parts = key.split("/") if isinstance(key, str) else []
    if not parts or len(parts) > 2 or not all(p and not any(c.isspace() for c in p) for p in parts):
        raise InputError(f"unknown y quantity {y!r}; use error_rate, discard_rate, a custom_counts KEY "
                         f"(or custom:KEY) or NUM/DEN, a ratio of two custom_counts keys")
    return "custom", key


def _ratio(key: str) -> tuple[str, str | None]:
    num, _, den = key.partition("/")
    return num, den or None


def y_denominator(rows: Iterable[StatsRow], y: str) -> str | None:
    """The custom_counts key that a custom quantity ``y`` is divided by, or None (the kept shots).

    ``NUM/DEN`` divides by ``DEN``; a bare ``detection_events`` divides by ``detectors_checked``
    when any row records it (what ``--count-detection-events`` and sinter write), so that it
    plots the fraction of detectors that fired; every other key, and any ``custom:KEY``, is
    counted per kept shot.
    """
    kind, key = parse_y(y)
    if kind != "custom":
        return None
    num, den = _ratio(key)
    if den is None and num == "detection_events" and not y.startswith("custom:"):
        if any("detectors_checked" in (row.custom_counts or {}) for row in rows):
            return "detectors_checked"
    return den


def hits_and_trials(row: StatsRow, y: str, denominator: str | None = None) -> tuple[int, int]:
    """The ``(hits, trials)`` whose ratio the quantity ``y`` of ``row`` is.

    * ``error_rate``: ``(errors, shots - discards)`` (sinter's error rate);
    * ``discard_rate``: ``(discards, shots)``;
    * a custom count ``KEY``: ``(custom_counts[KEY], shots - discards)``, 0 hits where the row
      has no such count (as ``sinter plot --custom_error_count_keys``);
    * ``NUM/DEN``, or ``KEY`` with ``denominator`` (see :func:`y_denominator`):
      ``(custom_counts[NUM], custom_counts[DEN])``, 0 trials (the row is skipped) without DEN.

    A custom count may exceed its trials (``bit_errors``, ``detection_events`` per shot); the
    plot then draws a mean count rather than a rate (:func:`plot_threshold`).

    Raises:
        ValueError: an unknown ``y``.
    """
    kind, key = parse_y(y)
    kept = row.shots - row.discards
    if kind == "error_rate":
        return row.errors, kept
    if kind == "discard_rate":
        return row.discards, row.shots
    counts = row.custom_counts or {}
    num, den = _ratio(key)
    den = den or denominator
    hits = int(counts.get(num, 0))
    return (hits, kept) if den is None else (hits, int(counts.get(den, 0)))


def _known_keys(present: set[str]) -> str:
    listed = sorted(k for k in present if not is_seed_key(k))
    if not listed:
        return "the rows have no custom_counts at all"
    shown = ", ".join(listed[:20]) + (f", ... ({len(listed)} keys)" if len(listed) > 20 else "")
    return f"keys present: {shown}"


#: Counts written only where they are non-zero, whatever the source: a row without one counted none.
#: ``obs_mistake_mask=...`` is sinter's (one key per pattern of mispredicted observables); the gap
#: bins are :mod:`qdecode.sims.gap_bins`'s.
_SPARSE_PREFIX = "obs_mistake_mask="


def _sparse(key: str) -> bool:
    return key.startswith(_SPARSE_PREFIX) or has_gap_bins({key[:-1] if key.endswith("E") else key: 0})


def _row_text(row: StatsRow) -> str:
    md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
    return ", ".join([row.decoder] + [f"{k}={_value_text(v)}" for k, v in sorted(md.items()) if _is_scalar(v)])


def _check_pooled(rows: Sequence[StatsRow], key: str, y: str) -> None:
    """Refuse ``key`` when some rows of one strong_id carry it and others (with shots) do not."""
    if _sparse(key):
        return
    shots: dict[str, list] = {}  # strong_id -> [shots of the rows with the key, shots of those without, a row]
    for row in rows:
        entry = shots.setdefault(row.strong_id, [0, 0, row])
        entry[0 if key in (row.custom_counts or {}) else 1] += row.shots
    for carried, lacking, row in shots.values():
        if carried and lacking:
            raise InputError(
                f"the custom count {key!r} of y={y} is missing from {lacking} of the {carried + lacking} shots "
                f"pooled into one task ({_row_text(row)}): rows that record it were pooled with rows that do not "
                f"(e.g. sinter collect beside qdecode sweep), so its pooled total covers only part of the shots; "
                f"plot the files that record {key!r} on their own")


def check_custom_key(rows: Iterable[StatsRow], y: str) -> None:
    """For a custom quantity ``y``: the counts it names must be per-shot statistics that the rows record.

    This is the one place that decides which rows a custom count may be read from. Checked on
    the rows as read, before they are pooled by strong_id:

    * at least one row must have each key ``y`` names (its numerator, and its denominator:
      ``NUM/DEN``, or ``detectors_checked`` under a bare ``detection_events``,
      :func:`y_denominator`). A row without the count is 0 hits (as sinter), right for a counter
      that stayed at zero, but when *no* row has it the key is a typo. A count written as 0
      counts as present (a merged row would drop it).
    * refused when some rows of one strong_id carry a key and other rows of it (with shots) do
      not: rows of a source that does not record the count (``sinter collect`` records no
      ``iterations`` or ``legs``) pooled with rows that do (``qdecode sweep``). Dividing by all
      the pooled shots would understate the count (half of it, for equal shots), so it is
      refused rather than drawn; the message names the count and the shots that lack it.
      Counts that are written only where non-zero (``obs_mistake_mask=...``, the gap bins of
      :mod:`qdecode.sims.gap_bins`) are exempt: a row without one counted none.
    * the ``seed=...`` keys are provenance (the shots a sweep drew from one random stream,
      :mod:`qdecode.sims.seed_streams`), not per-shot statistics: refused as ``y`` and never
      listed among the keys offered.

    Raises:
        ValueError: one line: a key no row has (listing the keys that exist), a seed-stream key,
            or a count only some pooled rows carry.
    """
    kind, key = parse_y(y)
    if kind != "custom":
        return
    rows = list(rows)
    present: set[str] = set()
    for row in rows:
        present.update(row.custom_counts or {})
    num, den = _ratio(key)
    for name in (num, den):
        if name is not None and is_seed_key(name):
            raise InputError(f"y={y!r}: {name!r} is a seed-stream record (the shots a sweep drew from one random "
                             f"stream), not a per-shot statistic ({_known_keys(present)})")
    if num not in present:
        if y.startswith("custom:"):
            raise InputError(f"no row has the custom count {num!r} asked for by y={y!r} ({_known_keys(present)})")
        raise InputError(f"unknown y quantity {y!r}: not error_rate, discard_rate or a custom_counts key of the "
                         f"rows ({_known_keys(present)})")
    if den is not None and den not in present:
        raise InputError(f"no row has the custom count {den!r} that y={y!r} divides by ({_known_keys(present)})")
    for name in (num, den or y_denominator(rows, y)):
        if name is not None:
            _check_pooled(rows, name, y)


def _check_limits(name: str, low: float | None, high: float | None) -> None:
    if low is not None and high is not None and not low < high:
        raise InputError(f"--{name}min ({low:g}) must be below --{name}max ({high:g})")


@dataclasses.dataclass(frozen=True)
class PlotOptions:
    """What goes on the y axis, whether curves get fitted lines, and the axis ranges.

    Attributes:
        y: ``"error_rate"`` (errors / (shots - discards)), ``"discard_rate"``
            (discards / shots), a custom_counts key ``"KEY"`` or ``"custom:KEY"``
            (custom_counts[KEY] / (shots - discards)) or ``"NUM/DEN"`` (one count over another;
            ``detection_events`` alone is ``detection_events/detectors_checked`` when the rows
            record ``detectors_checked``); see :func:`hits_and_trials` and :func:`y_denominator`.
        fit: draw a weighted least-squares line through every curve (:class:`LineFit`).
        yscale: ``"log"`` or ``"linear"``.
        xmin, xmax, ymin, ymax: axis limits; None leaves that end automatic.

    Raises:
        ValueError: malformed ``y``, unknown ``yscale``, or ``xmin >= xmax`` / ``ymin >= ymax``.
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
            raise InputError(f"yscale must be one of {', '.join(SCALES)}, got {self.yscale!r}")
        _check_limits("x", self.xmin, self.xmax)
        _check_limits("y", self.ymin, self.ymax)


class _Point(NamedTuple):
    hits: int
    trials: int
    fit: Fit  # per round when the plot is
    counting: bool  # a mean count per trial with a Poisson band, not a binomial rate


class _Data(NamedTuple):
    """The curves ``{group: {x: _Point}}``, whether the plot shows mean counts, the rows drawn,
    and whether every x value is an integer in the metadata (so the x ticks must be too)."""

    curves: dict
    counting: bool
    rows: list
    integer_x: bool


def _group_value(row: StatsRow, key: str) -> Any:
    """The curve-grouping value of ``row``: its decoder label for ``"decoder"``, else the metadata
    value (None if absent, JSON text if unhashable). The same rule as the threshold fits'
    grouping in :mod:`qdecode.sims.stats`, whose helper is private to that module."""
    if key == "decoder":
        return row.decoder
    value = row.json_metadata.get(key) if isinstance(row.json_metadata, Mapping) else None
    try:
        hash(value)
        return value
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _poisson_band(hits: int, trials: int, factor: float) -> Fit:
    """Mean count per trial, ``hits / trials``, with the Poisson likelihood-ratio band: the means
    ``m`` with ``L(m) >= L(best) / factor``, ``L(m) = (m T)^hits exp(-m T)``. This is the band
    :func:`~qdecode.sims.stats.fit_binomial` draws, for a count that is not one hit per trial."""
    from scipy.optimize import brentq

    best = hits / trials
    g = math.log(factor)
    if g <= 0:
        return Fit(best, best, best)

    def drop(mu: float) -> float:  # ln L(hits) - ln L(mu) - ln(factor), mu = m T
        return (hits * math.log(hits / mu) if hits else 0.0) + mu - hits - g

    low = 0.0 if hits == 0 else brentq(drop, hits * math.exp(-2.0 - g / hits), hits, xtol=1e-12 * hits)
    top = hits + g + 1.0
    while drop(top) <= 0:
        top *= 2
    high = brentq(drop, max(hits, 1e-300), top, xtol=1e-12 * top)
    return Fit(low / trials, best, high / trials)


def _usable_rows(merged, x_key: str, y: str, per: str | None, xscale: str) -> list[tuple]:
    """``(row, x, hits, trials)`` of every row with ``x_key`` and trials > 0."""
    out = []
    for row in merged:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        hits, trials = hits_and_trials(row, y, per)
        if md.get(x_key) is None or trials <= 0:
            continue
        x = metadata_number(row, x_key, "the x axis")
        if xscale == "log" and not x > 0:
            raise InputError(
                f"{x_key}={x} cannot be drawn on a log x axis (row {row.strong_id[:12]}); use a linear one "
                f"(--xscale linear; xscale='linear' in Python)"
            )
        out.append((row, x, hits, trials))
    if not out:
        raise InputError(f"nothing to plot: no row has {x_key!r} in json_metadata and trials > 0 for {y}")
    return out


def _check_per_round(y: str, per: str | None, counting: bool) -> None:
    if parse_y(y)[0] == "discard_rate":
        raise InputError("--per-round does not apply to discard_rate (a discard is not a parity of rounds)")
    if per is not None:
        raise InputError(f"--per-round does not apply to y={y} (a fraction of {per}, not of shots)")
    if counting:
        raise InputError(f"--per-round does not apply to y={y}: some rows count more than one per shot, so it "
                         f"is drawn as a mean count per kept shot")


def _collect_points(
    merged: Sequence[StatsRow], *, x_key: str, group_keys: tuple, per_round: bool, factor: float, y: str,
    xscale: str, per: str | None = None,
) -> _Data:
    """Each row's ``fit_binomial(trials, hits, factor)`` of quantity ``y`` (converted per round when
    asked) by curve and x. When any row counts more hits than trials (``bit_errors``...), every
    point is a mean count per trial with a Poisson band instead (``counting``)."""
    usable = _usable_rows(merged, x_key, y, per, xscale)
    counting = any(hits > trials for _, _, hits, trials in usable)
    if per_round:
        _check_per_round(y, per, counting)
    curves: dict[tuple, dict[float, _Point]] = {}
    for row, x, hits, trials in usable:
        if counting:
            fit = _poisson_band(hits, trials, factor)
        else:
            fit = fit_binomial(num_shots=trials, num_hits=hits, max_likelihood_factor=factor)
        if per_round:
            fit = shot_error_rate_to_per_round(fit, rounds_of(row))
        group = tuple(_group_value(row, k) for k in group_keys)
        points = curves.setdefault(group, {})
        if x in points:
            raise InputError(
                f"two rows of the curve {dict(zip(group_keys, group))} share {x_key}={x}; add the metadata key "
                f"that tells them apart to group_keys or filter the rows"
            )
        points[x] = _Point(hits, trials, fit, counting)
    integer_x = all(isinstance(row.json_metadata[x_key], (int, np.integer)) and not isinstance(
        row.json_metadata[x_key], bool) for row, *_ in usable)
    return _Data(curves, counting, [u[0] for u in usable], integer_x)


# ---------------------------------------------------------------------------------------
# Curve labels and the subtitle
# ---------------------------------------------------------------------------------------

# The decoder label syntax is qdecode.decoders.registry.split_label's (the registry imports no
# decoder, so plots may use it and still read CSVs only).
def split_decoder_label(label: str) -> tuple[str, dict[str, str]] | None:
    """``(name, {key: value})`` of a decoder label ``name`` or ``name[key=value,...]``
    (:func:`~qdecode.decoders.registry.split_label`), with the ``qd-`` prefix of a sinter decoder
    name dropped; None for a label of any other form (it is then shown whole)."""
    try:
        name, params = split_label(label)
    except (ValueError, TypeError):
        return None
    if name.startswith(SINTER_PREFIX) and len(name) > len(SINTER_PREFIX):
        name = name[len(SINTER_PREFIX):]
    return name, params


def short_decoder_labels(names: Iterable[str]) -> dict[str, str]:
    """Legend names for decoder labels: the decoder's name plus only the parameters whose values
    differ between the labels of that name, so that ``bposd[alpha=1.0,...,osd_order=10,...]``
    alone reads ``bposd`` and ``scl[crc=auto,list_size=8]`` next to ``scl[crc=auto,list_size=32]``
    reads ``scl[list_size=8]``. A parameter that some labels of the name lack (a nested decoder's
    own parameters, e.g. ``window[inner=gdg,max_tree_depth=3,...]`` next to
    ``window[inner=bposd,osd_order=10,...]``) is shown only when the parameters all of them have
    do not already tell the labels apart. A sinter ``qd-`` prefix is dropped. Labels that would
    read the same (``qd-bposd`` next to ``bposd``) keep their full text.
    """
    parsed = {name: split_decoder_label(name) for name in sorted(set(names))}
    by_name: dict[str, list[dict[str, str]]] = {}
    for p in parsed.values():
        if p is not None:
            by_name.setdefault(p[0], []).append(p[1])
    def short(name: str, params: dict[str, str], everywhere: bool) -> str:
        group = by_name[name]
        differing = [k for k in params if len({m.get(k) for m in group}) > 1
                     and (not everywhere or all(k in m for m in group))]
        return f"{name}[{','.join(f'{k}={params[k]}' for k in differing)}]" if differing else name

    # Per name: the parameters every label has, when they tell its labels apart; else all that differ.
    enough = {name: len({short(name, m, True) for m in group}) == len(group) for name, group in by_name.items()}
    out = {}
    for label, p in parsed.items():
        out[label] = label if p is None else short(p[0], p[1], enough[p[0]])
    shown: dict[str, int] = {}
    for short in out.values():
        shown[short] = shown.get(short, 0) + 1
    return {label: (short if shown[short] == 1 else label) for label, short in out.items()}


def _value_text(value: Any) -> str:
    """Floats with 6 significant digits (``p=0.00526430``, not the full repr), anything else as str."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value)


def _part(key: str, value: Any, short: Mapping[str, str]) -> str:
    """One key of a curve's label: the short decoder label, ``key=value``, or ``key unknown``
    where the metadata has no value (a code-capacity task of a code without a known d)."""
    if key == "decoder":
        return short.get(str(value), str(value))
    if value is None:
        return f"{key} unknown"
    return f"{key}={_value_text(value)}"


def _curve_labels(groups: Sequence[tuple], group_keys: tuple, said: Iterable[str] = ()
                  ) -> tuple[dict[tuple, str], str | None]:
    """``({group: legend label}, legend title)``: a key with one value across all curves is said
    once, in the title, rather than in every label (a lone curve keeps its full label), and not at
    all when the subtitle already says it (``said``)."""
    said = set(said)
    constant = [i for i, k in enumerate(group_keys) if len({g[i] for g in groups}) == 1]
    dec_index = group_keys.index("decoder") if "decoder" in group_keys else None
    short = short_decoder_labels(str(g[dec_index]) for g in groups) if dec_index is not None else {}
    many = len(groups) > 1
    labels = {}
    for g in groups:
        parts = [_part(group_keys[i], v, short) for i, v in enumerate(g) if not (i in constant and many)]
        labels[g] = ", ".join(parts) or "all"
    first = next(iter(groups))
    title_parts = [_part(group_keys[i], first[i], short) for i in constant if group_keys[i] not in said]
    title = ", ".join(title_parts) if many and title_parts else None
    return labels, title


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, np.integer, np.floating))


def common_metadata(rows: Iterable[StatsRow], exclude: Iterable[str] = ()) -> dict[str, Any]:
    """The json_metadata entries (scalars only) that every row has with one value, keys in
    ``exclude`` left out (sinter's ``{common}``, except that a key some rows lack is not common)."""
    exclude = set(exclude)
    common: dict[str, Any] | None = None
    for row in rows:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        mine = {k: v for k, v in md.items() if k not in exclude and _is_scalar(v)}
        if common is None:
            common = mine
        else:
            common = {k: v for k, v in common.items() if k in mine and mine[k] == v and type(mine[k]) is type(v)}
    return common or {}


def _rounds_per_distance(rows: Sequence[StatsRow]) -> int | None:
    """k when every row has integer rounds ``r = k d`` (one k for all), else None."""
    ks = set()
    for row in rows:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        r, d = md.get("r", md.get("rounds")), md.get("d")
        if not (isinstance(r, int) and isinstance(d, int)) or d <= 0 or r % d:
            return None
        ks.add(r // d)
    return ks.pop() if len(ks) == 1 else None


_SUBTITLE_FORMATS = {
    "code": "{} code", "noise": "{} noise", "b": "basis {}", "basis": "basis {}", "r": "rounds = {}",
    "rounds": "rounds = {}", "ebn0": "Eb/N0 = {} dB",
}
_SUBTITLE_ORDER = ("code", "n", "k", "noise", "b", "basis", "r", "rounds", "d", "p", "ebn0")


def subtitle_text(rows: Iterable[StatsRow], exclude: Iterable[str] = ()) -> tuple[str, list[str]]:
    """``(text, keys)``: what every drawn row shares, e.g. ``"surface code, sd6 noise, basis Z,
    rounds = d"``, and the metadata keys the text names. Keys in ``exclude`` (the x axis and the keys
    that separate curves) are left out; code, noise, basis, rounds, d and p come first, then the
    other shared keys in name order. Rounds that vary as ``r = d`` (or ``k d``) read ``rounds = d``."""
    rows = list(rows)
    exclude = set(exclude)
    common = common_metadata(rows, exclude)
    if not any(k in common for k in ("r", "rounds")) and not {"r", "rounds"} & exclude:
        k = _rounds_per_distance(rows)
        if k is not None:
            common["r"] = "d" if k == 1 else f"{k}d"
    order = [k for k in _SUBTITLE_ORDER if k in common] + sorted(k for k in common if k not in _SUBTITLE_ORDER)
    parts = []
    for key in order:
        value = _value_text(common[key])
        if key in _SUBTITLE_FORMATS:
            parts.append(_SUBTITLE_FORMATS[key].format(value))
        else:
            parts.append(f"{key} = {value}")
    return ", ".join(parts), order


def _subtitle(subtitle: str | None, rows: Sequence[StatsRow], exclude: Iterable[str]) -> tuple[str, list[str]]:
    """The subtitle to draw and the metadata keys it says: automatic for None, none for ``""``,
    else the given text with ``{common}`` (as in sinter) replaced by the automatic text."""
    if subtitle is not None and "{common}" not in subtitle:
        return subtitle, []
    auto, keys = subtitle_text(rows, exclude)
    return (auto if subtitle is None else subtitle.replace("{common}", auto)), keys


# ---------------------------------------------------------------------------------------
# Curve styles
# ---------------------------------------------------------------------------------------


def _natural(text: str) -> tuple:
    """Sort key that puts ``list_size=8`` before ``list_size=32``."""
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", text) if t)


def _sort_key(value: Any) -> tuple:
    """Sort numbers numerically before strings (digits in them numerically), None last."""
    if value is None:
        return (2, ())
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value))
    return (1, _natural(str(value)))


def _tuple_key(values: tuple) -> tuple:
    return tuple(_sort_key(v) for v in values)


def _marker_index(group_keys: tuple) -> int | None:
    """The key that picks markers: ``d``, else ``code``, else the last key that is not the decoder."""
    for key in ("d", "code"):
        if key in group_keys:
            return group_keys.index(key)
    others = [i for i, k in enumerate(group_keys) if k != "decoder"]
    return others[-1] if others else None


def _palette(n: int, ordered: bool) -> list:
    """``n`` colours: Okabe-Ito up to 7; beyond that no palette stays colour-blind safe, so an
    ordered key (distances) gets viridis and categories get tab20."""
    import matplotlib as mpl

    if n <= len(OKABE_ITO):
        return list(OKABE_ITO[:n])
    if ordered:
        return [mpl.colormaps["viridis"](v) for v in np.linspace(0, 0.9, n)]
    return [mpl.colormaps["tab20"](i % 20) for i in range(n)]


@dataclasses.dataclass(frozen=True)
class _Styles:
    """How curves look. The key at ``marker_index`` (d) picks the marker; the others form the
    curve's family. Colour follows ``colour_indices`` (the decoder when there are several, else
    the whole family, else the marker key), line style the family keys that colour does not show."""

    marker_index: int | None
    family_indices: tuple
    colour_indices: tuple
    style_indices: tuple
    colours: dict
    markers: dict
    linestyles: dict

    def family(self, g: tuple) -> tuple:
        return tuple(g[i] for i in self.family_indices)

    def marker_value(self, g: tuple) -> Any:
        return g[self.marker_index] if self.marker_index is not None else self.family(g)

    def of(self, g: tuple) -> tuple:
        """(colour, marker, linestyle) of curve ``g``."""
        return (self.colours[tuple(g[i] for i in self.colour_indices)], self.markers[self.marker_value(g)],
                self.linestyles[tuple(g[i] for i in self.style_indices)])

    @property
    def colour_by_family(self) -> bool:
        return self.marker_index is None or self.colour_indices != (self.marker_index,)

    def family_colour(self, family: tuple) -> Any:
        """The colour of a family's curves (for its threshold line), None if colour follows d."""
        if not self.colour_by_family or len(family) != len(self.family_indices):
            return None
        value = tuple(family[self.family_indices.index(i)] for i in self.colour_indices)
        return self.colours.get(value)

    def family_linestyle(self, family: tuple) -> Any:
        """The line style of a family's curves when line style tells families apart, else None."""
        if len(self.linestyles) < 2 or len(family) != len(self.family_indices):
            return None
        return self.linestyles.get(tuple(family[self.family_indices.index(i)] for i in self.style_indices))

    def order(self, groups: Iterable[tuple]) -> list[tuple]:
        """Curves sorted by family, then marker (the legend order)."""
        return sorted(groups, key=lambda g: (_tuple_key(self.family(g)), _sort_key(self.marker_value(g))))


def _styles(groups: Sequence[tuple], group_keys: tuple) -> _Styles:
    m = _marker_index(group_keys)
    family = tuple(i for i in range(len(group_keys)) if i != m)
    dec = group_keys.index("decoder") if "decoder" in group_keys else None
    colour = (dec,) if dec is not None and len({g[dec] for g in groups}) > 1 else family
    if m is not None and len({tuple(g[i] for i in colour) for g in groups}) < 2:
        colour = (m,)  # one family: its distances get the colours
    style = tuple(i for i in family if i not in colour)
    colour_values = sorted({tuple(g[i] for i in colour) for g in groups}, key=_tuple_key)
    style_values = sorted({tuple(g[i] for i in style) for g in groups}, key=_tuple_key)
    marker_values = sorted({g[m] if m is not None else tuple(g[i] for i in family) for g in groups},
                           key=lambda v: _tuple_key(v) if isinstance(v, tuple) else _sort_key(v))
    ordered = colour == (m,) and all(_sort_key(v[0])[0] == 0 for v in colour_values)
    palette = _palette(len(colour_values), ordered)
    return _Styles(
        marker_index=m, family_indices=family, colour_indices=colour, style_indices=style,
        colours={v: palette[i] for i, v in enumerate(colour_values)},
        markers={v: _MARKERS[i % len(_MARKERS)] for i, v in enumerate(marker_values)},
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
    inverse of the delta-method binomial variance of ``ln(rate)`` (``hits``, the Poisson one,
    for a mean count); points without hits are left out (the per-round conversion is taken to
    keep the relative uncertainty).

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
    weights = np.array([pt.hits if pt.counting else pt.hits / max(1.0 - pt.hits / pt.trials, 0.5 / pt.trials)
                        for _, pt in used])
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
    rows = list(rows.values() if isinstance(rows, Mapping) else rows)
    curves = _collect_points(list(merge_rows(rows).values()), x_key=x_key, group_keys=group_keys,
                             per_round=per_round, factor=1.0, y=y, xscale=xscale,
                             per=y_denominator(rows, y)).curves
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




def _draw_thresholds(ax, markers: Sequence[_Marker], styles: _Styles, family_labels: Mapping[tuple, str],
                     x_range: tuple[float, float]):
    """Dashed vertical line (and shaded interval) per threshold inside ``x_range``, in the colour of
    its decoder's curves when colour follows the decoder (and in their line style when line style
    tells apart curves of one colour, e.g. the X and Z bases).

    Returns ``(handles, labels, notes)``: legend entries of the drawn lines, and one text line
    per threshold that is not drawn (no crossing, or an estimate outside the data's x range).
    """
    handles, labels, notes = [], [], []
    several = len(family_labels) > 1 or len({m.group for m in markers}) > 1
    for m in markers:
        name = family_labels.get(m.group) or ", ".join(str(v) for v in m.group)
        prefix = f"threshold ({name})" if name and several else "threshold"
        if not np.isfinite(m.p_th):
            # The full reason is in the estimate's note; the plot only says that there is none.
            notes.append(f"{prefix}: no crossing in range" if "no crossing" in (m.note or "") else f"{prefix}: none")
            continue
        if not x_range[0] <= m.p_th <= x_range[1]:
            notes.append(f"{prefix}: estimate {m.p_th:.3g} outside the data range "
                         f"[{x_range[0]:.3g}, {x_range[1]:.3g}], not drawn")
            continue
        colour = (styles.family_colour(m.group) if several else None) or "0.15"
        linestyle = (styles.family_linestyle(m.group) if several else None) or _THRESHOLD_LINESTYLE
        if np.isfinite(m.low) and np.isfinite(m.high):
            ax.axvspan(m.low, m.high, color=colour, alpha=0.12, linewidth=0, zorder=-200, gid="threshold-span")
        handles.append(ax.axvline(m.p_th, color=colour, linestyle=linestyle, linewidth=1.3, gid="threshold"))
        labels.append(_threshold_label(prefix, m))
    return handles, labels, notes


# ---------------------------------------------------------------------------------------
# Reference curves
# ---------------------------------------------------------------------------------------


class Reference(NamedTuple):
    """A curve that is not data (a bound, an approximation), drawn thin and grey.

    Attributes:
        label: legend text.
        xs, ys: the curve; points with a non-finite or non-positive y are left out.
        kind: curves of one kind share a dash pattern (none a data curve uses) and, when the
            legend lists colours and markers once, one legend entry; default: the label.
        group: metadata of the data the curve belongs to (e.g. ``{"code": "polar32_16"}``);
            where the plot's marker key is in it, the curve carries that marker (hollow).
        marker: a matplotlib marker for the curve's points ("" for none); default (None): the group's
            marker, else ``x`` on curves of fewer than 10 points.
    """

    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    kind: str = ""
    group: Mapping[str, Any] | None = None
    marker: str | None = None


def _draw_references(ax, references: Sequence, styles: _Styles, group_keys: tuple) -> list[tuple]:
    """Draw every reference; returns ``(line, kind, dash pattern)`` per curve."""
    refs = [r if isinstance(r, Reference) else Reference(*r) for r in references]
    kinds = list(dict.fromkeys(r.kind or r.label for r in refs))
    several = len(styles.markers) > 1  # one marker for all curves would tie a reference to nothing
    marker_key = group_keys[styles.marker_index] if styles.marker_index is not None and several else None
    out = []
    for ref in refs:
        rx, ry = np.asarray(ref.xs, dtype=np.float64), np.asarray(ref.ys, dtype=np.float64)
        keep = np.isfinite(ry) & (ry > 0)
        value = (ref.group or {}).get(marker_key) if marker_key else None
        marker = ref.marker if ref.marker is not None else (
            styles.markers.get(value, "") or ("x" if keep.sum() < 10 else ""))
        kind = ref.kind or ref.label
        dash = _REF_DASHES[kinds.index(kind) % len(_REF_DASHES)]
        if ref.marker == "" and np.isnan(ry).any():  # NaN-separated segments (ticks): keep the breaks
            keep = np.isnan(ry) | keep
        line, = ax.plot(rx[keep], ry[keep], color=_REF_COLOUR, linewidth=1.1, zorder=-50, linestyle=dash, marker=marker,
                        markevery=max(1, int(keep.sum()) // 6), markersize=5, markerfacecolor="none",
                        label=ref.label, gid=f"ref:{ref.label}")
        out.append((line, kind, dash))
    return out


# ---------------------------------------------------------------------------------------
# Axes
# ---------------------------------------------------------------------------------------


def _ylabel(y: str, per_round: bool, per: str | None, counting: bool) -> str:
    kind, key = parse_y(y)
    if kind == "discard_rate":
        return "Discard rate per shot"
    if kind == "custom":
        num, _ = _ratio(key)
        if num == "detection_events" and per == "detectors_checked" and not counting:
            return "Fraction of detectors that fired (detection_events / detectors_checked)"
        if per is not None:
            return f"{num} / {per}" + (" (mean per trial)" if counting else "")
        if counting:
            return f"Mean {num} per kept shot"
        return f"Rate of {num} per round" if per_round else f"Rate of {num} per kept shot"
    return "Logical error probability per round" if per_round else "Logical error rate per shot"


def _single_x_limits(x: float, xscale: str) -> tuple[float, float]:
    """An x range around the one x value of a plot whose points all share it (a single-p sweep):
    a factor 2 either side on a log axis, |x|/2 either side on a linear one (1 at x = 0). Left to
    matplotlib, such a range collapses to nothing and the points fall off the axes."""
    if xscale == "log":
        return x / 2, x * 2
    half = abs(x) / 2 if x else 1.0
    return x - half, x + half


def _apply_limits(ax, options: PlotOptions, xscale: str, y_data: Sequence[float], y_refs: Sequence[float],
                  rates: bool, x_range: tuple[float, float]) -> None:
    """Automatic y range on a log axis (a factor 5 below / 3 above the data and the reference
    curves, capped at 1 for rates; references at most 4 decades below the data), an x range
    around a single x value (:func:`_single_x_limits`), then the explicit limits.

    Raises:
        ValueError: a non-positive limit on a log axis, or a one-sided limit beyond the other end.
    """
    for name, value, scale in (("xmin", options.xmin, xscale), ("xmax", options.xmax, xscale),
                               ("ymin", options.ymin, options.yscale), ("ymax", options.ymax, options.yscale)):
        if value is not None and scale == "log" and not value > 0:
            raise InputError(f"--{name} {value:g} cannot be used on a log axis")
    y = np.array([v for v in y_data if v > 0])
    if options.yscale == "log" and len(y):
        refs = np.array([v for v in y_refs if v > 0])
        low, high = y.min(), y.max()
        if len(refs):
            low, high = min(low, max(refs.min(), low * 1e-4)), max(high, refs.max())
        ax.set_ylim(max(low / 5, 1e-300), min(1.0, high * 3) if rates else high * 3)
    if x_range[0] == x_range[1]:
        ax.set_xlim(*_single_x_limits(x_range[0], xscale))
    if options.xmin is not None or options.xmax is not None:
        ax.set_xlim(left=options.xmin, right=options.xmax)
    if options.ymin is not None or options.ymax is not None:
        ax.set_ylim(bottom=options.ymin, top=options.ymax)
    for axis, (lo, hi) in (("x", ax.get_xlim()), ("y", ax.get_ylim())):
        if not lo < hi:
            raise InputError(f"the {axis} limits [{lo:g}, {hi:g}] are empty; give both --{axis}min and --{axis}max")


def _integer_ticks(ax, xs: Iterable[float], xscale: str) -> None:
    """Ticks only at integers on an axis of integers (d = 3, 5, 7; never 3.5): at the data's
    values when there are few, else wherever MaxNLocator puts integers."""
    from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator, ScalarFormatter

    values = sorted(set(xs))
    if len(values) <= _MAX_FIXED_TICKS:
        ax.xaxis.set_major_locator(FixedLocator(values))
    elif xscale == "linear":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        return  # a log axis over many integers: its decades are integers already
    if xscale == "log":
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())


def _text_width_chars(fig, ax, fontsize_pt: float, fraction: float = 0.92) -> int:
    """About how many characters of ``fontsize_pt`` fit in ``fraction`` of the axes' width."""
    width_px = ax.get_position().width * fig.get_figwidth() * fig.dpi * fraction
    return max(20, int(width_px / (0.55 * fontsize_pt * fig.dpi / 72)))


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.fill(line, width, subsequent_indent="  ") for line in text.split("\n"))


def _overlap(a, b) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def _note_box(fig, ax, text: str, loc: str, size: float):
    from matplotlib.offsetbox import AnchoredText

    note = AnchoredText(_wrap(text, _text_width_chars(fig, ax, size)), loc=loc, prop=dict(size=size),
                        frameon=True, borderpad=0.6)
    note.patch.set(boxstyle="round,pad=0.3", facecolor="white", edgecolor="0.7", alpha=0.9)
    note.set_gid("threshold-note")
    return note


def _curve_samples(ax, prefixes: tuple) -> np.ndarray:
    """Points along every line whose gid starts with one of ``prefixes``, in display coordinates:
    its markers and 24 points on each segment between them (what a box placed on top would hide)."""
    t = np.linspace(0.0, 1.0, 25)[:, None]
    out = [np.empty((0, 2))]
    for line in ax.get_lines():
        if not (line.get_gid() or "").startswith(prefixes) or not len(line.get_xdata()):
            continue
        xy = ax.transData.transform(np.column_stack(line.get_data()).astype(float))
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        out.append(xy if len(xy) < 2 or line.get_linestyle() in ("None", "none", "", " ")
                   else np.concatenate([a + t * (b - a) for a, b in zip(xy[:-1], xy[1:])]))
    return np.concatenate(out)


def _place_note(fig, ax, text: str):
    """A wrapped text box inside the axes, in the corner that covers the fewest data points and
    the least of the legend; the font shrinks until it fits the axes (never over tick labels,
    never past the figure's edge)."""
    renderer = fig.canvas.get_renderer()
    points = _curve_samples(ax, ("curve:", "upper:", "ref:", "fit:"))
    legend = ax.get_legend()
    legend_box = legend.get_window_extent(renderer) if legend is not None else None
    axes_box = ax.get_window_extent(renderer)
    best = None
    for size in (8.0, 7.0, 6.0, 5.0):
        for loc in ("lower right", "lower left", "upper left", "upper right", "center right", "center left"):
            note = _note_box(fig, ax, text, loc, size)
            ax.add_artist(note)
            box = note.get_window_extent(renderer)
            note.remove()
            if not (axes_box.x0 <= box.x0 <= box.x1 <= axes_box.x1 and axes_box.y0 <= box.y0 <= box.y1 <= axes_box.y1):
                continue
            inside = int(np.sum((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                                & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)))
            cost = inside * 1e6 + (_overlap(box, legend_box) if legend_box is not None else 0.0)
            if best is None or cost < best[0]:
                best = (cost, loc, size)
        if best is not None:
            break
    _, loc, size = best if best is not None else (0, "lower right", 5.0)
    return ax.add_artist(_note_box(fig, ax, text, loc, size))


def _draw_curve(ax, xs, points, style, label, factor, log_y, alpha):
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
        ax.fill_between(xs[has], low[has], high[has], color=colour, alpha=alpha, linewidth=0, zorder=-100)
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


# ---------------------------------------------------------------------------------------
# The legend
# ---------------------------------------------------------------------------------------


def _factored_entries(styles: _Styles, groups: Sequence[tuple], group_keys: tuple):
    """Legend entries that list each colour, line style and marker once (``bposd``, ``b=X``,
    ``d=5``) instead of every curve, or None when that would not be shorter, or would not say
    everything (colour follows d)."""
    from matplotlib.lines import Line2D

    if not styles.colour_by_family or styles.marker_index is None:
        return None
    short = short_decoder_labels(str(g[group_keys.index("decoder")]) for g in groups) \
        if "decoder" in group_keys else {}

    constant = {i for i in range(len(group_keys)) if len({g[i] for g in groups}) == 1}  # said in the title

    def text(indices: tuple, values: tuple) -> str:
        parts = [_part(group_keys[i], v, short) for i, v in zip(indices, values) if i not in constant]
        return ", ".join(parts) or ", ".join(_part(group_keys[i], v, short) for i, v in zip(indices, values))

    entries = [(Line2D([], [], color=c, linewidth=2), text(styles.colour_indices, v))
               for v, c in sorted(styles.colours.items(), key=lambda t: _tuple_key(t[0]))]
    if len(styles.linestyles) > 1:
        entries += [(Line2D([], [], color="0.3", linestyle=ls), text(styles.style_indices, v))
                    for v, ls in sorted(styles.linestyles.items(), key=lambda t: _tuple_key(t[0]))]
    if len(styles.markers) > 1:
        entries += [(Line2D([], [], color="0.3", marker=mk, linestyle="none"),
                     _part(group_keys[styles.marker_index], v, short))
                    for v, mk in sorted(styles.markers.items(), key=lambda t: _sort_key(t[0]))]
    return entries if len(entries) < len(groups) else None


def _legend_covers_data(fig, ax) -> bool:
    """Whether the legend (inside the axes) lies over a data curve or its points (:func:`_curve_samples`)."""
    legend = ax.get_legend()
    if legend is None:
        return False
    fig.canvas.draw()  # "best" is resolved at draw time
    box = legend.get_window_extent(fig.canvas.get_renderer())
    pts = _curve_samples(ax, ("curve:", "upper:", "fit:"))
    return bool(np.any((pts[:, 0] >= box.x0) & (pts[:, 0] <= box.x1) & (pts[:, 1] >= box.y0) & (pts[:, 1] <= box.y1)))


def _reference_entries(drawn: Sequence[tuple], factored: bool):
    """One entry per reference curve, or per kind when the legend is factored (the marker then says
    which curve the reference belongs to)."""
    from matplotlib.lines import Line2D

    if not factored:
        return [(line, line.get_label()) for line, _, _ in drawn]
    first = {}
    for line, kind, dash in drawn:
        first.setdefault(kind, (line, dash))
    return [(Line2D([], [], color=line.get_color(), linestyle=dash, linewidth=line.get_linewidth()), kind)
            for kind, (line, dash) in first.items()]


def _extra_entries(factor: float, any_upper: bool, fit_model: str | None, x_key: str):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    entries = []
    if factor > 1:
        entries.append((Patch(color="0.5", alpha=0.3, linewidth=0), f"likelihood within {factor:g}x of max"))
    if any_upper:
        entries.append((Line2D([], [], color="0.3", marker="v", markerfacecolor="none", linestyle="none"),
                        "no errors (upper bound)"))
    if fit_model is not None:
        entries.append((Line2D([], [], color="0.3", linestyle=_FIT_LINESTYLE, linewidth=1.0),
                        _fit_legend_text(fit_model, x_key)))
    return entries


def _draw_legend(ax, entries: Sequence[tuple], title: str | None, curve_labels: Sequence[str],
                 outside: bool = False) -> bool:
    """The legend inside the axes ("best" place) when it is short, else (or when ``outside``) to
    the right of them. Returns whether it is outside."""
    labels = [t for _, t in entries]
    outside = outside or len(labels) > 8 or max((len(t) for t in curve_labels), default=0) > 40
    placement = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0)) if outside else dict(loc="best")
    ax.legend([h for h, _ in entries], labels, title=title, fontsize="small", title_fontsize="small",
              framealpha=0.85, **placement)
    return outside


# ---------------------------------------------------------------------------------------
# The plot
# ---------------------------------------------------------------------------------------


def _draw_all_curves(ax, data: _Data, styles: _Styles, labels: Mapping, factor: float, options: PlotOptions,
                     model: str):
    """Every curve (and its fit); returns ``(y values shown, any upper bounds, any fits)``."""
    y_shown: list[float] = []
    any_upper = any_fit = False
    alpha = 0.2 if len(data.curves) <= 6 else 0.12  # many overlapping bands would hide each other
    for g in styles.order(data.curves):
        xs = np.array(sorted(data.curves[g]), dtype=np.float64)
        fit = _fit_line(data.curves[g], model, labels[g]) if options.fit else None
        label = labels[g] + (f" ({fit.describe()})" if fit is not None else "")
        shown, upper = _draw_curve(ax, xs, data.curves[g], styles.of(g), label, factor, options.yscale == "log",
                                   alpha)
        y_shown.extend(shown)
        any_upper = any_upper or upper
        if fit is not None:
            _draw_fit(ax, fit, styles.of(g)[0])
            any_fit = True
    return y_shown, any_upper, any_fit


def _family_labels(groups: Sequence[tuple], group_keys: tuple, styles: _Styles) -> dict[tuple, str]:
    """``{family: label}`` (a family is a curve's keys other than the marker's, e.g. the decoder)."""
    families = list(dict.fromkeys(styles.family(g) for g in groups))
    keys = tuple(group_keys[i] for i in styles.family_indices)
    return _curve_labels(families, keys)[0] if families and keys else {}


def _reference_ys(drawn: Sequence[tuple], x_range: tuple[float, float]) -> list[float]:
    """The y values of the reference curves over the data's x range (for the automatic y range)."""
    out: list[float] = []
    for line, _, _ in drawn:
        x, y = (np.asarray(v, dtype=np.float64) for v in line.get_data())
        out.extend(y[(x >= x_range[0]) & (x <= x_range[1])])
    return out


def _titles(fig, ax, title: str | None, subtitle: str) -> None:
    """The subtitle (wrapped to the axes' width) right above the axes, the title above it."""
    if subtitle:
        ax.set_title(_wrap(subtitle, _text_width_chars(fig, ax, 9.0)), fontsize=9, color="0.25")
        if title:
            fig.suptitle(title)
    elif title:
        ax.set_title(title)


def figure_path(out_path: str | os.PathLike) -> str:
    """The file a figure saved to ``out_path`` is written to: ``out_path`` itself, or
    ``out_path + ".png"`` when its name has no extension (what matplotlib would write, said
    here so that callers can name the file actually written).

    Raises:
        ValueError: an extension that is no image format matplotlib writes (the message lists them).
    """
    from matplotlib.backend_bases import FigureCanvasBase

    path = os.fspath(out_path)
    ext = os.path.splitext(os.path.basename(path))[1]
    if not ext or ext == ".":
        return path.rstrip(".") + ".png"
    formats = FigureCanvasBase.get_supported_filetypes()
    if ext[1:].lower() not in formats:
        raise InputError(f"{path}: {ext!r} is not an image format matplotlib writes (use one of "
                         f"{', '.join('.' + f for f in sorted(formats))})")
    return path


def _save(fig, out_path, dpi: int, tight: bool) -> None:
    path = figure_path(out_path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight" if tight else None)


class _PlotSpec(NamedTuple):
    """A threshold plot's points, curve styles, labels and subtitle, and the settings they were made with."""

    data: _Data
    styles: _Styles
    labels: dict[tuple, str]
    legend_title: str | None
    subtitle: str
    group_keys: tuple
    x_key: str
    xscale: str
    per_round: bool
    factor: float  # the band's likelihood factor
    options: PlotOptions
    per: str | None  # the y quantity's denominator (y_denominator)
    model: str  # the line-fit model (_fit_model)


def _plot_spec(rows: Iterable[StatsRow] | Mapping[str, StatsRow], *, x_key: str, group_keys: Sequence[str],
               per_round: bool, xscale: str, factor: float | None, subtitle: str | None,
               options: PlotOptions | None, check_keys: bool) -> _PlotSpec:
    """Check :func:`plot_threshold`'s arguments, merge the rows and collect the points, styles and labels."""
    options = options or PlotOptions()
    if xscale not in SCALES:
        raise InputError(f"xscale must be one of {', '.join(SCALES)}, got {xscale!r}")
    band = 1.0 if factor is None else float(factor)
    if not band >= 1:
        raise InputError(f"highlight_max_likelihood_factor must be >= 1, got {factor}")
    group_keys = tuple(group_keys)
    rows = list(rows.values() if isinstance(rows, Mapping) else rows)
    if check_keys:
        check_custom_key(rows, options.y)
    per = y_denominator(rows, options.y)
    data = _collect_points(list(merge_rows(rows).values()), x_key=x_key, group_keys=group_keys,
                           per_round=per_round, factor=band, y=options.y, xscale=xscale, per=per)
    groups = list(data.curves)
    styles = _styles(groups, group_keys)
    varying = {k for i, k in enumerate(group_keys) if len({g[i] for g in groups}) > 1}
    sub, said = _subtitle(subtitle, data.rows, {x_key, "decoder"} | varying)
    labels, legend_title = _curve_labels(groups, group_keys, said)
    return _PlotSpec(data, styles, labels, legend_title, sub, group_keys, x_key, xscale, per_round, band, options,
                     per, _fit_model(x_key, xscale))


class _Drawn(NamedTuple):
    """What drawing the data leaves for the legend and the box of notes."""

    any_upper: bool  # some point is drawn as an upper bound
    any_fit: bool
    refs: list[tuple]  # (line, kind, dash pattern) per reference curve
    thresholds: list[tuple]  # (handle, label) per threshold legend entry
    notes: list[str]  # threshold estimates that are written rather than drawn


def _draw_plot_data(ax, spec: _PlotSpec, references: Sequence, threshold: Any) -> _Drawn:
    """Draw the curves (and fits), the references and the thresholds, then set the axis limits around them."""
    data, styles, options = spec.data, spec.styles, spec.options
    y_shown, any_upper, any_fit = _draw_all_curves(ax, data, styles, spec.labels, spec.factor, options, spec.model)
    refs = _draw_references(ax, references, styles, spec.group_keys)
    all_x = [x for points in data.curves.values() for x in points]
    x_range = (min(all_x), max(all_x))
    th_handles, th_labels, th_notes = _draw_thresholds(ax, _threshold_items(threshold), styles,
                                                       _family_labels(list(data.curves), spec.group_keys, styles),
                                                       x_range)
    _apply_limits(ax, options, spec.xscale, y_shown, _reference_ys(refs, x_range), rates=not data.counting,
                  x_range=x_range)
    return _Drawn(any_upper, any_fit, refs, list(zip(th_handles, th_labels)), th_notes)


def _label_axes(ax, spec: _PlotSpec, xlabel: str | None, ylabel: str | None) -> None:
    """The grid, integer x ticks where the metadata's x values are integers, and the axis labels."""
    ax.grid(True, which="major", alpha=0.5)
    ax.grid(True, which="minor", alpha=0.15)
    if spec.data.integer_x:
        _integer_ticks(ax, [x for points in spec.data.curves.values() for x in points], spec.xscale)
    ax.set_xlabel(xlabel or ("Physical error rate p" if spec.x_key == "p" else spec.x_key))
    ax.set_ylabel(ylabel or _ylabel(spec.options.y, spec.per_round, spec.per, spec.data.counting))


def _legend_entries(ax, spec: _PlotSpec, drawn: _Drawn) -> tuple[list[tuple], list[str]]:
    """The legend's ``(handle, label)`` entries, and the labels of the curves' own entries among them."""
    factored = None if drawn.any_fit else _factored_entries(spec.styles, list(spec.data.curves), spec.group_keys)
    curve_entries = factored or [(line, line.get_label()) for line in ax.get_lines()
                                 if (line.get_gid() or "").startswith("curve:")]
    entries = (curve_entries + _reference_entries(drawn.refs, factored is not None) + drawn.thresholds
               + _extra_entries(spec.factor, drawn.any_upper, spec.model if drawn.any_fit else None, spec.x_key))
    return entries, [t for _, t in curve_entries]


def _legend_and_titles(fig, ax, spec: _PlotSpec, entries: list[tuple], curve_labels: list[str],
                       title: str | None) -> bool:
    """Draw the legend (beside the axes when it would cover the data) and the titles; returns whether it is outside."""
    outside = _draw_legend(ax, entries, spec.legend_title, curve_labels)
    _titles(fig, ax, title, spec.subtitle)
    if not outside:  # an outside legend is fitted by bbox_inches="tight" when saving instead
        fig.tight_layout()
        if _legend_covers_data(fig, ax):  # no empty corner: the legend goes beside the axes
            ax.get_legend().remove()
            outside = _draw_legend(ax, entries, spec.legend_title, curve_labels, outside=True)
    return outside


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
    subtitle: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    xscale: str = "log",
    dpi: int = 150,
    figsize: tuple[float, float] = (7.0, 5.0),
    references: Sequence[Reference | tuple] = (),
    options: PlotOptions | None = None,
    check_keys: bool = True,
    notes: Sequence[str] = (),
):
    """Plot a rate (by default the logical error rate) against ``x_key`` (by default p).

    One curve per value of ``group_keys`` (by default one per decoder and distance). Each
    point is ``fit_binomial(trials, hits, highlight_max_likelihood_factor)`` of the quantity
    ``options.y`` (:func:`hits_and_trials`; for the error rate ``trials = shots - discards``,
    ``hits = errors``), exactly as ``sinter plot`` computes it: the marker sits at the best
    estimate and the band spans the rates whose likelihood is within that factor of the best.
    When a custom count exceeds its trials in some row (``bit_errors``, ``detection_events``
    per shot) every point is instead the mean count per trial with its Poisson likelihood band.
    With ``per_round`` every value is converted with ``P_round = 1/2 - 1/2 (1 - 2 P_shot)^(1/r)``
    using the ``r`` (or ``rounds``) metadata. On a log y axis points without hits have no best
    estimate; they are drawn as hollow 'v' markers at their upper bound.

    Styles: the marker follows ``d`` (else ``code``, else the last key that is not the decoder);
    the colour (Okabe-Ito) follows the decoder when there are several, else the other keys, and
    when all curves share those, the distance; line style follows keys the colour does not show
    (e.g. the basis). When that makes the legend shorter, it lists each colour, line style and
    marker once instead of every curve. Decoder labels are shortened (:func:`short_decoder_labels`).
    With ``options.fit`` every curve gets a dotted :class:`LineFit` and its legend label says the
    fitted Lambda or exponent.

    Args:
        rows: stats rows (merged by strong_id here) or the dict from ``merge_rows``. Rows
            without ``x_key`` in their metadata or with no trials are skipped.
        out_path: where to save the figure (format from the suffix, e.g. ``.png``, ``.pdf``; no
            suffix writes ``out_path + ".png"``, :func:`figure_path`); None to only return it.
            Parent folders are created.
        per_round: plot the rate per round instead of per shot (not for discard rates, count
            ratios or mean counts).
        x_key: metadata key of the x value. When every x value is an integer in the metadata
            (d, rounds...), the ticks are integers.
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
            range, or one without a crossing, is written in a box inside the axes instead.
        title: figure title.
        subtitle: text under the title; None (default) names what every drawn row shares
            (:func:`subtitle_text`: code, noise, basis, rounds...), ``""`` draws none, and
            ``{common}`` in a given text is replaced by that automatic text (as in sinter).
        xlabel: x-axis label; default "Physical error rate p" for ``x_key="p"``, else the key.
        ylabel: y-axis label; default from the quantity, e.g. "Logical error rate per shot"
            or "Logical error probability per round".
        xscale: "log" (default) or "linear".
        dpi: resolution of the saved file.
        figsize: (width, height) in inches.
        references: curves that are not data (the normal approximation, an ML lower bound):
            :class:`Reference` or ``(label, xs, ys)`` tuples, drawn thin and grey with a dash
            pattern per kind, ``gid="ref:<label>"``, and inside the automatic y range.
        options: the y quantity, line fits, y scale and axis limits (:class:`PlotOptions`);
            default ``PlotOptions()`` (error rate, log y, automatic limits, no fits).
        check_keys: refuse a custom count that no row has (:func:`check_custom_key`). Pass
            False for rows already merged after that check on the rows as read: summing rows
            drops counts that stayed 0.
        notes: lines of text for the box of notes inside the axes (before any threshold note).

    Returns:
        The ``matplotlib.figure.Figure``. Its curve lines carry ``gid="curve:<label>"``,
        upper-bound markers ``gid="upper:<label>"``, fitted lines ``gid="fit:<label>"``,
        threshold lines ``gid="threshold"`` and the box of notes ``gid="threshold-note"``.

    Raises:
        ValueError: no plottable rows, two rows of one curve at the same x (a metadata key
            is missing from ``group_keys``), non-positive x or limits on a log axis, a custom
            count no row has, or per-round without rounds metadata.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    spec = _plot_spec(rows, x_key=x_key, group_keys=group_keys, per_round=per_round, xscale=xscale,
                      factor=highlight_max_likelihood_factor, subtitle=subtitle, options=options, check_keys=check_keys)
    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale(xscale)
    ax.set_yscale(spec.options.yscale)
    drawn = _draw_plot_data(ax, spec, references, threshold)
    _label_axes(ax, spec, xlabel, ylabel)
    entries, curve_labels = _legend_entries(ax, spec, drawn)
    outside = _legend_and_titles(fig, ax, spec, entries, curve_labels, title)
    notes = [*notes, *drawn.notes]
    if notes:
        _place_note(fig, ax, "\n".join(notes))
    if out_path is not None:
        _save(fig, out_path, dpi, outside)
    return fig


# ---------------------------------------------------------------------------------------
# Post-selection by the decoder's gap: kept-shot error rate against discard rate
# ---------------------------------------------------------------------------------------

#: The x key of the points of :func:`plot_discard_vs_error` (the fraction of shots discarded).
DISCARD_X_KEY = "discard_rate"


def _discard_points(rows: Sequence[StatsRow], xscale: str, group_keys: tuple) -> tuple[list[StatsRow], dict]:
    """One row per post-selection threshold of every gap-histogram row, and the rows' 0 % points.

    Each point row has ``shots = kept``, ``errors = kept errors`` and the discard rate in its
    json_metadata under :data:`DISCARD_X_KEY`, so that :func:`plot_threshold` draws kept-shot
    error rates with its own binomial bands and styles. A curve stops at its first threshold
    whose kept shots have no error (larger ones only weaken that upper bound). On a log x axis a
    point without discards cannot be drawn; it is returned instead, ``{strong_id: (row, LER)}``.
    The ``gap_bins`` metadata key is dropped from the points (every drawn row has it) unless it
    separates curves.
    """
    out: list[StatsRow] = []
    zero: dict[str, tuple] = {}
    for row in rows:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        if GAP_BINS_KEY not in md and not has_gap_bins(row.custom_counts or {}):
            continue
        for pt in discard_curve(row.shots, row.errors, row.discards, row.custom_counts or {}):
            if xscale == "log" and pt.discard_rate <= 0:
                zero[row.strong_id] = (row, pt.kept_errors / pt.kept)
            else:
                meta = {k: v for k, v in md.items() if k != GAP_BINS_KEY or k in group_keys}
                out.append(StatsRow(strong_id=f"{row.strong_id}:gap>={pt.threshold}", decoder=row.decoder,
                                    json_metadata={**meta, DISCARD_X_KEY: pt.discard_rate}, shots=pt.kept,
                                    errors=pt.kept_errors))
            if pt.kept_errors == 0:
                break
    if not out and not zero:
        raise InputError("no row has a gap histogram (sweep with --gap-histogram, or gap_histogram = true in a "
                         "recipe, with a decoder that gives a confidence)")
    return out, zero


def plot_discard_vs_error(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    out_path: str | os.PathLike | None,
    group_keys: Sequence[str] = ("decoder", "d", "p"),
    xscale: str = "log",
    per_round: bool = False,
    options: PlotOptions | None = None,
    **kwargs: Any,
):
    """Logical error rate among kept shots against the discard rate, post-selecting on the gap.

    For every row with a gap histogram (:mod:`qdecode.sims.gap_bins`; a sweep with
    ``--gap-histogram``), the shots with the smallest gaps are discarded: threshold ``t`` keeps
    the shots with gap >= ``t`` dB, and every bin edge ``t = 0, 1, 2, ...`` is one point, at
    ``x`` = the fraction of the row's shots discarded (detector postselection's discards
    included) and ``y`` = ``errors / shots`` among the kept ones, with sinter's binomial band
    (:func:`~qdecode.sims.stats.fit_binomial`). One curve per row (``group_keys``: decoder, d, p
    and whatever else separates rows), in :func:`plot_threshold`'s styles: Okabe-Ito colour per
    decoder, marker per d, short legend labels, the subtitle of what the rows share. A curve ends
    at its first point without kept errors (an upper bound, a hollow 'v').

    On a log x axis (the default) the point without post-selection (0 % discarded) has no place:
    it is drawn as a grey horizontal line over the curve's x range, with the curve's marker, so
    the reader sees the gain. ``per_round`` converts kept-shot rates per round. ``options`` sets
    the axes (its ``y`` is ignored: the quantity is this one); other keyword arguments go to
    :func:`plot_threshold` (``title``, ``subtitle``, ``dpi``, ``figsize``,
    ``highlight_max_likelihood_factor``).

    Returns:
        The figure (curve lines ``gid="curve:<label>"``, the 0 % lines ``gid="ref:<label>"``).

    Raises:
        ValueError: no row has a gap histogram, or a histogram that does not add up to its row.
    """
    rows = list(rows.values() if isinstance(rows, Mapping) else rows)
    group_keys = tuple(group_keys)
    points, zero = _discard_points(list(merge_rows(rows).values()), xscale, group_keys)
    refs = []
    if zero and points:
        xs = [r.json_metadata[DISCARD_X_KEY] for r in points]
        span = [min(xs), max(xs)]
        marker_key = next((k for k in ("d", "code") if k in group_keys), None)
        decoders = {row.decoder for row, _ in zero.values()}
        short = short_decoder_labels(decoders) if len(decoders) > 1 else {}
        for row, ler in sorted(zero.values(), key=lambda t: (t[0].decoder, _sort_key(t[0].json_metadata.get(
                marker_key)))):
            md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
            group = {marker_key: md.get(marker_key)} if marker_key else None
            parts = ([short[row.decoder]] if short else []) + ([f"{marker_key}={md.get(marker_key)}"] if marker_key
                                                                else [])
            label = "no post-selection" + (f" ({', '.join(parts)})" if parts else "")
            if per_round:  # the same conversion as the curves' points (plot_threshold's per_round)
                ler = shot_error_rate_to_per_round(ler, rounds_of(row))
            refs.append(Reference(label, span, [ler, ler], "no post-selection (0 % discarded)", group))
    if not points:
        raise InputError("every gap-histogram row discards nothing at its first threshold with errors; "
                         "use a linear x axis to draw the 0 % points (--xscale linear; xscale='linear' in Python)")
    options = dataclasses.replace(options or PlotOptions(), y="error_rate")
    note = "discard the shots whose gap is below t dB; one point per t = 0, 1, 2, ... (1 dB bins)"
    return plot_threshold(points, out_path=out_path, x_key=DISCARD_X_KEY, group_keys=group_keys, xscale=xscale,
                          per_round=per_round, options=options, references=refs, check_keys=False,
                          xlabel="Discard rate (fraction of shots discarded)",
                          ylabel=("Logical error probability per round among kept shots" if per_round
                                  else "Logical error rate among kept shots"),
                          notes=kwargs.pop("notes", [note]), **kwargs)


DEADLINE_X_KEY = "deadline"


def _deadline_points(rows: Sequence[StatsRow], clock: str, group_keys: tuple,
                     policy: str = "miss") -> tuple[list[StatsRow], list]:
    """One row per occupied bin edge of every latency row's ``clock`` histogram, and the p50 / p99 marks.

    Each point row has ``shots`` = the decoded shots and ``errors`` = the failures under the deadline at that
    edge with the miss policy (:func:`qdecode.sims.latency_bins.deadline_failures`), and the deadline in its
    json_metadata under :data:`DEADLINE_X_KEY` (microseconds for the wall clock, the decoder's unit for work),
    so that :func:`plot_threshold` draws it with its own bands and styles. The ``latency_bins`` key is dropped
    from the points unless it separates curves.
    """
    from qdecode.sims.latency_bins import LATENCY_BINS_KEY, deadline_failures, grid_index, rescued_at, row_histograms

    scale = 1e-3 if clock == "wall" else 1.0
    out: list[StatsRow] = []
    marks = []
    for row in rows:
        hist = row_histograms(row).get(clock)
        rescued = rescued_at(row.custom_counts or {}, clock) if policy == "anytime" else {}
        if hist is None or rescued is None:  # anytime: rows whose decoder records no trail are left out
            continue
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        meta = {k: v for k, v in md.items() if k != LATENCY_BINS_KEY or k in group_keys}
        decoded = row.shots - row.discards
        for edge in hist.edges.tolist():
            out.append(StatsRow(strong_id=f"{row.strong_id}:{clock}<={edge}", decoder=row.decoder,
                                json_metadata={**meta, DEADLINE_X_KEY: edge * scale}, shots=decoded,
                                errors=deadline_failures(hist, decoded, edge)
                                - rescued.get(grid_index(edge, clock), 0)))
        for q, kind in ((0.5, "p50"), (0.99, "p99")):  # a short vertical tick across the curve at its quantile
            t = hist.quantile(q)
            rate = (deadline_failures(hist, decoded, t) - rescued.get(grid_index(t, clock), 0)) / decoded
            marks.append((kind, t * scale, rate))
    if not out:
        raise InputError(f"no row has a {clock}-clock latency histogram" + (
            " with a trail of answers (--policy anytime: bp, relay-bp)" if policy == "anytime" else
            " (sweep with --latency, or latency = true in a recipe task; the work clock needs a decoder that has one)"))
    refs = []
    for kind in ("p50", "p99"):  # one reference per quantile: ticks separated by NaN (one legend entry)
        xs, ys = [], []
        for k, t, rate in marks:
            if k == kind and rate > 0:
                xs += [t, t, math.nan]
                ys += [rate / 1.6, rate * 1.6, math.nan]
        if xs:
            refs.append(Reference(f"{kind} latency of each curve", xs, ys, marker=""))
    return out, refs


def plot_deadline(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    out_path: str | os.PathLike | None,
    clock: str = "wall",
    policy: str = "miss",
    group_keys: Sequence[str] = ("decoder", "d", "p"),
    options: PlotOptions | None = None,
    **kwargs: Any,
):
    """The logical error rate under a deadline, ``LER(t) = P(latency > t or logical error)``, against ``t``.

    ``policy="anytime"``: a late shot takes its best answer so far (rows whose decoder records the trail of its
    answers, :mod:`qdecode.sims.latency_bins`; the others are left out).

    For every row with a latency histogram (:mod:`qdecode.sims.latency_bins`; a sweep with ``--latency``),
    one point per occupied bin edge of its ``clock`` (``"wall"``: x in microseconds; ``"work"``: the
    decoder's work count), with sinter's binomial band; grey vertical lines mark each curve's p50 and p99.
    At the last edge a curve reaches the row's plain logical error rate. One curve per row (``group_keys``),
    in :func:`plot_threshold`'s styles; other keyword arguments go to it (``title``, ``subtitle``, ``dpi``,
    ``figsize``, ``highlight_max_likelihood_factor``).

    Returns:
        The figure (curve lines ``gid="curve:<label>"``).

    Raises:
        ValueError: no row has a histogram of ``clock``, or a histogram that does not add up to its row.
    """
    rows = list(rows.values() if isinstance(rows, Mapping) else rows)
    group_keys = tuple(group_keys)
    if policy not in ("miss", "anytime"):
        raise InputError(f"policy must be 'miss' or 'anytime', got {policy!r}")
    points, marks = _deadline_points(list(merge_rows(rows).values()), clock, group_keys, policy)
    options = dataclasses.replace(options or PlotOptions(), y="error_rate")
    xlabel = ("Deadline t (us of wall time per shot)" if clock == "wall"
              else "Deadline t (the decoder's work count per shot)")
    rule = ("a shot later than t fails (miss policy)" if policy == "miss"
            else "a shot later than t takes its best answer so far (anytime policy)")
    note = f"{rule}; one point per 9 % latency bin"
    return plot_threshold(points, out_path=out_path, x_key=DEADLINE_X_KEY, group_keys=group_keys, xscale="log",
                          options=options, references=marks, check_keys=False, xlabel=xlabel,
                          ylabel=("Logical error rate under the deadline, P(late or wrong)" if policy == "miss"
                                  else "Logical error rate under the deadline, anytime answers"),
                          notes=kwargs.pop("notes", [note]), **kwargs)
