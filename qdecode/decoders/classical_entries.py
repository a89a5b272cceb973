"""Registry entries of the classical block-code decoders (``kind="classical"``).

They are built from a code object (``qdecode.codes``: BCH, RS, polar, PAC) instead of a
:class:`~qdecode.problem.DecodingProblem`, and build a
:class:`~qdecode.decoders.block.BlockDecoder` (the contract is stated there):
``decode_llr_batch(llr (S, n) float64) -> codewords (S, n) uint8`` (positive LLR = bit 0),
``decode_hard_batch``, ``message_bits``, ``last_info``, ``code``.
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

from qdecode.decoders.bm import BmDecoder
from qdecode.decoders.osd import OSD_BLOCK_PARAMS, OsdBlockDecoder
from qdecode.decoders.params import DecoderEntry
from qdecode.decoders.sc_scl import SCL_PARAMS, ScDecoder, SclDecoder
from qdecode.decoders.sem_osd import SEM_OSD_PARAMS
from qdecode.errors import InputError


def binary_generator(code: Any) -> np.ndarray:
    """The ``(k_bits, n_bits)`` binary generator matrix (RS: its binary image ``G_bin``)."""
    G = getattr(code, "G_bin", None)
    if G is None:
        G = getattr(code, "G", None)
    if G is None:
        raise InputError(f"{type(code).__name__} has no generator matrix (G or G_bin)")
    return np.asarray(G, dtype=np.uint8)


def _polar_only(code: Any, name: str) -> Any:
    if not hasattr(code, "info_positions"):  # qdecode.codes.polar.PolarCode (PAC codes are PolarCodes too)
        raise InputError(f"decoder {name!r} needs a polar or PAC code, "
                         f"got {getattr(code, 'name', '') or type(code).__name__}")
    return code


def _sem_osd(code: Any, *, prior: str, **kw: Any) -> Any:
    from qdecode.decoders.sem_osd import SemOsdDecoder

    return SemOsdDecoder(binary_generator(code), prior, code=code, **kw)


ENTRIES = {
    "bm": DecoderEntry("bm", lambda code: BmDecoder(code), {}, kind="classical",
                       doc="Berlekamp-Massey + Chien (+ Forney) hard-decision decoding of BCH / RS codes"),
    "osd": DecoderEntry("osd", lambda code, **kw: OsdBlockDecoder(G=binary_generator(code), code=code, **kw),
                        OSD_BLOCK_PARAMS,
                        kind="classical", doc="ordered statistics decoding (Fossorier-Lin) of any binary linear code"),
    "sc": DecoderEntry("sc", lambda code: ScDecoder(_polar_only(code, "sc")), {}, kind="classical",
                       doc="successive cancellation decoding of polar / PAC codes"),
    "scl": DecoderEntry("scl", lambda code, **kw: SclDecoder(_polar_only(code, "scl"), **kw), SCL_PARAMS,
                        kind="classical", doc="successive cancellation list decoding of polar / PAC codes"),
    "sem-osd": DecoderEntry("sem-osd", _sem_osd, SEM_OSD_PARAMS, kind="classical",
                            doc="OSD with a byte-level LM prior (n-gram, forward-backward) for systematic codes "
                                "carrying bytes"),
}
