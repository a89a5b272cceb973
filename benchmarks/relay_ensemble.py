"""Relay-BP ensembles against the clock: serial ``relay-bp`` vs ``relay-bp[ensemble=N]``, per-shot time and LER.

Problem: IBM's [[144,12,12]] memory circuit (``build_circuit("bb144_12_12", noise="bb-uniform", p=0.003,
rounds=12)``, its whole DEM, as ``confidence_bb144.py`` builds it), one fixed sample of ``--shots`` shots
(seed ``--seed``); ``--code bb288_12_18`` for the [[288,12,18]] code. One thread (``numba.set_num_threads(1)``,
the decoders' ``threads=1``), JIT warmed up outside the timing. Every decoder decodes the same shots with
``predict_observables_timed`` (the real-time mode: one shot after another, each timed in the kernel with the
CPU's constant-rate counter), ``--runs`` times in turn (serial, ensemble, serial, ensemble, ...; the answers
are identical across runs, the times are not). Per decoder and run: nearest-rank p50 / p99 / p99.9 / p99.99 /
max of the wall clock (us) and of the work clock (``DecodeInfo.work``: serial iterations over all legs; for
an ensemble, lane-group steps), mean wall time, LER, and the LER under deadlines of 1x, 2x and 5x the serial
decoder's median wall time of the same run with the *miss* policy, ``LER(t) = P(wall > t or wrong)``.
The ratios to serial (p99.9, mean, LER at 2x) are medians over the runs.

``--formats``: the message format for ``N = 8`` lanes, measured with the existing Relay-BP lanes kernels run
on 8 lanes (``relay_lanes_range`` on float32, int16 and int32 messages; ``relay_lanes_i8_range``, 8-bit
check state and int16 sums): ns per lane-iteration on the same shots.

    python benchmarks/relay_ensemble.py --shots 20000 --runs 3 --variants "relay-bp[ensemble=8,stop_after=1]"
    python benchmarks/relay_ensemble.py --runs 1 --tag ", variants" \
        --specs "relay-bp;relay-bp[stop_after=1];relay-bp[ensemble=16,stop_after=1];relay-bp[ensemble=32,stop_after=1]"
    python benchmarks/relay_ensemble.py --code bb288_12_18 --shots 5000 --runs 1
    python benchmarks/relay_ensemble.py --formats --shots 300
    python benchmarks/relay_ensemble.py --table    # the markdown of benchmarks/README.md from the JSON

Writes (merges into) ``benchmarks/results/relay_ensemble.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "relay_ensemble.json")
QS = (50, 99, 99.9, 99.99)
DEADLINES = (1, 2, 5)


def _sample(code: str, p: float, shots: int, seed: int):
    from qdecode.sims.circuits import build_circuit

    circ = build_circuit(code, noise="bb-uniform", p=p, rounds=12)
    dem = circ.detector_error_model(decompose_errors=False)
    dets, obs = circ.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
    return dem, dets.astype(np.uint8), obs.astype(np.uint8)


def _stats(wall_us: np.ndarray, work: np.ndarray, fail: np.ndarray, serial_p50: float) -> dict:
    from qdecode.hw.latency import nearest_rank

    out = {"shots": int(fail.size), "errors": int(fail.sum()), "ler": float(fail.mean()),
           "mean_us": float(wall_us.mean()), "max_us": float(wall_us.max()), "max_work": int(work.max()),
           "mean_work": float(work.mean())}
    for q in QS:
        out[f"p{q:g}_us"] = nearest_rank(wall_us, q)
        out[f"p{q:g}_work"] = nearest_rank(work, q)
    for k in DEADLINES:
        out[f"ler_at_{k}x"] = float(np.mean((wall_us > k * serial_p50) | fail))
    return out


def decode_runs(code: str, p: float, shots: int, seed: int, specs: list[str], runs: int, variants: list[str],
                reference_p50: float | None = None) -> dict:
    """Every spec's per-run statistics (the first spec is the serial reference, unless ``reference_p50`` gives the
    serial median wall time of another invocation on the same shots)."""
    import numba

    from qdecode.decoders.registry import decoder

    numba.set_num_threads(1)
    dem, dets, obs = _sample(code, p, shots, seed)
    packed = np.packbits(dets, axis=1, bitorder="little")
    k = obs.shape[1]
    decs = {}
    for spec in specs + variants:
        d = decoder(spec, dem)
        d.threads = 1
        d.predict_observables_timed(packed[:64])  # JIT warm-up, outside the timing
        d.predict_observables_batch(dets[:64])
        decs[spec] = d
    res: dict = {s: {"runs": []} for s in decs}
    answers: dict = {}
    for r in range(runs):
        order = specs + (variants if r == 0 else [])
        serial_p50 = reference_p50
        for spec in order:
            d = decs[spec]
            t0 = time.perf_counter()
            pred = np.unpackbits(d.predict_observables_timed(packed), axis=1, count=k, bitorder="little")
            took = time.perf_counter() - t0
            info = d.last_info
            wall_us = info.wall_ns / 1e3
            if serial_p50 is None:
                from qdecode.hw.latency import nearest_rank

                serial_p50 = nearest_rank(wall_us, 50)
            fail = np.any(pred != obs, axis=1)
            if spec in answers:
                assert np.array_equal(answers[spec], pred), f"{spec}: answers changed between runs"
            answers[spec] = pred
            st = _stats(wall_us, info.work.astype(np.int64), fail, serial_p50)
            st.update(seconds=took, load=list(os.getloadavg()), label=spec,
                      work_unit=d.work_unit, serial_p50_us=serial_p50)
            res[spec]["runs"].append(st)
            print(f"run {r} {spec}: {took:.0f} s, LER {st['ler']:.5f}, mean {st['mean_us']:.0f} us, p99.9 "
                  f"{st['p99.9_us']:.0f} us, max {st['max_us']:.0f} us, LER@2x {st['ler_at_2x']:.5f}", flush=True)
        # the batch path gives the timed path's answers
        for spec in order:
            assert np.array_equal(decs[spec].predict_observables_batch(dets[:2000]), answers[spec][:2000]), spec
    return res


def _ratios(res: dict, serial: str, base: list | None = None) -> dict:
    """Per spec: median over runs (paired with the serial run of the same round) of the target ratios; ``base``:
    the serial runs of another invocation (their median paired with every run)."""
    out = {}
    if base is not None:
        base = [{f: float(np.median([r[f] for r in base])) for f in ("p99.9_us", "mean_us", "ler_at_2x")}] * len(
            next(iter(res.values()))["runs"])
    else:
        base = res[serial]["runs"]
    for spec, v in res.items():
        rr = v["runs"]
        n = min(len(rr), len(base))
        out[spec] = {
            "p99.9_ratio": float(np.median([rr[i]["p99.9_us"] / base[i]["p99.9_us"] for i in range(n)])),
            "mean_ratio": float(np.median([rr[i]["mean_us"] / base[i]["mean_us"] for i in range(n)])),
            "ler_2x_ratio": float(np.median([rr[i]["ler_at_2x"] / max(base[i]["ler_at_2x"], 1e-300)
                                             for i in range(n)])),
        }
    return out


def format_costs(code: str, p: float, shots: int, seed: int) -> dict:
    """ns per lane-iteration of the Relay-BP lanes kernels on 8 lanes, per message format (same shots)."""
    import numba

    from qdecode.decoders.relay_bp import RelayBpDecoder
    from qdecode.kernels.relay import MessageArith, RelayGraph, RelayOut
    from qdecode.kernels.relay_lanes import relay_lanes_range
    from qdecode.kernels.relay_lanes_narrow import relay_lanes_i8_range

    numba.set_num_threads(1)
    dem, dets, _ = _sample(code, p, shots, seed)
    from qdecode.problem import DecodingProblem

    dec = RelayBpDecoder(DecodingProblem.from_dem(dem), threads=1)
    graph, sched, arith, key = _args(dec)
    out = {}
    for name in ("float32", "int16", "int32", "int8 (uint8 check state, int16 sums)"):
        if name == "float32":
            g = RelayGraph(graph.var_ptr, graph.var_chks, np.ascontiguousarray(dec.weight_llr, np.float32),
                           graph.wllr)
            a = MessageArith(1.0, arith.alpha_num, arith.alpha_shift, arith.gamma_shift, np.float32(1e4),
                             np.float32(1e4))
            fn = relay_lanes_range
        elif name.startswith("int8"):
            g, a, fn = graph, arith, relay_lanes_i8_range
        else:
            dt = np.dtype(name)
            g = RelayGraph(graph.var_ptr, graph.var_chks, graph.llr0.astype(dt), graph.wllr)
            a = MessageArith(arith.alpha, arith.alpha_num, arith.alpha_shift, arith.gamma_shift, dt.type(arith.msg_lim),
                             dt.type(arith.post_lim))
            fn = relay_lanes_range
        S, n = dets.shape[0], dec.problem.num_errors
        o = RelayOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32), np.zeros(S, np.int32),
                     np.zeros(S, np.float64))
        fn(g, sched, a, key, dets[:16], o, 8, 0, 16)  # compile
        t0 = time.perf_counter()
        fn(g, sched, a, key, dets, o, 8, 0, S)
        t = time.perf_counter() - t0
        its = int(o.iterations.sum())
        out[name] = {"ns_per_lane_iteration": t / its * 1e9, "iterations": its, "seconds": t,
                     "converged": float(o.converged.mean())}
        print(f"{name}: {t / its * 1e9:.0f} ns per lane-iteration ({its} iterations, {t:.1f} s)", flush=True)
    return out


def _args(dec):
    """The decoder's leading kernel arguments (graph, schedule, arithmetic, seed)."""
    from qdecode.decoders.bp import ALPHA_SHIFT
    from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS
    from qdecode.kernels.relay import MessageArith, RelayGraph, RelaySchedule

    lo, hi = dec.gamma_interval
    return (RelayGraph(dec.var_ptr, dec.var_chks, dec.prior_llr, dec.weight_llr),
            RelaySchedule(dec.gamma0, lo, hi, dec.gammas, dec.pre_iter, dec.legs, dec.leg_iter, dec.stop_after),
            MessageArith(dec.alpha, dec.alpha_num, ALPHA_SHIFT, GAMMA_FRAC_BITS, dec.msg_lim, dec.post_lim),
            np.uint64(dec.seed))


def table(data: dict) -> str:
    """The markdown of benchmarks/README.md from the JSON."""
    lines = []
    for key, entry in data.get("codes", {}).items():
        res, ratios = entry["results"], entry["ratios"]
        serial = entry["serial"]
        ref = data["codes"][entry["reference"]]["results"] if entry.get("reference") else res
        lines.append(f"**{key}**: {entry['shots']} shots, {entry['runs']} runs, 1 thread, {data['machine']['cpu']}; "
                     f"wall us (median over runs) / work; LER(t) with the miss policy at t = k x serial p50 "
                     f"({np.median([r['p50_us'] for r in ref[serial]['runs']]):.0f} us"
                     + (f", from {entry['reference']!r}" if entry.get("reference") else "") + ")")
        lines.append("")
        lines.append("| decoder | work unit | p50 | p99 | p99.9 | p99.99 | max | mean us | LER | LER@1x | LER@2x "
                     "| LER@5x | p99.9 / serial | mean / serial | LER@2x / serial |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for spec, v in res.items():
            rr = v["runs"]

            def med(f, rr=rr):
                return float(np.median([r[f] for r in rr]))

            cells = [f"{med(f'p{q:g}_us'):.0f} / {med(f'p{q:g}_work'):.0f}" for q in QS]
            cells.append(f"{med('max_us'):.0f} / {med('max_work'):.0f}")
            unit = "iterations" if "iterations" in rr[0]["work_unit"] else "steps"
            rt = ratios[spec]
            lines.append(f"| `{spec}` | {unit} | " + " | ".join(cells) + f" | {med('mean_us'):.0f} | "
                         f"{rr[0]['ler']:.2e} ({rr[0]['errors']}) | " +
                         " | ".join(f"{med(f'ler_at_{k}x'):.2e}" for k in DEADLINES) +
                         f" | {rt['p99.9_ratio']:.2f} | {rt['mean_ratio']:.2f} | {rt['ler_2x_ratio']:.3f} |")
        lines.append("")
    if "formats" in data:
        lines.append("Message format on 8 lanes (" + data["formats"]["what"] + "):")
        lines.append("")
        lines.append("| format | ns per lane-iteration |")
        lines.append("|---|---|")
        for name, v in data["formats"]["results"].items():
            lines.append(f"| {name} | {v['ns_per_lane_iteration']:.0f} |")
        lines.append("")
    return "\n".join(lines)


def _machine() -> dict:
    import numba

    from qdecode.hw.latency import cpu_model

    return {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", default="bb144_12_12")
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--shots", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--specs", default="relay-bp;relay-bp[ensemble=8]", help="';'-separated, serial first")
    ap.add_argument("--variants", default="", help="';'-separated specs decoded in the first run only")
    ap.add_argument("--tag", default="", help="appended to the JSON key (another set of specs, same shots)")
    ap.add_argument("--reference", default="", help="JSON key whose serial runs give the deadlines and ratios "
                    "(then every --specs entry is a variant)")
    ap.add_argument("--formats", action="store_true")
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    data = json.load(open(OUT)) if os.path.exists(OUT) else {}
    if not args.table:
        data["machine"] = _machine()
        cmd = "python benchmarks/relay_ensemble.py " + " ".join(sys.argv[1:])
        if args.formats:
            data["formats"] = {"what": f"{args.code}, p={args.p}, {args.shots} shots, 1 thread",
                               "command": cmd, "results": format_costs(args.code, args.p, args.shots, args.seed)}
        else:
            specs = [s for s in args.specs.split(";") if s]
            variants = [s for s in args.variants.split(";") if s]
            ref = data["codes"][args.reference] if args.reference else None
            base = ref["results"][ref["serial"]]["runs"] if ref else None
            p50 = float(np.median([r["p50_us"] for r in base])) if ref else None
            res = decode_runs(args.code, args.p, args.shots, args.seed, specs, args.runs, variants, p50)
            key = f"{args.code} p={args.p}{args.tag}"
            data.setdefault("codes", {})[key] = {"shots": args.shots, "runs": args.runs, "seed": args.seed,
                                                 "serial": ref["serial"] if ref else specs[0], "command": cmd,
                                                 "reference": args.reference or None, "results": res,
                                                 "ratios": _ratios(res, specs[0], base)}
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as f:
            json.dump(data, f, indent=1)
    print(table(data))


if __name__ == "__main__":
    main()
