"""The Tanner graph as the RTL generator walks it: edges, rows, columns, positions, degrees.

Edges are H's stored entries in canonical CSR order (check-major, variables ascending in each
row), the same numbering as :func:`qdecode.kernels.bp.tanner_graph`. For edge ``e = (i, j)``:
``pos[e]`` is the position of ``j`` in row ``i`` (the check unit's input port ``k``), and the
variable unit of ``j`` sees its checks in ascending order (the kernel's posterior sum order;
integer sums are order-free anyway).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from qdecode.errors import InputError


@dataclasses.dataclass(frozen=True)
class RtlGraph:
    """Rows and columns of a binary ``(m, n)`` check matrix, with edge ids.

    Attributes:
        m, n: shape of H.
        rows: per check ``i``, the list of ``(e, j)`` (edge id, variable) in ascending ``j``.
        cols: per variable ``j``, the list of ``(e, i, k)`` (edge id, check, position of ``j``
            in row ``i``) in ascending ``i``.
    """

    m: int
    n: int
    rows: tuple[tuple[tuple[int, int], ...], ...]
    cols: tuple[tuple[tuple[int, int, int], ...], ...]

    @property
    def edges(self) -> int:
        return sum(len(r) for r in self.rows)

    def check_degrees(self) -> list[int]:
        """Distinct non-zero row degrees, ascending (one check module each)."""
        return sorted({len(r) for r in self.rows if r})

    def var_degrees(self) -> list[int]:
        """Distinct non-zero column degrees, ascending (one variable module each)."""
        return sorted({len(c) for c in self.cols if c})


def build_graph(H) -> RtlGraph:
    """:class:`RtlGraph` of a 0/1 matrix (scipy sparse or array-like); entries are taken mod 2."""
    Hc = sp.csr_matrix(H, dtype=np.int64, copy=True)
    Hc.sum_duplicates()
    Hc.data %= 2
    Hc.eliminate_zeros()
    Hc.sort_indices()
    m, n = Hc.shape
    if m < 1 or n < 1:
        raise InputError(f"H must have at least one row and one column, got shape {(m, n)}")
    rows = []
    cols: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    for i in range(m):
        lo, hi = int(Hc.indptr[i]), int(Hc.indptr[i + 1])
        row = tuple((e, int(Hc.indices[e])) for e in range(lo, hi))
        rows.append(row)
        for k, (e, j) in enumerate(row):
            cols[j].append((e, i, k))
    return RtlGraph(int(m), int(n), tuple(rows), tuple(tuple(c) for c in cols))
