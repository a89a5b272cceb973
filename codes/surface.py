"""The rotated surface code as a :class:`~qdecode.codes.css.CSSCode`.

Layout: data qubit ``(r, c)``, ``0 <= r, c < d``, has index ``r * d + c``.
Stabilisers sit on the corners ``(i, j)``, ``0 <= i, j <= d``, of the data grid and act
on the (up to four) data qubits ``(i-1..i, j-1..j)``. A corner is X-type when
``i + j`` is even and Z-type otherwise. All interior corners are stabilisers; on the
top and bottom edges (``i in {0, d}``) only the X-type weight-2 corners are kept, on
the left and right edges (``j in {0, d}``) only the Z-type ones. An X string down a
column and a Z string along a row are logicals of weight ``d``.
"""

from __future__ import annotations

import numpy as np

from qdecode.errors import InputError

from .css import CSSCode

__all__ = ["rotated_surface_code", "rotated_surface_layout"]


def rotated_surface_layout(d: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Corner coordinates ``(i, j)`` of the X and Z stabilisers, in row-major order.

    Args:
        d: code distance, an integer >= 2 (odd values are the usual choice).

    Returns:
        ``(x_corners, z_corners)``; ``(d*d - 1) // 2`` each for odd ``d``.
    """
    d = _check_d(d)
    xs, zs = [], []
    for i in range(d + 1):
        for j in range(d + 1):
            is_x = (i + j) % 2 == 0
            interior = 1 <= i <= d - 1 and 1 <= j <= d - 1
            if interior or (is_x and i in (0, d) and 1 <= j <= d - 1) or (
                not is_x and j in (0, d) and 1 <= i <= d - 1
            ):
                (xs if is_x else zs).append((i, j))
    return xs, zs


def _check_d(d: object) -> int:
    try:
        di = int(d)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"surface code distance d must be an integer >= 2, got {d!r}") from None
    if di != d or di < 2:
        raise InputError(f"surface code distance d must be an integer >= 2, got {d!r}")
    return di


def _rows(corners: list[tuple[int, int]], d: int) -> np.ndarray:
    H = np.zeros((len(corners), d * d), dtype=np.uint8)
    for s, (i, j) in enumerate(corners):
        for r in (i - 1, i):
            for c in (j - 1, j):
                if 0 <= r < d and 0 <= c < d:
                    H[s, r * d + c] = 1
    return H


def rotated_surface_code(d: int) -> CSSCode:
    """The ``[[d^2, 1, d]]`` rotated surface code.

    Args:
        d: distance (integer >= 2; odd values are the usual choice).

    Returns:
        A :class:`CSSCode` named ``"surface"`` with ``lx`` = X on column 0 and
        ``lz`` = Z on row 0 (weight ``d`` each); ``meta`` holds the corner lists.

    Raises:
        ValueError: ``d`` is not an integer >= 2.

    Examples:
        >>> c = rotated_surface_code(3)
        >>> c.n, c.k, c.d, c.hx.shape
        (9, 1, 3, (4, 9))
    """
    d = _check_d(d)
    xs, zs = rotated_surface_layout(d)
    hx, hz = _rows(xs, d), _rows(zs, d)
    lx = np.zeros((1, d * d), dtype=np.uint8)
    lx[0, [r * d for r in range(d)]] = 1  # X down column 0 (commutes with Z checks)
    lz = np.zeros((1, d * d), dtype=np.uint8)
    lz[0, :d] = 1  # Z along row 0 (commutes with X checks)
    return CSSCode(
        hx=hx, hz=hz, lx=lx, lz=lz, d=d, name="surface",
        provenance="rotated surface code (Bombin & Martin-Delgado 2007; Horsman et al. 2012)",
        meta={"x_corners": xs, "z_corners": zs},
    )
