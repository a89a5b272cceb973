"""Latency / throughput measurement on a small problem (pymatching and a BpDecoder instance)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from qdecode.decoders.bp import BpDecoder
from qdecode.hw.latency import (
    append_csv,
    cpu_model,
    measure_latency,
    measure_throughput,
    nearest_rank,
    run_bench,
)
from qdecode.problem import DecodingProblem


@pytest.fixture(scope="module")
def surface():
    import stim

    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    problem = DecodingProblem.from_dem(c.detector_error_model(decompose_errors=True))
    dets, obs = c.compile_detector_sampler(seed=11).sample(300, separate_observables=True)
    return problem, dets.astype(np.uint8), obs.astype(np.uint8)


def test_nearest_rank():
    x = np.arange(1, 101)
    assert nearest_rank(x, 50) == 50 and nearest_rank(x, 99) == 99 and nearest_rank(x, 99.9) == 100
    assert nearest_rank(x, 100) == 100 and nearest_rank(x, 0.1) == 1
    assert nearest_rank([7], 99.9) == 7
    with pytest.raises(ValueError):
        nearest_rank([], 50)


def test_pymatching_latency_and_throughput(surface):
    from qdecode.decoders.registry import DecoderSpec

    problem, dets, obs = surface
    dec = DecoderSpec.create("pymatching").build(problem)
    lat = measure_latency(dec, dets, rounds=3, warmup=5, max_shots=120)
    assert lat.shots == 120 and lat.latency_ns.min() > 0
    assert lat.p50_us <= lat.p99_us <= lat.p999_us <= lat.max_us
    assert lat.iterations is None
    s = lat.summary()
    assert s["p99_us_per_round"] == pytest.approx(s["p99_us"] / 3)
    tp = measure_throughput(dec, dets, rounds=3)
    assert tp.shots == 300 and tp.seconds > 0 and tp.iterations is None
    assert tp.us_per_round == pytest.approx(tp.us_per_shot / 3)
    rep = run_bench(dec, dets, obs, rounds=3, warmup=5)
    assert rep.errors == int(np.any(dec.predict_observables_batch(dets) != obs, axis=1).sum())
    assert rep.consistent and rep.iteration_stats() is None and rep.convergence_rate is None
    assert 0 <= rep.ler < 0.2


def test_bp_instance_iterations(surface):
    problem, dets, obs = surface
    dec = BpDecoder(problem, max_iter=30, alpha=0.625, bits=8)
    rep = run_bench(dec, dets, obs, rounds=3, warmup=3, latency_shots=100)
    dec.decode_batch(dets)
    its, conv = dec.last_info.iterations, dec.last_info.converged
    assert np.array_equal(rep.throughput.iterations, its)
    assert np.array_equal(rep.latency.iterations, its[:100])  # one-at-a-time counts match the batch
    st = rep.iteration_stats()
    assert st["iter_max"] == its.max() <= 30 and st["iter_mean"] == pytest.approx(its.mean())
    assert st["iter_p50"] <= st["iter_p99"] <= st["iter_max"]
    assert rep.convergence_rate == pytest.approx(conv.mean())
    assert rep.consistent
    row = rep.as_row()
    assert row["shots"] == 300 and row["latency_shots"] == 100 and row["iter_max"] == its.max()
    assert row["lat_p50_us_per_round"] == pytest.approx(row["lat_p50_us"] / 3)


def test_bad_inputs(surface):
    problem, dets, _ = surface
    dec = BpDecoder(problem, max_iter=5)
    with pytest.raises(ValueError, match="at least 1 shot"):
        measure_latency(dec, dets[:0])
    with pytest.raises(ValueError, match="2-D"):
        measure_throughput(dec, dets[0])


def test_append_csv(tmp_path):
    path = tmp_path / "b.csv"
    append_csv(path, {"a": 1, "b": 2.5}, ["a", "b"])
    append_csv(path, {"a": 3, "b": ""}, ["a", "b"])
    rows = list(csv.DictReader(open(path)))
    assert rows == [{"a": "1", "b": "2.5"}, {"a": "3", "b": ""}]
    with pytest.raises(ValueError, match="header"):
        append_csv(path, {"x": 1}, ["x"])


def test_cpu_model():
    assert isinstance(cpu_model(), str) and cpu_model()
