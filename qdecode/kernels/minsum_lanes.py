"""Flooding min-sum on ``LANES`` shots at once: the batch throughput kernel.

Same arithmetic as :func:`qdecode.kernels.bp.minsum_flooding` (so the results are
bit-identical to the single-shot kernel), with every state array given a trailing
lane axis of ``LANES`` independent shots. The innermost loops run over lanes, which
LLVM turns into SIMD code (the lane count is a runtime value on purpose: with a
compile-time constant LLVM fully unrolls the loops and then fails to vectorise them);
the per-edge index loads and loop overheads are shared by all lanes. The vectorised
loop body handles 32 lanes per pass on this hardware (vector width x interleave), and
lane counts below that run LLVM's scalar remainder loop: measured on the [[144,12,12]]
DEM, 16 lanes decode at the scalar kernel's speed and 32 lanes 2.4x faster.

Lanes are *persistent*: each lane carries its own shot and iteration counter; when a
lane's shot converges (or reaches ``max_iter``) its result is written out and the
next pending shot is loaded into that lane, so a slow shot never holds the others
back. One global step advances every active lane by one iteration from the
"current" check state to the "next" one; a newly loaded lane initialises its
"current" state, exactly as the single-shot kernel does before its first iteration.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.arith import clip
from qdecode.kernels.minsum import (
    alpha_at,
    check_magnitude,
    extrinsic,
    fold_min,
    history_rows,
    history_start,
    history_top,
    keep_history,
    negative,
    restart_history,
    signed,
)

LANES = 32  # shots decoded side by side (see the module docstring for why 32)


class LaneState(NamedTuple):
    """State of ``W`` lanes (trailing axis ``w``); check state rows ``[cur]`` / ``[1 - cur]`` swap each step."""

    sgn: np.ndarray  # (nnz, W) uint8: sign of each variable's message per CSC edge
    min1: np.ndarray  # (2, m, W): check state, least incoming magnitude,
    min2: np.ndarray  # (2, m, W): second least,
    arg: np.ndarray  # (2, m, W) int32: the variable holding the least one,
    par: np.ndarray  # (2, m, W) uint8: incoming sign parity with the syndrome bit
    parity: np.ndarray  # (m, W) uint8: parity of H hard + s
    unsat: np.ndarray  # (W,) int64: number of unsatisfied checks
    post: np.ndarray  # (n, W): posterior LLRs
    hard: np.ndarray  # (n, W) uint8: hard decisions


class LaneScratch(NamedTuple):
    """Per-step buffers of the lane kernel."""

    out1: np.ndarray  # (m, W): a check's outgoing magnitude to all but its arg variable
    out2: np.ndarray  # (m, W): ... and to its arg variable
    cbuf: np.ndarray  # (max variable degree, W): the check messages of one variable
    total: np.ndarray  # (W,): one variable's posterior
    a_f: np.ndarray  # (W,) float64: the lane's scaling (float messages)
    a_num: np.ndarray  # (W,) int64: ... and its integer numerator
    a_shift: np.ndarray  # (W,) int64: ... and shift
    srow: np.ndarray  # (W,) int64: the lane's syndrome / prior row
    ring: np.ndarray  # (k, n, W): posteriors of the lane's last k iterations before max_iter, row (t - 1) % k
    rrow: np.ndarray  # (W,) int64: the row of this iteration in ``ring``; -1: not kept


@numba.njit(cache=True, nogil=True)
def make_lane_state(nnz, m, n, W, dt):
    """Zeroed :class:`LaneState` of ``W`` lanes in message dtype ``dt``."""
    return LaneState(
        np.zeros((nnz, W), dtype=np.uint8), np.zeros((2, m, W), dtype=dt), np.zeros((2, m, W), dtype=dt),
        np.zeros((2, m, W), dtype=np.int32), np.zeros((2, m, W), dtype=np.uint8), np.zeros((m, W), dtype=np.uint8),
        np.zeros(W, dtype=np.int64), np.zeros((n, W), dtype=dt), np.zeros((n, W), dtype=np.uint8),
    )


@numba.njit(cache=True, nogil=True)
def load_lane(w, s, var_ptr, var_chks, llr0, syndromes, per_shot, cur, msg_lim, st):
    """Initialise lane ``w`` of :class:`LaneState` ``st`` with shot ``s``: check state from the channel
    LLRs, decisions, parity."""
    sgn, min1, min2, arg, par, parity, post, hard = st.sgn, st.min1, st.min2, st.arg, st.par, st.parity, \
        st.post, st.hard
    n = var_ptr.shape[0] - 1
    m = syndromes.shape[1]
    row = s if per_shot else 0
    for i in range(m):
        b = syndromes[s, i] & 1
        min1[cur, i, w] = msg_lim
        min2[cur, i, w] = msg_lim
        arg[cur, i, w] = -1
        par[cur, i, w] = b
        parity[i, w] = b
    count = 0
    for i in range(m):
        count += parity[i, w]
    for j in range(n):
        lam = llr0[row, j]
        x = clip(lam, msg_lim)
        neg = negative(x)
        a = abs(x)
        for k in range(var_ptr[j], var_ptr[j + 1]):
            i = var_chks[k]
            sgn[k, w] = neg
            par[cur, i, w] ^= neg
            m1, m2, ag = fold_min(a, j, min1[cur, i, w], min2[cur, i, w], arg[cur, i, w])
            min1[cur, i, w] = m1
            min2[cur, i, w] = m2
            arg[cur, i, w] = ag
        post[j, w] = lam
        h = negative(lam)
        hard[j, w] = h
        if h:
            for k in range(var_ptr[j], var_ptr[j + 1]):
                i = var_chks[k]
                p = parity[i, w] ^ 1
                parity[i, w] = p
                count += 2 * np.int64(p) - 1
    st.unsat[w] = count


@numba.njit(cache=True, nogil=True)
def _load_lane_from_template(w, s, syndromes, cur, tmpl, st):
    """:func:`load_lane` for shared priors: copy lane 0 of the zero-syndrome state ``tmpl``, then XOR
    the syndrome in.

    With shared priors the initial check state does not depend on the shot except through
    the syndrome bits, which enter only the sign parities, so one precomputed template
    replaces the per-shot fold over all edges.
    """
    m = syndromes.shape[1]
    count = 0
    for i in range(m):
        b = syndromes[s, i] & 1
        st.min1[cur, i, w] = tmpl.min1[0, i, 0]
        st.min2[cur, i, w] = tmpl.min2[0, i, 0]
        st.arg[cur, i, w] = tmpl.arg[0, i, 0]
        st.par[cur, i, w] = tmpl.par[0, i, 0] ^ b
        p = tmpl.parity[i, 0] ^ b
        st.parity[i, w] = p
        count += p
    for k in range(tmpl.sgn.shape[0]):
        st.sgn[k, w] = tmpl.sgn[k, 0]
    for j in range(tmpl.post.shape[0]):
        st.post[j, w] = tmpl.post[j, 0]
        st.hard[j, w] = tmpl.hard[j, 0]
    st.unsat[w] = count


@numba.njit(cache=True, nogil=True)
def _load(w, s, var_ptr, var_chks, llr0, syndromes, per_shot, cur, msg_lim, tmpl, st):
    """Load shot ``s`` into lane ``w``: from the template (shared priors) or from its own LLRs."""
    if per_shot:
        load_lane(w, s, var_ptr, var_chks, llr0, syndromes, per_shot, cur, msg_lim, st)
    else:
        _load_lane_from_template(w, s, syndromes, cur, tmpl, st)


@numba.njit(cache=True, nogil=True)
def _step(graph, llr0, syndromes, per_shot, keep_post, cur, q, prm, st, sc):
    """Advance every lane one flooding iteration, from check state ``cur`` to ``1 - cur``.

    Per variable, in ascending order: its check messages from the current state
    (:func:`~qdecode.kernels.minsum.signed` outgoing magnitudes), the posterior, then its new
    messages folded into the next state; the parity of ``H hard + s`` follows the flips.
    ``graph``: :class:`~qdecode.kernels.bp_args.TannerGraph`; ``q``: the :class:`LaneQueue` (each lane's shot
    and iterations so far); ``prm``: :class:`~qdecode.kernels.bp_args.MinSumParams`; ``st`` / ``sc``: the
    :class:`LaneState` / :class:`LaneScratch`; the others as :func:`minsum_lanes_range`'s.
    """
    # every group unpacked to locals first: the loops below read plain arrays and scalars
    var_ptr, var_chks = graph.var_ptr, graph.var_chks
    lane_it, shot = q.it, q.shot
    max_iter, alpha, alpha_num, alpha_shift, adaptive, beta, msg_lim, post_lim = prm
    n = var_ptr.shape[0] - 1
    m = syndromes.shape[1]
    W = st.unsat.shape[0]  # a runtime trip count: LLVM's loop vectoriser handles these lane loops
    sgn, parity, post, hard, unsat = st.sgn, st.parity, st.post, st.hard, st.unsat
    out1, out2, cbuf, total = sc.out1, sc.out2, sc.cbuf, sc.total
    a_f, a_num, a_shift, srow, ring, rrow = sc.a_f, sc.a_num, sc.a_shift, sc.srow, sc.ring, sc.rrow
    k = ring.shape[0]
    nxt = 1 - cur
    min1_c = st.min1[cur]
    min2_c = st.min2[cur]
    arg_c = st.arg[cur]
    par_c = st.par[cur]
    min1_n = st.min1[nxt]
    min2_n = st.min2[nxt]
    arg_n = st.arg[nxt]
    par_n = st.par[nxt]
    for w in range(W):
        a_f[w], a_num[w], a_shift[w] = alpha_at(lane_it[w] + 1, alpha, alpha_num, alpha_shift, adaptive)
        srow[w] = max(shot[w], 0)
        rrow[w] = lane_it[w] % k if k > 1 and lane_it[w] + 1 > max_iter - k else (0 if k == 1 else -1)
    for i in range(m):
        for w in range(W):
            out1[i, w] = check_magnitude(min1_c[i, w], a_f[w], a_num[w], a_shift[w], beta, msg_lim)
            out2[i, w] = check_magnitude(min2_c[i, w], a_f[w], a_num[w], a_shift[w], beta, msg_lim)
            min1_n[i, w] = msg_lim
            min2_n[i, w] = msg_lim
            arg_n[i, w] = -1
            par_n[i, w] = syndromes[srow[w], i] & 1
    for j in range(n):
        lo = var_ptr[j]
        hi = var_ptr[j + 1]
        if per_shot:
            for w in range(W):
                total[w] = llr0[srow[w], j]
        else:
            for w in range(W):
                total[w] = llr0[0, j]
        for e in range(lo, hi):
            i = var_chks[e]
            for w in range(W):
                c = signed(out2[i, w] if arg_c[i, w] == j else out1[i, w], par_c[i, w] ^ sgn[e, w])
                cbuf[e - lo, w] = c
                total[w] += c
        for w in range(W):
            total[w] = clip(total[w], post_lim)
        if keep_post:
            for w in range(W):
                post[j, w] = total[w]
        if k > 0:
            for w in range(W):
                keep_history(ring, rrow[w], j, w, total[w])
        for e in range(lo, hi):
            i = var_chks[e]
            for w in range(W):
                v = extrinsic(total[w], cbuf[e - lo, w], msg_lim)
                neg = negative(v)
                sgn[e, w] = neg
                par_n[i, w] ^= neg
                m1, m2, ag = fold_min(abs(v), j, min1_n[i, w], min2_n[i, w], arg_n[i, w])
                min1_n[i, w] = m1
                min2_n[i, w] = m2
                arg_n[i, w] = ag
        for w in range(W):
            h = negative(total[w])
            d = h ^ hard[j, w]
            hard[j, w] = h
            if d:
                for e in range(lo, hi):
                    i = var_chks[e]
                    p = parity[i, w] ^ 1
                    parity[i, w] = p
                    unsat[w] += 2 * np.int64(p) - 1


@numba.njit(cache=True, nogil=True)
def _history_out(ring, w, max_iter, out):
    """Lane ``w``'s posterior history key into ``out`` (n,) for a shot that did not converge: the
    sum of :func:`qdecode.kernels.bp.posterior_history` on the lane axis (same sums, same order), or the
    running minimum of a one-row ring (the sum below reads row 0 alone)."""
    k = ring.shape[0]
    first = history_start(max_iter, k)
    for j in range(out.shape[0]):
        acc = ring[(first - 1) % k, j, w]
        for t in range(first + 1, max_iter + 1):
            acc += ring[(t - 1) % k, j, w]
        out[j] = acc


@numba.njit(cache=True, nogil=True)
def history_ring(hist_k, keep_post, n, W, zero):
    """The posterior history ring ``(history_rows(hist_k, keep_post), n, W)`` of a lane kernel, of ``zero``'s dtype:
    a one-row ring (the running minimum) starts at the dtype's top, the others are written before they are read."""
    ring = np.full((history_rows(hist_k, keep_post), n, W), zero)
    if ring.shape[0] == 1:
        ring[:] = history_top(ring)
    return ring


@numba.njit(cache=True, nogil=True)
def write_lane_result(w, s, done, iterations, hard, post, ring, keep_post, out):
    """Write lane ``w``'s finished shot ``s`` into row ``s`` of ``out`` (:class:`~qdecode.kernels.bp_args.BpOut`):
    flag, iterations, decisions ``hard`` (n, W) and, when kept, the posteriors ``post`` (n, W), or the
    history key from ``ring`` for a shot that did not converge."""
    hard_out, post_out, converged_out, iters_out = out
    converged_out[s] = done
    iters_out[s] = iterations
    for j in range(hard.shape[0]):
        hard_out[s, j] = hard[j, w]
    if ring.shape[0] > 0 and not done:  # shots that ran max_iter: the history sum
        _history_out(ring, w, iterations, post_out[s])
    elif keep_post:
        for j in range(hard.shape[0]):
            post_out[s, j] = post[j, w]
    restart_history(ring, w)


class LaneQueue(NamedTuple):
    """The shots of ``W`` persistent lanes: which one each lane holds and which come next."""

    shot: np.ndarray  # (W,) int64: the lane's shot; -1: the lane idles
    it: np.ndarray  # (W,) int64: iterations run on the lane's shot
    pending: np.ndarray  # (3,) int64: [next shot to load, stop, busy lanes]


@numba.njit(cache=True, nogil=True)
def make_lane_queue(W, start, stop):
    """:class:`LaneQueue` of ``W`` idle lanes for shots ``start:stop``."""
    return LaneQueue(np.full(W, -1, dtype=np.int64), np.zeros(W, dtype=np.int64),
                     np.array([start, stop, 0], dtype=np.int64))


@numba.njit(cache=True, nogil=True)
def next_shot(w, q):
    """Give lane ``w`` of :class:`LaneQueue` ``q`` the next pending shot and return it (the caller loads it
    into the lane), or idle the lane and return -1 when none is left."""
    s = q.pending[0]
    busy = q.shot[w] >= 0
    q.it[w] = 0
    if s < q.pending[1]:
        q.shot[w] = s
        q.pending[0] = s + 1
        q.pending[2] += 0 if busy else 1
        return s
    q.shot[w] = -1
    q.pending[2] -= 1 if busy else 0
    return -1


@numba.njit(cache=True, nogil=True)
def retire_lane(w, unsat_w, max_iter, q, hard, post, ring, keep_post, out):
    """After one iteration of every lane: count it for lane ``w``; when its shot converged (``unsat_w == 0``
    unsatisfied checks) or ran ``max_iter`` iterations, write its result into ``out`` (:func:`write_lane_result`) and
    return the next shot to load into the lane (:func:`next_shot`); else (or for an idle lane) -1."""
    if q.shot[w] < 0:
        return -1
    q.it[w] += 1
    done = unsat_w == 0
    if not done and q.it[w] < max_iter:
        return -1
    write_lane_result(w, q.shot[w], done, q.it[w], hard, post, ring, keep_post, out)
    return next_shot(w, q)


@numba.njit(cache=True, nogil=True)
def minsum_lanes_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """Flooding min-sum of shots ``start:stop`` on ``lanes`` persistent lanes.

    Args:
        graph: :class:`~qdecode.kernels.bp_args.TannerGraph` (:func:`~qdecode.kernels.bp.tanner_graph`); the
            variable side ``var_ptr``, ``var_chks`` is read.
        llr0: ``(1, n)`` shared priors or ``(S, n)`` per-shot channel LLRs (message dtype).
        syndromes: ``(S, m)`` uint8.
        prm: :class:`~qdecode.kernels.bp_args.MinSumParams` (as :func:`qdecode.kernels.bp.bp_decode`'s).
        out: :class:`~qdecode.kernels.bp_args.BpOut`: ``hard`` ``(S, n)`` uint8; ``post`` ``(S, n)`` or ``(0, n)``;
            ``converged`` ``(S,)`` bool; ``iters`` ``(S,)`` int32; rows ``start:stop`` are written.
        hist_k: for shots that do not converge, ``out.post`` receives the sum of the posteriors of the
            last ``hist_k`` iterations, oldest first (:func:`~qdecode.kernels.bp.posterior_history`), or with
            :data:`~qdecode.kernels.minsum.HISTORY_MIN` their running minimum over every iteration;
            converged shots, and ``hist_k = 1``, the last posterior.
        lanes: the lane count (:data:`LANES`); ``W = min(lanes, stop - start)`` lanes run (never more lanes
            than shots).
        start, stop: the shots to decode.
    """
    var_ptr, var_chks = graph.var_ptr, graph.var_chks
    max_iter, msg_lim = prm.max_iter, prm.msg_lim
    n = var_ptr.shape[0] - 1
    m = syndromes.shape[1]
    nnz = var_chks.shape[0]
    W = max(1, min(lanes, stop - start))
    dt = llr0.dtype
    per_shot = llr0.shape[0] > 1
    keep_post = out.post.shape[0] > 0
    maxvdeg = 1
    for j in range(n):
        maxvdeg = max(maxvdeg, var_ptr[j + 1] - var_ptr[j])
    st = make_lane_state(nnz, m, n, W, dt)
    sc = LaneScratch(np.zeros((m, W), dtype=dt), np.zeros((m, W), dtype=dt), np.zeros((maxvdeg, W), dtype=dt),
                     np.zeros(W, dtype=dt), np.zeros(W, dtype=np.float64), np.zeros(W, dtype=np.int64),
                     np.zeros(W, dtype=np.int64), np.zeros(W, dtype=np.int64),
                     history_ring(hist_k, keep_post, n, W, np.zeros(1, dtype=dt)[0]), np.zeros(W, dtype=np.int64))
    q = make_lane_queue(W, start, stop)
    # zero-syndrome initial state of one lane, shared by every shot when priors are shared
    # (typed int64 and bool, not literals: literal arguments would be compiled as specialisations of their own)
    zero = np.int64(0)
    tmpl = make_lane_state(nnz, m, n, zero + 1, dt)
    if not per_shot:
        load_lane(zero, zero, var_ptr, var_chks, llr0, np.zeros((1, m), dtype=np.uint8), per_shot, zero, msg_lim,
                  tmpl)
    # int64 from the start: a literal 0 would have numba compile _step and _load twice (for Literal[int](0),
    # while typing the loop, then for int64): ~3 s of a first run
    cur = zero
    for w in range(W):
        s = next_shot(w, q)
        if s >= 0:
            _load(w, s, var_ptr, var_chks, llr0, syndromes, per_shot, cur, msg_lim, tmpl, st)
    while q.pending[2] > 0:
        _step(graph, llr0, syndromes, per_shot, keep_post, cur, q, prm, st, sc)
        cur = 1 - cur
        for w in range(W):  # retire finished lanes, load pending shots into them
            s = retire_lane(w, st.unsat[w], max_iter, q, st.hard, st.post, sc.ring, keep_post, out)
            if s >= 0:
                _load(w, s, var_ptr, var_chks, llr0, syndromes, per_shot, cur, msg_lim, tmpl, st)
