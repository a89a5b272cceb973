"""``qdecode stream``: a long memory experiment decoded round by round against a round clock.

The experiment is a named code + noise (``--code --d --rounds --noise --p --basis``; its plan is built
on a short copy of the circuit and tiled, :func:`qdecode.sims.streaming.plan_tiled`) or a stim circuit
with detector time coordinates (``--circuit``; planned whole). Each shot is decoded one sliding window
at a time (``--window W`` rounds, ``--commit C``) by any registered syndrome decoder (``--decoder``),
every window timed (:mod:`qdecode.sims.streaming`). Reported: the reaction time (last needed round's
arrival to committed correction) p50 / p99 / max at ``--round-us`` and at periods around the sustained
one, the sustained round period (mean service per round), the logical error rate per shot and per
round with sinter's binomial bands, and the harness overhead (time outside the inner decoder's calls
/ inner decoder time). ``--json`` prints the numbers as one JSON object instead of text; ``--out``
writes every window's timing as CSV.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from qdecode.cli.help_text import QUANTUM_DECODER_NAMES, HelpFormatter
from qdecode.errors import InputError

#: Columns of the ``--out`` CSV (one row per window per shot).
OUT_COLUMNS = ("shot", "window", "need_round", "decoded", "service_ns", "inner_ns")
#: The harness overhead the issue allows: harness time <= 20 % of the inner decoder's.
OVERHEAD_TARGET = 0.2


def add_parser(sub) -> None:
    p = sub.add_parser(
        "stream",
        help="stream a long memory experiment through a sliding-window decoder: reaction times, "
             "sustained round rate, logical error rate",
        description=(
            "Sample shots of a memory experiment and decode each one window at a time, as a real-time "
            "decoder would, timing every window (time.perf_counter_ns; one untimed warm-up shot). Rounds "
            "arrive every --round-us microseconds; a window starts when its last round is in and the "
            "previous window is done. Progress goes to stderr."
        ),
        formatter_class=HelpFormatter,
    )
    g = p.add_argument_group("experiment (one of --code, --circuit)")
    g.add_argument("--code", help="code name (see `qdecode codes`), e.g. surface or bb144_12_12; needs --noise, --p")
    g.add_argument("--d", "--distance", dest="d", type=int,
                   help="distance (required for surface; default: a fixed code's own distance)")
    g.add_argument("--rounds", type=int,
                   help="syndrome rounds (required with --code; with --circuit only the per-round rate's "
                        "divisor, default: the circuit's detector time layers minus one)")
    g.add_argument("--noise", help="noise model: sd6, si1000, bb-uniform, ... (no default; required with --code)")
    g.add_argument("--p", type=float, help="physical error rate (no default; required with --code)")
    g.add_argument("--basis", default="Z", choices=["X", "Z"], help="memory basis")
    g.add_argument("--circuit", metavar="FILE",
                   help="stim circuit with DETECTOR(..., t) time coordinates (default: none)")
    g = p.add_argument_group("decoder and clock")
    g.add_argument("--decoder", default="pymatching",
                   help=f"inner decoder: name or label (uf, relay-bp[gamma0=0.1], ...), one of: "
                        f"{QUANTUM_DECODER_NAMES}")
    g.add_argument("--window", type=int,
                   help="window size W in rounds (default: 2d with --code, else 3)")
    g.add_argument("--commit", type=int,
                   help="rounds committed per window C, 1 <= C <= W (default: d with --code, else 1)")
    g.add_argument("--round-us", type=float, default=1.0, help="round period in microseconds (> 0)")
    g.add_argument("--shots", type=int, default=100, help="shots to stream (each one whole experiment)")
    g.add_argument("--seed", type=int, default=0, help="sampler seed")
    g.add_argument("--repeats", type=int, default=1,
                   help="stream every shot this many times and keep each window's least time (on a shared "
                        "machine 2 removes the scheduler's preemptions from the tail)")
    g.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    g.add_argument("--out", metavar="FILE",
                   help="write every window's timing as CSV (" + ", ".join(OUT_COLUMNS) + "; default: none)")
    g.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def _experiment(args):
    """``(plan, circuit, rounds, description)`` for ``--code`` or ``--circuit``."""
    from qdecode.sims import streaming

    if (args.code is None) == (args.circuit is None):
        raise InputError("give exactly one of --code and --circuit")
    if args.circuit is not None:
        from qdecode.problem import DecodingProblem, decoding_dem
        from qdecode.sims.model_files import read_circuit

        if args.p is not None or args.noise is not None or args.d is not None:
            raise InputError("--p, --noise and --d apply to --code, not --circuit (the circuit holds them)")
        circuit = read_circuit(args.circuit)
        W, C = args.window or 3, args.commit or 1
        plan = streaming.plan_stream(DecodingProblem.from_dem(decoding_dem(circuit)), args.decoder, W, C)
        rounds = args.rounds or max(plan.num_rounds - 1, 1)
        return plan, circuit, rounds, {"circuit": os.path.abspath(args.circuit)}
    from qdecode.sims.circuits import build_circuit

    if args.noise is None or args.p is None or args.rounds is None:
        raise InputError("--code needs --noise, --p and --rounds")
    if args.rounds < 1:
        raise InputError(f"--rounds must be >= 1, got {args.rounds}")
    build_circuit(args.code, d=args.d, rounds=1, noise=args.noise, p=args.p, basis=args.basis)  # checks the options
    d = args.d
    if d is None:
        from qdecode.codes.catalog import get_entry

        d = get_entry(args.code).d
    if d is None and (args.window is None or args.commit is None):
        raise InputError(f"code {args.code!r} has no known distance: give --window and --commit")
    W = args.window if args.window is not None else 2 * int(d)
    C = args.commit if args.commit is not None else int(d)

    def make(rounds: int):
        return build_circuit(args.code, d=args.d, rounds=rounds, noise=args.noise, p=args.p, basis=args.basis)

    plan, circuit = streaming.plan_tiled(make, args.rounds, args.decoder, W, C)
    desc = {"code": args.code, "d": d, "rounds": args.rounds, "noise": args.noise, "p": args.p, "basis": args.basis}
    return plan, circuit, args.rounds, desc


def stream_report(args) -> dict[str, Any]:
    """Run ``qdecode stream`` and return everything it reports (the ``--json`` object)."""
    from qdecode.cli.common import check_shots
    from qdecode.cli.progress import ProgressBar, Stages

    shots = check_shots(args.shots)
    if args.repeats < 1:
        raise InputError(f"--repeats must be >= 1, got {args.repeats}")
    if not args.round_us > 0:
        raise InputError(f"--round-us must be > 0, got {args.round_us}")
    for flag, v in (("--window", args.window), ("--commit", args.commit)):
        if v is not None and v < 1:
            raise InputError(f"{flag} must be >= 1, got {v}")
    if args.window is not None and args.commit is not None and args.commit > args.window:
        raise InputError(f"--commit must not exceed --window: C={args.commit} > W={args.window}")
    stages = Stages("stream", quiet=args.quiet)
    from qdecode.cli.compile_notice import compile_notice

    with stages.step("planning the windows and compiling the inner decoders"), \
            compile_notice(args.decoder, quiet=args.quiet):
        plan, circuit, rounds, desc = _experiment(args)
    from qdecode.sims.streaming import run_stream

    with ProgressBar(shots, desc="stream", unit="shot", quiet=args.quiet) as bar:
        seen = [0]

        def progress(done: int, total: int) -> None:
            bar.update(done - seen[0])
            seen[0] = done

        result = run_stream(plan, circuit, shots, args.seed, rounds=rounds, repeats=args.repeats,
                            progress=progress)
    if args.out:
        _write_out(args.out, result)
    summary = result.summary(args.round_us * 1e3)
    return {
        "experiment": desc, "decoder": plan.inner, "window": plan.W, "commit": plan.F,
        "windows_per_shot": plan.num_windows, "distinct_windows": len(plan.classes),
        "tiled_windows": plan.tiled_windows, "detectors": plan.num_detectors, "seed": args.seed,
        "repeats": args.repeats,
        **summary, "overhead_target": OVERHEAD_TARGET,
    }


def _write_out(path: str, result) -> None:
    import numpy as np

    S, K = result.service_ns.shape
    table = np.column_stack([np.repeat(np.arange(S), K), np.tile(np.arange(K), S), np.tile(result.need_round, S),
                             result.decoded.ravel().astype(np.int64), result.service_ns.ravel(),
                             result.inner_ns.ravel()])
    np.savetxt(path, table, fmt="%d", delimiter=",", header=",".join(OUT_COLUMNS), comments="")


def _band(values) -> str:
    low, best, high = values
    return f"{best:.3g} [{low:.2g}, {high:.2g}]"


def format_report(r: dict[str, Any]) -> str:
    """The text report of :func:`stream_report`'s dictionary."""
    exp = r["experiment"]
    what = (f"{exp['code']} d={exp['d']} rounds={exp['rounds']} {exp['noise']} p={exp['p']}" if "code" in exp
            else exp["circuit"])
    met = "met" if r["overhead"] <= r["overhead_target"] else "NOT met"
    rx = r["reaction"]
    backlog = " (backlog grows: period < sustained)" if rx["period_us"] < r["sustained_period_us"] else ""
    lines = [
        f"qdecode stream: {what}; windows W={r['window']} C={r['commit']}; inner {r['decoder']}",
        f"  windows per shot {r['windows_per_shot']} ({r['distinct_windows']} distinct, {r['tiled_windows']} tiled), "
        f"{r['windows_decoded_fraction']:.1%} with a nonzero syndrome",
        f"  shots {r['shots']}, errors {r['errors']}; logical error rate per shot {_band(r['ler_per_shot'])}, "
        f"per round {_band(r['ler_per_round'])}",
        f"  service {r['service_per_window_us']:.2f} us per window; "
        f"inner decoder {r['inner_per_decoded_window_us']:.2f} us "
        f"per decoded window; harness / inner = {r['overhead']:.3f} (target <= {r['overhead_target']}: {met})",
        f"  sustained round period {r['sustained_period_us']:.3f} us ({r['sustained_rounds_per_s']:.4g} rounds/s)",
        f"  reaction at {rx['period_us']:g} us per round: p50 {rx['p50_us']:.1f} us, p99 {rx['p99_us']:.1f} us, "
        f"max {rx['max_us']:.1f} us{backlog}",
        "  reaction near the sustained period:  period_us   p50_us   p99_us   max_us",
    ]
    for row in r["reaction_near_sustained"]:
        lines.append(f"  {'':35s}{row['period_us']:9.3f} {row['p50_us']:8.1f} {row['p99_us']:8.1f} "
                     f"{row['max_us']:8.1f}")
    return "\n".join(lines)


def run(args) -> int:
    report = stream_report(args)
    if args.json:
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        print(format_report(report))
    if args.out:
        print(f"qdecode stream: window timings written to {args.out}", file=sys.stderr)
    return 0
