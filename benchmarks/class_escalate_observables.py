"""``class-escalate``'s cost against the number of observables k, beside ``relay-bp`` on the same shots.

``class-escalate`` re-decodes each flagged shot once per observable (one forced Relay-BP on
``[H; L_i]``, ``qdecode.decoders.class_escalate``), so its time over ``relay-bp``'s should grow
about linearly in k. For each code (memory Z circuits of the catalogue, ``bb-uniform`` noise at
``--p``, ``--rounds`` rounds; the surface code under SI1000), ``--shots`` shots are sampled once (seed
``--seed``) and both decoders decode all of them in one call (large batches, as a sweep's), one
thread, after an untimed warm-up and, for ``class-escalate``, its construction (calibration
included, timed separately). Prints a markdown table: k, failures of each decoder, CPU ms per
shot (``time.process_time``) and the ratio.

    python benchmarks/class_escalate_observables.py --shots 500 --rounds 3 --p 0.003 \
        --json benchmarks/results/class_escalate_observables.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import write_result  # noqa: E402

from qdecode.decoders.registry import DecoderSpec  # noqa: E402
from qdecode.problem import DecodingProblem, decoding_dem  # noqa: E402
from qdecode.sims.circuits import build_circuit  # noqa: E402

#: (catalogue name, distance, noise): k = 1, 2, 4, 6, 8, 12.
CODES = (("surface", 5, "si1000"), ("gb46_2_9", 9, "bb-uniform"), ("cbb30_4_6", 6, "bb-uniform"),
         ("gb48_6_8", 8, "bb-uniform"), ("bb90_8_10", 10, "bb-uniform"), ("bb72_12_6", 6, "bb-uniform"))


def _cpu_ms_per_shot(decoder, dets: np.ndarray, obs: np.ndarray) -> tuple[float, int]:
    decoder.predict_observables_batch(dets[:8])  # warm-up: JIT or cache load, untimed
    t = time.process_time()
    pred = decoder.predict_observables_batch(dets)
    ms = 1e3 * (time.process_time() - t) / dets.shape[0]
    return ms, int(np.any(pred != obs, axis=1).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shots", type=int, default=500)
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--codes", default=",".join(c[0] for c in CODES))
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    rows = []
    wanted = args.codes.split(",")
    print(f"{args.shots} shots per code, {args.rounds} rounds, p = {args.p}, seed {args.seed}, load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| code | k | relay-bp failures | class-escalate failures | relay-bp ms/shot | class-escalate ms/shot "
          "| ratio | class-escalate build s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, d, noise in CODES:
        if name not in wanted:
            continue
        circuit = build_circuit(name, d=d, rounds=args.rounds, noise=noise, p=args.p)
        dem = decoding_dem(circuit)
        problem = DecodingProblem.from_dem(dem)
        dets, obs = circuit.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
        dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
        relay = DecoderSpec.create("relay-bp").build(problem)
        t = time.process_time()
        escalate = DecoderSpec.create("class-escalate", {"max_observables": problem.num_observables}).build(problem)
        build_s = time.process_time() - t
        relay_ms, relay_fail = _cpu_ms_per_shot(relay, dets, obs)
        esc_ms, esc_fail = _cpu_ms_per_shot(escalate, dets, obs)
        rows.append({"code": name, "d": d, "k": problem.num_observables, "relay_failures": relay_fail,
                     "escalate_failures": esc_fail, "relay_ms": relay_ms, "escalate_ms": esc_ms, "build_s": build_s})
        print(f"| {name} d={d} | {problem.num_observables} | {relay_fail} | {esc_fail} | {relay_ms:.3f} | "
              f"{esc_ms:.3f} | {esc_ms / relay_ms:.1f}x | {build_s:.1f} |", flush=True)
    write_result(args.json, {"shots": args.shots, "rounds": args.rounds, "p": args.p, "seed": args.seed,
                             "rows": rows})


if __name__ == "__main__":
    main()
