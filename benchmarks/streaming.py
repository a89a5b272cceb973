"""Streaming sliding-window decoding against a round clock (``qdecode stream``, issue 44).

Rows (:data:`ROWS`): the rotated surface code (SD6, p = 0.001) at d = 5 and 7 over 10^4 rounds with
``pymatching`` and ``uf`` (the numba union-find; its default half-edge growth, and
``uf[length_steps=8]``, growth lengths from the edge weights, closer to matching's accuracy:
benchmarks/README.md, "Union-find") as inner decoders, windows of W = 2d rounds
committing C = d; [[144,12,12]] (``bb-uniform``, p = 0.001) over 10^3 rounds with ``relay-bp``,
W = 6, C = 3. Each row streams shots one at a time through :func:`qdecode.sims.streaming.run_stream`
(the plan built on a short copy of the circuit and tiled; every window timed with
``time.perf_counter_ns``; one untimed warm-up shot). Every shot is streamed ``--repeats`` times (2)
and each window keeps its least service time: this machine is shared, and the scheduler's 4 ms
time slices landing in a window otherwise dominate the tail (one pass: p99.9 of the service time
4 ms at d = 5 instead of 17 us, and the mean doubled). Shots: a 10-shot pilot gives the time per
shot, then ``min(max_shots, budget / time per shot)`` shots are streamed (the pilot's are not counted).

Reported per row: the sustained round period (mean service time per round: the shortest period
without a growing backlog), reaction times (last needed round's arrival to committed correction)
p50 / p99 / max at 1.25x and 2x that period and at 1.1 us (Google's round), the inner decoder's
time per decoded window, the harness overhead (time outside the inner decoder's calls / the inner
decoder's time; target <= 0.2), and the logical error rate per shot and per round with
``fit_binomial``'s bands (sinter's convention; the number of errors is given).
Threads: ``NUMBA_NUM_THREADS=1`` and one BLAS / OpenMP thread, set before numba loads.

Usage::

    python benchmarks/streaming.py [--rows d7-pymatching,...] [--budget-s 150] [--repeats 2] \\
        [--json benchmarks/results/streaming.json]
    python benchmarks/streaming.py --render benchmarks/results/streaming.json

With ``--json`` naming an existing file, the selected rows replace theirs and the others are kept.
``--render`` prints the Markdown table of benchmarks/README.md ("Streaming") from a result file.
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numba / numpy load: one core

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from _common import load  # noqa: E402

#: name -> (code, d, rounds, noise, p, inner decoder, W, C, max shots)
ROWS: dict[str, tuple] = {
    "d5-pymatching": ("surface", 5, 10_000, "sd6", 0.001, "pymatching", 10, 5, 20_000),
    "d5-uf8": ("surface", 5, 10_000, "sd6", 0.001, "uf[length_steps=8]", 10, 5, 20_000),
    "d7-pymatching": ("surface", 7, 10_000, "sd6", 0.001, "pymatching", 14, 7, 20_000),
    "d7-uf": ("surface", 7, 10_000, "sd6", 0.001, "uf", 14, 7, 20_000),
    "d7-uf8": ("surface", 7, 10_000, "sd6", 0.001, "uf[length_steps=8]", 14, 7, 20_000),
    "bb144-relay-bp": ("bb144_12_12", 12, 1_000, "bb-uniform", 0.001, "relay-bp", 6, 3, 2_000),
}
#: Round periods (us) besides the multiples of the sustained one: Google's 1.1 us round (arXiv:2408.13687).
FIXED_PERIODS_US = (1.1,)
#: Multiples of the sustained period in the table.
TABLE_FACTORS = (1.25, 2.0)
PILOT_SHOTS = 10


def versions() -> dict[str, str]:
    import numba
    import pymatching
    import stim

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rev = "?"
    return {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
            "stim": stim.__version__, "pymatching": pymatching.__version__, "qdecode_commit": rev}


def run_row(name: str, budget_s: float, seed: int, repeats: int) -> dict[str, Any]:
    from qdecode.sims import streaming
    from qdecode.sims.circuits import build_circuit

    code, d, rounds, noise, p, inner, W, C, max_shots = ROWS[name]
    fixed_d = None if code != "surface" else d

    def make(r: int):
        return build_circuit(code, d=fixed_d, rounds=r, noise=noise, p=p)

    t0 = time.perf_counter()
    plan, circuit = streaming.plan_tiled(make, rounds, inner, W, C)
    plan_s = time.perf_counter() - t0
    pilot = streaming.run_stream(plan, circuit, PILOT_SHOTS, seed + 1, rounds=rounds)
    per_shot = 1.2 * repeats * pilot.service_ns.sum() / 1e9 / PILOT_SHOTS  # + sampling and bookkeeping
    shots = int(max(PILOT_SHOTS, min(max_shots, budget_s / per_shot)))
    print(f"{name}: plan {plan_s:.1f} s, {per_shot * 1e3:.1f} ms per shot -> {shots} shots", file=sys.stderr)
    t0 = time.perf_counter()
    result = streaming.run_stream(plan, circuit, shots, seed, rounds=rounds, repeats=repeats)
    wall = time.perf_counter() - t0
    sustained = result.sustained_period_ns()
    service = result.service_ns.ravel()
    row = {
        "name": name, "code": code, "d": d, "rounds": rounds, "noise": noise, "p": p, "decoder": plan.inner,
        "window": W, "commit": C, "windows_per_shot": plan.num_windows, "distinct_windows": len(plan.classes),
        "seed": seed, "repeats": repeats, "plan_s": plan_s, "stream_wall_s": wall,
        **result.summary(sustained),
        "service_p50_us": float(np.percentile(service, 50)) / 1e3,
        "service_p99_us": float(np.percentile(service, 99)) / 1e3,
        "reaction_at": {f"{f:g}x": result.reaction_us(f * sustained) for f in TABLE_FACTORS},
        "reaction_fixed": {f"{t:g}us": result.reaction_us(t * 1e3) for t in FIXED_PERIODS_US},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "load": load(),
    }
    row.pop("reaction")  # summary's reaction at the sustained period itself: in reaction_near_sustained
    return row


def _band(v) -> str:
    low, best, high = v
    return f"{best:.2g} [{low:.1g}, {high:.1g}]"


def _rx(r: dict[str, float]) -> str:
    return f"{r['p50_us']:.0f} / {r['p99_us']:.0f} / {r['max_us']:.0f}"


def render(data: dict[str, Any]) -> str:
    """The Markdown table of benchmarks/README.md's "Streaming" section."""
    lines = [f"CPU: {data['cpu']}; one thread; runs:"]
    for run in data["runs"]:
        kept = [n for n in run["rows"] if data["rows"].get(n, {}).get("date", "") <= run.get("date", "")]
        lines.append(f"`{run['command']}` ({run.get('date', '?')}, qdecode {run['versions']['qdecode_commit']}; "
                     f"rows {', '.join(kept) or 'since replaced'})")
    lines += [
        "",
        "| row | W / C | shots (repeats) | errors | LER per round [band] | sustained period (us) | inner us / window | "
        "harness / inner | reaction p50 / p99 / max (us) at 1.25x | at 2x | at 1.1 us |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ROWS:
        r = data["rows"].get(name)
        if r is None:
            continue
        met = "" if r["overhead"] <= 0.2 else " (not met)"
        lines.append(
            f"| {name} ({r['rounds']} rounds) | {r['window']} / {r['commit']} | {r['shots']} ({r['repeats']}) | "
            f"{r['errors']} | "
            f"{_band(r['ler_per_round'])} | {r['sustained_period_us']:.2f} | {r['inner_per_decoded_window_us']:.1f} | "
            f"{r['overhead']:.3f}{met} | {_rx(r['reaction_at']['1.25x'])} | {_rx(r['reaction_at']['2x'])} | "
            f"{_rx(r['reaction_fixed']['1.1us'])} |")
    return "\n".join(lines)


def main() -> int:
    from qdecode.hw.latency import cpu_model

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated row names (default: all)")
    ap.add_argument("--budget-s", type=float, default=150.0, help="streaming seconds per row (default: 150)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--repeats", type=int, default=2, help="passes per shot, least time per window (default: 2)")
    ap.add_argument("--json", default="benchmarks/results/streaming.json")
    ap.add_argument("--render", metavar="FILE", help="print the README table from a result file and exit")
    args = ap.parse_args()
    if args.render:
        with open(args.render, encoding="utf-8") as f:
            print(render(json.load(f)))
        return 0
    names = [n for n in args.rows.split(",") if n]
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        ap.error(f"unknown rows {unknown}; rows: {', '.join(ROWS)}")
    data: dict[str, Any] = {"rows": {}, "runs": []}
    if os.path.exists(args.json):
        with open(args.json, encoding="utf-8") as f:
            data = json.load(f)
    data["cpu"] = cpu_model()
    run = {"command": "python " + " ".join(sys.argv), "rows": names, "versions": versions()}
    data["runs"] = data.get("runs", []) + [run]
    for name in names:
        data["rows"][name] = run_row(name, args.budget_s, args.seed, args.repeats)
        run["load_at_end"] = load()
        run["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
    print(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
