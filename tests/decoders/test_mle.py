"""The ``mle`` decoder: exact most likely error, checked against brute-force enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.mle import MleDecoder
from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem


def _small_problem() -> DecodingProblem:
    """A d = 3 repetition-code memory (2 rounds, circuit noise): 14 mechanisms, hyperedge-free, small
    enough to enumerate all 2^14 errors."""
    circ = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2,
                                  after_clifford_depolarization=0.03, before_measure_flip_probability=0.02)
    return DecodingProblem.from_dem(circ.detector_error_model())


def _brute_force(problem: DecodingProblem) -> dict[bytes, float]:
    """Least ``sum_j w_j e_j`` over all errors, for every reachable syndrome."""
    H = problem.H.toarray().astype(np.int64)
    w = problem.llr
    n = H.shape[1]
    assert n <= 16
    best: dict[bytes, float] = {}
    for bits in itertools.product((0, 1), repeat=n):
        e = np.array(bits, dtype=np.int64)
        key = ((H @ e) % 2).astype(np.uint8).tobytes()
        c = float(w @ e)
        if key not in best or c < best[key]:
            best[key] = c
    return best


def test_equals_brute_force_ml_on_every_reachable_syndrome():
    problem = _small_problem()
    best = _brute_force(problem)
    syn = np.array([np.frombuffer(k, dtype=np.uint8) for k in best])
    dec = MleDecoder(problem)
    e = dec.decode_batch(syn)
    H = problem.H.toarray().astype(np.int64)
    assert np.array_equal((e.astype(np.int64) @ H.T) % 2, syn)  # H e = s on every shot
    cost = e.astype(np.float64) @ problem.llr
    want = np.array([best[k] for k in best])
    np.testing.assert_allclose(cost, want, rtol=0, atol=1e-7)
    assert dec.last_info.converged.all()
    np.testing.assert_allclose(dec.last_info.extra["objective"], cost, atol=1e-9)


def test_registry_batch_and_packed_paths_agree_and_repeat():
    problem = _small_problem()
    dec = DecoderSpec.create("mle", {}).build(problem)
    rng = np.random.default_rng(7)
    syn = (rng.random((40, problem.num_detectors)) < 0.2).astype(np.uint8)
    syn[:5] = 0
    obs = dec.predict_observables_batch(syn)
    packed = dec.predict_observables_packed(np.packbits(syn, axis=1, bitorder="little"))
    assert np.array_equal(np.unpackbits(packed, axis=1, count=problem.num_observables, bitorder="little"), obs)
    assert np.array_equal(dec.predict_observables_batch(syn), obs)
    assert not obs[:5].any()


def test_unreachable_syndrome_is_a_clear_error():
    # two mechanisms, both flipping D0 and D1: the syndrome (1, 0) is unreachable
    problem = DecodingProblem.from_dem(stim.DetectorErrorModel("error(0.1) D0 D1 L0\nerror(0.2) D0 D1"))
    with pytest.raises(DecoderInputError, match="no error"):
        MleDecoder(problem).decode_batch(np.array([[1, 0]], dtype=np.uint8))


def test_time_limit_is_validated():
    with pytest.raises(ValueError, match="time_limit"):
        DecoderSpec.create("mle", {"time_limit": 0})


def test_each_distinct_syndrome_is_solved_once(monkeypatch):
    problem = _small_problem()
    dec = MleDecoder(problem)
    calls = []
    solve = dec._solve
    monkeypatch.setattr(dec, "_solve", lambda s: calls.append(s.tobytes()) or solve(s))
    rng = np.random.default_rng(3)
    syn = (rng.random((30, problem.num_detectors)) < 0.15).astype(np.uint8)
    syn = np.concatenate([syn, syn[::-1]])
    first = dec.decode_batch(syn)
    distinct = {r.tobytes() for r in syn if r.any()}
    assert len(calls) == len(distinct) == len(set(calls))
    assert np.array_equal(dec.decode_batch(syn[:10]), first[:10]) and len(calls) == len(distinct)


def test_time_limit_hits_are_flagged_and_counted(monkeypatch):
    # a d = 5 surface-code memory (1677 mechanisms): HiGHS cannot solve it in a nanosecond
    circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=5, rounds=5,
                                  after_clifford_depolarization=0.01)
    problem = DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))
    syn = circ.compile_detector_sampler(seed=1).sample(3).astype(np.uint8)
    assert syn.any(axis=1).all()
    syn = np.concatenate([syn, np.zeros((1, problem.num_detectors), dtype=np.uint8)])  # the zero syndrome: no solve
    dec = MleDecoder(problem, time_limit=1e-9)
    dec.decode_batch(syn)
    info = dec.last_info
    assert info.extra["time_limit_hit"].dtype == bool and info.extra["time_limit_hit"].shape == (4,)
    assert info.extra["time_limit_hit"].tolist() == [True, True, True, False]
    assert info.converged.tolist() == [False, False, False, True]
    counts = info.counts()
    assert counts["time_limit_hits"] == 3 and counts["not_converged"] == 3
    # remembered solutions keep their flag
    dec.decode_batch(syn[:1])
    assert dec.last_info.extra["time_limit_hit"].tolist() == [True]

    # an optimal solve is not a time-limit hit
    small = _small_problem()
    ok = MleDecoder(small)
    ok.decode_batch(np.ones((1, small.num_detectors), dtype=np.uint8))
    assert ok.last_info.converged.all()
    assert not ok.last_info.extra["time_limit_hit"].any() and ok.last_info.counts()["time_limit_hits"] == 0

    # and a limit reached after a feasible point: the best solution so far, flagged (solver mocked)
    import scipy.optimize

    class Result:
        status = 1
        x = np.zeros(small.num_errors + small.num_detectors)

    monkeypatch.setattr(scipy.optimize, "milp", lambda *a, **k: Result())
    mocked = MleDecoder(small)
    mocked.decode_batch(np.repeat(np.array([[0], [1]], dtype=np.uint8), small.num_detectors, axis=1))
    assert mocked.last_info.extra["time_limit_hit"].tolist() == [False, True]
    assert mocked.last_info.counts()["time_limit_hits"] == 1
