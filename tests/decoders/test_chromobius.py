"""The ``chromobius`` registry decoder: Chromobius behind qdecode's decoder protocol."""

from __future__ import annotations

import chromobius
import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.registry import decoder as build_decoder
from qdecode.problem import DecodingProblem
from qdecode.sims.color_circuit import superdense_memory_circuit


def _shots(circuit: stim.Circuit, shots: int, seed: int):
    return circuit.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True, bit_packed=True)


@pytest.mark.parametrize("path", [
    "ours-sd6",
    "tests/data/chromobius/superdense_color_code_d5_r20_p1000.stim",
    "tests/data/chromobius/midout_color_code_d5_r10_p1000.stim",
    "tests/data/chromobius/phenom_color_code_d5_r5_p1000.stim",
])
def test_same_predictions_as_chromobius(path):
    """Ours and foreign circuits (Gidney & Jones' generator): bit for bit what Chromobius predicts,
    on the packed, unpacked and single-shot paths."""
    circuit = (superdense_memory_circuit(5, rounds=5, basis="Z", noise="sd6", p=0.002) if path == "ours-sd6"
               else stim.Circuit.from_file(path))
    dem = circuit.detector_error_model()
    dec = build_decoder("chromobius", DecodingProblem.from_dem(dem))
    dets, obs = _shots(circuit, 2000, seed=4)
    want = chromobius.compile_decoder_for_dem(dem).predict_obs_flips_from_dets_bit_packed(dets)
    got = dec.predict_observables_packed(dets)
    assert got.dtype == np.uint8 and got.shape == want.shape and (got == want).all()
    unpacked = np.unpackbits(dets, axis=1, count=dem.num_detectors, bitorder="little")
    flips = dec.predict_observables_batch(unpacked)
    assert (flips[:, 0] == (want[:, 0] & 1)).all()
    # a non-contiguous packed view decodes the same
    assert (dec.predict_observables_packed(np.asfortranarray(dets)) == want).all()
    # it decodes: far fewer failures than shots with flips
    fails = int((got[:, 0] != obs[:, 0]).sum())
    assert fails < 0.5 * max(1, int(obs[:, 0].sum()))


def test_refusals_are_one_line():
    surface = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                     after_clifford_depolarization=0.01)
    with pytest.raises(DecoderInputError, match="needs a 4th coordinate naming its basis and colour") as info:
        build_decoder("chromobius", DecodingProblem.from_dem(surface.detector_error_model()))
    assert "\n" not in str(info.value)
    bare = DecodingProblem.from_check_matrix(np.eye(3, dtype=np.uint8), 0.1, np.ones((1, 3), dtype=np.uint8))
    with pytest.raises(DecoderInputError, match="detector error model"):
        build_decoder("chromobius", bare)


def test_no_per_column_estimate():
    c = superdense_memory_circuit(3, rounds=2, noise="sd6", p=0.001)
    dec = build_decoder("chromobius", DecodingProblem.from_dem(c.detector_error_model()))
    with pytest.raises(DecoderInputError, match="observable flips only"):
        dec.decode_batch(np.zeros((2, c.num_detectors), dtype=np.uint8))
    with pytest.raises(DecoderInputError):
        dec.predict_observables_batch(np.full((2, c.num_detectors), 2, dtype=np.uint8))
