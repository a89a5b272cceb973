"""Unpruned classical OSD (Fossorier-Lin order-i reprocessing), the reference for tests.

The plain enumeration that :func:`qdecode.kernels.osd.osd_classical_solve` must equal bit for bit:
after the shared MRB front end (``classical_mrb``: reliability order, Gauss-Jordan, order-0
difference), every test pattern of weight ``1..order`` on the MRB is costed in full, weight by
weight and lexicographically, by the same sequential discrepancy sum (``_bit_cost``), and a
candidate replaces the incumbent only if strictly better. No pruning, so it is the definition the
fast kernel's bounds are checked against. Moved here from the production kernel module (it was
``osd_classical_solve_ref`` there, behind a ``reference=`` flag); benchmarks may import it too.
"""

from __future__ import annotations

import numba
import numpy as np

from qdecode.kernels.osd import _ONE, _bit_cost, classical_mrb, osd_classical_scratch
from qdecode.kernels.threads import run_ranges


@numba.njit(cache=True, nogil=True)
def osd_classical_solve_ref(llr, g_packed, order, out, scratch):
    """Reference (unpruned) classical OSD of one block: same arguments and return value (the
    discrepancy of the codeword written into ``out``) as ``osd_classical_solve``."""
    (perm, tmp, negrel, rel, G, piv, hd, d0, part, best_d, idx, prel, tail, info, cand, pw, pl1, pc,
     kbuf, ktmp) = scratch
    n = llr.shape[0]
    Wn = g_packed.shape[1]
    rk = classical_mrb(llr, g_packed, perm, tmp, negrel, rel, G, piv, hd, d0, kbuf, ktmp)
    inf = np.inf
    best = _bit_cost(d0, Wn, rel, 0.0, inf)
    for q in range(Wn):
        best_d[q] = d0[q]
    if order > rk:
        order = rk
    # ---- order-i reprocessing, weight by weight, lexicographic TEPs
    for wt in range(1, order + 1):
        for q in range(Wn):
            part[0, q] = d0[q]
        for lvl in range(wt):
            idx[lvl] = lvl
            for q in range(Wn):
                part[lvl + 1, q] = part[lvl, q] ^ G[lvl, q]
        while True:
            cost = _bit_cost(part[wt], Wn, rel, 0.0, best)
            if cost < best:
                best = cost
                for q in range(Wn):
                    best_d[q] = part[wt, q]
            # next combination in lexicographic order
            i = wt - 1
            while i >= 0 and idx[i] == rk - wt + i:
                i -= 1
            if i < 0:
                break
            idx[i] += 1
            for lvl in range(i + 1, wt):
                idx[lvl] = idx[lvl - 1] + 1
            for lvl in range(i, wt):
                r = idx[lvl]
                for q in range(Wn):
                    part[lvl + 1, q] = part[lvl, q] ^ G[r, q]
    for j in range(n):
        out[j] = np.uint8(((best_d[j >> 6] ^ hd[j >> 6]) >> np.uint64(j & 63)) & _ONE)
    return best


@numba.njit(cache=True, nogil=True)
def osd_classical_range_ref(llr, g_packed, order, out, start, stop):
    """:func:`osd_classical_solve_ref` on rows ``start:stop`` (a ``run_ranges`` kernel)."""
    if start >= stop:
        return
    scratch = osd_classical_scratch(g_packed.shape[0], llr.shape[1], order)
    for s in range(start, stop):
        osd_classical_solve_ref(llr[s], g_packed, order, out[s], scratch)


def osd_reference_decode(dec, llr, threads: int | None = None) -> np.ndarray:
    """What ``OsdBlockDecoder.decode_llr_batch(llr)`` must return: ``dec``'s generator and order,
    decoded by the reference enumeration. ``llr`` (S, n) float."""
    x = np.ascontiguousarray(np.asarray(llr, dtype=np.float64))
    out = np.zeros(x.shape, dtype=np.uint8)
    run_ranges(osd_classical_range_ref, (x, dec._g_packed, dec.order, out), x.shape[0], threads)
    return out
