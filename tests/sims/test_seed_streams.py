"""Fresh samples by default: two runs of one sweep never draw the same shots, and combine refuses copies.

The end-to-end tests run ``qdecode sweep`` in real processes (as a user runs it on two machines), then
replay the recorded streams (:func:`qdecode.sims.sampling.batch_seed`) to compare the shots themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from qdecode.sims.seed_streams import (
    describe_shared,
    is_seed_key,
    parse_seed_key,
    recorded_seed,
    seed_key,
    shared_streams,
)
from qdecode.sims.store import StatsRow, read_rows
from qdecode.sims.sweep import SweepOptions, choose_seed

SWEEP = [sys.executable, "-m", "qdecode.cli.main", "sweep", "--code", "surface", "--d", "3", "--p", "0.005",
         "--noise", "sd6", "--decoder", "pymatching", "--max-shots", "1000", "--max-errors", "100000",
         "--workers", "0"]


def _row(strong_id: str, shots: int, counts: dict) -> StatsRow:
    return StatsRow(strong_id=strong_id, decoder="pymatching", json_metadata={}, shots=shots, custom_counts=counts)


def test_keys_round_trip_and_are_told_apart():
    key = seed_key(123, 4096)
    assert key == "seed=123@4096" and parse_seed_key(key) == (123, 4096) and is_seed_key(key)
    assert parse_seed_key("iterations") is None and not is_seed_key("iterations")
    assert parse_seed_key("seed=12") is None  # no start: not a stream record


def test_recorded_seed_is_the_last_rows():
    rows = [_row("a", 10, {"seed=5@0": 10}), _row("a", 10, {"iterations": 3}), _row("b", 4, {"seed=9@0": 4}),
            _row("a", 1, {})]
    assert recorded_seed(rows) == 9
    assert recorded_seed([_row("a", 1, {"iterations": 1})]) is None  # sinter's rows record none


def test_choose_seed_given_then_recorded_then_fresh():
    rows = [_row("a", 10, {"seed=5@0": 10})]
    assert choose_seed(3, rows) == (3, "given")
    assert choose_seed(None, rows) == (5, "recorded in the output file")
    fresh = {choose_seed(None, [])[0] for _ in range(4)}
    assert len(fresh) == 4 and all(0 <= s < 2**63 for s in fresh)
    assert SweepOptions().seed is None  # the default is fresh, not 0


def test_shared_streams_across_sources_only():
    a = [_row("t", 256, {"seed=5@0": 256}), _row("t", 512, {"seed=5@0": 512})]  # one stream, two batches
    assert shared_streams({"a.csv": a}) == []
    b = [_row("t", 100, {"seed=5@0": 100}), _row("u", 7, {"seed=5@0": 7})]
    (s,) = shared_streams({"a.csv": a, "b.csv": b})
    assert (s.strong_id, s.key, s.first, s.second, s.first_shots, s.second_shots) == ("t", "seed=5@0", "a.csv",
                                                                                      "b.csv", 768, 100)
    assert "100 samples would count twice" in describe_shared([s])
    resumed = [_row("t", 300, {"seed=5@768": 300})]  # the same seed from a later start: a new stream
    assert shared_streams({"a.csv": a, "c.csv": resumed}) == []
    assert shared_streams({"a.csv": a, "s.csv": [_row("t", 9, {})]}) == []  # sinter's rows: no record


def _replay_first_batch(csv) -> tuple[np.ndarray, int]:
    """(packed detection events, errors) of the first recorded batch, sampled again from the stream its
    row records and decoded again by its decoder."""
    from qdecode.sims.recipe import parse_recipe
    from qdecode.sims.sampling import batch_seed, chunk_sizes, compiled, count_errors, sample_plan, split_plan
    from qdecode.sims.sweep import stream_entropy

    row = read_rows(csv)[0]
    ((seed, start),) = [parse_seed_key(k) for k in row.custom_counts if is_seed_key(k)]
    md = row.json_metadata
    recipe = parse_recipe({"tasks": [{"code": md["code"], "d": md["d"], "noise": md["noise"], "p": md["p"],
                                      "basis": md["b"], "decoders": [row.decoder]}]}, source="test")
    ct, make_sampler = compiled(recipe.tasks[0])
    assert ct.strong_id == row.strong_id  # the same task
    sampler = make_sampler(seed=batch_seed(stream_entropy(seed, row.strong_id, start), 0))
    # in the sweep's stim calls (stim's stream depends on the call sizes)
    sizes = chunk_sizes(row.shots)
    dets, obs = map(np.concatenate, zip(*(sampler.sample(sum(group), separate_observables=True, bit_packed=True)
                                          for group in split_plan(sizes, sample_plan(sizes)))))
    return dets, count_errors(ct.decoder.predict_observables_packed(dets), obs)


def test_two_runs_into_two_files_draw_distinct_shots_and_combine(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):  # two processes, as on two machines
        subprocess.run([*SWEEP, "--out", str(out)], check=True, capture_output=True, text=True)
    ra, rb = read_rows(a), read_rows(b)
    assert sum(r.shots for r in ra) == sum(r.shots for r in rb) == 1000
    sa, sb = recorded_seed(ra), recorded_seed(rb)
    assert sa is not None and sb is not None and sa != sb
    assert not np.array_equal(_replay_first_batch(a)[0], _replay_first_batch(b)[0])  # the shots themselves differ
    done = subprocess.run([sys.executable, "-m", "qdecode.cli.main", "combine", str(a), str(b)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()[1:]
    assert line.split(",")[0].strip() == "2000"


def test_replay_matches_what_the_sweep_recorded(tmp_path):
    """The replay above is the sweep's own stream: the errors of its first batch match the row."""
    out = tmp_path / "a.csv"
    subprocess.run([*[a if a != "0.005" else "0.02" for a in SWEEP], "--seed", "17", "--out", str(out)], check=True,
                   capture_output=True, text=True)
    row = read_rows(out)[0]
    assert row.custom_counts == {"seed=17@0": row.shots}
    dets, errors = _replay_first_batch(out)
    assert dets.shape[0] == row.shots and errors == row.errors


def test_one_seed_into_two_files_is_refused_by_combine(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        subprocess.run([*SWEEP, "--seed", "4", "--out", str(out)], check=True, capture_output=True, text=True)
    done = subprocess.run([sys.executable, "-m", "qdecode.cli.main", "combine", str(a), str(b)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "seed=4@0" in line and "1000 samples would count twice" in line and "--allow-shared-streams" in line
    forced = subprocess.run([sys.executable, "-m", "qdecode.cli.main", "combine", "--allow-shared-streams", str(a),
                             str(b)], capture_output=True, text=True)
    assert forced.returncode == 0 and forced.stdout.splitlines()[1].split(",")[0].strip() == "2000"
    same = subprocess.run([sys.executable, "-m", "qdecode.cli.main", "combine", str(a), str(a)],
                          capture_output=True, text=True)
    assert same.returncode == 2 and "argument 2" in same.stderr


def test_resume_continues_the_recorded_seed(tmp_path):
    out = tmp_path / "a.csv"
    first = subprocess.run(SWEEP + ["--out", str(out)], check=True, capture_output=True, text=True)
    seed = recorded_seed(read_rows(out))
    assert f"seed {seed} (fresh)" in first.stderr
    args = [a if a != "1000" else "2500" for a in SWEEP]  # more shots: the resume samples 1500 more
    again = subprocess.run([*args, "--out", str(out)], check=True, capture_output=True, text=True)
    assert f"seed {seed} (recorded in the output file)" in again.stderr
    keys = {}
    for row in read_rows(out):
        for k, v in row.custom_counts.items():
            keys[k] = keys.get(k, 0) + v
    assert keys == {f"seed={seed}@0": 1000, f"seed={seed}@1000": 1500}


@pytest.mark.parametrize("workers", ["2"])
def test_process_pool_rows_record_one_stream_per_start(tmp_path, workers):
    out = tmp_path / "p.csv"
    args = [a if a != "0" else workers for a in SWEEP]
    subprocess.run([*args, "--p", "0.005,0.006", "--seed", "8", "--out", str(out)], check=True,
                   capture_output=True, text=True)
    rows = read_rows(out)
    assert {r.strong_id for r in rows} and all(json.dumps(dict(r.custom_counts)) == json.dumps({"seed=8@0": r.shots})
                                               for r in rows)
