"""``qdecode bench``: per-shot latency distribution, batch throughput, iterations and LER.

The problem is a named code + noise (``--code --d --rounds --noise --p --basis``, as in
``qdecode sweep``'s inline form) or a detector error model (``--dem``). Shots are
sampled with ``--seed``; the decoder is any registered one (``--decoder --param``).
Warm-up (numba JIT) runs before anything is timed. ``--csv`` appends one row.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from qdecode.cli.common import add_problem_args, check_shots, load_problem
from qdecode.cli.help_text import QUANTUM_DECODER_NAMES, HelpFormatter
from qdecode.errors import InputError

CSV_COLUMNS = (
    "decoder", "code", "d", "rounds", "noise", "p", "basis", "shots", "seed",
    "batch_seconds", "shots_per_s", "us_per_shot", "us_per_round", "rounds_per_s",
    "latency_shots", "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "lat_mean_us",
    "lat_p50_us_per_round", "lat_p99_us_per_round", "lat_p999_us_per_round", "lat_max_us_per_round",
    "lat_mean_us_per_round",
    "iter_mean", "iter_p50", "iter_p99", "iter_max", "convergence_rate", "extra_stats",
    "win_p50_us", "win_p99_us", "win_max_us", "errors", "ler",
    "cpu", "threads", "qdecode_version",
)


# --------------------------------------------------------------------- bench
def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help="latency distribution (p50/p99/max, iterations) and throughput of a decoder",
        description=(
            "Sample shots of a problem, then time the decoder: one batch call (throughput) and "
            "every shot alone (latency distribution, time.perf_counter_ns, warm-up excluded). "
            "Also reports BP iteration counts, convergence and the logical error rate. Progress "
            "(one line per stage) goes to stderr when it is a terminal."
        ),
        formatter_class=HelpFormatter,
    )
    add_problem_args(p)
    g = p.add_argument_group("decoder and measurement")
    g.add_argument("--decoder", required=True,
                   help=f"decoder name or label (bposd[osd_order=4]; a sinter name qd-... too), one of: "
                        f"{QUANTUM_DECODER_NAMES}")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="decoder parameter (repeatable; default: the decoder's defaults)")
    g.add_argument("--shots", type=int, default=1000, help="shots to sample and decode (default: %(default)s)")
    g.add_argument("--seed", type=int, default=0, help="sampler seed (default: %(default)s)")
    g.add_argument("--latency-shots", type=int, help="time at most this many shots one by one (default: all)")
    g.add_argument("--warmup", type=int, default=20, help="untimed warm-up calls (default: %(default)s)")
    g.add_argument("--threads", type=int,
                   help="numba threads (numba.set_num_threads; default: numba's, NUMBA_NUM_THREADS)")
    g.add_argument("--csv", metavar="FILE",
                   help="append a result row (header written when the file is new; default: no CSV)")
    g.add_argument("--quiet", action="store_true", help="no progress on stderr (it is off anyway when not a terminal)")
    p.set_defaults(run=run)


def set_threads(threads: int | None) -> int:
    """Apply ``--threads``; return the numba thread count in effect."""
    import numba

    if threads is not None:
        if threads < 1:
            raise InputError(f"--threads must be >= 1, got {threads}")
        if threads > numba.config.NUMBA_NUM_THREADS:
            raise InputError(f"--threads {threads} exceeds the {numba.config.NUMBA_NUM_THREADS} "
                             f"threads numba started with")
        numba.set_num_threads(threads)
    return int(numba.get_num_threads())


def _fmt(x: Any, spec: str = ".3g") -> str:
    if x is None or x == "":
        return "-"
    return format(x, spec)


def format_report(report, *, label: str, desc: dict[str, Any], threads: int, cpu: str) -> str:
    tp, lat = report.throughput, report.latency
    where = (f"{desc.get('code')} d={desc.get('d')} rounds={desc.get('rounds')} {desc.get('noise')} "
             f"p={desc.get('p')} basis={desc.get('basis')}" if desc["source"] == "circuit"
             else f"{desc.get('path')}" + (f" rounds={desc['rounds']}" if desc.get("rounds") else ""))
    s = lat.summary()
    rows = [
        f"decoder      {label}",
        f"problem      {where}",
        f"machine      {cpu}, {threads} numba thread(s)",
        f"shots        {report.shots} (latency: {lat.shots} one at a time)",
        f"throughput   {tp.shots_per_s:,.0f} shots/s   {tp.us_per_shot:.3f} us/shot"
        + (f"   {tp.us_per_round:.3f} us/round" if tp.us_per_round is not None else ""),
        f"latency us   p50 {s['p50_us']:.2f}   p99 {s['p99_us']:.2f}   p99.9 {s['p999_us']:.2f}"
        f"   max {s['max_us']:.2f}   mean {s['mean_us']:.2f}",
    ]
    if "p50_us_per_round" in s:
        rows.append(f"  per round  p50 {s['p50_us_per_round']:.3f}   p99 {s['p99_us_per_round']:.3f}"
                    f"   p99.9 {s['p999_us_per_round']:.3f}   max {s['max_us_per_round']:.3f}")
    win = lat.window_summary()
    if win:
        rows.append(f"per window   p50 {win['p50_us']:.2f}   p99 {win['p99_us']:.2f}   max {win['max_us']:.2f}"
                    f"   mean {win['mean_us']:.2f} us   ({win['windows']:.0f} windows per shot)")
    its = report.iteration_stats()
    if its:
        rows.append(f"iterations   mean {its['iter_mean']:.2f}   p50 {its['iter_p50']:.0f}   p99 {its['iter_p99']:.0f}"
                    f"   max {its['iter_max']:.0f}")
    for key, st in report.extra_stats().items():
        rows.append(f"{key:<12} mean {st['mean']:.3g}   p50 {st['p50']:.3g}   p99 {st['p99']:.3g}"
                    f"   max {st['max']:.3g}")
    if report.convergence_rate is not None:
        rows.append(f"converged    {100 * report.convergence_rate:.2f}%")
    if report.errors is not None:
        rows.append(f"logical      {report.errors} errors / {report.shots} shots = {_fmt(report.ler, '.3e')}")
    if not report.consistent:
        rows.append("WARNING      1-shot predictions differ from the batch predictions (nondeterministic decoder?)")
    return "\n".join(rows)


def run(args) -> int:
    from qdecode import __version__
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.hw.latency import append_csv, cpu_model, run_bench

    shots = check_shots(args.shots)
    if args.latency_shots is not None and args.latency_shots < 1:
        raise InputError(f"--latency-shots must be >= 1, got {args.latency_shots}")
    if args.warmup < 0:
        raise InputError(f"--warmup must be >= 0, got {args.warmup}")
    from qdecode.cli.progress import Stages

    spec = DecoderSpec.parse(args.decoder, args.param)
    stages = Stages("bench", quiet=args.quiet)
    with stages.step("building the problem"):
        lp = load_problem(args)
    with stages.step(f"sampling {shots} shots (seed {args.seed})"):
        dets, obs = lp.sample(shots, args.seed)
    import numba

    from qdecode.cli.compile_notice import compile_notice

    with compile_notice(spec.label(), quiet=args.quiet):
        with stages.step(f"building {spec.label()}"):
            decoder = spec.build(lp.problem)
        before = numba.get_num_threads()
        try:
            threads = set_threads(args.threads)
            timed = shots if args.latency_shots is None else min(shots, args.latency_shots)
            with stages.step(f"timing: {args.warmup} warm-up calls, one batch of {shots} shots, "
                             f"then {timed} shots one at a time"):
                report = run_bench(decoder, dets, obs, rounds=lp.rounds, warmup=args.warmup,
                                   latency_shots=args.latency_shots)
        finally:
            numba.set_num_threads(before)  # in-process callers (tests) keep their thread count
    cpu = cpu_model()
    label = spec.label()
    print(format_report(report, label=label, desc=lp.description, threads=threads, cpu=cpu))
    if args.csv:
        d = lp.description
        row = {
            "decoder": label,
            "code": d.get("code") or os.path.basename(str(d.get("path", ""))),
            "d": d.get("d"), "rounds": lp.rounds, "noise": d.get("noise"), "p": d.get("p"),
            "basis": d.get("basis"), "seed": args.seed,
            **report.as_row(),
            "cpu": cpu, "threads": threads, "qdecode_version": __version__,
        }
        append_csv(args.csv, {k: ("" if v is None else v) for k, v in row.items()}, CSV_COLUMNS)
        print(f"qdecode bench: row appended to {args.csv}", file=sys.stderr)
    return 0
