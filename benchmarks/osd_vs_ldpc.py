"""OSD-CS10 speed: qdecode's numba OSD vs ldpc's BpOsdDecoder on the [[144,12,12]] circuit DEM.

Both run single-threaded on the same shots: those where 80 min-sum iterations of
ldpc's BP do not converge (the only shots on which ldpc runs OSD). Reported per
non-converged shot, median over ``--repeats`` runs:

* ldpc BP+OSD-CS10 (``BpOsdDecoder.decode``) and ldpc BP alone (``BpDecoder``); their
  difference estimates ldpc's OSD stage;
* qdecode OSD-CS10 alone, fed ldpc's own BP posteriors (outputs compared bit for bit);
* qdecode BP (min-sum, 80 iterations) + OSD-CS10 on the shots our BP leaves unconverged
  (``qdecode.decoders.bp.BpDecoder``; skipped when it is not available).

Usage: python benchmarks/osd_vs_ldpc.py [--shots 300] [--repeats 3] [--p 0.003] [--order 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--order", type=int, default=10)
    ap.add_argument("--max-iter", type=int, default=80)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()

    import ldpc
    from ldpc import BpDecoder as LdpcBp
    from ldpc import BpOsdDecoder

    from qdecode.decoders.osd import OsdPostProcessor
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    numba.set_num_threads(1)
    circ = build_circuit("bb144_12_12", noise="bb-uniform", p=args.p, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    m, n = prob.H.shape
    dets = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)[0]
    dets = dets.astype(np.uint8)
    print(f"bb144_12_12 bb-uniform p={args.p}: H {m}x{n}, {args.shots} shots, ldpc {ldpc.__version__}, "
          f"BP min-sum {args.max_iter} iterations, OSD-CS{args.order}, 1 thread")

    common = dict(error_channel=list(prob.priors), max_iter=args.max_iter, bp_method="ms", ms_scaling_factor=1.0)
    ldpc_osd = BpOsdDecoder(prob.H, osd_method="osd_cs", osd_order=args.order, **common)
    ldpc_bp = LdpcBp(prob.H, **common)

    t0 = time.perf_counter()
    post = OsdPostProcessor(prob, "osd_cs", args.order)
    t_setup = time.perf_counter() - t0

    # non-converged shots, ldpc's posteriors and decisions
    idx, keys, ref = [], [], []
    for i, s in enumerate(dets):
        d = ldpc_osd.decode(s)
        if not ldpc_osd.converge:
            idx.append(i)
            keys.append(np.array(ldpc_osd.log_prob_ratios))
            ref.append(d.copy())
    S = dets[idx]
    K = np.array(keys)
    R = np.array(ref)
    nnc = len(idx)
    print(f"non-converged (ldpc BP): {nnc}/{args.shots}; OsdPostProcessor setup {t_setup * 1e3:.0f} ms, "
          f"rank(H) = {post.rank}, k = {post.k}")
    if nnc == 0:
        return
    post.solve_batch(S[:1], K[:1])  # JIT warm-up

    def timed(fn):
        ts = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) / nnc

    t_ldpc_total = timed(lambda: [ldpc_osd.decode(s) for s in S])
    t_ldpc_bp = timed(lambda: [ldpc_bp.decode(s) for s in S])
    t_ldpc_osd = t_ldpc_total - t_ldpc_bp
    out = np.zeros_like(R)
    t_ours_osd = timed(lambda: post.solve_batch(S, K, out=out))
    agree = int(np.all(out == R, axis=1).sum())

    print(f"ldpc    BP+OSD-CS{args.order}   {t_ldpc_total * 1e3:9.2f} ms/shot")
    print(f"ldpc    BP alone         {t_ldpc_bp * 1e3:9.2f} ms/shot")
    print(f"ldpc    OSD stage (diff) {t_ldpc_osd * 1e3:9.2f} ms/shot")
    print(f"qdecode OSD-CS{args.order} alone  {t_ours_osd * 1e3:9.2f} ms/shot   "
          f"(ratio to ldpc OSD stage {t_ours_osd / t_ldpc_osd:.3f}; identical output on {agree}/{nnc} shots)")

    try:
        from qdecode.decoders.bp import BpDecoder
    except ImportError as exc:  # pragma: no cover - BP not available
        print(f"qdecode BP not available ({exc}); skipping the whole-pipeline comparison")
        return
    bp = BpDecoder(prob, method="minsum", max_iter=args.max_iter, alpha=1.0)
    bp.decode_soft_batch(S[:1])  # JIT warm-up
    out2 = np.zeros_like(R)

    def ours_total():
        hard, postllr = bp.decode_soft_batch(S)
        conv = bp.last_info.converged
        out2[:] = hard
        post.solve_batch(S, postllr, ~conv, out=out2)

    t_ours_total = timed(ours_total)
    nconv = int(bp.last_info.converged.sum())
    print(f"qdecode BP+OSD-CS{args.order}   {t_ours_total * 1e3:9.2f} ms/shot   "
          f"(ratio to ldpc BP+OSD-CS{args.order} {t_ours_total / t_ldpc_total:.3f}; our BP converged on {nconv}/{nnc})")


if __name__ == "__main__":
    main()
