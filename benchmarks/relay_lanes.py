"""Relay-BP batch throughput: qdecode's lanes kernel vs its scalar kernel vs relay-bp 0.2.1, same shots.

[[144,12,12]] memory-Z circuit (``bb144_12_12``, ``bb-uniform`` noise, 12 rounds, Z detectors only),
IBM's gross-code tuning for all three (as ``relay_vs_relaybp.py``): gamma0 0.15, gamma ~ U[-0.226,
0.622), 80 / 60 iterations, 300 legs, stop after S = 5 converged legs, alpha = 1.

Per p and per message format (``--bits``: 0 = float64 on the float64 lanes kernel, 8 = 8-bit fixed
point with 3 fraction bits on the 8-bit lanes kernel): ``predict_observables_batch`` with ``--threads``
threads on the lanes kernel (qdecode's batch path) and on the scalar kernel (``MIN_LANE_SHOTS`` raised
so every batch takes the scalar path; the per-shot outputs must be identical), and relay-bp's
``ObservableDecoderRunner.decode_observables_batch(parallel=True)`` (``RelayDecoderF64`` and
``RelayDecoderF32``) on a rayon pool of ``--threads`` threads (``RAYON_NUM_THREADS``). Shots/s (ratio to
relay-bp F64) and the logical error rate per shot with ``fit_binomial`` intervals (likelihood factor 1e3).

Usage: python benchmarks/relay_lanes.py [--ps 0.001,0.003] [--shots 3000] [--threads 2] [--seed 2025]
       [--bits 0,8] [--skip-scalar] [--skip-f32] [--json benchmarks/results/relay_lanes.json]
"""

from __future__ import annotations

import argparse
import os
import time

from _common import write_result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ps", default="0.001,0.003")
    ap.add_argument("--shots", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--bits", default="0,8", help="message formats: 0 = float64, 8 = 8-bit fixed point")
    ap.add_argument("--skip-scalar", action="store_true")
    ap.add_argument("--skip-f32", action="store_true", help="leave out relay-bp's RelayDecoderF32")
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)  # before relay_bp starts its pool

    import numba
    import numpy as np
    import relay_bp

    import qdecode.decoders.relay_bp as relay_mod
    from qdecode.decoders.relay_bp import RelayBpDecoder
    from qdecode.kernels.relay_lanes import LANES
    from qdecode.kernels.relay_lanes_narrow import RELAY_NARROW_LANES
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    params = dict(gamma0=0.15, gamma_interval=(-0.226, 0.622), pre_iter=80, legs=300, leg_iter=60, stop_after=5)
    ref_params = dict(gamma0=0.15, gamma_dist_interval=(-0.226, 0.622), pre_iter=80, num_sets=300,
                      set_max_iter=60, stop_nconv=5, alpha=None)
    print(f"relay-bp {getattr(relay_bp, '__version__', '0.2.1')}, numba {numba.__version__}, "
          f"{args.threads} threads, {LANES} float64 / {RELAY_NARROW_LANES} 8-bit lanes; parameters {params}, alpha=1")
    print("| p | decoder | shots/s (vs relay-bp) | time s | errors / shots | LER per shot [fit_binomial 1e3] "
          "| mean iters | mean legs |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for p in (float(x) for x in args.ps.split(",")):
        circ = build_circuit("bb144_12_12", noise="bb-uniform", p=p, rounds=12, basis="Z")
        prob = DecodingProblem.from_dem(decoding_dem(circ))
        N = args.shots
        dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(N, separate_observables=True)
        dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
        runs = []
        for bits in (int(b) for b in args.bits.split(",")):
            ours = RelayBpDecoder(prob, threads=args.threads, bits=bits, **params)
            ours.decode_batch(dets[:8])  # compile / load the numba caches of both kernels
            ours.decode_batch(dets[:2])
            label = "float64" if bits == 0 else f"{bits}-bit"
            kernel = "lanes" if bits == 0 else ("8-bit lanes" if ours.i8_lanes else "lanes")
            t = time.perf_counter()
            pred = ours.predict_observables_batch(dets)
            runs.append((f"qdecode relay-bp {label}, {kernel}", pred, time.perf_counter() - t, ours.last_info))
            if not args.skip_scalar:
                saved = relay_mod.MIN_LANE_SHOTS
                relay_mod.MIN_LANE_SHOTS = 1 << 62  # every batch on the scalar kernel
                try:
                    t = time.perf_counter()
                    pred_s = ours.predict_observables_batch(dets)
                    runs.append((f"qdecode relay-bp {label}, scalar", pred_s, time.perf_counter() - t,
                                 ours.last_info))
                finally:
                    relay_mod.MIN_LANE_SHOTS = saved
                a, b = runs[-2][3], runs[-1][3]
                same = np.array_equal(pred, pred_s) and np.array_equal(a.iterations, b.iterations) \
                    and np.array_equal(a.extra["weight"], b.extra["weight"])
                print(f"<!-- p={p}, {label}: lanes vs scalar per-shot outputs identical: {same} -->")
        refs = [("F32", relay_bp.RelayDecoderF32)] if not args.skip_f32 else []
        for name, cls in refs + [("F64", relay_bp.RelayDecoderF64)]:  # F64 last: the ratios' reference
            runner = relay_bp.ObservableDecoderRunner(cls(prob.H, error_priors=prob.priors, **ref_params),
                                                      prob.L.toarray().astype(np.uint8))
            runner.decode_observables_batch(dets[:4], parallel=True, progress_bar=False)
            t = time.perf_counter()
            pred_r = np.asarray(runner.decode_observables_batch(dets, parallel=True, progress_bar=False),
                                dtype=np.uint8)
            runs.append((f"relay-bp 0.2.1 {name} ObservableDecoderRunner", pred_r, time.perf_counter() - t, None))
        t_ref = runs[-1][2]
        for name, pr, dt, info in runs:
            k = int((pr != obs).any(axis=1).sum())
            f = fit_binomial(num_shots=N, num_hits=k, max_likelihood_factor=1e3)
            extra = "- | -" if info is None else f"{info.iterations.mean():.1f} | {info.extra['legs'].mean():.2f}"
            rows.append({"p": p, "decoder": name, "shots": N, "seconds": dt, "ratio_to_relay_bp_f64": t_ref / dt,
                         "failures": k, "mean_iterations": None if info is None else float(info.iterations.mean()),
                         "mean_legs": None if info is None else float(info.extra["legs"].mean())})
            print(f"| {p} | {name} | {N / dt:.1f} (x{t_ref / dt:.2f}) | {dt:.1f} | {k} / {N} | "
                  f"{f.best:.2e} [{f.low:.2e}, {f.high:.2e}] | {extra} |", flush=True)
    write_result(args.json, {"threads": args.threads, "seed": args.seed, "rows": rows})


if __name__ == "__main__":
    main()
