"""Decoder speed inside a sweep against the decoder's own large-batch speed (issue 43).

Every registered quantum syndrome decoder gets one row, on the first circuit of
:data:`ORDER` it can decode (``mle``: :data:`ONLY`), all circuits d = 5, rounds = d:

* ``color-xyz-d5``: stim's colour code (``color_code:memory_xyz``, all four noise knobs at
  p = 0.002; the frontier's ``color-xyz-d5``): hyperedges, for the BP / OSD / lane / search decoders;
* ``surface-d5``: stim's rotated surface code (``surface_code:rotated_memory_z``, SD6 at
  p = 0.003): graphlike, for the matching decoders; SD6, rounds = d and p in its training range
  0.003-0.006 are what ``nn-pymatching``'s shipped d5 model was trained on (its model card);
* ``color-css-d5``: the project's superdense colour circuit (``qdecode circuit color --basis Z``,
  SD6 at p = 0.002), whose detectors carry Chromobius' colour coordinate;
* ``surface-d3``: ``surface-d5`` at d = 3: a model small enough for ``mle`` (one integer program
  per distinct syndrome).

Per row, in one process and on one thread:

* ``own``: CPU time per shot of one 2,048-shot ``predict_observables_packed`` call (after a
  warm-up call, the median of ``--repeats`` calls on the same shots; more when a call is short);
* ``sweep``: CPU time per shot inside ``run_sweep`` with the inline executor (the rows'
  ``seconds`` / ``shots``: sampling, decoding and counting), seed 1, ``max_shots`` shots and
  no error stop, ``before`` with one decoder call and one stim call per chunk (``CALL_SHOTS =
  SAMPLE_SHOTS = 1``: the sweep before issue 43, 32-512 shots per call on this schedule) and
  ``after`` with the sweep's calls of up to ``CALL_SHOTS`` / ``SAMPLE_SHOTS`` shots
  (:mod:`qdecode.sims.sampling`); the median of ``--repeats``
  before / after pairs when a pair takes under :data:`REPEAT_BELOW_S`, else one pair;
* ``sampling``: CPU time per shot of sampling the sweep's shots alone (the same batches, chunks
  and calls, no decoding), so ``(after - sampling) / own`` is the decoder's own share.

Both sweeps record the same number of shots (checked on every pair); their shots differ, since
stim's stream depends on its call sizes (that large decoder calls count each chunk exactly as a
call per chunk would, on the same shots, is tested in ``tests/sims/test_sampling_calls.py``).
A decoder of :data:`REMEMBERS` (``mle`` keeps the syndromes it solved) is built afresh for each
own call and each sweep, so no measurement reuses another's solutions.
Threads: ``NUMBA_NUM_THREADS=1`` (and one BLAS / OpenMP thread) is set before anything
imports numba, so the CPU times are one core's (``nn-pymatching``'s default onnxruntime threads are
summed by ``time.process_time``; ``nn-pymatching[threads=1]`` is measured beside it). ``auto`` has
no row: a sweep resolves it, once, to one of the decoders measured here.

``--circuits`` / ``--decoders`` select rows; with ``--json`` naming an existing file, the
selected rows replace theirs there and the others are kept, each row with its own ``date``.
``--render FILE`` prints the Markdown of benchmarks/README.md from a result file.

Usage::

    python benchmarks/in_sweep_speed.py [--max-shots 8192] [--repeats 3] [--circuits a,b] \\
        [--decoders a,b,...] [--json benchmarks/results/in_sweep_speed.json]
    python benchmarks/in_sweep_speed.py --render benchmarks/results/in_sweep_speed.json
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
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import stim  # noqa: E402
from _common import load, lscpu_value  # noqa: E402

from qdecode.decoders.registry import decoder_names, get_entry  # noqa: E402
from qdecode.problem import DecodingProblem  # noqa: E402
from qdecode.sims import sampling  # noqa: E402
from qdecode.sims.circuits import build_circuit  # noqa: E402
from qdecode.sims.executors import InlineExecutor  # noqa: E402
from qdecode.sims.recipe import parse_recipe  # noqa: E402
from qdecode.sims.sweep import SweepOptions, run_sweep  # noqa: E402

OWN_SHOTS = 2048
CALL_SHOTS = sampling.CALL_SHOTS
SAMPLE_SHOTS = sampling.SAMPLE_SHOTS
# the measured configuration, and nn-pymatching on one inference thread, beside the defaults
EXTRA = ["relay-bp[stop_after=10]", "nn-pymatching[threads=1]"]
# a before / after pair of sweeps shorter than this (CPU seconds) is repeated --repeats times
REPEAT_BELOW_S = 20.0
# the goal for after / own; a row above it also records its own call at DIAGNOSE_SHOTS shots
GOAL = 1.2
DIAGNOSE_SHOTS = (32, 256)  # the smallest chunk, and the first batch (one call after, 8 calls of 32 before)
# an own call shorter than this (CPU seconds) is repeated until the calls add up to it (at most 15)
OWN_AT_LEAST_S = 0.5


def _surface(d: int) -> stim.Circuit:
    return build_circuit("surface", d=d, rounds=d, noise="sd6", p=0.003, basis="Z")


def _color_xyz() -> stim.Circuit:
    p = 0.002
    return stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=5, after_clifford_depolarization=p,
                                  before_round_data_depolarization=p, before_measure_flip_probability=p,
                                  after_reset_flip_probability=p)


#: name -> (what it is, builder). Each row names its circuit.
CIRCUITS: dict[str, tuple[str, Callable[[], stim.Circuit]]] = {
    "color-xyz-d5": ("stim color_code:memory_xyz, d = 5, 5 rounds, four noise knobs at p = 0.002", _color_xyz),
    "surface-d5": ("stim surface_code:rotated_memory_z, d = 5, 5 rounds, SD6 at p = 0.003 (both detector bases; "
                   "what nn-pymatching's d5 model was trained on)", lambda: _surface(5)),
    "color-css-d5": ("qdecode's superdense colour circuit (qdecode circuit color --basis Z), d = 5, 5 rounds, SD6 at "
                     "p = 0.002; detectors with Chromobius' colour coordinate",
                     lambda: build_circuit("color", d=5, rounds=5, noise="sd6", p=0.002, basis="Z")),
    "surface-d3": ("stim surface_code:rotated_memory_z, d = 3, 3 rounds, SD6 at p = 0.003", lambda: _surface(3)),
}
#: a decoder's row is on the first of these circuits that it can decode
ORDER = ["color-xyz-d5", "surface-d5", "color-css-d5"]
#: decoders measured on one given circuit only, and why
ONLY = {"mle": ("surface-d3", "one mixed-integer program per distinct syndrome: a small model keeps it to seconds")}
#: decoders that remember solutions across calls: built afresh for each measurement
REMEMBERS = {"mle": "remembers the syndromes it solved, in later calls too"}


def fresh_decoder(ct) -> None:
    """Replace the sweep's cached decoder of ``ct`` by a newly built one (as ``sampling.compiled`` builds it)."""
    ct.decoder = ct.task.decoder.build(DecodingProblem.from_dem(ct.dem))


def own_ms(task, name: str, repeats: int, shots: int = OWN_SHOTS) -> tuple[float, int]:
    """(median CPU ms per shot of one ``shots``-shot packed call, calls timed) with the sweep's own compiled decoder."""
    ct, make_sampler = sampling.compiled(task)
    dets, _ = make_sampler(seed=2026).sample(shots, separate_observables=True, bit_packed=True)
    ct.decoder.predict_observables_packed(dets)  # warm-up: kernels compiled, scratch allocated
    times: list[float] = []
    while len(times) < repeats or (sum(times) < OWN_AT_LEAST_S and len(times) < 15):
        if name in REMEMBERS:
            fresh_decoder(ct)
        t0 = time.process_time()
        ct.decoder.predict_observables_packed(dets)
        times.append(time.process_time() - t0)
    return 1e3 * statistics.median(times) / shots, len(times)


def sweep_ms(task, name: str, max_shots: int, call_shots: int, sample_shots: int) -> tuple[float, int, int]:
    """(CPU ms per shot, shots, errors) of one inline sweep with decoder calls of up to ``call_shots`` and
    stim calls of up to ``sample_shots`` (1 and 1: one of each per chunk, the sweep before issue 43)."""
    if name in REMEMBERS:
        fresh_decoder(sampling.compiled(task)[0])
    sampling.CALL_SHOTS, sampling.SAMPLE_SHOTS = call_shots, sample_shots
    try:
        (row,) = run_sweep([task], out_path=None, executor=InlineExecutor(),
                           options=SweepOptions(max_shots=max_shots, max_errors=10**9, seed=1))
    finally:
        sampling.CALL_SHOTS, sampling.SAMPLE_SHOTS = CALL_SHOTS, SAMPLE_SHOTS
    return 1e3 * row.seconds / row.shots, row.shots, row.errors


def batch_plan(max_shots: int) -> list[int]:
    """The sweep's batch sizes for ``max_shots`` and no error stop (``TaskProgress.planned_size``: doubling from
    ``min_batch_size`` up to ``max_batch_size``, the last cut to ``max_shots``)."""
    opts, sizes, size = SweepOptions(), [], SweepOptions().min_batch_size
    while sum(sizes) < max_shots:
        sizes.append(min(size, opts.max_batch_size, max_shots - sum(sizes)))
        size *= 2
    return sizes


def sampling_ms(task, max_shots: int, repeats: int) -> float:
    """Median CPU ms per shot of sampling a sweep's shots alone: every batch of :func:`batch_plan` from its own
    sampler, in the stim calls of ``sampling.sample_plan``, as ``sampling.run_batch`` samples them."""
    ct, make_sampler = sampling.compiled(task)
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        for index, shots in enumerate(batch_plan(max_shots)):
            sampler = make_sampler(seed=1000 + index)
            sizes = sampling.chunk_sizes(shots)
            for group in sampling.split_plan(sizes, sampling.sample_plan(sizes)):
                sampler.sample(sum(group), separate_observables=True, bit_packed=True)
        times.append(time.process_time() - t0)
    return 1e3 * statistics.median(times) / max_shots


def measure(task, name: str, circuit: str, args) -> dict[str, Any]:
    """One row: own, before, after, sampling (module docstring); raises if before and after record differently."""
    own, own_calls = own_ms(task, name, args.repeats)
    pairs: list[tuple[float, float]] = []
    while len(pairs) < args.repeats:
        before, shots, errors_before = sweep_ms(task, name, args.max_shots, 1, 1)
        after, shots_after, errors_after = sweep_ms(task, name, args.max_shots, CALL_SHOTS, SAMPLE_SHOTS)
        # other stim calls, other shots: equal shot counts only (tests/sims/test_sampling_calls.py checks
        # that large decoder calls count each chunk as a call per chunk does, on the same shots)
        if shots != shots_after:
            raise AssertionError(f"{name}: before recorded {shots} / {errors_before}, after "
                                 f"{shots_after} / {errors_after}")
        pairs.append((before, after))
        if (before + after) * shots / 1e3 >= REPEAT_BELOW_S:
            break
    before = statistics.median(b for b, _ in pairs)
    after = statistics.median(a for _, a in pairs)
    samp = sampling_ms(task, args.max_shots, args.repeats)
    by_call = {str(n): own_ms(task, name, args.repeats, n)[0] for n in DIAGNOSE_SHOTS} if after / own > GOAL else None
    return {"decoder": name, "circuit": circuit, "own_2048_ms_per_shot": own, "sweep_before_ms_per_shot": before,
            "sweep_after_ms_per_shot": after, "sampling_ms_per_shot": samp, "before_over_own": before / own,
            "after_over_own": after / own, "after_less_sampling_over_own": (after - samp) / own,
            "own_ms_per_shot_by_call_shots": by_call,
            "shots": shots, "errors": errors_after, "own_calls": own_calls, "sweep_pairs": len(pairs),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "load": load()}


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


def default_names() -> list[str]:
    """Every registered quantum decoder but ``auto``, then :data:`EXTRA`."""
    return [n for n in decoder_names() if get_entry(n).kind == "quantum" and n != "auto"] + EXTRA


def row_key(row: dict[str, Any]) -> tuple:
    """Table order: by circuit (:data:`CIRCUITS` order), registered defaults before :data:`EXTRA`, then by name."""
    return list(CIRCUITS).index(row["circuit"]), row["decoder"] in EXTRA, row["decoder"]


def run_rows(names: list[str], circuits: list[str], args) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Measure each decoder whose circuit (the first that suits it) is in ``circuits``; (rows, skipped with
    reasons: decoders that no circuit suits)."""
    rows, skipped = [], {}
    with tempfile.TemporaryDirectory() as folder:
        files = {}
        for c in CIRCUITS:
            files[c] = os.path.join(folder, f"{c}.stim")
            CIRCUITS[c][1]().to_file(files[c])
        for name in names:
            base = name.split("[")[0]
            reasons = []
            for c in [ONLY[base][0]] if base in ONLY else ORDER:
                try:
                    (task,) = parse_recipe({"tasks": [{"circuit": files[c], "decoders": [name]}]}).tasks
                    sampling.compiled(task)  # builds the decoder: refuses a model that does not suit it
                except (ImportError, ValueError) as exc:
                    reasons.append(f"{c}: {type(exc).__name__}: {exc}".splitlines()[0])
                    continue
                if c not in circuits:
                    print(f"# {name}: on {c}, not selected", flush=True)
                    break
                row = measure(task, name, c, args)
                rows.append(row)
                print(f"| {c} | `{name}` | {row['own_2048_ms_per_shot']:.3g} | {row['sweep_before_ms_per_shot']:.3g} "
                      f"| {row['sweep_after_ms_per_shot']:.3g} | {row['before_over_own']:.2f} "
                      f"| {row['after_over_own']:.2f} | {row['sampling_ms_per_shot']:.3g} "
                      f"| {row['after_less_sampling_over_own']:.2f} |", flush=True)
                break
            else:
                skipped[name] = "; ".join(reasons)
                print(f"# skipped {name}: {skipped[name]}", flush=True)
    return rows, skipped


def merged(path: str, rows: list[dict[str, Any]], skipped: dict[str, str], args) -> dict[str, Any]:
    """The result file: this run's rows, and the rows of ``path`` (if it exists) that this run did not measure."""
    old: dict[str, Any] = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    measured = {r["decoder"] for r in rows} | set(skipped)
    kept = [r for r in old.get("rows", []) if r["decoder"] not in measured and r.get("circuit") in CIRCUITS]
    kept_skips = {k: v for k, v in old.get("skipped", {}).items() if k not in measured and k != "auto"}
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    runs = [r for r in old.get("runs", []) if kept] + [{"command": "NUMBA_NUM_THREADS=1 python " + " ".join(sys.argv),
                                                         "date": now, "versions": versions(), "load_at_end": load()}]
    return {"runs": runs, "machine": {"cpu": lscpu_value("Model name"), "cores": os.cpu_count()}, "threads": 1,
            "circuits": {c: CIRCUITS[c][0] for c in CIRCUITS}, "max_shots": args.max_shots,
            "call_shots": CALL_SHOTS, "own_shots": OWN_SHOTS, "rows": sorted(kept + rows, key=row_key),
            "skipped": {"auto": "resolves, once per sweep, to one of the decoders measured here "
                                "(sims/auto_sweep.py): its in-sweep time is that decoder's",
                        **kept_skips, **skipped}}


def render(path: str) -> str:
    """The Markdown of benchmarks/README.md's table: circuits, then one row per decoder, then the rows skipped."""
    with open(path) as f:
        data = json.load(f)
    out = [f"- `{c}`: {desc}" for c, desc in data["circuits"].items() if any(r["circuit"] == c for r in data["rows"])]
    out += ["", "| circuit | decoder | own 2,048-shot call (ms/shot) | in sweep before | in sweep after | before / own "
            "| after / own | sampling alone | (after - sampling) / own |", "|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        out.append(f"| `{r['circuit']}` | `{r['decoder']}` | {r['own_2048_ms_per_shot']:.3g} "
                   f"| {r['sweep_before_ms_per_shot']:.3g} | {r['sweep_after_ms_per_shot']:.3g} "
                   f"| {r['before_over_own']:.2f} | {r['after_over_own']:.2f} | {r['sampling_ms_per_shot']:.3g} "
                   f"| {r['after_less_sampling_over_own']:.2f} |")
    slow = [r for r in data["rows"] if r.get("own_ms_per_shot_by_call_shots")]
    if slow:
        sizes = list(slow[0]["own_ms_per_shot_by_call_shots"])
        out += ["", f"Rows above {GOAL}x: the decoder's own call at fewer shots (ms/shot; the sweep's first batch "
                "is 256 shots in chunks of 32)", "",
                "| circuit | decoder | " + " | ".join(f"own {n}-shot call" for n in sizes) + " | own 2,048-shot call |",
                "|---|---|" + "---|" * (len(sizes) + 1)]
        out += [f"| `{r['circuit']}` | `{r['decoder']}` | "
                + " | ".join(f"{r['own_ms_per_shot_by_call_shots'][n]:.3g}" for n in sizes)
                + f" | {r['own_2048_ms_per_shot']:.3g} |" for r in slow]
    out += [""] + [f"No row: `{name}` ({why})." for name, why in data["skipped"].items()]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-shots", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--decoders", default=None, help="comma-separated names (default: every syndrome decoder)")
    ap.add_argument("--circuits", default=None, help=f"comma-separated, of {', '.join(CIRCUITS)} (default: all)")
    ap.add_argument("--json", default=None, help="write the results here (merged into an existing file)")
    ap.add_argument("--render", metavar="JSON", help="print the Markdown table of this result file and exit")
    args = ap.parse_args()
    if args.render:
        print(render(args.render))
        return 0
    circuits = args.circuits.split(",") if args.circuits else list(CIRCUITS)
    unknown = [c for c in circuits if c not in CIRCUITS]
    if unknown:
        ap.error(f"unknown circuit(s) {', '.join(unknown)}; choose from {', '.join(CIRCUITS)}")
    names = args.decoders.split(",") if args.decoders else default_names()
    print(f"# max_shots {args.max_shots}, one thread, load {load()}")
    print("| circuit | decoder | own (ms/shot) | before | after | before / own | after / own | sampling "
          "| (after - sampling) / own |\n|---|---|---|---|---|---|---|---|---|")
    rows, skipped = run_rows(names, circuits, args)
    if args.json:
        out = merged(args.json, rows, skipped, args)
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
