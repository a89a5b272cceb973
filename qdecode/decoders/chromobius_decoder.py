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

No confidence (``has_confidence`` is False; ``predict_with_confidence`` raises
:class:`~qdecode.decoders.confidence.NoConfidenceError`). Chromobius 1.1.1's Python API is
``compile_decoder_for_dem`` and, on the compiled decoder, ``predict_obs_flips_from_dets_bit_packed``
and ``predict_weighted_obs_flips_from_dets_bit_packed``; the latter adds one float32 per shot,
the weight of PyMatching's matching on Chromobius' internal doubled ("mobius") graph, "not
accounting for the lifting process" (its docstring). That is not ``W`` of the lifted correction
(d = 3 colour-code capacity, p = 0.05: 6.80 where the most likely error weighs 3.37, near but
not exactly twice), and nothing gives the weight of another logical class: the matching's class
cannot be constrained, and the mobius graph is not exposed. The augmented-detector trick of
``tesseract`` (one more detector, flipped by every error that flips ``L_i``) needs a basis and
colour for that detector, and none is right: with the other basis's colours (0-2 beside Z-type
detectors) Chromobius finds "No perfect matching", with the detectors' own basis (3-5) it decodes
but its weights are not those of the forced class (9.41 on the zero syndrome, where twice the
exact other-class weight is 20.2), and -1 drops the detector.
"""

from __future__ import annotations

import re

import numpy as np

from qdecode.decoders.base import (
    DecoderCapabilityError,
    DecoderInputError,
    PackedDecoder,
    check_packed,
    check_syndromes,
    constant_prediction,
    packed_rows,
)
from qdecode.decoders.graphlike import unmatchable_syndromes_refused
from qdecode.decoders.params import DecoderEntry, uses_params
from qdecode.errors import MissingPackageError
from qdecode.problem import DecodingProblem

_REASON_CHARS = 300  # Chromobius' messages quote DEM lines; keep the refusal one readable line


def _import_chromobius():
    try:
        import chromobius
    except ImportError as exc:  # pragma: no cover - chromobius is a core dependency
        raise MissingPackageError("the 'chromobius' decoder needs Chromobius: pip install chromobius") from exc
    return chromobius


def _one_line(text: str) -> str:
    line = re.sub(r"\s+", " ", str(text)).strip()
    return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."


@uses_params({})
class ChromobiusDecoder(PackedDecoder):
    """Chromobius compiled for one DEM; no parameters.

    Args:
        problem: a problem built from a ``stim.DetectorErrorModel`` whose detectors carry the
            basis-and-colour 4th coordinate (e.g. :func:`qdecode.sims.color_circuit.color_memory_circuit`).

    Where the observables do not depend on the detectors (no detectors, no observables, ...),
    every shot gets :func:`~qdecode.decoders.base.constant_prediction` and Chromobius is not run.

    Work bound: one Chromobius decode per shot: one PyMatching matching (sparse blossom) on the
    mobius graph, which has two nodes per detection event, then one lift of the matched edges,
    cycle by cycle, with at most four passes over each cycle. Matching always ends in time
    polynomial in the size of the mobius graph and the number of detection events; neither step
    searches or waits for convergence. No parameter sets the bound.

    Work clock (:attr:`work_unit`): none. Chromobius' Python API (``predict_obs_flips_from_dets_bit_packed``,
    ``predict_weighted_obs_flips_from_dets_bit_packed``) returns the predictions and the solution's weight, no
    count of its matching or lifting work, so there is nothing deterministic to read; the wall clock alone
    (:meth:`predict_observables_timed`, one call per shot).

    Raises:
        DecoderInputError: the problem has no DEM, or Chromobius rejects it (Chromobius' reason,
            on one line).
    """

    #: Observable flips only: :meth:`decode_batch` raises :class:`DecoderCapabilityError`.
    gives_errors = False

    def __init__(self, problem: DecodingProblem):
        chromobius = _import_chromobius()
        self.problem = problem
        if problem.dem is None:
            raise DecoderInputError(
                "chromobius needs a detector error model with basis/colour detector coordinates "
                "(DecodingProblem.from_dem), not a bare check matrix"
            )
        self._out_bytes = (problem.num_observables + 7) // 8
        # Observables the detectors say nothing about (no detectors, no observables, ...): the
        # answer is one constant, and Chromobius is not needed (it would refuse detectors without
        # colour coordinates, and a zero-width shot array).
        self._constant = constant_prediction(problem)
        if self._constant is not None:
            return
        missing = _first_detector_without_colour(problem.dem)
        if missing is not None:
            raise DecoderInputError(
                f"chromobius cannot decode this DEM: each detector needs a 4th coordinate naming its basis and "
                f"colour (0-5, or -1 to ignore it), as `--code color` circuits with --basis X or Z have, but "
                f"detector D{missing[0]} has coordinates {missing[1]} (`--basis XYZ` circuits have none: "
                f"decode them with bposd or relay-bp)")
        try:
            self._decoder = chromobius.compile_decoder_for_dem(problem.dem)
        except (ValueError, RuntimeError) as exc:
            raise DecoderInputError(f"chromobius cannot decode this DEM: {_one_line(exc)}") from None
        self._check_every_mechanism_matches()

    def _check_every_mechanism_matches(self, chunk: int = 4096) -> None:
        """Refuse a DEM whose own mechanisms Chromobius cannot match, before any shot is decoded.

        Chromobius compiles DEMs whose colour coordinates do not describe a colour code, and then
        fails on sampled shots ("no perfect matching"). Which detection events light which nodes
        of its matching graph is linear in the syndrome, and a syndrome can be matched iff it has
        even parity on every part of the graph without a boundary, so if the syndrome of every
        single mechanism (a column of ``H``) can be matched, so can every sum of them, i.e.
        every syndrome the model produces. One decode per column, in chunks of ``chunk``.
        """
        H = self.problem.H.tocsc()
        m, n = H.shape
        width = (m + 7) // 8
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            block = np.zeros((stop - start, width), dtype=np.uint8)
            cols = np.repeat(np.arange(stop - start), np.diff(H.indptr[start:stop + 1]))
            rows = H.indices[H.indptr[start]:H.indptr[stop]]
            np.bitwise_or.at(block, (cols, rows >> 3), (1 << (rows & 7)).astype(np.uint8))
            try:
                self._decoder.predict_obs_flips_from_dets_bit_packed(block)
            except ValueError as exc:
                if "perfect matching" not in str(exc):
                    raise
                raise DecoderInputError(
                    "chromobius cannot match the syndromes of this DEM's own mechanisms: its detectors' 4th "
                    "coordinates (basis and colour) do not describe a colour code it can decode"
                ) from None

    def predict_observables_packed(self, packed: np.ndarray) -> np.ndarray:
        """Bit-packed ``(S, ceil(m/8))`` uint8 -> bit-packed ``(S, ceil(k/8))`` uint8 (little-endian bits)."""
        packed = check_packed(packed, self.problem.num_detectors)
        if packed.shape[0] == 0:
            return np.zeros((0, self._out_bytes), dtype=np.uint8)
        if self._constant is not None:
            return packed_rows(self._constant, packed.shape[0])
        with unmatchable_syndromes_refused("chromobius"):
            out = self._decoder.predict_obs_flips_from_dets_bit_packed(np.ascontiguousarray(packed))
        return np.asarray(out, dtype=np.uint8).reshape(packed.shape[0], self._out_bytes)

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """Not available: Chromobius predicts observable flips, not per-column error estimates.

        Raises:
            DecoderCapabilityError: always (after validating ``syndromes``).
        """
        check_syndromes(syndromes, self.problem.num_detectors)
        raise DecoderCapabilityError(
            "chromobius predicts observable flips only, not per-column error estimates; "
            "use predict_observables_batch / predict_observables_packed"
        )


ENTRIES = {
    "chromobius": DecoderEntry("chromobius", lambda problem: ChromobiusDecoder(problem), {},
                               doc="Chromobius mobius colour-code decoder (DEM detectors need the 4th "
                                   "basis/colour coordinate)"),
}


def _first_detector_without_colour(dem) -> tuple[int, list[float]] | None:
    """``(index, coordinates)`` of the first detector whose 4th coordinate is not a colour/basis
    code 0-5 or -1 (what Chromobius reads), or None when all have one."""
    coords = dem.get_detector_coordinates()
    for index in range(dem.num_detectors):
        c = list(coords.get(index, []))
        if len(c) < 4 or c[3] not in (-1, 0, 1, 2, 3, 4, 5):  # -1: a detector Chromobius ignores
            return index, c
    return None
