"""Generalized bicycle (GB) codes (Kovalev & Pryadko, PRA 88, 012311 (2013), arXiv:1212.6703).

Polynomials live in the ring ``R_l = F2[x] / (x^l - 1)`` and are given as exponent lists
(``(0, 2, 8, 15)`` is ``1 + x^2 + x^8 + x^15``). A polynomial ``a`` lifts to the ``l x l``
circulant :func:`circulant` ``C_a`` with ``C_a[r, c] = 1`` iff ``r - c`` is an exponent of ``a``
(mod ``l``); the lift is a ring homomorphism (``C_a C_b = C_{ab}``), so circulants commute and
``a(x^-1)`` lifts to ``C_a^T``. With ``A = C_a`` and ``B = C_b``::

    H_X = [A | B],   H_Z = [B^T | A^T],   n = 2 l,   H_X H_Z^T = AB + BA = 0

and ``k = 2 deg gcd(a, b, x^l - 1)`` (:func:`gb_dimension`; Kovalev & Pryadko, ibid.).
Coprime bivariate-bicycle codes (Wang & Mueller, arXiv:2408.10001) are GB codes in the
generator ``pi = xy`` of ``Z_l x Z_m = Z_{lm}`` when ``gcd(l, m) = 1``; two of them are listed
in :data:`GB_INSTANCES` with exponents in ``pi``.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from qdecode.errors import InputError

from .css import CSSCode

__all__ = ["circulant", "exponents", "gb_code", "gb_dimension", "GBInstance", "GB_INSTANCES", "gb_instance"]

_KP = "Kovalev & Pryadko, PRA 88, 012311 (2013), arXiv:1212.6703"
_PK = "Panteleev & Kalachev, Quantum 5, 585 (2021), arXiv:1904.02703"
_WM = "Wang & Mueller, arXiv:2408.10001"


def exponents(poly: Sequence[int], l: int, what: str = "polynomial") -> tuple[int, ...]:
    """Exponents of a polynomial in F2[x]/(x^l - 1), reduced mod ``l``; a repeated exponent cancels
    (coefficients are in F2). ``what`` names the polynomial in the ``ValueError`` a bad entry raises.
    Shared with :mod:`qdecode.codes.lifted_product` (ring entries)."""
    if isinstance(poly, (str, bytes)):
        raise InputError(f"{what} must be a list of exponents such as (0, 2, 8), got {poly!r}")
    odd: set[int] = set()
    for e in poly:
        if isinstance(e, bool) or int(e) != e:
            raise InputError(f"{what}: exponents must be integers, got {e!r}")
        odd ^= {int(e) % l}
    return tuple(sorted(odd))


def circulant(poly: Sequence[int], l: int) -> np.ndarray:
    """The ``(l, l)`` uint8 circulant of ``sum_e x^e``: entry ``[r, c]`` is 1 iff ``r - c = e (mod l)``.

    Args:
        poly: exponents (any integers; reduced mod ``l``, repeats cancel in pairs).
        l: ring size, ``>= 1``.

    Examples:
        >>> circulant([1], 3)
        array([[0, 0, 1],
               [1, 0, 0],
               [0, 1, 0]], dtype=uint8)
    """
    l = int(l)
    if l < 1:
        raise InputError(f"ring size l must be >= 1, got {l}")
    coeff = np.zeros(l, dtype=np.uint8)
    coeff[list(exponents(poly, l))] = 1
    r, c = np.indices((l, l))
    return coeff[(r - c) % l]


def _poly_int(exps: Sequence[int]) -> int:
    """A binary polynomial as an int whose bit ``e`` is the coefficient of ``x^e``."""
    v = 0
    for e in exps:
        v ^= 1 << e
    return v


def _poly_mod(a: int, b: int) -> int:
    db = b.bit_length()
    while a.bit_length() >= db:
        a ^= b << (a.bit_length() - db)
    return a


def _poly_gcd(a: int, b: int) -> int:
    while b:
        a, b = b, _poly_mod(a, b)
    return a


def gb_dimension(a: Sequence[int], b: Sequence[int], l: int) -> int:
    """``k = 2 deg gcd(a(x), b(x), x^l - 1)`` of the GB code (an independent check of the rank count)."""
    g = _poly_gcd(_poly_gcd(_poly_int(exponents(a, l)), _poly_int(exponents(b, l))), (1 << l) | 1)
    return 2 * (g.bit_length() - 1)


def gb_code(
    a: Sequence[int],
    b: Sequence[int],
    l: int,
    *,
    name: str = "",
    d: int | None = None,
    provenance: str = _KP,
) -> CSSCode:
    """The GB code ``H_X = [C_a | C_b]``, ``H_Z = [C_b^T | C_a^T]`` (``n = 2 l``).

    Args:
        a, b: exponent lists of ``a(x)``, ``b(x)`` in ``F2[x]/(x^l - 1)``.
        l: circulant size.
        name: catalogue name (default ``gb_<l>_...``).
        d: stated distance (not computed here; see :func:`qdecode.codes.distance.css_distance`).
        provenance: citation string.

    Returns:
        :class:`CSSCode` with ``hx``, ``hz`` of shape ``(l, 2l)`` and ``meta = {"l", "a", "b"}``.

    Examples:
        >>> c = gb_code([0, 2, 8, 15], [0, 2, 12, 17], 24)
        >>> c.n, c.k
        (48, 6)
    """
    ea, eb = exponents(a, l, "a"), exponents(b, l, "b")
    A, B = circulant(ea, l), circulant(eb, l)
    hx = np.hstack([A, B])
    hz = np.hstack([B.T, A.T])
    return CSSCode(hx=hx, hz=hz, d=d, name=name or f"gb_{l}_{'-'.join(map(str, ea))}_{'-'.join(map(str, eb))}",
                   provenance=provenance, meta={"l": int(l), "a": ea, "b": eb})


@dataclasses.dataclass(frozen=True)
class GBInstance:
    """A published GB code: polynomials and the parameters the catalogue states.

    Attributes:
        l, a, b: ring size and exponent lists.
        n, k, d: parameters (``d`` ``None`` where only bounds are published).
        provenance: the paper the polynomials come from.
        d_source: where ``d`` comes from (``"exact: MILP ..."`` or ``"cited: ..."``).
    """

    l: int
    a: tuple[int, ...]
    b: tuple[int, ...]
    n: int
    k: int
    d: int | None
    provenance: str
    d_source: str


_MILP = "exact: MILP (codes/distance.py)"

#: Published GB instances; ``k`` recomputed by rank in the tests, ``d`` by the MILP of
#: :mod:`qdecode.codes.distance` where ``d_source`` says "exact".
GB_INSTANCES: dict[str, GBInstance] = {
    # Panteleev & Kalachev, arXiv:1904.02703, Appendix A (examples A3, A4, A2, A1).
    "gb48_6_8": GBInstance(24, (0, 2, 8, 15), (0, 2, 12, 17), 48, 6, 8, _PK, _MILP),
    "gb46_2_9": GBInstance(23, (0, 5, 8, 12), (0, 1, 5, 7), 46, 2, 9, _PK, _MILP),
    "gb126_28_8": GBInstance(63, (0, 1, 14, 16, 22), (0, 3, 13, 20, 42), 126, 28, 8, _PK, _MILP),
    "gb254_28": GBInstance(127, (0, 15, 20, 28, 66), (0, 58, 59, 100, 121), 254, 28, None, _PK,
                           "cited: 14 <= d <= 20, arXiv:1904.02703 (not computed)"),
    # Coprime-BB codes of Wang & Mueller, arXiv:2408.10001, as GB codes in pi = xy (l' = lm).
    "cbb30_4_6": GBInstance(15, (0, 1, 2), (1, 3, 8), 30, 4, 6, _WM, _MILP),
    "cbb42_6_6": GBInstance(21, (0, 2, 3), (1, 3, 11), 42, 6, 6, _WM, _MILP),
}


def gb_instance(name: str) -> CSSCode:
    """Build a code of :data:`GB_INSTANCES` by name (its stated ``d`` attached)."""
    try:
        g = GB_INSTANCES[name]
    except KeyError:
        raise InputError(f"unknown GB instance {name!r}; known: {', '.join(GB_INSTANCES)}") from None
    return gb_code(g.a, g.b, g.l, name=name, d=g.d, provenance=g.provenance)
