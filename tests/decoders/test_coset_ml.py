"""``coset-ml``: the sweep's class probabilities against brute-force enumeration, and the decoder's contract.

The oracle is the definition: ``P(s, c)`` summed over all ``2^n`` errors of a model small enough to list them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderCapabilityError, DecoderInputError, DecoderRefusedError
from qdecode.decoders.coset_ml import CosetMlDecoder, mechanisms
from qdecode.decoders.registry import DecoderSpec
from qdecode.kernels.sweep_contraction import class_log_probs, sweep_plan
from qdecode.problem import DecodingProblem


def _enumerated(H: np.ndarray, L: np.ndarray, p: np.ndarray, syndromes: np.ndarray) -> np.ndarray:
    """float64 ``(S, 2^k)``: ``P(s, c)`` by listing every error."""
    k = L.shape[0]
    out = np.zeros((syndromes.shape[0], 1 << k))
    for bits in itertools.product((0, 1), repeat=H.shape[1]):
        e = np.array(bits)
        weight = np.prod(np.where(e, p, 1 - p))
        c = int(sum(int(v) << i for i, v in enumerate(L @ e % 2)))
        out[np.all(syndromes == H @ e % 2, axis=1), c] += weight
    return out


def _random_model(rng, m, n, k):
    H = (rng.random((m, n)) < 0.35).astype(np.uint8)
    L = (rng.random((k, n)) < 0.3).astype(np.uint8)
    return H, L, rng.uniform(0.01, 0.45, n)


@pytest.mark.parametrize("seed", range(12))
def test_class_probabilities_equal_enumeration_in_any_order(seed):
    rng = np.random.default_rng(seed)
    H, L, p = _random_model(rng, int(rng.integers(2, 7)), int(rng.integers(3, 13)), int(rng.integers(0, 3)))
    m, n = H.shape
    det_ptr = np.concatenate([[0], np.cumsum(H.sum(axis=0))]).astype(np.int64)
    det_idx = np.concatenate([np.flatnonzero(H[:, j]) for j in range(n)]).astype(np.int64)
    obs_mask = np.array([sum(int(L[i, j]) << i for i in range(L.shape[0])) for j in range(n)], dtype=np.int64)
    syndromes = rng.integers(0, 2, (6, m)).astype(np.uint8)
    syndromes[:, H.sum(axis=1) == 0] = 0  # a detector no mechanism flips never fires
    want = _enumerated(H, L, p, syndromes)
    for order in (None, rng.permutation(n), np.arange(n)[::-1]):
        plan = sweep_plan(det_ptr, det_idx, obs_mask, p, m, L.shape[0], order)
        np.testing.assert_allclose(np.exp(class_log_probs(plan, syndromes)), want, rtol=1e-10, atol=0)
        # the syndromes split over threads, each with its own state: the same numbers, bit for bit
        np.testing.assert_array_equal(class_log_probs(plan, syndromes, 3), class_log_probs(plan, syndromes, 1))


def test_decoder_answers_the_likeliest_class_and_its_log_ratio():
    rng = np.random.default_rng(5)
    H, L, p = _random_model(rng, 5, 12, 2)
    H[:, 0] = 1  # every detector touched
    problem = DecodingProblem.from_check_matrix(H, p, L=L)
    syndromes = rng.integers(0, 2, (40, 5)).astype(np.uint8)
    want = _enumerated(H, L, p, syndromes)
    dec = DecoderSpec.create("coset-ml").build(problem)
    obs, gap = dec.predict_with_confidence(syndromes)
    best = np.argmax(want, axis=1)
    np.testing.assert_array_equal(obs, (best[:, None] >> np.arange(2)) & 1)
    ranked = np.sort(want, axis=1)
    np.testing.assert_allclose(gap, 10 * np.log10(ranked[:, -1] / ranked[:, -2]), rtol=1e-5)
    assert dec.last_info.work.tolist() == [int(dec.plan.cost)] * 40
    two = DecoderSpec.create("coset-ml", {"threads": 2}).build(problem).predict_with_confidence(syndromes)
    np.testing.assert_array_equal(two.observables, obs)
    np.testing.assert_array_equal(two.gap_db, gap)


def test_mechanisms_that_collide_in_the_check_matrix_stay_apart():
    # two errors flip detector 0; one also flips L0. from_dem merges them into one column (a collision);
    # the classes need both: P(s = 1, c = 0) = 0.1 * 0.8, P(s = 1, c = 1) = 0.2 * 0.9
    dem = stim.DetectorErrorModel("error(0.1) D0\nerror(0.2) D0 L0\nerror(0.05) D0 D1")
    problem = DecodingProblem.from_dem(dem)
    assert problem.num_collisions == 1
    assert mechanisms(problem)[3].tolist() == [0.1, 0.2, 0.05]
    dec = CosetMlDecoder(problem, max_width=24)
    assert dec.predict_observables_batch(np.array([[1, 0]], np.uint8)).tolist() == [[1]]
    np.testing.assert_allclose(np.exp(dec.last_info.extra["log_prob"]), [[0.1 * 0.8 * 0.95, 0.2 * 0.9 * 0.95]])


def test_never_worse_than_matching_on_a_surface_code_circuit():
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                     after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    problem = DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=True))
    dets, obs = circuit.compile_detector_sampler(seed=11).sample(3000, separate_observables=True)
    fails = {name: int(np.any(DecoderSpec.create(name).build(problem).predict_observables_batch(dets) != obs,
                              axis=1).sum()) for name in ("coset-ml", "pymatching")}
    # the optimal decoder on the same shots: 72 failures against matching's 91 with this seed
    assert 0 < fails["coset-ml"] < fails["pymatching"], fails


def test_stim_colour_code_d5_fits_and_d3_needs_few_bits():
    # the module docstring's figures: 1,104 mechanisms, 20 live detectors (+ 1 observable)
    circuit = stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=5,
                                     after_clifford_depolarization=0.002, before_measure_flip_probability=0.002,
                                     after_reset_flip_probability=0.002)
    dec = CosetMlDecoder(DecodingProblem.from_dem(circuit.detector_error_model()), max_width=24)
    assert (dec.plan.detector >= 0).sum() == circuit.num_detectors
    assert len(mechanisms(dec.problem)[3]) == 1104 and dec.plan.width == 20
    assert f"{dec.plan.cost:.1e}" == "6.2e+08"  # quoted in the module docstring


def test_stim_colour_code_d7_is_refused_at_39_live_detectors():
    # the module docstring's and benchmarks/README.md's figure: d = 7 needs 39 + 1 bits
    circuit = stim.Circuit.generated("color_code:memory_xyz", distance=7, rounds=7,
                                     after_clifford_depolarization=0.002, before_measure_flip_probability=0.002,
                                     after_reset_flip_probability=0.002)
    with pytest.raises(DecoderRefusedError, match=r"keeps 39 detectors live at once, plus 1 observables: 2\^40"):
        CosetMlDecoder(DecodingProblem.from_dem(circuit.detector_error_model()), max_width=24)


def test_refusals_and_bad_input_are_one_line():
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=2,
                                     after_clifford_depolarization=0.01)
    problem = DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=True))
    with pytest.raises(DecoderRefusedError, match=r"keeps \d+ detectors live at once, plus 1 observables.*"
                                                  r"max_width=3") as info:
        CosetMlDecoder(problem, max_width=3)
    assert "\n" not in str(info.value)
    dec = CosetMlDecoder(problem, max_width=24)
    with pytest.raises(DecoderCapabilityError, match="observable flips only"):
        dec.decode_batch(np.zeros((1, problem.num_detectors), np.uint8))
    silent = DecodingProblem.from_check_matrix([[1, 1], [0, 0]], 0.1, L=[[1, 0]])
    with pytest.raises(DecoderInputError, match="shot 1 has an event on detector 1, which no mechanism flips"):
        CosetMlDecoder(silent, max_width=24).predict_observables_batch(np.array([[1, 0], [0, 1]], np.uint8))
    many = DecodingProblem.from_check_matrix([[1] * 40], 0.1, L=np.eye(40, dtype=np.uint8)[:33])
    with pytest.raises(DecoderRefusedError, match="33 observables"):
        CosetMlDecoder(many, max_width=24)
