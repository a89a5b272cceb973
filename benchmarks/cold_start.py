"""The first run: ``qdecode predict`` from an empty compile cache, and again with the cache filled.

Problem: stim's rotated surface-code memory (d = 5, 5 rounds, p = 0.003 on its four knobs, decomposed DEM),
1,000 shots of detection events (b8), the case of issue 45 ("a silent first minute"). Per decoder and repeat:
a fresh ``QDECODE_CACHE_DIR``, then the wall time of ``python -m qdecode.cli.main predict ...`` in a new
process (cold: numba compiles every kernel the decoder's path uses), then the same command again (warm:
the kernels load from the cache). ``--warmup`` also times ``qdecode warmup --decoder X`` on a fresh cache
and the ``predict`` after it (the first run of a user who ran ``make install``).

``--before REV`` also measures another commit (a ``git worktree`` of it, run with ``PYTHONPATH``), each run of it
right before the same run of the working tree, so that a before / after pair shares the machine's load; the
results go under ``entries["before"]`` and ``entries["after"]`` of the JSON file::

    python benchmarks/cold_start.py --before d06549c --warmup --json benchmarks/results/cold_start.json
    python benchmarks/cold_start.py --table benchmarks/results/cold_start.json

Wall times on a shared 2-core machine: compile time is CPU-bound in one thread, so another job on the
machine inflates it; each run records the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import merge_result  # noqa: E402

ROOT = HERE.parent
DECODERS = ("bposd", "relay-bp", "bp", "uf", "pymatching")
#: the issue's goal for a cold first run of bposd and relay-bp (seconds)
GOAL_S = 15.0
_OUR_ENV = ("NUMBA_CACHE_DIR", "QDECODE_CACHE_DIR", "_QDECODE_NUMBA_CACHE_DIR", "_QDECODE_USER_NUMBA_CACHE_DIR")


def write_problem(folder: Path) -> tuple[Path, Path]:
    import stim

    c = stim.Circuit.generated("surface_code:rotated_memory_x", distance=5, rounds=5,
                               after_clifford_depolarization=0.003, after_reset_flip_probability=0.003,
                               before_measure_flip_probability=0.003, before_round_data_depolarization=0.003)
    dem = folder / "d5.dem"
    dem.write_text(str(c.detector_error_model(decompose_errors=True)))
    dets = folder / "d5.b8"
    stim.write_shot_data_file(data=c.compile_detector_sampler(seed=1).sample(1000), path=dets, format="b8",
                              num_detectors=c.num_detectors)
    return dem, dets


def timed(args: list[str], src: Path, cache: Path) -> float:
    env = {k: v for k, v in os.environ.items() if k not in _OUR_ENV}
    env.update(QDECODE_CACHE_DIR=str(cache), PYTHONPATH=str(src))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "qdecode.cli.main", *args], env=env, cwd=src, capture_output=True,
                         text=True)
    seconds = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"qdecode {' '.join(args)} failed:\n{out.stderr}")
    return seconds


def measure(trees: dict[str, Path], decoders: list[str], repeats: int, warmup: bool) -> dict[str, list[dict]]:
    """Per decoder and repeat, the trees (tag -> source folder) one after another, so that a before / after
    pair shares the machine's load."""
    rows: dict[str, list[dict]] = {tag: [] for tag in trees}
    with tempfile.TemporaryDirectory() as tmp:
        dem, dets = write_problem(Path(tmp))
        for name in decoders:
            predict = ["predict", "--dem", str(dem), "--dets", str(dets), "--decoder", name,
                       "--obs-out", str(Path(tmp) / "obs.b8"), "--quiet"]
            row = {tag: {"decoder": name, "cold_s": [], "warm_s": [], "warmup_s": [], "after_warmup_s": []}
                   for tag in trees}
            for r in range(repeats):
                for tag, src in trees.items():
                    cache = Path(tmp) / f"cache-{tag}-{name}-{r}"
                    row[tag]["cold_s"].append(round(timed(predict, src, cache), 2))
                    row[tag]["warm_s"].append(round(timed(predict, src, cache), 2))
                    if warmup and tag == "after":
                        cache = Path(tmp) / f"warmup-{name}-{r}"
                        row[tag]["warmup_s"].append(round(timed(["warmup", "--decoder", name, "--quiet"], src, cache),
                                                          2))
                        row[tag]["after_warmup_s"].append(round(timed(predict, src, cache), 2))
            for tag in trees:
                print(tag, json.dumps(row[tag]), file=sys.stderr)
                rows[tag].append(row[tag])
    return rows


def _med(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f}" if xs else "-"


def table(path: str) -> str:
    entries = json.loads(Path(path).read_text())["entries"]
    before = {r["decoder"]: r for r in entries["before"]["rows"]}
    after = {r["decoder"]: r for r in entries["after"]["rows"]}
    run = entries["after"]["run"]
    lines = [f"Before: commit {entries['before']['commit']}; after: commit {entries['after']['commit']}; "
             f"`{run['command']}` ({run['date']}, {run['cpu']}, load {run['load']}); medians of "
             f"{len(next(iter(after.values()))['cold_s'])} runs, seconds.",
             "",
             "| decoder | cold, before | cold, after | warm, after | `qdecode warmup` | first `predict` after it | "
             f"cold <= {GOAL_S:g} s |",
             "|---|---|---|---|---|---|---|"]
    for name, a in after.items():
        b = before.get(name, {"cold_s": []})
        cold = statistics.median(a["cold_s"])
        met = "met" if cold <= GOAL_S else "**not met**"
        lines.append(f"| `{name}` | {_med(b['cold_s'])} | {_med(a['cold_s'])} | {_med(a['warm_s'])} | "
                     f"{_med(a['warmup_s'])} | {_med(a['after_warmup_s'])} | {met} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decoders", default=",".join(DECODERS))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--before", metavar="REV",
                    help="also measure this commit (a git worktree of it), interleaved with the working tree")
    ap.add_argument("--warmup", action="store_true", help="also time `qdecode warmup` and the predict after it")
    ap.add_argument("--json", help="merge the results into this file (entries 'after' and, with --before, 'before')")
    ap.add_argument("--table", metavar="JSON", help="print the table of a result file and exit")
    args = ap.parse_args()
    if args.table:
        print(table(args.table))
        return 0
    decoders = [d for d in args.decoders.split(",") if d]
    trees = {"after": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            tree = Path(tmp) / "tree"
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.before], cwd=ROOT, check=True,
                           capture_output=True)
            trees = {"before": tree, "after": ROOT}
        try:
            rows = measure(trees, decoders, args.repeats, args.warmup)
        finally:
            if args.before:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    commits = {"after": f"{head.strip()} (working tree)"}
    if args.before:
        commits["before"] = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, capture_output=True,
                                           text=True, check=True).stdout.strip()
    for tag, tag_rows in rows.items():
        merge_result(args.json, tag, {"commit": commits[tag], "rows": tag_rows})
    return 0

if __name__ == "__main__":
    sys.exit(main())
