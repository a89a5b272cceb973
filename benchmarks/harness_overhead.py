"""Harness throughput: qdecode's sweep vs ``sinter collect`` on the same task.

Same circuit (rotated surface code memory-Z, SD6 uniform depolarizing noise,
rounds = d), same decoder (PyMatching), same shot count, same number of worker
processes. Each run measures both tools back to back and reports the ratio of
throughputs in shots per wall-clock second of the whole collection call
(process start-up, sampling, decoding, bookkeeping, CSV writing), and in shots
per CPU-second as each tool itself accounts it (the CSV ``seconds`` column).
The table reports the median ratio over ``--repeats`` runs.

``--path circuit`` measures the bring-your-own-experiment path instead: the circuit is
written to a file named ``d=5,p=0.005,r=5.stim`` and qdecode reads it as ``qdecode sweep
--circuit FILE`` does (recipe key ``circuit``, metadata from the file name); sinter gets the
same circuit and metadata.

Usage::

    python benchmarks/harness_overhead.py [--d 5] [--p 0.005] [--shots 1000000] [--workers 1] [--repeats 3] \
        [--path catalogue|circuit] [--json benchmarks/results/harness_overhead.json]

``--json`` keeps one entry per (path, workers) in the result file.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time

import sinter
import stim
from _common import merge_result

from qdecode.decoders import DecoderSpec
from qdecode.sims.executors import LocalExecutor
from qdecode.sims.stats import fit_binomial
from qdecode.sims.sweep import SweepOptions, run_sweep
from qdecode.sims.tasks import CircuitRecipe, SweepTask


def circuit_for(d: int, p: float) -> stim.Circuit:
    return stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=d, rounds=d,
        after_clifford_depolarization=p, before_round_data_depolarization=p,
        before_measure_flip_probability=p, after_reset_flip_probability=p,
    )


def qdecode_task(d: int, p: float, path: str, folder: str) -> SweepTask:
    """The catalogue task (qdecode's sd6 circuit is stim's generated one, tested equal) or the file task."""
    if path == "catalogue":
        return SweepTask(decoder=DecoderSpec.create("pymatching"),
                    recipe=CircuitRecipe(code="surface", noise="sd6", p=p, d=d))
    from qdecode.sims.recipe import parse_recipe

    file = os.path.join(folder, f"d={d},p={p},r={d}.stim")
    circuit_for(d, p).to_file(file)
    (task,) = parse_recipe({"tasks": [{"circuit": file, "decoders": ["pymatching"]}]}).tasks
    return task


def run_qdecode(task: SweepTask, shots: int, workers: int, seed: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with LocalExecutor(workers) as ex:
            (row,) = run_sweep(
                [task], out_path=os.path.join(tmp, "s.csv"),
                options=SweepOptions(max_shots=shots, max_errors=10**12, seed=seed), executor=ex,
            )
        wall = time.perf_counter() - t0
    return wall, row.seconds, row.errors


def run_sinter(circuit: stim.Circuit, shots: int, workers: int, metadata=None) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        (stat,) = sinter.collect(
            num_workers=workers, tasks=[sinter.Task(circuit=circuit, json_metadata=metadata)], decoders=["pymatching"],
            max_shots=shots, max_errors=10**12, save_resume_filepath=os.path.join(tmp, "s.csv"),
        )
        wall = time.perf_counter() - t0
    return wall, stat.seconds, stat.errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--p", type=float, default=0.005)
    ap.add_argument("--shots", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--path", choices=["catalogue", "circuit"], default="catalogue",
                    help="qdecode's catalogue circuit, or a circuit file read as `sweep --circuit` does")
    ap.add_argument("--json", metavar="FILE", help="also write the runs to this result file (one entry per path and "
                                                   "worker count)")
    args = ap.parse_args()
    circuit = circuit_for(args.d, args.p)
    folder = tempfile.mkdtemp()
    task = qdecode_task(args.d, args.p, args.path, folder)
    metadata = dict(task.extra_metadata) if args.path == "circuit" else None
    # Warm-up outside the timed region (imports, first pool start, PyMatching build).
    run_qdecode(task, 10_000, args.workers, seed=0)
    run_sinter(circuit, 10_000, args.workers, metadata)
    wall_ratios, cpu_ratios = [], []
    q_errors = s_errors = 0
    print(f"# d={args.d} p={args.p} shots={args.shots} workers={args.workers} path={args.path} "
          f"{platform.processor() or platform.machine()}")
    print("run  qdecode_wall_s  sinter_wall_s  wall_ratio  qdecode_cpu_s  sinter_cpu_s  cpu_ratio  "
          "qdecode_LER  sinter_LER")
    for i in range(args.repeats):
        qw, qc, qe = run_qdecode(task, args.shots, args.workers, seed=i + 1)
        sw, sc, se = run_sinter(circuit, args.shots, args.workers, metadata)
        q_errors += qe
        s_errors += se
        wall_ratios.append(sw / qw)  # >1: qdecode faster
        cpu_ratios.append(sc / qc)
        print(f"{i:3d}  {qw:14.2f}  {sw:13.2f}  {sw / qw:10.3f}  {qc:13.2f}  {sc:12.2f}  {sc / qc:9.3f}  "
              f"{qe / args.shots:11.5f}  {se / args.shots:10.5f}")
    total = args.shots * args.repeats
    merge_result(args.json, f"{args.path}, {args.workers} worker(s)", {
        "d": args.d, "p": args.p, "shots": args.shots, "workers": args.workers, "repeats": args.repeats,
        "path": args.path, "wall_ratios": wall_ratios, "cpu_ratios": cpu_ratios, "qdecode_errors": q_errors,
        "sinter_errors": s_errors, "versions": {"stim": stim.__version__, "sinter": sinter.__version__}})
    for name, errors in (("qdecode", q_errors), ("sinter", s_errors)):
        fit = fit_binomial(num_shots=total, num_hits=errors, max_likelihood_factor=1e3)
        print(f"{name} per-shot LER over {total} shots: {fit.best:.5f} [{fit.low:.5f}, {fit.high:.5f}] "
              f"({errors} errors)")
    print(f"median throughput ratio qdecode/sinter: wall {statistics.median(wall_ratios):.3f}, "
          f"cpu {statistics.median(cpu_ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
