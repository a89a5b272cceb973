"""Lifted-product (LP) codes over the cyclic group algebra (Panteleev & Kalachev, arXiv:2012.04068).

Entries live in ``R_l = F2[Z_l] = F2[x] / (x^l - 1)``. A matrix over ``R_l`` is stored as a
``(rows, cols, l)`` uint8 array of coefficients (``P[i, j, e]`` is the coefficient of ``x^e`` in
entry ``(i, j)``), built by :func:`poly_matrix` from exponent lists. For ``A`` (``mA x nA``)
and ``B`` (``mB x nB``) over ``R_l``::

    H_X = [ A (x) I_{mB} | I_{mA} (x) B  ]          (mA mB block rows)
    H_Z = [ I_{nA} (x) B* | A* (x) I_{nB} ]         (nA nB block rows)

where ``M*`` is the conjugate transpose (transpose, and ``x^e -> x^{-e}`` in every entry). Every
entry is then lifted to its ``l x l`` circulant (:func:`qdecode.codes.bicycle.circulant`), so
``n = l (nA mB + mA nB)``. The lift is a ring homomorphism with ``lift(M*) = lift(M)^T`` and
``R_l`` is commutative, hence ``H_X H_Z^T = A (x) B + A (x) B = 0``. Special cases: ``l = 1`` is
the hypergraph product ``HGP(A, B^T)`` of :mod:`qdecode.codes.hgp`; ``B = (b)`` (1 x 1) is the
generalized hypergraph product (GHP) of Panteleev & Kalachev, Quantum 5, 585 (2021),
arXiv:1904.02703, ``H_X = [A | b I]``, ``H_Z = [b* I | A*]``; ``A = (a)``, ``B = (b)`` is the
generalized bicycle code.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence, Union

import numpy as np

from qdecode.errors import InputError

from .bicycle import circulant, exponents
from .css import CSSCode

__all__ = [
    "poly_matrix", "conjugate_transpose", "lift", "lifted_product_code", "LPInstance", "LP_INSTANCES",
    "lp_instance",
]

_PK_LP = "Panteleev & Kalachev, IEEE TIT 68, 213 (2022), arXiv:2012.04068"
_PK_GHP = "Panteleev & Kalachev, Quantum 5, 585 (2021), arXiv:1904.02703"

#: One ring entry: ``None`` / ``()`` for 0, an int for a monomial, or a list of exponents.
Entry = Union[None, int, Sequence[int]]


def poly_matrix(entries: Sequence[Sequence[Entry]], l: int) -> np.ndarray:
    """A matrix over ``F2[x]/(x^l - 1)`` from exponent lists.

    Args:
        entries: rows of entries; each entry is ``None`` or ``()`` (zero), an int ``e`` (``x^e``)
            or a list of exponents (their sum).
        l: ring size.

    Returns:
        ``(rows, cols, l)`` uint8 coefficient array.

    Raises:
        ValueError: ragged rows, no entries, or non-integer exponents.
    """
    rows = [list(r) for r in entries]
    if not rows or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise InputError("a polynomial matrix needs at least one entry and rows of equal length")
    P = np.zeros((len(rows), len(rows[0]), int(l)), dtype=np.uint8)
    for i, r in enumerate(rows):
        for j, e in enumerate(r):
            exps = () if e is None else (e,) if isinstance(e, (int, np.integer)) else e
            P[i, j, list(exponents(exps, int(l), f"entry ({i}, {j})"))] = 1
    return P


def conjugate_transpose(P: np.ndarray) -> np.ndarray:
    """``P*``: ``(cols, rows, l)``, entry ``(j, i)`` is ``P[i, j](x^{-1})``."""
    l = P.shape[2]
    return np.ascontiguousarray(P.transpose(1, 0, 2)[:, :, (-np.arange(l)) % l])


def _kron_eye(P: np.ndarray, size: int, *, left: bool) -> np.ndarray:
    """``I_size (x) P`` (``left``) or ``P (x) I_size``: the identity's entries are the ring's 1."""
    eye = np.eye(size, dtype=np.uint8)
    slices = [np.kron(eye, P[:, :, e]) if left else np.kron(P[:, :, e], eye) for e in range(P.shape[2])]
    return np.stack(slices, axis=2)


def lift(P: np.ndarray) -> np.ndarray:
    """The binary ``(rows l, cols l)`` uint8 matrix whose block ``(i, j)`` is the circulant of ``P[i, j]``."""
    r, c, l = P.shape
    out = np.zeros((r * l, c * l), dtype=np.uint8)
    for i in range(r):
        for j in range(c):
            exps = np.flatnonzero(P[i, j])
            if exps.size:
                out[i * l:(i + 1) * l, j * l:(j + 1) * l] = circulant(exps, l)
    return out


def lifted_product_code(
    A: np.ndarray | Sequence[Sequence[Entry]],
    B: np.ndarray | Sequence[Sequence[Entry]],
    l: int,
    *,
    name: str = "",
    d: int | None = None,
    provenance: str = _PK_LP,
) -> CSSCode:
    """The lifted product ``LP(A, B)`` over ``F2[x]/(x^l - 1)``.

    Args:
        A: ``(mA, nA, l)`` coefficient array or nested exponent lists (see :func:`poly_matrix`).
        B: likewise, ``(mB, nB)``; ``[[b]]`` gives the GHP code.
        l: ring size (circulant size).
        name: catalogue name (default ``"lp"``).
        d: stated distance (not computed here).
        provenance: citation string.

    Returns:
        :class:`CSSCode` with ``n = l (nA mB + mA nB)``, ``hx`` ``(l mA mB, n)``, ``hz`` ``(l nA nB, n)``;
        ``meta = {"l", "A", "B"}`` (coefficient arrays).

    Examples:
        >>> c = lifted_product_code([[(0, 2, 8, 15)]], [[(0, 2, 12, 17)]], 24)   # = a GB code
        >>> c.n, c.k
        (48, 6)
    """
    PA = A if isinstance(A, np.ndarray) else poly_matrix(A, l)
    PB = B if isinstance(B, np.ndarray) else poly_matrix(B, l)
    if PA.ndim != 3 or PB.ndim != 3 or PA.shape[2] != int(l) or PB.shape[2] != int(l):
        raise InputError(f"A and B must be (rows, cols, l={l}) coefficient arrays, got {PA.shape} and {PB.shape}")
    (mA, nA), (mB, nB) = PA.shape[:2], PB.shape[:2]
    hx = np.hstack([lift(_kron_eye(PA, mB, left=False)), lift(_kron_eye(PB, mA, left=True))])
    hz = np.hstack([lift(_kron_eye(conjugate_transpose(PB), nA, left=True)),
                    lift(_kron_eye(conjugate_transpose(PA), nB, left=False))])
    return CSSCode(hx=hx, hz=hz, d=d, name=name or "lp", provenance=provenance,
                   meta={"l": int(l), "A": PA, "B": PB})


def _circulant_blocks(first_row: Sequence[Entry]) -> list[list[Entry]]:
    """A square matrix over ``R_l`` with row ``i`` = ``first_row`` shifted right by ``i``."""
    s = len(first_row)
    return [[first_row[(j - i) % s] for j in range(s)] for i in range(s)]


@dataclasses.dataclass(frozen=True)
class LPInstance:
    """A published LP / GHP code.

    Attributes:
        l: ring size.
        A, B: matrices over ``R_l`` as nested exponent lists.
        n, k, d: stated parameters (``d`` ``None`` where only bounds are published).
        provenance: the paper the matrices come from.
        d_source: where ``d`` comes from.
    """

    l: int
    A: tuple
    B: tuple
    n: int
    k: int
    d: int | None
    provenance: str
    d_source: str


_B_POLY = ((0, 1, 6),)  # b(x) = 1 + x + x^6 (examples B1, B2)

#: Published GHP codes of Panteleev & Kalachev, arXiv:1904.02703, Appendix B (examples B1 - B3);
#: ``k`` is recomputed by rank in the tests, the distances are the paper's (not computed here:
#: far beyond an exact MILP at these lengths).
LP_INSTANCES: dict[str, LPInstance] = {
    "lp882_24": LPInstance(
        63, tuple(map(tuple, _circulant_blocks([27, None, None, None, None, 0, 54]))), (_B_POLY,),
        882, 24, None, _PK_GHP, "cited: 18 <= d <= 24, arXiv:1904.02703 (not computed)"),
    "lp882_48_16": LPInstance(
        63, tuple(map(tuple, _circulant_blocks([27, None, None, 0, 18, 27, 0]))), (_B_POLY,),
        882, 48, 16, _PK_GHP, "cited: arXiv:1904.02703 (not computed)"),
    "lp1270_28": LPInstance(
        127, ((0, None, 51, 52, None), (None, 0, None, 111, 20), (0, None, 98, None, 122),
              (0, 80, None, 119, None), (None, 0, 5, None, 106)), (((0, 1, 7),),),
        1270, 28, None, _PK_GHP, "unknown (not computed)"),
}


def lp_instance(name: str) -> CSSCode:
    """Build a code of :data:`LP_INSTANCES` by name."""
    try:
        g = LP_INSTANCES[name]
    except KeyError:
        raise InputError(f"unknown LP instance {name!r}; known: {', '.join(LP_INSTANCES)}") from None
    return lifted_product_code(g.A, g.B, g.l, name=name, d=g.d, provenance=g.provenance)
