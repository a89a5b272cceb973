"""Tesseract, Google's A* search decoder for any DEM, as a registered qdecode decoder.

Tesseract (Beni, Higgott, Shutty, arXiv:2503.10988) finds a most-likely error by best-first (A*)
search over sets of error mechanisms, from the detection events, with an admissible heuristic
and pruning: a *detector beam* (a search state with more than ``det_beam`` more detection events
than the best one seen is dropped), *beam climbing* (retrying with beams up to ``det_beam``),
several *detector orders* (the search is repeated over ``num_det_orders`` orderings of the
detectors and the best answer kept) and a priority queue capped at ``pqlimit`` states. It
decodes hyperedges directly (no ``^`` decomposition needed), which is why it leads on colour codes.

Its authors ship sinter presets (``tesseract_decoder.make_tesseract_sinter_decoders_dict``); here
they are the parameters ``beam`` and ``sparsify`` of one registry entry:

* ``beam=long`` (the preset ``tesseract`` / ``tesseract-long-beam``): ``det_beam`` 20, 21 detector
  orders, queue limit 1,000,000; ``beam=short`` (``tesseract-short-beam``): 15, 16, 200,000;
* ``sparsify=none | surface | color``: per-shot sparse error activation with base degree 2
  (``...-sparsify-surface-code-like``) or 3 (``...-sparsify-color-code-like``);
* ``det_beam``, ``num_det_orders``, ``pqlimit``: 0 keeps the preset's value, anything else
  overrides it.

The shots go to the compiled sinter decoder's ``decode_shots_bit_packed``, bit-packed in and out
(no unpacking). Models whose observables do not depend on the detectors get
:func:`~qdecode.decoders.base.constant_prediction` without a search, and errors with ``p > 1/2``
are complemented first (:func:`~qdecode.decoders.matching.complement_likely_errors`), since a
search over positive weights cannot use them. Tesseract predicts observables only:
:meth:`TesseractDecoder.decode_batch` raises :class:`~qdecode.decoders.base.DecoderInputError`.
"""

from __future__ import annotations

import numpy as np

from qdecode.decoders.base import (
    DecoderInputError,
    PackedDecoder,
    check_packed,
    check_syndromes,
    constant_prediction,
    packed_rows,
)
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.problem import DecodingProblem

BEAMS = ("long", "short")
SPARSIFY = ("none", "surface", "color")
#: The authors' presets by ``beam``: detector beam, detector orders, priority-queue limit.
BEAM_PRESETS = {"long": (20, 21, 1_000_000), "short": (15, 16, 200_000)}
#: Sparse error activation's base degree by ``sparsify`` (-1: off).
SPARSIFY_BASE_DEGREE = {"none": -1, "surface": 2, "color": 3}
#: The seed of the detector orders in every preset.
PRESET_SEED = 2384753

#: Parameters of ``tesseract`` and :class:`TesseractDecoder` (the class takes its defaults from here).
TESSERACT_PARAMS = {
    "beam": Param(str, "long", "long (det_beam 20, 21 orders) | short (15, 16): the authors' presets", BEAMS),
    "sparsify": Param(str, "none", "per-shot sparse error activation: none | surface | color (base degree 2 / 3)",
                      SPARSIFY),
    "det_beam": Param(int, 0, "detector beam; 0 = the preset's", minimum=0),
    "num_det_orders": Param(int, 0, "detector orders searched; 0 = the preset's", minimum=0),
    "pqlimit": Param(int, 0, "priority-queue limit (states); 0 = the preset's", minimum=0),
    "seed": Param(int, PRESET_SEED, "seed of the detector orders", minimum=0),
}


def _import_tesseract():
    try:
        import tesseract_decoder
    except ImportError as exc:  # pragma: no cover - tesseract-decoder is a core dependency
        raise ImportError("the 'tesseract' decoder needs tesseract-decoder: pip install tesseract-decoder") from exc
    return tesseract_decoder


@uses_params(TESSERACT_PARAMS)
class TesseractDecoder(PackedDecoder):
    """Tesseract A* search (module docstring), compiled for one DEM.

    Args:
        problem: a problem built from a ``stim.DetectorErrorModel`` (``DecodingProblem.from_dem``).
        beam: ``long`` or ``short`` preset.
        sparsify: ``none``, ``surface`` or ``color``.
        det_beam, num_det_orders, pqlimit: overrides of the preset (0 keeps it).
        seed: seed of the detector orders.

    Work bound: per shot, at most ``num_det_orders`` searches (preset: 21 long, 16 short), each
    stopped when its priority queue has held ``pqlimit`` states (1,000,000 long, 200,000 short);
    states with more than ``det_beam`` extra detection events are pruned. A search stopped at
    the limit returns its best answer so far.

    Raises:
        DecoderInputError: the problem has no DEM, or a value out of range.
    """

    def __init__(self, problem: DecodingProblem, *, beam: str, sparsify: str, det_beam: int, num_det_orders: int,
                 pqlimit: int, seed: int):
        if beam not in BEAMS:
            raise DecoderInputError(f"tesseract: beam must be one of {', '.join(BEAMS)}, got {beam!r}")
        if sparsify not in SPARSIFY:
            raise DecoderInputError(f"tesseract: sparsify must be one of {', '.join(SPARSIFY)}, got {sparsify!r}")
        if problem.dem is None:
            raise DecoderInputError("tesseract needs a detector error model (DecodingProblem.from_dem), "
                                    "not a bare check matrix")
        self.problem = problem
        preset_beam, preset_orders, preset_pq = BEAM_PRESETS[beam]
        self.det_beam = int(det_beam) or preset_beam
        self.num_det_orders = int(num_det_orders) or preset_orders
        self.pqlimit = int(pqlimit) or preset_pq
        self._out_bytes = (problem.num_observables + 7) // 8
        self._constant = constant_prediction(problem)
        self._det_flip = self._obs_flip = None
        if self._constant is not None:  # nothing to search for
            return
        from qdecode.decoders.matching import complement_likely_errors

        dem, det_flip, obs_flip = complement_likely_errors(problem.dem, problem.num_detectors,
                                                          problem.num_observables)
        if det_flip.any() or obs_flip.any():
            self._det_flip = np.packbits(det_flip, bitorder="little")
            self._obs_flip = np.packbits(obs_flip, bitorder="little")
        t = _import_tesseract()
        sinter_decoder = t.TesseractSinterDecoder(
            det_beam=self.det_beam, beam_climbing=True, no_revisit_dets=True, merge_errors=True,
            pqlimit=self.pqlimit, num_det_orders=self.num_det_orders, det_order_method=t.utils.DetOrder.DetIndex,
            seed=int(seed), sparsify_errors=sparsify != "none",
            sparsify_base_degree=SPARSIFY_BASE_DEGREE[sparsify])
        try:
            self._compiled = sinter_decoder.compile_decoder_for_dem(dem=dem)
        except (ValueError, RuntimeError) as exc:
            raise DecoderInputError(f"tesseract cannot decode this DEM: {' '.join(str(exc).split())[:300]}") from None

    def predict_observables_packed(self, packed: np.ndarray) -> np.ndarray:
        """Bit-packed ``(S, ceil(m/8))`` uint8 -> bit-packed ``(S, ceil(k/8))`` uint8 (little-endian bits)."""
        packed = check_packed(packed, self.problem.num_detectors)
        S = packed.shape[0]
        if self._constant is not None:
            return packed_rows(self._constant, S)
        if S == 0:
            return np.zeros((0, self._out_bytes), dtype=np.uint8)
        if self._det_flip is not None:
            packed = packed ^ self._det_flip
        out = np.asarray(self._compiled.decode_shots_bit_packed(bit_packed_detection_event_data=packed),
                         dtype=np.uint8).reshape(S, self._out_bytes)
        return out ^ self._obs_flip if self._obs_flip is not None else out

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """Not available: this wrapper returns observable flips only.

        Raises:
            DecoderInputError: always (after validating ``syndromes``).
        """
        check_syndromes(syndromes, self.problem.num_detectors)
        raise DecoderInputError("tesseract predicts observable flips only here; use predict_observables_batch / "
                                "predict_observables_packed")


ENTRIES = {
    "tesseract": DecoderEntry("tesseract", TesseractDecoder, TESSERACT_PARAMS,
                              doc="Tesseract A* most-likely-error search (any DEM, hyperedges included)"),
}
