"""Heralded errors: detectors tagged ``herald`` and what a decoder learns when one fires.

Erasure conversion, leakage detection and atom loss tell where an error happened. stim writes such an
event as a heralded instruction (``HERALDED_ERASE``, ``HERALDED_PAULI_CHANNEL_1``) whose record is read by a
detector tagged ``herald`` (``DETECTOR[herald] rec[-1]``); the tag survives into the detector error
model (``detector[herald] D5``), and each outcome of the heralded channel becomes one mechanism that flips
the herald detector together with its effect (``error(p/2) D5 D7 D8 L0``: herald and X-type effect).

The model this module reads (stim's, with ``approximate_disjoint_errors``): every mechanism flips at most
one herald detector; the mechanisms of one herald ``h``, ``M_h``, are mutually exclusive (one heralded
event, one outcome); everything else is independent. Given the herald bits of a shot:

* ``h`` did not fire: no mechanism of ``M_h`` happened, so those mechanisms are absent from the shot;
* ``h`` fired: exactly one of ``M_h`` happened (three or more is a higher-order event the approximation
  already drops), mechanism ``i`` with probability ``q_i = r_i / sum_k r_k``, ``r = p / (1 - p)`` (the
  exact odds of "only ``i``" among "exactly one"). A decoding column ``j`` then flips with the extra
  probability ``q_hj = sum of q_i over the mechanisms of M_h that flip it`` (exclusive events add), and its
  prior for the shot is the XOR of its ordinary prior and each fired herald's ``q_hj``:
  ``1 - 2 p_j(shot) = (1 - 2 p_j) prod_{h fired} (1 - 2 q_hj)``. An erased qubit gives 1/2 to the column of
  its X part (X or Y happened) and 1/2 to its Z part. A herald that reads several heralded events (the XOR
  of their records, as leakage and loss heralded at the next measurement are, :mod:`qdecode.sims.heralded_noise`)
  is treated the same way: its mechanisms are exclusive to first order in their probabilities.

Heralds are not parity checks: a herald-aware decoder decodes the other detectors with these per-shot
priors. :class:`Heralds` holds what it needs: the two detector sets and two DEMs over the other detectors
(renumbered), ``base_dem`` (the ordinary mechanisms at their probability, each heralded mechanism's
effect at :data:`ABSENT_PRIOR` so that its column exists for every decoder) and ``blind_dem`` (every
mechanism at its probability: the heralds marginalised out, the herald-blind reference). Decomposition
hints (``^``) are kept, herald targets removed from them, so matching decoders build their graphs as
usual. :func:`herald_columns` turns the heralded mechanisms into the per-herald column lists of any
problem built from ``base_dem`` (its merged columns, or their graphlike components).

Bad input, each an :class:`~qdecode.errors.InputError` (one line): a mechanism flipping two herald
detectors, a herald detector no mechanism flips (it could never fire), a detector declared both with and
without the tag, and a tagged logical observable.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from qdecode.errors import InputError

#: The detector tag stim carries into the DEM for a herald (``DETECTOR[herald]``).
HERALD_TAG = "herald"

#: The prior of a column that only heralded mechanisms flip, in ``base_dem``: such a column is absent unless
#: its herald fires (probability ~0, LLR ~27.6), and it must exist so that per-shot priors can raise it.
ABSENT_PRIOR = 1e-12

#: What a decoder does with herald detectors: ``aware`` (per-shot priors where the decoder takes them,
#: else the heralds as ordinary detectors), ``ignore`` (heralds marginalised: the herald-blind reference),
#: ``checks`` (the heralds as ordinary detectors, whatever the decoder).
HERALD_MODES = ("aware", "ignore", "checks")


class HeraldedMechanism(NamedTuple):
    """One mechanism that flips a herald: ``herald`` (its index among the heralds), probability ``p`` and its
    effect on the other detectors, as ``^``-separated components of (renumbered detectors, observables)."""

    herald: int
    p: float
    components: tuple[tuple[frozenset[int], frozenset[int]], ...]


class HeraldColumns(NamedTuple):
    """Per herald, the columns of one decoding problem its firing changes (CSR over heralds).

    ``col[ptr[h]:ptr[h+1]]`` int64 are herald ``h``'s columns and ``flip`` float64 the factors ``1 - 2 q_hj``
    that multiply those columns' ``1 - 2 p`` when ``h`` fires (module docstring).
    """

    ptr: np.ndarray  # (h + 1,) int64
    col: np.ndarray  # (nnz,) int64
    flip: np.ndarray  # (nnz,) float64 in [-1, 1]


@dataclasses.dataclass(frozen=True, eq=False)
class Heralds:
    """The herald detectors of a DEM and the DEMs over its other detectors (module docstring).

    Attributes:
        detectors: ``(h,)`` int64 the herald detectors' indices in the full DEM, ascending.
        kept: ``(m - h,)`` int64 the other detectors, ascending; detector ``kept[i]`` is ``D{i}`` in
            ``base_dem`` and ``blind_dem``.
        base_dem, blind_dem: ``stim.DetectorErrorModel`` over the kept detectors.
        mechanisms: every heralded mechanism (:class:`HeraldedMechanism`).
        mode: one of :data:`HERALD_MODES`.
    """

    detectors: np.ndarray
    kept: np.ndarray
    base_dem: Any
    blind_dem: Any
    mechanisms: tuple[HeraldedMechanism, ...]
    mode: str = "aware"

    @property
    def count(self) -> int:
        return int(self.detectors.size)


def herald_detectors(dem: Any) -> np.ndarray:
    """int64 ``(h,)``: the detectors a (stim) DEM tags ``herald``, ascending (empty: none).

    Raises:
        InputError: a detector declared both with and without the tag, or a tagged logical observable.
    """
    tagged: set[int] = set()
    untagged: set[int] = set()
    for inst in dem.flattened():
        tag = getattr(inst, "tag", "")
        if inst.type == "detector":
            ids = {t.val for t in inst.targets_copy()}
            (tagged if tag == HERALD_TAG else untagged).update(ids)
        elif inst.type == "logical_observable" and tag == HERALD_TAG:
            obs = ", ".join(f"L{t.val}" for t in inst.targets_copy())
            raise InputError(f"logical observable {obs} is tagged '{HERALD_TAG}': only detectors can be heralds")
    both = tagged & untagged
    if both:
        raise InputError(f"detector D{min(both)} is declared both as a herald and as an ordinary detector")
    return np.array(sorted(tagged), dtype=np.int64)


def _components(inst: Any) -> list[tuple[set[int], set[int]]]:
    """The ``^``-separated components of one ``error`` instruction as (detectors, observables) sets."""
    out: list[tuple[set[int], set[int]]] = [(set(), set())]
    for t in inst.targets_copy():
        if t.is_separator():
            out.append((set(), set()))
        elif t.is_relative_detector_id():
            out[-1][0].symmetric_difference_update({t.val})
        elif t.is_logical_observable_id():
            out[-1][1].symmetric_difference_update({t.val})
    return out


def _error_line(p: float, components) -> str | None:
    """A DEM ``error`` line for (renumbered detectors, observables) components; None if it flips nothing."""
    parts = [" ".join([*(f"D{d}" for d in sorted(dets)), *(f"L{o}" for o in sorted(obs))])
             for dets, obs in components if dets or obs]
    return f"error({p!r}) {' ^ '.join(parts)}" if parts else None


def split_heralds(dem: Any, mode: str = "aware") -> Heralds | None:
    """:class:`Heralds` of a ``stim.DetectorErrorModel`` (module docstring), or None if it tags no detector.

    Raises:
        InputError: bad herald tags (:func:`herald_detectors`), a mechanism flipping two heralds, a herald no
            mechanism flips, or an unknown ``mode``.
    """
    import stim  # lazy: the problem layer imports without stim

    if mode not in HERALD_MODES:
        raise InputError(f"heralds must be one of {', '.join(HERALD_MODES)}, got {mode!r}")
    heralds = herald_detectors(dem)
    if heralds.size == 0:
        return None
    herald_index = {int(d): i for i, d in enumerate(heralds)}
    kept = np.setdiff1d(np.arange(dem.num_detectors, dtype=np.int64), heralds)
    new_id = np.full(dem.num_detectors, -1, dtype=np.int64)
    new_id[kept] = np.arange(kept.size)
    base: list[str] = []
    blind: list[str] = []
    mechanisms: list[HeraldedMechanism] = []
    fired_by = np.zeros(heralds.size, dtype=np.int64)
    for inst in dem.flattened():
        if inst.type == "detector":
            ids = [t.val for t in inst.targets_copy() if t.val not in herald_index]
            if ids:
                coords = ",".join(repr(c) for c in inst.args_copy())
                line = f"detector({coords})" if coords else "detector"
                base.append(f"{line} {' '.join(f'D{new_id[d]}' for d in ids)}")
            continue
        if inst.type == "logical_observable":
            base.append(str(inst))
            continue
        if inst.type != "error" or inst.args_copy()[0] <= 0:
            continue
        p = inst.args_copy()[0]
        comps = _components(inst)
        hs = sorted({d for dets, _ in comps for d in dets if d in herald_index})
        if len(hs) > 1:
            raise InputError(f"DEM error {inst} flips herald detectors D{hs[0]} and D{hs[1]}; a heralded "
                             "mechanism must flip exactly one herald")
        kept_comps = tuple((frozenset(int(new_id[d]) for d in dets if d not in herald_index), frozenset(obs))
                           for dets, obs in comps)
        line = _error_line(p, kept_comps)
        if line is not None:
            blind.append(line)
        if hs:
            h = herald_index[hs[0]]
            fired_by[h] += 1
            mechanisms.append(HeraldedMechanism(h, float(p), kept_comps))
            line = _error_line(ABSENT_PRIOR, kept_comps)
        if line is not None:
            base.append(line)
    if (fired_by == 0).any():
        raise InputError(f"herald detector D{heralds[np.argmax(fired_by == 0)]} is flipped by no error mechanism: "
                         "it can never fire")
    tail = [f"detector D{kept.size - 1}"] if kept.size else []
    base_dem = stim.DetectorErrorModel("\n".join(base + tail))
    blind_dem = stim.DetectorErrorModel("\n".join([ln for ln in base if not ln.startswith("error")] + blind + tail))
    return Heralds(heralds, kept, base_dem, blind_dem, tuple(mechanisms), mode)


def herald_columns(heralds: Heralds, problem: Any, components: bool) -> HeraldColumns:
    """Per herald, the columns of ``problem`` (a ``DecodingProblem`` built from ``heralds.base_dem``, or its
    graphlike form) that its mechanisms flip, with the factor ``1 - 2 q_hj`` (module docstring).

    ``components``: ``problem``'s columns are the ``^`` components of the mechanisms (the graphlike form,
    where each component of a heralded mechanism is an edge); else they are the mechanisms' XOR-reduced
    detector sets (the merged columns of ``DecodingProblem.from_dem``). A mechanism's effect that flips no
    detector of ``problem`` is not a column (no decoder can see it) and is skipped.
    """
    H = problem.H.tocsc()
    column_of = {tuple(H.indices[H.indptr[j]:H.indptr[j + 1]].tolist()): j for j in range(H.shape[1])}
    odds_total = np.zeros(heralds.count)
    for mech in heralds.mechanisms:
        odds_total[mech.herald] += mech.p / (1.0 - mech.p)
    q: dict[tuple[int, int], float] = {}
    for mech in heralds.mechanisms:
        share = mech.p / (1.0 - mech.p) / odds_total[mech.herald]
        if components:
            keys = [tuple(sorted(dets)) for dets, _ in mech.components if dets]
        else:
            xor: set[int] = set()
            for dets, _ in mech.components:
                xor ^= dets
            keys = [tuple(sorted(xor))] if xor else []
        for key in keys:
            j = column_of.get(key)
            if j is not None:
                q[(mech.herald, j)] = q.get((mech.herald, j), 0.0) + share
    pairs = sorted(q)
    hs = np.array([h for h, _ in pairs], dtype=np.int64)
    ptr = np.zeros(heralds.count + 1, dtype=np.int64)
    np.add.at(ptr, hs + 1, 1)
    flip = np.clip(1.0 - 2.0 * np.array([q[k] for k in pairs], dtype=np.float64), -1.0, 1.0)
    return HeraldColumns(np.cumsum(ptr), np.array([j for _, j in pairs], dtype=np.int64), flip)
