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


#: A wrapped dependency's registry label -> the same decoder called through its own API (``peer:`` rows).
SAME_AS_PEER = {"tesseract[beam=short]": "tesseract-short-beam",
                "tesseract[beam=short,sparsify=color]": "tesseract-short-beam-sparsify-color-code-like",
                "tesseract[beam=short,sparsify=surface]": "tesseract-short-beam-sparsify-surface-code-like",
                "pymatching": "pymatching", "pymatching-correlated": "pymatching-correlated",
                "chromobius": "chromobius"}


def frontier_table(problem: str) -> str:
    """Fewest failures first; a wrapped dependency and its peer row, when they fail alike, share a row
    (time: wrapped / peer)."""
    rows = frontier_rows(problem)
    by_name = {r["decoder"]: r for r in rows}
    merged, used = [], set()
    for r in rows:
        peer = by_name.get("peer:" + SAME_AS_PEER.get(r["decoder"], "-"))
        if peer is not None and peer["failures"] == r["failures"]:
            used.add(peer["decoder"])
            same = "" if peer["decoder"][5:] == r["decoder"] else f" `{peer['decoder'][5:]}`"
            merged.append({**r, "name": f"`{r['decoder']}` (= peer{same})",
                           "time": f"{r['ms_per_shot']:.3f} / {peer['ms_per_shot']:.3f}",
                           "front": r["front"] or peer["front"]})
    merged_from = {m["decoder"] for m in merged}
    for r in rows:
        if r["decoder"] not in used and r["decoder"] not in merged_from:
            merged.append({**r, "name": _name(r["decoder"]), "time": f"{r['ms_per_shot']:.3f}"})
    merged.sort(key=_fewest)
    return _md(["decoder", "failures / shots", "LER per shot [interval]", "CPU ms per shot", "front"],
               [[m["name"], f"{m['failures']} / {m['shots']}",
                 f"{m['ler']:.2e} [{m['ler_low']:.2e}, {m['ler_high']:.2e}]", m["time"], "yes" if m["front"] else ""]
                for m in merged])


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


def native_vs_tesseract(problem: str | None = None) -> str:
    """One row per decoder, a column per seed: failures, CPU ms per shot and its ratio to Tesseract's; then the
    seeds pooled: failures and their likelihood-ratio interval (sinter's ``fit_binomial``, factor 1000)."""
    from qdecode.sims.stats import fit_binomial

    data = _json(f"native_vs_tesseract{'_' + problem if problem else ''}.json")["rows"]
    seeds = list(dict.fromkeys(r["seed"] for r in data))
    cell = {(r["decoder"], r["seed"]): r for r in data}

    def fmt(r: dict) -> str:
        return f"{r['failures']} ({r['ms_per_shot']:.3f} ms, {r['time_ratio']:.2f}x)"

    def pooled(name: str) -> str:
        f, n = (sum(cell[(name, s)][c] for s in seeds) for c in ("failures", "shots"))
        fit = fit_binomial(num_shots=n, num_hits=f, max_likelihood_factor=1e3)
        return f"{f} / {n:,}: {f / n:.2e} [{fit.low:.2e}, {fit.high:.2e}]"

    names = list(dict.fromkeys(r["decoder"] for r in data))
    rows = [[f"`{name.replace('Tesseract ', '')}`"] + [fmt(cell[(name, s)]) for s in seeds] + [pooled(name)]
            for name in names]
    shots = data[0]["shots"]
    return _md(["decoder"] + [f"seed {s}: failures / {shots:,} (CPU per shot, / Tesseract's)" for s in seeds]
               + ["pooled: failures, LER per shot [interval]"], rows)


def mle_floor() -> str:
    """Per problem and seed: Tesseract's failures and the exact most likely error's on the shots it failed on."""
    data = _json("mle_floor.json")
    rows = [[f"`{r['problem']}`", str(r["seed"]), str(r["tesseract_failures"]), str(r["union"]),
             str(r["mle_fails_on_union"]), str(r["ties"]),
             f"{(r['mle_fails_on_union'] - r['ties']) / max(1, r['tesseract_failures']):.2f}"] for r in data["rows"]]
    return _md(["problem", "seed", "Tesseract failures", "shots mle decoded", "mle failures there", "of them ties",
                "(mle failures - ties) / Tesseract's, at least"], rows)


def coset_ml_floor() -> str:
    """Per seed and pooled: Tesseract's failures, and the exact most likely error's and the exact most likely
    class's failures on those shots; the pooled row's bound on ``coset-ml / Tesseract`` with its lower end."""
    data = _json("coset_ml_floor.json")

    def cells(r: dict) -> list[str]:
        return [str(r["tesseract_failures"]), str(r["mle_fails_on_union"]), str(r["ties"]),
                str(r["coset_ml_fails_on_tesseract_failures"]),
                f"{r['coset_ml_fails_on_tesseract_failures'] / r['tesseract_failures']:.2f}"]

    rows = [[f"`{r['problem']}`", str(r["seed"]), f"{r['shots']:,}", *cells(r)] for r in data["rows"]]
    rows += [[f"`{q['problem']}`", "pooled", f"{q['shots']:,}", *cells(q)[:-1],
              f"{q['coset_ml_over_tesseract_at_least']:.2f} (>= {q['coset_ml_over_tesseract_low']:.2f})"]
             for q in data["pooled"]]
    return _md(["problem", "seed", "shots", "Tesseract failures", "mle fails there", "of them ties",
                "coset-ml fails there", "coset-ml / Tesseract, at least"], rows)


def coset_ml_all_shots(*names: str) -> str:
    """``coset-ml`` and Tesseract on every shot of the first ``N`` of each sample: failures, the shots only one
    of them fails, CPU time per shot (one thread); a pooled row."""
    rows, total = [], [0] * 5
    for name in names:
        for r in _json(name)["rows"]:
            counts = [r[c] for c in ("all_shots", "tesseract_failures_all", "coset_ml_failures_all",
                                     "tesseract_only_all", "coset_ml_only_all")]
            total = [t + c for t, c in zip(total, counts)]
            rows.append([f"`{r['problem']}`", str(r["seed"]), *(f"{c:,}" for c in counts),
                         f"{counts[2] / counts[1]:.2f}", f"{r['coset_ml_ms_per_shot']:.0f}",
                         f"{r['tesseract_ms_per_shot']:.2f}"])
    rows.append(["", "pooled", *(f"{c:,}" for c in total), f"{total[2] / total[1]:.2f}", "", ""])
    return _md(["problem", "seed", "shots", "Tesseract failures", "coset-ml failures", "only Tesseract fails",
                "only coset-ml fails", "coset-ml / Tesseract", "coset-ml CPU ms per shot",
                "Tesseract CPU ms per shot"], rows)


def joint_xz(name: str = "joint_xz_bb144.json") -> str:
    """Joint against split decoding of [[144,12,12]], one row per OSD key and DEM."""
    data = _json(name)
    rows = [[f"`{r['decoder']}`", r["dem"], f"{r['m']} x {r['n']}", f"{r['failures']} / {r['shots']:,}",
             f"{r['ler_per_round']:.2e} [{r['ler_per_round_low']:.2e}, {r['ler_per_round_high']:.2e}]",
             f"{r['ms_per_shot']:.1f}", f"{r['bp_converged']:.2f}",
             *("-" if r[c] is None else str(r[c]) for c in ("fails_only_here", "fails_only_other"))]
            for r in data["rows"]]
    return _md(["decoder", "DEM", "H", "failures", "LER per round [interval]", "CPU ms per shot", "BP converged",
                "fails only here", "fails only in the other DEM"], rows)


def joint_xz_pooled(*names: str) -> str:
    """Joint against split decoding of [[144,12,12]], the failures of several samples (files) summed per row,
    with sinter's ``fit_binomial`` interval (factor 1000) of the pooled failure rate per shot; the rows that every
    file has."""
    from qdecode.sims.stats import fit_binomial

    pooled: dict[tuple[str, str], list[int]] = {}
    for name in names:
        for r in _json(name)["rows"]:
            acc = pooled.setdefault((r["decoder"], r["dem"]), [0, 0, 0])
            acc[0] += r["failures"]
            acc[1] += r["shots"]
            acc[2] += 1
    rows = []
    for (decoder, dem), (failures, shots, files) in pooled.items():
        if files < len(names):
            continue
        fit = fit_binomial(num_shots=shots, num_hits=failures, max_likelihood_factor=1e3)
        rows.append([f"`{decoder}`", dem, f"{failures} / {shots:,}",
                     f"{fit.best:.2e} [{fit.low:.2e}, {fit.high:.2e}]"])
    return _md(["decoder", "DEM", "failures (pooled)", "LER per shot [interval]"], rows)


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
    """One row per decoder, a column per ``max_errors``: recorded errors (median, max over seeds) and shots."""
    data = _json("overshoot.json")["rows"]
    limits = list(dict.fromkeys(r["max_errors"] for r in data))
    cell = {(r["decoder"], r["max_errors"]): r for r in data}
    rows = [[name] + [f"{statistics.median(cell[(name, m)]['errors']):g}, {max(cell[(name, m)]['errors'])} "
                      f"({statistics.median(cell[(name, m)]['shots']):g} shots)" for m in limits]
            for name in dict.fromkeys(r["decoder"] for r in data)]
    return _md(["decoder"] + [f"max_errors {m}: errors recorded, median and max (shots, median)" for m in limits], rows)


def in_sweep_speed() -> str:
    import in_sweep_speed as m

    return m.render(str(RESULTS / "in_sweep_speed.json"))


def estimate_accuracy() -> str:
    import estimate_accuracy as m

    return m.render([str(RESULTS / f"estimate_accuracy_{x}.json") for x in ("after", "after_bp")])


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
    """One row per (d, p): each decoder's failures and time per shot on the same shots."""
    from qdecode.sims.stats import fit_binomial

    data = _json("uf_vs_pymatching.json")["rows"]
    decoders = list(dict.fromkeys(r["decoder"] for r in data))
    points = list(dict.fromkeys((r["d"], r["p"]) for r in data))
    cell = {(r["d"], r["p"], r["decoder"]): r for r in data}
    rows = []
    for d, p in points:
        ref = cell[(d, p, "pymatching")]
        f = fit_binomial(num_shots=ref["shots"], num_hits=ref["failures"], max_likelihood_factor=1e3)
        rows.append([str(d), f"{p:g}", f"{ref['shots']:,}"]
                    + [f"{cell[(d, p, n)]['failures']} ({cell[(d, p, n)]['us_per_shot']:.1f} us)" for n in decoders]
                    + [f"{f.best:.2e} [{f.low:.2e}, {f.high:.2e}]"])
    return _md(["d", "p", "shots"] + [f"`{n}`" for n in decoders] + ["PyMatching's LER per shot"], rows)


def heralds() -> str:
    """One row per (d, decoder) on the heralded circuit: failures with the LER interval, time per shot, and the
    ratios the goals name (failures / herald-blind PyMatching's, time / PyMatching's on the same circuit)."""
    data = _json("heralds.json")["rows"]
    rows = []
    for d in dict.fromkeys(r["d"] for r in data):
        blind = next(r for r in data if r["d"] == d and r["decoder"] == "pymatching[heralds=ignore]")
        for r in (r for r in data if r["d"] == d):
            what = "no erasures" if r["circuit"] == "no erasures" else r["uses"]
            rows.append([str(d), f"`{r['decoder']}`", what, f"{r['failures']:,} / {r['shots']:,}",
                         f"{r['ler']:.1e} [{r['ler_low']:.1e}, {r['ler_high']:.1e}]", f"{r['us_per_shot']:.1f}",
                         f"{r['failures'] / max(1, blind['failures']):.3f}",
                         f"{r['us_per_shot'] / blind['us_per_shot']:.1f}"])
    return _md(["d", "decoder", "heralds", "failures / shots", "LER per shot [interval]", "us / shot",
                "failures / blind", "time / blind"], rows)


def heralds_threshold() -> str:
    """One row per erasure fraction: each decoder's finite-size-scaling threshold with its 95 % interval."""
    data = _json("heralds_threshold.json")["rows"]
    decoders = list(dict.fromkeys(r["decoder"] for r in data))
    cell = {(r["decoder"], r["F"]): r for r in data}
    rows = []
    for f in sorted({r["F"] for r in data}):
        row = [f"{f:g}"]
        for name in decoders:
            r = cell.get((name, f))
            row.append("-" if r is None or r["p_th"] != r["p_th"] else
                       f"{100 * r['p_th']:.2f} % [{100 * r['low']:.2f}, {100 * r['high']:.2f}]")
        rows.append(row)
    return _md(["F"] + [f"`{n}`" for n in decoders], rows)


def nr5g_aff3ct() -> str:
    """One row per (code, Eb/N0, format): frames, frame errors on the message and on the sent bits, the FER with
    its ~95 % interval, and AFF3CT's value (inside the interval or not)."""
    data = _json("nr5g_aff3ct.json")["rows"]
    rows = [[f"`{r['code']}`", f"{r['ebn0']:g}", r["format"], f"{r['frames']:,}", str(r["fe_info"]), str(r["fe_sent"]),
             f"{r['fer']:.2e} [{r['fer_low']:.2e}, {r['fer_high']:.2e}]", f"{r['aff3ct_fer']:.2e}",
             "yes" if r["aff3ct_inside"] else "**no**"] for r in data]
    return _md(["code", "Eb/N0 (dB)", "format", "frames", "FE (message)", "FE (sent bits)", "FER [~95 %]",
                "AFF3CT", "inside"], rows)


def nr5g_speed() -> str:
    """One row per decoder on the BG1 Z = 288 code: time per frame, information throughput, ns per
    edge-iteration and the time ratio to ``ldpc-ms[bits=8]``."""
    data = _json("nr5g_speed.json")
    rows = [[r["decoder"], str(r["frames"]), f"{r['us_per_frame']:,.0f}", f"{r['info_mbps']:.2f}",
             f"{r['ns_per_edge_iteration']:.3f}", f"{r['time_ratio_to_ldpc_ms_i8']:.1f}"] for r in data["rows"]]
    return _md(["decoder", "frames", "us / frame", "info Mb/s", "ns / edge-iteration", "time / ldpc-ms[bits=8]"],
               rows)


def rtl_qc_synth() -> str:
    """The Z-wide layered RTL of nr5g[bg=2,k=512,n=1024]: cycles, the bit-exact simulation, yosys resources."""
    data = _json("rtl_qc_synth.json")
    d, sim = data["design"], data["simulation"]
    rows = [[t, f"{r['luts']:,}", f"{r['ffs']:,}", f"{r['carry']:,}", str(r["bram"]),
             ", ".join(f"{n} {k}" for k, n in r["ram_cells"].items())] for t, r in data["synthesis"].items()]
    head = (f"Z = {d['Z']}, {d['bits']}-bit OMS (beta {d['beta']} steps), {d['max_iter']} iterations: "
            f"{d['cycles_per_iteration']} cycles per iteration ({d['cycles_per_iteration_formula']}), "
            f"{d['latency_cycles']:,} from start to done, {d['frame_cycles']:,} per frame with the load. "
            f"Simulation ({sim['simulator']}): {sim['frames']} frames, {sim['mismatches']['hard']} hard-decision, "
            f"{sim['mismatches']['converged']} convergence and {sim['mismatches']['cycles']} cycle-count "
            f"mismatches against the kernel.\n\n")
    return head + _md(["target", "LUTs", "FFs", "carry", "block RAM", "RAM cells"], rows)


def relay_lanes() -> str:
    """One row per decoder: shots/s at each p (ratio to relay-bp 0.2.1's F64 runner) and failures."""
    data = _json("relay_lanes.json")["rows"]
    ps = list(dict.fromkeys(r["p"] for r in data))
    names = list(dict.fromkeys(r["decoder"] for r in data))
    cell = {(r["decoder"], r["p"]): r for r in data}
    rows = [[n.replace("qdecode relay-bp", "qdecode `relay-bp`").replace(" ObservableDecoderRunner", "")]
            + [f"{cell[(n, p)]['shots'] / cell[(n, p)]['seconds']:.1f} (x{cell[(n, p)]['ratio_to_relay_bp_f64']:.2f})"
               for p in ps]
            + [" / ".join(str(cell[(n, p)]["failures"]) for p in ps)] for n in names]
    shots = data[0]["shots"]
    return _md(["decoder"] + [f"p = {p:g}: shots/s (vs relay-bp F64)" for p in ps]
               + [f"failures / {shots:,} ({', '.join(f'{p:g}' for p in ps)})"], rows)


def bm_vs_galois() -> str:
    rows = []
    for r in _json("bm_vs_galois.json")["rows"]:
        rows.append([r["code"], f"{r['words']:,}", f"{r['errors_per_word']:.2f}", str(r["failures"]),
                     f"{r['ours_1t']:,.0f}", f"{r['galois']:,.0f}", f"{r['ratio_1t']:.0f}x",
                     f"{r['agree_words']} / {r['agree_fail']}", "-" if r["numpy"] is None else f"{r['numpy']:,.0f}"])
    return _md(["code", "words", "errors per word", "BM failures", "qdecode words/s (1 thread)", "galois words/s",
                "speed-up", "same words / same failure flags", "numpy BM words/s"], rows)


def polar_speed() -> str:
    """One row per decoder, a column per code: qdecode's blocks/s (CPU) and its ratio to numpy's."""
    data = _json("polar_speed.json")["rows"]
    codes = list(dict.fromkeys(r["code"] for r in data))
    cell = {(r["decoder"], r["code"]): r for r in data}

    def fmt(r: dict) -> str:
        return (f"{r['blocks_per_s_cpu']:,.0f} ({r['blocks_per_s_cpu'] / r['numpy_blocks_per_s_cpu']:.1f}x numpy; "
                f"agreement {r['agreement']:.4f}; BLER {r['bler']:.3g})")
    rows = [[name] + [fmt(cell[(name, c)]) for c in codes] for name in dict.fromkeys(r["decoder"] for r in data)]
    return _md(["decoder"] + [f"{c}: blocks/s (CPU)" for c in codes], rows)


# --- Relay-BP, streaming ---------------------------------------------------------------------------------------

def gdg_window() -> str:
    import gdg_window as m

    return m.table(_json("gdg_window.json")).rstrip("\n")


def relay_ensemble() -> str:
    import relay_ensemble as m

    return m.table(_json("relay_ensemble.json")).rstrip("\n")


#: The deadline targets of an ensemble against the serial decoder of its code (ratios of ``relay_ensemble.json``).
ENSEMBLE_TARGETS = (("p99.9_ratio", 0.4), ("ler_2x_ratio", 0.1), ("mean_ratio", 1.3))


def relay_ensemble_targets() -> str:
    """Each configuration's ratios to the serial decoder against the targets, and its LER without a deadline."""
    rows = []
    for key, entry in _json("relay_ensemble.json")["codes"].items():
        for spec, ratio in entry["ratios"].items():
            if spec == entry["serial"]:
                continue
            cells = []
            for field, target in ENSEMBLE_TARGETS:
                x = ratio[field]
                cells.append(f"{x:.4f}" if field == "ler_2x_ratio" else f"{x:.2f}")
                cells[-1] += ": met" if x <= target else ": **not met**"
            run = entry["results"][spec]["runs"][0]
            rows.append([f"`{spec}`", key, *cells, f"{run['ler']:.1e} ({run['errors']} / {run['shots']:,})"])
    return _md(["configuration", "run", "p99.9 / serial (<= 0.4)", "LER@2x / serial (<= 0.1)", "mean / serial (<= 1.3)",
                "LER, no deadline"], rows)


def deadline_bp() -> str:
    """BP's LER under a work-clock and a wall-clock deadline on [[144,12,12]], miss against anytime policy."""
    from qdecode.cli.deadline import group_report
    from qdecode.sims.store import merge_rows, read_rows

    (row,) = merge_rows(read_rows(str(RESULTS / "deadline_bp_bb144.csv"))).values()
    reports = {policy: group_report(row, [5e6], [10, 20, 50], policy) for policy in ("miss", "anytime")}
    rows = []
    for clock, fmt in (("work", lambda d: f"{d:g} iterations"), ("wall", lambda d: f"{d / 1e6:g} ms")):
        miss, anytime = (reports[p][clock]["deadlines"] for p in ("miss", "anytime"))
        for m, a in zip(miss, anytime):
            rows.append([fmt(m["deadline"]), f"{m['late']:,}", f"{m['error_rate']:.3f}", f"{a['error_rate']:.3f}"])
    rows.append(["none", "0", f"{row.errors / row.shots:.3f}", f"{row.errors / row.shots:.3f}"])
    return _md(["deadline", "late shots", "LER, miss", "LER, anytime"], rows)


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
    """p = 0.003, one row per decoder, a column per abort target: kept errors / kept shots (abort reached)."""
    import numpy as np
    from _common import kept_after_abort

    from qdecode.sims.stats import fit_binomial

    targets = (0.0, 0.01, 0.05, 0.19)
    data = np.load(RESULTS / "confidence_bb144_p0.003.npz")  # p = 0.001: no decoder failed (the prose says so)
    rows = []
    for key in sorted(k for k in data.files if k.endswith("|conf")):
        spec = key[:-len("|conf")]
        conf, fail = data[key], data[f"{spec}|fail"]
        cells = []
        for target in targets:
            kept = kept_after_abort(conf, target)
            n, e = int(kept.sum()), int(fail[kept].sum())
            f = fit_binomial(num_shots=n, num_hits=e, max_likelihood_factor=1e3)
            cells.append(f"{e} / {n:,} ({1 - n / len(conf):.2%}; {f.best:.1e} [{f.low:.1e}, {f.high:.1e}])")
        rows.append([f"`{spec}`", *cells])
    return _md(["p = 0.003: decoder (confidence)"] + [f"abort <= {t:.0%}: kept errors / kept (abort reached; LER "
                                                       "[band])" for t in targets], rows)


def gap_discard() -> str:
    """One row per distance, a column per discard target: LER among kept shots (gap threshold, discarded)."""
    from qdecode.sims.gap_bins import at_max_discard, discard_curve
    from qdecode.sims.store import merge_rows, read_rows

    targets = (0.0, 0.01, 0.10)
    rows = []
    merged = sorted(merge_rows(read_rows(str(RESULTS / "gap_discard_surface.csv"))).values(),
                    key=lambda r: r.json_metadata.get("d", 0))
    for row in merged:
        curve = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)
        cells = []
        for target in targets:
            pt = at_max_discard(curve, target)
            gap = "" if pt.threshold is None else f"gap >= {pt.threshold} dB, "
            cells.append(f"{pt.fit.best:.3e} [{pt.fit.low:.3e}, {pt.fit.high:.3e}] ({gap}{pt.discard_rate:.2%} "
                         f"discarded, {pt.kept_errors:,} errors)")
        rows.append([str(row.json_metadata["d"]), f"{row.shots:,}", *cells])
    return _md(["d", "shots"] + [f"discard <= {t:.0%}: LER per shot among kept" for t in targets], rows)


#: table name -> formatter (no arguments; reads its result files from benchmarks/results/).
def cold_start() -> str:
    import cold_start as m

    return m.table(str(RESULTS / "cold_start.json"))


TABLES: dict[str, Callable[[], str]] = {
    "harness-overhead": harness_overhead,
    "in-sweep-speed": in_sweep_speed,
    "estimate-accuracy": estimate_accuracy,
    "overshoot": overshoot,
    "bp-vs-peers-speed": bp_vs_peers_speed,
    "uf-vs-pymatching": uf_vs_pymatching,
    "heralds": heralds,
    "heralds-threshold": heralds_threshold,
    "nr5g-aff3ct": nr5g_aff3ct,
    "nr5g-speed": nr5g_speed,
    "rtl-qc-synth": rtl_qc_synth,
    **{f"frontier-{p}": (lambda p=p: frontier_table(p)) for p in FRONTIER},
    "frontier-summary": frontier_summary,
    "native-vs-tesseract": native_vs_tesseract,
    **{f"native-vs-tesseract-{p}": (lambda p=p: native_vs_tesseract(p)) for p in ("superdense-d5", "superdense-d7")},
    "mle-floor": mle_floor,
    "coset-ml-floor": coset_ml_floor,
    "coset-ml-all-shots": lambda: coset_ml_all_shots("coset_ml_all_shots.json", "coset_ml_all_shots_seed1.json"),
    "joint-xz": joint_xz,
    "joint-xz-p0.003": lambda: joint_xz("joint_xz_bb144_p0.003.json"),
    "joint-xz-p0.003-seed1": lambda: joint_xz("joint_xz_bb144_p0.003_seed1.json"),
    "joint-xz-bb288-p0.003": lambda: joint_xz("joint_xz_bb288_p0.003.json"),
    "joint-xz-p0.003-pooled": lambda: joint_xz_pooled("joint_xz_bb144_p0.003.json", "joint_xz_bb144_p0.003_seed1.json"),
    "class-escalate-observables": class_escalate_observables,
    "confidence-cost": confidence_cost,
    "gap-discard": gap_discard,
    "confidence-bb144": confidence_bb144,
    "relay-lanes": relay_lanes,
    "relay-ensemble": relay_ensemble,
    "gdg-window": gdg_window,
    "relay-ensemble-targets": relay_ensemble_targets,
    "deadline-bp": deadline_bp,
    "streaming": streaming,
    "bm-vs-galois": bm_vs_galois,
    "polar-speed": polar_speed,
    "cold-start": cold_start,
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
