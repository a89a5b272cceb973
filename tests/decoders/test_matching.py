"""PyMatching decoders behind the protocol, against PyMatching itself."""

from __future__ import annotations

import numpy as np
import pymatching
import pytest
import stim

from qdecode.decoders import DecoderInputError, DecoderSpec
from qdecode.problem import DecodingProblem


@pytest.fixture(scope="module")
def surface():
    c = stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=5, rounds=5,
        after_clifford_depolarization=0.006, before_measure_flip_probability=0.006,
        after_reset_flip_probability=0.006, before_round_data_depolarization=0.006,
    )
    dem = c.detector_error_model(decompose_errors=True)
    dets, obs = c.compile_detector_sampler(seed=7).sample(4000, separate_observables=True)
    return dem, dets.astype(np.uint8), obs.astype(np.uint8)


@pytest.mark.parametrize("name,corr", [("pymatching", False), ("pymatching-correlated", True)])
def test_identical_to_pymatching(surface, name, corr):
    dem, dets, _ = surface
    dec = DecoderSpec.create(name).build(DecodingProblem.from_dem(dem))
    ref = pymatching.Matching.from_detector_error_model(dem, enable_correlations=corr)
    expected = ref.decode_batch(dets, enable_correlations=corr)
    np.testing.assert_array_equal(dec.predict_observables_batch(dets), expected)
    packed = np.packbits(dets, axis=1, bitorder="little")
    np.testing.assert_array_equal(
        np.unpackbits(dec.predict_observables_packed(packed), axis=1, count=1, bitorder="little"), expected
    )


def test_correlated_beats_plain_on_same_shots(surface):
    dem, dets, obs = surface
    prob = DecodingProblem.from_dem(dem)
    plain = (DecoderSpec.create("pymatching").build(prob).predict_observables_batch(dets) != obs).any(1).sum()
    corr = (DecoderSpec.create("pymatching-correlated").build(prob).predict_observables_batch(dets) != obs).any(1).sum()
    assert corr <= plain


def test_check_matrix_problem_decode_batch_satisfies_syndrome():
    # repetition code: graphlike, decode_batch returns per-column errors with H e = s
    n = 7
    H = np.zeros((n - 1, n), dtype=np.uint8)
    for i in range(n - 1):
        H[i, i] = H[i, i + 1] = 1
    prob = DecodingProblem.from_check_matrix(H, 0.1, L=np.ones((1, n), dtype=np.uint8))
    dec = DecoderSpec.create("pymatching").build(prob)
    rng = np.random.default_rng(3)
    e = (rng.random((200, n)) < 0.1).astype(np.uint8)
    s = (e @ H.T) % 2
    est = dec.decode_batch(s)
    np.testing.assert_array_equal((est @ H.T) % 2, s)
    assert not dec.decode(np.zeros(n - 1, dtype=np.uint8)).any()
    np.testing.assert_array_equal(dec.predict_observables_batch(s), (est.sum(1, keepdims=True) % 2))


def test_bad_syndromes_rejected(surface):
    dem, dets, _ = surface
    dec = DecoderSpec.create("pymatching").build(DecodingProblem.from_dem(dem))
    with pytest.raises(DecoderInputError, match="columns"):
        dec.predict_observables_batch(dets[:, :-1])
    bad = dets.copy()
    bad[0, 0] = 2
    with pytest.raises(DecoderInputError, match="binary"):
        dec.predict_observables_batch(bad)
    with pytest.raises(DecoderInputError, match="bit-packed"):
        dec.predict_observables_packed(np.zeros((3, 1), dtype=np.uint8))


def test_heavy_columns_rejected_for_check_matrix_matching():
    prob = DecodingProblem.from_check_matrix([[1, 0], [1, 1], [1, 0]], 0.1)
    with pytest.raises(DecoderInputError, match="at most 2"):
        DecoderSpec.create("pymatching").build(prob)
