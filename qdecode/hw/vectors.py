"""Fixed-point min-sum test vectors for an HDL testbench, and their bit-exact replay.

:func:`export_vectors` decodes syndromes with a fixed-point :class:`~qdecode.decoders.bp.BpDecoder`
(the bit-accurate reference model) and writes one self-contained directory:

============================  =============================================================
``manifest.json``             source description, H hash, sizes, fixed-point configuration,
                              qdecode version, and every file with its exact format
``H.alist``                   the check matrix (MacKay alist, :func:`qdecode.codes.alist.write_alist`)
``priors_q.hex``              line ``j+1``: quantised prior LLR of variable ``j``, two's
                              complement at the message width ``bits``
``syndromes.hex``             line ``s+1``: shot ``s``'s m-bit syndrome (see *bit vectors*)
``expected_hard.hex``         line ``s+1``: the n-bit hard decision of shot ``s``
``expected_iters.txt``        line ``s+1``: iterations used (decimal)
``expected_converged.txt``    line ``s+1``: ``1`` when ``H hard = s`` was reached, else ``0``
``post_shotK.hex``            optional (``dump_messages``): line ``t`` holds the n posteriors
                              after iteration ``t`` (t = 1 .. iterations of shot K), as
                              space-separated two's-complement words of ``bits + 2`` bits
============================  =============================================================

Relay-BP vector sets (``"decoder": "relay-bp"`` in the manifest, gamma table and legs/weights
files) are written and replayed by :mod:`qdecode.hw.relay_vectors`; :func:`replay_vectors` and
:func:`decoder_from_vectors` refuse them.

**Signed words.** A value ``v`` with ``-2^(w-1) <= v < 2^(w-1)`` is written as
``v mod 2^w`` in ``ceil(w/4)`` lower-case hex digits (zero-extended), so ``$readmemh``
into a ``reg signed [w-1:0]`` gives ``v`` back. Example (w = 8): ``-3 -> fd``, ``5 -> 05``;
(w = 6): ``-1 -> 3f``.

**Bit vectors.** A w-bit vector ``b`` (syndrome: bit ``i`` = detector ``i``; hard
decision: bit ``j`` = variable/column ``j``) is the unsigned integer
``sum_i b[i] 2^i`` written in exactly ``ceil(w/4)`` hex digits, most significant digit
first; the unused high bits of the first digit are 0. ``$readmemh`` into
``reg [w-1:0] mem [0:S-1]`` gives ``mem[s][i] = b[i]``. Example: detectors 0 and 5 of
a 6-detector syndrome -> ``21``.

:func:`replay_vectors` rebuilds the decoder from the files alone (H from ``H.alist``,
priors from ``priors_q.hex``, configuration from ``manifest.json``), re-decodes the
syndromes and compares every expected value bit for bit, naming file and line of
each mismatch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from qdecode.codes.alist import read_alist, write_alist
from qdecode.decoders.bp import ALPHA_SHIFT, BpDecoder
from qdecode.errors import InputError
from qdecode.kernels.answer_trail import no_answer_trail
from qdecode.kernels.bp import bp_decode, make_work
from qdecode.problem import DecodingProblem

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Mismatch",
    "ReplayReport",
    "VectorFormatError",
    "VectorSet",
    "bits_from_hex",
    "bits_to_hex",
    "export_vectors",
    "h_sha256",
    "int_from_hex",
    "int_to_hex",
    "iteration_posteriors",
    "load_vectors",
    "replay_vectors",
]

FORMAT_NAME = "qdecode-test-vectors"
FORMAT_VERSION = 1
H_SHA256_SPEC = (
    "sha256 of the little-endian int64 arrays [m, n, nnz] ++ indptr ++ indices of H in CSR form "
    "(row-major, column indices sorted within each row)"
)
_HEX = np.array(list("0123456789abcdef"))


class VectorFormatError(InputError):
    """A test-vector directory is incomplete or a file is malformed (message names file and line)."""


# ------------------------------------------------------------------- encodings
def hex_digits(width: int) -> int:
    """Hex digits of one ``width``-bit word (``ceil(width / 4)``, at least 1): the files' fixed field width."""
    return max(1, (int(width) + 3) // 4)


def int_to_hex(values: Iterable[int] | np.ndarray, bits: int) -> list[str]:
    """Signed integers -> two's-complement hex words of ``bits`` bits (``ceil(bits/4)`` digits).

    Raises:
        ValueError: ``bits < 1`` or a value outside ``[-2^(bits-1), 2^(bits-1) - 1]``.

    Examples:
        >>> int_to_hex([-3, 5, 127, -127], 8)
        ['fd', '05', '7f', '81']
        >>> int_to_hex([-1, 31], 6)
        ['3f', '1f']
    """
    if bits < 1:
        raise InputError(f"word width must be >= 1 bit, got {bits}")
    v = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.int64).ravel()
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if v.size and (v.min() < lo or v.max() > hi):
        bad = int(v[(v < lo) | (v > hi)][0])
        raise InputError(f"value {bad} does not fit a {bits}-bit two's-complement word [{lo}, {hi}]")
    mask = (1 << bits) - 1
    width = hex_digits(bits)
    return [format(int(x) & mask, f"0{width}x") for x in v]


def int_from_hex(text: str, bits: int) -> int:
    """Inverse of :func:`int_to_hex` for one word (exactly ``ceil(bits/4)`` hex digits).

    Examples:
        >>> int_from_hex("fd", 8), int_from_hex("05", 8), int_from_hex("3f", 6)
        (-3, 5, -1)
    """
    width = hex_digits(bits)
    if len(text) != width:
        raise InputError(f"expected {width} hex digits for a {bits}-bit word, got {text!r}")
    try:
        u = int(text, 16)
    except ValueError:
        raise InputError(f"not a hex word: {text!r}") from None
    if u >> bits:
        raise InputError(f"hex word {text!r} has bits set above bit {bits - 1}")
    return u - (1 << bits) if u >> (bits - 1) else u


def bits_to_hex(rows: np.ndarray) -> list[str]:
    """0/1 rows ``(S, w)`` (or one row ``(w,)``) -> hex lines, bit ``i`` of the row = 2^i, MSB first.

    Each line has exactly ``ceil(w/4)`` digits (``w = 0`` gives ``"0"``).

    Examples:
        >>> bits_to_hex(np.array([[1, 0, 0, 0, 0, 1], [0, 1, 1, 1, 1, 0]]))
        ['21', '1e']
    """
    a = np.asarray(rows, dtype=np.uint8)
    if a.ndim == 1:
        a = a[None, :]
    S, w = a.shape
    width = hex_digits(w)
    padded = np.zeros((S, 4 * width), dtype=np.uint8)
    padded[:, :w] = a & 1
    msb_first = padded[:, ::-1].reshape(S, width, 4)
    nibbles = msb_first @ np.array([8, 4, 2, 1], dtype=np.int64)
    return ["".join(r) for r in _HEX[nibbles]]


def bits_from_hex(lines: Sequence[str], width: int) -> np.ndarray:
    """Inverse of :func:`bits_to_hex`: hex lines -> uint8 ``(S, width)``.

    Raises:
        ValueError: a line with the wrong number of digits, a non-hex character, or a
            bit set at or above ``width`` (the message gives the 0-based line index).
    """
    digits = hex_digits(width)
    out = np.zeros((len(lines), width), dtype=np.uint8)
    for s, line in enumerate(lines):
        if len(line) != digits:
            raise InputError(f"line {s}: expected {digits} hex digits for {width} bits, got {len(line)}")
        try:
            u = int(line, 16)
        except ValueError:
            raise InputError(f"line {s}: not a hex word: {line!r}") from None
        if u >> width:
            raise InputError(f"line {s}: bits set above bit {width - 1} in {line!r}")
        bits = np.frombuffer(u.to_bytes(digits // 2 + 1, "little"), dtype=np.uint8)
        out[s] = np.unpackbits(bits, bitorder="little")[:width]
    return out


def h_sha256(H) -> str:
    """Hash of a binary check matrix's CSR structure (see ``H_SHA256_SPEC``)."""
    Hc = sp.csr_matrix(H, copy=True)
    Hc.sum_duplicates()
    Hc.eliminate_zeros()
    Hc.sort_indices()
    m, n = Hc.shape
    head = np.array([m, n, Hc.nnz], dtype="<i8")
    h = hashlib.sha256()
    for arr in (head, Hc.indptr.astype("<i8"), Hc.indices.astype("<i8")):
        h.update(arr.tobytes())
    return h.hexdigest()


# ------------------------------------------------------------ the golden model
def _check_decoder(decoder: Any) -> BpDecoder:
    if not isinstance(decoder, BpDecoder):
        raise InputError(f"test vectors need a fixed-point BpDecoder, got {type(decoder).__name__}")
    if not decoder.bits:
        raise InputError("test vectors need a fixed-point decoder (bits > 0)")
    if decoder.method != 0:
        raise InputError("test vectors need the min-sum method (fixed point is min-sum only)")
    return decoder


def iteration_posteriors(decoder: BpDecoder, syndromes: np.ndarray, iterations: np.ndarray) -> list[np.ndarray]:
    """Posteriors after each iteration, from the single-shot kernel.

    For ``t = 1 .. iterations[k]`` shot ``k`` is decoded again by the single-shot
    kernel :func:`qdecode.kernels.bp.bp_decode` with ``max_iter = t``; the kernel is a
    pure function, so its posteriors are exactly what the decoder holds after ``t``
    iterations. (The batch path runs a different, bit-identical kernel for flooding
    min-sum, so the dumps also cross-check the two.) Returns, per shot ``k``, an int64
    array ``(iterations[k], n)``.

    Raises:
        RuntimeError: the single-shot kernel disagrees with ``iterations`` (a kernel bug).
    """
    dec = _check_decoder(decoder)
    s = np.ascontiguousarray(syndromes, dtype=np.uint8)
    its = np.asarray(iterations, dtype=np.int64)
    n = dec.problem.num_errors
    llr0 = np.ascontiguousarray(dec.prior_llr[0])
    work = make_work(dec.graph, llr0)
    post = np.zeros(n, dtype=dec.msg_dtype)
    hard = np.zeros(n, dtype=np.uint8)
    no_history = np.zeros((0, n), dtype=dec.msg_dtype)
    no_trail = no_answer_trail()
    out = []
    for k in range(s.shape[0]):
        T = int(its[k])
        arr = np.zeros((T, n), dtype=np.int64)
        for t in range(1, T + 1):
            ok, used = bp_decode(dec.graph, llr0, s[k], 0, dec.layered, dec.kernel_params(t), work, post, hard,
                                 no_history, no_trail)
            arr[t - 1] = post
            if used != t:
                raise RuntimeError(f"shot {k}: single-shot kernel stopped after {used} iterations, batch used {T}")
        out.append(arr)
    return out


def _config(decoder: BpDecoder) -> dict[str, Any]:
    return {
        "method": "minsum",
        "bits": decoder.bits,
        "frac_bits": decoder.frac_bits,
        "alpha": decoder.alpha,
        "alpha_num": int(decoder.alpha_num),
        "alpha_shift": ALPHA_SHIFT,
        "adaptive_alpha": bool(decoder.adaptive),
        "beta_q": int(decoder.beta),
        "max_iter": decoder.max_iter,
        "schedule": "layered" if decoder.layered else "flooding",
        "msg_lim": int(decoder.msg_lim),
        "post_lim": int(decoder.post_lim),
        "post_bits": decoder.bits + 2,
    }


def write_decoded_files(out: Path, H: Any, priors_q: np.ndarray, bits: int, syndromes: np.ndarray,
                        hard: np.ndarray, iters: np.ndarray, conv: np.ndarray) -> None:
    """The files every vector set has: ``H.alist``, ``priors_q.hex`` (``bits``-bit words),
    ``syndromes.hex`` / ``expected_hard.hex`` (``(S, m)`` / ``(S, n)`` uint8 bit vectors),
    ``expected_iters.txt`` and ``expected_converged.txt`` (``(S,)`` ints / bools)."""
    write_alist(H, out / "H.alist")
    write_lines(out / "priors_q.hex", int_to_hex(priors_q, bits))
    write_lines(out / "syndromes.hex", bits_to_hex(syndromes))
    write_lines(out / "expected_hard.hex", bits_to_hex(hard))
    write_lines(out / "expected_iters.txt", (str(int(x)) for x in iters))
    write_lines(out / "expected_converged.txt", ("1" if c else "0" for c in conv))


def write_lines(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` to ``path`` as ASCII, each ended by a line feed (the vector files' line format)."""
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def _word_spec(bits: int, what: str) -> dict[str, Any]:
    """The manifest's format fields of a file of ``bits``-bit two's-complement hex words holding ``what``."""
    return {
        "format": "hex-signed",
        "word_bits": bits,
        "hex_digits": hex_digits(bits),
        "encoding": f"two's complement, value mod 2^{bits} zero-extended to {hex_digits(bits)} lower-case hex digits",
        "content": what,
    }


def _bitvec_spec(width: int, shots: int, what: str) -> dict[str, Any]:
    """The manifest's format fields of a file of ``width``-bit hex bit vectors, one per shot (``shots`` lines)."""
    return {
        "format": "hex-bitvector",
        "width_bits": width,
        "hex_digits": hex_digits(width),
        "bit_order": (
            f"bit i of the {width}-bit vector = 2^i of the hex number; MSB first; exactly {hex_digits(width)} "
            f"hex digits, unused high bits 0; $readmemh into reg [{max(width, 1) - 1}:0] mem[0:{max(shots, 1) - 1}] "
            f"gives mem[s][i] = bit i"
        ),
        "content": what,
    }


def _decoded_file_specs(m: int, n: int, shots: int, bits: int) -> dict[str, Any]:
    """The manifest's ``files`` entries of the files :func:`write_decoded_files` writes."""
    return {
        "H.alist": {"format": "alist",
                    "content": f"check matrix H, {m} rows (detectors) x {n} columns (error mechanisms)"},
        "priors_q.hex": {**_word_spec(bits, "quantised prior LLR of variable j = round(ln((1-p_j)/p_j) * 2^frac_bits) "
                                            "saturated to +-msg_lim"), "lines": n, "line": "j + 1 = variable j"},
        "syndromes.hex": {**_bitvec_spec(m, shots, "syndrome of shot s; bit i = detector (check) i"), "lines": shots,
                          "line": "s + 1 = shot s"},
        "expected_hard.hex": {**_bitvec_spec(n, shots, "hard decision of shot s; bit j = 1 when posterior_j <= 0"),
                              "lines": shots, "line": "s + 1 = shot s"},
        "expected_iters.txt": {"format": "decimal", "lines": shots, "line": "s + 1 = shot s",
                               "content": "iterations run: first t with H hard = syndrome, else max_iter"},
        "expected_converged.txt": {"format": "01", "lines": shots, "line": "s + 1 = shot s",
                                   "content": "1 when H hard = syndrome after the last iteration, else 0"},
    }


def _write_posterior_dumps(out: Path, dec: BpDecoder, syndromes: np.ndarray, iters: np.ndarray,
                           hard: np.ndarray) -> dict[str, Any]:
    """Write ``post_shot<k>.hex`` per shot of ``syndromes`` (K, m), ``hard`` (K, n); return their ``files`` entries."""
    n = dec.problem.num_errors
    files: dict[str, Any] = {}
    for k, arr in enumerate(iteration_posteriors(dec, syndromes, iters)):
        if arr.shape[0] and not np.array_equal((arr[-1] <= 0).astype(np.uint8), hard[k]):
            raise RuntimeError(f"shot {k}: single-shot kernel's final hard decision differs from the batch kernel")
        name = f"post_shot{k}.hex"
        write_lines(out / name, (" ".join(int_to_hex(row, dec.bits + 2)) for row in arr))
        files[name] = {
            **_word_spec(dec.bits + 2, f"posterior LLRs of shot {k} after each iteration (saturated to +-post_lim)"),
            "lines": int(arr.shape[0]),
            "line": "t = posteriors after iteration t (t = 1 .. expected_iters of the shot)",
            "words_per_line": n,
            "word_order": "variable j = j-th space-separated word; $readmemh loads mem[(t-1)*n + j]",
            "shot": k,
        }
    return files


def _manifest(problem: DecodingProblem, dec: BpDecoder, description: Mapping[str, Any], shape: tuple[int, int],
              priors_q: np.ndarray, files: dict[str, Any]) -> dict[str, Any]:
    """The ``manifest.json`` of a min-sum vector set: ``shape`` (S, m) of the syndromes, ``priors_q`` (n,) int64."""
    from qdecode import __version__

    shots, m = shape
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "qdecode_version": __version__,
        "source": dict(description),
        "h_sha256": h_sha256(problem.H),
        "h_sha256_spec": H_SHA256_SPEC,
        "m": int(m),
        "n": int(problem.num_errors),
        "nnz": int(problem.H.nnz),
        "shots": int(shots),
        **_config(dec),
        "priors_saturated": int(np.count_nonzero(np.abs(priors_q) >= int(dec.msg_lim))),
        "conventions": {
            "llr_sign": "positive = no flip; hard decision = 1 when posterior <= 0",
            "quantisation": "llr_q = clip(round(llr * 2^frac_bits), -msg_lim, msg_lim); msg_lim = 2^(bits-1) - 1",
            "posteriors": "saturated to +-post_lim = 2^(bits+1) - 1 (bits + 2 bit words)",
            "alpha": ("adaptive: |x| * (2^t - 1) >> t at iteration t (t capped at 30)" if dec.adaptive
                      else "|x| * alpha_num >> alpha_shift (truncating)"),
            "beta": "offset subtracted from scaled check magnitudes (beta_q in message LSBs), floored at 0",
            "kernel": "qdecode.kernels.bp (min-sum, ties and zero handling as documented there)",
        },
        "files": files,
    }


def export_vectors(
    problem: DecodingProblem,
    decoder: BpDecoder,
    syndromes: np.ndarray,
    out_dir: str | os.PathLike,
    *,
    description: Mapping[str, Any],
    dump_messages: int = 0,
) -> dict[str, Any]:
    """Decode ``syndromes`` with the fixed-point ``decoder`` and write the vector files.

    Args:
        problem: the decoding problem (its H is written; its priors are the decoder's).
        decoder: a fixed-point min-sum :class:`BpDecoder` built for ``problem``.
        syndromes: ``(S, m)`` 0/1 array.
        out_dir: directory (created when missing; existing vector files are overwritten).
        description: JSON-serialisable description of the source (code, noise, p, seed, ...),
            stored as ``manifest["source"]``.
        dump_messages: write per-iteration posterior dumps for the first K shots.

    Returns:
        The manifest dict (also written to ``manifest.json``).

    Raises:
        ValueError: not a fixed-point min-sum BpDecoder, decoder built for another H,
            bad syndromes, or ``dump_messages < 0``.
    """
    dec = _check_decoder(decoder)
    if dec.problem.H.shape != problem.H.shape or h_sha256(dec.problem.H) != h_sha256(problem.H):
        raise InputError("the decoder was built for a different check matrix than `problem`")
    if int(dump_messages) != dump_messages or dump_messages < 0:
        raise InputError(f"dump_messages must be an integer >= 0, got {dump_messages!r}")
    hard = dec.decode_batch(syndromes)
    s = np.ascontiguousarray(syndromes, dtype=np.uint8)
    iters = np.asarray(dec.last_info.iterations, dtype=np.int64)
    conv = np.asarray(dec.last_info.converged, dtype=bool)
    S, m = s.shape
    priors_q = np.asarray(dec.prior_llr[0], dtype=np.int64)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_decoded_files(out, problem.H, priors_q, dec.bits, s, hard, iters, conv)
    files = _decoded_file_specs(m, problem.num_errors, S, dec.bits)
    K = min(int(dump_messages), S)
    if K:
        files.update(_write_posterior_dumps(out, dec, s[:K], iters[:K], hard[:K]))
    manifest = _manifest(problem, dec, description, s.shape, priors_q, files)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return manifest


# -------------------------------------------------------------------- loading
@dataclasses.dataclass
class VectorSet:
    """The parsed contents of a test-vector directory.

    Attributes:
        path: the directory.
        manifest: ``manifest.json``.
        H: ``(m, n)`` uint8 CSR from ``H.alist``.
        priors_q: ``(n,)`` int64 quantised priors.
        syndromes: ``(S, m)`` uint8.
        expected_hard: ``(S, n)`` uint8.
        expected_iters: ``(S,)`` int64.
        expected_converged: ``(S,)`` bool.
        dumps: shot index -> ``(T, n)`` int64 posteriors after iterations ``1..T``.
    """

    path: Path
    manifest: dict[str, Any]
    H: sp.csr_matrix
    priors_q: np.ndarray
    syndromes: np.ndarray
    expected_hard: np.ndarray
    expected_iters: np.ndarray
    expected_converged: np.ndarray
    dumps: dict[int, np.ndarray]


def read_lines(path: Path, count: int | None) -> list[str]:
    """The lines of vector file ``path`` (trailing carriage returns dropped), exactly ``count`` when given.

    Raises:
        VectorFormatError: the file is missing, or has the wrong number of lines (message names the file).
    """
    if not path.exists():
        raise VectorFormatError(f"{path}: file missing")
    text = path.read_text(encoding="ascii", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln.rstrip("\r") for ln in lines]
    for i, ln in enumerate(lines):
        if not ln.strip():
            raise VectorFormatError(f"{path.name}:{i + 1}: blank line")
    if count is not None and len(lines) != count:
        raise VectorFormatError(f"{path.name}: {len(lines)} lines, the manifest says {count}")
    return lines


def _parse_each(path: Path, lines: list[str], parse) -> list:
    out = []
    for i, ln in enumerate(lines):
        try:
            out.append(parse(ln.strip()))
        except ValueError as exc:
            raise VectorFormatError(f"{path.name}:{i + 1}: {exc}") from None
    return out


def _bitvec_line(width: int):
    def parse(text: str) -> np.ndarray:
        try:
            return bits_from_hex([text], width)[0]
        except ValueError as exc:
            raise InputError(str(exc).removeprefix("line 0: ")) from None

    return parse


def _int01(text: str) -> bool:
    if text not in ("0", "1"):
        raise InputError(f"expected 0 or 1, got {text!r}")
    return text == "1"


def _decimal(text: str) -> int:
    if not text.isdigit():
        raise InputError(f"expected a non-negative decimal integer, got {text!r}")
    return int(text)


_REQUIRED = ("m", "n", "shots", "bits", "frac_bits", "alpha", "alpha_num", "alpha_shift", "adaptive_alpha",
             "beta_q", "max_iter", "schedule", "msg_lim", "post_lim", "h_sha256", "files")


def load_vectors(path: str | os.PathLike) -> VectorSet:
    """Read and validate a directory written by :func:`export_vectors`.

    Raises:
        VectorFormatError: a missing file or manifest key, a line count that disagrees
            with the manifest, or a malformed line (``file:line: ...``).
    """
    d = Path(path)
    mpath = d / "manifest.json"
    if not mpath.exists():
        raise VectorFormatError(f"{d}: no manifest.json (not a test-vector directory)")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise VectorFormatError(f"{mpath}: invalid JSON: {exc}") from None
    missing = [k for k in _REQUIRED if k not in manifest]
    if missing:
        raise VectorFormatError(f"{mpath}: missing key(s) {', '.join(missing)}")
    if manifest.get("format") != FORMAT_NAME:
        raise VectorFormatError(f"{mpath}: format is {manifest.get('format')!r}, expected {FORMAT_NAME!r}")
    m, n, S, bits = int(manifest["m"]), int(manifest["n"]), int(manifest["shots"]), int(manifest["bits"])
    try:
        H = read_alist(d / "H.alist")
    except (OSError, ValueError) as exc:
        raise VectorFormatError(f"H.alist: {exc}") from None
    if H.shape != (m, n):
        raise VectorFormatError(f"H.alist: shape {H.shape}, the manifest says ({m}, {n})")

    def signed(width):
        return lambda t: int_from_hex(t, width)

    p = d / "priors_q.hex"
    priors = np.array(_parse_each(p, read_lines(p, n), signed(bits)), dtype=np.int64).reshape(n)
    p = d / "syndromes.hex"
    synd = np.array(_parse_each(p, read_lines(p, S), _bitvec_line(m)), dtype=np.uint8).reshape(S, m)
    p = d / "expected_hard.hex"
    hard = np.array(_parse_each(p, read_lines(p, S), _bitvec_line(n)), dtype=np.uint8).reshape(S, n)
    p = d / "expected_iters.txt"
    iters = np.array(_parse_each(p, read_lines(p, S), _decimal), dtype=np.int64).reshape(S)
    p = d / "expected_converged.txt"
    conv = np.array(_parse_each(p, read_lines(p, S), _int01), dtype=bool).reshape(S)

    dumps: dict[int, np.ndarray] = {}
    for name, info in manifest["files"].items():
        if not name.startswith("post_shot"):
            continue
        p = d / name
        k = int(info["shot"])
        width = int(info["word_bits"])

        def row(text, width=width):
            words = text.split()
            if len(words) != n:
                raise InputError(f"{len(words)} words, expected n = {n}")
            return [int_from_hex(w, width) for w in words]

        dumps[k] = np.array(_parse_each(p, read_lines(p, int(info["lines"])), row), dtype=np.int64).reshape(-1, n)
    return VectorSet(d, manifest, H, priors, synd, hard, iters, conv, dumps)


# --------------------------------------------------------------------- replay
@dataclasses.dataclass(frozen=True)
class Mismatch:
    """One disagreement between a file and the re-decoded value.

    ``line`` is the 1-based line in ``file`` (None for whole-file checks); ``shot`` the
    0-based shot index (None when not per shot).
    """

    file: str
    line: int | None
    shot: int | None
    field: str
    expected: str
    got: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        shot = f" shot {self.shot}:" if self.shot is not None else ""
        return f"{where}:{shot} {self.field} expected {self.expected}, re-decoded {self.got}"


@dataclasses.dataclass
class ReplayReport:
    """Result of :func:`replay_vectors`: shots re-decoded and every mismatch found."""

    path: Path
    shots: int
    dumped_shots: int
    mismatches: list[Mismatch]

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def summary(self, limit: int = 20) -> str:
        head = (f"{self.path}: {self.shots} shots"
                + (f", {self.dumped_shots} per-iteration dumps" if self.dumped_shots else "")
                + (": all match" if self.ok else f": {len(self.mismatches)} mismatch(es)"))
        lines = [head] + [f"  {mm}" for mm in self.mismatches[:limit]]
        if len(self.mismatches) > limit:
            lines.append(f"  ... {len(self.mismatches) - limit} more")
        return "\n".join(lines)


def decoder_from_vectors(vs: VectorSet) -> BpDecoder:
    """The fixed-point decoder described by a loaded vector set (H, priors and configuration only).

    Raises:
        VectorFormatError: the manifest's configuration is inconsistent (e.g. ``alpha_num``
            or the saturation limits do not follow from ``alpha`` and ``bits``).
    """
    mf = vs.manifest
    if mf.get("decoder", "bp") != "bp":
        raise VectorFormatError(f"{vs.path}: a {mf['decoder']} vector set, not min-sum BP "
                                "(see qdecode.hw.relay_vectors)")
    problem = DecodingProblem.from_check_matrix(vs.H, 0.5)  # priors replaced below
    try:
        dec = BpDecoder(
            problem, method="minsum", max_iter=int(mf["max_iter"]), alpha=float(mf["alpha"]),
            beta=int(mf["beta_q"]) / float(1 << int(mf["frac_bits"])), schedule=str(mf["schedule"]),
            bits=int(mf["bits"]), frac_bits=int(mf["frac_bits"]),
        )
    except ValueError as exc:
        raise VectorFormatError(f"manifest.json: invalid decoder configuration: {exc}") from None
    for key, got in (("alpha_num", dec.alpha_num), ("alpha_shift", ALPHA_SHIFT), ("adaptive_alpha", dec.adaptive),
                     ("beta_q", int(dec.beta)), ("msg_lim", int(dec.msg_lim)), ("post_lim", int(dec.post_lim))):
        if mf[key] != got:
            raise VectorFormatError(f"manifest.json: {key} = {mf[key]!r} but the configuration implies {got!r}")
    lim = int(dec.msg_lim)
    bad = np.flatnonzero(np.abs(vs.priors_q) > lim)
    if bad.size:
        j = int(bad[0])
        raise VectorFormatError(f"priors_q.hex:{j + 1}: prior {int(vs.priors_q[j])} exceeds msg_lim {lim}")
    dec.prior_llr = np.ascontiguousarray(vs.priors_q[None, :], dtype=dec.msg_dtype)
    return dec


def replay_vectors(path: str | os.PathLike) -> ReplayReport:
    """Rebuild the decoder from the files alone, re-decode, compare bit for bit.

    Checks the H hash, then per shot the hard decision, iteration count and
    convergence flag, and every line of the per-iteration dumps.

    Raises:
        VectorFormatError: the directory cannot be read (see :func:`load_vectors`).
    """
    vs = load_vectors(path)
    mism: list[Mismatch] = []
    h = h_sha256(vs.H)
    if h != vs.manifest["h_sha256"]:
        mism.append(Mismatch("H.alist", None, None, "h_sha256", vs.manifest["h_sha256"], h))
    dec = decoder_from_vectors(vs)
    hard = dec.decode_batch(vs.syndromes)
    iters = np.asarray(dec.last_info.iterations, dtype=np.int64)
    conv = np.asarray(dec.last_info.converged, dtype=bool)
    S = vs.syndromes.shape[0]
    bad_hard = np.flatnonzero(np.any(hard != vs.expected_hard, axis=1))
    exp_hex = bits_to_hex(vs.expected_hard[bad_hard]) if bad_hard.size else []
    got_hex = bits_to_hex(hard[bad_hard]) if bad_hard.size else []
    rows: list[tuple[int, Mismatch]] = []
    for s, e, g in zip(bad_hard.tolist(), exp_hex, got_hex):
        rows.append((0, Mismatch("expected_hard.hex", s + 1, s, "hard", e, g)))
    for s in np.flatnonzero(iters != vs.expected_iters).tolist():
        rows.append((1, Mismatch("expected_iters.txt", s + 1, s, "iterations", str(vs.expected_iters[s]),
                                 str(iters[s]))))
    for s in np.flatnonzero(conv != vs.expected_converged).tolist():
        rows.append((2, Mismatch("expected_converged.txt", s + 1, s, "converged",
                                 str(int(vs.expected_converged[s])), str(int(conv[s])))))
    rows.sort(key=lambda r: (r[0], r[1].line))
    mism.extend(r[1] for r in rows)

    if vs.dumps:
        ks = sorted(vs.dumps)
        if ks[-1] >= S:
            raise VectorFormatError(f"manifest.json: a dump names shot {ks[-1]} but there are {S} shots")
        K = ks[-1] + 1
        dumps = iteration_posteriors(dec, vs.syndromes[:K], iters[:K])
        width = int(vs.manifest["bits"]) + 2
        for k in ks:
            name = f"post_shot{k}.hex"
            want, got = vs.dumps[k], dumps[k]
            for t in range(max(want.shape[0], got.shape[0])):
                w = want[t] if t < want.shape[0] else None
                g = got[t] if t < got.shape[0] else None
                if w is None or g is None or not np.array_equal(w, g):
                    def show(row):
                        if row is None:
                            return "(no line)"
                        diff = np.flatnonzero(w != g) if (w is not None and g is not None) else np.arange(0)
                        j = int(diff[0]) if diff.size else 0
                        return f"var {j} = {int_to_hex([row[j]], width)[0]}"
                    mism.append(Mismatch(name, t + 1, k, f"posterior after iteration {t + 1}", show(w), show(g)))
    return ReplayReport(Path(path), S, len(vs.dumps), mism)
