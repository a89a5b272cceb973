"""Herald-aware decoders against the herald-blind PyMatching, same shots, one thread.

The circuit: stim's rotated surface code (Z memory, rounds = d) with p = ``--p`` on all four knobs
(``after_clifford_depolarization``, ``before_round_data_depolarization``, ``before_measure_flip_probability``,
``after_reset_flip_probability``), plus ``HERALDED_ERASE(--erase)`` on both qubits after every CX, each herald
read by its own ``DETECTOR[herald]``. Built with the library's erasure conversion
(:func:`qdecode.sims.heralded_noise.erasure_convert`): every ``DEPOLARIZE2(p)`` is first raised to
``p + 2 erase`` and then converted with ``F = 2 erase / (p + 2 erase)``, which gives back ``DEPOLARIZE2(p)`` and
``HERALDED_ERASE(erase)`` per qubit. The DEM: ``decompose_errors=True``, ``approximate_disjoint_errors=True``.

``--shots`` shots per distance, sampled once (seed ``--seed``), decoded by every decoder of :data:`DECODERS`;
``pymatching`` on the same circuit without the erasures is the floor. Printed: failures, LER per shot with
sinter's ``fit_binomial`` interval (likelihood ratio 1000), and microseconds per shot: thread CPU time of the
whole batch (warm-up outside), the median of ``--repeats`` runs (one run where a run takes over 20 s).

    NUMBA_NUM_THREADS=1 python benchmarks/heralds.py --d 5,7 --shots 20000 --json benchmarks/results/heralds.json
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import stim
from _common import write_result

from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.heralded_noise import erasure_convert
from qdecode.sims.stats import fit_binomial

#: (label, what the row means): the herald-aware decoders (default ``heralds=aware``), the same decoders with
#: the heralds as ordinary detectors (``heralds=checks``) and the herald-blind PyMatching (``heralds=ignore``).
DECODERS = (
    ("pymatching[heralds=ignore]", "herald-blind (heralds marginalised)"),
    ("uf[length_steps=8]", "herald-aware, per-shot edge lengths"),
    ("uf", "herald-aware, half edges"),
    ("bposd", "herald-aware, per-shot priors"),
    ("bposd[heralds=checks]", "heralds as checks"),
    ("relay-bp", "herald-aware, per-shot priors (scalar kernel)"),
    ("relay-bp[heralds=checks]", "heralds as checks"),
)


def surface_circuit(d: int, p: float, erase: float) -> stim.Circuit:
    """The circuit of the module docstring (``erase = 0``: stim's circuit as generated)."""
    base = stim.Circuit.generated("surface_code:rotated_memory_z", distance=d, rounds=d,
                                  after_clifford_depolarization=p, before_round_data_depolarization=p,
                                  before_measure_flip_probability=p, after_reset_flip_probability=p)
    if erase == 0:
        return base
    raised = stim.Circuit(str(base.flattened()).replace(f"DEPOLARIZE2({p!r})", f"DEPOLARIZE2({p + 2 * erase!r})"))
    return erasure_convert(raised, 2 * erase / (p + 2 * erase))


def measure(label: str, problem: DecodingProblem, dets: np.ndarray, obs: np.ndarray, repeats: int) -> dict:
    """Failures and thread-CPU microseconds per shot of one decoder on the shots."""
    dec = DecoderSpec.parse(label).build(problem)
    dec.predict_observables_batch(dets[:64])  # compile and warm up outside the timing
    times = []
    pred = None
    while len(times) < repeats:
        t = time.thread_time()
        out = dec.predict_observables_batch(dets)
        times.append(time.thread_time() - t)
        pred = out if pred is None else pred
        if times[-1] > 20:
            break
    k = int(np.any(pred != obs, axis=1).sum())
    fit = fit_binomial(num_shots=len(dets), num_hits=k, max_likelihood_factor=1e3)
    return {"decoder": label, "uses": getattr(dec, "uses", "plain"), "shots": len(dets), "failures": k,
            "ler": fit.best, "ler_low": fit.low, "ler_high": fit.high,
            "us_per_shot": 1e6 * float(np.median(times)) / len(dets), "timing_runs": len(times)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", default="5,7")
    ap.add_argument("--p", type=float, default=0.001)
    ap.add_argument("--erase", type=float, default=0.01)
    ap.add_argument("--shots", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    rows = []
    print("| d | decoder | uses | failures | LER per shot [interval] | us / shot |")
    print("|---|---|---|---|---|---|")
    for d in (int(x) for x in args.d.split(",")):
        cases = [(label, surface_circuit(d, args.p, args.erase)) for label, _ in DECODERS]
        cases.append(("pymatching", surface_circuit(d, args.p, 0.0)))  # the floor: no erasures at all
        sampled = {}
        for label, circ in cases:
            key = id(circ) if label == "pymatching" else "heralded"
            if key not in sampled:
                dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
                sampled[key] = (DecodingProblem.from_dem(decoding_dem(circ)), dets.astype(np.uint8), obs)
            row = {"d": d, **measure(label, *sampled[key], args.repeats)}
            row["circuit"] = "no erasures" if label == "pymatching" else "heralded"
            rows.append(row)
            print(f"| {d} | {label} | {row['uses']} | {row['failures']} | {row['ler']:.2e} [{row['ler_low']:.2e}, "
                  f"{row['ler_high']:.2e}] | {row['us_per_shot']:.1f} |", flush=True)
    write_result(args.json, {"p": args.p, "erase": args.erase, "seed": args.seed,
                             "rows": rows})


if __name__ == "__main__":
    main()
