"""Dense linear algebra over GF(2) for code construction.

All functions take and return ``uint8`` arrays whose entries are 0 or 1. This module validates
its input (:func:`as_gf2`) and adds what only code construction needs (:func:`inverse`,
:func:`in_rowspace`, :func:`independent_rows_modulo`); elimination, rank, row basis and
nullspace are computed once, by the bit-packed numba kernels of :mod:`qdecode.kernels.gf2`
(a ``(288, 576)`` matrix reduces in well under a millisecond).
"""

from __future__ import annotations

import numpy as np

from qdecode.errors import InputError
from qdecode.kernels import gf2 as _kernel

__all__ = [
    "as_gf2",
    "row_reduce",
    "rank",
    "nullspace",
    "rowspace_basis",
    "inverse",
    "in_rowspace",
    "independent_rows_modulo",
]


def as_gf2(matrix: object, name: str = "matrix") -> np.ndarray:
    """Return ``matrix`` as a 2-D ``uint8`` array of entries reduced mod 2.

    Args:
        matrix: array-like of integers (or bools).
        name: used in error messages.

    Returns:
        ``uint8`` array with the same shape, entries in {0, 1}; always a copy.

    Raises:
        ValueError: the input is not 2-D or holds non-integer values.
    """
    arr = np.asarray(matrix)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise InputError(f"{name} must be 2-D, got shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise InputError(f"{name} must hold integers, got non-integer entries")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "biu":
        raise InputError(f"{name} must be an integer or boolean array, got dtype {arr.dtype}")
    return (arr.astype(np.int64) & 1).astype(np.uint8)


def row_reduce(matrix: object, *, full: bool = True) -> tuple[np.ndarray, list[int]]:
    """Gaussian elimination over GF(2) (:func:`qdecode.kernels.gf2.gf2_rref`).

    Args:
        matrix: ``(m, n)`` 0/1 array-like.
        full: kept for compatibility. The result is always the reduced row echelon form
            (every pivot column has a single 1), which is also a row echelon form.

    Returns:
        ``(R, pivots)``: ``R`` is the ``(m, n)`` ``uint8`` echelon form (rows
        ``0..len(pivots)-1`` nonzero, the rest zero) and ``pivots`` the pivot
        column of each nonzero row, increasing.
    """
    del full
    R, pivots = _kernel.gf2_rref(as_gf2(matrix))
    return R, [int(c) for c in pivots]


def rank(matrix: object) -> int:
    """Rank over GF(2) of a ``(m, n)`` 0/1 matrix."""
    return _kernel.gf2_rank(as_gf2(matrix))


def rowspace_basis(matrix: object) -> np.ndarray:
    """Independent rows spanning the row space: ``(rank, n)`` ``uint8`` (RREF rows)."""
    return _kernel.gf2_row_basis(as_gf2(matrix))


def nullspace(matrix: object) -> np.ndarray:
    """Basis of the right kernel ``{x : M x = 0 (mod 2)}``.

    Args:
        matrix: ``(m, n)`` 0/1 array-like.

    Returns:
        ``(n - rank, n)`` ``uint8`` array whose rows form a basis of the kernel (the one
        :func:`qdecode.kernels.gf2.gf2_nullspace` builds from the RREF).
    """
    return _kernel.gf2_nullspace(as_gf2(matrix))


def inverse(matrix: object) -> np.ndarray:
    """Inverse of a square invertible matrix over GF(2).

    Raises:
        ValueError: the matrix is not square or is singular (the rank is given).
    """
    A = as_gf2(matrix)
    k, k2 = A.shape
    if k != k2:
        raise InputError(f"inverse needs a square matrix, got shape {A.shape}")
    R, piv = row_reduce(np.hstack([A, np.eye(k, dtype=np.uint8)]))
    if len(piv) < k or piv[k - 1] >= k:
        raise InputError(f"matrix is singular over GF(2): rank {rank(A)} < {k}")
    return R[:, k:].copy()


def in_rowspace(basis_rref: np.ndarray, pivots: list[int], vectors: object) -> np.ndarray:
    """Which of ``vectors`` lie in the row space of an RREF basis.

    Args:
        basis_rref: ``(r, n)`` RREF rows (as returned by :func:`row_reduce`, zero rows dropped).
        pivots: the pivot columns of ``basis_rref``.
        vectors: ``(s, n)`` 0/1 vectors.

    Returns:
        ``(s,)`` bool array.
    """
    V = as_gf2(vectors).copy()
    for i, c in enumerate(pivots):
        mask = V[:, c].astype(bool)
        if mask.any():
            V[mask] ^= basis_rref[i]
    return ~V.any(axis=1)


def independent_rows_modulo(base: object, candidates: object) -> np.ndarray:
    """Greedily pick rows of ``candidates`` independent modulo ``rowspace(base)``.

    Args:
        base: ``(r, n)`` 0/1 rows spanning the subspace to quotient by.
        candidates: ``(s, n)`` 0/1 rows.

    Returns:
        ``(t, n)`` ``uint8``: the selected candidate rows (original, unreduced),
        such that ``base`` plus the selection has rank ``rank(base) + t`` and
        every candidate lies in their span.
    """
    B = as_gf2(base)
    C = as_gf2(candidates)
    n = C.shape[1]
    R, piv = row_reduce(B)
    R = R[: len(piv)]
    # Incremental echelon basis as a dict pivot -> row (reduced to the current basis).
    rows = list(R)
    pivs = list(piv)
    chosen = []
    for idx in range(C.shape[0]):
        v = C[idx].copy()
        for r, c in zip(rows, pivs):
            if v[c]:
                v ^= r
        nz = np.flatnonzero(v)
        if nz.size == 0:
            continue
        c = int(nz[0])
        # Keep the basis in reduced form on pivot columns so later reductions are one pass.
        for j, r in enumerate(rows):
            if r[c]:
                rows[j] = r ^ v
        rows.append(v)
        pivs.append(c)
        chosen.append(idx)
    if not chosen:
        return np.zeros((0, n), dtype=np.uint8)
    return C[chosen].copy()
