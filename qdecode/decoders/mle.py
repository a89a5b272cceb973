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

Confidence (:meth:`MleDecoder.predict_with_confidence`, the unit in
:mod:`qdecode.decoders.confidence`): the exact gap. After the best error ``e*``, for each
observable ``i`` a second program adds the parity row ``L_i e = 1 - L_i e* (mod 2)``, written as
the detectors' rows are, with one more integer slack: ``L_i e - 2 z = 1 - L_i e*``,
``0 <= z <= floor(|L_i| / 2)``. The least of the ``k`` optima is the lightest error of any other
logical class; an infeasible program means that observable cannot be flipped (``inf`` when none
can). ``k + 1`` programs per distinct syndrome (the zero syndrome included: it has a gap too),
remembered like the best solutions.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderInputError, check_syndromes, observables_from_errors
from qdecode.decoders.confidence import ConfidentPrediction, gap_db
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
    """Most-likely-error decoder: one mixed-integer program per distinct syndrome; an exact gap.

    Args:
        problem: the decoding problem (``H`` (m, n), ``L``, priors).
        time_limit: seconds per solve.

    ``last_info`` (:class:`MleDecodeInfo`): ``converged[s]`` is True where shot ``s``'s solve was
    proven optimal; ``extra["objective"]`` holds ``sum_j w_j e_j`` of the returned error (float64
    ``(S,)``) and ``extra["time_limit_hit"]`` (bool ``(S,)``) marks the shots whose solve stopped at
    ``time_limit`` (counted as ``time_limit_hits`` by ``counts()``). After
    :meth:`predict_with_confidence` also ``extra["weight_best"]`` (= ``objective``) and
    ``extra["weight_other"]`` (float64 ``(S,)``, the lightest error of another class; ``inf``: none),
    and ``time_limit_hit`` covers the gap programs too (``extra["gap_time_limit_hit"]``: those alone).
    A gap whose programs stopped at the limit is not proven (``weight_other`` is then an upper
    bound, ``nan`` where no solution was found).

    Work bound: at most one HiGHS integer program per shot: one per distinct nonzero syndrome
    that is not already remembered; the zero syndrome needs none (``predict_with_confidence``:
    ``k`` more per distinct syndrome, the zero one included). HiGHS stops each program at
    ``time_limit`` seconds (default 60.0). The bound is solver time, not a node count.

    Work clock (:attr:`work_unit`): none. HiGHS's node and simplex-iteration counts are not read, and a
    program stopped by ``time_limit`` stops after a machine-dependent amount of work, so no count would be
    reproducible; the wall clock alone (:meth:`predict_observables_timed`).

    Raises:
        DecoderInputError: a syndrome that no combination of mechanisms produces (the program is
            infeasible), naming the shot.
    """

    has_confidence = True

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
        # with no mechanism likelier than not (all weights >= 0) no error beats e = 0 on the zero syndrome
        self._zero_is_best = bool(np.all(problem.llr >= 0))
        self._gap_memo: dict[bytes, tuple[float, bool]] = {}  # syndrome -> (weight of the other class, limit hit)
        self._class_programs: dict[int, tuple[sp.csr_matrix, np.ndarray, np.ndarray]] = {}

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

    def _class_program(self, i: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """Observable ``i``'s program: (constraints ``[[H, -2I, 0], [L_i, 0, -2]]``, costs, upper bounds)."""
        prog = self._class_programs.get(i)
        if prog is None:
            m = self.problem.num_detectors
            row = sp.csr_matrix(self.problem.L[i], dtype=np.float64)
            A = sp.vstack([sp.hstack([self._A, sp.csr_matrix((m, 1))]),
                           sp.hstack([row, sp.csr_matrix((1, m)), sp.csr_matrix([[-2.0]])])], format="csr")
            prog = (A, np.concatenate([self._c, [0.0]]), np.concatenate([self._upper, [row.nnz // 2]]))
            self._class_programs[i] = prog
        return prog

    def _solve_other(self, s: np.ndarray, e_best: np.ndarray) -> tuple[float, bool]:
        """(least ``W(e)`` over errors with ``H e = s`` in another class than ``e_best``, a solve hit the limit).

        One program per observable ``i`` with ``L_i e = 1 - L_i e_best``; ``inf`` when all are
        infeasible, ``nan`` when one stopped at the limit without a solution and none gave less.
        """
        from scipy.optimize import Bounds, LinearConstraint, milp

        n = self.problem.num_errors
        flips = np.asarray(self.problem.L @ e_best.astype(np.int64)).reshape(-1) & 1
        best, limit, unknown = np.inf, False, False
        for i in range(self.problem.num_observables):
            if self.problem.L[i].nnz == 0:
                continue  # no mechanism flips observable i: it cannot differ
            A, c, upper = self._class_program(i)
            rhs = np.concatenate([s.astype(np.float64), [1.0 - flips[i]]])
            res = milp(c, constraints=LinearConstraint(A, rhs, rhs), integrality=np.ones(c.shape[0]),
                       bounds=Bounds(np.zeros(c.shape[0]), upper),
                       options={"time_limit": self.time_limit, "mip_rel_gap": 0.0, "presolve": True})
            limit |= res.status == _LIMIT
            if res.x is None:
                unknown |= res.status != _INFEASIBLE  # infeasible: this observable cannot differ
                continue
            best = min(best, float(c[:n] @ (res.x[:n] > 0.5)))
        return (float("nan") if unknown and best == np.inf else best), limit

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` exact gap in dB).

        The observables are those of :meth:`predict_observables_batch` (the same solves, remembered);
        the gap is ``(weight_other - weight_best) * 10 / ln 10`` (module docstring), both weights in
        ``last_info.extra``.

        Examples:
            >>> import numpy as np
            >>> rep3 = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
            >>> obs, gap = MleDecoder(rep3).predict_with_confidence(np.array([[0, 0], [1, 0]], np.uint8))
            >>> obs.ravel().tolist(), [round(float(g), 3) for g in gap]  # 3 flips against none; 2 against 1
            ([0, 1], [28.627, 9.542])
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        errors = self.decode_batch(s)
        info = self.last_info
        assert info is not None
        S = s.shape[0]
        weight_best = np.asarray(info.extra["objective"], dtype=np.float64)
        weight_other = np.full(S, np.inf)
        gap_limit = np.zeros(S, dtype=bool)
        if S and self.problem.num_observables:
            uniq, first, inverse = np.unique(s, axis=0, return_index=True, return_inverse=True)
            inverse = inverse.reshape(-1)
            for u in range(uniq.shape[0]):
                key = uniq[u].tobytes()
                hit = self._gap_memo.get(key)
                if hit is None:
                    hit = self._solve_other(uniq[u], errors[first[u]])
                    if len(self._gap_memo) < _MEMO_SIZE:
                        self._gap_memo[key] = hit
                rows = inverse == u
                weight_other[rows], gap_limit[rows] = hit
        extra = dict(info.extra)
        extra.update(weight_best=weight_best, weight_other=weight_other, gap_time_limit_hit=gap_limit,
                     time_limit_hit=np.asarray(extra["time_limit_hit"]) | gap_limit)
        self.last_info = MleDecodeInfo(converged=info.converged, extra=extra)
        return ConfidentPrediction(observables_from_errors(errors, self.problem), gap_db(weight_best, weight_other))

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
                if not uniq[u].any() and self._zero_is_best:
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
                        doc="exact most-likely error by integer programming (HiGHS via scipy; a reference, slow)",
                        has_confidence=True),
}
