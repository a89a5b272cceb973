"""How far below Tesseract can any decoder go? The exact decoders, on Tesseract's failing shots.

For each problem (``frontier.py``'s :data:`PROBLEMS`) and seed, ``--shots`` shots are sampled; Tesseract's
colour preset (``tesseract-short-beam-sparsify-color-code-like``, through its own sinter API) decodes them all,
and the exact decoders of ``--exact`` decode the shots Tesseract failed on (the *union*, with ``--native``'s
failing shots when a native decoder is named):

- ``mle``: the exact most likely error (HiGHS to proven optimality, qdecode's reference);
- ``coset-ml``: the exact most likely logical class (every error of each class summed,
  ``qdecode/decoders/coset_ml.py``), the optimal decoder: no decoder has a lower expected failure rate.
  It fits small models only; where it refuses, its columns are empty and the refusal is recorded.

The bound: an exact decoder fails at least as often as it fails on any subset of the shots, so its
failures on the whole sample are at least its failures on the union. ``ties`` counts the failing shots where
``mle``'s exact gap is 0 (a lightest error of another class weighs exactly as much, so that another
most-likely-error decoder may get the shot right). When ``mle``'s failures on the union, less the ties, exceed
``0.8 x`` Tesseract's failures, no most-likely-error decoder reaches 0.8x Tesseract's failures on these shots;
when ``coset-ml``'s do, no decoder does. Pooled over the seeds (``pooled``), the part of Tesseract's failures
that ``coset-ml`` decodes correctly is a binomial fraction; its upper end (sinter's ``fit_binomial``,
likelihood ratio 1000) gives the lower end of ``coset-ml / Tesseract >= 1 - rescued``.

    python benchmarks/mle_floor.py --problems color-xyz-d5 superdense-d5 color-xyz-d7 --seeds 2026 1 \
        --shots 20000 --exact mle --json benchmarks/results/mle_floor.json
    python benchmarks/mle_floor.py --problems color-xyz-d5 --seeds 2026 1 2 3 4 5 --shots 20000 \
        --exact mle coset-ml --json benchmarks/results/coset_ml_floor.json

The bound leaves out the shots Tesseract gets right and ``coset-ml`` does not. ``--decode-all N`` measures them:
``coset-ml`` then also decodes the first ``N`` shots of each sample, and the row records both decoders' failures
there and their CPU time per shot (one thread; Tesseract's over the whole sample).

    python benchmarks/mle_floor.py --problems color-xyz-d5 --seeds 2026 --shots 20000 --exact coset-ml \
        --decode-all 12000 --json benchmarks/results/coset_ml_all_shots.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import write_result  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontier import PROBLEMS  # noqa: E402
from native_vs_tesseract import PRESET  # noqa: E402

from qdecode.decoders.base import DecoderRefusedError  # noqa: E402
from qdecode.decoders.registry import DecoderSpec, split_label  # noqa: E402
from qdecode.problem import DecodingProblem, decoding_dem  # noqa: E402
from qdecode.sims.stats import fit_binomial  # noqa: E402

EXACT = ("mle", "coset-ml")


def _pooled(name: str, rows: list[dict]) -> dict:
    """One problem's seeds together: failures summed, and the bound on ``coset-ml / Tesseract`` (docstring)."""
    sums = {key: sum(r[key] for r in rows) for key in ("shots", "tesseract_failures", "union")}
    out = {"problem": name, "seeds": [r["seed"] for r in rows], **sums}
    for key in ("mle_fails_on_union", "ties", "coset_ml_fails_on_union", "coset_ml_fails_on_tesseract_failures"):
        values = [r.get(key) for r in rows]
        out[key] = None if any(v is None for v in values) else sum(values)
    if out["coset_ml_fails_on_tesseract_failures"] is not None:
        rescued = out["tesseract_failures"] - out["coset_ml_fails_on_tesseract_failures"]
        fit = fit_binomial(num_shots=out["tesseract_failures"], num_hits=rescued)
        out["coset_ml_over_tesseract_at_least"] = out["coset_ml_fails_on_union"] / out["tesseract_failures"]
        out["coset_ml_over_tesseract_low"] = 1.0 - fit.high
    return out


def _all_shots(ml, dets: np.ndarray, obs: np.ndarray, t_fail: np.ndarray, tesseract_ms: float) -> dict:
    """``coset-ml`` on every one of ``dets``' shots (uint8 ``(N, m)``): both decoders' failures there, CPU times."""
    ml.predict_observables_batch(dets[:1])  # compiled before the clock starts
    t0 = time.process_time()
    c_fail = np.any(ml.predict_observables_batch(dets) != obs, axis=1)
    return {"all_shots": int(dets.shape[0]), "coset_ml_failures_all": int(c_fail.sum()),
            "tesseract_failures_all": int(t_fail.sum()),
            "coset_ml_only_all": int(np.sum(c_fail & ~t_fail)), "tesseract_only_all": int(np.sum(t_fail & ~c_fail)),
            "coset_ml_ms_per_shot": 1e3 * (time.process_time() - t0) / dets.shape[0],
            "tesseract_ms_per_shot": tesseract_ms}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", default=["color-xyz-d5"], choices=sorted(PROBLEMS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[2026, 1])
    ap.add_argument("--shots", type=int, default=20000)
    ap.add_argument("--exact", nargs="+", default=list(EXACT), choices=EXACT, help="the exact decoders to run")
    ap.add_argument("--native", default=None, help="a qdecode label whose failing shots the exact decoders also decode")
    ap.add_argument("--max-width", type=int, default=None,
                    help="coset-ml's max_width (default its own, 24); its state is 2^max_width float64")
    ap.add_argument("--decode-all", type=int, default=0, metavar="N",
                    help="coset-ml also decodes the first N shots of each sample (docstring)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    import tesseract_decoder

    rows, pooled, refusals = [], [], {}
    print("| problem | seed | Tesseract failures | native failures | union | mle fails on the union | ties | "
          "coset-ml fails on the union | coset-ml / Tesseract (at least) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.problems:
        circuit = PROBLEMS[name][0]()
        dem = decoding_dem(circuit)
        problem = DecodingProblem.from_dem(dem)
        k = dem.num_observables
        tess = tesseract_decoder.make_tesseract_sinter_decoders_dict()[PRESET].compile_decoder_for_dem(dem=dem)
        mle = DecoderSpec.create("mle", {}).build(problem) if "mle" in args.exact else None
        ml = None
        if "coset-ml" in args.exact:
            try:
                width = {} if args.max_width is None else {"max_width": args.max_width}
                ml = DecoderSpec.create("coset-ml", width).build(problem)
            except DecoderRefusedError as exc:
                refusals[name] = str(exc)
                print(f"# {name}: {exc}", flush=True)
        native = DecoderSpec.create(*split_label(args.native)).build(problem) if args.native else None
        problem_rows = []
        for seed in args.seeds:
            dets, obs = circuit.compile_detector_sampler(seed=seed).sample(args.shots, separate_observables=True)
            dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
            packed = np.packbits(dets, axis=1, bitorder="little")
            t0 = time.process_time()
            t_pred = np.unpackbits(tess.decode_shots_bit_packed(bit_packed_detection_event_data=packed), axis=1,
                                   count=k, bitorder="little")
            t_ms = 1e3 * (time.process_time() - t0) / args.shots
            t_fail = np.any(t_pred != obs, axis=1)
            n_fail = np.zeros_like(t_fail)
            if native is not None:
                n_fail = np.any(native.predict_observables_batch(dets) != obs, axis=1)
            union = np.flatnonzero(t_fail | n_fail)
            row = {"problem": name, "seed": seed, "shots": args.shots, "tesseract": PRESET,
                   "tesseract_failures": int(t_fail.sum()), "native": args.native,
                   "native_failures": int(n_fail.sum()) if native is not None else None, "union": int(union.size),
                   "mle_fails_on_union": None, "ties": None, "coset_ml_fails_on_union": None,
                   "coset_ml_fails_on_tesseract_failures": None}
            if mle is not None:
                pred, gap = mle.predict_with_confidence(dets[union])
                assert not np.any(mle.last_info.extra["time_limit_hit"]), "an mle solve stopped at its time limit"
                m_fail = np.any(pred != obs[union], axis=1)
                row["mle_fails_on_union"] = int(m_fail.sum())
                row["ties"] = int(np.sum(m_fail & (gap == 0)))  # mle's lightest error of another class weighs the same
            if ml is not None:
                c_fail = np.any(ml.predict_observables_batch(dets[union]) != obs[union], axis=1)
                row["coset_ml_fails_on_union"] = int(c_fail.sum())
                row["coset_ml_fails_on_tesseract_failures"] = int(np.sum(c_fail & t_fail[union]))
                if args.decode_all:
                    row.update(_all_shots(ml, dets[:args.decode_all], obs[:args.decode_all], t_fail[:args.decode_all],
                                          t_ms))
            problem_rows.append(row)
            ratio = (row["coset_ml_fails_on_union"] if ml is not None else row["mle_fails_on_union"] or 0) \
                / max(1, row["tesseract_failures"])
            print(f"| {name} | {seed} | {row['tesseract_failures']} | {row['native_failures']} | {row['union']} | "
                  f"{row['mle_fails_on_union']} | {row['ties']} | {row['coset_ml_fails_on_union']} | {ratio:.2f} |",
                  flush=True)
        rows += problem_rows
        pooled.append(_pooled(name, problem_rows))
        print(f"# pooled: {pooled[-1]}", flush=True)
    write_result(args.json, {"shots": args.shots, "exact": args.exact, "max_width": args.max_width, "rows": rows,
                             "pooled": pooled, "refusals": refusals})


if __name__ == "__main__":
    main()
