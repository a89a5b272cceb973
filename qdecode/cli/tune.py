"""``qdecode tune relay-bp``: IBM's tuning recipe for Relay-BP's memory strengths.

Samples shots of a problem (``--code ... --noise --p`` or ``--dem``, as ``qdecode bench``), sweeps
``gamma0`` with Mem-BP, then searches the gamma interval ends on the shots Mem-BP fails
(:mod:`qdecode.decoders.relay_tuning`). Prints both stages and the best parameters as ready-to-use
``--param`` flags; ``--json`` writes them to a file.

Progress (a bar over the evaluations and one line per evaluation) goes to stderr when it is a
terminal and ``--quiet`` is not given; stdout holds only the result.
"""

from __future__ import annotations

import json

from qdecode.cli.common import add_problem_args, check_shots, load_problem
from qdecode.cli.help_text import HelpFormatter
from qdecode.errors import InputError


def _floats(text: str, flag: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{flag} must be a comma-separated list of numbers, got {text!r}") from None
    if not vals:
        raise InputError(f"{flag} is empty")
    return vals


def add_parser(sub) -> None:
    p = sub.add_parser(
        "tune",
        help="tune a decoder's parameters on sampled shots (relay-bp: IBM's gamma recipe)",
        description=(
            "relay-bp: sweep gamma0 with Mem-BP on sampled shots, then search (gamma_lo, gamma_hi) on the "
            "shots Mem-BP fails with Relay-BP (stop_after=1). Deterministic: same seeds, same answer."
        ),
        formatter_class=HelpFormatter,
    )
    p.add_argument("decoder", choices=["relay-bp"], help="decoder to tune")
    add_problem_args(p)
    g = p.add_argument_group("tuning")
    g.add_argument("--shots", type=int, default=2000, help="shots to sample (default: %(default)s)")
    g.add_argument("--seed", type=int, default=0, help="sampler seed (default: %(default)s)")
    g.add_argument("--gamma0-grid", default=None, help="comma-separated gamma0 values (default: 21 points in [0, 1])")
    g.add_argument("--lo-grid", default=None, help="comma-separated gamma_lo grid (default -0.5,-0.35,-0.2,-0.1,0)")
    g.add_argument("--hi-grid", default=None, help="comma-separated gamma_hi grid (default 0.3,0.5,0.7,0.9,1.1)")
    g.add_argument("--budget", type=int, default=60,
                   help="Relay-BP evaluations in the interval search (default: %(default)s)")
    g.add_argument("--legs", type=int, default=100, help="relay legs during the search (default: %(default)s, as IBM)")
    g.add_argument("--pre-iter", type=int, default=80, help="Mem-BP / leg-0 iterations (default: %(default)s)")
    g.add_argument("--leg-iter", type=int, default=60, help="iterations per later leg (default: %(default)s)")
    g.add_argument("--threads", type=int, help="decoding threads (default: numba's thread count)")
    g.add_argument("--json", metavar="FILE",
                   help="write the sweep, the trials and the best parameters as JSON (default: no file)")
    g.add_argument("--quiet", action="store_true", help="no progress on stderr (it is off anyway when not a terminal)")
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.decoders import relay_tuning as rt

    shots = check_shots(args.shots)
    for flag, v, lo in (("--budget", args.budget, 1), ("--legs", args.legs, 0), ("--pre-iter", args.pre_iter, 1),
                        ("--leg-iter", args.leg_iter, 1)):
        if v < lo:
            raise InputError(f"{flag} must be >= {lo}, got {v}")
    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads must be >= 1, got {args.threads}")
    grids = {
        "gamma0_grid": _floats(args.gamma0_grid, "--gamma0-grid") if args.gamma0_grid else rt.DEFAULT_GAMMA0_GRID,
        "lo_grid": _floats(args.lo_grid, "--lo-grid") if args.lo_grid else rt.DEFAULT_LO_GRID,
        "hi_grid": _floats(args.hi_grid, "--hi-grid") if args.hi_grid else rt.DEFAULT_HI_GRID,
    }
    from qdecode.cli.progress import ProgressBar, Stages

    stages = Stages("tune", quiet=args.quiet)
    with stages.step("building the problem"):
        lp = load_problem(args)
    with stages.step(f"sampling {shots} shots (seed {args.seed})"):
        dets, obs = lp.sample(shots, args.seed)
    if obs is None or obs.shape[1] == 0:
        raise InputError("tuning needs observables to score logical failures; this problem has none")

    bar = ProgressBar(len(grids["gamma0_grid"]) + args.budget, desc="tune relay-bp", unit="eval", quiet=args.quiet)

    def progress(stage: str, ev) -> None:
        params = ", ".join(f"{k}={v:g}" for k, v in ev.params.items())
        bar.write(f"  {stage:<8} {params:<36} failures {ev.failures:>5} / {ev.shots}   iterations {ev.iterations}")
        bar.update()

    with bar:
        res = rt.tune_relay(lp.problem, dets, obs, budget=args.budget, legs=args.legs, pre_iter=args.pre_iter,
                            leg_iter=args.leg_iter, threads=args.threads, progress=progress, **grids)
    print("stage 1: Mem-BP gamma0 sweep (logical failures / shots)")
    for ev in res.gamma0_sweep:
        mark = "  <- best" if ev.params["gamma0"] == res.best_gamma0 else ""
        print(f"  gamma0 {ev.params['gamma0']:<6g} {ev.failures:>5} / {ev.shots}   iterations {ev.iterations}{mark}")
    print(f"stage 2: interval search on the {res.train_shots.size} shots Mem-BP(gamma0={res.best_gamma0:g}) fails")
    if res.best_interval is None:
        print("  Mem-BP fails no shot: nothing to tune (sample more shots or a higher p)")
    else:
        best = min(res.interval_trials, key=lambda e: e.key)
        print(f"  {len(res.interval_trials)} trials; best [{best.params['gamma_lo']:g}, {best.params['gamma_hi']:g}]: "
              f"{best.failures} / {best.shots} still fail")
    params = res.best_params()
    print("best: " + " ".join(f"--param {k}={v:g}" for k, v in params.items()))
    if args.json:
        doc = {
            "problem": lp.description, "shots": shots, "seed": args.seed, "best": params,
            "gamma0_sweep": [dataclass_row(e) for e in res.gamma0_sweep],
            "train_shots": int(res.train_shots.size),
            "interval_trials": [dataclass_row(e) for e in res.interval_trials],
            "search": {"legs": args.legs, "pre_iter": args.pre_iter, "leg_iter": args.leg_iter, "stop_after": 1,
                       "budget": args.budget},
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    return 0


def dataclass_row(ev) -> dict:
    return {**ev.params, "failures": ev.failures, "shots": ev.shots, "iterations": ev.iterations}
