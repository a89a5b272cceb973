"""Run a GIL-releasing (``nogil``) range kernel over shot ranges on several threads.

numba's ``parallel=True`` lowering of a ``prange`` that calls these kernels could not be
cached to disk ("dynamic globals"), so every worker process paid the compile again. A
small thread pool over contiguous shot ranges gives the same parallelism with cached
kernels: each thread calls ``kernel(*args, start, stop)`` on its own range, and the
kernels write disjoint rows of the caller's output arrays.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading

import numba

_pool: cf.ThreadPoolExecutor | None = None
_lock = threading.Lock()


def num_threads() -> int:
    """Threads to use: numba's setting (``NUMBA_NUM_THREADS`` / ``numba.set_num_threads``)."""
    return max(1, int(numba.get_num_threads()))


def shared_executor() -> cf.ThreadPoolExecutor:
    """The process-wide thread pool (one worker per CPU, created on first use) that :func:`run_ranges` and
    GDG's work-sharing loop (:mod:`qdecode.kernels.gdg`) submit range kernels to."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = cf.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="qdecode")
        return _pool


def run_ranges(kernel, args: tuple, total: int, threads: int | None = None) -> None:
    """Call ``kernel(*args, start, stop)`` over ``[0, total)`` split into contiguous ranges."""
    t = min(total, threads or num_threads())
    if t <= 1:
        if total:
            kernel(*args, 0, total)
        return
    bounds = [(k * total // t, (k + 1) * total // t) for k in range(t)]
    futures = [shared_executor().submit(kernel, *args, a, b) for a, b in bounds]
    for f in futures:
        f.result()


def run_dynamic(kernel, args: tuple, total: int, threads: int | None) -> None:
    """``kernel(*args, a, b)`` over ``[0, total)`` in small chunks pulled by ``threads`` workers.

    For decoders whose per-shot cost is heavy tailed (a Relay-BP shot that never converges runs
    every leg; a GDG shot that BP cannot solve explores its guessing tree), equal contiguous
    ranges per thread leave threads idle; workers instead take the next chunk
    of a few shots from a shared counter. Which thread decodes a shot never changes its result.
    """
    t = min(total, threads or num_threads())
    if t <= 1:
        if total:
            kernel(*args, 0, total)
        return
    chunk = max(1, min(16, total // (8 * t)))
    lock = threading.Lock()
    state = [0]

    def worker(_start: int, _stop: int) -> None:
        while True:
            with lock:
                a = state[0]
                state[0] = a + chunk
            if a >= total:
                return
            kernel(*args, a, min(total, a + chunk))

    run_ranges(worker, (), t, t)
