"""Bit-packed GF(2) linear algebra in numba (uint64 words, little-endian bit order).

A bit vector of length ``nbits`` is stored in ``num_words(nbits)`` uint64 words; bit
``i`` lives in word ``i >> 6`` at position ``i & 63``. A packed matrix is a 2-D
``(rows, words)`` uint64 array, one packed vector per row (so "columns of H" are
packed by passing H's transpose, or built straight from CSC arrays with
:func:`pack_csc_columns`).

The jitted helpers work in place on caller-allocated arrays and never allocate; the
small Python wrappers at the bottom (:func:`gf2_rref`, :func:`gf2_rank`, :func:`gf2_row_basis`,
:func:`gf2_nullspace`) are set-up time conveniences that do. They are the one implementation of
these operations: :mod:`qdecode.codes.gf2` validates its input and delegates here.

Examples:
    >>> import numpy as np
    >>> H = np.array([[1, 1, 0, 1], [0, 1, 1, 1]], dtype=np.uint8)
    >>> gf2_rank(H)
    2
    >>> G = gf2_nullspace(H)
    >>> G.shape, int((H.astype(int) @ G.T.astype(int) % 2).sum())
    ((2, 4), 0)
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

__all__ = [
    "num_words",
    "popcount64",
    "ctz64",
    "pack_rows",
    "unpack_rows",
    "pack_csc_columns",
    "rref_packed",
    "csc_column_rank",
    "gf2_rref",
    "gf2_rank",
    "gf2_row_basis",
    "gf2_nullspace",
]

_ONE = np.uint64(1)


def num_words(nbits: int) -> int:
    """Number of uint64 words holding ``nbits`` bits (at least 1, so buffers are never empty)."""
    return max(1, (int(nbits) + 63) // 64)


@numba.njit(cache=True, nogil=True, inline="always")
def popcount64(x):
    """Number of set bits of a uint64 (SWAR; no hardware intrinsic needed)."""
    x = np.uint64(x)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


def _trailing_zeros64(x):
    """Trailing zero bits of the uint64 ``x`` (64 for 0), as LLVM's ``cttz``. The Python body is the
    reference; jitted code runs numba's ``trailing_zeros`` intrinsic (:func:`_trailing_zeros64_overload`)."""
    x = int(x) & 0xFFFFFFFFFFFFFFFF
    return np.uint64((x & -x).bit_length() - 1 if x else 64)


@overload(_trailing_zeros64, inline="always", jit_options={"cache": True})
def _trailing_zeros64_overload(x):
    """numba's ``trailing_zeros`` intrinsic (LLVM ``cttz``, defined at 0) for jitted callers."""
    return lambda x: trailing_zeros(x)


@numba.njit(cache=True, nogil=True, inline="always")
def ctz64(x):
    """Index of the lowest set bit of a nonzero uint64."""
    return np.int64(_trailing_zeros64(np.uint64(x)))


@numba.njit(cache=True, nogil=True)
def pack_rows(a, out):
    """Pack a 0/1 ``(r, c)`` uint8 array into ``out`` ``(r, ceil(c/64))`` uint64 (overwritten)."""
    r, c = a.shape
    out[:, :] = 0
    for i in range(r):
        for j in range(c):
            if a[i, j] & 1:
                out[i, j >> 6] |= _ONE << np.uint64(j & 63)


@numba.njit(cache=True, nogil=True)
def unpack_rows(packed, out):
    """Unpack ``packed`` ``(r, W)`` uint64 into the 0/1 uint8 array ``out`` ``(r, c)``."""
    r, c = out.shape
    for i in range(r):
        for j in range(c):
            out[i, j] = np.uint8((packed[i, j >> 6] >> np.uint64(j & 63)) & _ONE)


@numba.njit(cache=True, nogil=True)
def pack_csc_columns(col_ptr, row_idx, out):
    """Packed columns of a CSC 0/1 matrix: ``out[j]`` holds column ``j`` as an m-bit vector.

    Args:
        col_ptr: ``(n + 1,)`` column pointers.
        row_idx: row indices (duplicates cancel mod 2).
        out: ``(n, ceil(m/64))`` uint64, overwritten.
    """
    n = col_ptr.shape[0] - 1
    out[:, :] = 0
    for j in range(n):
        for e in range(col_ptr[j], col_ptr[j + 1]):
            i = row_idx[e]
            out[j, i >> 6] ^= _ONE << np.uint64(i & 63)


@numba.njit(cache=True, nogil=True)
def pivot_on_column(rows, rank, col):
    """One Gauss-Jordan step: make ``col`` a pivot of row ``rank`` if a row ``>= rank`` has it.

    Swaps the first such row into position ``rank`` and clears ``col`` from every other
    row. Returns True when a pivot was found (the caller then increments ``rank``).

    Args:
        rows: ``(r, W)`` uint64 packed rows (modified).
        rank: rows ``< rank`` already hold pivots.
        col: the bit column to eliminate.
    """
    r = rows.shape[0]
    nw = rows.shape[1]
    w = col >> 6
    b = _ONE << np.uint64(col & 63)
    sel = -1
    for i in range(rank, r):
        if rows[i, w] & b:
            sel = i
            break
    if sel < 0:
        return False
    if sel != rank:
        for q in range(nw):
            tmp = rows[sel, q]
            rows[sel, q] = rows[rank, q]
            rows[rank, q] = tmp
    for i in range(r):
        if i != rank and (rows[i, w] & b):
            for q in range(nw):
                rows[i, q] ^= rows[rank, q]
    return True


@numba.njit(cache=True, nogil=True)
def rref_packed(rows, ncols, pivots):
    """Reduced row echelon form in place; returns the rank.

    After the call the first ``rank`` rows are the nonzero RREF rows, ``pivots[t]`` is
    row ``t``'s pivot column (increasing in ``t``), every pivot column has a single 1,
    and rows ``rank:`` are zero.

    Args:
        rows: ``(r, W)`` uint64 packed rows (modified).
        ncols: number of meaningful bit columns.
        pivots: ``(>= min(r, ncols),)`` int64, receives the pivot columns.
    """
    r = rows.shape[0]
    rank = 0
    for col in range(ncols):
        if rank == r:
            break
        if pivot_on_column(rows, rank, col):
            pivots[rank] = col
            rank += 1
    return rank


@numba.njit(cache=True, nogil=True)
def csc_column_rank(col_ptr, row_idx, colbits):
    """Rank of a sparse 0/1 matrix from its CSC arrays and packed columns (:func:`pack_csc_columns`).

    Incremental elimination against a fully reduced column basis: each basis vector owns
    one pivot row and is zero on the others, so reducing a column costs one XOR per pivot
    row it touches. Allocates its basis (``min(m, n)`` packed vectors).
    """
    n = colbits.shape[0]
    W = colbits.shape[1]
    m = W * 64
    cap = min(m, n)
    basis = np.zeros((max(1, cap), W), dtype=np.uint64)
    t_of_row = np.full(m, -1, dtype=np.int64)
    v = np.zeros(W, dtype=np.uint64)
    r = 0
    for j in range(n):
        if r == cap:
            break
        for q in range(W):
            v[q] = colbits[j, q]
        for e in range(col_ptr[j], col_ptr[j + 1]):
            t = t_of_row[row_idx[e]]
            if t >= 0:
                for q in range(W):
                    v[q] ^= basis[t, q]
        qw = -1
        for q in range(W):
            if v[q] != 0:
                qw = q
                break
        if qw < 0:
            continue
        prow = (qw << 6) + ctz64(v[qw])
        qb = _ONE << np.uint64(prow & 63)
        for u in range(r):
            if basis[u, qw] & qb:
                for q in range(W):
                    basis[u, q] ^= v[q]
        for q in range(W):
            basis[r, q] = v[q]
        t_of_row[prow] = r
        r += 1
    return r


# ------------------------------------------------------------- Python helpers


def _packed_copy(matrix: np.ndarray) -> tuple[np.ndarray, int]:
    a = np.ascontiguousarray(np.asarray(matrix) & 1, dtype=np.uint8)
    if a.ndim != 2:
        raise ValueError(f"expected a 2-D 0/1 matrix, got shape {a.shape}")
    packed = np.zeros((a.shape[0], num_words(a.shape[1])), dtype=np.uint64)
    pack_rows(a, packed)
    return packed, a.shape[1]


def _rref_copy(matrix: np.ndarray) -> tuple[np.ndarray, int, np.ndarray, int]:
    """``(packed, ncols, pivots buffer, rank)``: a packed copy of ``matrix`` reduced to RREF."""
    if hasattr(matrix, "toarray"):
        matrix = matrix.toarray()
    packed, ncols = _packed_copy(matrix)
    piv = np.zeros(max(1, min(packed.shape[0], ncols)), dtype=np.int64)
    return packed, ncols, piv, int(rref_packed(packed, ncols, piv))


def gf2_rref(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reduced row echelon form of a dense 0/1 matrix (or anything with ``.toarray()``).

    Returns:
        ``(R, pivots)``: ``R`` the ``(m, n)`` uint8 RREF (rows ``0..rank-1`` nonzero, the rest
        zero) and ``pivots`` the int64 pivot column of each nonzero row, increasing. The RREF is
        unique, so any correct elimination returns these same arrays.
    """
    packed, ncols, piv, rank = _rref_copy(matrix)
    R = np.zeros((packed.shape[0], ncols), dtype=np.uint8)
    unpack_rows(packed[:rank], R[:rank])
    return R, piv[:rank].copy()


def gf2_rank(matrix: np.ndarray) -> int:
    """Rank over GF(2) of a dense 0/1 matrix (or anything with ``.toarray()``)."""
    return _rref_copy(matrix)[3]


def gf2_row_basis(matrix: np.ndarray) -> np.ndarray:
    """RREF basis of the row space: ``(rank, n)`` uint8."""
    R, pivots = gf2_rref(matrix)
    return R[: pivots.size].copy()


def gf2_nullspace(matrix: np.ndarray) -> np.ndarray:
    """Basis of ``{x : matrix @ x = 0 mod 2}`` as rows: ``(n - rank, n)`` uint8.

    Row ``f`` has a 1 at the ``f``-th free (non-pivot) column of the RREF and at the
    pivot columns that cancel it.
    """
    R, pivots = gf2_rref(matrix)
    n = R.shape[1]
    free = np.setdiff1d(np.arange(n), pivots)
    N = np.zeros((free.size, n), dtype=np.uint8)
    N[np.arange(free.size), free] = 1
    if pivots.size:
        # x[pivots[i]] = sum_f R[i, f] x[f] for every free column f.
        N[:, pivots] = R[: pivots.size][:, free].T
    return N
