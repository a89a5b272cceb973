"""Top module ``bp_top``: per-edge message registers, CNU/VNU instances wired from H, syndrome
test and the iteration FSM.

Ports: ``clk``, ``rst`` (synchronous, active high), ``start``, ``syndrome[m]`` (bit ``i`` =
check ``i``, sampled on the ``start`` edge), ``done``, ``converged``, ``iterations[IW]``
(``IW`` = bits of ``max_iter``), ``hard[n]`` (bit ``j`` = variable ``j``).

State: per edge ``e`` (CSR order) ``vm_e`` (``bits - 1``) and ``vn_e`` (1): the last
variable-to-check message as ``|v|`` and ``[v <= 0]``; ``syn_r[m]``, ``hd[n]``, ``it[IW]``,
``state``. Registers: ``bits * edges + m + n + IW + 4`` flip-flops.

Cycle contract (one iteration per clock):

* edge 0 (``start`` high while not running): latch ``syndrome``, load ``v = lambda`` on every
  edge and ``hd = [lambda <= 0]``, ``it = 0``, clear ``done``;
* every later edge while running: if ``it != 0`` and ``H hd = syn_r`` -> ``done``, ``converged``;
  else if ``it == max_iter`` -> ``done``, not converged; else one flooding iteration (all checks
  from the registered messages, all variables from the checks' outputs, new messages and ``hd``
  registered) and ``it += 1``;
* so ``done`` rises after ``iterations + 2`` edges counted from the ``start`` edge, and
  ``hard``, ``iterations``, ``converged`` hold until the next ``start``.

The syndrome test reads the *registered* decisions (an XOR per check, an m-input NOR), so it is
not on the iteration's critical path; it costs one cycle per decode, not per iteration. As in the
kernel there is no test before iteration 1.
"""

from __future__ import annotations

from qdecode.errors import InputError
from qdecode.hw.rtl.arith import index_width
from qdecode.hw.rtl.cnu import cnu_instances
from qdecode.hw.rtl.config import RtlConfig
from qdecode.hw.rtl.graph import RtlGraph
from qdecode.hw.rtl.verilog import concat, sconst, uconst
from qdecode.hw.rtl.vnu import vnu_name


def emit_top(g: RtlGraph, cfg: RtlConfig) -> str:
    """Verilog text of ``bp_top`` for graph ``g`` and configuration ``cfg``."""
    if len(cfg.priors) != g.n:
        raise InputError(f"{len(cfg.priors)} priors for {g.n} variables")
    mw, iw, w = cfg.mag_bits, cfg.iter_bits, cfg.bits
    m, n = g.m, g.n
    o = [
        f"// Flooding min-sum decoder: {m} checks, {n} variables, {g.edges} edges, {w}-bit messages, "
        f"alpha {cfg.alpha_num}/256, beta_q {cfg.beta_q}, max_iter {cfg.max_iter}.",
        "module bp_top (",
        "    input  wire clk,",
        "    input  wire rst,",
        "    input  wire start,",
        f"    input  wire [{m - 1}:0] syndrome,",
        "    output reg  done,",
        "    output reg  converged,",
        f"    output wire [{iw - 1}:0] iterations,",
        f"    output wire [{n - 1}:0] hard",
        ");",
        f"    localparam [{iw - 1}:0] MAX_ITER = {uconst(cfg.max_iter, iw)};",
        "    localparam [1:0] IDLE = 2'd0, RUN = 2'd1, FIN = 2'd2;",
        "    reg [1:0] state;",
        f"    reg [{iw - 1}:0] it;",
        f"    reg [{m - 1}:0] syn_r;",
        f"    reg [{n - 1}:0] hd;",
        "    assign iterations = it;",
        "    assign hard = hd;",
        "    // variable-to-check messages, one register pair per edge (CSR order)",
    ]
    for e in range(g.edges):
        o.append(f"    reg [{mw - 1}:0] vm_{e}; reg vn_{e}; wire [{mw - 1}:0] nvm_{e}; wire nvn_{e};")
    o.append(f"    wire [{n - 1}:0] hd_next;")
    o += cnu_instances(g, mw)
    o.append("    // variable nodes (priors as constants)")
    for j, col in enumerate(g.cols):
        lam = cfg.priors[j]
        if not col:
            o.append(f"    assign hd_next[{j}] = 1'b{int(lam <= 0)};  // no checks: posterior = prior")
            continue
        d = len(col)
        sel = []
        for e, i, k in col:
            xw = index_width(len(g.rows[i]))
            sel.append(f"(c{i}_ix == {uconst(k, xw)})")
        o += [
            f"    wire [{d * mw - 1}:0] v{j}_mag; wire [{d - 1}:0] v{j}_neg;",
            f"    {vnu_name(d)} #(.LAM({sconst(lam, w)})) u_v{j} ("
            f".o1({concat([f'c{i}_o1' for _, i, _ in col])}), .o2({concat([f'c{i}_o2' for _, i, _ in col])}), "
            f".sel({concat(sel)}), .par({concat([f'c{i}_par' for _, i, _ in col])}), "
            f".own({concat([f'vn_{e}' for e, _, _ in col])}), .mag(v{j}_mag), .neg(v{j}_neg), .hard(hd_next[{j}]));",
        ]
        for k, (e, _, _) in enumerate(col):
            o.append(f"    assign nvm_{e} = v{j}_mag[{k * mw + mw - 1}:{k * mw}]; assign nvn_{e} = v{j}_neg[{k}];")
    o.append("    // syndrome test on the registered decisions: ok = (H hd == syn_r)")
    o.append(f"    wire [{m - 1}:0] unsat;")
    for i, row in enumerate(g.rows):
        o.append(f"    assign unsat[{i}] = " + " ^ ".join([f"syn_r[{i}]"] + [f"hd[{j}]" for _, j in row]) + ";")
    o.append("    wire ok = ~|unsat;")
    test = "ok" if cfg.mutation == "test-at-zero" else f"(it != {uconst(0, iw)}) && ok"
    load, step = [], []
    for j, col in enumerate(g.cols):
        lam = cfg.priors[j]
        for e, _, _ in col:
            load.append(f"            vm_{e} <= {uconst(abs(lam), mw)}; vn_{e} <= 1'b{int(lam <= 0)};")
            step.append(f"                vm_{e} <= nvm_{e}; vn_{e} <= nvn_{e};")
    prior_hard = "".join(str(int(cfg.priors[j] <= 0)) for j in range(n - 1, -1, -1))
    o += [
        "    always @(posedge clk) begin",
        "        if (rst) begin",
        "            state <= IDLE; done <= 1'b0; converged <= 1'b0;",
        f"            it <= {uconst(0, iw)};",
        "        end else if (start && state != RUN) begin",
        "            state <= RUN; done <= 1'b0; converged <= 1'b0;",
        f"            it <= {uconst(0, iw)}; syn_r <= syndrome; hd <= {n}'b{prior_hard};",
        *load,
        "        end else if (state == RUN) begin",
        f"            if ({test}) begin",
        "                state <= FIN; done <= 1'b1; converged <= 1'b1;",
        "            end else if (it == MAX_ITER) begin",
        "                state <= FIN; done <= 1'b1; converged <= 1'b0;",
        "            end else begin",
        f"                it <= it + {uconst(1, iw)}; hd <= hd_next;",
        *step,
        "            end",
        "        end",
        "    end",
        "endmodule",
    ]
    return "\n".join(o) + "\n"
