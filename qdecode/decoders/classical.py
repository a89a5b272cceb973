"""Registry entries of the classical block-code decoders (``kind="classical"``).

They are built from a code object (``qdecode.codes``: BCH, RS, polar, PAC) instead of a
:class:`~qdecode.problem.DecodingProblem`, and decode channel LLRs:
``decode_llr_batch(llr (S, n) float64) -> codewords (S, n) uint8`` (positive LLR = bit 0).
For Reed-Solomon codes ``n`` counts the bits of the binary image.

* ``bm``: Berlekamp-Massey + Chien (+ Forney), hard decisions, BCH and RS.
* ``osd``: Fossorier-Lin OSD of order ``order`` on the code's binary generator matrix.
* ``sc`` / ``scl``: successive cancellation (list) decoding of polar and PAC codes.
* ``sem-osd``: OSD with a byte-level language-model prior (:mod:`qdecode.decoders.sem_osd`).
* ``crisp``: trained CRISP sequential neural decoder of polar / PAC codes (:mod:`qdecode.decoders.crisp`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def binary_generator(code: Any) -> np.ndarray:
    """The ``(k_bits, n_bits)`` binary generator matrix (RS: its binary image ``G_bin``)."""
    G = getattr(code, "G_bin", None)
    if G is None:
        G = getattr(code, "G", None)
    if G is None:
        raise ValueError(f"{type(code).__name__} has no generator matrix (G or G_bin)")
    return np.asarray(G, dtype=np.uint8)


def _polar_only(code: Any, name: str) -> Any:
    if not hasattr(code, "info_positions"):  # qdecode.codes.polar.PolarCode (PAC codes are PolarCodes too)
        raise ValueError(f"decoder {name!r} needs a polar or PAC code, got {getattr(code, 'name', '') or type(code).__name__}")
    return code


def register_classical() -> None:
    """Register ``bm``, ``osd``, ``sc``, ``scl``, ``sem-osd`` and ``crisp``."""
    from qdecode.decoders.bm import BmDecoder
    from qdecode.decoders.osd import OsdBlockDecoder
    from qdecode.decoders.polar import ScDecoder, SclDecoder
    from qdecode.decoders.registry import Param, register

    register("bm", lambda code: BmDecoder(code), {}, kind="classical",
             doc="Berlekamp-Massey + Chien (+ Forney) hard-decision decoding of BCH / RS codes")
    register("osd", lambda code, *, order: OsdBlockDecoder(G=binary_generator(code), order=order),
             {"order": Param(int, 2, "OSD reprocessing order (0..4 typical)", minimum=0, maximum=8)},
             kind="classical", doc="ordered statistics decoding (Fossorier-Lin) of any binary linear code")
    register("sc", lambda code: ScDecoder(_polar_only(code, "sc")), {}, kind="classical",
             doc="successive cancellation decoding of polar / PAC codes")
    register("scl", lambda code, *, list_size, crc: SclDecoder(_polar_only(code, "scl"), list_size=list_size,
                                                               crc=None if crc == "auto" else crc == "true"),
             {"list_size": Param(int, 8, "list size L", minimum=1, maximum=1024),
              "crc": Param(str, "auto", "CRC-aided selection: auto (when the code has a CRC) | true | false",
                           ("auto", "true", "false"))},
             kind="classical", doc="successive cancellation list decoding of polar / PAC codes")

    def _sem_osd(code, *, order, lam, omega, top_k, top_l, union, context, lm_order, beam, prior, model):
        from qdecode.decoders.sem_osd import SemOsdDecoder

        return SemOsdDecoder(binary_generator(code), prior, order=order, lam=lam, omega=omega, top_k=top_k,
                             top_l=top_l, union=union, context=context, lm_order=lm_order, beam=beam, model=model)

    register("sem-osd", _sem_osd,
             {"order": Param(int, 2, "bit-flip TEP order m", minimum=0, maximum=4),
              "lam": Param(float, 1.0, "LM weight lambda (0 = plain OSD)", minimum=0.0),
              "omega": Param(int, 1, "byte substitutions per candidate (0 = off)", minimum=0, maximum=2),
              "top_k": Param(int, 8, "values per byte in the substitution family", minimum=1, maximum=255),
              "top_l": Param(int, 4, "base candidates of the substitution family", minimum=1, maximum=64),
              "union": Param(bool, True, "also score the channel-ordered OSD candidates"),
              "context": Param(str, "decoded", "left context: decoded (pass-1 OSD of the previous block) | "
                                               "genie (true previous bytes) | none", ("decoded", "genie", "none")),
              "lm_order": Param(int, 4, "Kneser-Ney byte n-gram order", minimum=2, maximum=6),
              "beam": Param(int, 8, "forward-backward states per byte", minimum=1, maximum=256),
              "prior": Param(str, "ngram", "byte prior: ngram (Kneser-Ney, forward-backward) | transformer "
                                          "(byte Transformer, onnxruntime)", ("ngram", "transformer"),
                             label_default=False),
              "model": Param(str, "auto", "transformer prior model: auto (shipped lm_byte), a shipped name or a "
                                          ".onnx path", label_default=False)},
             kind="classical",
             doc="OSD with a byte-level LM prior (n-gram, forward-backward) for systematic codes carrying bytes")

    from qdecode.decoders.crisp import register_crisp

    register_crisp()
