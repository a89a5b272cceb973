"""Fast numpy sampler of DEM mechanisms with per-mechanism labels (no torch, no stim).

Every column ``j`` of ``problem.H`` (a merged error mechanism) fires independently with
probability ``prior_j(p)``; a shot's labels are the fired columns ``e`` (uint8 ``(S, n)``), its
detection events ``dets = H e mod 2`` (uint8 ``(S, m)``) and observable flips
``obs = L e mod 2`` (uint8 ``(S, k)``). The physical error rate ``p`` is drawn per batch from
``[p_min, p_max]``; the priors at ``p`` interpolate linearly between problems built on a grid
of ``p`` values (the circuit's mechanism probabilities are smooth, nearly linear in ``p``).
All grid problems must share ``H`` and ``L`` (the same circuit at different ``p``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from qdecode.errors import InputError


@dataclasses.dataclass
class MechanismBatch:
    """One sampled batch: ``errors (S, n)``, ``dets (S, m)``, ``obs (S, k)`` uint8; ``p`` used."""

    errors: np.ndarray
    dets: np.ndarray
    obs: np.ndarray
    p: float


class MechanismSampler:
    """Sample mechanism labels for problems built on a grid of physical error rates.

    Args:
        grid: ``[(p, problem), ...]`` with increasing ``p``; the problems share ``H``/``L``.
    """

    def __init__(self, grid: Sequence[tuple[float, Any]]):
        if not grid:
            raise InputError("the sampler needs at least one (p, problem) pair")
        grid = sorted(grid, key=lambda item: item[0])
        first = grid[0][1]
        for _, pr in grid[1:]:
            if pr.H.shape != first.H.shape or (pr.H != first.H).nnz or (pr.L != first.L).nnz:
                raise InputError("grid problems must share H and L (one circuit at several p)")
        self.problem = first
        self.p_grid = np.array([p for p, _ in grid], dtype=np.float64)
        self.prior_grid = np.stack([np.asarray(pr.priors, dtype=np.float64) for _, pr in grid])
        self._H_T = first.H.T.tocsr().astype(np.int32)
        self._L_T = first.L.T.tocsr().astype(np.int32)

    def priors(self, p: float) -> np.ndarray:
        """float64 ``(n,)`` mechanism probabilities at ``p`` (linear interpolation, clamped)."""
        if self.p_grid.size == 1:
            return self.prior_grid[0].copy()
        i = int(np.clip(np.searchsorted(self.p_grid, p) - 1, 0, self.p_grid.size - 2))
        p0, p1 = self.p_grid[i], self.p_grid[i + 1]
        w = (p - p0) / (p1 - p0)
        return np.clip((1 - w) * self.prior_grid[i] + w * self.prior_grid[i + 1], 1e-12, 0.5)

    def sample(self, shots: int, rng: np.random.Generator, p: float | None = None,
               p_range: tuple[float, float] | None = None) -> MechanismBatch:
        """Sample ``shots`` shots at ``p`` (or at one ``p ~ U(p_range)`` for the whole batch)."""
        if p is None:
            lo, hi = p_range if p_range is not None else (self.p_grid[0], self.p_grid[-1])
            p = float(rng.uniform(lo, hi))
        pri = self.priors(p).astype(np.float32)
        errors = (rng.random((shots, pri.size), dtype=np.float32) < pri).astype(np.uint8)
        E = sp.csr_matrix(errors, dtype=np.int32)
        dets = (np.asarray((E @ self._H_T).todense()) & 1).astype(np.uint8)
        obs = (np.asarray((E @ self._L_T).todense()) & 1).astype(np.uint8)
        return MechanismBatch(errors=errors, dets=dets, obs=obs, p=p)
