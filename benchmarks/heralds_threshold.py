"""Surface-code thresholds against the erasure fraction: herald-aware union-find against herald-blind PyMatching.

The sweep (stim's rotated surface code through the catalogue, Z memory, rounds = d, ``sd6`` noise at p:
``DEPOLARIZE2(p)`` after every CX, ``DEPOLARIZE1(p)`` after every single-qubit gate and on the data before each
round, measurement and reset flips p; then erasure conversion of the two-qubit gates with fraction F,
``DEPOLARIZE2((1 - F) p)`` and ``HERALDED_ERASE(F p / 2)`` on each qubit, :mod:`qdecode.sims.heralded_noise`)::

    qdecode sweep --code surface --d 3,5,7 --p 0.004,0.005,0.006,0.007,0.008,0.01,0.012,0.014,0.017,0.02 \
        --noise sd6 --erasure-fraction 0,0.5,0.9,0.98 --decoder 'uf[length_steps=8]' \
        --decoder 'pymatching[heralds=ignore]' --max-errors 300 --max-shots 50000 --seed 2026 \
        --out benchmarks/results/heralds_threshold.csv

This script reads that file, fits the finite-size-scaling threshold of each (decoder, F) with its 95 %
bootstrap interval (:func:`qdecode.sims.threshold.fss_threshold`, per-shot rates), writes them to
``--json`` and draws ``--figure``: the threshold against F, one line per decoder.

    python benchmarks/heralds_threshold.py --json benchmarks/results/heralds_threshold.json \
        --figure benchmarks/figures/heralds_threshold.png
"""

from __future__ import annotations

import argparse
import math
import warnings

from _common import write_result

from qdecode.sims.store import read_rows
from qdecode.sims.threshold import estimate_thresholds


def thresholds(csv: str, seed: int = 0) -> list[dict]:
    """One dict per (decoder, F): the FSS threshold with its interval, nu and the fit's notes."""
    rows = read_rows(csv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = estimate_thresholds(rows, group_keys=("decoder", "F"), n_bootstrap=200, seed=seed)
    out = []
    for (decoder, f), est in fits.items():
        out.append({"decoder": decoder, "F": 0.0 if f is None else float(f), "p_th": est.p_th, "low": est.low,
                    "high": est.high, "nu": est.nu, "reduced_chi2": est.reduced_chi2,
                    "p_window": list(est.p_window) if est.p_window else None, "note": est.note})
    return sorted(out, key=lambda r: (r["decoder"], r["F"]))


def figure(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    names = {"uf[growth=weighted,length_steps=8]": "uf[length_steps=8], herald-aware",
             "pymatching[heralds=ignore]": "PyMatching, herald-blind"}
    for decoder in dict.fromkeys(r["decoder"] for r in rows):
        pts = [r for r in rows if r["decoder"] == decoder and math.isfinite(r["p_th"])]
        f = [r["F"] for r in pts]
        y = [100 * r["p_th"] for r in pts]
        err = [[100 * (r["p_th"] - r["low"]) for r in pts], [100 * (r["high"] - r["p_th"]) for r in pts]]
        ax.errorbar(f, y, yerr=err, marker="o", capsize=3, label=names.get(decoder, decoder))
    ax.set_xlabel("erasure fraction F of two-qubit-gate errors")
    ax.set_ylabel("threshold p (%)")
    ax.set_title("Rotated surface code, sd6 noise, d = 3, 5, 7 (95 % intervals)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", default="benchmarks/results/heralds_threshold.csv")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--figure", metavar="PNG")
    args = ap.parse_args()
    rows = thresholds(args.csv)
    for r in rows:
        print(f"{r['decoder']:40s} F={r['F']:<5g} p_th={100 * r['p_th']:.3f}% [{100 * r['low']:.3f}, "
              f"{100 * r['high']:.3f}] nu={r['nu']:.2f} chi2/dof={r['reduced_chi2']:.2f} {r['note'] or ''}")
    write_result(args.json, {"csv": args.csv, "rows": rows})
    if args.figure:
        figure(rows, args.figure)


if __name__ == "__main__":
    main()
