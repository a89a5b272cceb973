"""Classical block-code sweep points: code + channel (+ source), sampled and decoded in batches.

A :class:`ClassicalRecipe` names a catalogue code (``bch127_64``, ``rs16_8``, ``polar64_22``, ...)
and a channel: ``awgn`` (BPSK, ``ebn0`` in dB, rate ``k/n``; ``channel = {modulation = "16qam"}`` sends
5G NR's QPSK / 16 / 64 / 256-QAM with max-log LLRs instead, :mod:`qdecode.sims.modulation`), ``bsc`` (``p``),
``ge`` (Gilbert-Elliott with BSC states) or ``ge-awgn`` (Gilbert-Elliott with AWGN states), the latter
two with extra parameters (``p_gb``, ``p_bg``, ``eps_good``, ``eps_bad`` / ``delta_db``, ``csi``)
given as ``channel = {...}`` in a recipe. One batch (:func:`run_classical_batch`):

    messages ~ source (S, k)  ->  codewords = encode(messages)  ->  LLRs = channel(codewords)
    ->  decoded = decoder.decode_llr_batch(LLRs)  ->  block error = any bit of decoded != codeword

all from one ``numpy.random.Generator`` seeded with the batch seed. The ``source`` is ``uniform``
(random bits, the default) or ``text``: consecutive 8-byte blocks of held-out English
(:mod:`qdecode.sims.text_source`; bytes -> bits LSB first), for sem-OSD. A text source is
recorded in the json_metadata (``source``) and the strong id, so text and uniform rows never
pool, and its blocks and noise come from a decoder-independent stream (:meth:`ClassicalRecipe.sample_id`),
so all decoders of a point see identical blocks. A decoder with ``needs_true_context`` (sem-OSD's
genie mode) gets the true previous bytes as ``context_bytes``. Text rows also count
``byte_errors`` (wrong message bytes; bytes are ASCII characters, so this is the character
error count, out of ``8 shots`` for 8-byte blocks). Decoder diagnostics
(``last_info.counts()``, e.g. sem-OSD's ``reencodings``) are added to ``custom_counts``.

``custom_counts`` carry
``bit_errors`` (wrong codeword bits) and ``ml_lb``: block errors where the decoder returned a
*valid codeword* at least as likely as the transmitted one (correlation ``sum(llr * (1 - 2c))``
>= the transmitted word's): an ML decoder fails on those blocks too, so ``ml_lb / shots`` is a
lower bound on the ML block error rate (the "ML lower bound" curve of the BLER plots).

5G NR LDPC codes (``nr5g[...]``) transmit their ``E`` rate-matched bits, which do not hold the whole message
(the first ``2Z`` message bits are punctured): a block error is a wrong message bit of the decoder's own
decisions (``last_info.extra["message_bits"]``, as AFF3CT and a transport-block CRC count; any transmitted bit
wrong for a decoder that gives none), ``bit_errors`` counts message bits, and there is no ``ml_lb``
(:class:`BinaryCode`).

Reed-Solomon codes run on their binary image (``n m`` bits; ``encode_bits``), so the channel,
the LLRs and the block error are the same for every decoder.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any

import numpy as np

from qdecode.errors import InputError

CHANNELS = ("awgn", "bsc", "ge", "ge-awgn")
_GE_BSC_KEYS = ("p_gb", "p_bg", "eps_good", "eps_bad", "csi")
_GE_AWGN_KEYS = ("p_gb", "p_bg", "delta_db", "csi", "reference")
_GE_REQUIRED = ("p_gb", "p_bg")  # no defaults: the burst statistics are the experiment
_AWGN_KEYS = ("modulation",)  # 5G NR QAM (qdecode.sims.modulation); BPSK when absent


@dataclasses.dataclass(frozen=True)
class BinaryCode:
    """The binary view of a catalogue code that the channel and the error count see.

    Attributes:
        code: the code object decoders are built from.
        n, k: code length and message bits of the binary view.
        H: uint8 ``(r, n)`` binary parity checks (codeword test of the ML lower bound), or None for a
            rate-matched code (5G NR LDPC: the transmitted bits are a punctured and shortened view of the
            mother code, whose checks do not apply to them), which then has no ``ml_lb`` count.
    """

    code: Any
    n: int
    k: int
    H: np.ndarray | None

    @classmethod
    def of(cls, code: Any) -> "BinaryCode":
        if hasattr(code, "encode_bits") and hasattr(code, "H_bin"):  # Reed-Solomon: binary image
            return cls(code, int(code.n_bits), int(code.k_bits), np.asarray(code.H_bin, dtype=np.uint8))
        if hasattr(code, "rate_recover"):  # 5G NR LDPC: E transmitted bits of a larger mother code
            return cls(code, int(code.n), int(code.k), None)
        return cls(code, int(code.n), int(code.k), np.asarray(code.H, dtype=np.uint8))

    @property
    def rate(self) -> float:
        return self.k / self.n

    def encode(self, messages: np.ndarray) -> np.ndarray:
        enc = getattr(self.code, "encode_bits", None) or self.code.encode
        return np.ascontiguousarray(enc(messages), dtype=np.uint8)


def _check_channel(noise: str, ebn0: float | None, p: float | None, channel: dict[str, Any]) -> None:
    if noise not in CHANNELS:
        raise InputError(f"unknown channel {noise!r} for a classical code (known: {', '.join(CHANNELS)})")
    if noise in ("awgn", "ge-awgn"):
        if ebn0 is None or p is not None:
            raise InputError(f"channel {noise!r} takes ebn0 (dB), not p")
        if not math.isfinite(ebn0):
            raise InputError(f"ebn0 must be a finite number of dB, got {ebn0!r}")
    elif noise == "bsc":
        if p is None or ebn0 is not None:
            raise InputError("channel 'bsc' takes p, not ebn0")
    if noise == "ge":
        if p is not None or ebn0 is not None:
            raise InputError("channel 'ge' takes its parameters in channel = {p_gb, p_bg, eps_good, eps_bad, csi}")
    known = {"ge": _GE_BSC_KEYS, "ge-awgn": _GE_AWGN_KEYS, "awgn": _AWGN_KEYS}.get(noise, ())
    unknown = sorted(set(channel) - set(known))
    if unknown:
        raise InputError(f"channel {noise!r} has no parameter {unknown[0]!r}"
                         + (f" (known: {', '.join(known)})" if known else ""))
    missing = [key for key in _GE_REQUIRED if key not in channel] if noise.startswith("ge") else []
    if missing:
        optional = ", ".join(k for k in known if k not in _GE_REQUIRED)
        raise InputError(
            f"channel {noise!r} (Gilbert-Elliott) needs the transition probabilities {' and '.join(missing)}; "
            f"give them in a recipe task's channel table, e.g. channel = {{ p_gb = 0.01, p_bg = 0.2 }} "
            f"(optional: {optional})"
        )


@dataclasses.dataclass(frozen=True)
class ClassicalRecipe:
    """A classical sweep point: catalogue code, channel and its parameters.

    Attributes:
        code: catalogue name of a classical code.
        noise: ``awgn`` | ``bsc`` | ``ge`` | ``ge-awgn``.
        ebn0: Eb/N0 in dB (``awgn``, ``ge-awgn``).
        p: crossover probability (``bsc``).
        channel: extra channel parameters as sorted ``(key, value)`` pairs (Gilbert-Elliott).
        source: ``uniform`` (random message bits) or ``text`` (held-out English bytes; needs a
            binary message length that is a multiple of 8).
    """

    code: str
    noise: str
    ebn0: float | None = None
    p: float | None = None
    channel: tuple[tuple[str, Any], ...] = ()
    source: str = "uniform"

    def __post_init__(self) -> None:
        from qdecode.codes.catalog import get_entry
        from qdecode.sims.text_source import SOURCES

        entry = get_entry(self.code)  # UnknownCodeError lists the names
        if not entry.kind.startswith("classical"):
            raise InputError(f"code {self.code!r} is a {entry.kind} code; classical channels need a classical code")
        if self.source not in SOURCES:
            raise InputError(f"unknown message source {self.source!r} (known: {', '.join(SOURCES)})")
        _check_channel(self.noise, self.ebn0, self.p, dict(self.channel))
        self.build_channel(0.5)  # parameter values validated by the channel classes

    def build_code(self) -> BinaryCode:
        from qdecode.codes.catalog import get_code, get_entry

        entry = get_entry(self.code)
        if not entry.kind.startswith("classical"):
            raise InputError(f"code {self.code!r} is a {entry.kind} code; classical channels need a classical code")
        return BinaryCode.of(get_code(self.code))

    def build_channel(self, rate: float):
        from qdecode.sims import channels as ch

        kw = dict(self.channel)
        if self.noise == "awgn" and kw.get("modulation", "bpsk") != "bpsk":
            from qdecode.sims.modulation import NrQamAwgn

            return NrQamAwgn(order=kw["modulation"], ebn0_db=self.ebn0, rate=rate)
        if self.noise == "awgn":
            return ch.BpskAwgn(ebn0_db=self.ebn0, rate=rate)
        if self.noise == "bsc":
            return ch.Bsc(p=self.p)
        if self.noise == "ge":
            return ch.GilbertElliottBsc(**kw)
        return ch.GilbertElliottAwgn(ebn0_db=self.ebn0, rate=rate, **kw)

    def metadata(self) -> dict[str, Any]:
        """sinter-style metadata: ``code, noise, n, k`` and ``ebn0`` or ``p`` plus channel parameters."""
        from qdecode.codes.catalog import get_entry

        e = get_entry(self.code)
        n, k = e.n, e.k
        if e.family == "rs":  # binary image
            view = self.build_code()
            n, k = view.n, view.k
        meta: dict[str, Any] = {"code": self.code, "noise": self.noise, "n": n, "k": k}
        if self.ebn0 is not None:
            meta["ebn0"] = self.ebn0
        if self.p is not None:
            meta["p"] = self.p
        meta.update(dict(self.channel))
        if self.source != "uniform":  # uniform rows keep the identity they had before sources existed
            meta["source"] = self.source
        return meta

    def _identity(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if self.source == "uniform":
            del d["source"]
        return d

    def strong_id(self, decoder_label: str, json_metadata: Any) -> str:
        """SHA-256 of the JSON of everything that identifies the sweep point (sinter's idea)."""
        value = {"classical": self._identity(), "decoder": decoder_label, "json_metadata": json_metadata}
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()

    def sample_id(self) -> str:
        """Hex SHA-256 of the point without the decoder: the random stream of text-source sweeps."""
        value = {"classical": self._identity(), "samples": "decoder-independent"}
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()


def run_classical_batch(code: BinaryCode, channel, decoder, seed: int | np.random.Generator, shots: int,
                        chunk: int = 1 << 14, source: str = "uniform") -> tuple[int, dict[str, int]]:
    """Sample, transmit and decode ``shots`` blocks with one seeded generator.

    ``seed``: an int, or a ``Generator`` that continues across calls (the sweep decodes a batch
    chunk by chunk, all chunks drawing from the batch's one generator).

    Returns:
        ``(block errors, custom counts)`` with ``bit_errors`` and ``ml_lb`` (module docstring),
        ``byte_errors`` for a text source, and the decoder's ``last_info.counts()``.
    """
    from qdecode.sims.text_source import bits_to_bytes, bytes_to_bits, text_batch

    rng = np.random.default_rng(seed)
    errors = bit_errors = ml_lb = byte_errors = 0
    extra: dict[str, int] = {}
    text = source == "text"
    if text and code.k % 8:
        raise InputError(f"a text source needs whole message bytes, but k = {code.k}")
    genie = bool(getattr(decoder, "needs_true_context", False))
    if genie and not text:
        raise InputError("a genie-context decoder needs a text source (the true previous bytes)")
    Ht = None if code.H is None else np.ascontiguousarray(code.H.T, dtype=np.float32)
    left = shots
    while left > 0:
        S = min(left, chunk)
        prev = None
        if text:
            # the genie's true previous bytes: as many as the decoder's prior reads (at least 8; the
            # number does not change the random stream, so every decoder sees the same blocks)
            blocks, prev = text_batch(rng, S, code.k // 8, context=max(8, int(getattr(decoder, "context_len", 8))))
            msgs = bytes_to_bits(blocks)
        else:
            msgs = rng.integers(0, 2, size=(S, code.k), dtype=np.uint8)
        cw = code.encode(msgs)
        llr = channel.transmit(cw, rng)
        if genie:
            dec = decoder.decode_llr_batch(llr, context_bytes=prev)
        else:
            dec = decoder.decode_llr_batch(llr)
        dec = np.asarray(dec, dtype=np.uint8)
        info = getattr(decoder, "last_info", None)
        if info is not None and hasattr(info, "counts"):
            for key, v in info.counts().items():
                extra[key] = extra.get(key, 0) + int(v)
        if dec.shape != cw.shape:
            raise InputError(f"decoder returned shape {dec.shape}, expected {cw.shape}")
        wrong = dec != cw
        decided = getattr(info, "extra", {}).get("message_bits")
        if code.H is None and decided is not None:  # rate-matched: errors are wrong message bits (module doc)
            wrong = np.asarray(decided, dtype=np.uint8) != msgs
        block = wrong.any(axis=1)
        errors += int(block.sum())
        bit_errors += int(wrong.sum())
        if text:  # systematic codes: the message is the first k bits
            byte_errors += int(np.count_nonzero(bits_to_bytes(dec[:, : code.k]) != bits_to_bytes(msgs)))
        if block.any() and Ht is not None:
            d, c, l_ = dec[block], cw[block], llr[block]
            valid = ~((d.astype(np.float32) @ Ht).astype(np.int64) & 1).any(axis=1)
            better = (l_ * (1.0 - 2.0 * d)).sum(axis=1) >= (l_ * (1.0 - 2.0 * c)).sum(axis=1)
            ml_lb += int((valid & better).sum())
        left -= S
    counts = {"bit_errors": bit_errors} if Ht is None else {"bit_errors": bit_errors, "ml_lb": ml_lb}
    if text:
        counts["byte_errors"] = byte_errors
    counts.update(extra)
    return errors, counts
