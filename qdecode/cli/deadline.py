"""``qdecode deadline``: tail latency and the logical error rate under deadlines, from the rows of a latency sweep.

The rows are those of ``qdecode sweep --latency`` (or a recipe task with ``latency = true``): each holds
histograms of both clocks in its ``custom_counts`` (:mod:`qdecode.sims.latency_bins`). Rows are summed
per strong_id, as ``qdecode combine`` does, so a file and the combination of its halves give the same
report. For every row group the command prints the decoded shots, errors and plain logical error rate,
the nearest-rank percentiles p50 / p99 / p99.9 and the maximum of each clock (upper edges of 9 % bins),
and the logical error rate under each deadline with the miss policy (a late shot fails):
``LER(t) = P(latency > t or logical error)``. ``--json`` writes the same as JSON (wall times in ns).
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Sequence

from qdecode.errors import InputError

_UNITS_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_TIME = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|ms|s)\s*")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "deadline",
        help="tail latency and the logical error rate under deadlines, from a latency sweep's rows",
        description=(
            "From the rows of `qdecode sweep --latency` (summed per strong_id): decoded shots, errors, the "
            "plain logical error rate, p50 / p99 / p99.9 / max of the wall clock (ns) and of the decoder's work "
            "clock (its deterministic count), and the logical error rate under each deadline, a late shot "
            "counting as a failure: LER(t) = P(latency > t or logical error). Deadlines are rounded down to the "
            "histograms' grid (bins of 2^(1/8), 9%). --policy anytime gives a late shot its best answer so far."
        ),
    )
    p.add_argument("csv", nargs="+", help="stats CSV file(s) of a latency sweep")
    p.add_argument("--at", metavar="T[,T...]", default="",
                   help="wall-clock deadlines with units, comma-separated: 500us,1ms,2ms,5ms (ns, us, µs, ms, s; "
                        "default: none)")
    p.add_argument("--at-work", metavar="N[,N...]", default="",
                   help="work-clock deadlines in the decoder's unit (e.g. min-sum iterations), comma-separated "
                        "(default: none)")
    p.add_argument("--policy", default="miss", metavar="{miss,anytime}",
                   help="what a late shot gets: miss = it fails; anytime = the decoder's best answer at the "
                        "deadline (Relay-BP: its best converged leg so far, else leg 0's decision; no answer yet: "
                        "a failure), for rows whose decoder records the trail of its answers (default: miss)")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="keep rows whose json_metadata[KEY] equals VALUE; decoder=NAME matches the decoder column; "
                        "repeatable, as in qdecode plot (default: keep all rows)")
    p.add_argument("--rtl", metavar="DIR",
                   help="also report the exported FPGA design's latency: DIR is a `qdecode export-rtl` directory "
                        "(its rtl_manifest.json gives the cycles per iteration); each shot takes iterations x CPI "
                        "+ 2 cycles (the identity its bit-exact test bench checks on every shot), at --fmax-mhz, so "
                        "the rows must be a --latency sweep of the same fixed-point bp (default: no RTL report)")
    p.add_argument("--fmax-mhz", type=float, metavar="F",
                   help="the design's clock for --rtl, MHz (default: the achieved Fmax of a nextpnr report "
                        "pnr_*.json in the --rtl directory)")
    p.add_argument("--json", action="store_true", help="write JSON to stdout instead of the text report")
    p.set_defaults(run=run)


def parse_times_ns(text: str) -> list[float]:
    """``"500us,1ms"`` -> ``[500000.0, 1000000.0]`` (ns); every item needs a unit.

    Examples:
        >>> parse_times_ns("500us, 1ms,2.5e3ns")
        [500000.0, 1000000.0, 2500.0]
    """
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        m = _TIME.fullmatch(item)
        if not m:
            raise InputError(f"--at: {item!r} is not a time with a unit (e.g. 500us, 1ms, 2s)")
        value = float(m.group(1)) * _UNITS_NS[m.group(2)]
        if not value > 0:
            raise InputError(f"--at: deadlines must be positive, got {item!r}")
        out.append(value)
    return out


def parse_work(text: str) -> list[float]:
    """``"100,1000"`` -> ``[100.0, 1000.0]``: positive work-clock deadlines."""
    out = []
    for item in filter(None, (t.strip() for t in text.split(","))):
        try:
            value = float(item)
        except ValueError:
            raise InputError(f"--at-work: {item!r} is not a number") from None
        if not (value > 0 and math.isfinite(value)):
            raise InputError(f"--at-work: deadlines must be positive and finite, got {item!r}")
        out.append(value)
    return out


def format_ns(ns: float) -> str:
    """A wall time in the unit that reads best: ``1.23 ms``, ``45.6 us``, ``812 ns``.

    Examples:
        >>> format_ns(1234567.0), format_ns(45600.0), format_ns(812.0), format_ns(float("inf"))
        ('1.23 ms', '45.6 us', '812 ns', 'inf')
    """
    if not math.isfinite(ns):
        return "inf"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def group_report(row, wall_deadlines: Sequence[float], work_deadlines: Sequence[float],
                 policy: str = "miss") -> dict[str, Any]:
    """The JSON-able report of one summed row (module docstring); ``policy`` ``"miss"`` or ``"anytime"``."""
    from qdecode.sims.latency_bins import deadline_curve, rescued_at, row_histograms, summary_quantiles

    hists = row_histograms(row)
    if not hists:
        raise InputError(f"row {row.strong_id[:12]} ({row.decoder}) has no latency histogram")
    decoded = row.shots - row.discards
    out: dict[str, Any] = {"decoder": row.decoder, "strong_id": row.strong_id, "json_metadata": row.json_metadata,
                           "shots": row.shots, "discards": row.discards, "decoded": decoded, "errors": row.errors,
                           "error_rate": row.errors / decoded if decoded else None}
    for clock, deadlines in (("wall", wall_deadlines), ("work", work_deadlines)):
        hist = hists.get(clock)
        if hist is None:
            out[clock] = None
            continue
        rescued = None
        if policy == "anytime":
            rescued = rescued_at(row.custom_counts or {}, clock)
            trails = (row.custom_counts or {}).get(f"{clock}_trail", 0)
            if rescued is None:  # the decoder gives no answer before its last one: nothing to report
                out[clock] = None
                continue
            if trails != decoded:
                raise InputError(f"--policy anytime: row {row.strong_id[:12]} ({row.decoder}) recorded the trail of "
                                 f"its answers for {trails} of its {decoded} decoded shots on the {clock} clock "
                                 f"(decoders that record it: bp and relay-bp, with at most 64 observables)")
        points = deadline_curve(hist, decoded, [*deadlines, math.inf], rescued=rescued)
        out[clock] = {
            "policy": policy,
            "unit": "ns" if clock == "wall" else "work",
            "quantiles": summary_quantiles(hist),
            "deadlines": [{"deadline": p.deadline, "late": p.late, "failures": p.failures, "error_rate": p.rate,
                           "low": p.fit.low, "high": p.fit.high} for p in points[:-1]],
            "error_rate_no_deadline": points[-1].rate,
        }
    return out


_RTL_PARAMS = ("bits", "frac_bits", "max_iter", "alpha")


def rtl_clock(directory: str, fmax_mhz: float | None) -> dict[str, Any]:
    """``{"cpi", "fmax_mhz", "manifest"}`` of an ``export-rtl`` directory; Fmax from the argument, else from
    the directory's nextpnr report (``pnr_<device>.json``, the achieved Fmax of the clock)."""
    import glob
    import os

    path = os.path.join(directory, "rtl_manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            mf = json.load(f)
        cpi = int(mf["cycles_per_iteration"])
    except OSError as exc:
        raise InputError(f"--rtl: cannot read {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise InputError(f"--rtl: {path} is not an export-rtl manifest (no cycles_per_iteration)") from None
    if fmax_mhz is None:
        for report in sorted(glob.glob(os.path.join(directory, "pnr_*.json"))):
            with open(report, encoding="utf-8") as f:
                fmax = json.load(f).get("fmax", {})
            clk = next((v for k, v in fmax.items() if "clk" in k), None)
            if clk is not None:
                fmax_mhz = float(clk["achieved"])
                break
        else:
            raise InputError(f"--rtl: no place-and-route report (pnr_*.json) in {directory}: give --fmax-mhz")
    if not (fmax_mhz > 0 and math.isfinite(fmax_mhz)):
        raise InputError(f"--fmax-mhz must be positive, got {fmax_mhz}")
    return {"cpi": cpi, "fmax_mhz": fmax_mhz, "manifest": mf}


def rtl_report(row, rtl: dict[str, Any], deadlines_ns: Sequence[float]) -> dict[str, Any] | None:
    """The RTL latency of one summed row: its work clock (BP iterations) as ``(iterations x CPI + 2)`` cycles at
    Fmax, in ns; None when the row is not the design's decoder (``bp`` with its bits, fraction bits, iteration
    limit and alpha, flooding min-sum)."""
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.sims.latency_bins import deadline_failures, histogram, summary_quantiles

    try:
        spec = DecoderSpec.from_label(row.decoder)
    except ValueError:
        return None
    mf, params = rtl["manifest"], dict(spec.params)
    if spec.name != "bp" or params.get("schedule") != "flooding" or any(
            float(params.get(k, math.nan)) != float(mf.get(k, math.nan)) for k in _RTL_PARAMS):
        return None
    hist = histogram(row.custom_counts or {}, "work")
    if hist is None:
        return None
    ns_per_cycle = 1e3 / rtl["fmax_mhz"]
    decoded = row.shots - row.discards
    to_ns = lambda iters: (iters * rtl["cpi"] + 2) * ns_per_cycle  # noqa: E731
    points = []
    for t in deadlines_ns:
        iters = math.floor((t / ns_per_cycle - 2) / rtl["cpi"] + 1e-9)  # the most iterations that finish by t
        failures = decoded if iters < 0 else deadline_failures(hist, decoded, iters)
        points.append({"deadline": t, "error_rate": failures / decoded, "failures": failures})
    return {"unit": "ns", "cycles_per_iteration": rtl["cpi"], "fmax_mhz": rtl["fmax_mhz"],
            "quantiles": {k: to_ns(v) for k, v in summary_quantiles(hist).items()}, "deadlines": points}


def _text(report: dict[str, Any]) -> list[str]:
    meta = report["json_metadata"]
    where = ", ".join(f"{k}={v}" for k, v in meta.items() if k != "latency_bins") if isinstance(meta, dict) else ""
    rate = report["error_rate"]
    lines = [f"{report['decoder']}" + (f" ({where})" if where else ""),
             f"  {report['decoded']} shots decoded, {report['errors']} errors, LER {rate:.4g}"]
    for clock in ("wall", "work", "rtl"):
        got = report.get(clock)
        if got is None:
            if clock != "rtl":
                lines.append(f"  {clock}: not recorded (the decoder has no {clock} clock, or under --policy anytime "
                         f"records no trail of its answers)")
            continue
        fmt = (lambda v: f"{v:.4g}") if clock == "work" else format_ns
        q = "  ".join(f"{k} {fmt(v)}" for k, v in got["quantiles"].items())
        name = f"rtl ({got['cycles_per_iteration']} cycles / iteration at {got['fmax_mhz']:g} MHz)" \
            if clock == "rtl" else clock
        lines.append(f"  {name}: {q}")
        for d in got["deadlines"]:
            band = f" [{d['low']:.3g}, {d['high']:.3g}] ({d['late']} late)" if "low" in d else ""
            lines.append(f"    LER at {fmt(d['deadline'])}: {d['error_rate']:.4g}{band}")
    return lines


def run(args) -> int:
    from qdecode.cli.common import check_input_file
    from qdecode.cli.plot import apply_filters
    from qdecode.sims.store import merge_rows, read_rows

    if args.policy not in ("miss", "anytime"):
        raise InputError(f"--policy must be miss or anytime, got {args.policy!r}")
    wall = parse_times_ns(args.at)
    work = parse_work(args.at_work)
    rows = []
    for path in args.csv:
        rows.extend(read_rows(check_input_file(path)))
    rows = apply_filters(rows, args.filter)
    if not rows:
        raise InputError(f"no stats rows in {', '.join(args.csv)}" + (" pass the --filter" if args.filter else ""))
    from qdecode.sims.latency_bins import has_latency_bins

    groups = list(merge_rows(rows).values())
    merged = [r for r in groups if has_latency_bins(r.custom_counts or {})]
    if not merged:
        raise InputError("no row has a latency histogram (sweep with --latency, or latency = true in a recipe task)")
    if len(merged) < len(groups):
        print(f"qdecode deadline: {len(groups) - len(merged)} row group(s) without a latency histogram left out",
              file=sys.stderr)
    rtl = rtl_clock(args.rtl, args.fmax_mhz) if args.rtl else None
    if args.fmax_mhz is not None and rtl is None:
        raise InputError("--fmax-mhz applies with --rtl")
    reports = [group_report(r, wall, work, args.policy) for r in merged]
    if rtl is not None:
        for rep, row in zip(reports, merged):
            rep["rtl"] = rtl_report(row, rtl, wall)
        if all(rep["rtl"] is None for rep in reports):
            raise InputError("--rtl: no row is a latency sweep of the design's decoder (bp with schedule=flooding, "
                             + ", ".join(f"{k}={rtl['manifest'].get(k)}" for k in _RTL_PARAMS) + ")")
    if args.json:
        json.dump(reports, sys.stdout, indent=1, default=float)
        sys.stdout.write("\n")
    else:
        print("\n".join(line for rep in reports for line in _text(rep)))
    return 0
