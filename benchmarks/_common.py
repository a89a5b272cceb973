"""What the timing scripts share: lscpu look-ups, the load average, thread-CPU timing, the abort rule of the
post-selection scripts, and the result files of ``benchmarks/results/`` (:func:`write_result`).

Imported as ``_common`` by the scripts of this folder (run as ``python benchmarks/NAME.py``, so
this folder is on ``sys.path``).
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import subprocess
import sys
import time

import numpy as np

WALL_CPU = [0.0, 0.0]  # wall and CPU seconds of every timing: their ratio shows the time lost to other load


def lscpu_value(key: str) -> str:
    """The value of ``key`` (e.g. ``"Model name"``) in ``lscpu``'s output, ``"?"`` if it cannot say."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    for line in out.splitlines():
        if line.split(":")[0].strip() == key:
            return line.split(":", 1)[1].strip()
    return "?"


def cache_sizes() -> dict[str, int]:
    """Per-instance (per-core for L1/L2 here) cache sizes in bytes (``lscpu -B -C``), with defaults
    if lscpu cannot say."""
    sizes = {"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20}
    try:
        out = subprocess.run(["lscpu", "-B", "-C=NAME,ONE-SIZE"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines()[1:]:
            parts = line.split()
            if len(parts) == 2 and parts[0] in sizes and parts[1].isdigit():
                sizes[parts[0]] = int(parts[1])
    except (OSError, subprocess.CalledProcessError):
        pass
    return sizes


def load() -> str:
    """The 1 / 5 / 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(fn):
    """``(CPU seconds of this thread, fn())``: the kernels run on the calling thread (one thread), so
    time slices taken by other processes on a shared machine do not count; adds to :data:`WALL_CPU`."""
    w0, c0 = time.perf_counter(), time.thread_time()
    r = fn()
    c, w = time.thread_time() - c0, time.perf_counter() - w0
    WALL_CPU[0] += w
    WALL_CPU[1] += c
    return c, r


def kept_after_abort(conf: np.ndarray, target: float) -> np.ndarray:
    """bool ``(S,)``: the shots kept when at most ``target`` of them are aborted, lowest confidence first.

    ``nan`` (the decoder cannot tell) ranks below every number; shots of equal confidence are kept or
    aborted together, so the abort rate reached is at or below ``target``.
    """
    S = len(conf)
    key = np.where(np.isnan(conf), -np.inf, np.asarray(conf, dtype=np.float64))
    order = np.argsort(key, kind="stable")
    sk = key[order]
    c = int(np.floor(target * S + 1e-9))
    while 0 < c < S and sk[c - 1] == sk[c]:  # never split a tie
        c -= 1
    kept = np.ones(S, dtype=bool)
    kept[order[:c]] = False
    return kept


def run_info() -> dict:
    """Where and when a result was measured: the command, UTC time, commit, CPU and load average."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "?"
    except OSError:
        commit = "?"
    argv = [os.path.relpath(os.path.abspath(sys.argv[0]), os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
    return {"command": "python " + " ".join(shlex.quote(a) for a in argv + sys.argv[1:]),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": commit, "cpu": lscpu_value("Model name"), "load": load()}


def write_result(path: str | None, data: dict) -> None:
    """Write ``data`` (plus :func:`run_info` under ``"run"``) as the JSON result file ``path`` (none: nothing)."""
    if not path:
        return
    with open(path, "w") as f:
        json.dump({"run": run_info(), **data}, f, indent=1)
        f.write("\n")
    print(f"# wrote {path}", file=sys.stderr)


def merge_result(path: str | None, key: str, data: dict) -> None:
    """Put ``data`` (plus :func:`run_info`) under ``entries[key]`` of the result file ``path``, keeping the
    other entries (one file for several runs of a script, e.g. one per problem); none: nothing."""
    if not path:
        return
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    entries = old.get("entries", {})
    entries[key] = {"run": run_info(), **data}
    with open(path, "w") as f:
        json.dump({"entries": dict(sorted(entries.items()))}, f, indent=1)
        f.write("\n")
    print(f"# wrote {key} to {path}", file=sys.stderr)
