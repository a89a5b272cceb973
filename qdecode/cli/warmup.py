"""``qdecode warmup``: fill the compile cache, so that the first real run starts at once.

With an empty compile cache (:mod:`qdecode.compile_cache`) a decoder's first call compiles its numba
kernels: tens of seconds for the BP+OSD family on one core (``benchmarks/results/cold_start.json``).
``qdecode warmup`` pays that once, up front and in parallel: each decoder is built on a small
circuit-level problem (stim's rotated surface code, d = 3, 3 rounds, p = 0.003, decomposed DEM) in
its own process, and decodes a batch of shots through the path ``predict`` and ``sweep`` take
(bit-packed batch, 64 shots: the lane kernels); ``--timed`` adds the real-time path of ``--latency``
and ``--confidence`` the soft-output path. The kernels do not depend on the problem's size, so the
cache then serves every DEM. ``make install`` runs it for :data:`DEFAULT_DECODERS`.

Output (stdout): one line per decoder with the kernels compiled and the time taken, ``0 kernels``
when the cache already held them.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

from qdecode.cli.help_text import QUANTUM_DECODER_NAMES, HelpFormatter
from qdecode.errors import InputError

#: The decoders ``qdecode warmup`` compiles without ``--decoder``: the native ones with the longest first
#: compile (BP, BP+OSD, Relay-BP) and union-find.
DEFAULT_DECODERS = ("bposd", "relay-bp", "bp", "uf")
#: Shots decoded per path: enough for the lane kernels (which take 4 or more shots).
SHOTS = 64


class WarmupResult(NamedTuple):
    """What warming one decoder did: ``kernels`` numba compiled (0: all from the cache) in ``compile_s``
    seconds, out of ``wall_s`` seconds in all (build and decode included)."""

    label: str
    kernels: int
    compile_s: float
    wall_s: float


def add_parser(sub) -> None:
    p = sub.add_parser(
        "warmup",
        help="compile the decoders' kernels into the compile cache (once, after installing)",
        description=(
            "Compile the numba kernels of the given decoders into qdecode's compile cache, each decoder in "
            "its own process, by decoding a few shots of a small surface-code problem. Later runs load "
            "them in about a second instead of compiling them on first use."
        ),
        formatter_class=HelpFormatter,
    )
    p.add_argument("--decoder", action="append", default=[], metavar="DECODER",
                   help=f"decoder name or label, repeatable (default: {', '.join(DEFAULT_DECODERS)}); one of: "
                        f"{QUANTUM_DECODER_NAMES}")
    p.add_argument("--jobs", type=int, default=None,
                   help="processes compiling at once (default: the number of CPUs, at most one per decoder)")
    p.add_argument("--timed", action="store_true", help="also compile the real-time path (sweep --latency)")
    p.add_argument("--confidence", action="store_true",
                   help="also compile the soft-output path (--gap-out, confidence), where the decoder has one")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    p.set_defaults(run=run)


def warm_problem():
    """The small circuit-level problem every decoder is warmed on (module docstring)."""
    import stim

    from qdecode.problem import DecodingProblem

    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                     after_clifford_depolarization=0.003, after_reset_flip_probability=0.003,
                                     before_measure_flip_probability=0.003,
                                     before_round_data_depolarization=0.003)
    problem = DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=True))
    dets = circuit.compile_detector_sampler(seed=0).sample(SHOTS, bit_packed=True)
    return problem, dets


def warm_one(label: str, timed: bool = False, confidence: bool = False) -> WarmupResult:
    """Build ``label`` on :func:`warm_problem` and decode through its paths; numba's compilations counted
    by :func:`~qdecode.cli.compile_notice.compile_notice`. Runs in a worker process."""
    import time

    from qdecode.cli.compile_notice import compile_notice
    from qdecode.decoders.registry import DecoderSpec

    t0 = time.perf_counter()
    with compile_notice(label, say=lambda line: None) as watch:  # counted, not said: run() prints the results
        problem, dets = warm_problem()
        decoder = DecoderSpec.parse(label).build(problem)
        decoder.predict_observables_packed(dets)
        if timed:
            decoder.predict_observables_timed(dets[:4])
        if confidence and decoder.has_confidence:
            decoder.predict_with_confidence_packed(dets)
    return WarmupResult(label, watch.kernels, watch.seconds, time.perf_counter() - t0)


def run(args) -> int:
    from qdecode.decoders.registry import DecoderSpec

    labels = args.decoder or list(DEFAULT_DECODERS)
    for label in labels:
        DecoderSpec.parse(label)  # a bad name is refused before any process starts
    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be >= 1, got {args.jobs}")
    jobs = min(len(labels), args.jobs or os.cpu_count() or 1)
    if jobs == 1:
        results = [warm_one(label, args.timed, args.confidence) for label in labels]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(warm_one, labels, [args.timed] * len(labels),
                                    [args.confidence] * len(labels)))
    if not args.quiet:
        from qdecode import compile_cache

        print(f"compile cache: {compile_cache.active or 'numba default (' + compile_cache.reason + ')'}")
        for r in results:
            print(f"{r.label}: {r.kernels} kernel{'s' if r.kernels != 1 else ''} compiled in {r.compile_s:.1f} s "
                  f"({r.wall_s:.1f} s in all)")
    return 0
