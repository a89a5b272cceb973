"""CRISP vs SC, SCL-8, SCL-32 and OSD-4 on the CRISP codes: BLER and throughput on the same blocks.

For every code and Eb/N0 (BPSK-AWGN, ``sigma^2 = 1 / (2 R Eb/N0)``, LLR ``2 y / sigma^2``;
:class:`qdecode.sims.channels.BpskAwgn`), batches of ``--batch`` random-message blocks are
decoded by every decoder until the decoder with the fewest block errors has ``--min-errors``
errors or ``--max-blocks`` blocks were sent. A block error is any codeword bit wrong. Every
decoder sees the same blocks (seed ``--seed``, batch index and Eb/N0 index), one thread each
(numba threads = 1, onnxruntime intra-op threads = 1). Throughput is blocks per second of
decode wall time summed over the batches (shared machine: compare ratios, not absolutes).

SC and SCL are the min-sum kernels of :mod:`qdecode.decoders.sc_scl`; OSD-4 on the code's
generator matrix is ~ML for k <= 22 (OSD-4 equals the ML lower bound there; benchmarks/README.md);
CRISP is the shipped (or ``--model``) onnxruntime model of :mod:`qdecode.decoders.crisp`.

Usage::

    python benchmarks/crisp.py [--codes polar32_16] [--ebn0 1,2,3,4] [--min-errors 100]
        [--max-blocks 60000] [--batch 5000] [--decoders sc,scl8,scl32,osd4,crisp] [--model PATH]
        [--json OUT.json] [--plot OUT.png]
    python benchmarks/crisp.py --replot OUT.json --plot OUT.png   # redraw a saved run

``--decoders`` entries: ``sc``, ``sclL`` (list size L), ``osdM`` (order M), ``crisp`` (the
``--model``) and ``crisp:NAME_OR_PATH`` (further CRISP models, e.g. the abrupt-training
ablation next to the curriculum model); a CRISP entry ending in ``@L`` (``crisp@4``,
``crisp:polar32_16_map@8``) decodes with beam search over ``L`` paths (``crisp[beam=L]``).
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from qdecode.codes.catalog import get_code  # noqa: E402
from qdecode.sims.channels import BpskAwgn  # noqa: E402


def build(name: str, code, model: str | None):
    from qdecode.decoders.classical_entries import binary_generator
    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.decoders.osd import OsdBlockDecoder
    from qdecode.decoders.sc_scl import ScDecoder, SclDecoder

    if name == "sc":
        return ScDecoder(code, threads=1)
    if name.startswith("scl"):
        return SclDecoder(code, list_size=int(name[3:]), threads=1)
    if name.startswith("osd"):
        return OsdBlockDecoder(G=binary_generator(code), order=int(name[3:]))
    beam = 1
    if name.startswith("crisp") and "@" in name:  # crisp@L / crisp:NAME@L: beam search with L paths
        name, _, b = name.rpartition("@")
        beam = int(b)
    if name.startswith("crisp:"):  # crisp:NAME_OR_PATH (e.g. the curriculum ablation's models side by side)
        return CrispDecoder(code, name.split(":", 1)[1], threads=1, beam=beam)
    if name == "crisp":
        return CrispDecoder(code, model or "auto", threads=1, beam=beam)
    raise ValueError(f"unknown decoder {name!r}")


def run_point(code, decs: dict, ebn0: float, args, point: int) -> dict:
    ch = BpskAwgn(ebn0, code.rate)
    errs = {n: 0 for n in decs}
    secs = {n: 0.0 for n in decs}
    blocks, b = 0, 0
    while blocks < args.max_blocks:
        rng = np.random.default_rng([args.seed, point, b])
        msgs = rng.integers(0, 2, size=(args.batch, code.k), dtype=np.uint8)
        x = code.encode(msgs)
        llr = ch.transmit(x, rng)
        for n, d in decs.items():
            t0 = time.perf_counter()
            xh = d.decode_llr_batch(llr)
            secs[n] += time.perf_counter() - t0
            errs[n] += int(np.any(xh != x, axis=1).sum())
        blocks += args.batch
        b += 1
        if min(errs.values()) >= args.min_errors:
            break
    return {"ebn0": ebn0, "blocks": blocks, "errors": errs,
            "bler": {n: errs[n] / blocks for n in decs},
            "blocks_per_s": {n: blocks / secs[n] if secs[n] > 0 else float("inf") for n in decs}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--codes", default="polar32_16")
    ap.add_argument("--ebn0", default="1,2,3,4")
    ap.add_argument("--min-errors", type=int, default=100)
    ap.add_argument("--max-blocks", type=int, default=60000)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--decoders", default="sc,scl8,scl32,osd4,crisp")
    ap.add_argument("--model", help="CRISP model (name or .onnx path; default: the one named after the code)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--plot", help="BLER vs Eb/N0 figure (one panel per code)")
    ap.add_argument("--replot", metavar="JSON", help="only draw --plot from the results a --json run saved")
    args = ap.parse_args()
    if args.replot:
        with open(args.replot, encoding="utf-8") as f:
            results = json.load(f)
        plot(results, list(results[0]["bler"]), args.plot or os.path.splitext(args.replot)[0] + ".png")
        return
    try:
        import numba

        numba.set_num_threads(1)
    except Exception:  # noqa: BLE001
        pass
    results = []
    names = args.decoders.split(",")
    for cname in args.codes.split(","):
        code = get_code(cname)
        decs = {n: build(n, code, args.model) for n in names}
        for d in decs.values():  # warm-up (JIT)
            d.decode_llr_batch(np.full((4, code.N), 3.0))
        print(f"\n## {cname} (N={code.N}, k={code.k})\n")
        print("| Eb/N0 (dB) | blocks | " + " | ".join(names) + " |")
        print("|---|---|" + "---|" * len(names))
        for i, eb in enumerate(float(e) for e in args.ebn0.split(",")):
            r = run_point(code, decs, eb, args, i)
            r["code"] = cname
            results.append(r)
            cells = [f"{r['bler'][n]:.3g} ({r['errors'][n]})" for n in names]
            print(f"| {eb:g} | {r['blocks']} | " + " | ".join(cells) + " |", flush=True)
        print("\nthroughput (blocks/s, 1 thread, mean over the points above): " + ", ".join(
            f"{n} {np.mean([r['blocks_per_s'][n] for r in results if r['code'] == cname]):,.0f}" for n in names))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    if args.plot:
        plot(results, names, args.plot)


def _legend_name(name: str) -> str:
    """``crisp:out/x/crisp_A.onnx@8`` -> ``crisp A, beam 8``; ``crisp@4`` -> ``crisp, beam 4``."""
    base, _, beam = name.partition("@")
    if base.startswith("crisp:"):
        model = os.path.basename(base.split(":", 1)[1])
        base = "crisp " + os.path.splitext(model)[0].removeprefix("crisp_")
    return f"{base}, beam {beam}" if beam else base


def plot(results: list[dict], names: list[str], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    codes = list(dict.fromkeys(r["code"] for r in results))
    fig, axes = plt.subplots(1, len(codes), figsize=(5 * len(codes), 4), squeeze=False)
    for ax, c in zip(axes[0], codes):
        rows = [r for r in results if r["code"] == c]
        eb = [r["ebn0"] for r in rows]
        for i, n in enumerate(names):
            y = [r["bler"][n] if r["errors"][n] else np.nan for r in rows]
            ax.semilogy(eb, y, marker="os^vDx+"[i % 7], linestyle=("-", "--", ":", "-.")[i % 4], markerfacecolor="none",
                        label=_legend_name(n))
        ax.set_title(c)
        ax.set_xlabel("Eb/N0 (dB), BPSK-AWGN")
        ax.set_ylabel("BLER")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
