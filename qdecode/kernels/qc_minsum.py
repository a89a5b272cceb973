"""Min-sum decoding of quasi-cyclic LDPC codes on lanes of frames: layered and flooding, 8- and 16-bit.

A quasi-cyclic (QC) code is a base matrix of ``rows x cols`` blocks, each block empty or the ``Z x Z``
identity shifted cyclically by ``s``: check ``z`` of base row ``i`` reads variable ``(z + s) mod Z`` of base
column ``j`` (5G NR's base graphs, TS 38.212 §5.3.2, lifted by ``Z``). :class:`QcGraph` keeps the base
matrix's non-empty blocks (the base *edges*) row by row; the kernels walk them directly, so the Tanner graph
of ``rows * Z`` checks is never stored, and the ``Z`` checks of one base row, which share no variable, form
one *layer*.

Lanes: one codeword (frame) per lane, ``W`` frames side by side (AFF3CT's inter-frame SIMD): posteriors
``post[v, w]`` and check-to-variable messages ``msg[e * Z + z, w]`` in the storage type (int8 with ``W = 64``,
int16 with ``W = 32``: one 512-bit vector per row), so every operation of the check and variable updates is
one vector instruction over ``W`` frames. Check-to-variable messages saturate at ``msg_lim``, variable-to-check
messages at ``lim - msg_lim``, so that a layered posterior ``q + msg`` stays within ``lim`` without saturating:
where the posterior itself is clipped, the next iteration's ``q = post - msg`` is no longer the extrinsic value,
and with 8-bit messages at ``msg_lim = 63`` (``lim = 127``) the layered decoder of a 5G NR code first
converged and then diverged within 10 iterations on most frames at 2.25 dB. Flooding posteriors accumulate
with saturation at ``lim``. Saturating adds and subtracts are ``llvm.sadd.sat`` / ``llvm.ssub.sat``
(:func:`qdecode.kernels.arith.sat_add`), clamped so that ``|x|`` never overflows.

Check update of check ``c`` with incoming variable-to-check messages ``q_e = clip(post[v_e] - msg_e,
+-(lim - msg_lim))``:

    m1, m2 = the smallest and second-smallest of min(|q_e|, msg_lim),  e* = the first edge with |q_e| < msg_lim
             and |q_e| = m1 (none: every |q_e| >= msg_lim, and o(m1) = o(m2) then)
    offset min-sum (OMS):      o(m) = max(m - beta, 0)
    normalised min-sum (NMS):  o(m) = (m * num) >> shift          (alpha = num / 2^shift)
    msg_e <- sign(prod_{e'} q_e') sign(q_e) o(m2 if e == e* else m1)          (sign(0) = +)

Layered schedule (horizontal layers): for each layer, for each of its checks, the update above, then
``post[v_e] <- q_e + msg_e``: later layers read the posteriors earlier layers wrote in the same
iteration. Flooding schedule: every ``q_e`` reads the posteriors of the previous iteration (``prev``), and
``post`` restarts from the channel LLRs and accumulates the new messages (saturating at each add).

Hard decision ``post <= 0 -> 1``. Early stop (``params.early_stop``): after each iteration the syndrome of each
lane's hard decisions is computed; a lane whose syndrome is zero has its decisions written out then (its
iteration count is that iteration); the group of ``W`` frames stops when every lane has. Without early stop
every frame runs ``max_iter`` iterations and ``converged`` reports the final syndrome.

Work per iteration: two passes over the ``nnz * Z`` edges of the lifted graph, each one vector load (and in the
second pass a store) of ``post`` and ``msg`` per edge; ``benchmarks/nr5g_speed.py`` measures ns per
edge-iteration.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.arith import as_type_of, sat_add, sat_sub
from qdecode.kernels.minsum_lanes_narrow import NoAliasCompiler

#: lanes (frames per group) of the int8 kernels: 64 int8 = one 512-bit vector
LANES_I8 = 64
#: lanes of the int16 kernels: 32 int16 = one 512-bit vector
LANES_I16 = 32
#: checks of one layer updated together: they share each base edge's index work, and their decisions are those of
#: one check at a time (the checks of a layer share no variable). 2 was faster than 1 on BG1 Z = 288 in an ad hoc
#: interleaved timing (no result file), 4 no faster, 8 slower.
CHECKS_PER_STEP = 2

U8 = np.uint8
U64 = np.uint64
I32 = np.int32


class QcGraph(NamedTuple):
    """A QC-LDPC code's base matrix, its non-empty blocks (base edges) grouped by base row.

    ``layer_ptr[i]:layer_ptr[i + 1]`` are the base edges of base row ``i``; edge ``e`` is the block in base
    column ``edge_col[e]`` with cyclic shift ``edge_shift[e]`` (``0 <= shift < Z``). Lifted variable
    ``j * Z + t`` is bit ``t`` of base column ``j``.
    """

    layer_ptr: np.ndarray  # (rows + 1,) int64
    edge_col: np.ndarray  # (nnz,) int64: base column of each base edge
    edge_shift: np.ndarray  # (nnz,) int64: cyclic shift in [0, Z)
    z: int  # lifting size Z


class QcParams(NamedTuple):
    """Decoder settings; ``beta`` and ``lim`` are scalars of the storage type (int8 or int16)."""

    max_iter: int  # iterations (>= 1)
    flooding: bool  # False: layered schedule
    normalized: bool  # True: NMS o(m) = (m * num) >> shift; False: OMS o(m) = max(m - beta, 0)
    beta: object  # OMS offset in quantisation steps (storage-type scalar)
    num: int  # NMS numerator
    shift: int  # NMS shift
    lim: object  # saturation of posteriors and of variable-to-check messages, |x| <= lim (storage type, <= type max)
    msg_lim: object  # saturation of check-to-variable messages, |msg| <= msg_lim < lim (storage-type scalar)
    early_stop: bool  # stop a frame at its first zero syndrome


class QcOut(NamedTuple):
    """Per-frame outputs (``S`` frames; a range kernel writes rows ``start:stop``)."""

    bits: np.ndarray  # (S, n) uint8 hard decisions, n = cols * Z
    iterations: np.ndarray  # (S,) int32 iterations run (the first with a zero syndrome under early stop)
    converged: np.ndarray  # (S,) bool: zero syndrome


class QcLanes(NamedTuple):
    """One group's state: ``n`` lifted variables, ``nnz * Z`` lifted edges, ``W`` lanes (storage type ``T``)."""

    llr: np.ndarray  # (n, W) T: quantised channel LLRs
    post: np.ndarray  # (n, W) T: posteriors
    prev: np.ndarray  # (n, W) T: the previous iteration's posteriors (flooding only; (0, W) otherwise)
    msg: np.ndarray  # (nnz * Z, W) T: check-to-variable messages
    q: np.ndarray  # (max row degree, P W) T: the variable-to-check messages of P = CHECKS_PER_STEP checks
    m1: np.ndarray  # (P W,) T: smallest |q|, then its corrected magnitude
    m2: np.ndarray  # (P W,) T: second smallest |q|, then its corrected magnitude
    arg: np.ndarray  # (P W,) uint8: the edge slot of m1
    par: np.ndarray  # (P W,) uint8: sign parity of the check's q (the syndrome pass uses its first W)
    unsat: np.ndarray  # (W,) uint8: 1 if some check of the lane is unsatisfied
    done: np.ndarray  # (W,) uint8: 1 once the lane's result is written


def qc_graph(shifts: np.ndarray, z: int) -> QcGraph:
    """:class:`QcGraph` of a base matrix ``shifts`` (int, ``(rows, cols)``, ``-1`` = empty block, else the
    shift, taken mod ``z``)."""
    shifts = np.asarray(shifts, dtype=np.int64)
    rows, cols = np.nonzero(shifts >= 0)  # row-major: edges grouped by base row, columns ascending
    layer_ptr = np.zeros(shifts.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shifts.shape[0]), out=layer_ptr[1:])
    return QcGraph(layer_ptr, cols.astype(np.int64), (shifts[rows, cols] % z).astype(np.int64), int(z))


@numba.njit(cache=True, nogil=True, inline="always")
def _lifted(g, e, z):
    """Lifted variable (uint64) read by check ``z`` of base edge ``e``: ``col * Z + (z + shift) mod Z``."""
    t = U64(z) + U64(g.edge_shift[e])
    if t >= U64(g.z):
        t -= U64(g.z)
    return U64(g.edge_col[e]) * U64(g.z) + t


@numba.njit(cache=True, nogil=True, inline="always")
def _next_lifted(v, lo, z):
    """The lifted variable that the next check of the layer reads on the same base edge: ``v + 1``, wrapping from
    the end of its base column (``lo = col * Z``) to its start."""
    v += U64(1)
    return lo if v == lo + U64(z) else v


@numba.njit(cache=True, nogil=True, inline="always")
def _check_update(W, g, prm, st, read, e0, e1, z, c):
    """Pass 1 of checks ``z .. z + c - 1`` (``c <= CHECKS_PER_STEP``) of the layer with base edges ``e0:e1``:
    ``q = clip(read - msg)`` into ``st.q``, and per check the corrected magnitudes ``o(m1)``, ``o(m2)``, ``arg`` and
    sign parity ``par`` (module docstring); check ``z + p`` uses lanes ``p W .. p W + W - 1`` of the scratch.

    The ``c`` checks share each base edge's index work (they read consecutive rows). Indices are uint64 (lane
    loops over ``range(uint64)``): numba then emits no negative-index wraparound, and the arrays are indexed in
    place (a row view would cost a reference-count increment and decrement)."""
    lim = prm.lim
    qlim = as_type_of(lim - prm.msg_lim, lim)
    nqlim = as_type_of(-qlim, lim)
    zero = as_type_of(0, lim)
    m1, m2, arg, par, q, msg = st.m1, st.m2, st.arg, st.par, st.q, st.msg
    cw = U64(c) * U64(W)
    for w in range(cw):
        m1[w] = prm.msg_lim  # magnitudes start at the message limit: min(|q|, msg_lim) for free
        m2[w] = prm.msg_lim
        arg[w] = U8(0)
        par[w] = U8(0)
    for t in range(U64(e1 - e0)):
        e = U64(e0) + t
        lo = U64(g.edge_col[e]) * U64(g.z)
        v = _lifted(g, e, z)
        r = e * U64(g.z) + z
        slot = U8(t)
        for p in range(U64(c)):
            for w in range(U64(W)):
                k = p * U64(W) + w
                x = min(max(sat_sub(read[v, w], msg[r, w]), nqlim), qlim)
                q[t, k] = x
                par[k] = U8(par[k] ^ U8(x < zero))
                a = as_type_of(x if x >= zero else -x, x)
                mm = m1[k]
                m2[k] = min(m2[k], max(a, mm))
                mask = U8(U8(0) - U8(a < mm))  # a bit blend, not a conditional store: keeps the loop vectorised
                arg[k] = U8(U8(slot & mask) | U8(arg[k] & U8(~mask)))
                m1[k] = min(a, mm)
            v = _next_lifted(v, lo, g.z)
            r += U64(1)
    if prm.normalized:
        for w in range(cw):
            m1[w] = as_type_of((I32(m1[w]) * prm.num) >> prm.shift, lim)
            m2[w] = as_type_of((I32(m2[w]) * prm.num) >> prm.shift, lim)
    else:
        for w in range(cw):
            m1[w] = max(as_type_of(m1[w] - prm.beta, lim), zero)
            m2[w] = max(as_type_of(m2[w] - prm.beta, lim), zero)


@numba.njit(cache=True, nogil=True, inline="always")
def _check_write(W, g, prm, st, write, e0, e1, z, c):
    """Pass 2 of checks ``z .. z + c - 1``: the new messages ``msg_e`` and ``write[v_e] <- base_e + msg_e`` with
    ``base_e`` = ``q_e`` (layered) or ``write[v_e]`` itself, saturating (flooding accumulates onto the channel LLRs)."""
    nlim = as_type_of(-prm.lim, prm.lim)
    m1, m2, arg, par, q, msg = st.m1, st.m2, st.arg, st.par, st.q, st.msg
    for t in range(U64(e1 - e0)):
        e = U64(e0) + t
        lo = U64(g.edge_col[e]) * U64(g.z)
        v = _lifted(g, e, z)
        r = e * U64(g.z) + z
        slot = U8(t)
        for p in range(U64(c)):
            if prm.flooding:  # branches outside the lane loops: each loop stays one straight vector body
                for w in range(U64(W)):
                    k = p * U64(W) + w
                    rn = _outgoing(q[t, k], m1[k], m2[k], arg[k], par[k], slot)
                    msg[r, w] = rn
                    write[v, w] = max(sat_add(write[v, w], rn), nlim)
            else:
                for w in range(U64(W)):
                    k = p * U64(W) + w
                    x = q[t, k]
                    rn = _outgoing(x, m1[k], m2[k], arg[k], par[k], slot)
                    msg[r, w] = rn
                    write[v, w] = x + rn  # |x| <= lim - msg_lim: no overflow, no saturation
            v = _next_lifted(v, lo, g.z)
            r += U64(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _outgoing(x, o1, o2, arg, par, slot):
    """The new message on the edge in ``slot`` with incoming ``x``: magnitude ``o2`` on the edge of the minimum
    (``arg``), else ``o1``; negative where ``par`` (the check's sign parity) and ``x``'s sign differ. Bit blends,
    not selects, so that the lane loop vectorises."""
    mask = as_type_of(-as_type_of(arg == slot, o1), o1)
    mag = as_type_of(o1 ^ as_type_of((o1 ^ o2) & mask, o1), o1)
    neg = as_type_of(-as_type_of(U8(par ^ U8(x < 0)), o1), o1)
    return as_type_of(as_type_of(mag ^ neg, o1) - neg, o1)


@numba.njit(cache=True, nogil=True, inline="always")
def _iteration(W, g, prm, st):
    """One iteration over every layer (module docstring: layered or flooding)."""
    if prm.flooding:
        st.prev[:] = st.post
        st.post[:] = st.llr
        read = st.prev
    else:
        read = st.post
    for i in range(g.layer_ptr.shape[0] - 1):
        e0 = g.layer_ptr[i]
        e1 = g.layer_ptr[i + 1]
        full = U64(g.z) - U64(g.z) % U64(CHECKS_PER_STEP)
        for z in range(U64(0), full, U64(CHECKS_PER_STEP)):  # checks of a layer share no variable
            _check_update(W, g, prm, st, read, e0, e1, z, CHECKS_PER_STEP)  # a constant count: unrolled
            _check_write(W, g, prm, st, st.post, e0, e1, z, CHECKS_PER_STEP)
        for z in range(full, U64(g.z)):
            _check_update(W, g, prm, st, read, e0, e1, z, 1)
            _check_write(W, g, prm, st, st.post, e0, e1, z, 1)


@numba.njit(cache=True, nogil=True, inline="always")
def _syndrome(W, g, st):
    """``st.unsat[w] = 1`` where lane ``w``'s hard decisions (``post <= 0 -> 1``) violate a check."""
    par, unsat, post = st.par, st.unsat, st.post
    zero = as_type_of(0, post[0, 0])
    for w in range(U64(W)):
        unsat[w] = U8(0)
    for i in range(g.layer_ptr.shape[0] - 1):
        for z in range(U64(g.z)):
            for w in range(U64(W)):
                par[w] = U8(0)
            for e in range(U64(g.layer_ptr[i]), U64(g.layer_ptr[i + 1])):
                v = _lifted(g, e, z)
                for w in range(U64(W)):
                    par[w] = U8(par[w] ^ U8(post[v, w] <= zero))
            for w in range(U64(W)):
                unsat[w] = U8(unsat[w] | par[w])


@numba.njit(cache=True, nogil=True)
def _write_lane(st, w, s, it, ok, out):
    """Frame ``s`` (lane ``w``) done after ``it`` iterations: hard decisions and flags into ``out``."""
    n = st.post.shape[0]
    zero = as_type_of(0, st.post[0, 0])
    for v in range(n):
        out.bits[s, v] = U8(st.post[v, w] <= zero)
    out.iterations[s] = I32(it)
    out.converged[s] = ok
    st.done[w] = U8(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _decode_group(W, g, prm, st, llr_q, first, count, out):
    """Decode frames ``first:first + count`` (``count <= W``; unused lanes decode zeros) into ``out``."""
    n = st.post.shape[0]
    for v in range(n):
        for w in range(W):
            st.llr[v, w] = llr_q[first + w, v] if w < count else as_type_of(0, llr_q[first, v])
    st.post[:] = st.llr
    st.msg[:] = 0
    for w in range(W):
        st.done[w] = U8(0) if w < count else U8(1)
    it = 0
    while it < prm.max_iter:
        _iteration(W, g, prm, st)
        it += 1
        if prm.early_stop:
            _syndrome(W, g, st)
            left = 0
            for w in range(count):
                if st.done[w] == 0:
                    if st.unsat[w] == 0:
                        _write_lane(st, w, first + w, it, True, out)
                    else:
                        left += 1
            if left == 0:
                return
    _syndrome(W, g, st)
    zero = as_type_of(0, st.post[0, 0])
    for v in range(n):  # the lanes still running, in one pass over the posteriors (a lane at a time would stride)
        for w in range(count):
            if st.done[w] == 0:
                out.bits[first + w, v] = U8(st.post[v, w] <= zero)
    for w in range(count):
        if st.done[w] == 0:
            out.iterations[first + w] = I32(it)
            out.converged[first + w] = st.unsat[w] == 0


@numba.njit(cache=True, nogil=True)
def quantize_frames(llr, cols, fill_lo, fill_hi, scale, chan_lim, lim, out):
    """Rate recovery and quantisation in one pass: ``out[s, v]`` (int8 / int16 ``(S, n)``) = ``clip(rint(scale *
    sum_{e: cols[e] = v} llr[s, e]), +-chan_lim)`` for the mother columns ``v`` a transmitted bit carries (``cols``
    ``(E,)`` int64; repeated bits add), 0 for the others, ``lim`` for the filler columns ``fill_lo:fill_hi``.
    ``llr``: float64 ``(S, E)``."""
    S, n = out.shape
    acc = np.zeros(n)
    for s in range(S):
        acc[:] = 0.0
        for e in range(cols.shape[0]):
            acc[cols[e]] += llr[s, e]
        for v in range(n):
            out[s, v] = min(max(np.rint(acc[v] * scale), -chan_lim), chan_lim)
        for v in range(fill_lo, fill_hi):
            out[s, v] = lim


def lane_state(g: QcGraph, params: QcParams, n: int, lanes: int, dtype) -> QcLanes:
    """Allocate one group's :class:`QcLanes` (each array on its own: the sweeps run with LLVM ``noalias``)."""
    nnz = g.edge_col.shape[0]
    deg = int(np.max(np.diff(g.layer_ptr))) if nnz else 1
    return QcLanes(
        llr=np.zeros((n, lanes), dtype), post=np.zeros((n, lanes), dtype),
        prev=np.zeros((n if params.flooding else 0, lanes), dtype), msg=np.zeros((nnz * g.z, lanes), dtype),
        q=np.zeros((deg, CHECKS_PER_STEP * lanes), dtype), m1=np.zeros(CHECKS_PER_STEP * lanes, dtype),
        m2=np.zeros(CHECKS_PER_STEP * lanes, dtype), arg=np.zeros(CHECKS_PER_STEP * lanes, np.uint8),
        par=np.zeros(CHECKS_PER_STEP * lanes, np.uint8), unsat=np.zeros(lanes, np.uint8),
        done=np.zeros(lanes, np.uint8))


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _groups_w64(g, prm, st, llr_q, out, start, stop):
    for first in range(start, stop, 64):
        _decode_group(64, g, prm, st, llr_q, first, min(64, stop - first), out)


@numba.njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)
def _groups_w32(g, prm, st, llr_q, out, start, stop):
    for first in range(start, stop, 32):
        _decode_group(32, g, prm, st, llr_q, first, min(32, stop - first), out)


def qc_minsum_range(g: QcGraph, params: QcParams, llr_q: np.ndarray, out: QcOut, start: int, stop: int) -> None:
    """Decode frames ``start:stop`` of the quantised LLRs ``llr_q`` (``(S, cols * Z)`` int8 or int16, positive =
    bit 0, ``|llr| <= params.lim``) into ``out``'s rows ``start:stop``; int8 on 64 lanes, int16 on 32.

    ``params.beta`` and ``params.lim`` must have ``llr_q``'s dtype. A range kernel for
    :func:`qdecode.kernels.threads.run_ranges` (it allocates its own lane state and releases the GIL).
    """
    if llr_q.dtype == np.int8:
        lanes, run = LANES_I8, _groups_w64
    elif llr_q.dtype == np.int16:
        lanes, run = LANES_I16, _groups_w32
    else:
        raise TypeError(f"qc_minsum_range takes int8 or int16 LLRs, got {llr_q.dtype}")
    st = lane_state(g, params, llr_q.shape[1], lanes, llr_q.dtype)
    run(g, params, st, llr_q, out, start, stop)
