"""Resources and timing of the generated min-sum RTL (``qdecode export-rtl``) with the open tools.

For each case (a code at code capacity, or a circuit-level DEM) the script writes the fully
parallel flooding decoder (8-bit messages, 3 fraction bits by default; priors as constants),
synthesises it with yosys for iCE40 (``synth_ice40``), Xilinx 7-series (``synth_xilinx -flatten
-noiopad``) and ECP5 (``synth_ecp5``), reading LUT / carry / FF / BRAM counts from ``stat -json``,
and places and routes the iCE40 netlist with nextpnr-ice40 on the given device when it fits
(``--timing-allow-fail``; the report's achieved Fmax). ns per iteration = cycles per iteration
x 1000 / Fmax[MHz]; the decode latency is ``iterations x cycles_per_iteration + 2`` cycles, whose
mean and p99 come from the fixed-point reference model on ``--shots`` sampled syndromes.

``--parallelism KEY=P,...`` writes the folded design (``qdecode export-rtl --parallelism P``,
``ceil(m/P) + ceil(n/P)`` cycles per iteration) for those cases; ``--slice KEY,...`` synthesises
only its repeating unit (``bp_slice``: PE pair 0 with its multiplexers) and ``bp_syndrome_test``
and extrapolates ``P x slice + syndrome test`` (flip-flops are exact from the manifest), for designs
too big for yosys on a small machine. ``--simulate`` replays ``--sim-shots`` vectors in Icarus
Verilog and checks the measured cycles against ``sum(iterations) x cycles_per_iteration + 2 x shots``.

Usage::

    python benchmarks/rtl_synth.py [--cases sc3cc,sc5cc,bb72cc] [--targets ice40,xc7,ecp5] \
        [--pnr hx8k] [--alpha 0.625] [--bits 8] [--frac-bits 3] [--timeout 1800] [--out table.md] \
        [--parallelism sc5cc=4,bb144dem=72] [--slice bb144dem] [--simulate --sim-shots 20]

Prints a markdown table (and writes it to ``--out``); work files go to a temporary directory
(``--keep DIR`` keeps them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from qdecode.cli.main import main as qdecode_main
from qdecode.hw.rtl import run_pnr, run_synth, simulate
from qdecode.hw.rtl.synth import tool_version

CASES = {
    "sc3cc": ("surface d=3, code capacity p=0.05", ["--code", "surface", "--d", "3", "--noise", "code-capacity",
                                                    "--p", "0.05"]),
    "sc5cc": ("surface d=5, code capacity p=0.05", ["--code", "surface", "--d", "5", "--noise", "code-capacity",
                                                    "--p", "0.05"]),
    "bb72cc": ("[[72,12,6]] BB, code capacity p=0.05", ["--code", "bb72_12_6", "--noise", "code-capacity",
                                                         "--p", "0.05"]),
    "sc3sd6": ("surface d=3, SD6 circuit p=0.005 (3 rounds)", ["--code", "surface", "--d", "3", "--noise", "sd6",
                                                                "--p", "0.005"]),
    "bb144dem": ("gross code [[144,12,12]] DEM, bb-uniform p=0.003", ["--code", "bb144_12_12", "--noise",
                                                                       "bb-uniform", "--p", "0.003"]),
}
#: per-case fixed-point overrides (circuit-level DEMs want alpha 1.0: at 0.625 few gross-DEM shots converge)
CASE_FX = {"bb144dem": {"alpha": "1.0"}}


#: iCE40 logic cells per device (one LUT4 + carry + FF each)
ICE40_LCS = {"hx8k": 7680, "up5k": 5280, "hx1k": 1280}


def _fmt(x) -> str:
    return "-" if x is None else (f"{x:,}" if isinstance(x, int) else str(x))


def _synth(rdir: Path, t: str, args, **kw) -> dict:
    try:
        r = run_synth(rdir, t, timeout=args.timeout, **kw)
        return {**r.resources, "seconds": round(r.seconds, 1)}
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {args.timeout} s"}
    except RuntimeError as exc:
        return {"error": str(exc)[:200]}


def _synth_slice(rdir: Path, t: str, args, P: int, ffs: int) -> dict:
    """``P x bp_slice + bp_syndrome_test`` (LUT / carry counts extrapolated), flip-flops from the formula."""
    sl = _synth(rdir, t, args, top="bp_slice", prefix="slice_")
    script = (rdir / f"synth_slice_{t}.ys").read_text().replace("-top bp_slice", "-top bp_syndrome_test")
    script = script.replace("bp_slice_", "bp_syndrome_test_")
    (rdir / f"synth_synd_{t}.ys").write_text(script.replace(f"stat_slice_{t}", f"stat_synd_{t}"))
    sy = _synth(rdir, t, args, top="bp_syndrome_test", prefix="synd_")
    if "error" in sl or "error" in sy:
        return {"error": sl.get("error") or sy.get("error")}
    out = {k: P * sl[k] + sy[k] for k in sl if k not in ("seconds", "ffs")}
    return {**out, "ffs": ffs, "seconds": round(sl["seconds"] + sy["seconds"], 1), "slice": sl, "syndrome_test": sy,
            "extrapolated": True}


def run_case(key: str, work: Path, args) -> dict:
    label, prob = CASES[key]
    opts = {"bits": str(args.bits), "frac-bits": str(args.frac_bits), "alpha": str(args.alpha),
            "max-iter": str(args.max_iter), **CASE_FX.get(key, {})}
    fx = [x for k, v in opts.items() for x in (f"--{k}", v)]
    vdir, rdir = work / key / "vectors", work / key / "rtl"
    if qdecode_main(["export-vectors", *prob, *fx, "--shots", str(args.shots), "--seed", "1", "--out", str(vdir)]):
        raise RuntimeError(f"{key}: export-vectors failed")
    P = args.parallelism.get(key)
    if qdecode_main(["export-rtl", "--vectors", str(vdir), "--out", str(rdir)]
                    + (["--parallelism", str(P)] if P else [])):
        raise RuntimeError(f"{key}: export-rtl failed")
    mf = json.loads((rdir / "rtl_manifest.json").read_text())
    cpi = int(mf["cycles_per_iteration"])
    if P and cpi != -(-mf["m"] // P) + -(-mf["n"] // P):
        raise RuntimeError(f"{key}: manifest cycles per iteration {cpi} != ceil(m/P) + ceil(n/P)")
    iters = np.loadtxt(vdir / "expected_iters.txt", dtype=np.int64, ndmin=1)
    conv = np.loadtxt(vdir / "expected_converged.txt", dtype=np.int64, ndmin=1)
    row = {"key": key, "label": label, "m": mf["m"], "n": mf["n"], "edges": mf["edges"], "ff_formula": mf["flip_flops"],
           "arch": f"folded P={P}" if P else "fully parallel", "cpi": cpi, "alpha": opts["alpha"],
           "iters_mean": float(iters.mean()), "iters_p99": float(np.percentile(iters, 99)),
           "converged": float(conv.mean()), "synth": {}, "pnr": None, "sim": None}
    if args.simulate:
        row["sim"] = _simulate(key, prob, fx, work, rdir, cpi, args)
    for t in args.targets:
        print(f"[{key}] yosys {t}{' (slice)' if key in args.slice else ''} ...", file=sys.stderr, flush=True)
        if key in args.slice:
            row["synth"][t] = _synth_slice(rdir, t, args, P, mf["flip_flops"])
        else:
            row["synth"][t] = _synth(rdir, t, args)
    luts = row["synth"].get("ice40", {}).get("luts")
    if key in args.slice:
        luts = None  # an extrapolation: nothing to place
    if args.pnr and luts is not None and luts > ICE40_LCS.get(args.pnr, luts):
        row["pnr"] = {"error": f"does not fit: {luts:,} LUT4 > {ICE40_LCS[args.pnr]:,} LCs"}
    elif args.pnr and luts is not None:
        print(f"[{key}] nextpnr-ice40 {args.pnr} ...", file=sys.stderr, flush=True)
        try:
            pr = run_pnr(rdir, args.pnr, freq_mhz=args.freq, timeout=args.timeout)
            row["pnr"] = {"fmax_mhz": round(pr.fmax_mhz, 2), "lc_used": pr.lc_used, "lc_available": pr.lc_available,
                          "seconds": round(pr.seconds, 1)}
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            msg = str(exc)
            row["pnr"] = {"error": msg[msg.find("ERROR"):][:120] if "ERROR" in msg else msg[:120]}
    return row


def _simulate(key: str, prob: list[str], fx: list[str], work: Path, rdir: Path, cpi: int, args) -> dict:
    """Replay ``--sim-shots`` fresh vectors in iverilog; check the cycles against the formula."""
    sdir = work / key / "sim_vectors"
    if qdecode_main(["export-vectors", *prob, *fx, "--shots", str(args.sim_shots), "--seed", "2", "--out",
                     str(sdir)]):
        raise RuntimeError(f"{key}: export-vectors (simulation set) failed")
    print(f"[{key}] iverilog, {args.sim_shots} shots ...", file=sys.stderr, flush=True)
    rep = simulate(rdir, sdir, build_dir=work / key / "sim", timeout=args.timeout)
    its = np.loadtxt(sdir / "expected_iters.txt", dtype=np.int64, ndmin=1)
    want = int(its.sum()) * cpi + 2 * args.sim_shots
    return {"shots": rep.shots, "failed": rep.failed, "mismatches": rep.mismatches, "total_cycles": rep.total_cycles,
            "formula_cycles": want, "cycles_match": rep.total_cycles == want, "iterations": int(its.sum()),
            "measured_cpi": (rep.total_cycles - 2 * args.sim_shots) / max(1, int(its.sum())),
            "compile_s": round(rep.compile_s, 1), "run_s": round(rep.run_s, 1)}


def table(rows: list[dict], args) -> str:
    tools = f"{tool_version(['yosys', '-V'])}; {tool_version(['nextpnr-ice40', '--version'])}"
    out = [f"Generated flooding min-sum RTL, {args.bits}-bit messages ({args.frac_bits} fraction bits), alpha "
           f"{args.alpha} (per-case overrides: {CASE_FX}), max_iter {args.max_iter}, priors as constants. "
           f"Tools: {tools}.",
           "",
           "| design | m x n, edges | architecture | cycles / iteration | target | LUTs | carry | FFs (formula) | BRAM "
           "| yosys s |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        first = True
        for t, s in r["synth"].items():
            head = (f"| {r['label']} | {r['m']} x {r['n']}, {r['edges']} | {r['arch']} | {r['cpi']} |" if first
                    else "| | | | |")
            first = False
            if "error" in s:
                out.append(f"{head} {t} | {s['error']} | | | | |")
                continue
            unit = {"ice40": "LUT4", "xc7": "LUT6", "ecp5": "LUT4"}[t]
            ext = ""
            if s.get("extrapolated"):
                ext = (f" (extrapolated: {r['arch'].split('=')[-1]} x {_fmt(s['slice']['luts'])} per slice + "
                       f"{_fmt(s['syndrome_test']['luts'])} syndrome test)")
            out.append(f"{head} {t} | {_fmt(s['luts'])} {unit}{ext} | {_fmt(s['carry'])} | {_fmt(s['ffs'])} "
                       f"({_fmt(r['ff_formula'])}) | {s['bram']} | {s['seconds']} |")
    title = (f"iCE40 place and route (nextpnr-ice40 --{args.pnr}, seed 1, target {args.freq} MHz):" if args.pnr
             else "Iteration statistics of the reference model (no place and route):")
    out += ["", title, "",
            "| design | LCs used / available | Fmax MHz | ns / iteration | mean iterations (p99) | mean decode ns "
            "((iters x cpi + 2) cycles) | converged |",
            "|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["pnr"]
        if not p:
            out.append(f"| {r['label']} | not placed | | | {r['iters_mean']:.2f} "
                       f"({r['iters_p99']:.0f}) | | {100 * r['converged']:.1f} % |")
        elif "error" in p:
            out.append(f"| {r['label']} | {p['error']} | | | {r['iters_mean']:.2f} ({r['iters_p99']:.0f}) | | "
                       f"{100 * r['converged']:.1f} % |")
        else:
            ns_cyc = 1e3 / p["fmax_mhz"]
            ns = r["cpi"] * ns_cyc
            out.append(f"| {r['label']} ({r['arch']}) | {p['lc_used']:,} / {p['lc_available']:,} | {p['fmax_mhz']:.1f} "
                       f"| {ns:.1f} | {r['iters_mean']:.2f} ({r['iters_p99']:.0f}) | "
                       f"{(r['iters_mean'] * r['cpi'] + 2) * ns_cyc:.0f} | {100 * r['converged']:.1f} % |")
    sims = [r for r in rows if r.get("sim")]
    if sims:
        out += ["", "Icarus Verilog replay (bit-exact check and cycles per iteration from simulation):", "",
                "| design | shots | failed | iterations | cycles measured | formula sum(it) x cpi + 2 x shots | "
                "cycles / iteration measured | compile s | run s |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in sims:
            s = r["sim"]
            out.append(f"| {r['label']} ({r['arch']}) | {s['shots']} | {s['failed']} | {s['iterations']} | "
                       f"{s['total_cycles']:,} | {s['formula_cycles']:,} | {s['measured_cpi']:.2f} | "
                       f"{s['compile_s']} | {s['run_s']} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="sc3cc,sc5cc,bb72cc", help=f"comma list of {', '.join(CASES)}")
    ap.add_argument("--targets", default="ice40,xc7,ecp5")
    ap.add_argument("--pnr", default="hx8k", help="iCE40 device for nextpnr (hx8k, up5k, hx1k; '' = none)")
    ap.add_argument("--freq", type=float, default=50.0, help="nextpnr target MHz (default 50)")
    ap.add_argument("--bits", type=int, default=8)
    ap.add_argument("--frac-bits", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=0.625)
    ap.add_argument("--max-iter", type=int, default=50)
    ap.add_argument("--shots", type=int, default=1000, help="syndromes for the iteration statistics")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per yosys / nextpnr run")
    ap.add_argument("--out", help="also write the markdown table here")
    ap.add_argument("--json", help="also write the raw rows here")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one)")
    ap.add_argument("--parallelism", default="", help="folded cases: KEY=P,... (default: all fully parallel)")
    ap.add_argument("--slice", default="", help="folded cases to synthesise as P x slice + syndrome test")
    ap.add_argument("--simulate", action="store_true", help="replay --sim-shots vectors in iverilog per case")
    ap.add_argument("--sim-shots", type=int, default=20)
    args = ap.parse_args(argv)
    args.targets = [t for t in args.targets.split(",") if t]
    try:
        args.parallelism = {k: int(v) for k, v in (x.split("=") for x in args.parallelism.split(",") if x)}
    except ValueError:
        ap.error("--parallelism takes KEY=P,... with integer P")
    args.slice = {k for k in args.slice.split(",") if k}
    if args.slice - set(args.parallelism):
        ap.error("--slice cases need a --parallelism entry")
    keys = [k for k in args.cases.split(",") if k]
    for k in keys:
        if k not in CASES:
            ap.error(f"unknown case {k!r}; known: {', '.join(CASES)}")
    with tempfile.TemporaryDirectory(prefix="qdecode-rtl-synth-") as tmp:
        work = Path(args.keep or tmp)
        rows = [run_case(k, work, args) for k in keys]
    text = table(rows, args)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
