"""Fixed-point Relay-BP test vectors (``export-vectors --decoder relay-bp``) and their replay.

The reference model is :class:`~qdecode.decoders.relay_bp.RelayBpDecoder` with ``bits > 0`` and an
explicit gamma table (relay-bp's ``explicit_gammas``: leg ``r >= 1`` uses row ``r % R``), i.e. the
kernel :func:`qdecode.kernels.relay.relay_decode` on saturating integers:

* memory prior ``b_j = clip((lambda_j (256 - g_j) + M_j g_j + 128) >> 8, post_lim)`` with the
  gamma numerators ``g = rint(256 gamma)`` (``GAMMA_FRAC_BITS = 8``): leg 0 uses ``g0 =
  rint(256 gamma0)`` on every variable, leg ``r`` row ``r % R`` of ``gammas_q.hex``;
* solution weights are **integers**: ``W(e) = sum_{e_j = 1} lambda_j`` over the *quantised* priors
  (``priors_q.hex``), not the float64 ``ln((1-p)/p)`` of the software decoder (hardware has no
  float64; every integer sum is exact in the kernel's float64 accumulator). Ties keep the earliest leg.

Files: everything :func:`qdecode.hw.vectors.export_vectors` writes (``manifest.json``, ``H.alist``,
``priors_q.hex``, ``syndromes.hex``, ``expected_hard.hex``, ``expected_iters.txt`` = total iterations
over all legs, ``expected_converged.txt``) plus

============================  =============================================================
``gammas_q.hex``              line ``r+1``: row ``r`` of the gamma table, ``n`` space-separated
                              two's-complement numerators ``g`` of ``gamma_bits`` bits
``expected_legs.txt``         line ``s+1``: legs run after leg 0 (decimal, ``0 .. legs``)
``expected_weight.txt``       line ``s+1``: ``W`` of the returned decision (decimal, may be negative)
============================  =============================================================

The manifest has ``"decoder": "relay-bp"`` and the relay parameters (``gamma0_num``, ``pre_iter``,
``legs``, ``leg_iter``, ``stop_after``, ``gamma_rows``, ``gamma_bits``, ``gamma_shift``);
``max_iter`` is the worst-case total ``pre_iter + legs * leg_iter``.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder
from qdecode.errors import InputError
from qdecode.hw.vectors import (
    FORMAT_NAME,
    FORMAT_VERSION,
    H_SHA256_SPEC,
    Mismatch,
    ReplayReport,
    VectorFormatError,
    VectorSet,
    h_sha256,
    hex_digits,
    int_from_hex,
    int_to_hex,
    load_vectors,
    read_lines,
    write_decoded_files,
    write_lines,
)
from qdecode.problem import DecodingProblem

RELAY_DECODER = "relay-bp"


def signed_bits(values) -> int:
    """Two's-complement width holding every value (at least 2)."""
    v = np.asarray(values, dtype=np.int64)
    hi = int(np.abs(v).max(initial=0))
    return max(2, hi.bit_length() + 1)


def quantised_gammas(decoder: RelayBpDecoder) -> tuple[int, np.ndarray]:
    """``(g0, G)``: the numerators ``rint(256 gamma)`` of ``gamma0`` and of the explicit table ``(R, n)``."""
    q = float(1 << GAMMA_FRAC_BITS)
    return int(np.rint(decoder.gamma0 * q)), np.rint(decoder.gammas * q).astype(np.int64)


def gamma_table(n: int, rows: int, lo: float, hi: float, seed: int) -> np.ndarray:
    """A ``(rows, n)`` table of gammas ``~ U[lo, hi)`` (numpy ``default_rng(seed)``), rounded to
    multiples of 2^-8 so that the exported numerators are exactly what the kernel uses."""
    if rows < 1:
        raise InputError(f"gamma rows must be >= 1, got {rows}")
    g = np.random.default_rng(seed).uniform(lo, hi, size=(rows, n))
    q = float(1 << GAMMA_FRAC_BITS)
    return np.rint(g * q) / q


def _check_relay(decoder: Any) -> RelayBpDecoder:
    if not isinstance(decoder, RelayBpDecoder):
        raise InputError(f"relay vectors need a fixed-point RelayBpDecoder, got {type(decoder).__name__}")
    if not decoder.bits:
        raise InputError("relay vectors need a fixed-point decoder (bits > 0)")
    if decoder.gammas.shape[0] < 1:
        raise InputError("relay vectors need an explicit gamma table (explicit_gammas); per-shot draws are not "
                         "hardware arithmetic")
    return decoder


def integer_weight_decoder(decoder: RelayBpDecoder) -> RelayBpDecoder:
    """A shallow copy of ``decoder`` whose solution weights are its quantised priors (float64 of integers)."""
    dec = copy.copy(_check_relay(decoder))
    dec.weight_llr = np.ascontiguousarray(np.asarray(dec.prior_llr, dtype=np.float64))
    return dec


def _decode(dec: RelayBpDecoder, syndromes: np.ndarray):
    hard = dec.decode_batch(syndromes)
    info = dec.last_info
    return (hard, np.asarray(info.iterations, dtype=np.int64), np.asarray(info.converged, dtype=bool),
            np.asarray(info.extra["legs"], dtype=np.int64), np.asarray(info.extra["weight"], dtype=np.float64))


def export_relay_vectors(problem: DecodingProblem, decoder: RelayBpDecoder, syndromes: np.ndarray,
                         out_dir: str | os.PathLike, *, description: Mapping[str, Any]) -> dict[str, Any]:
    """Decode ``syndromes`` with the fixed-point Relay-BP ``decoder`` (integer weights) and write the files.

    Raises:
        ValueError: not a fixed-point RelayBpDecoder with explicit gammas, or built for another H.
    """
    dec = integer_weight_decoder(decoder)
    if dec.problem.H.shape != problem.H.shape or h_sha256(dec.problem.H) != h_sha256(problem.H):
        raise InputError("the decoder was built for a different check matrix than `problem`")
    s = np.ascontiguousarray(syndromes, dtype=np.uint8)
    hard, iters, conv, legs, weight = _decode(dec, s)
    S, m = s.shape
    n = problem.num_errors
    priors_q = np.asarray(dec.prior_llr, dtype=np.int64).reshape(n)
    g0, G = quantised_gammas(dec)
    gbits = signed_bits(np.append(G.ravel(), g0))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_decoded_files(out, problem.H, priors_q, dec.bits, s, hard, iters, conv)
    write_lines(out / "expected_legs.txt", (str(int(x)) for x in legs))
    write_lines(out / "expected_weight.txt", (str(int(x)) for x in weight))
    write_lines(out / "gammas_q.hex", (" ".join(int_to_hex(row, gbits)) for row in G))
    from qdecode import __version__

    lines = lambda what, count: {"lines": count, "line": "s + 1 = shot s", "content": what}  # noqa: E731
    files = {
        "H.alist": {"format": "alist", "content": f"check matrix H, {m} x {n}"},
        "priors_q.hex": {"format": "hex-signed", "word_bits": dec.bits, "hex_digits": hex_digits(dec.bits), "lines": n,
                         "content": "quantised prior LLR lambda_j (also the integer solution weight w_j)"},
        "syndromes.hex": {"format": "hex-bitvector", "width_bits": m, **lines("syndrome of shot s", S)},
        "expected_hard.hex": {"format": "hex-bitvector", "width_bits": n,
                              **lines("returned decision: least-weight converged leg, else leg 0's last", S)},
        "expected_iters.txt": {"format": "decimal", **lines("iterations summed over all legs run", S)},
        "expected_converged.txt": {"format": "01", **lines("1 when some leg converged", S)},
        "expected_legs.txt": {"format": "decimal", **lines("legs run after leg 0", S)},
        "expected_weight.txt": {"format": "decimal", **lines("W of the returned decision (sum of priors_q)", S)},
        "gammas_q.hex": {"format": "hex-signed", "word_bits": gbits, "hex_digits": hex_digits(gbits),
                         "lines": int(G.shape[0]), "words_per_line": n,
                         "content": "row r = gamma numerators g (gamma = g / 256) of legs r' >= 1 with r' % R = r"},
    }
    manifest: dict[str, Any] = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "qdecode_version": __version__,
        "decoder": RELAY_DECODER, "source": dict(description),
        "h_sha256": h_sha256(problem.H), "h_sha256_spec": H_SHA256_SPEC,
        "m": int(m), "n": int(n), "nnz": int(problem.H.nnz), "shots": int(S),
        "method": "minsum", "bits": dec.bits, "frac_bits": dec.frac_bits, "alpha": dec.alpha,
        "alpha_num": int(dec.alpha_num), "alpha_shift": 8, "adaptive_alpha": False, "beta_q": 0,
        "max_iter": dec.pre_iter + dec.legs * dec.leg_iter, "schedule": "flooding",
        "msg_lim": int(dec.msg_lim), "post_lim": int(dec.post_lim), "post_bits": dec.bits + 2,
        "gamma0": dec.gamma0, "gamma0_num": g0, "gamma_shift": GAMMA_FRAC_BITS, "gamma_rows": int(G.shape[0]),
        "gamma_bits": gbits, "pre_iter": dec.pre_iter, "legs": dec.legs, "leg_iter": dec.leg_iter,
        "stop_after": dec.stop_after, "weights": "integer: W(e) = sum of priors_q over e_j = 1",
        "priors_saturated": int(np.count_nonzero(np.abs(priors_q) >= int(dec.msg_lim))),
        "conventions": {
            "memory_prior": "b = clip((lambda (256 - g) + M g + 128) >> 8, post_lim), arithmetic shift",
            "messages": "nu = clip(b + sum of the other checks' mu, msg_lim) from the unclipped sum; "
                        "M = clip(b + sum mu, post_lim); hard = [M <= 0]",
            "legs": "leg 0: <= pre_iter iterations with g0 on every variable; leg r >= 1: messages restart from "
                    "lambda, M kept, row r % R, <= leg_iter iterations; stop after stop_after converged legs",
            "kernel": "qdecode.kernels.relay.relay_decode (integer messages, explicit gammas)",
        },
        "files": files,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def load_relay_vectors(path: str | os.PathLike) -> tuple[VectorSet, dict[str, Any]]:
    """``(vs, relay)``: the common files (:func:`qdecode.hw.vectors.load_vectors`) and the relay ones
    (``relay["gammas_q"]`` ``(R, n)`` int64, ``relay["legs"]``, ``relay["weight"]`` ``(S,)`` int64).

    Raises:
        VectorFormatError: not a relay vector set, or a malformed relay file.
    """
    vs = load_vectors(path)
    mf = vs.manifest
    if mf.get("decoder") != RELAY_DECODER:
        raise VectorFormatError(f"{vs.path}: not a relay-bp vector set (manifest decoder {mf.get('decoder')!r})")
    for key in ("gamma0_num", "gamma_rows", "gamma_bits", "pre_iter", "legs", "leg_iter", "stop_after"):
        if key not in mf:
            raise VectorFormatError(f"{vs.path / 'manifest.json'}: missing key {key}")
    n, S, R, gb = int(mf["n"]), int(mf["shots"]), int(mf["gamma_rows"]), int(mf["gamma_bits"])
    d = vs.path

    def parse(name, count, fn):
        out = []
        for i, ln in enumerate(read_lines(d / name, count)):
            try:
                out.append(fn(ln.strip()))
            except ValueError as exc:
                raise VectorFormatError(f"{name}:{i + 1}: {exc}") from None
        return out

    def row(text):
        words = text.split()
        if len(words) != n:
            raise InputError(f"{len(words)} words, expected n = {n}")
        return [int_from_hex(w, gb) for w in words]

    G = np.array(parse("gammas_q.hex", R, row), dtype=np.int64).reshape(R, n)
    legs = np.array(parse("expected_legs.txt", S, int), dtype=np.int64).reshape(S)
    weight = np.array(parse("expected_weight.txt", S, int), dtype=np.int64).reshape(S)
    return vs, {"gammas_q": G, "legs": legs, "weight": weight}


def relay_decoder_from_vectors(vs: VectorSet, relay: Mapping[str, Any]) -> RelayBpDecoder:
    """The fixed-point Relay-BP decoder (integer weights) a loaded relay vector set describes."""
    mf = vs.manifest
    problem = DecodingProblem.from_check_matrix(vs.H, 0.5)
    q = float(1 << GAMMA_FRAC_BITS)
    dec = RelayBpDecoder(problem, gamma0=int(mf["gamma0_num"]) / q, pre_iter=int(mf["pre_iter"]),
                         legs=int(mf["legs"]), leg_iter=int(mf["leg_iter"]), stop_after=int(mf["stop_after"]),
                         alpha=float(mf["alpha"]), seed=0, bits=int(mf["bits"]), frac_bits=int(mf["frac_bits"]),
                         threads=1, explicit_gammas=np.asarray(relay["gammas_q"], dtype=np.float64) / q)
    if int(dec.alpha_num) != int(mf["alpha_num"]) or int(dec.msg_lim) != int(mf["msg_lim"]):
        raise VectorFormatError("manifest.json: alpha_num / msg_lim do not follow from alpha / bits")
    dec.prior_llr = np.ascontiguousarray(vs.priors_q, dtype=dec.msg_dtype)
    dec.weight_llr = np.ascontiguousarray(vs.priors_q, dtype=np.float64)
    return dec


def replay_relay_vectors(path: str | os.PathLike) -> ReplayReport:
    """Rebuild the Relay-BP decoder from the files alone, re-decode, compare every expected file."""
    vs, relay = load_relay_vectors(path)
    dec = relay_decoder_from_vectors(vs, relay)
    hard, iters, conv, legs, weight = _decode(dec, vs.syndromes)
    mism: list[Mismatch] = []
    checks = [("expected_hard.hex", "hard", np.any(hard != vs.expected_hard, axis=1), None),
              ("expected_iters.txt", "iterations", iters != vs.expected_iters, (vs.expected_iters, iters)),
              ("expected_converged.txt", "converged", conv != vs.expected_converged,
               (vs.expected_converged.astype(int), conv.astype(int))),
              ("expected_legs.txt", "legs", legs != relay["legs"], (relay["legs"], legs)),
              ("expected_weight.txt", "weight", weight.astype(np.int64) != relay["weight"], (relay["weight"], weight))]
    for name, field, bad, vals in checks:
        for s in np.flatnonzero(bad).tolist():
            e, g = ("", "") if vals is None else (str(int(vals[0][s])), str(int(vals[1][s])))
            mism.append(Mismatch(name, s + 1, s, field, e or "(file)", g or "(re-decoded)"))
    return ReplayReport(Path(path), vs.syndromes.shape[0], 0, mism)
