"""Layered min-sum on lanes against the scalar layered kernel, same shots, one thread.

Problem: [[144,12,12]] memory-Z DEM (bb-uniform, p = 0.003, 936 x 8784, 30,672 edges). ``--shots``
uniformly random syndromes (nothing converges: every shot runs ``--max-iter`` iterations), layered
(check-serial) min-sum, alpha 1; rows: the scalar kernel (``qdecode.kernels.bp.bp_decode_range`` with
``layered=True``, one shot at a time) and ``minsum_layered_lanes_range`` (``--lanes`` lanes), in float64,
float32 and 8-bit fixed point (int32). ns per edge-iteration = time / (sum of iterations x nnz); median
of ``--repeats``, JIT warm-up outside the timed region. Each pair is also checked bit for bit.

    NUMBA_NUM_THREADS=1 python benchmarks/layered_lanes.py [--shots 64] [--repeats 3] [--lanes 32]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from qdecode.decoders.bp import ALPHA_SHIFT, MessageFormat, bp_outputs
from qdecode.kernels.bp import bp_decode_range, tanner_graph_csr
from qdecode.kernels.bp_args import BpOut, MinSumParams
from qdecode.kernels.minsum_lanes_layered import minsum_layered_lanes_range
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shots", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=50)
    ap.add_argument("--lanes", type=int, default=32)
    args = ap.parse_args()
    c = build_circuit("bb144_12_12", noise="bb-uniform", p=0.003, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    graph = tanner_graph_csr(prob.H.indptr, prob.H.indices, prob.H.shape[1])
    nnz = graph[1].shape[0]
    m, n = prob.H.shape
    syn = np.random.default_rng(7).integers(0, 2, size=(args.shots, m), dtype=np.uint8)
    print(f"bb144: {m} x {n}, {nnz} edges, layered, max_iter {args.max_iter}, {args.shots} random syndromes")
    print("| format | kernel | ns per edge-iteration | ms per shot | speed-up | bit-identical |")
    print("|---|---|---|---|---|---|")
    formats = (("float64", MessageFormat.create(0, 0, "float64")), ("float32", MessageFormat.create(0, 0, "float32")),
               ("8-bit fixed point (int32)", MessageFormat.create(8, 3)))
    for label, fmt in formats:
        llr0 = fmt.quantize(prob.llr[None, :])
        prm = MinSumParams(args.max_iter, 1.0, fmt.alpha_num(1.0), ALPHA_SHIFT, False, fmt.dtype.type(0), fmt.msg_lim,
                           fmt.post_lim)

        def scalar(s):
            out = BpOut(*bp_outputs(s.shape[0], n, fmt.dtype, True))
            bp_decode_range(graph, llr0, s, 0, True, prm, out, 1, 0, s.shape[0])
            return out

        def lanes(s):
            out = BpOut(*bp_outputs(s.shape[0], n, fmt.dtype, True))
            minsum_layered_lanes_range(graph, llr0, s, prm, out, 1, args.lanes, 0, s.shape[0])
            return out

        res = {}
        for name, fn in (("scalar layered", scalar), (f"layered lanes (W={args.lanes})", lanes)):
            fn(syn[:4])
            times = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                out = fn(syn)
                times.append(time.perf_counter() - t)
            res[name] = (statistics.median(times), out)
        (t0, a), (t1, b) = res.values()
        same = all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(a, b))
        it = int(a[3].sum())
        for (name, (t, _)), speed in zip(res.items(), ("1.00x", f"{t0 / t1:.2f}x")):
            print(f"| {label} | {name} | {t / (it * nnz) * 1e9:.3f} | {t / args.shots * 1e3:.3f} | {speed} | "
                  f"{same} |", flush=True)


if __name__ == "__main__":
    main()
