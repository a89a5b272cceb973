"""Write a generated decoder directory: Verilog, README, manifest, synthesis scripts, optional bench.

:func:`generate` returns the file texts (a pure function of H and the configuration: same
inputs, same bytes); :func:`export_rtl` writes them. Files:

==========================  ================================================================
``bp_top.v``                every ``bp_cnu_d<D>`` / ``bp_vnu_d<V>`` module and ``bp_top``
                            (folded, ``parallelism=P``: ``bp_cnu_d<Dc>``, ``bp_vpe_d<Dv>``,
                            ``bp_syndrome_test`` and the folded ``bp_top``, :mod:`.folded`)
``bp_slice.v``              folded only: PE pair 0 with its multiplexers (``bp_slice``) and the
                            PE modules, with ``synth_slice_<target>.ys``
``rtl_manifest.json``       H hash, sizes, degrees, widths, configuration, FF count, ports
``README.md``               ports, timing contract, resource formula of this design
``synth_<target>.ys``       yosys scripts (:mod:`qdecode.hw.rtl.synth`)
``tb_bp.v``                 with ``vectors``: the bench for that vector set (:mod:`.testbench`)
==========================  ================================================================
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from qdecode.errors import InputError
from qdecode.hw.rtl.arith import index_width, sum_width
from qdecode.hw.rtl.cnu import emit_cnu
from qdecode.hw.rtl.config import RtlConfig, config_from_decoder
from qdecode.hw.rtl.folded import emit_folded_top, emit_slice, emit_syndrome_test, fold_shape, folded_flip_flops
from qdecode.hw.rtl.graph import RtlGraph, build_graph
from qdecode.hw.rtl.readme import readme_text
from qdecode.hw.rtl.synth import synth_scripts
from qdecode.hw.rtl.testbench import emit_testbench
from qdecode.hw.rtl.top import emit_top
from qdecode.hw.rtl.verilog import FOOTER, HEADER
from qdecode.hw.rtl.vnu import emit_vnu
from qdecode.hw.vectors import h_sha256

GENERATOR_VERSION = 1
CYCLES_PER_ITERATION = 1


def flip_flops(g: RtlGraph, cfg: RtlConfig) -> int:
    """Registers of ``bp_top``: ``bits`` per edge, ``m`` syndrome, ``n`` decisions, counter, FSM, flags."""
    return cfg.bits * g.edges + g.m + g.n + cfg.iter_bits + 2 + 2


def verilog_text(g: RtlGraph, cfg: RtlConfig, parallelism: int | None = None) -> str:
    """The whole design as one Verilog-2005 file (folded over ``parallelism`` PEs when given)."""
    if parallelism is not None:
        sh = fold_shape(g, parallelism)
        return "\n".join([HEADER, emit_cnu(sh["pe_check_degree"], cfg),
                          emit_vnu(sh["pe_var_degree"], cfg, lam_port=True), emit_syndrome_test(g),
                          emit_folded_top(g, cfg, parallelism), FOOTER])
    parts = [HEADER]
    parts += [emit_cnu(d, cfg) for d in g.check_degrees()]
    parts += [emit_vnu(d, cfg) for d in g.var_degrees()]
    parts.append(emit_top(g, cfg))
    parts.append(FOOTER)
    return "\n".join(parts)


def slice_text(g: RtlGraph, cfg: RtlConfig, parallelism: int) -> str:
    """``bp_slice.v``: the PE modules, ``bp_slice`` (PE pair 0 of the folded design) and ``bp_syndrome_test``."""
    sh = fold_shape(g, parallelism)
    return "\n".join([HEADER, emit_cnu(sh["pe_check_degree"], cfg), emit_vnu(sh["pe_var_degree"], cfg, lam_port=True),
                      emit_slice(g, cfg, parallelism), emit_syndrome_test(g), FOOTER])


def manifest(H, g: RtlGraph, cfg: RtlConfig, parallelism: int | None = None) -> dict[str, Any]:
    from qdecode import __version__

    if parallelism is None:
        arch: dict[str, Any] = {"architecture": "fully-parallel", "flip_flops": flip_flops(g, cfg),
                                "cycles_per_iteration": CYCLES_PER_ITERATION,
                                "latency_cycles": "iterations + 2 (start edge to done), see README.md"}
    else:
        sh = fold_shape(g, parallelism)
        arch = {"architecture": "folded", **sh, "flip_flops": folded_flip_flops(g, cfg, sh),
                "cycles_per_iteration_formula": "ceil(m / P) + ceil(n / P)",
                "latency_cycles": "iterations * cycles_per_iteration + 2 (start edge to done), see README.md"}
    return {
        "format": "qdecode-rtl",
        "generator_version": GENERATOR_VERSION,
        "qdecode_version": __version__,
        "top": "bp_top",
        "h_sha256": h_sha256(H),
        "m": g.m, "n": g.n, "edges": g.edges,
        "check_degrees": g.check_degrees(), "var_degrees": g.var_degrees(),
        "empty_checks": sum(1 for r in g.rows if not r), "empty_variables": sum(1 for c in g.cols if not c),
        **cfg.as_dict(),
        "mag_bits": cfg.mag_bits, "iter_bits": cfg.iter_bits,
        "sum_bits": {str(d): sum_width(d, cfg.msg_lim) for d in g.var_degrees()},
        "index_bits": {str(d): index_width(d) for d in g.check_degrees()},
        **arch,
        "priors": "constants (parameter LAM of each variable unit)",
        "ports": {"clk": 1, "rst": 1, "start": 1, "syndrome": g.m, "done": 1, "converged": 1,
                  "iterations": cfg.iter_bits, "hard": g.n},
    }


def generate(H, cfg: RtlConfig, *, vectors: Any = None, parallelism: int | None = None) -> dict[str, str]:
    """File name -> text of the design for ``H`` (``(m, n)`` 0/1) and ``cfg``.

    ``vectors``: a :class:`qdecode.hw.vectors.VectorSet` to emit ``tb_bp.v`` for; it must
    describe the same decoder (:func:`check_vectors`). ``parallelism``: ``None`` for the fully
    parallel design (one iteration per clock), else ``P >= 1`` processing elements per side
    (:mod:`qdecode.hw.rtl.folded`, ``ceil(m/P) + ceil(n/P)`` cycles per iteration).
    """
    g = build_graph(H)
    if len(cfg.priors) != g.n:
        raise InputError(f"{len(cfg.priors)} priors for {g.n} columns of H")
    mf = manifest(H, g, cfg, parallelism)
    files = {
        "bp_top.v": verilog_text(g, cfg, parallelism),
        "rtl_manifest.json": json.dumps(mf, indent=2) + "\n",
        "README.md": readme_text(g, cfg, mf),
        **synth_scripts("bp_top.v", "bp_top"),
    }
    if parallelism is not None:
        files["bp_slice.v"] = slice_text(g, cfg, parallelism)
        files.update(synth_scripts("bp_slice.v", "bp_slice", prefix="slice_"))
    if vectors is not None:
        check_vectors(mf, vectors)
        files["tb_bp.v"] = emit_testbench(g.m, g.n, int(vectors.manifest["shots"]), cfg.iter_bits, cfg.max_iter,
                                          cycles_per_iteration=int(mf["cycles_per_iteration"]))
    return files


def check_vectors(rtl_manifest: dict[str, Any], vs: Any) -> None:
    """Raise ValueError unless vector set ``vs`` was made by the decoder ``rtl_manifest`` describes."""
    from qdecode.hw.rtl.config import priors_sha256

    vm = vs.manifest
    if vm.get("decoder", "bp") != "bp":
        raise InputError(f"vector set {vs.path} is a {vm['decoder']} set; the min-sum design needs a bp vector set")
    problems = []
    if h_sha256(vs.H) != rtl_manifest["h_sha256"]:
        problems.append("check matrix (h_sha256)")
    for key in ("bits", "alpha_num", "beta_q", "max_iter"):
        if int(vm[key]) != int(rtl_manifest[key]):
            problems.append(f"{key} {vm[key]} vs {rtl_manifest[key]}")
    if vm.get("schedule") != "flooding" or vm.get("adaptive_alpha"):
        problems.append("schedule/alpha (the RTL is flooding with fixed alpha)")
    if priors_sha256(vs.priors_q) != rtl_manifest["priors_sha256"]:
        problems.append("priors (priors_q.hex)")
    if problems:
        raise InputError(f"vector set {vs.path} does not match the design: {', '.join(problems)}")


def export_rtl(H, cfg: RtlConfig, out_dir: str | os.PathLike, *, vectors: Any = None,
               parallelism: int | None = None) -> dict[str, Any]:
    """Write :func:`generate`'s files to ``out_dir`` (created); returns the RTL manifest."""
    files = generate(H, cfg, vectors=vectors, parallelism=parallelism)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        with open(out / name, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    return json.loads(files["rtl_manifest.json"])


def design_from_decoder(decoder: Any, *, mutation: str | None = None) -> tuple[Any, RtlConfig]:
    """``(H, cfg)`` of a fixed-point flooding min-sum :class:`~qdecode.decoders.bp.BpDecoder`."""
    return decoder.problem.H, config_from_decoder(decoder, mutation=mutation)


def design_from_vectors(vs: Any, *, mutation: str | None = None) -> tuple[Any, RtlConfig]:
    """``(H, cfg)`` of the decoder a loaded vector set describes (H, priors and manifest only)."""
    from qdecode.hw.vectors import decoder_from_vectors

    dec = decoder_from_vectors(vs)
    return vs.H, config_from_decoder(dec, mutation=mutation)
