"""Partially parallel (folded) flooding min-sum decoder: ``P`` check and ``P`` variable processing elements.

Same arithmetic, ports and bench as the fully parallel :mod:`qdecode.hw.rtl.top` (bit-exact with
:func:`qdecode.kernels.bp.minsum_flooding`); only the schedule differs. With ``P`` check PEs and
``P`` variable PEs:

* check slot ``c`` (``0 .. FC-1``, ``FC = ceil(m / P)``): PE ``p`` processes check ``i = c*P + p``
  (``bp_cnu_d<Dc>``, ``Dc`` = the largest row degree; unused inputs of a lower-degree row read
  ``|v| = msg_lim``, ``[v <= 0] = 0``, which leaves min1, min2, argmin and parity unchanged) and
  writes the check's compressed state (scaled ``o1``, ``o2``, argmin position, sign parity) to
  registers;
* variable slot ``c`` (``0 .. FV-1``, ``FV = ceil(n / P)``): PE ``p`` processes variable
  ``j = c*P + p`` (``bp_vpe_d<Dv>``, ``Dv`` = the largest column degree; unused inputs read
  ``o1 = o2 = 0``) from the stored check states, its prior (a constant selected by the slot) and the
  signs of its previous messages, and writes its new messages and hard decision.

Messages stay in one register pair per Tanner edge (as in the fully parallel design); each PE input
is a ``FC:1`` (check side) or ``FV:1`` (variable side) multiplexer selected by the slot counter, each
edge register is written in exactly one variable slot by a fixed PE output (an enable, no write
multiplexer). Because all checks finish before any variable starts, and every variable reads only
stored check states and its own previous signs, the result equals the flooding schedule exactly.

**Cycle formula.** ``cycles_per_iteration = FC + FV = ceil(m/P) + ceil(n/P)``. A decode takes
``iterations * (FC + FV) + 2`` rising edges from the ``start`` edge to ``done``: one load edge, the
iterations, and the syndrome test on the registered decisions at the first check slot after the last
iteration (that edge raises ``done``). ``P >= max(m, n)`` gives ``FC = FV = 1``: two cycles per
iteration.

**Registers** (exact): ``bits * edges`` (messages) ``+ m * (2 (bits - 1) + XW + 1)`` (check states,
``XW`` = index width of ``Dc``) ``+ m + n + IW + CW + 5`` (syndrome, decisions, iteration counter,
slot counter ``CW = bits of max(FC, FV) - 1``, phase, 2-bit state, done, converged).

:func:`emit_slice` writes ``bp_slice``: PE pair 0 with its input multiplexers, the design's
repeating unit, synthesizable on its own when the whole design is too big for yosys in reasonable
time; ``bp_syndrome_test`` (an XOR per check, an m-input NOR) is the other non-register block.
"""

from __future__ import annotations

from qdecode.errors import InputError
from qdecode.hw.rtl.arith import index_width, unsigned_width
from qdecode.hw.rtl.cnu import cnu_name
from qdecode.hw.rtl.config import RtlConfig
from qdecode.hw.rtl.graph import RtlGraph
from qdecode.hw.rtl.verilog import concat, sconst, uconst
from qdecode.hw.rtl.vnu import vnu_name


def fold_shape(g: RtlGraph, parallelism: int) -> dict[str, int]:
    """``P``, slots ``FC``/``FV``, PE degrees ``Dc``/``Dv``, widths and ``cycles_per_iteration``.

    Raises:
        ValueError: ``parallelism < 1`` or not an integer.
    """
    if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 1:
        raise InputError(f"parallelism must be an integer >= 1, got {parallelism!r}")
    p = parallelism
    fc, fv = -(-g.m // p), -(-g.n // p)
    dc = max([len(r) for r in g.rows] + [1])
    dv = max([len(c) for c in g.cols] + [1])
    return {"parallelism": p, "check_slots": fc, "var_slots": fv, "pe_check_degree": dc, "pe_var_degree": dv,
            "index_bits": index_width(dc), "slot_bits": unsigned_width(max(fc, fv) - 1),
            "cycles_per_iteration": fc + fv}


def folded_flip_flops(g: RtlGraph, cfg: RtlConfig, shape: dict[str, int]) -> int:
    """Exact register count of the folded ``bp_top`` (module docstring)."""
    state = 2 * cfg.mag_bits + shape["index_bits"] + 1
    return cfg.bits * g.edges + g.m * state + g.m + g.n + cfg.iter_bits + shape["slot_bits"] + 5


def _check_pe(g: RtlGraph, cfg: RtlConfig, shape: dict[str, int], p: int) -> list[str]:
    """Input multiplexer and CNU instance of check PE ``p``."""
    mw, dc, cw = cfg.mag_bits, shape["pe_check_degree"], shape["slot_bits"]
    xw = shape["index_bits"]
    lim = uconst(cfg.msg_lim, mw)
    o = [f"    // check PE {p}",
         f"    reg [{dc * mw - 1}:0] cp{p}_mag; reg [{dc - 1}:0] cp{p}_neg; reg cp{p}_syn;",
         f"    wire [{mw - 1}:0] cp{p}_o1, cp{p}_o2; wire [{xw - 1}:0] cp{p}_ix; wire cp{p}_par;",
         "    always @* begin",
         f"        cp{p}_mag = {{{dc}{{{lim}}}}}; cp{p}_neg = {dc}'d0; cp{p}_syn = 1'b0;",
         "        case (cyc)"]
    for c in range(shape["check_slots"]):
        i = c * shape["parallelism"] + p
        if i >= g.m or not g.rows[i]:
            continue
        row = g.rows[i]
        mags = [f"vm_{e}" for e, _ in row] + [lim] * (dc - len(row))
        negs = [f"vn_{e}" for e, _ in row] + ["1'b0"] * (dc - len(row))
        o.append(f"            {uconst(c, cw)}: begin cp{p}_mag = {concat(mags)}; cp{p}_neg = {concat(negs)}; "
                 f"cp{p}_syn = syn_r[{i}]; end")
    o += ["            default: ;", "        endcase", "    end",
          f"    {cnu_name(dc)} u_cp{p} (.mag(cp{p}_mag), .neg(cp{p}_neg), .syn(cp{p}_syn), .o1(cp{p}_o1), "
          f".o2(cp{p}_o2), .idx(cp{p}_ix), .par(cp{p}_par));"]
    return o


def _var_pe(g: RtlGraph, cfg: RtlConfig, shape: dict[str, int], p: int) -> list[str]:
    """Input multiplexer (check states, own signs, prior, positions) and VPE instance of variable PE ``p``."""
    mw, dv, cw, w = cfg.mag_bits, shape["pe_var_degree"], shape["slot_bits"], cfg.bits
    xw = shape["index_bits"]
    z = uconst(0, mw)
    o = [f"    // variable PE {p}",
         f"    reg [{dv * mw - 1}:0] vp{p}_o1, vp{p}_o2; reg [{dv * xw - 1}:0] vp{p}_ix, vp{p}_pos;",
         f"    reg [{dv - 1}:0] vp{p}_par, vp{p}_own; reg [{w - 1}:0] vp{p}_lam;",
         f"    wire [{dv * mw - 1}:0] vp{p}_mag; wire [{dv - 1}:0] vp{p}_neg; wire vp{p}_hard;",
         "    always @* begin",
         f"        vp{p}_o1 = {dv * mw}'d0; vp{p}_o2 = {dv * mw}'d0; vp{p}_ix = {dv * xw}'d0; "
         f"vp{p}_pos = {dv * xw}'d0;",
         f"        vp{p}_par = {dv}'d0; vp{p}_own = {dv}'d0; vp{p}_lam = {w}'d0;",
         "        case (cyc)"]
    for c in range(shape["var_slots"]):
        j = c * shape["parallelism"] + p
        if j >= g.n:
            continue
        col = g.cols[j]
        pad = dv - len(col)
        lam = sconst(cfg.priors[j], w)
        if not col:
            o.append(f"            {uconst(c, cw)}: vp{p}_lam = {lam};")
            continue
        o.append(f"            {uconst(c, cw)}: begin")
        o.append(f"                vp{p}_o1 = {concat([f's1_{i}' for _, i, _ in col] + [z] * pad)}; "
                 f"vp{p}_o2 = {concat([f's2_{i}' for _, i, _ in col] + [z] * pad)};")
        o.append(f"                vp{p}_ix = {concat([f'sx_{i}' for _, i, _ in col] + [uconst(0, xw)] * pad)}; "
                 f"vp{p}_pos = {concat([uconst(k, xw) for _, _, k in col] + [uconst(0, xw)] * pad)};")
        zb = ["1'b0"] * pad
        par = concat([f"sp_{i}" for _, i, _ in col] + zb)
        own = concat([f"vn_{e}" for e, _, _ in col] + zb)
        o.append(f"                vp{p}_par = {par}; vp{p}_own = {own}; vp{p}_lam = {lam};")
        o.append("            end")
    sel = concat([f"(vp{p}_ix[{k * xw + xw - 1}:{k * xw}] == vp{p}_pos[{k * xw + xw - 1}:{k * xw}])"
                  for k in range(dv)])
    o += ["            default: ;", "        endcase", "    end",
          f"    {vnu_name(dv, lam_port=True)} u_vp{p} (.lam_in(vp{p}_lam), .o1(vp{p}_o1), .o2(vp{p}_o2), "
          f".sel({sel}), .par(vp{p}_par), .own(vp{p}_own), .mag(vp{p}_mag), .neg(vp{p}_neg), .hard(vp{p}_hard));"]
    return o


def emit_syndrome_test(g: RtlGraph) -> str:
    """``bp_syndrome_test``: ``ok = (H hd == syn)`` (one XOR per check, an m-input NOR)."""
    o = ["// Syndrome test of the registered decisions: ok = (H hd == syn).",
         "module bp_syndrome_test (", f"    input  wire [{g.m - 1}:0] syn,", f"    input  wire [{g.n - 1}:0] hd,",
         "    output wire ok", ");", f"    wire [{g.m - 1}:0] unsat;"]
    for i, row in enumerate(g.rows):
        o.append(f"    assign unsat[{i}] = " + " ^ ".join([f"syn[{i}]"] + [f"hd[{j}]" for _, j in row]) + ";")
    o += ["    assign ok = ~|unsat;", "endmodule"]
    return "\n".join(o) + "\n"


def emit_folded_top(g: RtlGraph, cfg: RtlConfig, parallelism: int) -> str:
    """Verilog text of the folded ``bp_top`` (module docstring) for graph ``g`` and ``cfg``."""
    if len(cfg.priors) != g.n:
        raise InputError(f"{len(cfg.priors)} priors for {g.n} variables")
    sh = fold_shape(g, parallelism)
    P, fc, fv = sh["parallelism"], sh["check_slots"], sh["var_slots"]
    mw, iw, w, cw, xw = cfg.mag_bits, cfg.iter_bits, cfg.bits, sh["slot_bits"], sh["index_bits"]
    m, n = g.m, g.n
    o = [
        f"// Folded flooding min-sum decoder: {m} checks, {n} variables, {g.edges} edges, {w}-bit messages, "
        f"alpha {cfg.alpha_num}/256, beta_q {cfg.beta_q}, max_iter {cfg.max_iter};",
        f"// {P} check PEs (degree {sh['pe_check_degree']}) x {fc} slots + {P} variable PEs (degree "
        f"{sh['pe_var_degree']}) x {fv} slots = {fc + fv} cycles per iteration.",
        "module bp_top (",
        "    input  wire clk,", "    input  wire rst,", "    input  wire start,",
        f"    input  wire [{m - 1}:0] syndrome,",
        "    output reg  done,", "    output reg  converged,",
        f"    output wire [{iw - 1}:0] iterations,", f"    output wire [{n - 1}:0] hard",
        ");",
        f"    localparam [{iw - 1}:0] MAX_ITER = {uconst(cfg.max_iter, iw)};",
        f"    localparam [{cw - 1}:0] LAST_CHECK_SLOT = {uconst(fc - 1, cw)}, LAST_VAR_SLOT = {uconst(fv - 1, cw)};",
        "    localparam [1:0] IDLE = 2'd0, RUN = 2'd1, FIN = 2'd2;",
        "    reg [1:0] state;", "    reg phase;  // 0: check slots, 1: variable slots",
        f"    reg [{cw - 1}:0] cyc;", f"    reg [{iw - 1}:0] it;",
        f"    reg [{m - 1}:0] syn_r;", f"    reg [{n - 1}:0] hd;",
        "    assign iterations = it;", "    assign hard = hd;",
        "    // variable-to-check messages, one register pair per edge (CSR order)",
    ]
    for e in range(g.edges):
        o.append(f"    reg [{mw - 1}:0] vm_{e}; reg vn_{e};")
    o.append("    // compressed check states: scaled minima, argmin position, sign parity")
    for i, row in enumerate(g.rows):
        if row:
            o.append(f"    reg [{mw - 1}:0] s1_{i}, s2_{i}; reg [{xw - 1}:0] sx_{i}; reg sp_{i};")
    for p in range(P):
        o += _check_pe(g, cfg, sh, p)
    for p in range(P):
        o += _var_pe(g, cfg, sh, p)
    o += ["    wire ok;", "    bp_syndrome_test u_test (.syn(syn_r), .hd(hd), .ok(ok));"]
    test0 = "ok" if cfg.mutation == "test-at-zero" else f"(it != {uconst(0, iw)}) && ok"
    load = []
    for j, col in enumerate(g.cols):
        lam = cfg.priors[j]
        for e, _, _ in col:
            load.append(f"            vm_{e} <= {uconst(abs(lam), mw)}; vn_{e} <= 1'b{int(lam <= 0)};")
    prior_hard = "".join(str(int(cfg.priors[j] <= 0)) for j in range(n - 1, -1, -1))
    cstep, vstep = [], []
    for c in range(fc):
        body = []
        for p in range(P):
            i = c * P + p
            if i < m and g.rows[i]:
                body.append(f"s1_{i} <= cp{p}_o1; s2_{i} <= cp{p}_o2; sx_{i} <= cp{p}_ix; sp_{i} <= cp{p}_par;")
        if body:
            cstep.append(f"                    {uconst(c, cw)}: begin")
            cstep += [f"                        {b}" for b in body]
            cstep.append("                    end")
    for c in range(fv):
        body = []
        for p in range(P):
            j = c * P + p
            if j >= n:
                continue
            for k, (e, _, _) in enumerate(g.cols[j]):
                body.append(f"vm_{e} <= vp{p}_mag[{k * mw + mw - 1}:{k * mw}]; vn_{e} <= vp{p}_neg[{k}];")
            body.append(f"hd[{j}] <= vp{p}_hard;")
        vstep.append(f"                    {uconst(c, cw)}: begin")
        vstep += [f"                        {b}" for b in body]
        vstep.append("                    end")
    o += [
        "    always @(posedge clk) begin",
        "        if (rst) begin",
        "            state <= IDLE; done <= 1'b0; converged <= 1'b0;",
        f"            it <= {uconst(0, iw)}; phase <= 1'b0; cyc <= {uconst(0, cw)};",
        "        end else if (start && state != RUN) begin",
        "            state <= RUN; done <= 1'b0; converged <= 1'b0; phase <= 1'b0;",
        f"            cyc <= {uconst(0, cw)}; it <= {uconst(0, iw)}; syn_r <= syndrome; hd <= {n}'b{prior_hard};",
        *load,
        "        end else if (state == RUN) begin",
        "            if (phase == 1'b0) begin",
        f"                if (cyc == {uconst(0, cw)} && {test0}) begin",
        "                    state <= FIN; done <= 1'b1; converged <= 1'b1;",
        f"                end else if (cyc == {uconst(0, cw)} && it == MAX_ITER) begin",
        "                    state <= FIN; done <= 1'b1; converged <= 1'b0;",
        "                end else begin",
        "                    case (cyc)",
        *cstep,
        "                    default: ;",
        "                    endcase",
        f"                    if (cyc == LAST_CHECK_SLOT) begin phase <= 1'b1; cyc <= {uconst(0, cw)}; end",
        f"                    else cyc <= cyc + {uconst(1, cw)};",
        "                end",
        "            end else begin",
        "                case (cyc)",
        *vstep,
        "                default: ;",
        "                endcase",
        f"                if (cyc == LAST_VAR_SLOT) begin phase <= 1'b0; cyc <= {uconst(0, cw)}; "
        f"it <= it + {uconst(1, iw)}; end",
        f"                else cyc <= cyc + {uconst(1, cw)};",
        "            end",
        "        end",
        "    end",
        "endmodule",
    ]
    return "\n".join(o) + "\n"


def emit_slice(g: RtlGraph, cfg: RtlConfig, parallelism: int, pe: int = 0) -> str:
    """``bp_slice``: check PE ``pe`` and variable PE ``pe`` with their input multiplexers, the
    registers they read as input ports and their outputs as output ports (the repeating unit of the
    folded design; the PE modules themselves are in ``bp_top.v``)."""
    sh = fold_shape(g, parallelism)
    P = sh["parallelism"]
    if not 0 <= pe < P:
        raise InputError(f"pe must lie in 0..{P - 1}, got {pe}")
    mw, xw, cw, w = cfg.mag_bits, sh["index_bits"], sh["slot_bits"], cfg.bits
    dc, dv = sh["pe_check_degree"], sh["pe_var_degree"]
    edges, checks = set(), set()
    for c in range(sh["check_slots"]):
        i = c * P + pe
        if i < g.m:
            checks.add(i)
            edges.update(e for e, _ in g.rows[i])
    states = set()
    for c in range(sh["var_slots"]):
        j = c * P + pe
        if j < g.n:
            for e, i, _ in g.cols[j]:
                edges.add(e)
                states.add(i)
    ports = [f"    input  wire [{cw - 1}:0] cyc,", f"    input  wire [{g.m - 1}:0] syn_r,"]
    ports += [f"    input  wire [{mw - 1}:0] vm_{e},\n    input  wire vn_{e}," for e in sorted(edges)]
    ports += [f"    input  wire [{mw - 1}:0] s1_{i}, s2_{i},\n    input  wire [{xw - 1}:0] sx_{i},\n"
              f"    input  wire sp_{i}," for i in sorted(states)]
    ports += [f"    output wire [{mw - 1}:0] o1, o2,", f"    output wire [{xw - 1}:0] ix,", "    output wire par,",
              f"    output wire [{dv * mw - 1}:0] mag,", f"    output wire [{dv - 1}:0] neg,", "    output wire hard"]
    o = [f"// PE pair {pe} of the folded decoder (P = {P}, check PE degree {dc} x {sh['check_slots']} slots, "
         f"variable PE degree {dv} x {sh['var_slots']} slots, {w}-bit messages).",
         "module bp_slice (", *ports, ");"]
    o += _check_pe(g, cfg, sh, pe)
    o += _var_pe(g, cfg, sh, pe)
    o += [f"    assign o1 = cp{pe}_o1; assign o2 = cp{pe}_o2; assign ix = cp{pe}_ix; assign par = cp{pe}_par;",
          f"    assign mag = vp{pe}_mag; assign neg = vp{pe}_neg; assign hard = vp{pe}_hard;", "endmodule"]
    return "\n".join(o) + "\n"
