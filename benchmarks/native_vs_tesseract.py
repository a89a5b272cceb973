"""The native colour-code decoder against Tesseract, same shots, CPU time in one run.

For each seed, stim's ``color_code:memory_xyz`` (d = 5, 5 rounds, p = 0.002 on all four noise
knobs; ``frontier.py``'s ``color-xyz-d5``) is sampled once; Tesseract's colour preset
(``tesseract-short-beam-sparsify-color-code-like``, through its own sinter API) and each qdecode
decoder decode the same shots, taking turns, ``--repeats`` times. Failures are deterministic
(checked across repeats); the time is the median over repeats of the CPU time per shot
(``time.process_time``, one thread, after an untimed warm-up), and the ratio to Tesseract's is
taken within each repeat before the median, so machine load affects both sides alike.

    python benchmarks/native_vs_tesseract.py --seeds 2026 1 --shots 20000 --repeats 3 \
        --json benchmarks/results/native_vs_tesseract.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import write_result  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontier import PROBLEMS, split_labels  # noqa: E402

from qdecode.decoders.registry import DecoderSpec, split_label  # noqa: E402
from qdecode.problem import DecodingProblem, decoding_dem  # noqa: E402
from qdecode.sims.stats import fit_binomial  # noqa: E402

PRESET = "tesseract-short-beam-sparsify-color-code-like"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="color-xyz-d5", choices=sorted(PROBLEMS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[2026, 1])
    ap.add_argument("--shots", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--decoders", default="class-escalate,class-escalate[flag_frac=0.1],relay-bp[stop_after=10]")
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    rows = []
    import tesseract_decoder

    build, title = PROBLEMS[args.problem]
    circuit = build()
    dem = decoding_dem(circuit)
    problem = DecodingProblem.from_dem(dem)
    k = dem.num_observables
    tess = tesseract_decoder.make_tesseract_sinter_decoders_dict()[PRESET].compile_decoder_for_dem(dem=dem)
    runners = {"Tesseract " + PRESET:
               lambda packed: tess.decode_shots_bit_packed(bit_packed_detection_event_data=packed)}
    for label in split_labels(args.decoders):
        dec = DecoderSpec.create(*split_label(label)).build(problem)
        runners[label] = dec.predict_observables_packed
    print(f"{title}: {args.shots} shots per seed, {args.repeats} repeats, load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| seed | decoder | failures | LER per shot [interval] | CPU ms per shot (median) | time / Tesseract's |")
    print("|---|---|---|---|---|---|")
    for seed in args.seeds:
        packed, obs_packed = circuit.compile_detector_sampler(seed=seed).sample(
            args.shots, separate_observables=True, bit_packed=True)
        obs = np.unpackbits(obs_packed, axis=1, count=k, bitorder="little")
        fails: dict[str, set[int]] = {}
        times: dict[str, list[float]] = {name: [] for name in runners}
        for name, run in runners.items():
            run(packed[:8])  # warm-up: compile or load caches outside the timing
        for _ in range(args.repeats):
            for name, run in runners.items():
                t0 = time.process_time()
                pred = np.unpackbits(np.asarray(run(packed), dtype=np.uint8), axis=1, count=k, bitorder="little")
                times[name].append(1e3 * (time.process_time() - t0) / args.shots)
                fails.setdefault(name, set()).add(int(np.any(pred != obs, axis=1).sum()))
        ref = "Tesseract " + PRESET
        for name in runners:
            assert len(fails[name]) == 1, f"{name}: failures differ across repeats: {fails[name]}"
            f = fails[name].pop()
            fit = fit_binomial(num_shots=args.shots, num_hits=f, max_likelihood_factor=1e3)
            ratio = statistics.median(a / b for a, b in zip(times[name], times[ref]))
            rows.append({"seed": seed, "decoder": name, "shots": args.shots, "failures": f,
                         "ms_per_shot": statistics.median(times[name]), "time_ratio": ratio})
            print(f"| {seed} | `{name}` | {f} | {f / args.shots:.2e} [{fit.low:.2e}, {fit.high:.2e}] | "
                  f"{statistics.median(times[name]):.3f} | {ratio:.2f} |", flush=True)
    write_result(args.json, {"problem": args.problem, "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
