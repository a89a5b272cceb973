"""Flooding min-sum over lanes of shots in narrow storage: 8- and 16-bit fixed point, and float32.

Drop-in range kernels with the signature of
:func:`qdecode.kernels.minsum_lanes.minsum_lanes_range` and bit-identical results
(hard decisions, posteriors, convergence flags, iteration counts) on the inputs each
accepts:

- :func:`minsum_lanes_i8_range`: the int32 fixed-point path with ``msg_lim <= 127``,
  ``post_lim <= 32767`` and ``|llr0| + (max variable degree) * msg_lim <= 32767``. Check
  state is uint8 (``min1``, ``min2``, ``arg``, sign parity), variable sums int16.
- :func:`minsum_lanes_i16_range`: the same for 9- to 16-bit messages (``msg_lim <= 32767``):
  uint16 check state, int32 variable sums; one body with the 8-bit kernel (:func:`_sweep_int_body`,
  compiled per storage type).
- :func:`minsum_lanes_f32_range`: the float32 path (float32 ``llr0``, ``beta``, ``msg_lim``,
  ``post_lim``); check state float32 with uint8 sign parity and ``arg``.
- ``*_wide_range`` (:func:`minsum_lanes_i8_wide_range`, :func:`minsum_lanes_i16_wide_range`,
  :func:`minsum_lanes_f32_wide_range`): the same kernels with uint16 slots and ``arg``, for
  graphs with a check of degree above 255.

Same arithmetic as the reference, reorganised for SIMD code:

- ``arg`` is the edge's *slot* in its check's CSR row, not the variable index: slots increase
  with the variable index inside a check, so "the first strict minimum" picks the same edge.
  Slots and ``arg`` are uint8 where every check degree is <= 255 and uint16 otherwise (degree
  <= 65535), the largest value of the type meaning "none" (:func:`edge_slots`, :func:`no_slot`).
  One body serves both: each format has a kernel per slot type (``minsum_lanes_i8_range`` and
  ``minsum_lanes_i8_wide_range``, ...), which numba compiles only when it is called;
  :func:`narrow_kernel` picks by the graph's largest check degree.
- The convergence test keeps, per check and lane, the parity ``hp`` of ``H e + s``, rebuilt
  in every sweep from the new hard decisions (one uint8 XOR per edge-lane) and summed per
  lane after the sweep: no per-lane branch on decision flips. The reference's counter
  gives the same number of unsatisfied checks.
- Every integer intermediate is cast to its storage type (numba widens small integers to
  int64, and the loop vectoriser then runs 64-bit lanes); the fixed-point scaling
  ``(x * num) >> shift`` runs in int32 once per check (adaptive shifts above 8 give
  ``max(x - 1, 0)`` for ``x <= 127`` exactly as shift 8 with ``num = 255`` does).
- The sweep is compiled with LLVM ``noalias`` on its array arguments
  (:class:`NoAliasCompiler`): every state array is allocated by the range wrapper, on its own
  (the two check-state buffers too, swapped between iterations), and reaches the sweep in named
  tuples (:class:`NarrowSweep`, :class:`NarrowCheckState`), which numba passes as their flattened
  members, so the lane loops carry no runtime alias checks. That is only valid because no two
  arrays overlap.
- Lane counts 32, 64 and 128 run a sweep compiled for that constant lane count (the loops
  over lanes are unrolled and SLP-vectorised); other counts run a runtime-width sweep.

``hist_k`` (posterior history, as the reference's: for shots that do not converge, ``out.post``
receives the sum of the last ``hist_k`` posteriors when ``hist_k > 1``; converged shots the last
posterior) keeps a ring of ``hist_k`` posterior rows per lane.

Lanes are persistent, as in the reference: a lane whose shot converged or reached
``max_iter`` writes its result and takes the next pending shot.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.extending import overload

from qdecode.kernels.arith import as_type_of as _as
from qdecode.kernels.arith import clip
from qdecode.kernels.minsum import check_magnitude, fold_min, keep_history
from qdecode.kernels.minsum_lanes import history_ring, make_lane_queue, next_shot, retire_lane

#: lane count of the 8-bit and float32 narrow kernels on batch paths (:func:`narrow_lanes`; a constant-width sweep
#: is compiled for it)
NARROW_LANES = 64
#: lane count of the 16-bit kernel (32 uint16 / int32 lanes fill a 512-bit vector of sums twice)
NARROW16_LANES = 32

U8 = np.uint8
U16 = np.uint16
I16 = np.int16
I32 = np.int32
U255 = np.uint8(255)  # "no arg" slot of uint8 slots (:func:`no_slot`)
#: the largest check degree of uint8 slots (255 is "none"), and of uint16 slots
MAX_SLOTS_U8 = 255
MAX_SLOTS_U16 = 65535
U1 = np.uint8(1)
Z32 = np.int32(0)
F0 = np.float32(0.0)


class NoAliasCompiler(CompilerBase):
    """nopython pipeline with numba's internal ``noalias`` flag: LLVM ``noalias`` on every
    pointer argument, array data included (numba sets it for parfor gufuncs only).

    Only for kernels whose array arguments never overlap; the callers here guarantee it.
    Private numba API (``Flags.noalias``): ``tests/kernels/test_minsum_lanes_narrow.py``
    checks the emitted IR.
    """

    def define_pipelines(self):
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]


# ------------------------------------------------------------------ graph helpers


def no_slot(a):
    """The "none" slot of an array ``a`` of slots or ``arg``: the largest value of its dtype (255 for uint8,
    65535 for uint16), in that dtype. The Python body is the reference; jitted code runs
    :func:`_no_slot_overload` (a constant of the type)."""
    return a.dtype.type(np.iinfo(a.dtype).max)


@overload(no_slot, inline="always")
def _no_slot_overload(a):
    dt = numba.np.numpy_support.as_dtype(a.dtype)
    nil = dt.type(np.iinfo(dt).max)
    return lambda a: nil


@numba.njit(cache=True, nogil=True)
def edge_slots(var_ptr, var_chks, m, za):
    """``(slot, max check degree, max variable degree)``: ``slot[k]`` (``(nnz,)``, the unsigned dtype of the
    zero ``za``: uint8 or uint16) is CSC edge ``k``'s position in its check's CSR row (-> the dtype's largest
    value, "none", when a check has that many edges or more: the caller rejects such graphs)."""
    n = var_ptr.shape[0] - 1
    cnt = np.zeros(m, dtype=np.int64)
    slot = np.full(var_chks.shape[0], za)
    nil = no_slot(slot)
    lim = np.int64(nil)
    maxvdeg = 1
    for j in range(n):
        maxvdeg = max(maxvdeg, var_ptr[j + 1] - var_ptr[j])
        for k in range(var_ptr[j], var_ptr[j + 1]):
            i = var_chks[k]
            c = cnt[i]
            slot[k] = _as(c, za) if c < lim else nil
            cnt[i] = c + 1
    maxcdeg = 0
    for i in range(m):
        maxcdeg = max(maxcdeg, cnt[i])
    return slot, maxcdeg, maxvdeg


# ------------------------------------------------------------------ named argument groups (both formats)
#
# The sweeps read every array through these named tuples. numba passes a tuple argument as its flattened
# members, so each array's data pointer is still an argument of its own and still gets LLVM ``noalias``
# (:class:`NoAliasCompiler`): the lane loops carry no runtime alias checks (``tests/kernels/
# test_minsum_lanes_narrow.py`` checks the IR). That stays valid only while no two arrays below overlap.
# Shapes: ``m`` checks, ``n`` variables, ``nnz`` edges, ``W`` lanes; "check dtype" is uint8 / uint16 /
# float32 (8-bit, 16-bit, float32 format), "sum dtype" int16 / int32 / float32.


class NarrowGraph(NamedTuple):
    """The Tanner graph as the sweeps read it."""

    var_ptr: np.ndarray  # (n + 1,) int64: CSC index pointer
    var_chks: np.ndarray  # (nnz,) check of each CSC edge
    slot: np.ndarray  # (nnz,) uint8 or uint16: each edge's position in its check's CSR row (:func:`edge_slots`)


class NarrowCheckState(NamedTuple):
    """Check state of ``W`` lanes (one of the two buffers that swap roles every iteration): every array ``(m, W)``;
    a one-shot template ``(m, 1)`` (shared priors) or ``(m,)`` (Relay-BP's)."""

    min1: np.ndarray  # check dtype: least incoming magnitude
    min2: np.ndarray  # check dtype: second least
    arg: np.ndarray  # the slot dtype (uint8 or uint16): the slot holding the least one (:func:`no_slot`: none)
    par: np.ndarray  # uint8: incoming sign parity with the syndrome bit


class NarrowLanes(NamedTuple):
    """Per-lane state other than the check state."""

    syn: np.ndarray  # (m, W) uint8: the lane's syndrome
    sgn: np.ndarray  # (nnz, W) uint8: sign of each variable-to-check message
    pri: np.ndarray  # (n, W) sum dtype: per-shot priors, or (n, 1): the priors every shot shares
    hard: np.ndarray  # (n, W) uint8: hard decisions
    post: np.ndarray  # (n, W) sum dtype: posteriors, or (1, W) when not kept
    unsat: np.ndarray  # (W,) int32: unsatisfied checks after the last sweep
    ring: np.ndarray  # (k, n, W) sum dtype: the last k posteriors (k = hist_k > 1), else (0, n, W)
    rrow: np.ndarray  # (W,) int64: this iteration's row of ``ring``


class NarrowScratch(NamedTuple):
    """Buffers one sweep overwrites."""

    out1: np.ndarray  # (m, W) check dtype: a check's scaled outgoing magnitude to all but its arg edge
    out2: np.ndarray  # (m, W) check dtype: ... and to its arg edge
    hpar: np.ndarray  # (m, W) uint8: parity of H e + s, rebuilt in each sweep
    total: np.ndarray  # (W,) sum dtype: one variable's posterior sum
    cbuf: np.ndarray  # (max variable degree, W) sum dtype: one variable's check-to-variable messages


class IntCoeffs(NamedTuple):
    """Fixed-point check scaling ``(x * num) >> shift`` per lane and what sets it (:func:`_coeffs_int`)."""

    num: np.ndarray  # (W,) int32
    shift: np.ndarray  # (W,) int32
    adaptive: bool  # 1 - 2^-(it+1) per iteration, else alpha_num / alpha_shift
    alpha_num: int
    alpha_shift: int
    tmax: int  # adaptive shift cap: 8 for 8-bit messages, 16 for 16-bit


class IntParams(NamedTuple):
    """Scalars of a fixed-point sweep; limits in the type they are compared in."""

    per_shot: bool  # priors per shot (``pri`` (n, W)) or shared (``pri`` (n, 1))
    keep_post: bool  # write ``post``
    beta32: np.int32  # offset, clamped to +-2^30
    ml32: np.int32  # message limit, int32
    mls: object  # message limit, sum dtype
    mlu: object  # message limit, check dtype
    pls: object  # posterior limit, sum dtype


class F32Coeffs(NamedTuple):
    """float32 check scaling per lane and what sets it (:func:`_coeffs_f32`)."""

    a_f: np.ndarray  # (W,) float64
    adaptive: bool
    alpha: float


class F32Params(NamedTuple):
    """Scalars of a float32 sweep."""

    per_shot: bool
    keep_post: bool
    beta: np.float32
    msg_lim: np.float32
    post_lim: np.float32


class NarrowSweep(NamedTuple):
    """Everything a sweep reads or writes besides the two check states: :class:`NarrowGraph`, :class:`IntCoeffs`
    or :class:`F32Coeffs`, :class:`IntParams` or :class:`F32Params`, :class:`NarrowLanes`, :class:`NarrowScratch`."""

    graph: NarrowGraph
    coef: object
    prm: object
    lanes: NarrowLanes
    scratch: NarrowScratch


class NarrowLoad(NamedTuple):
    """What :func:`_load_lane` reads to load a shot into a lane."""

    per_shot: bool
    syndromes: np.ndarray  # (S, m) uint8
    graph: NarrowGraph
    llr0: np.ndarray  # (S, n) or (1, n): priors in the message dtype
    ml32: object  # message limit (int32, or float32)
    tmpl: NarrowCheckState  # zero-syndrome check state of one lane, (m, 1) arrays (shared priors)
    tsgn: np.ndarray  # (nnz, 1) uint8: its edge signs
    lanes: NarrowLanes  # ``syn``, ``pri``, ``sgn`` written
    zc: object  # zero of the check dtype
    zs: object  # zero of the sum dtype


# ------------------------------------------------------------------ persistent lanes (both formats)


@numba.njit(cache=True, nogil=True)
def _run_lanes(st_a, st_b, ld, sw, max_iter, start, stop, out):
    """Persistent-lane driver of both narrow formats: shots ``start:stop`` on the lanes of ``sw``
    (:class:`NarrowSweep`), check state double-buffered in ``st_a`` / ``st_b`` (:class:`NarrowCheckState`),
    results into ``out`` (:class:`~qdecode.kernels.bp_args.BpOut`).

    Every format loads a shot with :func:`_load_lane` (``_load_lane(w, s, state, ld)``: shot ``s`` into
    lane ``w`` of the check state ``state``; ``ld`` a :class:`NarrowLoad`); two functions are resolved at
    compile time by the type of the check state (:func:`_format_impl`): ``_step(cur, nxt, sw)`` runs one
    flooding iteration of every lane from state ``cur`` into ``nxt`` (the two buffers swap roles each
    iteration) and leaves each lane's unsatisfied-check count in ``sw.lanes.unsat``; ``_coeffs(w, it, cf)``
    sets lane ``w``'s check scaling for its iteration ``it`` (0-based) in ``cf = sw.coef``. A lane whose shot
    converged or reached ``max_iter`` writes its result (:func:`~qdecode.kernels.minsum_lanes.retire_lane`)
    and takes the next pending shot.
    """
    ln = sw.lanes
    hard, post, ring, rrow, unsat = ln.hard, ln.post, ln.ring, ln.rrow, ln.unsat
    keep_post = sw.prm.keep_post
    cf = sw.coef
    W = unsat.shape[0]
    q = make_lane_queue(W, start, stop)
    for w in range(W):
        s = next_shot(w, q)
        if s >= 0:
            _load_lane(w, s, st_a, ld)
    cur = 0
    while q.pending[2] > 0:
        for w in range(W):
            rrow[w] = q.it[w] % ring.shape[0] if ring.shape[0] > 0 else 0
            _coeffs(w, q.it[w], cf)
        if cur == 0:
            _step(st_a, st_b, sw)
        else:
            _step(st_b, st_a, sw)
        cur = 1 - cur
        for w in range(W):  # retire finished lanes, load pending shots into them
            s = retire_lane(w, unsat[w], max_iter, q, hard, post, ring, keep_post, out)
            if s >= 0:
                _load_lane(w, s, st_a if cur == 0 else st_b, ld)


# ------------------------------------------------------------------ 8- and 16-bit fixed point
#
# One body for both integer formats, compiled per storage type: ``zc`` is a zero of the check-state
# type (uint8 for 8-bit messages, uint16 for 16-bit), ``zs`` a zero of the variable-sum type (int16,
# int32). Every intermediate is cast with :func:`_as` to one of those two types (numba would widen
# it to int64 and the loop vectoriser would then run 64-bit lanes). Check state ``(min1, min2, arg,
# parity)`` as the float32 format's: the parity in a byte of its own (packed into the top bit of
# ``min1`` it cost byte shifts, which AVX2 does not have: ``benchmarks/README.md``, "Lane kernels on AVX2").


@numba.njit(cache=True, nogil=True, inline="always")
def blend_u8(take, new, old):
    """``new if take else old`` for uint8 values, as a bit blend ``(new & mask) | (old & ~mask)``.

    Written ``x[i] = new if take else x[i]``, LLVM makes the store conditional, and on AVX2 (no
    byte-masked stores) that loop stays scalar with a branch per lane: 8.8 ns per edge-lane for the
    fold into the check state on an AVX2 Zen 3 core, 0.16 ns as a blend (``benchmarks/README.md``,
    "Lane kernels on AVX2").
    """
    mask = U8(U8(0) - U8(take))
    return U8(U8(new & mask) | U8(old & U8(~mask)))


@numba.njit(cache=True, nogil=True, inline="always")
def blend_uint(take, new, old):
    """:func:`blend_u8` for unsigned integers of the type of ``old`` (uint8 or uint16 slots and ``arg``)."""
    mask = _as(_as(0, old) - _as(take, old), old)
    return _as(_as(new & mask, old) | _as(old & _as(~mask, old), old), old)


@numba.njit(cache=True, nogil=True, inline="always")
def select_int(take, a, b):
    """``a if take else b`` for two signed integers of one type, as ``b ^ ((a ^ b) & -take)`` (the same
    AVX2 vectorisation as :func:`blend_u8`: a select of two loaded messages stays scalar, with a branch)."""
    mask = _as(-_as(take, b), b)
    return _as(b ^ _as(_as(a ^ b, b) & mask, b), b)


@numba.njit(cache=True, nogil=True, inline="always")
def negate_if(x, neg):
    """``-x if neg else x`` (``neg`` 0 or 1) for a signed integer, as ``(x ^ -neg) + neg``."""
    m = _as(-_as(neg, x), x)
    return _as(_as(x ^ m, x) - m, x)


@numba.njit(cache=True, nogil=True, inline="always")
def scale_int(x, num, shift, beta, ml, zc):
    """Outgoing magnitude ``clip(max(((x * num) >> shift) - beta, 0), ml)`` of a minimum (int32 math),
    in the check-state type of ``zc``."""
    v = I32(I32(I32(x) * num) >> shift)
    v = I32(v - beta)
    v = max(v, Z32)
    return _as(min(v, ml), zc)


@numba.njit(cache=True, nogil=True, inline="always")
def _sweep_int_body(W, cur, nxt, sw):
    """One flooding iteration of ``W`` lanes in fixed point: check state ``cur`` to ``nxt``
    (:class:`NarrowCheckState`), everything else in ``sw`` (:class:`NarrowSweep` with :class:`IntCoeffs` and
    :class:`IntParams`: ``mls`` / ``pls`` the message and posterior limits in the sum type, ``mlu`` the message
    limit in the check-state type).
    """
    var_ptr, var_chks, slot = sw.graph.var_ptr, sw.graph.var_chks, sw.graph.slot
    nil = no_slot(slot)
    num, shift = sw.coef.num, sw.coef.shift
    p = sw.prm
    per_shot, keep_post, beta32, ml32, mls, mlu, pls = p.per_shot, p.keep_post, p.beta32, p.ml32, p.mls, p.mlu, p.pls
    ln = sw.lanes
    syn, sgn, pri, hard = ln.syn, ln.sgn, ln.pri, ln.hard
    post, unsat, ring, rrow = ln.post, ln.unsat, ln.ring, ln.rrow
    o1, o2, hp, total, cbuf = sw.scratch.out1, sw.scratch.out2, sw.scratch.hpar, sw.scratch.total, sw.scratch.cbuf
    m1c, m2c, agc, pac = cur.min1, cur.min2, cur.arg, cur.par
    m1n, m2n, agn, pan = nxt.min1, nxt.min2, nxt.arg, nxt.par
    zc = _as(0, mlu)
    zs = _as(0, mls)
    n = var_ptr.shape[0] - 1
    m = syn.shape[0]
    for i in range(m):  # check pass: scaled outgoing magnitudes of the current state; reset the next one
        for w in range(W):
            o1[i, w] = scale_int(m1c[i, w], num[w], shift[w], beta32, ml32, zc)
            o2[i, w] = scale_int(m2c[i, w], num[w], shift[w], beta32, ml32, zc)
            b = syn[i, w]
            m1n[i, w] = mlu
            m2n[i, w] = mlu
            agn[i, w] = nil
            pan[i, w] = b
            hp[i, w] = b
    for j in range(n):
        lo_k = var_ptr[j]
        hi_k = var_ptr[j + 1]
        if per_shot:
            for w in range(W):
                total[w] = pri[j, w]
        else:
            p0 = pri[j, 0]
            for w in range(W):
                total[w] = p0
        for k in range(lo_k, hi_k):  # check-to-variable messages, posterior sum
            i = var_chks[k]
            s = slot[k]
            t = k - lo_k
            for w in range(W):
                mag = select_int(agc[i, w] == s, _as(o2[i, w], zs), _as(o1[i, w], zs))
                c = negate_if(mag, U8(pac[i, w] ^ sgn[k, w]))
                cbuf[t, w] = c
                total[w] = _as(total[w] + c, zs)
        for w in range(W):
            v = total[w]
            v = min(v, pls)
            v = max(v, _as(-pls, zs))
            total[w] = v
            hard[j, w] = U8(v <= zs)
        if keep_post:
            for w in range(W):
                post[j, w] = total[w]
        if ring.shape[0] > 0:
            for w in range(W):
                keep_history(ring, rrow[w], j, w, total[w])
        for k in range(lo_k, hi_k):  # variable-to-check messages folded into the next check state
            i = var_chks[k]
            s = slot[k]
            t = k - lo_k
            for w in range(W):
                v = _as(total[w] - cbuf[t, w], zs)
                v = min(v, mls)
                v = max(v, _as(-mls, zs))
                neg = U8(v <= zs)
                sgn[k, w] = neg
                pan[i, w] = U8(pan[i, w] ^ neg)
                a = _as(v if v >= zs else _as(-v, zs), zc)
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
def _sweep_int_wn(cur, nxt, sw):
    """:func:`_sweep_int_body` with the lane count read from the arrays (any ``W``)."""
    _sweep_int_body(sw.lanes.unsat.shape[0], cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_int_w32(sw, cur, nxt):
    """:func:`_sweep_int_body` for exactly 32 lanes (a compile-time lane count).

    ``sw`` first, unlike the other sweeps: the parameter order only reorders the flattened arguments (the
    optimised LLVM IR is the same), but with ``(cur, nxt, sw)`` LLVM's register allocator spills other loop
    invariants of the lane loops and the 16-bit kernel (32 lanes) ran slower than with ``4a6167d``'s
    positional arrays; ``(sw, cur, nxt)`` recovered it (a one-off timing, no result file kept). The 64-lane
    sweep keeps ``(cur, nxt, sw)``: no difference measured either way, and ``tests/kernels/test_minsum_lanes_narrow.py``
    compiles it with that signature."""
    _sweep_int_body(32, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_int_w64(cur, nxt, sw):
    """:func:`_sweep_int_body` for exactly 64 lanes."""
    _sweep_int_body(64, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_int_w128(cur, nxt, sw):
    """:func:`_sweep_int_body` for exactly 128 lanes."""
    _sweep_int_body(128, cur, nxt, sw)


@numba.njit(cache=True, nogil=True)
def _step_int(cur, nxt, sw):
    """One iteration from ``cur`` into ``nxt`` (:class:`NarrowCheckState`): the sweep compiled for the lane count."""
    W = sw.lanes.unsat.shape[0]
    if W == 64:
        _sweep_int_w64(cur, nxt, sw)
    elif W == 32:
        _sweep_int_w32(sw, cur, nxt)
    elif W == 128:
        _sweep_int_w128(cur, nxt, sw)
    else:
        _sweep_int_wn(cur, nxt, sw)


@numba.njit(cache=True, nogil=True)
def _load_lane(w, s, state, ld):
    """Load shot ``s`` into lane ``w`` of ``state`` (:class:`NarrowCheckState`): the channel LLRs folded into the
    check state (per-shot priors), or the zero-syndrome template ``ld.tmpl`` (lane 0 of a one-lane state, with
    its ``ld.tsgn``) with the syndrome XORed into the parity (shared priors). ``ld`` (:class:`NarrowLoad`)
    carries the zeros ``zc`` / ``zs`` of the check-state and sum types (uint8 / int16, uint16 / int32,
    float32 / float32): one loader for every narrow format.
    """
    m1, m2, ag, pa = state.min1, state.min2, state.arg, state.par
    per_shot, syndromes, llr0, ml32, tmpl, tsgn = ld.per_shot, ld.syndromes, ld.llr0, ld.ml32, ld.tmpl, ld.tsgn
    var_ptr, var_chks, slot = ld.graph.var_ptr, ld.graph.var_chks, ld.graph.slot
    nil = no_slot(slot)
    syn, pri, sgn = ld.lanes.syn, ld.lanes.pri, ld.lanes.sgn
    zc, zs = ld.zc, ld.zs
    n = var_ptr.shape[0] - 1
    m = syndromes.shape[1]
    if per_shot:
        for i in range(m):
            b = U8(syndromes[s, i] & U1)
            syn[i, w] = b
            m1[i, w] = _as(ml32, zc)
            m2[i, w] = _as(ml32, zc)
            ag[i, w] = nil
            pa[i, w] = b
        for j in range(n):
            lam = llr0[s, j]
            pri[j, w] = _as(lam, zs)
            x = clip(lam, ml32)
            neg = U8(x <= 0)
            a = _as(abs(x), zc)
            for k in range(var_ptr[j], var_ptr[j + 1]):
                i = var_chks[k]
                sgn[k, w] = neg
                pa[i, w] = U8(pa[i, w] ^ neg)
                r = m1[i, w]
                m2[i, w] = min(max(a, r), m2[i, w])
                ag[i, w] = blend_uint(a < r, slot[k], ag[i, w])
                m1[i, w] = min(a, r)
    else:
        tm1, tm2, tag, tpa = tmpl
        for i in range(m):
            b = U8(syndromes[s, i] & U1)
            syn[i, w] = b
            m1[i, w] = tm1[i, 0]
            m2[i, w] = tm2[i, 0]
            ag[i, w] = tag[i, 0]
            pa[i, w] = U8(tpa[i, 0] ^ b)
        for k in range(tsgn.shape[0]):
            sgn[k, w] = tsgn[k, 0]



@numba.njit(cache=True, nogil=True)
def _coeffs_int(w, it, cf):
    """Lane ``w``'s scaling ``(x * num) >> shift`` for iteration ``it`` in ``cf`` (:class:`IntCoeffs`).
    Adaptive: ``1 - 2^-(it+1)`` as ``(2^t - 1) >> t``, ``t`` capped at ``tmax``
    (``(x * (2^t - 1)) >> t == (x * (2^tmax - 1)) >> tmax`` for ``x < 2^(tmax - 1)``, ``t >= tmax``):
    ``tmax = 8`` for 8-bit messages, 16 for 16-bit ones."""
    num, shift, tmax = cf.num, cf.shift, cf.tmax
    if cf.adaptive:
        t = it + 1
        s = t if t < tmax else tmax
        num[w] = I32((1 << s) - 1)
        shift[w] = I32(s)
    else:
        num[w] = I32(cf.alpha_num)
        shift[w] = I32(cf.alpha_shift)


@numba.njit(cache=True, nogil=True)
def _minsum_lanes_int_range(graph, llr0, syndromes, cfg, out, hist_k, W, start, stop, zc, zs, tmax):
    """The fixed-point range kernel in the storage types of ``zc`` (check state) and ``zs`` (sums): ``graph``
    a :class:`NarrowGraph`, ``cfg`` a :class:`~qdecode.kernels.bp_args.MinSumParams`, ``out`` a
    :class:`~qdecode.kernels.bp_args.BpOut`, ``tmax`` the adaptive shift cap (:class:`IntCoeffs`); the others
    as :func:`minsum_lanes_i8_range`'s."""
    n = graph.var_ptr.shape[0] - 1
    maxvdeg = 1
    for j in range(n):
        maxvdeg = max(maxvdeg, graph.var_ptr[j + 1] - graph.var_ptr[j])
    m = syndromes.shape[1]
    nnz = graph.var_chks.shape[0]
    per_shot = llr0.shape[0] > 1
    keep_post = out.post.shape[0] > 0
    ml32 = I32(cfg.msg_lim)
    prm = IntParams(per_shot, keep_post, I32(max(min(np.int64(cfg.beta), 2**30), -(2**30))), ml32,
                    _as(cfg.msg_lim, zs), _as(cfg.msg_lim, zc), _as(cfg.post_lim, zs))
    # lane state, every array separate (the sweep's noalias contract); check state double-buffered
    st_a = NarrowCheckState(np.full((m, W), zc), np.full((m, W), zc), np.zeros((m, W), dtype=graph.slot.dtype),
                            np.zeros((m, W), dtype=np.uint8))
    st_b = NarrowCheckState(np.full((m, W), zc), np.full((m, W), zc), np.zeros((m, W), dtype=graph.slot.dtype),
                            np.zeros((m, W), dtype=np.uint8))
    syn = np.zeros((m, W), dtype=np.uint8)
    sgn = np.zeros((nnz, W), dtype=np.uint8)
    hard = np.zeros((n, W), dtype=np.uint8)
    post = np.full((n if keep_post else 1, W), zs)
    unsat = np.zeros(W, dtype=np.int32)
    ring = history_ring(hist_k, keep_post, n, W, zs)
    rrow = np.zeros(W, dtype=np.int64)
    coef = IntCoeffs(np.zeros(W, dtype=np.int32), np.zeros(W, dtype=np.int32), cfg.adaptive, cfg.alpha_num,
                     cfg.alpha_shift, tmax)
    pri = np.full((n, W if per_shot else 1), zs)
    lanes = NarrowLanes(syn, sgn, pri, hard, post, unsat, ring, rrow)
    # zero-syndrome initial check state of one lane (shared priors): lane 0 of a one-lane state
    tmpl = NarrowCheckState(np.full((m, 1), zc), np.full((m, 1), zc), np.zeros((m, 1), dtype=graph.slot.dtype),
                            np.zeros((m, 1), dtype=np.uint8))
    tsgn = np.zeros((nnz, 1), dtype=np.uint8)
    if not per_shot:
        zsyn = np.zeros((1, m), dtype=np.uint8)
        one = NarrowLanes(np.zeros((m, 1), dtype=np.uint8), tsgn, np.full((n, 1), zs), hard, post, unsat, ring, rrow)
        _load_lane(0, 0, tmpl, NarrowLoad(True, zsyn, graph, llr0, ml32, tmpl, tsgn, one, zc, zs))
        # ``pri``, a local name: written ``lanes.pri[j, 0] = _as(...)`` the stores were lost (numba 0.68, with the
        # inline="always" overload of _as in the loop; the float32 kernel's plain stores are not affected)
        for j in range(n):
            pri[j, 0] = _as(llr0[0, j], zs)
    scratch = NarrowScratch(np.full((m, W), zc), np.full((m, W), zc), np.zeros((m, W), dtype=np.uint8),
                            np.full(W, zs), np.full((maxvdeg, W), zs))
    ld = NarrowLoad(per_shot, syndromes, graph, llr0, ml32, tmpl, tsgn, lanes, zc, zs)
    _run_lanes(st_a, st_b, ld, NarrowSweep(graph, coef, prm, lanes, scratch), cfg.max_iter, start, stop, out)



@numba.njit(cache=True, nogil=True)
def _check_int_inputs(graph, llr0, m, prm, ml_max, sum_max, za):
    """The edge slots (:func:`edge_slots`, the dtype of the zero ``za``) of ``graph``
    (:class:`~qdecode.kernels.bp_args.TannerGraph`) after the checks of a fixed-point kernel on ``llr0`` and ``prm``
    (:class:`~qdecode.kernels.bp_args.MinSumParams`) with message limit ``ml_max`` and sum limit ``sum_max``
    (``ValueError`` on failure)."""
    var_ptr, var_chks = graph.var_ptr, graph.var_chks
    msg_lim, post_lim, alpha_num, alpha_shift = prm.msg_lim, prm.post_lim, prm.alpha_num, prm.alpha_shift
    n = var_ptr.shape[0] - 1
    slot, maxcdeg, maxvdeg = edge_slots(var_ptr, var_chks, m, za)
    if maxcdeg > np.int64(no_slot(slot)):
        raise ValueError("fixed-point lanes kernel: check degree above what the slot type holds (255 uint8, "
                         "65535 uint16)")
    if msg_lim < 1 or msg_lim > ml_max or post_lim < 0 or post_lim > sum_max:
        raise ValueError("fixed-point lanes kernel: msg_lim or post_lim outside the format's range")
    big = 0
    for r in range(llr0.shape[0]):
        for j in range(n):
            big = max(big, abs(np.int64(llr0[r, j])))
    if big + maxvdeg * np.int64(msg_lim) > sum_max:
        raise ValueError("fixed-point lanes kernel: |llr0| + max variable degree * msg_lim exceeds the sum type")
    if not prm.adaptive and (alpha_num < 0 or alpha_num * np.int64(ml_max) >= 2**31 or alpha_shift < 0
                             or alpha_shift > 30):
        raise ValueError("fixed-point lanes kernel: alpha_num * msg_lim must fit int32 and 0 <= alpha_shift <= 30")
    return slot


class IntFormat(NamedTuple):
    """The storage of a fixed-point lanes entry: zeros of its slot, check-state and sum types, and their limits."""

    za: object  # zero of the slot / ``arg`` type (uint8 or uint16)
    zc: object  # zero of the check-state type (uint8 or uint16)
    zs: object  # zero of the sum type (int16 or int32)
    ml_max: int  # the largest msg_lim the check-state type holds
    sum_max: int  # the largest sum the sum type holds
    tmax: int  # the bits of the check-state type


@numba.njit(cache=True, nogil=True)
def _int_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop, fmt):
    """The fixed-point entries, in the storage of :class:`IntFormat` ``fmt``."""
    slot = _check_int_inputs(graph, llr0, syndromes.shape[1], prm, fmt.ml_max, fmt.sum_max, fmt.za)
    _minsum_lanes_int_range(NarrowGraph(graph.var_ptr, graph.var_chks, slot), llr0, syndromes, prm, out, hist_k,
                            lanes, start, stop, fmt.zc, fmt.zs, fmt.tmax)


@numba.njit(cache=True, nogil=True)
def minsum_lanes_i8_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """:func:`qdecode.kernels.minsum_lanes.minsum_lanes_range` for 8-bit fixed point, bit-identical (same arguments).

    Accepts integer ``llr0`` (the reference's int32) with ``1 <= msg_lim <= 127``,
    ``post_lim <= 32767``, ``max|llr0| + (max variable degree) * msg_lim <= 32767``,
    ``alpha_num * 127 < 2^31``, ``0 <= alpha_shift <= 30`` and check degree <= 255 (uint8 slots;
    :func:`minsum_lanes_i8_wide_range` above); raises ``ValueError`` otherwise. Check state uint8, sums int16.
    ``out.post`` (``(S, n)`` or ``(0, n)``) receives int16 values in its own dtype.
    """
    _int_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop,
               IntFormat(U8(0), U8(0), I16(0), 127, 32767, 8))


@numba.njit(cache=True, nogil=True)
def minsum_lanes_i8_wide_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """:func:`minsum_lanes_i8_range` with uint16 slots and ``arg``: check degrees up to 65535."""
    _int_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop,
               IntFormat(U16(0), U8(0), I16(0), 127, 32767, 8))


@numba.njit(cache=True, nogil=True)
def minsum_lanes_i16_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """:func:`qdecode.kernels.minsum_lanes.minsum_lanes_range` for 9- to 16-bit fixed point, bit-identical.

    As :func:`minsum_lanes_i8_range` with ``msg_lim <= 32767`` (uint16 check state) and int32 sums:
    ``post_lim``, ``max|llr0| + (max variable degree) * msg_lim <= 2^31 - 1`` and
    ``alpha_num * 32767 < 2^31``; raises ``ValueError`` otherwise (check degree above 255:
    :func:`minsum_lanes_i16_wide_range`).
    """
    _int_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop,
               IntFormat(U8(0), U16(0), I32(0), 32767, 2**31 - 1, 16))


@numba.njit(cache=True, nogil=True)
def minsum_lanes_i16_wide_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """:func:`minsum_lanes_i16_range` with uint16 slots and ``arg``: check degrees up to 65535."""
    _int_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop,
               IntFormat(U16(0), U16(0), I32(0), 32767, 2**31 - 1, 16))


# ------------------------------------------------------------------ float32


@numba.njit(cache=True, nogil=True, inline="always")
def _sweep_f32_body(W, cur, nxt, sw):
    """One flooding iteration of ``W`` lanes in float32 (check pass in float64 as the reference's
    :func:`~qdecode.kernels.minsum.check_magnitude`): as :func:`_sweep_int_body` with :class:`F32Coeffs` and
    :class:`F32Params`."""
    var_ptr, var_chks, slot = sw.graph.var_ptr, sw.graph.var_chks, sw.graph.slot
    nil = no_slot(slot)
    a_f = sw.coef.a_f
    p = sw.prm
    per_shot, keep_post, beta, msg_lim, post_lim = p.per_shot, p.keep_post, p.beta, p.msg_lim, p.post_lim
    ln = sw.lanes
    syn, sgn, pri, hard = ln.syn, ln.sgn, ln.pri, ln.hard
    post, unsat, ring, rrow = ln.post, ln.unsat, ln.ring, ln.rrow
    o1, o2, hp, total, cbuf = sw.scratch.out1, sw.scratch.out2, sw.scratch.hpar, sw.scratch.total, sw.scratch.cbuf
    m1c, m2c, agc, pac = cur.min1, cur.min2, cur.arg, cur.par
    m1n, m2n, agn, pan = nxt.min1, nxt.min2, nxt.arg, nxt.par
    n = var_ptr.shape[0] - 1
    m = syn.shape[0]
    for i in range(m):
        for w in range(W):
            o1[i, w] = check_magnitude(m1c[i, w], a_f[w], 0, 0, beta, msg_lim)
            o2[i, w] = check_magnitude(m2c[i, w], a_f[w], 0, 0, beta, msg_lim)
            b = syn[i, w]
            m1n[i, w] = msg_lim
            m2n[i, w] = msg_lim
            agn[i, w] = nil
            pan[i, w] = b
            hp[i, w] = b
    for j in range(n):
        lo = var_ptr[j]
        hi = var_ptr[j + 1]
        if per_shot:
            for w in range(W):
                total[w] = pri[j, w]
        else:
            p0 = pri[j, 0]
            for w in range(W):
                total[w] = p0
        for k in range(lo, hi):
            i = var_chks[k]
            s = slot[k]
            t = k - lo
            for w in range(W):
                mag = o2[i, w] if agc[i, w] == s else o1[i, w]
                c = -mag if U8(pac[i, w] ^ sgn[k, w]) else mag
                cbuf[t, w] = c
                total[w] = total[w] + c
        for w in range(W):
            v = clip(total[w], post_lim)
            total[w] = v
            hard[j, w] = U8(v <= F0)
        if keep_post:
            for w in range(W):
                post[j, w] = total[w]
        if ring.shape[0] > 0:
            for w in range(W):
                keep_history(ring, rrow[w], j, w, total[w])
        for k in range(lo, hi):
            i = var_chks[k]
            s = slot[k]
            t = k - lo
            for w in range(W):
                v = clip(total[w] - cbuf[t, w], msg_lim)
                neg = U8(v <= F0)
                sgn[k, w] = neg
                pan[i, w] = U8(pan[i, w] ^ neg)
                r1, r2, ra = fold_min(abs(v), s, m1n[i, w], m2n[i, w], agn[i, w])
                m1n[i, w] = r1
                m2n[i, w] = r2
                agn[i, w] = ra
                hp[i, w] = U8(hp[i, w] ^ hard[j, w])
    for w in range(W):
        unsat[w] = Z32
    for i in range(m):
        for w in range(W):
            unsat[w] = I32(unsat[w] + I32(hp[i, w]))



@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_f32_wn(cur, nxt, sw):
    """:func:`_sweep_f32_body` with the lane count read from the arrays (any ``W``)."""
    _sweep_f32_body(sw.lanes.unsat.shape[0], cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_f32_w32(cur, nxt, sw):
    """:func:`_sweep_f32_body` for exactly 32 lanes."""
    _sweep_f32_body(32, cur, nxt, sw)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _sweep_f32_w64(cur, nxt, sw):
    """:func:`_sweep_f32_body` for exactly 64 lanes."""
    _sweep_f32_body(64, cur, nxt, sw)


@numba.njit(cache=True, nogil=True)
def _step_f32(cur, nxt, sw):
    """One iteration from ``cur`` into ``nxt`` (:class:`NarrowCheckState`): the sweep compiled for the lane count."""
    W = sw.lanes.unsat.shape[0]
    if W == 64:
        _sweep_f32_w64(cur, nxt, sw)
    elif W == 32:
        _sweep_f32_w32(cur, nxt, sw)
    else:
        _sweep_f32_wn(cur, nxt, sw)


@numba.njit(cache=True, nogil=True)
def _coeffs_f32(w, it, cf):
    """Lane ``w``'s scaling for iteration ``it`` in ``cf`` (:class:`F32Coeffs`): ``1 - 2^-(it+1)`` (adaptive)
    or ``alpha``."""
    cf.a_f[w] = 1.0 - 0.5 ** (it + 1) if cf.adaptive else cf.alpha


@numba.njit(cache=True, nogil=True)
def minsum_lanes_f32_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """:func:`qdecode.kernels.minsum_lanes.minsum_lanes_range` for float32 messages, bit-identical (same arguments).

    Accepts float32 ``llr0`` and ``prm.beta``, ``prm.msg_lim``, ``prm.post_lim`` (the reference's float32 path;
    ``alpha`` float64 as there) and check degree <= 255 (uint8 slots; :func:`minsum_lanes_f32_wide_range` above;
    raises ``ValueError`` otherwise). ``alpha_num`` / ``alpha_shift`` are unused (fixed point only).
    """
    _f32_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop, U8(0))


@numba.njit(cache=True, nogil=True)
def minsum_lanes_f32_wide_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop):
    """:func:`minsum_lanes_f32_range` with uint16 slots and ``arg``: check degrees up to 65535."""
    _f32_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop, U16(0))


@numba.njit(cache=True, nogil=True)
def _f32_range(graph, llr0, syndromes, prm, out, hist_k, lanes, start, stop, za):
    """The float32 entries: slots of the dtype of ``za``."""
    var_ptr, var_chks = graph.var_ptr, graph.var_chks
    max_iter, alpha, adaptive = prm.max_iter, prm.alpha, prm.adaptive
    beta, msg_lim, post_lim = prm.beta, prm.msg_lim, prm.post_lim
    n = var_ptr.shape[0] - 1
    m = syndromes.shape[1]
    nnz = var_chks.shape[0]
    W = lanes
    dt = llr0.dtype
    per_shot = llr0.shape[0] > 1
    keep_post = out.post.shape[0] > 0
    slot, maxcdeg, maxvdeg = edge_slots(var_ptr, var_chks, m, za)
    if maxcdeg > np.int64(no_slot(slot)):
        raise ValueError("minsum_lanes_f32_range: check degree above what the slot type holds (255 uint8, "
                         "65535 uint16)")
    graph = NarrowGraph(var_ptr, var_chks, slot)
    st_a = NarrowCheckState(np.zeros((m, W), dtype=dt), np.zeros((m, W), dtype=dt),
                            np.zeros((m, W), dtype=slot.dtype), np.zeros((m, W), dtype=np.uint8))
    st_b = NarrowCheckState(np.zeros((m, W), dtype=dt), np.zeros((m, W), dtype=dt),
                            np.zeros((m, W), dtype=slot.dtype), np.zeros((m, W), dtype=np.uint8))
    ln = NarrowLanes(syn=np.zeros((m, W), dtype=np.uint8), sgn=np.zeros((nnz, W), dtype=np.uint8),
                     pri=np.zeros((n, W if per_shot else 1), dtype=dt), hard=np.zeros((n, W), dtype=np.uint8),
                     post=np.zeros((n if keep_post else 1, W), dtype=dt), unsat=np.zeros(W, dtype=np.int32),
                     ring=history_ring(hist_k, keep_post, n, W, np.zeros(1, dtype=dt)[0]),
                     rrow=np.zeros(W, dtype=np.int64))
    scratch = NarrowScratch(np.zeros((m, W), dtype=dt), np.zeros((m, W), dtype=dt), np.zeros((m, W), dtype=np.uint8),
                            np.zeros(W, dtype=dt), np.zeros((maxvdeg, W), dtype=dt))
    tmpl = NarrowCheckState(np.zeros((m, 1), dtype=dt), np.zeros((m, 1), dtype=dt),
                            np.zeros((m, 1), dtype=slot.dtype), np.zeros((m, 1), dtype=np.uint8))
    tsgn = np.zeros((nnz, 1), dtype=np.uint8)
    if not per_shot:
        one = NarrowLanes(np.zeros((m, 1), dtype=np.uint8), tsgn, np.zeros((n, 1), dtype=dt), ln.hard, ln.post,
                          ln.unsat, ln.ring, ln.rrow)
        _load_lane(0, 0, tmpl, NarrowLoad(True, np.zeros((1, m), dtype=np.uint8), graph, llr0, msg_lim, tmpl, tsgn,
                                          one, F0, F0))
        pri = ln.pri  # a local name, as in the fixed-point kernel: written ``ln.pri[j, 0] = ...`` the stores were
        for j in range(n):  # lost in the uint16-slot kernel (numba 0.68)
            pri[j, 0] = llr0[0, j]
    ld = NarrowLoad(per_shot, syndromes, graph, llr0, msg_lim, tmpl, tsgn, ln, F0, F0)
    sw = NarrowSweep(graph, F32Coeffs(np.zeros(W, dtype=np.float64), adaptive, alpha),
                     F32Params(per_shot, keep_post, beta, msg_lim, post_lim), ln, scratch)
    _run_lanes(st_a, st_b, ld, sw, max_iter, start, stop, out)


def narrow_kernel(llr0, var_ptr, chk_ptr, msg_lim, post_lim, alpha_num, alpha_shift, adaptive):
    """The narrow range kernel that accepts these inputs, or ``None`` (then use the reference).

    ``llr0``: the quantised priors ``(1, n)`` or ``(S, n)`` in the message dtype; ``var_ptr`` /
    ``chk_ptr`` the Tanner graph's index pointers. int32 messages go to
    :func:`minsum_lanes_i8_range` when they fit its uint8 state and int16 sums, else to
    :func:`minsum_lanes_i16_range` when they fit its uint16 state and int32 sums, float32 ones to
    :func:`minsum_lanes_f32_range`; float64 has no narrow kernel. A graph with a check of degree
    above 255 gets the ``*_wide_range`` kernel of the format (uint16 slots), none above 65535. The
    conditions are the ones the kernels check (and raise on).
    """
    max_cdeg = int(np.diff(chk_ptr).max()) if len(chk_ptr) > 1 else 0
    if max_cdeg > MAX_SLOTS_U16:
        return None
    wide = max_cdeg > MAX_SLOTS_U8
    if llr0.dtype == np.float32:
        return minsum_lanes_f32_wide_range if wide else minsum_lanes_f32_range
    if llr0.dtype != np.int32:
        return None
    max_vdeg = int(np.diff(var_ptr).max()) if len(var_ptr) > 1 else 0
    big = int(np.abs(llr0.astype(np.int64)).max(initial=0)) + max_vdeg * int(msg_lim)
    for kernel, ml_max, sum_max in ((minsum_lanes_i8_range, 127, 32767), (minsum_lanes_i16_range, 32767, 2**31 - 1)):
        if not (1 <= msg_lim <= ml_max and 0 <= post_lim <= sum_max) or big > sum_max:
            continue
        if not adaptive and not (0 <= alpha_num and alpha_num * ml_max < 2**31 and 0 <= alpha_shift <= 30):
            continue
        return _WIDE[kernel] if wide else kernel
    return None


#: each fixed-point kernel's twin with uint16 slots
_WIDE = {minsum_lanes_i8_range: minsum_lanes_i8_wide_range, minsum_lanes_i16_range: minsum_lanes_i16_wide_range}


def narrow_lanes(kernel) -> int:
    """The lane count a batch path passes to the narrow range ``kernel`` (a compiled sweep width)."""
    return NARROW16_LANES if kernel in (minsum_lanes_i16_range, minsum_lanes_i16_wide_range) else NARROW_LANES


# ------------------------------------------------------------------ format dispatch of the lane driver


def _step(cur, nxt, sw):
    """One iteration (:func:`_step_int` for integer check state, else :func:`_step_f32`). The Python body is
    the reference, choosing by the check state's dtype; jitted code runs :func:`_step_for`."""
    if np.issubdtype(cur.min1.dtype, np.integer):
        return _step_int(cur, nxt, sw)
    return _step_f32(cur, nxt, sw)


def _coeffs(w, it, cf):
    """A lane's check scaling (:func:`_coeffs_int` for :class:`IntCoeffs`, else :func:`_coeffs_f32`). The Python
    body is the reference; jitted code runs :func:`_coeffs_for`."""
    if isinstance(cf, IntCoeffs):
        return _coeffs_int(w, it, cf)
    return _coeffs_f32(w, it, cf)


def _format_impl(fixed, f32, is_fixed):
    """numba overload body: the fixed-point implementation when ``is_fixed`` (the type test on the
    arguments), else the float32 one. Resolved while typing, so the driver's compiled code calls it directly
    (and stays cacheable, unlike a function passed as an argument)."""
    return fixed if is_fixed else f32


@overload(_step)
def _step_for(cur, nxt, sw):
    return _format_impl(lambda cur, nxt, sw: _step_int(cur, nxt, sw),
                        lambda cur, nxt, sw: _step_f32(cur, nxt, sw), isinstance(cur[0].dtype, types.Integer))


@overload(_coeffs)
def _coeffs_for(w, it, cf):
    return _format_impl(lambda w, it, cf: _coeffs_int(w, it, cf),
                        lambda w, it, cf: _coeffs_f32(w, it, cf), getattr(cf, "instance_class", None) is IntCoeffs)
