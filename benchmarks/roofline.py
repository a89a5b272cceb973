"""Where the BP-family kernels stand against this machine's attainable peak (one core).

    python benchmarks/roofline.py [--repeats 5] [--shots 256] [--no-gdg]

Four measurements, each the median of ``--repeats`` runs, on one run of this script. Every timing is
the CPU time of the calling thread (``time.thread_time``; the kernels run on it, one thread), so time
slices taken by other processes on a shared machine do not count (their cache pollution still does);
the wall / CPU ratio over all timings is printed as a load indicator.

1. **Streaming copy** (a numba element loop and ``np.copyto``, float64) at L1 / L2 / L3 / DRAM
   footprints (source + destination = 1/2 L1d, 1/2 L2, 1/4 L3, 8x L3, sizes from ``lscpu``).
   GB/s counts the bytes read plus the bytes written (write-allocate traffic not counted).
2. **SIMD lane micro loop** in the kernels' ``[edge][lane]`` layout, L1-resident::

       for e: i = idx[e]
           for w < W: a = x[e, w]; s = st[i, w]; t = sat(a + s)
                      y[e, w] = t if a < s else a; st[i, w] = min(a, s)

   over int8 / int16 / int32 / float32 / float64 and ``W`` = 32 ... 256 lanes; ns per element
   (one ``(e, w)``). Integers saturate to ``+-lim``. numba types ``int8 + int8`` as int64, and
   LLVM then runs the whole loop in 64-bit lanes; the narrow rows use ``llvm.sadd.sat`` on the
   storage type (one ``vpaddsb`` / ``vpaddsw``) and compare only storage-typed values, so the
   vector code works on the storage width (the "int8 widened" row shows the naive loop).
3. **Kernels** on the [[144,12,12]] memory-Z DEM (``bb144_12_12``, bb-uniform p = 0.003, 12 rounds),
   one thread, uniformly random syndromes (no shot converges, so each runs every iteration),
   ``max_iter`` 50: ns per edge-iteration = time / (sum over shots of iterations x nnz).
   Relay-BP runs ``pre_iter=50, legs=2, leg_iter=50`` (its iterations come from ``last_info``);
   GDG (``new_n = n``) counts its iterations from ``last_info`` against the full graph's nnz,
   although decimation shrinks the graph it iterates on (so its figure is optimistic).
   Optional kernels, skipped (with the reason printed) when not importable or when the call
   fails: ``qdecode.kernels.minsum_lanes_narrow`` (``minsum_lanes_i8_range`` on the bits=8 arrays,
   held against the int8 bound, its check state being uint8 with int16 sums;
   ``minsum_lanes_f32_range`` on the float32 arrays; both called with the arguments of
   ``minsum_lanes_range``, matched by parameter name, at their default lane count and at 32) and
   ``qdecode.kernels.relay_lanes.relay_lanes_range`` (the arguments of ``relay_decode_range`` and
   ``lanes``), float64 and bits=8, on 32 shots.

   The **ALU bound** of a kernel of message dtype ``dt``::

       bound_ns(dt) = micro_ns(dt) x 41 / 6

   ``micro_ns`` is the micro loop's best ns per element over the lane counts (its attainable
   peak), 6 the element operations + accesses per element of the micro loop, 41 those of one
   edge-lane-iteration of the compressed-state flooding sweep (rough count). ``reached`` =
   bound / measured; the micro loop is re-timed right before each kernel timing, so that both
   see the same load. The scalar kernels (one shot at a time) are held against the same SIMD
   bound: their distance to it is what lanes would buy.
4. **Where the time goes** (float64 and fixed-point lanes): numba copies of one flooding sweep
   of :func:`qdecode.kernels.minsum_lanes._step` over the same arrays, built up in stages
   (index loads only; + check-to-variable messages; + variable update and v2c fold into the next
   check state; + hard decisions and the parity / unsatisfied count), each timed over 50
   iterations from a fresh initial state of 32 random-syndrome lanes, in alternation with the
   real lane kernel on the same 32 shots (the last row). The increments are an
   approximate decomposition: stages overlap in the out-of-order core, and the cut points
   change what LLVM can fuse.

The machine is shared and noisy: the load average is printed before and after; compare ratios.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import time

import numba
import numpy as np
from _common import WALL_CPU, cache_sizes, load, lscpu_value, timed  # this folder (run as a script)
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from qdecode.kernels.arith import clip
from qdecode.kernels.minsum import check_magnitude, fold_min, negative, signed
from qdecode.kernels.minsum_lanes import load_lane, make_lane_state

OPS_SWEEP = 41  # element operations + accesses per edge-lane-iteration of the compressed-state sweep
OPS_MICRO = 6  # ... per element of the micro loop
LANES = 32  # the lane kernel's lane count (qdecode.kernels.minsum_lanes.LANES)
MAX_ITER = 50


# ------------------------------------------------------------------ machine


def machine_lines() -> list[str]:
    import llvmlite
    import llvmlite.binding as llvm

    c = cache_sizes()
    return [
        f"- CPU: {lscpu_value('Model name')} ({os.cpu_count()} logical CPUs), L1d {c['L1d'] >> 10} KiB, "
        f"L2 {c['L2'] >> 10} KiB, L3 {c['L3'] >> 20} MiB per instance",
        f"- numba {numba.__version__}, llvmlite {llvmlite.__version__}, LLVM "
        f"{'.'.join(map(str, llvm.llvm_version_info))}, numpy {np.__version__}, Python {platform.python_version()}",
        f"- numba target: {llvm.get_host_cpu_name()}",
    ]


def times(fn, repeats: int) -> list[float]:
    return [timed(fn)[0] for _ in range(repeats)]


# ------------------------------------------------------------------ 1. streaming copy


@numba.njit(nogil=True)
def _copy_loop(src, dst, reps):
    for _ in range(reps):
        for i in range(src.shape[0]):
            dst[i] = src[i]


def stream_rows(repeats: int) -> list[tuple[str, int, float, float]]:
    c = cache_sizes()
    levels = [("L1", c["L1d"] // 2), ("L2", c["L2"] // 2), ("L3", c["L3"] // 4), ("DRAM", 8 * c["L3"])]
    rows = []
    for name, footprint in levels:
        n = footprint // 16  # two float64 arrays
        src = np.random.default_rng(0).random(n)
        dst = np.empty_like(src)
        reps = max(1, int(50e6 // footprint))  # ~50 MB moved per timing
        _copy_loop(src, dst, 1)

        def numpy_copy(reps=reps, src=src, dst=dst):
            for _ in range(reps):
                np.copyto(dst, src)

        t_nb = times(lambda reps=reps, src=src, dst=dst: _copy_loop(src, dst, reps), repeats)
        t_np = times(numpy_copy, repeats)
        moved = 2 * src.nbytes * reps
        rows.append((name, footprint, moved / np.median(t_nb) / 1e9, moved / min(t_nb) / 1e9,
                     moved / np.median(t_np) / 1e9, moved / min(t_np) / 1e9))
    return rows


# ------------------------------------------------------------------ 2. SIMD lane micro loop


@intrinsic
def sadd_sat(typingctx, a, b):
    """``llvm.sadd.sat`` on the operands' own (signed integer) type: no widening to int64."""
    if isinstance(a, types.Integer) and a.signed and a == b:
        def codegen(context, builder, sig, args):
            t = args[0].type
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t]), f"llvm.sadd.sat.i{t.width}")
            return builder.call(fn, args)

        return a(a, b), codegen
    return None


def make_micro(kind: str):
    """The micro loop (one fold per element: add, clip, compare, two stores) for one arithmetic ``kind``:
    ``"saturating"`` (``llvm.sadd.sat`` on the integer storage type, then clipped to ``[nlim, lim]``),
    ``"widened"`` (numba's int64 ``a + s``, clipped) or ``"float"`` (``a + s``, not clipped). ``kind`` is a
    compile-time constant: numba prunes the branches the loop does not take."""
    SATURATING = kind == "saturating"
    CLIPPED = kind != "float"

    @numba.njit(nogil=True)
    def micro(x, st, y, idx, lim, nlim, reps):
        E, W = x.shape
        for _ in range(reps):
            for e in range(E):
                i = idx[e]
                for w in range(W):
                    a = x[e, w]
                    s = st[i, w]
                    if SATURATING:
                        t = sadd_sat(a, s)  # storage type (lim, nlim are too)
                    else:
                        t = a + s  # numba: int64 for integers
                    if CLIPPED:
                        t = t if t < lim else lim
                        t = t if t > nlim else nlim
                    y[e, w] = t if a < s else a
                    st[i, w] = a if a < s else s

    return micro


_micro_int = make_micro("saturating")
_micro_int_widened = make_micro("widened")
_micro_float = make_micro("float")


MICRO_DTYPES = ("int8", "int16", "int32", "float32", "float64")
MICRO_LANES = (32, 64, 128, 256)


def micro_runner(dtype: str, W: int, widened: bool = False):
    """A callable timing the micro loop once: returns ns per element."""
    dt = np.dtype(dtype)
    E = int(np.clip(12288 // (2 * W * dt.itemsize), 4, 64))  # x + y ~12 KiB: L1-resident with st
    M = max(2, E // 4)
    rng = np.random.default_rng(1)
    lim = dt.type(100)
    x = rng.integers(-100, 101, (E, W)).astype(dt)
    st = rng.integers(-100, 101, (M, W)).astype(dt)
    y = np.zeros_like(x)
    idx = rng.integers(0, M, E).astype(np.int32)
    fn = _micro_float if dt.kind == "f" else (_micro_int_widened if widened else _micro_int)
    args = (x, st, y, idx, lim, dt.type(-100))
    fn(*args, 1)
    reps = max(1, int(16e6 // (E * W)))  # ~16M elements (a few ms) per timing

    def once() -> float:
        return timed(lambda: fn(*args, reps))[0] / (reps * E * W) * 1e9

    return once


def micro_ns(dtype: str, W: int, repeats: int, widened: bool = False) -> float:
    once = micro_runner(dtype, W, widened)
    return float(np.median([once() for _ in range(repeats)]))


def paired(run, micro, repeats: int) -> tuple[float, int, float]:
    """Median seconds of ``run()`` (which returns its iteration count), its iterations, and the median
    of ``micro()`` timed right before each run (so kernel and bound see the same machine load)."""
    ts, its, ms = [], [], []
    for _ in range(repeats):
        ms.append(micro())
        t, it = timed(run)
        its.append(it)
        ts.append(t)
    return float(np.median(ts)), int(np.median(its)), float(np.median(ms))


def micro_table(repeats: int) -> dict[tuple[str, int], float]:
    res = {}
    for dtype in MICRO_DTYPES:
        for W in MICRO_LANES:
            res[(dtype, W)] = micro_ns(dtype, W, repeats)
    for W in MICRO_LANES:
        res[("int8 widened", W)] = micro_ns("int8", W, repeats, widened=True)
    return res


# ------------------------------------------------------------------ 4. one flooding sweep, in stages
# The stages call the kernel's own min-sum helpers (qdecode.kernels.minsum) and lane loader, so that
# they time the same arithmetic as the kernel.


def _init_lanes(var_ptr, var_chks, llr0, syndromes, msg_lim, dt):
    """A :class:`~qdecode.kernels.minsum_lanes.LaneState` of ``len(syndromes)`` lanes, lane ``w`` <- shot ``w``
    (shared priors), check state row 0, as the lane kernel loads them."""
    W = syndromes.shape[0]
    st = make_lane_state(var_chks.shape[0], syndromes.shape[1], var_ptr.shape[0] - 1, W, dt)
    for w in range(W):
        load_lane(w, w, var_ptr, var_chks, llr0, syndromes, False, 0, msg_lim, st)
    return st


def make_sweep(level: int):
    """One flooding sweep of the lane kernel up to stage ``level`` (0..3), a compile-time constant."""
    LEVEL = level

    @numba.njit(nogil=True)
    def sweep(var_ptr, var_chks, llr0, syndromes, cur, alpha, alpha_num, alpha_shift, beta, msg_lim, post_lim,
              sgn, min1, min2, arg, par, parity, unsat, post, hard, out1, out2, cbuf, total, a_f, a_num, a_shift,
              acc):
        n = var_ptr.shape[0] - 1
        m = syndromes.shape[1]
        W = unsat.shape[0]
        nxt = 1 - cur
        min1_c, min2_c, arg_c, par_c = min1[cur], min2[cur], arg[cur], par[cur]
        min1_n, min2_n, arg_n, par_n = min1[nxt], min2[nxt], arg[nxt], par[nxt]
        if LEVEL >= 1:
            for w in range(W):
                a_f[w], a_num[w], a_shift[w] = alpha, alpha_num, alpha_shift
            for i in range(m):
                for w in range(W):
                    out1[i, w] = check_magnitude(min1_c[i, w], a_f[w], a_num[w], a_shift[w], beta, msg_lim)
                    out2[i, w] = check_magnitude(min2_c[i, w], a_f[w], a_num[w], a_shift[w], beta, msg_lim)
                    if LEVEL >= 2:  # the next state's reset belongs to the fold (fused here, as in the kernel)
                        min1_n[i, w] = msg_lim
                        min2_n[i, w] = msg_lim
                        arg_n[i, w] = -1
                        par_n[i, w] = syndromes[w, i] & 1
        for j in range(n):
            lo = var_ptr[j]
            hi = var_ptr[j + 1]
            if LEVEL == 0:
                for k in range(lo, hi):
                    acc[0] += var_chks[k]
                continue
            for w in range(W):
                total[w] = llr0[0, j]
            for k in range(lo, hi):
                i = var_chks[k]
                for w in range(W):
                    c = signed(out2[i, w] if arg_c[i, w] == j else out1[i, w], par_c[i, w] ^ sgn[k, w])
                    cbuf[k - lo, w] = c
                    total[w] += c
            for w in range(W):
                total[w] = clip(total[w], post_lim)  # (decode_batch keeps no posteriors: no store)
            if LEVEL >= 2:
                for k in range(lo, hi):
                    i = var_chks[k]
                    for w in range(W):
                        v = clip(total[w] - cbuf[k - lo, w], msg_lim)
                        neg = negative(v)
                        sgn[k, w] = neg
                        par_n[i, w] ^= neg
                        m1, m2, ag = fold_min(abs(v), j, min1_n[i, w], min2_n[i, w], arg_n[i, w])
                        min1_n[i, w] = m1
                        min2_n[i, w] = m2
                        arg_n[i, w] = ag
            if LEVEL >= 3:
                for w in range(W):
                    h = negative(total[w])
                    d = h ^ hard[j, w]
                    hard[j, w] = h
                    if d:
                        for k in range(lo, hi):
                            i = var_chks[k]
                            p = parity[i, w] ^ 1
                            parity[i, w] = p
                            unsat[w] += 2 * np.int64(p) - 1

    return sweep


STAGES = ("index loads only", "+ check-to-variable (c2v) messages", "+ variable update / v2c fold",
          "+ hard decision / parity (syndrome) test")
_SWEEPS = [make_sweep(level) for level in range(4)]


def stage_times(dec, syndromes: np.ndarray, repeats: int, W: int = LANES) -> list[float]:
    """ns per edge-lane-iteration of each cumulative stage, on BpDecoder ``dec``'s arrays."""
    _, _, var_ptr, _, var_chks = dec.graph
    llr0 = dec.prior_llr
    dt = llr0.dtype
    nnz = var_chks.shape[0]
    m = syndromes.shape[1]
    maxdeg = int(np.max(np.diff(var_ptr)))
    syn = np.ascontiguousarray(syndromes[:W])
    scratch = (np.zeros((m, W), dt), np.zeros((m, W), dt), np.zeros((maxdeg, W), dt), np.zeros(W, dt),
               np.zeros(W, np.float64), np.zeros(W, np.int64), np.zeros(W, np.int64), np.zeros(1, np.int64))
    consts = (dec.alpha, dec.alpha_num, 8, dec.beta, dec.msg_lim, dec.post_lim)
    out = []
    real_run = lanes_runner(reference_lanes(), dec, syn, W)  # the real kernel, W shots on W lanes
    real_run()
    real = []
    for level, sweep in enumerate(_SWEEPS):
        def run(sweep=sweep, level=level):
            cur = 0
            for _ in range(MAX_ITER):
                sweep(var_ptr, var_chks, llr0, syn, cur, *consts, *state, *scratch)
                if level >= 2:  # the stages that fold the next check state alternate, as the kernel
                    cur = 1 - cur

        ts = []
        for _ in range(repeats + 1):  # the first run compiles
            state = tuple(_init_lanes(var_ptr, var_chks, llr0, syn, dec.msg_lim, dt))  # LaneState's field order
            ts.append(timed(run)[0])
            real.append(timed(real_run)[0])
        out.append(float(np.median(ts[1:])) / (MAX_ITER * nnz * W) * 1e9)
    out.append(float(np.median(real)) / (MAX_ITER * nnz * W) * 1e9)
    return out


# ------------------------------------------------------------------ 3. kernels


def bb144_problem():
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    c = build_circuit("bb144_12_12", noise="bb-uniform", p=0.003, basis="Z")
    return DecodingProblem.from_dem(decoding_dem(c))


def time_decoder(dec, syndromes: np.ndarray, batch: int, repeats: int, nnz: int, micro):
    """(ns per edge-iteration, mean iterations per shot, paired micro ns): batches of ``batch`` shots."""
    S = syndromes.shape[0]
    dec.decode_batch(syndromes[: min(S, batch)])  # compile / warm

    def run():
        total = 0
        for a in range(0, S, batch):
            dec.decode_batch(syndromes[a:a + batch])
            total += int(np.sum(dec.last_info.iterations, dtype=np.int64))
        return total

    t, it, m = paired(run, micro, repeats)
    return t / (it * nnz) * 1e9, it / S, m


def call_by_name(fn, values: dict, **override):
    """Call numba kernel ``fn`` with its parameters taken by name from ``values`` (defaults otherwise)."""
    params = inspect.signature(getattr(fn, "py_func", fn)).parameters
    vals = {**values, **override}
    args = []
    for name, p in params.items():
        if name in vals:
            args.append(vals[name])
        elif p.default is not inspect.Parameter.empty:
            args.append(p.default)
        else:
            raise TypeError(f"no value for parameter {name!r}")
    return tuple(args)


def default_lanes(fn, fallback: int) -> int:
    p = inspect.signature(getattr(fn, "py_func", fn)).parameters.get("lanes")
    return fallback if p is None or p.default is inspect.Parameter.empty else int(p.default)


# (function names tried in order, BpDecoder arguments whose arrays it takes, dtype of its check state)
NARROW = ((("minsum_lanes_i8_range", "minsum_lanes_range"), dict(bits=8), "int8"),
          (("minsum_lanes_f32_range",), dict(bits=0, dtype="float32"), "float32"))


def lane_values(dec, syndromes: np.ndarray) -> dict:
    """The arguments of ``minsum_lanes_range`` by name, from BpDecoder ``dec``'s arrays (outputs fresh): the
    grouped ones (``graph``, ``prm``, ``out``: TannerGraph, MinSumParams, BpOut) and, for a tree from before the
    grouping, the same values one by one (``out`` holds the same arrays as ``hard_out`` ...)."""
    from qdecode.decoders.bp import ALPHA_SHIFT
    from qdecode.kernels.bp_args import BpOut, MinSumParams

    S, n = syndromes.shape[0], dec.problem.num_errors
    _, _, var_ptr, _, var_chks = dec.graph
    prm = MinSumParams(dec.max_iter, dec.alpha, dec.alpha_num, ALPHA_SHIFT, dec.adaptive, dec.beta, dec.msg_lim,
                       dec.post_lim)
    out = BpOut(np.zeros((S, n), np.uint8), np.zeros((0, n), dec.msg_dtype), np.zeros(S, np.bool_),
                np.zeros(S, np.int32))
    return dict(graph=dec.graph, prm=prm, out=out, var_ptr=var_ptr, var_chks=var_chks, llr0=dec.prior_llr,
                syndromes=syndromes, **prm._asdict(), hist_k=1, start=0, stop=S, hard_out=out.hard,
                post_out=out.post, converged_out=out.converged, iters_out=out.iters)


def lanes_runner(fn, dec, syndromes: np.ndarray, lanes: int):
    """``run()`` calling lane kernel ``fn`` on ``dec``'s arrays; returns the iterations it ran."""
    values = lane_values(dec, syndromes)
    args = call_by_name(fn, values, lanes=lanes)

    def run() -> int:
        fn(*args)
        return int(values["iters_out"].sum())

    return run


def reference_lanes():
    from qdecode.kernels.minsum_lanes import minsum_lanes_range

    return minsum_lanes_range


def optional_narrow(prob, syndromes, repeats, nnz, micros):
    """``qdecode.kernels.minsum_lanes_narrow`` kernels when importable, called as ``minsum_lanes_range``.

    They take the arrays of the reference lane kernel (BpDecoder's, by parameter name); each runs at
    its own default lane count and at 32 lanes.
    """
    try:
        from qdecode.kernels import minsum_lanes_narrow as mod
    except ImportError as exc:
        return [], [f"minsum_lanes_narrow: not importable ({exc})"]
    from qdecode.decoders.bp import BpDecoder

    rows, notes = [], []
    S = syndromes.shape[0]
    for names, kw, state_dtype in NARROW:
        fn = next((getattr(mod, x) for x in names if hasattr(mod, x)), None)
        if fn is None:
            notes.append(f"minsum_lanes_narrow: none of {names}")
            continue
        ref = BpDecoder(prob, max_iter=MAX_ITER, alpha=1.0, threads=1, frac_bits=3, **kw)
        for lanes in sorted({default_lanes(fn, LANES), LANES}, reverse=True):
            try:
                run = lanes_runner(fn, ref, syndromes, lanes)
                run()
            except Exception as exc:  # noqa: BLE001 - a kernel being written: report and move on
                notes.append(f"minsum_lanes_narrow.{fn.__name__}: call failed ({type(exc).__name__}: "
                             f"{str(exc)[:160]})")
                break
            t, it, mic = paired(run, micros[state_dtype], repeats)
            rows.append((f"narrow {fn.__name__} direct ({lanes} lanes)", state_dtype, t / (it * nnz) * 1e9, it / S,
                         mic))
    return rows, notes


def optional_relay_lanes(prob, syndromes, repeats, nnz, relay_kw, micros):
    """The Relay-BP lane kernels (float64 / int32 ``relay_lanes_range``, 8-bit ``relay_lanes_i8_range``),
    called like ``relay_decode_range`` (+ ``lanes``)."""
    from qdecode.decoders.bp import ALPHA_SHIFT
    from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder
    from qdecode.kernels.relay import MessageArith, RelayGraph, RelayOut, RelaySchedule
    from qdecode.kernels.relay_lanes import LANES as RELAY_LANES
    from qdecode.kernels.relay_lanes import relay_lanes_range
    from qdecode.kernels.relay_lanes_narrow import RELAY_NARROW_LANES, relay_lanes_i8_range

    rows, notes = [], []
    S, n = syndromes.shape[0], prob.num_errors
    for fn, bits, dtype, lanes in ((relay_lanes_range, 0, "float64", RELAY_LANES),
                                   (relay_lanes_range, 8, "int32", RELAY_LANES),
                                   (relay_lanes_i8_range, 8, "int8", RELAY_NARROW_LANES)):
        d = RelayBpDecoder(prob, bits=bits, **relay_kw)
        lo, hi = d.gamma_interval
        out = RelayOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32),
                       np.zeros(S, np.int32), np.zeros(S, np.float64))
        outs = dict(out=out, hard_out=out.hard, converged_out=out.converged, iters_out=out.iterations,
                    legs_out=out.legs, weight_out=out.weight)
        values = dict(
            graph=RelayGraph(d.var_ptr, d.var_chks, d.prior_llr, d.weight_llr),
            sched=RelaySchedule(d.gamma0, lo, hi, d.gammas, d.pre_iter, d.legs, d.leg_iter, d.stop_after),
            arith=MessageArith(d.alpha, d.alpha_num, ALPHA_SHIFT, GAMMA_FRAC_BITS, d.msg_lim, d.post_lim),
            seed=np.uint64(d.seed), syndromes=syndromes, lanes=lanes, start=0, stop=S, **outs)
        args = call_by_name(fn, values)
        fn(*args)
        t, it, mic = paired(lambda args=args, fn=fn: fn(*args) or int(outs["iters_out"].sum()), micros[dtype],
                            repeats)
        rows.append((f"{fn.__name__} direct bits={bits} ({lanes} lanes)", dtype, t / (it * nnz) * 1e9, it / S, mic))
    return rows, notes


STATE_DTYPE = {"minsum_lanes_i8_range": "int8", "minsum_lanes_f32_range": "float32"}  # narrow kernels' state


def dispatch(dec) -> tuple[str, str]:
    """(kernel a BpDecoder batch of >= 4 flooding min-sum shots runs, the dtype of its state)."""
    narrow = getattr(dec, "narrow", None)
    if narrow is not None:
        name = getattr(narrow, "__name__", str(narrow))
        return name, STATE_DTYPE.get(name, str(dec.msg_dtype))
    return "minsum_lanes_range", str(dec.msg_dtype)


def kernel_rows(prob, shots: int, repeats: int, gdg: bool, micros: dict):
    from qdecode import decoder
    from qdecode.decoders.bp import BpDecoder

    nnz = prob.H.nnz
    rng = np.random.default_rng(2026)
    syn = rng.integers(0, 2, (shots, prob.num_detectors), dtype=np.uint8)
    few = syn[: max(4, shots // 8)]
    rows, notes = [], []

    def bp(**kw):
        return BpDecoder(prob, max_iter=MAX_ITER, alpha=1.0, threads=1, frac_bits=3, **kw)

    ref = reference_lanes()
    for label, kw in (("float64", dict(bits=0)), ("float32", dict(bits=0, dtype="float32")),
                      ("bits=8 (int32)", dict(bits=8))):
        dec = bp(**kw)
        run = lanes_runner(ref, dec, syn, LANES)
        run()
        t, it, mic = paired(run, micros[str(dec.msg_dtype)], repeats)
        rows.append((f"reference lanes minsum_lanes_range {label} ({LANES} lanes)", str(dec.msg_dtype),
                     t / (it * nnz) * 1e9, it / shots, mic))
    cases = []
    for label, kw in (("float64", dict(bits=0)), ("float32", dict(bits=0, dtype="float32")), ("bits=8", dict(bits=8))):
        dec = bp(**kw)
        kernel, dtype = dispatch(dec)
        cases.append((f"BpDecoder {label} batch -> {kernel}", dtype, dec, syn, shots))
    cases += [
        ("BpDecoder float64, 1-shot batches (scalar kernel)", "float64", bp(bits=0), few, 1),
        ("BpDecoder bits=8, 1-shot batches (scalar kernel)", "int32", bp(bits=8), few, 1),
        ("BpDecoder float64 layered (scalar kernel)", "float64", bp(bits=0, schedule="layered"), few, len(few)),
    ]
    relay_kw = dict(pre_iter=MAX_ITER, legs=2, leg_iter=MAX_ITER)  # one thread: numba.set_num_threads(1)
    relay_syn = syn[: max(2, shots // 16)]
    for label, bits, dtype in (("float64", 0, "float64"), ("bits=8", 8, "int32")):
        cases.append((f"Relay-BP {label} (50 + 2x50 it), 1-shot batches (scalar kernel)", dtype,
                      decoder("relay-bp", prob, bits=bits, **relay_kw), relay_syn, 1))
    if gdg:
        gsyn = syn[: max(2, shots // 64)]
        cases.append(("GDG float64 (new_n = n; approx.)", "float64", decoder("gdg", prob, new_n=prob.num_errors),
                      gsyn, len(gsyn)))
    for name, dtype, dec, s, batch in cases:
        ns, it, mic = time_decoder(dec, s, batch, repeats, nnz, micros[dtype])
        rows.append((name, dtype, ns, it, mic))
    for extra, note in (optional_narrow(prob, syn, repeats, nnz, micros),
                        optional_relay_lanes(prob, syn[:2 * LANES], repeats, nnz, relay_kw, micros)):
        rows.extend(extra)
        notes.extend(note)
    return rows, notes, syn


# ------------------------------------------------------------------ main


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="timings per measurement (the median is printed)")
    ap.add_argument("--shots", type=int, default=256, help="random-syndrome shots of the lane kernels")
    ap.add_argument("--no-gdg", action="store_true", help="skip GDG")
    args = ap.parse_args(argv)
    numba.set_num_threads(1)
    load0 = load()
    print("## Machine\n")
    print("\n".join(machine_lines()))
    print(f"- load average (1, 5, 15 min) at start: {load0}\n")

    print("## Streaming copy (float64, read + write bytes)\n")
    print("| level | footprint | numba loop GB/s median | best | np.copyto GB/s median | best |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, fp, nb_med, nb_best, np_med, np_best in stream_rows(args.repeats):
        size = f"{fp >> 20} MiB" if fp >= 1 << 20 else f"{fp >> 10} KiB"
        print(f"| {name} | {size} | {nb_med:.1f} | {nb_best:.1f} | {np_med:.1f} | {np_best:.1f} |")

    print("\n## SIMD lane micro loop (L1-resident, ns per element)\n")
    micro = micro_table(args.repeats)
    print("| dtype | " + " | ".join(f"W={W}" for W in MICRO_LANES) + " | best | bound x41/6 |")
    print("|---|" + "---:|" * (len(MICRO_LANES) + 2))
    best, best_w = {}, {}
    for dtype in (*MICRO_DTYPES, "int8 widened"):
        vals = [micro[(dtype, W)] for W in MICRO_LANES]
        best[dtype] = min(vals)
        best_w[dtype] = MICRO_LANES[int(np.argmin(vals))]
        print(f"| {dtype} | " + " | ".join(f"{v:.4f}" for v in vals)
              + f" | {best[dtype]:.4f} | {best[dtype] * OPS_SWEEP / OPS_MICRO:.3f} |")
    print("\n(int8 widened: the same loop written as plain numba arithmetic, which runs in int64 lanes.)")

    print("\n## Kernels on [[144,12,12]] memory-Z (one thread, random syndromes, max_iter 50)\n")
    t0 = time.perf_counter()
    prob = bb144_problem()
    print(f"m = {prob.num_detectors}, n = {prob.num_errors}, nnz = {prob.H.nnz} "
          f"(DEM built in {time.perf_counter() - t0:.1f} s)\n")
    micros = {dt: micro_runner(dt, best_w[dt]) for dt in MICRO_DTYPES}
    rows, notes, syn = kernel_rows(prob, args.shots, args.repeats, not args.no_gdg, micros)
    print(f"bound(dt) = micro_ns(dt, best W of the table above) x {OPS_SWEEP}/{OPS_MICRO}, the micro loop re-timed "
          "right before each kernel timing (same load); reached = bound / measured\n")
    print("| kernel | dtype | iterations/shot | ns/edge-iteration | micro ns (W) | bound ns | reached |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, dtype, ns, it, mic in rows:
        bound = mic * OPS_SWEEP / OPS_MICRO
        print(f"| {name} | {dtype} | {it:.0f} | {ns:.3f} | {mic:.4f} ({best_w[dtype]}) | {bound:.3f} "
              f"| {bound / ns:.0%} |")
    for note in notes:
        print(f"\n- skipped: {note}")

    print("\n## Where the time goes: the reference lanes kernel's flooding sweep in stages (32 lanes; approximate)\n")
    from qdecode.decoders.bp import BpDecoder

    cols = []
    for label, bits in (("float64", 0), ("bits=8 (int32)", 8)):
        dec = BpDecoder(prob, max_iter=MAX_ITER, alpha=1.0, threads=1, bits=bits, frac_bits=3)
        ts = stage_times(dec, syn, args.repeats)
        cols.append((label, ts[:-1], ts[-1]))
    print("| stage | " + " | ".join(f"{c[0]} cumulative | increment | share" for c in cols) + " |")
    print("|---|" + "---:|---:|---:|" * len(cols))
    for s, stage in enumerate(STAGES):
        cells = []
        for _, ts, _ in cols:
            inc = ts[s] - (ts[s - 1] if s else 0.0)
            cells += [f"{ts[s]:.3f}", f"{inc:+.3f}", f"{inc / ts[-1]:.0%}"]
        print(f"| {stage} | " + " | ".join(cells) + " |")
    cells = []
    for _, ts, real in cols:
        cells += [f"{real:.3f}", f"{real - ts[-1]:+.3f}", f"copy / kernel = {ts[-1] / real:.2f}"]
    print("| the reference kernel minsum_lanes_range itself, same 32 shots, timed in alternation "
          "(increment: lane load / retire, less what the copy does differently) | " + " | ".join(cells) + " |")
    print("\nns per edge-lane-iteration; stages are cumulative; share = increment / the full copy; increments "
          "overlap in the core, so read them as an approximate split.")
    print(f"\nload average at end: {load()} (start: {load0}); timings are thread CPU time, wall / CPU over all "
          f"timings = {WALL_CPU[0] / max(WALL_CPU[1], 1e-9):.2f} (1.00: the runs were never descheduled)")


if __name__ == "__main__":
    main()
