"""The maximum-likelihood logical class, exactly: the optimal decoder of small models.

For a syndrome ``s`` the decoder answers ``argmax_c P(s, c)`` over the ``2^k`` observable flips ``c``, where
``P(s, c)`` sums the probability of *every* error with that syndrome and that flip
(:mod:`qdecode.kernels.sweep_contraction`, which computes the sums exactly by contracting the model one
mechanism at a time). No decoder has a lower expected logical error rate on the same model: a
most-likely-error decoder (``mle``, Tesseract, matching) answers with the class of the single likeliest
error instead, and loses where a class of many slightly less likely errors outweighs it (degeneracy).

The mechanisms are the DEM's ``error`` instructions merged only where they flip the same detectors *and*
the same observables (their priors combined as independent flips, ``p = p1 (1 - p2) + p2 (1 - p1)``), so a
collision that :meth:`DecodingProblem.from_dem <qdecode.problem.DecodingProblem.from_dem>` resolves by the
likelier observable set is kept as two mechanisms here; a problem without a DEM uses its columns.

Feasible on small models only: one syndrome costs ``sum_t 2^(live_t + k)`` multiply-adds and a state of
``2^(width + k)`` float64, ``width`` being the most detectors the sweep keeps live at once. A model whose
``width + k`` exceeds ``max_width`` (default 24: 128 MiB) is refused at construction, naming both numbers.
stim's colour code ``memory_xyz`` d = 5 (1,104 mechanisms after merging) needs 20 + 1 bits and 6.2e8
multiply-add pairs per syndrome; d = 7 needs 39 + 1 and is out of reach.

Confidence (:mod:`qdecode.decoders.confidence`): the exact log-likelihood ratio of the answer's class and
the next likeliest class, ``10 log10(P(s, best) / P(s, next))`` dB: a gap between classes, where the
other decoders' gaps are between their lightest errors of two classes. ``inf`` when no other class has
any probability (``k = 0``).

Work clock (:attr:`CosetMlDecoder.work_unit`): the multiply-add pairs of one sweep, ``SweepPlan.cost``, the
same for every shot.
"""

from __future__ import annotations

import numpy as np

from qdecode.decoders.base import (
    DecodeInfo,
    Decoder,
    DecoderCapabilityError,
    DecoderInputError,
    DecoderRefusedError,
    check_syndromes,
)
from qdecode.decoders.confidence import ConfidentPrediction, gap_db
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.kernels.sweep_contraction import SweepPlan, class_log_probs, sweep_plan
from qdecode.problem import DecodingProblem, error_targets

#: Parameters of ``coset-ml`` and :class:`CosetMlDecoder`.
COSET_ML_PARAMS = {
    "max_width": Param(int, 24, "the most state bits (live detectors + observables) the sweep may need; "
                       "its state is 2^max_width float64", minimum=1, maximum=34, in_label=False),
    "threads": Param(int, 0, "threads for a batch, each with its own state (0 = numba's thread count); results do "
                     "not depend on it", minimum=0, in_label=False),
}

#: The most observables: the classes are bits of an int64 mask.
MAX_OBSERVABLES = 32


def mechanisms(problem: DecodingProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct mechanisms as ``(det_ptr, det_idx, obs_mask, prob)`` (int64 CSR, int64, float64).

    From the DEM's ``error`` instructions when the problem has one, else from the columns of ``H`` / ``L``;
    merged where detectors and observables both agree, and left out where they flip nothing.
    """
    if problem.dem is not None:
        flips = ((*error_targets(inst), inst.args_copy()[0]) for inst in problem.dem.flattened()
                 if inst.type == "error")
    else:
        Hc, Lc = problem.H.tocsc(), problem.L.tocsc()
        flips = ((Hc.indices[Hc.indptr[j]:Hc.indptr[j + 1]], Lc.indices[Lc.indptr[j]:Lc.indptr[j + 1]],
                  float(problem.priors[j])) for j in range(problem.num_errors))
    merged: dict[tuple[tuple[int, ...], int], float] = {}
    for dets, obs, p in flips:
        key = (tuple(sorted(int(d) for d in dets)), sum(1 << int(i) for i in obs))
        if p > 0 and (key[0] or key[1]):
            q = merged.get(key, 0.0)
            merged[key] = q * (1 - p) + p * (1 - q)  # two independent flips of the same kind
    keys = list(merged)
    det_ptr = np.zeros(len(keys) + 1, dtype=np.int64)
    det_ptr[1:] = np.cumsum([len(dets) for dets, _ in keys])
    det_idx = np.fromiter((d for dets, _ in keys for d in dets), dtype=np.int64, count=int(det_ptr[-1]))
    obs_mask = np.array([obs for _, obs in keys], dtype=np.int64)
    return det_ptr, det_idx, obs_mask, np.array([merged[key] for key in keys], dtype=np.float64)


@uses_params(COSET_ML_PARAMS)
class CosetMlDecoder(Decoder):
    """The likeliest logical class of each syndrome, by exact contraction (module docstring).

    Args:
        problem: the decoding problem; its DEM when it has one.
        max_width: the most state bits allowed (``width + k``).
        threads: threads for a batch (0: numba's count); each holds a state of ``2^(width + k)`` float64.

    ``last_info``: ``extra["log_prob"]`` float64 ``(S, 2^k)``, ``ln P(s, c)`` of every class ``c`` (bit ``i``
    of ``c``: observable ``i``'s flip; ``-inf``: no error gives that class); ``work``: the sweep's
    multiply-add pairs per shot.

    Work bound: one sweep of :attr:`plan` per distinct syndrome of a batch, ``plan.cost`` multiply-add
    pairs each; memory ``2^(plan.width + k)`` float64 per thread.

    Raises:
        DecoderRefusedError: the sweep needs more than ``max_width`` bits, or more than
            :data:`MAX_OBSERVABLES` observables.
        DecoderInputError: (when decoding) a syndrome with an event on a detector no mechanism flips.

    Examples:
        Degeneracy: one detector fires; mechanism ``a`` (p = 0.3) would explain it and flip the observable,
        and any odd number of four mechanisms ``b`` (p = 0.2 each) would explain it without. The single
        likeliest error is ``a`` (``mle`` answers 1), but the ``b`` class is likelier as a whole (0.30 to 0.17):

        >>> import numpy as np
        >>> H, L = [[1, 1, 1, 1, 1]], [[1, 0, 0, 0, 0]]
        >>> prob = DecodingProblem.from_check_matrix(H, [0.3, 0.2, 0.2, 0.2, 0.2], L=L)
        >>> dec = CosetMlDecoder(prob)
        >>> dec.predict_observables_batch(np.array([[1]], np.uint8)).tolist()
        [[0]]
        >>> np.round(np.exp(dec.last_info.extra["log_prob"]), 4).tolist()
        [[0.3046, 0.1694]]
    """

    gives_errors = False
    has_confidence = True
    work_unit = "multiply-add pairs of the sweep"

    def __init__(self, problem: DecodingProblem, *, max_width: int, threads: int):
        k = problem.num_observables
        if k > MAX_OBSERVABLES:
            raise DecoderRefusedError(f"coset-ml: {k} observables are {2 ** k} classes; at most {MAX_OBSERVABLES} "
                                      "observables")
        self.problem = problem
        self.threads = int(threads)
        det_ptr, det_idx, obs_mask, prob = mechanisms(problem)
        self.plan: SweepPlan = sweep_plan(det_ptr, det_idx, obs_mask, prob, problem.num_detectors, k)
        bits = self.plan.width + k
        if bits > max_width:
            raise DecoderRefusedError(
                f"coset-ml: the sweep keeps {self.plan.width} detectors live at once, plus {k} observables: "
                f"2^{bits} states, more than max_width={max_width} allows (exact only on small models)")
        self._silent = np.ones(problem.num_detectors, dtype=bool)  # detectors no mechanism flips
        self._silent[det_idx] = False

    def _class_log_probs(self, syndromes: np.ndarray) -> np.ndarray:
        """float64 ``(S, 2^k)``: ``ln P(s, c)``, one sweep per distinct syndrome; sets ``last_info``."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        bad = np.flatnonzero(np.any(s[:, self._silent], axis=1))
        if bad.size:
            raise DecoderInputError(f"coset-ml: shot {bad[0]} has an event on detector "
                                    f"{np.flatnonzero(s[bad[0]] & self._silent)[0]}, which no mechanism flips")
        S, k = s.shape[0], self.problem.num_observables
        log_prob = np.zeros((S, 1 << k))
        if S:
            uniq, inverse = np.unique(s, axis=0, return_inverse=True)
            log_prob = class_log_probs(self.plan, uniq, self.threads or None)[inverse.reshape(-1)]
        self.last_info = DecodeInfo(extra={"log_prob": log_prob}, work=np.full(S, int(self.plan.cost), np.int64))
        return log_prob

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        best = np.argmax(self._class_log_probs(syndromes), axis=1)  # ties: the lower class
        k = self.problem.num_observables
        return ((best[:, None] >> np.arange(k)) & 1).astype(np.uint8)

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` class log-likelihood ratio in dB)."""
        obs = self.predict_observables_batch(syndromes)
        log_prob = self.last_info.extra["log_prob"]
        top = np.sort(log_prob, axis=1)[:, ::-1]
        second = top[:, 1] if top.shape[1] > 1 else np.full(top.shape[0], -np.inf)
        return ConfidentPrediction(obs, gap_db(-top[:, 0], -second))

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        raise DecoderCapabilityError("coset-ml predicts observable flips only (it sums over the errors of each "
                                     "class and returns none of them); use predict_observables_batch")


ENTRIES = {
    "coset-ml": DecoderEntry("coset-ml", CosetMlDecoder, COSET_ML_PARAMS,
                             doc="the exactly most likely logical class (degenerate maximum likelihood) by "
                                 "contracting the model; optimal, small models only",
                             has_confidence=True),
}
