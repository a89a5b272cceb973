"""Chromobius, the mobius colour-code decoder, as a registered qdecode decoder.

Chromobius (Gidney & Jones, arXiv:2312.08813; the mobius construction of Sahay & Brown,
arXiv:2108.11395) decodes colour-code circuits by matching a doubled ("mobius") copy of the
DEM with PyMatching and lifting the matching back to colour-code corrections. It reads each
detector's basis and colour from its 4th coordinate (0, 1, 2 = red, green, blue X-type
stabiliser; 3, 4, 5 = Z-type; -1 = ignore) and decomposes the DEM's errors itself, so it is
compiled from the problem's source DEM (``DecodingProblem.from_dem``) as it is, ``^``
separators included (it reads an error's symptoms; stim's decomposition hints do not change
its predictions).

The observable path hands stim's bit-packed shots straight to
``predict_obs_flips_from_dets_bit_packed`` (no unpacking). Chromobius returns observable flips
only, so :meth:`ChromobiusDecoder.decode_batch` (per-column error estimates) raises
:class:`~qdecode.decoders.base.DecoderInputError`.
"""

from __future__ import annotations

import re

import numpy as np

from qdecode.decoders.base import Decoder, DecoderInputError, check_packed, check_syndromes
from qdecode.decoders.params import DecoderEntry, uses_params
from qdecode.problem import DecodingProblem

_REASON_CHARS = 300  # Chromobius' messages quote DEM lines; keep the refusal one readable line


def _import_chromobius():
    try:
        import chromobius
    except ImportError as exc:  # pragma: no cover - chromobius is a core dependency
        raise ImportError("the 'chromobius' decoder needs Chromobius: pip install chromobius") from exc
    return chromobius


def _one_line(text: str) -> str:
    line = re.sub(r"\s+", " ", str(text)).strip()
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."


@uses_params({})
class ChromobiusDecoder(Decoder):
    """Chromobius compiled for one DEM; no parameters.

    Args:
        problem: a problem built from a ``stim.DetectorErrorModel`` whose detectors carry the
            basis-and-colour 4th coordinate (e.g. :func:`qdecode.sims.color_circuit.color_memory_circuit`).

    Raises:
        DecoderInputError: the problem has no DEM, or Chromobius rejects it (Chromobius' reason,
            on one line).
    """

    def __init__(self, problem: DecodingProblem):
        chromobius = _import_chromobius()
        self.problem = problem
        if problem.dem is None:
            raise DecoderInputError(
                "chromobius needs a detector error model with basis/colour detector coordinates "
                "(DecodingProblem.from_dem), not a bare check matrix"
            )
        try:
            self._decoder = chromobius.compile_decoder_for_dem(problem.dem)
        except (ValueError, RuntimeError) as exc:
            raise DecoderInputError(f"chromobius cannot decode this DEM: {_one_line(exc)}") from None
        self._out_bytes = (problem.num_observables + 7) // 8

    def predict_observables_packed(self, packed: np.ndarray) -> np.ndarray:
        """Bit-packed ``(S, ceil(m/8))`` uint8 -> bit-packed ``(S, ceil(k/8))`` uint8 (little-endian bits)."""
        packed = check_packed(packed, self.problem.num_detectors)
        if packed.shape[0] == 0:
            return np.zeros((0, self._out_bytes), dtype=np.uint8)
        out = self._decoder.predict_obs_flips_from_dets_bit_packed(np.ascontiguousarray(packed))
        return np.asarray(out, dtype=np.uint8).reshape(packed.shape[0], self._out_bytes)

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)``: packed, decoded, unpacked."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        k = self.problem.num_observables
        packed = np.packbits(s, axis=1, bitorder="little")
        obs = self.predict_observables_packed(packed)
        return np.unpackbits(obs, axis=1, count=k, bitorder="little").astype(np.uint8, copy=False)

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """Not available: Chromobius predicts observable flips, not per-column error estimates.

        Raises:
            DecoderInputError: always (after validating ``syndromes``).
        """
        check_syndromes(syndromes, self.problem.num_detectors)
        raise DecoderInputError(
            "chromobius predicts observable flips only, not per-column error estimates; "
            "use predict_observables_batch / predict_observables_packed"
        )


ENTRIES = {
    "chromobius": DecoderEntry("chromobius", lambda problem: ChromobiusDecoder(problem), {},
                               doc="Chromobius mobius colour-code decoder (DEM detectors need the 4th "
                                   "basis/colour coordinate)"),
}
