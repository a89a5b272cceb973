"""Resources and cycle counts of the Z-wide layered QC-LDPC min-sum RTL (``qdecode.hw.rtl.qc_layered``), 5G NR BG2.

Design: ``qdecode export-rtl --code 'nr5g[bg=2,k=512,n=1024]'``: base graph 2 (42 x 52 base matrix, 197 blocks),
Z = 64, the decoder ``ldpc-ms`` at its defaults (8 bits, 2 fraction bits, offset min-sum beta 0.5 = 2 steps,
10 iterations), without early stop. Cycles from the schedule: ``2 nnz + rows`` per iteration, ``max_iter (2 nnz
+ rows) + nnz + cols + 3`` from ``start`` to ``done`` (iterations, syndrome pass, output pass), plus ``cols``
cycles to load a frame.

Checks and figures:

- bit-exact simulation (Verilator by default; Icarus Verilog is slow at Z = 64) of ``--frames`` random frames
  (random messages, BPSK over AWGN at ``--ebn0`` dB) against the kernel ``qc_minsum_range``: mismatches (must be
  0) and the measured cycles per frame, which must equal the formula;
- yosys synthesis (``run_synth``) for each of ``--targets``: LUT / carry / FF / block-RAM counts from
  ``stat -json`` and every RAM cell (``ram_cells``: block RAM and, on Xilinx, the LUT RAM ``RAM64M`` yosys may
  choose for the small posterior memory; those are not in ``luts``). Xilinx 7-series: ``synth_xilinx -flatten``,
  resource counts only, no place and route here; iCE40: ``synth_ice40``, the design does not fit one device.

Usage::

    python benchmarks/rtl_qc_synth.py [--code 'nr5g[bg=2,k=512,n=1024]'] [--targets xc7,ice40] [--frames 8]
        [--ebn0 1.25] [--simulator verilator] [--timeout 1800] [--keep DIR]
        [--json benchmarks/results/rtl_qc_synth.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _common import write_result

from qdecode.codes.catalog import get_code
from qdecode.decoders.qc_ldpc import QcMinSumDecoder
from qdecode.hw.rtl import run_synth
from qdecode.hw.rtl.qc_layered import design_from_qc_decoder, export_qc_vectors, generate_qc_layered, simulate_qc
from qdecode.hw.rtl.synth import tool_version
from qdecode.sims.channels import BpskAwgn


def _simulate(work: Path, code, decoder, args) -> dict:
    rng = np.random.default_rng(args.seed)
    words = code.encode(rng.integers(0, 2, (args.frames, code.K), dtype=np.uint8))
    llr = BpskAwgn(args.ebn0, code.rate).transmit(words, rng)
    vm = export_qc_vectors(decoder, llr, work / "vectors", description={"ebn0": args.ebn0, "seed": args.seed})
    r = simulate_qc(work / "design", work / "vectors", simulator=args.simulator, timeout=args.timeout)
    print(r.summary(), file=sys.stderr)
    exe = ["verilator", "--version"] if args.simulator == "verilator" else ["iverilog", "-V"]
    return {"simulator": args.simulator, "tool": tool_version(exe),
            "frames": r.shots, "ebn0_db": args.ebn0, "seed": args.seed,
            "converged_frames": vm["converged_frames"], "mismatches": r.mismatches, "failed_frames": r.failed,
            "total_cycles": r.total_cycles, "cycles_per_frame_measured": r.total_cycles / max(r.shots, 1),
            "compile_s": round(r.compile_s, 1), "run_s": round(r.run_s, 2)}


def _synth(work: Path, target: str, timeout: float) -> dict:
    try:
        r = run_synth(work / "design", target, top="qc_top", timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout} s"}
    except RuntimeError as exc:
        return {"error": str(exc)[:300]}
    print(f"synth {target}: {r.resources} ({r.seconds:.0f} s)", file=sys.stderr)
    ram = {k.lstrip("\\$"): v for k, v in sorted(r.cells.items()) if "RAM" in k}  # block RAM and LUT RAM cells
    return {**r.resources, "ram_cells": ram, "seconds": round(r.seconds, 1), "tool": r.tool}


def run(args, work: Path) -> dict:
    code = get_code(args.code)
    decoder = QcMinSumDecoder(code, early_stop=False)
    shifts, z, cfg = design_from_qc_decoder(decoder)
    mf = json.loads(generate_qc_layered(shifts, z, cfg, work / "design")["rtl_manifest.json"])
    design = {k: mf[k] for k in ("Z", "rows", "cols", "nnz", "max_degree", "bits", "lim", "msg_lim", "qlim",
                                 "correction", "beta", "max_iter", "widths", "memories", "cycles_per_iteration",
                                 "cycles_per_iteration_formula", "latency_cycles", "latency_formula", "load_cycles",
                                 "frame_cycles")}
    design["frac_bits"] = cfg.frac_bits
    design["info_bits_per_cycle"] = round(code.K / mf["frame_cycles"], 4)
    out = {"code": code.name, "K": code.K, "E": code.E, "n_mother": code.n_mother, "design": design}
    if args.frames:
        sim = _simulate(work, code, decoder, args)
        sim["cycles_match_formula"] = sim["cycles_per_frame_measured"] == mf["latency_cycles"]
        out["simulation"] = sim
    out["synthesis"] = {t: _synth(work, t, args.timeout) for t in args.targets.split(",") if t}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", default="nr5g[bg=2,k=512,n=1024]")
    ap.add_argument("--targets", default="xc7,ice40", help="yosys targets, comma-separated (ice40, xc7, ecp5)")
    ap.add_argument("--frames", type=int, default=8, help="frames simulated bit-exact (0: none)")
    ap.add_argument("--ebn0", type=float, default=1.25)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--simulator", default="verilator", choices=["verilator", "iverilog"])
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--keep", metavar="DIR", help="keep the design and vectors in DIR (default: a temporary one)")
    ap.add_argument("--json", default=None, help="result file, e.g. benchmarks/results/rtl_qc_synth.json")
    args = ap.parse_args()
    if args.keep:
        res = run(args, Path(args.keep))
    else:
        with tempfile.TemporaryDirectory(prefix="rtl-qc-") as tmp:
            res = run(args, Path(tmp))
    print(json.dumps(res, indent=1))
    write_result(args.json, res)
    sim = res.get("simulation")
    return 1 if sim and (sim["failed_frames"] or not sim["cycles_match_formula"]) else 0


if __name__ == "__main__":
    sys.exit(main())
