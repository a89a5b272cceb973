"""Statistics of Monte-Carlo sweeps: binomial fits, per-round rates, rows to curves.

Everything here works on the merged :class:`~qdecode.sims.store.StatsRow` objects of a
sinter-format CSV and needs only numpy and scipy (no stim, no matplotlib), so old result
files can be re-analysed anywhere. Thresholds and Lambda built on these curves live in
:mod:`qdecode.sims.threshold`.

Contents:

* :func:`fit_binomial` -- the likelihood-ratio band sinter draws around every point, with
  the same numbers as ``sinter.fit_binomial`` (bit for bit, see its docstring), and
  :func:`binomial_likelihood_interval`, the same band computed exactly in float64.
* :func:`shot_error_rate_to_per_round` -- ``P_round = 1/2 - 1/2 (1 - 2 P_shot)^(1/rounds)``.
* :func:`rows_to_curves` -- merged rows to per-(group, d) arrays (:class:`Curve`) sorted by p.
* :func:`rounds_of` -- the rounds per shot of a row (metadata ``r``, else ``rounds``).
* :func:`metadata_number` -- a metadata value used as a number (an axis, d, the rounds), with
  a one-line error naming the key when it is text (``p=abc`` from a file name ``d=5,p=abc.stim``
  is kept as text by the sweep, as sinter keeps it).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from qdecode.errors import InputError
from qdecode.sims.store import StatsRow, merge_rows

log = logging.getLogger("qdecode.sims.stats")

__all__ = [
    "Fit",
    "fit_binomial",
    "binomial_likelihood_interval",
    "shot_error_rate_to_per_round",
    "Curve",
    "rows_to_curves",
    "metadata_number",
    "rounds_of",
]


# ---------------------------------------------------------------------------------------
# Binomial fits
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Fit:
    """A best estimate with the lowest and highest values still compatible with the data.

    Attributes:
        low: smallest hypothesis whose likelihood is within the chosen factor of the best.
        best: the maximum-likelihood hypothesis (for a binomial, ``hits / shots``).
        high: largest hypothesis whose likelihood is within the chosen factor of the best.
    """

    low: float
    best: float
    high: float

    def __iter__(self):
        return iter((self.low, self.best, self.high))


# sinter searches the hypothesis p on a grid of 1/100 of a hit: p = k / (100 * shots).
_SINTER_GRID = 100


def _sinter_log_likelihood(k: int, n: int, hits: int, log_choose: np.float32) -> np.float32:
    """ln P(Binomial(n, p) = hits) at p = k / (100 n), rounded the way sinter rounds it.

    sinter accumulates the three terms ``hits ln p``, ``misses ln(1-p)`` and
    ``ln C(n, hits)`` in a float32 (each partial sum formed in float64 and rounded to
    float32, the last added in float32). Reproducing that rounding is what makes the band
    edges equal to sinter's, because its search picks the grid point whose float32
    likelihood is nearest the target.
    """
    p = min(max(k / (_SINTER_GRID * n), 0.0), 1.0)
    misses = n - hits
    if (hits and p == 0.0) or (misses and p == 1.0):
        return np.float32(-np.inf)
    p_arr = np.array([p], dtype=np.float64)
    acc = np.float32(0.0)
    if p != 0.0:
        acc = np.float32(float(acc) + np.log(p_arr)[0] * float(hits))
    if p != 1.0:
        acc = np.float32(float(acc) + np.log1p(-p_arr)[0] * float(misses))
    return acc + log_choose


def _grid_search(func, lo: int, hi: int, target: np.float32) -> int:
    """Integer k in [lo, hi] whose func(k) is nearest ``target``, for func ascending.

    Bisection until the bracket has width 1 (an exact hit returns at once), then the
    endpoint with the smaller |func - target| (the lower one on a tie).
    """
    while hi > lo + 1:
        mid = (lo + hi) // 2
        value = func(mid)
        if value < target:
            lo = mid
        elif value > target:
            hi = mid
        else:
            return mid
    d_hi = func(hi) - target
    d_lo = func(lo) - target
    return hi if abs(d_hi) < abs(d_lo) else lo


def fit_binomial(*, num_shots: int, num_hits: int, max_likelihood_factor: float = 1e3) -> Fit:
    """Likelihood-ratio band for a binomial rate, numerically identical to ``sinter.fit_binomial``.

    ``best = hits / shots``; ``low`` and ``high`` are the smallest and largest rates ``p``
    with ``L(p) >= L(best) / max_likelihood_factor``, where
    ``L(p) = C(shots, hits) p^hits (1-p)^(shots-hits)``. This is a Bayes-factor band, not a
    Gaussian +-sigma interval; with the default factor 1000 it is a little wider than a
    99.9% interval.

    To give exactly the numbers ``sinter plot`` draws, the band edges are found the way
    sinter finds them: on a grid of 1/100 of a hit (``p = k / (100 shots)``) with the
    log-likelihood rounded to float32. So they inherit sinter's resolution: for very few
    hits ``low`` is coarse (2 hits in 1e8 shots gives ``low = 2e-10``; the exact edge is
    2.35e-10), and above ~1e5 hits the float32 rounding moves the edges by up to ~1e-3
    relative. Use :func:`binomial_likelihood_interval` for the exact float64 edges.

    Args:
        num_shots: shots that count (sinter uses ``shots - discards``); >= 0.
        num_hits: errors among them; ``0 <= num_hits <= num_shots``.
        max_likelihood_factor: Bayes factor >= 1 between the best and the edge hypotheses.

    Returns:
        ``Fit(low, best, high)`` with ``0 <= low <= best <= high <= 1``. With no shots,
        ``Fit(0, 0.5, 1)`` (sinter's convention).

    Raises:
        ValueError: ``max_likelihood_factor < 1``, negative counts or ``hits > shots``.
    """
    if not max_likelihood_factor >= 1:
        raise InputError(f"max_likelihood_factor={max_likelihood_factor} must be >= 1")
    num_shots = int(num_shots)
    num_hits = int(num_hits)
    if num_shots < 0 or num_hits < 0 or num_hits > num_shots:
        raise InputError(f"need 0 <= num_hits <= num_shots, got num_hits={num_hits}, num_shots={num_shots}")
    if num_shots == 0:
        return Fit(low=0.0, best=0.5, high=1.0)
    n, hits = num_shots, num_hits
    log_choose = np.float32(math.lgamma(n + 1) - math.lgamma(n - hits + 1) - math.lgamma(hits + 1))

    def ll(k: int) -> np.float32:
        return _sinter_log_likelihood(k, n, hits, log_choose)

    # Likelihood at the best p = hits/n, i.e. grid point k = 100 hits.
    target = ll(_SINTER_GRID * hits) - np.float32(math.log(max_likelihood_factor))
    k_low = _grid_search(ll, 0, _SINTER_GRID * hits, target)
    k_high = _grid_search(lambda k: -ll(k), _SINTER_GRID * hits, _SINTER_GRID * n, -target)
    return Fit(
        low=(k_low / _SINTER_GRID) / n,
        best=hits / n,
        high=(k_high / _SINTER_GRID) / n,
    )


def binomial_likelihood_interval(*, num_shots: int, num_hits: int, max_likelihood_factor: float = 1e3) -> Fit:
    """The band of :func:`fit_binomial` with its edges solved exactly in float64.

    Solves ``h ln p + m ln(1-p) = h ln b + m ln(1-b) - ln(factor)`` (``b = h/n``,
    ``m = n - h``) for p on each side of b with Brent's method (relative tolerance 1e-14).
    With ``h = 0`` this is ``high = 1 - factor^(-1/n)``.

    Args:
        num_shots: shots that count; >= 0.
        num_hits: errors among them.
        max_likelihood_factor: Bayes factor >= 1.

    Returns:
        ``Fit(low, best, high)``; ``Fit(0, 0.5, 1)`` with no shots.
    """
    from scipy.optimize import brentq
    from scipy.special import xlog1py, xlogy

    if not max_likelihood_factor >= 1:
        raise InputError(f"max_likelihood_factor={max_likelihood_factor} must be >= 1")
    n, h = int(num_shots), int(num_hits)
    if n < 0 or h < 0 or h > n:
        raise InputError(f"need 0 <= num_hits <= num_shots, got num_hits={h}, num_shots={n}")
    if n == 0:
        return Fit(low=0.0, best=0.5, high=1.0)
    best = h / n
    drop = math.log(max_likelihood_factor)
    if drop == 0:
        return Fit(low=best, best=best, high=best)
    peak = float(xlogy(h, best) + xlog1py(n - h, -best))

    def gap(p: float) -> float:
        return float(xlogy(h, p) + xlog1py(n - h, -p)) - peak + drop

    low = 0.0 if h == 0 else brentq(gap, 0.0, best, xtol=1e-300, rtol=1e-14)
    high = 1.0 if h == n else brentq(gap, best, 1.0, xtol=1e-300, rtol=1e-14)
    return Fit(low=float(low), best=best, high=float(high))


# ---------------------------------------------------------------------------------------
# Per-round rates
# ---------------------------------------------------------------------------------------

def _per_round_array(p_shot: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    # For s <= 1/2: P_round = (1 - (1 - 2s)^(1/r)) / 2 = -expm1(log1p(-2s) / r) / 2 (no
    # cancellation for small s). For s > 1/2: 1 - f(1 - s), as sinter does.
    flip = p_shot > 0.5
    s = np.where(flip, 1.0 - p_shot, p_shot)
    with np.errstate(divide="ignore"):
        q = -0.5 * np.expm1(np.log1p(-2.0 * s) / rounds)
    out = np.where(flip, 1.0 - q, q)
    return np.where(rounds == 1, p_shot, out)


def shot_error_rate_to_per_round(p_shot: Any, rounds: Any, *, values: float = 1) -> Any:
    """Convert a per-shot logical error rate into a per-round one.

    A shot of ``rounds`` rounds fails when an odd number of rounds flip the observable, so
    with independent rounds ``1 - 2 P_shot = (1 - 2 P_round)^rounds``, i.e.

        P_round = 1/2 - 1/2 (1 - 2 P_shot)^(1/rounds)        for P_shot <= 1/2,
        P_round = 1 - f(1 - P_shot)                          for P_shot > 1/2

    (above 1/2 the formula has no real solution; like ``sinter`` we mirror it so the map
    stays monotone and maps [0, 1] onto [0, 1]). With ``values = V`` observables that each
    fail independently and any failure counts (an OR), the shot rate is first split into a
    per-observable rate ``1 - (1 - P)^(1/V)``, converted, and recombined as
    ``1 - (1 - q)^V``. This is ``sinter.shot_error_rate_to_piece_error_rate(p_shot,
    pieces=rounds, values=values)``, computed with ``expm1``/``log1p`` so it stays accurate
    for tiny rates (sinter's direct power loses ~1e-16/P_shot relative precision).

    Args:
        p_shot: a float, a float array (any shape), or a :class:`Fit` (converted field by
            field; ``None`` fields stay ``None``). Values in [0, 1].
        rounds: rounds per shot, > 0 (float, or an array broadcastable against ``p_shot``).
        values: number of OR-ed observables, > 0.

    Returns:
        The same kind as ``p_shot``: float, float64 array, or :class:`Fit`. ``rounds == 1``
        returns ``p_shot`` unchanged.

    Raises:
        ValueError: a rate outside [0, 1] or ``rounds``/``values`` not > 0.
    """
    if isinstance(p_shot, Fit):
        conv = lambda v: None if v is None else shot_error_rate_to_per_round(v, rounds, values=values)  # noqa: E731
        return Fit(low=conv(p_shot.low), best=conv(p_shot.best), high=conv(p_shot.high))
    scalar = np.ndim(p_shot) == 0 and np.ndim(rounds) == 0
    s = np.asarray(p_shot, dtype=np.float64)
    r = np.asarray(rounds, dtype=np.float64)
    if np.any(~((s >= 0) & (s <= 1))):
        bad = s[~((s >= 0) & (s <= 1))] if s.ndim else s
        raise InputError(f"shot error rate must be in [0, 1], got {np.ravel(bad)[:5].tolist()}")
    if np.any(~(r > 0)):
        raise InputError(f"rounds must be > 0, got {np.ravel(r[~(r > 0)] if r.ndim else r)[:5].tolist()}")
    if not values > 0:
        raise InputError(f"values must be > 0, got {values}")
    s, r = np.broadcast_arrays(s, r)
    if values != 1:
        with np.errstate(divide="ignore"):
            per_value = -np.expm1(np.log1p(-s) / values)
        q = _per_round_array(per_value, r)
        with np.errstate(divide="ignore"):
            out = np.where(r == 1, s, -np.expm1(values * np.log1p(-q)))
    else:
        out = _per_round_array(s, r)
    return float(out) if scalar else out


# ---------------------------------------------------------------------------------------
# Rows -> curves
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Curve:
    """The points of one distance of one group (usually one decoder), sorted by p.

    Attributes:
        group: values of the grouping keys, e.g. ``("pymatching",)``.
        d: code distance.
        p: (K,) float64, ascending physical error rates (metadata ``x_key``).
        shots: (K,) int64, shots that count (``shots - discards``).
        errors: (K,) int64, logical errors.
        rounds: (K,) float64, rounds per shot (metadata ``r`` or ``rounds``), NaN if absent.
    """

    group: tuple
    d: int
    p: np.ndarray
    shots: np.ndarray
    errors: np.ndarray
    rounds: np.ndarray

    def rates(self, per_round: bool = False, errors: np.ndarray | None = None) -> np.ndarray:
        """Logical error rate per shot (or per round) of each point.

        Args:
            per_round: convert with :func:`shot_error_rate_to_per_round` using ``rounds``.
            errors: (..., K) int array of error counts to use instead of ``self.errors``
                (bootstrap resamples).

        Returns:
            (..., K) float64.

        Raises:
            ValueError: ``per_round`` and some point has no rounds in its metadata.
        """
        e = self.errors if errors is None else np.asarray(errors)
        shot_rate = e / self.shots
        if not per_round:
            return shot_rate
        if np.any(np.isnan(self.rounds)):
            missing = self.p[np.isnan(self.rounds)]
            raise InputError(
                f"per-round rates need 'r' or 'rounds' in json_metadata; {self.group} d={self.d} "
                f"has none at p={missing[:5].tolist()}"
            )
        return shot_error_rate_to_per_round(shot_rate, self.rounds)

    def rate_sigma(self, per_round: bool = False) -> np.ndarray:
        """(K,) float64 standard error of :meth:`rates`, never zero.

        ``sqrt(f (1 - f) / n)`` with ``f = (errors + 1/2) / (shots + 1)`` (so zero-error
        points still get a finite weight), mapped through the per-round conversion by a
        central difference when ``per_round``.
        """
        f = (self.errors + 0.5) / (self.shots + 1.0)
        sigma = np.sqrt(f * (1 - f) / self.shots)
        if not per_round:
            return sigma
        rate = self.errors / self.shots
        up = shot_error_rate_to_per_round(np.clip(rate + sigma, 0, 1), self.rounds)
        down = shot_error_rate_to_per_round(np.clip(rate - sigma, 0, 1), self.rounds)
        return np.maximum((up - down) / 2, 1e-300)

    def select(self, mask: np.ndarray) -> "Curve":
        """The sub-curve of the points where ``mask`` is true."""
        return dataclasses.replace(
            self, p=self.p[mask], shots=self.shots[mask], errors=self.errors[mask], rounds=self.rounds[mask]
        )


def _hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _metadata(row: StatsRow) -> Mapping[str, Any]:
    return row.json_metadata if isinstance(row.json_metadata, Mapping) else {}


def _group_value(row: StatsRow, key: str) -> Any:
    """``row.decoder`` for the key ``"decoder"``, else the metadata value (None if absent)."""
    if key == "decoder":
        return row.decoder
    return _hashable(_metadata(row).get(key))


def metadata_number(row: StatsRow, key: str, use: str) -> float:
    """``row.json_metadata[key]`` as a float (numbers, and text that spells one).

    Metadata read from file names keeps any value that is not a number as text (sinter's rule),
    so a CSV can hold ``p = "abc"``; using it as a number is a ``ValueError`` naming the key,
    the value, the row and ``use`` (what the number is for, e.g. ``"the x axis"``), instead of
    ``could not convert string to float``.
    """
    value = _metadata(row).get(key)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"json_metadata {key}={value!r} (row {row.strong_id[:12]}, decoder {row.decoder}) is not a number, "
            f"so it cannot be used as {use}; keep numeric rows with --filter, or use another key"
        ) from None


def _rounds_key(row: StatsRow) -> str | None:
    md = _metadata(row)
    return next((k for k in ("r", "rounds") if md.get(k) is not None), None)


def rounds_of(row: StatsRow) -> float:
    """The rounds per shot of ``row``, the ``r`` in a per-round rate: json_metadata ``r``, else ``rounds``.

    Raises:
        ValueError: the metadata has neither (the message names the row), or the value is not a number.
    """
    key = _rounds_key(row)
    if key is None:
        raise InputError(f"per-round rates need 'r' or 'rounds' in json_metadata; row {row.strong_id[:12]} "
                         f"({row.decoder}, {_metadata(row)}) has neither")
    return metadata_number(row, key, "the number of rounds of a per-round rate")


def _rounds_of(row: StatsRow) -> float:
    """:func:`rounds_of`, NaN where the metadata has no rounds."""
    return float("nan") if _rounds_key(row) is None else rounds_of(row)


def _as_rows(rows: Iterable[StatsRow] | Mapping[str, StatsRow]) -> list[StatsRow]:
    if isinstance(rows, Mapping):
        rows = rows.values()
    return list(merge_rows(rows).values())


def rows_to_curves(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    x_key: str = "p",
    d_key: str = "d",
    group_keys: Sequence[str] = ("decoder",),
) -> dict[tuple, list[Curve]]:
    """Arrange rows as curves: for each group (decoder), per distance, points sorted by p.

    Rows are merged by strong_id first (harmless on already merged rows). Rows without
    ``x_key`` or ``d_key`` in their metadata, or whose shots were all discarded, are skipped
    (logged).

    Args:
        rows: :class:`StatsRow` objects, or the dict :func:`~qdecode.sims.store.merge_rows` returns.
        x_key: metadata key of the physical error rate.
        d_key: metadata key of the distance.
        group_keys: keys that separate curves besides the distance; ``"decoder"`` means
            the decoder label, anything else a metadata key.

    Returns:
        ``{group tuple: [Curve, ...] sorted by d}``, groups in first-seen order.

    Raises:
        ValueError: no usable rows, or two rows of a group share (d, p) (they differ in a
            metadata key that is not in ``group_keys``; the message names it).
    """
    points: dict[tuple, dict[int, dict[float, StatsRow]]] = {}
    skipped = 0
    for row in _as_rows(rows):
        md = _metadata(row)
        if md.get(x_key) is None or md.get(d_key) is None or row.shots - row.discards <= 0:
            skipped += 1
            continue
        d_value = metadata_number(row, d_key, f"{d_key} in a threshold fit")
        d = int(d_value) if d_value.is_integer() else d_value
        x = metadata_number(row, x_key, f"{x_key} in a threshold fit")
        group = tuple(_group_value(row, k) for k in group_keys)
        by_x = points.setdefault(group, {}).setdefault(d, {})
        if x in by_x:
            other = by_x[x]
            diff = {
                k: (_metadata(other).get(k), md.get(k))
                for k in sorted(set(md) | set(_metadata(other)))
                if _metadata(other).get(k) != md.get(k)
            }
            raise InputError(
                f"two rows share {dict(zip(group_keys, group))}, {d_key}={d}, {x_key}={x} but differ in "
                f"{diff or 'nothing but strong_id'}; add the distinguishing key to group_keys "
                f"(e.g. group_keys={tuple(group_keys) + tuple(diff)[:1]!r}) or filter the rows"
            )
        by_x[x] = row
    if skipped:
        log.info("skipped %d row(s) without %r/%r metadata or with no kept shots", skipped, x_key, d_key)
    if not points:
        raise InputError(f"no rows with both {x_key!r} and {d_key!r} in json_metadata and shots > discards")
    result: dict[tuple, list[Curve]] = {}
    for group, by_d in points.items():
        curves = []
        for d in sorted(by_d):
            xs = sorted(by_d[d])
            rs = [by_d[d][x] for x in xs]
            curves.append(
                Curve(
                    group=group,
                    d=d,
                    p=np.array(xs, dtype=np.float64),
                    shots=np.array([r.shots - r.discards for r in rs], dtype=np.int64),
                    errors=np.array([r.errors for r in rs], dtype=np.int64),
                    rounds=np.array([_rounds_of(r) for r in rs], dtype=np.float64),
                )
            )
        result[group] = curves
    return result
