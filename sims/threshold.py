"""Thresholds and error suppression of Monte-Carlo sweeps: crossings, FSS fits, Lambda.

Works on the per-distance :class:`~qdecode.sims.stats.Curve` objects of
:func:`~qdecode.sims.stats.rows_to_curves` and needs only numpy and scipy (no stim, no
matplotlib), so old result files can be re-analysed anywhere.

Contents:

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
import math
import warnings
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from qdecode.errors import InputError
from qdecode.sims.stats import Curve, rows_to_curves, shot_error_rate_to_per_round
from qdecode.sims.store import StatsRow

__all__ = [
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
            f"({self.confidence:.0%} bootstrap percentile interval, {self.method}"
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
    """(ln p, ln rate) of the points with at least one error and p > 0 (a p = 0 sanity point has no
    ln p: it cannot be on either side of a crossing)."""
    e = curve.errors if errors is None else errors
    keep = (e > 0) & (curve.p > 0)
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
        raise InputError(f"{what}: curves of one group must have distinct distances, got d={ds}")
    if len(curves) < need:
        group = curves[0].group if curves else ()
        raise InputError(
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
        raise InputError(f"confidence must be in (0, 1), got {confidence}")


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
            # distance from p0 in ln p; p <= 0 (a p = 0 sanity point) is infinitely far, never in the window
            dist = np.full(len(c.p), np.inf)
            positive = c.p > 0
            dist[positive] = np.abs(np.log(c.p[positive] / p0))
            mask = dist <= math.log(window_factor) * (1 + 1e-9)
            if mask.sum() < 3:  # a coarse p grid: take the three nearest points instead
                mask = np.zeros(len(c.p), dtype=bool)
                mask[np.argsort(dist, kind="stable")[:min(3, int(positive.sum()))]] = True
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


def _fss_centre(crossings: Sequence[Crossing], p_window: tuple[float, float] | None) -> float | None:
    """The window's centre p0: geometric median of the pair crossings (those in ``p_window``); None without any."""
    found = [c.p for c in crossings if c.p is not None]
    if p_window is not None:
        if not 0 < p_window[0] < p_window[1]:
            raise InputError(f"p_window must be (p_min, p_max) with 0 < p_min < p_max, got {p_window}")
        inside = [p for p in found if p_window[0] <= p <= p_window[1]]
        return float(np.exp(np.median(np.log(inside)))) if inside else math.sqrt(p_window[0] * p_window[1])
    if found:
        return float(np.exp(np.median(np.log(found))))
    return None


class _FssPoints(NamedTuple):
    """The curves in the fit window and their points, concatenated: p, d, shots, errors, rate, sigma (``(N,)``)."""

    used: list[Curve]
    p: np.ndarray
    d: np.ndarray
    shots: np.ndarray
    errors: np.ndarray
    y: np.ndarray
    sigma: np.ndarray


def _fss_points(curves: Sequence[Curve], p0: float, window_factor: float, p_window: tuple[float, float] | None,
                per_round: bool) -> _FssPoints:
    """The points of the fit window around ``p0``; refuses fewer than 3 distances or 6 points there."""
    group = curves[0].group
    used = _select_window(curves, p0, window_factor, p_window)
    if len(used) < 3:
        raise InputError(
            f"finite-size-scaling threshold fit needs at least 3 distances in the window, got "
            f"d={[c.d for c in used]} for group {group!r} (window around p0={p0:.4g})"
        )
    pts = _FssPoints(
        used=used,
        p=np.concatenate([c.p for c in used]),
        d=np.concatenate([np.full(len(c.p), float(c.d)) for c in used]),
        shots=np.concatenate([c.shots for c in used]),
        errors=np.concatenate([c.errors for c in used]),
        y=np.concatenate([c.rates(per_round) for c in used]),
        sigma=np.concatenate([c.rate_sigma(per_round) for c in used]),
    )
    if len(pts.p) < 6:
        raise InputError(
            f"finite-size-scaling threshold fit needs at least 6 points in the window (5 parameters), got "
            f"{len(pts.p)} at p in [{pts.p.min():.4g}, {pts.p.max():.4g}] for group {group!r}; widen "
            f"p_window/window_factor or sample more p values near the crossing"
        )
    return pts


def _fss_best_fit(pts: _FssPoints, p0: float, nu_guess: float) -> tuple[np.ndarray, float]:
    """The lowest-chi2 fit started from nu = ``nu_guess`` x (1, 0.5, 1.5, 2.5): its ``(5,)`` parameters and chi2."""
    p, d, y, sigma = pts.p, pts.d, pts.y, pts.sigma
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
        raise InputError(
            f"finite-size-scaling fit did not converge for group {pts.used[0].group!r} ({len(p)} points, "
            f"d={[c.d for c in pts.used]}, p in [{p.min():.4g}, {p.max():.4g}]); try p_window or nu_guess"
        )
    return best, best_chi2


def _fss_bootstrap(pts: _FssPoints, best: np.ndarray, per_round: bool, n_bootstrap: int, seed: int) -> np.ndarray:
    """Refitted (p_th, nu) of binomial resamples: ``(n_bootstrap, 2)`` float64, NaN rows where a fit failed."""
    rng = np.random.default_rng(seed)
    boot = np.full((n_bootstrap, 2), np.nan)
    rounds = np.concatenate([cv.rounds for cv in pts.used])
    for i in range(n_bootstrap):
        y_b = rng.binomial(pts.shots, pts.errors / pts.shots) / pts.shots
        if per_round:
            y_b = shot_error_rate_to_per_round(y_b, rounds)
        params = _fit_fss_once(pts.p, pts.d, y_b, pts.sigma, best)
        if params is not None:
            boot[i] = params[0], 1.0 / params[1]
    return boot


def _fss_notes(p: np.ndarray, p_th: float, n_bootstrap: int, failed: int, red_chi2: float) -> list[str]:
    """What to doubt in a fit: p_th outside the window ``p`` (N,), many failed resamples, a poor reduced chi2."""
    notes = []
    if not p.min() <= p_th <= p.max():
        notes.append(f"p_th={p_th:.4g} outside the fitted window [{p.min():.4g}, {p.max():.4g}]")
    if n_bootstrap and failed > 0.1 * n_bootstrap:
        notes.append(f"{failed}/{n_bootstrap} bootstrap fits failed")
    if red_chi2 > 3:  # NaN (no degrees of freedom) compares False
        notes.append(f"reduced chi2 = {red_chi2:.3g}: the quadratic model fits poorly, narrow the window")
    return notes


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
        raise InputError(f"window_factor must be > 1, got {window_factor}")
    curves = _check_distances(curves, 3, "finite-size-scaling threshold fit")
    group = curves[0].group
    crossings = _pairwise(curves, per_round, None)
    nan = float("nan")
    p0 = _fss_centre(crossings, p_window)
    if p0 is None:
        notes = "; ".join(f"d={c.d_small}/{c.d_large}: {c.note}" for c in crossings)
        return ThresholdEstimate(
            p_th=nan, low=nan, high=nan, nu=nan, method="fss", group=group, confidence=confidence,
            distances=tuple(c.d for c in curves), per_round=per_round, note=f"no crossing in range ({notes})",
        )
    pts = _fss_points(curves, p0, window_factor, p_window, per_round)
    best, best_chi2 = _fss_best_fit(pts, p0, nu_guess)
    p_th, inv_nu, a, b, c = (float(v) for v in best)
    boot = _fss_bootstrap(pts, best, per_round, n_bootstrap, seed)
    failed = int(np.sum(~np.isfinite(boot[:, 0])))
    low, high = _percentile_interval(boot[:, 0], confidence)
    nu_low, nu_high = _percentile_interval(boot[:, 1], confidence)
    p = pts.p
    dof = len(p) - 5
    red_chi2 = best_chi2 / dof if dof > 0 else nan
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
        distances=tuple(cv.d for cv in pts.used),
        p_window=(float(p.min()), float(p.max())),
        num_points=int(len(p)),
        params={"A": a, "B": b / p_th, "C": c / p_th**2},
        reduced_chi2=red_chi2,
        n_bootstrap=n_bootstrap,
        n_bootstrap_failed=failed,
        per_round=per_round,
        note="; ".join(_fss_notes(p, p_th, n_bootstrap, failed, red_chi2)),
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
            raise InputError(f"per-round rates need 'r' or 'rounds' in json_metadata; group {group!r} p={p} lacks it")

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
        x_key, d_key, group_keys: see :func:`~qdecode.sims.stats.rows_to_curves`.
        **kwargs: passed on to the method (``n_bootstrap``, ``seed``, ``confidence``,
            ``p_window``...).

    Returns:
        ``{group tuple: ThresholdEstimate}``.

    Raises:
        ValueError: unknown method, or a group the method cannot handle (too few distances...).
    """
    fn = {"fss": fss_threshold, "pairwise": pairwise_threshold}.get(method)
    if fn is None:
        raise InputError(f"unknown threshold method {method!r}; use 'fss' or 'pairwise'")
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
        ValueError: no usable rows at all (see :func:`~qdecode.sims.stats.rows_to_curves`).
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
