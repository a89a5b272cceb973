"""Belief-propagation kernels: min-sum (float and saturating fixed point) and product-sum.

Graph layout (built once per problem by :func:`tanner_graph`): edges are numbered in
CSR order of H (check-major). ``chk_ptr[i]:chk_ptr[i+1]`` are check ``i``'s edges and
``chk_var[e]`` is edge ``e``'s variable; ``var_ptr[j]:var_ptr[j+1]`` index
``var_edges``, the edges of variable ``j``. Messages live in two flat buffers of
length ``nnz``: ``v2c`` (variable -> check) and ``c2v`` (check -> variable).

Update rules (LLR sign: positive = "no flip"; hard decision ``M_j <= 0 -> 1``):

* initialise ``v2c[e] = lambda_j`` (channel / prior LLR), ``c2v = 0``;
* min-sum check update: ``c2v[e] = (-1)^(s_i + #{e' != e : v2c[e'] <= 0})
  * max(alpha(t) * min_{e' != e} |v2c[e']| - beta, 0)``; a zero message counts as
  negative, as in ldpc. ``alpha(t) = 1 - 2^-t`` (t = 1, 2, ...) when adaptive;
* product-sum check update: ``c2v[e] = (-1)^(s_i) * 2 atanh(prod_{e' != e} tanh(v2c[e']/2))``,
  with the product excluding ``e`` formed by prefix/suffix products (no division by a
  possibly-zero tanh) and clipped to ``|prod| <= 1 - 1e-15`` so ``atanh`` stays finite;
* variable update: ``M_j = lambda_j + sum c2v``, ``v2c[e] = M_j - c2v[e]``;
* stop as soon as the hard decision satisfies ``H e = s``.

Schedules: ``flooding`` (all checks, then all variables, per iteration) and
``layered`` (check-serial: for each check in order, refresh its incoming messages
from the current posteriors, update it, fold the new messages back into the
posteriors; one pass over all checks is one iteration).

Fixed point: the same min-sum kernel runs on integer message arrays. Magnitudes are
scaled by ``(|x| * alpha_num) >> alpha_shift`` (truncation), messages saturate
symmetrically to ``[-msg_lim, msg_lim]`` and posteriors to ``[-post_lim, post_lim]``.
With float arrays the limits act as LLR clipping. Integer kernels are exact and
deterministic, so they are the bit-accurate reference for an RTL implementation.

All kernels are pure functions of their inputs (no randomness); batch wrappers run
range kernels (GIL released, run on a thread pool by the decoders) with scratch buffers
allocated once per range.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.answer_trail import answer_code, no_answer_trail, record_answer, shot_trail
from qdecode.kernels.arith import clip
from qdecode.kernels.bp_args import TannerGraph
from qdecode.kernels.clock import ticks
from qdecode.kernels.minsum import (
    alpha_at,
    check_magnitude,
    extrinsic,
    flip_decision,
    fold_min,
    history_rows,
    history_start,
    negative,
    prior_state,
    signed,
)

# ---------------------------------------------------------------------- graph


def tanner_graph_csr(indptr, indices, n: int) -> TannerGraph:
    """The :class:`~qdecode.kernels.bp_args.TannerGraph` ``(chk_ptr, chk_var, var_ptr, var_edges, var_chks)`` of
    the CSR arrays of an ``(m, n)`` 0/1 ``H``.

    The one Tanner-graph builder. ``indices`` must be sorted within each row and free of
    duplicates (a canonical CSR, as :class:`qdecode.problem.DecodingProblem` holds). Edges are
    H's stored entries in CSR order; ``var_edges`` lists them variable by variable (check order
    inside), so ``var_edges[k]`` is the CSR position of the k-th CSC entry, and ``var_chks[k]``
    is its check. Pointers are int64, indices uint32: unsigned indices spare numba's
    negative-index wraparound test in the hot loops.
    """
    chk_ptr = np.asarray(indptr).astype(np.int64)
    idx = np.asarray(indices)
    m = chk_ptr.shape[0] - 1
    if idx.shape[0] >= 2**32 or n >= 2**32:
        raise ValueError(f"H is too large for 32-bit edge indices: shape {(m, n)}, nnz {idx.shape[0]}")
    chk_var = idx.astype(np.uint32)
    order = np.argsort(chk_var, kind="stable")  # edges grouped by variable, check order inside
    var_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(chk_var, minlength=n), out=var_ptr[1:])
    var_edges = order.astype(np.uint32)
    edge_chk = np.repeat(np.arange(m, dtype=np.uint32), np.diff(chk_ptr))
    return TannerGraph(chk_ptr, chk_var, var_ptr, var_edges, edge_chk[var_edges])


def tanner_graph(H) -> TannerGraph:
    """:func:`tanner_graph_csr` of a canonical scipy CSR ``H`` (``DecodingProblem.H``), read
    through its ``indptr`` / ``indices`` / ``shape`` (no scipy import here).

    Raises:
        ValueError: ``H`` is not a CSR matrix in canonical form (convert it first:
            ``sp.csr_matrix(H)``, ``sum_duplicates()``, ``sort_indices()``).
    """
    if getattr(H, "format", None) != "csr" or not getattr(H, "has_canonical_format", False):
        raise ValueError("tanner_graph needs a canonical scipy CSR matrix (sorted indices, no duplicates)")
    return tanner_graph_csr(H.indptr, H.indices, int(H.shape[1]))


# ------------------------------------------------------------- check updates


@numba.njit(cache=True, nogil=True)
def _minsum_check(i, chk_ptr, v2c, c2v, syndrome, alpha, num, shift, beta, msg_lim):
    """Min-sum update of check ``i``: ``c2v`` of its edges from ``v2c`` of its edges.

    The compressed state of :mod:`qdecode.kernels.minsum` over the check's edges (in CSR order):
    the first occurrence of the minimum receives the second minimum; a degree-1 check has no other
    edge, and the minimum over the empty set is ``msg_lim`` (saturated "infinity").
    """
    lo = chk_ptr[i]
    hi = chk_ptr[i + 1]
    parity = syndrome[i] & 1
    min1 = msg_lim
    min2 = msg_lim
    arg = -1
    for e in range(lo, hi):
        x = v2c[e]
        parity ^= negative(x)
        min1, min2, arg = fold_min(abs(x), e, min1, min2, arg)
    m1 = check_magnitude(min1, alpha, num, shift, beta, msg_lim)
    m2 = check_magnitude(min2, alpha, num, shift, beta, msg_lim)
    for e in range(lo, hi):
        c2v[e] = signed(m2 if e == arg else m1, parity ^ negative(v2c[e]))


@numba.njit(cache=True, nogil=True)
def _productsum_check(i, chk_ptr, v2c, c2v, syndrome, scratch, msg_lim):
    """Product-sum update of check ``i`` (float messages).

    ``scratch`` holds ``2 * max check degree`` floats: the prefix products in the first half,
    the edges' ``tanh(v2c / 2)`` in the second (each tanh is evaluated once per edge).
    """
    lo = chk_ptr[i]
    hi = chk_ptr[i + 1]
    deg = hi - lo
    if deg == 0:
        return
    half = scratch.shape[0] // 2
    # scratch[k] = prod_{k' < k} t_k'  (prefix), then multiply by suffix on the way back
    acc = 1.0
    for k in range(deg):
        scratch[k] = acc
        t = math.tanh(0.5 * v2c[lo + k])  # math: libm in both modes (numpy's scalar tanh differs by an ulp)
        scratch[half + k] = t
        acc *= t
    acc = 1.0
    sgn = -1.0 if syndrome[i] & 1 else 1.0
    for k in range(deg - 1, -1, -1):
        prod = scratch[k] * acc
        acc *= scratch[half + k]
        if prod > 1.0 - 1e-15:
            prod = 1.0 - 1e-15
        elif prod < -1.0 + 1e-15:
            prod = -1.0 + 1e-15
        c2v[lo + k] = clip(sgn * 2.0 * math.atanh(prod), msg_lim)


# ------------------------------------------------------- variable side, parity


@numba.njit(cache=True, nogil=True, inline="always")
def _variable_update(j, var_ptr, var_edges, var_chks, llr0, v2c, c2v, post, hard, parity, msg_lim, post_lim):
    """Posterior, hard decision and outgoing messages of variable ``j``; returns the change
    in the number of unsatisfied checks (``parity`` tracks ``H hard + s`` incrementally)."""
    total = llr0[j]
    for k in range(var_ptr[j], var_ptr[j + 1]):
        total += c2v[var_edges[k]]
    total = clip(total, post_lim)
    post[j] = total
    for k in range(var_ptr[j], var_ptr[j + 1]):
        e = var_edges[k]
        v2c[e] = extrinsic(total, c2v[e], msg_lim)
    h = negative(total)
    if h != hard[j]:
        hard[j] = h
        return flip_decision(j, var_ptr, var_chks, parity)
    return 0


# ------------------------------------------------------- posterior history


@numba.njit(cache=True, nogil=True, inline="always")
def record_posteriors(ring, it, max_iter, post):
    """Keep iteration ``it``'s posteriors ``post`` (n,) in row ``(it - 1) % k`` of ``ring`` (k, n).

    Only the last ``k`` iterations before ``max_iter`` are kept: the history is read only for shots
    that did not converge, and those run all ``max_iter`` iterations. ``k = 0``: nothing is kept.
    ``k = 1`` (:data:`~qdecode.kernels.minsum.HISTORY_MIN`): row 0 is the running minimum
    ``min_{t' <= it} M_j(t')`` over every iteration.
    """
    k = ring.shape[0]
    if k == 1:
        for j in range(post.shape[0]):
            ring[0, j] = post[j] if it == 1 else min(ring[0, j], post[j])
    elif k > 0 and it > max_iter - k:
        row = (it - 1) % k
        for j in range(post.shape[0]):
            ring[row, j] = post[j]


@numba.njit(cache=True, nogil=True)
def posterior_history(ring, converged, max_iter, post, out):
    """The ordering key of OSD into ``out`` (n,): ``post`` when the shot ``converged``, else the sum of the
    posteriors of the last ``k = ring.shape[0]`` iterations ``sum_{t > max_iter - k} M_j(t)``, oldest first
    (all iterations when ``max_iter < k``; :func:`~qdecode.kernels.minsum.history_start`); a one-row ring
    holds the running minimum, which the same sum reads alone.

    With fixed point the sum of ``k`` saturated posteriors is exact in int32 for ``k * post_lim < 2^31``.
    """
    if converged:
        for j in range(out.shape[0]):
            out[j] = post[j]
        return
    k = ring.shape[0]
    first = history_start(max_iter, k)
    for j in range(out.shape[0]):
        acc = ring[(first - 1) % k, j]
        for t in range(first + 1, max_iter + 1):
            acc += ring[(t - 1) % k, j]
        out[j] = acc


# ------------------------------------------------------------------ scratch


class BpWork(NamedTuple):
    """Scratch of :func:`bp_decode` (``nnz`` edges, ``m`` checks, ``dt`` the message dtype; ``maxdeg`` /
    ``maxvdeg`` the largest check / variable degree)."""

    v2c: np.ndarray  # (nnz,) dt: variable-to-check messages (two-phase kernels)
    c2v: np.ndarray  # (nnz,) dt: check-to-variable messages
    scratch: np.ndarray  # (2 maxdeg,) float64: product-sum prefix products + tanh values
    parity: np.ndarray  # (m,) uint8: parity of H hard + s
    sgn: np.ndarray  # (nnz,) uint8: sign of each v2c (compressed kernel)
    min1: np.ndarray  # (2, m) dt: check state, least incoming magnitude
    min2: np.ndarray  # (2, m) dt: second least
    arg: np.ndarray  # (2, m) int64: the edge holding the least one
    par: np.ndarray  # (2, m) uint8: sign parity
    out1: np.ndarray  # (m,) dt: scaled min1
    out2: np.ndarray  # (m,) dt: scaled min2
    cbuf: np.ndarray  # (maxvdeg,) dt: c2v of one variable


@numba.njit(cache=True, nogil=True)
def make_work(graph, dtype_example):
    """Scratch buffers for :func:`bp_decode` on ``graph`` (:class:`~qdecode.kernels.bp_args.TannerGraph`) in the
    dtype of the array ``dtype_example`` (allocate once per thread, reuse across shots): a :class:`BpWork`."""
    chk_ptr, var_ptr = graph.chk_ptr, graph.var_ptr
    m = chk_ptr.shape[0] - 1
    n = var_ptr.shape[0] - 1
    nnz = chk_ptr[m]
    maxdeg = 1
    for i in range(m):
        maxdeg = max(maxdeg, chk_ptr[i + 1] - chk_ptr[i])
    maxvdeg = 1
    for j in range(n):
        maxvdeg = max(maxvdeg, var_ptr[j + 1] - var_ptr[j])
    dt = dtype_example.dtype
    return BpWork(np.empty(nnz, dtype=dt), np.empty(nnz, dtype=dt), np.empty(2 * maxdeg, dtype=np.float64),
                  np.empty(m, dtype=np.uint8), np.empty(nnz, dtype=np.uint8), np.empty((2, m), dtype=dt),
                  np.empty((2, m), dtype=dt), np.empty((2, m), dtype=np.int64), np.empty((2, m), dtype=np.uint8),
                  np.empty(m, dtype=dt), np.empty(m, dtype=dt), np.empty(maxvdeg, dtype=dt))


# ------------------------------------------- flooding min-sum, compressed state


@numba.njit(cache=True, nogil=True)
def minsum_flooding(graph, llr0, syndrome, prm, work, post, hard, ring, trail):
    """Flooding min-sum, variable-centric with compressed check state: the RTL contract (:mod:`qdecode.hw.rtl`).

    A min-sum check message is fully described per check by the two smallest incoming
    magnitudes, the variable holding the smallest, and the parity of the incoming signs
    (syndrome included); per edge only the sign of the variable's own message is
    needed. So one sequential sweep over the variables computes every ``c2v`` from the
    previous iteration's check state, the posteriors, and folds the new ``v2c`` into
    the next check state: the same arithmetic as the two-phase flooding schedule
    (first occurrence of the minimum gets the second minimum, edges of a check seen in
    ascending variable order, posterior sums in ascending check order), without
    scattered message reads. State arrays have a leading axis of 2 (current, next).

    Args:
        graph: :class:`~qdecode.kernels.bp_args.TannerGraph` (reads ``var_ptr``, ``var_chks``).
        llr0: ``(n,)`` channel / prior LLRs ``lambda_j``, message dtype.
        syndrome: ``(m,)`` uint8.
        prm: :class:`~qdecode.kernels.bp_args.MinSumParams` (scaling, offset, limits in the message dtype).
        work: :class:`BpWork` (:func:`make_work`); the compressed kernel uses ``sgn``, ``min1``, ``min2``,
            ``arg``, ``par``, ``out1``, ``out2``, ``cbuf`` and ``parity``.
        post: ``(n,)`` output posterior LLRs ``M_j``; hard: ``(n,)`` uint8 output decisions ``M_j <= 0``.
        ring: ``(k, n)`` posteriors of the last ``k`` iterations before ``max_iter`` (:func:`record_posteriors`),
            or ``(0, n)`` to keep none.
        trail: :class:`~qdecode.kernels.answer_trail.AnswerTrail` that receives the hard decision's class code
            whenever it changes (iteration 0: the priors' decision; capacity ``max_iter + 1`` holds every
            change), or :func:`~qdecode.kernels.answer_trail.no_answer_trail` to record none.

    Returns ``(converged, iterations)``.
    """
    var_ptr, var_chks = graph.var_ptr, graph.var_chks
    tracing = trail.work.shape[0] > 0
    code = np.uint64(0)  # the class code of hard, kept up to date at each flip when tracing
    max_iter, alpha, alpha_num, alpha_shift, adaptive, beta, msg_lim, post_lim = prm
    sgn, min1, min2, arg, par = work.sgn, work.min1, work.min2, work.arg, work.par
    out1, out2, cbuf, parity = work.out1, work.out2, work.cbuf, work.parity
    n = llr0.shape[0]
    m = syndrome.shape[0]
    cur = 0
    prior_state(var_ptr, var_chks, llr0, msg_lim, sgn, min1[cur], min2[cur], arg[cur], par[cur])
    unsat = np.int64(0)  # numba widens the uint8 parities it sums to int64; numpy would keep uint8
    for i in range(m):
        par[cur, i] ^= syndrome[i] & 1
        parity[i] = syndrome[i] & 1
        unsat += parity[i]
    for j in range(n):
        post[j] = llr0[j]
        hard[j] = 0
        if llr0[j] <= 0:
            hard[j] = 1
            unsat += flip_decision(j, var_ptr, var_chks, parity)
            if tracing:
                code ^= trail.class_code[j]
    if tracing:
        record_answer(trail, 0, code)
    for it in range(1, max_iter + 1):
        last_code = code
        a_f, num, shift = alpha_at(it, alpha, alpha_num, alpha_shift, adaptive)
        for i in range(m):  # scaled outgoing magnitudes of every check, from the current state
            out1[i] = check_magnitude(min1[cur, i], a_f, num, shift, beta, msg_lim)
            out2[i] = check_magnitude(min2[cur, i], a_f, num, shift, beta, msg_lim)
        nxt = 1 - cur
        for i in range(m):
            min1[nxt, i] = msg_lim
            min2[nxt, i] = msg_lim
            arg[nxt, i] = -1
            par[nxt, i] = syndrome[i] & 1
        for j in range(n):
            lo = var_ptr[j]
            hi = var_ptr[j + 1]
            total = llr0[j]
            for k in range(lo, hi):
                i = var_chks[k]
                c = signed(out2[i] if arg[cur, i] == j else out1[i], par[cur, i] ^ sgn[k])
                cbuf[k - lo] = c
                total += c
            total = clip(total, post_lim)
            post[j] = total
            for k in range(lo, hi):
                i = var_chks[k]
                v = extrinsic(total, cbuf[k - lo], msg_lim)
                neg = negative(v)
                sgn[k] = neg
                par[nxt, i] ^= neg
                min1[nxt, i], min2[nxt, i], arg[nxt, i] = fold_min(abs(v), j, min1[nxt, i], min2[nxt, i],
                                                                   arg[nxt, i])
            h = negative(total)
            if h != hard[j]:
                hard[j] = h
                unsat += flip_decision(j, var_ptr, var_chks, parity)
                if tracing:
                    code ^= trail.class_code[j]
        cur = nxt
        record_posteriors(ring, it, max_iter, post)
        if tracing and code != last_code:
            record_answer(trail, it, code)
        if unsat == 0:
            return True, it
    return False, max_iter


# ------------------------------------------------------------ single shot


@numba.njit(cache=True, nogil=True)
def bp_decode(graph, llr0, syndrome, method, layered, prm, work, post, hard, ring, trail):
    """Decode one shot. Returns ``(converged, iterations)``.

    Flooding min-sum runs the variable-centric compressed kernel
    (:func:`minsum_flooding`); product-sum and the layered schedule run the
    two-phase kernel over explicit edge messages (:func:`_bp_two_phase`).

    Args:
        graph: :class:`~qdecode.kernels.bp_args.TannerGraph` (:func:`tanner_graph`).
        llr0: ``(n,)`` channel / prior LLRs, same dtype as the messages.
        syndrome: ``(m,)`` uint8.
        method: 0 = min-sum, 1 = product-sum (float messages only).
        layered: check-serial schedule instead of flooding.
        prm: :class:`~qdecode.kernels.bp_args.MinSumParams`: ``max_iter`` (>= 1); ``alpha`` float scaling (float
            messages), ``alpha_num >> alpha_shift`` on integers; ``adaptive``: ``alpha(t) = 1 - 2^-t`` instead;
            ``beta`` the offset subtracted from min-sum magnitudes; ``msg_lim``, ``post_lim`` the saturation
            limits of messages and posteriors (message dtype).
        work: scratch buffers from :func:`make_work`.
        post: ``(n,)`` output posterior LLRs; hard: ``(n,)`` uint8 output decisions.
        ring: ``(k, n)`` posteriors of the last ``k`` iterations before ``max_iter`` (row ``(t - 1) % k``;
            :func:`record_posteriors`), or ``(0, n)`` to keep none.
        trail: :class:`~qdecode.kernels.answer_trail.AnswerTrail`: the trail of the hard decision (the anytime
            deadline policy; :func:`minsum_flooding`), or :func:`~qdecode.kernels.answer_trail.no_answer_trail`.
    """
    if method == 0 and not layered:
        return minsum_flooding(graph, llr0, syndrome, prm, work, post, hard, ring, trail)
    return _bp_two_phase(graph, llr0, syndrome, method, layered, prm, work, post, hard, ring, trail)


@numba.njit(cache=True, nogil=True)
def _bp_two_phase(graph, llr0, syndrome, method, layered, prm, work, post, hard, ring, trail):
    """Two-phase BP over explicit edge messages (product-sum, layered). Returns ``(converged, iterations)``.

    Arguments as :func:`bp_decode`; of ``work`` it uses ``v2c, c2v`` ``(nnz,)`` messages, ``scratch``
    ``(2 max check degree,)`` float64 and ``parity`` ``(m,)`` uint8.
    The syndrome of the current hard decision is tracked incrementally: a variable
    whose decision flips toggles its checks, so convergence is a counter test. A trail
    (``trail``) costs one O(n) pass per iteration here (:func:`answer_code`); the flooding
    min-sum kernel keeps its code up to date at each flip instead.
    """
    chk_ptr, chk_var, var_ptr, var_edges, var_chks = graph
    tracing = trail.work.shape[0] > 0
    max_iter, alpha, alpha_num, alpha_shift, adaptive, beta, msg_lim, post_lim = prm
    v2c, c2v, scratch, parity = work.v2c, work.c2v, work.scratch, work.parity
    n = llr0.shape[0]
    m = chk_ptr.shape[0] - 1
    for i in range(m):
        parity[i] = syndrome[i] & 1
    for j in range(n):
        post[j] = llr0[j]
        hard[j] = 0
        for k in range(var_ptr[j], var_ptr[j + 1]):
            e = var_edges[k]
            v2c[e] = clip(llr0[j], msg_lim)
            c2v[e] = v2c[e] - v2c[e]
    unsat = np.int64(0)  # numba widens the uint8 parities it sums to int64; numpy would keep uint8
    for i in range(m):
        unsat += parity[i]
    for j in range(n):
        if llr0[j] <= 0:
            hard[j] = 1
            unsat += flip_decision(j, var_ptr, var_chks, parity)
    code = np.uint64(0)
    if tracing:
        code = answer_code(trail.class_code, hard)
        record_answer(trail, 0, code)
    for it in range(1, max_iter + 1):
        a, num, shift = alpha_at(it, alpha, alpha_num, alpha_shift, adaptive)
        if layered:
            for i in range(m):
                lo = chk_ptr[i]
                hi = chk_ptr[i + 1]
                for e in range(lo, hi):  # refresh incoming from current posteriors
                    v2c[e] = clip(post[chk_var[e]] - c2v[e], msg_lim)
                if method == 0:
                    _minsum_check(i, chk_ptr, v2c, c2v, syndrome, a, num, shift, beta, msg_lim)
                else:
                    _productsum_check(i, chk_ptr, v2c, c2v, syndrome, scratch, msg_lim)
                for e in range(lo, hi):
                    post[chk_var[e]] = clip(v2c[e] + c2v[e], post_lim)
            for j in range(n):
                h = 1 if post[j] <= 0 else 0
                if h != hard[j]:
                    hard[j] = h
                    unsat += flip_decision(j, var_ptr, var_chks, parity)
        else:
            for i in range(m):
                if method == 0:
                    _minsum_check(i, chk_ptr, v2c, c2v, syndrome, a, num, shift, beta, msg_lim)
                else:
                    _productsum_check(i, chk_ptr, v2c, c2v, syndrome, scratch, msg_lim)
            for j in range(n):
                unsat += _variable_update(j, var_ptr, var_edges, var_chks, llr0, v2c, c2v, post, hard, parity,
                                          msg_lim, post_lim)
        record_posteriors(ring, it, max_iter, post)
        if tracing:
            now = answer_code(trail.class_code, hard)
            if now != code:
                code = now
                record_answer(trail, it, code)
        if unsat == 0:
            return True, it
    return False, max_iter


# ------------------------------------------------------------------ batches


@numba.njit(cache=True, nogil=True)
def bp_decode_range(graph, llr0, syndromes, method, layered, prm, out, hist_k, start, stop):
    """Decode shots ``start:stop`` with :func:`bp_decode`, shot by shot with one set of scratch buffers
    (releases the GIL: run ranges on several threads).

    This is the scalar path: product-sum and the layered schedule. The batch path of flooding min-sum is
    the lane kernel (:func:`qdecode.kernels.minsum_lanes.minsum_lanes_range`, bit-identical to
    :func:`bp_decode`), which the caller (``qdecode.decoders.bp``) picks in Python, so that a decoder
    compiles only the kernels its path runs (numba compiles every branch of a kernel: both paths in one
    kernel cost a first run ~9 s more).

    Args:
        graph: :class:`~qdecode.kernels.bp_args.TannerGraph`.
        llr0: ``(1, n)`` shared priors or ``(S, n)`` per-shot channel LLRs.
        syndromes: ``(S, m)`` uint8.
        method, layered, prm: as :func:`bp_decode`.
        out: :class:`~qdecode.kernels.bp_args.BpOut`: ``hard`` ``(S, n)`` uint8; ``post`` ``(S, n)``, or
            ``(0, n)`` to skip storing posteriors; ``converged`` ``(S,)`` bool; ``iters`` ``(S,)`` int32.
        hist_k: for shots that do not converge, ``out.post`` receives the sum of the posteriors of the
            last ``hist_k`` iterations (:func:`posterior_history`; the ordering key of OSD), or with
            :data:`~qdecode.kernels.minsum.HISTORY_MIN` their running minimum; converged shots, and
            ``hist_k = 1``, the last posterior.
        start, stop: the shots (rows of ``syndromes`` and of the outputs) to decode.
    """
    hard_out, post_out, converged_out, iters_out = out
    max_iter = prm.max_iter
    n = llr0.shape[1]
    per_shot = llr0.shape[0] > 1
    keep_post = post_out.shape[0] > 0
    work = make_work(graph, llr0[0])
    post = np.empty(n, dtype=llr0.dtype)
    ring = np.zeros((history_rows(hist_k, keep_post), n), dtype=llr0.dtype)
    no_trail = no_answer_trail()
    for s in range(start, stop):
        row = s if per_shot else 0
        ok, it = bp_decode(graph, llr0[row], syndromes[s], method, layered, prm, work, post, hard_out[s], ring,
                           no_trail)
        converged_out[s] = ok
        iters_out[s] = it
        if ring.shape[0] > 0:
            posterior_history(ring, ok, max_iter, post, post_out[s])
        elif keep_post:
            for j in range(n):
                post_out[s, j] = post[j]


@numba.njit(cache=True, nogil=True)
def bp_decode_timed_range(graph, llr0, syndromes, method, layered, prm, out, elapsed, trails, start, stop):
    """:func:`bp_decode` on shots ``start:stop`` one after another, each timed: ``elapsed[s]`` = ticks of
    :func:`~qdecode.kernels.clock.ticks` from the shot's start to its decision (int64).

    The real-time path of BP (``BpDecoder.predict_observables_timed``): the answers are those of
    :func:`bp_decode_range` (whose lane kernel is bit-identical to :func:`bp_decode`); ``out.post`` is
    not stored; the scratch is allocated before the first shot is timed. ``llr0`` is ``(1, n)``.
    ``trails``: :class:`~qdecode.kernels.answer_trail.AnswerTrailOut` with ``max_iter + 1`` events per shot
    records each shot's trail of hard decisions (ticks from the shot's start), 0 events none.
    """
    n = llr0.shape[1]
    work = make_work(graph, llr0[0])
    post = np.empty(n, dtype=llr0.dtype)
    ring = np.zeros((0, n), dtype=llr0.dtype)
    start_ticks = np.zeros(1, np.int64)
    for s in range(start, stop):
        t0 = ticks()
        start_ticks[0] = t0
        trail = shot_trail(trails, s, start_ticks)
        ok, it = bp_decode(graph, llr0[0], syndromes[s], method, layered, prm, work, post, out.hard[s], ring, trail)
        elapsed[s] = ticks() - t0
        out.converged[s] = ok
        out.iters[s] = it
