"""Selects in lane loops: as written (``x = a if c else x``) against bit blends, and what they cost a kernel.

Why ``qdecode.kernels.minsum_lanes_narrow`` writes its selects as ``blend_u8`` / ``select_int`` /
``negate_if``: on a CPU without byte-masked stores (AVX2: no AVX-512BW), LLVM turns
``arr[i, w] = s if a < m1 else arr[i, w]`` into a conditional store, and the loop over lanes then stays
scalar with a data-dependent branch per lane; a select of two loaded messages goes the same way.

Part 1 times, per lane, loops over a ``(512, 64)`` block of int16 / uint8 arrays (random data, 64 lanes,
compiled for the constant lane count with LLVM ``noalias`` as the kernels are):

- ``fold, select``: the fold of one extrinsic message into the check state, with ``agn = s if a < m1 else
  agn``; ``fold, blend``: the same with ``blend_u8``;
- ``c2v, select``: the check-to-variable message ``c = -mag if neg else mag`` with ``mag = o2 if agc == s
  else o1``; ``c2v, xor``: the same with ``select_int`` and ``negate_if``.

Part 2 times the 8-bit min-sum lanes kernel (``BpDecoder(bits=8)`` -> ``minsum_lanes_i8_range``), the float32
one, and the 8-bit Relay-BP lanes kernel (``relay_lanes_i8_range``, leg 0 only) on the [[144,12,12]] memory-Z
DEM, random syndromes, 50 iterations, one thread: ns per edge-lane-iteration, median of ``--repeats``.

Usage: python benchmarks/lane_selects.py [--repeats 5] [--shots 128] [--skip-kernels] [--skip-micro]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

from qdecode.kernels.minsum_lanes_narrow import NoAliasCompiler

try:  # absent before the blends landed: part 2 alone then measures an older tree
    from qdecode.kernels.minsum_lanes_narrow import blend_u8, negate_if, select_int
except ImportError:
    blend_u8 = negate_if = select_int = None

U8 = np.uint8
I16 = np.int16
ROWS, W = 512, 64


@numba.njit(pipeline_class=NoAliasCompiler)
def fold_select(reps, total, cbuf, sgn, pan, m1n, m2n, agn, mls, s):
    for _ in range(reps):
        for r in range(total.shape[0]):
            for w in range(64):
                v = I16(total[r, w] - cbuf[r, w])
                v = min(max(v, I16(-mls)), mls)
                neg = U8(v <= 0)
                sgn[r, w] = neg
                pan[r, w] = U8(pan[r, w] ^ neg)
                a = U8(v if v >= 0 else I16(-v))
                m1 = m1n[r, w]
                m2n[r, w] = min(max(a, m1), m2n[r, w])
                agn[r, w] = s if a < m1 else agn[r, w]
                m1n[r, w] = min(a, m1)


@numba.njit(pipeline_class=NoAliasCompiler)
def fold_blend(reps, total, cbuf, sgn, pan, m1n, m2n, agn, mls, s):
    for _ in range(reps):
        for r in range(total.shape[0]):
            for w in range(64):
                v = I16(total[r, w] - cbuf[r, w])
                v = min(max(v, I16(-mls)), mls)
                neg = U8(v <= 0)
                sgn[r, w] = neg
                pan[r, w] = U8(pan[r, w] ^ neg)
                a = U8(v if v >= 0 else I16(-v))
                m1 = m1n[r, w]
                m2n[r, w] = min(max(a, m1), m2n[r, w])
                agn[r, w] = blend_u8(a < m1, s, agn[r, w])
                m1n[r, w] = min(a, m1)


@numba.njit(pipeline_class=NoAliasCompiler)
def c2v_select(reps, total, cbuf, sgn, pan, m1n, m2n, agn, mls, s):
    acc = np.zeros(64, dtype=np.int16)
    for _ in range(reps):
        for r in range(total.shape[0]):
            for w in range(64):
                mag = I16(m2n[r, w]) if agn[r, w] == s else I16(m1n[r, w])
                c = I16(-mag) if U8(pan[r, w] ^ sgn[r, w]) else mag
                cbuf[r, w] = c
                acc[w] = I16(acc[w] + c)
    total[0, :] = acc


@numba.njit(pipeline_class=NoAliasCompiler)
def c2v_xor(reps, total, cbuf, sgn, pan, m1n, m2n, agn, mls, s):
    acc = np.zeros(64, dtype=np.int16)
    for _ in range(reps):
        for r in range(total.shape[0]):
            for w in range(64):
                mag = select_int(agn[r, w] == s, I16(m2n[r, w]), I16(m1n[r, w]))
                c = negate_if(mag, U8(pan[r, w] ^ sgn[r, w]))
                cbuf[r, w] = c
                acc[w] = I16(acc[w] + c)
    total[0, :] = acc


def micro(fn, repeats: int) -> float:
    """Median ns per lane of ``fn`` over ``repeats`` runs."""
    rng = np.random.default_rng(0)
    args = [rng.integers(-300, 300, (ROWS, W)).astype(I16), rng.integers(-100, 100, (ROWS, W)).astype(I16),
            rng.integers(0, 2, (ROWS, W)).astype(U8), rng.integers(0, 2, (ROWS, W)).astype(U8),
            rng.integers(0, 128, (ROWS, W)).astype(U8), rng.integers(0, 128, (ROWS, W)).astype(U8),
            rng.integers(0, 8, (ROWS, W)).astype(U8), I16(127), U8(3)]
    fn(1, *args)
    reps = 400
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(reps, *args)
        times.append((time.perf_counter() - t) / (reps * ROWS * W) * 1e9)
    return statistics.median(times)


def kernels(repeats: int, shots: int) -> list[tuple[str, float]]:
    """ns per edge-lane-iteration of the narrow lane kernels on the gross-code DEM (one thread)."""
    from qdecode.decoders.bp import ALPHA_SHIFT, BpDecoder
    from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder
    from qdecode.kernels.relay import MessageArith, RelayGraph, RelayOut, RelaySchedule
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    numba.set_num_threads(1)
    circ = build_circuit("bb144_12_12", noise="bb-uniform", p=0.003, rounds=12, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    nnz, n = prob.H.nnz, prob.num_errors
    syn = (np.random.default_rng(1).random((shots, prob.num_detectors)) < 0.5).astype(np.uint8)
    rows = []
    for label, kw in (("BpDecoder bits=8 (minsum_lanes_i8_range)", dict(bits=8, frac_bits=3)),
                      ("BpDecoder float32 (minsum_lanes_f32_range)", dict(dtype="float32"))):
        dec = BpDecoder(prob, max_iter=50, alpha=1.0, threads=1, **kw)
        dec.decode_batch(syn)
        ts = []
        for _ in range(repeats):
            t = time.perf_counter()
            dec.decode_batch(syn)
            ts.append((time.perf_counter() - t) / (dec.last_info.iterations.sum() * nnz) * 1e9)
        rows.append((label, statistics.median(ts)))
    try:
        from qdecode.kernels.relay_lanes_narrow import RELAY_NARROW_LANES, relay_lanes_i8_range
    except ImportError:  # an older tree
        return rows
    d = RelayBpDecoder(prob, bits=8, threads=1, pre_iter=50, legs=0)
    lo, hi = d.gamma_interval
    out = RelayOut(np.zeros((shots, n), np.uint8), np.zeros(shots, np.bool_), np.zeros(shots, np.int32),
                   np.zeros(shots, np.int32), np.zeros(shots))
    args = (RelayGraph(d.var_ptr, d.var_chks, d.prior_llr, d.weight_llr),
            RelaySchedule(d.gamma0, lo, hi, d.gammas, d.pre_iter, d.legs, d.leg_iter, d.stop_after),
            MessageArith(d.alpha, d.alpha_num, ALPHA_SHIFT, GAMMA_FRAC_BITS, d.msg_lim, d.post_lim),
            np.uint64(d.seed), syn, out, RELAY_NARROW_LANES, 0, shots)
    relay_lanes_i8_range(*args)
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        relay_lanes_i8_range(*args)
        ts.append((time.perf_counter() - t) / (out[2].sum() * nnz) * 1e9)
    rows.append(("relay_lanes_i8_range, leg 0 (64 lanes)", statistics.median(ts)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shots", type=int, default=128)
    ap.add_argument("--skip-kernels", action="store_true")
    ap.add_argument("--skip-micro", action="store_true")
    args = ap.parse_args()
    import llvmlite.binding as ll

    print(f"host CPU {ll.get_host_cpu_name()}, numba {numba.__version__}")
    if not args.skip_micro and blend_u8 is not None:
        print("| loop over 64 lanes | ns per lane |\n|---|---|")
        for name, fn in (("fold, select", fold_select), ("fold, blend", fold_blend), ("c2v, select", c2v_select),
                         ("c2v, xor", c2v_xor)):
            print(f"| {name} | {micro(fn, args.repeats):.3f} |", flush=True)
    if not args.skip_kernels:
        print("\n| kernel | ns per edge-lane-iteration |\n|---|---|")
        for name, ns in kernels(args.repeats, args.shots):
            print(f"| {name} | {ns:.3f} |", flush=True)


if __name__ == "__main__":
    main()
