"""Relay-BP kernels (arXiv:2506.01779): min-sum with memory, relayed over legs of random memory strengths.

Notation of arXiv:2506.01779 and github.com/trmue/relay (``crates/relay_bp/src/bp``): ``lambda_j``
prior LLR, ``nu`` variable->check and ``mu`` check->variable messages, ``M_j`` posterior,
``gamma_j`` memory strength (may be negative).

One iteration (flooding; all checks from the previous iteration's ``nu``, then all variables)::

    mu_{i->j}  = (-1)^(s_i + #{j' != j: nu_{j'->i} <= 0}) * scale(min_{j' != j} |nu_{j'->i}|)
    b_j        = (1 - gamma_j) lambda_j + gamma_j M_j(t-1)          # memory prior
    M_j(t)     = b_j + sum_i mu_{i->j}                               # summed in ascending check order
    nu_{j->i}  = (b_j + sum_{i' < i} mu_{i'->j}) + (sum_{i' > i} mu_{i'->j})   # prefix + suffix
    e_j        = 1 if M_j(t) <= 0 else 0

``scale(x)`` is ``alpha * x`` (floats) or ``(x * alpha_num) >> alpha_shift`` (integers). The prefix
sum runs forwards from ``b_j``; the suffix sum runs backwards from 0 (``mu`` of the last check
first), exactly as relay-bp's ``min_sum.rs`` forms the extrinsic message, so float64 results are
bit-identical to ``relay_bp.RelayDecoderF64``. A message counts as negative when ``<= 0``
(relay-bp uses the IEEE sign bit); the two conventions differ only on exact zeros and there only
in the *sign of zero-magnitude messages*, which never changes a non-zero value or a hard decision.

Relay (outer) loop of one shot::

    gamma_j = gamma0; M = lambda
    leg 0: <= pre_iter iterations from nu = lambda (stop at H e = s)
    legs r = 1..legs: gamma_j ~ U[lo, hi) per variable; nu = lambda (mu = 0) but M is kept
           (relayed from the end of leg r-1); <= leg_iter iterations
    stop after ``stop_after`` converged legs (leg 0 counts)
    return the converged e of least weight W(e) = sum_{e_j = 1} lambda_j (ties: earliest leg);
           none converged: leg 0's final e with converged = False.
    iterations = total over all legs run; legs = number of legs run after leg 0 (0..legs)

Randomness is counter based: ``key = H(seed, syndrome)`` (splitmix64 over the indices of the
fired detectors), ``u_{r,j} = splitmix64(key_r + (j + 1) * golden) >> 11`` with
``key_r = H(key, r)``, ``gamma = lo + (hi - lo) * u * 2^-53``. A shot's output is therefore a
pure function of (problem, parameters, seed, syndrome): independent of batch order, batch size
and thread count. An explicit ``(rows, n)`` gamma table (relay-bp's ``explicit_gammas``; leg
``r`` uses row ``r % rows``) replaces the draws when given, which makes the whole relay loop
comparable bit for bit with relay-bp.

Fixed point (integer message arrays; the same kernel): messages saturate to ``+-msg_lim``,
posteriors and memory priors to ``+-post_lim``; ``gamma`` is quantised to ``g = rint(gamma *
2^gamma_shift)`` and the memory prior is ``b_j = (lambda_j * (2^gamma_shift - g_j) + M_j * g_j +
2^(gamma_shift - 1)) >> gamma_shift`` (arithmetic shift: rounds to nearest, halves up), computed
in 64-bit then saturated. Weights ``W(e)`` always use the float64 prior LLRs.

The kernels keep the check state compressed (two smallest magnitudes, the variable holding the
smallest, sign parity) and sweep the variables once per iteration, as
:func:`qdecode.kernels.bp.minsum_flooding` does; the syndrome of the hard decision is tracked
incrementally, so the convergence test is a counter test. The check state of ``nu = lambda``
(the start of every leg) depends only on the priors, so it is computed once per range and copied.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.extending import overload

from qdecode.kernels.arith import clip, numba_scalar, wrap_int64
from qdecode.kernels.clock import ticks
from qdecode.kernels.minsum import (
    check_magnitude,
    flip_decision,
    fold_min,
    negative,
    new_prior_state,
    prior_state,
    signed,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


# ------------------------------------------------------------------ named state


class RelayGraph(NamedTuple):
    """The problem: variable side of the Tanner graph and the priors."""

    var_ptr: np.ndarray  # (n + 1,) int64 (:func:`qdecode.kernels.bp.tanner_graph`)
    var_chks: np.ndarray  # (nnz,) uint32: unsigned check indices spare numba's negative-index
    #                       wraparound code in the inner loops (about 15% of the run time)
    llr0: np.ndarray  # (n,) prior LLRs in the message dtype (float, or quantised integers)
    wllr: np.ndarray  # (n,) float64 prior LLRs for the solution weight W(e)


class RelaySchedule(NamedTuple):
    """The relay loop: memory strengths and iteration counts of the legs."""

    gamma0: float  # leg-0 memory strength
    gamma_lo: float  # later legs draw gamma ~ U[gamma_lo, gamma_hi)
    gamma_hi: float
    gammas: np.ndarray  # (rows, n) float64 explicit gammas of legs >= 1 (row leg % rows); (0, n): draw them
    pre_iter: int  # leg-0 iterations
    legs: int  # number of later legs
    leg_iter: int  # iterations per later leg
    stop_after: int  # converged legs to collect (>= 1)


class MessageArith(NamedTuple):
    """Message arithmetic: min-sum scaling, gamma quantisation and saturation (message dtype)."""

    alpha: float  # min-sum scaling (float messages)
    alpha_num: int  # integer scaling (x * alpha_num) >> alpha_shift
    alpha_shift: int
    gamma_shift: int  # fraction bits of the quantised gammas (integer messages)
    msg_lim: object  # saturation of messages (message dtype)
    post_lim: object  # saturation of posteriors and memory priors (message dtype)


class RelayWork(NamedTuple):
    """Scratch of :func:`relay_decode` (:func:`make_relay_work`; one set per thread, reused across shots)."""

    sgn0: np.ndarray  # (nnz,) uint8: signs of nu = lambda per CSC edge (:func:`~qdecode.kernels.minsum.prior_state`)
    min1_0: np.ndarray  # (m,): check state of nu = lambda: least magnitude,
    min2_0: np.ndarray  # (m,): second least magnitude,
    arg0: np.ndarray  # (m,) int32: the variable holding the least one,
    par0: np.ndarray  # (m,) uint8: sign parity (without the syndrome)
    sgn: np.ndarray  # (nnz,) uint8: signs of the current nu per CSC edge
    min1: np.ndarray  # (2, m): check state, current / next iteration (rows swap)
    min2: np.ndarray  # (2, m)
    arg: np.ndarray  # (2, m) int32
    par: np.ndarray  # (2, m) uint8
    out1: np.ndarray  # (m,): a check's scaled output magnitude to all but its arg variable
    out2: np.ndarray  # (m,): ... and to its arg variable
    pbuf: np.ndarray  # (max variable degree,): prefix sums of one variable
    cbuf: np.ndarray  # (max variable degree,): mu of one variable
    parity: np.ndarray  # (m,) uint8: parity of H hard + s
    post: np.ndarray  # (n,): M, the relayed memory
    hard: np.ndarray  # (n,) uint8: hard decision
    gam: np.ndarray  # (n,) float64: memory strengths of the leg
    gnum: np.ndarray  # (n,) int64: their quantised numerators


class RelaySolutions(NamedTuple):
    """The converged legs of one shot, recorded for the gap (:func:`relay_decode`; capacity 0: not recorded).

    A solution's *class code* is the XOR of ``class_code[j]`` over its flipped variables: bit ``i`` is
    observable ``i`` when ``k <= 64``, else a random 64-bit code per observable
    (:func:`qdecode.decoders.confidence.class_codes`), so equal codes mean equal logical classes.
    """

    class_code: np.ndarray  # (n,) uint64: the class code of each variable
    weight: np.ndarray  # (cap,) float64: W(e) of each converged leg in leg order (cap >= stop_after)
    code: np.ndarray  # (cap,) uint64: the class code of each
    count: np.ndarray  # (1,) int64: how many were recorded


class RelayTrail(NamedTuple):
    """The trail of one shot's answer (:func:`relay_decode_traced`; capacity 0: not recorded): the moments the
    answer changed, for the *anytime* deadline policy (``qdecode.sims.latency_bins``).

    The answer is leg 0's decision from the end of leg 0 (converged or not: the fallback), then each converged
    leg lighter than the answer so far, as :func:`relay_decode` chooses the returned decision. Event ``i``:
    the iterations run so far ``work[i]``, :func:`~qdecode.kernels.clock.ticks` since the shot started
    ``ticks[i]``, and the answer's class code ``code[i]`` (:class:`RelaySolutions`' codes).
    """

    class_code: np.ndarray  # (n,) uint64: the class code of each variable
    work: np.ndarray  # (cap,) int64 (cap >= stop_after + 1)
    ticks: np.ndarray  # (cap,) int64
    code: np.ndarray  # (cap,) uint64
    count: np.ndarray  # (1,) int64: events recorded
    t0: np.ndarray  # (1,) int64: ticks at the shot's start (set by the caller)


class RelayTrailOut(NamedTuple):
    """Per-shot trails of :func:`relay_decode_timed_range` (``S`` shots, ``cap`` events each)."""

    class_code: np.ndarray  # (n,) uint64, as RelayTrail
    work: np.ndarray  # (S, cap) int64
    ticks: np.ndarray  # (S, cap) int64
    code: np.ndarray  # (S, cap) uint64
    count: np.ndarray  # (S,) int64


class RelayOut(NamedTuple):
    """Per-shot outputs of :func:`relay_decode_range` and the lane kernels (``S`` shots; a range kernel writes its
    rows ``start:stop``)."""

    hard: np.ndarray  # (S, n) uint8: the returned decision (least-weight converged leg, else leg 0's)
    converged: np.ndarray  # (S,) bool: some leg converged
    iterations: np.ndarray  # (S,) int32: iterations over all legs
    legs: np.ndarray  # (S,) int32: legs run after leg 0
    weight: np.ndarray  # (S,) float64: W(e) of the returned decision


class RelayGapOut(NamedTuple):
    """Per-shot outputs of :func:`relay_gap_range` (those of :func:`relay_decode_range` and the gap's)."""

    hard: np.ndarray  # (S, n) uint8 decisions
    converged: np.ndarray  # (S,) bool
    iterations: np.ndarray  # (S,) int32, over all legs
    legs: np.ndarray  # (S,) int32 legs run after leg 0
    weight: np.ndarray  # (S,) float64 W of the returned decision
    weight_other: np.ndarray  # (S,) float64 least W of a converged leg of another class (inf: none; nan: no leg)
    classes: np.ndarray  # (S,) int32 distinct classes among the converged legs


@numba.njit(cache=True, nogil=True)
def no_solutions():
    """An empty :class:`RelaySolutions`: :func:`relay_decode` records nothing (the plain decoding path)."""
    return RelaySolutions(np.zeros(0, np.uint64), np.zeros(0, np.float64), np.zeros(0, np.uint64),
                          np.zeros(1, np.int64))


# ------------------------------------------------------------------ arithmetic


def mix_prior(lam, post, g, gnum, shift):
    """Memory prior ``(1 - g) lam + g post``: relay-bp's float expression, or the fixed-point rule (int64,
    rounded: ``(lam (2^shift - gnum) + post gnum + 2^(shift-1)) >> shift``). The Python body is the reference;
    jitted code runs :func:`_mix_overload`."""
    if isinstance(lam, (int, np.integer)):
        one = 1 << int(shift)
        acc = int(wrap_int64(int(lam) * int(wrap_int64(one - int(gnum))) + int(post) * int(gnum)))
        return np.int64(int(wrap_int64(acc + (one >> 1))) >> int(shift))
    lam, post, g = numba_scalar(lam), numba_scalar(post), numba_scalar(g)
    return lam * (np.float64(1.0) - g) + post * g


@overload(mix_prior, jit_options={"cache": True})
def _mix_overload(lam, post, g, gnum, shift):
    """Memory prior ``(1 - g) lam + g post``: relay-bp's float expression, or the fixed-point rule."""
    if isinstance(lam, types.Integer):

        def impl(lam, post, g, gnum, shift):
            acc = np.int64(lam) * ((np.int64(1) << shift) - gnum) + np.int64(post) * gnum
            return (acc + (np.int64(1) << (shift - 1))) >> shift

        return impl
    return lambda lam, post, g, gnum, shift: lam * (1.0 - g) + post * g


@numba.njit(cache=True, nogil=True, inline="always")
def _splitmix(z):
    """splitmix64 finaliser of a uint64."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def shot_key(seed, syndrome):
    """Counter-based key of one shot: a hash of the decoder seed and the fired detectors."""
    h = _splitmix(np.uint64(seed) + _GOLDEN)
    count = np.uint64(0)
    for i in range(syndrome.shape[0]):
        if syndrome[i] & 1:
            h = _splitmix(h ^ (np.uint64(i + 1) * _GOLDEN))
            count += np.uint64(1)
    return _splitmix(h + count)


@numba.njit(cache=True, nogil=True)
def draw_gammas(key, leg, lo, hi, gamma_shift, gam, gnum):
    """Leg ``leg``'s memory strengths: ``gam[j] ~ U[lo, hi)`` and their quantised numerators ``gnum``."""
    k = _splitmix(key ^ (np.uint64(leg) * _M2 + _GOLDEN))
    width = hi - lo
    q = float(1 << gamma_shift)
    for j in range(gam.shape[0]):
        u = _splitmix(k + np.uint64(j + 1) * _GOLDEN) >> np.uint64(11)
        g = lo + width * (np.float64(u) * (1.0 / 9007199254740992.0))
        gam[j] = g
        gnum[j] = np.int64(np.rint(g * q))


# ------------------------------------------------------------- state of nu = lambda


# ------------------------------------------------------------------ one leg


@numba.njit(cache=True, nogil=True)
def _leg(graph, arith, work, syndrome, max_iter, unsat):
    """Run one leg (<= ``max_iter`` iterations) from ``nu = lambda``, keeping ``work.post`` (the memory).

    ``graph``: :class:`RelayGraph`; ``arith``: :class:`MessageArith`; ``work``: :class:`RelayWork`
    (memory strengths ``gam`` / ``gnum`` of the leg set). ``hard``/``parity``/``unsat`` carry the
    decision of the previous iteration (or leg) and the syndrome of ``H hard + s``. Returns
    ``(converged, iterations, unsat)``.
    """
    var_ptr, var_chks, llr0 = graph.var_ptr, graph.var_chks, graph.llr0
    alpha, alpha_num, alpha_shift = arith.alpha, arith.alpha_num, arith.alpha_shift
    gamma_shift, msg_lim, post_lim = arith.gamma_shift, arith.msg_lim, arith.post_lim
    sgn0, min1_0, min2_0, arg0, par0 = work.sgn0, work.min1_0, work.min2_0, work.arg0, work.par0
    sgn, min1, min2, arg, par = work.sgn, work.min1, work.min2, work.arg, work.par
    out1, out2, pbuf, cbuf = work.out1, work.out2, work.pbuf, work.cbuf
    parity, post, hard, gam, gnum = work.parity, work.post, work.hard, work.gam, work.gnum
    n = llr0.shape[0]
    m = syndrome.shape[0]
    nnz = sgn.shape[0]
    m1c = min1[0]
    m2c = min2[0]
    agc = arg[0]
    pc = par[0]
    m1n = min1[1]
    m2n = min2[1]
    agn = arg[1]
    pn = par[1]
    for i in range(m):
        m1c[i] = min1_0[i]
        m2c[i] = min2_0[i]
        agc[i] = arg0[i]
        pc[i] = par0[i] ^ (syndrome[i] & 1)
    for k in range(nnz):
        sgn[k] = sgn0[k]
    zero = msg_lim - msg_lim
    for it in range(1, max_iter + 1):
        for i in range(m):  # relay-bp's min-sum has no offset: beta = 0
            out1[i] = check_magnitude(m1c[i], alpha, alpha_num, alpha_shift, zero, msg_lim)
            out2[i] = check_magnitude(m2c[i], alpha, alpha_num, alpha_shift, zero, msg_lim)
            m1n[i] = msg_lim
            m2n[i] = msg_lim
            agn[i] = -1
            pn[i] = syndrome[i] & 1
        for j in range(n):
            lo = var_ptr[j]
            hi = var_ptr[j + 1]
            b = clip(mix_prior(llr0[j], post[j], gam[j], gnum[j], gamma_shift), post_lim)
            total = b
            deg = hi - lo
            for t in range(deg):  # unsigned indices: no negative-index wraparound code
                k = np.uint64(lo + t)
                d = np.uint64(t)
                i = var_chks[k]
                c = signed(out2[i] if agc[i] == j else out1[i], pc[i] ^ sgn[k])
                cbuf[d] = c
                pbuf[d] = total
                total += c
            tot = clip(total, post_lim)
            post[j] = tot
            acc = zero
            for t in range(deg - 1, -1, -1):
                k = np.uint64(lo + t)
                d = np.uint64(t)
                i = var_chks[k]
                v = clip(pbuf[d] + acc, msg_lim)
                acc += cbuf[d]
                neg = negative(v)
                sgn[k] = neg
                pn[i] ^= neg
                m1n[i], m2n[i], agn[i] = fold_min(abs(v), j, m1n[i], m2n[i], agn[i])
            h = negative(tot)
            if h != hard[j]:
                hard[j] = h
                unsat += flip_decision(j, var_ptr, var_chks, parity)
        m1c, m1n = m1n, m1c
        m2c, m2n = m2n, m2c
        agc, agn = agn, agc
        pc, pn = pn, pc
        if unsat == 0:
            return True, it, unsat
    return False, max_iter, unsat


# ------------------------------------------------------------ single shot


@numba.njit(cache=True, nogil=True)
def make_relay_work(graph, msg_lim, m):
    """Scratch buffers (:class:`RelayWork`) of :func:`relay_decode` for ``m`` checks (one set per thread;
    reuse across shots).

    Includes the check state of ``nu = lambda`` (:func:`~qdecode.kernels.minsum.prior_state`).
    """
    var_ptr, var_chks, llr0 = graph.var_ptr, graph.var_chks, graph.llr0
    n = var_ptr.shape[0] - 1
    nnz = var_chks.shape[0]
    maxvdeg = 1
    for j in range(n):
        maxvdeg = max(maxvdeg, var_ptr[j + 1] - var_ptr[j])
    dt = llr0.dtype
    sgn0, min1_0, min2_0, arg0, par0 = new_prior_state(var_ptr, var_chks, llr0, msg_lim, m)
    return RelayWork(
        sgn0, min1_0, min2_0, arg0, par0,
        np.zeros(nnz, dtype=np.uint8),  # sgn
        np.zeros((2, m), dtype=dt),  # min1
        np.zeros((2, m), dtype=dt),  # min2
        np.zeros((2, m), dtype=np.int32),  # arg
        np.zeros((2, m), dtype=np.uint8),  # par
        np.zeros(m, dtype=dt),  # out1
        np.zeros(m, dtype=dt),  # out2
        np.zeros(maxvdeg, dtype=dt),  # pbuf (prefix sums of one variable)
        np.zeros(maxvdeg, dtype=dt),  # cbuf (mu of one variable)
        np.zeros(m, dtype=np.uint8),  # parity of H hard + s
        np.zeros(n, dtype=dt),  # post (M, the relayed memory)
        np.zeros(n, dtype=np.uint8),  # hard
        np.zeros(n, dtype=np.float64),  # gam
        np.zeros(n, dtype=np.int64),  # gnum
    )


@numba.njit(cache=True, nogil=True)
def no_trail():
    """An empty :class:`RelayTrail`: :func:`relay_decode_traced` records no event (the plain path)."""
    return RelayTrail(np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64),
                      np.zeros(1, np.int64), np.zeros(1, np.int64))


@numba.njit(cache=True, nogil=True)
def record_event(trail, hard, iterations):
    """Append ``(iterations, ticks since trail.t0, class code of hard)`` to ``trail`` when it has room (O(n))."""
    c = trail.count[0]
    if c >= trail.work.shape[0]:
        return
    code = np.uint64(0)
    for j in range(hard.shape[0]):
        if hard[j]:
            code ^= trail.class_code[j]
    trail.work[c] = iterations
    trail.ticks[c] = ticks() - trail.t0[0]
    trail.code[c] = code
    trail.count[0] = c + 1


@numba.njit(cache=True, nogil=True)
def record_solution(sols, hard, weight):
    """Append ``(weight, class code of hard)`` to ``sols`` when it has room (O(n); converged legs only)."""
    c = sols.count[0]
    if c >= sols.weight.shape[0]:
        return
    code = np.uint64(0)
    for j in range(hard.shape[0]):
        if hard[j]:
            code ^= sols.class_code[j]
    sols.weight[c] = weight
    sols.code[c] = code
    sols.count[0] = c + 1


@numba.njit(cache=True, nogil=True)
def relay_decode(graph, sched, arith, syndrome, key, work, best, sols):
    """Relay-BP on one shot: :func:`relay_decode_traced` recording no trail."""
    return relay_decode_traced(graph, sched, arith, syndrome, key, work, best, sols, no_trail())


@numba.njit(cache=True, nogil=True)
def relay_decode_traced(graph, sched, arith, syndrome, key, work, best, sols, trail):
    """Relay-BP on one shot. Returns ``(converged, iterations, legs_run, weight)``.

    Args:
        graph: :class:`RelayGraph` (Tanner graph, message-dtype and float64 priors).
        sched: :class:`RelaySchedule`; with no explicit ``gammas`` rows the gammas of legs >= 1
            are drawn from ``key`` (:func:`shot_key`, :func:`draw_gammas`).
        arith: :class:`MessageArith`.
        syndrome: ``(m,)`` uint8.
        work: :class:`RelayWork` (:func:`make_relay_work`); best: ``(n,)`` uint8 output (the
            returned decision). ``weight`` is ``W`` of the returned decision (also when not converged).
        sols: :class:`RelaySolutions`: every converged leg's weight and class code, in leg order, when
            it has room (:func:`no_solutions`: none, the plain path).
        trail: :class:`RelayTrail`: the moments the answer changed (:func:`no_trail`: none).
    """
    var_ptr, var_chks, llr0, wllr = graph.var_ptr, graph.var_chks, graph.llr0, graph.wllr
    gamma0, gamma_lo, gamma_hi, gammas = sched.gamma0, sched.gamma_lo, sched.gamma_hi, sched.gammas
    pre_iter, legs, leg_iter, stop_after = sched.pre_iter, sched.legs, sched.leg_iter, sched.stop_after
    gamma_shift = arith.gamma_shift
    parity, post, hard, gam, gnum = work.parity, work.post, work.hard, work.gam, work.gnum
    n = llr0.shape[0]
    m = syndrome.shape[0]
    q = float(1 << gamma_shift)
    g0n = np.int64(np.rint(gamma0 * q))
    for j in range(n):
        post[j] = llr0[j]
        gam[j] = gamma0
        gnum[j] = g0n
    unsat = np.int64(0)  # numba widens the uint8 parities it sums to int64; numpy would keep uint8
    for i in range(m):
        parity[i] = syndrome[i] & 1
        unsat += parity[i]
    for j in range(n):
        hard[j] = 0
        if llr0[j] <= 0:
            hard[j] = 1
            unsat += flip_decision(j, var_ptr, var_chks, parity)
    ok, its, unsat = _leg(graph, arith, work, syndrome, pre_iter, unsat)
    total_iters = its
    weight = 0.0
    for j in range(n):
        best[j] = hard[j]
        if hard[j]:
            weight += wllr[j]
    sols.count[0] = 0
    trail.count[0] = 0
    record_event(trail, best, total_iters)  # leg 0's decision: the answer from now on (the fallback, or a solution)
    nconv = 0
    if ok:
        nconv = 1
        record_solution(sols, hard, weight)
    any_conv = ok
    legs_run = 0
    rows = gammas.shape[0]
    if nconv >= stop_after:
        return True, total_iters, legs_run, weight
    for r in range(1, legs + 1):
        if rows > 0:
            row = r % rows
            for j in range(n):
                g = gammas[row, j]
                gam[j] = g
                gnum[j] = np.int64(np.rint(g * q))
        else:
            draw_gammas(key, r, gamma_lo, gamma_hi, gamma_shift, gam, gnum)
        ok, its, unsat = _leg(graph, arith, work, syndrome, leg_iter, unsat)
        total_iters += its
        legs_run = r
        if ok:
            nconv += 1
            w = 0.0
            for j in range(n):
                if hard[j]:
                    w += wllr[j]
            record_solution(sols, hard, w)
            if not any_conv or w < weight:
                weight = w
                for j in range(n):
                    best[j] = hard[j]
                record_event(trail, best, total_iters)
            any_conv = True
            if nconv >= stop_after:
                break
    return any_conv, total_iters, legs_run, weight


# ------------------------------------------------------------------ batches


@numba.njit(cache=True, nogil=True)
def relay_decode_range(graph, sched, arith, seed, syndromes, out, start, stop):
    """Relay-BP on shots ``start:stop`` (releases the GIL: run ranges on several threads).

    Args:
        graph, sched, arith: as :func:`relay_decode`.
        seed: decoder seed (shot keys come from :func:`shot_key`); syndromes: ``(S, m)`` uint8.
        out: :class:`RelayOut`; rows ``start:stop`` are written.
    """
    m = syndromes.shape[1]
    work = make_relay_work(graph, arith.msg_lim, m)
    sols = no_solutions()
    trail = no_trail()
    for s in range(start, stop):
        key = shot_key(seed, syndromes[s])
        ok, its, lr, w = relay_decode_traced(graph, sched, arith, syndromes[s], key, work, out.hard[s], sols, trail)
        out.converged[s] = ok
        out.iterations[s] = its
        out.legs[s] = lr
        out.weight[s] = w


@numba.njit(cache=True, nogil=True)
def shot_prior_state(llr0, var_ptr, var_chks, msg_lim, work):
    """Refill ``work``'s check state of ``nu = lambda`` (:class:`RelayWork`, made by :func:`make_relay_work` for
    the problem's own priors) for a shot's priors ``llr0`` (per-shot priors: every leg restarts from it)."""
    prior_state(var_ptr, var_chks, llr0, msg_lim, work.sgn0, work.min1_0, work.min2_0, work.arg0, work.par0)


@numba.njit(cache=True, nogil=True)
def relay_shot_priors_range(graph, sched, arith, seed, shot_llr0, shot_wllr, syndromes, out, start, stop):
    """:func:`relay_decode_range` with each shot's own priors: rows ``s`` of ``shot_llr0`` (``(S, n)``, the
    message dtype) and ``shot_wllr`` (``(S, n)`` float64) stand for ``graph.llr0`` and ``graph.wllr`` in shot ``s``
    (per-shot priors, e.g. after heralds fired)."""
    m = syndromes.shape[1]
    work = make_relay_work(graph, arith.msg_lim, m)
    sols = no_solutions()
    trail = no_trail()
    for s in range(start, stop):
        shot_graph = RelayGraph(graph.var_ptr, graph.var_chks, shot_llr0[s], shot_wllr[s])
        shot_prior_state(shot_llr0[s], graph.var_ptr, graph.var_chks, arith.msg_lim, work)
        key = shot_key(seed, syndromes[s])
        ok, its, lr, w = relay_decode_traced(shot_graph, sched, arith, syndromes[s], key, work, out.hard[s], sols,
                                             trail)
        out.converged[s] = ok
        out.iterations[s] = its
        out.legs[s] = lr
        out.weight[s] = w


@numba.njit(cache=True, nogil=True)
def relay_decode_timed_range(graph, sched, arith, seed, syndromes, out, ticks_out, trails, start, stop):
    """:func:`relay_decode_range` that also times each shot: ``ticks_out[s]`` = :func:`~qdecode.kernels.clock.ticks`
    elapsed from the shot's key to its decision (int64; the shots run one after another on one thread).

    ``trails``: :class:`RelayTrailOut` with ``cap >= 1`` events per shot records each shot's trail
    (:class:`RelayTrail`, ticks from the shot's start), ``cap = 0`` none. The answers are
    :func:`relay_decode_range`'s; the scratch is allocated before the first shot is timed.
    """
    m = syndromes.shape[1]
    work = make_relay_work(graph, arith.msg_lim, m)
    sols = no_solutions()
    cap = trails.work.shape[1]
    empty = no_trail()
    start_ticks = np.zeros(1, np.int64)
    for s in range(start, stop):
        t0 = ticks()
        start_ticks[0] = t0
        trail = empty
        if cap > 0:
            trail = RelayTrail(trails.class_code, trails.work[s], trails.ticks[s], trails.code[s],
                               trails.count[s:s + 1], start_ticks)
        key = shot_key(seed, syndromes[s])
        ok, its, lr, w = relay_decode_traced(graph, sched, arith, syndromes[s], key, work, out.hard[s], sols, trail)
        ticks_out[s] = ticks() - t0
        out.converged[s] = ok
        out.iterations[s] = its
        out.legs[s] = lr
        out.weight[s] = w


@numba.njit(cache=True, nogil=True)
def solutions_gap(sols, converged):
    """``(weight_other, classes)`` of one shot's recorded solutions (:class:`RelaySolutions`).

    The returned decision is the first recorded solution of least weight (:func:`relay_decode`'s rule),
    ``weight_other`` the least weight among recorded solutions of another class code (``inf``: all in
    one class; ``nan`` when no leg converged), ``classes`` the number of distinct codes.
    """
    c = sols.count[0]
    if not converged or c == 0:
        return np.nan, 0
    best = 0
    for i in range(1, c):
        if sols.weight[i] < sols.weight[best]:
            best = i
    other = np.inf
    classes = 0
    for i in range(c):
        fresh = True
        for i2 in range(i):
            if sols.code[i2] == sols.code[i]:
                fresh = False
        if fresh:
            classes += 1
        if sols.code[i] != sols.code[best] and sols.weight[i] < other:
            other = sols.weight[i]
    return other, classes


@numba.njit(cache=True, nogil=True)
def relay_gap_range(graph, sched, arith, seed, syndromes, class_code, out, start, stop):
    """:func:`relay_decode_range` that also records every converged leg, for the gap (releases the GIL).

    Args:
        graph, sched, arith, seed, syndromes: as :func:`relay_decode_range`.
        class_code: ``(n,)`` uint64 class code of each variable (:class:`RelaySolutions`).
        out: :class:`RelayGapOut`; rows ``start:stop`` are written.
    """
    work = make_relay_work(graph, arith.msg_lim, syndromes.shape[1])
    cap = max(1, sched.stop_after)
    sols = RelaySolutions(class_code, np.zeros(cap, np.float64), np.zeros(cap, np.uint64), np.zeros(1, np.int64))
    for s in range(start, stop):
        key = shot_key(seed, syndromes[s])
        ok, its, lr, w = relay_decode(graph, sched, arith, syndromes[s], key, work, out.hard[s], sols)
        out.converged[s] = ok
        out.iterations[s] = its
        out.legs[s] = lr
        out.weight[s] = w
        out.weight_other[s], out.classes[s] = solutions_gap(sols, ok)
