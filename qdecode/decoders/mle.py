"""Exact most-likely-error decoding by integer programming (HiGHS through ``scipy.optimize.milp``).

For a syndrome ``s`` the most likely error of independent mechanisms with priors ``p_j`` is

    argmin_e  sum_j w_j e_j,   w_j = ln((1 - p_j) / p_j),   subject to  H e = s (mod 2),  e in {0, 1}^n,

written as an integer program by one integer slack per detector: ``H e - 2 y = s`` with
``0 <= y_i <= floor(deg_i / 2)`` (``deg_i``: the detector's number of mechanisms). HiGHS'
branch and cut solves it to proven optimality (relative gap 0), so the prediction is the
observable flip ``L e`` of a most likely error: the reference against which a decoder's
distance from optimal is measured (most likely *error*, not most likely *coset*; the two differ
where many errors share a coset).

A reference, not a fast decoder: one integer program per distinct syndrome (the zero syndrome
needs none; solved syndromes are remembered, up to ``_MEMO_SIZE`` of them, so a syndrome that
recurs, in a batch or in a later call, is solved once: at low p most syndromes recur). Each solve has a time limit
(``time_limit`` seconds); a shot whose solve stopped at the limit keeps the best solution found
(zeros when none), and is counted as ``not_converged`` in ``last_info`` (and so in the sweep's
``custom_counts``), never passed off as optimal. Results are deterministic except at the time
limit, where they depend on how far the solver got. Shots whose solve stopped at the limit are
also marked in ``last_info.extra["time_limit_hit"]``, and ``last_info.counts()`` adds them up as
``time_limit_hits``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderInputError, check_syndromes
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.problem import DecodingProblem

#: Parameters of ``mle`` and :class:`MleDecoder`.
MLE_PARAMS = {
    "time_limit": Param(float, 60.0, "seconds per integer program (a shot that hits it is flagged not_converged)",
                        minimum=0.0, min_exclusive=True),
}

#: scipy.optimize.milp status codes (HiGHS)
_OPTIMAL = 0
_LIMIT = 1
_INFEASIBLE = 2
#: distinct syndromes whose solutions a decoder remembers
_MEMO_SIZE = 1 << 16


@dataclasses.dataclass
class MleDecodeInfo(DecodeInfo):
    """:class:`DecodeInfo` whose counters also count the shots whose solve hit the time limit."""

    def counts(self) -> dict[str, int]:
        out = super().counts()
        hit = self.extra.get("time_limit_hit") if self.extra else None
        if hit is not None:
            out["time_limit_hits"] = int(np.count_nonzero(hit))
        return out


@uses_params(MLE_PARAMS)
class MleDecoder(Decoder):
    """Most-likely-error decoder: one mixed-integer program per distinct syndrome.

    Args:
        problem: the decoding problem (``H`` (m, n), ``L``, priors).
        time_limit: seconds per solve.

    ``last_info`` (:class:`MleDecodeInfo`): ``converged[s]`` is True where shot ``s``'s solve was
    proven optimal; ``extra["objective"]`` holds ``sum_j w_j e_j`` of the returned error (float64
    ``(S,)``) and ``extra["time_limit_hit"]`` (bool ``(S,)``) marks the shots whose solve stopped at
    ``time_limit`` (counted as ``time_limit_hits`` by ``counts()``).

    Work bound: at most one HiGHS integer program per shot: one per distinct nonzero syndrome
    that is not already remembered; the zero syndrome needs none. HiGHS stops each program at
    ``time_limit`` seconds (default 60.0). The bound is solver time, not a node count.

    Raises:
        DecoderInputError: a syndrome that no combination of mechanisms produces (the program is
            infeasible), naming the shot.
    """

    def __init__(self, problem: DecodingProblem, *, time_limit: float):
        self.problem = problem
        self.time_limit = float(time_limit)
        H = sp.csr_matrix(problem.H, dtype=np.float64)
        m, n = H.shape
        deg = np.diff(H.indptr)
        # variables: e (n binaries), then y (m integer slacks); constraint rows: H e - 2 y = s
        self._A = sp.hstack([H, -2.0 * sp.identity(m, format="csr")], format="csr")
        self._c = np.concatenate([problem.llr, np.zeros(m)])
        self._upper = np.concatenate([np.ones(n), deg // 2]).astype(np.float64)
        self._memo: dict[bytes, tuple[np.ndarray, bool, float, bool]] = {}

    def _solve(self, s: np.ndarray) -> tuple[np.ndarray, bool, float, bool]:
        """One syndrome ``s`` (m,) -> (error uint8 (n,), proven optimal, objective, stopped at the time limit)."""
        from scipy.optimize import Bounds, LinearConstraint, milp

        n = self.problem.num_errors
        rhs = s.astype(np.float64)
        res = milp(self._c, constraints=LinearConstraint(self._A, rhs, rhs), integrality=np.ones(self._c.shape[0]),
                   bounds=Bounds(np.zeros(self._c.shape[0]), self._upper),
                   options={"time_limit": self.time_limit, "mip_rel_gap": 0.0, "presolve": True})
        if res.status == _INFEASIBLE:
            raise DecoderInputError("mle: no error of the problem's mechanisms produces this syndrome "
                                    f"(detectors {np.flatnonzero(s).tolist()[:10]}...)")
        limit = res.status == _LIMIT  # no iteration or node limit is set: status 1 is the time limit
        if res.x is None:  # limit hit before any feasible point
            return np.zeros(n, dtype=np.uint8), False, float("nan"), limit
        e = (res.x[:n] > 0.5).astype(np.uint8)
        return e, res.status == _OPTIMAL, float(self._c[:n] @ e), limit

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S = s.shape[0]
        out = np.zeros((S, self.problem.num_errors), dtype=np.uint8)
        converged = np.ones(S, dtype=bool)
        objective = np.zeros(S, dtype=np.float64)
        limit_hit = np.zeros(S, dtype=bool)
        if S:
            uniq, inverse = np.unique(s, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            for u in range(uniq.shape[0]):  # one program per distinct syndrome (each costs milliseconds or more)
                if not uniq[u].any():
                    continue
                key = uniq[u].tobytes()
                hit = self._memo.get(key)
                if hit is None:
                    hit = self._solve(uniq[u])
                    if len(self._memo) < _MEMO_SIZE:
                        self._memo[key] = hit
                e, ok, obj, limit = hit
                rows = inverse == u
                out[rows] = e
                converged[rows] = ok
                objective[rows] = obj
                limit_hit[rows] = limit
        self.last_info = MleDecodeInfo(converged=converged,
                                       extra={"objective": objective, "time_limit_hit": limit_hit})
        return out


ENTRIES = {
    "mle": DecoderEntry("mle", MleDecoder, MLE_PARAMS,
                        doc="exact most-likely error by integer programming (HiGHS via scipy; a reference, slow)"),
}
