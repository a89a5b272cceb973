"""Union-find (``uf``) against PyMatching at circuit level, same shots, one thread.

Rotated surface code, Z memory, rounds = d, ``--noise`` (si1000) at each ``--p``, for each ``--d``;
stim's circuit through ``build_circuit``, DEM with ``decompose_errors=True`` (``uf`` decodes its
edge form, as PyMatching does). ``--shots`` shots per point, sampled once (seed ``--seed``), decoded by
``uf`` (smallest-cluster-first growth by half edges), ``uf[growth=uniform]``, ``uf[length_steps=4]`` and
``uf[length_steps=8]`` (edges as long as their weights: weighted union-find, arXiv:2004.04693) and
``pymatching``. Printed: failures, LER per shot
with sinter's ``fit_binomial`` interval (likelihood ratio 1000) and per round (sinter's convention),
and microseconds per shot (thread CPU time of the whole batch, warm-up outside).

    NUMBA_NUM_THREADS=1 python benchmarks/uf_vs_pymatching.py --d 5,7 --p 0.003,0.005 --shots 40000 \
        --json benchmarks/results/uf_vs_pymatching.json
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import write_result

from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem
from qdecode.sims.circuits import build_circuit
from qdecode.sims.stats import fit_binomial, shot_error_rate_to_per_round


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", default="5,7")
    ap.add_argument("--p", default="0.003,0.005")
    ap.add_argument("--noise", default="si1000")
    ap.add_argument("--shots", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    rows = []
    print("| d | p | decoder | failures | LER per shot [interval] | LER per round | us / shot |")
    print("|---|---|---|---|---|---|---|")
    for d in (int(x) for x in args.d.split(",")):
        for p in (float(x) for x in args.p.split(",")):
            circ = build_circuit("surface", d=d, noise=args.noise, p=p)
            problem = DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))
            dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
            dets = dets.astype(np.uint8)
            for name, params in (("uf", {}), ("uf", {"growth": "uniform"}), ("uf", {"length_steps": 4}),
                                 ("uf", {"length_steps": 8}), ("pymatching", {})):
                dec = DecoderSpec.create(name, params).build(problem)
                dec.predict_observables_batch(dets[:64])
                t = time.thread_time()
                pred = dec.predict_observables_batch(dets)
                secs = time.thread_time() - t
                k = int(np.any(pred != obs, axis=1).sum())
                fit = fit_binomial(num_shots=args.shots, num_hits=k, max_likelihood_factor=1e3)
                label = name + ("[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]" if params else "")
                rows.append({"d": d, "p": p, "decoder": label, "shots": args.shots, "failures": k,
                             "us_per_shot": 1e6 * secs / args.shots})
                print(f"| {d} | {p:g} | {label} | {k} | {fit.best:.2e} [{fit.low:.2e}, {fit.high:.2e}] "
                      f"| {shot_error_rate_to_per_round(fit.best, d):.2e} | {1e6 * secs / args.shots:.1f} |",
                      flush=True)
    write_result(args.json, {"noise": args.noise, "seed": args.seed, "rows": rows})


if __name__ == "__main__":
    main()
