"""Soft output (the gap in dB, :mod:`qdecode.decoders.confidence`): ``mle`` against brute force,
matching against ``mle``, packed against unpacked, and the error of decoders without a gap."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.decoders.base import Decoder
from qdecode.decoders.confidence import CONFIDENCE_DECODERS, DB_PER_NEPER, NoConfidenceError
from qdecode.decoders.matching import MatchingDecoder
from qdecode.decoders.mle import MleDecoder
from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.problem import DecodingProblem
from tests.decoders.decoder_problems import code_capacity

#: PyMatching's integer weights against HiGHS' exact ones (module docstring of matching_gap: the
#: largest difference seen on these problems is 4e-6 dB)
MATCHING_TOL_DB = 1e-4


def _random_problem(rng: np.random.Generator) -> DecodingProblem:
    n = int(rng.integers(3, 13))
    m = int(rng.integers(1, 7))
    k = int(rng.integers(1, 3))
    H = (rng.random((m, n)) < 0.4).astype(np.uint8)
    L = (rng.random((k, n)) < 0.4).astype(np.uint8)
    return DecodingProblem.from_check_matrix(H, rng.uniform(0.01, 0.3, n), L)


def _brute_force_gaps(problem: DecodingProblem, syndromes: np.ndarray, predicted: np.ndarray):
    """(best weight, lightest weight of another class than ``predicted``) per shot, over all 2^n errors."""
    n = problem.num_errors
    E = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int64)
    syn = (E @ problem.H.T.toarray().astype(np.int64)) % 2
    obs = (E @ problem.L.T.toarray().astype(np.int64)) % 2
    W = E @ problem.llr
    best, other = [], []
    for s, o in zip(syndromes, predicted):
        rows = np.all(syn == s, axis=1)
        best.append(W[rows].min())
        rows &= np.any(obs != o, axis=1)
        other.append(W[rows].min() if rows.any() else np.inf)
        # the predicted class holds a lightest error
        assert np.isclose(W[np.all(syn == s, axis=1) & np.all(obs == o, axis=1)].min(), best[-1], atol=1e-9)
    return np.array(best), np.array(other)


@pytest.mark.parametrize("chunk", range(4))
def test_mle_gap_equals_brute_force(chunk):
    """1,000 random problems (n <= 12, m <= 6, k in 1..2), two achievable syndromes each."""
    rng = np.random.default_rng(1000 + chunk)
    for _ in range(250):
        problem = _random_problem(rng)
        e = (rng.random((2, problem.num_errors)) < 0.3).astype(np.int64)
        s = ((e @ problem.H.T.toarray().astype(np.int64)) % 2).astype(np.uint8)
        dec = MleDecoder(problem)
        obs, gap = dec.predict_with_confidence(s)
        best, other = _brute_force_gaps(problem, s, obs)
        extra = dec.last_info.extra
        np.testing.assert_allclose(extra["weight_best"], best, rtol=0, atol=1e-9)
        got = (extra["weight_other"] - extra["weight_best"]) * DB_PER_NEPER
        want = (other - best) * DB_PER_NEPER
        assert np.array_equal(np.isinf(got), np.isinf(want))
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=0, atol=1e-6)
        np.testing.assert_allclose(gap[fin], want[fin], rtol=1e-6, atol=1e-6)  # float32
        assert np.array_equal(np.isinf(gap), np.isinf(want))
        assert not extra["time_limit_hit"].any()


@pytest.mark.parametrize("kind,d,random_priors", [("repetition", 5, True), ("repetition", 7, True),
                                                  ("surface", 3, False), ("surface", 5, False),
                                                  ("surface", 3, True), ("surface", 5, True)])
def test_matching_gap_equals_mle_gap(kind, d, random_priors):
    rng = np.random.default_rng(7 * d + random_priors)
    problem, s = code_capacity(kind, d, rng, random_priors)
    matching = MatchingDecoder(problem)
    obs, gap = matching.predict_with_confidence(s)
    assert np.array_equal(obs, matching.predict_observables_batch(s))
    _, exact = MleDecoder(problem).predict_with_confidence(s)
    assert np.all(np.isfinite(exact))
    np.testing.assert_allclose(gap, exact, rtol=0, atol=MATCHING_TOL_DB)


def test_gap_is_inf_without_another_class_and_nan_without_a_potential():
    # observable 0 is detector 0's bit: the syndrome fixes the class
    fixed = DecodingProblem.from_check_matrix([[1, 0], [0, 1]], 0.1, L=[[1, 0]])
    s = np.array([[0, 0], [1, 0], [1, 1]], dtype=np.uint8)
    for dec in (MleDecoder(fixed), MatchingDecoder(fixed)):
        assert np.all(np.isposinf(dec.predict_with_confidence(s).gap_db))
    no_obs = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
    for dec in (MleDecoder(no_obs), MatchingDecoder(no_obs)):
        obs, gap = dec.predict_with_confidence(np.array([[1, 0], [0, 0]], np.uint8))
        assert obs.shape == (2, 0) and np.all(np.isposinf(gap))
    # a triangle of detector edges each flipping L0: no potential, so matching cannot tell (mle can)
    odd = stim.DetectorErrorModel("error(0.1) D0 D1 L0\nerror(0.1) D1 D2 L0\nerror(0.1) D0 D2 L0\n"
                                  "error(0.05) D0\nerror(0.05) D1\nerror(0.05) D2")
    problem = DecodingProblem.from_dem(odd)
    s = np.array([[1, 1, 0], [0, 0, 0]], dtype=np.uint8)
    assert np.all(np.isnan(MatchingDecoder(problem).predict_with_confidence(s).gap_db))
    assert np.all(np.isfinite(MleDecoder(problem).predict_with_confidence(s).gap_db))


def test_mle_solves_the_zero_syndrome_when_a_mechanism_is_likelier_than_not():
    """An observable-only mechanism with p = 0.9 fires in the most likely error even without detection events."""
    problem = DecodingProblem.from_dem(stim.DetectorErrorModel("error(0.9) L0\nerror(0.1) D0 L0\nerror(0.1) D0"))
    obs, gap = MleDecoder(problem).predict_with_confidence(np.zeros((1, 1), np.uint8))
    assert obs.tolist() == [[1]]
    assert gap[0] == pytest.approx(np.log(9) * DB_PER_NEPER, rel=1e-5)  # the other class: leave it off


def _circuit_problem() -> DecodingProblem:
    circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                  after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    return DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))


@pytest.mark.parametrize("name", ["pymatching", "pymatching-correlated", "mle"])
def test_packed_and_unpacked_agree(name):
    problem = _circuit_problem()
    circ_shots = 20 if name == "mle" else 500
    rng = np.random.default_rng(3)
    e = (rng.random((circ_shots, problem.num_errors)) < problem.priors).astype(np.int64)
    s = ((e @ problem.H.T.toarray().astype(np.int64)) % 2).astype(np.uint8)
    dec = DecoderSpec.create(name).build(problem)
    assert dec.has_confidence and get_entry(name).has_confidence
    obs, gap = dec.predict_with_confidence(s)
    assert obs.shape == (circ_shots, 1) and gap.shape == (circ_shots,) and gap.dtype == np.float32
    assert np.array_equal(obs, dec.predict_observables_batch(s))
    assert np.all(np.isfinite(gap)) and np.all(gap >= -MATCHING_TOL_DB)
    packed_obs, packed_gap = dec.predict_with_confidence_packed(np.packbits(s, axis=1, bitorder="little"))
    assert np.array_equal(packed_obs, np.packbits(obs, axis=1, bitorder="little"))
    assert np.array_equal(packed_gap, gap)


class _Plain(Decoder):
    def __init__(self, problem):
        self.problem = problem

    def decode_batch(self, syndromes):
        return np.zeros((len(syndromes), self.problem.num_errors), dtype=np.uint8)


def test_decoders_without_a_confidence_raise_one_line():
    problem = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
    s = np.zeros((2, 2), dtype=np.uint8)
    for dec in (_Plain(problem), DecoderSpec.create("uf").build(problem)):
        assert not dec.has_confidence
        for call in (lambda: dec.predict_with_confidence(s),
                     lambda: dec.predict_with_confidence_packed(np.packbits(s, axis=1, bitorder="little"))):
            with pytest.raises(NoConfidenceError, match=type(dec).__name__) as info:
                call()
            assert "\n" not in str(info.value) and "mle, pymatching" in str(info.value)
            assert isinstance(info.value, ValueError)


def test_registry_flag_matches_the_list():
    names = [n for n in decoder_names() if get_entry(n).kind == "quantum"]
    assert sorted(n for n in names if get_entry(n).has_confidence) == sorted(CONFIDENCE_DECODERS)
