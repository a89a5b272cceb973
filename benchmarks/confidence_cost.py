"""The cost of soft output: time per shot with and without the confidence, for every decoder that gives one.

Problem: rotated surface code d = 5, d rounds, SI1000 noise at p = 0.003 (``build_circuit("surface",
d=5, noise="si1000", p=0.003)``, decomposed DEM). Shots are sampled once (fixed seed). For each
decoder, ``plain`` is ``predict_observables_packed`` (the harness path) and ``gap`` is
``predict_with_confidence_packed`` (the gap of :mod:`qdecode.decoders.confidence`), each on a freshly
built decoder after one untimed warm-up call on another decoder (so ``mle``'s memo of solved
syndromes never answers a timed shot from an earlier call). Time is CPU time of this process
(``time.process_time``; numba, rayon and OpenMP pinned to one thread). The table also gives the
failures (any observable wrong), how many gaps are ``nan`` / ``inf``, the median gap, and the failure
rate among the shots aborted at a 10 % abort target (lowest confidence first, ``nan`` first, ties never
split, so fewer when ties straddle the cut) against the rest (what the confidence is for).

    python benchmarks/confidence_cost.py --shots 20000 --mle-shots 40 --tesseract-shots 300

``--json FILE`` also writes the rows (``benchmarks/results/confidence_cost.json``, whose table
``benchmarks/render.py`` puts in benchmarks/README.md).
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import kept_after_abort, write_result  # noqa: E402

from qdecode.decoders.confidence import CONFIDENCE_DECODERS  # noqa: E402
from qdecode.decoders.registry import DecoderSpec  # noqa: E402
from qdecode.problem import DecodingProblem  # noqa: E402
from qdecode.sims.circuits import build_circuit  # noqa: E402


def timed(call, *args):
    """(result, CPU seconds) of ``call(*args)``."""
    t0 = time.process_time()
    out = call(*args)
    return out, time.process_time() - t0


def measure(name: str, problem: DecodingProblem, packed: np.ndarray, obs: np.ndarray) -> dict:
    """One row: plain and gap timings of decoder ``name`` on bit-packed shots ``packed`` (truth ``obs``)."""
    spec = DecoderSpec.parse(name)
    warm = spec.build(problem)
    # >= 4 shots, so that the BP family's batch paths take (and compile) their lane kernels here; one shot
    # for the searches, whose warm-up is their own cost per shot
    warm_shots = 1 if name in ("mle", "tesseract") else 64
    warm.predict_observables_packed(packed[:warm_shots])
    warm.predict_with_confidence_packed(packed[:warm_shots])
    plain_pred, plain_s = timed(spec.build(problem).predict_observables_packed, packed)
    (gap_pred, gap), gap_s = timed(spec.build(problem).predict_with_confidence_packed, packed)
    assert np.array_equal(plain_pred, gap_pred), f"{name}: the gap path predicts other observables"
    k = problem.num_observables
    fail = np.any(np.unpackbits(gap_pred, axis=1, count=k, bitorder="little") != obs, axis=1)
    low = ~kept_after_abort(gap, 0.10)  # the (at most) 10 % of lowest confidence, nan first, ties kept together
    S = len(packed)
    return {"decoder": name, "shots": S, "plain_us": 1e6 * plain_s / S, "gap_us": 1e6 * gap_s / S,
            "failures": int(fail.sum()), "nan": int(np.isnan(gap).sum()), "inf": int(np.isposinf(gap).sum()),
            "median_db": float(np.nanmedian(gap)), "fail_low10": float(fail[low].mean()) if low.any() else np.nan,
            "fail_rest": float(fail[~low].mean()) if (~low).any() else np.nan}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", type=int, default=20000, help="shots for pymatching (default: %(default)s)")
    ap.add_argument("--mle-shots", type=int, default=40, help="shots for mle, the first of the same sample "
                                                              "(default: %(default)s)")
    ap.add_argument("--tesseract-shots", type=int, default=300, help="shots for tesseract, the first of the same "
                                                                     "sample (default: %(default)s)")
    ap.add_argument("--decoders", default=";".join(CONFIDENCE_DECODERS),
                    help="semicolon-separated registry specs (default: every decoder with a confidence)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    circuit = build_circuit("surface", d=5, noise="si1000", p=0.003)
    problem = DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=True))
    dets, obs = circuit.compile_detector_sampler(seed=2026).sample(args.shots, separate_observables=True)
    packed = np.packbits(dets, axis=1, bitorder="little")
    obs = obs.astype(np.uint8)
    print(f"surface d=5 SI1000 p=0.003: {problem.num_detectors} detectors, {problem.num_errors} mechanisms, "
          f"{problem.num_observables} observable(s)")
    print("| decoder | shots | plain us/shot | with gap us/shot | ratio | failures | nan | inf | median gap dB "
          "| fail rate, aborted at 10% | fail rate, kept |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in args.decoders.split(";"):
        S = {"mle": args.mle_shots, "tesseract": args.tesseract_shots}.get(name, args.shots)
        r = measure(name, problem, packed[:S], obs[:S])
        rows.append(r)
        print(f"| {r['decoder']} | {r['shots']} | {r['plain_us']:.1f} | {r['gap_us']:.1f} | "
              f"{r['gap_us'] / r['plain_us']:.2f} | {r['failures']} | {r['nan']} | {r['inf']} | {r['median_db']:.1f} | "
              f"{r['fail_low10']:.4f} | {r['fail_rest']:.4f} |", flush=True)
    write_result(args.json, {"problem": "surface d=5 SI1000 p=0.003, seed 2026", "rows": rows})


if __name__ == "__main__":
    main()
