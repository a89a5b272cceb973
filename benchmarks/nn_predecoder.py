"""nn-pymatching vs plain PyMatching on the same SD6 shots (commit / reweight / both).

For each (d, p): sample stim shots of ``qdecode circuit surface --noise sd6`` (rounds = d,
both detector bases) in chunks, run the network once per chunk (``column_logits``), then
decode every chunk with plain PyMatching and with nn-pymatching in each mode and tau from
the same logits. Stops when every decoder has ``--errors`` logical errors or at
``--max-shots``. Prints (and with ``--json`` writes) shots, errors, LER with its
likelihood-ratio band (``qdecode.sims.stats.fit_binomial``, Bayes factor ``--factor``), a
95% Wilson interval, the paired comparison with PyMatching on the same shots (shots only
pymatching gets right / only the other decoder gets right, and the z of the McNemar test;
z > 0 = worse than PyMatching), and the defect reduction ``sum |s| / sum |s'|``.

    .venv/bin/python benchmarks/nn_predecoder.py --d 5 --p 0.003,0.005 --model d5 --errors 200
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    ph = k / n
    den = 1 + z * z / n
    c = (ph + z * z / (2 * n)) / den
    h = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return max(0.0, c - h), min(1.0, c + h)


def run_point(d: int, p: float, model: str, taus: list[float], modes: list[str], errors: int, max_shots: int,
              chunk: int, seed: int, threads: int, factor: float, any_distance: bool, rules: list[str],
              both_taus: list[float] | None) -> dict:
    from qdecode.decoders.nn_pymatching import NnPymatchingDecoder
    from qdecode.problem import DecodingProblem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    circ = build_circuit("surface", d=d, rounds=d, noise="sd6", p=p)
    problem = DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))
    dec = NnPymatchingDecoder(problem, model=model, threads=threads, any_distance=any_distance)
    sampler = circ.compile_detector_sampler(seed=seed)
    configs: dict[str, tuple] = {"pymatching": None}
    for mode in modes:
        if mode == "reweight":
            configs[mode] = (mode, 0.5, "threshold")
            continue
        for rule in rules:
            for t in (both_taus if mode == "both" and both_taus else taus):
                tag = "" if rule == "threshold" else ",consistent"
                configs[f"{mode}[tau={t}{tag}]"] = (mode, t, rule)
    names = list(configs)
    fails = {n: 0 for n in names}
    only_pm = {n: 0 for n in names}
    only_nn = {n: 0 for n in names}
    defects_after = {n: 0 for n in names}
    committed = {n: 0 for n in names}
    defects_before = 0
    shots = 0
    t_net = t_match = 0.0
    t0 = time.perf_counter()
    while shots < max_shots:
        n = min(chunk, max_shots - shots)
        dets, obs = sampler.sample(n, separate_observables=True)
        dets = dets.astype(np.uint8)
        obs = obs.astype(np.uint8)
        ta = time.perf_counter()
        z = dec.column_logits(dets)
        tb = time.perf_counter()
        t_net += tb - ta
        pm_wrong = np.any(dec.matcher.match(dets) != obs, axis=1)
        fails["pymatching"] += int(pm_wrong.sum())
        defects_before += int(dets.sum())
        defects_after["pymatching"] += int(dets.sum())
        for name in names[1:]:
            mode, tau, rule = configs[name]
            pred = dec.predict_from_logits(dets, z, mode=mode, tau=tau, rule=rule)
            wrong = np.any(pred != obs, axis=1)
            fails[name] += int(wrong.sum())
            only_pm[name] += int((wrong & ~pm_wrong).sum())
            only_nn[name] += int((~wrong & pm_wrong).sum())
            defects_after[name] += int(dec.last_info.extra["defects_after"].sum())
            committed[name] += int(dec.last_info.extra["committed"].sum())
        t_match += time.perf_counter() - tb
        shots += n
        print(f"  d={d} p={p} shots={shots} " + " ".join(f"{k}:{v}" for k, v in fails.items()),
              file=sys.stderr, flush=True)
        if min(fails.values()) >= errors:
            break
    rows = []
    for name in names:
        k = fails[name]
        fit = fit_binomial(num_shots=shots, num_hits=k, max_likelihood_factor=factor)
        w = wilson(k, shots)
        b, c = only_pm[name], only_nn[name]
        zstat = (b - c) / math.sqrt(b + c) if b + c else 0.0
        rows.append({
            "decoder": name, "shots": shots, "errors": k, "ler": k / shots,
            "ler_low": fit.low, "ler_high": fit.high, "wilson95": list(w),
            "paired_worse": b, "paired_better": c, "paired_z": zstat,
            "defect_reduction": defects_before / max(1, defects_after[name]),
            "committed_per_shot": committed[name] / shots,
        })
    return {"d": d, "p": p, "model": model, "shots": shots, "seconds": time.perf_counter() - t0,
            "net_us_per_shot": 1e6 * t_net / shots, "decode_s": t_match, "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--p", default="0.003,0.005")
    ap.add_argument("--model", default="d5", help="shipped name or .onnx path")
    ap.add_argument("--taus", default="0.8,0.9,0.95")
    ap.add_argument("--modes", default="commit,reweight,both")
    ap.add_argument("--both-taus", default=None, help="taus for mode both (default: --taus)")
    ap.add_argument("--rules", default="threshold", help="commit rules: threshold,consistent")
    ap.add_argument("--errors", type=int, default=200)
    ap.add_argument("--max-shots", type=int, default=400_000)
    ap.add_argument("--chunk", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--factor", type=float, default=1e3, help="likelihood-ratio band factor (sinter default 1e3)")
    ap.add_argument("--any-distance", action="store_true")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    taus = [float(t) for t in args.taus.split(",")]
    modes = args.modes.split(",")
    results = []
    for i, p in enumerate(float(x) for x in args.p.split(",")):
        res = run_point(args.d, p, args.model, taus, modes, args.errors, args.max_shots, args.chunk,
                        args.seed + i, args.threads, args.factor, args.any_distance, args.rules.split(","),
                        [float(t) for t in args.both_taus.split(",")] if args.both_taus else None)
        results.append(res)
        print(f"\nd={res['d']} p={res['p']} model={res['model']} shots={res['shots']} "
              f"({res['seconds']:.0f} s, network {res['net_us_per_shot']:.0f} us/shot)")
        print(f"{'decoder':<28} {'errors':>6} {'LER':>10} {'band (1e3)':>23} {'wilson95':>23} "
              f"{'worse/better':>12} {'z':>6} {'defect red.':>11}")
        for r in res["rows"]:
            print(f"{r['decoder']:<28} {r['errors']:>6} {r['ler']:>10.3e} [{r['ler_low']:.3e},{r['ler_high']:.3e}] "
                  f"[{r['wilson95'][0]:.3e},{r['wilson95'][1]:.3e}] {r['paired_worse']:>5}/{r['paired_better']:<6} "
                  f"{r['paired_z']:>6.2f} {r['defect_reduction']:>10.2f}x")
        sys.stdout.flush()
        if args.json:  # after every point, so a long run can be stopped early
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"argv": sys.argv, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
