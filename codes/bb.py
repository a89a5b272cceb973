"""Bivariate-bicycle (BB) codes (Bravyi et al., Nature 627, 778 (2024), arXiv:2308.07915).

With ``S_l`` the ``l x l`` cyclic shift (``S[i, (i+1) % l] = 1``), ``x = S_l (x) I_m`` and
``y = I_l (x) S_m`` are commuting ``lm x lm`` permutation matrices. Given two sums
of three monomials ``A = A1 + A2 + A3`` and ``B = B1 + B2 + B3``::

    H_X = [A | B],   H_Z = [B^T | A^T],   n = 2 l m

Qubit ``j < lm`` is a "left" data qubit, ``lm + j`` a "right" one. Every check has
weight 6 and every qubit is in 3 X and 3 Z checks. The shift direction matches
IBM's published stim circuits (the opposite convention gives an equivalent code).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence, Union

import numpy as np

from qdecode.errors import InputError

from .css import CSSCode

__all__ = ["Monomial", "BBSpec", "parse_monomial", "monomial_matrix", "bb_matrices", "bb_code"]

Monomial = tuple[int, int]
MonomialLike = Union[str, Sequence[int]]

_TERM = re.compile(r"^\s*(?:1|([xy])(?:\^(\d+))?(?:\s*\*?\s*([xy])(?:\^(\d+))?)?)\s*$")


def parse_monomial(term: MonomialLike) -> Monomial:
    """Parse ``"x^3"``, ``"y"``, ``"x^2y^3"``, ``"x*y^2"``, ``"1"`` or ``(a, b)`` into ``(a, b)`` = x^a y^b.

    Raises:
        ValueError: the term is not a monomial in x and y.
    """
    if not isinstance(term, str):
        a, b = (int(v) for v in term)
        if a < 0 or b < 0:
            raise InputError(f"monomial exponents must be >= 0, got {tuple(term)!r}")
        return a, b
    m = _TERM.match(term)
    if not m:
        raise InputError(f"cannot parse monomial {term!r}; use forms like 'x^3', 'y', 'x^2y', '1'")
    exps = {"x": 0, "y": 0}
    for var, e in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
        if var is None:
            continue
        if exps[var]:
            raise InputError(f"variable {var!r} appears twice in monomial {term!r}")
        exps[var] = int(e) if e is not None else 1
    return exps["x"], exps["y"]


def _shift(size: int, power: int) -> np.ndarray:
    return np.roll(np.eye(size, dtype=np.uint8), power % size, axis=1)


def monomial_matrix(l: int, m: int, term: MonomialLike) -> np.ndarray:
    """The ``(l*m, l*m)`` uint8 permutation matrix of ``x^a y^b``."""
    a, b = parse_monomial(term)
    return np.kron(_shift(l, a), _shift(m, b)).astype(np.uint8)


@dataclasses.dataclass(frozen=True)
class BBSpec:
    """The parameters of a BB code, kept in ``CSSCode.meta`` for the circuit builder.

    Attributes:
        l, m: the torus sizes.
        A_terms, B_terms: the three monomials of A and of B, as ``(a, b)`` = x^a y^b, in order.
        A, B: three ``(lm, lm)`` uint8 matrices each (A1, A2, A3) and (B1, B2, B3).
    """

    l: int
    m: int
    A_terms: tuple[Monomial, ...]
    B_terms: tuple[Monomial, ...]
    A: tuple[np.ndarray, ...]
    B: tuple[np.ndarray, ...]

    @property
    def half(self) -> int:
        """``l * m``: number of left (= right) data qubits and of X (= Z) checks."""
        return self.l * self.m

    def polynomial_str(self) -> str:
        """Human-readable ``A=...,B=...`` string."""
        return f"A={_poly_str(self.A_terms)},B={_poly_str(self.B_terms)}"


def _poly_str(terms: Sequence[Monomial]) -> str:
    out = []
    for a, b in terms:
        s = "".join(
            v if e == 1 else f"{v}^{e}" for v, e in (("x", a), ("y", b)) if e
        )
        out.append(s or "1")
    return "+".join(out)


def bb_matrices(
    l: int, m: int, A_terms: Sequence[MonomialLike], B_terms: Sequence[MonomialLike]
) -> BBSpec:
    """Per-monomial matrices A1..A3, B1..B3 of a BB code.

    Raises:
        ValueError: ``l`` or ``m`` < 1, or A / B is not exactly three distinct monomials.
    """
    if int(l) < 1 or int(m) < 1:
        raise InputError(f"l and m must be positive, got l={l}, m={m}")
    l, m = int(l), int(m)
    parsed = []
    for name, terms in (("A", A_terms), ("B", B_terms)):
        ts = tuple(parse_monomial(t) for t in terms)
        if len(ts) != 3:
            raise InputError(f"{name} must have exactly 3 monomials, got {len(ts)}: {list(terms)!r}")
        reduced = {(a % l, b % m) for a, b in ts}
        if len(reduced) != 3:
            raise InputError(f"{name}'s monomials {list(terms)!r} are not distinct modulo (l={l}, m={m})")
        parsed.append(ts)
    A = tuple(monomial_matrix(l, m, t) for t in parsed[0])
    B = tuple(monomial_matrix(l, m, t) for t in parsed[1])
    return BBSpec(l=l, m=m, A_terms=parsed[0], B_terms=parsed[1], A=A, B=B)


def bb_code(
    l: int,
    m: int,
    A_terms: Sequence[MonomialLike],
    B_terms: Sequence[MonomialLike],
    *,
    name: str = "",
    d: int | None = None,
    provenance: str = "Bravyi et al., Nature 627, 778 (2024), arXiv:2308.07915",
) -> CSSCode:
    """Build the BB code ``H_X = [A|B]``, ``H_Z = [B^T|A^T]``.

    Args:
        l, m: torus sizes (``n = 2 l m``).
        A_terms, B_terms: three monomials each, e.g. ``["x^3", "y", "y^2"]`` or ``[(3, 0), (0, 1), (0, 2)]``.
        name: catalogue name.
        d: stated distance (not computed).
        provenance: citation string.

    Returns:
        A :class:`CSSCode` whose ``meta`` is the :class:`BBSpec` (per-monomial matrices).

    Examples:
        >>> c = bb_code(6, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], d=6)
        >>> c.n, c.k, c.d
        (72, 12, 6)
    """
    spec = bb_matrices(l, m, A_terms, B_terms)
    A = (spec.A[0] ^ spec.A[1] ^ spec.A[2]).astype(np.uint8)
    B = (spec.B[0] ^ spec.B[1] ^ spec.B[2]).astype(np.uint8)
    hx = np.hstack([A, B])
    hz = np.hstack([B.T, A.T])
    return CSSCode(hx=hx, hz=hz, d=d, name=name or f"bb_{l}x{m}_{spec.polynomial_str()}",
                   provenance=provenance, meta=spec)
