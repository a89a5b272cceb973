"""Post-selection on [[144,12,12]]: the logical error rate among kept shots against the abort rate, per confidence.

Problem: IBM's [[144,12,12]] memory circuit (``build_circuit("bb144_12_12", noise="bb-uniform",
rounds=12)``, Bravyi et al., Nature 627, 778 (2024)), memory Z, 12 rounds, at p = 0.001 and 0.003,
the problem of arXiv:2510.05795's bivariate-bicycle figures. One fixed sample of ``--shots`` shots
per p (seed ``--seed``) is decoded by each decoder with ``predict_with_confidence``
(:mod:`qdecode.decoders.confidence`), and each decoder's shots are ranked by their confidence
(``nan`` first). For an abort target ``a`` the shots below the highest confidence threshold that
discards at most ``a`` of them are aborted (ties are never split, so the abort rate reached is at or
below the target); the table gives the abort rate reached, kept shots, kept errors and the logical
error rate per 12-round shot among kept shots with sinter's binomial band (likelihood within 1000x
of the max), and the time per shot of the plain and the confident decoding (process time, one
thread, JIT warmed up outside the timed region).

The confidences:

* ``relay-bp``: the gap between its converged legs (``inf`` when every leg found one class);
* ``bplsd[max_iter=30,lsd_order=0,confidence=cluster]``: the cluster statistic of arXiv:2510.05795
  (their ``Q_LLR``, alpha = 2) with their decoder settings (min-sum, 30 iterations, LSD-0);
* ``bplsd``: the gap between the classes LSD's in-cluster OSD-CS finds (LSD on every shot);
  ``bplsd[confidence=cluster]`` the cluster statistic with the same decoder;
* ``bposd``: the OSD candidate gap (OSD on every shot).

    python benchmarks/confidence_bb144.py --p 0.003 --shots 20000
    python benchmarks/confidence_bb144.py --p 0.001 --shots 20000

Writes ``benchmarks/results/confidence_bb144_p<p>.npz`` (per decoder: float32 confidence and bool
failure per shot; a later run with other ``--decoders`` adds its arrays) and prints the table
(markdown) that benchmarks/README.md keeps. ``--figure`` instead turns every such file into
``benchmarks/results/confidence_bb144.csv`` (one sinter-format row per p and decoder, whose
``custom_counts`` are the gap histogram of :mod:`qdecode.sims.gap_bins`) and draws it with
``qdecode plot --y discard_vs_error`` (``confidence_bb144.png``, p = 0.003):

    python benchmarks/confidence_bb144.py --figure
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import re
import sys
import time

import numba
import numpy as np
from _common import kept_after_abort

from qdecode.cli.main import main as qdecode
from qdecode.decoders.registry import decoder
from qdecode.sims.circuits import build_circuit
from qdecode.sims.gap_bins import GAP_BINS_KEY, GAP_BINS_TAG, gap_bin_counts
from qdecode.sims.stats import fit_binomial
from qdecode.sims.store import CSV_HEADER, StatsRow

HERE = os.path.dirname(os.path.abspath(__file__))
DECODERS = ("relay-bp", "bplsd[max_iter=30,lsd_order=0,confidence=cluster]", "bplsd", "bposd")
TARGETS = (0.0, 0.01, 0.05, 0.10, 0.19, 0.30)
CHUNK = 500


def _timed(fn, dets: np.ndarray):
    out, t = [], 0.0
    for a in range(0, len(dets), CHUNK):
        t0 = time.process_time()
        out.append(fn(dets[a:a + CHUNK]))
        t += time.process_time() - t0
    return out, t / max(1, len(dets))


def run(p: float, shots: int, seed: int, specs: tuple[str, ...]) -> dict:
    circ = build_circuit("bb144_12_12", noise="bb-uniform", p=p, rounds=12)
    dem = circ.detector_error_model(decompose_errors=False)
    dets, obs = circ.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
    dets = dets.astype(np.uint8)
    results = {}
    for spec in specs:
        dec = decoder(spec, dem)
        dec.predict_with_confidence(dets[:8])  # JIT warm-up outside the timed region
        dec.predict_observables_batch(dets[:8])
        parts, t_conf = _timed(dec.predict_with_confidence, dets)
        _, t_plain = _timed(dec.predict_observables_batch, dets[:min(shots, 2000)])
        pred = np.concatenate([o for o, _ in parts])
        conf = np.concatenate([g for _, g in parts])
        fail = np.any(pred != obs, axis=1)
        results[spec] = {"conf": conf, "fail": fail, "t_conf": t_conf, "t_plain": t_plain}
        print(f"# p={p} {spec}: {fail.sum()} errors in {shots} shots; {t_plain * 1e3:.2f} ms plain, "
              f"{t_conf * 1e3:.2f} ms confident per shot", file=sys.stderr, flush=True)
    return results


def table(p: float, results: dict) -> list[str]:
    lines = [f"| decoder (p = {p}) | abort target | abort reached | kept | kept errors | LER per 12-round shot "
             "(band) | ms/shot plain / confident |", "|---|---|---|---|---|---|---|"]
    for spec, r in results.items():
        conf, fail = r["conf"], r["fail"]
        for target in TARGETS:
            kept = kept_after_abort(conf, target)
            n, e = int(kept.sum()), int(fail[kept].sum())
            f = fit_binomial(num_shots=n, num_hits=e)
            cost = f"{r['t_plain'] * 1e3:.2f} / {r['t_conf'] * 1e3:.2f}" if target == 0 else ""
            lines.append(f"| `{spec}` | {target:.0%} | {1 - n / len(conf):.2%} | {n} | {e} | "
                         f"{f.best:.2e} ({f.low:.1e}-{f.high:.1e}) | {cost} |")
    return lines


def figure() -> int:
    """The CSV of every ``confidence_bb144_p*.npz`` (one gap-histogram row per p and decoder), and its plot."""
    rows = []
    for path in sorted(glob.glob(os.path.join(HERE, "results", "confidence_bb144_p*.npz"))):
        p = float(re.search(r"_p([0-9.]+)\.npz$", path).group(1))
        data = np.load(path)
        for key in sorted(k for k in data.files if k.endswith("|conf")):
            spec = key[:-len("|conf")]
            conf, fail = data[key], data[f"{spec}|fail"]
            meta = {"code": "bb144_12_12", "noise": "bb-uniform", "p": p, "r": 12, GAP_BINS_KEY: GAP_BINS_TAG}
            sid = hashlib.sha256(f"confidence_bb144.py seed 2026 {p} {spec}".encode()).hexdigest()
            rows.append(StatsRow(strong_id=sid, decoder=spec, json_metadata=meta, shots=len(conf),
                                 errors=int(fail.sum()), custom_counts=gap_bin_counts(conf, fail)))
    csv = os.path.join(HERE, "results", "confidence_bb144.csv")
    with open(csv, "w") as f:  # regenerated whole from the samples: no row is ever recorded twice
        f.write(CSV_HEADER + "\n" + "".join(r.to_csv_line() + "\n" for r in rows))
    # p = 0.001: no decoder failed in the sample, so there is no curve to draw
    return qdecode(["plot", csv, "--y", "discard_vs_error", "--group", "decoder", "--filter", "p=0.003",
                    "--title", "[[144,12,12]], 12 rounds: post-selection on each decoder's confidence",
                    "--out", os.path.join(HERE, "figures", "confidence_bb144.png")])


def main() -> int:
    if "--figure" in sys.argv[1:]:
        return figure()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, required=True)
    ap.add_argument("--shots", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--decoders", default=";".join(DECODERS), help="semicolon-separated registry specs")
    args = ap.parse_args()
    numba.set_num_threads(1)  # one decoding thread: process time is time per shot
    specs = tuple(s for s in args.decoders.split(";") if s)
    t0 = time.perf_counter()
    results = run(args.p, args.shots, args.seed, specs)
    path = os.path.join(HERE, "results", f"confidence_bb144_p{args.p}.npz")
    kept = dict(np.load(path)) if os.path.exists(path) else {}  # other decoders' arrays from earlier runs stay
    kept.update({f"{k}|conf": v["conf"] for k, v in results.items()})
    kept.update({f"{k}|fail": v["fail"] for k, v in results.items()})
    np.savez_compressed(path, **kept)
    print(f"# [[144,12,12]] memory Z, 12 rounds, bb-uniform p = {args.p}, {args.shots} shots, seed {args.seed}; "
          f"{time.perf_counter() - t0:.0f} s wall")
    print("\n".join(table(args.p, results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
