"""Graphlike (matching) form of a circuit-level decoding problem.

Matching decodes a graph: every mechanism flips at most two detectors. A circuit DEM built
with ``decompose_errors=True`` marks how each heavier mechanism splits into such edges
(``error(p) D0 D1 ^ D2 D3``). :func:`graphlike_problem` makes every component its own
mechanism with the instruction's probability, as PyMatching does when it builds its graph
from a DEM, then merges mechanisms with equal detector sets by the usual XOR rule
(:meth:`DecodingProblem.from_dem`). Its columns are graph edges, so a matching decoder can
return a per-column error estimate, which the sliding-window decoder needs in order to commit
edges and forward their effect; the original hyperedge columns cannot be recovered from a
matching, so only observable predictions are comparable between the two forms.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from qdecode.decoders.base import DecoderInputError
from qdecode.problem import DecodingProblem


@contextlib.contextmanager
def unmatchable_syndromes_refused(decoder: str) -> Iterator[None]:
    """Turn a matcher's "no perfect matching" into a one-line :class:`DecoderInputError`.

    PyMatching (and Chromobius, which matches with it) raises a ``ValueError`` when a syndrome
    has odd parity on a part of the graph with no boundary. For a matching graph built from the
    model itself, no error of the model produces such a syndrome, so the shots come from another
    model (or were corrupted); sampled shots never do this.
    """
    try:
        yield
    except ValueError as exc:
        if "perfect matching" not in str(exc):
            raise
        raise DecoderInputError(
            f"{decoder}: a syndrome has odd parity on a part of the matching graph with no boundary, which no "
            "error of the model produces (were the shots sampled from this model?)"
        ) from None


def dem_components(inst) -> list[tuple[set[int], set[int]]]:
    """The ``^``-separated components of one DEM ``error`` instruction as (detectors, observables) sets."""
    out: list[tuple[set[int], set[int]]] = []
    dets: set[int] = set()
    obs: set[int] = set()
    for t in [*inst.targets_copy(), None]:
        if t is None or t.is_separator():
            out.append((dets, obs))
            dets, obs = set(), set()
        elif t.is_relative_detector_id():
            dets ^= {t.val}
        elif t.is_logical_observable_id():
            obs ^= {t.val}
    return out


def dem_errors(dem):
    """``(instruction, p)`` for every ``error`` instruction of the flattened ``dem``, skipping ``p <= 0``."""
    for inst in dem.flattened():
        if inst.type != "error":
            continue
        p = inst.args_copy()[0]
        if p <= 0:
            continue
        yield inst, p


def graphlike_problem(problem: DecodingProblem) -> DecodingProblem:
    """``problem`` itself if every column flips <= 2 detectors, else its decomposed edge form.

    Components that flip no detector are dropped (matching can never select them).

    Raises:
        DecoderInputError: the problem is not graphlike and has no DEM, or a DEM component
            flips more than two detectors (the DEM was built without ``decompose_errors``).
    """
    if problem.is_graphlike():
        return problem
    if problem.dem is None:
        raise DecoderInputError(
            "matching needs every column of H to flip at most 2 detectors, or a detector error "
            "model with decomposed hyperedges; this check matrix has heavier columns"
        )
    lines: list[str] = []
    for inst, p in dem_errors(problem.dem):
        for dets, obs in dem_components(inst):
            if len(dets) > 2:
                raise DecoderInputError(
                    f"DEM error {inst} has a component flipping {len(dets)} detectors; matching needs "
                    "a DEM with decomposed hyperedges (detector_error_model(decompose_errors=True))"
                )
            if dets:
                targets = [f"D{d}" for d in sorted(dets)] + [f"L{o}" for o in sorted(obs)]
                lines.append(f"error({p!r}) {' '.join(targets)}")
    if problem.num_detectors:
        lines.append(f"detector D{problem.num_detectors - 1}")
    if problem.num_observables:
        lines.append(f"logical_observable L{problem.num_observables - 1}")
    return DecodingProblem.from_dem("\n".join(lines))
