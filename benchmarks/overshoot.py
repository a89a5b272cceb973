"""How far past ``max_errors`` a sweep records: surface code d = 3, SD6, p = 0.01.

For each decoder and ``max_errors`` it runs the sweep with several seeds on a 2-worker
process pool (batches in flight, as a real sweep) and prints the recorded errors, the
overshoot ``errors - max_errors`` (median and max over seeds) and the stated bound: less
than the errors of the one chunk that crossed ``max_errors`` (:mod:`qdecode.sims.sweep`).

Usage::

    python benchmarks/overshoot.py [--seeds 10] [--workers 2] [--json benchmarks/results/overshoot.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from _common import write_result

from qdecode.decoders import DecoderSpec
from qdecode.sims.executors import LocalExecutor
from qdecode.sims.sweep import SweepOptions, run_sweep
from qdecode.sims.tasks import CircuitRecipe, SweepTask


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--p", type=float, default=0.01)
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    rows = []
    print(f"# surface d=3 sd6 p={args.p}, {args.seeds} seeds, {args.workers} workers")
    print("| decoder | max_errors | recorded errors (median, max) | overshoot median / max | shots recorded (median) |")
    print("|---|---|---|---|---|")
    with LocalExecutor(args.workers) as ex:
        for decoder in ("pymatching", "bposd"):
            task = SweepTask(decoder=DecoderSpec.create(decoder),
                        recipe=CircuitRecipe(code="surface", noise="sd6", p=args.p, d=3))
            for max_errors in (10, 100, 1000):
                errors, shots = [], []
                for seed in range(args.seeds):
                    opts = SweepOptions(max_shots=10**8, max_errors=max_errors, seed=seed)
                    (row,) = run_sweep([task], out_path=None, options=opts, executor=ex)
                    errors.append(row.errors)
                    shots.append(row.shots)
                over = [e - max_errors for e in errors]
                rows.append({"decoder": decoder, "max_errors": max_errors, "errors": errors, "shots": shots})
                print(f"| {decoder} | {max_errors} | {statistics.median(errors):g}, {max(errors)} | "
                      f"{statistics.median(over):g} / {max(over)} | {statistics.median(shots):g} |", flush=True)
    write_result(args.json, {"p": args.p, "seeds": args.seeds, "workers": args.workers, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
