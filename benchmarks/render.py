"""benchmarks/README.md's tables, written from the result files of ``benchmarks/results/``.

The README keeps the prose; each table sits in a marked region whose content this script
regenerates from its result file(s) with the formatter registered under the region's name in
:data:`TABLES`::

    <!-- table: frontier-color-xyz-d5 -->
    | decoder | failures / shots | ... |
    <!-- end table -->

    python benchmarks/render.py            # rewrite every region from the result files
    python benchmarks/render.py --check    # exit 1, naming the table, where a region differs

``--check`` (run by ``make test`` and ``tests/test_benchmark_tables.py``) fails on a region whose text
is not what its files give (a table edited by hand, or a result file changed without a render), on a
region naming no registered table, and on a registered table with no region. A new table: write its
result file from the script (``_common.write_result``), register a formatter here, put the region
in the README and run this script.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
sys.path.insert(0, str(HERE))  # the scripts of this folder, whose own renderers some tables reuse

REGION = re.compile(r"(<!-- table: ([\w.-]+) -->\n)(.*?)(<!-- end table -->)", re.S)


def _json(name: str) -> dict:
    with open(RESULTS / name) as f:
        return json.load(f)


def _md(header: list[str], rows: list[list[str]], align: str = "---") -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "|".join([align] * len(header)) + "|"]
                     + ["| " + " | ".join(r) + " |" for r in rows])


# --- the accuracy frontier -------------------------------------------------------------------------------------

#: The frontier problems, in the README's order (result file ``frontier_<name>.json``).
FRONTIER = ("color-xyz-d5", "color-xyz-d7", "superdense-d5", "superdense-d7", "surface-d5-uniform",
            "surface-d5-si1000", "surface-d7-uniform", "surface-d7-si1000", "surface-d9-uniform",
            "surface-d9-si1000", "bb144-p0.003", "hgp58-p0.003")
#: Decoders that wrap another package: on the peer side of the distance-from-the-best-peer table.
WRAPPED = ("pymatching", "pymatching-correlated", "tesseract", "chromobius", "mwpf")


def frontier_rows(problem: str) -> list[dict]:
    """The rows of one frontier result file, each with ``front`` recomputed over all of them."""
    import frontier

    rows = [dict(r) for r in _json(f"frontier_{problem}.json")["rows"]]
    frontier.pareto(rows)
    return rows


def frontier_table(problem: str) -> str:
    import frontier

    return frontier.markdown_table(frontier_rows(problem))


def _name(decoder: str) -> str:
    return f"`{decoder[5:]}` (peer)" if decoder.startswith("peer:") else f"`{decoder}`"


def _base(decoder: str) -> str:
    return decoder.removeprefix("peer:").split("[")[0]


def is_peer(decoder: str) -> bool:
    """A peer package's row, called through its own API or wrapped by qdecode."""
    return decoder.startswith(("peer:", "tesseract")) or _base(decoder) in WRAPPED


def _fewest(r: dict) -> tuple:
    return r["failures"], r["ms_per_shot"]


def frontier_summary() -> str:
    """Per problem: the peer row with fewest failures against the native row with fewest (ties: faster)."""
    out = []
    for problem in FRONTIER:
        rows = frontier_rows(problem)
        peer = min((r for r in rows if is_peer(r["decoder"])), key=_fewest, default=None)
        native = min((r for r in rows if not is_peer(r["decoder"]) and _base(r["decoder"]) != "mle"), key=_fewest)
        if peer is None:
            continue
        shots = rows[0]["shots"]
        t = native["ms_per_shot"] / peer["ms_per_shot"]
        out.append([f"`{problem}` ({shots:,} shots)", f"{_name(peer['decoder'])} {peer['failures']}",
                    f"{_name(native['decoder'])} {native['failures']}", f"{native['failures'] / peer['failures']:.2f}",
                    f"{t:.2f}" if t < 10 else f"{t:.0f}"])
    return _md(["problem", "best peer: failures", "best native: failures", "failures ratio", "time ratio"], out)


def native_vs_tesseract() -> str:
    data = _json("native_vs_tesseract.json")
    rows = []
    for r in data["rows"]:
        name = r["decoder"].replace("Tesseract ", "")
        rows.append([str(r["seed"]), f"`{name}`", str(r["failures"]), f"{r['ms_per_shot']:.3f}",
                     f"{r['time_ratio']:.2f}"])
    return _md(["seed", "decoder", f"failures / {data['rows'][0]['shots']:,}", "CPU ms per shot",
                "time / Tesseract's"], rows)


def class_escalate_observables() -> str:
    data = _json("class_escalate_observables.json")
    rows = [[f"{r['code']} d={r['d']}", str(r["k"]), str(r["relay_failures"]), str(r["escalate_failures"]),
             f"{r['relay_ms']:.3f}", f"{r['escalate_ms']:.3f}", f"{r['escalate_ms'] / r['relay_ms']:.1f}x",
             f"{r['build_s']:.1f}"] for r in data["rows"]]
    return _md(["code", "k", "relay-bp failures", "class-escalate failures", "relay-bp ms/shot",
                "class-escalate ms/shot", "ratio", "class-escalate build s"], rows)


# --- harness against sinter ------------------------------------------------------------------------------------

def harness_overhead() -> str:
    from qdecode.sims.stats import fit_binomial

    rows = []
    for key, e in _json("harness_overhead.json")["entries"].items():
        total = e["shots"] * e["repeats"]
        ler = []
        for tool in ("qdecode", "sinter"):
            f = fit_binomial(num_shots=total, num_hits=e[f"{tool}_errors"], max_likelihood_factor=1e3)
            ler.append(f"{f.best:.5f} [{f.low:.5f}, {f.high:.5f}]")
        rows.append([e["path"], str(e["workers"]), f"{e['shots']:,} x {e['repeats']}",
                     f"{statistics.median(e['wall_ratios']):.3f}", f"{statistics.median(e['cpu_ratios']):.3f}", *ler])
    return _md(["path", "workers", "shots x runs", "median wall ratio", "median CPU ratio", "LER qdecode",
                "LER sinter"], rows)


def overshoot() -> str:
    rows = []
    for r in _json("overshoot.json")["rows"]:
        over = [e - r["max_errors"] for e in r["errors"]]
        rows.append([r["decoder"], str(r["max_errors"]), f"{statistics.median(r['errors']):g}, {max(r['errors'])}",
                     f"{statistics.median(over):g} / {max(over)}", f"{statistics.median(r['shots']):g}"])
    return _md(["decoder", "max_errors", "recorded errors (median, max)", "overshoot median / max",
                "shots recorded (median)"], rows)


def in_sweep_speed() -> str:
    import in_sweep_speed as m

    return m.render(str(RESULTS / "in_sweep_speed.json"))


def estimate_accuracy() -> str:
    import estimate_accuracy as m

    return m.render([str(RESULTS / f"estimate_accuracy_{x}.json") for x in ("before", "after", "after_bp")])


# --- BP, OSD against ldpc and relay-bp -------------------------------------------------------------------------

def bp_vs_peers_speed() -> str:
    rows = []
    for name, e in _json("bp_vs_peers_speed.json")["entries"].items():
        t = e["ms_per_shot"]
        rows.append([name, str(e["shots"]), f"{t['ours1']:.3f}", f"{t['ours2']:.3f} (x{t['ours1'] / t['ours2']:.2f})",
                     f"{t['ldpc']:.3f}", f"**{t['ours1'] / t['ldpc']:.3f}**", f"{t['relay']:.3f}",
                     f"**{t['ours1'] / t['relay']:.3f}**", f"{t['bposd_ours']:.3f}", f"{t['bposd_ldpc']:.3f}",
                     f"**{t['bposd_ours'] / t['bposd_ldpc']:.3f}**"])
    return _md(["problem", "shots", "qdecode BP 1 thr", "2 thr (throughput)", "ldpc BP", "ours/ldpc", "relay-bp",
                "ours/relay", "qdecode BP+OSD-CS10", "ldpc BP+OSD-CS10", "ours/ldpc"], rows)


# --- matching and union-find -----------------------------------------------------------------------------------

def uf_vs_pymatching() -> str:
    from qdecode.sims.stats import fit_binomial, shot_error_rate_to_per_round

    rows = []
    for r in _json("uf_vs_pymatching.json")["rows"]:
        f = fit_binomial(num_shots=r["shots"], num_hits=r["failures"], max_likelihood_factor=1e3)
        rows.append([str(r["d"]), f"{r['p']:g}", f"`{r['decoder']}`", str(r["failures"]),
                     f"{f.best:.2e} [{f.low:.2e}, {f.high:.2e}]", f"{shot_error_rate_to_per_round(f.best, r['d']):.2e}",
                     f"{r['us_per_shot']:.1f}"])
    return _md(["d", "p", "decoder", "failures", "LER per shot [interval]", "LER per round", "us / shot"], rows)


# --- Relay-BP, streaming ---------------------------------------------------------------------------------------

def relay_ensemble() -> str:
    import relay_ensemble as m

    return m.table(_json("relay_ensemble.json")).rstrip("\n")


def streaming() -> str:
    import streaming as m

    return m.render(_json("streaming.json"))


# --- confidence ------------------------------------------------------------------------------------------------

def confidence_cost() -> str:
    rows = []
    for r in _json("confidence_cost.json")["rows"]:
        low = "nan" if r["fail_low10"] is None or r["fail_low10"] != r["fail_low10"] else f"{r['fail_low10']:.3f}"
        rows.append([f"`{r['decoder']}`", f"{r['shots']:,}", f"{r['plain_us']:.1f}", f"{r['gap_us']:.1f}",
                     f"{r['gap_us'] / r['plain_us']:.2f}", str(r["failures"]), str(r["nan"]), str(r["inf"]),
                     f"{r['median_db']:.1f}", low, f"{r['fail_rest']:.4f}"])
    return _md(["decoder", "shots", "plain us/shot", "with confidence", "ratio", "failures", "nan", "inf",
                "median dB", "fail rate, aborted at 10 %", "fail rate, kept"], rows)


def confidence_bb144() -> str:
    import numpy as np
    from _common import kept_after_abort

    from qdecode.sims.stats import fit_binomial

    rows = []
    for p in ("0.003", "0.001"):
        data = np.load(RESULTS / f"confidence_bb144_p{p}.npz")
        for key in sorted(k for k in data.files if k.endswith("|conf")):
            spec = key[:-len("|conf")]
            conf, fail = data[key], data[f"{spec}|fail"]
            reached = []
            for target in (0.0, 0.01, 0.05, 0.10, 0.19):
                kept = kept_after_abort(conf, target)
                n, e = int(kept.sum()), int(fail[kept].sum())
                if reached and (reached[-1][1] == n or reached[0][2] == 0):
                    continue  # the same kept set as a smaller target (ties are never split), or nothing to remove
                reached.append((target, n, e))
            for i, (target, n, e) in enumerate(reached):
                f = fit_binomial(num_shots=n, num_hits=e, max_likelihood_factor=1e3)
                rows.append([p if i == 0 else "", f"`{spec}`" if i == 0 else "", f"{target:.0%}",
                             f"{1 - n / len(conf):.2%}", f"{n:,}", str(e), f"{f.best:.1e} [{f.low:.1e}, {f.high:.1e}]"])
    return _md(["p", "decoder (confidence)", "abort target", "abort reached", "kept", "kept errors",
                "LER per shot among kept [band]"], rows)


def gap_discard() -> str:
    from qdecode.sims.gap_bins import at_max_discard, discard_curve
    from qdecode.sims.store import merge_rows, read_rows

    rows = []
    merged = sorted(merge_rows(read_rows(str(RESULTS / "gap_discard_surface.csv"))).values(),
                    key=lambda r: r.json_metadata.get("d", 0))
    for row in merged:
        curve = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)
        for target in (0.0, 0.01, 0.10):
            pt = at_max_discard(curve, target)
            gap = "-" if pt.threshold is None else str(pt.threshold)
            rows.append([str(row.json_metadata["d"]), f"{target:.0%}", gap, f"{pt.discard_rate:.3%}", f"{pt.kept:,}",
                         f"{pt.kept_errors:,}",
                         f"{pt.fit.best:.3e} [{pt.fit.low:.3e}, {pt.fit.high:.3e}]"])
    return _md(["d", "target", "gap >= dB", "discarded", "kept shots", "kept errors", "LER per shot [interval]"], rows)


#: table name -> formatter (no arguments; reads its result files from benchmarks/results/).
TABLES: dict[str, Callable[[], str]] = {
    "in-sweep-speed": in_sweep_speed,
    "estimate-accuracy": estimate_accuracy,
    "streaming": streaming,
}


def render(text: str) -> tuple[str, list[str], list[str]]:
    """``(text with every region regenerated, names of regions that changed, problems)``; problems: regions
    naming no registered table, registered tables with no region."""
    changed, problems, seen = [], [], set()

    def fill(m: re.Match) -> str:
        name = m.group(2)
        seen.add(name)
        if name not in TABLES:
            problems.append(f"region '{name}' names no table registered in benchmarks/render.py")
            return m.group(0)
        body = TABLES[name]().rstrip("\n") + "\n"
        if body != m.group(3):
            changed.append(name)
        return m.group(1) + body + m.group(4)

    out = REGION.sub(fill, text)
    problems += [f"table '{n}' is registered in benchmarks/render.py but has no region in the README"
                 for n in TABLES if n not in seen]
    return out, changed, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 where a table differs from its files")
    ap.add_argument("--readme", default=str(README), help="the Markdown file (default: benchmarks/README.md)")
    args = ap.parse_args(argv)
    path = Path(args.readme).resolve()
    text = path.read_text()
    out, changed, problems = render(text)
    if args.check:
        if changed:
            more = f" (and {', '.join(changed[1:])})" if len(changed) > 1 else ""
            where = os.path.relpath(path, HERE.parent)
            print(f"render.py --check: table '{changed[0]}'{more} in {where} differs from what its result files "
                  f"give: run python benchmarks/render.py (a hand edit of a table does not stand)")
        elif problems:
            print(f"render.py --check: {problems[0]}")
        return 1 if changed or problems else 0
    for p in problems:
        print(f"render.py: {p}", file=sys.stderr)
    if out != text:
        path.write_text(out)
    print(f"render.py: {len(changed)} table(s) rewritten" + (f": {', '.join(changed)}" if changed else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
