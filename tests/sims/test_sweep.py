"""The sweep driver: stopping rules, resume, seeding, executors (process pool, Dask)."""

from __future__ import annotations

import numpy as np
import pytest
import sinter
import stim

from qdecode.decoders import DecoderSpec
from qdecode.sims.executors import DaskExecutor, InlineExecutor, LocalExecutor
from qdecode.sims.sampling import batch_seed
from qdecode.sims.stats import fit_binomial
from qdecode.sims.store import read_rows
from qdecode.sims.sweep import SweepOptions, run_sweep
from qdecode.sims.tasks import SweepTask


def _surface(d: int, p: float) -> stim.Circuit:
    return stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=d, rounds=d,
        after_clifford_depolarization=p, before_round_data_depolarization=p,
        before_measure_flip_probability=p, after_reset_flip_probability=p,
    )


def _tasks(*points):
    return [
        SweepTask(decoder=DecoderSpec.create("pymatching"), circuit_text=str(_surface(d, p)),
             extra_metadata=(("d", d), ("p", p)))
        for d, p in points
    ]


OPTS = SweepOptions(max_shots=20_000, max_errors=10**9, seed=11, min_batch_size=1000, max_batch_size=4000)


def _key(rows):
    return sorted((r.strong_id, r.shots, r.errors) for r in rows)


def test_max_shots_exact_and_rerun_is_a_no_op(tmp_path):
    out = tmp_path / "s.csv"
    rows = run_sweep(_tasks((3, 0.01)), out_path=out, options=OPTS)
    assert rows[0].shots == 20_000
    n_lines = len(out.read_text().splitlines())
    again = run_sweep(_tasks((3, 0.01)), out_path=out, options=OPTS)
    assert _key(again) == _key(rows)
    assert len(out.read_text().splitlines()) == n_lines


def test_max_errors_stops_early(tmp_path):
    opts = SweepOptions(max_shots=10**7, max_errors=50, seed=1, min_batch_size=500, max_batch_size=2000)
    (row,) = run_sweep(_tasks((3, 0.004)), out_path=None, options=opts)
    # LER ~ 0.2%: 50 errors take ~25k shots; inline batches of <= 2000 shots overshoot little.
    assert 50 <= row.errors < 60 and row.shots < 10**5


def test_resume_continues_to_the_target_without_double_counting(tmp_path):
    out = tmp_path / "s.csv"
    half = SweepOptions(max_shots=10_000, max_errors=10**9, seed=3, min_batch_size=1000, max_batch_size=2000)
    run_sweep(_tasks((3, 0.01)), out_path=out, options=half)
    first_lines = out.read_text().splitlines()
    full = SweepOptions(max_shots=30_000, max_errors=10**9, seed=3, min_batch_size=1000, max_batch_size=2000)
    (row,) = run_sweep(_tasks((3, 0.01)), out_path=out, options=full)
    assert row.shots == 30_000
    assert out.read_text().splitlines()[: len(first_lines)] == first_lines  # nothing rewritten
    assert sum(r.shots for r in read_rows(out)) == 30_000


def test_resumed_run_uses_fresh_random_streams(tmp_path):
    # Streams include the shot count recorded at start, so resuming never replays recorded samples.
    from qdecode.sims.sweep import stream_entropy

    assert batch_seed(stream_entropy(3, "ab", 0), 0) != batch_seed(stream_entropy(3, "ab", 10_000), 0)
    assert batch_seed(stream_entropy(3, "ab", 0), 0) != batch_seed(stream_entropy(3, "ab", 0), 1)
    assert batch_seed(stream_entropy(3, "ab", 0), 0) != batch_seed(stream_entropy(3, "cd", 0), 0)


def test_same_seed_same_statistics_across_executors(tmp_path):
    tasks = _tasks((3, 0.01), (5, 0.008))
    inline = run_sweep(tasks, out_path=None, options=OPTS, executor=InlineExecutor())
    with LocalExecutor(2) as ex:
        pool = run_sweep(tasks, out_path=None, options=OPTS, executor=ex)
    assert _key(inline) == _key(pool)
    other_seed = run_sweep(tasks, out_path=None, options=SweepOptions(**{**OPTS.__dict__, "seed": 12}))
    assert _key(other_seed) != _key(inline)


def test_dask_local_cluster_matches_process_pool():
    tasks = _tasks((3, 0.01), (5, 0.008))
    with LocalExecutor(2) as ex:
        pool = run_sweep(tasks, out_path=None, options=OPTS, executor=ex)
    with DaskExecutor(n_workers=2) as ex:
        dask = run_sweep(tasks, out_path=None, options=OPTS, executor=ex)
    assert _key(dask) == _key(pool)


def test_same_logical_error_rate_as_sinter_collect():
    """d=5, p=0.005 SD6: our pipeline vs sinter's built-in pymatching, >= 300 errors each."""
    circuit = _surface(5, 0.005)
    (ours,) = run_sweep(
        [SweepTask(decoder=DecoderSpec.create("pymatching"), circuit_text=str(circuit))],
        out_path=None,
        options=SweepOptions(max_shots=60_000, max_errors=10**9, seed=5, max_batch_size=20_000),
    )
    (theirs,) = sinter.collect(
        num_workers=1, tasks=[sinter.Task(circuit=circuit)], decoders=["pymatching"], max_shots=60_000, max_errors=10**9
    )
    assert ours.errors >= 300 and theirs.errors >= 300
    a = fit_binomial(num_shots=ours.shots, num_hits=ours.errors, max_likelihood_factor=1e3)
    b = fit_binomial(num_shots=theirs.shots, num_hits=theirs.errors, max_likelihood_factor=1e3)
    assert a.low <= b.high and b.low <= a.high, (a, b)


def test_strong_id_equals_sinters_for_the_same_task():
    from qdecode.sims.tasks import describe_task

    circuit = _surface(3, 0.01)
    task = SweepTask(decoder=DecoderSpec.create("pymatching"), circuit_text=str(circuit), extra_metadata=(("d", 3),))
    ours = describe_task(task)
    theirs = sinter.Task(
        circuit=circuit, decoder="pymatching", json_metadata={"d": 3},
        detector_error_model=circuit.detector_error_model(decompose_errors=True, approximate_disjoint_errors=True),
    )
    assert ours.strong_id == theirs.strong_id()


def test_decoder_failure_propagates_and_keeps_finished_rows(tmp_path):
    out = tmp_path / "s.csv"
    run_sweep(_tasks((3, 0.01)), out_path=out, options=OPTS)
    # one error flipping three detectors: a hyperedge matching cannot decode
    hyper = "X_ERROR(0.1) 0\nM 0 0 0\nDETECTOR rec[-1]\nDETECTOR rec[-2]\nDETECTOR rec[-3]\n"
    bad = SweepTask(decoder=DecoderSpec.create("pymatching"), circuit_text=hyper)
    with pytest.raises(ValueError):
        run_sweep([bad], out_path=out, options=OPTS)
    assert sum(r.shots for r in read_rows(out)) == 20_000
    np.testing.assert_(out.read_text().endswith("\n"))
