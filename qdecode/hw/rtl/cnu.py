"""Check-node unit ``bp_cnu_d<D>``: compressed check state and scaled outputs, combinational.

Ports (``MW = bits - 1``, ``XW = max(1, ceil(log2 D))``):

* in ``mag[D*MW]``: ``|v_k|`` of input ``k`` at ``[k*MW +: MW]``, ``k`` = position in the row
  (ascending variable index); in ``neg[D]``: ``[v_k <= 0]``; in ``syn``: the check's syndrome bit;
* out ``o1[MW]``, ``o2[MW]``: scaled first and second minimum; ``idx[XW]``: position of the
  first (lowest-position) strict minimum; ``par``: ``syn ^ xor_k neg[k]``.

Arithmetic (``qdecode.kernels.minsum.fold_min`` / ``check_magnitude``):

* two-minimum tree, ``D - 1`` merge nodes, depth ``ceil(log2 D)``; leaves ``(|v_k|, msg_lim, k)``;
  a merge of ``a`` (lower positions) and ``b``: ``lt = b1 < a1``;
  ``m1 = lt ? b1 : a1``; ``m2 = lt ? min(a1, b2) : min(b1, a2)``; ``idx = lt ? bi : ai``. This equals
  the kernel's sequential fold with ``min1 = min2 = msg_lim`` initially and ties kept by the
  first position;
* ``o = max(((m * alpha_num) >> 8) - beta_q, 0)`` for ``m`` in ``{min1, min2}``, the product a
  canonical-signed-digit sum of shifted copies of ``m`` at ``MW + 9`` bits, truncated once;
  ``o <= m <= msg_lim`` because ``alpha_num <= 256``, so no upper clip is needed.
"""

from __future__ import annotations

from qdecode.errors import InputError
from qdecode.hw.rtl.arith import csd_terms, index_width
from qdecode.hw.rtl.config import RtlConfig
from qdecode.hw.rtl.graph import RtlGraph
from qdecode.hw.rtl.verilog import concat, uconst


def cnu_name(degree: int) -> str:
    return f"bp_cnu_d{degree}"


def cnu_instances(g: RtlGraph, mw: int) -> list[str]:
    """Verilog lines instantiating one ``bp_cnu_d<D>`` per non-empty check of ``g``, with its output wires
    ``c<i>_o1`` / ``c<i>_o2`` (``mw`` bits), ``c<i>_ix`` (the least input's slot) and ``c<i>_par``, fed
    from the registered variable-to-check messages ``vm_<e>`` / ``vn_<e>`` and the syndrome ``syn_r``."""
    o = ["    // check nodes"]
    for i, row in enumerate(g.rows):
        if not row:
            continue
        d = len(row)
        xw = index_width(d)
        o += [
            f"    wire [{mw - 1}:0] c{i}_o1, c{i}_o2; wire [{xw - 1}:0] c{i}_ix; wire c{i}_par;",
            f"    {cnu_name(d)} u_c{i} (.mag({concat([f'vm_{e}' for e, _ in row])}), "
            f".neg({concat([f'vn_{e}' for e, _ in row])}), .syn(syn_r[{i}]), "
            f".o1(c{i}_o1), .o2(c{i}_o2), .idx(c{i}_ix), .par(c{i}_par));",
        ]
    return o


def _scale_expr(src: str, cfg: RtlConfig, pw: int) -> str:
    """Verilog expression of the ``pw``-bit product ``src * alpha_num`` (before ``>> 8``)."""
    mw = cfg.mag_bits
    ext = f"{{{pw - mw}'d0, {src}}}"
    if cfg.mutation == "alpha-round":
        return f"({ext} * {uconst(cfg.alpha_num, 9)} + {uconst(128, pw)})"
    terms = csd_terms(cfg.alpha_num)
    parts = []
    for sign, k in terms:
        t = f"({ext} << {k})" if k else ext
        parts.append(("- " if sign < 0 else "+ ") + t)
    expr = " ".join(parts)
    return "(" + (expr[2:] if expr.startswith("+ ") else f"{pw}'d0 {expr}") + ")"


def _scaled(out: str, src: str, cfg: RtlConfig) -> list[str]:
    mw = cfg.mag_bits
    pw = mw + 9
    lines = []
    if cfg.mutation == "alpha-truncated-shifts":
        shifted = [f"({{9'd0, {src}}} >> {8 - k})" for k in range(8, -1, -1) if cfg.alpha_num >> k & 1]
        lines.append(f"    wire [{pw - 1}:0] {out}_p = {' + '.join(shifted)};")
        lines.append(f"    wire [{mw - 1}:0] {out}_s = {out}_p[{mw - 1}:0];")
    else:
        lines.append(f"    wire [{pw - 1}:0] {out}_p = {_scale_expr(src, cfg, pw)};")
        lines.append(f"    wire [{mw - 1}:0] {out}_s = {out}_p[{mw + 7}:8];")
    if cfg.beta_q == 0:
        lines.append(f"    assign {out} = {out}_s;")
    elif cfg.beta_q > cfg.msg_lim:
        lines.append(f"    assign {out} = {uconst(0, mw)};  // beta_q {cfg.beta_q} > msg_lim: always 0")
    else:
        b = uconst(cfg.beta_q, mw)
        lines.append(f"    assign {out} = ({out}_s > {b}) ? ({out}_s - {b}) : {uconst(0, mw)};")
    return lines


def emit_cnu(degree: int, cfg: RtlConfig) -> str:
    """Verilog text of ``bp_cnu_d<degree>`` for ``cfg`` (``degree >= 1``)."""
    if degree < 1:
        raise InputError(f"check degree must be >= 1, got {degree}")
    mw, xw, lim = cfg.mag_bits, index_width(degree), cfg.msg_lim
    lim_c = uconst(lim, mw)
    init2 = uconst(0, mw) if cfg.mutation == "min2-zero" else lim_c
    tie_last = cfg.mutation == "argmin-last"
    out = [
        f"// Check node of degree {degree}: two-minimum tree, sign parity, scaling "
        f"(x * {cfg.alpha_num}) >> 8, offset {cfg.beta_q}.",
        f"module {cnu_name(degree)} (",
        f"    input  wire [{degree * mw - 1}:0] mag,",
        f"    input  wire [{degree - 1}:0] neg,",
        "    input  wire syn,",
        f"    output wire [{mw - 1}:0] o1,",
        f"    output wire [{mw - 1}:0] o2,",
        f"    output wire [{xw - 1}:0] idx,",
        "    output wire par",
        ");",
        "    assign par = syn ^ (^neg);",
    ]
    counter = [0]

    def node(lo: int, hi: int) -> tuple[str, str, str]:
        if hi - lo == 1:
            return f"mag[{lo * mw + mw - 1}:{lo * mw}]", init2, uconst(lo, xw)
        mid = (lo + hi) // 2
        a1, a2, ai = node(lo, mid)
        b1, b2, bi = node(mid, hi)
        t = counter[0]
        counter[0] += 1
        cmp = "<=" if tie_last else "<"
        out.extend([
            f"    wire t{t}_lt = {b1} {cmp} {a1};",
            f"    wire [{mw - 1}:0] t{t}_m1 = t{t}_lt ? {b1} : {a1};",
            f"    wire [{mw - 1}:0] t{t}_m2 = t{t}_lt ? (({a1} < {b2}) ? {a1} : {b2}) "
            f": (({b1} < {a2}) ? {b1} : {a2});",
            f"    wire [{xw - 1}:0] t{t}_ix = t{t}_lt ? {bi} : {ai};",
        ])
        return f"t{t}_m1", f"t{t}_m2", f"t{t}_ix"

    m1, m2, ix = node(0, degree)
    out += [f"    wire [{mw - 1}:0] min1 = {m1};", f"    wire [{mw - 1}:0] min2 = {m2};", f"    assign idx = {ix};"]
    out += _scaled("o1", "min1", cfg)
    out += _scaled("o2", "min2", cfg)
    out.append("endmodule")
    return "\n".join(out) + "\n"
