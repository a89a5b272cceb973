"""Variable-node unit ``bp_vnu_d<dv>``: posterior, extrinsic messages and hard decision, combinational.

Parameter ``LAM`` (signed ``bits``): the variable's quantised prior, a synthesis-time constant.
Ports (``MW = bits - 1``; input/output ``k`` = the variable's ``k``-th check, ascending):

* in ``o1[dv*MW]``, ``o2[dv*MW]``: the checks' scaled minima; ``sel[dv]``: this variable holds
  check ``k``'s first minimum (so it receives ``o2``); ``par[dv]``: check ``k``'s sign parity
  (syndrome included); ``own[dv]``: ``[v_k <= 0]`` of this variable's previous message to check ``k``;
* out ``mag[dv*MW]``, ``neg[dv]``: the new message ``v_k`` as ``|v_k|`` and ``[v_k <= 0]``;
  ``hard``: ``[posterior <= 0]``.

Arithmetic (``qdecode.kernels.bp.minsum_flooding``, ``SW`` = :func:`~qdecode.hw.rtl.arith.sum_width`):

* ``c_k = (par_k ^ own_k) ? -m_k : m_k`` with ``m_k = sel_k ? o2_k : o1_k``;
* ``S = LAM + sum_k c_k`` exact in ``SW`` bits; ``post = clip(S, +-post_lim)`` (a no-op, and not
  emitted, when ``SW <= bits + 2``);
* ``v_k = clip(post - c_k, +-msg_lim)``, emitted as ``|v_k|`` and ``[v_k <= 0]``; ``hard = [post <= 0]``.
"""

from __future__ import annotations

from qdecode.errors import InputError
from qdecode.hw.rtl.arith import signed_width, sum_width
from qdecode.hw.rtl.config import RtlConfig


def vnu_name(degree: int, *, lam_port: bool = False) -> str:
    return f"bp_vpe_d{degree}" if lam_port else f"bp_vnu_d{degree}"


def emit_vnu(degree: int, cfg: RtlConfig, *, lam_port: bool = False) -> str:
    """Verilog text of ``bp_vnu_d<degree>`` for ``cfg`` (``degree >= 1``).

    ``lam_port``: emit ``bp_vpe_d<degree>`` instead, the processing element of the folded design
    (:mod:`qdecode.hw.rtl.folded`): the prior arrives on an input ``lam_in[bits]`` (signed) instead
    of the parameter ``LAM``, and an unused input ``k`` (a variable of lower degree in this slot)
    is fed ``o1 = o2 = 0``, so that its ``c_k = 0`` leaves the sum unchanged.
    """
    if degree < 1:
        raise InputError(f"variable degree must be >= 1, got {degree}")
    w, mw, ml, pl = cfg.bits, cfg.mag_bits, cfg.msg_lim, cfg.post_lim
    sw = sum_width(degree, ml)
    pw = cfg.bits + 2
    clip_post = sw > pw
    qw = max(sw, pw)  # width holding post
    dw = signed_width(pl + ml) if clip_post else signed_width((degree + 1) * ml + ml)
    dw = max(dw, qw + 1)
    head = (["module " + vnu_name(degree, lam_port=True) + " (", f"    input  wire [{w - 1}:0] lam_in,"] if lam_port
            else [f"module {vnu_name(degree)} #(", f"    parameter signed [{w - 1}:0] LAM = {w}'sd0", ") ("])
    out = [
        f"// Variable node of degree {degree}: posterior sum ({sw}-bit), extrinsic messages, hard decision.",
        *head,
        f"    input  wire [{degree * mw - 1}:0] o1,",
        f"    input  wire [{degree * mw - 1}:0] o2,",
        f"    input  wire [{degree - 1}:0] sel,",
        f"    input  wire [{degree - 1}:0] par,",
        f"    input  wire [{degree - 1}:0] own,",
        f"    output wire [{degree * mw - 1}:0] mag,",
        f"    output wire [{degree - 1}:0] neg,",
        "    output wire hard",
        ");",
        f"    wire signed [{sw - 1}:0] lam = {'$signed(lam_in)' if lam_port else 'LAM'};",
    ]
    for k in range(degree):
        sl = f"[{k * mw + mw - 1}:{k * mw}]"
        out += [
            f"    wire [{mw - 1}:0] m{k} = sel[{k}] ? o2{sl} : o1{sl};",
            f"    wire signed [{sw - 1}:0] u{k} = $signed({{{sw - mw}'d0, m{k}}});",
            f"    wire signed [{sw - 1}:0] c{k} = (par[{k}] ^ own[{k}]) ? -u{k} : u{k};",
        ]
    total = " + ".join(["lam"] + [f"c{k}" for k in range(degree)])
    out.append(f"    wire signed [{sw - 1}:0] s = {total};")
    if clip_post:
        out.append(f"    wire signed [{qw - 1}:0] post = (s > {pl}) ? {pl} : ((s < -{pl}) ? -{pl} : s);")
    else:
        out.append(f"    wire signed [{qw - 1}:0] post = s;  // |s| <= {(degree + 1) * ml} <= post_lim {pl}: no clip")
    hard_cmp = "<" if cfg.mutation == "hard-negative" else "<="
    out.append(f"    assign hard = (post {hard_cmp} 0);")
    for k in range(degree):
        sl = f"[{k * mw + mw - 1}:{k * mw}]"
        out += [
            f"    wire signed [{dw - 1}:0] d{k} = post - c{k};",
            f"    wire signed [{dw - 1}:0] a{k} = (d{k} < 0) ? -d{k} : d{k};",
        ]
        if cfg.mutation == "msg-wrap":
            out.append(f"    assign mag{sl} = a{k}[{mw - 1}:0];")
        else:
            out.append(f"    assign mag{sl} = (a{k} > {ml}) ? {ml} : a{k}[{mw - 1}:0];")
        out.append(f"    assign neg[{k}] = (d{k} <= 0);")
    out.append("endmodule")
    return "\n".join(out) + "\n"
