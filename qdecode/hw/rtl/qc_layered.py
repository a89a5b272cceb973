"""Partially parallel (``Z``-wide) layered min-sum decoder of a quasi-cyclic LDPC code, generated from its base matrix.

The contract, bit for bit, is :func:`qdecode.kernels.qc_minsum.qc_minsum_range` with the layered schedule and
``early_stop=False`` (the decoder :class:`qdecode.decoders.qc_ldpc.QcMinSumDecoder` with its channel quantisation
``quantize``): ``bits``-bit saturating fixed point, posteriors within ``+-lim``, check-to-variable messages within
``+-msg_lim``, variable-to-check messages ``q = clip(post - msg, +-qlim)`` with ``qlim = lim - msg_lim``; per check
``m1`` / ``m2`` (both starting at ``msg_lim``), the slot ``arg`` of the first strict minimum, the sign parity; the
correction ``o(m) = max(m - beta, 0)`` (OMS) or ``(m * num) >> shift`` (NMS); new message
``+-o(m2 if slot == arg else m1)`` (negative where the parity and ``q``'s sign differ, ``sign(0) = +``); layered
update ``post = q + msg_new`` (no saturation needed: ``|q| + |msg| <= lim``). Hard decision ``post <= 0 -> 1`` of all
``cols * Z`` mother bits; ``converged`` is the zero syndrome after ``max_iter`` iterations.

**Architecture.** ``Z`` check-node lanes work in parallel on the ``Z`` checks of one layer (one base row); they
share no variable, so doing them together is exactly the kernel's order. Per layer of degree ``d`` the ``d`` base
edges (columns ascending, the kernel's slot order) are walked twice through one read pipeline stage:

* pass 1: read ``post[col_e]`` and ``msg[e]``, rotate the posterior word by the circulant shift (a log-depth
  barrel shifter, lane ``z`` <- lane ``(z + s) mod Z``), ``q = clip(post - msg)`` per lane, update the running
  ``m1`` / ``m2`` / ``arg`` / parity registers of each lane;
* pass 2: read the same words again, recompute ``q`` (``post[col_e]`` and ``msg[e]`` are unchanged until edge
  ``e`` itself is written), form the new message and ``q + msg_new``, write ``msg[e]`` and, through the inverse
  rotation (by ``(Z - s) mod Z``), ``post[col_e]``.

Reads are synchronous (the address is issued one cycle before the data is used), so a layer takes ``2 d + 1``
cycles: the first read of pass 2 is issued in the cycle that consumes the last read of pass 1, and the last write
of the layer lands one edge before the next layer's first read samples the memory (no read-during-write
hazard; inside pass 2 the read of edge ``t + 1`` and the write of edge ``t`` address different columns). In the
first iteration the messages read as 0 (no memory clear). After the last iteration a syndrome pass reads each
base edge once more (``nnz + 1`` cycles: rotated hard decisions XOR-ed per lane, OR-ed per layer), then an output
pass streams the hard decisions one base column per cycle (``cols + 1`` cycles).

**Cycle count.** ``cycles_per_iteration = sum_i (2 d_i + 1) = 2 nnz + rows``; from the ``start`` edge to
``done``: ``latency = max_iter * (2 nnz + rows) + nnz + cols + 3`` rising edges (``start`` edge, iterations,
syndrome pass, output pass; the edge after the last output word raises ``done``). Loading a frame takes ``cols``
more cycles (one base column per cycle, before ``start``), so one frame occupies the decoder for
``latency + cols`` cycles. 5G NR BG2 (``rows = 42``, ``cols = 52``, ``nnz = 197``): 436 cycles per iteration.

**Memory layout.** ``post``: ``cols`` words of ``Z * W`` bits (``W = bits``), word ``j`` = base column ``j``,
lane ``t`` (bits ``[t W, t W + W)``) = variable ``j Z + t`` in natural order; written by the load port and by
pass 2, read by both passes, the syndrome pass and the output pass. ``msg``: ``nnz`` words of ``Z * MSW`` bits
(``MSW = bitlen(msg_lim) + 1``: 6 bits at 8-bit, 14 at 16-bit), word ``e`` = base edge ``e`` (row-major, the
kernel's edge order), lane ``z`` = the message of check ``z`` of that layer (check order, i.e. rotated). Both are
one-read one-write memories with registered reads (block RAM on FPGAs). Per lane registers: ``m1``, ``m2``
(``bitlen(msg_lim)`` bits), ``arg`` (slot index), parity, syndrome parity.

**Ports** of ``qc_top``: ``clk``, ``rst`` (synchronous), ``start`` (a pulse in the idle state);
``in_valid`` / ``in_col`` / ``in_llr`` (``Z * W`` bits, the load port: writes one base column of channel LLRs while
idle); ``done`` (high from the end of a decode until the next ``start``), ``converged``; ``out_valid`` /
``out_col`` / ``out_hard`` (``Z`` bits): the hard decisions of one base column per cycle of the output pass.

:mod:`.qc_contract` holds the configuration (:class:`~qdecode.hw.rtl.qc_contract.QcRtlConfig`, from the decoder),
the mutations the bench must catch, the test vectors (the kernel's outputs), the bench and the simulation runner;
:func:`generate_qc_layered` writes the design (and the bench for a vector set).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from qdecode.errors import InputError
from qdecode.hw.rtl.qc_contract import (
    QcRtlConfig,
    contract_fields,
    design_from_qc_decoder,
    emit_qc_testbench,
    export_qc_vectors,
    simulate_qc,
)
from qdecode.hw.rtl.synth import synth_scripts
from qdecode.hw.rtl.verilog import FOOTER, HEADER, sconst, uconst

__all__ = ["TOP", "QcRtlConfig", "design_from_qc_decoder", "emit_qc_top", "export_qc_vectors", "generate_qc_layered",
           "latency_cycles", "qc_manifest", "qc_shape", "simulate_qc", "widths"]

GENERATOR_VERSION = 1
TOP = "qc_top"


def qc_shape(shifts: Any, z: int) -> dict[str, Any]:
    """Sizes and base edges of a base matrix (``-1`` = empty block, else the shift, taken mod ``z``); the edges
    are row-major with columns ascending, the order of :func:`qdecode.kernels.qc_minsum.qc_graph`."""
    a = np.asarray(shifts)
    if a.ndim != 2 or a.size == 0 or not np.issubdtype(a.dtype, np.integer):
        raise InputError(f"shifts must be a non-empty 2-D integer matrix, got shape {a.shape} {a.dtype}")
    if isinstance(z, bool) or not isinstance(z, (int, np.integer)) or z < 1:
        raise InputError(f"the lifting size Z must be an integer >= 1, got {z!r}")
    if (a < -1).any():
        raise InputError("shifts must be -1 (empty block) or >= 0")
    rr, cc = np.nonzero(a >= 0)
    if rr.size == 0:
        raise InputError("the base matrix has no block")
    deg = np.bincount(rr, minlength=a.shape[0])
    ptr = np.concatenate([[0], np.cumsum(deg)])
    z = int(z)
    sh = (a[rr, cc].astype(np.int64) % z).tolist()
    return {"rows": int(a.shape[0]), "cols": int(a.shape[1]), "Z": z, "nnz": int(rr.size),
            "degrees": [int(d) for d in deg], "layer_ptr": [int(p) for p in ptr], "edge_col": [int(c) for c in cc],
            "edge_shift": [int(s) for s in sh], "max_degree": int(deg.max()),
            "cycles_per_iteration": 2 * int(rr.size) + int(a.shape[0])}


def latency_cycles(shape: dict[str, Any], max_iter: int) -> int:
    """Rising edges from ``start`` to ``done`` (module docstring)."""
    return max_iter * shape["cycles_per_iteration"] + shape["nnz"] + shape["cols"] + 3


def widths(shape: dict[str, Any], cfg: QcRtlConfig) -> dict[str, int]:
    """Bit widths of the design's words, counters and indices."""
    mw = cfg.msg_lim.bit_length()
    qw = cfg.qlim.bit_length() + 1
    dmax = max(shape["max_degree"], 1)
    return {"W": cfg.bits, "MW": mw, "MSW": mw + 1, "QW": qw, "AW": max(qw - 1, mw),
            "SB": max(1, (shape["Z"] - 1).bit_length()), "XW": max(1, (dmax - 1).bit_length()),
            "KW": (2 * dmax).bit_length(), "LW": max(1, (shape["rows"] - 1).bit_length()),
            "EW": shape["nnz"].bit_length(), "CW": shape["cols"].bit_length(), "IW": cfg.max_iter.bit_length()}


def _sext(expr: str, msb: str, width: int, to: int) -> str:
    """``expr`` (``width`` bits, sign bit ``msb``) sign-extended to ``to`` bits."""
    return expr if to == width else f"{{{{{to - width}{{{msb}}}}}, {expr}}}"


def emit_rotator(z: int, w: int, sb: int) -> str:
    """``qc_rot``: ``y`` lane ``t`` = ``x`` lane ``(t + s) mod Z`` (``Z`` lanes of ``w`` bits): ``sb`` stages, stage
    ``b`` a constant rotation by ``2^b mod Z`` lanes or none (any ``Z``, not only powers of two). One assignment per
    stage, each reading only the previous stage (event-driven simulators re-evaluate per net)."""
    zw = z * w
    o = [f"// Cyclic lane rotation: y[t] = x[(t + s) mod {z}], {z} lanes of {w} bits, {sb} mux stages.",
         "module qc_rot (",
         f"    input  wire [{zw - 1}:0] x,", f"    input  wire [{sb - 1}:0] s,", f"    output wire [{zw - 1}:0] y",
         ");",
         f"    wire [{zw - 1}:0] {', '.join(f'st{b}' for b in range(sb + 1))};",
         "    assign st0 = x;"]
    for b in range(sb):
        r = (1 << b) % z
        rotated = f"{{st{b}[{r * w - 1}:0], st{b}[{zw - 1}:{r * w}]}}" if r else f"st{b}"
        o.append(f"    assign st{b + 1} = s[{b}] ? {rotated} : st{b};  // by {r} lanes")
    o += [f"    assign y = st{sb};", "endmodule"]
    return "\n".join(o) + "\n"


def _correction(cfg: QcRtlConfig, wd: dict[str, int], m: str, o: str) -> list[str]:
    """Lane lines computing ``o = o(m)`` (OMS or NMS, the mutations included)."""
    mw = wd["MW"]
    if cfg.normalized:
        rnd = 1 << (cfg.shift - 1) if cfg.mutation == "nms-round" and cfg.shift > 0 else 0
        pw = max(1, (cfg.msg_lim * cfg.num + rnd).bit_length())
        add = f" + {uconst(rnd, pw)}" if rnd else ""
        return [f"            wire [{pw - 1}:0] t_{o} = {m} * {uconst(cfg.num, pw)}{add};",
                f"            wire [{mw - 1}:0] {o} = t_{o} >> {cfg.shift};"]
    beta = cfg.beta + (1 if cfg.mutation == "beta-plus-one" else 0)
    if beta == 0:
        return [f"            wire [{mw - 1}:0] {o} = {m};"]
    if beta >= cfg.msg_lim:
        return [f"            wire [{mw - 1}:0] {o} = {uconst(0, mw)};"]
    b = uconst(beta, mw)
    return [f"            wire [{mw - 1}:0] {o} = ({m} > {b}) ? {m} - {b} : {uconst(0, mw)};"]


def _lanes(shape: dict[str, Any], cfg: QcRtlConfig, wd: dict[str, int]) -> list[str]:
    """The ``Z`` check-node lanes (generate loop): q, running minima, new messages, posteriors, hard decisions."""
    W, MW, MSW, QW, AW, XW = (wd[k] for k in ("W", "MW", "MSW", "QW", "AW", "XW"))
    lim = uconst(cfg.msg_lim, AW)
    hard = "{v}[{W1}]" if cfg.mutation == "hard-negative" else "{v}[{W1}] | ({v} == {zero})"
    hr = hard.format(v="p", W1=W - 1, zero=uconst(0, W))
    hu = hard.format(v="pu", W1=W - 1, zero=uconst(0, W))
    mo = f"msg_rd[z * {MSW} +: {MSW}]"
    o = [
        "    genvar z;",
        "    generate",
        f"        for (z = 0; z < {shape['Z']}; z = z + 1) begin : lane",
        f"            wire [{W - 1}:0] p = rot[z * {W} +: {W}];  // posterior of the variable check z reads",
        f"            wire [{MSW - 1}:0] mo = first_it ? {uconst(0, MSW)} : {mo};  // its old message",
        f"            wire [{W}:0] d = {{p[{W - 1}], p}} - {_sext('mo', f'mo[{MSW - 1}]', MSW, W + 1)};",
        f"            wire [{QW - 1}:0] q = ($signed(d) > QHI) ? {uconst(cfg.qlim, QW)}",
        f"                              : (($signed(d) < QLO) ? {uconst((1 << QW) - cfg.qlim, QW)} : d[{QW - 1}:0]);",
        f"            wire qn = q[{QW - 1}];",
        f"            wire [{QW - 1}:0] qneg = -q;",
        f"            wire [{AW - 1}:0] ax = qn ? qneg[{QW - 2}:0] : q[{QW - 2}:0];  // |q|",
        f"            reg [{MW - 1}:0] m1, m2;",
        f"            reg [{XW - 1}:0] arg;",
        "            reg par, pacc;",
        f"            wire fs = (slot_r == {uconst(0, XW)});  // first edge of the layer: start from msg_lim",
        f"            wire [{AW - 1}:0] m1p = fs ? {lim} : m1;",
        f"            wire [{AW - 1}:0] m2p = fs ? {lim} : m2;",
        "            wire lt = ax < m1p;  // a first strict minimum",
        f"            wire [{AW - 1}:0] mx = lt ? m1p : ax;",
        f"            wire [{AW - 1}:0] m2n = (mx < m2p) ? mx : m2p;",
        f"            wire [{AW - 1}:0] m1n = lt ? ax : m1p;",
        "            always @(posedge clk) begin",
        "                if (upd1) begin",
        f"                    m1 <= m1n[{MW - 1}:0]; m2 <= m2n[{MW - 1}:0];",
        f"                    arg <= lt ? slot_r : (fs ? {uconst(0, XW)} : arg);",
        "                    par <= (fs ? 1'b0 : par) ^ qn;",
        "                end",
        "            end",
        *_correction(cfg, wd, "m1", "o1"),
        *_correction(cfg, wd, "m2", "o2"),
        f"            wire [{MW - 1}:0] mag = (arg == slot_r) ? o2 : o1;",
        f"            wire [{MSW - 1}:0] mpos = {{1'b0, mag}};",
        f"            wire [{MSW - 1}:0] mn = (par ^ qn) ? -mpos : mpos;",
        f"            assign msg_new[z * {MSW} +: {MSW}] = mn;",
        f"            assign post_new[z * {W} +: {W}] = {_sext('q', f'q[{QW - 1}]', QW, W)} + "
        f"{_sext('mn', f'mn[{MSW - 1}]', MSW, W)};",
        f"            wire h = {hr};  // hard decision of the rotated lane (syndrome pass)",
        "            assign syn_par[z] = pacc ^ h;",
        "            always @(posedge clk) begin",
        "                if (state == IDLE) pacc <= 1'b0;",
        "                else if (synv) pacc <= last_r ? 1'b0 : syn_par[z];",
        "            end",
        f"            wire [{W - 1}:0] pu = post_rd[z * {W} +: {W}];",
        f"            assign out_hard[z] = {hu};",
        "        end",
        "    endgenerate",
    ]
    return o


def _roms(shape: dict[str, Any], wd: dict[str, int]) -> list[str]:
    """Schedule tables: per layer its first edge, degree and ``2 d``; per base edge its column, shift, inverse
    shift and whether it closes its layer."""
    LW, EW, KW, CW, SB = (wd[k] for k in ("LW", "EW", "KW", "CW", "SB"))
    z = shape["Z"]
    o = ["    // layer table", f"    reg [{EW - 1}:0] lay_ptr;", f"    reg [{KW - 1}:0] lay_deg, lay_end;",
         "    always @* begin", "        case (lay)"]
    for i, d in enumerate(shape["degrees"]):
        o.append(f"            {uconst(i, LW)}: begin lay_ptr = {uconst(shape['layer_ptr'][i], EW)}; "
                 f"lay_deg = {uconst(d, KW)}; lay_end = {uconst(2 * d, KW)}; end")
    o += [f"            default: begin lay_ptr = {uconst(0, EW)}; lay_deg = {uconst(0, KW)}; "
          f"lay_end = {uconst(0, KW)}; end", "        endcase", "    end",
          "    wire p2_now = (k >= lay_deg);  // issuing a pass-2 read",
          f"    wire [{KW - 1}:0] slot_now = p2_now ? k - lay_deg : k;",
          "    wire run_issue = (k < lay_end);",
          f"    wire [{EW - 1}:0] edge_run = lay_ptr + slot_now;",
          f"    wire [{EW - 1}:0] ed = (state == SYN) ? se : edge_run;",
          "    // edge table", f"    reg [{CW - 1}:0] e_col;", f"    reg [{SB - 1}:0] e_sh, e_ish;", "    reg e_last;",
          "    always @* begin", "        case (ed)"]
    last = {p - 1 for p in shape["layer_ptr"][1:]}
    for e, (c, s) in enumerate(zip(shape["edge_col"], shape["edge_shift"])):
        o.append(f"            {uconst(e, EW)}: begin e_col = {uconst(c, CW)}; e_sh = {uconst(s, SB)}; "
                 f"e_ish = {uconst((z - s) % z, SB)}; e_last = 1'b{int(e in last)}; end")
    o += [f"            default: begin e_col = {uconst(0, CW)}; e_sh = {uconst(0, SB)}; e_ish = {uconst(0, SB)}; "
          "e_last = 1'b0; end", "        endcase", "    end"]
    return o


def _datapath(shape: dict[str, Any], cfg: QcRtlConfig, wd: dict[str, int]) -> list[str]:
    """Declarations, the two memories and the two rotators."""
    W, MSW, CW, Z = wd["W"], wd["MSW"], wd["CW"], shape["Z"]
    zw, zm = Z * W, Z * MSW
    return [
        "    wire upd1 = (state == RUN) && v_r && !p2_r;  // pass-1 data: update the minima",
        "    wire upd2 = (state == RUN) && v_r && p2_r;   // pass-2 data: write message and posterior",
        "    wire synv = (state == SYN) && v_r;",
        f"    wire first_it = (it == {uconst(0, wd['IW'])});",
        f"    localparam signed [{W}:0] QHI = {sconst(cfg.qlim, W + 1)}, QLO = {sconst(-cfg.qlim, W + 1)};",
        f"    wire [{zw - 1}:0] rot, post_new, post_back;",
        f"    wire [{zm - 1}:0] msg_new;",
        f"    wire [{Z - 1}:0] syn_par;",
        f"    // posteriors: {shape['cols']} words of {Z} x {W} bits (base column j, lane t = variable j*Z+t)",
        f"    reg [{zw - 1}:0] post_mem [0:{shape['cols'] - 1}];",
        f"    reg [{zw - 1}:0] post_rd;",
        "    wire post_we = (state == IDLE) ? in_valid : upd2;",
        f"    wire [{CW - 1}:0] post_wa = (state == IDLE) ? in_col : col_r;",
        f"    wire [{zw - 1}:0] post_wd = (state == IDLE) ? in_llr : post_back;",
        f"    wire [{CW - 1}:0] post_ra = (state == OUT) ? oc : e_col;",
        "    always @(posedge clk) begin",
        "        if (post_we) post_mem[post_wa] <= post_wd;",
        "        post_rd <= post_mem[post_ra];",
        "    end",
        f"    // check-to-variable messages: {shape['nnz']} words of {Z} x {MSW} bits (base edge e, lane z = check z)",
        f"    reg [{zm - 1}:0] msg_mem [0:{shape['nnz'] - 1}];",
        f"    reg [{zm - 1}:0] msg_rd;",
        "    always @(posedge clk) begin",
        "        if (upd2) msg_mem[edge_r] <= msg_new;",
        "        msg_rd <= msg_mem[ed];",
        "    end",
        "    qc_rot u_rot (.x(post_rd), .s(sh_r), .y(rot));  // variable order -> check order",
        "    qc_rot u_unrot (.x(post_new), .s(ish_r), .y(post_back));  // check order -> variable order",
        "    assign out_valid = (state == OUT) && v_r;",
        "    assign out_col = col_r;",
    ]


def _control(shape: dict[str, Any], cfg: QcRtlConfig, wd: dict[str, int]) -> list[str]:
    """The state machine: idle (load), iterations, syndrome pass, output pass."""
    LW, KW, IW, EW, CW, XW = (wd[k] for k in ("LW", "KW", "IW", "EW", "CW", "XW"))
    return [
        "    always @(posedge clk) begin",
        "        if (rst) begin",
        "            state <= IDLE; done <= 1'b0; converged <= 1'b0; v_r <= 1'b0;",
        "        end else begin",
        "            v_r <= 1'b0;",
        "            case (state)",
        "                IDLE: if (start) begin",
        "                    state <= RUN; done <= 1'b0; converged <= 1'b0;",
        f"                    lay <= {uconst(0, LW)}; k <= {uconst(0, KW)}; it <= {uconst(0, IW)};",
        "                end",
        "                RUN: begin",
        f"                    v_r <= run_issue; p2_r <= p2_now; slot_r <= slot_now[{XW - 1}:0];",
        "                    sh_r <= e_sh; ish_r <= e_ish; col_r <= e_col; edge_r <= edge_run;",
        "                    if (k == lay_end) begin",
        f"                        k <= {uconst(0, KW)};",
        "                        if (lay == LAST_LAYER) begin",
        f"                            lay <= {uconst(0, LW)}; it <= it + {uconst(1, IW)};",
        f"                            if (it + {uconst(1, IW)} == MAX_ITER) begin",
        f"                                state <= SYN; se <= {uconst(0, EW)}; unsat <= 1'b0;",
        "                            end",
        f"                        end else lay <= lay + {uconst(1, LW)};",
        f"                    end else k <= k + {uconst(1, KW)};",
        "                end",
        "                SYN: begin",
        "                    v_r <= (se != NNZ); sh_r <= e_sh; last_r <= e_last;",
        "                    if (synv && last_r && (|syn_par)) unsat <= 1'b1;",
        f"                    if (se == NNZ) begin state <= OUT; oc <= {uconst(0, CW)}; end",
        f"                    else se <= se + {uconst(1, EW)};",
        "                end",
        "                default: begin  // OUT",
        "                    v_r <= (oc != COLS); col_r <= oc;",
        "                    if (oc == COLS) begin state <= IDLE; done <= 1'b1; converged <= ~unsat; end",
        f"                    else oc <= oc + {uconst(1, CW)};",
        "                end",
        "            endcase",
        "        end",
        "    end",
    ]


def emit_qc_top(shifts: Any, z: int, cfg: QcRtlConfig) -> str:
    """``qc_rot`` and ``qc_top`` (module docstring) as one Verilog-2005 file."""
    sh = qc_shape(shifts, z)
    wd = widths(sh, cfg)
    W, CW, LW, IW, EW, KW, XW, SB = (wd[k] for k in ("W", "CW", "LW", "IW", "EW", "KW", "XW", "SB"))
    corr = (f"NMS num {cfg.num} >> {cfg.shift}" if cfg.normalized else f"OMS beta {cfg.beta}")
    o = [
        f"// Layered min-sum of a QC-LDPC code: {sh['rows']} x {sh['cols']} base matrix, {sh['nnz']} blocks, "
        f"Z = {sh['Z']};",
        f"// {W}-bit posteriors (lim {cfg.lim}), messages within {cfg.msg_lim}, {corr}, {cfg.max_iter} iterations"
        f"{'' if cfg.mutation is None else f' (MUTATION {cfg.mutation})'};",
        f"// {sh['cycles_per_iteration']} cycles per iteration, {latency_cycles(sh, cfg.max_iter)} from start to done.",
        f"module {TOP} (",
        "    input  wire clk,", "    input  wire rst,", "    input  wire start,", "    input  wire in_valid,",
        f"    input  wire [{CW - 1}:0] in_col,", f"    input  wire [{sh['Z'] * W - 1}:0] in_llr,",
        "    output reg  done,", "    output reg  converged,", "    output wire out_valid,",
        f"    output wire [{CW - 1}:0] out_col,", f"    output wire [{sh['Z'] - 1}:0] out_hard",
        ");",
        "    localparam [1:0] IDLE = 2'd0, RUN = 2'd1, SYN = 2'd2, OUT = 2'd3;",
        f"    localparam [{LW - 1}:0] LAST_LAYER = {uconst(sh['rows'] - 1, LW)};",
        f"    localparam [{IW - 1}:0] MAX_ITER = {uconst(cfg.max_iter, IW)};",
        f"    localparam [{EW - 1}:0] NNZ = {uconst(sh['nnz'], EW)};",
        f"    localparam [{CW - 1}:0] COLS = {uconst(sh['cols'], CW)};",
        "    reg [1:0] state;",
        f"    reg [{LW - 1}:0] lay;", f"    reg [{KW - 1}:0] k;", f"    reg [{IW - 1}:0] it;",
        f"    reg [{EW - 1}:0] se;", f"    reg [{CW - 1}:0] oc;", "    reg unsat;",
        "    // the read issued in the previous cycle (its data is in post_rd / msg_rd now)",
        "    reg v_r, p2_r, last_r;", f"    reg [{XW - 1}:0] slot_r;", f"    reg [{SB - 1}:0] sh_r, ish_r;",
        f"    reg [{CW - 1}:0] col_r;", f"    reg [{EW - 1}:0] edge_r;",
        *_roms(sh, wd),
        *_datapath(sh, cfg, wd),
        *_lanes(sh, cfg, wd),
        *_control(sh, cfg, wd),
        "endmodule",
    ]
    return "\n".join([HEADER, emit_rotator(sh["Z"], W, SB), "\n".join(o) + "\n", FOOTER])


def qc_manifest(shifts: Any, z: int, cfg: QcRtlConfig) -> dict[str, Any]:
    """``rtl_manifest.json`` of the design: the contract, sizes, widths, memories and the cycle counts."""
    from qdecode import __version__

    sh = qc_shape(shifts, z)
    wd = widths(sh, cfg)
    lat = latency_cycles(sh, cfg.max_iter)
    return {
        "format": "qdecode-rtl", "generator_version": GENERATOR_VERSION, "qdecode_version": __version__,
        "top": TOP, "architecture": "qc-layered", "decoder": "ldpc-ms",
        **contract_fields(shifts, z, cfg.kernel_params(), cfg.bits), **cfg.as_dict(),
        "nnz": sh["nnz"], "layer_degrees": sh["degrees"], "max_degree": sh["max_degree"], "widths": wd,
        "memories": {"post": {"words": sh["cols"], "bits": sh["Z"] * wd["W"]},
                     "msg": {"words": sh["nnz"], "bits": sh["Z"] * wd["MSW"]}},
        "cycles_per_iteration": sh["cycles_per_iteration"],
        "cycles_per_iteration_formula": "2 * nnz + rows",
        "latency_cycles": lat, "latency_formula": "max_iter * (2 nnz + rows) + nnz + cols + 3 (start edge to done)",
        "load_cycles": sh["cols"], "frame_cycles": lat + sh["cols"],
        "ports": {"clk": 1, "rst": 1, "start": 1, "in_valid": 1, "in_col": wd["CW"], "in_llr": sh["Z"] * wd["W"],
                  "done": 1, "converged": 1, "out_valid": 1, "out_col": wd["CW"], "out_hard": sh["Z"]},
    }


def _readme(mf: dict[str, Any]) -> str:
    corr = f"NMS (m * {mf['num']}) >> {mf['shift']}" if mf["normalized"] else f"OMS max(m - {mf['beta']}, 0)"
    return "\n".join([
        f"# `{TOP}`: layered min-sum of a QC-LDPC code (generated by qdecode {mf['qdecode_version']})", "",
        f"Base matrix {mf['rows']} x {mf['cols']} with {mf['nnz']} blocks, Z = {mf['Z']}; {mf['bits']}-bit posteriors "
        f"(lim {mf['lim']}), messages within {mf['msg_lim']}, {corr}, {mf['max_iter']} iterations, no early stop.",
        "Bit-exact contract: `qdecode.kernels.qc_minsum.qc_minsum_range` (layered, `early_stop=False`); the",
        "architecture, memory layout and timing are documented in `qdecode/hw/rtl/qc_layered.py`.", "",
        "Protocol: while idle, write the channel LLRs one base column per cycle (`in_valid`, `in_col`, `in_llr`,",
        "lane t = variable col*Z + t); pulse `start`; the hard decisions come out one base column per cycle",
        "(`out_valid`, `out_col`, `out_hard`), then `done` rises with `converged`.", "",
        f"* cycles per iteration: {mf['cycles_per_iteration']} (2 nnz + rows)",
        f"* start to done: {mf['latency_cycles']} cycles ({mf['latency_formula']})",
        f"* per frame with the load: {mf['frame_cycles']} cycles", "",
        "Files: `qc_top.v` (design), `rtl_manifest.json`, `synth_<target>.ys` (yosys; `stat_<target>.json`),",
        "`tb_qc.v` (bench, run inside a vector directory) when written for a vector set.", ""])


def generate_qc_layered(shifts: Any, z: int, cfg: QcRtlConfig, out_dir: str | Path | None = None, *,
                        frames: int | None = None) -> dict[str, str]:
    """File name -> text of the design (``qc_top.v``, ``rtl_manifest.json``, ``README.md``, yosys scripts, and
    with ``frames`` the bench ``tb_qc.v`` for a vector set of that many frames); written to ``out_dir`` when given.
    A pure function of its arguments (same inputs, same bytes)."""
    mf = qc_manifest(shifts, z, cfg)
    files = {"qc_top.v": emit_qc_top(shifts, z, cfg), "rtl_manifest.json": json.dumps(mf, indent=2) + "\n",
             "README.md": _readme(mf), **synth_scripts("qc_top.v", TOP)}
    if frames is not None:
        files["tb_qc.v"] = emit_qc_testbench(int(frames), mf["cols"], mf["Z"], mf["bits"], mf["latency_cycles"])
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            with open(out / name, "w", encoding="ascii", newline="\n") as f:
                f.write(text)
    return files


