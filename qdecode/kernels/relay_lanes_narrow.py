"""Relay-BP on 64 lanes of shots in 8-bit fixed point: uint8 check state, int16 sums.

The batch kernel of ``relay-bp[bits=B]`` for ``B <= 8``: every shot's outputs (decision, convergence
flag, iterations, legs, weight) are bit-identical to :func:`qdecode.kernels.relay.relay_decode_range` on
the same fixed-point inputs, and therefore to :func:`qdecode.kernels.relay_lanes.relay_lanes_range`
(``tests/kernels/test_relay_lanes.py``). The check state and the variable sweep follow the 8-bit min-sum
lanes kernel (:mod:`qdecode.kernels.minsum_lanes_narrow`: ``min1``, ``min2`` and the sign parity in uint8,
the edge's slot ``arg`` in uint8 where every check degree is <= 255 and in uint16 above (up to 65535: the
``*_wide_*`` entries, :func:`relay_i8_kernels` picks; numba compiles one body per slot type, and only the one
that is called), sums in int16, LLVM ``noalias`` on every array, sweeps compiled for constant
lane counts, selects written as bit blends so that they vectorise on AVX2), with what Relay-BP adds:

- the memory prior ``b_j = (lambda_j (2^g - g_j) + M_j g_j + 2^(g-1)) >> g`` (int32 arithmetic,
  saturated to ``post_lim``) per variable and lane, from the lane's own memory ``M`` (int16) and
  memory strengths ``g_j`` (int16 numerators; every lane may be in another leg);
- the extrinsic message from the *unsaturated* posterior sum, ``clip(b_j + sum_i mu - mu_i)``, as
  the scalar kernel's prefix + suffix sums give it in exact integers (the min-sum kernel saturates
  the posterior first), and the posterior ``M_j`` saturated to ``post_lim``.

Why a sweep of its own rather than :func:`~qdecode.kernels.minsum_lanes_narrow._sweep_int_body`
with a flag: the memory prior and the leg restarts below are per-lane operations that the min-sum
kernel does not need, and both change its loops; the parity is kept apart from ``min1`` (the
min-sum kernel packs it into the top bit, which costs byte shifts that AVX2 does not have). The
fold into the next check state is written out in both sweeps: as a shared ``inline="always"`` helper
the min-sum sweep stopped vectorising (0.55 -> 8.3 ns per edge-lane-iteration, AVX2 Zen 3).

A lane starts a leg (or a shot) in O(1): its ``fresh`` flag makes the next sweep read the check
state and the edge signs of ``nu = lambda`` from a shared template (a blend per check- and
edge-lane) instead of copying ``m + nnz`` strided bytes into the lane. The parity of ``H e + s`` is
rebuilt in every sweep, as in the min-sum lanes kernel. The relay loop of each lane
(:func:`~qdecode.kernels.relay_lanes.lane_verdict`) and the gamma draws are those of
:func:`~qdecode.kernels.relay_lanes.relay_lanes_range`. The drain (no shots left): busy lanes are
compacted to the front and the sweep runs at the least compiled width that holds them; once
:data:`SCALAR_DRAIN` or fewer are busy, their shots are decoded again from the start on the scalar
kernel (a sweep's per-edge work is not shared below a few lanes, and a shot's result does not
depend on where it runs).

The gap (:func:`relay_lanes_i8_gap_range`, what ``RelayBpDecoder.predict_with_confidence`` runs where the
plain path runs this kernel) is the same kernel with a :class:`~qdecode.kernels.relay_lanes.LaneSolutions`:
:func:`~qdecode.kernels.relay_lanes.lane_verdict` records each converged leg's weight (the scalar kernel's
sum, bit for bit) and class code per lane as :func:`~qdecode.kernels.relay.record_solution` does, and turns
them into the shot's ``weight_other`` and ``classes`` with :func:`~qdecode.kernels.relay.solutions_gap` when
the shot is done; the drain moves a lane's records with it, and the scalar finish records its own. Every
output equals :func:`~qdecode.kernels.relay.relay_gap_range`'s. The plain entry passes ``None`` instead, a
branch numba prunes at compile time, so its code is what it was.

The sweep (:func:`relay_sweep` over the arguments :func:`make_relay_sweep` allocates) also runs the Relay-BP
ensembles of :mod:`qdecode.kernels.relay_ensemble`, whose lanes are one shot's chains.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba.extending import overload

from qdecode.kernels.minsum import fold_min
from qdecode.kernels.minsum_lanes_narrow import (
    MAX_SLOTS_U8,
    MAX_SLOTS_U16,
    U1,
    U8,
    U16,
    Z32,
    NarrowCheckState,
    NarrowGraph,
    NarrowScratch,
    NoAliasCompiler,
    blend_u8,
    blend_uint,
    edge_slots,
    negate_if,
    no_slot,
    scale_int,
    select_int,
)
from qdecode.kernels.relay import (
    RelayGraph,
    RelaySolutions,
    draw_gammas,
    make_relay_work,
    no_solutions,
    relay_decode,
    shot_key,
    shot_prior_state,
    solutions_gap,
)
from qdecode.kernels.relay_lanes import (
    LEG_GOES_ON,
    NEXT_LEG,
    lane_verdict,
    make_lane_counters,
    make_lane_solutions,
    move_lane_counters,
    move_lane_solutions,
    start_lane_counters,
)

#: lane count of the 8-bit Relay-BP kernel (a sweep is compiled for exactly this many lanes)
RELAY_NARROW_LANES = 64


def at_lane(a, i, w):
    """``a[i]`` of an array shared by every lane, ``a[i, w]`` of a per-lane one (``(.., W)``): the channel priors,
    the template's check state and edge signs, which are per lane where each shot has its own priors
    (:func:`relay_lanes_i8_shot_priors_range`). Chosen at compile time (:func:`numba.extending.overload`), so the
    shared case compiles to the plain load it was (inlined by LLVM; numba's IR inlining of it gave wrong sweeps)."""
    return a[i] if a.ndim == 1 else a[i, w]


@overload(at_lane)
def _at_lane_overload(a, i, w):
    if a.ndim == 1:
        return lambda a, i, w: a[i]
    return lambda a, i, w: a[i, w]

I16 = np.int16
I32 = np.int32


# ------------------------------------------------------------------ which problems fit


def relay_i8_accepts(var_ptr, max_check_degree, llr0, gamma0, gamma_lo, gamma_hi, gammas, gamma_shift, msg_lim,
                     post_lim, alpha_num, alpha_shift) -> bool:
    """Whether :func:`relay_lanes_i8_range` computes exactly what the scalar kernel computes on these inputs.

    Needs integer priors, ``1 <= msg_lim <= 127``, ``post_lim + (max variable degree) * msg_lim <= 32767``
    (the int16 sums never wrap), quantised gammas that fit int16, a memory prior whose int32 sum
    ``|lambda| (2^g + |g_j|) + post_lim |g_j| + 2^(g-1)`` cannot overflow, ``1 <= gamma_shift <= 14``,
    ``0 <= alpha_num * 127 < 2^31``, ``alpha_shift <= 30`` and check degrees <= 65535: each edge's slot in its
    check is uint8 where every check degree is <= 255 and uint16 above (:func:`relay_i8_kernels` picks the
    entries).
    """
    if max_check_degree > MAX_SLOTS_U16 or not np.issubdtype(np.asarray(llr0).dtype, np.integer):
        return False
    if not (1 <= int(msg_lim) <= 127 and 0 <= int(post_lim) <= 32767 and 1 <= gamma_shift <= 14):
        return False
    if not (0 <= alpha_num and alpha_num * 127 < 2**31 and 0 <= alpha_shift <= 30):
        return False
    maxvdeg = int(np.max(np.diff(var_ptr), initial=1))
    if int(post_lim) + maxvdeg * int(msg_lim) > 32767:
        return False
    q = float(1 << gamma_shift)
    table = np.asarray(gammas, dtype=np.float64)
    biggest = max(abs(np.rint(gamma0 * q)), abs(np.rint(gamma_lo * q)), abs(np.rint(gamma_hi * q)),
                  float(np.abs(np.rint(table * q)).max(initial=0.0)))
    if biggest > 32767:
        return False
    lam = int(np.abs(np.asarray(llr0, dtype=np.int64)).max(initial=0))
    return lam * ((1 << gamma_shift) + biggest) + int(post_lim) * biggest + (1 << (gamma_shift - 1)) < 2**31


# ------------------------------------------------------------------ named argument groups
#
# As in :mod:`qdecode.kernels.minsum_lanes_narrow`: numba passes these tuples as their flattened members, so
# every array is its own ``noalias`` argument of the sweep (no two may overlap). ``m`` checks, ``n`` variables,
# ``nnz`` edges, ``W`` lanes.


class RelayParams(NamedTuple):
    """Scalars of a sweep (int32 unless said)."""

    num: np.int32  # min-sum scaling (x * num) >> shift
    shift: np.int32
    ml32: np.int32  # message limit
    mls: np.int16  # ... in the sum type
    mlu: np.uint8  # ... in the check-state type
    pls: np.int16  # posterior limit in the sum type
    pl32: np.int32  # ... in int32
    gone: np.int32  # gamma fixed point: 2^g
    ghalf: np.int32  # 2^(g-1)
    gshift: np.int32  # g


class RelayLanes(NamedTuple):
    """Per-lane state other than the check state."""

    syn: np.ndarray  # (m, W) uint8: the lane's syndrome
    fresh: np.ndarray  # (W,) uint8: 1 = the next sweep starts the lane from the template (nu = lambda)
    sgn: np.ndarray  # (nnz, W) uint8: sign of each variable-to-check message
    hard: np.ndarray  # (n, W) uint8: hard decisions
    post: np.ndarray  # (n, W) int16: memory M (the last posterior, saturated)
    gnum: np.ndarray  # (n, W) int16: the leg's gamma numerators
    unsat: np.ndarray  # (W,) int32: unsatisfied checks after the last sweep


class RelaySweep(NamedTuple):
    """Everything a sweep reads or writes besides the two check states."""

    graph: NarrowGraph
    lam: np.ndarray  # (n,) int16: channel priors; (n, W): each lane's (per-shot priors)
    prm: RelayParams
    lanes: RelayLanes
    tmpl: NarrowCheckState  # (m,) arrays: check state of nu = lambda with a zero syndrome; (m, W): per lane
    tsgn: np.ndarray  # (nnz,) uint8: its edge signs; (nnz, W): per lane
    scratch: NarrowScratch


# ------------------------------------------------------------------ one iteration of every lane


@numba.njit(cache=True, nogil=True, inline="always")
def _sweep_body(W, cur, nxt, sw):
    """One iteration of lanes ``0:W``: check state ``cur`` (or the template ``sw.tmpl``, for lanes with
    ``fresh``) to ``nxt`` (:class:`~qdecode.kernels.minsum_lanes_narrow.NarrowCheckState`); memory ``post`` and
    decision ``hard`` updated, ``unsat`` per lane (:class:`RelaySweep`, :class:`RelayParams`).
    """
    var_ptr, var_chks, slot = sw.graph.var_ptr, sw.graph.var_chks, sw.graph.slot
    nil = no_slot(slot)
    lam, tsgn = sw.lam, sw.tsgn
    p = sw.prm
    num, shift, ml32, mls, mlu, pls, pl32 = p.num, p.shift, p.ml32, p.mls, p.mlu, p.pls, p.pl32
    gone, ghalf, gshift = p.gone, p.ghalf, p.gshift
    t_m1, t_m2, t_ag, t_pa = sw.tmpl.min1, sw.tmpl.min2, sw.tmpl.arg, sw.tmpl.par
    ln = sw.lanes
    syn, fresh, sgn, hard, post, gnum, unsat = ln.syn, ln.fresh, ln.sgn, ln.hard, ln.post, ln.gnum, ln.unsat
    o1, o2, hp, total, cbuf = sw.scratch.out1, sw.scratch.out2, sw.scratch.hpar, sw.scratch.total, sw.scratch.cbuf
    m1c, m2c, agc, pac = cur.min1, cur.min2, cur.arg, cur.par
    m1n, m2n, agn, pan = nxt.min1, nxt.min2, nxt.arg, nxt.par
    n = var_ptr.shape[0] - 1
    m = syn.shape[0]
    zc = U8(0)
    zs = I16(0)
    for i in range(m):  # check pass: outgoing magnitudes of the current state; reset the next one
        for w in range(W):
            b = syn[i, w]
            f = fresh[w]
            x = blend_u8(f, at_lane(t_m1, i, w), m1c[i, w])
            y = blend_u8(f, at_lane(t_m2, i, w), m2c[i, w])
            agc[i, w] = blend_uint(f, at_lane(t_ag, i, w), agc[i, w])
            pac[i, w] = blend_u8(f, U8(at_lane(t_pa, i, w) ^ b), pac[i, w])
            o1[i, w] = scale_int(x, num, shift, Z32, ml32, zc)
            o2[i, w] = scale_int(y, num, shift, Z32, ml32, zc)
            m1n[i, w] = mlu
            m2n[i, w] = mlu
            agn[i, w] = nil
            pan[i, w] = b
            hp[i, w] = b
    for j in range(n):
        lo_k = var_ptr[j]
        hi_k = var_ptr[j + 1]
        for w in range(W):  # memory prior b_j, saturated
            g = I32(gnum[j, w])
            acc = I32(I32(I32(at_lane(lam, j, w)) * I32(gone - g)) + I32(I32(post[j, w]) * g))
            b = I32(I32(acc + ghalf) >> gshift)
            b = min(max(b, I32(-pl32)), pl32)
            total[w] = I16(b)
        for k in range(lo_k, hi_k):  # check-to-variable messages, posterior sum (never wraps: checked)
            i = var_chks[k]
            s = slot[k]
            t = k - lo_k
            for w in range(W):
                mag = select_int(agc[i, w] == s, I16(o2[i, w]), I16(o1[i, w]))
                c = negate_if(mag, U8(pac[i, w] ^ blend_u8(fresh[w], at_lane(tsgn, k, w), sgn[k, w])))
                cbuf[t, w] = c
                total[w] = I16(total[w] + c)
        for w in range(W):
            v = min(max(total[w], I16(-pls)), pls)
            post[j, w] = v
            hard[j, w] = U8(v <= zs)
        for k in range(lo_k, hi_k):  # extrinsic messages from the unsaturated sum, into the next state
            i = var_chks[k]
            s = slot[k]
            t = k - lo_k
            for w in range(W):
                v = I16(total[w] - cbuf[t, w])
                v = min(max(v, I16(-mls)), mls)
                neg = U8(v <= zs)
                sgn[k, w] = neg
                pan[i, w] = U8(pan[i, w] ^ neg)
                a = U8(v if v >= zs else I16(-v))
                m1 = m1n[i, w]
                m2n[i, w] = min(max(a, m1), m2n[i, w])
                agn[i, w] = blend_uint(a < m1, s, agn[i, w])
                m1n[i, w] = min(a, m1)
                hp[i, w] = U8(hp[i, w] ^ hard[j, w])
    for w in range(W):
        unsat[w] = Z32
    for i in range(m):
        for w in range(W):
            unsat[w] = I32(unsat[w] + I32(hp[i, w]))


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_w64(cur, nxt, sw):
    """:func:`_sweep_body` on lanes ``0:64`` (a compile-time lane count)."""
    _sweep_body(64, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_w32(cur, nxt, sw):
    """:func:`_sweep_body` on lanes ``0:32`` (a compile-time lane count)."""
    _sweep_body(32, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_w16(cur, nxt, sw):
    """:func:`_sweep_body` on lanes ``0:16`` (a compile-time lane count)."""
    _sweep_body(16, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_w8(cur, nxt, sw):
    """:func:`_sweep_body` on lanes ``0:8`` (a compile-time lane count)."""
    _sweep_body(8, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_wn(width, cur, nxt, sw):
    """:func:`_sweep_body` on lanes ``0:width`` (a runtime lane count)."""
    _sweep_body(width, cur, nxt, sw)


#: a drain with this many busy lanes or fewer finishes their shots on the scalar kernel, from the start: one sweep
#: costs about as much at 1 to 8 lanes as three scalar iterations (its per-edge index work is not shared), and the
#: lane iterations thrown away cost a tenth of what they cost on the scalar kernel (AVX2 Zen 3, gross-code DEM)
SCALAR_DRAIN = 3

#: the lane counts with a sweep compiled for them (:func:`sweep_width` rounds a lane count up to one of these)
SWEEP_WIDTHS = (8, 16, 32, 64)


@numba.njit(cache=True, nogil=True)
def sweep_width(busy, lanes):
    """The sweep width for ``busy`` busy lanes out of ``lanes``: the least compiled width >= ``busy`` (idle lanes
    in between run along at vector speed, cheaper than the scalar code of a runtime width), else ``busy``."""
    for w in SWEEP_WIDTHS:
        if busy <= w <= lanes:
            return w
    return busy


@numba.njit(cache=True, nogil=True)
def relay_sweep(width, cur, nxt, sw):
    """One iteration of lanes ``0:width`` from check state ``cur`` into ``nxt`` (:class:`RelaySweep` ``sw``)."""
    if width == 64:
        _sweep_w64(cur, nxt, sw)
    elif width == 32:
        _sweep_w32(cur, nxt, sw)
    elif width == 16:
        _sweep_w16(cur, nxt, sw)
    elif width == 8:
        _sweep_w8(cur, nxt, sw)
    else:
        _sweep_wn(width, cur, nxt, sw)


# ------------------------------------------------------------------ lane set-up


@numba.njit(cache=True, nogil=True)
def relay_template(var_ptr, var_chks, slot, lam, ml32, m):
    """Check state and edge signs of ``nu = lambda`` with a zero syndrome: ``(NarrowCheckState of (m,) arrays,
    (nnz,) uint8 signs)``; ``arg`` of the dtype of ``slot`` (uint8 or uint16), the others uint8."""
    tmpl = NarrowCheckState(np.zeros(m, dtype=np.uint8), np.zeros(m, dtype=np.uint8), np.zeros(m, dtype=slot.dtype),
                            np.zeros(m, dtype=np.uint8))
    sgn = np.zeros(var_chks.shape[0], dtype=np.uint8)
    fill_template(var_ptr, var_chks, slot, lam, ml32, tmpl.min1, tmpl.min2, tmpl.arg, tmpl.par, sgn)
    return tmpl, sgn


@numba.njit(cache=True, nogil=True)
def fill_template(var_ptr, var_chks, slot, lam, ml32, m1, m2, ag, pa, sgn):
    """:func:`relay_template` into given ``(m,)`` arrays (``m1, m2, ag, pa``: the check state) and ``(nnz,)``
    signs, e.g. one lane's columns of per-lane templates."""
    n = var_ptr.shape[0] - 1
    m1[:] = U8(ml32)
    m2[:] = U8(ml32)
    ag[:] = no_slot(ag)
    pa[:] = 0
    for j in range(n):
        x = min(max(I32(lam[j]), -ml32), ml32)
        neg = U8(x <= 0)
        a = U8(abs(x))
        for k in range(var_ptr[j], var_ptr[j + 1]):
            i = var_chks[k]
            sgn[k] = neg
            pa[i] ^= neg
            r1, r2, ra = fold_min(a, slot[k], m1[i], m2[i], ag[i])
            m1[i] = r1
            m2[i] = r2
            ag[i] = ra


@numba.njit(cache=True, nogil=True)
def make_relay_sweep(graph, arith, m, W, za):
    """The sweep's arguments for ``W`` lanes and ``m`` checks: ``(RelaySweep, st_a, st_b)``, two zeroed
    :class:`~qdecode.kernels.minsum_lanes_narrow.NarrowCheckState` of ``(m, W)`` uint8 arrays (the double-buffered
    check state; ``arg`` in the slot dtype, that of the zero ``za``: uint8, or uint16 for check degrees above 255),
    every array separate (the sweep's ``noalias`` contract). ``graph``: a
    :class:`~qdecode.kernels.relay.RelayGraph` of integer priors; ``arith``: its
    :class:`~qdecode.kernels.relay.MessageArith` (:func:`relay_i8_accepts` holds). Raises ``ValueError`` for a
    check degree above the slot type's (255 for uint8, 65535 for uint16)."""
    ng, prm, parts = _sweep_parts(graph, arith, m, W, za)
    n = graph.llr0.shape[0]
    lam = np.zeros(n, dtype=np.int16)
    for j in range(n):
        lam[j] = I16(graph.llr0[j])
    tmpl, tsgn = relay_template(ng.var_ptr, ng.var_chks, ng.slot, lam, prm.ml32, m)
    ln, scratch, st_a, st_b = parts
    return RelaySweep(ng, lam, prm, ln, tmpl, tsgn, scratch), st_a, st_b


@numba.njit(cache=True, nogil=True)
def make_per_lane_relay_sweep(graph, arith, m, W, za):
    """:func:`make_relay_sweep` whose priors, template and template signs are ``(.., W)`` arrays, one column per
    lane, each filled with its lane's shot by :func:`load_lane_priors` (``graph.llr0`` is not read)."""
    ng, prm, parts = _sweep_parts(graph, arith, m, W, za)
    n, nnz = graph.var_ptr.shape[0] - 1, graph.var_chks.shape[0]
    tmpl = NarrowCheckState(np.zeros((m, W), dtype=np.uint8), np.zeros((m, W), dtype=np.uint8),
                            np.full((m, W), za), np.zeros((m, W), dtype=np.uint8))
    ln, scratch, st_a, st_b = parts
    return (RelaySweep(ng, np.zeros((n, W), dtype=np.int16), prm, ln, tmpl, np.zeros((nnz, W), dtype=np.uint8),
                       scratch), st_a, st_b)


def sweep_for(graph, arith, m, W, shot_priors, za):
    """:func:`make_relay_sweep` where ``shot_priors`` is None, else :func:`make_per_lane_relay_sweep`: chosen by
    the argument's type at compile time (numba types both branches of an ``is None`` test on a value that is not
    None, and the two sweeps' types differ)."""
    if shot_priors is None:
        return make_relay_sweep(graph, arith, m, W, za)
    return make_per_lane_relay_sweep(graph, arith, m, W, za)


@overload(sweep_for)
def _sweep_for_overload(graph, arith, m, W, shot_priors, za):
    if isinstance(shot_priors, (numba.types.NoneType, numba.types.Omitted)):
        return lambda graph, arith, m, W, shot_priors, za: make_relay_sweep(graph, arith, m, W, za)
    return lambda graph, arith, m, W, shot_priors, za: make_per_lane_relay_sweep(graph, arith, m, W, za)


@numba.njit(cache=True, nogil=True)
def _sweep_parts(graph, arith, m, W, za):
    """What both sweep makers share: ``(NarrowGraph, RelayParams, (RelayLanes, NarrowScratch, st_a, st_b))``, slots
    and ``arg`` in the dtype of ``za``."""
    var_ptr, var_chks = graph.var_ptr, graph.var_chks
    gshift = arith.gamma_shift
    n = var_ptr.shape[0] - 1
    nnz = var_chks.shape[0]
    slot, maxcdeg, maxvdeg = edge_slots(var_ptr, var_chks, m, za)
    if maxcdeg > np.int64(no_slot(slot)):
        raise ValueError("8-bit Relay-BP lanes kernel: check degree above what the slot type holds (255 uint8, "
                         "65535 uint16)")
    ml32 = I32(arith.msg_lim)
    pl32 = I32(arith.post_lim)
    prm = RelayParams(I32(arith.alpha_num), I32(arith.alpha_shift), ml32, I16(ml32), U8(ml32), I16(pl32), pl32,
                      I32(1 << gshift), I32(1 << (gshift - 1)), I32(gshift))
    st_a = NarrowCheckState(np.zeros((m, W), dtype=np.uint8), np.zeros((m, W), dtype=np.uint8),
                            np.full((m, W), za), np.zeros((m, W), dtype=np.uint8))
    st_b = NarrowCheckState(np.zeros((m, W), dtype=np.uint8), np.zeros((m, W), dtype=np.uint8),
                            np.full((m, W), za), np.zeros((m, W), dtype=np.uint8))
    ln = RelayLanes(syn=np.zeros((m, W), dtype=np.uint8), fresh=np.zeros(W, dtype=np.uint8),
                    sgn=np.zeros((nnz, W), dtype=np.uint8), hard=np.zeros((n, W), dtype=np.uint8),
                    post=np.zeros((n, W), dtype=np.int16), gnum=np.zeros((n, W), dtype=np.int16),
                    unsat=np.zeros(W, dtype=np.int32))
    scratch = NarrowScratch(np.zeros((m, W), dtype=np.uint8), np.zeros((m, W), dtype=np.uint8),
                            np.zeros((m, W), dtype=np.uint8), np.zeros(W, dtype=np.int16),
                            np.zeros((maxvdeg, W), dtype=np.int16))
    return NarrowGraph(var_ptr, var_chks, slot), prm, (ln, scratch, st_a, st_b)


@numba.njit(cache=True, nogil=True)
def quantised_gammas(sched, gshift, n):
    """``(g0n, gq)``: leg 0's gamma numerator ``rint(gamma0 2^gshift)`` (int16) and the explicit gamma table of
    :class:`~qdecode.kernels.relay.RelaySchedule` quantised the same way (``(rows, n)`` int16; rows 0: drawn)."""
    q = float(1 << gshift)
    g0n = I16(np.rint(sched.gamma0 * q))
    rows = sched.gammas.shape[0]
    gq = np.zeros((rows, n), dtype=np.int16)
    for r in range(rows):
        for j in range(n):
            gq[r, j] = I16(np.rint(sched.gammas[r, j] * q))
    return g0n, gq


@numba.njit(cache=True, nogil=True)
def _load_shot(w, s, seed, syndromes, lam, g0n, ln, ct):
    """Shot ``s`` into lane ``w`` of :class:`RelayLanes` ``ln``: its syndrome, memory ``M = lambda``, leg 0's
    gammas, a fresh start."""
    syn, fresh, post, gnum = ln.syn, ln.fresh, ln.post, ln.gnum
    m = syndromes.shape[1]
    for i in range(m):
        syn[i, w] = U8(syndromes[s, i] & U1)
    for j in range(post.shape[0]):
        post[j, w] = at_lane(lam, j, w)
        gnum[j, w] = g0n
    fresh[w] = 1
    start_lane_counters(w, s, shot_key(seed, syndromes[s]), ct)


@numba.njit(cache=True, nogil=True)
def load_lane_priors(w, s, shot_llr0, sw):
    """Shot ``s``'s priors (row ``s`` of ``shot_llr0``, integers) into lane ``w`` of a per-lane
    :class:`RelaySweep` ``sw``, and the lane's template (:func:`fill_template`)."""
    lam, tmpl = sw.lam, sw.tmpl
    for j in range(lam.shape[0]):
        lam[j, w] = I16(shot_llr0[s, j])
    g = sw.graph
    fill_template(g.var_ptr, g.var_chks, g.slot, lam[:, w], sw.prm.ml32, tmpl.min1[:, w], tmpl.min2[:, w],
                  tmpl.arg[:, w], tmpl.par[:, w], sw.tsgn[:, w])


@numba.njit(cache=True, nogil=True)
def move_lane_priors(src, dst, sw):
    """Copy lane ``src``'s priors and template to lane ``dst`` (a per-lane :class:`RelaySweep`)."""
    lam, tmpl, tsgn = sw.lam, sw.tmpl, sw.tsgn
    for j in range(lam.shape[0]):
        lam[j, dst] = lam[j, src]
    for i in range(tmpl.min1.shape[0]):
        tmpl.min1[i, dst] = tmpl.min1[i, src]
        tmpl.min2[i, dst] = tmpl.min2[i, src]
        tmpl.arg[i, dst] = tmpl.arg[i, src]
        tmpl.par[i, dst] = tmpl.par[i, src]
    for k in range(tsgn.shape[0]):
        tsgn[k, dst] = tsgn[k, src]


@numba.njit(cache=True, nogil=True)
def _set_gammas(w, leg, sched, gshift, gq, key, g1, gn1, gnum):
    """Lane ``w``'s gamma numerators of leg ``leg >= 1``: row ``leg % rows`` of the quantised table ``gq``,
    or drawn from the shot's ``key`` (:func:`~qdecode.kernels.relay.draw_gammas`)."""
    n = gnum.shape[0]
    rows = gq.shape[0]
    if rows > 0:
        row = leg % rows
        for j in range(n):
            gnum[j, w] = gq[row, j]
    else:
        draw_gammas(key, leg, sched.gamma_lo, sched.gamma_hi, gshift, g1, gn1)
        for j in range(n):
            gnum[j, w] = I16(gn1[j])


@numba.njit(cache=True, nogil=True)
def _move_lane(src, dst, cur, ln, ct, sols):
    """Copy lane ``src`` (current check state ``cur``, :class:`RelayLanes` ``ln``: syndrome, signs, memory,
    gammas, decision; counters; recorded solutions ``sols``, a
    :class:`~qdecode.kernels.relay_lanes.LaneSolutions` or ``None``) to ``dst``."""
    syn, sgn, post, gnum, hard, fresh, unsat = ln.syn, ln.sgn, ln.post, ln.gnum, ln.hard, ln.fresh, ln.unsat
    m1c, m2c, agc, pac = cur.min1, cur.min2, cur.arg, cur.par
    for i in range(syn.shape[0]):
        m1c[i, dst] = m1c[i, src]
        m2c[i, dst] = m2c[i, src]
        agc[i, dst] = agc[i, src]
        pac[i, dst] = pac[i, src]
        syn[i, dst] = syn[i, src]
    for k in range(sgn.shape[0]):
        sgn[k, dst] = sgn[k, src]
    for j in range(post.shape[0]):
        post[j, dst] = post[j, src]
        gnum[j, dst] = gnum[j, src]
        hard[j, dst] = hard[j, src]
    fresh[dst] = fresh[src]
    unsat[dst] = unsat[src]
    move_lane_counters(src, dst, ct)
    if sols is not None:
        move_lane_solutions(src, dst, sols)


@numba.njit(cache=True, nogil=True)
def _finish_on_scalar(graph, sched, arith, syndromes, ct, nact, out, sols, shot_priors):
    """The shots of lanes ``0:nact`` decoded again from the start by :func:`~qdecode.kernels.relay.relay_decode`
    into their rows of ``out`` (:class:`~qdecode.kernels.relay.RelayOut`): a shot's outputs depend only on
    (seed, syndrome), so the result is the lanes' result. With ``sols`` (a
    :class:`~qdecode.kernels.relay_lanes.LaneSolutions`, else ``None``) ``out`` is a
    :class:`~qdecode.kernels.relay.RelayGapOut` and each shot's gap is written as
    :func:`~qdecode.kernels.relay.relay_gap_range` writes it. ``shot_priors``: ``None``, or ``(shot_llr0,
    shot_wllr)`` whose rows are each shot's ``graph.llr0`` and ``graph.wllr``."""
    work = make_relay_work(graph, arith.msg_lim, syndromes.shape[1])
    if sols is None:
        rec = no_solutions()
    else:
        cap = sols.weight.shape[1]
        rec = RelaySolutions(sols.class_code, np.zeros(cap, np.float64), np.zeros(cap, np.uint64),
                             np.zeros(1, np.int64))
    for w in range(nact):
        s = ct.shot[w]
        if shot_priors is None:
            ok, its, lr, wt = relay_decode(graph, sched, arith, syndromes[s], ct.key[w], work, out.hard[s], rec)
        else:
            shot_graph = RelayGraph(graph.var_ptr, graph.var_chks, shot_priors[0][s], shot_priors[1][s])
            shot_prior_state(shot_priors[0][s], graph.var_ptr, graph.var_chks, arith.msg_lim, work)
            ok, its, lr, wt = relay_decode(shot_graph, sched, arith, syndromes[s], ct.key[w], work, out.hard[s], rec)
        out.converged[s] = ok
        out.iterations[s] = its
        out.legs[s] = lr
        out.weight[s] = wt
        if sols is not None:
            out.weight_other[s], out.classes[s] = solutions_gap(rec, ok)


# ------------------------------------------------------------------ range kernel


@numba.njit(cache=True, nogil=True)
def relay_lanes_i8_range(graph, sched, arith, seed, syndromes, out, lanes, start, stop):
    """Relay-BP on shots ``start:stop`` on ``lanes`` persistent 8-bit lanes (releases the GIL).

    Arguments and outputs as :func:`qdecode.kernels.relay.relay_decode_range` (bit-identical per shot) for
    integer messages accepted by :func:`relay_i8_accepts`, plus ``lanes`` (:data:`RELAY_NARROW_LANES`; never
    more lanes than shots are used). Slots uint8: raises ``ValueError`` for a check degree above 255
    (:func:`relay_lanes_i8_wide_range` takes those; :func:`relay_i8_kernels` picks).
    """
    _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, None, None, start, stop, U8(0))


@numba.njit(cache=True, nogil=True)
def relay_lanes_i8_wide_range(graph, sched, arith, seed, syndromes, out, lanes, start, stop):
    """:func:`relay_lanes_i8_range` with uint16 slots and ``arg``: check degrees up to 65535."""
    _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, None, None, start, stop, U16(0))


@numba.njit(cache=True, nogil=True)
def relay_lanes_i8_shot_priors_range(graph, sched, arith, seed, shot_llr0, shot_wllr, syndromes, out, lanes, start,
                                     stop):
    """:func:`relay_lanes_i8_range` with each shot's own priors (releases the GIL): rows ``s`` of ``shot_llr0``
    (``(S, n)`` integers) and ``shot_wllr`` (``(S, n)`` float64) stand for ``graph.llr0`` and ``graph.wllr``,
    bit-identical per shot to :func:`~qdecode.kernels.relay.relay_shot_priors_range`. Each lane holds its shot's
    priors and the template of its ``nu = lambda`` (:func:`make_per_lane_relay_sweep`); :func:`relay_i8_accepts`
    must hold for every row."""
    _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, None, (shot_llr0, shot_wllr), start, stop, U8(0))


@numba.njit(cache=True, nogil=True)
def relay_lanes_i8_wide_shot_priors_range(graph, sched, arith, seed, shot_llr0, shot_wllr, syndromes, out, lanes,
                                          start, stop):
    """:func:`relay_lanes_i8_shot_priors_range` with uint16 slots and ``arg``: check degrees up to 65535."""
    _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, None, (shot_llr0, shot_wllr), start, stop, U16(0))


@numba.njit(cache=True, nogil=True)
def relay_lanes_i8_gap_range(graph, sched, arith, seed, syndromes, class_code, out, lanes, start, stop):
    """:func:`relay_lanes_i8_range` that also records every converged leg, for the gap (releases the GIL).

    Arguments and outputs as :func:`qdecode.kernels.relay.relay_gap_range` (``class_code`` ``(n,)`` uint64,
    ``out`` a :class:`~qdecode.kernels.relay.RelayGapOut`; every output bit-identical per shot, weights,
    ``weight_other`` and ``classes`` included), plus ``lanes``, for problems accepted by
    :func:`relay_i8_accepts`. Each lane records its shot's converged legs in leg order
    (:class:`~qdecode.kernels.relay_lanes.LaneSolutions`, room for ``max(1, stop_after)``).
    """
    sols = make_lane_solutions(class_code, max(1, sched.stop_after), max(1, min(lanes, stop - start)))
    _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, sols, None, start, stop, U8(0))


@numba.njit(cache=True, nogil=True)
def relay_lanes_i8_wide_gap_range(graph, sched, arith, seed, syndromes, class_code, out, lanes, start, stop):
    """:func:`relay_lanes_i8_gap_range` with uint16 slots and ``arg``: check degrees up to 65535."""
    sols = make_lane_solutions(class_code, max(1, sched.stop_after), max(1, min(lanes, stop - start)))
    _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, sols, None, start, stop, U16(0))


class RelayI8Kernels(NamedTuple):
    """The 8-bit lanes entries of one slot type (:func:`relay_i8_kernels`)."""

    plain: object  # relay_lanes_i8_range or relay_lanes_i8_wide_range
    gap: object  # relay_lanes_i8_gap_range or relay_lanes_i8_wide_gap_range
    shot_priors: object  # relay_lanes_i8_shot_priors_range or relay_lanes_i8_wide_shot_priors_range


def relay_i8_kernels(max_check_degree: int) -> RelayI8Kernels:
    """The 8-bit lanes entries for a graph whose largest check degree is ``max_check_degree``: uint8 slots up to
    255 (:func:`relay_lanes_i8_range`, ...), uint16 above (:func:`relay_lanes_i8_wide_range`, ...). numba compiles
    an entry when it is first called, so a graph of low-degree checks never compiles the wide ones."""
    if max_check_degree > MAX_SLOTS_U8:
        return RelayI8Kernels(relay_lanes_i8_wide_range, relay_lanes_i8_wide_gap_range,
                              relay_lanes_i8_wide_shot_priors_range)
    return RelayI8Kernels(relay_lanes_i8_range, relay_lanes_i8_gap_range, relay_lanes_i8_shot_priors_range)


@numba.njit(cache=True, nogil=True)
def _lanes_i8(graph, sched, arith, seed, syndromes, out, lanes, sols, shot_priors, start, stop, za):
    """The body of :func:`relay_lanes_i8_range` (``sols`` ``None``: nothing recorded; numba prunes those
    branches at compile time, an argument's ``is None`` being known), :func:`relay_lanes_i8_gap_range`
    (``sols`` a :class:`~qdecode.kernels.relay_lanes.LaneSolutions` of at least the lanes used) and
    :func:`relay_lanes_i8_shot_priors_range` (``shot_priors`` ``(shot_llr0, shot_wllr)``, else ``None``), and
    their ``*_wide_*`` twins: slots and ``arg`` in the dtype of the zero ``za`` (uint8 or uint16)."""
    # long: the persistent-lanes loop (load, sweep, verdicts, drain) shares its lane state and counters
    gshift = arith.gamma_shift
    n = graph.var_ptr.shape[0] - 1
    if stop <= start:
        return
    W = max(1, min(lanes, stop - start))
    sw, st_a, st_b = sweep_for(graph, arith, syndromes.shape[1], W, shot_priors, za)
    lam, ln = sw.lam, sw.lanes
    g0n, gq = quantised_gammas(sched, gshift, n)
    g1 = np.zeros(n, dtype=np.float64)
    gn1 = np.zeros(n, dtype=np.int64)
    fresh, hard, gnum, unsat = ln.fresh, ln.hard, ln.gnum, ln.unsat
    ct = make_lane_counters(W)
    nxt_shot = start
    for w in range(W):
        if shot_priors is not None:
            load_lane_priors(w, nxt_shot, shot_priors[0], sw)
        _load_shot(w, nxt_shot, seed, syndromes, lam, g0n, ln, ct)
        nxt_shot += 1
    nact = W
    width = sweep_width(W, W)
    # int64 zeros, not literal 0s: a lane index or state flag that starts as a literal has numba compile the
    # helpers it is passed to twice (for Literal[int](0) while typing the loop, then for int64)
    zero = np.int64(0)
    cur = zero
    while nact > 0:
        if cur == 0:
            relay_sweep(width, st_a, st_b, sw)
        else:
            relay_sweep(width, st_b, st_a, sw)
        cur = 1 - cur
        state = st_a if cur == 0 else st_b
        for w in range(width):
            fresh[w] = 0
        w = zero
        while w < nact:  # lanes 0:nact are busy; finished legs move on, finished shots retire
            wllr = graph.wllr if shot_priors is None else shot_priors[1][ct.shot[w]]
            verdict = lane_verdict(w, unsat[w] == 0, hard, wllr, sched, ct, out, sols)
            if verdict == LEG_GOES_ON:
                w += 1
            elif verdict == NEXT_LEG:  # memory and decision kept, messages from nu = lambda
                _set_gammas(w, ct.leg[w], sched, gshift, gq, ct.key[w], g1, gn1, gnum)
                fresh[w] = 1
                w += 1
            elif nxt_shot < stop:  # SHOT_DONE, and a shot waits
                if shot_priors is not None:
                    load_lane_priors(w, nxt_shot, shot_priors[0], sw)
                _load_shot(w, nxt_shot, seed, syndromes, lam, g0n, ln, ct)
                nxt_shot += 1
                w += 1
            else:  # SHOT_DONE in the drain: the last busy lane takes this slot and is checked next
                nact -= 1
                if w < nact:
                    _move_lane(nact, w, state, ln, ct, sols)
                    if shot_priors is not None:
                        move_lane_priors(nact, w, sw)
                ct.shot[nact] = -1
        if nxt_shot >= stop:  # the drain: the busy lanes are 0:nact
            if 0 < nact <= SCALAR_DRAIN:
                _finish_on_scalar(graph, sched, arith, syndromes, ct, nact, out, sols, shot_priors)
                return
            width = sweep_width(nact, W)
