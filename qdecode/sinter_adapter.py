"""Every qdecode decoder as a ``sinter.Decoder``.

``sinter collect --custom_decoders_module_function qdecode:sinter_decoders`` exposes
each registered decoder under ``qd-<name>``. The compiled decoder's
``decode_shots_bit_packed`` goes straight to ``Decoder.predict_observables_packed``:
bit-packed in, bit-packed out, no per-shot Python. Errors from compilation propagate
(sinter falls back to files only on ``NotImplementedError``, which we never raise).
"""

from __future__ import annotations

import numpy as np
import sinter

from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.problem import DecodingProblem


class SinterCompiledDecoder(sinter.CompiledDecoder):
    def __init__(self, decoder):
        self.decoder = decoder

    def decode_shots_bit_packed(self, *, bit_packed_detection_event_data: np.ndarray) -> np.ndarray:
        return self.decoder.predict_observables_packed(bit_packed_detection_event_data)


class SinterDecoder(sinter.Decoder):
    """Picklable sinter decoder wrapping a :class:`DecoderSpec`."""

    def __init__(self, spec: DecoderSpec):
        self.spec = spec

    def compile_decoder_for_dem(self, *, dem) -> SinterCompiledDecoder:
        return SinterCompiledDecoder(self.spec.build(DecodingProblem.from_dem(dem)))

    def __repr__(self) -> str:
        return f"SinterDecoder({self.spec.label()!r})"


def sinter_decoders() -> dict[str, sinter.Decoder]:
    """``{"qd-<name>": SinterDecoder}`` for every registered quantum decoder, default parameters."""
    return {f"qd-{name}": SinterDecoder(DecoderSpec.create(name)) for name in decoder_names()
            if get_entry(name).kind == "quantum"}
