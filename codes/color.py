"""Triangular 6.6.6 colour codes (Bombin & Martin-Delgado, arXiv:quant-ph/0605138).

Sites of a triangular lattice in skew coordinates ``(i, j)``, ``j = 0 .. w-1``,
``i = 0 .. w-1-j``, ``w = (3d - 1) / 2``, at Euclidean position ``(i + j/2, j)`` (rows one unit
apart). Sites with ``(i + 2j) mod 3 = 2`` are plaquette centres, the others data qubits:
``n = (3d^2 + 1) / 4`` data qubits and ``(n - 1) / 2`` plaquettes for odd ``d >= 3``. A plaquette
acts on the (up to six) data qubits at the offsets ``e_0 .. e_5`` = ``(1,0), (0,1), (-1,1),
(-1,0), (0,-1), (1,-1)`` (angles ``60 k`` degrees) that lie in the triangle, so bulk plaquettes
are hexagons and the plaquettes cut by a side have weight 4. Colour ``(i + j) mod 3`` of the
centre is a proper 3-colouring (neighbouring centres differ by ``(1,1)``, ``(2,-1)`` or
``(-1,2)``), and each side of the triangle cuts plaquettes of one colour only. The code is
self-dual, ``hx = hz`` = plaquettes, and both logicals are supported on the bottom row ``j = 0``
(``d`` qubits). Each data qubit is reached from its (up to three) plaquettes through offsets of
one parity only (even for some qubits, odd for the others).

Circuits for these codes (superdense syndrome extraction, Chromobius' detector annotation) are
in :mod:`qdecode.sims.color_circuit`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from qdecode.codes.css import CSSCode
from qdecode.errors import InputError

__all__ = ["DIRECTIONS", "ColorLayout", "color_layout", "triangular_color_code"]

#: Offsets ``e_0 .. e_5`` from a plaquette centre to its data qubits, skew coordinates ``(i, j)``.
DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))

PROVENANCE = "triangular 6.6.6 colour code, Bombin & Martin-Delgado, arXiv:quant-ph/0605138"


@dataclasses.dataclass(frozen=True, eq=False)
class ColorLayout:
    """Geometry of the distance-``d`` triangular patch.

    Attributes:
        d: distance (odd, >= 3).
        data: ``(n, 2)`` int64 skew coordinates ``(i, j)`` of the data qubits (row-major: by ``j``, then ``i``).
        centers: ``(m, 2)`` int64 skew coordinates of the plaquette centres, ``m = (n - 1) / 2``.
        colors: ``(m,)`` int64 plaquette colours in ``{0, 1, 2}``.
        support: ``(m, 6)`` int64: the data qubit at offset ``e_k`` of plaquette ``i``, ``-1`` if absent.
    """

    d: int
    data: np.ndarray
    centers: np.ndarray
    colors: np.ndarray
    support: np.ndarray

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    @property
    def m(self) -> int:
        return int(self.centers.shape[0])

    @staticmethod
    def position(ij: Any) -> np.ndarray:
        """Euclidean ``(x, y) = (i + j/2, j)`` of skew coordinates ``(..., 2)``, float64."""
        a = np.asarray(ij, dtype=np.float64)
        return np.stack([a[..., 0] + a[..., 1] / 2, a[..., 1]], axis=-1)


def _check_d(d: Any) -> int:
    try:
        di = int(d)
    except (TypeError, ValueError):
        raise InputError(f"colour-code distance d must be an odd integer >= 3, got d={d!r}") from None
    if di != d or di < 3 or di % 2 == 0:
        raise InputError(f"colour-code distance d must be an odd integer >= 3, got d={d!r}")
    return di


@functools.lru_cache(maxsize=16)
def color_layout(d: int) -> ColorLayout:
    """The triangular patch of distance ``d`` (see the module docstring).

    Raises:
        ValueError: ``d`` not an odd integer >= 3.
    """
    d = _check_d(d)
    w = (3 * d - 1) // 2
    sites = [(i, j) for j in range(w) for i in range(w - j)]
    data = [s for s in sites if (s[0] + 2 * s[1]) % 3 != 2]
    centers = [s for s in sites if (s[0] + 2 * s[1]) % 3 == 2]
    index = {s: q for q, s in enumerate(data)}
    support = np.full((len(centers), 6), -1, dtype=np.int64)
    for p, (i, j) in enumerate(centers):
        for k, (di, dj) in enumerate(DIRECTIONS):
            support[p, k] = index.get((i + di, j + dj), -1)
    arr = lambda xs: np.array(xs, dtype=np.int64).reshape(-1, 2)  # noqa: E731
    cen = arr(centers)
    out = ColorLayout(d=d, data=arr(data), centers=cen, colors=(cen[:, 0] + cen[:, 1]) % 3, support=support)
    for a in (out.data, out.centers, out.colors, out.support):
        a.flags.writeable = False
    return out


def triangular_color_code(d: int) -> Any:
    """The ``[[(3d^2 + 1)/4, 1, d]]`` triangular 6.6.6 colour code as a :class:`~qdecode.codes.css.CSSCode`.

    ``hx = hz``: ``(m, n)`` uint8 plaquettes; ``lx = lz`` = the bottom row (weight ``d``). ``meta``
    is a dict with ``layout`` (:class:`ColorLayout`), ``colors`` (``(m,)``) and the Euclidean
    ``data_coords`` (``(n, 2)``), ``x_coords`` = ``z_coords`` (``(m, 2)``) that
    :func:`qdecode.sims.css_circuit.css_layout` reads.

    Raises:
        ValueError: ``d`` not an odd integer >= 3.

    Examples:
        >>> c = triangular_color_code(5)
        >>> c.n, c.k, c.d, c.hx.shape
        (19, 1, 5, (9, 19))
    """
    lay = color_layout(d)
    H = np.zeros((lay.m, lay.n), dtype=np.uint8)
    for p in range(lay.m):
        H[p, lay.support[p][lay.support[p] >= 0]] = 1
    logical = (lay.data[:, 1] == 0).astype(np.uint8)[None, :]
    cen = ColorLayout.position(lay.centers)
    meta = {"layout": lay, "colors": lay.colors, "data_coords": ColorLayout.position(lay.data),
            "x_coords": cen, "z_coords": cen}
    return CSSCode(hx=H, hz=H.copy(), lx=logical, lz=logical.copy(), d=lay.d, name="color",
                   provenance=PROVENANCE,
                   meta=meta)
