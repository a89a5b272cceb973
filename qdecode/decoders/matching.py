"""Minimum-weight perfect matching through PyMatching (plain and correlated).

Built from the problem's source DEM when it has one (so ``^`` decompositions of
hyperedges are honoured, exactly as sinter's built-in ``pymatching`` does), else
from the check matrix with weights ``ln((1-p)/p)``. The observable path runs
PyMatching's bit-packed ``decode_batch`` directly: no unpacking, no Python loop.

Confidence (:meth:`MatchingDecoder.predict_with_confidence`, unit in
:mod:`qdecode.decoders.confidence`): the matching gap of :mod:`qdecode.decoders.matching_gap`,
``k + 1`` matchings per shot (the best one, then one per observable).
"""

from __future__ import annotations

import numpy as np

from qdecode.decoders.base import (
    DecodeInfo,
    Decoder,
    DecoderCapabilityError,
    DecoderInputError,
    check_packed,
    check_syndromes,
)
from qdecode.decoders.confidence import ConfidentPrediction, gap_db
from qdecode.decoders.graphlike import unmatchable_syndromes_refused
from qdecode.decoders.params import DecoderEntry, uses_params
from qdecode.errors import MissingPackageError
from qdecode.problem import DecodingProblem


def _import_pymatching():
    try:
        import pymatching
    except ImportError as exc:  # pragma: no cover - pymatching is a core dependency
        raise MissingPackageError("the 'pymatching' decoder needs PyMatching: pip install pymatching") from exc
    return pymatching


def _check_decomposed(dem, name: str) -> None:
    """Refuse a DEM with an ``error`` component flipping more than two detectors.

    PyMatching builds its graph from the ``^``-separated components and silently drops a
    component with three or more detectors (``error(p) D0 D1 D2`` without a decomposition),
    so those mechanisms would never be corrected: every shot they fire on would be decoded as
    if they did not exist, without a warning.

    Raises:
        DecoderInputError: naming the first such instruction.
    """
    from qdecode.decoders.graphlike import dem_components, dem_errors

    for inst, _ in dem_errors(dem):
        for dets, _ in dem_components(inst):
            if len(dets) > 2:
                raise DecoderInputError(
                    f"{name}: DEM error '{inst}' flips {len(dets)} detectors with no '^' decomposition into "
                    "graph edges, which PyMatching would silently drop; build the DEM with "
                    "decompose_errors=True or use a hypergraph decoder (bposd, relay-bp)"
                )


def complement_likely_errors(dem, num_detectors: int, num_observables: int):
    """``(dem', det_flip uint8 (m,), obs_flip uint8 (k,))``: every ``p > 1/2`` error made ``1 - p``.

    A mechanism with ``p > 1/2`` is likelier to fire than not. Writing ``e = 1 + e'`` for it,
    ``e'`` fires with ``1 - p``, and its symptoms move into the shot: decode ``s + H_j`` on the
    complemented model and add ``L_j`` to the prediction. The most likely error is the same,
    so this is exact, and it lets PyMatching's correlated mode (which refuses ``p > 1/2``)
    decode such models. ``^`` decompositions are kept; the flips are those of the whole error.
    (stim's types are reached through ``dem``: decoders do not import stim.)
    """
    det_flip = np.zeros(num_detectors, dtype=np.uint8)
    obs_flip = np.zeros(num_observables, dtype=np.uint8)
    out = type(dem)()
    for inst in dem.flattened():
        if inst.type == "error" and inst.args_copy()[0] > 0.5:
            for t in inst.targets_copy():
                if t.is_relative_detector_id():
                    det_flip[t.val] ^= 1
                elif t.is_logical_observable_id():
                    obs_flip[t.val] ^= 1
            inst = type(inst)("error", [1.0 - inst.args_copy()[0]], inst.targets_copy())
        out.append(inst)
    return out, det_flip, obs_flip


@uses_params({})
class MatchingDecoder(Decoder):
    """PyMatching MWPM; ``correlated=True`` runs its two-pass correlated matching.

    Args:
        problem: the decoding problem. Correlated matching needs a DEM source
            (``DecodingProblem.from_dem``) because it uses hyperedge decompositions.
        correlated: enable PyMatching's correlated matching (Fowler 2013 two-pass).

    Work bound: one PyMatching decode per shot: exact minimum-weight perfect matching by sparse
    blossom, which always ends in time polynomial in the size of the matching graph and the number
    of detection events. It has no iteration cap and needs none: there is no search and no loop
    that waits for convergence. ``correlated=True`` (registry ``pymatching-correlated``) runs
    PyMatching's two-pass correlated matching. No parameter sets the bound.

    Work clock (:attr:`work_unit`): the shot's detection events, the size of its matching problem
    (sparse blossom's time grows with it; PyMatching reports no count of its own work).

    Confidence: :meth:`predict_with_confidence` gives the matching gap (``k + 1`` matchings per
    shot; with ``correlated=True`` one more, the uncorrelated best matching, and the gap is that of
    the uncorrelated graph: an estimate that ignores the correlated reweighting).
    """

    has_confidence = True
    work_unit = "detection events"

    def __init__(self, problem: DecodingProblem, *, correlated: bool = False):
        pm = _import_pymatching()
        self.problem = problem
        self.correlated = bool(correlated)
        self._name = "pymatching-correlated" if self.correlated else "pymatching"
        if problem.dem is not None:
            _check_decomposed(problem.dem, self._name)
            dem = problem.dem
            if self.correlated:  # PyMatching refuses p > 1/2 with correlations: decode the complemented model
                dem, det_flip, obs_flip = complement_likely_errors(dem, problem.num_detectors, problem.num_observables)
                if det_flip.any() or obs_flip.any():
                    self._det_flip = np.packbits(det_flip, bitorder="little")
                    self._obs_flip = np.packbits(obs_flip, bitorder="little")
            try:
                self._matching = pm.Matching.from_detector_error_model(dem, enable_correlations=self.correlated)
            except ValueError as exc:  # PyMatching's own refusals of a model (one line each), e.g. with correlations
                if "undetectable component" not in str(exc):  # a decomposition part that flips no detector
                    raise
                raise DecoderInputError(f"{self._name} refuses this model: {str(exc).splitlines()[0]}") from None
        else:
            if self.correlated:
                raise DecoderInputError(
                    "pymatching-correlated needs a detector error model (DecodingProblem.from_dem), "
                    "not a bare check matrix"
                )
            if not problem.is_graphlike():
                raise DecoderInputError(
                    "pymatching needs every column of H to flip at most 2 detectors; "
                    "this check matrix has heavier columns"
                )
            self._matching = pm.Matching.from_check_matrix(
                problem.H, weights=problem.llr, faults_matrix=problem.L if problem.num_observables else None
            )
        self._error_matching = None  # built lazily by decode_batch (per-column predictions)
        self._gap = None  # MatchingGap, built lazily by predict_with_confidence
        self._reference = None  # uncorrelated matching of the same graph (correlated mode's gap)

    # complemented p > 1/2 errors (correlated mode), bit-packed: the shot offset and the prediction offset
    _det_flip: np.ndarray | None = None
    _obs_flip: np.ndarray | None = None

    def predict_observables_packed(self, packed: np.ndarray) -> np.ndarray:
        packed = check_packed(packed, self.problem.num_detectors)
        self.last_info = DecodeInfo(work=np.bitwise_count(packed).sum(axis=1, dtype=np.int64))
        if self._det_flip is not None:
            packed = packed ^ self._det_flip
        with unmatchable_syndromes_refused(self._name):
            out = self._matching.decode_batch(
                packed,
                bit_packed_shots=True,
                bit_packed_predictions=True,
                enable_correlations=self.correlated,
            )
        out = np.asarray(out, dtype=np.uint8).reshape(packed.shape[0], (self.problem.num_observables + 7) // 8)
        return out if self._obs_flip is None else out ^ self._obs_flip

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        if self._det_flip is not None:  # one code path with the packed one (offsets applied there)
            k = self.problem.num_observables
            out = self.predict_observables_packed(np.packbits(s, axis=1, bitorder="little"))
            return np.unpackbits(out, axis=1, count=k, bitorder="little").astype(np.uint8, copy=False)
        self.last_info = DecodeInfo(work=s.sum(axis=1, dtype=np.int64))
        with unmatchable_syndromes_refused(self._name):
            out = self._matching.decode_batch(s, enable_correlations=self.correlated)
        return np.asarray(out, dtype=np.uint8).reshape(s.shape[0], self.problem.num_observables)

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` matching gap in dB).

        The observables are those of :meth:`predict_observables_batch`. ``last_info.extra`` holds
        ``weight_best`` and ``weight_other`` (float64 ``(S,)``, PyMatching's solution weights).
        ``nan`` gaps where an observable has no detector potential on this graph
        (:mod:`qdecode.decoders.matching_gap`).

        Examples:
            >>> import numpy as np
            >>> rep3 = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
            >>> obs, gap = MatchingDecoder(rep3).predict_with_confidence(np.array([[0, 0], [1, 0]], np.uint8))
            >>> obs.ravel().tolist(), [round(float(g), 2) for g in gap]  # 3 flips against none; 2 against 1
            ([0, 1], [28.63, 9.54])
        """
        from qdecode.decoders.matching_gap import MatchingGap

        s = check_syndromes(syndromes, self.problem.num_detectors)
        m, k = self.problem.num_detectors, self.problem.num_observables
        if self._gap is None:
            pm = _import_pymatching()
            if self.correlated:  # the gap of the uncorrelated graph of the original model
                self._reference = pm.Matching.from_detector_error_model(self.problem.dem)
            else:
                self._reference = self._matching
            self._gap = MatchingGap(self._reference, m, k)
        with unmatchable_syndromes_refused(self._name):
            raw, weight_best = self._reference.decode_batch(s, return_weights=True)
        ref_obs = np.zeros((len(s), k), dtype=np.uint8)
        if len(s) and k:  # (without observables a check-matrix graph's fault ids are its columns: nothing to keep)
            ref_obs[:] = np.asarray(raw, dtype=np.uint8).reshape(len(s), -1)[:, :k]
        obs = self.predict_observables_batch(s) if self.correlated and k else ref_obs
        weight_best = np.asarray(weight_best, dtype=np.float64)
        weight_other = self._gap.other_class_weights(s, ref_obs)
        self.last_info = DecodeInfo(extra={"weight_best": weight_best, "weight_other": weight_other},
                                    work=s.sum(axis=1, dtype=np.int64))
        return ConfidentPrediction(obs, gap_db(weight_best, weight_other))

    @property
    def gives_errors(self) -> bool:
        """Error estimates per column only for a graphlike H (<= 2 detectors per column)."""
        return self.problem.is_graphlike()

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """Error estimates per merged column; needs a graphlike H (:attr:`gives_errors`)."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        if self._error_matching is None:
            if not self.gives_errors:
                raise DecoderCapabilityError(
                    "matching can return per-column error estimates only for graphlike H; "
                    "use predict_observables_batch for circuit DEMs with hyperedges"
                )
            pm = _import_pymatching()
            self._error_matching = pm.Matching.from_check_matrix(self.problem.H, weights=self.problem.llr)
        with unmatchable_syndromes_refused(self._name):
            out = self._error_matching.decode_batch(s)
        return np.asarray(out, dtype=np.uint8).reshape(s.shape[0], self.problem.num_errors)


ENTRIES = {
    "pymatching": DecoderEntry("pymatching", lambda problem: MatchingDecoder(problem, correlated=False), {},
                               doc="minimum-weight perfect matching (PyMatching)", has_confidence=True),
    "pymatching-correlated": DecoderEntry(
        "pymatching-correlated", lambda problem: MatchingDecoder(problem, correlated=True), {},
        doc="PyMatching two-pass correlated matching (needs a DEM with decomposed hyperedges)",
        has_confidence=True),
}
