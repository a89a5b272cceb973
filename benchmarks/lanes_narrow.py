"""Narrow lane kernels (8-bit fixed point, float32) against today's lane kernel and the peers.

16-bit rows: 16-bit messages with 8 fraction bits (uint16 check state, int32 sums, ``--lanes16`` lanes).
Problem: [[144,12,12]] memory-Z DEM (bb-uniform, p = 0.003, 936 x 8784, 30 672 edges).
Speed: uniformly random syndromes (nothing converges: every shot runs ``max_iter``), flooding
min-sum, alpha = 1, one thread, whole kernel call (lane loading and syndrome checks
included); ns per edge-iteration = time / (sum of iterations x nnz). Rows: today's
``minsum_lanes_range`` (float64 and 8-bit fixed point in int32, 32 lanes), the narrow kernels
(``qdecode/kernels/minsum_lanes_narrow.py``), ldpc ``BpDecoder`` (its decode loop) and relay-bp
``MinSumBPDecoderF64.decode_batch`` on the same syndromes; median of ``--repeats``, JIT warm-up
outside the timed region.
Exactness: ``--exact-shots`` sampled shots, each narrow kernel against its reference
(int32 fixed point, float32 lanes), hard decisions, posteriors, flags, iteration counts.

Usage:
  python benchmarks/lanes_narrow.py [--shots 256] [--repeats 3] [--lanes 64] [--exact-shots 10000]
  F=$(python -c 'import llvmlite.binding as b; print(b.get_host_cpu_features().flatten())')
  NUMBA_CPU_FEATURES="$F,-prefer-256-bit" python benchmarks/lanes_narrow.py   # 512-bit vectors (own cache entry)
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from qdecode.decoders.bp import ALPHA_SHIFT, MessageFormat, bp_outputs
from qdecode.kernels.bp import tanner_graph_csr
from qdecode.kernels.bp_args import BpOut, MinSumParams
from qdecode.kernels.minsum_lanes import minsum_lanes_range
from qdecode.kernels.minsum_lanes_narrow import minsum_lanes_f32_range, minsum_lanes_i8_range, minsum_lanes_i16_range
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit


def run(kernel, graph, llr0, syn, fmt, max_iter, lanes, keep_post, alpha=1.0):
    S, n = syn.shape[0], graph.var_ptr.shape[0] - 1
    out = BpOut(*bp_outputs(S, n, fmt.dtype, keep_post))
    prm = MinSumParams(max_iter, alpha, fmt.alpha_num(alpha), ALPHA_SHIFT, alpha == 0, fmt.dtype.type(0), fmt.msg_lim,
                       fmt.post_lim)
    t = time.perf_counter()
    kernel(graph, llr0, syn, prm, out, 1, lanes, 0, S)
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shots", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=50)
    ap.add_argument("--lanes", type=int, default=64)
    ap.add_argument("--lanes16", type=int, default=32)
    ap.add_argument("--exact-shots", type=int, default=10000)
    ap.add_argument("--skip-peers", action="store_true")
    args = ap.parse_args()
    import llvmlite.binding as llb
    import numba

    print(f"numba {numba.__version__}, LLVM CPU {llb.get_host_cpu_name()}, "
          f"NUMBA_CPU_FEATURES {'set' if os.environ.get('NUMBA_CPU_FEATURES') else 'default'}"
          f"{' (-prefer-256-bit)' if '-prefer-256-bit' in os.environ.get('NUMBA_CPU_FEATURES', '') else ''}, "
          f"load {os.getloadavg()[0]:.2f}")
    c = build_circuit("bb144_12_12", noise="bb-uniform", p=0.003, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    graph = tanner_graph_csr(prob.H.indptr, prob.H.indices, prob.H.shape[1])
    nnz = graph[4].shape[0]
    m, n = prob.H.shape
    print(f"bb144: {m} x {n}, {nnz} edges, max_iter {args.max_iter}, {args.shots} random syndromes, 1 thread")
    syn = np.random.default_rng(7).integers(0, 2, size=(args.shots, m), dtype=np.uint8)
    fmts = {"f64": MessageFormat.create(0, 0, "float64"), "i32": MessageFormat.create(8, 3),
            "f32": MessageFormat.create(0, 0, "float32"), "i16": MessageFormat.create(16, 8)}
    rows = [("today float64 lanes (W=32)", minsum_lanes_range, "f64", 32),
            ("today 8-bit fixed point, int32 (W=32)", minsum_lanes_range, "i32", 32),
            ("today float32 lanes (W=32)", minsum_lanes_range, "f32", 32),
            (f"narrow float32 (W={args.lanes})", minsum_lanes_f32_range, "f32", args.lanes),
            (f"narrow 8-bit, uint8/int16 (W={args.lanes})", minsum_lanes_i8_range, "i32", args.lanes),
            ("today 16-bit fixed point, int32 (W=32)", minsum_lanes_range, "i16", 32),
            (f"narrow 16-bit, uint16/int32 (W={args.lanes16})", minsum_lanes_i16_range, "i16", args.lanes16)]
    results = []
    for name, kern, f, lanes in rows:
        fmt = fmts[f]
        llr0 = fmt.quantize(prob.llr[None, :])
        run(kern, graph, llr0, syn[:lanes], fmt, 2, lanes, False)  # JIT warm-up
        times = []
        for _ in range(args.repeats):
            t, out = run(kern, graph, llr0, syn, fmt, args.max_iter, lanes, False)
            times.append(t)
        it = int(out[3].sum())
        med = statistics.median(times)
        results.append((name, med / (it * nnz) * 1e9, med / args.shots * 1e3))
        print(f"  {name:<44s} {results[-1][1]:7.3f} ns/edge-iter  {results[-1][2]:7.3f} ms/shot", flush=True)
    if not args.skip_peers:
        import ldpc
        import relay_bp

        ref = ldpc.BpDecoder(prob.H, error_channel=list(prob.priors), max_iter=args.max_iter,
                             bp_method="minimum_sum", ms_scaling_factor=1.0, schedule="parallel")
        relay = relay_bp.MinSumBPDecoderF64(prob.H.astype(np.uint8).tocsr(), error_priors=prob.priors,
                                            max_iter=args.max_iter, alpha=None)
        relay.decode_batch(syn[:4])
        ref.decode(syn[0])

        def ldpc_loop():
            its = 0
            for s in syn:
                ref.decode(s)
                its += ref.iter
            return its

        for name, fn in (("ldpc BpDecoder (decode loop)", ldpc_loop),
                         ("relay-bp MinSumBPDecoderF64.decode_batch",
                          lambda: relay.decode_batch(syn) is not None and args.shots * args.max_iter)):
            times, its = [], 0
            for _ in range(args.repeats):
                t = time.perf_counter()
                its = fn()
                times.append(time.perf_counter() - t)
            med = statistics.median(times)
            print(f"  {name:<44s} {med / (its * nnz) * 1e9:7.3f} ns/edge-iter  {med / args.shots * 1e3:7.3f} ms/shot"
                  f"  ({its} iterations{' assumed' if 'relay' in name else ''})", flush=True)
    if args.exact_shots:
        dets = c.compile_detector_sampler(seed=1).sample(args.exact_shots).astype(np.uint8)
        for name, kern, f, ref_f, lanes in (
                ("narrow 8-bit vs int32 fixed point", minsum_lanes_i8_range, "i32", "i32", args.lanes),
                ("narrow 16-bit vs int32 fixed point", minsum_lanes_i16_range, "i16", "i16", args.lanes16),
                ("narrow float32 vs float32 lanes", minsum_lanes_f32_range, "f32", "f32", args.lanes)):
            fmt = fmts[f]
            llr0 = fmt.quantize(prob.llr[None, :])
            _, a = run(minsum_lanes_range, graph, llr0, dets, fmts[ref_f], args.max_iter, 32, True)
            _, b = run(kern, graph, llr0, dets, fmt, args.max_iter, lanes, True)
            same = [int((x.reshape(x.shape[0], -1) == y.reshape(y.shape[0], -1)).all(1).sum()) for x, y in zip(a, b)]
            bitwise = all(np.array_equal(x.view(np.uint8), y.view(np.uint8)) for x, y in zip(a, b))
            print(f"  exact {name}: {args.exact_shots} shots; identical hard {same[0]}, posteriors {same[1]}, "
                  f"converged {same[2]}, iterations {same[3]}; all bitwise equal: {bitwise}; "
                  f"{int(a[2].sum())} converged, mean iterations {a[3].mean():.2f}", flush=True)


if __name__ == "__main__":
    main()
