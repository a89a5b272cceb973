"""Exact probabilities of the logical classes of a syndrome: the error model contracted one mechanism at a time.

For independent mechanisms ``j`` (prior ``p_j``, detector set ``D_j``, observable set ``O_j``) and a
syndrome ``s`` (``m`` bits), the probability of each logical class ``c`` (an observable flip, ``k`` bits) is

    P(s, c) = sum over e in {0,1}^n with H e = s and L e = c of  prod_j p_j^(e_j) (1 - p_j)^(1 - e_j).

The decoder that answers ``argmax_c P(s, c)`` is the optimal (maximum-likelihood, degenerate) one; a
most-likely-*error* decoder keeps only the largest term of each sum. The sweep computes all ``2^k``
sums exactly, as Bravyi, Suchara and Vargo contract the surface code's network (arXiv:1405.4883), here
for any detector error model, mechanism by mechanism. Its state is a vector over the parities of the
*live* detectors (touched by a mechanism already taken and by one not yet taken) and of the observables:

    psi_t[x] = P(the first t mechanisms flip the live detectors and the observables by x,
                 and every closed detector by its syndrome bit).

``psi`` starts at the indicator of ``x = 0`` over the ``k`` observable bits (bits ``0..k-1``; the live
detectors take the bits above) and takes three kinds of step, fixed per model (:class:`SweepPlan`):

* ``OPEN``: a detector that the next mechanism touches first gets the new top bit (zeros above the old top);
* ``FLIP`` of mechanism ``j`` with ``mask`` = the bits of its detectors and observables:
  ``psi[x] <- (1 - p_j) psi[x] + p_j psi[x ^ mask]``;
* ``CLOSE`` of detector ``d`` at bit ``b``, once its last mechanism is taken: keep the half of ``psi``
  whose bit ``b`` is ``s_d``, and drop that bit (the bits above it move down one).

After the last step only the observable bits remain and ``psi[c] = P(s, c)``. One syndrome costs
``sum_t 2^(live_t + k)`` multiply-adds (:attr:`SweepPlan.cost`), so the order of the mechanisms decides
what is feasible: :func:`greedy_order` takes next the mechanism that leaves the fewest live detectors.
``psi`` is rescaled to a maximum of 1 after every close (a close is where probability is lost) and the
scales are summed as a natural log, so the answers are log-probabilities without underflow.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.threads import run_ranges

#: Step kinds of a :class:`SweepPlan`.
OPEN, FLIP, CLOSE = 0, 1, 2


class SweepPlan(NamedTuple):
    """The steps of one model's sweep (``T`` steps); the same for every syndrome.

    ``kind[t]`` is :data:`OPEN`, :data:`FLIP` or :data:`CLOSE`. For a ``FLIP``, ``mask[t]`` is the
    mechanism's bits (observables at bits ``0..k-1``, live detectors above) and ``prob[t]`` its prior; for
    a ``CLOSE``, ``mask[t]`` is the bit position of the closed detector and ``detector[t]`` its index in
    the syndrome.
    """

    kind: np.ndarray  # (T,) int8
    mask: np.ndarray  # (T,) int64
    detector: np.ndarray  # (T,) int64, -1 except at a CLOSE
    prob: np.ndarray  # (T,) float64, 0 except at a FLIP
    num_observables: int  # k
    width: int  # the most detectors live at once
    cost: float  # sum over the FLIPs of 2^(live + k): multiply-add pairs per syndrome / 2


def greedy_order(det_ptr: np.ndarray, det_idx: np.ndarray, num_detectors: int) -> np.ndarray:
    """An order of the mechanisms that keeps few detectors live: int64 ``(n,)``.

    Mechanism ``j`` touches detectors ``det_idx[det_ptr[j]:det_ptr[j + 1]]``. Each step takes, among the
    mechanisms that touch a live detector (the lowest-index untaken one when none does), the one whose
    taking changes the live count least (opens minus closes), then the one that opens fewest, then the
    lowest index: deterministic. Mechanisms that touch no detector come first.
    """
    n = det_ptr.size - 1
    left = np.zeros(num_detectors, dtype=np.int64)  # untaken mechanisms at each detector
    np.add.at(left, det_idx, 1)
    order = np.argsort(det_idx, kind="stable")
    owner = np.repeat(np.arange(n), np.diff(det_ptr))[order]
    at_ptr = np.zeros(num_detectors + 1, dtype=np.int64)  # CSR: the mechanisms at each detector
    at_ptr[1:] = np.cumsum(left)
    taken = np.zeros(n, dtype=bool)
    live = np.zeros(num_detectors, dtype=bool)
    out = [j for j in range(n) if det_ptr[j] == det_ptr[j + 1]]
    taken[out] = True
    candidates: set[int] = set()
    next_unseen = 0
    while len(out) < n:
        if not candidates:
            while taken[next_unseen]:
                next_unseen += 1
            candidates.add(next_unseen)
        best = None
        for j in candidates:
            dets = det_idx[det_ptr[j]:det_ptr[j + 1]]
            opens = int(np.count_nonzero(~live[dets]))
            closes = int(np.count_nonzero(left[dets] == 1))
            score = (opens - closes, opens, j)
            if best is None or score < best:
                best = score
        j = best[2]
        candidates.discard(j)
        taken[j] = True
        out.append(j)
        for d in det_idx[det_ptr[j]:det_ptr[j + 1]]:
            if not live[d]:
                live[d] = True
                candidates.update(int(i) for i in owner[at_ptr[d]:at_ptr[d + 1]] if not taken[i])
            left[d] -= 1
            if left[d] == 0:
                live[d] = False
    return np.asarray(out, dtype=np.int64)


def sweep_plan(det_ptr: np.ndarray, det_idx: np.ndarray, obs_mask: np.ndarray, prob: np.ndarray,
               num_detectors: int, num_observables: int, order: np.ndarray | None = None) -> SweepPlan:
    """The sweep's steps for mechanisms taken in ``order`` (default :func:`greedy_order`).

    Args:
        det_ptr, det_idx: CSR over the ``n`` mechanisms of the detectors each flips (int64).
        obs_mask: int64 ``(n,)``, the observables each flips as bits (``k`` < 63).
        prob: float64 ``(n,)`` priors in (0, 1).
        num_detectors: ``m``; a detector no mechanism touches gets no step (its syndrome bit must be 0).
        num_observables: ``k``.
        order: a permutation of the mechanisms, or None.
    """
    n = det_ptr.size - 1
    if order is None:
        order = greedy_order(det_ptr, det_idx, num_detectors)
    last = np.full(num_detectors, -1, dtype=np.int64)  # position in the order of each detector's last mechanism
    for pos, j in enumerate(order):
        last[det_idx[det_ptr[j]:det_ptr[j + 1]]] = pos
    k = num_observables
    slots: list[int] = []  # the live detectors, bit k + i for slots[i]
    kind, mask, detector, probs = [], [], [], []
    width, cost = 0, 0.0
    for pos in range(n):
        j = order[pos]
        dets = det_idx[det_ptr[j]:det_ptr[j + 1]]
        for d in dets:
            if d not in slots:
                slots.append(int(d))
                kind.append(OPEN), mask.append(0), detector.append(-1), probs.append(0.0)
        width = max(width, len(slots))
        bits = int(obs_mask[j])
        for d in dets:
            bits |= 1 << (k + slots.index(int(d)))
        if bits:
            kind.append(FLIP), mask.append(bits), detector.append(-1), probs.append(float(prob[j]))
            cost += 2.0 ** (len(slots) + k)
        for d in dets:
            if last[d] == pos:
                kind.append(CLOSE), mask.append(k + slots.index(int(d))), detector.append(int(d)), probs.append(0.0)
                slots.remove(int(d))
    return SweepPlan(np.asarray(kind, dtype=np.int8), np.asarray(mask, dtype=np.int64),
                     np.asarray(detector, dtype=np.int64), np.asarray(probs, dtype=np.float64), k, width, cost)


@numba.njit(cache=True, nogil=True)
def _contract(plan: SweepPlan, syndrome: np.ndarray, psi: np.ndarray) -> float:
    """One syndrome's sweep in ``psi`` (float64, at least ``2^(width + k)``); returns the log of the scales.

    On return ``psi[:2^k] * exp(log_scale)`` are the ``P(s, c)``; ``-inf`` when every class has probability 0.
    """
    bits = plan.num_observables
    psi[: 1 << bits] = 0.0
    psi[0] = 1.0
    log_scale = 0.0
    for t in range(plan.kind.size):
        step = plan.kind[t]
        if step == OPEN:
            size = 1 << bits
            psi[size: 2 * size] = 0.0
            bits += 1
        elif step == FLIP:
            m = plan.mask[t]
            pivot = m & -m  # x with this bit clear pairs with x ^ m, which has it set
            p = plan.prob[t]
            q = 1.0 - p
            for x in range(1 << bits):
                if x & pivot == 0:
                    y = x ^ m
                    a = psi[x]
                    b = psi[y]
                    psi[x] = q * a + p * b
                    psi[y] = q * b + p * a
        else:
            b = plan.mask[t]
            low = (1 << b) - 1
            v = np.int64(syndrome[plan.detector[t]]) << b
            half = 1 << (bits - 1)
            top = 0.0
            for y in range(half):  # ascending: the source index is never below y, so in place is safe
                val = psi[((y & ~low) << 1) | v | (y & low)]
                psi[y] = val
                if val > top:
                    top = val
            bits -= 1
            if top == 0.0:
                return -np.inf
            inv = 1.0 / top
            for y in range(half):
                psi[y] *= inv
            log_scale += np.log(top)
    return log_scale


@numba.njit(cache=True, nogil=True)
def class_log_probs_range(plan: SweepPlan, syndromes: np.ndarray, out: np.ndarray, start: int, stop: int) -> None:
    """Rows ``start:stop`` of :func:`class_log_probs`' answer, into ``out``; a state of its own (GIL released)."""
    k = plan.num_observables
    psi = np.empty(1 << (plan.width + k), dtype=np.float64)
    for s in range(start, stop):
        log_scale = _contract(plan, syndromes[s], psi)
        for c in range(1 << k):
            out[s, c] = np.log(psi[c]) + log_scale if log_scale > -np.inf else -np.inf


def class_log_probs(plan: SweepPlan, syndromes: np.ndarray, threads: int | None = None) -> np.ndarray:
    """float64 ``(S, 2^k)``: ``ln P(s, c)`` for each syndrome (uint8 ``(S, m)``) and class ``c`` (``-inf``: none).

    Class ``c``'s bit ``i`` is observable ``i``'s flip. ``threads`` (None: numba's count) split the syndromes
    into ranges, each with its own state of ``2^(width + k)`` float64; the answers do not depend on it.
    """
    out = np.empty((syndromes.shape[0], 1 << plan.num_observables), dtype=np.float64)
    run_ranges(class_log_probs_range, (plan, syndromes, out), syndromes.shape[0], threads)
    return out
