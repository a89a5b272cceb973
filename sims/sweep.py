"""The sweep driver: submit seeded batches, append one CSV row per finished batch.

Resume = run again. Existing rows of the output CSV count toward each task's
``max_shots`` / ``max_errors`` (matched by strong_id), so rerunning a finished
sweep does nothing, and rerunning a killed one continues where it stopped: every
finished batch was flushed (and fsynced) as its own row, a half-written last
line is cut off with a warning, and nothing is counted twice.

Random streams: task ``t`` samples batch ``i`` with stim seed
``SeedSequence(entropy=(seed, strong_id, shots recorded at start), spawn_key=(i,))``.
Distinct tasks never share a stream, a batch is replayable from those three
numbers, and a resumed run (which starts from a larger recorded shot count)
never repeats the samples of rows already in the file. Classical points with a text
source use the point's decoder-independent ``sample_id`` instead of the strong_id, so
all decoders of one point decode the same blocks and noise (paired comparison).

Batch sizes double from ``min_batch_size`` up to ``max_batch_size`` as a
function of the batch index only, so for a fixed seed and ``max_shots`` the
statistics do not depend on the executor or the number of workers. Two
adaptive caps can shrink batches: the shots expected to reach ``max_errors``
and, when ``target_batch_seconds`` is set, the shots that take about that long.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import logging
import os
from typing import Callable, Sequence

from qdecode.sims.executors import InlineExecutor, SweepExecutor
from qdecode.sims.sampling import BatchResult, run_batch
from qdecode.sims.store import StatsRow, StatsWriter, merge_rows, read_rows
from qdecode.sims.tasks import CompiledTask, Task, describe_task

log = logging.getLogger("qdecode.sims.sweep")


@dataclasses.dataclass(frozen=True)
class SweepOptions:
    """Stopping rules and batching.

    Attributes:
        max_shots: stop a task after this many shots (existing rows included).
        max_errors: stop a task after this many errors (existing rows included).
        seed: root entropy of every task's random stream.
        min_batch_size / max_batch_size: the batch-size doubling schedule's ends.
        target_batch_seconds: when set, cap batches at about this much CPU time (adaptive,
            so results then depend on timing); ``None`` keeps batch sizes deterministic.
        max_in_flight_per_worker: batches queued per worker to keep them busy.
    """

    max_shots: int = 1_000_000
    max_errors: int = 100
    seed: int = 0
    min_batch_size: int = 1024
    max_batch_size: int = 65536
    target_batch_seconds: float | None = None
    max_in_flight_per_worker: int = 2

    def __post_init__(self) -> None:
        if self.max_shots < 0 or self.max_errors < 0:
            raise ValueError(f"max_shots and max_errors must be >= 0, got {self.max_shots}, {self.max_errors}")
        if not 1 <= self.min_batch_size <= self.max_batch_size:
            raise ValueError(
                f"need 1 <= min_batch_size <= max_batch_size, got {self.min_batch_size}, {self.max_batch_size}"
            )
        if self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed}")


@dataclasses.dataclass
class TaskProgress:
    """Running totals of one task (existing rows + finished batches + in flight)."""

    compiled: CompiledTask
    total: StatsRow
    stream: tuple[int, ...]
    batches_submitted: int = 0
    in_flight_shots: int = 0
    in_flight_batches: int = 0

    @property
    def label(self) -> str:
        return self.compiled.label

    def done(self, opts: SweepOptions) -> bool:
        return self.total.errors >= opts.max_errors or self.total.shots >= opts.max_shots

    def finished(self, opts: SweepOptions) -> bool:
        return self.done(opts) and self.in_flight_batches == 0

    def next_batch_size(self, opts: SweepOptions) -> int:
        """Shots for the next batch, or 0 when nothing should be submitted now."""
        if self.done(opts):
            return 0
        remaining = opts.max_shots - self.total.shots - self.in_flight_shots
        if remaining <= 0:
            return 0
        size = min(opts.max_batch_size, opts.min_batch_size << min(self.batches_submitted, 40))
        t = self.total
        if t.errors > 0:
            rate = t.errors / t.shots
            errors_left = opts.max_errors - t.errors - rate * self.in_flight_shots
            if errors_left <= 0:
                return 0  # batches in flight are expected to finish the task
            size = min(size, max(opts.min_batch_size, int(1.1 * errors_left / rate) + 1))
        if opts.target_batch_seconds and t.seconds > 0 and t.shots > 0:
            size = min(size, max(opts.min_batch_size, int(opts.target_batch_seconds * t.shots / t.seconds)))
        return min(size, remaining)


@dataclasses.dataclass(frozen=True)
class Progress:
    """What a progress callback receives after each finished batch."""

    tasks: Sequence[TaskProgress]
    options: SweepOptions
    last: TaskProgress | None

    @property
    def tasks_finished(self) -> int:
        return sum(t.finished(self.options) for t in self.tasks)


def _stream(seed: int, strong_id: str, shots_at_start: int) -> tuple[int, ...]:
    return (seed, int(strong_id, 16), shots_at_start)


def prepare(tasks: Sequence[Task], existing: dict[str, StatsRow], opts: SweepOptions) -> list[TaskProgress]:
    """Describe every task (circuit, DEM, strong_id) and attach the rows already recorded."""
    out = []
    seen: set[str] = set()
    for task in tasks:
        ct = describe_task(task)
        if ct.strong_id in seen:
            continue  # the same task listed twice would double its stopping budget
        seen.add(ct.strong_id)
        prior = existing.get(ct.strong_id) or StatsRow(strong_id=ct.strong_id, decoder=ct.label, json_metadata=ct.json_metadata)
        # text-source classical points draw blocks and noise from a stream keyed by the point without the
        # decoder, so every decoder sees the same blocks (paired comparison)
        key = ct.strong_id
        if task.classical is not None and getattr(task.classical, "source", "uniform") != "uniform":
            key = task.classical.sample_id()
        out.append(TaskProgress(compiled=ct, total=prior, stream=_stream(opts.seed, key, prior.shots)))
    return out


def warm_up(states: Sequence[TaskProgress]) -> None:
    """Build each distinct decoder once in this process and decode one empty syndrome.

    Compiles (or loads) the numba kernels here, so the on-disk cache is written once
    before worker processes start instead of by every worker at the same time.
    """
    import numpy as np

    from qdecode.problem import DecodingProblem

    seen: set[str] = set()
    for st in states:
        name = st.compiled.task.decoder.name
        if name in seen:
            continue
        seen.add(name)
        if st.compiled.task.classical is not None:
            from qdecode.sims.sampling import compiled

            ct, channel = compiled(st.compiled.task)
            ct.decoder.decode_llr_batch(channel.transmit(np.zeros((1, ct.code.n), dtype=np.uint8), 0))
            continue
        decoder = st.compiled.task.decoder.build(DecodingProblem.from_dem(st.compiled.dem))
        decoder.predict_observables_batch(np.zeros((1, st.compiled.dem.num_detectors), dtype=np.uint8))


def run_sweep(
    tasks: Sequence[Task],
    *,
    out_path: str | os.PathLike | None,
    options: SweepOptions = SweepOptions(),
    executor: SweepExecutor | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> list[StatsRow]:
    """Run every task until its stopping rule holds; return one merged row per task.

    Args:
        tasks: sweep points. Duplicates (same strong_id) are run once.
        out_path: sinter-format CSV to resume from and append to, or None (in memory only).
        options: stopping rules, seed and batching.
        executor: where batches run; default runs them inline.
        progress: called after each finished batch.
    """
    executor = executor or InlineExecutor()
    existing: dict[str, StatsRow] = {}
    if out_path is not None and os.path.exists(out_path):
        existing = merge_rows(read_rows(out_path))
    states = prepare(tasks, existing, options)
    if not isinstance(executor, InlineExecutor) and any(not st.done(options) for st in states):
        warm_up([st for st in states if not st.done(options)])
    writer = StatsWriter(out_path) if out_path is not None else None
    pending: dict[cf.Future, int] = {}
    limit = max(1, executor.num_workers * options.max_in_flight_per_worker)
    try:
        while True:
            # Fill free slots, earliest unfinished tasks first (keeps workers' decoder caches warm).
            for key, st in enumerate(states):
                while len(pending) < limit:
                    size = st.next_batch_size(options)
                    if size <= 0:
                        break
                    fut = executor.submit(run_batch, st.compiled.task, key, st.batches_submitted, size, st.stream)
                    st.batches_submitted += 1
                    st.in_flight_shots += size
                    st.in_flight_batches += 1
                    pending[fut] = key
                if len(pending) >= limit:
                    break
            if not pending:
                break
            done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
            for fut in done:
                key = pending.pop(fut)
                st = states[key]
                result: BatchResult = fut.result()
                st.in_flight_shots -= result.shots
                st.in_flight_batches -= 1
                row = StatsRow(
                    strong_id=st.compiled.strong_id,
                    decoder=st.label,
                    json_metadata=st.compiled.json_metadata,
                    shots=result.shots,
                    errors=result.errors,
                    discards=result.discards,
                    seconds=result.seconds,
                    custom_counts=result.custom_counts,
                )
                if writer is not None:
                    writer.append(row)
                st.total = st.total + row
                if progress is not None:
                    progress(Progress(tasks=states, options=options, last=st))
    finally:
        for fut in pending:
            fut.cancel()
        if writer is not None:
            writer.close()
    return [st.total for st in states]
