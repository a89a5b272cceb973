"""The bit-exact contract of the QC layered min-sum design (:mod:`.qc_layered`) and its check: the configuration,
test vectors from the kernel, the ``$readmemh`` bench and the simulation runner.

:class:`QcRtlConfig` holds the constants of the contract, taken from a layered
:class:`~qdecode.decoders.qc_ldpc.QcMinSumDecoder` (:func:`design_from_qc_decoder`) or from the kernel's
:class:`~qdecode.kernels.qc_minsum.QcParams` (:func:`qc_config_from_params`); :data:`MUTATIONS` are deliberate
deviations that the bench must catch.

The reference is :func:`qdecode.kernels.qc_minsum.qc_minsum_range` with ``early_stop=False`` (every frame runs
``max_iter`` iterations; ``converged`` is the zero syndrome after the last one). A vector directory
(:func:`write_qc_vectors`) holds, for ``S`` frames of a code with ``cols`` base columns and lifting ``Z``:

==========================  ====================================================================================
``qc_vectors.json``         manifest: the base matrix (``shifts``, ``-1`` = empty block) and its sha256, ``Z``,
                            the kernel contract (:func:`contract_fields`), ``frames``, the file formats
``llr.hex``                 ``S * cols`` lines; line ``s * cols + j`` is base column ``j`` of frame ``s``: a
                            ``Z * W``-bit word whose lane ``t`` (bits ``[t W, t W + W)``, two's complement) is
                            the quantised channel LLR of variable ``j Z + t`` (the design's load-port word)
``expected_hard.hex``       ``S * cols`` lines of ``Z`` bits: the kernel's hard decisions, bit ``t`` = variable
                            ``j Z + t`` (``post <= 0 -> 1``)
``expected_converged.hex``  ``S`` lines, ``0`` / ``1``
==========================  ====================================================================================

The bench ``tb`` (:func:`emit_qc_testbench`) loads each frame through ``in_valid`` / ``in_col`` / ``in_llr``
(``cols`` cycles), pulses ``start``, compares every ``out_valid`` word with ``expected_hard`` and the
``converged`` flag at ``done``, and checks the latency (rising edges from the ``start`` edge to ``done``) against
the design's formula. It prints the same ``MISMATCH`` / ``RESULT`` lines as :mod:`qdecode.hw.rtl.testbench`
(``iterations`` is always 0 mismatches: every frame runs ``max_iter``), parsed by :func:`simulate_qc` into a
:class:`qdecode.hw.rtl.simulate.SimReport`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from qdecode.errors import InputError
from qdecode.hw.rtl.simulate import SIMULATORS, SimReport, bench_result, run_bench, simulator_available
from qdecode.hw.rtl.verilog import HEADER
from qdecode.hw.vectors import bits_to_hex, hex_digits, write_lines

VECTOR_FORMAT = "qdecode-qc-vectors"
MANIFEST = "qc_vectors.json"
#: the manifest fields a design and a vector set must agree on
CONTRACT_KEYS = ("shifts_sha256", "Z", "rows", "cols", "bits", "lim", "msg_lim", "normalized", "beta", "num",
                 "shift", "max_iter")

#: name -> what the mutant does (every one is observable: the bench must report mismatches)
MUTATIONS: dict[str, str] = {
    "beta-plus-one": "offset min-sum subtracts beta + 1 (an offset off by one step)",
    "nms-round": "normalised min-sum rounds, (m * num + 2^(shift-1)) >> shift, instead of truncating",
    "hard-negative": "hard decision [post < 0] instead of [post <= 0] (outputs and syndrome)",
}


@dataclasses.dataclass(frozen=True)
class QcRtlConfig:
    """Constants of one generated QC decoder (the kernel's :class:`~qdecode.kernels.qc_minsum.QcParams`, layered,
    no early stop, at ``bits`` bits); ``frac_bits`` is recorded only (the quantisation happens before the design)."""

    bits: int
    lim: int
    msg_lim: int
    normalized: bool
    beta: int
    num: int
    shift: int
    max_iter: int
    frac_bits: int | None = None
    mutation: str | None = None

    def __post_init__(self) -> None:
        if not 4 <= self.bits <= 16:
            raise InputError(f"the QC RTL needs 4 <= bits <= 16 (the kernel's int8 / int16), got {self.bits}")
        if not 1 <= self.lim <= (1 << (self.bits - 1)) - 1:
            raise InputError(f"lim must lie in 1..{(1 << (self.bits - 1)) - 1} at {self.bits} bits, got {self.lim}")
        if not 1 <= self.msg_lim < self.lim:
            raise InputError(f"msg_lim must satisfy 1 <= msg_lim < lim = {self.lim}, got {self.msg_lim}")
        if not 0 <= self.beta <= self.lim:
            raise InputError(f"beta must lie in 0..lim = {self.lim}, got {self.beta}")
        if self.normalized and not (0 <= self.shift <= 16 and 1 <= self.num <= 1 << self.shift):
            raise InputError(f"NMS needs 0 <= shift <= 16 and 1 <= num <= 2^shift (alpha in (0, 1]), got "
                             f"num={self.num} shift={self.shift}")
        if self.max_iter < 1:
            raise InputError(f"max_iter must be >= 1, got {self.max_iter}")
        if self.mutation is not None and self.mutation not in MUTATIONS:
            raise InputError(f"unknown mutation {self.mutation!r}; known: {', '.join(MUTATIONS)}")

    @property
    def qlim(self) -> int:
        """Saturation of variable-to-check messages, ``lim - msg_lim``."""
        return self.lim - self.msg_lim

    def kernel_params(self) -> Any:
        """The kernel's :class:`~qdecode.kernels.qc_minsum.QcParams` (storage int8 up to 8 bits, else int16)."""
        from qdecode.kernels.qc_minsum import QcParams

        t = np.int8 if self.bits <= 8 else np.int16
        return QcParams(max_iter=self.max_iter, flooding=False, normalized=self.normalized, beta=t(self.beta),
                        num=self.num, shift=self.shift, lim=t(self.lim), msg_lim=t(self.msg_lim), early_stop=False)

    def as_dict(self) -> dict[str, Any]:
        return {"bits": self.bits, "frac_bits": self.frac_bits, "lim": self.lim, "msg_lim": self.msg_lim,
                "qlim": self.qlim, "correction": "normalized" if self.normalized else "offset",
                "normalized": self.normalized, "beta": self.beta, "num": self.num, "shift": self.shift,
                "max_iter": self.max_iter, "mutation": self.mutation}


def qc_config_from_params(params: Any, bits: int, *, frac_bits: int | None = None,
                          mutation: str | None = None) -> QcRtlConfig:
    """The :class:`QcRtlConfig` of kernel parameters ``params`` at ``bits`` bits (refuses the flooding schedule)."""
    if params.flooding:
        raise InputError("the QC RTL implements the layered schedule only (got flooding)")
    return QcRtlConfig(bits=int(bits), lim=int(params.lim), msg_lim=int(params.msg_lim),
                       normalized=bool(params.normalized), beta=int(params.beta), num=int(params.num),
                       shift=int(params.shift), max_iter=int(params.max_iter), frac_bits=frac_bits, mutation=mutation)


def design_from_qc_decoder(decoder: Any, *, mutation: str | None = None) -> tuple[np.ndarray, int, QcRtlConfig]:
    """``(shifts, Z, cfg)`` of a layered :class:`~qdecode.decoders.qc_ldpc.QcMinSumDecoder` (``early_stop`` is
    ignored: the design always runs ``max_iter`` iterations)."""
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder

    if not isinstance(decoder, QcMinSumDecoder):
        raise InputError(f"the QC RTL needs a QcMinSumDecoder (ldpc-ms), got {type(decoder).__name__}")
    bits = 8 * decoder.dtype.itemsize
    frac = getattr(decoder, "params", {}).get("frac_bits")
    cfg = qc_config_from_params(decoder.kernel_params, bits, frac_bits=None if frac is None else int(frac),
                                mutation=mutation)
    return np.asarray(decoder.code.shifts, dtype=np.int64), int(decoder.code.Z), cfg


def shifts_sha256(shifts: Any) -> str:
    """sha256 of the base matrix: its shape, then its entries, as little-endian int64."""
    a = np.asarray(shifts, dtype="<i8")
    return hashlib.sha256(np.array(a.shape, dtype="<i8").tobytes() + a.tobytes()).hexdigest()


def contract_fields(shifts: Any, z: int, params: Any, bits: int) -> dict[str, Any]:
    """The constants of the bit-exact contract: base matrix hash, sizes, and the kernel's
    :class:`~qdecode.kernels.qc_minsum.QcParams` (``early_stop`` is always False here) at ``bits``-bit width."""
    a = np.asarray(shifts)
    return {"shifts_sha256": shifts_sha256(a), "Z": int(z), "rows": int(a.shape[0]), "cols": int(a.shape[1]),
            "bits": int(bits), "lim": int(params.lim), "msg_lim": int(params.msg_lim),
            "normalized": bool(params.normalized), "beta": int(params.beta), "num": int(params.num),
            "shift": int(params.shift), "max_iter": int(params.max_iter), "schedule": "layered", "early_stop": False}


def lane_words(values: np.ndarray, bits: int) -> list[str]:
    """``(R, Z)`` signed integers -> ``R`` hex words of ``Z * bits`` bits, lane ``t`` at bits ``[t bits, ...)``."""
    v = np.asarray(values, dtype=np.int64)
    u = v & ((1 << bits) - 1)
    b = ((u[:, :, None] >> np.arange(bits)) & 1).astype(np.uint8)
    return bits_to_hex(b.reshape(v.shape[0], -1))


def write_qc_vectors(shifts: Any, z: int, params: Any, bits: int, llr_q: Any, out_dir: str | Path, *,
                     description: dict[str, Any] | None = None) -> dict[str, Any]:
    """Decode the quantised LLR frames ``llr_q`` (``(S, cols * Z)`` integers, ``|llr| <= params.lim``) with the
    kernel (``early_stop=False``) and write the vector directory (module docstring); returns its manifest.

    Raises:
        InputError: wrong shape, an LLR beyond ``lim``, or no frame.
    """
    from qdecode.kernels.qc_minsum import QcOut, qc_graph, qc_minsum_range

    a = np.asarray(shifts, dtype=np.int64)
    rows, cols = a.shape
    dt = np.int8 if bits <= 8 else np.int16
    llr = np.asarray(llr_q)
    if llr.ndim != 2 or llr.shape[1] != cols * z or llr.shape[0] < 1:
        raise InputError(f"llr_q must have shape (S >= 1, {cols * z}), got {llr.shape}")
    if params.flooding:
        raise InputError("the QC RTL implements the layered schedule; got flooding parameters")
    lim = int(params.lim)
    if np.abs(llr.astype(np.int64)).max() > lim:
        raise InputError(f"quantised LLRs must satisfy |llr| <= lim = {lim}")
    llr = np.ascontiguousarray(llr, dtype=dt)
    prm = params._replace(early_stop=False, beta=dt(int(params.beta)), lim=dt(lim),
                          msg_lim=dt(int(params.msg_lim)))
    S = llr.shape[0]
    out = QcOut(np.zeros(llr.shape, np.uint8), np.zeros(S, np.int32), np.zeros(S, np.bool_))
    qc_minsum_range(qc_graph(a, z), prm, llr, out, 0, S)
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    write_lines(path / "llr.hex", lane_words(llr.reshape(S * cols, z), bits))
    write_lines(path / "expected_hard.hex", bits_to_hex(out.bits.reshape(S * cols, z)))
    write_lines(path / "expected_converged.hex", [str(int(c)) for c in out.converged])
    manifest = {
        "format": VECTOR_FORMAT, **contract_fields(a, z, prm, bits), "frames": S,
        "converged_frames": int(out.converged.sum()), "shifts": a.tolist(),
        "files": {"llr.hex": f"{S * cols} lines of {z * bits} bits ({hex_digits(z * bits)} hex digits): frame s, "
                             f"base column j on line s*cols+j; lane t = variable j*Z+t at bits [t*{bits}, +{bits})",
                  "expected_hard.hex": f"{S * cols} lines of {z} bits: hard decisions, bit t = variable j*Z+t",
                  "expected_converged.hex": f"{S} lines 0/1: zero syndrome after max_iter iterations"},
        "description": dict(description or {}),
    }
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="ascii")
    return manifest


def load_qc_manifest(vectors_dir: str | Path) -> dict[str, Any]:
    """The manifest of a vector directory (:func:`write_qc_vectors`).

    Raises:
        InputError: no ``qc_vectors.json`` there, or another format."""
    p = Path(vectors_dir) / MANIFEST
    if not p.exists():
        raise InputError(f"{vectors_dir}: no {MANIFEST} (not a QC vector directory)")
    mf = json.loads(p.read_text(encoding="ascii"))
    if mf.get("format") != VECTOR_FORMAT:
        raise InputError(f"{p}: format {mf.get('format')!r}, expected {VECTOR_FORMAT!r}")
    return mf


def check_qc_vectors(design: dict[str, Any], vectors: dict[str, Any]) -> None:
    """Raise InputError unless the vector manifest describes the decoder of the design manifest."""
    bad = [k for k in CONTRACT_KEYS if design.get(k) != vectors.get(k)]
    if bad:
        raise InputError(f"the vector set does not match the design: {', '.join(bad)}")


def emit_qc_testbench(frames: int, cols: int, z: int, bits: int, latency: int, *, max_report: int = 20) -> str:
    """Verilog text of ``tb`` for ``frames`` frames of a ``qc_top`` with ``cols`` base columns, lifting ``z``,
    ``bits``-bit LLRs and ``latency`` rising edges from ``start`` to ``done`` (module docstring)."""
    if frames < 1:
        raise InputError(f"a bench needs at least one frame, got {frames}")
    cw = max(1, cols.bit_length())
    return HEADER + f"""// Replays {frames} frames of a QC vector directory through qc_top (run inside it).
module tb;
    localparam S = {frames}, COLS = {cols}, Z = {z}, W = {bits}, CW = {cw};
    localparam LATENCY = {latency}, TIMEOUT = {latency + 16}, MAX_REPORT = {max_report};
    reg clk = 1'b0, rst = 1'b1, start = 1'b0, in_valid = 1'b0;
    reg [CW-1:0] in_col = {{CW{{1'b0}}}};
    reg [Z*W-1:0] in_llr = {{Z*W{{1'b0}}}};
    wire done, converged, out_valid;
    wire [CW-1:0] out_col;
    wire [Z-1:0] out_hard;
    qc_top dut (.clk(clk), .rst(rst), .start(start), .in_valid(in_valid), .in_col(in_col), .in_llr(in_llr),
                .done(done), .converged(converged), .out_valid(out_valid), .out_col(out_col), .out_hard(out_hard));
    reg [Z*W-1:0] llr_mem [0:S*COLS-1];
    reg [Z-1:0] hard_mem [0:S*COLS-1];
    reg conv_mem [0:S-1];
    integer s, j, cycles, total_cycles, failed, bad, seen, bad_hard, bad_conv, bad_cyc, reported, hard_bad;
    always #5 clk = ~clk;
    initial begin
        $readmemh("llr.hex", llr_mem);
        $readmemh("expected_hard.hex", hard_mem);
        $readmemh("expected_converged.hex", conv_mem);
        bad_hard = 0; bad_conv = 0; bad_cyc = 0; failed = 0; total_cycles = 0; reported = 0;
        repeat (2) @(negedge clk);
        rst = 1'b0;
        for (s = 0; s < S; s = s + 1) begin
            for (j = 0; j < COLS; j = j + 1) begin
                @(negedge clk);
                in_valid = 1'b1; in_col = j; in_llr = llr_mem[s * COLS + j];
            end
            @(negedge clk);
            in_valid = 1'b0; start = 1'b1;
            @(posedge clk);
            cycles = 1; seen = 0; hard_bad = 0; bad = 0;
            #1 start = 1'b0;
            while (!done && cycles < TIMEOUT) begin
                @(negedge clk);
                if (out_valid) begin
                    seen = seen + 1;
                    if (out_hard !== hard_mem[s * COLS + out_col]) begin
                        hard_bad = 1;
                        if (reported < MAX_REPORT)
                            $display("MISMATCH shot=%0d field=hard col=%0d expected=%h got=%h", s, out_col,
                                     hard_mem[s * COLS + out_col], out_hard);
                        reported = reported + 1;
                    end
                end
                @(posedge clk);
                #1 cycles = cycles + 1;
            end
            total_cycles = total_cycles + cycles;
            if (seen != COLS) begin
                hard_bad = 1;
                if (reported < MAX_REPORT)
                    $display("MISMATCH shot=%0d field=hard words=%0d expected=%0d", s, seen, COLS);
                reported = reported + 1;
            end
            if (hard_bad) begin bad_hard = bad_hard + 1; bad = 1; end
            if (converged !== conv_mem[s]) begin
                bad_conv = bad_conv + 1; bad = 1;
                if (reported < MAX_REPORT)
                    $display("MISMATCH shot=%0d field=converged expected=%0d got=%0d", s, conv_mem[s], converged);
                reported = reported + 1;
            end
            if (cycles != LATENCY) begin
                bad_cyc = bad_cyc + 1; bad = 1;
                if (reported < MAX_REPORT)
                    $display("MISMATCH shot=%0d field=cycles expected=%0d got=%0d", s, LATENCY, cycles);
                reported = reported + 1;
            end
            failed = failed + bad;
        end
        $display("RESULT shots=%0d hard=%0d iterations=0 converged=%0d cycles=%0d failed=%0d total_cycles=%0d",
                 S, bad_hard, bad_conv, bad_cyc, failed, total_cycles);
        $display("%0d passed, %0d failed", S - failed, failed);
        $finish;
    end
endmodule
"""


def simulate_qc(design_dir: str | Path, vectors_dir: str | Path, *, simulator: str = "iverilog",
                build_dir: str | Path | None = None, timeout: float = 3600) -> SimReport:
    """Replay the vector directory through the design in ``design_dir`` (``qc_top.v``, ``rtl_manifest.json``):
    write the bench for its frame count, compile (``iverilog -g2005`` / ``verilator --binary``), run inside the
    vector directory, parse the ``RESULT`` line.

    Raises:
        InputError: unknown simulator, or the vectors do not belong to the design.
        FileNotFoundError: the simulator is not installed (``make rtl-tools``).
        RuntimeError: compilation or simulation failed, or the bench printed no result.
    """
    if simulator not in SIMULATORS:
        raise InputError(f"unknown simulator {simulator!r}; known: {', '.join(SIMULATORS)}")
    if not simulator_available(simulator):
        raise FileNotFoundError(f"{simulator} not installed: make rtl-tools")
    design, vdir = Path(design_dir).resolve(), Path(vectors_dir).resolve()
    mf = json.loads((design / "rtl_manifest.json").read_text(encoding="utf-8"))
    vm = load_qc_manifest(vdir)
    check_qc_vectors(mf, vm)
    tb_text = emit_qc_testbench(int(vm["frames"]), int(mf["cols"]), int(mf["Z"]), int(mf["bits"]),
                                int(mf["latency_cycles"]))
    with tempfile.TemporaryDirectory(prefix="qdecode-qc-sim-") as tmp:
        build = Path(tmp) if build_dir is None else Path(build_dir).resolve()
        build.mkdir(parents=True, exist_ok=True)
        (build / "tb_qc.v").write_text(tb_text, encoding="ascii")
        sources = [str(design / "qc_top.v"), str(build / "tb_qc.v")]
        out, compile_s, run_s = run_bench(simulator, sources, build, vdir, timeout, verilator_flags=("-O3",))
    vals, lines = bench_result(out)
    mism = {"hard": vals[1], "converged": vals[3], "cycles": vals[4]}
    return SimReport(simulator, vals[0], mism, vals[5], vals[6], compile_s, run_s, lines)


def export_qc_vectors(decoder: Any, llr: Any, out_dir: str | Path, *, mother: bool = False,
                      description: dict[str, Any] | None = None) -> dict[str, Any]:
    """Vectors of a :class:`~qdecode.decoders.qc_ldpc.QcMinSumDecoder` on float LLR frames: the transmitted
    ``(S, E)`` channel LLRs (rate-recovered first), or with ``mother=True`` the mother LLRs ``(S, cols * Z)``
    (``+inf`` at fillers); quantised by ``decoder.quantize`` and decoded by the kernel without early stop
    (:func:`write_qc_vectors`). Returns the vector manifest."""
    shifts, z, cfg = design_from_qc_decoder(decoder)
    x = np.asarray(llr, dtype=np.float64)
    mother_llr = x if mother else decoder.code.rate_recover(x)
    if mother_llr.ndim != 2 or mother_llr.shape[1] != shifts.shape[1] * z:
        raise InputError(f"mother LLRs must have shape (S, {shifts.shape[1] * z}), got {mother_llr.shape}")
    desc = {"code": getattr(decoder.code, "name", ""), "frac_bits": cfg.frac_bits, **(description or {})}
    return write_qc_vectors(shifts, z, cfg.kernel_params(), cfg.bits, decoder.quantize(mother_llr), out_dir,
                            description=desc)
