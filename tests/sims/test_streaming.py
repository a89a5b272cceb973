"""Streaming window decoding (sims/streaming.py): the ``window`` decoder's answers, the tiled plan, the
event schedule on hand-made service times, and bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.registry import DecoderSpec
from qdecode.decoders.window import WindowDecoder
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims import streaming as st
from qdecode.sims.circuits import build_circuit


def window_decoder(problem, **kw) -> WindowDecoder:
    """A :class:`WindowDecoder` given the registry's spec class, as the registry builds it (its inner named by text)."""
    return WindowDecoder(problem, specs=DecoderSpec, **kw)


def _surface(d: int, rounds: int, p: float = 0.004):
    return build_circuit("surface", d=d, rounds=rounds, noise="sd6", p=p)


def _samples(circuit, shots: int, seed: int):
    """The shots :func:`st.run_stream` samples (same chunking, so the same stim stream)."""
    sampler = circuit.compile_detector_sampler(seed=seed)
    dets, obs = [], []
    for start in range(0, shots, st.SAMPLE_CHUNK):
        d, o = sampler.sample(min(st.SAMPLE_CHUNK, shots - start), separate_observables=True, bit_packed=True)
        dets.append(np.unpackbits(d, axis=1, count=circuit.num_detectors, bitorder="little"))
        obs.append(np.unpackbits(o, axis=1, count=circuit.num_observables, bitorder="little"))
    return np.concatenate(dets), np.concatenate(obs)


# ------------------------------------------------------------------ the window decoder's answers
@pytest.mark.parametrize("inner", ["pymatching", "uf", "bposd"])
def test_answers_equal_window_decoder(inner):
    """Exact priors (one class per distinct window): every shot's prediction and every window's
    decode flag are the ``window`` decoder's on the same (canonically ordered) problem."""
    W, F, shots = 4, 2, 150
    circuit = _surface(3, 16)
    problem = DecodingProblem.from_dem(decoding_dem(circuit))
    plan = st.plan_stream(problem, inner, W, F, prior_bits=None)
    result = st.run_stream(plan, circuit, shots, seed=3)
    dets, obs = _samples(circuit, shots, 3)
    assert np.array_equal(result.observables, obs)
    work = problem if inner == "bposd" else _graphlike(problem)
    layout = st.stream_layout(problem, W, F)
    window = window_decoder(st.canonical_problem(work), inner=inner, W=W, F=F, per_round=0,
                           detector_rounds=layout.detector_round, fallback="none")
    assert window.num_windows == plan.num_windows
    assert np.array_equal(result.predictions, window.predict_observables_batch(dets))
    assert np.array_equal(result.decoded, window.last_info.extra["window_decoded"])
    assert 0 < result.errors < shots  # p = 0.004 at d = 3: the comparison sees failures and successes


@pytest.mark.parametrize("inner", ["pymatching", "uf", "bposd"])
def test_answers_equal_window_decoder_on_the_original_problem(inner):
    """The plan as run (default prior key) against ``window`` on the problem as ``from_dem`` gives it:
    column order and last-bit priors differ, yet every answer agrees on these shots (a minimum-weight
    tie broken differently would show here)."""
    circuit = _surface(3, 16)
    problem = DecodingProblem.from_dem(decoding_dem(circuit))
    result = st.run_stream(st.plan_stream(problem, inner, 4, 2), circuit, 300, seed=3)
    dets, _ = _samples(circuit, 300, 3)
    window = window_decoder(problem, inner=inner, W=4, F=2, per_round=0, fallback="none")
    assert np.array_equal(result.predictions, window.predict_observables_batch(dets))
    assert np.array_equal(result.decoded, window.last_info.extra["window_decoded"])


def _graphlike(problem):
    from qdecode.decoders.graphlike import graphlike_problem

    return graphlike_problem(problem)


def test_a_broken_commit_is_caught():
    """The comparison can fail: dropping the forwarded syndrome of committed columns changes answers."""
    circuit = _surface(3, 16)
    problem = DecodingProblem.from_dem(decoding_dem(circuit))
    plan = st.plan_stream(problem, "pymatching", 4, 2, prior_bits=None)
    good = st.run_stream(plan, circuit, 150, seed=3)
    broken = dataclasses.replace(plan, classes=[
        dataclasses.replace(c, fwd_ptr=np.zeros_like(c.fwd_ptr)) for c in plan.classes])
    bad = st.run_stream(broken, circuit, 150, seed=3)
    assert not np.array_equal(good.predictions, bad.predictions)


def test_canonical_order_sorts_detector_tuples():
    p = DecodingProblem.from_check_matrix([[0, 1, 1], [1, 1, 0], [0, 0, 1]], [0.1, 0.2, 0.3], L=[[1, 0, 0]])
    c = st.canonical_problem(p)
    # columns {1}, {0,1}, {0,2} -> {0,1}, {0,2}, {1}
    assert c.H.toarray().T.tolist() == [[1, 1, 0], [1, 0, 1], [0, 1, 0]]
    assert c.priors.tolist() == [0.2, 0.3, 0.1]
    assert c.L.toarray().tolist() == [[0, 0, 1]]


# ------------------------------------------------------------------ tiling
@pytest.mark.parametrize("d, rounds, W, F", [(3, 40, 4, 2), (5, 29, 3, 1), (3, 37, 6, 3)])
def test_tiled_plan_is_the_whole_problems_plan(d, rounds, W, F):
    """Planned on a short circuit and tiled = planned on the whole long problem, window by window."""
    make = lambda r: _surface(d, r, 0.001)  # noqa: E731
    tiled, circuit = st.plan_tiled(make, rounds, "pymatching", W, F)
    assert tiled.tiled_windows > 0
    whole = st.plan_stream(DecodingProblem.from_dem(decoding_dem(circuit)), "pymatching", W, F, build=False)
    assert [tiled.classes[k].key for k in tiled.window_class] == [whole.classes[k].key for k in whole.window_class]
    assert np.array_equal(tiled.offset, whole.offset) and np.array_equal(tiled.need_round, whole.need_round)
    assert (tiled.num_rounds, tiled.num_detectors) == (whole.num_rounds, whole.num_detectors)
    assert len(tiled.classes) == len(whole.classes) <= 5


def test_tiled_plan_of_the_gross_code():
    """[[144,12,12]] (the benchmark's hypergraph row): short plan + tiling = the whole problem's plan."""
    W, F, rounds = 6, 3, 40
    make = lambda r: build_circuit("bb144_12_12", rounds=r, noise="bb-uniform", p=0.001)  # noqa: E731
    r0 = st.short_rounds(rounds, W, F)
    short = st.plan_stream(DecodingProblem.from_dem(decoding_dem(make(r0))), "relay-bp", W, F, build=False)
    tiled = st.tile_plan(short, (rounds - r0) // F)
    whole = st.plan_stream(DecodingProblem.from_dem(decoding_dem(make(rounds))), "relay-bp", W, F, build=False)
    assert tiled.tiled_windows > 0
    assert [tiled.classes[k].key for k in tiled.window_class] == [whole.classes[k].key for k in whole.window_class]
    assert np.array_equal(tiled.offset, whole.offset) and np.array_equal(tiled.need_round, whole.need_round)


def test_tiled_stream_decodes_like_the_exact_plan():
    circuit = _surface(3, 40)
    tiled, _ = st.plan_tiled(lambda r: _surface(3, r), 40, "uf", 4, 2)
    exact = st.plan_stream(DecodingProblem.from_dem(decoding_dem(circuit)), "uf", 4, 2, prior_bits=None)
    a = st.run_stream(tiled, circuit, 100, seed=7)
    b = st.run_stream(exact, circuit, 100, seed=7)
    assert np.array_equal(a.predictions, b.predictions) and np.array_equal(a.decoded, b.decoded)


def test_tiling_checks_the_long_circuit():
    def make(r):  # a "longer" circuit that is not the short one repeated: other code distance
        return _surface(3 if r < 20 else 5, r, 0.001)

    with pytest.raises(DecoderInputError, match="rounds do not repeat"):
        st.plan_tiled(make, 40, "pymatching", 4, 2)


def test_short_rounds_keeps_the_commit_phase():
    for rounds in (100, 101, 10_000):
        r0 = st.short_rounds(rounds, 14, 7)
        assert r0 < rounds and (rounds - r0) % 7 == 0 and r0 >= 14 + 4 * 7 + 2
    assert st.short_rounds(16, 4, 2) == 16 and st.short_rounds(17, 4, 2) == 15  # base 4 + 8 + 2 = 14


def test_prior_key_merges_last_bit_differences():
    p = np.array([1e-3, 1e-3 * (1 + 2e-16), 2e-3])
    k = st.prior_key(p, st.PRIOR_BITS)
    assert k[0] == k[1] != k[2]
    assert st.prior_key(p, None)[0] != st.prior_key(p, None)[1]


# ------------------------------------------------------------------ the schedule
def test_schedule_by_hand():
    need = np.array([2, 3, 4])
    finish, reaction = st.schedule(need, np.array([5, 1, 1]), 2.0)  # arrivals 4, 6, 8: queued
    assert finish.tolist() == [9.0, 10.0, 11.0] and reaction.tolist() == [5.0, 4.0, 3.0]
    finish, reaction = st.schedule(need, np.array([5, 1, 1]), 10.0)  # arrivals 20, 30, 40: idle between
    assert finish.tolist() == [25.0, 31.0, 41.0] and reaction.tolist() == [5.0, 1.0, 1.0]
    # two shots at once (rows), each starting idle
    _, reaction = st.schedule(need, np.array([[5, 1, 1], [1, 1, 9]]), 2.0)
    assert reaction.tolist() == [[5.0, 4.0, 3.0], [1.0, 1.0, 9.0]]


def test_schedule_matches_the_recursion():
    rng = np.random.default_rng(0)
    need = np.sort(rng.integers(0, 50, 40))
    service = rng.integers(1, 30, 40)
    for period in (0.5, 3.0, 7.0):
        finish, reaction = st.schedule(need, service, period)
        free = 0.0
        for k in range(need.size):
            free = max(need[k] * period, free) + service[k]
            assert finish[k] == free and reaction[k] == free - need[k] * period


def test_schedule_refuses_a_nonpositive_period():
    for period in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="period"):
            st.schedule(np.array([0]), np.array([1]), period)


def _result(service, inner, need, rounds):
    service, inner = np.asarray(service, np.int64), np.asarray(inner, np.int64)
    S = service.shape[0]
    return st.StreamResult(service, inner, inner > 0, np.asarray(need, np.int64), np.zeros((S, 1), np.uint8),
                           np.zeros((S, 1), np.uint8), rounds, rounds)


def test_sustained_period_overhead_and_reaction_by_hand():
    # two shots of 4 rounds, windows needing rounds 1 and 3
    r = _result([[300, 500], [100, 300]], [[200, 400], [0, 200]], [1, 3], 4)
    assert r.sustained_period_ns() == 1200 / 8  # 150 ns per round
    assert r.overhead() == pytest.approx(400 / 800)  # harness 1200 - 800 = 400 ns
    # at 150 ns per round: shot 0 arrivals 150, 450 -> finish 450, 950 -> reactions 300, 500;
    # shot 1: finish 250, 750 -> reactions 100, 300
    rx = r.reaction_us(150.0)
    assert rx["max_us"] == pytest.approx(0.5) and rx["p50_us"] == pytest.approx(0.3)
    # shorter period: window 1 of shot 0 waits for window 0 (finish 100 + 300 = 400, then 900)
    _, reaction = st.schedule(r.need_round, r.service_ns, 100.0)
    assert reaction.tolist() == [[300.0, 600.0], [100.0, 300.0]]
    summary = r.summary(150.0)
    assert summary["sustained_period_us"] == pytest.approx(0.15) and summary["errors"] == 0
    assert [row["period_us"] for row in summary["reaction_near_sustained"]] == pytest.approx(
        [0.15 * f for f in st.PERIOD_FACTORS])


def test_logical_error_rates_follow_sinter():
    from qdecode.sims.stats import fit_binomial, shot_error_rate_to_per_round

    r = _result(np.ones((10, 1)), np.ones((10, 1)), [0], 5)
    r.predictions[:3] = 1
    rates = r.logical_error_rates()
    assert r.errors == 3 and tuple(rates["per_shot"]) == tuple(fit_binomial(num_shots=10, num_hits=3))
    assert rates["per_round"].best == pytest.approx(shot_error_rate_to_per_round(0.3, 5))


# ------------------------------------------------------------------ bad input
def test_bad_input():
    circuit = _surface(3, 6)
    problem = DecodingProblem.from_dem(decoding_dem(circuit))
    with pytest.raises(DecoderInputError, match="no-such-decoder"):
        st.plan_stream(problem, "no-such-decoder", 3, 1)
    with pytest.raises(DecoderInputError, match="cannot run inside a window"):
        st.plan_stream(problem, "window", 3, 1)
    with pytest.raises(DecoderInputError, match="classical"):
        st.plan_stream(problem, "bm", 3, 1)
    with pytest.raises(DecoderInputError, match="must not exceed W"):
        st.plan_stream(problem, "pymatching", 2, 3)
    plan = st.plan_stream(problem, "pymatching", 3, 1)
    with pytest.raises(DecoderInputError, match="shots"):
        st.run_stream(plan, circuit, 0, seed=1)
    with pytest.raises(DecoderInputError, match="do not match"):
        st.run_stream(plan, _surface(3, 7), 1, seed=1)


def test_a_circuit_without_time_coordinates_is_refused():
    c = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=6, after_clifford_depolarization=0.01)
    stripped = stim.Circuit("\n".join(
        "DETECTOR " + line.split(")", 1)[1] if line.strip().startswith("DETECTOR(") else line
        for line in str(c.flattened()).splitlines()))
    assert stripped.num_detectors == c.num_detectors
    problem = DecodingProblem.from_dem(decoding_dem(stripped))
    with pytest.raises(DecoderInputError, match="time coordinates"):
        st.plan_stream(problem, "pymatching", 3, 1)


def test_repeats_keep_the_least_time_and_the_answers():
    circuit = _surface(3, 16)
    plan = st.plan_stream(DecodingProblem.from_dem(decoding_dem(circuit)), "pymatching", 4, 2)
    one = st.run_stream(plan, circuit, 30, seed=2)
    three = st.run_stream(plan, circuit, 30, seed=2, repeats=3)
    assert np.array_equal(one.predictions, three.predictions) and np.array_equal(one.decoded, three.decoded)
    assert np.all(three.inner_ns <= three.service_ns)
    with pytest.raises(DecoderInputError, match="repeats"):
        st.run_stream(plan, circuit, 1, seed=2, repeats=0)
