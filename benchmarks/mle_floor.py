"""How far below Tesseract can a most-likely-error decoder go? The exact one, on Tesseract's failing shots.

For each problem (``frontier.py``'s :data:`PROBLEMS`) and seed, ``--shots`` shots are sampled; Tesseract's
colour preset (``tesseract-short-beam-sparsify-color-code-like``, through its own sinter API) decodes them all,
and ``mle`` (the exact most likely error, HiGHS to proven optimality, qdecode's reference) decodes the shots
Tesseract failed on, plus ``--native``'s failing shots when a native decoder is named.

The bound: the exact decoder fails at least as often as it fails on any subset of the shots, so
``mle failures >= mle_fails_on_union``. Any decoder that returns a most likely error fails where ``mle`` does
(up to ties: ``ties`` counts the failing shots where ``mle``'s exact gap is 0, i.e. a lightest error of
another class weighs exactly as much, so that another most-likely-error decoder may get the shot right).
When ``mle_fails_on_union - ties`` exceeds ``0.8 x`` Tesseract's failures,
no most-likely-error decoder reaches 0.8x Tesseract's failures on these shots; only a decoder that weighs whole
logical classes (degeneracy) can.

    python benchmarks/mle_floor.py --problems color-xyz-d5 superdense-d5 color-xyz-d7 --seeds 2026 1 \
        --shots 20000 --json benchmarks/results/mle_floor.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
from _common import write_result  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from frontier import PROBLEMS  # noqa: E402
from native_vs_tesseract import PRESET  # noqa: E402

from qdecode.decoders.registry import DecoderSpec, split_label  # noqa: E402
from qdecode.problem import DecodingProblem, decoding_dem  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", nargs="+", default=["color-xyz-d5"], choices=sorted(PROBLEMS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[2026, 1])
    ap.add_argument("--shots", type=int, default=20000)
    ap.add_argument("--native", default=None, help="a qdecode label whose failing shots mle also decodes")
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    import tesseract_decoder

    rows = []
    print("| problem | seed | Tesseract failures | native failures | union | mle fails on the union | ties | "
          "mle / Tesseract (at least) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.problems:
        circuit = PROBLEMS[name][0]()
        dem = decoding_dem(circuit)
        problem = DecodingProblem.from_dem(dem)
        k = dem.num_observables
        tess = tesseract_decoder.make_tesseract_sinter_decoders_dict()[PRESET].compile_decoder_for_dem(dem=dem)
        mle = DecoderSpec.create("mle", {}).build(problem)
        native = DecoderSpec.create(*split_label(args.native)).build(problem) if args.native else None
        for seed in args.seeds:
            dets, obs = circuit.compile_detector_sampler(seed=seed).sample(args.shots, separate_observables=True)
            dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
            packed = np.packbits(dets, axis=1, bitorder="little")
            t_pred = np.unpackbits(tess.decode_shots_bit_packed(bit_packed_detection_event_data=packed), axis=1,
                                   count=k, bitorder="little")
            t_fail = np.any(t_pred != obs, axis=1)
            n_fail = np.zeros_like(t_fail)
            if native is not None:
                n_fail = np.any(native.predict_observables_batch(dets) != obs, axis=1)
            union = np.flatnonzero(t_fail | n_fail)
            pred, gap = mle.predict_with_confidence(dets[union])
            assert not np.any(mle.last_info.extra["time_limit_hit"]), "an mle solve stopped at its time limit"
            m_fail = np.any(pred != obs[union], axis=1)
            ties = int(np.sum(m_fail & (gap == 0)))  # mle's lightest error of another class weighs the same
            row = {"problem": name, "seed": seed, "shots": args.shots, "tesseract": PRESET,
                   "tesseract_failures": int(t_fail.sum()), "native": args.native,
                   "native_failures": int(n_fail.sum()) if native is not None else None, "union": int(union.size),
                   "mle_fails_on_union": int(m_fail.sum()), "ties": ties}
            rows.append(row)
            ratio = row["mle_fails_on_union"] / max(1, row["tesseract_failures"])
            print(f"| {name} | {seed} | {row['tesseract_failures']} | {row['native_failures']} | {row['union']} | "
                  f"{row['mle_fails_on_union']} | {ties} | {ratio:.2f} |", flush=True)
    write_result(args.json, {"shots": args.shots, "rows": rows})


if __name__ == "__main__":
    main()
