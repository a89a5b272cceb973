"""Joint X/Z against split decoding of bivariate-bicycle memories, OSD ordered by trajectory keys, same shots.

The memory circuit (``build_circuit(code, noise="bb-uniform", p, rounds)``, memory basis Z) is sampled once
(its measurements, seed ``--seed``) and turned into two detector records by stim's measurement-to-detector
converters of two circuits that differ only in their detectors:

- *split*: the memory basis's detectors only (``memory_basis_only=True``, IBM's "XZ decoding" DEM: the Z
  observables need only the X errors' syndromes);
- *joint*: the detectors of both bases (``memory_basis_only=False``): a Y error is one mechanism that
  flips detectors of both bases, so the decoder sees the X / Z correlations of the noise.

Both records carry the same observable flips (checked). Each ``bposd[osd_key=KEY]`` decodes both; a shot fails
on any wrong observable. Per-round LER = 1 - (1 - P_shot)^(1/rounds); intervals are sinter's ``fit_binomial``
(likelihood ratio 1000). CPU time per shot (``time.process_time``, one thread, after an untimed warm-up).
The paired columns count, on the same shots, the failures of joint that split decoded correctly and the
converse.

    python benchmarks/joint_xz.py --code bb144_12_12 --p 0.003 --rounds 12 --shots 1500 --seed 2026 \
        --keys min sum4 last --json benchmarks/results/joint_xz_bb144.json

Rows added later to the same shots: ``--append`` (with the same ``--code``, ``--p``, ``--rounds``, ``--shots`` and
``--seed``) instead of the keys already run.
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import write_result  # noqa: E402

from qdecode.decoders.registry import DecoderSpec, split_label  # noqa: E402
from qdecode.problem import DecodingProblem, decoding_dem  # noqa: E402
from qdecode.sims.circuits import build_circuit  # noqa: E402
from qdecode.sims.stats import fit_binomial  # noqa: E402


def same_shots(code: str, p: float, rounds: int, shots: int, seed: int):
    """``{"split": (problem, dets (S, m) uint8), "joint": (...)}, observable flips (S, k) uint8`` of one
    measurement sample (module docstring)."""
    circuits = {name: build_circuit(code, noise="bb-uniform", p=p, rounds=rounds, memory_basis_only=name == "split")
                for name in ("split", "joint")}
    meas = circuits["joint"].compile_sampler(seed=seed).sample(shots)
    out, flips = {}, []
    for name, c in circuits.items():
        dets, obs = c.compile_m2d_converter().convert(measurements=meas, separate_observables=True)
        out[name] = (DecodingProblem.from_dem(decoding_dem(c)), dets.astype(np.uint8))
        flips.append(obs.astype(np.uint8))
    assert np.array_equal(flips[0], flips[1]), "the two circuits disagree on the observables"
    return out, flips[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", default="bb144_12_12")
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--shots", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--keys", nargs="+", default=["min", "sum4", "last"], help="bposd[osd_key=KEY] for each KEY")
    ap.add_argument("--decoders", nargs="+", default=[], help="more decoder labels, after the keys' rows")
    ap.add_argument("--dems", nargs="+", default=["split", "joint"], choices=["split", "joint"])
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    ap.add_argument("--append", action="store_true",
                    help="add the rows to those already in --json (same code, p, rounds, shots, seed: same shots)")
    args = ap.parse_args()
    rows = []
    if args.append:
        with open(args.json) as f:
            old = json.load(f)
        if any(old[key] != getattr(args, key) for key in ("code", "p", "rounds", "shots", "seed")):
            raise SystemExit(f"{args.json} holds other shots")
        rows = old["rows"]
    problems, obs = same_shots(args.code, args.p, args.rounds, args.shots, args.seed)
    for name, (prob, dets) in problems.items():
        print(f"{name}: H {prob.H.shape[0]} x {prob.H.shape[1]}, {prob.H.nnz} nonzeros")
    print(f"{args.code}, p = {args.p}, {args.rounds} rounds, {args.shots} shots, seed {args.seed}")
    print("| decoder | DEM | failures | LER per round [interval] | CPU ms per shot | BP converged | "
          "fails only here | fails only in the other DEM |")
    print("|---|---|---|---|---|---|---|---|")
    for label in [f"bposd[osd_key={key}]" for key in args.keys] + args.decoders:
        failed = {}
        for name in args.dems:
            prob, dets = problems[name]
            dec = DecoderSpec.create(*split_label(label)).build(prob)
            dec.predict_observables_batch(dets[:4])  # warm-up: compile or load caches outside the timing
            t0 = time.process_time()
            pred = dec.predict_observables_batch(dets)
            ms = 1e3 * (time.process_time() - t0) / args.shots
            failed[name] = np.any(pred != obs, axis=1)
            f = int(failed[name].sum())
            fit = fit_binomial(num_shots=args.shots, num_hits=f, max_likelihood_factor=1e3)
            per_round = [1 - (1 - x) ** (1 / args.rounds) for x in (f / args.shots, fit.low, fit.high)]
            rows.append({"decoder": label, "dem": name, "m": prob.H.shape[0], "n": prob.H.shape[1],
                         "shots": args.shots, "failures": f, "ler_per_round": per_round[0],
                         "ler_per_round_low": per_round[1], "ler_per_round_high": per_round[2], "ms_per_shot": ms,
                         "bp_converged": float(np.mean(dec.last_info.converged))})
        for row in rows[-len(args.dems):]:
            here, other = failed[row["dem"]], failed.get("joint" if row["dem"] == "split" else "split")
            row["fails_only_here"] = None if other is None else int((here & ~other).sum())
            row["fails_only_other"] = None if other is None else int((other & ~here).sum())
            print(f"| `{label}` | {row['dem']} | {row['failures']} | {row['ler_per_round']:.2e} "
                  f"[{row['ler_per_round_low']:.2e}, {row['ler_per_round_high']:.2e}] | {row['ms_per_shot']:.1f} | "
                  f"{row['bp_converged']:.2f} | {row['fails_only_here']} | {row['fails_only_other']} |", flush=True)
    write_result(args.json, {"code": args.code, "p": args.p, "rounds": args.rounds, "seed": args.seed,
                             "shots": args.shots, "rows": rows})


if __name__ == "__main__":
    main()
