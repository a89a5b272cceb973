"""Exact distance of a CSS code by integer programming (HiGHS through ``scipy.optimize.milp``).

The X distance is ``d_X = min{ |e| : H_Z e = 0, e not in rowspace(H_X) }``. With paired logicals
(:func:`qdecode.codes.css.logical_operators`: ``lx lz^T = I``) every ``e`` in ``ker H_Z`` is
``s + sum_j c_j lx_j`` with ``s`` in ``rowspace(H_X)``, and ``lz_i . e = c_i``; so ``e`` is a
nontrivial logical iff it has odd overlap with some ``lz_i``, and

    d_X = min_i  min{ |e| : H_Z e = 0, lz_i . e = 1 (mod 2), e in {0, 1}^n }.

Each inner problem is a MILP over binary ``e`` with integer slacks ``y`` (one per check) and
``z``, the parities written as linear equalities::

    minimise sum_j e_j   s.t.   H_Z e - 2 y = 0,   lz_i . e - 2 z = 1,
                                0 <= y_r <= floor(|row r| / 2),   0 <= z <= floor(|lz_i| / 2)

(``method="per-logical"``: ``k`` solves, minimum taken). The default ``method="indicator"``
solves all ``k`` at once with binary indicators ``o_i`` for the parities,
``lz_i . e - 2 t_i - o_i = 0`` and ``sum_i o_i >= 1``; it has the same optimum and is several
times faster on the bivariate-bicycle codes (one branch-and-bound tree instead of ``k``).
``d_Z`` swaps the roles of X and Z; ``basis="both"`` returns ``min(d_X, d_Z)``.

A solve that hits the time limit is never reported as exact: :class:`DistanceResult` carries
the lightest logical found (an upper bound), the solver's proven lower bound, and
``optimal = (lower_bound == distance)``. :func:`brute_force_distance` enumerates supports by
weight for tiny codes, as an independent cross-check.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time

import numpy as np

from qdecode.errors import InputError

from .css import CSSCode

__all__ = ["DistanceResult", "css_distance", "brute_force_distance", "logical_distance"]


@dataclasses.dataclass(frozen=True)
class DistanceResult:
    """The outcome of :func:`css_distance`.

    Attributes:
        distance: weight of the lightest nontrivial logical found: the distance when ``optimal``,
            else an upper bound (``None`` if no logical was found before the time limit).
        lower_bound: a proven lower bound on the distance (``>= 1``).
        optimal: ``True`` iff ``lower_bound == distance`` (the value is proven).
        basis: ``"X"``, ``"Z"`` or ``"both"``.
        seconds: wall-clock time spent.
        status: ``"optimal"``, or a sentence saying that the time limit was reached.
        witness: ``(n,)`` uint8 support of a logical of weight ``distance`` (or ``None``).
        witness_basis: its Pauli type, ``"X"`` or ``"Z"``.
        solves: number of MILPs run.
    """

    distance: int | None
    lower_bound: int
    optimal: bool
    basis: str
    seconds: float
    status: str
    witness: np.ndarray | None
    witness_basis: str | None
    solves: int


def _basis_arg(basis: str) -> str:
    b = str(basis).upper()
    if b not in ("X", "Z", "BOTH"):
        raise InputError(f"basis must be 'X', 'Z' or 'both', got {basis!r}")
    return "both" if b == "BOTH" else b


def _solve(check: np.ndarray, duals: np.ndarray, deadline: float) -> tuple[int, int, np.ndarray | None, bool]:
    """Lightest ``e`` with ``check e = 0`` and odd overlap with at least one row of ``duals``.

    One MILP: ``check e - 2 y = 0``, ``duals e - 2 t - o = 0`` with binary indicators ``o``
    (``o_i`` = parity of ``duals_i . e``) and ``sum_i o_i >= 1``. With a single dual row this is
    the per-logical problem of the module docstring (``o = 1`` is forced). Returns
    ``(upper, lower, witness, timed_out)``; ``upper`` is ``n + 1`` when no solution was found.
    """
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    check = check[check.any(axis=1)]  # empty checks (e.g. a repetition code's hx) constrain nothing
    (m, n), k = check.shape, duals.shape[0]
    A = sparse.vstack([
        sparse.hstack([sparse.csr_matrix(check, dtype=np.float64), -2.0 * sparse.eye(m),
                       sparse.csr_matrix((m, 2 * k))]),
        sparse.hstack([sparse.csr_matrix(duals, dtype=np.float64), sparse.csr_matrix((k, m)),
                       -2.0 * sparse.eye(k), -1.0 * sparse.eye(k)]),
        sparse.hstack([sparse.csr_matrix((1, n + m + k)), sparse.csr_matrix(np.ones((1, k)))]),
    ]).tocsr()
    lo = np.concatenate([np.zeros(m + k), [1.0]])
    hi = np.concatenate([np.zeros(m + k), [float(k)]])
    # Tight slack bounds make the LP relaxation stronger: y_r <= floor(|row r| / 2), likewise t.
    ub = np.concatenate([np.ones(n), np.floor(check.sum(axis=1) / 2.0), np.floor(duals.sum(axis=1) / 2.0),
                         np.ones(k)])
    cost = np.concatenate([np.ones(n), np.zeros(m + 2 * k)])
    remaining = deadline - time.perf_counter()
    if remaining <= 0:
        return n + 1, 1, None, True
    options = {"disp": False, "mip_rel_gap": 0.0}
    if np.isfinite(remaining):
        options["time_limit"] = float(remaining)
    res = milp(cost, integrality=np.ones(cost.size), bounds=Bounds(np.zeros(cost.size), ub),
               constraints=LinearConstraint(A, lo, hi), options=options)
    if res.status == 2:  # infeasible: no nontrivial logical at any weight (a DEM whose observables are all detected)
        return n + 1, n + 1, None, False
    if res.status not in (0, 1):
        raise RuntimeError(f"HiGHS failed on a distance MILP: status {res.status}, {res.message}")
    upper, witness = n + 1, None
    if res.x is not None:
        e = np.rint(res.x[:n]).astype(np.uint8)
        overlaps = (duals.astype(np.int64) @ e) % 2
        if ((check.astype(np.int64) @ e) % 2).any() or not overlaps.any():  # pragma: no cover - solver bug
            raise RuntimeError("HiGHS returned a vector that is not a nontrivial logical")
        upper, witness = int(e.sum()), e
    if res.status == 0:
        return upper, upper, witness, False
    dual = getattr(res, "mip_dual_bound", None)  # time limit: the solver's proven bound
    lower = 1 if dual is None or not np.isfinite(dual) else max(1, math.ceil(float(dual) - 1e-6))
    return upper, min(lower, upper), witness, True


def css_distance(
    code: CSSCode, basis: str = "both", *, time_limit: float | None = 60.0, method: str = "indicator"
) -> DistanceResult:
    """Exact distance of a CSS code by MILP.

    Args:
        code: the code (``k >= 1``).
        basis: ``"X"`` (weight of the lightest X logical, ``d_X``), ``"Z"`` (``d_Z``) or
            ``"both"`` (``min(d_X, d_Z)``, the code distance).
        time_limit: wall-clock seconds for all solves together (``None``: no limit).
        method: ``"indicator"`` (one MILP per basis, with parity indicators for all ``k``
            logicals; the fast default) or ``"per-logical"`` (``k`` MILPs per basis, one per paired
            logical, minimum taken; the same optimum, kept as a cross-check).

    Returns:
        :class:`DistanceResult`; check ``optimal`` before quoting ``distance`` as exact.

    Raises:
        ValueError: bad ``basis`` or ``method``, or a code with ``k = 0``.

    Examples:
        >>> from qdecode.codes.surface import rotated_surface_code
        >>> r = css_distance(rotated_surface_code(3))
        >>> r.distance, r.optimal
        (3, True)
    """
    b = _basis_arg(basis)
    if method not in ("indicator", "per-logical"):
        raise InputError(f"method must be 'indicator' or 'per-logical', got {method!r}")
    if code.k == 0:
        raise InputError(f"code {code.name!r} encodes no logical qubit: its distance is undefined")
    start = time.perf_counter()
    deadline = math.inf if time_limit is None else start + float(time_limit)
    best, lower, witness, witness_basis, solves, timed_out = code.n + 1, code.n + 1, None, None, 0, False
    for t in ("X", "Z") if b == "both" else (b,):
        # X errors are seen by hz and are logical iff they anticommute with some Z logical; Z likewise.
        check, duals = (code.hz, code.lz) if t == "X" else (code.hx, code.lx)
        groups = [duals] if method == "indicator" else [duals[i:i + 1] for i in range(duals.shape[0])]
        for group in groups:
            ub, lb, wit, out = _solve(check, group, deadline)
            solves += 1
            timed_out |= out
            lower = min(lower, lb)
            if wit is not None and ub < best:
                best, witness, witness_basis = ub, wit, t
    seconds = time.perf_counter() - start
    distance = best if witness is not None else None
    lower = min(lower, best)
    optimal = distance is not None and lower == distance  # a timed-out solve may still be bounded
    if optimal:
        status = "optimal"
    else:
        found = "no logical found" if distance is None else f"lightest logical found has weight {distance}"
        status = f"time limit of {time_limit} s reached: not proven ({found}, proven lower bound {lower})"
    return DistanceResult(distance=distance, lower_bound=int(lower), optimal=bool(optimal), basis=b,
                          seconds=seconds, status=status, witness=witness, witness_basis=witness_basis,
                          solves=solves)


def brute_force_distance(code: CSSCode, basis: str = "both", *, max_combinations: int = 5_000_000) -> int:
    """Distance by enumerating supports in order of weight (tiny codes only; a cross-check).

    Each qubit's column of ``[check; duals]`` is packed into a Python int; a support is a
    nontrivial logical iff the XOR of its columns has a zero check part and a nonzero dual part.

    Raises:
        ValueError: the enumeration would exceed ``max_combinations`` supports, or ``k = 0``.
    """
    b = _basis_arg(basis)
    if code.k == 0:
        raise InputError(f"code {code.name!r} encodes no logical qubit: its distance is undefined")
    n = code.n
    types = ("X", "Z") if b == "both" else (b,)
    keys = []
    for t in types:
        check, duals = (code.hz, code.lz) if t == "X" else (code.hx, code.lx)
        m = check.shape[0]
        cols = np.vstack([check, duals]).T
        keys.append(([sum(1 << i for i in np.flatnonzero(c)) for c in cols], (1 << m) - 1))
    count = 0
    for w in range(1, n + 1):
        count += math.comb(n, w)
        if count > max_combinations:
            raise InputError(f"brute force would enumerate more than {max_combinations} supports; use css_distance")
        for cols, check_mask in keys:
            for support in itertools.combinations(range(n), w):
                acc = 0
                for j in support:
                    acc ^= cols[j]
                if acc and not acc & check_mask:
                    return w
    raise AssertionError("a code with k >= 1 has a nontrivial logical")  # pragma: no cover



def logical_distance(check: np.ndarray, duals: np.ndarray, *, time_limit: float | None = 60.0) -> DistanceResult:
    """Fewest columns of ``check`` (r, n) summing to zero whose sum has odd overlap with some row of
    ``duals`` (k, n), by the MILP of :func:`css_distance`: the circuit distance of a DEM with
    ``check = H`` (detectors x mechanisms) and ``duals = L`` (observables x mechanisms)
    (:func:`qdecode.sims.dem_distance.circuit_distance`). ``distance = None`` with ``optimal`` when no
    such set exists; with a time limit hit, an upper bound (``optimal`` False). ``basis``: ``"DEM"``.

    Raises:
        ValueError: ``duals`` has no row.
    """
    check = np.asarray(check, dtype=np.uint8)
    duals = np.asarray(duals, dtype=np.uint8)
    if duals.shape[0] == 0:
        raise InputError("no logical observable: the distance is undefined")
    n = check.shape[1]
    keep = duals.any(axis=0) | check.any(axis=0)  # a column that flips nothing cannot help
    start = time.perf_counter()
    deadline = math.inf if time_limit is None else start + float(time_limit)
    ub, lb, wit, timed_out = _solve(check[:, keep], duals[:, keep], deadline)
    seconds = time.perf_counter() - start
    if wit is None and not timed_out:
        return DistanceResult(distance=None, lower_bound=n + 1, optimal=True, basis="DEM", seconds=seconds,
                              status="no set of mechanisms flips an observable without flipping a detector",
                              witness=None, witness_basis=None, solves=1)
    witness = None
    if wit is not None:
        witness = np.zeros(n, dtype=np.uint8)
        witness[np.flatnonzero(keep)] = wit
    distance = ub if wit is not None else None
    optimal = distance is not None and lb == distance
    status = "optimal" if optimal else (f"time limit of {time_limit} s reached: not proven "
                                        f"(upper bound {distance}, proven lower bound {lb})")
    return DistanceResult(distance=distance, lower_bound=int(min(lb, ub)), optimal=bool(optimal), basis="DEM",
                          seconds=seconds, status=status, witness=witness, witness_basis=None, solves=1)
