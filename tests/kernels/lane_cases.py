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
