"""Progress rendering for long commands: tqdm bars on stderr, line logs when not a TTY.

The library never prints; it calls a progress callback. The CLI turns those calls
into one tqdm bar per sweep (tasks finished) with a sinter-style status postfix, or,
when stderr is not a terminal (CI, Slurm logs) or ``--quiet`` is given, into a
status log line at most every ``interval`` seconds.
"""

from __future__ import annotations

import logging
import sys
import time

log = logging.getLogger("qdecode.cli")


class SweepProgress:
    """Callable progress sink for :func:`qdecode.sims.sweep.run_sweep`."""

    def __init__(self, num_tasks: int, *, quiet: bool = False, interval: float = 10.0):
        self._tty = sys.stderr.isatty() and not quiet
        self._quiet = quiet
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
        elif not self._quiet and time.monotonic() - self._last_log >= self._interval:
            self._last_log = time.monotonic()
            print(f"qdecode: {finished}/{len(progress.tasks)} tasks done; {status}", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
