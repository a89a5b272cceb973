"""The matching gap: the lightest matching of each other logical class, one extra matching per observable.

For the unit see :mod:`qdecode.decoders.confidence`. Given a matching graph (detector-detector
edges and boundary edges, each with a weight and the observables it flips), the best correction
comes from one ordinary matching; this module finds, for each observable ``i``, the lightest
correction whose observable ``i`` differs from a given prediction (other observables free).

Method (one graph per observable ``i``):

1. A *potential* ``phi_i(v)`` in {0, 1} on the detectors, by BFS over the detector-detector edges,
   such that every such edge flips observable ``i`` exactly when ``phi_i(u) xor phi_i(v)``. It
   exists when every cycle of detector-detector edges flips observable ``i`` an even number of
   times (surface and repetition codes: a closed loop of errors is a stabilizer). Where it does
   not exist the method does not apply: the gap is ``nan`` (never a wrong number).
2. Each boundary edge ``(u, boundary)`` gets the label ``g = f_i(edge) xor phi_i(u)``. A new graph
   keeps the detector-detector edges; boundary edges with ``g = 0`` go to PyMatching's boundary,
   those with ``g = 1`` to one extra node ``B1`` (index ``m``).
3. A correction's observable-``i`` parity is the xor of its edges' flips. Summing ``phi_i(u) xor
   phi_i(v)`` and ``g xor phi_i(u)`` over its edges counts each detector as often as the correction
   touches it, i.e. its syndrome bit (mod 2), so the parity is
   ``(xor of phi_i over the fired detectors) xor (number of its edges at B1 mod 2)``. Matching the
   syndrome with ``B1``'s bit set to ``t = c xor phi_i . s`` therefore gives the lightest
   correction of observable-``i`` class ``c``, exactly.

Where no such correction exists (``B1`` has no edge, or ``B1`` lies in a part of the graph without
the boundary whose parity ``t`` would make odd) the weight is ``inf``. The minimum over ``i`` is the
lightest correction of any other class. Cost: ``k`` matchings per shot on graphs of the same size
as the original one (with the best one, ``k + 1``).

Weights: PyMatching discretises edge weights to integers internally (scaled so that the largest
weight uses its integer range) and returns solution weights from them, so two weights of the
same correction may differ by a rounding error: at most ``2.3e-6`` dB (``4e-6`` dB after the
float32 cast) against the exact ``mle`` gap on code-capacity surface (d = 3, 5) and repetition
(d = 5, 7) codes, 200 to 300 shots each (``tests/decoders/test_confidence.py`` checks ``1e-4`` dB).
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np


def detector_potentials(num_detectors: int, det_edges: list[tuple[int, int]], det_flips: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 ``(m, k)`` potentials ``phi``, bool ``(k,)`` consistent) of detector-detector edges.

    ``det_edges[e] = (u, v)`` with uint8 ``det_flips[e]`` (``det_flips`` is ``(E, k)``) its observable flips. BFS from
    the first detector of each connected part (potential 0 there) sets ``phi(v) = phi(u) xor f(uv)``
    along the tree; observable ``i`` is consistent when every edge has ``f_i = phi_i(u) xor phi_i(v)``.

    Examples:
        >>> import numpy as np
        >>> phi, ok = detector_potentials(3, [(0, 1), (1, 2), (0, 2)], np.array([[1], [0], [1]], np.uint8))
        >>> phi[:, 0].tolist(), ok.tolist()
        ([0, 1, 1], [True])
        >>> detector_potentials(3, [(0, 1), (1, 2), (0, 2)], np.array([[1], [1], [1]], np.uint8))[1].tolist()
        [False]
    """
    flips = np.asarray(det_flips, dtype=np.uint8)
    k = flips.shape[1]
    adjacency: list[list[tuple[int, int]]] = [[] for _ in range(num_detectors)]
    for e, (u, v) in enumerate(det_edges):
        adjacency[u].append((v, e))
        adjacency[v].append((u, e))
    phi = np.zeros((num_detectors, k), dtype=np.uint8)
    seen = np.zeros(num_detectors, dtype=bool)
    for root in range(num_detectors):
        if seen[root]:
            continue
        seen[root] = True
        queue = collections.deque([root])
        while queue:
            u = queue.popleft()
            for v, e in adjacency[u]:
                if not seen[v]:
                    seen[v] = True
                    phi[v] = phi[u] ^ flips[e]
                    queue.append(v)
    if not det_edges:
        return phi, np.ones(k, dtype=bool)
    uv = np.asarray(det_edges, dtype=np.int64)
    consistent = ~np.any((phi[uv[:, 0]] ^ phi[uv[:, 1]]) != flips, axis=0)
    return phi, consistent


class MatchingGap:
    """The class matchings of one PyMatching graph (module docstring), built once per decoder.

    Args:
        matching: a ``pymatching.Matching`` whose ``edges()`` are the graph (already merged: one
            edge per detector pair, one boundary edge per detector), fault ids = observables; an
            edge to one of its ``boundary`` nodes (``from_check_matrix`` adds one) is a boundary edge.
        num_detectors: ``m``.
        num_observables: ``k``.

    Attributes:
        phi: uint8 ``(m, k)`` detector potentials.
        consistent: bool ``(k,)``; where False the gap is ``nan``.
    """

    def __init__(self, matching: Any, num_detectors: int, num_observables: int):
        import pymatching

        m, k = num_detectors, num_observables
        det_edges, det_w, det_f, bnd, bnd_w, bnd_f = [], [], [], [], [], []
        boundary = set(matching.boundary)  # explicit boundary nodes (from_check_matrix adds one, index m)
        for u, v, attrs in matching.edges():
            f = np.zeros(k, dtype=np.uint8)
            f[[i for i in attrs.get("fault_ids", ()) if i < k]] = 1
            if u in boundary:
                u, v = v, u
            if u is None or u in boundary:
                continue  # boundary to boundary: never part of a matching
            if v is None or v in boundary:
                bnd.append(u)
                bnd_w.append(attrs["weight"])
                bnd_f.append(f)
            else:
                det_edges.append((u, v))
                det_w.append(attrs["weight"])
                det_f.append(f)
        det_f_arr = np.array(det_f, np.uint8).reshape(len(det_edges), k)
        self.phi, self.consistent = detector_potentials(m, det_edges, det_f_arr)
        bnd_f_arr = np.array(bnd_f, np.uint8).reshape(len(bnd), k)
        # per observable: its class graph (None: B1 has no edge, the class is fixed by the syndrome), and
        # the detectors of B1's part when that part has no boundary (None: B1 reaches the boundary)
        self._graphs: list[Any] = []
        self._closed_part: list[np.ndarray | None] = []
        for i in range(k):
            if not self.consistent[i]:
                self._graphs.append(None)
                self._closed_part.append(None)
                continue
            g = bnd_f_arr[:, i] ^ self.phi[bnd, i] if bnd else np.zeros(0, np.uint8)
            if not np.any(g):
                self._graphs.append(None)
                self._closed_part.append(None)
                continue
            graph = pymatching.Matching()
            # parallel edges of one class (two boundary edges of a detector, both relabelled g = 0, say):
            # only the lightest can be in a lightest correction, so keeping it is exact
            merge = "smallest-weight"
            for (u, v), w in zip(det_edges, det_w):
                graph.add_edge(u, v, weight=w, merge_strategy=merge)
            for u, w, gi in zip(bnd, bnd_w, g):
                if gi:
                    graph.add_edge(u, m, weight=w, merge_strategy=merge)
                else:
                    graph.add_boundary_edge(u, weight=w, merge_strategy=merge)
            self._graphs.append(graph)
            self._closed_part.append(_closed_part(m, det_edges, [u for u, gi in zip(bnd, g) if not gi],
                                                  [u for u, gi in zip(bnd, g) if gi]))

    def other_class_weights(self, syndromes: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        """float64 ``(S,)``: the least weight of a correction of ``syndromes`` (uint8 ``(S, m)``) with
        some observable other than ``predicted`` (uint8 ``(S, k)``); ``inf``: none; ``nan``: some
        observable has no potential (the method does not apply to this graph).
        """
        s = np.asarray(syndromes, dtype=np.uint8)
        S, m = s.shape
        out = np.full(S, np.inf)
        if not np.all(self.consistent):
            out[:] = np.nan
            return out
        parity = (s.astype(np.int64) @ self.phi.astype(np.int64)) & 1  # (S, k): xor of phi over fired detectors
        for i, graph in enumerate(self._graphs):
            if graph is None:
                continue
            t = (np.asarray(predicted[:, i], dtype=np.int64) ^ 1 ^ parity[:, i]).astype(np.uint8)
            part = self._closed_part[i]
            feasible = np.ones(S, dtype=bool) if part is None else ((s[:, part].sum(axis=1) + t) % 2 == 0)
            rows = np.flatnonzero(feasible)
            if rows.size == 0:
                continue
            ext = np.zeros((rows.size, graph.num_detectors), dtype=np.uint8)
            ext[:, :m] = s[rows]
            ext[:, m] = t[rows]
            _, w = graph.decode_batch(ext, return_weights=True)
            out[rows] = np.minimum(out[rows], w)
        return out


def _closed_part(m: int, det_edges: list[tuple[int, int]], to_boundary: list[int], to_b1: list[int]
                 ) -> np.ndarray | None:
    """int64 detectors of ``B1``'s connected part when it does not reach the boundary, else ``None``.

    Nodes: detectors ``0..m-1``, ``B1 = m``, the boundary ``m + 1``. In a part without the boundary
    a matching exists only for an even number of fired nodes, ``B1``'s bit included.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    pairs = det_edges + [(u, m + 1) for u in to_boundary] + [(u, m) for u in to_b1]
    uv = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    adj = coo_matrix((np.ones(len(uv)), (uv[:, 0], uv[:, 1])), shape=(m + 2, m + 2))
    _, label = connected_components(adj, directed=False)
    if label[m] == label[m + 1]:
        return None
    return np.flatnonzero(label[:m] == label[m])
