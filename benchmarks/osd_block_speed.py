"""Classical soft-decision OSD speed: blocks/s of ``OsdBlockDecoder`` on BCH(127,64), one thread.

Blocks: the all-zero codeword over BPSK-AWGN at ``--ebn0`` dB (default 3 dB; bit 0 -> +1,
sigma^2 = 1 / (2 R Eb/N0), LLR = 2 y / sigma^2, R = 64/127; OSD's work does not depend on
which codeword was sent). For each order in ``--orders`` (default 1,2,3) the pruned kernel
(``kernels.osd.osd_classical_solve``, the default path) and the unpruned reference
enumeration (``tests/kernels/osd_reference.py``, the pre-optimisation algorithm) decode
the same blocks on one thread; each is timed ``--repeats`` times after a warm-up call
(JIT / cache load) and the median of the process time is reported (wall time alongside; the
process time is the fairer figure on a loaded machine). The two outputs are checked to be
identical. Order 3's reference is ~2 ms/block, so it gets ``--blocks3`` blocks.

The reference column shares the new front end (branch-free sort and elimination), so it is a
little faster than the code before this change; on the 2-core dev box (loaded) the old
kernel ran OSD-1/2/3 at ~29k / ~9.8k / ~670 blocks/s, this script's pruned path at
~35-60k / ~22-30k / ~5-6k blocks/s (the spread is the machine's load).

Usage::

    python benchmarks/osd_block_speed.py [--blocks 20000] [--blocks3 2000] [--orders 1,2,3]
                                         [--ebn0 3.0] [--repeats 3] [--code bch127_64] [--no-ref]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

from qdecode.codes.catalog import get_code
from qdecode.decoders.osd import OsdBlockDecoder

# The unpruned reference lives with the tests that check the kernel against it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.kernels.osd_reference import osd_reference_decode  # noqa: E402


def _timed(fn, repeats: int) -> tuple[float, float, np.ndarray]:
    """Median (process seconds, wall seconds) over ``repeats`` calls, and the last output."""
    proc, wall = [], []
    out = None
    for _ in range(repeats):
        p0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        proc.append(time.process_time() - p0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(proc), statistics.median(wall), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--code", default="bch127_64")
    ap.add_argument("--blocks", type=int, default=20_000, help="blocks for orders <= 2")
    ap.add_argument("--blocks3", type=int, default=2_000, help="blocks for orders >= 3")
    ap.add_argument("--orders", default="1,2,3")
    ap.add_argument("--ebn0", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-ref", action="store_true", help="skip the unpruned reference path")
    args = ap.parse_args()

    code = get_code(args.code)
    G = np.asarray(code.G_bin if hasattr(code, "G_bin") else code.G, dtype=np.uint8)
    k, n = G.shape
    rate = k / n
    sigma2 = 1.0 / (2.0 * rate * 10.0 ** (args.ebn0 / 10.0))
    rng = np.random.default_rng(2026)
    nmax = max(args.blocks, args.blocks3)
    llr_all = 2.0 * (1.0 + np.sqrt(sigma2) * rng.standard_normal((nmax, n))) / sigma2

    print(f"# {platform.processor() or platform.machine()}, numpy {np.__version__}, numba {numba.__version__}; "
          f"{args.code} (n={n}, k={k}), Eb/N0 = {args.ebn0} dB, 1 thread, median of {args.repeats} "
          f"(process time; wall in brackets)")
    print("| order | blocks | pruned (blocks/s) | reference (blocks/s) | speed-up | identical | BLER |")
    print("|---|---|---|---|---|---|---|")
    for order in [int(o) for o in args.orders.split(",")]:
        S = args.blocks if order <= 2 else args.blocks3
        llr = np.ascontiguousarray(llr_all[:S])
        dec = OsdBlockDecoder(G=G, order=order)
        dec.decode_llr_batch(llr[:10], threads=1)
        osd_reference_decode(dec, llr[:10], threads=1)
        p_new, w_new, out_new = _timed(lambda: dec.decode_llr_batch(llr, threads=1), args.repeats)
        bler = float(np.mean(out_new.any(axis=1)))
        new_s = f"{S / p_new:,.0f} [{S / w_new:,.0f}]"
        if args.no_ref:
            print(f"| {order} | {S} | {new_s} | - | - | - | {bler:.2e} |", flush=True)
            continue
        p_ref, w_ref, out_ref = _timed(lambda: osd_reference_decode(dec, llr, threads=1), args.repeats)
        same = bool(np.array_equal(out_new, out_ref))
        print(f"| {order} | {S} | {new_s} | {S / p_ref:,.0f} [{S / w_ref:,.0f}] | {p_ref / p_new:.1f}x | "
              f"{same} | {bler:.2e} |", flush=True)


if __name__ == "__main__":
    main()
