"""How well ``qdecode sweep``'s cost estimate predicts the sweep's wall time (issue 43, "Estimates").

Each case runs ``qdecode sweep`` in a subprocess, in a fresh scratch directory (so a fresh output
file; ``--seed`` fixed, so the same shots every time), with stderr captured. From stderr it reads
the estimate, ``qdecode sweep: estimated sweep time ~X``, and the wall time the sweep itself
reports, ``qdecode sweep: progress: N/N tasks done in Y`` (both measured from the same start, the
progress object's creation, so the comparison leaves out Python's start-up and the plot drawn
after the sweep). It records (command, estimate, actual, estimate / actual) per case, with the
date, the machine (CPU, cores, load averages before and after each case) and the versions, and
writes JSON.

Cases (``--cases``, default all):

- ``demo``: ``qdecode sweep`` with no argument (the embedded quick-start recipe, ``make demo``),
  optionally with ``--max-errors N`` (``--demo-max-errors``) to make it shorter: say so when quoting.
- ``readme-pymatching``: README's second command, the surface code d = 5, 7, 9 x 3 p with
  PyMatching, max 1e6 shots / 1000 errors.
- ``readme-bp``: README's "Your own circuits" sweep restricted to its colour-code circuits
  (``code=color*.stim``: d = 3, 5, 7 x p = 0.003, 0.006, stim's ``color_code:memory_xyz``), with
  ``bposd`` and ``relay-bp``, max 200 errors; the circuits are written as the README writes them.

Run: ``python benchmarks/estimate_accuracy.py --out benchmarks/results/estimate_accuracy_after.json``
(``--render A.json B.json`` prints the Markdown table of benchmarks/README.md from result files).
The machine may be shared: the load averages are recorded with each case, and the estimate counts
CPU time per shot, so a loaded machine makes the real time longer than any estimate can foresee.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import load, lscpu_value

ROOT = Path(__file__).resolve().parents[1]
QDECODE = str(Path(sys.executable).with_name("qdecode"))

COLOR_CIRCUITS = """
import pathlib, stim
out = pathlib.Path("circuits"); out.mkdir(exist_ok=True)
for d in (3, 5, 7):
    for p in (0.003, 0.006):
        stim.Circuit.generated("color_code:memory_xyz", distance=d, rounds=d,
                               after_clifford_depolarization=p, before_round_data_depolarization=p,
                               before_measure_flip_probability=p, after_reset_flip_probability=p,
                               ).to_file(out / f"code=color,d={d},p={p},r={d},b=XYZ.stim")
"""


def cases(demo_max_errors: int | None, seed: int) -> dict[str, dict]:
    """name -> {argv (after ``qdecode``), setup (Python run first in the scratch directory), note}."""
    demo = ["sweep", "--seed", str(seed)]
    note = "make demo's sweep"
    if demo_max_errors is not None:
        demo += ["--max-errors", str(demo_max_errors)]
        note += f", --max-errors {demo_max_errors}"
    return {
        "demo": {"argv": demo, "setup": None, "note": note},
        "readme-pymatching": {
            "argv": ["sweep", "--code", "surface", "--d", "5,7,9", "--rounds", "d", "--noise", "sd6",
                     "--p", "0.005,0.007,0.009", "--decoder", "pymatching", "--max-shots", "1000000",
                     "--max-errors", "1000", "--out", "stats.csv", "--seed", str(seed)],
            "setup": None, "note": "README quick-start, second command"},
        "readme-bp": {
            "argv": ["sweep", "--circuit", "circuits/code=color*.stim", "--decoder", "bposd", "--decoder", "relay-bp",
                     "--max-errors", "200", "--out", "byo.csv", "--seed", str(seed)],
            "setup": COLOR_CIRCUITS, "note": "README 'Your own circuits', its colour-code circuits only"},
    }


_DURATION = r"(\d+(?:\.\d+)? s|\d+m\d\ds|\d+h\d\dm|\?)"


def parse_duration(text: str) -> float:
    """Seconds of :func:`qdecode.cli.progress.format_duration`'s ``0.4 s``, ``42 s``, ``4m05s``, ``3h12m``."""
    if text.endswith(" s"):
        return float(text[:-2])
    m = re.fullmatch(r"(\d+)m(\d\d)s", text)
    if m:
        return 60 * int(m[1]) + int(m[2])
    m = re.fullmatch(r"(\d+)h(\d\d)m", text)
    if m:
        return 3600 * int(m[1]) + 60 * int(m[2])
    return float("nan")


def read_times(stderr: str) -> tuple[float, float, str, str]:
    """(estimate, actual, the estimate line, the summary line) from a sweep's stderr."""
    est_line = next((ln for ln in stderr.splitlines() if "estimated sweep time ~" in ln), "")
    done_line = next((ln for ln in stderr.splitlines() if ln.startswith("qdecode sweep: progress: ")), "")
    est = re.search(r"estimated sweep time ~" + _DURATION, est_line)
    done = re.search(r"tasks done in " + _DURATION, done_line)
    return (parse_duration(est[1]) if est else float("nan"), parse_duration(done[1]) if done else float("nan"),
            est_line, done_line)


def run_case(name: str, case: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"estimate-{name}-") as tmp:
        if case["setup"]:
            subprocess.run([sys.executable, "-c", case["setup"]], cwd=tmp, check=True)
        load_before = load()
        t0 = time.perf_counter()
        proc = subprocess.run([QDECODE, *case["argv"], "--progress-lines"], cwd=tmp, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        load_after = load()
    if proc.returncode != 0:
        raise SystemExit(f"{name}: qdecode {' '.join(case['argv'])} failed ({proc.returncode}):\n{proc.stderr}")
    estimate, actual, est_line, done_line = read_times(proc.stderr)
    return {"case": name, "command": "qdecode " + " ".join(case["argv"]), "note": case["note"],
            "estimate_s": estimate, "actual_s": actual, "ratio": estimate / actual if actual else float("nan"),
            "process_wall_s": round(wall, 2), "load_before": load_before, "load_after": load_after,
            "estimate_line": est_line, "summary_line": done_line,
            "result_line": next((ln for ln in proc.stderr.splitlines() if re.match(r"qdecode sweep: \d+ tasks, ", ln)),
                                ""),
            "cost_lines": [ln for ln in proc.stderr.splitlines()
                           if ln.startswith("  ") and ("first batch" in ln or "latest batches" in ln)]}


def versions() -> dict[str, str]:
    import numba
    import numpy
    import pymatching
    import stim

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    return {"python": platform.python_version(), "numpy": numpy.__version__, "numba": numba.__version__,
            "stim": stim.__version__, "pymatching": pymatching.__version__, "git_head": commit.strip()}


def render(paths: list[str]) -> str:
    """Markdown rows (one per case and result file) for benchmarks/README.md."""
    rows = ["| run | case | command | estimate | actual | estimate / actual | load (1 / 5 / 15 min) |",
            "|---|---|---|---|---|---|---|"]
    for path in paths:
        data = json.loads(Path(path).read_text())
        for r in data["results"]:
            rows.append(f"| {data['label']} | {r['case']} | `{r['command']}` | {r['estimate_s']:.0f} s | "
                        f"{r['actual_s']:.0f} s | {r['ratio']:.2f} | {r['load_before']} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="demo,readme-pymatching,readme-bp")
    ap.add_argument("--demo-max-errors", type=int, help="run the demo with --max-errors N (default: the recipe's)")
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--label", default="", help="what this run measures (e.g. 'before', 'after')")
    ap.add_argument("--out", help="JSON result file")
    ap.add_argument("--render", nargs="+", metavar="JSON", help="print the Markdown table of these result files")
    args = ap.parse_args()
    if args.render:
        print(render(args.render))
        return
    table = cases(args.demo_max_errors, args.seed)
    data = {"label": args.label, "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "argv": sys.argv, "machine": {"cpu": lscpu_value("Model name"), "cores": os.cpu_count(),
                                          "shared": "yes: other jobs ran on the machine (see the load averages)"},
            "versions": versions(), "results": []}
    for name in args.cases.split(","):
        r = run_case(name, table[name])
        print(f"{name}: estimate {r['estimate_s']:.1f} s, actual {r['actual_s']:.1f} s, ratio {r['ratio']:.2f} "
              f"(load {r['load_before']} -> {r['load_after']})", flush=True)
        data["results"].append(r)
        if args.out:  # after each case: a long run that is stopped keeps what it measured
            Path(args.out).write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
