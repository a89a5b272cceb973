"""Layered (check-serial) min-sum over lanes of shots, bit-identical to the scalar layered kernel.

The schedule of :func:`qdecode.kernels.bp.bp_decode` with ``layered=True``: for each check ``i`` in
order, its incoming messages are refreshed from the current posteriors,
``v2c[e] = clip(post[j] - c2v[e], msg_lim)``, the check is updated by min-sum (the compressed state
of :mod:`qdecode.kernels.minsum`: ``fold_min``, ``check_magnitude``, ``signed``), and its new
messages are folded straight back, ``post[j] = clip(v2c[e] + c2v[e], post_lim)``; one pass over all
checks is one iteration. After each iteration the hard decisions are ``post <= 0`` and a lane stops
when they satisfy ``H e = s``; the first iteration always runs, as in the scalar kernel.

Here each of ``W`` lanes holds one shot (``post`` ``(n, W)``, ``c2v`` ``(nnz, W)`` in the check-major
edge order of :func:`~qdecode.kernels.bp.tanner_graph_csr`), so the inner loops run over lanes and
vectorise; lanes are persistent (a finished lane writes its result with
:func:`~qdecode.kernels.minsum_lanes.retire_lane` and takes the next shot). Any message dtype
(float64, float32, int32 fixed point) gives the scalar kernel's results bit for bit, posterior
history (``hist_k``) included.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.arith import clip
from qdecode.kernels.minsum import alpha_at, check_magnitude, fold_min, keep_history, negative, signed
from qdecode.kernels.minsum_lanes import history_ring, make_lane_queue, next_shot, retire_lane

#: lane count of the layered kernel
LAYERED_LANES = 32


class LayeredScratch(NamedTuple):
    """Buffers of one check-serial pass on ``W`` lanes (message dtype ``dt``): the check being updated and the
    lanes' scaling of this iteration."""

    v2c: np.ndarray  # (max check degree, W) dt: the check's refreshed incoming messages
    min1: np.ndarray  # (W,) dt: the check's least incoming magnitude
    min2: np.ndarray  # (W,) dt: ... second least
    arg: np.ndarray  # (W,) int64: the edge holding the least one (-1: none)
    par: np.ndarray  # (W,) uint8: incoming sign parity with the syndrome bit (also the unsatisfied-check count's)
    o1: np.ndarray  # (W,) dt: scaled outgoing magnitude to all but the arg edge
    o2: np.ndarray  # (W,) dt: ... and to the arg edge
    a_f: np.ndarray  # (W,) float64: the lane's scaling alpha(t) (float messages)
    num: np.ndarray  # (W,) int64: ... its fixed-point numerator
    shf: np.ndarray  # (W,) int64: ... and shift


@numba.njit(cache=True, nogil=True)
def _load_lane(w, s, llr0, syndromes, per_shot, post, c2v, syn):
    """Shot ``s`` into lane ``w``: posteriors = priors, check-to-variable messages 0, the syndrome bits."""
    r = s if per_shot else 0
    for j in range(post.shape[0]):
        post[j, w] = llr0[r, j]
    for e in range(c2v.shape[0]):
        c2v[e, w] = c2v[e, w] - c2v[e, w]
    for i in range(syn.shape[0]):
        syn[i, w] = syndromes[s, i] & 1


@numba.njit(cache=True, nogil=True)
def _layered_iteration(graph, prm, syn, post, c2v, sc):
    """One check-serial pass over all checks on every lane (in place on ``post`` ``(n, W)`` and ``c2v``
    ``(nnz, W)``; ``syn`` ``(m, W)`` uint8 the lanes' syndromes, ``graph`` a
    :class:`~qdecode.kernels.bp_args.TannerGraph`, ``prm`` a :class:`~qdecode.kernels.bp_args.MinSumParams`,
    ``sc`` a :class:`LayeredScratch` with the lanes' scaling set)."""
    chk_ptr, chk_var = graph.chk_ptr, graph.chk_var
    beta, msg_lim, post_lim = prm.beta, prm.msg_lim, prm.post_lim
    v2c, min1, min2, arg, par, o1, o2 = sc.v2c, sc.min1, sc.min2, sc.arg, sc.par, sc.o1, sc.o2
    a_f, num, shf = sc.a_f, sc.num, sc.shf
    W = min1.shape[0]  # a runtime trip count: LLVM's loop vectoriser handles the lane loops
    m = chk_ptr.shape[0] - 1
    for i in range(m):
        lo = chk_ptr[i]
        hi = chk_ptr[i + 1]
        for w in range(W):
            min1[w] = msg_lim
            min2[w] = msg_lim
            arg[w] = -1
            par[w] = syn[i, w]
        for e in range(lo, hi):  # refresh incoming messages from the current posteriors, fold them
            j = chk_var[e]
            t = e - lo
            for w in range(W):
                v2c[t, w] = clip(post[j, w] - c2v[e, w], msg_lim)
                x = v2c[t, w]
                par[w] ^= negative(x)
                min1[w], min2[w], arg[w] = fold_min(abs(x), e, min1[w], min2[w], arg[w])
        for w in range(W):
            o1[w] = check_magnitude(min1[w], a_f[w], num[w], shf[w], beta, msg_lim)
            o2[w] = check_magnitude(min2[w], a_f[w], num[w], shf[w], beta, msg_lim)
        for e in range(lo, hi):  # new messages, folded straight back into the posteriors
            j = chk_var[e]
            t = e - lo
            for w in range(W):
                c2v[e, w] = signed(o2[w] if e == arg[w] else o1[w], par[w] ^ negative(v2c[t, w]))
                post[j, w] = clip(v2c[t, w] + c2v[e, w], post_lim)


@numba.njit(cache=True, nogil=True)
def minsum_layered_lanes_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """Layered min-sum of shots ``start:stop`` on ``lanes`` persistent lanes.

    Args:
        graph: :class:`~qdecode.kernels.bp_args.TannerGraph` (:func:`~qdecode.kernels.bp.tanner_graph_csr`); the
            check side ``chk_ptr``, ``chk_var`` is read.
        llr0: ``(1, n)`` shared priors or ``(S, n)`` per-shot priors (message dtype).
        syndromes: ``(S, m)`` uint8.
        prm: :class:`~qdecode.kernels.bp_args.MinSumParams` (as :func:`qdecode.kernels.bp.bp_decode`'s).
        out: :class:`~qdecode.kernels.bp_args.BpOut`: ``hard`` ``(S, n)`` uint8; ``post`` ``(S, n)`` or ``(0, n)``;
            ``converged`` ``(S,)`` bool; ``iters`` ``(S,)`` int32; rows ``start:stop`` are written.
        hist_k: for shots that do not converge, ``out.post`` receives the sum of the posteriors of the
            last ``hist_k`` iterations (``hist_k > 1``), as the scalar kernel's.
        lanes, start, stop: the lane count ``W`` (:data:`LAYERED_LANES`) and the shots to decode.
    """
    chk_ptr, chk_var = graph.chk_ptr, graph.chk_var
    max_iter, alpha, alpha_num = prm.max_iter, prm.alpha, prm.alpha_num
    alpha_shift, adaptive = prm.alpha_shift, prm.adaptive
    n = llr0.shape[1]
    m = chk_ptr.shape[0] - 1
    nnz = chk_var.shape[0]
    W = lanes
    dt = llr0.dtype
    per_shot = llr0.shape[0] > 1
    keep_post = out.post.shape[0] > 0
    maxdeg = 1
    for i in range(m):
        maxdeg = max(maxdeg, chk_ptr[i + 1] - chk_ptr[i])
    post = np.zeros((n, W), dtype=dt)
    c2v = np.zeros((nnz, W), dtype=dt)
    hard = np.zeros((n, W), dtype=np.uint8)
    syn = np.zeros((m, W), dtype=np.uint8)
    ring = history_ring(hist_k, keep_post, n, W, np.zeros(1, dtype=dt)[0])
    sc = LayeredScratch(np.zeros((maxdeg, W), dtype=dt), np.zeros(W, dtype=dt), np.zeros(W, dtype=dt),
                        np.zeros(W, dtype=np.int64), np.zeros(W, dtype=np.uint8), np.zeros(W, dtype=dt),
                        np.zeros(W, dtype=dt), np.zeros(W, dtype=np.float64), np.zeros(W, dtype=np.int64),
                        np.zeros(W, dtype=np.int64))
    par, a_f, num, shf = sc.par, sc.a_f, sc.num, sc.shf
    unsat = np.zeros(W, dtype=np.int64)
    q = make_lane_queue(W, start, stop)
    for w in range(W):
        s = next_shot(w, q)
        if s >= 0:
            _load_lane(w, s, llr0, syndromes, per_shot, post, c2v, syn)
    while q.pending[2] > 0:
        for w in range(W):
            a_f[w], num[w], shf[w] = alpha_at(q.it[w] + 1, alpha, alpha_num, alpha_shift, adaptive)
        _layered_iteration(graph, prm, syn, post, c2v, sc)
        for j in range(n):
            for w in range(W):
                hard[j, w] = negative(post[j, w])
        for w in range(W):
            unsat[w] = 0
        for i in range(m):  # unsatisfied checks of H e + s per lane
            for w in range(W):
                par[w] = syn[i, w]
            for e in range(chk_ptr[i], chk_ptr[i + 1]):
                j = chk_var[e]
                for w in range(W):
                    par[w] ^= hard[j, w]
            for w in range(W):
                unsat[w] += par[w]
        if ring.shape[0] > 0:
            for w in range(W):
                row = q.it[w] % ring.shape[0]
                for j in range(n):
                    keep_history(ring, row, j, w, post[j, w])
        for w in range(W):  # retire finished lanes, load pending shots into them
            s = retire_lane(w, unsat[w], max_iter, q, hard, post, ring, keep_post, out)
            if s >= 0:
                _load_lane(w, s, llr0, syndromes, per_shot, post, c2v, syn)
