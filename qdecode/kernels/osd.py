"""Ordered-statistics decoding (OSD) kernels: syndrome OSD for qLDPC/DEMs, and classical OSD.

Syndrome OSD (the BP+OSD post-processor), with ldpc v2's definitions
--------------------------------------------------------------------
Given ``H`` (m, n), a syndrome ``s``, an ordering key per column (the BP posterior
LLRs; ascending = most likely flipped first) and column costs ``w_j = ln(1/p_j)``:

1. ``perm`` = stable ascending argsort of the key (ties keep the lower column index
   first; ldpc sorts with glibc ``qsort``, a stable merge sort).
2. Scan columns in ``perm`` order and keep each one that is independent of the columns
   kept before it (pivots ``S``); stop once ``rank(H)`` pivots are found. The other
   ``k = n - rank(H)`` columns, in ``perm`` order, are the non-pivots.
3. OSD-0: the unique ``e`` supported on ``S`` with ``H e = s``.
4. Higher order: each candidate flips a set ``T`` of non-pivot columns and re-solves the
   pivots, ``e_S = H_S^{-1}(s + H_T 1)``, cost ``sum_{e_j = 1} w_j``. OSD-E order ``w``:
   all ``2^w - 1`` nonzero patterns on the first ``w`` non-pivots (pattern integer
   ``i``, bit ``b`` = ``b``-th non-pivot). OSD-CS order ``w``: every weight-1 pattern over
   all ``k`` non-pivots, then every pair inside the first ``w`` (lexicographic). OSD-0 is
   the incumbent; a candidate replaces the incumbent only if its cost is strictly lower
   (for OSD-E, on equal cost the smaller pattern integer wins, which is ldpc's "first
   strict minimum in enumeration order"). As in ldpc, order 0 means OSD-0 for every
   method.

How it is fast: the pivot search is an incremental elimination over m-bit packed
columns against a *fully reduced* basis (each basis vector owns one pivot row and is
zero on every other pivot row) that also tracks, per basis vector, which pivot columns
it is the sum of (``comb``, a packed bit vector over pivot indices). Reducing a sparse
column then costs one XOR per pivot row it touches, and ``H_S^{-1} y`` is the XOR of
``comb[t]`` over the pivot rows ``t`` where ``y`` is 1. So a weight-1 candidate
``H_S^{-1} H_j`` is the XOR of a handful of ``comb`` rows (``H_j`` is sparse), and its cost
is summed over the set bits with an early exit once it exceeds the incumbent. Costs
are compared exactly as ldpc computes them (a sequential sum in column-index order):
any candidate whose fast cost is within a tolerance of the incumbent is re-costed that
way, so ties break exactly like ldpc's.

Candidate tracking for the gap (:func:`osd_gap_solve`, :func:`osd_gap_batch`)
-------------------------------------------------------------------------------
The soft output of BP+OSD (:mod:`qdecode.decoders.confidence`) needs, besides the decision, the
lightest tested candidate of *another logical class*. With the gap's weights ``v_j = ln((1-p_j)/p_j)``
(not the OSD costs ``ln(1/p_j)``: the search still chooses by those, unchanged) a candidate ``e`` has
``V(e) = sum_{e_j=1} v_j`` and a class code, the XOR of ``class_code[j]`` over its support
(:func:`qdecode.decoders.confidence.class_codes`). Every candidate the search tests (OSD-0, then
the OSD-CS singles and pairs or the OSD-E patterns; none when ``s`` is not in H's column space) is
fed to :func:`_gap_track`, which keeps the top two classes of :class:`OsdGapTrack`:
``V1`` = least ``V`` of any tested candidate, ``code1`` its class, ``V2`` = least ``V`` of a tested
candidate whose code is not ``code1`` (``inf``: none). That is enough for *any* reference class
``c``: the least ``V`` among tested candidates of a class other than ``c`` is ``V2`` when
``c == code1``, else ``V1``. Work, when all ``v_j >= 0`` (else every candidate gets the exact sum): a
candidate with ``V > V2`` can change neither, so its sum (pivot part over ``v[piv_col[t]]``,
precomputed per shot) stops once above ``V2`` plus a tolerance; one that gets through is classed
(one XOR per support bit) and dropped when of class ``code1`` and above ``V1``; the rest get the
exact ``V`` (sum in column-index order, as :func:`_exact_cost`, so a vector's ``V`` is bit for bit a
sequential sum over its support). Measured (one thread): OSD with the tracking costs about 1.4x
plain OSD on the same shots (surface code d = 5 circuit, [[144,12,12]]). The plain entry points
pass ``gap=None``, a branch numba prunes at compile time: their code is what it was.

Work clock
----------
Each syndrome-OSD shot counts its work, a deterministic integer (the same shot and key give the same
count on any machine, thread or batch) that grows with the time it takes: the 64-bit words its GF(2)
row operations touch. The elimination (:func:`_pivot_basis`) counts, per column scanned, its ``W``
words loaded and the ``Wr``-word combination cleared plus one per entry, ``W + Wr`` per basis vector
that reduces it and per basis vector it then clears, ``r`` pivot-row tests and ``W + Wr`` per new
pivot (``W``, ``Wr``: words of m bits and of the pivots so far); OSD-0 ``Wr`` per pivot row the
syndrome selects (and ``W`` each, plus ``m``, for the residual check); each tested candidate ``2 Wr``
(built and costed; ``3 Wr`` plus its flips for OSD-E's Gray-code step), ``Wr`` more when its cost is
re-summed exactly or it is tracked for the gap, each column representation ``Wr`` per pivot row it
meets; the stable sort of the ``n`` columns ``n ceil(log2 n)`` and the decisions written ``2 n``.
The count is left in :class:`OsdScratch` ``work[0]`` (:func:`osd_solve`) and returned per shot by
the batch kernels (:class:`OsdBatchOut`, :class:`OsdGapOut` ``work``).

Classical OSD (Fossorier & Lin, order-i reprocessing)
-----------------------------------------------------
Channel LLRs (positive = bit 0 more likely), a full-rank generator ``G`` (k, n):
sort positions by ``|llr|`` descending (stable), eliminate ``G``'s columns in that order
to the most reliable basis (MRB; dependent columns are skipped), re-encode the hard
decisions on the MRB, then try every test error pattern of weight ``1..order`` on the
``k`` MRB positions (weight by weight, lexicographic) and keep the codeword with the
smallest correlation discrepancy ``sum_{j: c_j != hard_j} |llr_j|`` (first minimum wins).
Hard decision: ``llr <= 0 -> 1``.

How it is fast (:func:`osd_classical_solve`; the plain enumeration it equals bit for bit is
``tests/kernels/osd_reference.py``): candidates are visited in the same order and
costed by the same sequential sum (``_bit_cost``, position order, strict ``<``), but a test
pattern is skipped when a lower bound on its discrepancy already exceeds the incumbent plus
``1e-9 * sum|llr|`` (far above any rounding difference between the bound and the exact sum),
so the output is the reference's bit for bit, ties included. Bounds: the order-0 difference
``d0`` is zero on the MRB and systematic row ``t`` is 1 on pivot ``piv[t]`` only, so the
flipped MRB positions contribute exactly their ``|llr|`` (pivots come in non-increasing
reliability, so for a pair ``(i, j)`` the ``j`` that pass form a suffix, found by bisection;
deeper patterns add the smallest remaining pivot reliabilities); the parity part obeys the
triangle inequality ``par(d ^ G_r) >= |par(d) - pw[r]|`` with precomputed row weights
``pw`` and order-1 parity costs ``pl1`` (for pairs, both ``|pl1[i] - pw[j]|`` and
``|pl1[j] - pw[i]|``). At 3 dB on BCH(127,64) about 5% of the pairs reach the exact cost.
The MRB front end (stable sort of the reliabilities, Gauss-Jordan on packed rows) is
branch-free where it matters.

All kernels are ``@numba.njit(cache=True, nogil=True)`` over flat arrays with
caller-allocated scratch (see :func:`osd_scratch`, :func:`osd_classical_scratch`); the range
kernels :func:`osd_range` and :func:`osd_classical_range` are threaded by their callers
(:mod:`qdecode.kernels.threads`), and :func:`osd_gap_batch` (the soft-output path) runs ``prange``
over chunks of shots; all allocate scratch once per chunk.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.gf2 import ctz64
from qdecode.kernels.sort import stable_argsort

__all__ = [
    "METHOD_OSD0",
    "METHOD_E",
    "METHOD_CS",
    "STATUS_OK",
    "STATUS_NOT_IN_SPAN",
    "STATUS_SKIPPED",
    "osd_scratch",
    "osd_solve",
    "osd_range",
    "OsdMatrix",
    "OsdBatchOut",
    "OsdGapTrack",
    "OsdGapOut",
    "osd_gap_track",
    "osd_gap_solve",
    "osd_gap_batch",
    "osd_classical_scratch",
    "classical_mrb",
    "osd_classical_solve",
    "osd_classical_range",
]

METHOD_OSD0 = 0
METHOD_E = 1
METHOD_CS = 2

STATUS_OK = 0
STATUS_NOT_IN_SPAN = 1
STATUS_SKIPPED = -1

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_REL_TOL = 1e-9


# --------------------------------------------------------- small bit helpers


@numba.njit(cache=True, nogil=True, inline="always")
def _is_zero(v, nw):
    for q in range(nw):
        if v[q] != 0:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _bit_cost(y, nw, wvec, base, limit):
    """``base + sum_{bit c of y} wvec[c]``, returning early once the sum exceeds ``limit``."""
    s = base
    for q in range(nw):
        x = y[q]
        off = q << 6
        while x != 0:
            s += wvec[off + ctz64(x)]
            x &= x - _ONE
        if s > limit:
            return s
    return s


@numba.njit(cache=True, nogil=True, inline="always")
def _keep_cheaper(cand, Wn, rel, best, best_d):
    """Cost of the candidate ``cand`` (``Wn`` words; its sum stops once above ``best``); copies it
    into ``best_d`` when strictly cheaper. Returns the new best cost."""
    cost = _bit_cost(cand, Wn, rel, 0.0, best)
    if cost < best:
        for q in range(Wn):
            best_d[q] = cand[q]
        return cost
    return best


#: ``n_extra`` for :func:`_exact_cost`'s call sites, typed int64: called with the literals 0, 1 and 2, numba compiled it
#: four times (one per literal, then for int64), ~1.5 s of a first run
ONE = np.int64(1)


@numba.njit(cache=True, nogil=True)
def _exact_cost(y, nw, piv_col, extra, n_extra, weights, supp):
    """ldpc's cost: sum of ``weights`` over the candidate's support in column-index order.

    The support is the pivot columns ``piv_col[c]`` for bits ``c`` of ``y`` plus
    ``extra[:n_extra]`` (flipped non-pivots).
    """
    cnt = 0
    for q in range(nw):
        x = y[q]
        off = q << 6
        while x != 0:
            supp[cnt] = piv_col[off + ctz64(x)]
            cnt += 1
            x &= x - _ONE
    for i in range(n_extra):
        supp[cnt] = extra[i]
        cnt += 1
    supp[:cnt].sort()
    s = 0.0
    for i in range(cnt):
        s += weights[supp[i]]
    return s


# ------------------------------------------------------------ syndrome OSD


class OsdScratch(NamedTuple):
    """Scratch of :func:`osd_solve` (``R = max(1, rank)``; ``W``, ``Wr``: words of m, R bits)."""

    perm: np.ndarray  # (n,) int64
    tmp: np.ndarray  # (n,) int64
    kbuf: np.ndarray  # (n,) float64
    ktmp: np.ndarray  # (n,) float64
    basis: np.ndarray  # (R, W) uint64
    comb: np.ndarray  # (R, Wr) uint64
    piv_row: np.ndarray  # (R,) int64
    piv_col: np.ndarray  # (R,) int64
    t_of_row: np.ndarray  # (m,) int64
    nonpiv: np.ndarray  # (max(1, n),) int64
    v: np.ndarray  # (W,) uint64
    cv: np.ndarray  # (Wr,) uint64
    x0: np.ndarray  # (Wr,) uint64
    y: np.ndarray  # (Wr,) uint64
    best_y: np.ndarray  # (Wr,) uint64
    xr: np.ndarray  # (Wr,) uint64
    xw: np.ndarray  # (cap, Wr) uint64
    wS: np.ndarray  # (R,) float64
    supp: np.ndarray  # (R + 64 + 2,) int64
    extra: np.ndarray  # (64 + 2,) int64
    work: np.ndarray  # (1,) int64: the work of the last shot (:func:`osd_solve`; module docstring, "Work clock")


@numba.njit(cache=True, nogil=True)
def osd_scratch(m, n, rank_h, order):
    """Scratch buffers for :func:`osd_solve` (allocate once per thread, reuse across shots).

    Returns an :class:`OsdScratch`.
    """
    W = max(1, (m + 63) // 64)
    R = max(1, rank_h)
    Wr = max(1, (R + 63) // 64)
    cap = max(1, order)
    perm = np.empty(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    kbuf = np.empty(n, dtype=np.float64)
    ktmp = np.empty(n, dtype=np.float64)
    basis = np.zeros((R, W), dtype=np.uint64)
    comb = np.zeros((R, Wr), dtype=np.uint64)
    piv_row = np.zeros(R, dtype=np.int64)
    piv_col = np.zeros(R, dtype=np.int64)
    t_of_row = np.full(m, -1, dtype=np.int64)
    nonpiv = np.zeros(max(1, n), dtype=np.int64)
    v = np.zeros(W, dtype=np.uint64)
    cv = np.zeros(Wr, dtype=np.uint64)
    x0 = np.zeros(Wr, dtype=np.uint64)
    y = np.zeros(Wr, dtype=np.uint64)
    best_y = np.zeros(Wr, dtype=np.uint64)
    xr = np.zeros(Wr, dtype=np.uint64)
    xw = np.zeros((cap, Wr), dtype=np.uint64)
    wS = np.zeros(R, dtype=np.float64)
    supp = np.zeros(R + 64 + 2, dtype=np.int64)
    extra = np.zeros(64 + 2, dtype=np.int64)
    return OsdScratch(perm, tmp, kbuf, ktmp, basis, comb, piv_row, piv_col, t_of_row, nonpiv, v, cv, x0, y, best_y,
                      xr, xw, wS, supp, extra, np.zeros(1, dtype=np.int64))


class OsdMatrix(NamedTuple):
    """The problem arrays of the syndrome OSD (the first five arguments of :func:`osd_solve`)."""

    col_ptr: np.ndarray  # (n + 1,) int64 CSC column pointers of H
    row_idx: np.ndarray  # (nnz,) int64 row indices
    colbits: np.ndarray  # (n, ceil(m/64)) uint64 packed columns
    weights: np.ndarray  # (n,) float64 OSD costs ln(1/p_j)
    rank_h: int  # rank(H) over GF(2)


class OsdGapTrack(NamedTuple):
    """Candidate tracking of :func:`osd_gap_solve` (module docstring; one per thread, reset per shot)."""

    class_code: np.ndarray  # (n,) uint64 class code of each column
    wgap: np.ndarray  # (n,) float64 the gap's weights v_j = ln((1 - p_j) / p_j)
    prune: bool  # every v_j >= 0: a candidate's sum may stop once above V2
    piv_w: np.ndarray  # (R,) float64 v of piv_col[t] (this shot)
    piv_code: np.ndarray  # (R,) uint64 class code of piv_col[t] (this shot)
    top_w: np.ndarray  # (2,) float64 [V1, V2] (inf: none yet)
    top_code: np.ndarray  # (1,) uint64 [code1], the class of V1


class OsdGapOut(NamedTuple):
    """Per-shot outputs of :func:`osd_gap_batch` (``V``: the gap's weight of a candidate, module docstring)."""

    status: np.ndarray  # (S,) int8 STATUS_*
    weight: np.ndarray  # (S,) float64 V1: least V of a tested candidate (inf: none, s outside H's span)
    code: np.ndarray  # (S,) uint64 code1: the class code of that candidate
    weight_other: np.ndarray  # (S,) float64 V2: least V of a tested candidate of another class (inf: none)
    work: np.ndarray  # (S,) int64 the work of each shot (module docstring, "Work clock"), tracking included


@numba.njit(cache=True, nogil=True)
def osd_gap_track(class_code, wgap, rank_h):
    """A fresh :class:`OsdGapTrack` for one thread (``prune`` when every ``wgap`` is >= 0)."""
    prune = True
    for j in range(wgap.shape[0]):
        if wgap[j] < 0.0:
            prune = False
    R = max(1, rank_h)
    return OsdGapTrack(class_code, wgap, prune, np.zeros(R, np.float64), np.zeros(R, np.uint64),
                       np.full(2, np.inf), np.zeros(1, np.uint64))


@numba.njit(cache=True, nogil=True)
def _gap_begin(gap, piv_col, r):
    """Reset ``gap`` (:class:`OsdGapTrack`) for a shot whose ``r`` pivot columns are ``piv_col[:r]``."""
    for t in range(r):
        c = piv_col[t]
        gap.piv_w[t] = gap.wgap[c]
        gap.piv_code[t] = gap.class_code[c]
    gap.top_w[0] = np.inf
    gap.top_w[1] = np.inf
    gap.top_code[0] = _ZERO


@numba.njit(cache=True, nogil=True)
def _gap_track(gap, y, Wr, piv_col, extra, n_extra, supp):
    """Record one tested candidate in ``gap``'s top two classes (:class:`OsdGapTrack`).

    The candidate: pivot part ``y`` (packed over pivot indices) plus the flipped non-pivots
    ``extra[:n_extra]``. With weights >= 0 its ``V`` is first summed in pivot order, stopping once above
    ``V2``, and a candidate of class ``code1`` above ``V1`` is dropped too (either could change nothing;
    the tolerance covers the rounding of that sum); the others get the exact ``V`` (:func:`_exact_cost`
    with the gap's weights).
    """
    top_w = gap.top_w
    w1 = top_w[0]
    w2 = top_w[1]
    base = 0.0
    code = _ZERO
    for i in range(n_extra):
        base += gap.wgap[extra[i]]
        code ^= gap.class_code[extra[i]]
    approx = 0.0
    if gap.prune:
        limit = w2 + _REL_TOL * (1.0 + w2)  # inf while no second class was seen
        approx = _bit_cost(y, Wr, gap.piv_w, base, limit)
        if approx > limit:
            return
    for q in range(Wr):
        x = y[q]
        off = q << 6
        while x != 0:
            code ^= gap.piv_code[off + ctz64(x)]
            x &= x - _ONE
    same = code == gap.top_code[0]
    if same and gap.prune and approx > w1 + _REL_TOL * (1.0 + w1):
        return
    w = _exact_cost(y, Wr, piv_col, extra, n_extra, gap.wgap, supp)
    if same:
        if w < w1:
            top_w[0] = w
    elif w < w1:  # a new least V of another class: the old least becomes the other class's
        top_w[1] = w1
        top_w[0] = w
        gap.top_code[0] = code
    elif w < w2:
        top_w[1] = w


@numba.njit(cache=True, nogil=True)
def _column_rep(j, col_ptr, row_idx, t_of_row, comb, Wr, out):
    """``out = H_S^{-1} H_j`` (packed over pivot indices); ``H_j`` must lie in span(H_S). Returns its work
    (module docstring, "Work clock"): ``Wr`` words cleared, one per entry of ``H_j``, ``Wr`` per pivot row met."""
    for q in range(Wr):
        out[q] = 0
    ops = Wr + col_ptr[j + 1] - col_ptr[j]
    for e in range(col_ptr[j], col_ptr[j + 1]):
        t = t_of_row[row_idx[e]]
        if t >= 0:
            ops += Wr
            for q in range(Wr):
                out[q] ^= comb[t, q]
    return ops


@numba.njit(cache=True, nogil=True)
def _pivot_basis(col_ptr, row_idx, colbits, rank_h, sc):
    """Fully reduced column basis of ``H`` in ``sc.perm`` order (:class:`OsdScratch` ``sc``); returns ``(r, k)``.

    Fills ``basis`` (``(R, W)`` uint64 reduced pivot columns), ``comb`` (``(R, Wr)``: each
    one as a combination of the pivot columns ``H_S``), ``piv_row`` / ``piv_col`` (int64
    ``(R,)``), ``t_of_row`` (int64 ``(m,)``, -1 off the pivot rows) and ``nonpiv`` (int64:
    the ``k`` non-pivot columns in ``perm`` order); ``v``, ``cv``: one column's scratch.
    The elimination of :func:`qdecode.kernels.gf2.csc_column_rank` fused with the ``comb``
    updates: per-column helpers shared with it measured OSD-0 about 1.5x slower. Adds its work to
    ``sc.work[0]`` (module docstring, "Work clock").
    """
    perm, basis, comb, piv_row, piv_col = sc.perm, sc.basis, sc.comb, sc.piv_row, sc.piv_col
    t_of_row, nonpiv, v, cv = sc.t_of_row, sc.nonpiv, sc.v, sc.cv
    m = t_of_row.shape[0]
    n = perm.shape[0]
    Wr = comb.shape[1]
    for i in range(m):
        t_of_row[i] = -1
    r = 0
    nnp = 0
    pos = 0
    ops = m
    while r < rank_h and pos < n:
        j = perm[pos]
        pos += 1
        W = v.shape[0]
        for q in range(W):
            v[q] = colbits[j, q]
        cw = (r >> 6) + 1
        for q in range(cw):
            cv[q] = 0
        ops += W + cw + col_ptr[j + 1] - col_ptr[j]
        for e in range(col_ptr[j], col_ptr[j + 1]):
            t = t_of_row[row_idx[e]]
            if t >= 0:
                ops += W + cw
                for q in range(W):
                    v[q] ^= basis[t, q]
                for q in range(cw):
                    cv[q] ^= comb[t, q]
        qw = -1
        for q in range(W):
            if v[q] != 0:
                qw = q
                break
        if qw < 0:
            nonpiv[nnp] = j
            nnp += 1
            continue
        prow = (qw << 6) + ctz64(v[qw])
        cv[r >> 6] |= _ONE << np.uint64(r & 63)
        qb = _ONE << np.uint64(prow & 63)
        pw = prow >> 6
        ops += r + W + Wr  # the pivot-row test of every basis vector; the new vector and its combination
        for u in range(r):
            if basis[u, pw] & qb:
                ops += W + cw
                for q in range(W):
                    basis[u, q] ^= v[q]
                for q in range(cw):
                    comb[u, q] ^= cv[q]
        for q in range(W):
            basis[r, q] = v[q]
        for q in range(cw):
            comb[r, q] = cv[q]
        for q in range(cw, Wr):
            comb[r, q] = 0
        t_of_row[prow] = r
        piv_row[r] = prow
        piv_col[r] = j
        r += 1
    ops += n - pos
    while pos < n:
        nonpiv[nnp] = perm[pos]
        nnp += 1
        pos += 1
    sc.work[0] += ops
    return r, nnp


@numba.njit(cache=True, nogil=True)
def _osd0(syndrome, basis, comb, piv_row, r, x0, v):
    """OSD-0 on the pivot columns: ``x0`` (packed over pivot indices) solves the pivot rows.

    Returns ``(status, work)``: ``STATUS_OK``, or ``STATUS_NOT_IN_SPAN`` when ``s`` is not in H's column
    space, and its work (module docstring, "Work clock").
    """
    m = syndrome.shape[0]
    W = v.shape[0]
    Wr = x0.shape[0]
    for q in range(Wr):
        x0[q] = 0
    ops = Wr + r
    for t in range(r):
        if syndrome[piv_row[t]] & 1:
            ops += Wr
            for q in range(Wr):
                x0[q] ^= comb[t, q]
    if r < m:  # s may be outside the column space: check the residual
        ops += 2 * W + m + r
        for q in range(W):
            v[q] = 0
        for i in range(m):
            if syndrome[i] & 1:
                v[i >> 6] ^= _ONE << np.uint64(i & 63)
        for t in range(r):
            if syndrome[piv_row[t]] & 1:
                ops += W
                for q in range(W):
                    v[q] ^= basis[t, q]
        if not _is_zero(v, W):
            return STATUS_NOT_IN_SPAN, ops
    return STATUS_OK, ops


@numba.njit(cache=True, nogil=True)
def _scatter_pivots(x, piv_col, out):
    """``out`` (uint8 ``(n,)``) = 0 except 1 at ``piv_col[t]`` for each set bit ``t`` of packed ``x``."""
    for i in range(out.shape[0]):
        out[i] = 0
    for q in range(x.shape[0]):
        w = x[q]
        while w != 0:
            out[piv_col[(q << 6) + ctz64(w)]] = 1
            w &= w - _ONE


@numba.njit(cache=True, nogil=True)
def _search_cs(col_ptr, row_idx, weights, order, k, best, sc, gap):
    """Combination sweep: every single non-pivot flip, then pairs among the first ``order``.

    ``best``: the OSD-0 cost; ``sc.best_y`` (packed pivot part of the best; :class:`OsdScratch` ``sc``) is
    updated in place. Returns ``(best_a, best_b)``: the flipped non-pivot columns of the best (-1: none).
    ``gap``: an :class:`OsdGapTrack` that records every candidate, or ``None`` (pruned at compile time).
    Adds its work to ``sc.work[0]`` (module docstring, "Work clock").
    """
    x0, comb, t_of_row, piv_col, nonpiv, wS = sc.x0, sc.comb, sc.t_of_row, sc.piv_col, sc.nonpiv, sc.wS
    xr, xw, y, best_y, extra, supp = sc.xr, sc.xw, sc.y, sc.best_y, sc.extra, sc.supp
    Wr = x0.shape[0]
    best_a = -1
    best_b = -1
    ops = 0
    for idx in range(k):
        j = nonpiv[idx]
        ops += _column_rep(j, col_ptr, row_idx, t_of_row, comb, Wr, xr) + 2 * Wr  # built and costed
        if idx < order:
            ops += Wr
            for q in range(Wr):
                xw[idx, q] = xr[q]
        for q in range(Wr):
            y[q] = x0[q] ^ xr[q]
        if gap is not None:
            ops += Wr
            extra[0] = j
            _gap_track(gap, y, Wr, piv_col, extra, 1, supp)
        limit = best + _REL_TOL * (1.0 + best)
        approx = _bit_cost(y, Wr, wS, weights[j], limit)
        if approx <= limit:
            ops += Wr
            extra[0] = j
            exact = _exact_cost(y, Wr, piv_col, extra, ONE, weights, supp)
            if exact < best:
                best = exact
                best_a = j
                best_b = -1
                for q in range(Wr):
                    best_y[q] = y[q]
    for a in range(order):
        ja = nonpiv[a]
        for b in range(a + 1, order):
            jb = nonpiv[b]
            ops += 2 * Wr
            for q in range(Wr):
                y[q] = x0[q] ^ xw[a, q] ^ xw[b, q]
            if gap is not None:
                ops += Wr
                extra[0] = ja
                extra[1] = jb
                _gap_track(gap, y, Wr, piv_col, extra, 2, supp)
            limit = best + _REL_TOL * (1.0 + best)
            approx = _bit_cost(y, Wr, wS, weights[ja] + weights[jb], limit)
            if approx <= limit:
                ops += Wr
                extra[0] = ja
                extra[1] = jb
                exact = _exact_cost(y, Wr, piv_col, extra, ONE + ONE, weights, supp)
                if exact < best:
                    best = exact
                    best_a = ja
                    best_b = jb
                    for q in range(Wr):
                        best_y[q] = y[q]
    sc.work[0] += ops
    return best_a, best_b


@numba.njit(cache=True, nogil=True)
def _search_e(col_ptr, row_idx, weights, order, best, sc, gap):
    """Exhaustive order-``order`` search: a Gray-code walk over the ``2^order - 1`` flip patterns
    of the first ``order`` non-pivot columns (ties: the smaller pattern).

    ``sc.best_y`` (:class:`OsdScratch` ``sc``) is updated in place; returns the best pattern ``g`` (bit ``b``
    flips ``nonpiv[b]``; 0: OSD-0). ``gap``: as in :func:`_search_cs`. Adds its work to ``sc.work[0]``.
    """
    x0, comb, t_of_row, piv_col, nonpiv, wS = sc.x0, sc.comb, sc.t_of_row, sc.piv_col, sc.nonpiv, sc.wS
    xr, xw, y, best_y, extra, supp = sc.xr, sc.xw, sc.y, sc.best_y, sc.extra, sc.supp
    Wr = x0.shape[0]
    best_g = 0
    ops = Wr
    for idx in range(order):
        ops += _column_rep(nonpiv[idx], col_ptr, row_idx, t_of_row, comb, Wr, xw[idx])
    for q in range(Wr):
        xr[q] = 0
    g = 0
    total = 1 << order
    for i in range(1, total):
        bit = ctz64(np.uint64(i))
        g ^= 1 << bit
        for q in range(Wr):
            xr[q] ^= xw[bit, q]
            y[q] = x0[q] ^ xr[q]
        base = 0.0
        ne = 0
        gg = g
        while gg != 0:
            b2 = ctz64(np.uint64(gg))
            base += weights[nonpiv[b2]]
            extra[ne] = nonpiv[b2]
            ne += 1
            gg &= gg - 1
        ops += 3 * Wr + ne  # xr and y updated, costed; the pattern's columns
        if gap is not None:
            ops += Wr
            _gap_track(gap, y, Wr, piv_col, extra, ne, supp)
        limit = best + _REL_TOL * (1.0 + best)
        approx = _bit_cost(y, Wr, wS, base, limit)
        if approx <= limit:
            ops += Wr
            exact = _exact_cost(y, Wr, piv_col, extra, ne, weights, supp)
            if exact < best or (exact == best and g < best_g):
                best = exact
                best_g = g
                for q in range(Wr):
                    best_y[q] = y[q]
    sc.work[0] += ops
    return best_g


@numba.njit(cache=True, nogil=True)
def _osd_search(mat, method, order, syndrome, key, out0, scratch, gap):
    """Steps 1-4 of the module docstring on one shot (:class:`OsdMatrix` ``mat``, :class:`OsdScratch` ``scratch``).

    Writes the OSD-0 decision into ``out0``; ``gap`` (:class:`OsdGapTrack`, or ``None``: nothing recorded,
    the branch pruned at compile time) records every tested candidate. Returns ``(status, searched,
    best_a, best_b, best_g)``: the best is ``scratch.best_y`` with the flips of :func:`_search_cs` /
    :func:`_search_e` when ``searched``, else OSD-0. ``scratch.work[0]`` receives the shot's work (module
    docstring, "Work clock"), the writing of the decision (``n``) included.
    """
    perm, tmp, kbuf, ktmp, basis = scratch.perm, scratch.tmp, scratch.kbuf, scratch.ktmp, scratch.basis
    comb, piv_row, piv_col, v = scratch.comb, scratch.piv_row, scratch.piv_col, scratch.v
    x0, best_y, wS, supp, extra = scratch.x0, scratch.best_y, scratch.wS, scratch.supp, scratch.extra
    col_ptr, row_idx, weights = mat.col_ptr, mat.row_idx, mat.weights

    n = perm.shape[0]
    lg = 1
    while (1 << lg) < n:
        lg += 1
    scratch.work[0] = n * lg + 2 * n  # the stable sort; OSD-0's decision and the returned one written
    stable_argsort(key, perm, kbuf, ktmp, tmp)
    r, k = _pivot_basis(col_ptr, row_idx, mat.colbits, mat.rank_h, scratch)
    status, ops0 = _osd0(syndrome, basis, comb, piv_row, r, x0, v)
    scratch.work[0] += ops0
    _scatter_pivots(x0, piv_col, out0)
    if gap is not None:
        scratch.work[0] += r + x0.shape[0]
        _gap_begin(gap, piv_col, r)
        if status == STATUS_OK:
            _gap_track(gap, x0, x0.shape[0], piv_col, extra, 0, supp)
    if method == METHOD_OSD0 or order <= 0 or k == 0 or status != STATUS_OK:
        return status, False, -1, -1, 0
    if order > k:
        order = k

    # ---- higher order
    scratch.work[0] += r + x0.shape[0]
    for c in range(r):
        wS[c] = weights[piv_col[c]]
    best = _exact_cost(x0, x0.shape[0], piv_col, extra, ONE - ONE, weights, supp)
    for q in range(x0.shape[0]):
        best_y[q] = x0[q]
    best_a = -1
    best_b = -1
    best_g = 0
    if method == METHOD_CS:
        best_a, best_b = _search_cs(col_ptr, row_idx, weights, order, k, best, scratch, gap)
    else:  # METHOD_E
        best_g = _search_e(col_ptr, row_idx, weights, order, best, scratch, gap)
    return status, True, best_a, best_b, best_g


@numba.njit(cache=True, nogil=True)
def _write_decision(scratch, searched, best_a, best_b, best_g, out0, out):
    """``out`` = the decision of :func:`_osd_search` (its returns; OSD-0 ``out0`` when not ``searched``)."""
    if not searched:
        for i in range(out.shape[0]):
            out[i] = out0[i]
        return
    nonpiv = scratch.nonpiv
    _scatter_pivots(scratch.best_y, scratch.piv_col, out)
    if best_a >= 0:
        out[best_a] ^= 1
    if best_b >= 0:
        out[best_b] ^= 1
    gg = best_g
    while gg != 0:
        b2 = ctz64(np.uint64(gg))
        out[nonpiv[b2]] ^= 1
        gg &= gg - 1


@numba.njit(cache=True, nogil=True)
def osd_solve(col_ptr, row_idx, colbits, weights, rank_h, method, order, syndrome, key, out, out0, scratch):
    """OSD for one shot (see the module docstring for the exact definitions).

    Args:
        col_ptr, row_idx: CSC arrays of ``H`` (m, n), int64, no duplicate entries.
        colbits: ``(n, ceil(m/64))`` uint64 packed columns of ``H``.
        weights: ``(n,)`` float64 column costs ``ln(1/p_j)`` (all > 0).
        rank_h: ``rank(H)`` over GF(2).
        method: ``METHOD_OSD0``, ``METHOD_E`` or ``METHOD_CS``.
        order: OSD order, already clamped to ``0 <= order <= n - rank_h`` (and <= 62 for E).
        syndrome: ``(m,)`` uint8.
        key: ``(n,)`` float64 ordering key (BP posterior LLRs).
        out: ``(n,)`` uint8, receives the decision.
        out0: ``(n,)`` uint8, receives the OSD-0 decision (pass a scratch row if unused;
            it must not alias ``out``).
        scratch: the tuple from :func:`osd_scratch` for this problem and order.

    Returns:
        ``STATUS_OK`` (``H out = s``), or ``STATUS_NOT_IN_SPAN`` when ``s`` is not in H's
        column space (then ``out`` is the OSD-0 vector, which matches ``s`` on the pivot
        rows only). The shot's work (module docstring, "Work clock") is left in ``scratch.work[0]``.
    """
    mat = OsdMatrix(col_ptr, row_idx, colbits, weights, rank_h)
    status, searched, best_a, best_b, best_g = _osd_search(mat, method, order, syndrome, key, out0, scratch, None)
    _write_decision(scratch, searched, best_a, best_b, best_g, out0, out)
    return status


@numba.njit(cache=True, nogil=True)
def osd_gap_solve(mat, method, order, syndrome, key, out, out0, scratch, gap):
    """:func:`osd_solve` (same decision, bit for bit) that also records the tested candidates for the gap.

    Args:
        mat: :class:`OsdMatrix` (``osd_solve``'s first five arguments).
        method, order, syndrome, key, out, out0, scratch: as in :func:`osd_solve`.
        gap: :class:`OsdGapTrack` (:func:`osd_gap_track`); afterwards ``top_w = [V1, V2]`` and
            ``top_code[0]`` (module docstring), ``[inf, inf]`` when ``s`` is outside H's column space.

    Returns:
        The status, as :func:`osd_solve` (the work, the candidates' tracking included, in ``scratch.work[0]``).
    """
    status, searched, best_a, best_b, best_g = _osd_search(mat, method, order, syndrome, key, out0, scratch, gap)
    _write_decision(scratch, searched, best_a, best_b, best_g, out0, out)
    return status


@numba.njit(cache=True, nogil=True, parallel=True)
def osd_gap_batch(mat, method, order, syndromes, keys, out, class_code, wgap, gout, nchunks):
    """:func:`osd_gap_solve` on every shot, ``prange`` over ``nchunks`` chunks of shots.

    Args:
        mat, method, order: as in :func:`osd_gap_solve`.
        syndromes: ``(S, m)`` uint8; keys: ``(S, n)`` float64 ordering keys; out: ``(S, n)`` uint8 decisions.
        class_code: ``(n,)`` uint64 class code of each column; wgap: ``(n,)`` float64 the gap's weights.
        gout: :class:`OsdGapOut`, every row written.
        nchunks: number of chunks; scratch is allocated once per chunk.
    """
    S = syndromes.shape[0]
    m = syndromes.shape[1]
    n = keys.shape[1]
    rank_h = mat.rank_h
    # the output arrays leave the tuple before the prange: written through the tuple there, numba 0.68 lost the writes
    status, weight, code, weight_other, work = gout.status, gout.weight, gout.code, gout.weight_other, gout.work
    nch = max(1, min(nchunks, S))
    for c in numba.prange(nch):
        lo = c * S // nch
        hi = (c + 1) * S // nch
        if lo < hi:
            scratch = osd_scratch(m, n, rank_h, order)
            gap = osd_gap_track(class_code, wgap, rank_h)
            out0 = np.empty(n, dtype=np.uint8)
            for s in range(lo, hi):
                status[s] = osd_gap_solve(mat, method, order, syndromes[s], keys[s], out[s], out0, scratch, gap)
                weight[s] = gap.top_w[0]
                code[s] = gap.top_code[0]
                weight_other[s] = gap.top_w[1]
                work[s] = scratch.work[0]


class OsdBatchOut(NamedTuple):
    """Per-shot outputs of :func:`osd_range` (``S`` shots, ``n`` columns of ``H``)."""

    out: np.ndarray  # (S, n) uint8 decisions (only the masked rows written)
    out0: np.ndarray  # (S, n) uint8 OSD-0 decisions (masked rows), or (0, n) to skip them
    status: np.ndarray  # (S,) int8 STATUS_* (STATUS_SKIPPED outside the mask)
    work: np.ndarray  # (S,) int64 the work of each masked shot (module docstring, "Work clock"; others untouched)


@numba.njit(cache=True, nogil=True)
def osd_range(mat, method, order, syndromes, keys, shots, bout, start, stop):
    """OSD on the shots ``shots[start:stop]`` (releases the GIL: run ranges on several threads, as
    ``qdecode.decoders.osd`` does with :func:`qdecode.kernels.threads.run_dynamic`).

    A plain kernel rather than a ``prange``: numba's parallel lowering cost a first run (empty compile cache)
    ~7 s more, and Python threads over ``nogil`` ranges decode the same shots alike (each shot's answer
    depends on its row alone).

    Args:
        mat: :class:`OsdMatrix` (``osd_solve``'s first five arguments).
        method, order: as in :func:`osd_solve`.
        syndromes: ``(S, m)`` uint8.
        keys: ``(S, n)`` float64 ordering keys (BP posterior LLRs), one row per shot.
        shots: int64 the rows to decode (e.g. those BP did not converge on).
        bout: :class:`OsdBatchOut`; ``out``, ``out0``, ``status`` and ``work`` written on the rows ``shots[start:stop]``
            (``out0`` when it has ``S`` rows).
        start, stop: the range of ``shots``; scratch is allocated once per call.
    """
    _osd_rows(mat, None, method, order, syndromes, keys, shots, bout, start, stop)


@numba.njit(cache=True, nogil=True)
def osd_shot_weights_range(mat, shot_weights, method, order, syndromes, keys, shots, bout, start, stop):
    """:func:`osd_range` with each shot's own column costs: row ``s`` of ``shot_weights`` (float64 ``(S, n)``,
    ``ln(1/p)`` of the shot's priors, e.g. after heralds fired) replaces ``mat.weights`` for shot ``s``."""
    _osd_rows(mat, shot_weights, method, order, syndromes, keys, shots, bout, start, stop)


@numba.njit(cache=True, nogil=True)
def _osd_rows(mat, shot_weights, method, order, syndromes, keys, shots, bout, start, stop):
    """The loop of :func:`osd_range` (``shot_weights`` None: ``mat.weights`` for every shot) and
    :func:`osd_shot_weights_range`."""
    if stop <= start:
        return
    m = syndromes.shape[1]
    n = keys.shape[1]
    out, out0, status, work = bout.out, bout.out0, bout.status, bout.work
    scratch = osd_scratch(m, n, mat.rank_h, order)
    dummy0 = np.empty(n, dtype=np.uint8)
    write0 = out0.shape[0] == syndromes.shape[0]
    for q in range(start, stop):
        s = shots[q]
        weights = mat.weights if shot_weights is None else shot_weights[s]
        row0 = out0[s] if write0 else dummy0
        status[s] = osd_solve(mat.col_ptr, mat.row_idx, mat.colbits, weights, mat.rank_h, method, order,
                              syndromes[s], keys[s], out[s], row0, scratch)
        work[s] = scratch.work[0]


# ------------------------------------------------------------ classical OSD


class OsdClassicalScratch(NamedTuple):
    """Scratch of :func:`osd_classical_solve` (``Wn``: words of n bits; ``oo = max(1, order) + 1``)."""

    perm: np.ndarray  # (n,) int64
    tmp: np.ndarray  # (n,) int64
    negrel: np.ndarray  # (n,) float64
    rel: np.ndarray  # (n,) float64
    G: np.ndarray  # (kk, Wn) uint64
    piv: np.ndarray  # (kk,) int64
    hd: np.ndarray  # (Wn,) uint64
    d0: np.ndarray  # (Wn,) uint64
    part: np.ndarray  # (oo, Wn) uint64
    best_d: np.ndarray  # (Wn,) uint64
    idx: np.ndarray  # (oo,) int64
    prel: np.ndarray  # (kk,) float64
    tail: np.ndarray  # (oo,) float64
    info: np.ndarray  # (oo,) float64
    cand: np.ndarray  # (Wn,) uint64
    pw: np.ndarray  # (kk,) float64
    pl1: np.ndarray  # (kk,) float64
    pc: np.ndarray  # (oo,) float64
    kbuf: np.ndarray  # (n,) float64
    ktmp: np.ndarray  # (n,) float64


@numba.njit(cache=True, nogil=True)
def osd_classical_scratch(k, n, order):
    """Scratch for :func:`osd_classical_solve` (and the test reference enumeration):
    ``(perm, tmp, negrel, rel, G, piv, hd, d0, part, best_d, idx, prel, tail, info, cand, pw, pl1, pc,
    kbuf, ktmp)``."""
    Wn = max(1, (n + 63) // 64)
    kk = max(1, k)
    oo = max(1, order) + 1
    perm = np.empty(n, dtype=np.int64)
    tmp = np.empty(n, dtype=np.int64)
    negrel = np.empty(n, dtype=np.float64)
    rel = np.empty(n, dtype=np.float64)
    G = np.zeros((kk, Wn), dtype=np.uint64)
    piv = np.zeros(kk, dtype=np.int64)
    hd = np.zeros(Wn, dtype=np.uint64)
    d0 = np.zeros(Wn, dtype=np.uint64)
    part = np.zeros((oo, Wn), dtype=np.uint64)
    best_d = np.zeros(Wn, dtype=np.uint64)
    idx = np.zeros(oo, dtype=np.int64)
    prel = np.zeros(kk, dtype=np.float64)
    tail = np.zeros(oo, dtype=np.float64)
    info = np.zeros(oo, dtype=np.float64)
    cand = np.zeros(Wn, dtype=np.uint64)
    pw = np.zeros(kk, dtype=np.float64)
    pl1 = np.zeros(kk, dtype=np.float64)
    pc = np.zeros(oo, dtype=np.float64)
    kbuf = np.empty(n, dtype=np.float64)
    ktmp = np.empty(n, dtype=np.float64)
    return OsdClassicalScratch(perm, tmp, negrel, rel, G, piv, hd, d0, part, best_d, idx, prel, tail, info, cand, pw,
                               pl1, pc, kbuf, ktmp)


@numba.njit(cache=True, nogil=True)
def classical_mrb(llr, g_packed, perm, tmp, negrel, rel, G, piv, hd, d0, kbuf, ktmp):
    """Shared front end of classical OSD and sem-OSD (:mod:`qdecode.kernels.sem_osd`): reliabilities, hard
    decisions, MRB elimination, order-0 ``d0``, on :func:`osd_classical_scratch` buffers. Returns the rank."""
    n = llr.shape[0]
    k = g_packed.shape[0]
    Wn = g_packed.shape[1]
    for q in range(Wn):
        hd[q] = 0
    for j in range(n):
        a = abs(llr[j])
        rel[j] = a
        negrel[j] = -a
        if llr[j] <= 0:
            hd[j >> 6] |= _ONE << np.uint64(j & 63)
    stable_argsort(negrel, perm, kbuf, ktmp, tmp)
    for i in range(k):
        for q in range(Wn):
            G[i, q] = g_packed[i, q]
    # ---- most reliable basis: eliminate columns in reliability order
    # (branch-free Gauss-Jordan; the systematic form on a given pivot set is unique, so this
    # equals gf2.pivot_on_column's result row for row)
    rk = 0
    for pos in range(n):
        if rk == k:
            break
        col = perm[pos]
        w = col >> 6
        sh = np.uint64(col & 63)
        sel = -1
        for i in range(rk, k):
            if (G[i, w] >> sh) & _ONE:
                sel = i
                break
        if sel < 0:
            continue
        if sel != rk:
            for q in range(Wn):
                t0 = G[sel, q]
                G[sel, q] = G[rk, q]
                G[rk, q] = t0
        if Wn == 2:
            # the common n <= 128 case, with the pivot row held in registers
            r0 = G[rk, 0]
            r1 = G[rk, 1]
            for i in range(k):
                msk = (_ZERO - ((G[i, w] >> sh) & _ONE)) if i != rk else _ZERO
                G[i, 0] ^= r0 & msk
                G[i, 1] ^= r1 & msk
        else:
            for i in range(k):
                msk = (_ZERO - ((G[i, w] >> sh) & _ONE)) if i != rk else _ZERO
                for q in range(Wn):
                    G[i, q] ^= G[rk, q] & msk
        piv[rk] = col
        rk += 1
    # ---- order 0: re-encode the hard decisions on the MRB; d = codeword XOR hard decision
    for q in range(Wn):
        d0[q] = hd[q]
    for t in range(rk):
        c = piv[t]
        if (hd[c >> 6] >> np.uint64(c & 63)) & _ONE:
            for q in range(Wn):
                d0[q] ^= G[t, q]
    return rk


@numba.njit(cache=True, nogil=True)
def _classical_singles(d0, G, rk, Wn, rel, prel, best, tol, cand, best_d):
    """Order 1: every single MRB flip ``d0 ^ G_r``, skipped when ``prel[r]`` alone exceeds the incumbent.

    ``best_d`` is updated in place; returns the new best cost.
    """
    for r in range(rk):
        if prel[r] > best + tol:
            continue
        for q in range(Wn):
            cand[q] = d0[q] ^ G[r, q]
        best = _keep_cheaper(cand, Wn, rel, best, best_d)
    return best


@numba.njit(cache=True, nogil=True)
def _classical_pairs(d0, G, rk, Wn, rel, prel, pw, pl1, best, tol, cand, best_d):
    """Order >= 2, weights 1 and 2: fills ``pw`` / ``pl1`` (every weight-1 parity cost is needed
    for the pair bounds), then the pairs ``(i, j)``, ``i < j``, lexicographic.

    ``best_d`` is updated in place; returns the new best cost.
    """
    inf = np.inf
    # pw[t]: parity-part weight of systematic row t; pl1[t]: parity-part cost of d0 ^ G_t.
    # lambda(d ^ G_r) >= info + |par(d) - pw[r]| (triangle inequality on the parity part)
    for t in range(rk):
        pw[t] = _bit_cost(G[t], Wn, rel, 0.0, inf) - prel[t]
    # d0 is zero on the MRB: par(d0 ^ G_r) = pc0 + pw[r] - 2 * (weight of d0 & G_r)
    pc0 = best
    for r in range(rk):
        for q in range(Wn):
            cand[q] = d0[q] & G[r, q]
        ov = _bit_cost(cand, Wn, rel, 0.0, inf)
        pl1[r] = pc0 + pw[r] - 2.0 * ov
        if prel[r] + pl1[r] > best + tol:
            continue
        for q in range(Wn):
            cand[q] = d0[q] ^ G[r, q]
        best = _keep_cheaper(cand, Wn, rel, best, best_d)
    # ---- weight 2: pairs (i, j), i < j, lexicographic; info bound prel[i] + prel[j] is
    # non-increasing in j, so the j that can pass form a suffix found by bisection
    for i in range(rk - 1):
        thr = best + tol
        pi = prel[i]
        if pi + prel[rk - 1] > thr:
            continue
        lo = i + 1
        hi = rk - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            if pi + prel[mid] > thr:
                lo = mid + 1
            else:
                hi = mid
        li = pl1[i]
        wi = pw[i]
        for j in range(lo, rk):
            thr = best + tol
            ic = pi + prel[j]
            lb = abs(li - pw[j])
            lb2 = abs(pl1[j] - wi)
            if lb2 > lb:
                lb = lb2
            if ic + lb > thr:
                continue
            for q in range(Wn):
                cand[q] = d0[q] ^ G[i, q] ^ G[j, q]
            best = _keep_cheaper(cand, Wn, rel, best, best_d)
    return best


@numba.njit(cache=True, nogil=True)
def _classical_deep(sc, rk, Wn, order, best, tol):
    """Weights 3 .. ``order``: depth-first lexicographic enumeration with subtree pruning
    (needs ``pw`` / ``pl1`` from :func:`_classical_pairs`) on :class:`OsdClassicalScratch` ``sc``.

    ``sc.best_d`` is updated in place; returns the new best cost.
    """
    d0, G, rel, prel, tail, pw = sc.d0, sc.G, sc.rel, sc.prel, sc.tail, sc.pw
    pl1, part, idx, info, pc, cand = sc.pl1, sc.part, sc.idx, sc.info, sc.pc, sc.cand
    best_d = sc.best_d
    inf = np.inf
    for wt in range(3, order + 1):
        for q in range(Wn):
            part[0, q] = d0[q]
        info[0] = 0.0
        pc[0] = _bit_cost(d0, Wn, rel, 0.0, inf)
        lvl = 0
        idx[0] = 0
        while lvl >= 0:
            r = idx[lvl]
            if r > rk - wt + lvl:
                lvl -= 1
                if lvl >= 0:
                    idx[lvl] += 1
                continue
            thr = best + tol
            ic = info[lvl] + prel[r]
            if ic + tail[wt - lvl - 1] > thr:
                idx[lvl] += 1
                continue
            if lvl == wt - 1:
                lb = ic + abs(pc[lvl] - pw[r])
                if lb > thr:
                    idx[lvl] += 1
                    continue
                for q in range(Wn):
                    cand[q] = part[lvl, q] ^ G[r, q]
                best = _keep_cheaper(cand, Wn, rel, best, best_d)
                idx[lvl] += 1
            else:
                info[lvl + 1] = ic
                for q in range(Wn):
                    part[lvl + 1, q] = part[lvl, q] ^ G[r, q]
                if lvl == 0:
                    pc[1] = pl1[r]
                else:
                    pc[lvl + 1] = _bit_cost(part[lvl + 1], Wn, rel, 0.0, inf) - ic
                idx[lvl + 1] = r + 1
                lvl += 1
    return best


@numba.njit(cache=True, nogil=True)
def osd_classical_solve(llr, g_packed, order, out, scratch):
    """Fossorier-Lin order-``order`` OSD of one block; writes the codeword into ``out``.

    Same result, bit for bit, as the plain enumeration (``tests/kernels/osd_reference.py``):
    candidates are visited in the same order (weight by weight, lexicographic) and costed by
    the same sequential sum, and a candidate replaces the incumbent only if strictly better.
    What is new is pruning with lower bounds (see the module docstring): the flipped MRB
    positions' reliabilities (plus, for a partial pattern, the smallest remaining pivot
    reliabilities; its whole subtree is skipped) and the parity-part triangle inequality. A
    candidate is skipped only when its bound exceeds the incumbent by more than
    ``1e-9 * sum|llr|``, which covers the different summation order, so it could not have won.

    Args:
        llr: ``(n,)`` float64 channel LLRs, positive = bit 0 more likely.
        g_packed: ``(k, ceil(n/64))`` uint64 packed rows of a full-rank generator matrix.
        order: reprocessing order, ``0 <= order <= k``.
        out: ``(n,)`` uint8 codeword.
        scratch: from :func:`osd_classical_scratch` (same k, n and at least this order).

    Returns:
        The correlation discrepancy of the chosen codeword.
    """
    perm, tmp, negrel, rel, G, piv = scratch.perm, scratch.tmp, scratch.negrel, scratch.rel, scratch.G, scratch.piv
    hd, d0, best_d, prel, tail, cand = scratch.hd, scratch.d0, scratch.best_d, scratch.prel, scratch.tail, scratch.cand
    pw, pl1, kbuf, ktmp = scratch.pw, scratch.pl1, scratch.kbuf, scratch.ktmp
    n = llr.shape[0]
    Wn = g_packed.shape[1]
    rk = classical_mrb(llr, g_packed, perm, tmp, negrel, rel, G, piv, hd, d0, kbuf, ktmp)
    best = _bit_cost(d0, Wn, rel, 0.0, np.inf)
    for q in range(Wn):
        best_d[q] = d0[q]
    if order > rk:
        order = rk
    for t in range(rk):
        prel[t] = rel[piv[t]]
    tail[0] = 0.0
    for mm in range(1, order + 1):
        tail[mm] = tail[mm - 1] + prel[rk - mm]
    rsum = 0.0
    for j in range(n):
        rsum += rel[j]
    tol = _REL_TOL * rsum  # covers every rounding difference between the bounds and the exact sums
    if order == 1:
        best = _classical_singles(d0, G, rk, Wn, rel, prel, best, tol, cand, best_d)
    elif order >= 2:
        best = _classical_pairs(d0, G, rk, Wn, rel, prel, pw, pl1, best, tol, cand, best_d)
        best = _classical_deep(scratch, rk, Wn, order, best, tol)
    for j in range(n):
        out[j] = np.uint8(((best_d[j >> 6] ^ hd[j >> 6]) >> np.uint64(j & 63)) & _ONE)
    return best


@numba.njit(cache=True, nogil=True)
def osd_classical_range(llr, g_packed, order, out, start, stop):
    """Classical OSD of rows ``start:stop`` of ``llr`` (S, n) into ``out`` (S, n) uint8.

    A ``nogil`` range kernel for :func:`qdecode.kernels.threads.run_ranges` (scratch is
    allocated once per call).
    """
    k = g_packed.shape[0]
    n = llr.shape[1]
    if start >= stop:
        return
    scratch = osd_classical_scratch(k, n, order)
    for s in range(start, stop):
        osd_classical_solve(llr[s], g_packed, order, out[s], scratch)
