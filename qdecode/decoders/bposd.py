"""BP+OSD: min-sum (or product-sum) BP, then OSD on the shots BP did not converge on.

OSD orders the columns by the shot's BP posterior LLRs (ascending: most likely flipped
first; ``osd_key=sumK`` orders by the sum of the last K posteriors instead, ``osd_key=min`` by each
posterior's running minimum over the iterations) and keeps the
candidate of least cost ``sum_{e_j=1} ln(1/p_j)``, exactly as ldpc's ``BpOsdDecoder`` (see
:mod:`qdecode.decoders.osd`). Converged shots keep the BP solution. Shots are processed in
chunks so that only a chunk's posteriors are stored.

Confidence (:meth:`BpOsdDecoder.predict_with_confidence`, the unit in
:mod:`qdecode.decoders.confidence`): OSD then runs on *every* shot, converged ones included (ordered
by the same BP key), and records every candidate its search tests: OSD-0, then the OSD-CS singles
and pairs or the OSD-E patterns (:func:`qdecode.kernels.osd.osd_gap_solve`). With the gap's weights
``W(e) = sum_j e_j ln((1 - p_j) / p_j)``:

* ``weight_best`` = ``W`` of the returned decision (BP's where BP converged, else OSD's), the same
  decision as :meth:`~BpOsdDecoder.predict_observables_batch`;
* ``weight_other`` = the least ``W`` among the tested OSD candidates whose logical class differs
  from the returned decision's (``L e != L e_best`` in some observable); ``inf`` when every tested
  candidate is of that class (no other class *found*: a higher ``osd_order`` may find one), ``nan``
  when BP did not converge and the syndrome is outside H's column space (no candidate);
* ``gap_db = (weight_other - weight_best) * 10 / ln 10``.

Signs: the gap is a difference of ``W``, while OSD chooses by its own cost ``sum ln(1/p_j) = W +
sum ln(1/(1 - p_j))``, and BP's decision need not be the lightest, so the gap can be *negative*:
(a) where BP converged to a decision heavier than a tested candidate of another class (the returned
decision is BP's, it is not replaced); (b) where BP did not converge and a tested candidate of
another class has a smaller ``W`` but a larger OSD cost than OSD's choice, only possible with
unequal priors and then by less than ``sum_{best_j=1} ln(1/(1 - p_j))``. With equal priors and
BP not converged it is ``>= 0`` (``0``: a tie between classes). With OSD-E of order
``n - rank(H)`` the search tests every correction of the syndrome, so ``weight_other`` is the
exact lightest correction of another class (``mle``'s where the decision is a lightest one).
Only the tested candidates count: ``bposd`` (OSD-CS: a single flip of every non-pivot column) finds
another class on almost every shot, ``bposd-e`` at its default order 4 (15 patterns on the first 4
non-pivots) seldom does on circuit DEMs (3% of the shots of a distance-5 surface-code memory at
p = 0.003: ``inf`` elsewhere). Cost: OSD on every shot instead of only the non-converged ones, and
the ``W`` and class of its candidates; per shot, one thread, 1.6x the time of
:meth:`~BpOsdDecoder.predict_observables_batch` on a distance-5 surface-code memory under SI1000 noise at
p = 0.003 (``benchmarks/results/confidence_cost.json``).
"""

from __future__ import annotations

import numpy as np

from qdecode.decoders.base import DecodeInfo, Decoder, check_syndromes, observables_from_errors
from qdecode.decoders.bp import BP_PARAMS, BpDecoder, bp_params
from qdecode.decoders.confidence import ConfidentPrediction, class_codes, correction_weight, gap_db, observables_class
from qdecode.decoders.osd import OPERATIONS_UNIT, OsdPostProcessor, bp_operations, other_class_weight
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.kernels.herald_priors import ShotPriors, fill_costs
from qdecode.kernels.minsum import HISTORY_MIN
from qdecode.problem import DecodingProblem

_CHUNK_ENTRIES = 1 << 22  # posteriors stored per chunk (~32 MB of float64)

#: OSD ordering keys: the last BP posterior (ldpc's), the sum of the last k posteriors, or the running minimum
#: of the posterior over every iteration (``min``).
OSD_KEYS = ("last", "sum2", "sum3", "sum4", "sum6", "sum8", "min")
#: The key parameter. Its default is ``sum4``, the key ``benchmarks/osd_key.py`` recommends (0.62x the
#: failures of ``last`` on [[144,12,12]] at p = 0.003, 0.42x on the colour code d = 5:
#: ``benchmarks/results/frontier_bb144-p0.003.json``, ``frontier_color-xyz-d5.json``). A label that leaves it
#: out means ``last``, the default when labels without it were recorded
#: (:attr:`Param.implied <qdecode.decoders.params.Param.implied>`).
OSD_KEY_PARAM = Param(str, "sum4", "OSD column order: the last BP posterior, sumK = the sum of the last K "
                      "posteriors (averages min-sum's oscillation), or min = its running minimum over every "
                      "iteration", OSD_KEYS, label_default=False,
                      label_implied="last")


def history_length(osd_key: str) -> int:
    """The BP kernels' ``hist_k`` of OSD key ``osd_key``: the number of posteriors summed (``"last"``: 1,
    ``"sumK"``: K), or :data:`~qdecode.kernels.minsum.HISTORY_MIN` for ``"min"``."""
    if osd_key not in OSD_KEYS:
        raise ValueError(f"osd_key={osd_key!r} must be one of {list(OSD_KEYS)}")
    if osd_key == "min":
        return HISTORY_MIN
    return 1 if osd_key == "last" else int(osd_key[3:])


#: Parameters of ``bposd`` and :class:`BpOsdDecoder` (min-sum 80 iterations, OSD-CS order 10).
BPOSD_PARAMS = {**bp_params(80), "osd_order": Param(int, 10, "OSD order w (clamped to n - rank H)", minimum=0),
                "osd_key": OSD_KEY_PARAM, "dtype": BP_PARAMS["dtype"]}
#: Parameters of ``bposd-e`` and :class:`BpOsdEDecoder` (min-sum 80 iterations, OSD-E order 4).
BPOSD_E_PARAMS = {**bp_params(80),
                  "osd_order": Param(int, 4, "OSD-E order w (2^w - 1 candidates)", minimum=0, maximum=24),
                  "osd_key": OSD_KEY_PARAM, "dtype": BP_PARAMS["dtype"]}


@uses_params(BPOSD_PARAMS)
class BpOsdDecoder(Decoder):
    """BP followed by OSD-0 / OSD-E / OSD-CS on non-converged shots.

    Defaults (:data:`BPOSD_PARAMS`) are those of the registry's ``bposd``.

    Args:
        problem: H, L and priors.
        osd_method: ``"osd_cs"`` (combination sweep), ``"osd_e"`` (exhaustive) or ``"osd0"``.
        osd_order: OSD order w >= 0 (clamped to n - rank(H) with a warning).
        osd_key: the key OSD orders the columns by (ascending): ``"last"`` BP posterior (ldpc's
            convention), ``"sumK"``, the sum over the last K iterations ``sum_t M_j(t)``, which
            averages the oscillation of min-sum posteriors on the shots BP fails on, or ``"min"``, the
            running minimum ``min_t M_j(t)`` over every iteration (a mechanism BP ever believed flipped
            comes first), kept by the BP kernels as they iterate.
        max_iter, alpha, beta, schedule, bits, frac_bits, method, dtype, threads: passed to
            :class:`~qdecode.decoders.bp.BpDecoder`.

    Work bound: BP runs at most ``max_iter`` iterations per shot (default 80), each
    O(n + m + nnz(H)). A shot BP did not converge on then gets one OSD: a stable sort of the n
    columns, one Gaussian elimination of H in that order (O(m n min(m, n) / 64) word operations on
    bit-packed columns), and a fixed number of test patterns. With w = ``osd_order`` (default 10)
    clamped to k = n - rank(H), OSD-CS (the default ``osd_method``) tests k single flips and
    w (w - 1) / 2 pairs; OSD-E tests 2^w - 1 patterns (w <= 24); OSD-0 tests none. A test pattern
    costs O(m + d m / 64) operations for columns of weight d. There is no search beyond these patterns.
    :meth:`predict_with_confidence` runs OSD on every shot (the same bound per shot).

    Work clock (:attr:`work_unit`): elementary operations (:data:`~qdecode.decoders.osd.OPERATIONS_UNIT`),
    ``nnz(H)`` edge updates per BP iteration plus, on a shot that gets OSD, the 64-bit words of OSD's GF(2)
    row operations, counted in its kernel (:mod:`qdecode.kernels.osd`, "Work clock": the elimination,
    OSD-0's solve, every test pattern, the column sort). A shot BP converges on counts its iterations
    alone; after :meth:`predict_with_confidence`, every shot also counts its OSD and the candidates'
    tracking. Wall clock: one call per shot (:attr:`wall_method` ``"call"``).
    """

    has_confidence = True
    takes_shot_priors = True
    work_unit = OPERATIONS_UNIT

    def __init__(self, problem: DecodingProblem, *, osd_method: str = "osd_cs", osd_order: int, osd_key: str,
                 max_iter: int, alpha: float, beta: float, schedule: str, bits: int, frac_bits: int,
                 method: str = "minsum", dtype: str, threads: int | None = None):
        self.problem = problem
        self.osd_key = osd_key
        self.history = history_length(osd_key)
        self.bp = BpDecoder(problem, method=method, max_iter=max_iter, alpha=alpha, beta=beta, schedule=schedule,
                            bits=bits, frac_bits=frac_bits, dtype=dtype, threads=threads)
        self.osd = OsdPostProcessor(problem, osd_method, osd_order)
        self._col_code: np.ndarray | None = None  # class codes of the columns, made on first use

    def _decode_chunk(self, s: np.ndarray, llr: np.ndarray | None = None,
                      weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """BP, then OSD on the shots BP did not converge on: ``(hard, converged, iterations, work)``. ``llr``
        (kernel dtype) and ``weights`` (float64 ``ln(1/p)``), both ``(S, n)``: per-shot priors, else the
        problem's."""
        hard, post, conv, iters = self.bp._run(self.bp.prior_llr if llr is None else llr, s, True, self.history)
        work = bp_operations(iters, self.problem.H)
        failed = ~conv
        if failed.any():
            self.osd.solve_batch(s, post, failed, hard, shot_weights=weights)
            work += self.osd.last_work
        return hard, conv, iters, work

    def predict_observables_with_priors(self, syndromes: np.ndarray, priors: ShotPriors) -> np.ndarray:
        """:meth:`predict_observables_batch` with per-shot priors (:meth:`Decoder.predict_observables_with_priors`):
        BP starts from each shot's LLRs and OSD costs its columns ``ln(1/p)`` with the shot's priors."""
        return self._predict(syndromes, priors)

    def _predict(self, syndromes: np.ndarray, priors: ShotPriors | None) -> np.ndarray:
        """Observables of ``syndromes`` chunk by chunk, with the problem's priors or per-shot ``priors``."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        convs, iters, works = _empty_parts()
        for a, b in self._chunks(s.shape[0]):
            if priors is None:
                hard, conv, it, work = self._decode_chunk(s[a:b])
            else:
                weights = np.empty((b - a, self.problem.num_errors), dtype=np.float64)
                fill_costs(self.osd.weights, ShotPriors(priors.ptr[a:b + 1], priors.col, priors.prior), weights)
                hard, conv, it, work = self._decode_chunk(s[a:b], self.bp.shot_llrs(priors, a, b), weights)
            out[a:b] = observables_from_errors(hard, self.problem)
            convs.append(conv)
            iters.append(it)
            works.append(work)
        self.last_info = _info(convs, iters, works)
        return out

    def _chunks(self, S: int):
        step = max(1, _CHUNK_ENTRIES // max(1, self.problem.num_errors))
        return [(a, min(S, a + step)) for a in range(0, S, step)]

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.zeros((s.shape[0], self.problem.num_errors), dtype=np.uint8)
        convs, iters, works = _empty_parts()
        for a, b in self._chunks(s.shape[0]):
            out[a:b], conv, it, work = self._decode_chunk(s[a:b])
            convs.append(conv)
            iters.append(it)
            works.append(work)
        self.last_info = _info(convs, iters, works)
        return out

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        return self._predict(syndromes, None)

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` gap in dB between OSD's classes).

        The observables are those of :meth:`predict_observables_batch`. OSD runs on every shot and the
        gap is ``(weight_other - weight_best) * 10 / ln 10``: ``weight_best`` the returned decision's
        ``W``, ``weight_other`` the least ``W`` of a tested OSD candidate of another logical class
        (``inf``: none tested; ``nan``: no candidate); it can be negative where BP converged (module
        docstring). ``last_info.extra`` holds ``weight_best``, ``weight_other`` (float64 ``(S,)``) and
        ``osd`` (the shots whose decision is OSD's, as in :meth:`predict_observables_batch`).

        Examples:
            >>> rep3 = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
            >>> dec = BpOsdDecoder(rep3, osd_order=1)
            >>> obs, gap = dec.predict_with_confidence(np.array([[1, 0], [0, 0]], np.uint8))
            >>> obs.ravel().tolist(), np.round(gap.astype(float), 2).tolist()  # W: ln 9 vs 2 ln 9; 0 vs 3 ln 9
            ([1, 0], [9.54, 28.63])
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S = s.shape[0]
        if self._col_code is None:
            self._col_code = class_codes(self.problem.L)
        llr = self.problem.llr
        obs = np.zeros((S, self.problem.num_observables), dtype=np.uint8)
        w_best, w_other = np.zeros(S), np.zeros(S)
        convs, iters, works = _empty_parts()
        for a, b in self._chunks(S):
            hard, post, conv, it = self.bp._run(self.bp.prior_llr, s[a:b], True, self.history)
            decided, found = self.osd.solve_gap_batch(s[a:b], post, self._col_code, llr)
            works.append(bp_operations(it, self.problem.H) + found.work)
            failed = ~conv
            hard[failed] = decided[failed]
            obs[a:b] = observables_from_errors(hard, self.problem)
            w_best[a:b] = correction_weight(hard, llr)
            other = other_class_weight(found, observables_class(obs[a:b]))
            other[failed & (found.status != 0)] = np.nan  # no candidate: s outside H's column space
            w_other[a:b] = other
            convs.append(conv)
            iters.append(it)
        info = _info(convs, iters, works)
        info.extra.update(weight_best=w_best, weight_other=w_other)
        self.last_info = info
        return ConfidentPrediction(obs, gap_db(w_best, w_other))


def _empty_parts() -> tuple[list, list, list]:
    """The per-chunk lists of convergence flags, iterations and work, each starting with an empty array (no chunk
    for zero shots)."""
    return [np.zeros(0, dtype=bool)], [np.zeros(0, dtype=np.int32)], [np.zeros(0, dtype=np.int64)]


def _info(convs, iters, works) -> DecodeInfo:
    conv = np.concatenate(convs)
    return DecodeInfo(converged=conv, iterations=np.concatenate(iters), extra={"osd": ~conv},
                      work=np.concatenate(works))


@uses_params(BPOSD_E_PARAMS)
class BpOsdEDecoder(BpOsdDecoder):
    """BP followed by exhaustive OSD-E (registry ``bposd-e``; defaults :data:`BPOSD_E_PARAMS`).

    Work bound: BP runs at most ``max_iter`` iterations per shot (default 80), each
    O(n + m + nnz(H)). A shot BP did not converge on then gets one OSD-E: a stable sort of the n
    columns, one Gaussian elimination of H (O(m n min(m, n) / 64) word operations), and exactly
    2^w - 1 test patterns, w = ``osd_order`` (default 4, so 15 patterns; at most 24) clamped to
    n - rank(H).

    Work clock (:attr:`work_unit`): as :class:`BpOsdDecoder`'s, elementary operations: ``nnz(H)`` per BP
    iteration plus OSD-E's 64-bit word operations (its Gray-code walk over the patterns included).
    """

    def __init__(self, problem: DecodingProblem, *, osd_order: int, osd_key: str, max_iter: int, alpha: float,
                 beta: float, schedule: str, bits: int, frac_bits: int, method: str = "minsum",
                 dtype: str, threads: int | None = None):
        super().__init__(problem, osd_method="osd_e", osd_order=osd_order, osd_key=osd_key, max_iter=max_iter,
                         alpha=alpha, beta=beta, schedule=schedule, bits=bits, frac_bits=frac_bits, method=method,
                         dtype=dtype, threads=threads)


ENTRIES = {
    "bposd": DecoderEntry("bposd", lambda problem, **kw: BpOsdDecoder(problem, osd_method="osd_cs", method="minsum",
                                                                      **kw),
                          BPOSD_PARAMS, has_confidence=True, takes_shot_priors=True,
                          doc="min-sum BP + OSD-CS (combination sweep) on non-converged shots"),
    "bposd-e": DecoderEntry("bposd-e", lambda problem, **kw: BpOsdEDecoder(problem, method="minsum", **kw),
                            BPOSD_E_PARAMS, has_confidence=True, takes_shot_priors=True,
                            doc="min-sum BP + exhaustive OSD-E on non-converged shots"),
}
