"""``qdecode plot`` and ``qdecode threshold``: figures and threshold estimates from stats CSVs.

Both read one or more sinter-format CSVs (ours or ``sinter collect``'s), merge rows
by strong_id, keep the rows that pass every ``--filter``, and group curves by decoder
label plus every metadata key other than ``d``, ``p`` and the rounds that varies across
the file (``code``, ``noise``, ``b``...), so X and Z memories or two noise models never
pool into one curve. ``plot`` then separates curves by the axis keys (``d``, ``p``) that
are not on the x axis: one curve per distance against p, one per p against d.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Mapping, Sequence

from qdecode.errors import InputError

_AXIS_KEYS = {"d", "p", "r", "rounds", "ebn0", "n", "k"}
_SCALES = ("linear", "log")
DEFAULT_FACTOR = 1000.0
DEFAULT_DPI = 150
DEFAULT_FIG_SIZE = (1050, 750)  # pixels: 7 x 5 inches at 150 dpi


def _positive_int(flag: str):
    """An argparse type: a positive integer, else a one-line error naming ``flag``."""
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{flag} takes positive integers, got {text!r}")
        return value

    return parse


def add_plot_parser(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="logical error rate (or discard rate, or a custom count) vs p or d, one curve per distance and decoder",
        description=(
            "Plot a rate against a metadata key with sinter's binomial likelihood bands: by default the logical "
            "error rate (per shot, or per round with --per-round) against p, one curve per distance and decoder, "
            "with the threshold estimate marked."
        ),
    )
    p.add_argument("csv", nargs="+", help="stats CSV file(s) (sinter format; rows with one strong_id are summed)")
    p.add_argument("--out", required=True,
                   help="image file (.png, .pdf, .svg); a name without extension gets .png; required")
    p.add_argument("--x", metavar="KEY", dest="x_key",
                   help="json_metadata key on the x axis (default: p, or ebn0 when the rows have ebn0)")
    p.add_argument("--y", default="error_rate", metavar="QUANTITY",
                   help="error_rate = errors / (shots - discards); discard_rate = discards / shots; KEY (or "
                        "custom:KEY), a custom_counts key = custom_counts[KEY] / (shots - discards), e.g. "
                        "not_converged or obs_mistake_mask=E_; detection_events = detection_events / "
                        "detectors_checked when the rows record detectors_checked (--count-detection-events); "
                        "NUM/DEN = custom_counts[NUM] / custom_counts[DEN]. A rate is drawn with sinter's "
                        "binomial band; when a count exceeds its shots in some row (bit_errors, detection_events "
                        "without detectors_checked) every point is the mean count per kept shot with its Poisson "
                        "band; discard_vs_error = post-selection on the decoder's gap (rows of a sweep with "
                        "--gap-histogram): the logical error rate among kept shots against the fraction of shots "
                        "discarded, one point per gap threshold (1 dB bins), one curve per row; x is the discard "
                        "rate (log unless --xscale linear; the 0%% point is then a grey line), --x does not apply; "
                        "deadline = the logical error rate under a deadline t, P(late or wrong), against t (rows of a "
                        "sweep with --latency), one curve per row, p50 and p99 marked; --x wall (us, the default) or "
                        "--x work (the decoder's work count) picks the clock (default: error_rate)")
    p.add_argument("--policy", default="miss", metavar="{miss,anytime}",
                   help="--y deadline only: a late shot fails (miss), or takes the decoder's best answer so far "
                        "(anytime: rows whose decoder records the trail of its answers: bp, relay-bp) (default: miss)")
    p.add_argument("--per-round", action="store_true",
                   help="convert rates to per round, 1/2 - 1/2 (1 - 2 P_shot)^(1/r), with the r or rounds "
                        "metadata (default: per shot; not for discard_rate)")
    p.add_argument("--group", metavar="KEY[,KEY]",
                   help="comma-separated metadata keys that separate curves, besides the decoder and the d/p "
                        "not on the x axis (default: every metadata key except d, p, r, rounds, ebn0, n, k that "
                        "varies)")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="keep rows whose json_metadata[KEY] equals VALUE (parsed as int, then float, then "
                        "string); decoder=NAME matches the decoder column; repeatable: different keys must "
                        "all match, values of one key are alternatives (default: keep all rows)")
    p.add_argument("--xscale", metavar="{linear,log}", help="x axis scale (default: log for p, linear otherwise)")
    p.add_argument("--yscale", default="log", metavar="{linear,log}", help="y axis scale (default: log)")
    p.add_argument("--xmin", type=float, help="lower x limit (default: automatic)")
    p.add_argument("--xmax", type=float, help="upper x limit (default: automatic)")
    p.add_argument("--ymin", type=float, help="lower y limit (default: automatic)")
    p.add_argument("--ymax", type=float, help="upper y limit (default: automatic)")
    p.add_argument("--highlight-max-likelihood-factor", type=float, default=DEFAULT_FACTOR, metavar="F",
                   help="shade, around every point, the rates whose binomial likelihood is within a factor F "
                        "of the best; 1 for no band (default: 1000, as sinter)")
    p.add_argument("--fit", "--line_fits", "--line-fits", dest="fit", action="store_true",
                   help="draw a least-squares line through every curve and print its parameters to stderr "
                        "(--line_fits is sinter's name for it): "
                        "against d, ln LER linear in d, LER = A / Lambda^((d+1)/2) (prints Lambda); against a log "
                        "x (p), a power law LER = A p^k (prints k); against another linear x, ln LER linear in x; "
                        "points weighted by errors / (1 - rate), the inverse binomial variance of ln rate, points "
                        "without errors left out (default: no fit)")
    p.add_argument("--no-threshold", action="store_true",
                   help="do not estimate and mark the threshold (default: marked when x is p and y is "
                        "error_rate, and only if the estimate lies inside the data's p range)")
    p.add_argument("--title", help="figure title (default: none)")
    p.add_argument("--subtitle", metavar="TEXT",
                   help="text above the axes; {common} in it stands for what every drawn row shares, as in "
                        "sinter; '' for none (default: {common}: the code, noise, basis, rounds and any other "
                        "json_metadata value that is the same in every drawn row)")
    p.add_argument("--dpi", type=_positive_int("--dpi"), default=DEFAULT_DPI,
                   help=f"resolution of a bitmap file, dots per inch (default: {DEFAULT_DPI})")
    p.add_argument("--fig_size", "--fig-size", dest="fig_size", nargs=2, type=_positive_int("--fig_size"),
                   metavar=("W", "H"), default=list(DEFAULT_FIG_SIZE),
                   help="figure width and height in pixels at --dpi, as sinter; a legend too long for the axes "
                        f"widens it (default: {list(DEFAULT_FIG_SIZE)})")
    p.add_argument("--show", action="store_true",
                   help="also show the figure in a window after writing --out (needs an interactive matplotlib "
                        "backend; default: only write the file)")
    p.set_defaults(run=run_plot)


def add_threshold_parser(sub) -> None:
    p = sub.add_parser(
        "threshold",
        help="threshold estimate with interval, pairwise crossings, suppression factor Lambda",
        description=(
            "Finite-size-scaling threshold fit with a 95% bootstrap percentile interval, crossings of adjacent "
            "distances, and Lambda = eps_d / eps_(d+2) below threshold."
        ),
    )
    p.add_argument("csv", nargs="+", help="stats CSV file(s)")
    p.add_argument("--per-round", action="store_true",
                   help="use per-round logical error rates, in the threshold fits and in the --max-discard table "
                        "(default: per shot)")
    p.add_argument("--group", metavar="KEY[,KEY]",
                   help="comma-separated metadata keys that separate curves (default: every metadata key except "
                        "d, p, r, rounds, ebn0, n, k that varies)")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="keep rows whose json_metadata[KEY] equals VALUE, as for `qdecode plot` (default: all rows)")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples (default: 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap resampling (default: 0)")
    p.add_argument("--max-discard", type=float, metavar="FRACTION",
                   help="instead of the threshold: per row with a gap histogram (--gap-histogram sweeps), the "
                        "logical error rate among kept shots when the shots with the smallest gaps are discarded, "
                        "at the largest gap threshold that discards at most FRACTION of the shots (e.g. 0.01), "
                        "with its binomial interval (likelihood within 1000x of the max, as sinter) and the "
                        "fraction actually discarded: bins are 1 dB wide, so it is at or below FRACTION")
    p.set_defaults(run=run_threshold)


# ---------------------------------------------------------------------------------------
# Reading and filtering
# ---------------------------------------------------------------------------------------


def _read(paths: Sequence[str], y: str | None = None, filters: Sequence[str] = ()):
    """The rows of every CSV that pass the ``--filter`` ``filters``, summed per strong_id (first-seen order).

    ``y``: the plotted quantity; its custom counts are checked here
    (:func:`~qdecode.sims.plots.check_custom_key`), on the rows as read and filtered, because
    summing rows drops counts that stayed 0 (sinter's Counter addition) and loses which pooled
    rows carried a count. (Filters match metadata and the decoder, which every row of one
    strong_id shares, so filtering before or after summing keeps the same tasks.)
    """
    from qdecode.cli.common import check_input_file
    from qdecode.sims.plots import check_custom_key
    from qdecode.sims.store import merge_rows, read_rows

    rows = []
    for path in paths:
        rows.extend(read_rows(check_input_file(path)))
    if not rows:
        raise InputError(f"no stats rows in {', '.join(paths)}")
    rows = apply_filters(rows, filters)
    if y is not None:
        check_custom_key(rows, y)
    return list(merge_rows(rows).values())


def parse_filter_value(text: str) -> Any:
    """``text`` as an int, else a float, else the string itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_filters(specs: Sequence[str]) -> dict[str, list[Any]]:
    """``["d=5", "d=7", "b=X"]`` -> ``{"d": [5, 7], "b": ["X"]}``; the decoder value stays a string.

    Raises:
        ValueError: a spec without ``=`` or with an empty key.
    """
    filters: dict[str, list[Any]] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--filter expects KEY=VALUE (e.g. d=5 or decoder=pymatching), got {spec!r}")
        key = key.strip()
        filters.setdefault(key, []).append(value if key == "decoder" else parse_filter_value(value))
    return filters


def _field(row, key: str) -> Any:
    if key == "decoder":
        return row.decoder
    md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
    return md.get(key)


def apply_filters(rows: Iterable, specs: Sequence[str]) -> list:
    """The rows whose every filtered key equals one of its ``--filter`` values.

    Raises:
        ValueError: a malformed spec, or no row left (the message lists the values present).
    """
    rows = list(rows)
    filters = parse_filters(specs)
    kept = [r for r in rows if all(any(_field(r, k) == v for v in vs) for k, vs in filters.items())]
    if filters and not kept:
        present = "; ".join(
            f"{k} takes {', '.join(sorted({repr(_field(r, k)) for r in rows}))}" for k in filters
        )
        raise InputError(f"no rows match --filter {' '.join(specs)} (in the files, {present})")
    return kept


# ---------------------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------------------


def group_keys_for(rows: Iterable, explicit: str | None = None) -> tuple[str, ...]:
    """``("decoder", *keys)``: the explicit keys, or every metadata key that varies (except d, p, rounds)."""
    if explicit:
        return _unique(("decoder",) + tuple(k.strip() for k in explicit.split(",") if k.strip()))
    values: dict[str, set] = {}
    rows = list(rows)
    for row in rows:
        meta = row.json_metadata if isinstance(row.json_metadata, dict) else {}
        for k, v in meta.items():
            if k not in _AXIS_KEYS:
                values.setdefault(k, set()).add(repr(v))
    varying = tuple(sorted(k for k, v in values.items()
                           if len(v) > 1 or any(k not in (r.json_metadata or {}) for r in rows)))
    return ("decoder",) + varying


def _unique(keys: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))


def _has_key(rows: Iterable, key: str) -> bool:
    return any(isinstance(r.json_metadata, Mapping) and key in r.json_metadata for r in rows)


def classical_references(rows) -> list:
    """Normal-approximation curves (one per (n, k)), the ML lower bound (max over decoders of
    ``ml_lb / shots`` at each (code, Eb/N0)) and the published curves of the rows' codes
    (:mod:`qdecode.sims.published_curves`, e.g. AFF3CT's) for block-error plots, as
    :class:`~qdecode.sims.plots.Reference` (label, xs, ys, kind, group): the kind names the bound,
    the group ``{"code": ...}`` ties it to its code's marker."""
    import numpy as np

    from qdecode.sims.finite_length import na_bler
    from qdecode.sims.plots import Reference
    from qdecode.sims.published_curves import published_curves_for

    refs = []
    by_code: dict[tuple, dict[float, float]] = {}
    xs_all: dict[tuple, list[float]] = {}
    for row in rows:
        md = row.json_metadata if isinstance(row.json_metadata, dict) else {}
        if md.get("ebn0") is None or md.get("noise") != "awgn" or not md.get("n") or not md.get("k"):
            continue
        key = (md.get("code"), int(md["n"]), int(md["k"]))
        x = float(md["ebn0"])
        xs_all.setdefault(key, []).append(x)
        kept = row.shots - row.discards
        if kept > 0 and (row.custom_counts or {}).get("ml_lb"):
            rate = row.custom_counts["ml_lb"] / kept
            pts = by_code.setdefault(key, {})
            pts[x] = max(pts.get(x, 0.0), rate)
    for (code, n, k), xs in sorted(xs_all.items(), key=lambda t: str(t[0])):
        grid = np.linspace(min(xs) - 0.25, max(xs) + 0.25, 60)
        group = {"code": code}
        refs.append(Reference(f"normal approximation ({code}, n={n}, k={k})", list(grid), list(na_bler(n, k, grid)),
                              "normal approximation", group))
        if (code, n, k) in by_code:
            pts = sorted(by_code[(code, n, k)].items())
            refs.append(Reference(f"ML lower bound ({code})", [p[0] for p in pts], [p[1] for p in pts],
                                  "ML lower bound", group))
        for curve in published_curves_for(str(code)):
            refs.append(Reference(f"{curve.label} ({code})", list(curve.ebn0), list(curve.fer), curve.label, group))
    return refs


def _threshold_estimates(rows, keys: tuple, per_round: bool):
    """The threshold estimate of every group (keys without d/p), or None when rows have no distance."""
    from qdecode.sims.threshold import threshold_report

    if not _has_key(rows, "d"):
        return None
    keys = tuple(k for k in keys if k not in ("d", "p"))
    reports = threshold_report(rows, per_round=per_round, group_keys=keys)
    return [r.threshold for r in reports.values() if r.threshold is not None] or None


def draw(rows, *, out_path: str, per_round: bool = False, threshold: bool = True, group: str | None = None,
         title=None, x_key: str | None = None, xscale: str | None = None, options=None,
         highlight_max_likelihood_factor: float = DEFAULT_FACTOR, subtitle: str | None = None,
         dpi: int = DEFAULT_DPI, fig_size: Sequence[int] = DEFAULT_FIG_SIZE, show: bool = False):
    """Plot ``rows`` to ``out_path`` and return the curves' line fits (``{label: LineFit}``, empty
    unless ``options.fit``).

    Quantum rows: ``options.y`` against ``x_key`` (default p, log axis), one curve per group
    and per d (or p) not on the x axis, with the threshold estimates when x is p and y the
    error rate. Classical rows (``ebn0`` metadata): block error rate vs Eb/N0 (linear axis)
    with the normal approximation and the ML lower bound. ``subtitle``: see
    :func:`~qdecode.sims.plots.plot_threshold` (None: what the rows share). ``fig_size``: width
    and height in pixels at ``dpi``. ``show``: also show the figure in a window (:func:`show_figure`).
    """
    from qdecode.sims.plots import PlotOptions, fit_curves, plot_threshold

    rows = list(rows)
    options = options or PlotOptions()
    classical = _has_key(rows, "ebn0")
    x_key = x_key or ("ebn0" if classical else "p")
    xscale = xscale or ("log" if x_key == "p" else "linear")
    keys = group_keys_for(rows, group)
    extra: dict[str, Any] = {}
    estimates = None
    if classical:
        if per_round:
            raise InputError("--per-round does not apply to classical block codes")
        curve_keys = _unique((() if "code" in keys else ("code",)) + keys)
        if x_key == "ebn0":
            extra = dict(xlabel="Eb/N0 (dB)")
        if x_key == "ebn0" and options.y == "error_rate":
            extra.update(ylabel="Block error rate", references=classical_references(rows))
    else:
        curve_keys = _unique(keys + tuple(k for k in ("d", "p") if k != x_key and _has_key(rows, k)))
        if threshold and x_key == "p" and options.y == "error_rate":
            estimates = _threshold_estimates(rows, keys, per_round)
    common = dict(per_round=per_round, x_key=x_key, group_keys=curve_keys, xscale=xscale)
    # The custom count was checked on the rows as read (_read); merged rows lack counts that stayed 0.
    fig = plot_threshold(rows, out_path=out_path, threshold=estimates, title=title, subtitle=subtitle,
                         options=options, highlight_max_likelihood_factor=highlight_max_likelihood_factor,
                         dpi=dpi, figsize=(fig_size[0] / dpi, fig_size[1] / dpi), check_keys=False, **common,
                         **extra)
    if show:
        show_figure(fig)
    return fit_curves(rows, y=options.y, **common) if options.fit else {}


def interactive_backend(backend: str) -> bool:
    """Whether matplotlib's ``backend`` opens windows (Agg, PDF, SVG... do not)."""
    name = backend.lower()
    if name.startswith("module://"):  # a third-party backend (e.g. a notebook's): assume it shows figures
        return True
    try:
        from matplotlib.backends import BackendFilter, backend_registry  # matplotlib >= 3.9
    except ImportError:
        from matplotlib import rcsetup

        return name in {b.lower() for b in rcsetup.interactive_bk}
    return name in backend_registry.list_builtin(BackendFilter.INTERACTIVE)


def show_figure(fig) -> bool:
    """Show ``fig`` (drawn on its own Agg canvas) in a pyplot window and wait until it is closed.

    Returns False, with a note on stderr, when matplotlib's backend cannot open windows (Agg, a
    headless session): the file is written either way.
    """
    import matplotlib.pyplot as plt

    backend = plt.get_backend()
    if not interactive_backend(backend):
        print(f"qdecode plot: --show: matplotlib's backend {backend!r} cannot open a window (set MPLBACKEND, "
              f"e.g. to tkagg or qtagg); the figure is only written to the file", file=sys.stderr)
        return False
    holder = plt.figure(figsize=fig.get_size_inches())  # a pyplot window, lent to our figure
    manager = holder.canvas.manager
    manager.canvas.figure = fig
    fig.set_canvas(manager.canvas)
    plt.show()
    plt.close(holder)
    return True


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------


def _scale(name: str, value: str | None) -> str | None:
    if value is not None and value not in _SCALES:
        raise InputError(f"--{name} must be linear or log, got {value!r}")
    return value


def _plot_options(args):
    from qdecode.sims.plots import PlotOptions

    return PlotOptions(y=args.y, fit=args.fit, yscale=_scale("yscale", args.yscale), xmin=args.xmin,
                       xmax=args.xmax, ymin=args.ymin, ymax=args.ymax)


def _fit_line_text(fit) -> str:
    span = f"{fit.num_points} points, x in [{fit.x_low:.4g}, {fit.x_high:.4g}]"
    if fit.model == "suppression":
        return f"{fit.describe()} (LER = A / Lambda^((d+1)/2); {span})"
    if fit.model == "power":
        return f"{fit.describe()} (rate = A x^k; {span})"
    return f"{fit.describe()} (ln rate = a + k x; {span})"


def draw_discard(rows, *, out_path: str, per_round: bool = False, group: str | None = None, title=None,
                 xscale: str | None = None, options=None, highlight_max_likelihood_factor: float = DEFAULT_FACTOR,
                 subtitle: str | None = None, dpi: int = DEFAULT_DPI, fig_size: Sequence[int] = DEFAULT_FIG_SIZE,
                 show: bool = False):
    """``--y discard_vs_error``: :func:`~qdecode.sims.plots.plot_discard_vs_error` of ``rows``, one curve
    per row (the decoder and the varying metadata keys, plus d and p), to ``out_path``."""
    from qdecode.sims.plots import plot_discard_vs_error

    rows = list(rows)
    keys = _unique(group_keys_for(rows, group) + tuple(k for k in ("d", "p") if _has_key(rows, k)))
    fig = plot_discard_vs_error(rows, out_path=out_path, group_keys=keys, xscale=xscale or "log",
                                per_round=per_round, options=options, title=title, subtitle=subtitle,
                                highlight_max_likelihood_factor=highlight_max_likelihood_factor, dpi=dpi,
                                figsize=(fig_size[0] / dpi, fig_size[1] / dpi))
    if show:
        show_figure(fig)


def _run_discard_plot(args, factor: float) -> int:
    """``qdecode plot --y discard_vs_error``."""
    from qdecode.sims.plots import PlotOptions

    for flag, value in (("--x", args.x_key), ("--fit", args.fit)):
        if value:
            raise InputError(f"{flag} does not apply to --y discard_vs_error (x is the discard rate)")
    options = PlotOptions(yscale=_scale("yscale", args.yscale), xmin=args.xmin, xmax=args.xmax, ymin=args.ymin,
                          ymax=args.ymax)
    out = _out_path(args.out)
    rows = _read(args.csv, filters=args.filter)
    draw_discard(rows, out_path=out, per_round=args.per_round, group=args.group, title=args.title,
                 xscale=_scale("xscale", args.xscale), options=options, highlight_max_likelihood_factor=factor,
                 subtitle=args.subtitle, dpi=args.dpi, fig_size=args.fig_size, show=args.show)
    print(f"qdecode plot: {out}", file=sys.stderr)
    return 0


def _run_deadline_plot(args, factor: float) -> int:
    """``qdecode plot --y deadline``: :func:`~qdecode.sims.plots.plot_deadline`, one curve per row."""
    from qdecode.sims.plots import PlotOptions, plot_deadline

    clock = args.x_key or "wall"
    if clock not in ("wall", "work"):
        raise InputError(f"--y deadline takes --x wall or --x work (the clock), got --x {clock}")
    for flag, value in (("--fit", args.fit), ("--per-round", args.per_round), ("--xscale", args.xscale)):
        if value:
            raise InputError(f"{flag} does not apply to --y deadline")
    options = PlotOptions(yscale=_scale("yscale", args.yscale), xmin=args.xmin, xmax=args.xmax, ymin=args.ymin,
                          ymax=args.ymax)
    out = _out_path(args.out)
    rows = _read(args.csv, filters=args.filter)
    keys = _unique(group_keys_for(rows, args.group) + tuple(k for k in ("d", "p") if _has_key(rows, k)))
    fig = plot_deadline(rows, out_path=out, clock=clock, policy=args.policy, group_keys=keys, options=options,
                        title=args.title,
                        subtitle=args.subtitle, highlight_max_likelihood_factor=factor, dpi=args.dpi,
                        figsize=(args.fig_size[0] / args.dpi, args.fig_size[1] / args.dpi))
    if args.show:
        show_figure(fig)
    print(f"qdecode plot: {out}", file=sys.stderr)
    return 0


def _out_path(out: str) -> str:
    """``--out`` as the file that will be written (``.png`` added to a name without extension)."""
    from qdecode.sims.plots import figure_path

    try:
        return figure_path(out)
    except ValueError as exc:
        raise InputError(f"--out {exc}") from None


def run_plot(args) -> int:
    factor = args.highlight_max_likelihood_factor
    if not factor >= 1:
        raise InputError(f"--highlight-max-likelihood-factor must be >= 1, got {factor:g}")
    if args.y == "discard_vs_error":
        return _run_discard_plot(args, factor)
    if args.y == "deadline":
        return _run_deadline_plot(args, factor)
    if args.policy != "miss":
        raise InputError("--policy applies to --y deadline")
    options = _plot_options(args)
    xscale = _scale("xscale", args.xscale)
    out = _out_path(args.out)
    rows = _read(args.csv, y=options.y, filters=args.filter)
    fits = draw(rows, out_path=out, per_round=args.per_round, threshold=not args.no_threshold, group=args.group,
                title=args.title, x_key=args.x_key, xscale=xscale, options=options,
                highlight_max_likelihood_factor=factor, subtitle=args.subtitle, dpi=args.dpi,
                fig_size=args.fig_size, show=args.show)
    for label, fit in fits.items():
        print(f"qdecode plot: fit {label}: {_fit_line_text(fit)}", file=sys.stderr)
    if args.fit and not fits:
        print("qdecode plot: no curve has two x values with errors to fit", file=sys.stderr)
    print(f"qdecode plot: {out}", file=sys.stderr)
    return 0


def _row_name(row, keys: Sequence[str]) -> str:
    """``pymatching, d=5, p=0.003``: the decoder and the row's values of ``keys``."""
    md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
    parts = [row.decoder] + [f"{k}={md[k]}" for k in keys if k != "decoder" and k in md]
    return ", ".join(parts)


def max_discard_lines(rows, max_discard: float, keys: Sequence[str], per_round: bool = False) -> list[str]:
    """The ``--max-discard`` table: a header, then one line per row with a gap histogram.

    Columns: kept-shot logical error rate at the largest gap threshold whose discard rate is at
    most ``max_discard`` (:func:`~qdecode.sims.gap_bins.at_max_discard`), its binomial interval,
    the threshold (``gap>=T dB``; ``-`` for none), the fraction discarded, kept shots and errors,
    and the error rate without post-selection. With ``per_round`` the four rates (and the
    interval's ends) are per round, ``1/2 - 1/2 (1 - 2 P_shot)^(1/r)`` with the row's ``r`` (or
    ``rounds``), and their columns are named ``LER_per_round_...``.

    Raises:
        ValueError: ``max_discard`` outside [0, 1], no row with a gap histogram, or ``per_round``
            and a row without rounds in its metadata.
    """
    from qdecode.sims.gap_bins import GAP_BINS_KEY, at_max_discard, discard_curve, has_gap_bins
    from qdecode.sims.stats import rounds_of, shot_error_rate_to_per_round

    if not 0.0 <= max_discard <= 1.0:
        raise InputError(f"--max-discard must be a fraction in [0, 1], got {max_discard:g}")
    ler = "LER_per_round" if per_round else "LER"
    lines = [f"# post-selection on the decoder's gap, at most {max_discard:.4g} of shots discarded (1 dB bins: "
             f"the fraction discarded is the largest reachable at or below it); interval: likelihood within 1000x"
             + ("; rates per round, 1/2 - 1/2 (1 - 2 P_shot)^(1/r)" if per_round else ""),
             f"# row\tgap>=dB\tdiscarded\tkept\tkept_errors\t{ler}_kept\t{ler}_kept_low\t{ler}_kept_high\t{ler}_all"]
    names = [k for k in keys if k not in ("decoder", GAP_BINS_KEY)]
    for row in rows:
        md = row.json_metadata if isinstance(row.json_metadata, Mapping) else {}
        if GAP_BINS_KEY not in md and not has_gap_bins(row.custom_counts or {}):
            continue
        curve = discard_curve(row.shots, row.errors, row.discards, row.custom_counts or {})
        if not curve:
            continue
        pt = at_max_discard(curve, max_discard)
        kept, full = pt.fit, curve[0].fit
        if per_round:
            kept, full = (shot_error_rate_to_per_round(f, rounds_of(row)) for f in (kept, full))
        threshold = "-" if pt.threshold is None else str(pt.threshold)
        lines.append(f"{_row_name(row, names)}\t{threshold}\t{pt.discard_rate:.4g}\t{pt.kept}\t{pt.kept_errors}\t"
                     f"{kept.best:.4g}\t{kept.low:.4g}\t{kept.high:.4g}\t{full.best:.4g}")
    if len(lines) == 2:
        from qdecode.cli.help_text import decoder_choices_help

        raise InputError("no row has a gap histogram (sweep with --gap-histogram and a decoder that gives a "
                         f"confidence: {decoder_choices_help('confidence')})")
    return lines


def run_threshold(args) -> int:
    from qdecode.sims.threshold import threshold_report

    rows = _read(args.csv, filters=args.filter)
    keys = group_keys_for(rows, args.group)
    if args.max_discard is not None:
        keys = _unique(keys + tuple(k for k in ("d", "p", "r") if _has_key(rows, k)))
        print("\n".join(max_discard_lines(rows, args.max_discard, keys, per_round=args.per_round)))
        return 0
    reports = threshold_report(rows, per_round=args.per_round, group_keys=keys, n_bootstrap=args.bootstrap,
                               seed=args.seed)
    unit = "per round" if args.per_round else "per shot"
    print(f"# threshold estimates ({unit} logical error rates); groups by {', '.join(keys)}")
    found = False
    for report in reports.values():
        print(report.format())
        found = found or (report.threshold is not None and report.threshold.found)
    if not found:
        print("# no threshold crossing found in the data range", file=sys.stderr)
    return 0
