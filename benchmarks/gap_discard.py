"""Post-selection on the decoder's gap: logical error rate among kept shots at 0 %, 1 % and 10 % discards.

Problem: rotated surface code d = 5 and d = 7, d rounds, SI1000 noise at p = 0.003, memory Z
(``qdecode sweep --code surface --noise si1000``), decoded by ``pymatching`` with its gap
(:mod:`qdecode.decoders.confidence`). The sweep runs with ``--gap-histogram`` (shots and errors per
1 dB bin of the gap, :mod:`qdecode.sims.gap_bins`), a fixed seed and a fixed number of shots per
point (``--max-shots``; ``--max-errors`` is set out of reach so every point gets all its shots). The
table then reads each row's histogram as ``qdecode threshold --max-discard`` does: the largest gap
threshold whose discard rate is at most 0 %, 1 %, 10 %, the fraction actually discarded (bins are
1 dB wide, so it lies at or below the target), kept shots and errors, and the kept-shot logical error
rate per shot with sinter's binomial interval (likelihood within 1000x of the max). The figure is
``qdecode plot --y discard_vs_error`` of the same CSV.

    python benchmarks/gap_discard.py --max-shots 2000000 --workers 1

Resumable: the CSV is the sweep's (run again with more shots to add to it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from qdecode.cli.main import main as qdecode
from qdecode.sims.gap_bins import at_max_discard, discard_curve
from qdecode.sims.store import merge_rows, read_rows

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = (0.0, 0.01, 0.10)


def table(csv: str) -> list[str]:
    """One line per (row, target discard rate)."""
    lines = [f"{'d':>2} {'target':>6} {'gap>=dB':>7} {'discarded':>9} {'kept':>9} {'errors':>7} "
             f"{'LER/shot':>9} {'interval (1000x)':>22}"]
    rows = sorted(merge_rows(read_rows(csv)).values(), key=lambda r: r.json_metadata.get("d", 0))
    for row in rows:
        curve = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)
        for target in TARGETS:
            pt = at_max_discard(curve, target)
            t = "-" if pt.threshold is None else str(pt.threshold)
            lines.append(f"{row.json_metadata['d']:>2} {target:>6.0%} {t:>7} {pt.discard_rate:>9.4%} "
                         f"{pt.kept:>9} {pt.kept_errors:>7} {pt.fit.best:>9.3e} "
                         f"[{pt.fit.low:.3e}, {pt.fit.high:.3e}]")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-shots", type=int, default=2_000_000, help="shots per point (default 2000000)")
    ap.add_argument("--workers", type=int, default=1, help="sweep worker processes (0: inline; default 1)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "gap_discard_surface.csv"))
    ap.add_argument("--png", default=os.path.join(HERE, "figures", "gap_discard_surface.png"))
    args = ap.parse_args()
    t0 = time.perf_counter()
    rc = qdecode(["sweep", "--code", "surface", "--d", "5,7", "--rounds", "d", "--noise", "si1000", "--p", "0.003",
                  "--decoder", "pymatching", "--gap-histogram", "--max-shots", str(args.max_shots),
                  "--max-errors", str(10 * args.max_shots), "--seed", str(args.seed), "--workers", str(args.workers),
                  "--out", args.out, "--quiet"])
    if rc:
        return rc
    wall = time.perf_counter() - t0
    seconds = sum(r.seconds for r in merge_rows(read_rows(args.out)).values())
    print(f"# rotated surface code, rounds = d, SI1000 p = 0.003, memory Z, pymatching gap; {args.out}")
    print(f"# sweep: {wall:.0f} s wall, {seconds:.0f} CPU s recorded in the CSV (all rows)")
    print("\n".join(table(args.out)))
    rc = qdecode(["plot", args.out, "--y", "discard_vs_error", "--out", args.png])
    return rc


if __name__ == "__main__":
    sys.exit(main())
