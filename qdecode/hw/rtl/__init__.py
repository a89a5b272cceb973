"""Synthesizable Verilog of the fixed-point flooding min-sum decoder, bit-exact with the reference kernel.

From a check matrix and a fixed-point :class:`~qdecode.decoders.bp.BpDecoder` configuration the
generator writes plain Verilog-2005: one check-node module per distinct row degree
(:mod:`.cnu`), one variable-node module per distinct column degree (:mod:`.vnu`), and a top
that wires them from H with one register pair per Tanner edge and runs one flooding iteration per
clock (:mod:`.top`). A ``$readmemh`` bench (:mod:`.testbench`) replays an ``export-vectors``
directory (:mod:`qdecode.hw.vectors`) and :func:`simulate` runs it in Icarus Verilog or Verilator;
:mod:`.synth` writes and runs yosys scripts (iCE40, Xilinx 7-series, ECP5) and nextpnr-ice40.

* :mod:`.arith` widths and the shift-add constant scaler; :mod:`.config` the fixed-point
  contract (:class:`RtlConfig`) and the mutation catalogue; :mod:`.graph` edge numbering;
  :mod:`.verilog` spelling helpers; :mod:`.emit` the output directory; :mod:`.readme` its README.

The contract is :func:`qdecode.kernels.bp.minsum_flooding`; the compressed check state
(min1, min2, argmin, sign parity) is the standard min-sum simplification, e.g. as used by the
fully parallel FPGA decoders of arXiv:2510.21600.
"""

from __future__ import annotations

from qdecode.hw.rtl.config import MUTATIONS, RtlConfig, config_from_decoder
from qdecode.hw.rtl.emit import check_vectors, design_from_decoder, design_from_vectors, export_rtl, generate
from qdecode.hw.rtl.graph import RtlGraph, build_graph
from qdecode.hw.rtl.simulate import SimReport, simulate, simulator_available
from qdecode.hw.rtl.synth import PnrReport, SynthReport, run_pnr, run_synth

__all__ = [
    "MUTATIONS",
    "PnrReport",
    "RtlConfig",
    "RtlGraph",
    "SimReport",
    "SynthReport",
    "build_graph",
    "check_vectors",
    "config_from_decoder",
    "design_from_decoder",
    "design_from_vectors",
    "export_rtl",
    "generate",
    "run_pnr",
    "run_synth",
    "simulate",
    "simulator_available",
]
