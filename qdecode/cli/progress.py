"""Progress rendering for long commands: tqdm bars and status lines on stderr.

The library never prints; it calls a progress callback. The CLI turns those calls
into one tqdm bar per sweep (tasks finished) with a sinter-style status postfix when
stderr is a terminal and ``--quiet`` is not given. Without a terminal it prints nothing,
unless asked for status lines (``qdecode sweep --progress-lines``, for batch-job logs): then
one line at most every ``interval`` seconds (:class:`SweepProgress`).

The other long commands (``bench``, ``tune``, ``learn-noise``, ``train``) use
:class:`ProgressBar` and :class:`Stages`, which draw **only** when stderr is a terminal
and ``--quiet`` is not given: in a pipe, a log file or a test they print nothing, and they
never write to stdout, so a command's stdout is the same with and without progress.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from typing import Iterable, Iterator

log = logging.getLogger("qdecode.cli")


class SweepProgress:
    """Callable progress sink for :func:`qdecode.sims.sweep.run_sweep`."""

    def __init__(self, num_tasks: int, *, quiet: bool = False, interval: float = 10.0, lines: bool = False):
        self._tty = sys.stderr.isatty() and not quiet and not lines
        self._lines = lines and not quiet
        self._interval = interval
        self._last_log = time.monotonic()
        self._bar = None
        if self._tty:
            from tqdm import tqdm

            self._bar = tqdm(total=num_tasks, desc="tasks", unit="task", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, progress) -> None:
        st = progress.last
        opts = progress.options
        status = ""
        if st is not None:
            meta = ",".join(f"{k}={v}" for k, v in sorted(st.compiled.json_metadata.items()))
            status = (
                f"{st.label} {meta} shots={st.total.shots}/{opts.max_shots} "
                f"errors={st.total.errors}/{opts.max_errors}"
            )
        finished = progress.tasks_finished
        if self._bar is not None:
            self._bar.n = finished
            self._bar.set_postfix_str(status[:100], refresh=False)
            self._bar.refresh()
        elif self._lines and time.monotonic() - self._last_log >= self._interval:
            self._last_log = time.monotonic()
            print(f"qdecode: {finished}/{len(progress.tasks)} tasks done; {status}", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def progress_enabled(quiet: bool = False) -> bool:
    """Whether to draw progress: stderr is a terminal and ``--quiet`` was not given."""
    isatty = getattr(sys.stderr, "isatty", None)
    return not quiet and bool(isatty and isatty())


class ProgressBar:
    """A tqdm bar on stderr when :func:`progress_enabled`, otherwise a no-op with the same methods.

    Args:
        total: expected count (``None``: unknown, tqdm shows a counter).
        desc, unit: tqdm's label and unit.
        quiet: ``--quiet`` (no bar).
    """

    def __init__(self, total: int | None = None, *, desc: str, unit: str = "it", quiet: bool = False):
        self.enabled = progress_enabled(quiet)
        self._bar = None
        if self.enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def set_postfix(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(text[:100])

    def write(self, line: str) -> None:
        """A status line above the bar (nothing when progress is off)."""
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
    """The named steps of a command, one status line each on a terminal.

    ``with stages.step("sampling 1000 shots"):`` prints ``qdecode bench: sampling 1000 shots ...``
    when the step starts and ``done in 0.31 s`` when it ends; nothing when progress is off.
    """

    def __init__(self, command: str, *, quiet: bool = False):
        self.command = command
        self.enabled = progress_enabled(quiet)

    def note(self, text: str) -> None:
        if self.enabled:
            print(f"qdecode {self.command}: {text}", file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def step(self, text: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        print(f"qdecode {self.command}: {text} ...", end="", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            yield
        except BaseException:
            print(" failed", file=sys.stderr, flush=True)
            raise
        print(f" done in {time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)
