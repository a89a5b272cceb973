"""Per-shot priors from the heralds that fired (the rule is :mod:`qdecode.heralds`' docstring).

For each shot, every column that a fired herald touches gets the prior
``p = (1 - t) / 2`` with ``t = (1 - 2 p_base) * prod_{h fired} flip_hj``; every other column keeps its base
prior. The result is sparse, :class:`ShotPriors`: a shot costs time in proportion to the columns its
heralds touch, not to the problem (what a fast decoder such as union-find needs; the BP family expands it
into dense LLRs with :func:`fill_llrs`).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

#: Per-shot priors are kept inside ``[PRIOR_CLAMP, 1 - PRIOR_CLAMP]``, so that every LLR and OSD cost is
#: finite (a column flipped for certain, ``t = -1``, gets LLR -34.5).
PRIOR_CLAMP = 1e-15


class ShotPriors(NamedTuple):
    """Sparse per-shot priors (CSR over shots): shot ``s`` sets column ``col[k]`` to prior ``prior[k]`` for
    ``k`` in ``ptr[s]:ptr[s+1]`` (each column at most once per shot); other columns keep their base prior."""

    ptr: np.ndarray  # (S + 1,) int64
    col: np.ndarray  # (nnz,) int64
    prior: np.ndarray  # (nnz,) float64 in [PRIOR_CLAMP, 1 - PRIOR_CLAMP]


@numba.njit(cache=True, nogil=True)
def shot_priors(base_prior, h_ptr, h_col, h_flip, fired):
    """:class:`ShotPriors` of the shots ``fired`` (uint8 ``(S, h)``, the herald bits) for a problem with
    ``base_prior`` (float64 ``(n,)``) and herald columns ``(h_ptr, h_col, h_flip)``
    (:class:`qdecode.heralds.HeraldColumns`)."""
    S, nh = fired.shape
    n = base_prior.shape[0]
    ptr = np.zeros(S + 1, dtype=np.int64)  # first an upper bound per shot, then (second pass) the exact CSR
    for s in range(S):  # a column two fired heralds share is listed once
        c = 0
        for h in range(nh):
            if fired[s, h]:
                c += h_ptr[h + 1] - h_ptr[h]
        ptr[s + 1] = ptr[s] + c
    col = np.empty(ptr[S], dtype=np.int64)
    prior = np.empty(ptr[S], dtype=np.float64)
    t = np.ones(n, dtype=np.float64)
    seen = np.zeros(n, dtype=np.uint8)
    out = np.int64(0)
    for s in range(S):
        start = out
        for h in range(nh):
            if fired[s, h]:
                for k in range(h_ptr[h], h_ptr[h + 1]):
                    j = h_col[k]
                    if not seen[j]:
                        seen[j] = 1
                        t[j] = 1.0 - 2.0 * base_prior[j]
                        col[out] = j
                        out += 1
                    t[j] *= h_flip[k]
        for k in range(start, out):
            j = col[k]
            prior[k] = min(max(0.5 * (1.0 - t[j]), PRIOR_CLAMP), 1.0 - PRIOR_CLAMP)
            seen[j] = 0
        ptr[s + 1] = out
    return ShotPriors(ptr, col[:out].copy(), prior[:out].copy())


@numba.njit(cache=True, nogil=True)
def fill_llrs(base_llr, sp, out):
    """``out`` (float64 ``(S, n)``): every row ``base_llr``, then each shot's columns of ``sp``
    (:class:`ShotPriors`) set to ``ln((1 - p) / p)``."""
    S = out.shape[0]
    for s in range(S):
        out[s, :] = base_llr
        for k in range(sp.ptr[s], sp.ptr[s + 1]):
            p = sp.prior[k]
            out[s, sp.col[k]] = np.log((1.0 - p) / p)


@numba.njit(cache=True, nogil=True)
def fill_costs(base_cost, sp, out):
    """``out`` (float64 ``(S, n)``): every row ``base_cost``, then each shot's columns of ``sp``
    (:class:`ShotPriors`) set to OSD's cost ``ln(1 / p)``."""
    S = out.shape[0]
    for s in range(S):
        out[s, :] = base_cost
        for k in range(sp.ptr[s], sp.ptr[s + 1]):
            out[s, sp.col[k]] = np.log(1.0 / sp.prior[k])
