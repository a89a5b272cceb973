"""Progress of ``qdecode sweep`` on stderr (plain lines without a terminal, a bar on one), its ETA
arithmetic, and the plain lines of ``bench`` / ``learn-noise`` without a terminal.

Fixed seeds and a few thousand shots; ``--progress-interval 0`` writes a status table at every batch.
"""

from __future__ import annotations

import io
import math
import sys
import types

import pytest

import qdecode.cli.progress as progress
from qdecode.cli.main import main
from qdecode.cli.progress import format_duration, seconds_to_go, shots_to_go, sweep_eta, task_cost

SWEEP = ["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01,0.02", "--decoder", "pymatching",
         "--max-shots", "3000", "--max-errors", "60", "--workers", "0", "--seed", "3"]


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


# ------------------------------------------------------------------ arithmetic
def test_shots_to_go_follows_the_stopping_rule():
    # p_hat = (errors + 1) / (shots + 1) = 11 / 1001; (100 - 10) / p_hat = 8190
    assert shots_to_go(1000, 10, 1_000_000, 100) == pytest.approx(90 * 1001 / 11)
    assert shots_to_go(1000, 10, 5000, 100) == 4000  # max_shots comes first
    assert shots_to_go(1000, 0, 10**9, 100) == pytest.approx(100 * 1001)  # zero errors: p_hat = 1 / (shots + 1)
    assert shots_to_go(0, 0, 10**6, 100) == 100  # no shot yet: p_hat = 1
    assert shots_to_go(5000, 3, 5000, 100) == 0  # finished by max_shots
    assert shots_to_go(700, 100, 5000, 100) == 0  # finished by max_errors
    assert shots_to_go(700, 130, 5000, 100) == 0  # overshoot


def test_seconds_to_go_is_shots_to_go_times_the_measured_time_per_shot():
    assert seconds_to_go(1000, 10, 5000, 100, seconds=2.0) == pytest.approx(4000 * 2.0 / 1000)
    assert seconds_to_go(1000, 0, 10**9, 100, seconds=1.0) == pytest.approx(100 * 1001 / 1000)
    assert seconds_to_go(5000, 3, 5000, 100, seconds=9.0) == 0  # finished tasks need nothing
    assert seconds_to_go(10, 100, 5000, 100, seconds=9.0) == 0
    assert seconds_to_go(0, 0, 5000, 100, seconds=0.0) is None  # nothing measured yet


class _Task:
    """A stand-in for sims.sweep.TaskProgress with the fields the progress arithmetic reads."""

    def __init__(self, shots, errors, seconds, *, at_start=0, max_shots=5000, max_errors=100, recorded=1,
                 sid="t", in_flight=None):
        self.total = types.SimpleNamespace(shots=shots, errors=errors, seconds=seconds)
        self.shots_at_start, self.next_to_record = at_start, recorded
        self.max_shots, self.max_errors = max_shots, max_errors
        self.in_flight = {} if in_flight is None else in_flight
        self.label = "dec"
        self.compiled = types.SimpleNamespace(strong_id=sid, json_metadata={"p": sid},
                                              task=types.SimpleNamespace(decoder=types.SimpleNamespace(name="dec")))

    def done(self, opts):
        return self.total.shots >= self.max_shots or self.total.errors >= self.max_errors

    def finished(self, opts):
        return self.done(opts) and not self.in_flight

    def add(self, shots, errors, seconds):
        """Record a batch: returns the row."""
        t = self.total
        self.total = types.SimpleNamespace(shots=t.shots + shots, errors=t.errors + errors, seconds=t.seconds + seconds)
        self.next_to_record += 1
        return types.SimpleNamespace(shots=shots, errors=errors, seconds=seconds)


_task = _Task


def test_sweep_eta_and_cost_divide_the_tasks_sum_by_the_workers():
    opts = types.SimpleNamespace(max_shots=5000, max_errors=100)
    tasks = [_task(1000, 10, 2.0, sid="a"), _task(5000, 3, 9.0, sid="b"), _task(0, 0, 0.0, recorded=0, sid="c")]
    eta, unknown = sweep_eta(tasks, opts, workers=2)
    assert eta == pytest.approx(4000 * 2.0 / 1000 / 2) and unknown == 1
    # a measured time per shot replaces the totals' for the shots to go
    assert sweep_eta(tasks, opts, workers=2, per_shot={"a": 1e-3})[0] == pytest.approx(4000 * 1e-3 / 2)
    # cost: (1000 recorded + 4000 to go) * 2 ms + 5000 * 1.8 ms (finished in this run), over 2 workers
    assert sum(task_cost(st, opts) for st in tasks) / 2 == pytest.approx((5000 * 2e-3 + 5000 * 9.0 / 5000) / 2)
    assert task_cost(tasks[0], opts, per_shot=1e-3) == pytest.approx(1000 * 2e-3 + 4000 * 1e-3)
    resumed = _task(5000, 3, 9.0, at_start=5000)  # finished before this run: costs nothing
    assert task_cost(resumed, opts) == 0


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def _feed(sink, tasks, st, shots, errors, seconds, workers=1):
    row = st.add(shots, errors, seconds)
    opts = types.SimpleNamespace(max_shots=st.max_shots, max_errors=st.max_errors)
    p = types.SimpleNamespace(tasks=tasks, options=opts, last=st, row=row, workers=workers,
                              tasks_finished=sum(t.finished(opts) for t in tasks))
    sink(p)
    return p


def test_estimate_uses_the_latest_batch(monkeypatch, capsys):
    """The first batch carries the worker's start-up: the estimate waits for every task's second
    batch and takes its time per shot."""
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    a = _task(0, 0, 0.0, recorded=0, sid="a", max_shots=100_000, max_errors=10**6, in_flight={1: 512})
    b = _task(0, 0, 0.0, recorded=0, sid="b", max_shots=100_000, max_errors=10**6, in_flight={1: 512})
    sink = progress.SweepProgress(2, interval=3600)
    capsys.readouterr()
    clock.now += 10  # start-up
    _feed(sink, [a, b], a, 256, 0, 2.56, workers=2)  # 10 ms/shot: warm-up
    clock.now += 1
    _feed(sink, [a, b], b, 256, 0, 2.56, workers=2)
    clock.now += 1
    _feed(sink, [a, b], a, 512, 0, 0.512, workers=2)  # 1 ms/shot
    assert "cost estimate" not in capsys.readouterr().err  # b has one batch only
    clock.now += 1
    _feed(sink, [a, b], b, 512, 0, 1.024, workers=2)  # 2 ms/shot
    err = capsys.readouterr().err
    assert "cost estimate" in err and "on the latest batches (2 tasks)" in err
    to_go = (100_000 - 768) * (1e-3 + 2e-3) / 2  # over two workers
    assert sink._estimate == pytest.approx(13 + to_go)
    assert f"~{format_duration(13 + to_go)} with 2 workers" in err


def test_task_lines_never_show_a_stale_eta(monkeypatch):
    """A queued task says so (no ETA); a running task's ETA counts down between its batches."""
    clock = _Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    a = _task(0, 0, 0.0, recorded=0, sid="a", max_shots=10_000, max_errors=10**6)
    b = _task(0, 0, 0.0, recorded=0, sid="b", max_shots=10_000, max_errors=10**6, in_flight={1: 512})
    sink = progress.SweepProgress(2, interval=3600)
    opts = types.SimpleNamespace(max_shots=10_000, max_errors=10**6)
    _feed(sink, [a, b], a, 1000, 0, 0.1)
    _feed(sink, [a, b], b, 1000, 0, 0.2)
    _feed(sink, [a, b], b, 1000, 0, 0.2)  # b: 0.2 ms/shot, 8000 shots to go: 1.6 s
    assert sink.task_status(a, opts) == "queued, ~0.9 s CPU to go"  # a: nothing in flight
    assert sink.task_status(b, opts) == "ETA ~1.6 s"
    clock.now += 1.0
    assert sink.task_status(b, opts) == "ETA ~0.6 s"  # drawn later: counted down
    assert sink.task_status(a, opts) == "queued, ~0.9 s CPU to go"  # no ETA to go stale
    clock.now += 90
    assert sink.task_status(b, opts) == "ETA ?"  # past its estimate: no stale number
    lines = sink.status_lines(types.SimpleNamespace(tasks=[a, b], options=opts, workers=1, tasks_finished=0))
    assert any("queued" in ln for ln in lines) and any(ln.endswith("ETA ?") for ln in lines)


def test_format_duration():
    assert [format_duration(s) for s in (0, 0.43, 42.4, 245, 3 * 3600 + 720)] == \
        ["0.0 s", "0.4 s", "42 s", "4m05s", "3h12m"]
    assert format_duration(math.inf) == "?"


# ------------------------------------------------------------------ qdecode sweep
def _sweep(argv, capsys, path):
    capsys.readouterr()
    assert main([*argv, "--out", str(path)]) == 0
    out = capsys.readouterr()
    return out.out, out.err, path.read_text()


def test_sweep_writes_eta_lines_and_a_cost_estimate_without_a_terminal(tmp_path, capsys):
    out, err, csv = _sweep([*SWEEP, "--progress-interval", "0"], capsys, tmp_path / "a.csv")
    lines = err.splitlines()
    assert lines[0] == "qdecode sweep: seed 3 (given)"  # the run's decisions first
    assert lines[1].startswith("qdecode sweep: ") and "ETA" in lines[1] and "1 worker," in lines[1]
    assert any(ln.startswith("  pymatching p=0.0") and "shots " in ln and "/3000" in ln and "errors " in ln
               and "/shot" in ln and "ETA" in ln for ln in lines)  # a task line
    (cost,) = [i for i, ln in enumerate(lines) if "cost estimate" in ln]
    assert "pymatching: " in lines[cost + 1] and "/shot on the latest batches (2 tasks)" in lines[cost + 1]
    assert lines[cost + 2].startswith("qdecode sweep: estimated sweep time ~")
    assert lines[-2].startswith("qdecode sweep: progress: 2/2 tasks done in ") and "estimated ~" in lines[-2]
    assert lines[-1].startswith("qdecode sweep: 2 tasks, ")  # the result line, as before

    quiet_out, quiet_err, quiet_csv = _sweep([*SWEEP, "--quiet"], capsys, tmp_path / "q.csv")
    assert quiet_err.splitlines() == [lines[-1].replace("a.csv", "q.csv")]  # no progress at all
    assert out == quiet_out == ""  # progress never goes to stdout
    assert _counts(csv) == _counts(quiet_csv)  # nor changes what is recorded


def _counts(csv: str) -> list[str]:
    """The CSV's rows without their timing column, sorted (tasks' rows may interleave in either order)."""
    return sorted(",".join(f for i, f in enumerate(ln.split(",")) if i != 3) for ln in csv.splitlines())


def test_sweep_interval_limits_the_tables(tmp_path, capsys):
    _, err, _ = _sweep([*SWEEP, "--progress-interval", "3600"], capsys, tmp_path / "a.csv")
    tables = [ln for ln in err.splitlines() if "tasks done," in ln]
    assert len(tables) == 1  # the first batch's only
    assert sum("cost estimate" in ln for ln in err.splitlines()) == 1


def test_sweep_on_a_terminal_draws_a_bar_and_progress_lines_forces_lines(tmp_path, capsys, monkeypatch):
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    assert main([*SWEEP, "--out", str(tmp_path / "a.csv")]) == 0
    bar = fake.getvalue()
    assert "tasks:" in bar and "\r" in bar and "ETA" in bar and "cost estimate" in bar
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    assert main([*SWEEP, "--progress-lines", "--out", str(tmp_path / "b.csv")]) == 0
    lines = fake.getvalue()
    assert "\r" not in lines and "ETA" in lines and "cost estimate" in lines
    monkeypatch.undo()
    assert capsys.readouterr().out == ""


def test_bad_progress_interval_is_one_line(cli_error):
    assert "--progress-interval must be >= 0 seconds, got -1" in cli_error([*SWEEP, "--progress-interval", "-1"])
    assert "--progress-interval must be >= 0" in cli_error([*SWEEP, "--progress-interval", "nan"])


# ------------------------------------------------------------------ bench, learn-noise
BENCH = ["bench", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--decoder", "pymatching",
         "--shots", "50", "--warmup", "1"]
LEARN = ["learn-noise", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--reference-p", "0.01",
         "--shots", "2000"]


def test_bench_and_learn_noise_write_plain_lines_without_a_terminal(capsys, monkeypatch):
    capsys.readouterr()
    assert main(BENCH) == 0
    plain = capsys.readouterr()
    assert plain.err == ""  # quicker than LINE_INTERVAL: nothing
    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.0)
    assert main(BENCH) == 0
    out = capsys.readouterr()
    assert "qdecode bench: building the problem: done in" in out.err and "\r" not in out.err
    assert out.out.count("\n") == plain.out.count("\n")  # stdout unchanged
    assert main([*BENCH, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(LEARN) == 0
    err = capsys.readouterr().err
    assert "qdecode learn-noise: " in err and "/2000 shot" in err and "elapsed" in err
