"""One small problem each registered syndrome decoder accepts, and the decoder built on it.

Most decoders take any DEM; two need structure: Chromobius reads colour-code detectors (the
4th coordinate) and the shipped ``nn-pymatching`` models a d = 5 rotated surface code with
stim's ``(x, y, t)`` coordinates. Shared by the API-input and no-hang tests.
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
