"""Hypergraph-product (HGP) codes (Tillich & Zemor, IEEE TIT 60, 1193 (2014), arXiv:0903.0566).

From classical parity-check matrices ``H1`` (``m1 x n1``) and ``H2`` (``m2 x n2``)::

    H_X = [ H1 (x) I_{n2} | I_{m1} (x) H2^T ]      (m1 n2 rows)
    H_Z = [ I_{n1} (x) H2 | H1^T (x) I_{m2} ]      (n1 m2 rows)

    n = n1 n2 + m1 m2,   k = k1 k2 + k1' k2'

with ``k_i = dim ker H_i`` and ``k_i' = dim ker H_i^T``. ``H_X H_Z^T = H1 (x) H2^T + H1 (x) H2^T = 0``.
Qubits ``0 .. n1 n2 - 1`` are the "bit x bit" sector (index ``i n2 + j``), the rest the
"check x check" sector (index ``n1 n2 + a m2 + b``). The distances are
``d_X = min(d1', d2)`` and ``d_Z = min(d1, d2')`` (a zero-dimensional code counts as infinite).
"""

from __future__ import annotations

import numpy as np

from qdecode.errors import InputError

from . import gf2
from .css import CSSCode

__all__ = ["hamming_parity_check", "repetition_parity_check", "hypergraph_product", "hgp_hamming7"]

_TZ = "Tillich & Zemor, arXiv:0903.0566"


def hamming_parity_check(r: int = 3) -> np.ndarray:
    """``(r, 2^r - 1)`` uint8 parity-check matrix of the ``[2^r - 1, 2^r - 1 - r, 3]`` Hamming code.

    Column ``j`` is the binary expansion of ``j + 1`` (least significant bit in row 0), so the
    matrix has full rank ``r``; ``r = 3`` gives the ``[7, 4, 3]`` code.
    """
    r = int(r)
    if r < 2:
        raise InputError(f"Hamming code needs r >= 2, got r={r}")
    cols = np.arange(1, 2**r)
    return ((cols[None, :] >> np.arange(r)[:, None]) & 1).astype(np.uint8)


def repetition_parity_check(n: int, *, cyclic: bool = False) -> np.ndarray:
    """Parity checks ``x_i + x_{i+1}`` of the length-``n`` repetition code.

    Args:
        n: length, ``>= 2``.
        cyclic: add the wrap-around check ``x_{n-1} + x_0`` (the "ring" code: ``n x n``, rank ``n - 1``,
            so both ``ker H`` and ``ker H^T`` have dimension 1); otherwise ``(n - 1, n)``, full rank.
    """
    n = int(n)
    if n < 2:
        raise InputError(f"repetition code needs length n >= 2, got n={n}")
    rows = n if cyclic else n - 1
    H = np.zeros((rows, n), dtype=np.uint8)
    i = np.arange(rows)
    H[i, i] = 1
    H[i, (i + 1) % n] = 1
    return H


def hypergraph_product(
    h1: np.ndarray,
    h2: np.ndarray | None = None,
    *,
    name: str = "",
    d: int | None = None,
    provenance: str = _TZ,
) -> CSSCode:
    """The hypergraph product of two classical codes.

    Args:
        h1: ``(m1, n1)`` 0/1 parity-check matrix.
        h2: ``(m2, n2)`` 0/1 parity-check matrix (default: ``h1``).
        name: catalogue name (default ``"hgp"``).
        d: stated distance (not computed here).
        provenance: citation string.

    Returns:
        :class:`CSSCode` with ``hx`` ``(m1 n2, n)``, ``hz`` ``(n1 m2, n)``, ``n = n1 n2 + m1 m2``;
        ``meta = {"h1", "h2"}``.

    Examples:
        >>> c = hypergraph_product(hamming_parity_check(3))
        >>> c.n, c.k
        (58, 16)
    """
    H1 = gf2.as_gf2(h1, "h1")
    H2 = H1 if h2 is None else gf2.as_gf2(h2, "h2")
    (m1, n1), (m2, n2) = H1.shape, H2.shape
    hx = np.hstack([np.kron(H1, np.eye(n2, dtype=np.uint8)), np.kron(np.eye(m1, dtype=np.uint8), H2.T)])
    hz = np.hstack([np.kron(np.eye(n1, dtype=np.uint8), H2), np.kron(H1.T, np.eye(m2, dtype=np.uint8))])
    return CSSCode(hx=hx, hz=hz, d=d, name=name or "hgp", provenance=provenance, meta={"h1": H1, "h2": H2})


def hgp_hamming7() -> CSSCode:
    """``HGP(H, H)`` for the ``[7, 4, 3]`` Hamming code: ``[[58, 16, 3]]`` (``d = 3`` in both bases).

    ``k = 4 * 4 + 0 * 0`` (``H`` is ``3 x 7`` of full rank, so ``ker H^T = 0``) and
    ``d_X = d_Z = min(d(H), infinity) = 3``; the MILP of :mod:`qdecode.codes.distance` confirms it.
    """
    return hypergraph_product(hamming_parity_check(3), name="hgp58_16_3", d=3)
