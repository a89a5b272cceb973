"""Where batches run: a local process pool or a Dask cluster, behind one interface.

Both return ``concurrent.futures.Future`` objects from ``submit``, so the sweep
driver waits on them with :func:`concurrent.futures.wait` whatever the backend.

* :class:`LocalExecutor`: ``ProcessPoolExecutor`` with ``workers`` processes
  (``workers=0`` runs batches inline in this process, for debugging and tests).
  Workers exit when the sweep's process dies, however it dies (``kill -9``
  included): each runs a watchdog thread that polls the parent's pid.
* :class:`DaskExecutor`: ``distributed.Client(address)`` for an existing
  scheduler, or a ``LocalCluster`` of ``n_workers`` single-threaded workers.
  Batches are idempotent, so the scheduler's rescheduling of work lost with a
  dead worker is all the fault tolerance needed.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import time
from typing import Any, Callable

from qdecode.errors import InputError, MissingPackageError


class SweepExecutor:
    """Minimal executor interface used by :func:`qdecode.sims.sweep.run_sweep`."""

    num_workers: int = 1

    def submit(self, fn: Callable[..., Any], *args: Any) -> cf.Future:
        raise NotImplementedError

    def shutdown(self, cancel: bool = False) -> None:
        pass

    def __enter__(self) -> "SweepExecutor":
        return self

    def __exit__(self, exc_type, *rest: object) -> None:
        self.shutdown(cancel=exc_type is not None)


class InlineExecutor(SweepExecutor):
    """Runs each batch synchronously in the calling process."""

    num_workers = 1

    def submit(self, fn, *args):
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future
            fut.set_exception(exc)
        return fut


# How often a worker checks that the sweep's process is still alive (seconds).
PARENT_POLL_SECONDS = 0.5


def _parent_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process with that pid exists (not ours: the pid was reused)
        return False
    return True


def _watch_parent(pid: int) -> None:
    """Worker initializer: exit this worker as soon as process ``pid`` is gone.

    A ``kill -9`` of the sweep gives the pool no chance to stop its workers, and a worker
    of a ``forkserver`` pool is not even the sweep's child, so neither the pool nor
    ``PR_SET_PDEATHSIG`` can catch it; a daemon thread polling the pid does. A worker
    inside a kernel that holds the GIL exits when the kernel returns.
    """
    import threading

    def watch() -> None:
        while _parent_alive(pid):
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="qdecode-parent-watchdog", daemon=True).start()


def _init_worker(pid: int, log_level: int) -> None:
    """Worker initializer: :func:`_watch_parent`, and the sweep's ``qdecode`` log level, so that a
    worker's warnings (an OSD order clamped at build time) follow ``--quiet`` as the sweep's own do."""
    logging.getLogger("qdecode").setLevel(log_level)
    _watch_parent(pid)


class LocalExecutor(SweepExecutor):
    """A pool of worker processes on this machine.

    Uses the ``forkserver`` start method on Linux (fork-safe with threaded
    libraries, and cheap after the first worker) and ``spawn`` elsewhere.
    """

    def __init__(self, workers: int | None = None):
        self.num_workers = max(1, workers or os.cpu_count() or 1)
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        self._pool = cf.ProcessPoolExecutor(max_workers=self.num_workers,
                                            mp_context=multiprocessing.get_context(method),
                                            initializer=_init_worker,
                                            initargs=(os.getpid(), logging.getLogger("qdecode").getEffectiveLevel()))

    def submit(self, fn, *args):
        return self._pool.submit(fn, *args)

    def shutdown(self, cancel: bool = False) -> None:
        self._pool.shutdown(wait=True, cancel_futures=cancel)


def _quiet_worker_shutdown() -> None:
    """Run on each Dask worker before a quiet LocalCluster closes: only CRITICAL logs remain."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


class DaskExecutor(SweepExecutor):
    """A Dask distributed cluster: an existing scheduler, or a LocalCluster.

    Args:
        scheduler: address of a running scheduler (``tcp://host:8786``); when None a
            ``LocalCluster`` with ``n_workers`` single-threaded worker processes is started.
        n_workers: LocalCluster size (ignored with ``scheduler``).
        processes: LocalCluster worker processes (True) or threads in this process.
    """

    def __init__(self, scheduler: str | None = None, *, n_workers: int = 2, processes: bool = True):
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise MissingPackageError("Dask sweeps need the 'dist' extra: pip install 'qdecode[dist]'") from exc
        self._cluster = None
        self._quiet = False
        if scheduler:
            self._client = Client(scheduler)
        else:
            # Dask logs its start-up and shut-down at INFO (dozens of lines); keep them for -v.
            quiet = self._quiet = logging.getLogger("qdecode").getEffectiveLevel() > logging.DEBUG
            if quiet:
                for name in ("distributed", "dask"):
                    logging.getLogger(name).setLevel(logging.WARNING)
            self._cluster = LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=processes, dashboard_address=None,
                silence_logs=logging.WARNING if quiet else logging.INFO,
            )
            self._client = Client(self._cluster)
        self._executor = self._client.get_executor(pure=False)
        info = self._client.scheduler_info()
        self.num_workers = max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))

    def submit(self, fn, *args):
        return self._executor.submit(fn, *args)

    def shutdown(self, cancel: bool = False) -> None:
        try:
            self._executor.shutdown(wait=not cancel)
            if self._quiet and self._cluster is not None:
                # A worker's heartbeat can race its own shut-down and log an ERROR ("Failed to
                # communicate with scheduler during heartbeat") that no result depends on; task
                # errors reach the sweep through the futures, not through worker logs.
                self._client.run(_quiet_worker_shutdown)
        finally:
            self._client.close()
            if self._cluster is not None:
                self._cluster.close()


def make_executor(
    *, workers: int | None = None, dask_workers: int | None = None, scheduler: str | None = None
) -> SweepExecutor:
    """Executor for the CLI flags ``--workers`` / ``--dask-workers`` / ``--scheduler``."""
    if scheduler and dask_workers:
        raise InputError("give either --scheduler or --dask-workers, not both")
    if scheduler or dask_workers:
        return DaskExecutor(scheduler, n_workers=dask_workers or 2)
    if workers == 0:
        return InlineExecutor()
    return LocalExecutor(workers)
