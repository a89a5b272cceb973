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

Confidence (:meth:`TesseractDecoder.predict_with_confidence`, the gap of
:mod:`qdecode.decoders.confidence`): ``k + 1`` Tesseract searches per distinct syndrome, through
Tesseract's Python API (``TesseractConfig(...).compile_decoder()``, ``decode_to_errors``,
``cost_from_errors``) with the sinter path's settings and detector orders, so its best
correction, and the observables predicted from it, are the sinter path's. For observable ``i``
the model gets one more detector ``D_m`` (after the last one) on every error that flips ``L_i``;
decoding ``[s, 1 - L_i e_best]`` on it forces ``L_i`` to differ from the best correction and
leaves the other observables free, and the least weight over ``i`` is ``weight_other``.
Observables that the detectors fix (``L_i`` in the row space of ``H`` over GF(2), found once)
need no search. Weights are Tesseract's costs ``sum ln((1 - p) / p)`` over its own mechanisms:
the DEM's errors merged when they flip the same detectors *and* observables. The problem's
columns merge by detectors alone, so the two models, and this gap and ``mle``'s, differ where
``num_collisions > 0`` (stim's colour-code DEMs have a few): to Tesseract two colliding errors
are a logical error without detection events, and its gap counts it. Where errors with
``p > 1/2`` were complemented, the weight they take out is added back
(:func:`complement_offset`), so the weights are those of the model as given (the gap is
unchanged by it). The gap is exact where Tesseract's searches are (code capacity: it equals
``mle``'s there); elsewhere ``weight_other`` is the lightest correction of another class that
Tesseract *found* (an upper bound), and a negative gap means that search found a lighter
correction than the plain one. ``nan``: a search ended without any correction. Cost: a Python
loop over the distinct syndromes, each ``k + 1`` searches, and the other-class searches cost
more than the plain one (they must build a logical operator).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import (
    DecodeInfo,
    DecoderCapabilityError,
    DecoderInputError,
    PackedDecoder,
    check_packed,
    check_syndromes,
    constant_prediction,
    packed_rows,
)
from qdecode.decoders.confidence import ConfidentPrediction, gap_db
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.errors import MissingPackageError
from qdecode.problem import DecodingProblem, error_targets

BEAMS = ("long", "short")
SPARSIFY = ("none", "surface", "color")
#: The authors' presets by ``beam``: detector beam, detector orders, priority-queue limit.
BEAM_PRESETS = {"long": (20, 21, 1_000_000), "short": (15, 16, 200_000)}
#: Sparse error activation's base degree by ``sparsify`` (-1: off).
SPARSIFY_BASE_DEGREE = {"none": -1, "surface": 2, "color": 3}
#: The seed of the detector orders in every preset.
PRESET_SEED = 2384753
#: Distinct syndromes whose confident answers a decoder remembers (:meth:`TesseractDecoder.predict_with_confidence`).
_MEMO_SIZE = 1 << 16
#: Key of the plain search in :attr:`TesseractDecoder._searches` (observable ``i``'s search has key ``i``).
_PLAIN = -1

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
        raise MissingPackageError("the 'tesseract' decoder needs tesseract-decoder: "
                                  "pip install tesseract-decoder") from exc
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
    the limit returns its best answer so far. :meth:`predict_with_confidence`: ``k + 1`` such
    searches per distinct syndrome (``k`` observables; one per observable the detectors do not fix).

    Work clock (:attr:`work_unit`): none. Tesseract's Python API (``TesseractDecoder``: ``decode``,
    ``decode_to_errors``, ``low_confidence_flag``) reports no count of the states it pushed or searched per
    shot (only its ``verbose`` log prints one), so there is nothing deterministic to read; the wall clock
    alone (:meth:`predict_observables_timed`, one call per shot).

    ``last_info``: ``None`` after the observable paths; after :meth:`predict_with_confidence`,
    ``extra["weight_best"]`` and ``extra["weight_other"]`` (float64 ``(S,)``, module docstring).

    Raises:
        DecoderInputError: the problem has no DEM, or a value out of range.
    """

    #: Observable flips only: :meth:`decode_batch` raises :class:`DecoderCapabilityError`.
    gives_errors = False

    has_confidence = True

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
        self.seed = int(seed)
        self._sparsify_degree = SPARSIFY_BASE_DEGREE[sparsify]
        self._out_bytes = (problem.num_observables + 7) // 8
        self._constant = constant_prediction(problem)
        self._det_flip = self._obs_flip = None
        # confidence, built on first use: Tesseract's Python searches by key (_PLAIN, or observable i),
        # the observables the detectors do not fix, and the answers of the syndromes seen so far
        self._searches: dict[int, object] = {}
        self._free: list[int] | None = None
        self._memo: dict[bytes, tuple[np.ndarray, float, float]] = {}
        if self._constant is not None:  # nothing to search for
            return
        from qdecode.decoders.matching import complement_likely_errors

        dem, det_flip, obs_flip = complement_likely_errors(problem.dem, problem.num_detectors,
                                                          problem.num_observables)
        self._dem = dem
        self._det_flip_bits, self._obs_flip_bits = det_flip, obs_flip
        self._offset: float | None = None  # complemented weights added back (first confident call)
        if det_flip.any() or obs_flip.any():
            self._det_flip = np.packbits(det_flip, bitorder="little")
            self._obs_flip = np.packbits(obs_flip, bitorder="little")
        t = _import_tesseract()
        sinter_decoder = t.TesseractSinterDecoder(
            **self._search_settings(), num_det_orders=self.num_det_orders, det_order_method=t.utils.DetOrder.DetIndex,
            seed=self.seed)
        try:
            self._compiled = sinter_decoder.compile_decoder_for_dem(dem=dem)
        except (ValueError, RuntimeError) as exc:
            raise DecoderInputError(f"tesseract cannot decode this DEM: {' '.join(str(exc).split())[:300]}") from None

    def _search_settings(self) -> dict:
        """The search settings that the sinter path and the Python searches share (detector orders aside)."""
        return dict(det_beam=self.det_beam, beam_climbing=True, no_revisit_dets=True, merge_errors=True,
                    pqlimit=self.pqlimit, sparsify_errors=self._sparsify_degree > 0,
                    sparsify_base_degree=self._sparsify_degree)

    def _search(self, key: int):
        """Tesseract's Python decoder for the plain model (``key = _PLAIN``) or observable ``key``'s
        augmented model (one more detector on the mechanisms that flip it), compiled once.

        The settings and the detector orders (``build_det_orders`` with the preset's method, count
        and seed) are the sinter path's, so the plain search is the same search. With ``sparsify``
        the extra detector raises the degree of every mechanism that flips the observable by one, so
        the augmented search gets base degree + 1 and the plain model's reactivation limit: each
        mechanism active in the plain search stays active.
        """
        search = self._searches.get(key)
        if search is None:
            t = _import_tesseract()
            m = self.problem.num_detectors
            dem = self._dem if key == _PLAIN else _with_observable_detector(self._dem, key, m)
            settings = self._search_settings()
            if key != _PLAIN and self._sparsify_degree > 0:
                settings.update(sparsify_base_degree=self._sparsify_degree + 1,
                                sparsify_reactivate_limit=t.tesseract.suggest_sparsify_reactivate_limit(
                                    m, self._sparsify_degree))
            orders = t.utils.build_det_orders(dem, self.num_det_orders, t.utils.DetOrder.DetIndex, self.seed)
            search = t.tesseract.TesseractConfig(dem=dem, det_orders=orders, **settings).compile_decoder()
            self._searches[key] = search
        return search

    def _free_observables(self) -> list[int]:
        """The observables some error can flip without a detection event (found once)."""
        if self._free is None:
            self._free = free_observables(self._dem, self.problem.num_detectors, self.problem.num_observables)
        return self._free

    def _complement_offset(self) -> float:
        """``W(e) - W'(e')``: the weight the complemented mechanisms take out of every correction (found once)."""
        if self._offset is None:
            self._offset = complement_offset(self.problem.dem)
        return self._offset

    def _confident(self, s: np.ndarray) -> tuple[np.ndarray, float, float]:
        """One syndrome uint8 ``(m,)`` -> (observables uint8 ``(k,)``, weight_best, weight_other)."""
        s = s ^ self._det_flip_bits  # the complemented model's syndrome
        plain = self._search(_PLAIN)
        errors = plain.decode_to_errors(s.astype(bool))
        pred = np.asarray(plain.get_observables_from_errors(errors), dtype=np.uint8)
        obs = pred ^ self._obs_flip_bits
        if plain.low_confidence_flag:  # no correction found (the sinter path predicts the same, no flips)
            return obs, float("nan"), float("nan")
        offset = self._complement_offset()
        best = plain.cost_from_errors(errors) + offset
        other, unknown = np.inf, False
        augmented = np.zeros(s.size + 1, dtype=bool)
        augmented[:-1] = s
        for i in self._free_observables():
            augmented[-1] = not pred[i]
            search = self._search(i)
            found = search.decode_to_errors(augmented)
            if search.low_confidence_flag:
                unknown = True
                continue
            other = min(other, search.cost_from_errors(found) + offset)
        return obs, best, (float("nan") if unknown and other == np.inf else float(other))

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` gap in dB).

        The observables are :meth:`predict_observables_batch`'s; the gap and the two weights in
        ``last_info.extra`` are described in the module docstring. One Python loop over the
        distinct syndromes (answers are remembered, up to ``_MEMO_SIZE`` syndromes), ``k + 1``
        searches each. Where the detectors say nothing about the observables (no search at all),
        the gap is the least ``|ln((1 - p) / p)|`` of a mechanism that flips an observable, and the
        weights are those of the mechanisms that flip observables only.

        Examples:
            >>> import numpy as np
            >>> rep3 = DecodingProblem.from_dem("error(0.1) D0 L0\\nerror(0.1) D0 D1\\nerror(0.1) D1")
            >>> obs, gap = TesseractDecoder(rep3).predict_with_confidence(np.array([[0, 0], [1, 0]], np.uint8))
            >>> obs.ravel().tolist(), [round(float(g), 3) for g in gap]  # 3 flips against none; 2 against 1
            ([0, 1], [28.627, 9.542])
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S, k = s.shape[0], self.problem.num_observables
        if self._constant is not None:
            return self._constant_confidence(S)
        obs = np.zeros((S, k), dtype=np.uint8)
        weight_best = np.empty(S, dtype=np.float64)
        weight_other = np.empty(S, dtype=np.float64)
        packed = np.packbits(s, axis=1, bitorder="little")
        for shot in range(S):
            key = packed[shot].tobytes()
            hit = self._memo.get(key)
            if hit is None:
                hit = self._confident(s[shot])
                if len(self._memo) < _MEMO_SIZE:
                    self._memo[key] = hit
            obs[shot], weight_best[shot], weight_other[shot] = hit
        self.last_info = DecodeInfo(extra={"weight_best": weight_best, "weight_other": weight_other})
        return ConfidentPrediction(obs, gap_db(weight_best, weight_other))

    def _constant_confidence(self, S: int) -> ConfidentPrediction:
        """The gap where no mechanism flips both a detector and an observable (the same for every shot).

        The best correction fires the observable-only mechanisms with ``p > 1/2``; the lightest of
        another class toggles one more mechanism that flips an observable (any odd set holds one),
        the one with the least ``|w|``. The detector part is common to both and left out.
        """
        problem = self.problem
        flips = np.diff(problem.L.tocsc().indptr) > 0
        llr = problem.llr
        best = float(llr[flips & (problem.priors > 0.5)].sum())
        other = best + float(np.abs(llr[flips]).min()) if flips.any() else np.inf
        weight_best, weight_other = np.full(S, best), np.full(S, other)
        self.last_info = DecodeInfo(extra={"weight_best": weight_best, "weight_other": weight_other})
        return ConfidentPrediction(np.tile(self._constant, (S, 1)).reshape(S, problem.num_observables),
                                   gap_db(weight_best, weight_other))

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
            DecoderCapabilityError: always (after validating ``syndromes``).
        """
        check_syndromes(syndromes, self.problem.num_detectors)
        raise DecoderCapabilityError("tesseract predicts observable flips only here; use predict_observables_batch / "
                                "predict_observables_packed")


ENTRIES = {
    "tesseract": DecoderEntry("tesseract", TesseractDecoder, TESSERACT_PARAMS,
                              doc="Tesseract A* most-likely-error search (any DEM, hyperedges included)",
                              has_confidence=True),
}


def _with_observable_detector(dem, i: int, m: int):
    """``dem`` (flat) with detector ``D{m}`` added to every error that flips observable ``i``.

    Decoding ``[s, b]`` on it asks for a correction ``e`` with ``H e = s`` and ``L_i e = b``. The
    instructions keep their order, so error indices (and Tesseract's merging) match ``dem``'s.
    """
    out = type(dem)()
    for inst in dem.flattened():
        if inst.type == "error":
            targets = inst.targets_copy()
            if sum(1 for t in targets if t.is_logical_observable_id() and t.val == i) % 2:
                inst = type(inst)("error", inst.args_copy(), [*targets, type(targets[0]).relative_detector_id(m)])
        out.append(inst)
    return out


def complement_offset(dem) -> float:
    """``sum ln((1 - p) / p)`` over Tesseract's merged mechanisms with ``p > 1/2`` (zero without any).

    Tesseract merges the errors of ``dem`` that flip the same detectors and observables
    (``p = p1 (1 - p2) + p2 (1 - p1)``). Complementing the errors with ``p > 1/2``
    (:func:`~qdecode.decoders.matching.complement_likely_errors`) complements exactly the merged
    mechanisms with ``p > 1/2`` (those with an odd number of such errors), whose weights ``w``
    become ``-w``; an error ``e`` becomes ``e'`` (those mechanisms toggled), and
    ``W(e) = W'(e') + complement_offset(dem)``.

    Examples:
        >>> round(complement_offset(DecodingProblem.from_dem("error(0.9) D0 L0\\nerror(0.1) D0").dem), 4)
        -2.1972
    """
    merged: dict[tuple[frozenset, frozenset], float] = {}
    for inst in dem.flattened():
        if inst.type != "error":
            continue
        p = inst.args_copy()[0]
        dets, obs = error_targets(inst)
        if p <= 0 or not dets and not obs:
            continue
        key = (frozenset(dets), frozenset(obs))
        q = merged.get(key, 0.0)
        merged[key] = q * (1 - p) + p * (1 - q)
    return float(sum(np.log((1 - p) / p) for p in merged.values() if p > 0.5))


def free_observables(dem, num_detectors: int, num_observables: int) -> list[int]:
    """The observables ``i`` that some error of ``dem`` (``p > 0``) flips with no detection event.

    That is ``L_i`` outside the row space of ``H`` over GF(2) (rank of ``[H; L_i]`` above rank of
    ``H``); the others are fixed by the syndrome, so no correction of another class flips them.

    Examples:
        >>> dem = DecodingProblem.from_dem("error(0.1) D0 L0\\nerror(0.1) D1\\nerror(0.1) D1 L1").dem
        >>> free_observables(dem, 2, 2)  # L0 is D0's bit; the two D1 errors differ in L1 alone
        [1]
    """
    m, k = num_detectors, num_observables
    rows: list[int] = []
    cols: list[int] = []
    n = 0
    for inst in dem.flattened():
        if inst.type != "error" or inst.args_copy()[0] <= 0:
            continue
        dets, obs = error_targets(inst)
        rows.extend(dets)
        rows.extend(m + o for o in obs)
        cols.extend([n] * (len(dets) + len(obs)))
        n += 1
    A = sp.csr_matrix((np.ones(len(rows), dtype=np.uint8), (rows, cols)), shape=(m + k, n))
    rank_h = _gf2_rank(A[:m])
    return [i for i in range(k) if A[m + i].nnz and _gf2_rank(sp.vstack([A[:m], A[m + i]])) > rank_h]


def _gf2_rank(M) -> int:
    """Rank over GF(2) of a sparse 0/1 matrix (:func:`qdecode.kernels.gf2.csc_column_rank`)."""
    from qdecode.kernels import gf2

    M = sp.csc_matrix(M)
    if M.shape[0] == 0 or M.shape[1] == 0:
        return 0
    ptr, idx = M.indptr.astype(np.int64), M.indices.astype(np.int64)
    colbits = np.zeros((M.shape[1], gf2.num_words(M.shape[0])), dtype=np.uint64)
    gf2.pack_csc_columns(ptr, idx, colbits)
    return int(gf2.csc_column_rank(ptr, idx, colbits))
