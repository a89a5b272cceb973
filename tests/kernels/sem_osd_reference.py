"""Unpruned sem-OSD search, the reference for tests.

:func:`qdecode.kernels.sem_osd.sem_osd_solve` skips candidates by lower bounds and chunk-table
metrics; this module scores every candidate with the exact MAP metric (``_cost``), so the two must
agree bit for bit. Written as the plain definition, without the bounds or the chunk tables:

1. every test pattern of weight ``0..order`` (weight by weight, lexicographic) on the MRB of the
   fused LLRs, then, with ``union``, on the MRB of the channel LLRs;
2. each MRB's order-0 codeword always enters the top list (``_keep``: distinct codewords, sorted,
   replacing the worst entry when full), later candidates only when they beat its worst entry;
3. with ``omega > 0``, every 1- (and 2-) byte substitution of each top-list word, each byte taking
   its ``top_k`` most probable other values (``lamlp + channel evidence``).

The first strict minimum wins. Shared with the production kernel, because they are not what the
pruning changes: the MRB front end (``classical_mrb``), the metric, the top-list insertion, the
per-byte value ranking (``_top_states``), and the fused LLRs / byte evidence. This replaces the
production kernel's former ``reference=`` flag.
"""

from __future__ import annotations

import numba
import numpy as np

from qdecode.kernels.osd import classical_mrb, osd_classical_scratch
from qdecode.kernels.sem_osd import (
    SemOsdCode,
    SemOsdParams,
    _cost,
    _fused_from_evidence,
    _keep,
    _top_states,
    byte_evidence,
)
from qdecode.kernels.threads import run_ranges

_ONE = np.uint64(1)


@numba.njit(cache=True)
def _score(c, hd, Wn, rel, lamlp, nb, x, best, best_c, topc, topw, ntop, cap, keep, count):
    cost = _cost(c, hd, Wn, rel, lamlp, nb, x)
    count[0] += 1
    if cost < best:
        best = cost
        best_c[:] = c
    if keep and cap > 0 and (ntop < cap or cost < topc[ntop - 1]):
        ntop = _keep(cost, c, Wn, topc, topw, ntop, cap)
    return best, ntop


@numba.njit(cache=True)
def _all_teps(order_llr, g_packed, order, hd, rel, lamlp, nb, mrb, x, best, best_c, topc, topw, ntop, cap, count):
    (perm, tmp, negrel, mrel, G, piv, mhd, d0, part, best_d, idx, prel, tail, info, cand, pw, pl1, pc,
     kbuf, ktmp) = mrb
    Wn = g_packed.shape[1]
    rk = classical_mrb(order_llr, g_packed, perm, tmp, negrel, mrel, G, piv, mhd, d0, kbuf, ktmp)
    c0 = d0 ^ mhd  # order-0 codeword
    cost = _cost(c0, hd, Wn, rel, lamlp, nb, x)
    count[0] += 1
    if cost < best:
        best = cost
        best_c[:] = c0
    if cap > 0:
        ntop = _keep(cost, c0, Wn, topc, topw, ntop, cap)
    order = min(order, rk)
    for wt in range(1, order + 1):
        sel = np.arange(wt)
        while True:
            c = c0.copy()
            for t in sel:
                c ^= G[t]
            best, ntop = _score(c, hd, Wn, rel, lamlp, nb, x, best, best_c, topc, topw, ntop, cap, True, count)
            i = wt - 1
            while i >= 0 and sel[i] == rk - wt + i:
                i -= 1
            if i < 0:
                break
            sel[i] += 1
            for lvl in range(i + 1, wt):
                sel[lvl] = sel[lvl - 1] + 1
    return best, ntop


@numba.njit(cache=True)
def sem_osd_solve_ref(llr, fused, lamlp, le, code, params, out, count):
    """Unpruned sem-OSD of one block (arguments as ``sem_osd_solve``, no scratch); ``count[0]`` +=
    candidates scored. Returns the MAP metric of the codeword written into ``out``."""
    g_packed, byte_tab, nb = code.g_packed, code.byte_tab, code.nb
    order, union, omega, top_k, top_l = params.order, params.union, params.omega, params.top_k, params.top_l
    n = llr.shape[0]
    Wn = g_packed.shape[1]
    hd = np.zeros(Wn, dtype=np.uint64)
    rel = np.abs(llr)
    for j in range(n):
        if llr[j] <= 0:
            hd[j >> 6] |= _ONE << np.uint64(j & 63)
    mrb = osd_classical_scratch(g_packed.shape[0], n, order)
    x = np.zeros(Wn, dtype=np.uint64)
    cap = top_l if omega > 0 else 0
    topc = np.full(max(cap, 1), np.inf)
    topw = np.zeros((max(cap, 1), Wn), dtype=np.uint64)
    best_c = np.zeros(Wn, dtype=np.uint64)
    best, ntop = _all_teps(fused, g_packed, order, hd, rel, lamlp, nb, mrb, x, np.inf, best_c, topc, topw, 0, cap,
                           count)
    if union:
        best, ntop = _all_teps(llr, g_packed, order, hd, rel, lamlp, nb, mrb, x, best, best_c, topc, topw, ntop, cap,
                               count)
    if omega > 0 and ntop > 0:
        kk = min(top_k + 1, 256)
        alts = np.empty((nb, kk), dtype=np.int64)
        altv = np.empty(kk)
        for j in range(nb):
            _top_states(lamlp[j] + le[j], kk, altv, alts[j])
        for t in range(ntop):
            base = topw[t].copy()
            for j1 in range(nb):
                b1 = 8 * j1
                v1 = np.int64((base[b1 >> 6] >> np.uint64(b1 & 63)) & np.uint64(255))
                others1 = [a for a in alts[j1] if a != v1][:top_k]
                for n1 in others1:
                    c1 = base ^ byte_tab[j1, v1 ^ n1]
                    best, _ = _score(c1, hd, Wn, rel, lamlp, nb, x, best, best_c, topc, topw, 0, 0, False, count)
                    if omega >= 2:
                        for j2 in range(j1 + 1, nb):
                            b2 = 8 * j2
                            v2 = np.int64((base[b2 >> 6] >> np.uint64(b2 & 63)) & np.uint64(255))
                            others2 = [a for a in alts[j2] if a != v2][:top_k]
                            for n2 in others2:
                                c2 = c1 ^ byte_tab[j2, v2 ^ n2]
                                best, _ = _score(c2, hd, Wn, rel, lamlp, nb, x, best, best_c, topc, topw, 0, 0,
                                                 False, count)
    for j in range(n):
        out[j] = np.uint8((best_c[j >> 6] >> np.uint64(j & 63)) & _ONE)
    return best


@numba.njit(cache=True)
def sem_osd_range_ref(llr, logpri, lam, code, params, out, counts, start, stop):
    """Fused LLRs + :func:`sem_osd_solve_ref` on rows ``start:stop`` (as ``sem_osd_range``; ``lam == 0``
    turns the union and the substitutions off). ``counts[s]``: candidates scored."""
    nb = code.nb
    n = llr.shape[1]
    lm = lam != 0.0
    solve_params = SemOsdParams(params.order, params.union and lm, params.omega if lm else 0, params.top_k,
                                params.top_l)
    le = np.empty((max(nb, 1), 256))
    e = np.empty(256)
    fused = np.empty(n)
    for s in range(start, stop):
        byte_evidence(llr[s], nb, le)
        _fused_from_evidence(llr[s], nb, lam, logpri[s], le, e, fused)
        lamlp = lam * logpri[s] if lam != 0.0 else np.zeros((max(nb, 1), 256))
        c = np.zeros(1, dtype=np.int64)
        sem_osd_solve_ref(llr[s], fused, lamlp, le, code, solve_params, out[s], c)
        counts[s] = c[0]


def sem_osd_reference_decode(sem, llr, context_bytes=None, threads: int | None = None):
    """What ``sem.decode_llr_batch(llr, context_bytes=...)`` must return, by the unpruned search,
    with the same priors (the decoder's own context and prior steps). Returns ``(codewords (S, n)
    uint8, candidates scored per block (S,))``."""
    x = np.ascontiguousarray(np.asarray(llr, dtype=np.float64))
    S = x.shape[0]
    if sem.lam == 0.0:
        logpri = np.zeros((S, sem.nb, 256))
    else:
        ctx, lens = sem._contexts(x, context_bytes, threads)
        logpri = sem._prior(ctx, lens, np.ascontiguousarray(x[:, : sem.k]))
    out = np.zeros(x.shape, dtype=np.uint8)
    counts = np.zeros(S, dtype=np.int64)
    code = SemOsdCode(sem._g_packed, sem._byte_tab, sem.nb)
    params = SemOsdParams(sem.order, sem.union, sem.omega, sem.top_k, sem.top_l)
    run_ranges(sem_osd_range_ref, (x, logpri, sem.lam, code, params, out, counts), S, threads)
    return out, counts
