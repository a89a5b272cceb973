"""The sweep driver: submit seeded batches, record a deterministic prefix of them, one CSV row per batch.

Resume = run again. Existing rows of the output CSV count toward each task's
``max_shots`` / ``max_errors`` (matched by strong_id), so rerunning a finished
sweep does nothing, and rerunning a killed one continues where it stopped: every
recorded batch was flushed (and fsynced) as its own row, a half-written last
line is cut off with a warning, and nothing is counted twice.

One writer per file. The sweep holds an exclusive lock on the output CSV
(:class:`qdecode.sims.store.StatsWriter`) from before it reads the recorded rows until
it ends, so a second sweep on the same file (same machine, or another machine on a
shared disk whose file system supports POSIX locks) stops at once with a clear message
instead of replaying the same random streams and recording every batch twice.

Random streams: task ``t`` samples batch ``i`` with stim seed
``SeedSequence(entropy=(seed, strong_id, shots recorded at start), spawn_key=(i,))``.
Distinct tasks never share a stream, a batch is replayable from those three
numbers, and a resumed run (which starts from a larger recorded shot count)
never repeats the samples of rows already in the file. Classical points with a text
source use the point's decoder-independent ``sample_id`` instead of the strong_id, so
all decoders of one point decode the same blocks and noise (paired comparison).

Fresh samples: the seed is fresh for every new run unless given (:func:`choose_seed`), as
sinter's runs are, so one sweep run twice into two files draws different shots. Every row
records its stream in ``custom_counts`` (``seed=<seed>@<shots at start>``,
:mod:`qdecode.sims.seed_streams`): a resume without a seed takes the seed its file recorded
(continuing that file's streams, so a given seed stays reproducible across a kill), and
``qdecode combine`` refuses two files that hold the same stream's shots.

Reproducible stopping. Batch ``i`` has ``min(max_batch_size, min_batch_size * 2**i)``
shots (the last one cut to ``max_shots``): a function of the index only. Each batch is
cut into chunks (:func:`qdecode.sims.sampling.chunk_sizes`: about 8 per batch, at least
32 shots), sampled in stim calls of up to ``SAMPLE_SHOTS`` consecutive shots
(:func:`qdecode.sims.sampling.sample_plan`) and decoded in calls of up to ``CALL_SHOTS``
(:func:`qdecode.sims.sampling.call_plan`), then counted per chunk; each shot is decoded
independently of the others in its call, so the counts are those of one call per chunk. The
task's canonical sample sequence is batch 0's chunks, then batch 1's, and so on; what is
recorded is its shortest prefix that reaches ``max_errors`` errors (or all of it,
``max_shots`` shots). Finished batches are recorded in index order, and batches still
running or finished beyond the stopping chunk are dropped unrecorded. So the same command
with the same seed, started from the same file, records the same shots and errors per task
whatever the executor, the number of workers or the timing; time decides only which batches
run when.

Overshoot bound: the recorded errors exceed ``max_errors`` by less than the errors of the
one chunk that crossed it. That chunk holds at most ``max(32, shots of the batch / 8)``
shots, and batch ``i`` is about as large as batches ``0 .. i-1`` together (which had fewer
than ``max_errors`` errors), so on average the overshoot is below ``max_errors / 8`` plus
the errors of 32 shots. Decoding in large calls does not change this (the stop stays on a
chunk); it costs work only: a worker that reaches its error cap has decoded the rest of that
call, fewer than ``CALL_SHOTS`` shots, which are dropped unrecorded.

Scheduling: a task keeps at most ``max_in_flight_per_worker * workers`` batches in flight,
and no new batch while the batches in flight are expected (at the recorded error rate) to
finish it. Each batch is told the errors it may stop at (``max_errors`` minus the errors
recorded when it was submitted), so a speculative batch never runs far past the target.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import logging
import os
from collections import Counter
from typing import Callable, Sequence

from qdecode.errors import InputError
from qdecode.sims.auto_sweep import resolve_auto_tasks
from qdecode.sims.executors import InlineExecutor, SweepExecutor
from qdecode.sims.sampling import BatchResult, run_batch
from qdecode.sims.seed_streams import fresh_seed, recorded_seed, seed_key
from qdecode.sims.store import CsvLockedError, StatsRow, StatsWriter, merge_rows, read_rows  # noqa: F401
from qdecode.sims.tasks import CompiledTask, SweepTask, describe_task

log = logging.getLogger("qdecode.sims.sweep")


@dataclasses.dataclass(frozen=True)
class SweepOptions:
    """Stopping rules and batching.

    Attributes:
        max_shots: stop a task after this many shots (existing rows included).
        max_errors: stop a task after this many errors (existing rows included).
        seed: root entropy of every task's random stream; None (the default) draws a fresh one per
            run, or resumes the seed recorded in the output file (:func:`choose_seed`).
        min_batch_size / max_batch_size: the batch-size doubling schedule's ends.
        max_in_flight_per_worker: batches queued per worker to keep them busy.
    """

    max_shots: int = 1_000_000
    max_errors: int = 100
    seed: int | None = None
    min_batch_size: int = 256
    max_batch_size: int = 65536
    max_in_flight_per_worker: int = 2

    def __post_init__(self) -> None:
        # 0 would stop every task before its first shot: a sweep that does nothing and says "0 tasks".
        for name in ("max_shots", "max_errors"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 1 <= self.min_batch_size <= self.max_batch_size:
            raise InputError(
                f"need 1 <= min_batch_size <= max_batch_size, got {self.min_batch_size}, {self.max_batch_size}"
            )
        if self.seed is not None and self.seed < 0:
            raise InputError(f"seed must be a non-negative integer, got {self.seed}")


@dataclasses.dataclass
class TaskProgress:
    """One task's state: recorded totals, the batch plan, batches in flight and finished ones held back.

    Batches are recorded strictly in index order; a batch that finishes before its
    predecessors waits in ``held``. ``stopped`` is set once the recorded prefix reached
    ``max_errors``: from then on every other batch of the task is dropped unrecorded.
    """

    compiled: CompiledTask
    total: StatsRow
    stream: tuple[int, ...]
    shots_at_start: int = 0
    batches_submitted: int = 0
    in_flight: dict[int, int] = dataclasses.field(default_factory=dict)  # batch index -> planned shots
    held: dict[int, BatchResult] = dataclasses.field(default_factory=dict)
    next_to_record: int = 0
    stopped: bool = False

    @property
    def label(self) -> str:
        return self.compiled.label

    @property
    def in_flight_shots(self) -> int:
        return sum(self.in_flight.values())

    def done(self, opts: SweepOptions) -> bool:
        """Nothing more will be recorded: the error target was reached, or every planned shot is recorded."""
        return self.stopped or self.total.errors >= opts.max_errors or self.total.shots >= opts.max_shots

    def finished(self, opts: SweepOptions) -> bool:
        return self.done(opts) and not self.in_flight

    def planned_size(self, index: int, opts: SweepOptions) -> int:
        """Shots of batch ``index``: the doubling schedule, cut so the plan ends at ``max_shots``."""
        size, before, i = opts.min_batch_size, 0, 0
        while i < index and size < opts.max_batch_size:  # at most ~40 doublings, then constant batches
            before += size
            size *= 2
            i += 1
        size = min(size, opts.max_batch_size)
        before += (index - i) * size
        return max(0, min(size, opts.max_shots - self.shots_at_start - before))

    def next_batch_size(self, opts: SweepOptions) -> int:
        """Shots of the next batch to submit now, or 0 to wait (scheduling only; never changes results)."""
        if self.done(opts):
            return 0
        size = self.planned_size(self.batches_submitted, opts)
        if size <= 0:
            return 0
        if self.in_flight and self.total.errors > 0:
            rate = self.total.errors / max(1, self.total.shots - self.total.discards)
            held_errors = sum(r.errors for r in self.held.values())
            if self.total.errors + held_errors + rate * self.in_flight_shots >= opts.max_errors:
                return 0  # the batches in flight are expected to finish the task
        return size

    def error_cap(self, opts: SweepOptions) -> int:
        """Errors a new batch may stop at: the prefix recorded before it can never need more."""
        held_errors = sum(r.errors for r in self.held.values())
        return max(1, opts.max_errors - self.total.errors - held_errors)

    def record_ready(self, opts: SweepOptions) -> list[StatsRow]:
        """Record the held batches that are next in index order; return their rows (possibly cut)."""
        rows: list[StatsRow] = []
        while not self.stopped and self.next_to_record in self.held:
            index = self.next_to_record
            result = self.held.pop(index)
            self.next_to_record += 1
            shots = errors = discards = 0
            seconds = 0.0
            counts: Counter = Counter()
            for chunk in result.chunks:
                shots += chunk.shots
                errors += chunk.errors
                discards += chunk.discards
                seconds += chunk.seconds
                counts.update(chunk.custom_counts)
                if self.total.errors + errors >= opts.max_errors:
                    self.stopped = True
                    break
            if not self.stopped and shots < self.planned_size(index, opts):
                raise RuntimeError(f"batch {index} of {self.label} stopped early but did not reach max_errors")
            counts[seed_key(opts.seed, self.shots_at_start)] += shots  # the stream's record (seed_streams)
            row = StatsRow(strong_id=self.compiled.strong_id, decoder=self.label,
                           json_metadata=self.compiled.json_metadata, shots=shots, errors=errors,
                           discards=discards, seconds=seconds, custom_counts=counts)
            self.total = self.total + row
            rows.append(row)
        if self.stopped:
            self.held.clear()
        return rows


@dataclasses.dataclass(frozen=True)
class Progress:
    """What a progress callback receives after each recorded batch.

    Attributes:
        tasks: every task's live state (its ``total`` includes rows read from the CSV).
        options: the stopping rules.
        last: the task that just recorded a batch.
        row: the row it recorded (``seconds``: the workers' CPU time for that batch, the
            timing a progress display derives a task's time per shot from).
        workers: the executor's worker count (for a sweep-wide ETA).
    """

    tasks: Sequence[TaskProgress]
    options: SweepOptions
    last: TaskProgress | None
    row: StatsRow | None = None
    workers: int = 1

    @property
    def tasks_finished(self) -> int:
        return sum(t.finished(self.options) for t in self.tasks)


def stream_entropy(seed: int, key: str, shots_at_start: int) -> tuple[int, ...]:
    """A task's stream: the entropy of its batches' seeds (:func:`qdecode.sims.sampling.batch_seed`).

    ``key`` is the task's hex strong_id (a classical text-source point's ``sample_id``).
    """
    return (seed, int(key, 16), shots_at_start)


def choose_seed(given: int | None, recorded_rows: Sequence[StatsRow]) -> tuple[int, str]:
    """The run's seed and where it came from: ``given``, else the seed the output file's rows
    recorded (a resume continues its streams), else a fresh one (a new file draws new samples).

    Returns:
        ``(seed, "given" | "recorded in the output file" | "fresh")``.
    """
    if given is not None:
        return given, "given"
    seed = recorded_seed(recorded_rows)
    if seed is not None:
        return seed, "recorded in the output file"
    return fresh_seed(), "fresh"


def prepare(tasks: Sequence[SweepTask], existing: dict[str, StatsRow], opts: SweepOptions) -> list[TaskProgress]:
    """Describe every task (circuit, DEM, strong_id) and attach the rows already recorded."""
    out = []
    seen: set[str] = set()
    for task in tasks:
        try:
            ct = describe_task(task)
        except ValueError as exc:  # e.g. stim refusing p=0.9 for sd6: say which of many tasks it was
            raise InputError(f"task {task.describe()}: {exc}") from None
        if ct.strong_id in seen:
            continue  # the same task listed twice would double its stopping budget
        seen.add(ct.strong_id)
        prior = existing.get(ct.strong_id) or StatsRow(strong_id=ct.strong_id, decoder=ct.label,
                                                       json_metadata=ct.json_metadata)
        # text-source classical points draw blocks and noise from a stream keyed by the point without the
        # decoder, so every decoder sees the same blocks (paired comparison)
        key = ct.strong_id
        if task.classical is not None and getattr(task.classical, "source", "uniform") != "uniform":
            key = task.classical.sample_id()
        out.append(TaskProgress(compiled=ct, total=prior, stream=stream_entropy(opts.seed, key, prior.shots),
                                shots_at_start=prior.shots))
    return out


def check_decoders(states: Sequence[TaskProgress]) -> None:
    """Build the decoder of every given task once, in this process, before any shot is sampled.

    A decoder that cannot decode a task's model refuses when it is built (sinter's contract for
    ``compile_decoder_for_dem``). Building them all up front stops a sweep that would fail
    before it samples anything, with one line naming the task, instead of after the tasks
    before it have run. The builds stay in this process's cache (:func:`sims.sampling.compiled`),
    which the inline executor decodes with.

    Raises:
        ValueError: ``"task <task.describe()>: <the decoder's reason>"``.
    """
    from qdecode.sims.sampling import compiled

    for st in states:
        try:
            compiled(st.compiled.task)
        except ValueError as exc:
            raise InputError(f"task {st.compiled.task.describe()}: {exc}") from None


def warm_up(states: Sequence[TaskProgress]) -> None:
    """Decode one empty syndrome (or block) with each distinct decoder, in this process.

    Compiles (or loads) the numba kernels here, so the on-disk cache is written once
    before worker processes start instead of by every worker at the same time. The decoders
    come from :func:`sims.sampling.compiled` (built by :func:`check_decoders`).
    """
    import numpy as np

    from qdecode.sims.sampling import compiled

    seen: set[str] = set()
    for st in states:
        name = st.compiled.task.decoder.name
        if name in seen:
            continue
        seen.add(name)
        ct, channel = compiled(st.compiled.task)
        if st.compiled.task.classical is not None:
            ct.decoder.decode_llr_batch(channel.transmit(np.zeros((1, ct.code.n), dtype=np.uint8), 0))
        else:
            ct.decoder.predict_observables_batch(np.zeros((1, ct.dem.num_detectors), dtype=np.uint8))


def run_sweep(
    tasks: Sequence[SweepTask],
    *,
    out_path: str | os.PathLike | None,
    options: SweepOptions = SweepOptions(),
    executor: SweepExecutor | None = None,
    progress: Callable[[Progress], None] | None = None,
    existing_rows: Sequence[StatsRow] = (),
    announce: Callable[[str], None] | None = None,
) -> list[StatsRow]:
    """Run every task until its stopping rule holds; return one merged row per task.

    Args:
        tasks: sweep points. Duplicates (same strong_id) are run once.
        out_path: sinter-format CSV to resume from and append to (locked for the whole run),
            or None (in memory only).
        options: stopping rules, seed and batching.
        executor: where batches run; default runs them inline.
        progress: called after each recorded batch.
        existing_rows: rows from elsewhere (other CSVs: sinter's ``existing_data_filepaths``) that
            count toward the stopping rules of the tasks with their strong_id; never written.
        announce: called with one line for each decision the run makes before sampling (the seed
            and where it came from; what ``auto`` chose, :mod:`qdecode.sims.auto_sweep`), for the
            command line to print.

    Raises:
        CsvLockedError: another sweep is writing ``out_path``.
        ValueError: a task's decoder refuses its model (:func:`check_decoders`: before any shot).
    """
    executor = executor or InlineExecutor()
    # Lock (and repair a truncated tail) before reading: the rows read must be the rows appended to.
    writer = StatsWriter(out_path) if out_path is not None else None
    pending: dict[cf.Future, tuple[int, int]] = {}
    try:
        own_rows = read_rows(out_path) if out_path is not None else []
        seed, origin = choose_seed(options.seed, own_rows)
        options = dataclasses.replace(options, seed=seed)
        existing = merge_rows([*own_rows, *existing_rows])
        decisions = [f"seed {seed} ({origin})"]
        tasks = resolve_auto_tasks(tasks, existing, announce=decisions.append)
        states = prepare(tasks, existing, options)
        unfinished = [st for st in states if not st.done(options)]
        check_decoders(unfinished)
        if announce is not None and unfinished:  # after every check: a refused sweep prints one line
            for line in decisions:
                announce(line)
        if not isinstance(executor, InlineExecutor) and unfinished:
            warm_up(unfinished)
        limit = max(1, executor.num_workers * options.max_in_flight_per_worker)
        def submit(key: int, st: TaskProgress) -> bool:
            size = st.next_batch_size(options)
            if size <= 0:
                return False
            index = st.batches_submitted
            fut = executor.submit(run_batch, st.compiled.task, key, index, size, st.stream, st.error_cap(options))
            st.batches_submitted += 1
            st.in_flight[index] = size
            pending[fut] = (key, index)
            return True

        while True:
            # Every task's first two batches first: its time per shot is then known early, measured on
            # a second batch, free of the worker's start-up (the sweep's cost estimate,
            # qdecode.cli.progress). Then fill free slots, earliest unfinished tasks first (keeps workers'
            # decoder caches warm). Scheduling only: what is recorded never depends on it (module docstring).
            for first in (0, 1):
                for key, st in enumerate(states):
                    if len(pending) < limit and st.batches_submitted == first:
                        submit(key, st)
            for key, st in enumerate(states):
                while len(pending) < limit and submit(key, st):
                    pass
                if len(pending) >= limit:
                    break
            if not pending:
                break
            done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
            for fut in done:
                key, index = pending.pop(fut)
                st = states[key]
                st.in_flight.pop(index, None)
                if fut.cancelled():
                    continue
                result: BatchResult = fut.result()
                if st.stopped:
                    continue  # beyond the recorded prefix: dropped
                st.held[index] = result
                for row in st.record_ready(options):
                    if writer is not None:
                        writer.append(row)
                    if progress is not None:
                        progress(Progress(tasks=states, options=options, last=st, row=row,
                                          workers=executor.num_workers))
                if st.stopped:
                    for other, (k, _) in list(pending.items()):
                        if k == key:
                            other.cancel()
    finally:
        for fut in pending:
            fut.cancel()
        if writer is not None:
            writer.close()
    return [st.total for st in states]
