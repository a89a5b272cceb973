"""Which BP posterior should order OSD? The last one vs the sum of the last four, whole history.

Same shots, gross code ([[144,12,12]] ``bb-uniform``, 12 rounds, memory-Z, Z detectors), two
decoders that differ in little more than OSD's ordering key:

- ``bposd``: min-sum ``--bp-iter`` iterations (alpha 1), OSD-CS10 on the shots that did not converge,
  ordered by the *last* posterior (ldpc's convention, which our BP+OSD reproduces).
- ``gdg[pre_iter=N,max_iters=N+1,osd_method=osd_cs]``: the same min-sum for N iterations (GDG's
  pre-BP), then a single decimation step of 6 iterations on the shortened graph (the budget stops
  it there), then OSD-CS10 on the shots still unsolved, ordered by the *sum of the last four*
  pre-BP posteriors (the key GDG shortens by; it averages min-sum's oscillation).

A shot fails on a wrong observable (both decoders always satisfy the syndrome here). Per-round
LER = 1 - (1 - P_shot)^(1/rounds), intervals from ``fit_binomial`` (sinter's convention).

    python benchmarks/osd_key.py --p 0.003 0.004 --shots 24000 --seed 11 --threads 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.003])
    ap.add_argument("--shots", type=int, default=24000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--bp-iter", type=int, default=80)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import numba

    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.decoders.gdg import GdgDecoder
    from qdecode.problem import DecodingProblem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial
    from qdecode.sims.tasks import decoding_dem

    numba.set_num_threads(args.threads)
    R, it = args.rounds, args.bp_iter
    per_round = lambda x: 1.0 - (1.0 - x) ** (1.0 / R)  # noqa: E731
    rows = ["| p | decoder | OSD key | failures / shots | LER per round [interval] | s |", "|---|---|---|---|---|---|"]
    for p in args.p:
        circ = build_circuit("bb144_12_12", noise="bb-uniform", p=p, rounds=R, basis="Z")
        prob = DecodingProblem.from_dem(decoding_dem(circ))
        dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
        dets = dets.astype(np.uint8)
        decoders = {
            (f"bposd (min-sum {it}, OSD-CS10)", "last posterior"):
                BpOsdDecoder(prob, osd_method="osd_cs", method="minsum", max_iter=it, osd_order=10),
            (f"gdg[pre_iter={it},max_iters={it + 1},osd_method=osd_cs]", "sum of the last four"):
                GdgDecoder(prob, pre_iter=it, max_iters=it + 1, osd_method="osd_cs", osd_order=10),
        }
        for (name, key), dec in decoders.items():
            dec.predict_observables_batch(dets[:4])  # JIT / cache load outside the timed region
            t0 = time.perf_counter()
            pred = dec.predict_observables_batch(dets)
            secs = time.perf_counter() - t0
            k = int(np.any(pred != obs, axis=1).sum())
            f = fit_binomial(num_shots=args.shots, num_hits=k)
            rows.append(f"| {p} | {name} | {key} | {k} / {args.shots} | {per_round(f.best):.2e} "
                        f"[{per_round(f.low):.2e}, {per_round(f.high):.2e}] | {secs:.0f} |")
            print(rows[-1], flush=True)
    print("\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
