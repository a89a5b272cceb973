"""Union-find decoder (Delfosse-Nickerson, arXiv:1709.06218) for graphlike problems.

Every mechanism must flip at most two detectors; a circuit DEM built with
``decompose_errors=True`` is decoded on its decomposed edge form
(:func:`qdecode.decoders.graphlike.graphlike_problem`, as PyMatching builds its graph), in which case
only observable predictions are offered (no per-column estimate of the original hyperedges).
By default unweighted: the growth counts half edges, not edge weights (the decoder of the paper's
code-capacity and phenomenological thresholds). ``length_steps = N > 0`` makes the edges' lengths
proportional to their weights ``log((1 - p) / p)``, the lightest edge ``N`` growth steps (rounded,
at most 254): weighted union-find for circuit noise (Huang, Newman, Brown, arXiv:2004.04693).

The kernel (:mod:`qdecode.kernels.union_find`) grows clusters by half edges and peels a spanning
forest of each; every returned correction satisfies ``H e = s`` (tested), unlike ldpc's
``UnionFindDecoder`` in peeling mode on planar codes. Shots are decoded in contiguous ranges on
``threads`` threads (GIL released).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import (
    DecodeInfo,
    Decoder,
    DecoderCapabilityError,
    DecoderInputError,
    check_syndromes,
    observables_from_errors,
    unpacked_shots,
)
from qdecode.decoders.graphlike import graphlike_problem
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.errors import InputError
from qdecode.kernels.clock import ticks_per_ns
from qdecode.kernels.herald_priors import ShotPriors
from qdecode.kernels.threads import run_ranges
from qdecode.kernels.union_find import UfGraph, UfOut, UfShotLengths, uf_decode_range
from qdecode.problem import DecodingProblem

#: Parameters of ``uf`` and :class:`UnionFindDecoder`.
UF_PARAMS = {
    "growth": Param(str, "weighted", "weighted: grow the smallest odd clusters first (Delfosse-Nickerson); "
                    "uniform: every odd cluster each round", ("weighted", "uniform")),
    "length_steps": Param(int, 0, "0: every edge grows in two half steps; N > 0: edge lengths proportional to "
                          "their weights, the lightest N steps (weighted growth for circuit noise)", minimum=0,
                          maximum=254, label_default=False),
    "threads": Param(int, 0, "threads (0 = numba's thread count); results do not depend on it", minimum=0,
                     in_label=False),
}


#: No per-shot lengths (:class:`~qdecode.kernels.union_find.UfShotLengths` with an empty ``ptr``).
NO_SHOT_LENGTHS = UfShotLengths(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint8))


def decoding_graph(problem: DecodingProblem) -> tuple[np.ndarray, ...]:
    """``(vert_ptr, vert_edges, edge_u, edge_v, columns)`` of a graphlike problem.

    Vertices: the ``m`` detectors, then the boundary ``m``. Edge ``t`` is column ``columns[t]``
    of ``H`` (columns that flip no detector are left out: no decoder can see them).
    """
    H = sp.csc_matrix(problem.H)
    m = problem.num_detectors
    deg = np.diff(H.indptr)
    if deg.size and deg.max() > 2:
        raise DecoderInputError("uf needs every mechanism to flip at most two detectors")
    columns = np.flatnonzero(deg > 0)
    edge_u = H.indices[H.indptr[columns]].astype(np.int64)
    edge_v = np.where(deg[columns] == 2, H.indices[np.minimum(H.indptr[columns] + 1, H.indices.size - 1)], m)
    edge_v = edge_v.astype(np.int64)
    ends = np.concatenate([edge_u, edge_v])
    edges = np.concatenate([np.arange(columns.size), np.arange(columns.size)])
    order = np.argsort(ends, kind="stable")
    vert_ptr = np.zeros(m + 2, dtype=np.int64)
    np.add.at(vert_ptr, ends + 1, 1)
    return np.cumsum(vert_ptr), edges[order].astype(np.int64), edge_u, edge_v, columns


def edge_lengths(priors: np.ndarray, steps: int) -> np.ndarray:
    """uint8 ``(E,)`` growth lengths: 2 everywhere for ``steps == 0``, else
    ``clip(round(steps * w / min(w)), 1, 254)`` with ``w = log((1 - p) / p)`` (weights of ``p >= 1/2``,
    which no minimum-weight decoder would avoid, count as the lightest)."""
    p = np.asarray(priors, dtype=np.float64)
    if steps < 0 or steps > 254:
        raise InputError(f"length_steps must lie in 0..254, got {steps}")
    if steps == 0 or p.size == 0:
        return np.full(p.size, 2, dtype=np.uint8)
    w = np.log1p(-p) - np.log(p)
    pos = w[w > 0]
    wmin = pos.min() if pos.size else 1.0
    return np.clip(np.rint(steps * np.maximum(w, wmin) / wmin), 1, 254).astype(np.uint8)


@uses_params(UF_PARAMS)
class UnionFindDecoder(Decoder):
    """Union-find + peeling.

    Args:
        problem: a graphlike problem, or one with a DEM whose hyperedges are decomposed.
        growth: ``"weighted"`` or ``"uniform"`` (see :data:`UF_PARAMS`).
        length_steps: 0 (half edges) or the lightest edge's growth steps (see :data:`UF_PARAMS`).
        threads: threads for batches (0: numba's count).

    ``last_info.converged`` is False on a shot whose syndrome no error of the graph produces.

    Work bound: every growth round but the last adds one step to the support of at least one edge,
    and a support never shrinks within a shot and is at most its edge's length. So a shot's growth
    ends after at most 1 + sum of the edge lengths rounds: 2 E + 1 with ``length_steps`` 0 (the
    default; E = edges of the decoding graph), at most 254 E + 1 otherwise. A round is one pass over
    the growing clusters' vertices and edges plus the fusions (union by size, finds of O(log V) for
    V = m + 1 vertices). Peeling is one breadth-first pass over the grown edges and one pass back,
    O(V + E).

    Work clock (:attr:`work_unit`): the shot's growth steps, one per edge per growth round that grows
    it (support increments); bounded by the sum of the edge lengths. Wall clock
    (:meth:`predict_observables_timed`): measured in the kernel, per shot.

    Raises:
        DecoderInputError: a column with three or more detectors and no decomposed DEM.
    """

    work_unit = "growth steps (edge support increments)"
    wall_method = "kernel"
    takes_shot_priors = True

    def __init__(self, problem: DecodingProblem, *, growth: str, threads: int, length_steps: int):
        if growth not in ("weighted", "uniform"):
            raise InputError(f"growth={growth!r} must be 'weighted' or 'uniform'")
        self.problem = problem
        self.growth = growth
        self.threads = int(threads)
        self._graph_problem = graphlike_problem(problem)
        self._graph = decoding_graph(self._graph_problem)
        self.length_steps = int(length_steps)
        self._length = edge_lengths(self._graph_problem.priors[self._graph[4]], self.length_steps)
        columns = self._graph[4]
        self._edge_of = np.full(self._graph_problem.num_errors, -1, dtype=np.int64)
        self._edge_of[columns] = np.arange(columns.size)
        w = self._graph_problem.llr[columns]
        self._lightest = float(w[w > 0].min()) if (w > 0).any() else 1.0

    @property
    def prior_problem(self) -> DecodingProblem:
        """The graphlike form the kernel decodes (per-shot priors index its columns)."""
        return self._graph_problem

    def shot_lengths(self, priors: ShotPriors) -> UfShotLengths:
        """Per-shot edge lengths from per-shot priors: the weighted rule of :func:`edge_lengths` for the shot's
        weight ``w = max(ln((1 - p) / p), 0)``, ``clip(round(N w / w_min), 1, cap)`` with ``w_min`` the graph's
        lightest weight; ``N`` = ``length_steps`` and cap 254, or ``N`` = cap = 2 for half-edge growth (an edge
        of weight below ``3/4 w_min``, e.g. an erased qubit's at ``w = 0``, then grows in one step instead of two)."""
        edge = self._edge_of[priors.col]
        keep = edge >= 0
        kept = np.concatenate([[0], np.cumsum(keep)])
        p = priors.prior[keep]
        w = np.maximum(np.log((1.0 - p) / p), 0.0)
        steps, cap = (self.length_steps, 254) if self.length_steps else (2, 2)
        length = np.clip(np.rint(steps * w / self._lightest), 1, cap).astype(np.uint8)
        return UfShotLengths(kept[priors.ptr].astype(np.int64), edge[keep], length)

    def predict_observables_with_priors(self, syndromes: np.ndarray, priors: ShotPriors) -> np.ndarray:
        """:meth:`predict_observables_batch` with per-shot priors (:meth:`Decoder.predict_observables_with_priors`):
        each shot's edges grown to the lengths of its priors (:meth:`shot_lengths`)."""
        return observables_from_errors(self._decode_graph(syndromes, shot=self.shot_lengths(priors)),
                                       self._graph_problem)

    def _decode_graph(self, syndromes: np.ndarray, timed: bool = False,
                      shot: UfShotLengths | None = None) -> np.ndarray:
        """Corrections on the decoding graph's columns: uint8 ``(S, n_graph)``."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        vert_ptr, vert_edges, edge_u, edge_v, columns = self._graph
        S = s.shape[0]
        result = UfOut(np.zeros((S, columns.size), dtype=np.uint8), np.zeros(S, dtype=bool),
                       np.zeros(S, dtype=np.int64), np.zeros(S if timed else 0, dtype=np.int64))
        if shot is None:
            shot = NO_SHOT_LENGTHS
        args = (UfGraph(vert_ptr, vert_edges, edge_u, edge_v, self._length), s, self.growth == "weighted", shot,
                result)
        if timed:  # one thread, the shots one after another
            uf_decode_range(*args, 0, S)
        else:
            run_ranges(uf_decode_range, args, S, self.threads or None)
        wall = result.elapsed / ticks_per_ns() if timed else None
        self.last_info = DecodeInfo(converged=result.converged, work=result.steps, wall_ns=wall)
        full = np.zeros((S, self._graph_problem.num_errors), dtype=np.uint8)
        full[:, columns] = result.correction
        return full

    def predict_observables_timed(self, packed: np.ndarray) -> np.ndarray:
        """Real-time mode (:meth:`Decoder.predict_observables_timed`): the kernel decodes the shots one after
        another on one thread and reads :func:`~qdecode.kernels.clock.ticks` around each; the answers are
        the batch path's."""
        m = self.problem.num_detectors
        s = unpacked_shots(packed, m)
        obs = observables_from_errors(self._decode_graph(s, timed=True), self._graph_problem)
        return np.packbits(obs, axis=1, bitorder="little")

    @property
    def gives_errors(self) -> bool:
        """Error estimates per column only where the problem is its own graphlike form."""
        return self._graph_problem is self.problem

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        if not self.gives_errors:
            raise DecoderCapabilityError("uf returns per-column estimates only for graphlike H; use "
                                    "predict_observables_batch for circuit DEMs with decomposed hyperedges")
        return self._decode_graph(syndromes)

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        return observables_from_errors(self._decode_graph(syndromes), self._graph_problem)


ENTRIES = {
    "uf": DecoderEntry("uf", UnionFindDecoder, UF_PARAMS, takes_shot_priors=True,
                       doc="union-find + peeling (Delfosse-Nickerson) on graphlike problems, numba"),
}
