"""Windowed GDG against windowed BP+OSD on the gross code: failures and per-window latency, same shots.

    NUMBA_NUM_THREADS=1 python benchmarks/gdg_window.py --shots 3000 --whole --json benchmarks/results/gdg_window.json

Problem: [[144,12,12]] memory Z (``bb144_12_12``, ``bb-uniform`` noise, ``--p`` 0.004, ``--rounds`` 12, Z
detectors), ``--shots`` shots sampled once with the fixed ``--seed``. Every decoder sees exactly those shots.

Window decoders (``--decoder``, registry specs; the first is the reference the ratios divide by):
``window[inner=bposd,W=5,F=2]`` (min-sum 80 iterations + OSD-CS10 ordered by ``osd_key=sum4``),
``window[inner=gdg,W=5,F=2]`` (the authors' GDG, no fallback), and GDG with its own OSD-CS10 where no branch
converged, ordered by the sum of the last four pre-BP posteriors (``osd_key=sum4``, the default), the last
one (``osd_key=last``) or the last eight (``sum8``); then GDG under an iteration budget (``max_iters``, pre-BP
included: the branches stop there and OSD decides) after a longer pre-BP (``pre_iter`` 40 or 60).
Each streams every shot one round at a time (``WindowDecoder.stream()``, S = 1, one thread); the decoders
take turns shot by shot (the order rotates), so load on a shared machine hits all alike.

Failure: a wrong observable, or a nonzero final residual syndrome ``s + H e`` ("flagged": GDG without a
fallback returns the main branch's decision where no branch converged). The GDG rows split their failures
into flagged ones and those on shots where some window used the inner OSD (``inner_osd``).

Latency: the CPU time (``time.process_time``, one numba thread) of each window step, i.e. one
``push_round`` that completes a window, or the final ``finish()``: the inner decode of the window plus
its commit, as in ``benchmarks/window_latency.py``. Reported over all (shot, window) steps, zero-syndrome
windows included: p50, p99 (``numpy.percentile``, linear interpolation) and max, in ms; also over the steps
whose inner decoder ran. Batch CPU time per shot is not measured here (``benchmarks/window_ler.py`` does).

``--whole``: also the whole-history decoders (one ``decode_batch`` over all shots, CPU ms per shot): bposd
(sum4, last) and gdg (no fallback, OSD-CS10 with sum4 / last).
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one thread, before numba is imported

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import write_result  # noqa: E402
from window_latency import timed_stream  # noqa: E402

DEFAULT_DECODERS = [
    "window[inner=bposd,W=5,F=2]",
    "window[inner=gdg,W=5,F=2]",
    "window[inner=gdg,W=5,F=2,osd_method=osd_cs]",
    "window[inner=gdg,W=5,F=2,osd_method=osd_cs,osd_key=last]",
    "window[inner=gdg,W=5,F=2,osd_method=osd_cs,osd_key=sum8]",
    "window[inner=gdg,W=5,F=2,osd_method=osd_cs,pre_iter=40,max_iters=100]",
    "window[inner=gdg,W=5,F=2,osd_method=osd_cs,pre_iter=40,max_iters=100,osd_key=sum8]",
    "window[inner=gdg,W=5,F=2,osd_method=osd_cs,pre_iter=60,max_iters=150,osd_key=sum8]",
]
WHOLE = ["bposd", "bposd[osd_key=last]", "gdg", "gdg[osd_method=osd_cs]", "gdg[osd_method=osd_cs,osd_key=last]"]


def _stream_shot(dec, shot: np.ndarray):
    """(window step CPU seconds, inner decoder ran per window, observables (k,), errors (n,), windows with OSD)."""
    secs, stream = timed_stream(dec, shot, time.process_time)
    extra = stream.info.extra
    osd = int(extra["inner_osd"][0]) if "inner_osd" in extra else 0
    return secs, list(extra["window_decoded"][0]), stream.observables[0], stream.errors[0], osd


def _pcts(ms: np.ndarray) -> dict:
    if ms.size == 0:
        return {"p50": None, "p99": None, "max": None}
    return {"p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99)), "max": float(ms.max())}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=float, default=0.004)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--shots", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--decoder", action="append", help="window decoder spec (repeat; the first is the reference)")
    ap.add_argument("--whole", action="store_true", help="also the whole-history decoders (batch)")
    ap.add_argument("--json", help="result file (benchmarks/results/gdg_window.json)")
    args = ap.parse_args(argv)

    import numba

    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    numba.set_num_threads(1)
    circ = build_circuit("bb144_12_12", noise="bb-uniform", p=args.p, rounds=args.rounds, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
    dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
    H = prob.H.tocsr()
    S = args.shots
    title = (f"bb144_12_12 bb-uniform p={args.p}, {args.rounds} rounds, memory Z; {S} shots, seed {args.seed}; "
             f"one thread, CPU time")
    print(title + "\n")
    rows = []
    if args.whole:
        for text in WHOLE:
            dec = DecoderSpec.parse(text).build(prob)
            dec.decode_batch(dets[:2])  # JIT / cache load outside the timing
            t0 = time.process_time()
            e = dec.decode_batch(dets)
            secs = time.process_time() - t0
            pred = (np.asarray(prob.L @ e.T.astype(np.int64)).T % 2).astype(np.uint8)
            flagged = np.asarray((H @ e.T.astype(np.int64)).T % 2 != dets).any(axis=1)
            fail = np.any(pred != obs, axis=1) | flagged
            osd = dec.last_info.extra.get("osd") if dec.last_info.extra else None
            row = {"decoder": text, "kind": "whole", "failures": int(fail.sum()), "shots": S,
                   "flagged": int(flagged.sum()), "osd_shots": None if osd is None else int(np.sum(osd)),
                   "cpu_ms_per_shot": 1e3 * secs / S}
            rows.append(row)
            print(f"{text}: {row['failures']} / {S} failures", flush=True)

    texts = args.decoder or DEFAULT_DECODERS
    decs = []
    for text in texts:
        dec = DecoderSpec.parse(text).build(prob)
        for i in range(min(3, S)):  # warm-up (JIT / cache load, first buffers) outside the timing
            _stream_shot(dec, dets[i])
        decs.append(dec)
    D = len(decs)
    secs = [[] for _ in range(D)]
    ran = [[] for _ in range(D)]
    fail = np.zeros((D, S), dtype=bool)
    flagged = np.zeros((D, S), dtype=bool)
    osd = np.zeros((D, S), dtype=np.int64)
    for i in range(S):
        for j in range(D):
            d = (i + j) % D  # rotate who goes first
            s, rn, pred, err, o = _stream_shot(decs[d], dets[i])
            secs[d] += s
            ran[d] += rn
            flagged[d, i] = bool(np.any((H @ err.astype(np.int64)) % 2 != dets[i]))
            fail[d, i] = flagged[d, i] or bool(np.any(pred != obs[i]))
            osd[d, i] = o
    ref = None
    for d, text in enumerate(texts):
        ms = 1e3 * np.asarray(secs[d])
        mask = np.asarray(ran[d], dtype=bool)
        row = {"decoder": text, "kind": "window", "label": DecoderSpec.parse(text).label(),
               "failures": int(fail[d].sum()), "shots": S, "flagged": int(flagged[d].sum()),
               "failures_on_osd_shots": int((fail[d] & (osd[d] > 0)).sum()), "osd_windows": int(osd[d].sum()),
               "window_steps": int(ms.size), "decoded_steps": int(mask.sum()),
               "step_ms_all": _pcts(ms), "step_ms_decoded": _pcts(ms[mask])}
        if ref is None:
            ref = row
        row["failures_vs_first"] = row["failures"] / max(1, ref["failures"])
        row["p99_vs_first"] = row["step_ms_all"]["p99"] / ref["step_ms_all"]["p99"]
        rows.append(row)
    result = {
        "title": title, "p": args.p, "rounds": args.rounds, "shots": S, "seed": args.seed,
        "latency": "CPU time (time.process_time, one thread) of each window step (the push_round that completes a "
                   "window, or finish(): inner decode + commit); p99 = numpy.percentile(..., 99) over all "
                   "(shot, window) steps, zero-syndrome windows included",
        "failure": "a wrong observable or a nonzero final residual syndrome (flagged)",
        "rows": rows}
    print(table(result))
    write_result(args.json, result)


def _ms(x: dict) -> str:
    return f"{x['p50']:.2f} / {x['p99']:.2f} / {x['max']:.2f}"


def table(result: dict) -> str:
    """The Markdown tables of a result (``benchmarks/render.py``'s region ``gdg-window``)."""
    out = []
    whole = [r for r in result["rows"] if r["kind"] == "whole"]
    if whole:
        out += ["| whole-history decoder | failures / shots | flagged | OSD shots | CPU ms per shot |",
                "|---|---|---|---|---|"]
        out += [f"| `{r['decoder']}` | {r['failures']} / {r['shots']} | {r['flagged']} | "
                f"{'-' if r['osd_shots'] is None else r['osd_shots']} | {r['cpu_ms_per_shot']:.2f} |" for r in whole]
        out.append("")
    out += ["| window decoder | failures / shots | flagged | failures on shots with OSD windows | windows with OSD "
            "| ms p50 / p99 / max per window step | failures, p99 vs first |", "|---|---|---|---|---|---|---|"]
    out += [f"| `{r['decoder']}` | {r['failures']} / {r['shots']} | {r['flagged']} | {r['failures_on_osd_shots']} "
            f"| {r['osd_windows']} | {_ms(r['step_ms_all'])} "
            f"| {r['failures_vs_first']:.2f}x, {r['p99_vs_first']:.2f}x |"
            for r in result["rows"] if r["kind"] == "window"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
