"""MWPF, the hypergraph Minimum-Weight Parity Factor decoder, as a registered qdecode decoder.

MWPF (Yue Wu, Lin Zhong et al., arXiv:2508.04969; PyPI ``mwpf``) generalises minimum-weight
perfect matching to hypergraphs. Each error mechanism ``j`` (a column of ``H``) is a hyperedge
on the detectors it flips, with weight ``w_j = ln((1 - p_j) / p_j)`` (``problem.llr``); for a
syndrome ``s`` it looks for a *parity factor* ``e`` (a set of hyperedges with ``H e = s mod 2``)
of minimum total weight ``sum_j w_j e_j``, i.e. a most likely error. It solves the LP relaxation
of that integer program by a primal-dual method: a union-find-like search grows dual variables
on *invalid subgraphs* (clusters that cannot yet explain their defects) until every cluster has
a valid parity factor, then plugins ("single hair", "joint single hair") tune the dual
variables of each cluster to close the gap between the primal weight and the dual bound; a
cluster whose gap closes is solved exactly (the answer is then proved optimal). It decodes
hyperedges directly (colour codes, ``^``-free DEMs, qLDPC check matrices); on a graphlike model
it is a matching decoder.

Parameters:

* ``solver``: ``joint_single_hair`` (mwpf's ``SolverSerialJointSingleHair``, its ``Solver`` and
  the default of its sinter decoder: the most accurate), ``single_hair``
  (``SolverSerialSingleHair``) or ``union_find`` (``SolverSerialUnionFind``: the first valid
  parity factor the growth finds, no tuning; fastest, least accurate).
* ``cluster_node_limit``: a cluster stops being tuned once it holds this many dual variables
  (nodes) and keeps its current valid solution: the trade of accuracy for time. 0 takes mwpf's
  sinter default, :data:`MWPF_DEFAULT_CLUSTER_NODE_LIMIT` (50); a very large value (e.g. 10**9)
  never stops tuning (mwpf's bare solver default). Ignored by ``union_find``.
* ``only_solve_primal_once``: solve the primal problem once at the end of the tuning instead of
  after every plugin round (faster, may miss a better parity factor).

mwpf's wall-clock ``timeout`` is not offered: it would make a label's results depend on the
machine's load.

Weights are passed as floats, ``problem.llr`` unscaled and unrounded (mwpf 0.2.12 takes float
weights; it needs no integer scaling), so the weights MWPF minimises are exactly the
log-likelihood ratios. Mechanisms with ``p > 1/2`` are complemented first, as
:func:`~qdecode.decoders.matching.complement_likely_errors` does for a DEM: writing ``e_j = 1 +
e'_j``, ``e'_j`` has probability ``1 - p_j`` and weight ``-w_j > 0``, its detectors move into the
syndrome, and the estimate is ``e' + 1_{p > 1/2}`` (exact: the most likely error is the same).
Columns that flip no detector are left out of the hypergraph (their weight is then positive:
never part of a minimum-weight factor). Any :class:`~qdecode.problem.DecodingProblem` is
accepted, a DEM's or a bare check matrix's.

Vectorised except for one step: mwpf has no batch call, so the solver runs in a per-shot Python
loop, once per shot with a nonzero syndrome (all-zero syndromes skip it). Validation, the
complement, the defect lists (one ``np.nonzero`` over the batch), the scatter of the chosen
hyperedges into ``(S, n)`` and ``L e mod 2`` are whole-batch numpy operations. Where the
observables do not depend on the detectors, :meth:`MwpfDecoder.predict_observables_batch` answers
:func:`~qdecode.decoders.base.constant_prediction` without the solver. :meth:`decode_batch`
returns the chosen mechanisms (``(S, n)`` uint8, ``H e = s mod 2`` on every shot).
"""

from __future__ import annotations

import numpy as np

from qdecode.decoders.base import Decoder, DecoderInputError, check_syndromes, constant_prediction
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.errors import MissingPackageError
from qdecode.problem import DecodingProblem

#: ``solver`` parameter -> mwpf's solver class.
SOLVERS = {
    "joint_single_hair": "SolverSerialJointSingleHair",
    "single_hair": "SolverSerialSingleHair",
    "union_find": "SolverSerialUnionFind",
}
#: ``cluster_node_limit`` of mwpf's own sinter decoder (``mwpf.sinter_decoders.default_cluster_node_limit``).
MWPF_DEFAULT_CLUSTER_NODE_LIMIT = 50

#: Parameters of ``mwpf`` and :class:`MwpfDecoder` (the class takes its defaults from here).
MWPF_PARAMS = {
    "solver": Param(str, "joint_single_hair", "joint_single_hair (most accurate) | single_hair | union_find "
                    "(fastest, no tuning)", tuple(SOLVERS)),
    "cluster_node_limit": Param(int, 0, "dual variables per cluster before its tuning stops (accuracy for time); "
                                f"0 = mwpf's default, {MWPF_DEFAULT_CLUSTER_NODE_LIMIT}", minimum=0),
    "only_solve_primal_once": Param(bool, False, "solve the primal once at the end of tuning, not every round"),
}


def _import_mwpf():
    try:
        import mwpf
    except ImportError as exc:  # pragma: no cover - mwpf is a core dependency
        raise MissingPackageError("the 'mwpf' decoder needs mwpf: pip install mwpf") from exc
    return mwpf


def _is_panic(exc: BaseException) -> bool:
    """A Rust panic surfaced by pyo3 (``pyo3_runtime.PanicException``, a ``BaseException``)."""
    return type(exc).__name__ == "PanicException"


def _first_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@uses_params(MWPF_PARAMS)
class MwpfDecoder(Decoder):
    """MWPF minimum-weight parity factor (module docstring), compiled for one problem.

    Args:
        problem: any decoding problem (``DecodingProblem.from_dem`` or a check matrix with priors).
        solver: ``joint_single_hair``, ``single_hair`` or ``union_find``.
        cluster_node_limit: nodes per cluster before tuning stops (0 = mwpf's default, 50).
        only_solve_primal_once: solve the primal once, after tuning.

    Work bound: one mwpf solve per shot with a nonzero syndrome (none for all-zero syndromes). Its
    search phase grows clusters, union-find style, until each holds a valid parity factor: every
    growth step makes a hyperedge tight or merges clusters, and clusters only grow, so it ends
    within (hyperedges + detectors) steps for every syndrome the model can produce. Its tuning phase
    (not run by ``union_find``) adds dual variables to a cluster only while the cluster holds fewer
    than ``cluster_node_limit`` of them (0 = 50), then keeps that cluster's valid parity factor.

    Work clock (:attr:`work_unit`): none. mwpf's solver API (``solve``, ``subgraph``, ``snapshot``,
    ``dual_report``) reports no count of its growth steps or tuning work per solve, so there is nothing
    deterministic to read; the wall clock alone (:meth:`predict_observables_timed`, one call per shot).

    Raises:
        DecoderInputError: a parameter out of range, or a syndrome that no set of the model's
            mechanisms produces (at decode time; mwpf cannot solve it).
    """

    def __init__(self, problem: DecodingProblem, *, solver: str, cluster_node_limit: int,
                 only_solve_primal_once: bool):
        if solver not in SOLVERS:
            raise DecoderInputError(f"mwpf: solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
        if int(cluster_node_limit) < 0:
            raise DecoderInputError(f"mwpf: cluster_node_limit must be >= 0, got {cluster_node_limit}")
        mwpf = _import_mwpf()
        self.problem = problem
        self.solver_name = solver
        self.cluster_node_limit = int(cluster_node_limit) or MWPF_DEFAULT_CLUSTER_NODE_LIMIT
        self._syndrome_pattern = mwpf.SyndromePattern
        self._constant = constant_prediction(problem)

        H = problem.H.tocsc()
        H.sort_indices()
        llr = problem.llr
        flip = problem.priors > 0.5  # complemented: decode e' = e + 1 with weight -llr > 0
        self._flip = flip.astype(np.uint8) if flip.any() else None
        self._det_flip = None
        if self._flip is not None:
            det_flip = np.asarray(H @ self._flip.astype(np.int64)).reshape(-1) & 1
            self._det_flip = det_flip.astype(np.uint8) if det_flip.any() else None
        weights = np.where(flip, -llr, llr)
        degree = np.diff(H.indptr)
        #: mwpf edge index -> column of H (columns without detectors are left out).
        self._edge_column = np.flatnonzero(degree > 0).astype(np.int64)
        edges = [mwpf.HyperEdge(H.indices[H.indptr[j]:H.indptr[j + 1]].tolist(), w)
                 for j, w in zip(self._edge_column.tolist(), weights[self._edge_column].tolist())]
        config = {"cluster_node_limit": self.cluster_node_limit, "only_solve_primal_once": bool(only_solve_primal_once)}
        try:
            initializer = mwpf.SolverInitializer(problem.num_detectors, edges)
            self._solver = getattr(mwpf, SOLVERS[solver])(initializer, config)
        except BaseException as exc:  # noqa: BLE001 - mwpf reports bad input as a Rust panic
            if not (_is_panic(exc) or isinstance(exc, (ValueError, TypeError))):
                raise
            raise DecoderInputError(f"mwpf cannot build a solver for this model: {_first_line(exc)}") from None

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` syndromes -> uint8 ``(S, n)`` chosen mechanisms (``H e = s mod 2``).

        Raises:
            DecoderInputError: bad syndromes, or one that no set of the model's mechanisms produces.
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S, n = s.shape[0], self.problem.num_errors
        out = np.zeros((S, n), dtype=np.uint8)
        if self._det_flip is not None:
            s = s ^ self._det_flip
        shots, dets = np.nonzero(s)  # row-major: the defects of each shot are contiguous and sorted
        if shots.size:
            bounds = np.searchsorted(shots, np.arange(S + 1))
            rows = np.flatnonzero(bounds[1:] > bounds[:-1])
            dets_list = dets.tolist()
            starts, stops = bounds[rows].tolist(), bounds[rows + 1].tolist()
            chosen: list[list[int]] = []
            solver, pattern = self._solver, self._syndrome_pattern
            for a, b in zip(starts, stops):  # mwpf has no batch call: one solve per nonzero shot
                try:
                    solver.solve(pattern(dets_list[a:b]))
                    chosen.append(solver.subgraph())
                except BaseException as exc:  # noqa: BLE001 - pyo3 panics are BaseExceptions
                    if not _is_panic(exc):
                        raise
                    raise DecoderInputError(
                        "mwpf: a syndrome is produced by no set of the model's mechanisms (were the shots "
                        f"sampled from this model?): {_first_line(exc)}") from None
            counts = np.fromiter((len(c) for c in chosen), dtype=np.int64, count=len(chosen))
            if counts.sum():
                edge = np.fromiter((i for c in chosen for i in c), dtype=np.int64, count=int(counts.sum()))
                out[np.repeat(rows, counts), self._edge_column[edge]] = 1
        if self._flip is not None:
            out ^= self._flip
        return out

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)``: ``L e mod 2``, or the constant prediction."""
        if self._constant is not None:
            s = check_syndromes(syndromes, self.problem.num_detectors)
            return np.tile(self._constant, (s.shape[0], 1)).reshape(s.shape[0], self.problem.num_observables)
        return super().predict_observables_batch(syndromes)


ENTRIES = {
    "mwpf": DecoderEntry("mwpf", MwpfDecoder, MWPF_PARAMS,
                         doc="MWPF hypergraph minimum-weight parity factor (any model, hyperedges included)"),
}
