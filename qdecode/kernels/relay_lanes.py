"""Relay-BP on ``LANES`` shots at once: the batch throughput kernel of :mod:`qdecode.kernels.relay`.

Same legs, memory strengths, stopping rule and arithmetic as :func:`qdecode.kernels.relay.relay_decode`
(every shot's outputs are bit-identical to the scalar kernel's, in float64 and in fixed point), with
every state array given a trailing lane axis ``W`` of independent shots, as in
:mod:`qdecode.kernels.minsum_lanes`: the innermost loops run over lanes (a runtime trip count, so LLVM
vectorises them) and the per-edge index loads are shared by all lanes. The extrinsic message is the
scalar leg's prefix + suffix sum, per lane: ``pbuf[t, w]`` holds the prefix ``b_j + sum_{t' < t} mu``
and the suffix accumulates backwards from 0, so each lane performs exactly the scalar operations.

Lanes are *persistent* and independent: one global step advances every lane by one iteration of its
own leg; after the step each lane checks its own leg (converged, or at its iteration limit) and, on its
own, starts its next leg (check state re-initialised from ``nu = lambda``, the memory ``M`` and the
decision kept, gammas of the next leg from :func:`~qdecode.kernels.relay.draw_gammas` or the explicit
table) or retires its shot (outputs written) and loads the next pending shot. When no shots are left
the active lanes are compacted to the front and, once fewer than ``2/5`` of the lanes are busy, the
step runs on the busy ones only (LLVM's scalar remainder loop): a long shot in the drain (a shot that
never converges runs every leg) then costs what it costs on the scalar kernel, not a full-width step
per iteration.

:func:`lane_verdict` (the relay loop of one lane, shared with the 8-bit kernel) can also record every
converged leg of the lane's shot (:class:`LaneSolutions`) for the gap, as the scalar kernel's
:func:`~qdecode.kernels.relay.relay_gap_range` does; this kernel passes ``None`` (nothing recorded).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.arith import clip
from qdecode.kernels.minsum import check_magnitude, flip_decision, fold_min, negative, new_prior_state, signed
from qdecode.kernels.relay import RelaySolutions, draw_gammas, mix_prior, record_solution, shot_key, solutions_gap

LANES = 32  # shots decoded side by side (see qdecode.kernels.minsum_lanes for why 32)


class RelayLaneState(NamedTuple):
    """Per-lane state (trailing lane axis ``w``); check state rows ``[cur]`` / ``[1 - cur]`` swap each step."""

    sgn: np.ndarray  # (nnz, W) uint8: signs of the current nu per CSC edge
    min1: np.ndarray  # (2, m, W): check state: least magnitude,
    min2: np.ndarray  # (2, m, W): second least,
    arg: np.ndarray  # (2, m, W) int32: the variable holding the least one,
    par: np.ndarray  # (2, m, W) uint8: sign parity with the syndrome bit
    parity: np.ndarray  # (m, W) uint8: parity of H hard + s
    unsat: np.ndarray  # (W,) int64: unsatisfied checks of H hard + s
    post: np.ndarray  # (n, W): M, the relayed memory
    hard: np.ndarray  # (n, W) uint8: hard decision
    gam: np.ndarray  # (n, W) float64: memory strengths of the lane's leg
    gnum: np.ndarray  # (n, W) int64: their quantised numerators


class RelayLaneScratch(NamedTuple):
    """Per-step buffers."""

    pbuf: np.ndarray  # (max variable degree, W): prefix sums of one variable
    cbuf: np.ndarray  # (max variable degree, W): mu of one variable
    total: np.ndarray  # (W,): running prefix / posterior of one variable
    acc: np.ndarray  # (W,): running suffix sum of one variable
    srow: np.ndarray  # (W,) int64: the lane's syndrome row


class LegStart(NamedTuple):
    """What every shot and leg starts from, shared by all shots (it depends on the priors only): the check
    state of ``nu = lambda`` (:func:`~qdecode.kernels.minsum.new_prior_state`; the syndrome bit is XORed into
    ``par`` per shot) and the decision of the priors."""

    sgn: np.ndarray  # (nnz,) uint8: sign of lambda per CSC edge
    min1: np.ndarray  # (m,) message dtype: least incoming magnitude
    min2: np.ndarray  # (m,) message dtype: second least
    arg: np.ndarray  # (m,) int32: the variable holding the least one
    par: np.ndarray  # (m,) uint8: incoming sign parity, without the syndrome
    hard: np.ndarray  # (n,) uint8: the priors' decision lambda_j <= 0
    hpar: np.ndarray  # (m,) uint8: parity of H hard, without the syndrome


class RelayLaneCounters(NamedTuple):
    """Per-lane relay-loop counters (``(W,)`` each)."""

    shot: np.ndarray  # int64: the lane's shot (-1: idle)
    leg: np.ndarray  # int64: the lane's leg (0 = leg 0)
    it: np.ndarray  # int64: iterations of the current leg
    total_it: np.ndarray  # int64: iterations over all legs
    nconv: np.ndarray  # int64: converged legs
    any_conv: np.ndarray  # uint8: some leg converged
    weight: np.ndarray  # float64: W of the best decision so far
    key: np.ndarray  # uint64: the shot's key (shot_key)


@numba.njit(cache=True, nogil=True)
def make_lane_counters(W):
    """:class:`RelayLaneCounters` of ``W`` idle lanes."""
    return RelayLaneCounters(np.full(W, -1, dtype=np.int64), np.zeros(W, dtype=np.int64),
                             np.zeros(W, dtype=np.int64), np.zeros(W, dtype=np.int64), np.zeros(W, dtype=np.int64),
                             np.zeros(W, dtype=np.uint8), np.zeros(W, dtype=np.float64), np.zeros(W, dtype=np.uint64))


@numba.njit(cache=True, nogil=True, inline="always")
def start_lane_counters(w, s, key, ct):
    """Lane ``w`` takes shot ``s`` (key ``key``): leg 0, no iterations, nothing converged."""
    ct.shot[w] = s
    ct.leg[w] = 0
    ct.it[w] = 0
    ct.total_it[w] = 0
    ct.nconv[w] = 0
    ct.any_conv[w] = 0
    ct.weight[w] = 0.0
    ct.key[w] = key


@numba.njit(cache=True, nogil=True, inline="always")
def move_lane_counters(src, dst, ct):
    """Lane ``src``'s counters copied to lane ``dst`` (the drain's compaction)."""
    ct.shot[dst] = ct.shot[src]
    ct.leg[dst] = ct.leg[src]
    ct.it[dst] = ct.it[src]
    ct.total_it[dst] = ct.total_it[src]
    ct.nconv[dst] = ct.nconv[src]
    ct.any_conv[dst] = ct.any_conv[src]
    ct.weight[dst] = ct.weight[src]
    ct.key[dst] = ct.key[src]


class LaneSolutions(NamedTuple):
    """The converged legs of every lane's shot, for the gap: a
    :class:`~qdecode.kernels.relay.RelaySolutions` per lane (:func:`lane_solutions`), recorded by
    :func:`lane_verdict` in leg order and turned into the shot's gap when the shot is done."""

    class_code: np.ndarray  # (n,) uint64: the class code of each variable (shared by all lanes)
    weight: np.ndarray  # (W, cap) float64: W(e) of each converged leg of the lane's shot, in leg order
    code: np.ndarray  # (W, cap) uint64: the class code of each
    count: np.ndarray  # (W, 1) int64: how many the lane has recorded


@numba.njit(cache=True, nogil=True)
def make_lane_solutions(class_code, cap, W):
    """Empty :class:`LaneSolutions` of ``W`` lanes with room for ``cap`` solutions each."""
    return LaneSolutions(class_code, np.zeros((W, cap), dtype=np.float64), np.zeros((W, cap), dtype=np.uint64),
                         np.zeros((W, 1), dtype=np.int64))


@numba.njit(cache=True, nogil=True, inline="always")
def lane_solutions(sols, w):
    """Lane ``w``'s records of :class:`LaneSolutions` ``sols`` as a :class:`~qdecode.kernels.relay.RelaySolutions`
    (views, nothing copied), for :func:`~qdecode.kernels.relay.record_solution` and
    :func:`~qdecode.kernels.relay.solutions_gap`."""
    return RelaySolutions(sols.class_code, sols.weight[w], sols.code[w], sols.count[w])


@numba.njit(cache=True, nogil=True)
def move_lane_solutions(src, dst, sols):
    """Lane ``src``'s records of :class:`LaneSolutions` ``sols`` copied to lane ``dst`` (the drain's compaction)."""
    for c in range(sols.count[src, 0]):
        sols.weight[dst, c] = sols.weight[src, c]
        sols.code[dst, c] = sols.code[src, c]
    sols.count[dst, 0] = sols.count[src, 0]


@numba.njit(cache=True, nogil=True)
def make_relay_lane_state(nnz, m, n, W, dt):
    """Zeroed :class:`RelayLaneState` of ``W`` lanes in message dtype ``dt``."""
    return RelayLaneState(
        np.zeros((nnz, W), dtype=np.uint8), np.zeros((2, m, W), dtype=dt), np.zeros((2, m, W), dtype=dt),
        np.zeros((2, m, W), dtype=np.int32), np.zeros((2, m, W), dtype=np.uint8), np.zeros((m, W), dtype=np.uint8),
        np.zeros(W, dtype=np.int64), np.zeros((n, W), dtype=dt), np.zeros((n, W), dtype=np.uint8),
        np.zeros((n, W), dtype=np.float64), np.zeros((n, W), dtype=np.int64),
    )


# ------------------------------------------------------------------ lane set-up


@numba.njit(cache=True, nogil=True)
def _start_leg(w, s, syndromes, cur, ls, st):
    """Lane ``w`` starts a leg: check state row ``cur`` of ``st`` (:class:`RelayLaneState`) from ``nu = lambda``
    (``ls``, a :class:`LegStart`) with shot ``s``'s syndrome (memory kept)."""
    m = syndromes.shape[1]
    for i in range(m):
        st.min1[cur, i, w] = ls.min1[i]
        st.min2[cur, i, w] = ls.min2[i]
        st.arg[cur, i, w] = ls.arg[i]
        st.par[cur, i, w] = ls.par[i] ^ (syndromes[s, i] & 1)
    for k in range(ls.sgn.shape[0]):
        st.sgn[k, w] = ls.sgn[k]


@numba.njit(cache=True, nogil=True)
def _set_gammas(w, leg, sched, gamma_shift, key, g1, gn1, st):
    """Lane ``w``'s memory strengths of leg ``leg >= 1``: the explicit table's row, or drawn from ``key``."""
    gammas = sched.gammas
    rows = gammas.shape[0]
    n = g1.shape[0]
    if rows > 0:
        q = float(1 << gamma_shift)
        row = leg % rows
        for j in range(n):
            g = gammas[row, j]
            st.gam[j, w] = g
            st.gnum[j, w] = np.int64(np.rint(g * q))
    else:
        draw_gammas(key, leg, sched.gamma_lo, sched.gamma_hi, gamma_shift, g1, gn1)
        for j in range(n):
            st.gam[j, w] = g1[j]
            st.gnum[j, w] = gn1[j]


@numba.njit(cache=True, nogil=True)
def _load_shot(w, s, seed, llr0, syndromes, cur, g0, g0n, ls, st, ct):
    """Load shot ``s`` into lane ``w``: ``M = lambda`` (``llr0`` ``(n,)``), gammas ``gamma0`` (``g0``, quantised
    ``g0n``), the decision of the priors and the check state of ``nu = lambda`` (``ls``, a :class:`LegStart`),
    leg 0 (counters ``ct``, the key from ``seed``)."""
    n = llr0.shape[0]
    m = syndromes.shape[1]
    for j in range(n):
        st.post[j, w] = llr0[j]
        st.gam[j, w] = g0
        st.gnum[j, w] = g0n
        st.hard[j, w] = ls.hard[j]
    count = 0
    for i in range(m):
        p = (syndromes[s, i] & 1) ^ ls.hpar[i]
        st.parity[i, w] = p
        count += p
    st.unsat[w] = count
    _start_leg(w, s, syndromes, cur, ls, st)
    start_lane_counters(w, s, shot_key(seed, syndromes[s]), ct)


@numba.njit(cache=True, nogil=True)
def _move_lane(src, dst, cur, st, ct):
    """Copy lane ``src``'s state (current check state row, memory, decision, counters) into lane ``dst``."""
    m = st.parity.shape[0]
    n = st.post.shape[0]
    for i in range(m):
        st.min1[cur, i, dst] = st.min1[cur, i, src]
        st.min2[cur, i, dst] = st.min2[cur, i, src]
        st.arg[cur, i, dst] = st.arg[cur, i, src]
        st.par[cur, i, dst] = st.par[cur, i, src]
        st.parity[i, dst] = st.parity[i, src]
    for k in range(st.sgn.shape[0]):
        st.sgn[k, dst] = st.sgn[k, src]
    for j in range(n):
        st.post[j, dst] = st.post[j, src]
        st.hard[j, dst] = st.hard[j, src]
        st.gam[j, dst] = st.gam[j, src]
        st.gnum[j, dst] = st.gnum[j, src]
    st.unsat[dst] = st.unsat[src]
    move_lane_counters(src, dst, ct)


# ------------------------------------------------------------------ one step


@numba.njit(cache=True, nogil=True)
def _step(graph, arith, syndromes, cur, width, st, sc, ct):
    """Advance lanes ``0:width`` one iteration of their legs, from check state ``cur`` to ``1 - cur``.

    Per lane exactly :func:`qdecode.kernels.relay._leg`'s iteration: memory prior, check messages in
    ascending check order (prefix sums), posterior, extrinsic messages as prefix + suffix (suffix
    from the last check backwards), folded into the next check state; decision flips update the parity.
    """
    var_ptr, var_chks, llr0 = graph.var_ptr, graph.var_chks, graph.llr0
    alpha, alpha_num, alpha_shift = arith.alpha, arith.alpha_num, arith.alpha_shift
    gamma_shift, msg_lim, post_lim = arith.gamma_shift, arith.msg_lim, arith.post_lim
    sgn, parity, post, hard, unsat, gam, gnum = st.sgn, st.parity, st.post, st.hard, st.unsat, st.gam, st.gnum
    pbuf, cbuf, total, acc, srow = sc.pbuf, sc.cbuf, sc.total, sc.acc, sc.srow
    n = llr0.shape[0]
    m = syndromes.shape[1]
    W = width  # a runtime trip count: LLVM's loop vectoriser handles these lane loops
    nxt = 1 - cur
    m1c = st.min1[cur]
    m2c = st.min2[cur]
    agc = st.arg[cur]
    pc = st.par[cur]
    m1n = st.min1[nxt]
    m2n = st.min2[nxt]
    agn = st.arg[nxt]
    pn = st.par[nxt]
    zero = msg_lim - msg_lim
    for w in range(W):
        srow[w] = max(ct.shot[w], 0)
    for i in range(m):  # relay-bp's min-sum has no offset: beta = 0
        for w in range(W):
            m1n[i, w] = msg_lim
            m2n[i, w] = msg_lim
            agn[i, w] = -1
            pn[i, w] = syndromes[srow[w], i] & 1
    for j in range(n):
        lo = var_ptr[j]
        hi = var_ptr[j + 1]
        deg = hi - lo
        lam = llr0[j]
        for w in range(W):
            total[w] = clip(mix_prior(lam, post[j, w], gam[j, w], gnum[j, w], gamma_shift), post_lim)
        for t in range(deg):
            k = np.uint64(lo + t)
            d = np.uint64(t)
            i = var_chks[k]
            r1, r2, ag, pr, sg, cb, pb = m1c[i], m2c[i], agc[i], pc[i], sgn[k], cbuf[d], pbuf[d]
            for w in range(W):  # both output magnitudes, then a select: wide loads, no gather
                mag1 = check_magnitude(r1[w], alpha, alpha_num, alpha_shift, zero, msg_lim)
                mag2 = check_magnitude(r2[w], alpha, alpha_num, alpha_shift, zero, msg_lim)
                c = signed(mag2 if ag[w] == j else mag1, pr[w] ^ sg[w])
                cb[w] = c
                pb[w] = total[w]
                total[w] += c
        for w in range(W):
            post[j, w] = clip(total[w], post_lim)
            acc[w] = zero
        for t in range(deg - 1, -1, -1):
            k = np.uint64(lo + t)
            d = np.uint64(t)
            i = var_chks[k]
            pb, cb, sg, pr, r1, r2, ra = pbuf[d], cbuf[d], sgn[k], pn[i], m1n[i], m2n[i], agn[i]
            for w in range(W):
                v = clip(pb[w] + acc[w], msg_lim)
                acc[w] += cb[w]
                neg = negative(v)
                sg[w] = neg
                pr[w] ^= neg
                r1[w], r2[w], ra[w] = fold_min(abs(v), j, r1[w], r2[w], ra[w])
        for w in range(W):
            h = negative(post[j, w])
            if h != hard[j, w]:
                hard[j, w] = h
                for kk in range(lo, hi):
                    i = var_chks[kk]
                    p = parity[i, w] ^ 1
                    parity[i, w] = p
                    unsat[w] += 2 * np.int64(p) - 1


# ------------------------------------------------------------------ the relay loop of one lane

LEG_GOES_ON = 0  # lane_verdict: the lane's leg runs another iteration
NEXT_LEG = 1  # ... the lane starts its next leg (counters advanced; the caller sets gammas, resets messages)
SHOT_DONE = 2  # ... the lane's shot is finished and its outputs are written


@numba.njit(cache=True, nogil=True, inline="always")
def lane_verdict(w, ok, hard, wllr, sched, ct, out, sols):
    """The relay loop of :func:`qdecode.kernels.relay.relay_decode` for lane ``w`` after one iteration of its leg.

    ``ok``: the lane's decision ``hard[:, w]`` (``(n, W)`` uint8) satisfies the syndrome. Counts the
    iteration in ``ct`` (:class:`RelayLaneCounters`); at the end of a leg keeps the decision of leg 0 or the
    least-weight converged one in ``out.hard`` (``out`` a :class:`~qdecode.kernels.relay.RelayOut`); returns
    :data:`LEG_GOES_ON`, :data:`NEXT_LEG` (``ct.leg`` / ``ct.it`` already advanced) or :data:`SHOT_DONE` (the
    shot's row of ``out.converged``, ``out.iterations``, ``out.legs``, ``out.weight`` written). Shared by both
    lane kernels (:func:`relay_lanes_range`, :func:`qdecode.kernels.relay_lanes_narrow.relay_lanes_i8_range`).

    ``sols``: ``None`` (the plain path; pruned at compile time), or :class:`LaneSolutions`: every converged
    leg's weight (the same sum as the scalar kernel's, bit for bit) and class code is recorded as
    :func:`~qdecode.kernels.relay.relay_decode` records them, and at :data:`SHOT_DONE` ``out`` (then a
    :class:`~qdecode.kernels.relay.RelayGapOut`) also gets the shot's ``weight_other`` and ``classes``
    (:func:`~qdecode.kernels.relay.solutions_gap`) and the lane's records are cleared.
    """
    ct.it[w] += 1
    ct.total_it[w] += 1
    leg = ct.leg[w]
    limit = sched.pre_iter if leg == 0 else sched.leg_iter
    if not ok and ct.it[w] < limit:
        return LEG_GOES_ON
    s = ct.shot[w]
    n = hard.shape[0]
    if leg == 0 or ok:
        wt = 0.0
        for j in range(n):
            if hard[j, w]:
                wt += wllr[j]
        if ok and sols is not None:
            record_solution(lane_solutions(sols, w), hard[:, w], wt)
        if leg == 0 or not ct.any_conv[w] or wt < ct.weight[w]:
            ct.weight[w] = wt
            for j in range(n):
                out.hard[s, j] = hard[j, w]
    if ok:
        ct.nconv[w] += 1
        ct.any_conv[w] = 1
    if ct.nconv[w] >= sched.stop_after or leg == sched.legs:
        out.converged[s] = ct.any_conv[w] == 1
        out.iterations[s] = ct.total_it[w]
        out.legs[s] = leg
        out.weight[s] = ct.weight[w]
        if sols is not None:
            out.weight_other[s], out.classes[s] = solutions_gap(lane_solutions(sols, w), ct.any_conv[w] == 1)
            sols.count[w, 0] = 0
        return SHOT_DONE
    ct.leg[w] = leg + 1
    ct.it[w] = 0
    return NEXT_LEG


# ------------------------------------------------------------------ range kernel


@numba.njit(cache=True, nogil=True)
def relay_lanes_range(graph, sched, arith, seed, syndromes, out, lanes, start, stop):
    """Relay-BP on shots ``start:stop`` on ``lanes`` persistent lanes (releases the GIL).

    Arguments and outputs as :func:`qdecode.kernels.relay.relay_decode_range` (bit-identical per shot),
    plus ``lanes`` (:data:`LANES`; an argument, not a global, because numba freezes globals into
    cached code; never more lanes than shots are used).
    """
    var_ptr, var_chks, llr0, wllr = graph.var_ptr, graph.var_chks, graph.llr0, graph.wllr
    gamma_shift, msg_lim = arith.gamma_shift, arith.msg_lim
    n = llr0.shape[0]
    m = syndromes.shape[1]
    nnz = var_chks.shape[0]
    if stop <= start:
        return
    W = max(1, min(lanes, stop - start))
    dt = llr0.dtype
    maxvdeg = 1
    for j in range(n):
        maxvdeg = max(maxvdeg, var_ptr[j + 1] - var_ptr[j])
    # check state of nu = lambda (every leg's start) and the priors' decision, shared by all shots
    sgn0, min1_0, min2_0, arg0, par0 = new_prior_state(var_ptr, var_chks, llr0, msg_lim, m)
    hard0 = np.zeros(n, dtype=np.uint8)
    hp0 = np.zeros(m, dtype=np.uint8)
    for j in range(n):
        if llr0[j] <= 0:
            hard0[j] = 1
            flip_decision(j, var_ptr, var_chks, hp0)
    ls = LegStart(sgn0, min1_0, min2_0, arg0, par0, hard0, hp0)
    q = float(1 << gamma_shift)
    g0 = sched.gamma0
    g0n = np.int64(np.rint(g0 * q))
    g1 = np.zeros(n, dtype=np.float64)
    gn1 = np.zeros(n, dtype=np.int64)

    st = make_relay_lane_state(nnz, m, n, W, dt)
    sc = RelayLaneScratch(np.zeros((maxvdeg, W), dtype=dt), np.zeros((maxvdeg, W), dtype=dt), np.zeros(W, dtype=dt),
                          np.zeros(W, dtype=dt), np.zeros(W, dtype=np.int64))
    ct = make_lane_counters(W)
    cur = 0
    nxt_shot = start
    nact = 0
    for w in range(W):
        _load_shot(w, nxt_shot, seed, llr0, syndromes, cur, g0, g0n, ls, st, ct)
        nxt_shot += 1
        nact += 1
    width = W
    while nact > 0:
        _step(graph, arith, syndromes, cur, width, st, sc, ct)
        cur = 1 - cur
        w = 0
        while w < nact:  # lanes 0:nact are busy; finished legs move on, finished shots retire
            verdict = lane_verdict(w, st.unsat[w] == 0, st.hard, wllr, sched, ct, out, None)
            if verdict == LEG_GOES_ON:
                w += 1
                continue
            if verdict == SHOT_DONE:
                if nxt_shot < stop:
                    _load_shot(w, nxt_shot, seed, llr0, syndromes, cur, g0, g0n, ls, st, ct)
                    nxt_shot += 1
                    w += 1
                else:  # drain: the last busy lane takes this slot
                    nact -= 1
                    if w < nact:
                        _move_lane(nact, w, cur, st, ct)
                    ct.shot[nact] = -1
                continue  # lane w (now another shot) is checked again only if it moved here
            # next leg (lane_verdict advanced the counters): memory and decision kept, messages from nu = lambda
            _set_gammas(w, ct.leg[w], sched, gamma_shift, ct.key[w], g1, gn1, st)
            _start_leg(w, ct.shot[w], syndromes, cur, ls, st)
            w += 1
        if nact * 5 < W * 2:
            width = nact
