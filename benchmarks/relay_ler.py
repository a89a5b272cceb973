"""Relay-BP (float and 8-bit fixed point) vs BP+OSD-CS10 on the same gross-code shots.

[[144,12,12]] memory-Z circuit (``bb144_12_12``, ``bb-uniform`` noise, 12 rounds, Z detectors only),
IBM's gross-code Relay-BP tuning (gamma0 0.15, gamma ~ U[-0.226, 0.622), 80 / 60 iterations,
300 legs, S = 5, alpha = 1). BP+OSD: min-sum BP (``--osd-bp-iter`` iterations, alpha = 1) then
OSD-CS order 10 on non-converged shots. Every decoder sees exactly the same sampled shots
(``--seed``). Intervals: ``fit_binomial`` with likelihood factor 1e3 (sinter's convention).
Optionally also relay-bp 0.2.1 (``RelayDecoderF64``, same parameters) with ``--relay-bp``.

Usage: python benchmarks/relay_ler.py --p 0.004 --shots 9000 [--threads 2] [--seed 2025]
       [--decoders relay,relay8,bposd] [--relay-bp] [--osd-bp-iter 80]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, default=0.004)
    ap.add_argument("--shots", type=int, default=9000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--decoders", default="relay,relay8,bposd")
    ap.add_argument("--relay-bp", action="store_true", help="also decode with relay-bp 0.2.1")
    ap.add_argument("--osd-bp-iter", type=int, default=80)
    args = ap.parse_args()

    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.decoders.relay_bp import RelayBpDecoder
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    params = dict(gamma0=0.15, gamma_interval=(-0.226, 0.622), pre_iter=80, legs=300, leg_iter=60, stop_after=5)
    circ = build_circuit("bb144_12_12", noise="bb-uniform", p=args.p, rounds=12, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
    dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
    print(f"bb144_12_12 bb-uniform p={args.p}, 12 rounds, Z detectors, {args.shots} shots, seed {args.seed}, "
          f"threads {args.threads}")

    decoders = {
        "relay": lambda: RelayBpDecoder(prob, threads=args.threads, **params),
        "relay8": lambda: RelayBpDecoder(prob, threads=args.threads, bits=8, frac_bits=3, **params),
        "bposd": lambda: BpOsdDecoder(prob, osd_method="osd_cs", osd_order=10, method="minsum",
                                      max_iter=args.osd_bp_iter, threads=args.threads),
    }
    labels = {"relay": "qdecode relay-bp (float64)", "relay8": "qdecode relay-bp (8-bit, 3 frac)",
              "bposd": f"qdecode bposd (min-sum {args.osd_bp_iter} it + OSD-CS10)"}
    rows = []
    fails = {}
    for name in args.decoders.split(","):
        dec = decoders[name]()
        dec.decode_batch(dets[:2])  # JIT / cache load outside the timed region
        t = time.perf_counter()
        pred = dec.predict_observables_batch(dets)
        dt = time.perf_counter() - t
        fail = np.any(pred != obs, axis=1)
        fails[name] = fail
        rows.append((labels[name], int(fail.sum()), dt))
        print(f"  {labels[name]}: {int(fail.sum())} errors, {dt:.1f} s", flush=True)
    if args.relay_bp:
        import relay_bp

        ref = relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, gamma0=0.15,
                                       gamma_dist_interval=(-0.226, 0.622), pre_iter=80, num_sets=300,
                                       set_max_iter=60, stop_nconv=5, alpha=None)
        runner = relay_bp.ObservableDecoderRunner(ref, prob.L.toarray().astype(np.uint8))
        t = time.perf_counter()
        pred = np.asarray(runner.decode_observables_batch(dets, parallel=True, progress_bar=False), dtype=np.uint8)
        dt = time.perf_counter() - t
        fail = np.any(pred != obs, axis=1)
        fails["relay-bp"] = fail
        rows.append(("relay-bp 0.2.1 RelayDecoderF64", int(fail.sum()), dt))

    print()
    print("| decoder | errors / shots | LER per shot [95% fit_binomial, factor 1e3] | wall s |")
    print("|---|---|---|---|")
    for label, k, dt in rows:
        f = fit_binomial(num_shots=args.shots, num_hits=k, max_likelihood_factor=1e3)
        print(f"| {label} | {k} / {args.shots} | {f.best:.3g} [{f.low:.3g}, {f.high:.3g}] | {dt:.0f} |")
    if "relay" in fails and "bposd" in fails:
        a, b = int(fails["relay"].sum()), int(fails["bposd"].sum())
        both = int((fails["relay"] & fails["bposd"]).sum())
        print(f"\nBP+OSD-CS10 / Relay-BP LER ratio: {b / max(a, 1):.2f} (both fail on {both} shots)")
    if "relay" in fails and "relay8" in fails:
        a, b = int(fails["relay"].sum()), int(fails["relay8"].sum())
        print(f"8-bit / float LER ratio: {b / max(a, 1):.2f}")


if __name__ == "__main__":
    main()
