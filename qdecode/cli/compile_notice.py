"""Say on stderr when numba is compiling, so that a first run is not a silent minute.

qdecode's kernels are compiled by numba on first use and kept in the compile cache
(:mod:`qdecode.compile_cache`); later runs load them in about a second. With an empty cache (a new
install, a new numba, an edited kernel) the first call of a decoder compiles its kernels, tens of
seconds for the BP+OSD family on one core. Without a word, that cannot be told from a hang.

:func:`compile_notice` listens to numba's ``numba:compile`` event, which numba raises only on a
cache miss (a kernel loaded from the cache raises none), and writes:

- one line when the first kernel starts compiling, naming the cache directory;
- a line every ``every_s`` seconds while compiling goes on, with the time so far;
- one line at the end with the number of kernels compiled and the time it took.

A run with a warm cache prints nothing. Compiling happens in the process that decodes, so the
commands that decode in this process (``predict``, ``bench``, ``stream``, ``warmup``) wrap their
decoding in it; a sweep's workers compile in their own processes (``qdecode warmup`` fills the
cache beforehand).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Callable, Iterator

#: Seconds between the "still compiling" lines.
EVERY_S = 10.0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class CompileWatch:
    """Counts numba's top-level compilations and their time; a ``numba.core.event.Listener``'s
    ``on_start`` / ``on_end`` pair (nested compilations of callees count inside their caller)."""

    def __init__(self, what: str, say: Callable[[str], None], clock: Callable[[], float] = time.perf_counter):
        self.what = what
        self.say = say
        self.clock = clock
        self.depth = 0
        self.kernels = 0  # top-level compilations finished
        self.seconds = 0.0  # time inside top-level compilations
        self.started_at: float | None = None  # start of the running top-level compilation
        self.first_at: float | None = None  # start of the first one
        self.lock = threading.Lock()

    def on_start(self, event) -> None:
        with self.lock:
            self.depth += 1
            if self.depth > 1:
                return
            now = self.clock()
            self.started_at = now
            if self.first_at is None:
                self.first_at = now
                from qdecode import compile_cache

                where = compile_cache.active if compile_cache.active is not None else "numba's default location"
                self.say(f"qdecode: compiling {self.what}'s kernels (first use with this compile cache; "
                         f"once, then loaded from {where})")

    def on_end(self, event) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.started_at is not None:
                self.seconds += self.clock() - self.started_at
                self.kernels += 1
                self.started_at = None

    def tick(self) -> None:
        """Say how long compiling has taken so far, if it is going on."""
        with self.lock:
            if self.first_at is not None and self.started_at is not None:
                self.say(f"qdecode: still compiling ({self.clock() - self.first_at:.0f} s so far)")

    def summary(self) -> str | None:
        """The closing line, or None when nothing was compiled."""
        if self.kernels == 0:
            return None
        return (f"qdecode: compiled {self.kernels} kernel{'s' if self.kernels != 1 else ''} for {self.what} "
                f"in {self.seconds:.1f} s; later runs load them from the cache")


@contextlib.contextmanager
def compile_notice(what: str, *, quiet: bool = False, say: Callable[[str], None] = _say,
                   every_s: float = EVERY_S) -> Iterator[CompileWatch | None]:
    """Report numba compiling (cache misses) on stderr while the block runs (module docstring).

    ``what`` names what is being compiled (a decoder's label). ``quiet`` turns it off (yields None).
    Yields the :class:`CompileWatch`, whose ``kernels`` and ``seconds`` say what happened.
    """
    if quiet:
        yield None
        return
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev) -> None:
            watch.on_start(ev)

        def on_end(self, ev) -> None:
            watch.on_end(ev)

    watch = CompileWatch(what, say)
    stop = threading.Event()

    def ticker() -> None:
        while not stop.wait(every_s):
            watch.tick()

    thread = threading.Thread(target=ticker, name="qdecode-compile-notice", daemon=True)
    thread.start()
    try:
        with event.install_listener("numba:compile", _Listener()):
            yield watch
    finally:
        stop.set()
        thread.join()
        line = watch.summary()
        if line is not None:
            say(line)
