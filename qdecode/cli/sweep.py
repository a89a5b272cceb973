"""``qdecode sweep``: run a recipe (or the embedded quick-start) or an inline sweep."""

from __future__ import annotations

import argparse
import dataclasses
import sys


def _list(kind):
    def parse(text: str):
        try:
            return [kind(x) for x in text.replace(" ", "").split(",") if x]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {kind.__name__}, got {text!r}")

    return parse


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="Monte-Carlo logical-error-rate sweep (resumable, sinter CSV)",
        description=(
            "Run a sweep recipe (TOML), the embedded quick-start when no recipe and no --code is "
            "given, or an inline sweep (--code ... --noise ... --p ... --decoder ...). Rows are "
            "appended to --out; running again resumes."
        ),
    )
    p.add_argument("recipe", nargs="?", help="recipe TOML file or embedded recipe name (default: quickstart)")
    g = p.add_argument_group("inline sweep")
    g.add_argument("--code", help="code name (see `qdecode codes`)")
    g.add_argument("--d", type=_list(int), help="distance(s), comma-separated")
    g.add_argument("--rounds", help="rounds: an int, 'd' or '<k>d' (default: the code's default, d for surface)")
    g.add_argument("--noise", help="noise model: sd6, si1000, bb-uniform, code-capacity, phenomenological")
    g.add_argument("--p", type=_list(float), help="physical error rate(s), comma-separated (bsc: crossover)")
    g.add_argument("--ebn0", type=_list(float), help="Eb/N0 in dB, comma-separated (classical codes: awgn)")
    g.add_argument("--basis", default="Z", choices=["X", "Z"], help="memory basis (default Z)")
    g.add_argument("--decoder", action="append", help="decoder name (repeatable)")
    g.add_argument("--source", choices=["uniform", "text"],
                   help="classical message source: uniform random bits (default) or held-out English text")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="decoder parameter (repeatable)")
    g.add_argument("--learned-noise", metavar="FILE.dem",
                   help="build the decoders from this DEM (e.g. from `qdecode learn-noise`) instead of the "
                        "circuit's; shots still come from the circuit; rows get json_metadata learned_noise")
    o = p.add_argument_group("stopping, output and execution (override the recipe)")
    o.add_argument("--max-shots", type=int)
    o.add_argument("--max-errors", type=int)
    o.add_argument("--seed", type=int)
    o.add_argument("--max-batch-size", type=int)
    o.add_argument("--out", help="stats CSV (sinter schema); resumed when it exists")
    o.add_argument("--plot", help="draw the threshold plot here after the sweep")
    o.add_argument("--per-round", action="store_true", default=None, help="plot per-round error rates")
    ex = o.add_mutually_exclusive_group()
    ex.add_argument("--workers", type=int, help="local worker processes (0 = run inline)")
    ex.add_argument("--dask-workers", type=int, help="start a Dask LocalCluster with N workers")
    ex.add_argument("--scheduler", help="address of a running Dask scheduler")
    o.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(run=run)


def _inline_recipe(args):
    from qdecode.sims.recipe import parse_recipe

    point = ("--p", args.p) if args.ebn0 is None else ("--ebn0", args.ebn0)
    missing = [flag for flag, v in (("--noise", args.noise), point, ("--decoder", args.decoder)) if not v]
    if missing and not (args.noise == "ge" and missing == ["--p"]):
        raise ValueError(f"an inline sweep needs {', '.join(missing)}")
    if args.ebn0 is not None and args.p is not None:
        raise ValueError("give --p or --ebn0, not both")
    decoders = args.decoder
    if args.param:
        decoders = [f"{d}[{','.join(args.param)}]" for d in decoders]
    from qdecode.sims.recipe import _is_classical

    task = {"code": args.code, "noise": args.noise, "decoders": decoders}
    if args.ebn0 is not None:
        task["ebn0"] = args.ebn0
    elif args.p is not None:
        task["p"] = args.p
    if args.source is not None:
        if not _is_classical(args.code):
            raise ValueError("--source applies to classical codes only")
        task["source"] = args.source
    if not _is_classical(args.code):
        task["basis"] = args.basis
    if args.d:
        task["d"] = args.d
    if args.rounds is not None:
        task["rounds"] = int(args.rounds) if args.rounds.isdigit() else args.rounds
    return parse_recipe({"tasks": [task], "out": "out/stats.csv"}, source="command line")


def _with_learned_noise(recipe, path: str, *, inline: bool):
    """The recipe's tasks with the decoders built from the DEM in ``path`` (checked per circuit)."""
    from qdecode.cli.predict import _read_dem
    from qdecode.sims.tasks import learned_decoding_dem

    if not inline:
        raise ValueError("--learned-noise applies to an inline sweep (--code ...), not to a recipe")
    text = str(_read_dem(path))
    tasks = []
    for task in recipe.tasks:
        if task.classical is not None:
            raise ValueError(f"--learned-noise needs a circuit; {task.classical.code!r} is a classical code")
        try:
            learned_decoding_dem(task.circuit(), text)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        tasks.append(dataclasses.replace(task, learned_dem=text))
    return dataclasses.replace(recipe, tasks=tuple(tasks))


def run(args) -> int:
    from qdecode.cli.progress import SweepProgress
    from qdecode.sims.executors import make_executor
    from qdecode.sims.recipe import load_recipe
    from qdecode.sims.store import read_rows
    from qdecode.sims.sweep import run_sweep

    if args.code and args.recipe:
        raise ValueError("give a recipe file or an inline sweep (--code ...), not both")
    if args.param and not args.code:
        raise ValueError("--param applies to an inline sweep's --decoder; put parameters in the recipe instead")
    recipe = _inline_recipe(args) if args.code else load_recipe(args.recipe)
    if args.learned_noise:
        recipe = _with_learned_noise(recipe, args.learned_noise, inline=bool(args.code))
    overrides = {
        k: v
        for k, v in (
            ("max_shots", args.max_shots),
            ("max_errors", args.max_errors),
            ("seed", args.seed),
            ("max_batch_size", args.max_batch_size),
        )
        if v is not None
    }
    options = dataclasses.replace(recipe.options, **overrides)
    if "max_batch_size" in overrides:
        options = dataclasses.replace(options, min_batch_size=min(options.min_batch_size, options.max_batch_size))
    out = args.out or recipe.out
    plot_path = args.plot or recipe.plot
    per_round = recipe.per_round if args.per_round is None else args.per_round
    workers = args.workers if args.workers is not None else recipe.workers
    progress = SweepProgress(len(recipe.tasks), quiet=args.quiet)
    try:
        with make_executor(workers=workers, dask_workers=args.dask_workers, scheduler=args.scheduler) as executor:
            totals = run_sweep(recipe.tasks, out_path=out, options=options, executor=executor, progress=progress)
    finally:
        progress.close()
    shots = sum(t.shots for t in totals)
    errors = sum(t.errors for t in totals)
    print(f"qdecode sweep: {len(totals)} tasks, {shots} shots, {errors} errors -> {out}", file=sys.stderr)
    if plot_path:
        from qdecode.cli.plot import draw

        draw(read_rows(out), out_path=plot_path, per_round=per_round)
        print(f"qdecode sweep: plot -> {plot_path}", file=sys.stderr)
    return 0
