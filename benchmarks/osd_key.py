"""Which BP posterior history should order OSD? ``bposd[osd_key=...]`` against ldpc, same shots.

Gross code ([[144,12,12]] ``bb-uniform``, 12 rounds, memory-Z, Z detectors). Every decoder runs
min-sum (alpha 1, ``--bp-iter`` iterations, flooding) and OSD-CS10 on the shots BP did not
converge on; they differ only in the key OSD orders the columns by:

- ldpc ``BpOsdDecoder`` (OSD-CS10): the last posterior;
- ``bposd`` (``osd_key=last``): the last posterior (reproduces ldpc);
- ``bposd[osd_key=sumK]``: the sum of the posteriors of the last K iterations, which averages the
  oscillation of min-sum on the shots it fails on.

A shot fails on a wrong observable. Per-round LER = 1 - (1 - P_shot)^(1/rounds), intervals from
``fit_binomial`` (sinter's convention, factor 1000). Times are per shot, ``--threads`` threads for
qdecode and one for ldpc (it has no batch call); the ratio column is qdecode's time over the
``osd_key=last`` row's.

    python benchmarks/osd_key.py --p 0.003 0.004 --shots 24000 --seed 11 --threads 2 --keys last sum4 \
        --ldpc-shots 400
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
    ap.add_argument("--keys", nargs="+", default=["last", "sum2", "sum4", "sum8"])
    ap.add_argument("--ldpc-shots", type=int, default=None,
                    help="decode only the first N shots with ldpc (its OSD-CS10 is slow) and print its per-shot "
                         "agreement with bposd[osd_key=last] there; 0 skips ldpc")
    args = ap.parse_args()

    from qdecode.decoders.base import observables_from_errors
    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    R, it = args.rounds, args.bp_iter
    per_round = lambda x: 1.0 - (1.0 - x) ** (1.0 / R)  # noqa: E731
    rows = ["| p | decoder | failures / shots | LER per round [interval] | ms / shot | time vs last |",
            "|---|---|---|---|---|---|"]
    for p in args.p:
        circ = build_circuit("bb144_12_12", noise="bb-uniform", p=p, rounds=R, basis="Z")
        prob = DecodingProblem.from_dem(decoding_dem(circ))
        dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
        dets = dets.astype(np.uint8)
        obs = obs.astype(np.uint8)
        runs = {}
        for key in args.keys:
            dec = BpOsdDecoder(prob, osd_method="osd_cs", osd_order=10, osd_key=key, max_iter=it, threads=args.threads)
            dec.predict_observables_batch(dets[:8])  # JIT / cache load outside the timed region
            t0 = time.perf_counter()
            pred = dec.predict_observables_batch(dets)
            runs[f"bposd[osd_key={key}]"] = (pred, time.perf_counter() - t0)
        n_ldpc = args.shots if args.ldpc_shots is None else min(args.ldpc_shots, args.shots)
        if n_ldpc:
            import ldpc

            ref = ldpc.BpOsdDecoder(prob.H, error_channel=list(prob.priors), max_iter=it, bp_method="minimum_sum",
                                    ms_scaling_factor=1.0, schedule="parallel", osd_method="osd_cs", osd_order=10)
            t0 = time.perf_counter()
            err = np.array([ref.decode(s) for s in dets[:n_ldpc]], dtype=np.uint8)
            secs = time.perf_counter() - t0
            pred = observables_from_errors(err, prob)
            if "bposd[osd_key=last]" in runs:
                same = int((pred == runs["bposd[osd_key=last]"][0][:n_ldpc]).all(axis=1).sum())
                print(f"p={p}: ldpc and bposd[osd_key=last] predict the same observables on {same} / {n_ldpc} shots")
            runs["ldpc BpOsdDecoder CS10"] = (pred, secs)
        base = runs.get("bposd[osd_key=last]", (None, None))[1]
        for name, (pred, secs) in runs.items():
            shots = len(pred)
            k = int(np.any(pred != obs[:shots], axis=1).sum())
            f = fit_binomial(num_shots=shots, num_hits=k, max_likelihood_factor=1000)
            ratio = f"{secs / base:.2f}" if base and name.startswith("bposd") else ""
            rows.append(f"| {p} | {name} | {k} / {shots} | {per_round(f.best):.2e} "
                        f"[{per_round(f.low):.2e}, {per_round(f.high):.2e}] | {secs / shots * 1e3:.2f} "
                        f"| {ratio} |")
            print(rows[-1], flush=True)
    print("\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
