"""Sliding-window GDG / BP+OSD / Relay-BP vs whole-history BP+OSD on the gross code, same shots; latency.

[[144,12,12]] memory-Z circuit (``bb144_12_12``, ``bb-uniform`` noise, Z detectors only, 12 rounds:
13 detector rounds with the final data readout). Decoders, all on exactly the same sampled shots:
whole-history ``bposd`` (min-sum ``--bp-iter`` iterations, alpha 1, OSD-CS order ``--osd-order``)
and ``window[inner=X]`` for each ``--inner`` X and each ``--windows`` (W,F) pair: ``bposd`` with the
same parameters, ``gdg`` with the GDG authors' settings for that window (arXiv:2403.18901 and
the notebook ``Sliding Window GDG.ipynb`` of github.com/gongaa/SlidingWindowDecoder: (3,1)
defaults, pre-BP 8; larger windows max_step 40, tree depth 4, side depth 20, side step 20;
``low_error_mode`` when p <= 0.002), ``relay-bp`` with IBM's gross-code tuning.

A shot fails when the predicted observables are wrong or the final residual syndrome
``s + H e`` is nonzero ("flagged", GDG's accounting; BP+OSD always satisfies its syndrome, so
flagged shots should not occur). Per-round LER = ``1 - (1 - P_shot)^(1/rounds)``, intervals from
``fit_binomial`` (likelihood factor 1e3, sinter's convention) mapped through the same formula.

Latency: ``--latency-shots`` shots are streamed one at a time (``WindowDecoder.stream()``, one
round per ``push_round``, S = 1, one thread); each window step (inner decode + commit) is timed.
Reported: p50 / p99 / max over all (shot, window) steps, and over the steps that ran the inner
decoder (nonzero window syndrome).

Usage: python benchmarks/window_ler.py --p 0.003 0.004 --shots 3000 [--seed 7] [--threads 1]
       [--windows 5,2 3,1] [--inner bposd gdg relay-bp] [--no-whole] [--bp-iter 80] [--osd-order 10]
       [--latency-shots 300] [--gdg-max-iters 0 300] [--gdg-osd osd_cs] [--gdg-osd-after 60 -1]
       [--branch-threads 2]

``--gdg-max-iters``: one windowed GDG per iteration budget (``max_iters``, 0 = none; a real-time
deadline per window). ``--gdg-osd``: GDG's own OSD (``osd_method``); ``--gdg-osd-after``: its
``osd_after`` values, one variant each (OSD also competes with answers that converged more than
that many iterations after pre-BP; -1 = only where no branch converged). ``--branch-threads``: GDG
replays one window's guessing tree on that many threads (identical results; it matters for latency
only).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _per_round(p_shot: float, rounds: int) -> float:
    return 1.0 - (1.0 - p_shot) ** (1.0 / rounds)


def _latency(dec, dets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per (shot, window) step times in seconds, and whether the inner decoder ran."""
    times, ran = [], []
    for i in range(dets.shape[0]):
        stream = dec.stream()
        commits = []
        for rows in dec.round_detectors:
            c = stream.push_round(dets[i : i + 1, rows])
            if c is not None:
                commits.append(c)
        commits.append(stream.finish())
        times += [c.seconds for c in commits]
        ran += list(stream.info.extra["window_decoded"][0])
    return np.array(times), np.array(ran, dtype=bool)


def _inner_params(name: str, W: int, F: int, p: float, bposd: dict) -> dict:
    if name == "bposd":
        return dict(bposd)
    if name == "gdg":
        kw = {"low_error_mode": p <= 0.002}
        if (W, F) != (3, 1):
            kw.update(max_step=40, max_tree_depth=4, max_side_depth=20, side_step=20)
        return kw
    return {}


def _pct(x: np.ndarray) -> str:
    if x.size == 0:
        return "- / - / -"
    ms = 1e3 * x
    return f"{np.percentile(ms, 50):.2f} / {np.percentile(ms, 99):.2f} / {ms.max():.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=float, nargs="+", default=[0.003, 0.004])
    ap.add_argument("--shots", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1, help="numba threads for the batch decodes")
    ap.add_argument("--windows", nargs="+", default=["5,2", "3,1"], help="W,F pairs")
    ap.add_argument("--bp-iter", type=int, default=80)
    ap.add_argument("--osd-order", type=int, default=10)
    ap.add_argument("--latency-shots", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--inner", nargs="+", default=["bposd"], help="inner decoders of the windows")
    ap.add_argument("--gdg-max-iters", type=int, nargs="+", default=[0], help="GDG iteration budgets per window")
    ap.add_argument("--fallback", nargs="+", default=["none"], choices=["none", "last", "all"],
                    help="windowed GDG variants: BP+OSD-CS10 redo of non-converged windows")
    ap.add_argument("--gdg-osd", nargs="+", default=["none"], choices=["none", "osd0", "osd_cs"],
                    help="windowed GDG variants: OSD (order --osd-order) where no branch converged, ordered by "
                         "GDG's pre-BP posteriors")
    ap.add_argument("--gdg-osd-after", type=int, nargs="+", default=[60],
                    help="with --gdg-osd: GDG's osd_after (OSD competes with answers converged after more than "
                         "this many iterations past pre-BP; -1 = OSD only where no branch converged)")
    ap.add_argument("--branch-threads", type=int, default=1, help="GDG branch threads (latency runs)")
    ap.add_argument("--no-whole", action="store_true", help="skip whole-history BP+OSD")
    args = ap.parse_args()

    import numba

    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.decoders.window import WindowDecoder
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    numba.set_num_threads(args.threads)
    inner = {"max_iter": args.bp_iter, "osd_order": args.osd_order}
    pairs = [tuple(int(x) for x in w.split(",")) for w in args.windows]
    R = args.rounds
    print(f"bb144_12_12 bb-uniform, {R} rounds, memory-Z, Z detectors; {args.shots} shots per p, seed {args.seed}; "
          f"BP+OSD: min-sum {args.bp_iter} it, alpha 1, OSD-CS{args.osd_order}; {args.threads} thread(s)\n")
    table = ["| p | decoder | errors / shots | flagged | LER per shot [interval] | LER per round [interval] "
             "| ms per shot (batch) |", "|---|---|---|---|---|---|---|"]
    lat_rows = ["| p | window | windows per shot | step ms p50 / p99 / max (all steps) "
                "| ms p50 / p99 / max (steps that decoded) | decoded steps |", "|---|---|---|---|---|---|"]
    for p in args.p:
        circ = build_circuit("bb144_12_12", noise="bb-uniform", p=p, rounds=R, basis="Z")
        prob = DecodingProblem.from_dem(decoding_dem(circ))
        dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
        dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
        decoders = {}
        if not args.no_whole:
            decoders["whole-history bposd"] = BpOsdDecoder(prob, osd_method="osd_cs", osd_key="last",
                                                                 method="minsum", **inner)
        for name in args.inner:
            for W, F in pairs:
                variants = [(b, fb, o, a) for b in args.gdg_max_iters for fb in args.fallback for o in args.gdg_osd
                            for a in (args.gdg_osd_after if o != "none" else [0])] \
                    if name == "gdg" else [(0, "none", "none", 0)]
                for b, fb, osd, after in variants:
                    kw = _inner_params(name, W, F, p, inner)
                    label = f"window {name} ({W},{F})"
                    if name == "gdg":
                        kw["branch_threads"] = args.branch_threads
                        if b:
                            kw["max_iters"] = b
                            label += f" max_iters={b}"
                        if fb != "none":
                            label += f" fallback={fb}"
                        if osd != "none":
                            kw["osd_method"] = osd
                            kw["osd_order"] = args.osd_order if osd == "osd_cs" else 0
                            kw["osd_after"] = after
                            label += f" osd={osd}{kw['osd_order'] if osd == 'osd_cs' else ''}"
                            label += f" osd_after={after}"
                    decoders[label] = WindowDecoder(prob, specs=DecoderSpec, inner=name, W=W, F=F, inner_params=kw,
                                                    fallback=fb)
        Ht, Lt = prob.H.T.tocsr().astype(np.int32), prob.L.T.tocsr().astype(np.int32)
        for name, dec in decoders.items():
            dec.decode_batch(dets[:4])  # JIT / cache load outside the timed region
            t0 = time.perf_counter()
            e = dec.decode_batch(dets)
            secs = time.perf_counter() - t0
            pred = (np.asarray(e.astype(np.int32) @ Lt) & 1).astype(np.uint8)
            flagged = ((np.asarray(e.astype(np.int32) @ Ht) & 1).astype(np.uint8) ^ dets).any(axis=1)
            fails = int((np.any(pred != obs, axis=1) | flagged).sum())
            f = fit_binomial(num_shots=args.shots, num_hits=fails)
            table.append(
                f"| {p} | {name} | {fails} / {args.shots} | {int(flagged.sum())} | "
                f"{f.best:.2e} [{f.low:.2e}, {f.high:.2e}] | "
                f"{_per_round(f.best, R):.2e} [{_per_round(f.low, R):.2e}, {_per_round(f.high, R):.2e}] | "
                f"{1e3 * secs / args.shots:.1f} |"
            )
            print(table[-1], flush=True)
        saved = numba.get_num_threads()
        numba.set_num_threads(1)
        for label, dec in decoders.items():
            if not label.startswith("window"):
                continue
            times, ran = _latency(dec, dets[: args.latency_shots])
            lat_rows.append(f"| {p} | {label[len('window '):]} | {dec.num_windows} | {_pct(times)} | "
                            f"{_pct(times[ran])} | {int(ran.sum())} / {ran.size} |")
            print(lat_rows[-1], flush=True)
        numba.set_num_threads(saved)
    print("\n## LER\n")
    print("\n".join(table))
    print(f"\n## Per-window latency ({args.latency_shots} shots streamed one at a time, 1 thread)\n")
    print("\n".join(lat_rows))


if __name__ == "__main__":
    main()
