"""Resources and timing of the generated min-sum RTL (``qdecode export-rtl``) with the open tools.

For each case (a code at code capacity, or a circuit-level DEM) the script writes the fully
parallel flooding decoder (8-bit messages, 3 fraction bits by default; priors as constants),
synthesises it with yosys for iCE40 (``synth_ice40``), Xilinx 7-series (``synth_xilinx -flatten
-noiopad``) and ECP5 (``synth_ecp5``), reading LUT / carry / FF / BRAM counts from ``stat -json``,
and places and routes the iCE40 netlist with nextpnr-ice40 on the given device when it fits
(``--timing-allow-fail``; the report's achieved Fmax). With one cycle per iteration,
ns per iteration = 1000 / Fmax[MHz]; the decode latency is ``(iterations + 2)`` cycles, whose
mean and p99 come from the fixed-point reference model on ``--shots`` sampled syndromes.

Usage::

    python benchmarks/rtl_synth.py [--cases sc3cc,sc5cc,bb72cc] [--targets ice40,xc7,ecp5] \
        [--pnr hx8k] [--alpha 0.625] [--bits 8] [--frac-bits 3] [--timeout 1800] [--out table.md]

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
from qdecode.hw.rtl import run_pnr, run_synth
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
}


#: iCE40 logic cells per device (one LUT4 + carry + FF each)
ICE40_LCS = {"hx8k": 7680, "up5k": 5280, "hx1k": 1280}


def _fmt(x) -> str:
    return "-" if x is None else (f"{x:,}" if isinstance(x, int) else str(x))


def run_case(key: str, work: Path, args) -> dict:
    label, prob = CASES[key]
    fx = ["--bits", str(args.bits), "--frac-bits", str(args.frac_bits), "--alpha", str(args.alpha),
          "--max-iter", str(args.max_iter)]
    vdir, rdir = work / key / "vectors", work / key / "rtl"
    if qdecode_main(["export-vectors", *prob, *fx, "--shots", str(args.shots), "--seed", "1", "--out", str(vdir)]):
        raise RuntimeError(f"{key}: export-vectors failed")
    if qdecode_main(["export-rtl", "--vectors", str(vdir), "--out", str(rdir)]):
        raise RuntimeError(f"{key}: export-rtl failed")
    mf = json.loads((rdir / "rtl_manifest.json").read_text())
    iters = np.loadtxt(vdir / "expected_iters.txt", dtype=np.int64, ndmin=1)
    conv = np.loadtxt(vdir / "expected_converged.txt", dtype=np.int64, ndmin=1)
    row = {"key": key, "label": label, "m": mf["m"], "n": mf["n"], "edges": mf["edges"], "ff_formula": mf["flip_flops"],
           "iters_mean": float(iters.mean()), "iters_p99": float(np.percentile(iters, 99)),
           "converged": float(conv.mean()), "synth": {}, "pnr": None}
    for t in args.targets:
        print(f"[{key}] yosys {t} ...", file=sys.stderr, flush=True)
        try:
            r = run_synth(rdir, t, timeout=args.timeout)
            row["synth"][t] = {**r.resources, "seconds": round(r.seconds, 1)}
        except subprocess.TimeoutExpired:
            row["synth"][t] = {"error": f"timeout after {args.timeout} s"}
        except RuntimeError as exc:
            row["synth"][t] = {"error": str(exc)[:200]}
    luts = row["synth"].get("ice40", {}).get("luts")
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


def table(rows: list[dict], args) -> str:
    tools = f"{tool_version(['yosys', '-V'])}; {tool_version(['nextpnr-ice40', '--version'])}"
    out = [f"Generated flooding min-sum RTL, {args.bits}-bit messages ({args.frac_bits} fraction bits), alpha "
           f"{args.alpha}, max_iter {args.max_iter}, priors as constants, 1 cycle per iteration. Tools: {tools}.",
           "",
           "| design | m x n, edges | target | LUTs | carry | FFs (formula) | BRAM | yosys s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        first = True
        for t, s in r["synth"].items():
            head = f"| {r['label']} | {r['m']} x {r['n']}, {r['edges']} |" if first else "| | |"
            first = False
            if "error" in s:
                out.append(f"{head} {t} | {s['error']} | | | | |")
                continue
            unit = {"ice40": "LUT4", "xc7": "LUT6", "ecp5": "LUT4"}[t]
            out.append(f"{head} {t} | {_fmt(s['luts'])} {unit} | {_fmt(s['carry'])} | {_fmt(s['ffs'])} "
                       f"({_fmt(r['ff_formula'])}) | {s['bram']} | {s['seconds']} |")
    out += ["", f"iCE40 place and route (nextpnr-ice40 --{args.pnr}, seed 1, target {args.freq} MHz):", "",
            "| design | LCs used / available | Fmax MHz | ns / iteration | mean iterations (p99) | mean decode ns "
            "((iters + 2) cycles) | converged |",
            "|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["pnr"]
        if not p:
            out.append(f"| {r['label']} | not placed (does not fit the device) | | | {r['iters_mean']:.2f} "
                       f"({r['iters_p99']:.0f}) | | {100 * r['converged']:.1f} % |")
        elif "error" in p:
            out.append(f"| {r['label']} | {p['error']} | | | {r['iters_mean']:.2f} ({r['iters_p99']:.0f}) | | "
                       f"{100 * r['converged']:.1f} % |")
        else:
            ns = 1e3 / p["fmax_mhz"]
            out.append(f"| {r['label']} | {p['lc_used']:,} / {p['lc_available']:,} | {p['fmax_mhz']:.1f} | {ns:.1f} | "
                       f"{r['iters_mean']:.2f} ({r['iters_p99']:.0f}) | {(r['iters_mean'] + 2) * ns:.0f} | "
                       f"{100 * r['converged']:.1f} % |")
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
    args = ap.parse_args(argv)
    args.targets = [t for t in args.targets.split(",") if t]
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
