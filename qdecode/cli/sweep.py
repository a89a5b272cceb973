"""``qdecode sweep``: run a recipe (or the embedded quick-start) or an inline sweep.

Progress goes to stderr (:class:`qdecode.cli.progress.SweepProgress`): a live bar on a terminal,
plain status lines otherwise or with ``--progress-lines``, at most one table every
``--progress-interval`` seconds, with per-task and sweep ETAs, a one-time cost estimate once
every task has recorded its first batch, and a final line; ``--quiet`` silences it. stdout is
the same with and without progress.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from qdecode.errors import InputError


def _list(kind):
    def parse(text: str):
        try:
            return [kind(x) for x in text.replace(" ", "").split(",") if x]
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {kind.__name__}, got {text!r}")

    return parse


def add_parser(sub) -> None:
    from qdecode.cli.help_text import CONFIDENCE_DECODER_NAMES, DECODER_NAMES, HelpFormatter

    p = sub.add_parser(
        "sweep",
        help="Monte-Carlo logical-error-rate sweep (resumable, sinter CSV)",
        formatter_class=HelpFormatter,
        description=(
            "Run a sweep recipe (TOML), the embedded quick-start when no recipe and no --code / --circuit / --dem "
            "is given, or an inline sweep: a catalogue code (--code ... --noise ... --p ... --decoder ...) or your "
            "own experiment (--circuit 'dir/*.stim' --decoder ...; metadata from key=value file names). Rows are "
            "appended to --out; running again resumes. Options left unset take the recipe's value."
        ),
    )
    p.add_argument("recipe", nargs="?",
                   help="recipe TOML file, or an embedded recipe's bare name (default: quickstart)")
    g = p.add_argument_group("inline sweep of a catalogue code")
    g.add_argument("--code", help="code name (see `qdecode codes`)")
    g.add_argument("--d", type=_list(int), help="distance(s), comma-separated")
    g.add_argument("--rounds", help="rounds: an int, 'd' or '<k>d' (default: the code's default, d for surface)")
    g.add_argument("--noise", help="noise model: sd6, si1000, bb-uniform, code-capacity, phenomenological")
    g.add_argument("--p", type=_list(float), help="physical error rate(s), comma-separated (bsc: crossover)")
    g.add_argument("--erasure-fraction", type=_list(float), metavar="F",
                   help="erasure conversion fraction(s) of every DEPOLARIZE2, in [0, 1], comma-separated (heralded "
                        "noise, as `qdecode circuit --erasure-fraction`; json_metadata gets F when non-zero)")
    g.add_argument("--leakage", type=_list(float), metavar="P",
                   help="leakage per qubit per two-qubit gate, heralded every round, in [0, 1), comma-separated "
                        "(json_metadata gets leak when non-zero)")
    g.add_argument("--loss", type=_list(float), metavar="P",
                   help="atom loss per qubit per two-qubit gate, heralded at the qubit's next measurement, in [0, 1), "
                        "comma-separated (json_metadata gets loss when non-zero)")
    g.add_argument("--ebn0", type=_list(float), help="Eb/N0 in dB, comma-separated (classical codes: awgn)")
    g.add_argument("--basis", default="Z", choices=["X", "Z", "XYZ"], help="memory basis (XYZ: colour code only)")
    g.add_argument("--source", choices=["uniform", "text"],
                   help="classical message source: uniform random bits (default) or held-out English text")
    u = p.add_argument_group("your own experiment")
    u.add_argument("--circuit", action="append", metavar="PATH",
                   help="stim circuit file(s) or glob pattern(s) (repeatable); file names key=value,key=value.stim "
                        "give the json_metadata as sinter's --metadata_func auto")
    u.add_argument("--dem", metavar="FILE.dem", help="sample shots from this detector error model (no circuit)")
    u.add_argument("--metadata", action="append", default=[], metavar="KEY=VALUE",
                   help="add to or override the json_metadata (repeatable; value parsed as int, float or text)")
    d = p.add_argument_group("decoding")
    d.add_argument("--decoder", action="append",
                   help=f"decoder name, optionally with parameters 'name[key=value,...]' (repeatable); one of: "
                        f"{DECODER_NAMES}. Recorded as its label, today's defaults spelled out, which sinter "
                        f"takes as a decoder name too (--custom_decoders_module_function qdecode:sinter_decoders). "
                        f"A sinter name 'qd-<label>' is recorded as written and read as sinter's rows under it "
                        f"were: the bare qd-bposd, qd-bposd-e and qd-window mean osd_key=last, qd-bplsd "
                        f"lsd_key=last,lsd_order=0,lsd_grow=10 and qd-relay-bp bits=0 (float64), not today's "
                        f"defaults (README, 'Bare qd- names')")
    d.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="decoder parameter for every --decoder that has it (repeatable); a decoder's own "
                        "[key=value] wins; a --param no decoder has is an error")
    d.add_argument("--time-budget", type=float, metavar="MS",
                   help="--decoder auto only: CPU milliseconds per shot the chosen decoder may take "
                        "(the same as --param time_budget=MS; default 1.0)")
    d.add_argument("--decoder-dem", metavar="FILE.dem",
                   help="decode with this DEM instead of the sampled model's own (json_metadata gets decoder_dem)")
    d.add_argument("--learned-noise", metavar="FILE.dem",
                   help="as --decoder-dem for a DEM from `qdecode learn-noise` (json_metadata gets learned_noise)")
    d.add_argument("--postselect", metavar="RULE",
                   help="discard shots where these detectors fire: 'coord4' (non-zero 4th coordinate, as sinter), "
                        "indices '3,17,42', or a coordinate range 'c<k>=lo:hi'")
    d.add_argument("--count-observable-error-combos", action="store_true", default=None,
                   help="count each pattern of mispredicted observables (custom_counts obs_mistake_mask=...)")
    d.add_argument("--count-detection-events", action="store_true", default=None,
                   help="count detection_events and detectors_checked in custom_counts")
    d.add_argument("--gap-histogram", action="store_true", default=None,
                   help="decode with the decoder's confidence and count shots and errors per 1 dB bin of the gap "
                        "in custom_counts: g12 = shots with gap in [12, 13) dB, g12E = errors among them; g100 = "
                        "100 dB and above (inf too), gneg = negative, gnan = unknown; json_metadata gets "
                        "gap_bins (so the strong_id differs); for `qdecode plot --y discard_vs_error` and "
                        "`qdecode threshold --max-discard` (decoders with a confidence: "
                        f"{CONFIDENCE_DECODER_NAMES})")
    d.add_argument("--latency", action="store_true", default=None,
                   help="decode in real-time mode (one shot after another, each timed: slower than a batch for "
                        "lane decoders, same answers) and count shots and errors per bin of both clocks in "
                        "custom_counts: wall<k> = shots whose decoding took (2^((k-1)/8), 2^(k/8)] ns, work<k> the "
                        "same of the decoder's work count (BP iterations, ...), <key>E the errors among them; "
                        "json_metadata gets latency_bins (so the strong_id differs); for `qdecode deadline` and "
                        "`qdecode plot --y deadline`; not with --gap-histogram")
    o = p.add_argument_group("stopping, output and execution (override the recipe)")
    o.add_argument("--max-shots", type=int, help="stop a task after this many shots (recipe default 1000000)")
    o.add_argument("--max-errors", type=int, help="stop a task after this many errors (recipe default 100)")
    o.add_argument("--seed", type=int,
                   help="root random seed, for a reproducible run (default: the recipe's seed, else the seed the "
                        "--out file's rows recorded when resuming it, else a fresh one: two runs into two files "
                        "draw different shots; every row records its seed in custom_counts as seed=<seed>@<start>)")
    o.add_argument("--max-batch-size", type=int, help="largest batch (recipe default 65536)")
    o.add_argument("--start-batch-size", "--start_batch_size", dest="min_batch_size", type=int,
                   help="first batch of each task; batch i has min(max, start * 2^i) shots (recipe default 256)")
    o.add_argument("--existing-data-filepaths", "--existing_data_filepaths", nargs="+", default=[], metavar="CSV",
                   help="stats CSVs whose rows count toward --max-shots / --max-errors (matched by strong_id) but "
                        "are not copied to --out, as sinter's flag")
    o.add_argument("--also-print-results-to-stdout", "--also_print_results_to_stdout", action="store_true",
                   help="print each recorded row to stdout too, after sinter's CSV header, as sinter's flag")
    o.add_argument("--out", help="stats CSV (sinter schema); resumed when it exists (default: the recipe's, "
                                 "out/stats.csv inline)")
    o.add_argument("--plot", help="draw the threshold plot here after the sweep")
    o.add_argument("--per-round", action="store_true", default=None, help="plot per-round error rates")
    ex = o.add_mutually_exclusive_group()
    ex.add_argument("--workers", type=int,
                    help="local worker processes, >= 0 (0 = run inline; default: all cores; more than the cores "
                         "runs, with a warning)")
    ex.add_argument("--dask-workers", type=int, help="start a Dask LocalCluster with N (>= 1) workers")
    ex.add_argument("--scheduler", help="address of a running Dask scheduler")
    o.add_argument("--quiet", action="store_true",
                   help="no progress output and no warnings (an OSD order clamped to the code's dimension, a "
                        "truncated CSV line cut...); errors still show (stdout never has any)")
    o.add_argument("--progress-lines", action="store_true",
                   help="plain status lines instead of the live bar even on a terminal (without a terminal, "
                        "e.g. a batch job's log, they are the default)")
    o.add_argument("--progress-interval", type=float, default=30.0, metavar="SECONDS",
                   help="at most one status table (per task: shots, errors, time per shot, ETA) every SECONDS, "
                        "besides the one at the first batch, the cost estimate and the final line (default: 30)")
    p.set_defaults(run=run)


def _parse_metadata(items: list[str]) -> dict:
    from qdecode.sims.model_files import parse_metadata_value

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--metadata {item!r} must look like key=value")
        out[key.strip()] = parse_metadata_value(value.strip())
    return out


def _task_options(args) -> dict:
    """Recipe task keys shared by every inline sweep."""
    task: dict = {}
    if args.postselect is not None:
        task["postselect"] = args.postselect
    if args.count_observable_error_combos:
        task["count_observable_error_combos"] = True
    if args.count_detection_events:
        task["count_detection_events"] = True
    if args.gap_histogram:
        task["gap_histogram"] = True
    if args.latency:
        task["latency"] = True
    if args.metadata:
        task["metadata"] = _parse_metadata(args.metadata)
    if args.decoder_dem:
        task["decoder_dem"] = args.decoder_dem
    return task


def _check_confidence(decoders) -> None:
    """``--gap-histogram`` needs decoders with a confidence: refused in one line before anything is built."""
    from qdecode.decoders.confidence import no_confidence_error
    from qdecode.decoders.registry import get_entry

    for dec in decoders:
        if not get_entry(dec.name).has_confidence:
            raise InputError(f"--gap-histogram: {no_confidence_error(dec.name)}")


def _heralded_flags(args) -> list[tuple[str, list[float] | None]]:
    """The heralded-noise flags and their lists (None when not given), for the checks of an inline sweep."""
    return [("--erasure-fraction", args.erasure_fraction), ("--leakage", args.leakage), ("--loss", args.loss)]


def _heralded_options(args) -> dict:
    """The task keys of the heralded-noise flags given, each value checked under its flag's name."""
    from qdecode.sims.heralded_noise import check_erasure_fraction, check_heralded_rate

    out = {}
    for (flag, values), key in zip(_heralded_flags(args), ("erasure_fraction", "leakage", "loss")):
        if values is None:
            continue
        if not values:
            raise InputError(f"{flag} needs at least one value")
        check = check_erasure_fraction if key == "erasure_fraction" else check_heralded_rate
        for value in values:
            check(value, flag)
        out[key] = values
    return out


def _inline_recipe(args):
    from qdecode.cli.common import time_budget_params
    from qdecode.sims.recipe import compose_decoders, is_classical, parse_recipe

    if not args.decoder:
        raise InputError("an inline sweep needs --decoder")
    decoders = compose_decoders(args.decoder, args.param + time_budget_params(args.time_budget, args.decoder))
    if args.gap_histogram:
        _check_confidence(decoders)
        if args.latency:
            raise InputError("--latency and --gap-histogram cannot be combined: the timed decoding path gives no "
                             "confidence")
    if args.circuit or args.dem:
        catalogue = [f for f, v in (("--code", args.code), ("--d", args.d), ("--rounds", args.rounds),
                                    ("--noise", args.noise), ("--p", args.p), ("--ebn0", args.ebn0),
                                    ("--source", args.source), *_heralded_flags(args)) if v is not None]
        if catalogue:
            raise InputError(f"{catalogue[0]} describes a catalogue code; with --circuit / --dem put such facts "
                             f"in the file name (d=5,p=0.001.stim) or --metadata")
        if args.circuit and args.dem:
            raise InputError("give --circuit or --dem, not both")
        task = {"decoders": decoders, **_task_options(args)}
        if args.circuit:
            task["circuit"] = args.circuit
        else:
            task["dem"] = args.dem
        return parse_recipe({"tasks": [task], "out": "out/stats.csv"}, source="command line")
    point = ("--p", args.p) if args.ebn0 is None else ("--ebn0", args.ebn0)
    missing = [flag for flag, v in (("--noise", args.noise), point) if not v]
    if missing and not (args.noise == "ge" and missing == ["--p"]):
        raise InputError(f"an inline sweep needs {', '.join(missing)}")
    if args.ebn0 is not None and args.p is not None:
        raise InputError("give --p or --ebn0, not both")
    task = {"code": args.code, "noise": args.noise, "decoders": decoders, **_task_options(args)}
    if args.ebn0 is not None:
        task["ebn0"] = args.ebn0
    elif args.p is not None:
        task["p"] = args.p
    if args.source is not None:
        if not is_classical(args.code):
            raise InputError("--source applies to classical codes only")
        task["source"] = args.source
    if not is_classical(args.code):
        task["basis"] = args.basis
        task.update(_heralded_options(args))
    else:
        for flag, value in _heralded_flags(args):
            if value is not None:
                raise InputError(f"{flag} applies to circuits of quantum codes, not to the classical code "
                                 f"{args.code!r}")
    if args.d:
        task["d"] = args.d
    if args.rounds is not None:
        task["rounds"] = int(args.rounds) if args.rounds.isdigit() else args.rounds
    return parse_recipe({"tasks": [task], "out": "out/stats.csv"}, source="command line")


def _with_learned_noise(recipe, path: str, *, inline: bool):
    """The recipe's tasks with the decoders built from the DEM in ``path`` (checked per sampled model)."""
    from qdecode.sims.model_files import read_dem
    from qdecode.sims.tasks import describe_task

    if not inline:
        raise InputError("--learned-noise applies to an inline sweep (--code / --circuit / --dem), not to a recipe")
    text = str(read_dem(path))
    tasks = []
    for task in recipe.tasks:
        if task.classical is not None:
            raise InputError(f"--learned-noise needs a circuit; {task.classical.code!r} is a classical code")
        task = dataclasses.replace(task, decoder_dem=text, decoder_dem_key="learned_noise")
        try:
            describe_task(task)
        except ValueError as exc:
            raise InputError(f"{path}: {exc}") from None
        tasks.append(task)
    return dataclasses.replace(recipe, tasks=tuple(tasks))


#: Flags that override the recipe's stopping and batching options: (flag, SweepOptions field, least value).
_OPTION_FLAGS = (("--max-shots", "max_shots", 1), ("--max-errors", "max_errors", 1), ("--seed", "seed", 0),
                 ("--max-batch-size", "max_batch_size", 1), ("--start-batch-size", "min_batch_size", 1))


def _options(base, args):
    """The recipe's :class:`~qdecode.sims.sweep.SweepOptions` with the command-line overrides.

    Each flag is checked here, so a bad value is reported under the flag the user typed
    (``--max-batch-size``), not under a field name such as ``min_batch_size`` that has no
    flag. ``--max-batch-size`` below the recipe's first batch size lowers that too.
    """
    overrides = {}
    for flag, field, least in _OPTION_FLAGS:
        value = getattr(args, field)
        if value is None:
            continue
        if value < least:
            raise InputError(f"{flag} must be >= {least}, got {value}")
        overrides[field] = value
    if "max_batch_size" in overrides and "min_batch_size" not in overrides:
        overrides["min_batch_size"] = min(base.min_batch_size, overrides["max_batch_size"])
    if "min_batch_size" in overrides and "max_batch_size" not in overrides:
        overrides["max_batch_size"] = max(base.max_batch_size, overrides["min_batch_size"])
    if overrides.get("min_batch_size", 1) > overrides.get("max_batch_size", overrides.get("min_batch_size", 1)):
        raise InputError(f"--start-batch-size {overrides['min_batch_size']} exceeds --max-batch-size "
                         f"{overrides['max_batch_size']}")
    return dataclasses.replace(base, **overrides)


def _existing_rows(paths: list[str], out: str) -> list:
    """The rows of ``--existing-data-filepaths`` (never the output file itself: it would count twice)."""
    from qdecode.sims.store import read_rows

    rows = []
    for path in paths:
        if not os.path.exists(path):
            raise InputError(f"--existing-data-filepaths {path}: no such file")
        if os.path.exists(out) and os.path.samefile(path, out):
            raise InputError(f"--existing-data-filepaths {path}: that is --out itself, whose rows already count")
        rows += read_rows(path)
    return rows


class _StdoutRows:
    """A progress callback that prints each recorded row to stdout (sinter's CSV header first),
    then passes the call on (``--also-print-results-to-stdout``)."""

    def __init__(self, then):
        from qdecode.sims.store import CSV_HEADER

        self.then = then
        print(CSV_HEADER, flush=True)

    def __call__(self, progress) -> None:
        if progress.row is not None:
            print(progress.row.to_csv_line(), flush=True)
        self.then(progress)


def _announce(line: str) -> None:
    """A decision the sweep made before sampling (its seed, ``auto``'s choice), on stderr."""
    print(f"qdecode sweep: {line}", file=sys.stderr, flush=True)


def _check_progress_interval(seconds: float) -> None:
    """``--progress-interval`` is a number of seconds >= 0 (0: a table after every batch)."""
    if not seconds >= 0:  # also refuses nan
        raise InputError(f"--progress-interval must be >= 0 seconds, got {seconds:g}")


def _check_workers(args) -> None:
    """``--workers`` counts processes (0 runs inline); ``--dask-workers`` starts at least one."""
    if args.workers is not None and args.workers < 0:
        raise InputError(f"--workers must be >= 0 (0 runs inline, in this process), got {args.workers}")
    if args.dask_workers is not None and args.dask_workers < 1:
        raise InputError(f"--dask-workers must be >= 1, got {args.dask_workers}")


def _warn_oversubscribed(workers: int | None, source: str) -> None:
    """One warning line when more worker processes are asked for than this machine has cores.

    Still runs (the user may know better, e.g. a machine shared with I/O-bound work), but
    processes beyond the cores only compete for them and multiply memory use.
    """
    cores = os.cpu_count() or 1
    if workers is not None and workers > cores:
        print(f"qdecode sweep: warning: {workers} worker processes ({source}) on a machine with {cores} cores; "
              f"running them anyway (the extra ones only compete for the cores)", file=sys.stderr)


def run(args) -> int:
    from qdecode.cli.progress import SweepProgress
    from qdecode.sims.executors import make_executor
    from qdecode.sims.recipe import load_recipe
    from qdecode.sims.store import read_rows
    from qdecode.sims.sweep import run_sweep

    inline = bool(args.code or args.circuit or args.dem)
    if inline and args.recipe:
        raise InputError("give a recipe file or an inline sweep (--code / --circuit / --dem), not both")
    if not inline:
        used = [f for f, v in (("--decoder", args.decoder), ("--param", args.param), ("--metadata", args.metadata),
                               ("--postselect", args.postselect), ("--decoder-dem", args.decoder_dem),
                               ("--count-observable-error-combos", args.count_observable_error_combos),
                               ("--count-detection-events", args.count_detection_events),
                               ("--gap-histogram", args.gap_histogram), ("--latency", args.latency),
                               ("--time-budget", args.time_budget is not None),
                               *((flag, values is not None) for flag, values in _heralded_flags(args))) if v]
        if used:
            raise InputError(f"{used[0]} applies to an inline sweep (--code / --circuit / --dem); "
                             f"put it in the recipe's task table instead")
    if args.learned_noise and args.decoder_dem:
        raise InputError("give --learned-noise or --decoder-dem, not both")
    _check_workers(args)
    _check_progress_interval(args.progress_interval)
    recipe = _inline_recipe(args) if inline else load_recipe(args.recipe)
    if args.learned_noise:
        recipe = _with_learned_noise(recipe, args.learned_noise, inline=inline)
    options = _options(recipe.options, args)
    out = args.out or recipe.out
    plot_path = args.plot or recipe.plot
    if plot_path:  # an image format matplotlib cannot write is refused before the sweep, not after it
        from qdecode.sims.plots import figure_path

        figure_path(plot_path)
    per_round = recipe.per_round if args.per_round is None else args.per_round
    workers = args.workers if args.workers is not None else recipe.workers
    if args.dask_workers is not None:
        _warn_oversubscribed(args.dask_workers, "--dask-workers")
    elif args.scheduler is None:
        _warn_oversubscribed(workers, "--workers" if args.workers is not None else "the recipe's workers")
    existing = _existing_rows(args.existing_data_filepaths, out)
    from qdecode import compile_cache

    if not args.quiet and compile_cache.is_empty():
        # the workers compile silently inside their first batches; say so before the first status line
        _announce(f"the compile cache ({compile_cache.active}) is empty: each decoder's first batch compiles its "
                  "kernels first (`qdecode warmup` compiles them ahead; benchmarks/README.md, 'The first run')")
    progress = SweepProgress(len(recipe.tasks), quiet=args.quiet, interval=args.progress_interval,
                             lines=args.progress_lines)
    callback = _StdoutRows(progress) if args.also_print_results_to_stdout else progress
    try:
        with make_executor(workers=workers, dask_workers=args.dask_workers, scheduler=args.scheduler) as executor:
            totals = run_sweep(recipe.tasks, out_path=out, options=options, executor=executor, progress=callback,
                               existing_rows=existing, announce=None if args.quiet else _announce)
    finally:
        progress.close()
    shots = sum(t.shots for t in totals)
    errors = sum(t.errors for t in totals)
    print(f"qdecode sweep: {len(totals)} tasks, {shots} shots, {errors} errors -> {out}", file=sys.stderr)
    if plot_path:
        from qdecode.cli.plot import draw

        draw(read_rows(out), out_path=plot_path, per_round=per_round)
        print(f"qdecode sweep: plot -> {figure_path(plot_path)}", file=sys.stderr)
    return 0
