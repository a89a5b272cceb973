"""Decoders behind one protocol (see :mod:`qdecode.decoders.base`) and a registry.

Importing this package needs numpy, scipy and numba only: PyMatching is imported
when a matching decoder is built, never stim, torch or matplotlib.
"""

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderInputError
from qdecode.decoders.registry import (
    DecoderSpec,
    Param,
    UnknownDecoderError,
    decoder,
    decoder_names,
    register,
)

__all__ = [
    "DecodeInfo",
    "Decoder",
    "DecoderInputError",
    "DecoderSpec",
    "Param",
    "UnknownDecoderError",
    "decoder",
    "decoder_names",
    "register",
]
