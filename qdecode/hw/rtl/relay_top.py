"""Fully parallel fixed-point Relay-BP decoder ``relay_top``, bit-exact with :func:`qdecode.kernels.relay.relay_decode`.

Built from a Relay-BP vector set (:mod:`qdecode.hw.relay_vectors`: fixed-point messages, an
explicit gamma table, integer solution weights). Per Tanner edge one message register pair (as
:mod:`qdecode.hw.rtl.top`), per check a ``bp_cnu_d<D>`` (the same check unit as min-sum BP, offset
0), per variable a ``relay_vnu_d<V>`` and the registers ``M_j`` (memory, ``bits + 2``), ``hd_j``
(current decision) and ``best_j`` (returned decision). The gamma table is a ROM baked into the
design (one ``n * GW``-bit word per row, ``GW`` = ``gamma_bits`` of the vector set), selected by the
row register ``r % R``; leg 0 uses the constant ``g0`` on every variable.

Variable unit arithmetic (``PL = post_lim``, ``ML = msg_lim``; all words signed, exact widths
from :func:`~qdecode.hw.rtl.arith.signed_width`):

* ``b = clip(lambda + (((M - lambda) * g + 128) >>> 8), PL)``, which equals the kernel's
  ``clip((lambda (256 - g) + M g + 128) >> 8, PL)`` exactly (``256 lambda`` is a multiple of 256):
  one ``(bits+3) x GW``-bit signed multiplier per variable;
* ``S = b + sum_k c_k`` (``c_k`` as in min-sum: ``o2`` for the argmin holder, sign
  ``par ^ own``), ``M' = clip(S, PL)``, ``hard = [M' <= 0]``;
* ``v_k = clip(S - c_k, ML)`` from the **unclipped** ``S`` (the kernel's prefix + suffix sum).

Control (one iteration per clock; ``itl`` iterations of the current leg, ``limit`` = ``pre_iter``
for leg 0, else ``leg_iter``):

* start edge: latch the syndrome, ``M = lambda``, ``hd = [lambda <= 0]``, messages ``v = lambda``;
* each edge: if ``itl != 0`` and ``H hd = s`` (leg converged) or ``itl == limit``: end the leg
  (leg 0: ``best = hd``; a converged later leg: ``best = hd`` when no leg had converged or
  ``W(hd) < W(best)``, ``W(e) = sum_{e_j = 1} lambda_j``; count converged legs); stop after
  ``stop_after`` converged legs or after leg ``legs``, else start the next leg (messages back to
  ``lambda``, ``M`` and ``hd`` kept, next gamma row). Otherwise one flooding iteration.

**Cycle formula**: ``done`` rises ``iterations + legs_run + 2`` rising edges after the ``start``
edge (load, one edge per iteration, one leg-end edge per leg run, ``legs_run + 1`` legs).
Ports: ``clk, rst, start, syndrome[m], done, converged, iterations[IW], legs_run[LW],
weight[WW], hard[n]`` (``hard`` = the returned decision).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from qdecode.errors import InputError
from qdecode.hw.rtl.arith import index_width, signed_width, unsigned_width
from qdecode.hw.rtl.cnu import cnu_instances, emit_cnu
from qdecode.hw.rtl.config import RtlConfig
from qdecode.hw.rtl.graph import RtlGraph
from qdecode.hw.rtl.verilog import FOOTER, HEADER, concat, sconst, uconst

TOP = "relay_top"
#: name -> what the deliberate deviation does (each must make the bench report mismatches)
RELAY_MUTATIONS: dict[str, str] = {
    "memory-floor": "memory prior without the +128 rounding: ((M - lambda) * g) >>> 8",
}


@dataclasses.dataclass(frozen=True)
class RelayRtlConfig:
    """Constants of one generated Relay-BP decoder (see the module docstring)."""

    bits: int
    frac_bits: int
    alpha: float
    alpha_num: int
    priors: tuple[int, ...]
    gamma0_num: int
    gammas: tuple[tuple[int, ...], ...]  # (R, n) numerators g = rint(256 gamma)
    gamma_bits: int
    pre_iter: int
    legs: int
    leg_iter: int
    stop_after: int
    mutation: str | None = None

    def __post_init__(self) -> None:
        base = self.base  # validates bits, alpha_num, priors
        if self.mutation is not None and self.mutation not in RELAY_MUTATIONS:
            raise InputError(f"unknown relay mutation {self.mutation!r}; known: {', '.join(RELAY_MUTATIONS)}")
        if min(self.pre_iter, self.leg_iter, self.stop_after) < 1 or self.legs < 0:
            raise InputError("relay RTL needs pre_iter, leg_iter, stop_after >= 1 and legs >= 0")
        if not self.gammas or any(len(r) != len(self.priors) for r in self.gammas):
            raise InputError(f"gamma table must have >= 1 rows of {len(self.priors)} numerators")
        lim = 1 << (self.gamma_bits - 1)
        if any(not -lim <= g < lim for g in (self.gamma0_num, *[x for r in self.gammas for x in r])):
            raise InputError(f"a gamma numerator does not fit {self.gamma_bits} signed bits")
        del base

    @property
    def base(self) -> RtlConfig:
        """The min-sum part (check unit, widths) as an :class:`RtlConfig` (offset 0)."""
        return RtlConfig(bits=self.bits, frac_bits=self.frac_bits, alpha=self.alpha, alpha_num=self.alpha_num,
                         beta_q=0, max_iter=self.max_total, priors=self.priors)

    @property
    def max_total(self) -> int:
        """Worst-case total iterations ``pre_iter + legs * leg_iter``."""
        return self.pre_iter + self.legs * self.leg_iter

    def widths(self, n: int) -> dict[str, int]:
        msg_lim = (1 << (self.bits - 1)) - 1
        return {"iter_bits": unsigned_width(self.max_total), "leg_iter_bits": unsigned_width(max(self.pre_iter,
                                                                                                  self.leg_iter)),
                "legs_bits": unsigned_width(self.legs), "nconv_bits": unsigned_width(self.stop_after),
                "row_bits": unsigned_width(len(self.gammas) - 1), "weight_bits": signed_width(n * msg_lim),
                "post_bits": self.bits + 2, "gamma_bits": self.gamma_bits}

    def gammas_sha256(self) -> str:
        return hashlib.sha256(np.asarray(self.gammas, dtype="<i8").tobytes()).hexdigest()

    def as_dict(self) -> dict[str, Any]:
        b = self.base
        return {"decoder": "relay-bp", "bits": self.bits, "frac_bits": self.frac_bits, "alpha": self.alpha,
                "alpha_num": self.alpha_num, "alpha_shift": 8, "beta_q": 0, "msg_lim": b.msg_lim,
                "post_lim": b.post_lim, "gamma0_num": self.gamma0_num, "gamma_shift": 8,
                "gamma_rows": len(self.gammas), "gamma_bits": self.gamma_bits, "pre_iter": self.pre_iter,
                "legs": self.legs, "leg_iter": self.leg_iter, "stop_after": self.stop_after,
                "max_iter": self.max_total, "schedule": "flooding", "method": "minsum",
                "priors_sha256": b.priors_sha256(), "gammas_sha256": self.gammas_sha256(), "mutation": self.mutation,
                "weights": "integer: W(e) = sum of priors_q over e_j = 1"}


def relay_config_from_vectors(vs: Any, relay: dict[str, Any], *, mutation: str | None = None) -> RelayRtlConfig:
    """The :class:`RelayRtlConfig` of a loaded relay vector set
    (:func:`~qdecode.hw.relay_vectors.load_relay_vectors`)."""
    mf = vs.manifest
    if int(mf.get("beta_q", 0)) != 0 or mf.get("schedule") != "flooding":
        raise InputError("relay RTL implements flooding min-sum without offset")
    G = np.asarray(relay["gammas_q"], dtype=np.int64)
    return RelayRtlConfig(bits=int(mf["bits"]), frac_bits=int(mf["frac_bits"]), alpha=float(mf["alpha"]),
                          alpha_num=int(mf["alpha_num"]), priors=tuple(int(x) for x in vs.priors_q.tolist()),
                          gamma0_num=int(mf["gamma0_num"]), gammas=tuple(tuple(int(x) for x in r) for r in G.tolist()),
                          gamma_bits=int(mf["gamma_bits"]), pre_iter=int(mf["pre_iter"]), legs=int(mf["legs"]),
                          leg_iter=int(mf["leg_iter"]), stop_after=int(mf["stop_after"]), mutation=mutation)


def relay_vnu_name(degree: int) -> str:
    return f"relay_vnu_d{degree}"


def _clip(name: str, src: str, width: int, lim: int) -> str:
    hi, lo = sconst(lim, width), sconst(-lim, width)
    return f"    wire signed [{width - 1}:0] {name} = ({src} > {hi}) ? {hi} : (({src} < {lo}) ? {lo} : {src});"


def emit_relay_vnu(degree: int, cfg: RelayRtlConfig) -> str:
    """Verilog text of ``relay_vnu_d<degree>`` (module docstring: memory prior, sum, messages, decision)."""
    if degree < 1:
        raise InputError(f"variable degree must be >= 1, got {degree}")
    b = cfg.base
    w, mw, ml, pl, gw = b.bits, b.mag_bits, b.msg_lim, b.post_lim, cfg.gamma_bits
    pw = w + 2
    dmw = signed_width(pl + ml)  # M - lambda
    prw = dmw + gw  # product
    bw = prw + 1  # lambda + shifted product
    sw = signed_width(pl + degree * ml)  # b + sum c
    dw = signed_width(pl + (degree + 1) * ml)  # S - c
    o = [f"// Relay-BP variable node of degree {degree}: memory prior (x {gw}-bit gamma), posterior, messages.",
         f"module {relay_vnu_name(degree)} #(", f"    parameter signed [{w - 1}:0] LAM = {w}'sd0", ") (",
         f"    input  wire [{pw - 1}:0] mem,", f"    input  wire [{gw - 1}:0] gq,",
         f"    input  wire [{degree * mw - 1}:0] o1,", f"    input  wire [{degree * mw - 1}:0] o2,",
         f"    input  wire [{degree - 1}:0] sel,", f"    input  wire [{degree - 1}:0] par,",
         f"    input  wire [{degree - 1}:0] own,", f"    output wire [{degree * mw - 1}:0] mag,",
         f"    output wire [{degree - 1}:0] neg,", f"    output wire [{pw - 1}:0] mem_next,",
         "    output wire hard", ");",
         f"    wire signed [{dmw - 1}:0] lam_d = LAM;",
         f"    wire signed [{dmw - 1}:0] dm = $signed(mem) - lam_d;",
         f"    wire signed [{gw - 1}:0] g = $signed(gq);",
         f"    wire signed [{prw - 1}:0] prod = dm * g;",
         (f"    wire signed [{prw - 1}:0] sh = prod >>> 8;" if cfg.mutation == "memory-floor" else
          f"    wire signed [{prw - 1}:0] sh = (prod + {sconst(128, prw)}) >>> 8;"),
         f"    wire signed [{bw - 1}:0] b0 = sh + LAM;"]
    o.append(_clip("b", "b0", bw, pl))
    for k in range(degree):
        sl = f"[{k * mw + mw - 1}:{k * mw}]"
        o += [f"    wire [{mw - 1}:0] m{k} = sel[{k}] ? o2{sl} : o1{sl};",
              f"    wire signed [{sw - 1}:0] u{k} = $signed({{{sw - mw}'d0, m{k}}});",
              f"    wire signed [{sw - 1}:0] c{k} = (par[{k}] ^ own[{k}]) ? -u{k} : u{k};"]
    o.append(f"    wire signed [{sw - 1}:0] bs = b;")
    o.append(f"    wire signed [{sw - 1}:0] s = " + " + ".join(["bs"] + [f"c{k}" for k in range(degree)]) + ";")
    o.append(_clip("post", "s", sw, pl))
    o += [f"    assign mem_next = post[{pw - 1}:0];", "    assign hard = (post <= 0);"]
    for k in range(degree):
        sl = f"[{k * mw + mw - 1}:{k * mw}]"
        o += [f"    wire signed [{dw - 1}:0] d{k} = s - c{k};",
              f"    wire signed [{dw - 1}:0] a{k} = (d{k} < 0) ? -d{k} : d{k};",
              f"    assign mag{sl} = (a{k} > {ml}) ? {ml} : a{k}[{mw - 1}:0];",
              f"    assign neg[{k}] = (d{k} <= 0);"]
    o.append("endmodule")
    return "\n".join(o) + "\n"


def relay_flip_flops(g: RtlGraph, cfg: RelayRtlConfig) -> int:
    """Registers: messages, ``M``, ``hd``, ``best``, syndrome, counters, flags (exact)."""
    wd = cfg.widths(g.n)
    return (cfg.bits * g.edges + g.n * (wd["post_bits"] + 2) + g.m + wd["iter_bits"] + wd["leg_iter_bits"]
            + wd["legs_bits"] + wd["nconv_bits"] + wd["row_bits"] + wd["weight_bits"] + 2 + 1 + 1 + 2)


def emit_relay_top(g: RtlGraph, cfg: RelayRtlConfig) -> str:
    """Verilog text of ``relay_top`` (module docstring)."""
    b = cfg.base
    if len(cfg.priors) != g.n:
        raise InputError(f"{len(cfg.priors)} priors for {g.n} variables")
    wd = cfg.widths(g.n)
    mw, w, pw, gw = b.mag_bits, b.bits, wd["post_bits"], cfg.gamma_bits
    iw, tw, lw, nw, rw, ww = (wd[k] for k in ("iter_bits", "leg_iter_bits", "legs_bits", "nconv_bits", "row_bits",
                                             "weight_bits"))
    m, n, R = g.m, g.n, len(cfg.gammas)
    o = [f"// Relay-BP decoder: {m} checks, {n} variables, {g.edges} edges, {w}-bit messages, alpha {b.alpha_num}/256;",
         f"// leg 0: {cfg.pre_iter} iterations at g0 = {cfg.gamma0_num}/256; up to {cfg.legs} legs of {cfg.leg_iter} "
         f"with {R} gamma rows; stop after {cfg.stop_after} converged legs.",
         f"module {TOP} (", "    input  wire clk,", "    input  wire rst,", "    input  wire start,",
         f"    input  wire [{m - 1}:0] syndrome,", "    output reg  done,", "    output reg  converged,",
         f"    output wire [{iw - 1}:0] iterations,", f"    output wire [{lw - 1}:0] legs_run,",
         f"    output wire [{ww - 1}:0] weight,", f"    output wire [{n - 1}:0] hard", ");",
         f"    localparam [{tw - 1}:0] PRE_ITER = {uconst(cfg.pre_iter, tw)}, LEG_ITER = {uconst(cfg.leg_iter, tw)};",
         f"    localparam [{lw - 1}:0] LEGS = {uconst(cfg.legs, lw)};",
         f"    localparam [{nw - 1}:0] STOP_AFTER = {uconst(cfg.stop_after, nw)};",
         f"    localparam [{rw - 1}:0] LAST_ROW = {uconst(R - 1, rw)}, ROW1 = {uconst(1 % R, rw)};",
         "    localparam [1:0] IDLE = 2'd0, RUN = 2'd1, FIN = 2'd2;",
         "    reg [1:0] state;", "    reg leg0;  // leg 0 runs", "    reg any_conv;",
         f"    reg [{iw - 1}:0] it;", f"    reg [{tw - 1}:0] itl;", f"    reg [{lw - 1}:0] leg;",
         f"    reg [{nw - 1}:0] nconv;", f"    reg [{rw - 1}:0] grow;", f"    reg signed [{ww - 1}:0] best_w;",
         f"    reg [{m - 1}:0] syn_r;", f"    reg [{n - 1}:0] hd, best;",
         "    assign iterations = it; assign legs_run = leg; assign weight = best_w; assign hard = best;"]
    for j in range(n):
        o.append(f"    reg [{pw - 1}:0] mem_{j}; wire [{pw - 1}:0] nmem_{j};")
    for e in range(g.edges):
        o.append(f"    reg [{mw - 1}:0] vm_{e}; reg vn_{e}; wire [{mw - 1}:0] nvm_{e}; wire nvn_{e};")
    o.append(f"    wire [{n - 1}:0] hd_next;")
    # gamma ROM
    o += [f"    reg [{n * gw - 1}:0] gtab;", "    always @* begin", "        case (grow)"]
    for r, row in enumerate(cfg.gammas):
        word = 0
        for j, x in enumerate(row):
            word |= (x & ((1 << gw) - 1)) << (j * gw)
        o.append(f"            {uconst(r, rw)}: gtab = {n * gw}'h{word:x};")
    o += [f"            default: gtab = {n * gw}'h0;", "        endcase", "    end"]
    g0 = sconst(cfg.gamma0_num, gw)
    o += cnu_instances(g, mw)
    o.append("    // variable nodes (priors as constants, gammas from the ROM row or g0 in leg 0)")
    for j, col in enumerate(g.cols):
        lam = cfg.priors[j]
        gsel = f"(leg0 ? {g0} : gtab[{j * gw + gw - 1}:{j * gw}])"
        d = max(1, len(col))
        if col:
            sel = [f"(c{i}_ix == {uconst(k, index_width(len(g.rows[i])))})" for _, i, k in col]
            o += [f"    wire [{d * mw - 1}:0] v{j}_mag; wire [{d - 1}:0] v{j}_neg;",
                  f"    {relay_vnu_name(d)} #(.LAM({sconst(lam, w)})) u_v{j} (.mem(mem_{j}), .gq({gsel}), "
                  f".o1({concat([f'c{i}_o1' for _, i, _ in col])}), .o2({concat([f'c{i}_o2' for _, i, _ in col])}), "
                  f".sel({concat(sel)}), .par({concat([f'c{i}_par' for _, i, _ in col])}), "
                  f".own({concat([f'vn_{e}' for e, _, _ in col])}), .mag(v{j}_mag), .neg(v{j}_neg), "
                  f".mem_next(nmem_{j}), .hard(hd_next[{j}]));"]
            for k, (e, _, _) in enumerate(col):
                o.append(f"    assign nvm_{e} = v{j}_mag[{k * mw + mw - 1}:{k * mw}]; assign nvn_{e} = v{j}_neg[{k}];")
        else:  # a variable without checks: one degree-1 unit with a zero input
            o += [f"    wire [{mw - 1}:0] v{j}_mag; wire v{j}_neg;",
                  f"    {relay_vnu_name(1)} #(.LAM({sconst(lam, w)})) u_v{j} (.mem(mem_{j}), .gq({gsel}), "
                  f".o1({uconst(0, mw)}), .o2({uconst(0, mw)}), .sel(1'b0), .par(1'b0), .own(1'b0), "
                  f".mag(v{j}_mag), .neg(v{j}_neg), .mem_next(nmem_{j}), .hard(hd_next[{j}]));"]
    o.append("    // syndrome test on the registered decisions, and W(hd) = sum of priors over hd_j = 1")
    o.append(f"    wire [{m - 1}:0] unsat;")
    for i, row in enumerate(g.rows):
        o.append(f"    assign unsat[{i}] = " + " ^ ".join([f"syn_r[{i}]"] + [f"hd[{j}]" for _, j in row]) + ";")
    o.append("    wire ok = ~|unsat;")
    terms = [f"(hd[{j}] ? {sconst(cfg.priors[j], ww)} : {sconst(0, ww)})" for j in range(n) if cfg.priors[j] != 0]
    o.append(f"    wire signed [{ww - 1}:0] wsum = " + (" + ".join(terms) if terms else sconst(0, ww)) + ";")
    o += [f"    wire [{tw - 1}:0] limit = leg0 ? PRE_ITER : LEG_ITER;",
          f"    wire conv_now = (itl != {uconst(0, tw)}) && ok;",
          "    wire end_now = conv_now || (itl == limit);",
          f"    wire [{nw - 1}:0] nconv_new = nconv + conv_now;  // <= stop_after: fits",
          "    wire take = leg0 || (conv_now && (!any_conv || (wsum < best_w)));",
          "    wire stop = (nconv_new >= STOP_AFTER) || (leg == LEGS);"]
    restart = []
    for j, col in enumerate(g.cols):
        lam = cfg.priors[j]
        for e, _, _ in col:
            restart.append(f"vm_{e} <= {uconst(abs(lam), mw)}; vn_{e} <= 1'b{int(lam <= 0)};")
    step = [f"vm_{e} <= nvm_{e}; vn_{e} <= nvn_{e};" for e in range(g.edges)]
    step += [f"mem_{j} <= nmem_{j};" for j in range(n)]
    load_mem = [f"mem_{j} <= {sconst(cfg.priors[j], pw)};" for j in range(n)]
    prior_hard = "".join(str(int(cfg.priors[j] <= 0)) for j in range(n - 1, -1, -1))
    ind = "            "
    o += ["    always @(posedge clk) begin",
          "        if (rst) begin",
          "            state <= IDLE; done <= 1'b0; converged <= 1'b0;",
          f"            it <= {uconst(0, iw)}; leg <= {uconst(0, lw)};",
          "        end else if (start && state != RUN) begin",
          "            state <= RUN; done <= 1'b0; converged <= 1'b0; leg0 <= 1'b1; any_conv <= 1'b0;",
          f"            it <= {uconst(0, iw)}; itl <= {uconst(0, tw)}; leg <= {uconst(0, lw)}; "
          f"nconv <= {uconst(0, nw)}; grow <= {uconst(0, rw)};",
          f"            syn_r <= syndrome; hd <= {n}'b{prior_hard};",
          *[ind + x for x in restart], *[ind + x for x in load_mem],
          "        end else if (state == RUN) begin",
          "            if (end_now) begin",
          "                if (take) begin best <= hd; best_w <= wsum; end",
          "                nconv <= nconv_new; any_conv <= any_conv | conv_now;",
          "                if (stop) begin",
          "                    state <= FIN; done <= 1'b1; converged <= any_conv | conv_now;",
          "                end else begin",
          f"                    leg <= leg + {uconst(1, lw)}; leg0 <= 1'b0; itl <= {uconst(0, tw)};",
          f"                    grow <= leg0 ? ROW1 : ((grow == LAST_ROW) ? {uconst(0, rw)} : grow + {uconst(1, rw)});",
          *["                    " + x for x in restart],
          "                end",
          "            end else begin",
          f"                it <= it + {uconst(1, iw)}; itl <= itl + {uconst(1, tw)}; hd <= hd_next;",
          *["                " + x for x in step],
          "            end",
          "        end",
          "    end",
          "endmodule"]
    return "\n".join(o) + "\n"


def relay_verilog_text(g: RtlGraph, cfg: RelayRtlConfig) -> str:
    """``relay_top.v``: every ``bp_cnu_d<D>``, ``relay_vnu_d<V>`` and ``relay_top``."""
    vdeg = sorted({max(1, len(c)) for c in g.cols})
    return "\n".join([HEADER, *[emit_cnu(d, cfg.base) for d in g.check_degrees()],
                      *[emit_relay_vnu(d, cfg) for d in vdeg], emit_relay_top(g, cfg), FOOTER])


def relay_manifest(H, g: RtlGraph, cfg: RelayRtlConfig) -> dict[str, Any]:
    from qdecode import __version__
    from qdecode.hw.rtl.emit import GENERATOR_VERSION
    from qdecode.hw.vectors import h_sha256

    wd = cfg.widths(g.n)
    return {"format": "qdecode-rtl", "generator_version": GENERATOR_VERSION, "qdecode_version": __version__,
            "top": TOP, "architecture": "fully-parallel", "h_sha256": h_sha256(H), "m": g.m, "n": g.n,
            "edges": g.edges, "check_degrees": g.check_degrees(), "var_degrees": g.var_degrees(),
            **cfg.as_dict(), **wd, "mag_bits": cfg.bits - 1, "flip_flops": relay_flip_flops(g, cfg),
            "cycles_per_iteration": 1, "cycles_per_leg_end": 1,
            "latency_cycles": "iterations + legs_run + 2 (start edge to done)",
            "gamma_table": "ROM in relay_top.v (gtab, one n*gamma_bits word per row); also gammas_q.hex",
            "ports": {"clk": 1, "rst": 1, "start": 1, "syndrome": g.m, "done": 1, "converged": 1,
                      "iterations": wd["iter_bits"], "legs_run": wd["legs_bits"], "weight": wd["weight_bits"],
                      "hard": g.n}}


def relay_readme(g: RtlGraph, cfg: RelayRtlConfig, mf: dict[str, Any]) -> str:
    b = cfg.base
    return f"""# Generated fixed-point Relay-BP decoder (`{TOP}`)

Generated by `qdecode export-rtl` from a Relay-BP vector set (`export-vectors --decoder relay-bp`),
generator version {mf['generator_version']}, qdecode {mf['qdecode_version']}.
Check matrix: {g.m} x {g.n}, {g.edges} edges, H sha256 `{mf['h_sha256']}`. Bit-exact with
`qdecode.kernels.relay.relay_decode` (integer messages, explicit gammas, integer solution weights).

| quantity | value |
|---|---|
| messages | {b.bits} bits (`msg_lim = {b.msg_lim}`), {b.frac_bits} fraction bits |
| memory `M` | {b.bits + 2} bits (`post_lim = {b.post_lim}`) |
| check scaling | `(min * {b.alpha_num}) >> 8`, no offset |
| gammas | numerators `g` of {cfg.gamma_bits} signed bits, `gamma = g / 256`; leg 0: `g0 = {cfg.gamma0_num}` |
| gamma rows | legs `r >= 1`: ROM row `r % {len(cfg.gammas)}` (`gammas_q.hex`) |
| memory prior | `b = clip(lambda + (((M - lambda) * g + 128) >>> 8), post_lim)` |
| legs | leg 0 <= {cfg.pre_iter} iterations, then <= {cfg.legs} legs of <= {cfg.leg_iter} |
| stop | after {cfg.stop_after} converged legs |
| weight | `W(e) = sum of lambda_j over e_j = 1` ({mf['weight_bits']}-bit signed) |
| selection | least weight wins, ties keep the earliest leg |

Timing: one flooding iteration per clock, one extra edge per leg end (leg bookkeeping and the
restart of the messages): `done` rises **`iterations + legs_run + 2`** rising edges after `start`,
at most `{cfg.max_total + cfg.legs + 2}`.

Registers (exact): `bits * edges + n * (bits + 4) + m + counters + weight` = **{mf['flip_flops']}**.
Per variable one signed `{b.bits + 3} x {cfg.gamma_bits}` multiplier (the memory prior) on top of the
min-sum variable node.
"""


def generate_relay(H, cfg: RelayRtlConfig, *, vectors: Any = None, relay: Any = None) -> dict[str, str]:
    """File name -> text of the Relay-BP design (``vectors``/``relay``: a loaded relay vector set for the bench)."""
    import json

    from qdecode.hw.rtl.graph import build_graph
    from qdecode.hw.rtl.synth import synth_scripts
    from qdecode.hw.rtl.testbench import emit_testbench
    from qdecode.hw.vectors import int_to_hex

    g = build_graph(H)
    if len(cfg.priors) != g.n:
        raise InputError(f"{len(cfg.priors)} priors for {g.n} columns of H")
    mf = relay_manifest(H, g, cfg)
    files = {f"{TOP}.v": relay_verilog_text(g, cfg), "rtl_manifest.json": json.dumps(mf, indent=2) + "\n",
             "README.md": relay_readme(g, cfg, mf), **synth_scripts(f"{TOP}.v", TOP),
             "gammas_q.hex": "".join(" ".join(int_to_hex(r, cfg.gamma_bits)) + "\n" for r in cfg.gammas)}
    if vectors is not None:
        check_relay_vectors(mf, vectors, relay)
        files["tb_bp.v"] = emit_testbench(g.m, g.n, int(vectors.manifest["shots"]), mf["iter_bits"],
                                          cfg.max_total, relay=(mf["legs_bits"], mf["weight_bits"], cfg.legs))
    return files


def check_relay_vectors(rtl_manifest: dict[str, Any], vs: Any, relay: Any) -> None:
    """Raise ValueError unless relay vector set ``vs`` was made by the decoder ``rtl_manifest`` describes."""
    from qdecode.hw.rtl.config import priors_sha256
    from qdecode.hw.vectors import h_sha256

    vm = vs.manifest
    problems = []
    if vm.get("decoder") != "relay-bp":
        problems.append("not a relay-bp vector set")
    else:
        if h_sha256(vs.H) != rtl_manifest["h_sha256"]:
            problems.append("check matrix (h_sha256)")
        for key in ("bits", "alpha_num", "gamma0_num", "pre_iter", "legs", "leg_iter", "stop_after", "gamma_bits"):
            if int(vm[key]) != int(rtl_manifest[key]):
                problems.append(f"{key} {vm[key]} vs {rtl_manifest[key]}")
        if priors_sha256(vs.priors_q) != rtl_manifest["priors_sha256"]:
            problems.append("priors (priors_q.hex)")
        got = hashlib.sha256(np.asarray(relay["gammas_q"], dtype="<i8").tobytes()).hexdigest()
        if got != rtl_manifest["gammas_sha256"]:
            problems.append("gamma table (gammas_q.hex)")
    if problems:
        raise InputError(f"vector set {vs.path} does not match the design: {', '.join(problems)}")
