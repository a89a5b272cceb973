"""BP+LSD: min-sum BP, then localized statistics decoding (Hillmann et al., arXiv:2406.18655) on the
shots BP did not converge on.

LSD (:mod:`qdecode.kernels.lsd`) grows one cluster per flagged check, adding the most likely
bit by the shot's BP posterior each round, eliminates each cluster's columns on the fly and stops
a cluster as soon as its syndrome lies in its columns' span; ``lsd_order = 0`` returns each
cluster's elimination solution (ldpc's LSD-0). ``lsd_order = w > 0`` runs OSD-CS of order w
inside each cluster with the likelihood cost ``sum ln(1/p_j)`` (ldpc scores in-cluster candidates
by Hamming weight). As in ldpc's ``BpLsdDecoder`` (``always_run_lsd=False``), converged shots keep
BP's decision.

Confidence (:meth:`BpLsdDecoder.predict_with_confidence`), chosen by ``confidence``:

* ``gap`` (the default; the unit of :mod:`qdecode.decoders.confidence`): LSD runs on every shot,
  BP-converged ones included (as ldpc's ``always_run_lsd``; the decision there stays BP's), and
  every in-cluster OSD records the candidates it tests (:mod:`qdecode.kernels.lsd`). With
  ``W(e) = sum_j e_j ln((1 - p_j) / p_j)``, ``weight_best`` is ``W`` of the returned decision and
  ``weight_other`` the least ``W`` of a correction LSD found (one tested candidate per cluster) of
  another logical class: ``gap_db = (weight_other - weight_best) * 10 / ln 10``, ``inf`` when no
  cluster's search tested a candidate of another class (the zero syndrome has no cluster), ``nan``
  when BP did not converge and the syndrome is outside ``H``'s column space. Signs as for ``bposd``
  (:mod:`qdecode.decoders.bposd`): negative where BP converged to a decision heavier than a found
  correction of another class, or with unequal priors. It needs the in-cluster search: with
  ``lsd_order = 0`` every cluster tests one candidate, so ``confidence=gap`` is refused there.
* ``cluster``: the *cluster statistic* of Lee, English and Bartlett (arXiv:2510.05795), not a gap.
  LSD runs on every shot and, once its clusters are valid (:mod:`qdecode.kernels.lsd`),
  ``Q = sqrt(sum_C L_C^2) / sum_j lambda_j``: the 2-norm of the clusters' summed prior LLRs
  ``lambda_j = ln((1 - p_j) / p_j)`` over the total of all n mechanisms (their ``Q_LLR`` with
  ``alpha = 2``, the metric of their [[144,12,12]] figures). Large ``Q`` means low confidence. It is
  reported in dB as ``-10 log10 Q`` (>= 0; ``inf`` without clusters, the zero syndrome; ``nan`` when
  LSD finds ``s`` outside ``H``'s column space), so that larger means more confident, as for a gap,
  and every post-selection of :mod:`qdecode.sims.gap_bins` applies; but it is a heuristic score, not
  a likelihood ratio between logical classes. It is cheap: LSD-0 on the BP-converged shots. ``bpuf``
  (LSD-0) reports this one.

Either way ``last_info.extra["cluster_q"]`` holds ``Q`` (the statistic is taken before the order-w
growth, so the order does not change it).
"""

from __future__ import annotations

import math

import numpy as np

from qdecode.decoders.base import DecodeInfo, Decoder, check_syndromes, observables_from_errors
from qdecode.decoders.bp import BpDecoder, bp_params
from qdecode.decoders.bposd import OSD_KEYS, history_length
from qdecode.decoders.confidence import ConfidentPrediction, class_codes, correction_weight, gap_db, observables_class
from qdecode.decoders.osd import OPERATIONS_UNIT, bp_operations, other_class_weight
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.kernels import gf2
from qdecode.kernels.herald_priors import ShotPriors, fill_costs
from qdecode.kernels.lsd import LsdGapWeights, LsdOut, LsdParams, LsdProblem, lsd_range, lsd_shot_weights_range
from qdecode.kernels.osd import METHOD_CS, METHOD_E
from qdecode.kernels.threads import run_ranges
from qdecode.problem import DecodingProblem

#: ``lsd_method`` names -> the in-cluster OSD of :func:`qdecode.kernels.osd.osd_solve`
LSD_METHODS = {"lsd_cs": METHOD_CS, "lsd_e": METHOD_E}

#: ``confidence`` values of :meth:`BpLsdDecoder.predict_with_confidence` (module docstring)
CONFIDENCES = ("gap", "cluster")

#: Parameters of ``bplsd`` and :class:`BpLsdDecoder` (min-sum 80 iterations as ``bposd``, in-cluster
#: OSD-CS of order 30 in clusters grown to nullity 20 x 30, grown by the sum of the last four
#: posteriors). These defaults reach ``bposd``'s failures on both problems of benchmarks/README.md's
#: frontier where they were measured: the colour code d = 5 (75 against 83 in 20,000 shots; LSD-0 by
#: the last posterior, the default until 2026-12-03, fails 549 times; order 10 with growth 10 gives
#: 87) and [[144,12,12]] at p = 0.003 (16 against 16 in 10,000 shots; order 10: 41, order 20: 31).
#: Labels recorded before keep their meaning: an omitted ``lsd_order`` means 0, an omitted
#: ``lsd_key`` ``last`` and an omitted ``lsd_grow`` 10 (``Param.label_implied``).
BPLSD_PARAMS = {**bp_params(80),
                "lsd_order": Param(int, 30, "in-cluster OSD order (0: LSD-0, the elimination solution)",
                                   minimum=0, maximum=62, label_implied=0),
                "lsd_method": Param(str, "lsd_cs", "in-cluster OSD for lsd_order > 0: combination sweep or "
                                    "exhaustive (order <= 20)", tuple(LSD_METHODS), label_default=False),
                "bits_per_step": Param(int, 1, "bits a cluster adds per growth step (0: its whole neighbourhood)",
                                       minimum=0, label_default=False),
                "lsd_grow": Param(int, 20, "with lsd_order > 0: grow each valid cluster until its nullity is "
                                  "lsd_grow * lsd_order before the in-cluster OSD", minimum=1,
                                  label_default=False, label_implied=10),
                "lsd_key": Param(str, "sum4", "the key clusters grow by: the last BP posterior, sumK = the sum of "
                                 "the last K posteriors, or min = its running minimum (as bposd's osd_key)", OSD_KEYS,
                                 label_default=False, label_implied="last"),
                "confidence": Param(str, "gap", "predict_with_confidence's confidence: the gap between the LSD "
                                    "search's classes, or the cluster statistic (arXiv:2510.05795)", CONFIDENCES,
                                    label_default=False)}


@uses_params(BPLSD_PARAMS)
class BpLsdDecoder(Decoder):
    """BP followed by LSD on non-converged shots (defaults :data:`BPLSD_PARAMS`).

    Confidence: the LSD search's gap or the cluster statistic (module docstring), :meth:`predict_with_confidence`.

    Args:
        problem: H, L and priors.
        lsd_order: in-cluster OSD order (clamped per cluster to its nullity).
        lsd_method: ``"lsd_cs"`` (combination sweep) or ``"lsd_e"`` (exhaustive), as ldpc's.
        bits_per_step: bits per growth step (ldpc's; 0: the whole neighbourhood, as ``bpuf``).
        lsd_key: the key clusters grow by (``"last"`` posterior or ``"sumK"``, as ``bposd``'s ``osd_key``).
        lsd_grow: with ``lsd_order > 0``, valid clusters grow on until their nullity is
            ``lsd_grow * lsd_order`` (the in-cluster OSD's room; 1 is ldpc's rule, which on BB72 at
            p = 0.004 left LSD-CS10 at 166 failures in 2,000 shots against bposd's 142; 10 gives 139).
        confidence: ``"gap"`` or ``"cluster"``: what :meth:`predict_with_confidence` reports (module docstring).
        max_iter, alpha, beta, schedule, bits, frac_bits, threads: passed to
            :class:`~qdecode.decoders.bp.BpDecoder`.

    ``last_info``: BP's convergence flags and iterations; ``extra["lsd"]`` marks the shots LSD
    decoded and ``extra["lsd_failed"]`` those whose syndrome is outside ``H``'s column space.

    Work bound: BP runs at most ``max_iter`` iterations per shot (default 80), each
    O(n + m + nnz(H)). On a shot BP did not converge on, every LSD growth step adds at least one
    of the n bits to a cluster or ends that cluster's growth, and a bit never leaves its cluster.
    So growth (with the pre-growth of ``lsd_order`` > 0) ends after at most n steps that add bits
    plus at most one step per cluster (at most m) that finds none. Each added bit's column is
    eliminated against the shot's basis of at most m vectors, O(m (m + n) / 64) word operations.
    With ``lsd_order`` w > 0 (default 30; 0: LSD-0, no search) each cluster of nullity k_c runs one
    OSD of order w' = min(w, k_c): ``lsd_cs`` (the default ``lsd_method``) tests k_c +
    w' (w' - 1) / 2 patterns, ``lsd_e`` 2^w' - 1 (w <= 20). :meth:`predict_with_confidence` runs
    that LSD on every shot (the same bound per shot; with the gap, each tested pattern's weight and
    class cost O(its support) more). ``bpuf`` is this class with ``bits_per_step`` 0 and LSD-0.

    Work clock (:attr:`work_unit`): elementary operations (:data:`~qdecode.decoders.osd.OPERATIONS_UNIT`),
    ``nnz(H)`` edge updates per BP iteration plus, on a shot that gets LSD, LSD's count in its kernel
    (:mod:`qdecode.kernels.lsd`, "Work clock": the Tanner-graph entries its growth scans, the 64-bit words of
    its on-the-fly elimination and validity tests, the in-cluster OSD's word operations). After
    :meth:`predict_with_confidence` every shot also counts the LSD run for its confidence. Wall clock: one
    call per shot (:attr:`wall_method` ``"call"``).
    """

    has_confidence = True
    takes_shot_priors = True
    work_unit = OPERATIONS_UNIT

    def __init__(self, problem: DecodingProblem, *, lsd_order: int, lsd_method: str, bits_per_step: int,
                 lsd_grow: int, lsd_key: str, max_iter: int, alpha: float, beta: float, schedule: str, bits: int,
                 frac_bits: int, confidence: str, threads: int | None = None):
        if confidence not in CONFIDENCES:
            raise ValueError(f"confidence={confidence!r} must be one of {list(CONFIDENCES)}")
        if lsd_method not in LSD_METHODS:
            raise ValueError(f"lsd_method={lsd_method!r} must be one of {list(LSD_METHODS)}")
        if lsd_method == "lsd_e" and lsd_order > 20:
            raise ValueError(f"lsd_order={lsd_order} is too large for lsd_e (2^order candidates per cluster; <= 20)")
        self.problem = problem
        self.lsd_order = int(lsd_order)
        self.lsd_method = lsd_method
        self.bits_per_step = int(bits_per_step)
        self.lsd_grow = int(lsd_grow)
        self.lsd_key = lsd_key
        self.confidence = confidence
        self._col_code: np.ndarray | None = None  # class codes of the columns, made on first use
        self.history = history_length(lsd_key)
        self.threads = threads
        self.bp = BpDecoder(problem, max_iter=max_iter, alpha=alpha, beta=beta, schedule=schedule, bits=bits,
                            frac_bits=frac_bits, threads=threads)
        H = problem.H
        m, n = H.shape
        csc = H.tocsc()
        csc.sort_indices()
        csr = H.tocsr()
        csr.sort_indices()
        col_ptr = np.ascontiguousarray(csc.indptr, dtype=np.int64)
        row_idx = np.ascontiguousarray(csc.indices, dtype=np.int64)
        colbits = np.zeros((n, gf2.num_words(m)), dtype=np.uint64)
        gf2.pack_csc_columns(col_ptr, row_idx, colbits)
        self._lsd_problem = LsdProblem(col_ptr, row_idx, np.ascontiguousarray(csr.indptr, dtype=np.int64),
                                       np.ascontiguousarray(csr.indices, dtype=np.int64), colbits,
                                       np.array([math.log(1.0 / p) for p in problem.priors], dtype=np.float64))

    def _lsd(self, s: np.ndarray, post: np.ndarray, mask: np.ndarray, order: int, out: LsdOut,
             gap: LsdGapWeights | None = None) -> None:
        """LSD of order ``order`` on the shots of ``mask`` (rows of ``s`` and ``post``) into ``out``
        (with ``gap``, the gap's weights and classes: ``out``'s gap fields too)."""
        if mask.any():
            params = LsdParams(self.bits_per_step, LSD_METHODS[self.lsd_method], order, self.lsd_grow)
            run_ranges(lsd_range, (self._lsd_problem, s, post, mask, params, out, gap), s.shape[0], self.threads)

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        hard, post, conv, iters = self.bp._run(self.bp.prior_llr, s, True, self.history)
        failed = ~conv
        status = np.ones(s.shape[0], dtype=np.uint8)
        lsd_work = np.zeros(s.shape[0], dtype=np.int64)
        self._lsd(s, np.ascontiguousarray(post, dtype=np.float64), failed, self.lsd_order,
                  LsdOut(hard, status, lsd_work, *_NOT_WANTED))
        self.last_info = DecodeInfo(converged=conv, iterations=iters,
                                    extra={"lsd": failed, "lsd_failed": status == 0},
                                    work=bp_operations(iters, self.problem.H) + lsd_work)
        return hard

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` confidence in dB).

        The observables are those of :meth:`predict_observables_batch`; the confidence is the LSD
        search's gap (``confidence="gap"``) or ``-10 log10 Q`` of the cluster statistic
        (``"cluster"``), as the module docstring defines them. ``last_info.extra``: ``cluster_q``
        (float64 ``(S,)``, ``Q``), and for the gap ``weight_best`` and ``weight_other`` (float64 ``(S,)``).

        Examples:
            >>> rep3 = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
            >>> dec = BpLsdDecoder(rep3, lsd_order=0, lsd_method="lsd_cs", bits_per_step=1, lsd_grow=1,
            ...                    lsd_key="last", max_iter=1, alpha=1.0, beta=0.0, schedule="flooding", bits=0,
            ...                    frac_bits=3, confidence="cluster")
            >>> obs, conf = dec.predict_with_confidence(np.array([[0, 0], [1, 0]], np.uint8))
            >>> obs.ravel().tolist(), [round(float(c), 2) for c in conf]  # no cluster; one bit of 3
            ([0, 1], [inf, 4.77])
            >>> dec = BpLsdDecoder(rep3, lsd_order=1, lsd_method="lsd_e", bits_per_step=1, lsd_grow=2,
            ...                    lsd_key="last", max_iter=1, alpha=1.0, beta=0.0, schedule="flooding", bits=0,
            ...                    frac_bits=3, confidence="gap")
            >>> obs, gap = dec.predict_with_confidence(np.array([[1, 0], [0, 0]], np.uint8))
            >>> obs.ravel().tolist(), np.round(gap.astype(float), 2).tolist()  # W: ln 9 vs 2 ln 9; no cluster
            ([1, 0], [9.54, inf])
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S = s.shape[0]
        if self.confidence == "gap" and self.lsd_order == 0:
            raise ValueError("bplsd: confidence=gap needs the in-cluster search (lsd_order > 0); with lsd_order=0 "
                             "use confidence=cluster")
        hard, post, conv, iters = self.bp._run(self.bp.prior_llr, s, True, self.history)
        post = np.ascontiguousarray(post, dtype=np.float64)
        status = np.ones(S, dtype=np.uint8)
        norm = np.zeros(S, dtype=np.float64)
        lsd_work = np.zeros(S, dtype=np.int64)  # both LSD runs write it: their masks are disjoint
        extra = {"lsd": ~conv}
        if self.confidence == "cluster":
            self._lsd(s, post, ~conv, self.lsd_order, LsdOut(hard, status, lsd_work, norm, *_NOT_WANTED[1:]))
            self._lsd(s, post, conv, 0, LsdOut(np.zeros_like(hard), np.ones(S, dtype=np.uint8), lsd_work, norm,
                                               *_NOT_WANTED[1:]))
        else:
            extra.update(self._gap(s, post, conv, hard, status, norm, lsd_work))
        q = norm / float(np.sum(self.problem.llr))
        extra.update(lsd_failed=status == 0, cluster_q=q)
        self.last_info = DecodeInfo(converged=conv, iterations=iters, extra=extra,
                                    work=bp_operations(iters, self.problem.H) + lsd_work)
        obs = observables_from_errors(hard, self.problem)
        if self.confidence == "gap":
            return ConfidentPrediction(obs, gap_db(extra["weight_best"], extra["weight_other"]))
        with np.errstate(divide="ignore"):
            return ConfidentPrediction(obs, (-10.0 * np.log10(q)).astype(np.float32))

    def _gap(self, s: np.ndarray, post: np.ndarray, conv: np.ndarray, hard: np.ndarray, status: np.ndarray,
             norm: np.ndarray, work: np.ndarray) -> dict:
        """LSD with candidate tracking on every shot (its work into ``work``); BP's ``hard`` (S, n) gets LSD's
        decision where BP did not ``conv``erge. Returns ``weight_best`` and ``weight_other`` (float64 ``(S,)``;
        module docstring)."""
        S = hard.shape[0]
        if self._col_code is None:
            self._col_code = class_codes(self.problem.L)
        llr = self.problem.llr
        decided = np.zeros_like(hard)
        found = LsdOut(decided, status, work, norm, np.full(S, np.inf), np.zeros(S, dtype=np.uint64),
                       np.full(S, np.inf))
        self._lsd(s, post, np.ones(S, dtype=bool), self.lsd_order, found, LsdGapWeights(self._col_code, llr))
        failed = ~conv
        hard[failed] = decided[failed]
        w_best = correction_weight(hard, llr)
        other = other_class_weight(found, observables_class(observables_from_errors(hard, self.problem)))
        other[failed & (status == 0)] = np.nan  # no correction: s outside H's column space
        return {"weight_best": w_best, "weight_other": other}

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        return observables_from_errors(self.decode_batch(syndromes), self.problem)

    def predict_observables_with_priors(self, syndromes: np.ndarray, priors: ShotPriors) -> np.ndarray:
        """:meth:`predict_observables_batch` with per-shot priors (:meth:`Decoder.predict_observables_with_priors`):
        BP starts from each shot's LLRs and LSD costs its bits ``ln(1/p)`` with the shot's priors
        (:func:`~qdecode.kernels.lsd.lsd_shot_weights_range`)."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S, n = s.shape[0], self.problem.num_errors
        hard, post, conv, iters = self.bp._run(self.bp.shot_llrs(priors, 0, S), s, True, self.history)
        failed = ~conv
        status = np.ones(S, dtype=np.uint8)
        lsd_work = np.zeros(S, dtype=np.int64)
        if failed.any():
            weights = np.empty((S, n), dtype=np.float64)
            fill_costs(self._lsd_problem.weights, priors, weights)
            params = LsdParams(self.bits_per_step, LSD_METHODS[self.lsd_method], self.lsd_order, self.lsd_grow)
            out = LsdOut(hard, status, lsd_work, *_NOT_WANTED)
            run_ranges(lsd_shot_weights_range, (self._lsd_problem, weights, s, np.ascontiguousarray(post, np.float64),
                                                failed, params, out), S, self.threads)
        self.last_info = DecodeInfo(converged=conv, iterations=iters,
                                    extra={"lsd": failed, "lsd_failed": status == 0},
                                    work=bp_operations(iters, self.problem.H) + lsd_work)
        return observables_from_errors(hard, self.problem)


#: :class:`~qdecode.kernels.lsd.LsdOut`'s optional fields, not wanted (cluster norm, then the gap's three)
_NOT_WANTED = (np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.uint64), np.zeros(0))

#: ``bpuf``: BP then union-find on the Tanner graph (clusters grow by whole neighbourhoods, validity and
#: solution by elimination): ldpc's BeliefFindDecoder in its inversion form (Higgott et al., arXiv:2203.04948;
#: Delfosse, Londe, Beverland, arXiv:2103.08049), as BP+LSD-0 with ``bits_per_step = 0``.
BPUF_PARAMS = {**bp_params(80)}


def _bpuf(problem: DecodingProblem, **bp) -> BpLsdDecoder:
    return BpLsdDecoder(problem, lsd_order=0, lsd_method="lsd_cs", bits_per_step=0, lsd_grow=1, lsd_key="last",
                        confidence="cluster", **bp)


ENTRIES = {
    "bplsd": DecoderEntry("bplsd", BpLsdDecoder, BPLSD_PARAMS, has_confidence=True, takes_shot_priors=True,
                          doc="min-sum BP + localized statistics decoding (LSD-0, or in-cluster OSD-CS) on "
                              "non-converged shots"),
    "bpuf": DecoderEntry("bpuf", _bpuf, BPUF_PARAMS, has_confidence=True, takes_shot_priors=True,
                         doc="min-sum BP + union-find on the Tanner graph (belief-find, inversion form) on "
                             "non-converged shots; any check matrix"),
}
