"""The sinter adapter gives the same statistics as sinter's built-in pymatching."""

from __future__ import annotations

import numpy as np
import sinter
import stim

import qdecode
from qdecode.decoders import DecoderSpec
from qdecode.sinter_adapter import SinterDecoder


def _circuit():
    return stim.Circuit.generated(
        "surface_code:rotated_memory_x", distance=3, rounds=3,
        after_clifford_depolarization=0.01, before_measure_flip_probability=0.01,
    )


def test_sinter_decoders_lists_every_registered_decoder():
    decs = qdecode.sinter_decoders()
    assert "qd-pymatching" in decs and "qd-pymatching-correlated" in decs
    assert all(isinstance(d, sinter.Decoder) for d in decs.values())


def test_compiled_decoder_matches_builtin_bit_for_bit():
    c = _circuit()
    dem = c.detector_error_model(decompose_errors=True)
    dets, _ = c.compile_detector_sampler(seed=5).sample(3000, separate_observables=True, bit_packed=True)
    ours = SinterDecoder(DecoderSpec.create("pymatching")).compile_decoder_for_dem(dem=dem)
    theirs = sinter.BUILT_IN_DECODERS["pymatching"].compile_decoder_for_dem(dem=dem)
    a = ours.decode_shots_bit_packed(bit_packed_detection_event_data=dets)
    b = theirs.decode_shots_bit_packed(bit_packed_detection_event_data=dets)
    assert a.dtype == np.uint8 and a.shape == (3000, 1)
    np.testing.assert_array_equal(a, b)


def test_sinter_collect_runs_our_decoder():
    task = sinter.Task(circuit=_circuit(), json_metadata={"d": 3})
    (stat,) = sinter.collect(
        num_workers=1, tasks=[task], decoders=["qd-pymatching"], custom_decoders=qdecode.sinter_decoders(),
        max_shots=2000, max_errors=10**6,
    )
    assert stat.shots == 2000 and 0 < stat.errors < 400
