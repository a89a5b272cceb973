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

import numba
import numpy as np

from qdecode.kernels.arith import clip
from qdecode.kernels.minsum import alpha_at, check_magnitude, fold_min, negative, signed
from qdecode.kernels.minsum_lanes import make_lane_queue, next_shot, retire_lane

#: lane count of the layered kernel
LAYERED_LANES = 32


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
def _layered_iteration(W, chk_ptr, chk_var, syn, post, c2v, v2c, a_f, num, shf, beta, msg_lim, post_lim,
                       min1, min2, arg, par, o1, o2):
    """One check-serial pass over all checks on every lane (in place on ``post`` and ``c2v``)."""
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
def minsum_layered_lanes_range(
    chk_ptr, chk_var, llr0, syndromes, max_iter,
    alpha, alpha_num, alpha_shift, adaptive, beta, msg_lim, post_lim,
    hard_out, post_out, converged_out, iters_out, hist_k, lanes, start, stop,
):
    """Layered min-sum of shots ``start:stop`` on ``lanes`` persistent lanes.

    Args:
        chk_ptr, chk_var: the check side of the Tanner graph (:func:`~qdecode.kernels.bp.tanner_graph_csr`).
        llr0: ``(1, n)`` shared priors or ``(S, n)`` per-shot priors (message dtype).
        syndromes: ``(S, m)`` uint8.
        hard_out: ``(S, n)`` uint8; post_out: ``(S, n)`` or ``(0, n)``; converged_out ``(S,)`` bool;
            iters_out ``(S,)`` int32.
        hist_k: for shots that do not converge, ``post_out`` receives the sum of the posteriors of the
            last ``hist_k`` iterations (``hist_k > 1``), as the scalar kernel's.
        Other arguments as :func:`qdecode.kernels.bp.bp_decode`.
    """
    n = llr0.shape[1]
    m = chk_ptr.shape[0] - 1
    nnz = chk_var.shape[0]
    W = lanes
    dt = llr0.dtype
    per_shot = llr0.shape[0] > 1
    keep_post = post_out.shape[0] > 0
    maxdeg = 1
    for i in range(m):
        maxdeg = max(maxdeg, chk_ptr[i + 1] - chk_ptr[i])
    post = np.zeros((n, W), dtype=dt)
    c2v = np.zeros((nnz, W), dtype=dt)
    v2c = np.zeros((maxdeg, W), dtype=dt)
    hard = np.zeros((n, W), dtype=np.uint8)
    syn = np.zeros((m, W), dtype=np.uint8)
    ring = np.zeros((hist_k if keep_post and hist_k > 1 else 0, n, W), dtype=dt)
    min1 = np.zeros(W, dtype=dt)
    min2 = np.zeros(W, dtype=dt)
    o1 = np.zeros(W, dtype=dt)
    o2 = np.zeros(W, dtype=dt)
    arg = np.zeros(W, dtype=np.int64)
    par = np.zeros(W, dtype=np.uint8)
    a_f = np.zeros(W, dtype=np.float64)
    num = np.zeros(W, dtype=np.int64)
    shf = np.zeros(W, dtype=np.int64)
    unsat = np.zeros(W, dtype=np.int64)
    q = make_lane_queue(W, start, stop)
    for w in range(W):
        s = next_shot(w, q)
        if s >= 0:
            _load_lane(w, s, llr0, syndromes, per_shot, post, c2v, syn)
    while q.pending[2] > 0:
        for w in range(W):
            a_f[w], num[w], shf[w] = alpha_at(q.it[w] + 1, alpha, alpha_num, alpha_shift, adaptive)
        _layered_iteration(W, chk_ptr, chk_var, syn, post, c2v, v2c, a_f, num, shf, beta, msg_lim, post_lim,
                           min1, min2, arg, par, o1, o2)
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
                    ring[row, j, w] = post[j, w]
        for w in range(W):  # retire finished lanes, load pending shots into them
            s = retire_lane(w, unsat[w], max_iter, q, hard, post, ring, keep_post,
                            converged_out, iters_out, hard_out, post_out)
            if s >= 0:
                _load_lane(w, s, llr0, syndromes, per_shot, post, c2v, syn)
