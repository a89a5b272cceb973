"""Noise learning: mechanism probabilities from detection-event statistics alone.

Given detection events (no observables, no knowledge of the true noise) and a *reference*
detector error model of the same circuit family (for example the same circuit at another
physical error rate), :func:`learn_noise` returns a DEM with the reference's structure and
probabilities re-estimated from the data.

How it works
------------
1. **Sectors.** Detectors are grouped into sectors that a graphlike mechanism never straddles:
   X-type and Z-type detectors of a CSS memory circuit (:func:`sectors_from_circuit`, from
   :func:`qdecode.sims.circuits.detector_bases`), or, with only a DEM, the connected
   components of the graph whose edges are the DEM's graphlike components (the pieces
   between ``^`` separators; :func:`sectors_from_dem`).
2. **Classes.** Every reference error instruction flips a set of detectors (the XOR of its
   ``^`` components). Its *projection* onto a sector is the subset inside that sector; a
   projection of one detector ``{i}`` or two ``{i, j}`` is a *class* of that sector. A Y-type
   error of the surface code has one class in each sector (a *mixed* instruction); a
   projection of three or more detectors is *heavy* (no estimator below covers it).
3. **Moments.** :class:`MomentAccumulator` streams batches of detection events (unpacked
   ``uint8`` or stim's bit-packed layout) and counts ``x_i`` for every detector and
   ``x_i x_j`` for the pair classes only, with shot-axis bit packing and popcounts, so 10^6
   shots are never held at once and no dense ``m x m`` matrix is formed.
4. **Estimators** (Google 2021 supplement; Spitz et al. 2018), with ``<.>`` a mean over shots::

       p_ij = 1/2 - 1/2 sqrt(1 - 4(<x_i x_j> - <x_i><x_j>) / (1 - 2<x_i> - 2<x_j> + 4<x_i x_j>))
       p_iB = 1/2 [1 - (1 - 2<x_i>) / prod_{j in N(i)} (1 - 2 p_ij)]

   ``p_ij`` is the probability that the mechanisms whose projection is ``{i, j}`` fire an odd
   number of times (the class's XOR-combined probability); ``N(i)`` are the pair classes of
   ``i`` **in the same sector**. The boundary formula assumes every mechanism that flips ``i``
   is a class of ``i``'s sector, which holds per sector and fails over all detectors at
   once: Y/CNOT mechanisms that flip two X and two Z detectors then make ``p_iB`` wrong by up to
   100% (see ``tests/sims/test_noise_learning.py``). An estimate that is not a probability
   (negative radicand, ``p <= 0``, ``p >= 1/2``, zero denominator) is counted and replaced by
   the reference value times the median scale factor of the sector's valid classes.
5. **Class rescaling.** The estimates are pushed back into the reference DEM, never written
   as matching-graph edges: each instruction of class ``k`` is scaled by ``p_hat_k / p_k_ref``
   (``p_k_ref``: XOR of the reference instructions of class ``k``). Writing ``p_ij`` straight
   onto graph edges is wrong because stim decomposes some mechanisms with footprint
   ``{i, j}`` that flip an observable into two boundary half-edges, and covariances cannot
   say where the observable sits; rescaling keeps the reference's decomposition.

   *Mixed instructions* (a class in two sectors) get the **geometric mean** of their classes'
   scale factors: ``p = p_ref * (f_X f_Z)^(1/2)``. With ``mixed="fit"`` (the default) the
   class factors ``f`` are then refined by a fixed-point iteration until every class's
   XOR-combined learned probability equals its estimate ``p_hat_k`` in both sectors (the
   one-shot rescale only matches it when ``f_X = f_Z``); ``mixed="geomean"`` stops after the
   one-shot rescale. A uniform change of the noise strength (``f`` equal everywhere) is
   reproduced exactly by both. Instructions with a heavy projection in any sector keep their
   reference probability (they are counted in the report).

The learned DEM is the *flattened* reference (``repeat`` blocks unrolled, ``shift_detectors``
applied) with the same instructions, targets, ``^`` decompositions, ``detector`` coordinates
and ``logical_observable`` lines; only the ``error`` probabilities change, clipped into
``[1e-12, 1/2 - 1e-12]``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterable, Sequence

import numpy as np

from qdecode.errors import InputError

P_MIN = 1e-12
P_MAX = 0.5 - 1e-12
MIXED_POLICIES = ("fit", "geomean")
#: shots processed per internal chunk of :meth:`MomentAccumulator.add` (bounds memory)
CHUNK_SHOTS = 65536

# estimate status codes
OK, LOW, HIGH, INVALID = 0, 1, 2, 3
_STATUS_NAMES = {LOW: "p<=0", HIGH: "p>=1/2 or negative radicand", INVALID: "zero or negative denominator"}


# --------------------------------------------------------------------------------- sectors
def sectors_from_circuit(circuit: Any) -> list[np.ndarray]:
    """Detector indices grouped by basis (:func:`~qdecode.sims.circuits.detector_bases`).

    Returns one ``int64`` index array per basis label that occurs (``"X"`` before ``"Z"``,
    then any others such as ``"mixed"``), in detector order.
    """
    from qdecode.sims.circuits import detector_bases

    return sectors_from_labels(detector_bases(circuit))


def sectors_from_labels(labels: Sequence[str]) -> list[np.ndarray]:
    """Group detector indices by a per-detector label (sorted labels, detector order within)."""
    arr = np.asarray(list(labels), dtype=object)
    return [np.flatnonzero(arr == lab).astype(np.int64) for lab in sorted(set(arr.tolist()))]


def sectors_from_dem(dem: Any) -> list[np.ndarray]:
    """Connected components of the graph of the DEM's graphlike pieces.

    Every ``^``-separated component of an error instruction with one or two detectors
    adds its detectors to the graph (two detectors: an edge). Components with more detectors
    add nothing, so an undecomposed Y error does not join the X and Z sectors. A detector
    that no graphlike piece touches is a sector of its own. Use this only when no circuit is
    available; :func:`sectors_from_circuit` is exact.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    m = dem.num_detectors
    rows: list[int] = []
    cols: list[int] = []
    for inst in dem.flattened():
        if inst.type != "error":
            continue
        for piece in _pieces(inst.targets_copy()):
            if len(piece) == 2:
                rows.append(piece[0])
                cols.append(piece[1])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, m))
    n, label = connected_components(graph, directed=False)
    return [np.flatnonzero(label == k).astype(np.int64) for k in range(n)]


def _pieces(targets) -> list[list[int]]:
    """Detector ids of each ``^``-separated component (XOR within a component)."""
    out: list[list[int]] = []
    cur: set[int] = set()
    for t in targets:
        if t.is_separator():
            out.append(sorted(cur))
            cur = set()
        elif t.is_relative_detector_id():
            cur ^= {t.val}
    out.append(sorted(cur))
    return out


def _normalise_sectors(sectors: Any, dem: Any) -> tuple[list[np.ndarray], list[str]]:
    """(index arrays, names): names are the basis labels when known, else ``"0"``, ``"1"``, ..."""
    m = dem.num_detectors
    names: list[str] | None = None
    if sectors is None:
        out = sectors_from_dem(dem)
    else:
        if hasattr(sectors, "compile_detector_sampler"):  # a stim.Circuit
            from qdecode.sims.circuits import detector_bases

            sectors = detector_bases(sectors)
            if len(sectors) != m:
                raise InputError(f"the circuit has {len(sectors)} detectors, the DEM {m}")
        seq = list(sectors)
        if len(seq) == m and all(isinstance(x, str) for x in seq):
            out = sectors_from_labels(seq)
            names = sorted(set(seq))
        else:
            out = [np.asarray(s, dtype=np.int64).ravel() for s in seq]
    seen = np.zeros(m, dtype=np.int64)
    for s in out:
        if s.size and (s.min() < 0 or s.max() >= m):
            raise InputError(f"sector detector index out of range for a DEM with {m} detectors")
        np.add.at(seen, s, 1)
    if np.any(seen > 1):
        raise InputError(f"detector {int(np.flatnonzero(seen > 1)[0])} is in more than one sector")
    return out, names or [str(k) for k in range(len(out))]


# ------------------------------------------------------------------------------- classes
@dataclasses.dataclass
class NoiseClasses:
    """The reference DEM split into sector-projection classes.

    Attributes:
        flat: the flattened reference DEM.
        num_detectors: detectors of the DEM.
        sectors: detector index arrays, one per sector.
        sector_names: basis label of each sector (``"X"``, ``"Z"``) when known, else its index.
        error_positions: position in ``flat`` of each error instruction (``E`` of them).
        p_ref: ``(E,)`` reference probabilities.
        class_sector: ``(C,)`` sector of each class.
        class_dets: ``(C, 2)`` detectors of each class; ``-1`` in column 1 for a single detector.
        inc_err, inc_cls: incidence (instruction, class) pairs, one per instruction and sector
            where its projection has one or two detectors.
        heavy: ``(E,)`` the instruction has a projection of >= 3 detectors in some sector.
        sectors_touched: ``(E,)`` number of sectors where the instruction has a class.
    """

    flat: Any
    num_detectors: int
    sectors: list[np.ndarray]
    sector_names: list[str]
    error_positions: np.ndarray
    p_ref: np.ndarray
    class_sector: np.ndarray
    class_dets: np.ndarray
    inc_err: np.ndarray
    inc_cls: np.ndarray
    heavy: np.ndarray
    sectors_touched: np.ndarray
    _index: dict = dataclasses.field(repr=False, default_factory=dict)
    _sector_of: np.ndarray | None = dataclasses.field(repr=False, default=None)

    @classmethod
    def from_dem(cls, dem: Any, sectors: Any = None) -> "NoiseClasses":
        """Classes of ``dem`` (``stim.DetectorErrorModel``) for ``sectors`` (see :func:`learn_noise`)."""
        flat = dem.flattened()
        m = dem.num_detectors
        secs, names = _normalise_sectors(sectors, dem)
        sector_of = np.full(m, -1, dtype=np.int64)
        for k, s in enumerate(secs):
            sector_of[s] = k
        index: dict[tuple[int, int, int], int] = {}
        positions: list[int] = []
        p_ref: list[float] = []
        inc_e: list[int] = []
        inc_c: list[int] = []
        heavy: list[bool] = []
        for pos, inst in enumerate(flat):
            if inst.type != "error":
                continue
            e = len(positions)
            positions.append(pos)
            p = float(inst.args_copy()[0])
            p_ref.append(p)
            is_heavy = False
            if p > 0:
                for sec, dets in _projections(inst.targets_copy(), sector_of).items():
                    if len(dets) > 2:
                        is_heavy = True
                        continue
                    key = (sec, dets[0], dets[1] if len(dets) == 2 else -1)
                    c = index.setdefault(key, len(index))
                    inc_e.append(e)
                    inc_c.append(c)
            heavy.append(is_heavy)
        keys = sorted(index, key=index.get)
        class_sector = np.array([k[0] for k in keys], dtype=np.int64)
        class_dets = np.array([[k[1], k[2]] for k in keys], dtype=np.int64).reshape(-1, 2)
        inc_err = np.array(inc_e, dtype=np.int64)
        return cls(
            flat=flat,
            num_detectors=m,
            sectors=secs,
            sector_names=names,
            error_positions=np.array(positions, dtype=np.int64),
            p_ref=np.array(p_ref, dtype=np.float64),
            class_sector=class_sector,
            class_dets=class_dets,
            inc_err=inc_err,
            inc_cls=np.array(inc_c, dtype=np.int64),
            heavy=np.array(heavy, dtype=bool),
            sectors_touched=np.bincount(inc_err, minlength=len(positions)).astype(np.int64),
            _index=index,
            _sector_of=sector_of,
        )

    @property
    def num_classes(self) -> int:
        return len(self.class_sector)

    @property
    def is_pair(self) -> np.ndarray:
        return self.class_dets[:, 1] >= 0

    @property
    def pairs(self) -> np.ndarray:
        """``(P, 2)`` detector pairs of the pair classes, in class order."""
        return self.class_dets[self.is_pair]

    def totals(self, probs: np.ndarray) -> np.ndarray:
        """XOR-combined probability of each class for per-instruction probabilities ``probs``."""
        logs = np.log1p(-2.0 * np.clip(probs[self.inc_err], 0.0, P_MAX))
        s = np.bincount(self.inc_cls, weights=logs, minlength=self.num_classes)
        return 0.5 * (1.0 - np.exp(s))

    def reference_totals(self) -> np.ndarray:
        return self.totals(self.p_ref)

    def totals_of(self, dem: Any) -> tuple[np.ndarray, int]:
        """XOR-combined probability of each class in another DEM over the same detectors.

        Returns ``(totals, unmatched)``: ``unmatched`` counts instructions of ``dem`` with a
        one- or two-detector projection that is not a class of the reference (their weight is
        not in ``totals``).
        """
        if dem.num_detectors != self.num_detectors:
            raise InputError(f"DEM has {dem.num_detectors} detectors, the classes {self.num_detectors}")
        logs = np.zeros(self.num_classes)
        unmatched = 0
        for inst in dem.flattened():
            if inst.type != "error":
                continue
            p = float(inst.args_copy()[0])
            if p <= 0:
                continue
            for sec, dets in _projections(inst.targets_copy(), self._sector_of).items():
                if len(dets) > 2:
                    continue
                c = self._index.get((sec, dets[0], dets[1] if len(dets) == 2 else -1))
                if c is None:
                    unmatched += 1
                else:
                    logs[c] += math.log1p(-2.0 * min(p, P_MAX))
        return 0.5 * (1.0 - np.exp(logs)), unmatched


def _projections(targets, sector_of: np.ndarray) -> dict[int, tuple[int, ...]]:
    dets: set[int] = set()
    for t in targets:
        if t.is_relative_detector_id():
            dets ^= {t.val}
    by: dict[int, list[int]] = {}
    for d in sorted(dets):
        s = int(sector_of[d])
        if s >= 0:
            by.setdefault(s, []).append(d)
    return {s: tuple(v) for s, v in by.items()}


# ------------------------------------------------------------------------------- moments
class MomentAccumulator:
    """Streaming counts of ``x_i`` (all detectors) and ``x_i x_j`` (given pairs) over shots.

    Args:
        num_detectors: detectors per shot ``m``.
        pairs: ``(P, 2)`` detector pairs whose joint counts are needed.

    Pair counts use the shots as bits: each chunk is transposed to one bit-packed row per
    detector, and a pair costs one AND and a popcount per 64 shots.
    """

    def __init__(self, num_detectors: int, pairs: np.ndarray | Sequence[Sequence[int]] = ()):
        self.num_detectors = int(num_detectors)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= self.num_detectors):
            raise InputError(f"pair detector index out of range for {self.num_detectors} detectors")
        self.pairs = pairs
        self.shots = 0
        self.ones = np.zeros(self.num_detectors, dtype=np.int64)
        self.pair_ones = np.zeros(len(pairs), dtype=np.int64)

    def add(self, dets: np.ndarray, *, bit_packed: bool = False) -> None:
        """Add a batch: ``(S, m)`` 0/1 values, or ``(S, ceil(m/8))`` bytes when ``bit_packed``
        (stim's layout: detector ``k`` is bit ``k % 8`` of byte ``k // 8``)."""
        a = np.asarray(dets)
        if a.ndim != 2:
            raise InputError(f"detection events must be a 2-D (shots, detectors) array, got shape {a.shape}")
        m = self.num_detectors
        width = (m + 7) // 8 if bit_packed else m
        if a.shape[1] != width:
            what = f"{width} bytes per bit-packed shot" if bit_packed else f"{m} detectors per shot"
            raise InputError(f"detection events have {a.shape[1]} columns, expected {what}")
        for start in range(0, a.shape[0], CHUNK_SHOTS):
            chunk = a[start:start + CHUNK_SHOTS]
            if bit_packed:
                x = np.unpackbits(np.ascontiguousarray(chunk, dtype=np.uint8), axis=1, count=m, bitorder="little")
            else:
                x = chunk.astype(np.uint8, copy=False)
                if x.size and x.max() > 1:
                    raise InputError("unpacked detection events must be 0/1")
            self._add_unpacked(x)

    def _add_unpacked(self, x: np.ndarray) -> None:
        s = x.shape[0]
        if s == 0:
            return
        self.shots += s
        self.ones += x.sum(axis=0, dtype=np.int64)
        if not len(self.pairs):
            return
        rows = np.packbits(x, axis=0)  # (ceil(s/8), m)
        pad = (-rows.shape[0]) % 8
        if pad:
            rows = np.concatenate([rows, np.zeros((pad, rows.shape[1]), dtype=np.uint8)])
        rows = np.ascontiguousarray(rows.T).view(np.uint64)  # (m, words)
        step = max(1, (1 << 22) // max(rows.shape[1], 1))
        for lo in range(0, len(self.pairs), step):
            pr = self.pairs[lo:lo + step]
            both = rows[pr[:, 0]] & rows[pr[:, 1]]
            self.pair_ones[lo:lo + step] += np.bitwise_count(both).sum(axis=1, dtype=np.int64)

    def means(self) -> tuple[np.ndarray, np.ndarray]:
        """``(<x_i> for all i, <x_i x_j> for the pairs)``."""
        if self.shots == 0:
            raise InputError("no shots accumulated")
        return self.ones / self.shots, self.pair_ones / self.shots


# ----------------------------------------------------------------------------- estimators
def pair_estimate(xi: np.ndarray, xj: np.ndarray, xij: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise estimator ``p_ij`` and a status code per pair (``OK``, ``LOW``, ``HIGH``, ``INVALID``)."""
    xi, xj, xij = (np.asarray(v, dtype=np.float64) for v in (xi, xj, xij))
    den = 1.0 - 2.0 * xi - 2.0 * xj + 4.0 * xij
    status = np.zeros(den.shape, dtype=np.int8)
    with np.errstate(divide="ignore", invalid="ignore"):
        rad = 1.0 - 4.0 * (xij - xi * xj) / den
        p = 0.5 - 0.5 * np.sqrt(np.maximum(rad, 0.0))
    status[p <= 0] = LOW
    status[(rad < 0) | (p >= 0.5)] = HIGH
    status[~(den > 0)] = INVALID
    return p, status


def boundary_estimate(xi: np.ndarray, neighbour_product: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boundary estimator ``p_iB`` from ``<x_i>`` and ``prod_j (1 - 2 p_ij)``, with status codes."""
    xi = np.asarray(xi, dtype=np.float64)
    prod = np.asarray(neighbour_product, dtype=np.float64)
    status = np.zeros(xi.shape, dtype=np.int8)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 0.5 * (1.0 - (1.0 - 2.0 * xi) / prod)
    status[p <= 0] = LOW
    status[p >= 0.5] = HIGH
    status[~(prod > 0)] = INVALID
    return p, status


@dataclasses.dataclass
class ClassEstimate:
    """Per-class estimates.

    Attributes:
        raw: the estimator's value (``p_ij`` or ``p_iB``), NaN where undefined.
        p_hat: the value used: ``raw`` where valid, else the fallback.
        status: ``OK``/``LOW``/``HIGH``/``INVALID`` per class.
    """

    raw: np.ndarray
    p_hat: np.ndarray
    status: np.ndarray


def _sector_median_scale(classes: NoiseClasses, scale: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Median of ``scale[ok]`` per sector (1 for a sector without valid classes)."""
    out = np.ones(len(classes.sectors))
    for s in range(len(classes.sectors)):
        sel = ok & (classes.class_sector == s)
        if np.any(sel):
            out[s] = float(np.median(scale[sel]))
    return out


def estimate_classes(classes: NoiseClasses, acc: MomentAccumulator) -> ClassEstimate:
    """Pair classes by ``p_ij``, then single-detector classes by ``p_iB`` within their sector.

    ``acc`` must count the pairs ``classes.pairs`` in that order. Invalid estimates fall back to
    ``p_ref_k`` times the median ``p_hat / p_ref`` of the valid classes of the same kind
    (pair or single) in the same sector.
    """
    if acc.num_detectors != classes.num_detectors:
        raise InputError(f"moments have {acc.num_detectors} detectors, the reference DEM {classes.num_detectors}")
    if not np.array_equal(acc.pairs, classes.pairs):
        raise InputError("the accumulator does not count the classes' pairs")
    x, xx = acc.means()
    c = classes.num_classes
    ref = classes.reference_totals()
    raw = np.full(c, np.nan)
    status = np.zeros(c, dtype=np.int8)
    p_hat = np.empty(c)
    is_pair = classes.is_pair
    pair_ids = np.flatnonzero(is_pair)
    a, b = classes.pairs[:, 0], classes.pairs[:, 1]
    p, st = pair_estimate(x[a], x[b], xx)
    raw[pair_ids], status[pair_ids] = p, st
    ok = status == OK
    med = _sector_median_scale(classes, raw / ref, ok & is_pair)
    fallback = ref * med[classes.class_sector]
    p_hat[pair_ids] = np.where(st == OK, p, fallback[pair_ids])
    # boundary classes: product over the same sector's pair classes that contain i
    single_ids = np.flatnonzero(~is_pair)
    if single_ids.size:
        logs = np.log1p(-2.0 * np.clip(p_hat[pair_ids], 0.0, P_MAX))
        sec = classes.class_sector[pair_ids]
        nsec = len(classes.sectors)
        keyed = np.zeros(nsec * classes.num_detectors)
        np.add.at(keyed, sec * classes.num_detectors + a, logs)
        np.add.at(keyed, sec * classes.num_detectors + b, logs)
        i = classes.class_dets[single_ids, 0]
        prod = np.exp(keyed[classes.class_sector[single_ids] * classes.num_detectors + i])
        pb, sb = boundary_estimate(x[i], prod)
        raw[single_ids], status[single_ids] = pb, sb
        ok = status == OK
        med_b = _sector_median_scale(classes, raw / ref, ok & ~is_pair)
        fb = ref * med_b[classes.class_sector]
        p_hat[single_ids] = np.where(sb == OK, pb, fb[single_ids])
    return ClassEstimate(raw=raw, p_hat=np.clip(p_hat, P_MIN, P_MAX), status=status)


# ---------------------------------------------------------------------------- rescaling
@dataclasses.dataclass
class Rescaled:
    """Learned per-instruction probabilities and the class factors that produced them."""

    probs: np.ndarray  # (E,)
    class_factor: np.ndarray  # (C,)
    iterations: int
    max_class_residual: float  # max |learned class total / p_hat - 1| over rescalable classes


def rescale(classes: NoiseClasses, p_hat: np.ndarray, *, mixed: str = "fit",
            max_iter: int = 200, tol: float = 1e-9) -> Rescaled:
    """Scale the reference instructions so each class moves to ``p_hat`` (see the module doc).

    Args:
        classes: the reference's classes.
        p_hat: ``(C,)`` target XOR-combined probability per class.
        mixed: ``"geomean"`` (one-shot: each instruction times the geometric mean of its
            classes' ``p_hat_k / p_k_ref``) or ``"fit"`` (then iterate the class factors until
            every class total matches ``p_hat``).
        max_iter, tol: iteration limit and relative tolerance of ``"fit"``.
    """
    if mixed not in MIXED_POLICIES:
        raise InputError(f"mixed must be one of {MIXED_POLICIES}, got {mixed!r}")
    e_count = len(classes.p_ref)
    p_hat = np.asarray(p_hat, dtype=np.float64)
    ref = classes.reference_totals()
    free = ~classes.heavy & (classes.sectors_touched > 0)
    sel = free[classes.inc_err]  # incidences that drive a scale
    inc_e, inc_c = classes.inc_err[sel], classes.inc_cls[sel]
    touched = np.bincount(inc_e, minlength=e_count)
    has = touched > 0

    def probs_for(log_f: np.ndarray) -> np.ndarray:
        s = np.bincount(inc_e, weights=log_f[inc_c], minlength=e_count)
        scale = np.ones(e_count)
        scale[has] = np.exp(s[has] / touched[has])
        return np.clip(classes.p_ref * scale, P_MIN, P_MAX)

    with np.errstate(divide="ignore"):
        log_f = np.log(p_hat) - np.log(ref)
    log_f = np.clip(np.nan_to_num(log_f, nan=0.0), -30.0, 30.0)
    probs = probs_for(log_f)
    driven = np.zeros(classes.num_classes, dtype=bool)
    driven[inc_c] = True
    iterations = 0

    def residual(pr: np.ndarray) -> float:
        t = classes.totals(pr)
        r = np.abs(t[driven] / p_hat[driven] - 1.0)
        return float(r.max()) if r.size else 0.0

    if mixed == "fit":
        for iterations in range(1, max_iter + 1):
            t = classes.totals(probs)
            step = np.log(p_hat) - np.log(np.maximum(t, P_MIN))
            step[~driven] = 0.0
            log_f = np.clip(log_f + step, -30.0, 30.0)
            probs = probs_for(log_f)
            if float(np.max(np.abs(step), initial=0.0)) < tol:
                break
    return Rescaled(probs=probs, class_factor=np.exp(log_f), iterations=iterations,
                    max_class_residual=residual(probs))


def build_dem(classes: NoiseClasses, probs: np.ndarray) -> Any:
    """The flattened reference with error probabilities replaced by ``probs`` (instructions
    with a non-positive reference probability are copied unchanged)."""
    import stim

    out = stim.DetectorErrorModel()
    new_p = dict(zip(classes.error_positions.tolist(), np.asarray(probs, dtype=np.float64).tolist()))
    for pos, inst in enumerate(classes.flat):
        p = new_p.get(pos)
        if p is None or float(inst.args_copy()[0]) <= 0:
            out.append(inst)
        else:
            out.append(stim.DemInstruction("error", [p], inst.targets_copy()))
    return out


# ------------------------------------------------------------------------------- driver
@dataclasses.dataclass
class NoiseLearningReport:
    """What :func:`learn_noise` estimated and changed."""

    shots: int
    num_detectors: int
    sector_sizes: dict[str, int]
    mixed: str
    pair_classes: int
    boundary_classes: int
    clipped: dict[str, int]  # "pair <reason>" / "boundary <reason>" -> count (fallback used)
    classes_rescaled: int
    instructions: int
    instructions_rescaled: int
    instructions_mixed: int
    instructions_heavy: int  # kept at the reference probability
    instructions_untouched: int  # no class at all (or heavy): reference probability kept
    scale_summary: dict[str, dict[str, float]]  # sector -> min / p10 / median / p90 / max of p_hat/p_ref
    fit_iterations: int
    max_class_residual: float

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def format(self) -> str:
        lines = [
            f"shots: {self.shots}   detectors: {self.num_detectors}   sectors: {self.sector_sizes}",
            f"classes: {self.pair_classes} pair (p_ij), {self.boundary_classes} boundary (p_iB), "
            f"{self.classes_rescaled} rescaled",
            "clipped estimates (reference x sector median used): "
            + (", ".join(f"{k}: {v}" for k, v in self.clipped.items()) if self.clipped else "none"),
            f"instructions: {self.instructions} ({self.instructions_rescaled} rescaled, "
            f"{self.instructions_mixed} mixed-sector [{self.mixed}], {self.instructions_heavy} heavy kept, "
            f"{self.instructions_untouched} untouched)",
        ]
        if self.mixed == "fit":
            lines.append(f"fit: {self.fit_iterations} iterations, max class residual {self.max_class_residual:.2e}")
        for sector, s in self.scale_summary.items():
            lines.append(
                f"scale p_hat/p_ref, sector {sector}: min {s['min']:.3g}  p10 {s['p10']:.3g}  "
                f"median {s['median']:.3g}  p90 {s['p90']:.3g}  max {s['max']:.3g}"
            )
        return "\n".join(lines)


def _batches(detection_events: Any) -> Iterable[np.ndarray]:
    if isinstance(detection_events, np.ndarray):
        yield detection_events
    else:
        yield from detection_events


def learn_noise(
    reference_dem: Any,
    detection_events: Any,
    sectors: Any = None,
    *,
    bit_packed: bool = False,
    mixed: str = "fit",
    min_shots: int = 1000,
) -> tuple[Any, NoiseLearningReport]:
    """Learn a DEM from detection events and a reference DEM of the same circuit family.

    Args:
        reference_dem: ``stim.DetectorErrorModel`` giving the structure (ideally decomposed,
            as decoders see it: :func:`qdecode.problem.decoding_dem`).
        detection_events: one ``(S, m)`` array or an iterable of batches (0/1 values, or stim
            bit-packed bytes with ``bit_packed=True``); consumed once, in a stream.
        sectors: ``None`` (components of the DEM's graphlike pieces, :func:`sectors_from_dem`),
            a ``stim.Circuit`` (detector bases), one label per detector, or a list of
            detector-index arrays. One sector with every detector reproduces the
            all-detector pitfall.
        bit_packed: batches are stim bit-packed.
        mixed: ``"fit"`` or ``"geomean"``: how instructions with classes in two sectors are
            scaled (see the module doc).
        min_shots: fewer shots is an error.

    Returns:
        ``(learned DEM, report)``.

    Raises:
        ValueError: shape mismatch, too few shots, bad sectors or policy.
    """
    if mixed not in MIXED_POLICIES:
        raise InputError(f"mixed must be one of {MIXED_POLICIES}, got {mixed!r}")
    classes = NoiseClasses.from_dem(reference_dem, sectors)
    acc = MomentAccumulator(classes.num_detectors, classes.pairs)
    for batch in _batches(detection_events):
        acc.add(batch, bit_packed=bit_packed)
    if acc.shots < min_shots:
        raise InputError(f"only {acc.shots} shots of detection events; noise learning needs at least {min_shots}")
    est = estimate_classes(classes, acc)
    res = rescale(classes, est.p_hat, mixed=mixed)
    dem = build_dem(classes, res.probs)
    return dem, _report(classes, acc, est, res, mixed)


def _report(
    classes: NoiseClasses, acc: MomentAccumulator, est: ClassEstimate, res: Rescaled, mixed: str
) -> NoiseLearningReport:
    is_pair = classes.is_pair
    clipped: dict[str, int] = {}
    for kind, sel in (("pair", is_pair), ("boundary", ~is_pair)):
        for code, name in _STATUS_NAMES.items():
            n = int(np.count_nonzero(sel & (est.status == code)))
            if n:
                clipped[f"{kind} {name}"] = n
    ref = classes.reference_totals()
    scale = est.p_hat / ref
    summary: dict[str, dict[str, float]] = {}
    for s in range(len(classes.sectors)):
        v = scale[classes.class_sector == s]
        if v.size:
            q = np.quantile(v, [0.0, 0.1, 0.5, 0.9, 1.0])
            summary[classes.sector_names[s]] = dict(zip(("min", "p10", "median", "p90", "max"), (float(t) for t in q)))
    positive = classes.p_ref > 0
    rescaled = positive & ~classes.heavy & (classes.sectors_touched > 0)
    driven = np.zeros(classes.num_classes, dtype=bool)
    driven[classes.inc_cls[rescaled[classes.inc_err]]] = True
    return NoiseLearningReport(
        shots=acc.shots,
        num_detectors=classes.num_detectors,
        sector_sizes={n: int(len(s)) for n, s in zip(classes.sector_names, classes.sectors)},
        mixed=mixed,
        pair_classes=int(np.count_nonzero(is_pair)),
        boundary_classes=int(np.count_nonzero(~is_pair)),
        clipped=clipped,
        classes_rescaled=int(np.count_nonzero(driven)),
        instructions=len(classes.p_ref),
        instructions_rescaled=int(np.count_nonzero(rescaled)),
        instructions_mixed=int(np.count_nonzero(rescaled & (classes.sectors_touched > 1))),
        instructions_heavy=int(np.count_nonzero(classes.heavy)),
        instructions_untouched=int(np.count_nonzero(~rescaled)),
        scale_summary=summary,
        fit_iterations=res.iterations,
        max_class_residual=res.max_class_residual,
    )
