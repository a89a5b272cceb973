"""Successive-cancellation (SC) and SC-list (SCL) decoding of polar and PAC codes.

Conventions (shared with :mod:`qdecode.codes.polar`): ``x = u G_N`` with
``G_N = F^{(x)m}``, ``F = [[1, 0], [1, 1]]``, natural order; ``u_i = sum_j c_j v_{i-j}``
(``c = (1,)`` for plain polar codes); channel LLRs positive = bit 0.

SC (Arikan), natural leaf order. A node of size ``2h`` with LLRs ``a = (a_L, a_R)`` gives
its left child ``f(a_L, a_R)`` and, once the left child's re-encoded bits ``b`` are known,
its right child ``g(a_L, a_R, b) = a_R + (1 - 2b) a_L``; its own bits are ``(b xor b', b')``.

* min-sum (``exact = False``): ``f = sign(a) sign(b) min(|a|, |b|)``;
* exact (``exact = True``): ``f = 2 atanh(tanh(a/2) tanh(b/2))``, evaluated as
  ``sign(a) sign(b) max(0, min + log1p(e^-(|a|+|b|)) - log1p(e^-||a|-|b||))`` (no overflow).

Hard decisions use the IEEE sign bit (``hard(x) = 1`` iff ``x < 0`` or ``x = -0.0``) and
``f`` takes its sign as ``signbit(a) xor signbit(b)``: with this rule the re-encoded bits of
a node whose leaves are all information bits equal the hard decisions of its LLRs even
when some LLRs are zero, so the rate-1 shortcut below is exact. (For nonzero LLRs this is
the project-wide ``llr <= 0 -> 1``.)

Leaf ``i`` (LLR ``l_i``) with the path's convolution state (the last ``M`` bits of ``v``)
and ``f_i = sum_{j>=1} c_j v_{i-j}``: frozen -> ``v_i = 0``, ``u_i = f_i``; information ->
``u_i = hard(l_i)`` (SC) or both values (SCL), ``v_i = u_i xor f_i``.

Schedules. :func:`build_schedule` flattens the SC recursion for a frozen set into rows
``(op, s, lo, dest)``: ``F`` / ``G`` (LLRs of level ``s-1`` from level ``s``), ``COMB``
(re-encode a node of level ``s``), leaves ``FROZEN`` / ``INFO``, and whole-node shortcuts
with the same decisions as the leaf-by-leaf recursion: ``RATE0`` (all leaves frozen: the
bits are known, no LLRs needed; SCL adds the node's metric) and, for SC only, ``RATE1``
(all leaves information: the node's bits are the hard decisions of its LLRs; Alamdar-Yazdi
& Kschischang 2011). The two leaves of a size-2 node are fused with their parent's
``F``/``G``/``COMB``: the left leaf (``s = 1``) computes its LLR as ``f`` of the pair's
two LLRs, the right leaf (``s = 2``) as ``g`` and writes the pair's two bits. ``dest`` says
where a node's bits go: the parked left child ``bl`` (0) or the right child ``br`` (1) of
its parent; the root is "left".

SCL (Tal-Vardy, LLR form of Balatsoukas-Stimming et al.): at most ``L`` paths with metric
``PM``; each leaf adds ``|l_i| [u_i != hard(l_i)]`` (min-sum mode) or
``log(1 + exp(-(1 - 2u_i) l_i))`` (exact mode); a rate-0 node adds the same sums over its
own LLRs and known bits, which equals the sum of its leaves' increments. Information
leaves fork every path and keep the ``L`` smallest metrics (stable: on equal metric the
candidate agreeing with ``hard(l_i)`` wins, then the earlier path in list order), so
``L = 1`` is SC bit for bit. In min-sum mode ``f`` is the max-log boxplus and ``g`` is exact,
so ``l_i`` is the max-log LLR of ``u_i`` given the path's prefix; the increments telescope
and a complete path's metric is the correlation discrepancy of its codeword,
``sum_{j: x_j != hard(y_j)} |y_j|`` (exact mode: plus the constant
``sum_j log1p(e^-|y_j|)``). Hence SCL with ``L >= 2^K`` is exact ML decoding. With a CRC the
output is the best-metric path whose CRC holds (or the best path, flagged, when none does).

Memory. Level ``s`` of a node-size-``2^s`` array lives at rows ``[2^s, 2^(s+1))`` of a
``2N``-row array (level ``m`` = the channel / the codeword). The SC kernel decodes
``lanes`` blocks side by side (a trailing lane axis; every block follows the same
schedule, so the inner loops over lanes vectorise). SCL keeps, per level, a pool of ``L``
rows for the LLRs and for the parked left-child bits, and per path one pointer per level
(Tal-Vardy lazy copy): a fork copies pointers only, and a write to a shared row first takes
a free one. Every write overwrites a whole level, so rows are never copied. A right child's
bits are consumed by its parent's re-encoding with no fork in between, so they live in plain
per-path rows. Information decisions are kept as a trellis (``v`` bit and parent path per
information bit) and traced back at the end.

All kernels are ``@numba.njit(cache=True, nogil=True)``; ``*_range`` kernels decode blocks
``start:stop`` with scratch allocated once per call (run ranges on threads with
:func:`qdecode.kernels.threads.run_ranges`). Speed notes (measured): hot loops index
arrays directly rather than passing them to helpers, since each array argument of a call
costs atomic reference-count updates (several times the arithmetic here); offsets inside
a level are unsigned, so numba emits no negative-index fix-ups (about 20% on SCL).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.gf2 import popcount64
from qdecode.kernels.sort import stable_argsort_prefix

__all__ = [
    "OP_F",
    "OP_G",
    "OP_FROZEN",
    "OP_COMB",
    "OP_RATE0",
    "OP_RATE1",
    "OP_INFO",
    "build_schedule",
    "sc_decode_range",
    "SclCode",
    "SclOut",
    "scl_decode_range",
]

OP_F = 0
OP_G = 1
OP_FROZEN = 2
OP_COMB = 3
OP_RATE0 = 4
OP_RATE1 = 5
OP_INFO = 6

_ONE = np.uint64(1)


def build_schedule(frozen: np.ndarray, rate1: bool) -> np.ndarray:
    """Flatten the SC recursion for a frozen mask into int32 ``(ops, 4)`` rows ``(op, s, lo, dest)``.

    Args:
        frozen: ``(N,)`` 0/1, 1 = frozen leaf; ``N >= 2`` a power of two.
        rate1: emit ``RATE1`` shortcuts (SC only; SCL must fork leaf by leaf).

    ``RATE0`` covers every all-frozen node. ``F``/``G``/``COMB`` carry the level ``s >= 2``
    of the parent node; ``RATE0``/``RATE1`` the node's level; leaves (``FROZEN``/``INFO``)
    ``s = 1`` (left leaf of a pair: LLR ``f`` of the pair) or ``s = 2`` (right leaf: LLR
    ``g``, then it writes the pair's bits to ``dest``), with ``lo`` = the leaf index.
    """
    fr = np.asarray(frozen).astype(bool)
    N = fr.size
    m = N.bit_length() - 1
    if N < 2 or N != 1 << m:
        raise ValueError(f"frozen mask length must be a power of two >= 2, got {N}")
    ops: list[tuple[int, int, int, int]] = []

    def leaf(i: int) -> int:
        return OP_FROZEN if fr[i] else OP_INFO

    def visit(s: int, lo: int, dest: int) -> None:
        size = 1 << s
        seg = fr[lo : lo + size]
        if seg.all():
            ops.append((OP_RATE0, s, lo, dest))
        elif rate1 and not seg.any():
            ops.append((OP_RATE1, s, lo, dest))
        elif s == 1:
            ops.append((leaf(lo), 1, lo, 0))
            ops.append((leaf(lo + 1), 2, lo + 1, dest))
        else:
            ops.append((OP_F, s, lo, 0))
            visit(s - 1, lo, 0)
            ops.append((OP_G, s, lo, 0))
            visit(s - 1, lo + size // 2, 1)
            ops.append((OP_COMB, s, lo, dest))

    visit(m, 0, 0)
    return np.ascontiguousarray(np.array(ops, dtype=np.int32).reshape(-1, 4))


# --------------------------------------------------------------------------- scalar helpers
@numba.njit(cache=True, nogil=True, inline="always")
def _hard(x):
    return np.uint8(1) if np.signbit(x) else np.uint8(0)


@numba.njit(cache=True, nogil=True, inline="always")
def _softplus(z):
    """``log(1 + e^z)`` without overflow."""
    return (z if z > 0.0 else 0.0) + math.log1p(math.exp(-abs(z)))


@numba.njit(cache=True, nogil=True, inline="always")
def _boxplus(a, b, exact):
    """``f(a, b)``: min-sum, or the exact boxplus when ``exact``; sign from the sign bits."""
    aa = abs(a)
    ab = abs(b)
    mag = aa if aa < ab else ab
    if exact:
        mag += math.log1p(math.exp(-(aa + ab))) - math.log1p(math.exp(-abs(aa - ab)))
        if mag < 0.0:  # rounding only; the exact magnitude is >= 0
            mag = 0.0
    return np.copysign(mag, a * b)


@numba.njit(cache=True, nogil=True, inline="always")
def _parity(x):
    return np.uint8(popcount64(x) & 1)


@numba.njit(cache=True, nogil=True)
def _transform_rows(x, size):
    """``x[:size] <- x[:size] G_size`` in place (1-D uint8, ``size`` a power of two)."""
    h = 1
    while h < size:
        for blk in range(0, size, 2 * h):
            for j in range(blk, blk + h):
                x[j] ^= x[j + h]
        h *= 2


# --------------------------------------------------------------------------- SC (lanes)
@numba.njit(cache=True, nogil=True)
def sc_decode_range(llr, ops, info_pos, taps, M, exact, lanes, cw_out, info_out, start, stop):
    """SC-decode blocks ``start:stop``, ``lanes`` blocks at a time.

    Args:
        llr: float64 ``(S, N)`` channel LLRs.
        ops: int32 ``(ops, 4)`` schedule from :func:`build_schedule` (``rate1`` allowed).
        info_pos: int64 ``(K,)`` sorted information positions.
        taps: uint64 with bit ``j-1`` = ``c_j`` (``j = 1..M``); 0 for plain polar codes.
        M: pre-transform memory (0 for plain polar codes).
        exact: exact boxplus (True) or min-sum (False).
        lanes: blocks decoded side by side (a runtime value so LLVM vectorises the lane loops).
        cw_out: uint8 ``(S, N)`` decoded codewords (written).
        info_out: uint8 ``(S, K)`` decoded ``v_A`` (message then CRC bits; written).
    """
    # long: the schedule interpreter, one lane loop per op kind, kept inline as in scl_decode_range
    N = llr.shape[1]
    W = lanes
    K = info_pos.shape[0]
    alpha = np.zeros((2 * N, W), dtype=np.float64)
    bl = np.zeros((2 * N, W), dtype=np.uint8)
    br = np.zeros((2 * N, W), dtype=np.uint8)
    v = np.zeros((N, W), dtype=np.uint8)
    lam = np.zeros(W, dtype=np.float64)
    tu = np.zeros(N, dtype=np.uint8)
    state = np.zeros(W, dtype=np.uint64)
    smask = (_ONE << np.uint64(M)) - _ONE if M > 0 else np.uint64(0)
    nops = ops.shape[0]
    for g0 in range(start, stop, W):
        nl = min(W, stop - g0)
        for j in range(N):
            for w in range(nl):
                alpha[N + j, w] = llr[g0 + w, j]
        for w in range(W):
            state[w] = 0
        for k in range(nops):
            op = ops[k, 0]
            s = ops[k, 1]
            lo = ops[k, 2]
            dst = bl if ops[k, 3] == 0 else br
            if op == OP_F:
                h = np.uint64(1) << np.uint64(s - 1)  # unsigned offsets: no negative-index fix-ups
                h2 = h + h
                h3 = h2 + h
                if exact:
                    for j in range(h):
                        for w in range(W):
                            alpha[h + j, w] = _boxplus(alpha[h2 + j, w], alpha[h3 + j, w], True)
                else:
                    for j in range(h):
                        for w in range(W):
                            a = alpha[h2 + j, w]
                            b = alpha[h3 + j, w]
                            aa = abs(a)
                            ab = abs(b)
                            alpha[h + j, w] = np.copysign(aa if aa < ab else ab, a * b)
            elif op == OP_G:
                h = np.uint64(1) << np.uint64(s - 1)
                h2 = h + h
                h3 = h2 + h
                for j in range(h):
                    for w in range(W):
                        a = alpha[h2 + j, w]
                        alpha[h + j, w] = alpha[h3 + j, w] + (-a if bl[h + j, w] else a)
            elif op == OP_COMB:
                h = np.uint64(1) << np.uint64(s - 1)
                h2 = h + h
                h3 = h2 + h
                for j in range(h):
                    for w in range(W):
                        dst[h2 + j, w] = bl[h + j, w] ^ br[h + j, w]
                        dst[h3 + j, w] = br[h + j, w]
            elif op == OP_FROZEN or op == OP_INFO:
                i = lo
                right = s == 2
                # the pair's LLRs sit at rows 2, 3 (level 1); left leaf: f, right leaf: g
                if right:
                    for w in range(W):
                        a = alpha[2, w]
                        lam[w] = alpha[3, w] + (-a if bl[1, w] else a)
                elif exact:
                    for w in range(W):
                        lam[w] = _boxplus(alpha[2, w], alpha[3, w], True)
                else:
                    for w in range(W):
                        a = alpha[2, w]
                        b = alpha[3, w]
                        aa = abs(a)
                        ab = abs(b)
                        lam[w] = np.copysign(aa if aa < ab else ab, a * b)
                for w in range(W):
                    fi = np.uint8(0)
                    if M > 0:
                        fi = _parity(state[w] & taps)
                    if op == OP_INFO:
                        ui = _hard(lam[w])
                        vi = ui ^ fi
                    else:
                        ui = fi
                        vi = np.uint8(0)
                    v[i, w] = vi
                    if M > 0:
                        state[w] = ((state[w] << _ONE) | np.uint64(vi)) & smask
                    if right:
                        u0 = bl[1, w]
                        dst[2, w] = u0 ^ ui
                        dst[3, w] = ui
                    else:
                        bl[1, w] = ui
            elif op == OP_RATE1:
                size = 1 << s
                for j in range(size):
                    for w in range(W):
                        dst[size + j, w] = _hard(alpha[size + j, w])
                for w in range(W):
                    # u of the node = its bits times G_size (an involution); v from u and the state
                    for j in range(size):
                        tu[j] = dst[size + j, w]
                    _transform_rows(tu, size)
                    if M == 0:
                        for j in range(size):
                            v[lo + j, w] = tu[j]
                    else:
                        st = state[w]
                        for j in range(size):
                            vi = tu[j] ^ _parity(st & taps)
                            v[lo + j, w] = vi
                            st = ((st << _ONE) | np.uint64(vi)) & smask
                        state[w] = st
            else:  # OP_RATE0
                size = 1 << s
                if M == 0:
                    for j in range(size):
                        for w in range(W):
                            dst[size + j, w] = 0
                            v[lo + j, w] = 0
                else:
                    for w in range(W):
                        st = state[w]
                        for j in range(size):
                            tu[j] = _parity(st & taps)
                            v[lo + j, w] = 0
                            st = (st << _ONE) & smask
                        state[w] = st
                        _transform_rows(tu, size)
                        for j in range(size):
                            dst[size + j, w] = tu[j]
        for w in range(nl):
            for j in range(N):
                cw_out[g0 + w, j] = bl[N + j, w]
            for t in range(K):
                info_out[g0 + w, t] = v[info_pos[t], w]


# --------------------------------------------------------------------------- SCL
@numba.njit(cache=True, nogil=True)
def _reset_pool(idx, refc, free, ftop, nlev, L):
    """One path (slot 0) owning row 0 of every level; all other rows free."""
    for lev in range(nlev):
        idx[0, lev] = 0
        refc[lev, 0] = 1
        top = 0
        for r in range(L - 1, 0, -1):
            refc[lev, r] = 0
            free[lev, top] = r
            top += 1
        ftop[lev] = top


class SclCode(NamedTuple):
    """The code :func:`scl_decode_range` decodes (``N = 2^m`` bits, ``K`` information bits, message then
    CRC) and how it picks the output path."""

    ops: np.ndarray  # (nops, 4) int32 schedule from build_schedule(frozen, rate1=False)
    info_pos: np.ndarray  # (K,) int64 sorted information positions
    taps: np.uint64  # uint64, bit j-1 = c_j (j = 1..M) of the pre-transform; 0 for plain polar codes
    M: int  # pre-transform memory (0 for plain polar codes)
    crc_rows: np.ndarray  # (K,) uint64 CRC syndrome of a 1 at information bit t (in info_pos order); zeros: no CRC
    use_crc: bool  # output the best path whose CRC holds (else, or when none does, the best path)


class SclOut(NamedTuple):
    """Per-block outputs of :func:`scl_decode_range` (``S`` blocks; rows ``start:stop`` written)."""

    cw: np.ndarray  # (S, N) uint8 decoded codewords
    info: np.ndarray  # (S, K) uint8 decoded v_A (message then CRC bits)
    crc_ok: np.ndarray  # (S,) bool the chosen path's CRC holds (True without a CRC)
    metric: np.ndarray  # (S,) float64 the chosen path's metric (module notes)


@numba.njit(cache=True, nogil=True)
def _scl_output(b, nact, code, plist, pm, syn, hist_v, hist_p, tu, v, out):
    """Block ``b``'s output from the ``nact`` final paths of :func:`scl_decode_range`: the chosen path
    (with ``code.use_crc``, the best metric among those whose CRC syndrome ``syn`` is 0; else, or
    when none is, the best metric ``pm``; ties: the earlier in list order ``plist``), then ``v``
    traced back on the information set through the trellis ``hist_v`` / ``hist_p`` (frozen ``v``
    are 0), ``u = conv(v)`` and ``x = u G_N``, written into row ``b`` of :class:`SclOut` ``out``.
    ``tu``, ``v``: ``(N,)`` uint8 scratch. (Once per block: its argument passing costs nothing measurable.)"""
    info_pos, taps, M = code.info_pos, code.taps, code.M
    N = v.shape[0]
    K = info_pos.shape[0]
    best = -1
    if code.use_crc:
        for t in range(nact):
            p = plist[t]
            if syn[p] == 0 and (best < 0 or pm[p] < pm[best]):
                best = p
    ok = best >= 0
    if best < 0:
        best = plist[0]
        for t in range(1, nact):
            p = plist[t]
            if pm[p] < pm[best]:
                best = p
        ok = syn[best] == 0
    out.crc_ok[b] = ok
    out.metric[b] = pm[best]
    for j in range(N):
        v[j] = 0
    q = best
    for t in range(K - 1, -1, -1):
        v[info_pos[t]] = hist_v[t, q]
        q = hist_p[t, q]
    info_out, cw_out = out.info, out.cw
    for t in range(K):
        info_out[b, t] = v[info_pos[t]]
    for i in range(N):
        bit = v[i]
        for j in range(1, M + 1):
            if i >= j and ((taps >> np.uint64(j - 1)) & _ONE):
                bit ^= v[i - j]
        tu[i] = bit
    _transform_rows(tu, N)
    for j in range(N):
        cw_out[b, j] = tu[j]


@numba.njit(cache=True, nogil=True)
def scl_decode_range(llr, code, L, exact, out, start, stop):
    """SCL-decode blocks ``start:stop`` with list size ``L``.

    Args:
        llr, exact: as :func:`sc_decode_range`.
        code: :class:`SclCode`; its ``crc_rows[t]`` is, for information bit ``t``, the CRC
            syndrome contribution of a 1 (a row of the CRC parity matrix for message bits,
            ``1 << j`` for CRC bit ``j``); the CRC holds iff the XOR over the 1 bits is 0.
        L: list size >= 1.
        out: :class:`SclOut`, rows ``start:stop`` written.

    One function on purpose: passing arrays to helpers costs reference-count updates (or,
    without the NRT, wide argument lists), both measured slower than the inlined bookkeeping.
    (Re-measured with numba ``inline="always"`` helpers: a 12-helper split, or only the
    "own the row" step as a helper, ran SCL-8/32 on Polar(128,64) 1.6-2x slower.) Only the once-per-block
    output step is a helper (:func:`_scl_output`, measured speed-neutral).
    "Own the row" below means: if path ``p``'s row of a pool level is shared, move ``p`` to a
    free row first (every write overwrites a whole level, so nothing is copied).
    """
    # long: one function on purpose (docstring: helper splits measured 1.6-2x slower on SCL-8/32)
    # the tuples' fields as locals: the hot loops index plain arrays (module notes)
    ops, info_pos, taps, M, crc_rows = code.ops, code.info_pos, code.taps, code.M, code.crc_rows
    N = llr.shape[1]
    K = info_pos.shape[0]
    m = 0
    while (1 << m) < N:
        m += 1
    # Allocated here, not by a helper returning a scratch tuple: that ran SCL-8 / SCL-32 on Polar(128,64)
    # 4-14 % slower (measured; arrays allocated in this function are known to alias nothing).
    # Pools: LLR rows (level s at [2^s, 2^(s+1)), levels 1..m-1; row 0 also holds the
    # channel at [N, 2N), level m, shared by every path) and parked-left-bit rows (levels
    # 0..m-1). One pointer table for both: level s -> LLRs, m + s -> bits. Right-child
    # bits go to plain per-slot rows (brs).
    apool = np.zeros((L, 2 * N), dtype=np.float64)
    bpool = np.zeros((L, N), dtype=np.uint8)
    brs = np.zeros((L, 2 * N), dtype=np.uint8)
    idx = np.zeros((L, 2 * m), dtype=np.int32)
    refc = np.zeros((2 * m, L), dtype=np.int32)
    free = np.zeros((2 * m, L), dtype=np.int32)
    ftop = np.zeros(2 * m, dtype=np.int32)
    plist = np.zeros(L, dtype=np.int32)  # active path slots, in list order
    nplist = np.zeros(L, dtype=np.int32)
    pfree = np.zeros(L, dtype=np.int32)  # free path slots (stack)
    pm = np.zeros(L, dtype=np.float64)
    state = np.zeros(L, dtype=np.uint64)
    syn = np.zeros(L, dtype=np.uint64)
    lam = np.zeros(L, dtype=np.float64)  # leaf LLR per list position
    pu0 = np.zeros(L, dtype=np.uint8)  # left bit of the pair per list position (right leaves)
    ubit = np.zeros(L, dtype=np.uint8)  # decided bit per new list position
    parent = np.zeros(L, dtype=np.int32)  # parent's old list position per new list position
    ckey = np.zeros(2 * L, dtype=np.float64)
    corder = np.zeros(2 * L, dtype=np.int64)
    ctmp = np.zeros(2 * L, dtype=np.int64)
    ckbuf = np.zeros(2 * L, dtype=np.float64)
    cktmp = np.zeros(2 * L, dtype=np.float64)
    keep = np.zeros((L, 2), dtype=np.uint8)
    pstate = np.zeros(L, dtype=np.uint64)
    psyn = np.zeros(L, dtype=np.uint64)
    hist_v = np.zeros((max(K, 1), L), dtype=np.uint8)
    hist_p = np.zeros((max(K, 1), L), dtype=np.int32)
    tu = np.zeros(N, dtype=np.uint8)
    v = np.zeros(N, dtype=np.uint8)
    smask = (_ONE << np.uint64(M)) - _ONE if M > 0 else np.uint64(0)
    nops = ops.shape[0]
    for b in range(start, stop):
        for j in range(N):
            apool[0, N + j] = llr[b, j]
        _reset_pool(idx, refc, free, ftop, 2 * m, L)
        nact = 1
        plist[0] = 0
        for q in range(L - 1):
            pfree[q] = L - 1 - q
        nfree = L - 1
        pm[0] = 0.0
        state[0] = 0
        syn[0] = 0
        tinfo = 0
        for k in range(nops):
            op = ops[k, 0]
            s = ops[k, 1]
            lo = ops[k, 2]
            side = ops[k, 3]
            if op == OP_F or op == OP_G:
                h = np.uint64(1) << np.uint64(s - 1)  # unsigned offsets: no negative-index fix-ups
                h2 = h + h
                h3 = h2 + h
                lev = s - 1
                for t in range(nact):
                    p = plist[t]
                    dr = idx[p, lev]  # own the row
                    if refc[lev, dr] > 1:
                        refc[lev, dr] -= 1
                        ftop[lev] -= 1
                        dr = free[lev, ftop[lev]]
                        refc[lev, dr] = 1
                        idx[p, lev] = dr
                    sr = idx[p, s] if s < m else 0
                    if op == OP_G:
                        lr = idx[p, m + s - 1]
                        for j in range(h):
                            a = apool[sr, h2 + j]
                            apool[dr, h + j] = apool[sr, h3 + j] + (-a if bpool[lr, h + j] else a)
                    elif exact:
                        for j in range(h):
                            apool[dr, h + j] = _boxplus(apool[sr, h2 + j], apool[sr, h3 + j], True)
                    else:
                        for j in range(h):
                            a = apool[sr, h2 + j]
                            c = apool[sr, h3 + j]
                            aa = abs(a)
                            ac = abs(c)
                            apool[dr, h + j] = np.copysign(aa if aa < ac else ac, a * c)
            elif op == OP_COMB:
                if s == m:
                    continue  # the root's bits are rebuilt from the traced-back v
                h = np.uint64(1) << np.uint64(s - 1)
                h2 = h + h
                h3 = h2 + h
                lev = m + s
                for t in range(nact):
                    p = plist[t]
                    lr = idx[p, m + s - 1]
                    if side == 0:
                        dr = idx[p, lev]  # own the row
                        if refc[lev, dr] > 1:
                            refc[lev, dr] -= 1
                            ftop[lev] -= 1
                            dr = free[lev, ftop[lev]]
                            refc[lev, dr] = 1
                            idx[p, lev] = dr
                        for j in range(h):
                            c = brs[p, h + j]
                            bpool[dr, h2 + j] = bpool[lr, h + j] ^ c
                            bpool[dr, h3 + j] = c
                    else:
                        # in place: level s of brs sits above level s-1, no overlap
                        for j in range(h):
                            c = brs[p, h + j]
                            brs[p, h2 + j] = bpool[lr, h + j] ^ c
                            brs[p, h3 + j] = c
            elif op == OP_RATE0:
                size = 1 << s
                lev = m + s
                for t in range(nact):
                    p = plist[t]
                    ar = idx[p, s] if s < m else 0
                    if M == 0:
                        for j in range(size):
                            tu[j] = 0
                    else:
                        st = state[p]
                        for j in range(size):
                            tu[j] = _parity(st & taps)
                            st = (st << _ONE) & smask
                        state[p] = st
                        _transform_rows(tu, size)
                    inc = 0.0
                    if exact:
                        for j in range(size):
                            x = apool[ar, size + j]
                            inc += _softplus(x if tu[j] else -x)
                    else:
                        for j in range(size):
                            x = apool[ar, size + j]
                            if tu[j] != _hard(x):
                                inc += abs(x)
                    pm[p] += inc
                    if s < m:
                        if side == 0:
                            dr = idx[p, lev]  # own the row
                            if refc[lev, dr] > 1:
                                refc[lev, dr] -= 1
                                ftop[lev] -= 1
                                dr = free[lev, ftop[lev]]
                                refc[lev, dr] = 1
                                idx[p, lev] = dr
                            for j in range(size):
                                bpool[dr, size + j] = tu[j]
                        else:
                            for j in range(size):
                                brs[p, size + j] = tu[j]
            else:
                # a leaf (OP_FROZEN / OP_INFO) of a size-2 node whose LLRs sit at rows 2, 3
                # of level 1: the left leaf's LLR is f of the pair, the right leaf's g
                right = s == 2
                for t in range(nact):
                    p = plist[t]
                    ar = idx[p, 1] if m > 1 else 0
                    a = apool[ar, 2]
                    c = apool[ar, 3]
                    if right:
                        u0 = bpool[idx[p, m], 1]
                        pu0[t] = u0
                        lam[t] = c + (-a if u0 else a)
                    elif exact:
                        lam[t] = _boxplus(a, c, True)
                    else:
                        aa = abs(a)
                        ac = abs(c)
                        lam[t] = np.copysign(aa if aa < ac else ac, a * c)
                if op == OP_FROZEN:
                    nkeep = nact
                    for t in range(nact):
                        p = plist[t]
                        x = lam[t]
                        fi = np.uint8(0)
                        if M > 0:
                            fi = _parity(state[p] & taps)
                            state[p] = (state[p] << _ONE) & smask
                        if exact:
                            pm[p] += _softplus(x if fi else -x)
                        elif fi != _hard(x):
                            pm[p] += abs(x)
                        nplist[t] = p
                        ubit[t] = fi
                        parent[t] = t
                else:
                    # fork: candidate t agrees with hard(lam[t]), nact + t disagrees
                    for t in range(nact):
                        p = plist[t]
                        x = abs(lam[t])
                        if exact:
                            base = math.log1p(math.exp(-x))
                            ckey[t] = pm[p] + base
                            ckey[nact + t] = pm[p] + x + base
                        else:
                            ckey[t] = pm[p]
                            ckey[nact + t] = pm[p] + x
                        keep[t, 0] = 0
                        keep[t, 1] = 0
                        pstate[t] = state[p]
                        psyn[t] = syn[p]
                    nc = 2 * nact
                    if nc <= L:
                        for q in range(nc):
                            corder[q] = q
                        nkeep = nc
                    else:
                        stable_argsort_prefix(ckey, nc, corder, ckbuf, cktmp, ctmp)
                        nkeep = L
                    for q in range(nkeep):
                        c2 = corder[q]
                        if c2 < nact:
                            keep[c2, 0] = 1
                        else:
                            keep[c2 - nact, 1] = 1
                    # paths without a surviving child free their rows first, so clones find room
                    for t in range(nact):
                        if keep[t, 0] == 0 and keep[t, 1] == 0:
                            p = plist[t]
                            for lev in range(2 * m):
                                r = idx[p, lev]
                                refc[lev, r] -= 1
                                if refc[lev, r] == 0:
                                    free[lev, ftop[lev]] = r
                                    ftop[lev] += 1
                            pfree[nfree] = p
                            nfree += 1
                    # surviving children in candidate order (the list order from now on); the
                    # agreeing child stays in its parent's slot, a second child takes a free
                    # slot sharing all of the parent's rows
                    crow = crc_rows[tinfo]
                    for q in range(nkeep):
                        c2 = corder[q]
                        t = c2 if c2 < nact else c2 - nact
                        p = plist[t]
                        hd = _hard(lam[t])
                        ui = hd if c2 < nact else np.uint8(1) - hd
                        if c2 >= nact and keep[t, 0] == 1:
                            nfree -= 1
                            dst = pfree[nfree]
                            for lev in range(2 * m):
                                r = idx[p, lev]
                                idx[dst, lev] = r
                                refc[lev, r] += 1
                        else:
                            dst = p
                        vi = ui
                        if M > 0:
                            vi = ui ^ _parity(pstate[t] & taps)
                            state[dst] = ((pstate[t] << _ONE) | np.uint64(vi)) & smask
                        pm[dst] = ckey[c2]
                        syn[dst] = psyn[t] ^ (crow if vi else np.uint64(0))
                        hist_v[tinfo, dst] = vi
                        hist_p[tinfo, dst] = p
                        nplist[q] = dst
                        ubit[q] = ui
                        parent[q] = t
                    tinfo += 1
                # the left leaf parks its bit, the right leaf writes the pair's two bits;
                # the last leaf's bits are rebuilt from the trace-back
                if lo < N - 1:
                    for q in range(nkeep):
                        p = nplist[q]
                        ui = ubit[q]
                        if not right:
                            lev = m
                        elif side == 0:
                            lev = m + 1
                        else:
                            u0 = pu0[parent[q]]
                            brs[p, 2] = u0 ^ ui
                            brs[p, 3] = ui
                            continue
                        dr = idx[p, lev]  # own the row
                        if refc[lev, dr] > 1:
                            refc[lev, dr] -= 1
                            ftop[lev] -= 1
                            dr = free[lev, ftop[lev]]
                            refc[lev, dr] = 1
                            idx[p, lev] = dr
                        if not right:
                            bpool[dr, 1] = ui
                        else:
                            u0 = pu0[parent[q]]
                            bpool[dr, 2] = u0 ^ ui
                            bpool[dr, 3] = ui
                nact = nkeep
                for q in range(nact):
                    plist[q] = nplist[q]
        _scl_output(b, nact, code, plist, pm, syn, hist_v, hist_p, tu, v, out)
