"""Hardware-facing tools: fixed-point test vectors for HDL testbenches, latency benchmarks.

* :mod:`qdecode.hw.vectors`: :func:`export_vectors` writes a self-contained directory
  (manifest, ``H.alist``, ``$readmemh`` hex files of quantised priors, syndromes and
  expected results of the bit-accurate fixed-point min-sum kernel);
  :func:`replay_vectors` rebuilds the decoder from those files alone and re-checks
  every expected value bit for bit.
* :mod:`qdecode.hw.rtl`: synthesizable Verilog-2005 of the fixed-point flooding min-sum decoder
  for a check matrix (``qdecode export-rtl``), its ``$readmemh`` bench over a vector directory,
  Icarus Verilog / Verilator replay and yosys / nextpnr-ice40 runs (imported on demand).
* :mod:`qdecode.hw.latency`: per-shot latency distribution (p50 / p99 / p99.9 / max,
  ``time.perf_counter_ns``, warm-up excluded), batch throughput and iteration counts.
"""

from __future__ import annotations

from qdecode.hw.latency import (
    BenchReport,
    LatencyReport,
    ThroughputReport,
    measure_latency,
    measure_throughput,
    run_bench,
)
from qdecode.hw.vectors import (
    Mismatch,
    ReplayReport,
    VectorFormatError,
    VectorSet,
    bits_from_hex,
    bits_to_hex,
    export_vectors,
    int_from_hex,
    int_to_hex,
    load_vectors,
    replay_vectors,
)

__all__ = [
    "BenchReport",
    "LatencyReport",
    "ThroughputReport",
    "measure_latency",
    "measure_throughput",
    "run_bench",
    "Mismatch",
    "ReplayReport",
    "VectorFormatError",
    "VectorSet",
    "bits_from_hex",
    "bits_to_hex",
    "export_vectors",
    "int_from_hex",
    "int_to_hex",
    "load_vectors",
    "replay_vectors",
]
