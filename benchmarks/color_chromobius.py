"""Colour codes with Chromobius: sinter parity, the published superdense circuit, other decoders.

Three tables, on the superdense circuits of ``qdecode.sims.color_circuit`` (``bb-uniform``:
uniform depolarizing with idles, the "uniform" model of Gidney & Jones, arXiv:2312.08813):

1. **sinter parity.** For each ``--p``: ``qdecode sweep --code color --d 5 --decoder chromobius``
   (our harness, our registry decoder) and ``sinter.collect`` with Chromobius' own sinter decoder
   on the same circuit, each to ``--max-errors`` errors; both logical error rates with sinter's
   ``fit_binomial`` interval (likelihood ratio 1000) and whether the intervals overlap.
2. **Published circuit.** Gidney & Jones' superdense d = 5, 20-round, p = 0.001 memory-X circuit
   as shipped with Chromobius (``tests/data/chromobius/superdense_color_code_d5_r20_p1000.stim``)
   against ours with the same parameters: same sampler seed, same shots, Chromobius on both.
3. **Other decoders** on our d = 5 circuit (rounds = 5, memory Z, ``--p`` values, ``--shots`` shots
   sampled once): chromobius, bposd (OSD-CS10), relay-bp, with failures, intervals and
   microseconds per shot (thread CPU time, warm-up outside).
4. **Distance from optimal.** d = 3 (rounds 3, memory Z), ``--mle-shots`` shots sampled once per
   ``--mle-p``: chromobius, bposd, relay-bp and ``mle`` (exact most likely error by integer
   programming) on the same shots.

    NUMBA_NUM_THREADS=1 python benchmarks/color_chromobius.py --p 0.001,0.002 --max-errors 300 --shots 20000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import stim

from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem
from qdecode.sims.circuits import build_circuit
from qdecode.sims.stats import fit_binomial
from qdecode.sims.store import read_rows

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _fmt(shots: int, errors: int) -> tuple[str, float, float]:
    fit = fit_binomial(num_shots=shots, num_hits=errors, max_likelihood_factor=1e3)
    return f"{errors / shots:.3e} [{fit.low:.2e}, {fit.high:.2e}]", fit.low, fit.high


def sinter_parity(ps: list[float], max_errors: int, seed: int) -> None:
    import chromobius
    import sinter

    print("| p | harness | shots | errors | LER per shot [interval] | overlap |")
    print("|---|---|---|---|---|---|")
    for p in ps:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "stats.csv"
            subprocess.run([str(BIN / "qdecode"), "sweep", "--code", "color", "--d", "5", "--noise", "bb-uniform",
                            "--p", str(p), "--decoder", "chromobius", "--max-errors", str(max_errors),
                            "--max-shots", "10000000", "--seed", str(seed), "--workers", "1", "--quiet",
                            "--out", str(out)], check=True)
            rows = read_rows(out)
            ours = (sum(r.shots for r in rows), sum(r.errors for r in rows))
        task = sinter.Task(circuit=build_circuit("color", d=5, noise="bb-uniform", p=p), json_metadata={"p": p})
        stats = sinter.collect(num_workers=1, tasks=[task], decoders=["chromobius"],
                               custom_decoders=chromobius.sinter_decoders(), max_errors=max_errors,
                               max_shots=10_000_000)
        theirs = (sum(s.shots for s in stats), sum(s.errors for s in stats))
        (a, alo, ahi), (b, blo, bhi) = _fmt(*ours), _fmt(*theirs)
        ok = "yes" if alo <= bhi and blo <= ahi else "NO"
        print(f"| {p} | qdecode sweep | {ours[0]} | {ours[1]} | {a} | {ok} |")
        print(f"| {p} | sinter collect | {theirs[0]} | {theirs[1]} | {b} | |")


def published_circuit(shots: int, seed: int) -> None:
    import chromobius

    from qdecode.sims.color_circuit import superdense_memory_circuit

    theirs = stim.Circuit.from_file(ROOT / "tests/data/chromobius/superdense_color_code_d5_r20_p1000.stim")
    ours = superdense_memory_circuit(5, rounds=20, basis="X", noise="bb-uniform", p=0.001)
    print("| circuit | qubits | CX layers per round | shots | failures | LER per shot [interval] |")
    print("|---|---|---|---|---|---|")
    for name, c in (("Gidney & Jones superdense (Chromobius test data)", theirs), ("qdecode superdense", ours)):
        dec = chromobius.compile_decoder_for_dem(c.detector_error_model())
        dets, obs = c.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True, bit_packed=True)
        k = int((dec.predict_obs_flips_from_dets_bit_packed(dets)[:, 0] != obs[:, 0]).sum())
        layers = sum(1 for inst in c.flattened() if inst.name == "CX") // 20
        print(f"| {name} | {c.num_qubits} | {layers} | {shots} | {k} | {_fmt(shots, k)[0]} |")


def decoder_table(d: int, ps: list[float], shots: int, seed: int, names: tuple[str, ...]) -> None:
    """Failures of ``names`` on the same ``shots`` shots of the d-distance circuit (rounds = d) per ``p``;
    time per shot in thread CPU microseconds, warm-up outside."""
    print("| p | decoder | failures | LER per shot [interval] | us / shot |")
    print("|---|---|---|---|---|")
    for p in ps:
        circ = build_circuit("color", d=d, noise="bb-uniform", p=p)
        problem = DecodingProblem.from_dem(circ.detector_error_model())
        dets, obs = circ.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
        dets = dets.astype(np.uint8)
        for name in names:
            dec = DecoderSpec.create(name, {}).build(problem)
            dec.predict_observables_batch(dets[:64])
            t = time.thread_time()
            pred = dec.predict_observables_batch(dets)
            secs = time.thread_time() - t
            k = int(np.any(pred != obs, axis=1).sum())
            print(f"| {p} | {name} | {k} | {_fmt(shots, k)[0]} | {1e6 * secs / shots:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p", default="0.001,0.002")
    ap.add_argument("--max-errors", type=int, default=300)
    ap.add_argument("--shots", type=int, default=20_000)
    ap.add_argument("--published-shots", type=int, default=40_000)
    ap.add_argument("--mle-p", default="0.002,0.004")
    ap.add_argument("--mle-shots", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--skip", default="", help="comma-separated tables to skip: parity,published,decoders,mle")
    args = ap.parse_args()
    ps = [float(x) for x in args.p.split(",")]
    skip = set(filter(None, args.skip.split(",")))
    if "parity" not in skip:
        sinter_parity(ps, args.max_errors, args.seed)
        print()
    if "published" not in skip:
        published_circuit(args.published_shots, args.seed)
        print()
    if "decoders" not in skip:
        decoder_table(5, ps, args.shots, args.seed, ("chromobius", "bposd", "relay-bp"))
        print()
    if "mle" not in skip:
        decoder_table(3, [float(x) for x in args.mle_p.split(",")], args.mle_shots, args.seed,
                      ("chromobius", "bposd", "relay-bp", "mle"))


if __name__ == "__main__":
    main()
