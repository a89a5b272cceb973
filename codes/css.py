"""CSS stabiliser codes: check matrices, logical operators, a low-weight logical search.

A CSS code on ``n`` qubits is given by ``hx`` (X-type stabilisers, rows) and ``hz``
(Z-type stabilisers) with ``hx @ hz.T = 0 (mod 2)``. It encodes
``k = n - rank(hx) - rank(hz)`` logical qubits. X logicals ``lx`` commute with the
Z stabilisers (``lx @ hz.T = 0``) and are not X stabilisers; Z logicals likewise.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from qdecode.errors import InputError

from . import gf2

__all__ = ["CSSCode", "logical_operators", "search_min_logical_weight"]


def logical_operators(hx: np.ndarray, hz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Paired logical operators of a CSS code.

    Args:
        hx: ``(mx, n)`` uint8 X-stabiliser matrix.
        hz: ``(mz, n)`` uint8 Z-stabiliser matrix, ``hx @ hz.T = 0``.

    Returns:
        ``(lx, lz)``, each ``(k, n)`` uint8, with ``lx @ hz.T = 0``,
        ``lz @ hx.T = 0`` and ``lx @ lz.T = I_k`` (mod 2): logical ``i``'s X
        operator anticommutes only with logical ``i``'s Z operator.
    """
    # X logicals: ker(hz) modulo rowspace(hx); Z logicals: ker(hx) modulo rowspace(hz).
    lx = gf2.independent_rows_modulo(hx, gf2.nullspace(hz))
    lz = gf2.independent_rows_modulo(hz, gf2.nullspace(hx))
    if lx.shape[0] != lz.shape[0]:  # pragma: no cover - impossible for a valid CSS code
        raise InputError(f"found {lx.shape[0]} X logicals but {lz.shape[0]} Z logicals")
    if lx.shape[0] == 0:
        return lx, lz
    # Pairing: with M = lx lz^T (invertible), lz' = M^{-T} lz gives lx lz'^T = I.
    m = (lx.astype(np.int64) @ lz.T.astype(np.int64)) % 2
    lz = ((gf2.inverse(m).T.astype(np.int64) @ lz.astype(np.int64)) % 2).astype(np.uint8)
    return lx, lz


@dataclasses.dataclass(frozen=True, eq=False)
class CSSCode:
    """A CSS quantum code.

    Attributes:
        hx: ``(mx, n)`` uint8 X-type stabiliser generators (rows may be dependent).
        hz: ``(mz, n)`` uint8 Z-type stabiliser generators.
        lx: ``(k, n)`` uint8 X logicals (computed when not given).
        lz: ``(k, n)`` uint8 Z logicals, paired so that ``lx @ lz.T = I``.
        d: the stated or known distance, or ``None`` when unknown.
        name: catalogue name (e.g. ``"bb72_12_6"``).
        provenance: where the code comes from (paper / arXiv id).
        meta: free-form extra data (e.g. the BB polynomials), not used for equality.

    Raises:
        ValueError: ``hx`` and ``hz`` differ in width, do not commute, or given
            logicals fail the commutation / pairing conditions.

    Examples:
        >>> import numpy as np
        >>> steane = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]])
        >>> c = CSSCode(hx=steane, hz=steane, d=3, name="steane")
        >>> c.n, c.k, c.d
        (7, 1, 3)
    """

    hx: np.ndarray
    hz: np.ndarray
    lx: np.ndarray | None = None
    lz: np.ndarray | None = None
    d: int | None = None
    name: str = ""
    provenance: str = ""
    meta: Any = None

    def __post_init__(self) -> None:
        hx = gf2.as_gf2(self.hx, "hx")
        hz = gf2.as_gf2(self.hz, "hz")
        if hx.shape[1] != hz.shape[1]:
            raise InputError(f"hx has {hx.shape[1]} columns but hz has {hz.shape[1]}; both must count the qubits")
        comm = (hx.astype(np.int64) @ hz.T.astype(np.int64)) % 2
        if comm.any():
            i, j = (int(v) for v in np.argwhere(comm)[0])
            raise InputError(
                f"hx @ hz.T != 0 (mod 2): X check {i} and Z check {j} anticommute "
                f"({int(comm.sum())} anticommuting pairs); not a CSS code"
            )
        if self.lx is None or self.lz is None:
            if (self.lx is None) != (self.lz is None):
                raise InputError("give both lx and lz, or neither (they are computed together)")
            lx, lz = logical_operators(hx, hz)
        else:
            lx = gf2.as_gf2(self.lx, "lx")
            lz = gf2.as_gf2(self.lz, "lz")
            _check_logicals(hx, hz, lx, lz)
        if self.d is not None and (int(self.d) != self.d or self.d < 1):
            raise InputError(f"d must be a positive integer or None, got {self.d!r}")
        for arr in (hx, hz, lx, lz):
            arr.flags.writeable = False
        object.__setattr__(self, "hx", hx)
        object.__setattr__(self, "hz", hz)
        object.__setattr__(self, "lx", lx)
        object.__setattr__(self, "lz", lz)

    @property
    def n(self) -> int:
        """Number of physical (data) qubits."""
        return int(self.hx.shape[1])

    @property
    def k(self) -> int:
        """Number of logical qubits."""
        return int(self.lx.shape[0])

    @property
    def params(self) -> tuple[int, int, int | None]:
        """``(n, k, d)``."""
        return self.n, self.k, self.d

    def check_matrix(self, basis: str) -> np.ndarray:
        """Stabilisers that detect errors of the given Pauli type.

        Args:
            basis: ``"X"`` for X errors (returns ``hz``) or ``"Z"`` for Z errors (returns ``hx``).
        """
        basis = _basis(basis)
        return self.hz if basis == "X" else self.hx

    def logicals(self, basis: str) -> np.ndarray:
        """Logicals of the given Pauli type (``"X"`` -> ``lx``, ``"Z"`` -> ``lz``)."""
        basis = _basis(basis)
        return self.lx if basis == "X" else self.lz

    def __repr__(self) -> str:
        return f"CSSCode(name={self.name!r}, n={self.n}, k={self.k}, d={self.d})"


def _basis(basis: str) -> str:
    b = str(basis).upper()
    if b not in ("X", "Z"):
        raise InputError(f"basis must be 'X' or 'Z', got {basis!r}")
    return b


def _check_logicals(hx: np.ndarray, hz: np.ndarray, lx: np.ndarray, lz: np.ndarray) -> None:
    n = hx.shape[1]
    if lx.shape[1] != n or lz.shape[1] != n or lx.shape[0] != lz.shape[0]:
        raise InputError(f"lx {lx.shape} and lz {lz.shape} must both be (k, {n})")
    mul = lambda a, b: (a.astype(np.int64) @ b.T.astype(np.int64)) % 2  # noqa: E731
    if mul(lx, hz).any():
        raise InputError("lx @ hz.T != 0: an X logical anticommutes with a Z stabiliser")
    if mul(lz, hx).any():
        raise InputError("lz @ hx.T != 0: a Z logical anticommutes with an X stabiliser")
    k = lx.shape[0]
    if not np.array_equal(mul(lx, lz), np.eye(k, dtype=np.int64)):
        raise InputError("lx @ lz.T must be the identity (paired logicals)")
    expected = n - gf2.rank(hx) - gf2.rank(hz)
    if k != expected:
        raise InputError(f"given {k} logical pairs but n - rank(hx) - rank(hz) = {expected}")


def search_min_logical_weight(
    code: CSSCode,
    basis: str = "X",
    *,
    trials: int = 200,
    pairs: bool = True,
    seed: int | None = 0,
    stop_at: int | None = None,
) -> tuple[int, np.ndarray]:
    """Randomised search for a low-weight nontrivial logical (an upper bound on the distance).

    Lee-Brickell style information-set search: each trial permutes the qubits at
    random, brings a generator matrix of ``ker(check)`` (the operators commuting
    with the opposite-type stabilisers) to systematic form, and inspects every
    row (and, with ``pairs``, every sum of two rows). Each candidate that is a
    nontrivial logical (anticommutes with some opposite-type logical) is a
    witness; the lightest one is returned. More trials make it more likely to
    hit a true minimum-weight logical; the result is never below the distance. For a proven
    value use :func:`qdecode.codes.distance.css_distance` (exact, by MILP; small and mid-size codes).

    Args:
        code: the CSS code.
        basis: ``"X"`` searches X logicals (distance d_X), ``"Z"`` searches Z logicals.
        trials: number of random information sets.
        pairs: also try sums of two systematic rows (slower, much stronger).
        seed: seed for ``numpy.random.default_rng``.
        stop_at: stop early once a logical of weight ``<= stop_at`` is found.

    Returns:
        ``(weight, logical)``: the lightest logical found and its ``(n,)`` uint8 support.
    """
    basis = _basis(basis)
    check = code.hz if basis == "X" else code.hx  # X logicals commute with Z checks
    dual_logicals = code.lz if basis == "X" else code.lx
    G = gf2.nullspace(check)  # (dim, n)
    n = code.n
    rng = np.random.default_rng(seed)
    best_w = n + 1
    best = np.zeros(n, dtype=np.uint8)
    dual_T = dual_logicals.T.astype(np.uint8)
    for _ in range(trials):
        perm = rng.permutation(n)
        R, _piv = gf2.row_reduce(G[:, perm])
        rows = R[: len(_piv)]
        cands = [rows]
        if pairs and rows.shape[0] > 1:
            i, j = np.triu_indices(rows.shape[0], k=1)
            # Bound memory: process pair sums in chunks.
            step = max(1, 2_000_000 // max(1, n))
            for s in range(0, i.size, step):
                cands.append(rows[i[s : s + step]] ^ rows[j[s : s + step]])
        for C in cands:
            w = C.sum(axis=1, dtype=np.int64)
            nontrivial = ((C @ dual_T[perm]) & 1).any(axis=1) if C.size else np.zeros(0, bool)
            # (C @ dual_T[perm]) counts overlaps; parity via & 1 on an integer dtype.
            if not nontrivial.any():
                continue
            w_nt = np.where(nontrivial, w, n + 1)
            a = int(np.argmin(w_nt))
            if w_nt[a] < best_w:
                best_w = int(w_nt[a])
                best = np.zeros(n, dtype=np.uint8)
                best[perm] = C[a]
        if stop_at is not None and best_w <= stop_at:
            break
    return best_w, best
