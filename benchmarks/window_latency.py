"""Per-window latency of sliding-window decoders, measured side by side on the same shots.

Every decoder (registry specs, e.g. ``window[inner=gdg,W=3,F=1]``) streams the same sampled shots
one round at a time (``WindowDecoder.stream()``, S = 1), and each window step (inner decode +
commit) is timed with ``time.perf_counter``. The decoders take turns shot by shot (the order
rotates every shot), so a busy shared machine slows them alike; the ratios to the first decoder
are the figures to compare. Warm-up (JIT / cache load, first buffers) runs before timing.

Reports, per decoder, p50 / p99 / max ms over all window steps (zero-syndrome windows included:
they cost no decoding) and over the steps whose inner decoder ran, each as the median over
``--repeat`` passes, plus p99 and max relative to the first decoder and the logical failures
(wrong observable or, for per-column decoders, nonzero final residual syndrome) on the shots.

    python benchmarks/window_latency.py --code bb144_12_12 --p 0.003 --shots 300 --repeat 3 \\
        --decoder 'window[inner=bposd,W=3,F=1]' --decoder 'window[inner=gdg,W=3,F=1]' \\
        --decoder 'window[inner=gdg,W=3,F=1,max_iters=400,fallback=all,branch_threads=2]'
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def timed_stream(dec, shot: np.ndarray, clock=time.perf_counter) -> tuple[list[float], object]:
    """Stream one shot's detectors ``(m,)`` round by round through window decoder ``dec``: ``(seconds of ``clock``
    per window step, each push that committed a window and the final flush, the finished stream)``."""
    stream = dec.stream()
    secs = []
    for rows in dec.round_detectors:
        t0 = clock()
        c = stream.push_round(shot[None, rows])
        if c is not None:
            secs.append(clock() - t0)
    t0 = clock()
    stream.finish()
    secs.append(clock() - t0)
    return secs, stream


def _stream_shot(dec, shot: np.ndarray) -> tuple[list[float], list[bool], np.ndarray, np.ndarray | None]:
    """(window step seconds, whether the inner decoder ran, predicted observables, errors or None)."""
    secs, stream = timed_stream(dec, shot)
    ran = list(stream.info.extra["window_decoded"][0])
    errors = stream.errors[0] if dec.per_column else None
    return secs, ran, stream.observables[0], errors


def _pcts(ms: np.ndarray) -> tuple[float, float, float]:
    if ms.size == 0:
        return (float("nan"),) * 3
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99)), float(ms.max())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", default="bb144_12_12")
    ap.add_argument("--noise", default="bb-uniform")
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--basis", default="Z")
    ap.add_argument("--shots", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3, help="timing passes over the shots (median per statistic)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--decoder", action="append", required=True, help="registry spec; the first is the reference")
    args = ap.parse_args(argv)

    import numba

    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.recipe import parse_decoder

    numba.set_num_threads(1)
    circ = build_circuit(args.code, noise=args.noise, p=args.p, rounds=args.rounds, basis=args.basis)
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
    dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
    decs = []
    for text in args.decoder:
        spec = parse_decoder(text)
        dec = spec.build(prob)
        if not hasattr(dec, "stream"):
            raise SystemExit(f"{text}: not a window decoder (no stream())")
        for i in range(min(3, args.shots)):  # warm-up outside the timed passes
            _stream_shot(dec, dets[i])
        decs.append((text, dec))  # the spec as given (full labels are long)
    D = len(decs)
    stats = np.zeros((args.repeat, D, 2, 3))  # pass, decoder, (all steps, decoded steps), (p50, p99, max)
    fails = np.zeros(D, dtype=np.int64)
    for r in range(args.repeat):
        secs = [[] for _ in range(D)]
        ran = [[] for _ in range(D)]
        for i in range(args.shots):
            for j in range(D):
                d = (i + j) % D  # rotate who goes first
                s, rn, pred, err = _stream_shot(decs[d][1], dets[i])
                secs[d] += s
                ran[d] += rn
                if r == 0:
                    bad = bool(np.any(pred != obs[i]))
                    if err is not None:
                        bad |= bool(np.any((prob.H @ err.astype(np.int64)) % 2 != dets[i]))
                    fails[d] += bad
        for d in range(D):
            ms = 1e3 * np.asarray(secs[d])
            mask = np.asarray(ran[d], dtype=bool)
            stats[r, d, 0] = _pcts(ms)
            stats[r, d, 1] = _pcts(ms[mask])
    med = np.median(stats, axis=0)
    print(f"{args.code} {args.noise} p={args.p}, {args.rounds} rounds, basis {args.basis}; {args.shots} shots streamed "
          f"one at a time, {args.repeat} passes (medians), 1 numba thread; decoders take turns shot by shot\n")
    print("| decoder | failures / shots | ms p50 / p99 / max (all window steps) | ms p50 / p99 / max (decoded steps) "
          "| p99, max vs first |")
    print("|---|---|---|---|---|")
    for d, (label, _) in enumerate(decs):
        a, b = med[d, 0], med[d, 1]
        rel = f"{med[d, 0, 1] / med[0, 0, 1]:.2f}x, {med[d, 0, 2] / med[0, 0, 2]:.2f}x"
        print(f"| {label} | {fails[d]} / {args.shots} | {a[0]:.2f} / {a[1]:.2f} / {a[2]:.2f} | "
              f"{b[0]:.2f} / {b[1]:.2f} / {b[2]:.2f} | {rel} |")


if __name__ == "__main__":
    main()
