"""Noise learning (``qdecode.sims.noise_learning``): PyMatching with learned vs true vs reference DEMs.

For each (d, p): the rotated surface-code memory-Z circuit, ``build_circuit("surface", d=d,
rounds=d, noise="sd6", p=p)``. ``--learn-shots`` shots (default 10^6, one seed) give the
detection-event moments; nothing else about the true noise is used. Two reference DEMs:

* ``ref``: the same family at ``p_ref = --reference-p`` (default 0.001): right ratios, wrong scale;
* mis-specified references (``MISSPECIFIED``): stim's generated circuit with other ratios of
  (after-Clifford depolarization, data depolarization, measurement flips, reset flips); sd6 has all
  four equal to p. ``mis`` (1e-3, 3e-4, 3e-3, 5e-4) is mildly off; ``meas-heavy``
  (1e-4, 1e-4, 1e-2, 1e-4), ``gate-heavy`` (1e-2, 1e-4, 1e-4, 1e-4) and ``data-only``
  (1e-5, 1e-2, 1e-5, 1e-5) are badly off. All have the same DEM structure as sd6.

Learned DEMs: each reference rescaled class by class with ``mixed="fit"`` and ``mixed="geomean"``
(see the module docstring; correlated matching too for the references in ``CORRELATED_FOR``),
and the *naive* pitfall variant: the per-sector ``p_ij`` / ``p_iB``
written directly as the weights of the ``ref`` matching graph's edges (each edge keeps its
observables).

Evaluation: fresh shots (another seed), sampled in chunks of 50k until the true-DEM PyMatching has
``--min-errors`` errors or ``--max-eval-shots`` shots; every decoder sees the SAME shots. Reported:
LER per shot with ``fit_binomial`` intervals (likelihood factor 1e3, sinter's convention) and the
paired ratio LER(variant) / LER(true DEM) with a 95% interval from the shots where exactly one of
the two fails (ratio = 1 + (n_only_variant - n_only_true) / errors_true, normal approximation).
Class error: median relative error of the DEM's XOR-combined class probabilities against the true
DEM's (all sectors). Acceptance: learned-DEM PyMatching within 5% of true-DEM
PyMatching, or intervals overlapping.

Usage: python benchmarks/noise_learning.py [--d 5 7] [--p 0.003 0.005] [--learn-shots 1000000]
       [--reference-p 0.001] [--min-errors 500] [--max-eval-shots 600000] [--seed 2026]
       [--no-correlated] [--json out/noise_learning.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import stim

from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims import noise_learning as nl
from qdecode.sims.circuits import build_circuit
from qdecode.sims.stats import fit_binomial

CHUNK = 50_000


#: mis-specified references: stim's generated memory-Z circuit with these (gate, data, measure, reset)
#: error rates (sd6 has all four equal to p); the same DEM structure, other ratios
MISSPECIFIED = {
    "mis": (1e-3, 3e-4, 3e-3, 5e-4),
    "meas-heavy": (1e-4, 1e-4, 1e-2, 1e-4),
    "gate-heavy": (1e-2, 1e-4, 1e-4, 1e-4),
    "data-only": (1e-5, 1e-2, 1e-5, 1e-5),
}
#: references whose learned DEMs are also decoded with correlated matching
CORRELATED_FOR = ("ref", "data-only")


def misspecified_reference(d: int, rates: tuple[float, float, float, float]) -> stim.DetectorErrorModel:
    gate, data, meas, reset = rates
    c = stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=d, rounds=d,
        after_clifford_depolarization=gate, before_round_data_depolarization=data,
        before_measure_flip_probability=meas, after_reset_flip_probability=reset,
    )
    return decoding_dem(c)


def learn(reference, sectors, packed_batches, mixed_policies):
    """Moments once per reference, then one rescale per policy; also returns the estimates."""
    classes = nl.NoiseClasses.from_dem(reference, sectors)
    acc = nl.MomentAccumulator(classes.num_detectors, classes.pairs)
    for b in packed_batches:
        acc.add(b, bit_packed=True)
    est = nl.estimate_classes(classes, acc)
    out = {}
    for mixed in mixed_policies:
        res = nl.rescale(classes, est.p_hat, mixed=mixed)
        out[mixed] = (nl.build_dem(classes, res.probs), res)
    return classes, est, out


class _Naive:
    """PyMatching on the reference graph with each edge's probability replaced by p_ij / p_iB."""

    def __init__(self, reference, classes: nl.NoiseClasses, est: nl.ClassEstimate, sector_of: np.ndarray):
        import pymatching

        ref = pymatching.Matching.from_detector_error_model(reference)
        index = {}
        for c in range(classes.num_classes):
            a, b = classes.class_dets[c]
            index[(int(classes.class_sector[c]), int(a), int(b))] = c
        m = pymatching.Matching()
        self.replaced = self.kept = 0
        for u, v, data in ref.edges():
            p = data["error_probability"]
            if v is None:
                c = index.get((int(sector_of[u]), int(u), -1))
            else:
                a, b = sorted((u, v))
                c = index.get((int(sector_of[a]), int(a), int(b))) if sector_of[a] == sector_of[b] else None
            if c is not None:
                p = float(est.p_hat[c])
                self.replaced += 1
            else:
                self.kept += 1
            w = math.log((1 - p) / p)
            if v is None:
                m.add_boundary_edge(u, fault_ids=data["fault_ids"], weight=w, error_probability=p)
            else:
                m.add_edge(u, v, fault_ids=data["fault_ids"], weight=w, error_probability=p)
        m.ensure_num_fault_ids(reference.num_observables)
        assert m.num_detectors == reference.num_detectors, "a detector without any edge"
        self.matching = m
        self.num_obs = reference.num_observables

    def predict_observables_packed(self, dets):
        out = self.matching.decode_batch(dets, bit_packed_shots=True, bit_packed_predictions=True)
        return np.asarray(out, dtype=np.uint8).reshape(dets.shape[0], (self.num_obs + 7) // 8)


def class_error(classes: nl.NoiseClasses, dem, truth_totals) -> float:
    got, _ = classes.totals_of(dem)
    return float(np.median(np.abs(got / truth_totals - 1)))


def run_point(d: int, p: float, args) -> dict:
    t0 = time.time()
    truth = build_circuit("surface", d=d, rounds=d, noise="sd6", p=p)
    true_dem = decoding_dem(truth)
    references = {
        "ref": decoding_dem(build_circuit("surface", d=d, rounds=d, noise="sd6", p=args.reference_p)),
        **{tag: misspecified_reference(d, rates) for tag, rates in MISSPECIFIED.items()},
    }
    # learning shots: kept bit-packed in memory (60 MB at d=7) so every reference reuses them
    sampler = truth.compile_detector_sampler(seed=args.seed * 1000 + d * 10 + int(p * 1e4))
    learn_batches = [sampler.sample(min(CHUNK, args.learn_shots - s), bit_packed=True)
                     for s in range(0, args.learn_shots, CHUNK)]
    t_sample = time.time() - t0
    sector_of = np.full(truth.num_detectors, -1)
    for k, s in enumerate(nl.sectors_from_circuit(truth)):
        sector_of[s] = k
    dems: dict[str, tuple[str, object]] = {"true DEM": ("pymatching", true_dem)}
    info: dict[str, dict] = {}
    t1 = time.time()
    classes0 = None
    for tag, ref in references.items():
        classes, est, learned = learn(ref, truth, learn_batches, ("fit", "geomean"))
        if classes0 is None:
            classes0, truth_totals = classes, classes.totals_of(true_dem)[0]
        dems[f"{tag} DEM"] = ("pymatching", ref)
        for mixed, (dem, res) in learned.items():
            dems[f"learned[{mixed}] from {tag}"] = ("pymatching", dem)
            info[f"learned[{mixed}] from {tag}"] = {"fit_iterations": res.iterations,
                                                     "max_class_residual": res.max_class_residual}
        if tag == "ref":
            naive = _Naive(ref, classes, est, sector_of)
            dems["naive edges from ref"] = ("naive", naive)
            info["naive edges from ref"] = {"edges_replaced": naive.replaced, "edges_kept": naive.kept}
            info["estimator"] = {"clipped": int(np.count_nonzero(est.status)), "classes": classes.num_classes,
                                 "heavy_instructions": int(classes.heavy.sum())}
        if not args.no_correlated and tag in CORRELATED_FOR:
            dems[f"corr: learned[fit] from {tag}"] = ("pymatching-correlated", learned["fit"][0])
            dems[f"corr: learned[geomean] from {tag}"] = ("pymatching-correlated", learned["geomean"][0])
    if not args.no_correlated:
        dems = {"corr: true DEM": ("pymatching-correlated", true_dem), **dems}
    t_learn = time.time() - t1
    decoders = {}
    for name, (kind, dem) in dems.items():
        decoders[name] = dem if kind == "naive" else DecoderSpec.create(kind).build(DecodingProblem.from_dem(dem))
    del learn_batches
    # evaluation on fresh, shared shots
    eval_sampler = truth.compile_detector_sampler(seed=args.seed * 1000 + d * 10 + int(p * 1e4) + 1)
    fails = {name: [] for name in decoders}
    seconds = dict.fromkeys(decoders, 0.0)
    shots = 0
    t2 = time.time()
    while shots < args.max_eval_shots:
        n = min(CHUNK, args.max_eval_shots - shots)
        dets, obs = eval_sampler.sample(n, separate_observables=True, bit_packed=True)
        for name, dec in decoders.items():
            t = time.time()
            pred = dec.predict_observables_packed(dets)
            seconds[name] += time.time() - t
            fails[name].append(np.any(pred != obs, axis=1))
        shots += n
        if int(sum(f.sum() for f in fails["true DEM"])) >= args.min_errors:
            break
    t_eval = time.time() - t2
    fails = {k: np.concatenate(v) for k, v in fails.items()}
    rows = []
    for name, f in fails.items():
        base = fails["corr: true DEM"] if name.startswith("corr:") else fails["true DEM"]
        e, eb = int(f.sum()), int(base.sum())
        only_v, only_t = int(np.count_nonzero(f & ~base)), int(np.count_nonzero(base & ~f))
        ratio = e / eb if eb else float("nan")
        half = 1.96 * math.sqrt(only_v + only_t) / eb if eb else float("nan")
        fit = fit_binomial(num_shots=shots, num_hits=e, max_likelihood_factor=1e3)
        kind, dem = dems[name]
        cerr = class_error(classes0, dem, truth_totals) if kind != "naive" else float("nan")
        rows.append({"decoder": name, "errors": e, "ler": fit.best, "low": fit.low, "high": fit.high,
                     "ratio": ratio, "ratio_low": ratio - half, "ratio_high": ratio + half,
                     "only_variant": only_v, "only_base": only_t, "class_err": cerr,
                     "us_per_shot": seconds[name] / shots * 1e6, **info.get(name, {})})
    return {"d": d, "p": p, "learn_shots": args.learn_shots, "eval_shots": shots, "rows": rows,
            "estimator": info["estimator"],
            "seconds": {"sample_learn": t_sample, "learn": t_learn, "eval": t_eval}}


def print_point(pt: dict) -> None:
    print(f"\n### d={pt['d']}, p={pt['p']}: learned from {pt['learn_shots']:,} shots, evaluated on "
          f"{pt['eval_shots']:,} shared shots (estimator: {pt['estimator']})")
    print(f"timing: sample {pt['seconds']['sample_learn']:.1f}s, learn {pt['seconds']['learn']:.1f}s, "
          f"eval {pt['seconds']['eval']:.1f}s")
    print("\n| decoder (DEM) | errors | LER | interval | / true (95%) | class err | us/shot |")
    print("|---|---|---|---|---|---|---|")
    for r in pt["rows"]:
        ce = "" if math.isnan(r["class_err"]) else f"{r['class_err']:.1%}"
        print(f"| {r['decoder']} | {r['errors']} | {r['ler']:.3e} | [{r['low']:.3e}, {r['high']:.3e}] | "
              f"{r['ratio']:.3f} [{r['ratio_low']:.3f}, {r['ratio_high']:.3f}] | {ce} | {r['us_per_shot']:.1f} |",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, nargs="+", default=[5, 7])
    ap.add_argument("--p", type=float, nargs="+", default=[0.003, 0.005])
    ap.add_argument("--learn-shots", type=int, default=1_000_000)
    ap.add_argument("--reference-p", type=float, default=0.001)
    ap.add_argument("--min-errors", type=int, default=500)
    ap.add_argument("--max-eval-shots", type=int, default=600_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-correlated", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    points = []
    for d in args.d:
        for p in args.p:
            pt = run_point(d, p, args)
            print_point(pt)
            points.append(pt)
            if args.json:
                with open(args.json, "w") as fh:
                    json.dump(points, fh, indent=1)


if __name__ == "__main__":
    main()
