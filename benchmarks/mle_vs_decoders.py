"""Distance from optimal: every decoder against exact most-likely-error decoding (``mle``), same shots.

Problem: rotated surface code, Z memory, ``--d`` (3) rounds = d, circuit noise ``--noise`` (si1000)
at each ``--p``, built by ``qdecode.sims.circuits.build_circuit`` (stim's standard circuit with
both bases' detectors, so correlated matching has its hyperedges). For each p, ``--shots`` shots
are sampled once (fixed seed) and decoded by ``mle`` (HiGHS integer program per distinct
syndrome) and by each decoder in ``--decoders``; the table gives failures (any observable wrong),
the logical error rate per shot with its sinter-style binomial interval (likelihood ratio 1000),
the per-round rate (named as such), and how many shots each decoder gets wrong that mle gets right
(and the converse).

    python benchmarks/mle_vs_decoders.py --p 0.004,0.006 --shots 40000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem
from qdecode.sims.circuits import build_circuit
from qdecode.sims.stats import fit_binomial, shot_error_rate_to_per_round


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, default=3)
    ap.add_argument("--noise", default="si1000")
    ap.add_argument("--p", default="0.004,0.006")
    ap.add_argument("--shots", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--decoders", default="pymatching,pymatching-correlated,bposd,relay-bp")
    args = ap.parse_args()
    names = ["mle"] + [s for s in args.decoders.split(",") if s]
    print(f"surface d={args.d}, rounds={args.d}, {args.noise}, {args.shots} shots per p, seed {args.seed}")
    print()
    print("| p | decoder | failures | LER per shot [interval] | LER per round | wrong where mle right "
          "| right where mle wrong | s |")
    print("|---|---|---|---|---|---|---|---|")
    for p in (float(x) for x in args.p.split(",")):
        circ = build_circuit("surface", d=args.d, noise=args.noise, p=p)
        dem = circ.detector_error_model(decompose_errors=True)
        problem = DecodingProblem.from_dem(dem)
        dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
        dets = dets.astype(np.uint8)
        obs = obs.astype(np.uint8)
        wrong = {}
        secs = {}
        for name in names:
            dec = DecoderSpec.create(name, {}).build(problem)
            dec.predict_observables_batch(dets[:8])  # JIT / solver warm-up outside the timing
            t = time.perf_counter()
            pred = dec.predict_observables_batch(dets)
            secs[name] = time.perf_counter() - t
            wrong[name] = np.any(pred != obs, axis=1)
        for name in names:
            k = int(wrong[name].sum())
            fit = fit_binomial(num_shots=args.shots, num_hits=k, max_likelihood_factor=1e3)
            per_round = shot_error_rate_to_per_round(fit.best, args.d)
            worse = int((wrong[name] & ~wrong["mle"]).sum())
            better = int((~wrong[name] & wrong["mle"]).sum())
            print(f"| {p:g} | {name} | {k} | {fit.best:.3e} [{fit.low:.3e}, {fit.high:.3e}] | {per_round:.3e} "
                  f"| {worse} | {better} | {secs[name]:.1f} |")


if __name__ == "__main__":
    main()
