"""BP and BP+OSD side by side with ldpc and relay-bp on the same DEMs and shots.

Problems (memory-Z, memory-basis detectors only):
  bb144  [[144,12,12]] Bravyi et al. circuit (bb-uniform), 12 rounds, p = 0.003 (936 x 8784)
  surf7  rotated surface code d = 7, SD6, 7 rounds, p = 0.003

Modes:
  speed      per-shot time of min-sum BP (flooding, alpha = 1, max_iter 80, float64) for
             qdecode, ldpc BpDecoder (its decode loop; it has no batch call) and relay-bp
             MinSumBPDecoderF64.decode_batch, single thread, same shots; qdecode with 2 threads;
             BP+OSD-CS10 qdecode vs ldpc BpOsdDecoder. Median of --repeats runs.
  agreement  convergence-flag and hard-decision agreement with ldpc (min-sum and product-sum).
  ler        BP+OSD-CS10 (min-sum, 80 iterations) logical error rate, qdecode and ldpc,
             on the same shots; intervals are sinter-style fit_binomial (factor 1000).

Usage:
  NUMBA_NUM_THREADS=2 python benchmarks/bp_vs_peers.py speed --problem bb144 --shots 300 --repeats 3 \
      --json benchmarks/results/bp_vs_peers_speed.json    (and --problem surf7 --shots 3000: one entry each)
  python benchmarks/bp_vs_peers.py agreement --problem bb144 --shots 10000
  python benchmarks/bp_vs_peers.py ler --problem bb144 --shots 40000 [--skip-ldpc] [--seed 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from _common import merge_result

from qdecode.decoders.bp import BpDecoder
from qdecode.decoders.bposd import BpOsdDecoder
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit
from qdecode.sims.stats import fit_binomial

MAX_ITER = 80


def problem(name: str):
    if name == "bb144":
        c = build_circuit("bb144_12_12", noise="bb-uniform", p=0.003, basis="Z")
    elif name == "surf7":
        c = build_circuit("surface", d=7, noise="sd6", p=0.003, basis="Z", memory_basis_only=True)
    else:
        raise SystemExit(f"unknown problem {name!r}")
    return c, DecodingProblem.from_dem(decoding_dem(c))


def sample(c, shots: int, seed: int):
    dets, obs = c.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
    return dets.astype(np.uint8), obs.astype(np.uint8)


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def speed(args) -> None:
    import ldpc
    import relay_bp

    c, prob = problem(args.problem)
    dets, _ = sample(c, args.shots, 1)
    ours1 = BpDecoder(prob, max_iter=MAX_ITER, alpha=1.0, threads=1)
    ours2 = BpDecoder(prob, max_iter=MAX_ITER, alpha=1.0, threads=2)
    ref = ldpc.BpDecoder(prob.H, error_channel=list(prob.priors), max_iter=MAX_ITER, bp_method="minimum_sum",
                         ms_scaling_factor=1.0, schedule="parallel")
    relay = relay_bp.MinSumBPDecoderF64(prob.H.astype(np.uint8).tocsr(), error_priors=prob.priors,
                                        max_iter=MAX_ITER, alpha=None)
    osd_ours = BpOsdDecoder(prob, osd_method="osd_cs", osd_order=10, osd_key="last", max_iter=MAX_ITER, alpha=1.0,
                            threads=1)
    osd_ref = ldpc.BpOsdDecoder(prob.H, error_channel=list(prob.priors), max_iter=MAX_ITER,
                                bp_method="minimum_sum", ms_scaling_factor=1.0, schedule="parallel",
                                osd_method="osd_cs", osd_order=10)
    for d in (ours1, ours2, osd_ours):  # JIT warm-up outside the timed region
        d.decode_batch(dets[:16])
    relay.decode_batch(dets[:4])
    S = len(dets)
    rows = {k: [] for k in ("ours1", "ours2", "ldpc", "relay", "bposd_ours", "bposd_ldpc")}
    for _ in range(args.repeats):
        rows["ours1"].append(timed(lambda: ours1.decode_batch(dets)) / S)
        rows["ours2"].append(timed(lambda: ours2.decode_batch(dets)) / S)
        rows["ldpc"].append(timed(lambda: [ref.decode(s) for s in dets]) / S)
        rows["relay"].append(timed(lambda: relay.decode_batch(dets)) / S)
        rows["bposd_ours"].append(timed(lambda: osd_ours.decode_batch(dets)) / S)
        rows["bposd_ldpc"].append(timed(lambda: [osd_ref.decode(s) for s in dets]) / S)
    med = {k: statistics.median(v) * 1e3 for k, v in rows.items()}
    print(f"# {args.problem}: m={prob.num_detectors} n={prob.num_errors} shots={S} repeats={args.repeats} "
          f"min-sum alpha=1 flooding max_iter={MAX_ITER}, ms/shot (median)")
    print(f"qdecode BP 1 thread     {med['ours1']:8.3f}")
    print(f"qdecode BP 2 threads    {med['ours2']:8.3f}   (throughput x{med['ours1'] / med['ours2']:.2f})")
    print(f"ldpc BpDecoder          {med['ldpc']:8.3f}   ratio ours/ldpc  {med['ours1'] / med['ldpc']:.3f}")
    print(f"relay-bp MinSumF64      {med['relay']:8.3f}   ratio ours/relay {med['ours1'] / med['relay']:.3f}")
    print(f"qdecode BP+OSD-CS10     {med['bposd_ours']:8.3f}")
    print(f"ldpc BpOsdDecoder CS10  {med['bposd_ldpc']:8.3f}   "
          f"ratio ours/ldpc  {med['bposd_ours'] / med['bposd_ldpc']:.3f}")
    merge_result(args.json, args.problem, {"m": prob.num_detectors, "n": prob.num_errors, "shots": S,
                                           "repeats": args.repeats, "ms_per_shot": med})


def agreement(args) -> None:
    import ldpc

    c, prob = problem(args.problem)
    dets, _ = sample(c, args.shots, 2)
    for method, bpm in (("minsum", "minimum_sum"), ("productsum", "product_sum")):
        ours = BpDecoder(prob, method=method, max_iter=MAX_ITER, alpha=1.0)
        hard = ours.decode_batch(dets)
        conv = ours.last_info.converged
        ref = ldpc.BpDecoder(prob.H, error_channel=list(prob.priors), max_iter=MAX_ITER, bp_method=bpm,
                             ms_scaling_factor=1.0, schedule="parallel")
        ref_hard = np.zeros_like(hard)
        ref_conv = np.zeros(len(dets), dtype=bool)
        for k, s in enumerate(dets):
            ref_hard[k] = ref.decode(s)
            ref_conv[k] = ref.converge
        both = conv & ref_conv
        print(f"{args.problem} {method}: shots={len(dets)} converged ours={conv.mean():.4f} ldpc={ref_conv.mean():.4f} "
              f"flags agree={np.mean(conv == ref_conv):.4f} "
              f"hard agree on both-converged={np.mean((hard[both] == ref_hard[both]).all(axis=1)):.4f}")


def ler(args) -> None:
    c, prob = problem(args.problem)
    dets, obs = sample(c, args.shots, args.seed)
    L = prob.L.toarray().astype(np.uint8)
    ours = BpOsdDecoder(prob, osd_method="osd_cs", osd_order=10, osd_key="last", max_iter=MAX_ITER, alpha=1.0)
    t = time.perf_counter()
    pred = ours.predict_observables_batch(dets)
    t_ours = time.perf_counter() - t
    e_ours = int(np.any(pred != obs, axis=1).sum())
    fit = fit_binomial(num_shots=len(dets), num_hits=e_ours, max_likelihood_factor=1e3)
    print(f"qdecode BP+OSD-CS10 {args.problem}: {e_ours}/{len(dets)} = {fit.best:.2e} [{fit.low:.2e}, {fit.high:.2e}] "
          f"({t_ours / len(dets) * 1e3:.2f} ms/shot)", flush=True)
    if args.skip_ldpc:
        return
    import ldpc

    ref = ldpc.BpOsdDecoder(prob.H, error_channel=list(prob.priors), max_iter=MAX_ITER, bp_method="minimum_sum",
                            ms_scaling_factor=1.0, schedule="parallel", osd_method="osd_cs", osd_order=10)
    t = time.perf_counter()
    e_ref = 0
    for s, o in zip(dets, obs):
        e_ref += int(np.any((L @ ref.decode(s)) % 2 != o))
    t_ref = time.perf_counter() - t
    fit = fit_binomial(num_shots=len(dets), num_hits=e_ref, max_likelihood_factor=1e3)
    print(f"ldpc BpOsdDecoder CS10 {args.problem}: {e_ref}/{len(dets)} = {fit.best:.2e} "
          f"[{fit.low:.2e}, {fit.high:.2e}] ({t_ref / len(dets) * 1e3:.2f} ms/shot)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["speed", "agreement", "ler"])
    ap.add_argument("--problem", default="bb144", choices=["bb144", "surf7"])
    ap.add_argument("--shots", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-ldpc", action="store_true")
    ap.add_argument("--seed", type=int, default=3, help="sampling seed of the ler mode")
    ap.add_argument("--json", metavar="FILE", help="speed: also write the medians to this result file (one entry "
                                                   "per problem)")
    args = ap.parse_args()
    {"speed": speed, "agreement": agreement, "ler": ler}[args.mode](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
