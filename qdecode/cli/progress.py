"""Progress of long commands: on stderr, with or without a terminal; never on stdout.

The library never prints; it calls a progress callback. This module turns those calls into
text on stderr, so a command's stdout is the same with and without progress, and ``--quiet``
silences all of it.

``qdecode sweep`` (:class:`SweepProgress`, called after each recorded batch):

- On a terminal: a tqdm bar of finished tasks whose postfix is the sweep's ETA and the task that
  just recorded a batch, with the status table below written above the bar.
- Without a terminal (a pipe, a batch job's log), or with ``--progress-lines``: plain lines.
- Either way, the status table (one line for the sweep, one per started unfinished task: label,
  shots / max_shots, errors / max_errors, time per shot, and an ETA while a batch of the task is
  running, ``queued`` and its CPU time to go while none is) is written when the first batch of
  the sweep lands and then at most once every ``--progress-interval`` seconds (default 30), and
  a summary line when the sweep ends: wall time, the estimate, and how busy the workers were
  (CPU time recorded / (wall time x workers); far below 100 % when the machine is shared).
- Once every task has recorded its second batch (or is done), a cost estimate is written once:
  per decoder the time per shot on its tasks' latest batches and its share, and the estimated
  time of the whole sweep. The sweep submits every task's first two batches before any third
  (:func:`qdecode.sims.sweep.run_sweep`), so the estimate comes early; until then the ETA is a
  lower bound.

The arithmetic (pure functions, unit tested):

- Time per shot of a task (:meth:`SweepProgress.per_shot`): ``seconds / shots`` of its latest
  batch once it has recorded two in this run, else of its totals. ``seconds`` is the
  sinter-format CSV's column, the worker's CPU time for sampling and decoding (rows from a
  resumed file included), so it is measured per task in the worker and is not inflated by the
  sweep waiting for others. The first batch is not used once a second is in: it carries the
  worker's start-up (numba's cache loads and first calls, many times the later time per shot),
  and its decoder call is the smallest (lane decoders are faster per shot on larger calls).
- Shots still needed (:func:`shots_to_go`): the stopping rule ends a task at ``max_shots`` shots or
  ``max_errors`` errors, whichever comes first, so ``min(max_shots - shots, (max_errors - errors) /
  p_hat)``. ``p_hat = (errors + 1) / (shots + 1)`` rather than ``errors / shots``: it is finite
  with zero errors, and close to ``errors / shots`` once there are a few errors. With zero errors
  it guesses the next shot fails, so a task that has seen no error yet gets a short (optimistic)
  ETA that grows as error-free shots pass, rather than the pessimistic ``max_shots`` one.
- A task's CPU time to go (:func:`task_eta`): shots still needed x its time per shot. While one
  of its batches runs, its ETA counts that down by the wall time since it last recorded a batch
  (``?`` once it is past it), so a line drawn later never repeats an old value.
- The sweep's ETA: the tasks' CPU times to go summed and divided by the number of workers, i.e.
  assuming the workers stay busy to the end; tasks not started yet have no time per shot, so the
  ETA is then printed as a lower bound (``ETA >= ...``). Not divided by a rate measured so far:
  until every task has two batches, the workers spend most of their time on what the rows do not
  count (building each task's circuit, model and decoder), so such a rate is far below the later
  one and made the estimate several times too high.
- The estimate of the whole sweep's wall time: the time elapsed when every task has recorded its
  second batch (start-up, numba compilation, decoder builds, first batches) plus the sweep's ETA
  then. It leaves out the speculative batches the sweep drops, decoder builds still to come and
  workers idle at the end, and counts CPU time, not the wall time of a machine shared with other
  work, so it is worded as an estimate (``benchmarks/README.md``, "Sweep time estimates",
  measures it). Each decoder's share is its tasks' :func:`task_cost`, / workers.

The other long commands (``bench``, ``tune``, ``learn-noise``) use :class:`ProgressBar` and
:class:`Stages`: a tqdm bar and stage lines on a terminal, and without a terminal one plain
line at most every :data:`LINE_INTERVAL` seconds (the first one only after that long, so a
quick command, or one that fails on bad input, prints only its result or its one-line error).
``train`` draws its bar in the trainers only on a terminal.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from typing import Iterable, Iterator

log = logging.getLogger("qdecode.cli")

#: Seconds between two plain progress lines when stderr is not a terminal (``bench``, ``tune``,
#: ``learn-noise``; ``sweep`` takes ``--progress-interval``). Looked up at run time, so tests can set it.
LINE_INTERVAL = 30.0


# ------------------------------------------------------------------ arithmetic (pure)
def shots_to_go(shots: int, errors: int, max_shots: int, max_errors: int) -> float:
    """Shots a task still needs under the stopping rule (0 once it holds); see the module docstring."""
    if shots >= max_shots or errors >= max_errors:
        return 0.0
    p_hat = (errors + 1) / (shots + 1)
    return min(max_shots - shots, (max_errors - errors) / p_hat)


def seconds_to_go(shots: int, errors: int, max_shots: int, max_errors: int, seconds: float) -> float | None:
    """A task's remaining time: :func:`shots_to_go` x ``seconds / shots``; None before its first shot."""
    to_go = shots_to_go(shots, errors, max_shots, max_errors)
    if to_go == 0:
        return 0.0
    if shots <= 0:
        return None
    return to_go * seconds / shots


def format_duration(seconds: float) -> str:
    """``0.4 s``, ``42 s``, ``4m05s``, ``3h12m``: short and unambiguous in a log line."""
    if not math.isfinite(seconds):
        return "?"
    if seconds < 9.95:
        return f"{max(0.0, seconds):.1f} s"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def format_per_shot(seconds: float, shots: int) -> str:
    """Time per shot in us, ms or s (``?`` before the first shot)."""
    if shots <= 0:
        return "?/shot"
    per = seconds / shots
    if per < 1e-3:
        return f"{per * 1e6:.3g} us/shot"
    if per < 1:
        return f"{per * 1e3:.3g} ms/shot"
    return f"{per:.3g} s/shot"


# ------------------------------------------------------------------ the sweep's numbers
def task_eta(st, opts, per_shot: float | None = None) -> float | None:
    """CPU seconds a :class:`~qdecode.sims.sweep.TaskProgress` still needs: :func:`shots_to_go` x
    ``per_shot`` (seconds per shot; default: its totals' ``seconds / shots``). 0 when it is done,
    None before its first shot."""
    if st.done(opts):
        return 0.0
    t = st.total
    if per_shot is None:
        return seconds_to_go(t.shots, t.errors, opts.max_shots, opts.max_errors, t.seconds)
    if t.shots <= 0:
        return None
    return shots_to_go(t.shots, t.errors, opts.max_shots, opts.max_errors) * per_shot


def sweep_eta(tasks, opts, workers: int, per_shot: dict[str, float] | None = None) -> tuple[float, int]:
    """(sum of the known task CPU times to go / workers, number of unfinished tasks whose time is unknown).

    ``per_shot``: strong_id -> a task's seconds per shot (tasks missing: their totals').
    """
    per_shot = per_shot or {}
    etas = [task_eta(st, opts, per_shot.get(st.compiled.strong_id)) for st in tasks]
    known = sum(e for e in etas if e is not None)
    return known / max(1, workers), sum(e is None for e in etas)


def task_cost(st, opts, per_shot: float | None = None) -> float:
    """A task's CPU seconds in this run: the shots recorded in this run at its totals' time per shot,
    plus the shots still needed at ``per_shot`` (default: the same)."""
    t = st.total
    if t.shots <= 0:
        return 0.0
    mean = t.seconds / t.shots
    to_go = 0.0 if st.done(opts) else shots_to_go(t.shots, t.errors, opts.max_shots, opts.max_errors)
    return (t.shots - st.shots_at_start) * mean + to_go * (mean if per_shot is None else per_shot)


def started(st, opts) -> bool:
    """A batch of the task was recorded in this run, or it needed none (done before the run)."""
    return st.next_to_record > 0 or st.finished(opts)


def decoder_names(tasks) -> dict[str, str]:
    """Decoder label -> what a status line calls it: the decoder's name, or its full label where
    another task runs the same decoder with other parameters."""
    labels_of: dict[str, set[str]] = {}
    for st in tasks:
        labels_of.setdefault(st.compiled.task.decoder.name, set()).add(st.label)
    return {label: (name if len(labels) == 1 else label) for name, labels in labels_of.items() for label in labels}


def display_labels(tasks) -> dict[str, str]:
    """strong_id -> a short task label: :func:`decoder_names`'s name and the metadata keys whose
    values differ between tasks (all keys if none do)."""
    names = decoder_names(tasks)
    metas = [st.compiled.json_metadata for st in tasks]
    keys = sorted({k for m in metas for k in m})
    varying = [k for k in keys if len({repr(m.get(k)) for m in metas}) > 1] or keys
    out = {}
    for st, meta in zip(tasks, metas):
        text = ",".join(f"{k}={_short(meta[k])}" for k in varying if k in meta)
        out[st.compiled.strong_id] = f"{names[st.label]} {text}".strip()
    return out


def _short(value) -> str:
    """A metadata value for a status line: floats with ``:g``, long text cut."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 16 else text[:13] + "..."


# ------------------------------------------------------------------ rate limit
def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (a live bar) rather than a pipe or a file (plain lines)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


class Ticker:
    """Allows one line per ``interval`` seconds: :meth:`due` is True at most that often.

    ``due_at_start``: the first call is due (the sweep's first batch); otherwise the first
    line comes ``interval`` seconds after the ticker was made.
    """

    def __init__(self, interval: float, *, due_at_start: bool):
        self.interval = interval
        self._last = -math.inf if due_at_start else time.monotonic()

    def due(self) -> bool:
        now = time.monotonic()
        if now - self._last < self.interval:
            return False
        self._last = now
        return True


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ sweep
class SweepProgress:
    """Callable progress sink for :func:`qdecode.sims.sweep.run_sweep` (see the module docstring).

    Args:
        num_tasks: tasks in the recipe (the bar's total until the first call says how many are distinct).
        quiet: no output at all.
        interval: seconds between two status tables (the first one is written at the first batch).
        lines: plain lines even on a terminal (``--progress-lines``).
    """

    def __init__(self, num_tasks: int, *, quiet: bool = False, interval: float = LINE_INTERVAL, lines: bool = False):
        self.mode = "off" if quiet else ("bar" if stderr_is_terminal() and not lines else "lines")
        self._t0 = time.monotonic()
        self._ticker = Ticker(interval, due_at_start=True)
        self._labels: dict[str, str] | None = None
        self._rows: dict[str, int] = {}  # strong_id -> rows (batches) recorded in this run
        self._latest: dict[str, tuple[int, float]] = {}  # strong_id -> (shots, seconds) of its latest batch
        self._recorded_at: dict[str, float] = {}  # strong_id -> monotonic time of its latest batch
        self._cpu = 0.0  # seconds of the rows recorded in this run (for the summary's utilisation)
        self._estimate: float | None = None
        self._last = None
        self._bar = None
        if self.mode == "bar":
            from tqdm import tqdm

            self._bar = tqdm(total=num_tasks, desc="tasks", unit="task", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, progress) -> None:
        if self.mode == "off":
            return
        if self._labels is None:
            self._labels = display_labels(progress.tasks)
        self._last = progress
        self._note_row(progress)
        if self._bar is not None:
            self._update_bar(progress)
        if self._ticker.due():
            self._emit(self.status_lines(progress))
        if self._estimate is None and all(self.measured(st, progress.options) for st in progress.tasks):
            self._emit(self.estimate_lines(progress))

    def _note_row(self, progress) -> None:
        """Note the row just recorded: its task's latest batch, the time, and the CPU seconds.

        Rows are reported one call each, in order, so a task's n-th call carries its n-th batch.
        """
        st, row = progress.last, getattr(progress, "row", None)
        if st is None or row is None:
            return
        now = time.monotonic()
        sid = st.compiled.strong_id
        self._rows[sid] = self._rows.get(sid, 0) + 1
        self._latest[sid] = (row.shots, row.seconds)
        self._recorded_at[sid] = now
        self._cpu += row.seconds

    def measured(self, st, opts) -> bool:
        """The task's time per shot is known free of its first batch: two batches recorded in this
        run, or nothing more to record (done, or finished before the run)."""
        return self._rows.get(st.compiled.strong_id, 0) >= 2 or st.done(opts)

    def per_shot(self, st) -> float | None:
        """Seconds per shot of the task's latest batch once it has recorded two in this run; None
        (use its totals) before."""
        sid = st.compiled.strong_id
        if self._rows.get(sid, 0) < 2 or self._latest[sid][0] <= 0:
            return None
        shots, seconds = self._latest[sid]
        return seconds / shots

    def _speeds(self, tasks) -> dict[str, float]:
        return {st.compiled.strong_id: v for st in tasks if (v := self.per_shot(st)) is not None}

    def _elapsed(self) -> float:
        return time.monotonic() - self._t0

    def _eta_text(self, progress) -> str:
        eta, unknown = sweep_eta(progress.tasks, progress.options, _workers(progress), self._speeds(progress.tasks))
        if unknown:
            return f"ETA >= {format_duration(eta)} ({_tasks(unknown)} not measured yet)"
        return f"ETA ~{format_duration(eta)}"

    def task_status(self, st, opts) -> str:
        """``ETA ~12 s`` while a batch of the task runs: its CPU time to go, less the wall time since
        its latest batch (``ETA ?`` once past it); ``queued, ~12 s CPU to go`` while none runs, so a
        line drawn later never shows an old ETA."""
        eta = task_eta(st, opts, self.per_shot(st))
        if eta is None:
            return "ETA ?"
        if not st.in_flight and not st.done(opts):
            return f"queued, ~{format_duration(eta)} CPU to go"
        left = eta - (time.monotonic() - self._recorded_at.get(st.compiled.strong_id, self._t0))
        return f"ETA ~{format_duration(left)}" if left > 0 or eta == 0 else "ETA ?"

    def _task_line(self, st, opts) -> str:
        t = st.total
        return (f"  {self._labels.get(st.compiled.strong_id, st.label)}: shots {t.shots}/{opts.max_shots}, "
                f"errors {t.errors}/{opts.max_errors}, {format_per_shot(t.seconds, t.shots)}, "
                f"{self.task_status(st, opts)}")

    def status_lines(self, progress) -> list[str]:
        """The status table: the sweep's line, then one per unfinished task with shots (this run's or
        a resumed file's), then how many have none yet."""
        opts = progress.options
        tasks = progress.tasks
        lines = [f"qdecode sweep: {progress.tasks_finished}/{len(tasks)} tasks done, "
                 f"{format_duration(self._elapsed())} elapsed, {_workers_text(_workers(progress))}, "
                 f"{self._eta_text(progress)}"]
        waiting = 0
        for st in tasks:
            if st.finished(opts):
                continue
            if st.total.shots == 0:  # nothing measured, from this run or a resumed file
                waiting += 1
            else:
                lines.append(self._task_line(st, opts))
        if waiting:
            lines.append(f"  {_tasks(waiting)} not started yet")
        return lines

    def estimate_lines(self, progress) -> list[str]:
        """The cost estimate (written once): per decoder, then the whole sweep."""
        opts, workers = progress.options, _workers(progress)
        speeds = self._speeds(progress.tasks)
        # what has elapsed (start-up, compilation, first batches) plus the work still to do
        to_go, _ = sweep_eta(progress.tasks, opts, workers, speeds)
        self._estimate = self._elapsed() + to_go
        names = decoder_names(progress.tasks)
        lines = ["qdecode sweep: cost estimate (a rough guide; the ETA lines refine it):"]
        for label in dict.fromkeys(st.label for st in progress.tasks):
            mine = [st for st in progress.tasks if st.label == label]
            latest = [self._latest[st.compiled.strong_id] for st in mine if st.compiled.strong_id in speeds]
            share = sum(task_cost(st, opts, speeds.get(st.compiled.strong_id)) for st in mine) / workers
            speed = (f"{format_per_shot(sum(x[1] for x in latest), sum(x[0] for x in latest))} on the latest "
                     f"batches ({_tasks(len(latest))})" if latest else "no batch timed in this run")
            lines.append(f"  {names[label]}: {speed}, about {format_duration(share)} of the sweep")
        lines.append(f"qdecode sweep: estimated sweep time ~{format_duration(self._estimate)} with "
                     f"{_workers_text(workers)}: {format_duration(self._elapsed())} elapsed + "
                     f"~{format_duration(to_go)} to go (CPU time per shot on each task's latest batch x the shots "
                     f"the stopping rule implies, / workers)")
        return lines

    def _update_bar(self, progress) -> None:
        st = progress.last
        task = "" if st is None else self._task_line(st, progress.options).strip()
        self._bar.total = len(progress.tasks)
        self._bar.n = progress.tasks_finished
        self._bar.set_postfix_str(f"{self._eta_text(progress)} | {task}"[:120], refresh=False)
        self._bar.refresh()

    def _emit(self, lines: list[str]) -> None:
        for line in lines:
            if self._bar is not None:
                self._bar.write(line, file=sys.stderr)
            else:
                _say(line)

    def summary_line(self) -> str | None:
        """The last line: tasks done, wall time, the estimate, and how busy the workers were
        (recorded CPU time / (wall time x workers): far below 100 % on a machine shared with other
        work, which the estimate cannot foresee). None if nothing ran."""
        if self._last is None:
            return None
        p, elapsed = self._last, self._elapsed()
        text = f"qdecode sweep: progress: {p.tasks_finished}/{len(p.tasks)} tasks done in {format_duration(elapsed)}"
        if self._estimate is not None:
            text += f" (estimated ~{format_duration(self._estimate)})"
        if elapsed > 0:
            text += f"; workers busy {100 * self._cpu / (elapsed * _workers(p)):.0f}% of the time"
        return text

    def close(self) -> None:
        if self.mode == "off":
            return
        if self._bar is not None and self._last is not None:
            self._bar.n = self._last.tasks_finished
            self._bar.refresh()
        line = self.summary_line()
        if line is not None:
            self._emit([line])
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _tasks(n: int) -> str:
    return f"{n} task" if n == 1 else f"{n} tasks"


def _workers_text(n: int) -> str:
    return "1 worker" if n == 1 else f"{n} workers"


def _workers(progress) -> int:
    return max(1, int(getattr(progress, "workers", 1)))


# ------------------------------------------------------------------ bench, tune, learn-noise
def progress_enabled(quiet: bool = False) -> bool:
    """Whether to draw a live bar: stderr is a terminal and ``--quiet`` was not given."""
    return not quiet and stderr_is_terminal()


class ProgressBar:
    """A tqdm bar on stderr when :func:`progress_enabled`; without a terminal, a plain line
    (count, elapsed, ETA) at most every :data:`LINE_INTERVAL` seconds; nothing with ``quiet``.

    Args:
        total: expected count (``None``: unknown, tqdm shows a counter).
        desc, unit: tqdm's label and unit.
        quiet: ``--quiet`` (no output).
    """

    def __init__(self, total: int | None = None, *, desc: str, unit: str = "it", quiet: bool = False):
        self.enabled = progress_enabled(quiet)
        self.total, self.desc, self.unit = total, desc, unit
        self._count = 0
        self._t0 = time.monotonic()
        self._ticker = None if quiet or self.enabled else Ticker(LINE_INTERVAL, due_at_start=False)
        self._bar = None
        if self.enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)

    def update(self, n: int = 1) -> None:
        self._count += n
        if self._bar is not None:
            self._bar.update(n)
        elif self._ticker is not None and self._ticker.due():
            _say(self.line())

    def line(self) -> str:
        """``qdecode learn-noise: 3000/12000 shot, 12 s elapsed, ETA ~36 s``."""
        elapsed = time.monotonic() - self._t0
        text = f"qdecode {self.desc}: {self._count}"
        if self.total:
            text += f"/{self.total}"
        text += f" {self.unit}, {format_duration(elapsed)} elapsed"
        if self.total and 0 < self._count < self.total:
            text += f", ETA ~{format_duration(elapsed * (self.total - self._count) / self._count)}"
        return text

    def set_postfix(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(text[:100])

    def write(self, line: str) -> None:
        """A status line above the bar; only on a terminal (the plain lines carry the count instead)."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)

    def wrap(self, items: Iterable, size=len) -> Iterator:
        """Yield ``items``, advancing the bar by ``size(item)`` after each one."""
        for item in items:
            yield item
            self.update(int(size(item)))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Stages:
    """The named steps of a command.

    On a terminal, ``with stages.step("sampling 1000 shots"):`` prints ``qdecode bench: sampling
    1000 shots ...`` when the step starts and ``done in 0.31 s`` when it ends. Without a terminal,
    a step that ends prints ``qdecode bench: sampling 1000 shots: done in 0.31 s`` if the last such
    line is at least :data:`LINE_INTERVAL` seconds old (the first: that long after the start), so a
    quick command prints nothing and a failing step leaves its one-line error alone. ``quiet``:
    nothing.
    """

    def __init__(self, command: str, *, quiet: bool = False):
        self.command = command
        self.enabled = progress_enabled(quiet)
        self._ticker = None if quiet or self.enabled else Ticker(LINE_INTERVAL, due_at_start=False)

    def note(self, text: str) -> None:
        if self.enabled or (self._ticker is not None and self._ticker.due()):
            _say(f"qdecode {self.command}: {text}")

    @contextlib.contextmanager
    def step(self, text: str) -> Iterator[None]:
        if not self.enabled:
            t0 = time.perf_counter()
            yield
            if self._ticker is not None and self._ticker.due():
                _say(f"qdecode {self.command}: {text}: done in {time.perf_counter() - t0:.2f} s")
            return
        print(f"qdecode {self.command}: {text} ...", end="", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            yield
        except BaseException:
            print(" failed", file=sys.stderr, flush=True)
            raise
        print(f" done in {time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)
