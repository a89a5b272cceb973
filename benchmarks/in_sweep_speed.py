"""Decoder speed inside a sweep against the decoder's own large-batch speed (issue 43).

For each registered syndrome decoder on stim's colour code (``color_code:memory_xyz``, d = 5,
rounds = 5, all four noise knobs at p = 0.002; the frontier's ``color-xyz-d5``) it measures, in
one process and on one thread:

* ``own``: CPU time per shot of one 2,048-shot ``predict_observables_packed`` call (after a
  warm-up call, the median of ``--repeats`` calls on the same shots);
* ``sweep``: CPU time per shot inside ``run_sweep`` with the inline executor (the rows'
  ``seconds`` / ``shots``: sampling, decoding and counting), seed 1, ``max_shots`` shots and
  no error stop, twice: ``before`` with one decoder call per chunk (``CALL_SHOTS = 1``: the
  chunking before issue 43, 32-512 shots per call on this schedule) and ``after`` with the
  sweep's calls of up to ``CALL_SHOTS`` shots (:mod:`qdecode.sims.sampling`).

Both sweeps record the same shots and errors (each shot is decoded independently of its call);
the script checks it. Threads: ``NUMBA_NUM_THREADS=1`` (and one BLAS / OpenMP thread) is set
before anything imports numba, so the CPU times are one core's. ``auto`` is skipped (it
resolves to one of the others) and so is ``mle`` (``SLOW``); decoders that cannot be built for
this circuit are listed with the reason.

Usage::

    python benchmarks/in_sweep_speed.py [--max-shots 8192] [--repeats 3] [--decoders a,b,...] \\
        [--json benchmarks/results/in_sweep_speed.json]
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numba / numpy load: one core's CPU time

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import stim  # noqa: E402
from _common import load, lscpu_value  # noqa: E402

from qdecode.decoders.registry import decoder_names, get_entry  # noqa: E402
from qdecode.sims import sampling  # noqa: E402
from qdecode.sims.executors import InlineExecutor  # noqa: E402
from qdecode.sims.recipe import parse_recipe  # noqa: E402
from qdecode.sims.sweep import SweepOptions, run_sweep  # noqa: E402

OWN_SHOTS = 2048
EXTRA = ["relay-bp[stop_after=10]"]  # the measured configuration, beside the defaults
# left out by default (name them in --decoders to measure them anyway)
SLOW = {"mle": "one mixed-integer program per distinct syndrome: nothing to batch, minutes per 8,192 shots"}


def circuit() -> stim.Circuit:
    p = 0.002
    return stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=5, after_clifford_depolarization=p,
                                  before_round_data_depolarization=p, before_measure_flip_probability=p,
                                  after_reset_flip_probability=p)


def own_ms(task, repeats: int) -> float:
    """Median CPU ms per shot of one 2,048-shot packed call (the sweep's own compiled decoder)."""
    ct, _ = sampling.compiled(task)
    dets, _ = circuit().compile_detector_sampler(seed=2026).sample(OWN_SHOTS, separate_observables=True,
                                                                  bit_packed=True)
    ct.decoder.predict_observables_packed(dets)  # warm-up: kernels compiled, scratch allocated
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        ct.decoder.predict_observables_packed(dets)
        times.append(time.process_time() - t0)
    return 1e3 * statistics.median(times) / OWN_SHOTS


def sweep_ms(task, max_shots: int, call_shots: int) -> tuple[float, int, int]:
    """(CPU ms per shot, shots, errors) of one inline sweep with decoder calls of up to ``call_shots``."""
    sampling.CALL_SHOTS = call_shots
    try:
        (row,) = run_sweep([task], out_path=None, executor=InlineExecutor(),
                           options=SweepOptions(max_shots=max_shots, max_errors=10**9, seed=1))
    finally:
        sampling.CALL_SHOTS = CALL_SHOTS
    return 1e3 * row.seconds / row.shots, row.shots, row.errors


CALL_SHOTS = sampling.CALL_SHOTS


def versions() -> dict[str, str]:
    import numba

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "sims/sampling.py"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev, dirty = "?", ""
    return {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
            "stim": stim.__version__, "qdecode_commit": rev + (" (sims/sampling.py modified)" if dirty else "")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-shots", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--decoders", default=None, help="comma-separated names (default: every syndrome decoder)")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    names = args.decoders.split(",") if args.decoders else \
        [n for n in decoder_names() if get_entry(n).kind == "quantum" and n != "auto" and n not in SLOW] + EXTRA
    rows, skipped = [], {"auto": "resolves to one of the decoders measured here", **SLOW} if not args.decoders else {}
    print(f"# colour d=5 r=5 p=0.002, max_shots {args.max_shots}, one thread, load {load()}")
    print("| decoder | own 2,048-shot call (ms/shot) | in sweep before | in sweep after | before / own | after / own |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        file = os.path.join(folder, "d=5,p=0.002,r=5.stim")
        circuit().to_file(file)
        for name in names:
            try:
                (task,) = parse_recipe({"tasks": [{"circuit": file, "decoders": [name]}]}).tasks
                own = own_ms(task, args.repeats)
            except (ImportError, ValueError, FileNotFoundError) as exc:
                skipped[name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
                print(f"# skipped {name}: {skipped[name]}", flush=True)
                continue
            before, shots, errors_before = sweep_ms(task, args.max_shots, 1)
            after, shots_after, errors_after = sweep_ms(task, args.max_shots, CALL_SHOTS)
            if (shots, errors_before) != (shots_after, errors_after):
                raise AssertionError(f"{name}: before recorded {shots} / {errors_before}, after "
                                     f"{shots_after} / {errors_after}")
            rows.append({"decoder": name, "own_2048_ms_per_shot": own, "sweep_before_ms_per_shot": before,
                         "sweep_after_ms_per_shot": after, "before_over_own": before / own,
                         "after_over_own": after / own, "shots": shots, "errors": errors_after})
            print(f"| `{name}` | {own:.3g} | {before:.3g} | {after:.3g} | {before / own:.2f} | {after / own:.2f} |",
                  flush=True)
    if args.json:
        out = {"command": "NUMBA_NUM_THREADS=1 python " + " ".join(sys.argv),
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": {"cpu": lscpu_value("Model name"), "cores": os.cpu_count(), "load_at_end": load()},
               "versions": versions(), "threads": 1, "problem": "stim color_code:memory_xyz d=5 r=5 p=0.002",
               "max_shots": args.max_shots, "call_shots": CALL_SHOTS, "own_shots": OWN_SHOTS,
               "rows": rows, "skipped": skipped}
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
