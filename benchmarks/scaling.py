"""Cost of BP and BP+OSD-CS10 against problem size: BB codes and surface codes, memory-Z DEMs.

    python benchmarks/scaling.py [--repeats 3] [--budget 1.0] [--only bb|surface] [--bb-rounds 12,12,18]

Problems: [[72,12,6]], [[144,12,12]], [[288,12,18]] (``bb72_12_6`` / ``bb144_12_12`` / ``bb288_12_18``,
bb-uniform noise, 12 / 12 / 18 rounds as in the issue: ``--bb-rounds 6,12,18`` gives the codes'
default of d rounds) and the rotated surface code d = 5, 7, ..., 15 (sd6 noise, d rounds, memory
basis detectors only), all at p = 0.003, memory Z.

Per problem: m, n, nnz; the per-lane working set of the lane kernel BpDecoder runs (float64: the
reference :mod:`qdecode.kernels.minsum_lanes`, ``LaneState`` + ``LaneScratch`` per lane::

    check state  m x (2 x 2 x dt [min1, min2; current and next] + 2 x 4 [arg] + 2 [par] + 1 [parity]
                      + 2 x dt [out1, out2] + 1 [syndrome row])
    + sgn        nnz x 1
    + posteriors n x (dt [post] + 1 [hard])

bytes, ``dt`` the message size (8 for float64, 4 for the reference's int32 fixed point); bits=8 runs
on :func:`qdecode.kernels.minsum_lanes_narrow.minsum_lanes_i8_range` where BpDecoder picks it:
``10 m + nnz + 3 n`` (uint8 check state, int16 posteriors); ``30 m + nnz + 5 n`` for the float32
one). Posteriors are counted although ``decode_batch`` does not store them (BP+OSD does). The total
over the kernel's lanes plus the shared graph (``var_ptr``, ``var_chks``, priors) is set against
the per-core L2 and the L3 (``lscpu``); then

- ``BpDecoder`` flooding (float64 lanes, and bits=8 fixed point), one thread, max_iter 50,
  uniformly random syndromes (no shot converges: every shot runs 50 iterations): ns per
  edge-iteration (time / (iterations x nnz)) and ms per shot;
- BP+OSD-CS10 (:class:`qdecode.decoders.bposd.BpOsdDecoder`, the registry's ``bposd`` defaults:
  min-sum 80 iterations, OSD-CS order 10), one thread, on syndromes sampled from the circuit
  (stim, seed 0), timed in two parts: its BP stage (``decode_soft_batch``: posteriors kept, as
  BP+OSD runs it) on the whole sampled stream (>= 64 shots, so the 32 lanes stay full: on fewer
  shots than lanes a lane batch costs its slowest shot), and its OSD-CS10 stage
  (``BpOsdDecoder.osd.solve_batch``) on up to 16 of the shots BP failed, ordered by their BP
  posteriors. ms per shot = BP stage per shot + (share sent to OSD) x (OSD per failed shot).

Shot counts adapt to the problem (about ``--budget`` seconds per timing, multiples of 32 lanes);
every figure is the median of ``--repeats`` timings, in CPU time of the calling thread (one thread:
time slices taken by other processes do not count). The machine is shared: the load average is
printed at the start and the end, and the wall / CPU ratio over all timings.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from _common import WALL_CPU, cache_sizes, load, lscpu_value, timed  # this folder (run as a script)

MAX_ITER = 50
LANES = 32
SURFACE_D = (5, 7, 9, 11, 13, 15)
BB = (("bb72_12_6", "[[72,12,6]]"), ("bb144_12_12", "[[144,12,12]]"), ("bb288_12_18", "[[288,12,18]]"))


def median_time(fn, repeats: int) -> float:
    """Median CPU time of this thread over ``repeats`` calls (the decoders run on it: one thread), so
    time slices taken by other processes on a shared machine do not count."""
    return float(np.median([timed(fn)[0] for _ in range(repeats)]))


def lane_bytes(kernel: str, m: int, n: int, nnz: int, dt: int) -> int:
    """Per-lane working set of lane kernel ``kernel`` (see the module docstring), posteriors included."""
    if kernel == "minsum_lanes_i8_range":  # uint8 c1 / min2 / arg x 2, o1, o2, hp, syn; int16 post
        return 10 * m + nnz + 3 * n
    if kernel == "minsum_lanes_f32_range":  # float32 min1 / min2 x 2, o1, o2; uint8 arg / par x 2, hp, syn
        return 30 * m + nnz + 5 * n
    return m * (4 * dt + 8 + 2 + 1 + 2 * dt + 1) + nnz + n * (dt + 1)


def shared_bytes(dec) -> int:
    _, _, var_ptr, _, var_chks = dec.graph
    return var_ptr.nbytes + var_chks.nbytes + dec.prior_llr.nbytes


def dispatch(dec) -> tuple[str, int]:
    """(lane kernel a BpDecoder batch of >= 4 shots runs, its lane count)."""
    import inspect

    narrow = getattr(dec, "narrow", None)
    if narrow is None:
        return "minsum_lanes_range", LANES
    p = inspect.signature(getattr(narrow, "py_func", narrow)).parameters.get("lanes")
    lanes = LANES if p is None or p.default is inspect.Parameter.empty else int(p.default)
    return getattr(narrow, "__name__", str(narrow)), lanes


def problems(only: str | None, bb_rounds: tuple[int, ...]):
    """Yield (label, circuit builder kwargs)."""
    if only in (None, "bb"):
        for (code, label), r in zip(BB, bb_rounds):
            yield f"{label} r={r}", dict(code=code, rounds=r, noise="bb-uniform")
    if only in (None, "surface"):
        for d in SURFACE_D:
            yield f"surface d={d} r={d}", dict(code="surface", d=d, noise="sd6", memory_basis_only=True)


def build(kw: dict):
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    kw = dict(kw)
    code = kw.pop("code")
    c = build_circuit(code, p=0.003, basis="Z", **kw)
    return c, DecodingProblem.from_dem(decoding_dem(c))


def lanes_shots(nnz: int, budget: float, ns_guess: float = 4.0) -> int:
    """Shots (a multiple of 32, 32..512) for about ``budget`` seconds of 50-iteration decodes."""
    per_shot = ns_guess * 1e-9 * MAX_ITER * nnz
    return int(np.clip(budget / per_shot // LANES, 1, 16)) * LANES


def time_bp(dec, syn: np.ndarray, repeats: int, nnz: int) -> tuple[float, float]:
    dec.decode_batch(syn[:LANES])  # compile / warm
    its = []

    def run():
        dec.decode_batch(syn)
        its.append(int(np.sum(dec.last_info.iterations, dtype=np.int64)))

    t = median_time(run, repeats)
    return t / (int(np.median(its)) * nnz) * 1e9, t / syn.shape[0] * 1e3


def time_bposd(prob, circuit, shots: int, repeats: int, budget: float):
    """BP+OSD-CS10 on ``shots`` sampled syndromes, in two parts (see the module docstring).

    Returns (ms per shot, share of shots sent to OSD, ms per shot of the BP stage, ms per OSD-CS10
    call, mean BP iterations, failed shots OSD was timed on).
    """
    from qdecode.decoders.bposd import BpOsdDecoder

    syn = circuit.compile_detector_sampler(seed=0).sample(shots).astype(np.uint8)
    dec = BpOsdDecoder(prob, osd_method="osd_cs", osd_order=10, threads=1)
    bp = dec.bp  # its BP stage: posteriors kept (decode_soft_batch), as BP+OSD runs it
    bp.decode_soft_batch(syn[:LANES])
    t_bp = median_time(lambda: bp.decode_soft_batch(syn), repeats)
    conv = np.asarray(bp.last_info.converged)
    iters = float(np.mean(bp.last_info.iterations))
    failed = syn[~conv]
    osd = 0.0
    k = 0
    if failed.shape[0]:
        k = min(16, failed.shape[0])
        part = failed[:k]
        _, post = bp.decode_soft_batch(part)  # the posteriors BP+OSD orders its columns by
        dec.osd.solve_batch(part[:1], post[:1])  # compile / warm
        t1 = median_time(lambda: dec.osd.solve_batch(part[:1], post[:1]), 1)
        k = int(np.clip(budget // max(t1, 1e-6), 1, k))
        reps = repeats if t1 * k * repeats <= 2 * budget else 1
        osd = median_time(lambda: dec.osd.solve_batch(part[:k], post[:k]), reps) / k
    fail = 1.0 - float(conv.mean())
    ms_bp = t_bp / shots * 1e3
    return ms_bp + fail * osd * 1e3, fail, ms_bp, osd * 1e3, iters, k


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="timings per figure (median printed)")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per BP timing (sets the shot count)")
    ap.add_argument("--bb-rounds", default="12,12,18", help="rounds of the three BB codes")
    ap.add_argument("--only", choices=("bb", "surface"), help="only one family")
    args = ap.parse_args(argv)
    bb_rounds = tuple(int(x) for x in args.bb_rounds.split(","))
    from qdecode.decoders.bp import BpDecoder

    numba.set_num_threads(1)
    caches = cache_sizes()
    l2, l3 = caches["L2"], caches["L3"]
    load0 = load()
    print(f"- CPU: {lscpu_value('Model name')}, L2 {l2 >> 10} KiB per core, L3 {l3 >> 20} MiB; "
          f"numba {numba.__version__}")
    print(f"- load average at start: {load0}\n")

    size_rows, time_rows = [], []
    for label, kw in problems(args.only, bb_rounds):
        t0 = time.perf_counter()
        circuit, prob = build(kw)
        t_build = time.perf_counter() - t0
        m, n, nnz = prob.num_detectors, prob.num_errors, prob.H.nnz
        rng = np.random.default_rng(7)
        shots = lanes_shots(nnz, args.budget)
        syn = rng.integers(0, 2, (shots, m), dtype=np.uint8)
        bp_cells = []
        ws = []
        for bits in (0, 8):
            dec = BpDecoder(prob, max_iter=MAX_ITER, alpha=1.0, threads=1, bits=bits, frac_bits=3)
            kernel, lanes = dispatch(dec)
            ws.append((kernel, lanes, lane_bytes(kernel, m, n, nnz, dec.msg_dtype.itemsize), shared_bytes(dec)))
            bp_cells.append(time_bp(dec, syn, args.repeats, nnz))
        bshots = max(2 * LANES, shots)  # a lane kernel fed a realistic stream: at least 64 shots
        bposd = time_bposd(prob, circuit, bshots, args.repeats, args.budget)
        size_rows.append((label, m, n, nnz, t_build, ws))
        time_rows.append((label, shots, bp_cells, bshots, bposd))
        print(f"  done {label}: {time.perf_counter() - t0:.1f} s (build {t_build:.1f} s), load {load()}", flush=True)

    print("\n## Problem sizes and lane-kernel working set\n")
    kernels = " / ".join(sorted({w[0] for row in size_rows for w in row[5]}))
    print(f"L2 = {l2 >> 10} KiB per core, L3 = {l3 >> 20} MiB (lscpu). Per lane: the estimate in the docstring for "
          f"the lane kernel BpDecoder runs ({kernels}); all lanes = lanes x per lane + the shared graph and priors; "
          "fits = the smallest cache holding all lanes.\n")
    print("| problem | m | n | nnz | DEM build s | f64: B/lane | f64: lanes, KiB | f64 fits "
          "| bits=8: kernel | B/lane | lanes, KiB | fits |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---|")
    for label, m, n, nnz, tb, ws in size_rows:
        cells = []
        for i, (kernel, lanes, per_lane, shared) in enumerate(ws):
            tot = lanes * per_lane + shared
            fit = "L2" if tot <= l2 else ("L3" if tot <= l3 else "DRAM")
            cells += ([kernel] if i else []) + [str(per_lane), f"{lanes}, {tot / 1024:.0f}",
                                               f"{fit} ({tot / l2:.1f}x L2)"]
        print(f"| {label} | {m} | {n} | {nnz} | {tb:.1f} | " + " | ".join(cells) + " |")

    print("\n## Cost per shot and per edge-iteration (one thread)\n")
    print("BP: random syndromes, 50 iterations per shot. BP+OSD-CS10: sampled syndromes at p = 0.003, "
          "min-sum 80 iterations + OSD-CS10 on the shots BP fails; ms/shot = its BP + (to OSD) x OSD ms/call.\n")
    k8 = sorted({row[5][1][0] for row in size_rows})
    print(f"(bits=8 BP runs {' / '.join(k8)}: BpDecoder picks it; float64 runs minsum_lanes_range.)\n")
    print("| problem | BP shots | BP f64 ns/edge-it | BP f64 ms/shot | BP bits=8 ns/edge-it | BP bits=8 ms/shot "
          "| BP+OSD shots | BP+OSD ms/shot | to OSD | its BP ms/shot | mean BP it | OSD-CS10 ms/call (shots) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, shots, cells, bshots, (ms, fail, ms_bp, osd, it, k) in time_rows:
        (ns64, ms64), (ns8, ms8) = cells
        print(f"| {label} | {shots} | {ns64:.2f} | {ms64:.2f} | {ns8:.2f} | {ms8:.2f} | {bshots} | {ms:.3f} "
              f"| {fail:.1%} | {ms_bp:.3f} | {it:.1f} | {osd:.2f} ({k}) |")
    print(f"\nload average at end: {load()} (start: {load0}); wall / CPU time over all timings = "
          f"{WALL_CPU[0] / max(WALL_CPU[1], 1e-9):.2f} (1.00: never descheduled)")


if __name__ == "__main__":
    main()
