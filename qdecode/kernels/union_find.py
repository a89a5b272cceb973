"""Union-find decoding on a decoding graph (Delfosse and Nickerson, arXiv:1709.06218), then peeling.

Graph: vertices are the ``m`` detectors plus one boundary vertex ``m``; edge ``e`` joins the two
detectors its mechanism flips (``edge_u[e], edge_v[e]``), or its one detector and the boundary.
Per shot:

1. **Growth.** Clusters (union-find trees over vertices) start as the flagged detectors. A cluster
   is *odd* when it holds an odd number of flagged detectors and not the boundary vertex. Each
   round grows odd clusters by one step: every edge at a member vertex that is not fully grown
   gains one step (``support`` 0 -> 1 -> ... -> ``length[e]``; ``length`` 2 everywhere is
   Delfosse-Nickerson's half-edge growth, lengths proportional to the edge weights
   ``log((1 - p) / p)`` the weighted growth of Huang, Newman and Brown, arXiv:2004.04693, for
   circuit noise); a fully grown edge fuses the clusters at its ends
   (union by size, parity XOR, boundary OR). ``weighted`` growth (Delfosse-Nickerson's) grows
   only the odd clusters of smallest size each round, uniform growth every odd cluster.
   Growth stops when no odd cluster remains.
2. **Peeling** (Delfosse and Zemor, arXiv:1703.01517). A spanning forest of the fully grown edges,
   rooted at the boundary where a tree touches it, is peeled from the leaves: a leaf vertex that
   is still flagged puts its tree edge into the correction and passes its flag to its parent.
   Every tree of a valid cluster ends with no flag left except possibly at the boundary, so the
   correction ``e`` satisfies ``H e = s``.

A shot whose odd cluster cannot grow any further (its component holds an odd number of flags and
no boundary: a syndrome no error produces) is returned with ``converged = False``.

State is reset per shot only where it was touched, so a shot costs time in proportion to its
clusters, not to the graph; a vertex whose edges are all fully grown is marked interior and skipped
by later growth rounds (the cluster's boundary is what grows).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.clock import ticks


class UfGraph(NamedTuple):
    """The decoding graph (``V = m + 1`` vertices, boundary vertex ``m`` last; ``E`` edges)."""

    vert_ptr: np.ndarray  # (V + 1,) int64: CSR incidence of the vertices
    vert_edges: np.ndarray  # (2 E,) int64: the edges at each vertex
    edge_u: np.ndarray  # (E,) int64: edge ends (edge_v[e] = m for a boundary edge)
    edge_v: np.ndarray  # (E,) int64
    length: np.ndarray  # (E,) uint8: growth steps that fully grow each edge, 1..254 (2 everywhere: half edges)


class UfShotLengths(NamedTuple):
    """Per-shot edge lengths (CSR over shots; empty ``ptr``: none): shot ``s`` grows edge ``edge[k]`` to
    ``length[k]`` steps instead of the graph's, ``k`` in ``ptr[s]:ptr[s+1]`` (per-shot priors, e.g. heralds)."""

    ptr: np.ndarray  # (S + 1,) int64, or (0,)
    edge: np.ndarray  # (nnz,) int64
    length: np.ndarray  # (nnz,) uint8, 1..254


class UfOut(NamedTuple):
    """Per-shot outputs of :func:`uf_decode_range` (``S`` shots; a range writes its rows)."""

    correction: np.ndarray  # (S, E) uint8, zeroed by the caller: the correction per edge
    converged: np.ndarray  # (S,) bool: False where growth got stuck (no correction satisfies the syndrome)
    steps: np.ndarray  # (S,) int64: growth steps, one per edge per growth round that grows it (the work clock)
    elapsed: np.ndarray  # (S,) int64 ticks of each shot (qdecode.kernels.clock), or (0,): not timed


@numba.njit(cache=True, nogil=True, inline="always")
def _find(parent, v):
    """Root of ``v``'s cluster, with path compression."""
    r = v
    while parent[r] != r:
        r = parent[r]
    while parent[v] != r:
        nx = parent[v]
        parent[v] = r
        v = nx
    return r


@numba.njit(cache=True, nogil=True, inline="always")
def _other(e, v, edge_u, edge_v):
    """The end of edge ``e`` that is not ``v``."""
    return edge_v[e] if edge_u[e] == v else edge_u[e]


@numba.njit(cache=True, nogil=True)
def uf_decode_range(graph, syndromes, weighted, shot_lengths, result, start, stop):
    """Decode shots ``start:stop``.

    Args:
        graph: :class:`UfGraph`.
        syndromes: uint8 ``(S, m)``.
        weighted: grow only the smallest odd clusters each round (else every odd cluster).
        shot_lengths: :class:`UfShotLengths`, each shot's own lengths of some edges (set before the shot,
            restored after it; a range works on its own copy of the lengths).
        result: :class:`UfOut`; with a non-empty ``elapsed`` each shot is timed with
            :func:`~qdecode.kernels.clock.ticks`, from reading its syndrome to the end of its state reset
            (the scratch is allocated once per range, before the first shot).
    """
    # long: growth, fusion and peeling share ~20 work arrays and counters (split needs a work tuple)
    vert_ptr, vert_edges, edge_u, edge_v = graph.vert_ptr, graph.vert_edges, graph.edge_u, graph.edge_v
    per_shot = shot_lengths.ptr.shape[0] > 0
    length = graph.length.copy() if per_shot else graph.length
    saved = np.zeros(shot_lengths.length.shape[0], dtype=np.uint8)
    out, converged, steps, elapsed = result.correction, result.converged, result.steps, result.elapsed
    timed = elapsed.shape[0] > 0
    V = vert_ptr.shape[0] - 1
    E = edge_u.shape[0]
    m = V - 1
    parent = np.arange(V)
    size = np.ones(V, dtype=np.int64)
    parity = np.zeros(V, dtype=np.uint8)
    bnd = np.zeros(V, dtype=np.uint8)
    bnd[m] = 1
    nxt = np.full(V, -1, dtype=np.int64)  # member lists: root first, nxt chain, tail per root
    tail = np.arange(V)
    support = np.zeros(E, dtype=np.uint8)
    flag = np.zeros(V, dtype=np.uint8)  # peeling's flags
    seen = np.zeros(V, dtype=np.uint8)  # touched this shot
    visited = np.zeros(V, dtype=np.uint8)
    listed = np.zeros(V, dtype=np.uint8)
    interior = np.zeros(V, dtype=np.uint8)  # all edges fully grown (skipped by growth)
    par_edge = np.full(V, -1, dtype=np.int64)
    touched_v = np.zeros(V, dtype=np.int64)
    touched_e = np.zeros(E, dtype=np.int64)
    fusion = np.zeros(E, dtype=np.int64)
    odd = np.zeros(V, dtype=np.int64)
    odd2 = np.zeros(V, dtype=np.int64)
    order = np.zeros(V, dtype=np.int64)
    for s in range(start, stop):
        t0 = ticks() if timed else 0
        if per_shot:
            for k in range(shot_lengths.ptr[s], shot_lengths.ptr[s + 1]):
                e = shot_lengths.edge[k]
                saved[k] = length[e]
                length[e] = shot_lengths.length[k]
        nt_v = 0
        nt_e = 0
        nodd = 0
        for i in range(m):
            if syndromes[s, i]:
                parity[i] = 1
                flag[i] = 1
                seen[i] = 1
                touched_v[nt_v] = i
                nt_v += 1
                odd[nodd] = i
                nodd += 1
        ok = True
        grown = 0
        while nodd > 0:
            msz = size[odd[0]]
            for t in range(1, nodd):
                msz = min(msz, size[odd[t]])
            nf = 0
            grew = False
            for t in range(nodd):
                r = odd[t]
                if weighted and size[r] != msz:
                    continue
                v = r
                while v != -1:
                    if not interior[v]:
                        open_edges = False
                        for k in range(vert_ptr[v], vert_ptr[v + 1]):
                            e = vert_edges[k]
                            if support[e] < length[e]:
                                if support[e] == 0:
                                    touched_e[nt_e] = e
                                    nt_e += 1
                                support[e] += 1
                                grown += 1
                                grew = True
                                if support[e] == length[e]:
                                    fusion[nf] = e
                                    nf += 1
                                else:
                                    open_edges = True
                        if not open_edges:  # every edge fully grown: v never grows again this shot
                            interior[v] = 1
                    v = nxt[v]
            if not grew:  # the clusters chosen to grow have no edge left: their syndrome is unreachable
                ok = False
                break
            for f in range(nf):
                e = fusion[f]
                u = edge_u[e]
                w = edge_v[e]
                for x in (u, w):
                    if not seen[x]:
                        seen[x] = 1
                        touched_v[nt_v] = x
                        nt_v += 1
                a = _find(parent, u)
                b = _find(parent, w)
                if a != b:
                    if size[a] < size[b]:
                        a, b = b, a
                    parent[b] = a
                    size[a] += size[b]
                    parity[a] ^= parity[b]
                    bnd[a] |= bnd[b]
                    nxt[tail[a]] = b
                    tail[a] = tail[b]
            n2 = 0
            for t in range(nodd):
                r = _find(parent, odd[t])
                if parity[r] and not bnd[r] and not listed[r]:
                    listed[r] = 1
                    odd2[n2] = r
                    n2 += 1
            for t in range(n2):
                listed[odd2[t]] = 0
                odd[t] = odd2[t]
            nodd = n2
        # peeling: BFS forests over fully grown edges, the boundary's tree first
        no = 0
        for root_i in range(-1, nt_v):
            root = m if root_i < 0 else touched_v[root_i]
            if visited[root] or (root_i < 0 and not seen[m]) or (root_i >= 0 and not flag[root]):
                continue
            visited[root] = 1
            par_edge[root] = -1
            order[no] = root
            no += 1
            head = no - 1
            while head < no:
                v = order[head]
                head += 1
                for k in range(vert_ptr[v], vert_ptr[v + 1]):
                    e = vert_edges[k]
                    if support[e] == length[e]:
                        w = _other(e, v, edge_u, edge_v)
                        if not visited[w]:
                            visited[w] = 1
                            par_edge[w] = e
                            order[no] = w
                            no += 1
        for t in range(no - 1, -1, -1):
            v = order[t]
            e = par_edge[v]
            if e >= 0 and flag[v]:
                out[s, e] ^= 1
                flag[v] = 0
                w = _other(e, v, edge_u, edge_v)
                flag[w] ^= 1
        for t in range(no):
            v = order[t]
            if flag[v] and v != m:
                ok = False
        converged[s] = ok
        steps[s] = grown
        # reset what this shot touched
        for t in range(nt_v):
            v = touched_v[t]
            parent[v] = v
            size[v] = 1
            parity[v] = 0
            bnd[v] = 0
            nxt[v] = -1
            tail[v] = v
            flag[v] = 0
            seen[v] = 0
            visited[v] = 0
            interior[v] = 0
            par_edge[v] = -1
        bnd[m] = 1
        for t in range(nt_e):
            support[touched_e[t]] = 0
        if per_shot:  # in reverse: an edge listed twice gets its first saved length back
            for k in range(shot_lengths.ptr[s + 1] - 1, shot_lengths.ptr[s] - 1, -1):
                length[shot_lengths.edge[k]] = saved[k]
        if timed:
            elapsed[s] = ticks() - t0
