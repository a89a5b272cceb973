"""Coloration circuits against Bravyi et al.'s depth-8 circuit on the gross code, decoded by ``bposd``.

[[144,12,12]] BB code (``bb144_12_12``), ``bb-uniform`` noise (CX p, preparation / measurement flips
p, idle p, noiseless final readout), memory-Z, Z detectors only, ``--rounds`` rounds. Circuits:

- ``bravyi``: :func:`qdecode.sims.circuits.bb_memory_circuit`, the cycle of Bravyi et al.
  (arXiv:2308.07915): 7 CX layers interleaving X and Z checks, 8 moments per round;
- ``coloration``: :func:`qdecode.sims.css_circuit.css_memory_circuit`, Algorithm 1 of Tremblay,
  Delfosse, Beverland (arXiv:2109.14609): all X layers, then all Z layers (6 + 6), each check in
  IBM's gate order (the colouring's preference for BB codes);
- ``coloration, plain König``: the same with the code passed as a bare ``CSSCode`` (no BB
  structure), i.e. what any code without a hand-made order gets;
- ``coloration-interleaved``: X and Z edges coloured together starting from IBM's slots, which
  gives IBM's 7 layers (checked valid), with the coloration circuit's reset / measure placement.

Every circuit is decoded by ``bposd`` (min-sum, ``--bp-iter`` iterations, OSD-CS order
``--osd-order``) on ``--shots`` shots of its own. A shot fails on any wrong observable; per-round
LER = 1 - (1 - P_shot)^(1/rounds); intervals from ``fit_binomial`` (sinter's convention, factor
1000). "CX layers / round": moments holding a CNOT, divided by the rounds; "TICKs / round" the
moments. ms / shot is decoding time only, ``--threads`` threads.

    nice -n 19 python benchmarks/coloration_vs_bravyi.py --shots 15000 --seed 5 --threads 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", default="bb144_12_12", help="a BB catalogue code")
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--shots", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--bp-iter", type=int, default=80)
    ap.add_argument("--osd-order", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--circuits", nargs="+", default=["bravyi", "coloration", "coloration-plain", "interleaved"],
                    choices=["bravyi", "coloration", "coloration-plain", "interleaved"])
    args = ap.parse_args()

    from qdecode.codes.catalog import get_code
    from qdecode.codes.css import CSSCode
    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.css_circuit import css_memory_circuit, cx_layers
    from qdecode.sims.stats import fit_binomial

    code = get_code(args.code)
    bare = CSSCode(hx=code.hx, hz=code.hz, lx=code.lx, lz=code.lz, d=code.d, name=f"{code.name}-bare")
    R, p = args.rounds, args.p
    kw = dict(rounds=R, noise="bb-uniform", p=p, basis="Z", memory_basis_only=True)
    builders = {
        "bravyi": ("Bravyi et al. depth-8", lambda: build_circuit(args.code, **kw)),
        "coloration": ("coloration (Alg. 1, IBM per-check order)", lambda: css_memory_circuit(code, **kw)),
        "coloration-plain": ("coloration (Alg. 1, plain König)", lambda: css_memory_circuit(bare, **kw)),
        "interleaved": ("coloration-interleaved (IBM slots)",
                        lambda: css_memory_circuit(code, schedule="coloration-interleaved", **kw)),
    }
    per_round = lambda x: 1.0 - (1.0 - x) ** (1.0 / R)  # noqa: E731
    rows = [f"{args.code}, bb-uniform p = {p}, {R} rounds, memory-Z (Z detectors), bposd min-sum {args.bp_iter} it "
            f"+ OSD-CS{args.osd_order}, {args.shots} shots each (seed {args.seed})", "",
            "| circuit | CX layers / round | TICKs / round | detectors x DEM columns | failures / shots "
            "| LER per shot [interval] | LER per round [interval] | ms / shot |",
            "|---|---|---|---|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    for key in args.circuits:
        label, build = builders[key]
        circ = build()
        prob = DecodingProblem.from_dem(decoding_dem(circ))
        dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
        dec = BpOsdDecoder(prob, osd_order=args.osd_order, osd_key="last", max_iter=args.bp_iter,
                           threads=args.threads)
        dec.predict_observables_batch(dets[:8].astype(np.uint8))  # JIT / cache load outside the timed region
        t0 = time.perf_counter()
        pred = dec.predict_observables_batch(dets.astype(np.uint8))
        secs = time.perf_counter() - t0
        k = int(np.any(pred != obs, axis=1).sum())
        f = fit_binomial(num_shots=args.shots, num_hits=k, max_likelihood_factor=1000)
        rows.append(f"| {label} | {cx_layers(circ) / R:g} | {circ.num_ticks / R:.2f} | "
                    f"{prob.num_detectors} x {prob.num_errors} | {k} / {args.shots} | "
                    f"{f.best:.2e} [{f.low:.2e}, {f.high:.2e}] | "
                    f"{per_round(f.best):.2e} [{per_round(f.low):.2e}, {per_round(f.high):.2e}] | "
                    f"{secs / args.shots * 1e3:.2f} |")
        print(rows[-1], flush=True)


if __name__ == "__main__":
    main()
