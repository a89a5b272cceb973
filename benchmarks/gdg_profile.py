"""Per-window GDG kernel timing without sampling or window bookkeeping (sliding-window latency work).

Builds the (W, F) sliding-window decoder with ``inner=gdg`` for a circuit, runs it once on sampled
shots while recording every inner decode's window index and syndrome, then times the GDG kernel
alone (one shot per call, preallocated work buffers, one thread) on each recorded window problem.
With ``--baseline FILE`` (a copy of an older ``qdecode/kernels/gdg.py``, e.g.
``git show HEAD:qdecode/kernels/gdg.py > /tmp/gdg_orig.py``) both kernels are timed in
alternation on the same window problems, and their outputs, convergence flags, iteration and
branch counts are compared (they must be identical). The copy is loaded with its named-tuple
classes renamed (a suffix from its source's hash; the module keeps the plain names as aliases):
numba dispatches a second class of the same name and fields through Python typing, ~0.5 ms per
call (``GdgWork``'s docstring).

    python benchmarks/gdg_profile.py --shots 200 --repeat 3 --baseline /tmp/gdg_orig.py

Prints p50 / p99 / max per inner decode (microseconds) for each kernel and the per-window ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import inspect
import os
import re
import sys
import tempfile
import time

import numpy as np


def load_kernel(path: str | None):
    if path is None:
        from qdecode.kernels import gdg

        return gdg
    with open(path, encoding="utf-8") as f:
        src = f.read()
    # numba's cache keys on the module's name and file: one file per source (a stale cache index that
    # names a class the file no longer has fails to load instead of missing), with its own class names
    digest = hashlib.sha1(src.encode()).hexdigest()[:10]
    suffix = "Base" + digest
    classes = re.findall(r"^class (\w+)\(NamedTuple\):", src, flags=re.M)
    for cls in classes:
        src = re.sub(rf"\b{cls}\b", cls + suffix, src)
    name = "gdg_kernel_" + os.path.splitext(os.path.basename(path))[0] + "_" + digest
    renamed = os.path.join(tempfile.gettempdir(), name + ".py")
    if not os.path.exists(renamed):
        with open(renamed, "w", encoding="utf-8") as f:
            f.write(src)
    spec = importlib.util.spec_from_file_location(name, renamed)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    for cls in classes:
        setattr(mod, cls, getattr(mod, cls + suffix))
    return mod


def record_windows(args):
    """Returns (window decoders, list of (k, syndrome)) of every inner decode on the sampled shots."""
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    circ = build_circuit(args.code, noise=args.noise, p=args.p, rounds=args.rounds, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    dets, _ = circ.compile_detector_sampler(seed=args.seed).sample(args.shots, separate_observables=True)
    dets = dets.astype(np.uint8)
    params = ["inner=gdg", f"W={args.W}", f"F={args.F}"] + list(args.param)
    dec = DecoderSpec.create("window", params).build(prob)
    calls = []
    for k, w in enumerate(dec.windows):
        inner = w.decoder
        orig = inner.decode_batch

        def hook(s, _k=k, _orig=orig):
            calls.append((_k, np.array(s, dtype=np.uint8)))
            return _orig(s)

        inner.decode_batch = hook
    dec.decode_batch(dets)
    items = [(k, s[i]) for k, s in calls for i in range(s.shape[0])]
    return dec, items


def time_kernel(mod, dec, items, clock=time.perf_counter_ns, max_iters=0):
    """Time ``mod.gdg_decode`` on every (window, syndrome); returns (us, outputs, conv, iters, branches).

    ``clock``: ``time.perf_counter_ns`` (wall) or ``time.thread_time_ns`` (this thread's CPU time,
    steadier on a loaded machine). ``max_iters``: the iteration budget (kernels that have one).
    """
    grouped = hasattr(mod, "GdgParams")  # gdg_decode(graph, syndrome, params, work, out); older copies: 19 arguments
    budget = (max_iters,) if not grouped and "max_iters" in inspect.signature(mod.gdg_decode.py_func).parameters \
        else ()
    works = {}
    kargs = {}  # window -> (graph, params) of a grouped kernel, in its own named tuples
    us = np.zeros(len(items))
    N = len(items)
    outs, conv, its, brs = [], np.zeros(N, bool), np.zeros(N, np.int64), np.zeros(N, np.int64)
    for idx, (k, s) in enumerate(items):
        g = dec.windows[k].decoder
        if k not in works:
            n, m = g.problem.num_errors, g.problem.num_detectors
            # older kernel copies (--baseline) name the work constructor ``_make_work``
            make = getattr(mod, "make_gdg_work", None) or getattr(mod, "_make_work")
            if hasattr(mod, "pushes_per_branch"):  # current kernel: record slots for replayed branches
                works[k] = make(n, m, g.graph[1].shape[0], g.max_guess, 1, g.side_step,
                                mod.pushes_per_branch(g.max_tree_depth, g.side_step))
            else:  # an older kernel copy (--baseline)
                works[k] = make(n, m, g.graph[1].shape[0], g.max_guess)
            if grouped:
                graph, params = g.kernel_args()
                kargs[k] = (mod.GdgGraph(*graph), mod.GdgParams(*params._replace(max_iters=max_iters)))
        out = np.zeros(g.problem.num_errors, np.uint8)
        if grouped:
            graph, params = kargs[k]
            t0 = clock()
            ok, it, br = mod.gdg_decode(graph, s, params, works[k], out)
        else:
            t0 = clock()
            ok, it, br = mod.gdg_decode(*g.graph, g.llr, s, g.pre_iter, g.step_iter, g.max_step, g.max_tree_depth,
                                        g.max_side_depth, g.side_step, g.new_n, g.low_error_mode, g.alpha,
                                        *budget, works[k], out)
        us[idx] = (clock() - t0) / 1e3
        outs.append(out)
        conv[idx], its[idx], brs[idx] = ok, it, br
    return us, outs, conv, its, brs


def summary(us):
    return f"p50 {np.percentile(us, 50):8.1f}  p99 {np.percentile(us, 99):8.1f}  max {us.max():8.1f}  " \
           f"mean {us.mean():7.1f} us"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", default="bb144_12_12")
    ap.add_argument("--noise", default="bb-uniform")
    ap.add_argument("--p", type=float, default=0.003)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--W", type=int, default=3)
    ap.add_argument("--F", type=int, default=1)
    ap.add_argument("--param", action="append", default=[], help="extra window/gdg parameter key=value")
    ap.add_argument("--shots", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timing passes (alternating kernels); median per item")
    ap.add_argument("--baseline", help="path of a baseline gdg kernel module to compare against")
    ap.add_argument("--cpu", action="store_true", help="time with the thread's CPU clock instead of wall time")
    ap.add_argument("--budgets", default="",
                    help="comma-separated max_iters budgets: time the current kernel with each and count the "
                         "decodes whose output differs from the unbudgeted one")
    ap.add_argument("--top", type=int, default=10, help="print the slowest N inner decodes")
    args = ap.parse_args(argv)

    import numba

    numba.set_num_threads(1)
    dec, items = record_windows(args)
    print(f"{len(items)} inner decodes over {args.shots} shots, {dec.num_windows} windows per shot")
    kernels = {"new": load_kernel(None)}
    if args.baseline:
        kernels["base"] = load_kernel(args.baseline)
    for mod in kernels.values():  # compile / warm
        time_kernel(mod, dec, items[:5])
    clock = time.thread_time_ns if args.cpu else time.perf_counter_ns
    times = {name: [] for name in kernels}
    results = {}
    for r in range(args.repeat):
        for name, mod in (kernels.items() if r % 2 == 0 else reversed(kernels.items())):
            us, outs, conv, its, brs = time_kernel(mod, dec, items, clock)
            times[name].append(us)
            results[name] = (outs, conv, its, brs)
    med = {name: np.median(np.stack(t), axis=0) for name, t in times.items()}
    for name in kernels:
        print(f"{name:5s} {summary(med[name])}")
    outs, conv, its, brs = results["new"]
    if "base" in kernels:
        bo, bc, bi, bb = results["base"]
        same = all(np.array_equal(a, b) for a, b in zip(outs, bo)) and np.array_equal(conv, bc) \
            and np.array_equal(its, bi) and np.array_equal(brs, bb)
        print(f"identical outputs/converged/iterations/branches on all {len(items)} decodes: {same}")
        ratio = med["new"] / np.maximum(med["base"], 1e-9)
        print(f"ratio new/base: median {np.median(ratio):.3f}; sum {med['new'].sum() / med['base'].sum():.3f}; "
              f"p99 {np.percentile(med['new'], 99) / np.percentile(med['base'], 99):.3f}")
    for b in [int(x) for x in args.budgets.split(",") if x.strip()]:
        runs = [time_kernel(kernels["new"], dec, items, clock, b) for _ in range(args.repeat)]
        bus = np.median(np.stack([r[0] for r in runs]), axis=0)
        _, bo, bc, bi, _ = runs[0]
        diff = sum(not np.array_equal(a, c) for a, c in zip(outs, bo))
        print(f"max_iters {b:5d}: {summary(bus)}; outputs differ on {diff} / {len(items)} decodes; "
              f"converged {bc.mean():.4f} (unbudgeted {conv.mean():.4f}); max iterations {bi.max()}")
    order = np.argsort(-med["new"])[: args.top]
    print("slowest (new): idx window us iters branches converged" + (" base_us" if "base" in kernels else ""))
    for i in order:
        line = f"  {i:5d} {items[i][0]:3d} {med['new'][i]:9.1f} {its[i]:6d} {brs[i]:4d} {bool(conv[i])}"
        if "base" in kernels:
            line += f" {med['base'][i]:9.1f}"
        print(line)


if __name__ == "__main__":
    main()
