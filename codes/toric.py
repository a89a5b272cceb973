"""Toric code and the bit-flip repetition code as :class:`~qdecode.codes.css.CSSCode` objects.

Toric code (Kitaev, Ann. Phys. 303, 2 (2003), arXiv:quant-ph/9707021) on an ``L x L`` torus, built
as the hypergraph product of two cyclic repetition ("ring") codes (Tillich & Zemor,
arXiv:0903.0566): with ``H`` the ``L x L`` ring-code checks (rank ``L - 1``, one-dimensional
kernel and cokernel) the product has ``n = L^2 + L^2``, ``k = 1 + 1 = 2`` and ``d = L``.
Qubits ``0 .. L^2 - 1`` are the edges of one orientation, ``L^2 .. 2 L^2 - 1`` the other (the two
HGP sectors); ``hx`` and ``hz`` have ``L^2`` rows each, one of each dependent (rank ``L^2 - 1``).

Repetition code: ``hz`` holds the ``n - 1`` checks ``Z_i Z_{i+1}`` and ``hx`` is empty
(``(0, n)``), so ``k = 1`` with ``lx = X^{(x) n}`` (weight ``n``) and ``lz`` a single ``Z``. It
protects against bit flips only: its X distance is ``n`` and its Z distance is 1.
"""

from __future__ import annotations

import numpy as np

from qdecode.errors import InputError

from .css import CSSCode
from .hgp import hypergraph_product, repetition_parity_check

__all__ = ["toric_code", "repetition_code"]


def _size(value: object, what: str) -> int:
    try:
        iv = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{what} must be an integer >= 2, got {value!r}") from None
    if iv != value or iv < 2:
        raise InputError(f"{what} must be an integer >= 2, got {value!r}")
    return iv


def toric_code(L: int) -> CSSCode:
    """The ``[[2 L^2, 2, L]]`` toric code.

    Args:
        L: linear size (= distance), an integer ``>= 2``.

    Returns:
        :class:`CSSCode` named ``"toric"`` with ``hx``, ``hz`` of shape ``(L^2, 2 L^2)``.

    Examples:
        >>> toric_code(3).params
        (18, 2, 3)
    """
    L = _size(L, "toric code size L")
    ring = repetition_parity_check(L, cyclic=True)
    return hypergraph_product(ring, ring, name="toric", d=L,
                              provenance="toric code (Kitaev, arXiv:quant-ph/9707021) as HGP of ring codes")


def repetition_code(n: int) -> CSSCode:
    """The ``n``-qubit bit-flip repetition code (``hx`` empty, ``hz`` the ``n - 1`` ``ZZ`` checks).

    ``d`` is set to ``n``, the distance against bit flips (X errors), which is what a Z-basis
    memory experiment on it measures; the Z distance is 1 (``meta = {"d_x": n, "d_z": 1}``).

    Examples:
        >>> c = repetition_code(5)
        >>> c.params, c.hx.shape, c.hz.shape
        ((5, 1, 5), (0, 5), (4, 5))
    """
    n = _size(n, "repetition code length n")
    return CSSCode(hx=np.zeros((0, n), dtype=np.uint8), hz=repetition_parity_check(n), d=n, name="repetition",
                   provenance="bit-flip repetition code", meta={"d_x": n, "d_z": 1})
