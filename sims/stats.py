"""Statistics of Monte-Carlo sweeps: binomial fits, per-round rates, thresholds, Lambda.

Everything here works on the merged :class:`~qdecode.sims.store.StatsRow` objects of a
sinter-format CSV and needs only numpy and scipy (no stim, no matplotlib), so old result
files can be re-analysed anywhere.

Contents:

* :func:`fit_binomial` -- the likelihood-ratio band sinter draws around every point, with
  the same numbers as ``sinter.fit_binomial`` (bit for bit, see its docstring), and
  :func:`binomial_likelihood_interval`, the same band computed exactly in float64.
* :func:`shot_error_rate_to_per_round` -- ``P_round = 1/2 - 1/2 (1 - 2 P_shot)^(1/rounds)``.
* :func:`rows_to_curves` -- merged rows to per-(group, d) arrays sorted by p.
* :func:`fss_threshold` -- finite-size-scaling fit ``P_L = A + B x + C x^2`` with
  ``x = (p - p_th) d^(1/nu)`` and a binomial bootstrap interval.
* :func:`pairwise_crossings` / :func:`pairwise_threshold` -- where adjacent distances cross,
  interpolating ln(LER) against ln(p).
* :func:`suppression_factors` -- ``Lambda = eps_d / eps_{d+2}`` from a weighted line fit of
  ``ln eps`` against ``d`` at each p below threshold, with a bootstrap interval.
* :func:`estimate_thresholds` and :func:`threshold_report` -- the above for every decoder
  (or any other grouping) of a stats file.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import warnings
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from qdecode.sims.store import StatsRow, merge_rows

log = logging.getLogger("qdecode.sims.stats")

__all__ = [
    "Fit",
    "fit_binomial",
    "binomial_likelihood_interval",
    "shot_error_rate_to_per_round",
    "Curve",
    "rows_to_curves",
    "ThresholdEstimate",
    "Crossing",
    "SuppressionFactor",
    "ThresholdReport",
    "fss_threshold",
    "pairwise_crossings",
    "pairwise_threshold",
    "suppression_factors",
    "estimate_thresholds",
    "threshold_report",
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
        raise ValueError(f"max_likelihood_factor={max_likelihood_factor} must be >= 1")
    num_shots = int(num_shots)
    num_hits = int(num_hits)
    if num_shots < 0 or num_hits < 0 or num_hits > num_shots:
        raise ValueError(f"need 0 <= num_hits <= num_shots, got num_hits={num_hits}, num_shots={num_shots}")
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
        raise ValueError(f"max_likelihood_factor={max_likelihood_factor} must be >= 1")
    n, h = int(num_shots), int(num_hits)
    if n < 0 or h < 0 or h > n:
        raise ValueError(f"need 0 <= num_hits <= num_shots, got num_hits={h}, num_shots={n}")
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
        raise ValueError(f"shot error rate must be in [0, 1], got {np.ravel(bad)[:5].tolist()}")
    if np.any(~(r > 0)):
        raise ValueError(f"rounds must be > 0, got {np.ravel(r[~(r > 0)] if r.ndim else r)[:5].tolist()}")
    if not values > 0:
        raise ValueError(f"values must be > 0, got {values}")
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
            raise ValueError(
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


def _rounds_of(row: StatsRow) -> float:
    md = _metadata(row)
    r = md.get("r", md.get("rounds"))
    return float("nan") if r is None else float(r)


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
        d_raw = md[d_key]
        d = int(d_raw) if float(d_raw) == int(float(d_raw)) else d_raw
        x = float(md[x_key])
        group = tuple(_group_value(row, k) for k in group_keys)
        by_x = points.setdefault(group, {}).setdefault(d, {})
        if x in by_x:
            other = by_x[x]
            diff = {
                k: (_metadata(other).get(k), md.get(k))
                for k in sorted(set(md) | set(_metadata(other)))
                if _metadata(other).get(k) != md.get(k)
            }
            raise ValueError(
                f"two rows share {dict(zip(group_keys, group))}, {d_key}={d}, {x_key}={x} but differ in "
                f"{diff or 'nothing but strong_id'}; add the distinguishing key to group_keys "
                f"(e.g. group_keys={tuple(group_keys) + tuple(diff)[:1]!r}) or filter the rows"
            )
        by_x[x] = row
    if skipped:
        log.info("skipped %d row(s) without %r/%r metadata or with no kept shots", skipped, x_key, d_key)
    if not points:
        raise ValueError(f"no rows with both {x_key!r} and {d_key!r} in json_metadata and shots > discards")
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


# ---------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ThresholdEstimate:
    """A threshold estimate with its interval.

    Attributes:
        p_th: estimated threshold (NaN when the curves do not cross in the data range).
        low, high: the ``confidence`` bootstrap percentile interval of ``p_th``.
        nu: finite-size-scaling exponent (NaN for ``method="pairwise"``).
        method: ``"fss"`` or ``"pairwise"``.
        group: the group (decoder) it belongs to.
        nu_low, nu_high: bootstrap interval of ``nu``.
        confidence: the interval's coverage, e.g. 0.95.
        distances: distances used.
        p_window: (min, max) p of the points used.
        num_points: points used.
        params: FSS coefficients ``{"A", "B", "C"}`` of ``P_L = A + B x + C x^2``.
        reduced_chi2: weighted chi^2 per degree of freedom of the FSS fit (about 1 if the
            model fits within binomial noise).
        n_bootstrap, n_bootstrap_failed: resamples drawn, and those whose fit failed.
        per_round: whether rates were per round.
        note: caveats ("no crossing in range ...", "p_th outside the fitted window", ...).
    """

    p_th: float
    low: float
    high: float
    nu: float
    method: str
    group: tuple = ()
    nu_low: float = float("nan")
    nu_high: float = float("nan")
    confidence: float = 0.95
    distances: tuple = ()
    p_window: tuple = (float("nan"), float("nan"))
    num_points: int = 0
    params: Mapping[str, float] = dataclasses.field(default_factory=dict)
    reduced_chi2: float = float("nan")
    n_bootstrap: int = 0
    n_bootstrap_failed: int = 0
    per_round: bool = False
    note: str = ""

    @property
    def found(self) -> bool:
        """True when a finite threshold was estimated."""
        return bool(np.isfinite(self.p_th))

    def __str__(self) -> str:
        if not self.found:
            return f"{self.method}: {self.note or 'no threshold'}"
        text = (
            f"p_th = {self.p_th:.4g} [{self.low:.4g}, {self.high:.4g}] "
            f"({self.confidence:.0%}, {self.method}"
        )
        if np.isfinite(self.nu):
            text += f", nu = {self.nu:.3g} [{self.nu_low:.3g}, {self.nu_high:.3g}]"
        text += ")"
        return text + (f"; {self.note}" if self.note else "")


@dataclasses.dataclass(frozen=True)
class Crossing:
    """Where the curves of two distances cross.

    Attributes:
        d_small, d_large: the two distances.
        p: crossing physical error rate, or None ("no crossing in range").
        group: the group (decoder).
        note: why there is no crossing, or how noisy the crossing is.
    """

    d_small: int
    d_large: int
    p: float | None
    group: tuple = ()
    note: str = ""


@dataclasses.dataclass(frozen=True)
class SuppressionFactor:
    """Error suppression factor ``Lambda = eps_d / eps_{d+2}`` at one physical error rate.

    Attributes:
        p: physical error rate.
        lambda_: ``exp(-2 slope)`` of the weighted line fit of ``ln eps`` against ``d``
            (NaN if fewer than two distances have errors).
        low, high: bootstrap ``confidence`` interval of ``lambda_``.
        slope: fitted ``d ln(eps) / d d``.
        distances: distances used (those with at least one error at this p).
        group: the group (decoder).
        note: caveats (distances without errors, ``Lambda < 1``...).
    """

    p: float
    lambda_: float
    low: float
    high: float
    slope: float
    distances: tuple
    group: tuple = ()
    note: str = ""


# ---------------------------------------------------------------------------------------
# Pairwise crossings
# ---------------------------------------------------------------------------------------


def _log_points(curve: Curve, per_round: bool, errors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ln p, ln rate) of the points with at least one error."""
    e = curve.errors if errors is None else errors
    keep = e > 0
    rate = curve.rates(per_round, errors=e)
    return np.log(curve.p[keep]), np.log(rate[keep])


def _crossing_of(
    lp1: np.ndarray, ly1: np.ndarray, lp2: np.ndarray, ly2: np.ndarray
) -> tuple[float | None, str]:
    """Crossing of curve 2 (larger d) over curve 1 in log-log space.

    Both curves are interpolated (linearly in ln p) onto the union of their p values inside
    the common range; ``g = ln eps_2 - ln eps_1`` is negative below threshold (the larger
    code is better) and positive above it. Among the segments where g goes from <= 0 to > 0
    the one that leaves the fewest points on the wrong side is taken, and its zero found
    by linear interpolation.
    """
    if len(lp1) < 1 or len(lp2) < 1:
        return None, "no crossing in range: a curve has no points with errors"
    lo, hi = max(lp1[0], lp2[0]), min(lp1[-1], lp2[-1])
    if hi < lo:
        return None, "no crossing in range: the curves share no p range with errors"
    grid = np.union1d(lp1, lp2)
    grid = grid[(grid >= lo) & (grid <= hi)]
    if len(grid) < 2:
        return None, f"no crossing in range: only {len(grid)} common p with errors"
    g = np.interp(grid, lp2, ly2) - np.interp(grid, lp1, ly1)
    p_range = f"[{math.exp(grid[0]):.3g}, {math.exp(grid[-1]):.3g}]"
    candidates = [i for i in range(len(g) - 1) if g[i] <= 0 < g[i + 1]]
    if not candidates:
        if np.all(g <= 0):
            return None, f"no crossing in range {p_range}: larger d is better everywhere (threshold above range?)"
        if np.all(g > 0):
            return None, f"no crossing in range {p_range}: larger d is worse everywhere (threshold below range?)"
        return None, f"no crossing in range {p_range}: curves only cross the wrong way (larger d better above)"
    wrong = [int(np.sum(g[: i + 1] > 0) + np.sum(g[i + 1 :] <= 0)) for i in candidates]
    i = candidates[int(np.argmin(wrong))]
    t = g[i] / (g[i] - g[i + 1])
    p = float(math.exp(grid[i] + t * (grid[i + 1] - grid[i])))
    n_wrong = min(wrong)
    note = f"noisy: {n_wrong} of {len(g)} points on the wrong side" if n_wrong else ""
    return p, note


def _check_distances(curves: Sequence[Curve], need: int, what: str) -> list[Curve]:
    curves = sorted((c for c in curves if len(c.p)), key=lambda c: c.d)
    ds = [c.d for c in curves]
    if len(set(ds)) != len(ds):
        raise ValueError(f"{what}: curves of one group must have distinct distances, got d={ds}")
    if len(curves) < need:
        group = curves[0].group if curves else ()
        raise ValueError(
            f"{what} needs at least {need} distances with data, got {len(curves)} (d={ds}) for group {group!r}"
        )
    return curves


def pairwise_crossings(curves: Sequence[Curve], *, per_round: bool = False) -> list[Crossing]:
    """Crossing point of each pair of adjacent distances.

    ln(LER) is interpolated linearly in ln(p) (points with zero errors are left out); the
    crossing is where the larger distance stops being better.

    Args:
        curves: the curves of one group (one decoder), any order.
        per_round: use per-round rates (the crossing hardly moves, but use the same rates
            as the plot).

    Returns:
        One :class:`Crossing` per adjacent pair (d_i, d_{i+1}) in increasing d; ``p`` is
        None with a ``note`` "no crossing in range ..." when they do not cross.

    Raises:
        ValueError: fewer than two distances.
    """
    curves = _check_distances(curves, 2, "pairwise crossings")
    return _pairwise(curves, per_round, None)


def _pairwise(curves: Sequence[Curve], per_round: bool, errors: Sequence[np.ndarray] | None) -> list[Crossing]:
    logs = [_log_points(c, per_round, None if errors is None else errors[i]) for i, c in enumerate(curves)]
    out = []
    for i in range(len(curves) - 1):
        p, note = _crossing_of(*logs[i], *logs[i + 1])
        out.append(Crossing(d_small=curves[i].d, d_large=curves[i + 1].d, p=p, group=curves[i].group, note=note))
    return out


def _bootstrap_errors(curves: Sequence[Curve], rng: np.random.Generator) -> list[np.ndarray]:
    """One binomial resample of every point's errors: Binomial(shots, errors / shots)."""
    return [rng.binomial(c.shots, c.errors / c.shots) for c in curves]


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    samples = samples[np.isfinite(samples)]
    if len(samples) == 0:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(samples, [alpha, 1 - alpha])
    return float(lo), float(hi)


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def pairwise_threshold(
    curves: Sequence[Curve],
    *,
    per_round: bool = False,
    n_bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> ThresholdEstimate:
    """Cheap threshold estimate: the geometric median of the adjacent-pair crossings.

    ``p_th = exp(median(ln p_cross))`` over the adjacent pairs that cross; the interval is
    the bootstrap percentile interval of the same statistic, each resample drawing every
    point's errors from ``Binomial(shots, errors/shots)``. Crossings drift with d (finite
    size effects), so prefer :func:`fss_threshold` when three or more distances exist.

    Args:
        curves: the curves of one group (one decoder).
        per_round: use per-round rates.
        n_bootstrap: number of resamples.
        seed: seed of the resampling generator (``np.random.default_rng(seed)``).
        confidence: coverage of the interval.

    Returns:
        :class:`ThresholdEstimate` with ``method="pairwise"``, ``nu = NaN``; when no pair
        crosses, ``p_th = NaN`` and the ``note`` says "no crossing in range ...".

    Raises:
        ValueError: fewer than two distances, or a bad ``confidence``.
    """
    _check_confidence(confidence)
    curves = _check_distances(curves, 2, "pairwise threshold")
    crossings = _pairwise(curves, per_round, None)
    ds = tuple(c.d for c in curves)
    window = (float(min(c.p[0] for c in curves)), float(max(c.p[-1] for c in curves)))
    base = dict(
        method="pairwise",
        group=curves[0].group,
        confidence=confidence,
        distances=ds,
        p_window=window,
        num_points=int(sum(len(c.p) for c in curves)),
        per_round=per_round,
    )
    found = [c.p for c in crossings if c.p is not None]
    if not found:
        notes = "; ".join(f"d={c.d_small}/{c.d_large}: {c.note}" for c in crossings)
        return ThresholdEstimate(p_th=float("nan"), low=float("nan"), high=float("nan"), nu=float("nan"),
                                 note=f"no crossing in range ({notes})", **base)
    p_th = float(np.exp(np.median(np.log(found))))
    rng = np.random.default_rng(seed)
    samples = np.full(n_bootstrap, np.nan)
    for b in range(n_bootstrap):
        ps = [c.p for c in _pairwise(curves, per_round, _bootstrap_errors(curves, rng)) if c.p is not None]
        if ps:
            samples[b] = np.exp(np.median(np.log(ps)))
    failed = int(np.sum(~np.isfinite(samples)))
    low, high = _percentile_interval(samples, confidence)
    notes = [f"d={c.d_small}/{c.d_large}: {c.note}" for c in crossings if c.note]
    if failed:
        notes.append(f"{failed}/{n_bootstrap} resamples had no crossing")
    return ThresholdEstimate(p_th=p_th, low=low, high=high, nu=float("nan"), n_bootstrap=n_bootstrap,
                             n_bootstrap_failed=failed, note="; ".join(notes), **base)


# ---------------------------------------------------------------------------------------
# Finite-size scaling
# ---------------------------------------------------------------------------------------


def _fss_model(
    pd: tuple[np.ndarray, np.ndarray], p_th: float, inv_nu: float, a: float, b: float, c: float
) -> np.ndarray:
    # u = x / p_th = (p / p_th - 1) d^(1/nu); fitting (a, b, c) = (A, B p_th, C p_th^2)
    # keeps all parameters O(1) whatever the scale of p.
    p, d = pd
    u = (p / p_th - 1.0) * d**inv_nu
    return a + b * u + c * u * u


def _select_window(
    curves: Sequence[Curve], p0: float, window_factor: float, p_window: tuple[float, float] | None
) -> list[Curve]:
    out = []
    for c in curves:
        if p_window is not None:
            mask = (c.p >= p_window[0]) & (c.p <= p_window[1])
        else:
            dist = np.abs(np.log(c.p / p0))
            mask = dist <= math.log(window_factor) * (1 + 1e-9)
            if mask.sum() < 3:  # a coarse p grid: take the three nearest points instead
                mask = np.zeros(len(c.p), dtype=bool)
                mask[np.argsort(dist, kind="stable")[:3]] = True
        if mask.any():
            out.append(c.select(mask))
    return out


def _fit_fss_once(p, d, y, sigma, start) -> np.ndarray | None:
    from scipy.optimize import curve_fit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            params, _ = curve_fit(_fss_model, (p, d), y, p0=start, sigma=sigma, absolute_sigma=False, maxfev=4000)
        except (RuntimeError, ValueError, FloatingPointError):
            return None
    if not np.all(np.isfinite(params)) or params[0] <= 0 or params[1] <= 0:
        return None
    return params


def _chi2(params, p, d, y, sigma) -> float:
    return float(np.sum(((_fss_model((p, d), *params) - y) / sigma) ** 2))


def fss_threshold(
    curves: Sequence[Curve],
    *,
    per_round: bool = False,
    p_window: tuple[float, float] | None = None,
    window_factor: float = 1.5,
    n_bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    nu_guess: float = 1.0,
) -> ThresholdEstimate:
    """Finite-size-scaling threshold fit with a binomial bootstrap interval.

    Near threshold the logical error rate of distance d is a function of the rescaled
    distance from threshold only::

        x = (p - p_th) d^(1/nu),        P_L(p, d) = A + B x + C x^2

    The five parameters (p_th, nu, A, B, C) are fitted with ``scipy.optimize.curve_fit``
    (weights 1/sigma from the binomial standard error of each point) to the points near
    the crossing. The interval comes from a parametric bootstrap: each resample draws every
    point's errors from ``Binomial(shots, errors/shots)`` and refits; ``low``/``high`` are
    the percentiles of the refitted p_th.

    The window: by default the points with ``p0 / window_factor <= p <= p0 * window_factor``
    (at least the three nearest per distance), ``p0`` being the geometric median of the
    adjacent-pair crossings (:func:`pairwise_crossings`); or an explicit ``p_window``.

    Args:
        curves: the curves of one group (one decoder), at least three distances.
        per_round: fit per-round rates (``r``/``rounds`` metadata needed).
        p_window: (p_min, p_max) of the points to fit, overriding the automatic window.
        window_factor: > 1, half-width of the automatic window as a factor on p.
        n_bootstrap: number of resamples (0 for no interval).
        seed: seed of the resampling generator (``np.random.default_rng(seed)``).
        confidence: coverage of the interval, in (0, 1).
        nu_guess: starting value of nu (fits also start from 0.5, 1.5 and 2.5 times it).

    Returns:
        :class:`ThresholdEstimate` with ``method="fss"``. When no adjacent pair crosses (and
        no ``p_window`` is given), ``p_th = NaN`` with ``note`` "no crossing in range ...".
        A fitted p_th outside the fitted window is kept but flagged in ``note``.

    Raises:
        ValueError: fewer than three distances, fewer than six points in the window (five
            parameters), a bad window/confidence, or a fit that does not converge.
    """
    _check_confidence(confidence)
    if not window_factor > 1:
        raise ValueError(f"window_factor must be > 1, got {window_factor}")
    curves = _check_distances(curves, 3, "finite-size-scaling threshold fit")
    group = curves[0].group
    crossings = _pairwise(curves, per_round, None)
    found = [c.p for c in crossings if c.p is not None]
    nan = float("nan")
    if p_window is not None:
        if not 0 < p_window[0] < p_window[1]:
            raise ValueError(f"p_window must be (p_min, p_max) with 0 < p_min < p_max, got {p_window}")
        inside = [p for p in found if p_window[0] <= p <= p_window[1]]
        p0 = float(np.exp(np.median(np.log(inside)))) if inside else math.sqrt(p_window[0] * p_window[1])
    elif found:
        p0 = float(np.exp(np.median(np.log(found))))
    else:
        notes = "; ".join(f"d={c.d_small}/{c.d_large}: {c.note}" for c in crossings)
        return ThresholdEstimate(
            p_th=nan, low=nan, high=nan, nu=nan, method="fss", group=group, confidence=confidence,
            distances=tuple(c.d for c in curves), per_round=per_round, note=f"no crossing in range ({notes})",
        )
    used = _select_window(curves, p0, window_factor, p_window)
    ds = tuple(c.d for c in used)
    if len(used) < 3:
        raise ValueError(
            f"finite-size-scaling threshold fit needs at least 3 distances in the window, got d={list(ds)} "
            f"for group {group!r} (window around p0={p0:.4g})"
        )
    p = np.concatenate([c.p for c in used])
    d = np.concatenate([np.full(len(c.p), float(c.d)) for c in used])
    shots = np.concatenate([c.shots for c in used])
    errors = np.concatenate([c.errors for c in used])
    y = np.concatenate([c.rates(per_round) for c in used])
    sigma = np.concatenate([c.rate_sigma(per_round) for c in used])
    if len(p) < 6:
        raise ValueError(
            f"finite-size-scaling threshold fit needs at least 6 points in the window (5 parameters), got "
            f"{len(p)} at p in [{p.min():.4g}, {p.max():.4g}] for group {group!r}; widen p_window/window_factor "
            f"or sample more p values near the crossing"
        )

    best, best_chi2 = None, math.inf
    for scale in (1.0, 0.5, 1.5, 2.5):
        inv_nu = 1.0 / (nu_guess * scale)
        u0 = (p / p0 - 1.0) * d**inv_nu
        c2, c1, c0 = np.polyfit(u0, y, 2, w=1 / sigma)
        params = _fit_fss_once(p, d, y, sigma, [p0, inv_nu, c0, c1, c2])
        if params is not None:
            chi2 = _chi2(params, p, d, y, sigma)
            if chi2 < best_chi2:
                best, best_chi2 = params, chi2
    if best is None:
        raise ValueError(
            f"finite-size-scaling fit did not converge for group {group!r} ({len(p)} points, d={list(ds)}, "
            f"p in [{p.min():.4g}, {p.max():.4g}]); try p_window or nu_guess"
        )
    p_th, inv_nu, a, b, c = (float(v) for v in best)

    rng = np.random.default_rng(seed)
    boot = np.full((n_bootstrap, 2), np.nan)
    rounds = np.concatenate([cv.rounds for cv in used])
    for i in range(n_bootstrap):
        y_b = rng.binomial(shots, errors / shots) / shots
        if per_round:
            y_b = shot_error_rate_to_per_round(y_b, rounds)
        params = _fit_fss_once(p, d, y_b, sigma, best)
        if params is not None:
            boot[i] = params[0], 1.0 / params[1]
    failed = int(np.sum(~np.isfinite(boot[:, 0])))
    low, high = _percentile_interval(boot[:, 0], confidence)
    nu_low, nu_high = _percentile_interval(boot[:, 1], confidence)

    notes = []
    if not p.min() <= p_th <= p.max():
        notes.append(f"p_th={p_th:.4g} outside the fitted window [{p.min():.4g}, {p.max():.4g}]")
    if n_bootstrap and failed > 0.1 * n_bootstrap:
        notes.append(f"{failed}/{n_bootstrap} bootstrap fits failed")
    dof = len(p) - 5
    red_chi2 = best_chi2 / dof if dof > 0 else nan
    if dof > 0 and red_chi2 > 3:
        notes.append(f"reduced chi2 = {red_chi2:.3g}: the quadratic model fits poorly, narrow the window")
    return ThresholdEstimate(
        p_th=p_th,
        low=low,
        high=high,
        nu=1.0 / inv_nu,
        method="fss",
        group=group,
        nu_low=nu_low,
        nu_high=nu_high,
        confidence=confidence,
        distances=ds,
        p_window=(float(p.min()), float(p.max())),
        num_points=int(len(p)),
        params={"A": a, "B": b / p_th, "C": c / p_th**2},
        reduced_chi2=red_chi2,
        n_bootstrap=n_bootstrap,
        n_bootstrap_failed=failed,
        per_round=per_round,
        note="; ".join(notes),
    )


# ---------------------------------------------------------------------------------------
# Suppression factor
# ---------------------------------------------------------------------------------------


def _weighted_slopes(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares slopes of y against x along the last axis; NaN if < 2 distinct x."""
    sw = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = (w * x).sum(axis=-1) / sw
        ym = (w * y).sum(axis=-1) / sw
        dx = x - xm[..., None]
        sxx = (w * dx * dx).sum(axis=-1)
        sxy = (w * dx * (y - ym[..., None])).sum(axis=-1)
        slope = sxy / sxx
    ndist = (w > 0).sum(axis=-1)
    return np.where((ndist >= 2) & (sxx > 0), slope, np.nan)


def suppression_factors(
    curves: Sequence[Curve],
    *,
    per_round: bool = False,
    p_th: float | None = None,
    n_bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[SuppressionFactor]:
    """Error suppression factor ``Lambda = eps_d / eps_{d+2}`` at each physical error rate.

    Below threshold ``eps_d ~ A Lambda^(-(d+1)/2)``, so ``ln eps_d`` is linear in d with
    slope ``-ln(Lambda)/2``. At each p the line is fitted by weighted least squares over the
    distances with at least one error (weight ``errors / (1 - rate)``, the inverse variance
    of ``ln(rate)``), and ``Lambda = exp(-2 slope)``. Zero-error points are left out of the
    fit (and named in ``note``). The interval is the bootstrap percentile interval: every
    point's errors redrawn from ``Binomial(shots, errors/shots)`` and the fit repeated
    (resampled zero-error points drop out of that resample).

    Args:
        curves: the curves of one group (one decoder), at least two distances.
        per_round: use per-round rates (Google's Lambda is per round).
        p_th: if given, only p < p_th are reported.
        n_bootstrap: number of resamples (0 for no interval).
        seed: seed of ``np.random.default_rng``.
        confidence: coverage of the interval.

    Returns:
        One :class:`SuppressionFactor` per p (ascending) present at two or more distances;
        where fewer than two of them have errors, ``lambda_`` is NaN and ``note`` says so.

    Raises:
        ValueError: fewer than two distances, or a bad ``confidence``.
    """
    _check_confidence(confidence)
    curves = _check_distances(curves, 2, "suppression factor fit")
    group = curves[0].group
    all_p = np.unique(np.concatenate([c.p for c in curves]))
    if p_th is not None:
        all_p = all_p[all_p < p_th]
    rng = np.random.default_rng(seed)
    out = []
    for p in all_p:
        ds, shots, errors, rounds = [], [], [], []
        for c in curves:
            idx = np.flatnonzero(np.isclose(c.p, p, rtol=1e-9, atol=0))
            if len(idx):
                j = idx[0]
                ds.append(c.d)
                shots.append(c.shots[j])
                errors.append(c.errors[j])
                rounds.append(c.rounds[j])
        if len(ds) < 2:
            continue
        x = np.array(ds, dtype=np.float64)
        n = np.array(shots, dtype=np.float64)
        e = np.array(errors, dtype=np.int64)
        r = np.array(rounds, dtype=np.float64)
        if per_round and np.any(np.isnan(r)):
            raise ValueError(f"per-round rates need 'r' or 'rounds' in json_metadata; group {group!r} p={p} lacks it")

        def fit(err: np.ndarray) -> np.ndarray:
            shot_rate = err / n
            rate = shot_error_rate_to_per_round(shot_rate, r) if per_round else shot_rate
            ok = err > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.where(ok, np.log(np.where(ok, rate, 1.0)), 0.0)
                w = np.where(ok, err / np.maximum(1.0 - shot_rate, 1e-12), 0.0)
            return _weighted_slopes(np.broadcast_to(x, y.shape), y, w)

        used = tuple(int(dd) for dd, ee in zip(ds, e) if ee > 0)
        zero = [dd for dd, ee in zip(ds, e) if ee == 0]
        notes = [f"d={zero} have no errors (left out)"] if zero else []
        slope = float(fit(e))
        if not np.isfinite(slope):
            out.append(SuppressionFactor(p=float(p), lambda_=float("nan"), low=float("nan"), high=float("nan"),
                                         slope=float("nan"), distances=used, group=group,
                                         note="; ".join(notes + [f"fewer than 2 distances with errors "
                                                                 f"(d={list(used)})"])))
            continue
        lam = math.exp(-2 * slope)
        low = high = float("nan")
        if n_bootstrap:
            e_b = rng.binomial(n.astype(np.int64), e / n, size=(n_bootstrap, len(n)))
            lam_b = np.exp(-2 * fit(e_b))
            low, high = _percentile_interval(lam_b, confidence)
        if lam < 1:
            notes.append("Lambda < 1: above threshold")
        out.append(SuppressionFactor(p=float(p), lambda_=lam, low=low, high=high, slope=slope, distances=used,
                                     group=group, note="; ".join(notes)))
    return out


# ---------------------------------------------------------------------------------------
# Per-group entry points
# ---------------------------------------------------------------------------------------


def estimate_thresholds(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    method: str = "fss",
    per_round: bool = False,
    x_key: str = "p",
    d_key: str = "d",
    group_keys: Sequence[str] = ("decoder",),
    **kwargs: Any,
) -> dict[tuple, ThresholdEstimate]:
    """Threshold of every group (decoder) of a stats file.

    Args:
        rows: stats rows (merged or not) or the dict of :func:`~qdecode.sims.store.merge_rows`.
        method: ``"fss"`` (:func:`fss_threshold`) or ``"pairwise"`` (:func:`pairwise_threshold`).
        per_round: use per-round rates.
        x_key, d_key, group_keys: see :func:`rows_to_curves`.
        **kwargs: passed on to the method (``n_bootstrap``, ``seed``, ``confidence``,
            ``p_window``...).

    Returns:
        ``{group tuple: ThresholdEstimate}``.

    Raises:
        ValueError: unknown method, or a group the method cannot handle (too few distances...).
    """
    fn = {"fss": fss_threshold, "pairwise": pairwise_threshold}.get(method)
    if fn is None:
        raise ValueError(f"unknown threshold method {method!r}; use 'fss' or 'pairwise'")
    curves = rows_to_curves(rows, x_key=x_key, d_key=d_key, group_keys=group_keys)
    return {g: fn(cs, per_round=per_round, **kwargs) for g, cs in curves.items()}


@dataclasses.dataclass(frozen=True)
class ThresholdReport:
    """Everything :func:`threshold_report` finds for one group.

    Attributes:
        group: the group (decoder).
        distances: distances present.
        crossings: adjacent-pair crossings (empty with one distance).
        threshold: the FSS estimate (pairwise with exactly two distances), or None.
        suppression: Lambda per p below the threshold (all p if no threshold).
        errors: why a part could not be computed.
    """

    group: tuple
    distances: tuple
    crossings: list
    threshold: ThresholdEstimate | None
    suppression: list
    errors: list

    def format(self) -> str:
        """A human-readable multi-line summary."""
        lines = [f"group {', '.join(map(str, self.group))}: d = {', '.join(map(str, self.distances))}"]
        for c in self.crossings:
            where = f"p = {c.p:.4g}" if c.p is not None else "none"
            lines.append(f"  crossing d={c.d_small}/{c.d_large}: {where}" + (f" ({c.note})" if c.note else ""))
        if self.threshold is not None:
            lines.append(f"  threshold: {self.threshold}")
        for s in self.suppression:
            if np.isfinite(s.lambda_):
                lines.append(f"  Lambda(p={s.p:.4g}) = {s.lambda_:.3g} [{s.low:.3g}, {s.high:.3g}]"
                             + (f" ({s.note})" if s.note else ""))
            else:
                lines.append(f"  Lambda(p={s.p:.4g}): n/a ({s.note})")
        lines.extend(f"  ! {e}" for e in self.errors)
        return "\n".join(lines)


def threshold_report(
    rows: Iterable[StatsRow] | Mapping[str, StatsRow],
    *,
    per_round: bool = False,
    x_key: str = "p",
    d_key: str = "d",
    group_keys: Sequence[str] = ("decoder",),
    n_bootstrap: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[tuple, ThresholdReport]:
    """Crossings, threshold and Lambda for every group, never raising for one bad group.

    Groups with three or more distances get an FSS threshold, groups with two (or whose
    FSS fit fails) a pairwise one; Lambda is reported below the threshold found (or at every p). A part that cannot
    be computed leaves its error message in ``ThresholdReport.errors``.

    Returns:
        ``{group tuple: ThresholdReport}``.

    Raises:
        ValueError: no usable rows at all (see :func:`rows_to_curves`).
    """
    reports = {}
    common = dict(per_round=per_round, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)
    for group, curves in rows_to_curves(rows, x_key=x_key, d_key=d_key, group_keys=group_keys).items():
        errors: list[str] = []
        crossings: list[Crossing] = []
        estimate = None
        lambdas: list[SuppressionFactor] = []
        ds = tuple(c.d for c in curves)
        try:
            crossings = pairwise_crossings(curves, per_round=per_round)
        except ValueError as exc:
            errors.append(str(exc))
        if len(curves) >= 3:
            try:
                estimate = fss_threshold(curves, **common)
            except ValueError as exc:
                errors.append(f"{exc}; falling back to the pairwise estimate")
        if estimate is None and len(curves) >= 2:
            try:
                estimate = pairwise_threshold(curves, **common)
            except ValueError as exc:
                errors.append(str(exc))
        try:
            p_th = estimate.p_th if estimate is not None and estimate.found else None
            lambdas = suppression_factors(curves, p_th=p_th, **common)
        except ValueError as exc:
            errors.append(str(exc))
        reports[group] = ThresholdReport(group, ds, crossings, estimate, lambdas, errors)
    return reports
