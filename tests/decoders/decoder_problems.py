"""One small problem each registered syndrome decoder accepts, and the decoder built on it.

Most decoders take any DEM; two need structure: Chromobius reads colour-code detectors (the
4th coordinate) and the shipped ``nn-pymatching`` models a d = 5 rotated surface code with
stim's ``(x, y, t)`` coordinates. Shared by the API-input and no-hang tests.

Also :func:`code_capacity`, the code-capacity problems on which the confidence tests hold a decoder's
gap against ``mle``'s exact one, and :func:`random_check_matrix`, the small random problems on which
they enumerate every error.
"""

from __future__ import annotations

import functools

import numpy as np
import stim

from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.problem import DecodingProblem

QUANTUM = [name for name in decoder_names() if get_entry(name).kind == "quantum"]


@functools.lru_cache(maxsize=None)
def accepted_dem(name: str) -> stim.DetectorErrorModel:
    """A small circuit DEM that decoder ``name`` decodes (module docstring)."""
    if name == "chromobius":
        from qdecode.sims.color_circuit import color_memory_circuit

        return color_memory_circuit(3, rounds=3, noise="sd6", p=0.002).detector_error_model()
    distance = 5 if name == "nn-pymatching" else 3
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=distance, rounds=distance,
                                     after_clifford_depolarization=0.004, before_measure_flip_probability=0.004)
    return circuit.detector_error_model(decompose_errors=True)


@functools.lru_cache(maxsize=None)
def accepted_decoder(name: str):
    """Decoder ``name`` at its defaults on :func:`accepted_dem` (built once per process)."""
    return DecoderSpec.create(name).build(DecodingProblem.from_dem(accepted_dem(name)))


@functools.lru_cache(maxsize=None)
def sampled_shots(name: str, shots: int = 40) -> np.ndarray:
    """uint8 ``(shots, m)`` detection events sampled from :func:`accepted_dem` (fixed seed)."""
    dets, _, _ = accepted_dem(name).compile_sampler(seed=7).sample(shots)
    return dets.astype(np.uint8)


def code_capacity(kind: str, d: int, rng: np.random.Generator, random_priors: bool):
    """(problem, uint8 (S, m) shots): repetition (check matrix, observable = bit 0, priors uniform in
    [0.01, 0.3]) or rotated surface code capacity (stim's DEM at p = 0.1, or its matrices with priors uniform
    in [0.01, 0.3] when ``random_priors``); S = 200 for surface d = 5, else 300, errors drawn from the priors."""
    if kind == "repetition":
        H = np.zeros((d - 1, d), dtype=np.uint8)
        H[np.arange(d - 1), np.arange(d - 1)] = 1
        H[np.arange(d - 1), np.arange(1, d)] = 1
        L = np.zeros((1, d), dtype=np.uint8)
        L[0, 0] = 1
        problem = DecodingProblem.from_check_matrix(H, rng.uniform(0.01, 0.3, d), L)
    else:
        from qdecode.sims.circuits import build_circuit

        dem = build_circuit("surface", d=d, noise="code-capacity", p=0.1).detector_error_model(decompose_errors=True)
        problem = DecodingProblem.from_dem(dem)
        if random_priors:
            problem = DecodingProblem.from_check_matrix(problem.H, rng.uniform(0.01, 0.3, problem.num_errors),
                                                        problem.L)
    shots = 200 if d == 5 and kind == "surface" else 300
    e = (rng.random((shots, problem.num_errors)) < problem.priors).astype(np.int64)
    s = ((e @ problem.H.T.toarray().astype(np.int64)) % 2).astype(np.uint8)
    return problem, s


def random_check_matrix(rng: np.random.Generator, min_n: int = 1):
    """(problem, uint8 H): a random ``(m, n)`` check matrix (m in 1..6, n in ``min_n``..11, density 0.4), k in
    0..2 observables, priors drawn from (0.01, 0.05, 0.2, 0.45, 0.6) (equal weights are common; 0.6 gives a
    negative weight)."""
    m, n, k = int(rng.integers(1, 7)), int(rng.integers(min_n, 12)), int(rng.integers(0, 3))
    H = (rng.random((m, n)) < 0.4).astype(np.uint8)
    L = (rng.random((k, n)) < 0.4).astype(np.uint8)
    priors = rng.choice([0.01, 0.05, 0.2, 0.45, 0.6], n)
    return DecodingProblem.from_check_matrix(H, priors, L), H
