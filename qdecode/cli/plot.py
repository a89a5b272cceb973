"""``qdecode plot`` and ``qdecode threshold``: figures and threshold estimates from stats CSVs.

Both read one or more sinter-format CSVs (ours or ``sinter collect``'s), merge rows
by strong_id, and group curves by decoder label plus every metadata key other than
``d``, ``p`` and the rounds that varies across the file (``code``, ``noise``, ``b``...),
so X and Z memories or two noise models never pool into one curve.
"""

from __future__ import annotations

import sys
from typing import Iterable, Sequence

_AXIS_KEYS = {"d", "p", "r", "rounds", "ebn0", "n", "k"}


def add_plot_parser(sub) -> None:
    p = sub.add_parser(
        "plot",
        help="logical error rate vs p, one curve per distance and decoder",
        description="Plot LER (per shot or per round) vs physical error rate with binomial bands and the threshold.",
    )
    p.add_argument("csv", nargs="+", help="stats CSV file(s)")
    p.add_argument("--out", required=True, help="image file (.png, .pdf, .svg)")
    p.add_argument("--per-round", action="store_true", help="plot the logical error probability per round")
    p.add_argument("--no-threshold", action="store_true", help="do not estimate and mark the threshold")
    p.add_argument("--group", help="comma-separated metadata keys that separate curves (default: automatic)")
    p.add_argument("--title")
    p.set_defaults(run=run_plot)


def add_threshold_parser(sub) -> None:
    p = sub.add_parser(
        "threshold",
        help="threshold estimate with interval, pairwise crossings, suppression factor Lambda",
        description=(
            "Finite-size-scaling threshold fit with a bootstrap interval, crossings of adjacent "
            "distances, and Lambda = eps_d / eps_(d+2) below threshold."
        ),
    )
    p.add_argument("csv", nargs="+", help="stats CSV file(s)")
    p.add_argument("--per-round", action="store_true", help="use per-round logical error rates")
    p.add_argument("--group", help="comma-separated metadata keys that separate curves (default: automatic)")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples (default 200)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=run_threshold)


def _read(paths: Sequence[str]):
    from qdecode.sims.store import merge_rows, read_rows

    rows = []
    for path in paths:
        rows.extend(read_rows(path))
    if not rows:
        raise ValueError(f"no stats rows in {', '.join(paths)}")
    return list(merge_rows(rows).values())


def group_keys_for(rows: Iterable, explicit: str | None = None) -> tuple[str, ...]:
    """``("decoder", *keys)``: the explicit keys, or every metadata key that varies (except d, p, rounds)."""
    if explicit:
        return ("decoder",) + tuple(k.strip() for k in explicit.split(",") if k.strip())
    values: dict[str, set] = {}
    rows = list(rows)
    for row in rows:
        meta = row.json_metadata if isinstance(row.json_metadata, dict) else {}
        for k, v in meta.items():
            if k not in _AXIS_KEYS:
                values.setdefault(k, set()).add(repr(v))
    varying = tuple(sorted(k for k, v in values.items() if len(v) > 1 or any(k not in (r.json_metadata or {}) for r in rows)))
    return ("decoder",) + varying


def classical_references(rows) -> list[tuple[str, list[float], list[float]]]:
    """Normal-approximation curves (one per (n, k)) and the ML lower bound (max over decoders of
    ``ml_lb / shots`` at each (code, Eb/N0)) for block-error plots."""
    import numpy as np

    from qdecode.sims.finite_length import na_bler

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
        refs.append((f"normal approximation ({code}, n={n}, k={k})", list(grid), list(na_bler(n, k, grid))))
        if (code, n, k) in by_code:
            pts = sorted(by_code[(code, n, k)].items())
            refs.append((f"ML lower bound ({code})", [p[0] for p in pts], [p[1] for p in pts]))
    return refs


def draw(rows, *, out_path: str, per_round: bool = False, threshold: bool = True, group: str | None = None, title=None):
    """Plot ``rows`` to ``out_path``: LER vs p with threshold estimates (>= 2 distances), or, for
    classical codes (``ebn0`` metadata), block error rate vs Eb/N0 with the normal approximation
    and the ML lower bound."""
    from qdecode.sims.plots import plot_threshold
    from qdecode.sims.threshold import threshold_report

    rows = list(rows)
    if any(isinstance(r.json_metadata, dict) and "ebn0" in r.json_metadata for r in rows):
        if per_round:
            raise ValueError("--per-round does not apply to classical block codes")
        keys = group_keys_for(rows, group)
        plot_threshold(rows, out_path=out_path, x_key="ebn0", xscale="linear", group_keys=(() if "code" in keys else ("code",)) + keys,
                       xlabel="Eb/N0 (dB)", ylabel="Block error rate", title=title,
                       references=classical_references(rows))
        return
    keys = group_keys_for(rows, group)
    keys = group_keys_for(rows, group)
    estimates = None
    if threshold:
        reports = threshold_report(rows, per_round=per_round, group_keys=keys)
        estimates = [r.threshold for r in reports.values() if r.threshold is not None] or None
    plot_threshold(rows, out_path=out_path, per_round=per_round, group_keys=keys + ("d",), threshold=estimates, title=title)


def run_plot(args) -> int:
    rows = _read(args.csv)
    draw(rows, out_path=args.out, per_round=args.per_round, threshold=not args.no_threshold, group=args.group, title=args.title)
    print(f"qdecode plot: {args.out}", file=sys.stderr)
    return 0


def run_threshold(args) -> int:
    from qdecode.sims.threshold import threshold_report

    rows = _read(args.csv)
    keys = group_keys_for(rows, args.group)
    reports = threshold_report(rows, per_round=args.per_round, group_keys=keys, n_bootstrap=args.bootstrap, seed=args.seed)
    unit = "per round" if args.per_round else "per shot"
    print(f"# threshold estimates ({unit} logical error rates); groups by {', '.join(keys)}")
    found = False
    for report in reports.values():
        print(report.format())
        found = found or (report.threshold is not None and report.threshold.found)
    if not found:
        print("# no threshold crossing found in the data range", file=sys.stderr)
    return 0
