"""The circuit-level problems the lane-kernel tests decode, built once per process."""

from __future__ import annotations

import functools

import numpy as np

from qdecode.kernels.bp import tanner_graph_csr
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit


@functools.lru_cache(maxsize=None)
def lane_case(name: str, shots: int):
    """``(problem, detector samples (shots, m) uint8, Tanner graph)`` of ``"surf5"`` (rotated surface code d = 5,
    SD6, p = 0.005, Z detectors only) or ``"bb72"`` ([[72,12,6]], bb-uniform, p = 0.004), seed 11."""
    if name == "surf5":
        c = build_circuit("surface", d=5, noise="sd6", p=0.005, basis="Z", memory_basis_only=True)
    else:
        c = build_circuit("bb72_12_6", noise="bb-uniform", p=0.004, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    dets = c.compile_detector_sampler(seed=11).sample(shots).astype(np.uint8)
    graph = tanner_graph_csr(prob.H.indptr, prob.H.indices, prob.H.shape[1])
    return prob, dets, graph


#: the check degrees of :func:`wide_case`'s two wide checks (above 255: uint16 edge slots)
WIDE_DEGREES = (300, 270)


@functools.lru_cache(maxsize=None)
def wide_case(shots: int):
    """``(problem, syndromes (shots, m) uint8, Tanner graph)`` of a 400-bit repetition code (checks ``(j, j + 1)``)
    with two wide checks, on bits ``0:300`` (check 0) and ``90:360`` (check 1): edge slots above 255. Priors
    ``p_j`` in ``[0.005, 0.05)``, highest on bits ``260:300``, so that the least message of check 0 is often
    at a slot above 255; errors drawn from them (seed 13), every third syndrome uniformly random instead."""
    import scipy.sparse as sp

    n = 400
    rows = [np.arange(300), np.arange(90, 360)] + [np.array([j, j + 1]) for j in range(n - 1)]
    indptr = np.cumsum([0] + [len(r) for r in rows])
    H = sp.csr_matrix((np.ones(indptr[-1], np.uint8), np.concatenate(rows), indptr), shape=(len(rows), n))
    rng = np.random.default_rng(13)
    p = rng.uniform(0.005, 0.02, size=n)
    p[260:300] = rng.uniform(0.03, 0.05, size=40)
    L = sp.csr_matrix(([1], ([0], [0])), shape=(1, n), dtype=np.uint8)
    prob = DecodingProblem(H=H, L=L, priors=p)
    err = (rng.random((shots, n)) < p).astype(np.uint8)
    syn = np.ascontiguousarray((H @ err.T).T % 2, dtype=np.uint8)
    syn[::3] = rng.integers(0, 2, size=syn[::3].shape, dtype=np.uint8)  # mostly no solution: every iteration runs
    graph = tanner_graph_csr(prob.H.indptr, prob.H.indices, prob.H.shape[1])
    return prob, syn, graph
