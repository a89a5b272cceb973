"""Circuit-level distance of a detector error model: the fewest error mechanisms that flip an
observable and no detector, by integer programming (:func:`qdecode.codes.distance.logical_distance`).

Unlike stim's ``Circuit.shortest_graphlike_error`` it needs no graphlike decomposition, so it
applies to hyperedge DEMs (BB and color-code circuits); mechanisms are the DEM's ``error``
instructions, unmerged (:func:`qdecode.problem.unmerged_matrices`).
"""

from __future__ import annotations

from typing import Any

from qdecode.codes.distance import DistanceResult, logical_distance
from qdecode.errors import InputError
from qdecode.problem import unmerged_matrices

__all__ = ["circuit_distance"]


def circuit_distance(dem: Any, *, time_limit: float | None = 60.0) -> DistanceResult:
    """Circuit distance of ``dem`` (a ``stim.DetectorErrorModel`` or its text); ``witness`` marks the
    error instructions (flattened order) of a lightest undetectable logical error.

    Raises:
        ValueError: a DEM without observables.
    """
    H, L = unmerged_matrices(dem)
    if L.shape[0] == 0:
        raise InputError("the DEM has no logical observable: its circuit distance is undefined")
    return logical_distance(H, L, time_limit=time_limit)
