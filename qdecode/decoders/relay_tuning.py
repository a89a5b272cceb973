"""Tuning Relay-BP's memory strengths the way IBM tuned the gross code.

IBM's recipe (arXiv:2506.01779; github.com/trmue/relay, ``examples/BivariateBicycleCodeAnalysis.ipynb``):

1. Sweep the leg-0 memory strength ``gamma0`` with Mem-BP (one leg, ``pre_iter`` iterations) on
   sampled shots and keep the value with the fewest logical failures.
2. On the shots that this Mem-BP fails (logical failure or no convergence), search the ends
   ``(gamma_lo, gamma_hi)`` of the interval later legs draw their gammas from, running Relay-BP
   with ``legs`` legs and ``stop_after = 1``, to minimise the logical failures left. IBM used nevergrad
   (budget 100); here a deterministic search does the job without another dependency: a coarse
   grid, then a pattern search (compass moves whose step halves when no move improves).

Every evaluation decodes the *same* shots with the same decoder seed, so the objective is a
deterministic function of the parameters (no resampling noise between candidates); ties go to
fewer total BP iterations (a faster decoder at equal accuracy). Training only on Mem-BP's
failures is what makes the search affordable: leg 0 of Relay-BP *is* Mem-BP, so the shots it
decodes correctly are decoded the same way whatever the interval (up to ``stop_after`` > 1 picking
a lighter solution later, which can only help).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.relay_bp import RelayBpDecoder, mem_bp
from qdecode.problem import DecodingProblem

DEFAULT_GAMMA0_GRID = tuple(float(x) for x in np.round(np.linspace(0.0, 1.0, 21), 10))
DEFAULT_LO_GRID = (-0.5, -0.35, -0.2, -0.1, 0.0)
DEFAULT_HI_GRID = (0.3, 0.5, 0.7, 0.9, 1.1)


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """One decoder setting scored on a fixed set of shots."""

    params: dict
    failures: int  # logical failures (predicted observables differ from the truth)
    shots: int
    iterations: int  # total BP iterations over the shots (the tie-breaker)

    @property
    def key(self) -> tuple[int, int]:
        return (self.failures, self.iterations)


@dataclasses.dataclass
class TuningResult:
    """What :func:`tune_relay` found.

    Attributes:
        gamma0_sweep: Mem-BP evaluations over the gamma0 grid (all shots).
        best_gamma0: the gamma0 with the fewest failures (ties: fewer iterations).
        train_shots: indices of the shots Mem-BP(best_gamma0) fails; the interval search's data.
        interval_trials: every Relay-BP evaluation of the interval search, in order.
        best_interval: ``(gamma_lo, gamma_hi)`` with the fewest failures on ``train_shots``.
    """

    gamma0_sweep: list[Evaluation]
    best_gamma0: float
    train_shots: np.ndarray
    interval_trials: list[Evaluation]
    best_interval: tuple[float, float] | None

    def best_params(self) -> dict:
        out = {"gamma0": self.best_gamma0}
        if self.best_interval is not None:
            out["gamma_lo"], out["gamma_hi"] = self.best_interval
        return out


def _failures(decoder, dets: np.ndarray, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Logical failures, non-converged shots (bool ``(S,)`` each) and total iterations."""
    pred = decoder.predict_observables_batch(dets)
    info = decoder.last_info
    wrong = np.any(pred != obs, axis=1)
    return wrong, ~np.asarray(info.converged, dtype=bool), int(np.sum(info.iterations, dtype=np.int64))


def _check_grid(values: Sequence[float], name: str) -> tuple[float, ...]:
    vals = tuple(float(v) for v in values)
    if not vals:
        raise DecoderInputError(f"{name} must hold at least one value")
    if not all(np.isfinite(vals)):
        raise DecoderInputError(f"{name} must hold finite values, got {list(values)!r}")
    return vals


def tune_relay(
    problem: DecodingProblem,
    dets: np.ndarray,
    obs: np.ndarray,
    *,
    gamma0_grid: Sequence[float] = DEFAULT_GAMMA0_GRID,
    lo_grid: Sequence[float] = DEFAULT_LO_GRID,
    hi_grid: Sequence[float] = DEFAULT_HI_GRID,
    budget: int = 60,
    pre_iter: int = 80,
    leg_iter: int = 60,
    legs: int = 100,
    stop_after: int = 1,
    alpha: float = 1.0,
    seed: int = 0,
    threads: int | None = None,
    progress: Callable[[str, Evaluation], None] | None = None,
) -> TuningResult:
    """Tune ``gamma0`` (Mem-BP sweep) then ``(gamma_lo, gamma_hi)`` on Mem-BP's failures.

    Args:
        problem: the decoding problem.
        dets: uint8 ``(S, num_detectors)`` sampled syndromes.
        obs: uint8 ``(S, num_observables)`` their true observable flips.
        gamma0_grid: Mem-BP memory strengths to try (IBM: 21 points in [0, 1]).
        lo_grid, hi_grid: the coarse grid of interval ends (pairs with lo < hi are tried).
        budget: total Relay-BP evaluations of the interval search (grid + pattern search).
        pre_iter, leg_iter, legs, stop_after, alpha, seed: Relay-BP settings of the search (IBM tuned
            with ``stop_after = 1``; then a shot Mem-BP decodes to a *wrong* converged answer stays
            wrong, so only its non-converged failures can be won back).
        threads: decoding threads.
        progress: called as ``progress(stage, evaluation)`` after each evaluation.

    Returns:
        :class:`TuningResult`; ``best_interval`` is None when Mem-BP fails no shot (nothing to tune).
    """
    dets = np.ascontiguousarray(dets, dtype=np.uint8)
    obs = np.ascontiguousarray(obs, dtype=np.uint8)
    if dets.ndim != 2 or obs.ndim != 2 or dets.shape[0] != obs.shape[0]:
        raise DecoderInputError(f"dets (S, m) and obs (S, k) must have the same number of shots, got "
                                f"{dets.shape} and {obs.shape}")
    if obs.shape[1] != problem.num_observables:
        raise DecoderInputError(f"obs must have {problem.num_observables} columns, got {obs.shape[1]}")
    if int(budget) < 1:
        raise DecoderInputError(f"budget must be >= 1, got {budget}")
    gamma0_grid = _check_grid(gamma0_grid, "gamma0_grid")
    lo_grid, hi_grid = _check_grid(lo_grid, "lo_grid"), _check_grid(hi_grid, "hi_grid")
    S = dets.shape[0]

    sweep: list[Evaluation] = []
    fails_by_g0: dict[float, np.ndarray] = {}
    for g0 in gamma0_grid:
        wrong, stuck, iters = _failures(
            mem_bp(problem, gamma0=g0, max_iter=pre_iter, alpha=alpha, threads=threads), dets, obs)
        ev = Evaluation({"gamma0": g0}, int(wrong.sum()), S, iters)
        sweep.append(ev)
        fails_by_g0[g0] = wrong | stuck
        if progress:
            progress("gamma0", ev)
    best = min(sweep, key=lambda e: e.key)
    g0 = best.params["gamma0"]
    train = np.flatnonzero(fails_by_g0[g0])
    if train.size == 0:
        return TuningResult(sweep, g0, train, [], None)
    tdets, tobs = dets[train], obs[train]

    trials: list[Evaluation] = []
    seen: dict[tuple[float, float], Evaluation] = {}

    def evaluate(lo: float, hi: float) -> Evaluation | None:
        lo, hi = round(lo, 6), round(hi, 6)
        if not lo < hi:
            return None
        if (lo, hi) in seen:
            return seen[(lo, hi)]
        if len(trials) >= budget:
            return None
        dec = RelayBpDecoder(problem, gamma0=g0, gamma_interval=(lo, hi), pre_iter=pre_iter, legs=legs,
                             leg_iter=leg_iter, stop_after=stop_after, alpha=alpha, seed=seed, threads=threads)
        wrong, _, iters = _failures(dec, tdets, tobs)
        ev = Evaluation({"gamma_lo": lo, "gamma_hi": hi}, int(wrong.sum()), int(train.size), iters)
        seen[(lo, hi)] = ev
        trials.append(ev)
        if progress:
            progress("interval", ev)
        return ev

    for lo in lo_grid:
        for hi in hi_grid:
            evaluate(lo, hi)
    if not trials:
        raise DecoderInputError("lo_grid and hi_grid contain no pair with gamma_lo < gamma_hi")
    cur = min(trials, key=lambda e: e.key)
    step = 0.5 * min(_spacing(lo_grid), _spacing(hi_grid))
    while len(trials) < budget and step >= 0.01:
        lo, hi = cur.params["gamma_lo"], cur.params["gamma_hi"]
        moves = [evaluate(lo + dlo, hi + dhi) for dlo, dhi in ((-step, 0), (step, 0), (0, -step), (0, step))]
        better = [e for e in moves if e is not None and e.key < cur.key]
        if better:
            cur = min(better, key=lambda e: e.key)
        else:
            step /= 2
    bestI = min(trials, key=lambda e: e.key)
    return TuningResult(sweep, g0, train, trials, (bestI.params["gamma_lo"], bestI.params["gamma_hi"]))


def _spacing(grid: Sequence[float]) -> float:
    g = np.unique(np.asarray(grid, dtype=np.float64))
    return float(np.min(np.diff(g))) if g.size > 1 else 0.2
