"""The decoding problem every decoder sees: check matrix, observable matrix, priors.

Conventions (used everywhere in qdecode):

* ``H`` is ``(num_detectors, num_errors)``: column ``j`` lists the detectors
  (checks) that error mechanism ``j`` flips.
* ``L`` is ``(num_observables, num_errors)``: the logical observables it flips.
* ``priors[j]`` is the independent probability that mechanism ``j`` fires,
  strictly inside (0, 1).
* LLR sign: ``llr = ln((1 - p) / p)``; positive means "no flip" and the hard
  decision is ``llr <= 0 -> 1`` (ldpc and relay-bp use the same sign).

From a stim detector error model the columns are the *merged* mechanisms:
the DEM is flattened (``repeat`` / ``shift_detectors`` unrolled), the targets
of each ``error`` are XOR-reduced (``^`` decomposition hints are ignored), and
mechanisms with the same detector set are merged into one column with
``p = p1 (1 - p2) + p2 (1 - p1)`` (two independent flips cancel). When merged
mechanisms flip *different* observables the column keeps the observables of
the most likely one and the event is counted in ``num_collisions``: such a
column is ambiguous for every decoder, so the count is a diagnostic users need.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.sparse as sp

from qdecode.errors import InputError
from qdecode.heralds import Heralds, split_heralds


class ProblemError(InputError):
    """An invalid decoding problem (bad shape, non-binary matrix, prior outside (0, 1))."""


def _as_binary_csr(matrix: Any, name: str) -> sp.csr_matrix:
    """Validate a 0/1 matrix (dense or sparse) and return it as uint8 CSR with sorted indices."""
    if sp.issparse(matrix):
        m = sp.csr_matrix(matrix)
        m.sum_duplicates()
        data = m.data
    else:
        arr = np.asarray(matrix)
        if arr.ndim != 2:
            raise ProblemError(f"{name} must be 2-D, got shape {arr.shape}")
        m = sp.csr_matrix(arr)
        data = m.data
    if data.size and not np.all((data == 0) | (data == 1)):
        bad = data[(data != 0) & (data != 1)][0]
        raise ProblemError(f"{name} must be binary (entries 0 or 1), found entry {bad!r}")
    m = sp.csr_matrix(m, dtype=np.uint8)
    m.eliminate_zeros()
    m.sort_indices()
    return m


@dataclasses.dataclass(frozen=True, eq=False)
class DecodingProblem:
    """Detectors x error mechanisms, observables x error mechanisms, and priors.

    Attributes:
        H: ``(num_detectors, num_errors)`` uint8 CSR, sorted indices.
        L: ``(num_observables, num_errors)`` uint8 CSR.
        priors: ``(num_errors,)`` float64, each in (0, 1).
        num_collisions: merged mechanisms whose observable sets disagreed (from_dem only).
        column_sources: for each column, the indices of the flattened-DEM ``error``
            instructions merged into it, as CSR-style ``(ptr, idx)`` int64 arrays
            (``idx[ptr[j]:ptr[j+1]]``); ``None`` when not built from a DEM.
        dem: the source ``stim.DetectorErrorModel`` (kept for matching decoders that
            need its ``^`` decomposition), or ``None``.
        heralds: the DEM's herald detectors (:class:`~qdecode.heralds.Heralds`) when it tags some and
            the problem was built with ``heralds`` other than ``"checks"``, else ``None``. ``H`` still has
            their rows: a decoder that knows nothing of heralds decodes them as ordinary detectors, and the
            registry wraps a herald-aware one around the DEMs of :class:`~qdecode.heralds.Heralds`.

    Examples:
        >>> import numpy as np
        >>> prob = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
        >>> prob.num_detectors, prob.num_errors, prob.num_observables
        (2, 3, 0)
        >>> np.round(prob.llr, 3)
        array([2.197, 2.197, 2.197])
    """

    H: sp.csr_matrix
    L: sp.csr_matrix
    priors: np.ndarray
    num_collisions: int = 0
    column_sources: tuple[np.ndarray, np.ndarray] | None = None
    dem: Any = None
    heralds: Heralds | None = None

    def __post_init__(self) -> None:
        H = _as_binary_csr(self.H, "H")
        n = H.shape[1]
        L = _as_binary_csr(self.L, "L") if self.L is not None else sp.csr_matrix((0, n), dtype=np.uint8)
        if L.shape[1] != n:
            raise ProblemError(f"L has {L.shape[1]} columns but H has {n}; both must count the error mechanisms")
        priors = np.asarray(self.priors, dtype=np.float64)
        if priors.ndim == 0:
            priors = np.full(n, float(priors))
        if priors.shape != (n,):
            raise ProblemError(f"priors must have shape ({n},) to match H's columns, got {priors.shape}")
        if not np.all(np.isfinite(priors)) or np.any(priors <= 0) or np.any(priors >= 1):
            j = int(np.flatnonzero(~((priors > 0) & (priors < 1)))[0])
            raise ProblemError(f"priors must lie strictly inside (0, 1); priors[{j}] = {priors[j]!r}")
        priors = priors.copy()
        priors.flags.writeable = False
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "priors", priors)

    # ------------------------------------------------------------------ sizes
    @property
    def num_detectors(self) -> int:
        return int(self.H.shape[0])

    @property
    def num_errors(self) -> int:
        return int(self.H.shape[1])

    @property
    def num_observables(self) -> int:
        return int(self.L.shape[0])

    @property
    def llr(self) -> np.ndarray:
        """``ln((1 - p) / p)`` per column, float64 ``(num_errors,)``.

        Evaluated literally as ``log((1 - p) / p)``, the expression ldpc and relay-bp use,
        so the same priors give bit-identical LLRs in all three (``log1p(-p) - log(p)``
        differs in the last unit for some p, enough to flip exact ties in min-sum).
        """
        return np.log((1.0 - self.priors) / self.priors)

    def is_graphlike(self) -> bool:
        """True when every column flips at most two detectors (matching can decode it directly)."""
        return bool(self.num_errors == 0 or np.diff(self.H.tocsc().indptr).max() <= 2)

    # ---------------------------------------------------------- constructors
    @classmethod
    def from_check_matrix(cls, H: Any, priors: Any, L: Any = None) -> "DecodingProblem":
        """Build from a binary check matrix, priors (scalar or per column) and optional observables.

        Args:
            H: ``(m, n)`` 0/1 array or scipy sparse matrix.
            priors: scalar or ``(n,)`` probabilities strictly inside (0, 1).
            L: optional ``(k, n)`` 0/1 matrix of logical observables.

        Raises:
            ProblemError: non-binary entries, mismatched shapes, or a prior outside (0, 1).
        """
        Hm = _as_binary_csr(H, "H")
        Lm = _as_binary_csr(L, "L") if L is not None else sp.csr_matrix((0, Hm.shape[1]), dtype=np.uint8)
        return cls(H=Hm, L=Lm, priors=priors)

    def without_heralds(self) -> "DecodingProblem":
        """This problem with its herald detectors as ordinary detectors (``heralds`` None)."""
        return dataclasses.replace(self, heralds=None)

    @classmethod
    def from_detector_error_model(cls, dem: Any, *, heralds: str = "aware") -> "DecodingProblem":
        """Build from a ``stim.DetectorErrorModel`` (or its text), merging identical columns (PyMatching's
        and ldpc's name; :meth:`from_dem` is the same).

        See the module docstring for the merge and collision rules. Columns keep the
        order in which their detector sets first appear in the flattened DEM. A DEM with detectors tagged
        ``herald`` (:mod:`qdecode.heralds`) gives a problem whose :attr:`heralds` says how decoders use them:
        ``heralds="aware"`` (per-shot priors where a decoder takes them), ``"ignore"`` (marginalised: the
        herald-blind reference) or ``"checks"`` (ordinary detectors; :attr:`heralds` is None).

        Raises:
            ProblemError: the text is not a valid DEM (stim's message is included).
            InputError: bad herald tags or an unknown ``heralds`` (:func:`qdecode.heralds.split_heralds`).
        """
        import stim  # lazy: the decoders must import without stim

        if isinstance(dem, (str, bytes)):
            try:
                dem = stim.DetectorErrorModel(dem.decode() if isinstance(dem, bytes) else dem)
            except ValueError as exc:
                raise ProblemError(f"malformed detector error model: {exc}") from exc
        num_det = dem.num_detectors
        num_obs = dem.num_observables

        column_of: dict[tuple[int, ...], int] = {}
        col_p: list[float] = []
        col_obs: list[tuple[int, ...]] = []
        col_best_p: list[float] = []
        col_sources: list[list[int]] = []
        collisions = 0
        error_index = -1
        for inst in dem.flattened():
            if inst.type != "error":
                continue
            error_index += 1
            p = inst.args_copy()[0]
            if p <= 0:
                continue
            dets, obs = error_targets(inst)
            if not dets and not obs:
                continue
            key = tuple(sorted(dets))
            obs_key = tuple(sorted(obs))
            j = column_of.get(key)
            if j is None:
                column_of[key] = len(col_p)
                col_p.append(p)
                col_obs.append(obs_key)
                col_best_p.append(p)
                col_sources.append([error_index])
                continue
            if obs_key != col_obs[j]:
                collisions += 1
                if p > col_best_p[j]:
                    col_obs[j] = obs_key
                    col_best_p[j] = p
            q = col_p[j]
            col_p[j] = q * (1 - p) + p * (1 - q)
            col_sources[j].append(error_index)

        n = len(col_p)
        det_keys = list(column_of.keys())
        H = _columns_to_csr(det_keys, num_det, n)
        L = _columns_to_csr(col_obs, num_obs, n)
        ptr = np.zeros(n + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(s) for s in col_sources])
        idx = np.fromiter((i for s in col_sources for i in s), dtype=np.int64, count=int(ptr[-1]))
        priors = np.clip(np.array(col_p, dtype=np.float64), 1e-300, 1 - 1e-16)
        found = split_heralds(dem, heralds)
        return cls(H=H, L=L, priors=priors, num_collisions=collisions, column_sources=(ptr, idx), dem=dem,
                   heralds=None if heralds == "checks" else found)

    from_dem = from_detector_error_model  # the short name, kept


def _columns_to_csr(columns: list[tuple[int, ...]], num_rows: int, num_cols: int) -> sp.csr_matrix:
    """CSR ``(num_rows, num_cols)`` uint8 matrix whose column j has ones at rows ``columns[j]``."""
    lengths = np.fromiter((len(c) for c in columns), dtype=np.int64, count=num_cols)
    rows = np.fromiter((r for c in columns for r in c), dtype=np.int64, count=int(lengths.sum()))
    cols = np.repeat(np.arange(num_cols, dtype=np.int64), lengths)
    m = sp.csr_matrix((np.ones(rows.size, dtype=np.uint8), (rows, cols)), shape=(num_rows, num_cols))
    m.sort_indices()
    return m


def error_targets(inst: Any) -> tuple[set[int], set[int]]:
    """The detectors and observables one DEM ``error`` instruction flips, XOR-reduced (a target listed
    twice cancels; ``^`` separators are ignored)."""
    dets: set[int] = set()
    obs: set[int] = set()
    for t in inst.targets_copy():
        if t.is_relative_detector_id():
            dets ^= {t.val}
        elif t.is_logical_observable_id():
            obs ^= {t.val}
    return dets, obs


def unmerged_matrices(dem: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(H, L)`` uint8 of a DEM with one column per ``error`` instruction of the flattened model, in
    order (no merging: two instructions with equal detectors and different observables stay apart,
    which :meth:`DecodingProblem.from_dem` would merge)."""
    import stim

    model = stim.DetectorErrorModel(dem) if isinstance(dem, str) else dem
    cols = [error_targets(inst) for inst in model.flattened() if inst.type == "error"]
    H = np.zeros((model.num_detectors, len(cols)), dtype=np.uint8)
    L = np.zeros((model.num_observables, len(cols)), dtype=np.uint8)
    for j, (dets, obs) in enumerate(cols):
        H[sorted(dets), j] = 1
        L[sorted(obs), j] = 1
    return H, L


def decoding_dem(circuit: Any) -> Any:
    """The ``stim.DetectorErrorModel`` decoders see for a ``stim.Circuit``, derived as sinter derives it for a
    task without one: errors decomposed into graphlike parts where stim can, else undecomposed (then with
    loops flattened if stim needs that); ``approximate_disjoint_errors`` always."""
    try:
        return circuit.detector_error_model(decompose_errors=True, approximate_disjoint_errors=True)
    except ValueError:
        try:
            return circuit.detector_error_model(approximate_disjoint_errors=True)
        except ValueError:
            return circuit.detector_error_model(approximate_disjoint_errors=True, flatten_loops=True)
