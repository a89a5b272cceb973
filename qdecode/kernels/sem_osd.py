"""Semantic OSD kernels: byte n-gram prior (Kneser-Ney + forward-backward), fused LLRs, MAP search.

Bit order (one convention end to end): a block carries ``nb`` bytes in its first ``k = 8 nb``
codeword bits; byte ``j`` is bits ``8j .. 8j+7`` with bit ``8j + l`` = ``(byte >> l) & 1``
(LSB first, ``numpy.unpackbits(..., bitorder="little")``), which is the Reed-Solomon binary
image's symbol order and, packed into uint64 words, puts byte ``j`` at ``(word >> 8j) & 255``.

Kneser-Ney model arrays (built by :mod:`qdecode.decoders.lm_prior`), order ``N``:

* ``p1`` (256,): interpolated unigram level (continuation counts + uniform floor).
* contexts of length ``L = 1 .. N-1`` are integer keys (oldest byte in the high bits), sorted
  within their level: ``keys[lvl_start[L-1]:lvl_start[L]]``; context ``i`` owns entries
  ``ent_ptr[i]:ent_ptr[i+1]`` of ``ent_byte`` / ``ent_cnt`` (raw counts at ``L = N-1``,
  continuation counts below), with totals ``ctx_tot[i]`` and distinct-follower counts
  ``ctx_n1[i]``; ``disc[L]`` is the absolute discount of level ``L``.

:func:`kn_dist` evaluates the full 256-way next-byte distribution of one context (interpolated
KN, recursion stops at the first unseen context), optionally tempered (``p^(1/T)``, renormalised).

:func:`fb_prior` is the block prior: forward-backward over the block's bytes on a first-order
chain whose state is the previous byte; the transition out of state ``a`` at position ``j - 1``
uses the n-gram context "best history of ``a`` + ``a``" (the older bytes along ``a``'s best
forward path; exact for the first two positions of an order-4 model, where the history is the
left context). Rows are restricted to a beam of the forward states (at most ``beam`` states with
mass above ``prune`` (1e-12) times the best); states outside it get the tempered unigram as their backward
transition. Output: per-position *extrinsic* log-priors ``log P(b_j | context, channel at the other
bytes)``, so that adding position ``j``'s own channel evidence (eq. (1) of the research brief)
gives the forward-backward posterior marginal.

:func:`sem_osd_solve` is the per-block search (see :mod:`qdecode.decoders.sem_osd`).
"""

from __future__ import annotations

import numba
import numpy as np

from qdecode.kernels.gf2 import ctz64
from qdecode.kernels.osd import _classical_mrb, osd_classical_scratch

__all__ = [
    "kn_dist",
    "kn_dist_batch",
    "fb_prior",
    "fb_prior_range",
    "fused_llr",
    "byte_evidence",
    "sem_osd_solve",
    "sem_osd_range",
]

_ONE = np.uint64(1)
_LOG_FLOOR = -700.0


@numba.njit(cache=True, nogil=True)
def kn_dist(ctx, clen, p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot, ctx_n1, disc, inv_temp, out):
    """Next-byte distribution after ``ctx[:clen]`` (most recent byte last) into ``out`` (256,)."""
    for b in range(256):
        out[b] = p1[b]
    nlev = lvl_start.shape[0] - 1  # context lengths 1 .. nlev
    top = min(clen, nlev)
    for L in range(1, top + 1):
        key = np.int64(0)
        for i in range(L):
            key = (key << 8) | np.int64(ctx[clen - L + i])
        lo = lvl_start[L - 1]
        hi = lvl_start[L]
        # binary search for key in keys[lo:hi]
        while lo < hi:
            mid = (lo + hi) >> 1
            if keys[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo >= lvl_start[L] or keys[lo] != key:
            break
        i = lo
        tot = ctx_tot[i]
        D = disc[L]
        g = D * ctx_n1[i] / tot
        for b in range(256):
            out[b] *= g
        for e in range(ent_ptr[i], ent_ptr[i + 1]):
            out[ent_byte[e]] += (ent_cnt[e] - D) / tot
    if inv_temp != 1.0:
        s = 0.0
        for b in range(256):
            v = np.exp(inv_temp * np.log(out[b]))
            out[b] = v
            s += v
        for b in range(256):
            out[b] /= s


@numba.njit(cache=True, nogil=True)
def kn_dist_batch(ctxs, clens, p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot, ctx_n1, disc, inv_temp, out):
    """:func:`kn_dist` for each row of ``ctxs`` (P, c) with lengths ``clens`` into ``out`` (P, 256)."""
    for r in range(ctxs.shape[0]):
        kn_dist(ctxs[r], clens[r], p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot, ctx_n1, disc,
                inv_temp, out[r])


@numba.njit(cache=True, nogil=True)
def byte_evidence(llr_info, nb, le):
    """``le[j, b] = sum_l (1 - 2 bit_l(b)) llr[8j + l] / 2`` (channel log-evidence of byte value b)."""
    for j in range(nb):
        for b in range(256):
            s = 0.0
            for l in range(8):
                v = 0.5 * llr_info[8 * j + l]
                if (b >> l) & 1:
                    s -= v
                else:
                    s += v
            le[j, b] = s


@numba.njit(cache=True, nogil=True)
def fb_prior(ctx, clen, llr_info, nb, hdepth, beam, prune, p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot,
             ctx_n1, disc, inv_temp, out):
    """Extrinsic forward-backward log-priors ``out`` (nb, 256) of one block (module docstring).

    Args:
        ctx, clen: left context bytes (most recent last) and how many are valid.
        llr_info: (8 nb,) channel LLRs of the message bits (LSB-first bytes).
        hdepth: history bytes kept per state (``order - 2``, at least 0).
        beam: most forward states expanded per position.
        prune: states with forward mass below ``prune`` times the best are not expanded.
        inv_temp: 1 / temperature of the n-gram.
    Returns:
        Number of n-gram distributions evaluated.
    """
    le = np.empty((nb, 256))
    byte_evidence(llr_info, nb, le)
    ev = np.empty((nb, 256))
    for j in range(nb):
        m = le[j, 0]
        for b in range(1, 256):
            if le[j, b] > m:
                m = le[j, b]
        for b in range(256):
            ev[j, b] = np.exp(le[j, b] - m)
    hd = max(hdepth, 0)
    hist = np.full((nb, 256, max(hd, 1)), -1, dtype=np.int64)
    alpha = np.zeros((nb, 256))
    pred = np.zeros((nb, 256))
    beta = np.zeros((nb, 256))
    trow = np.zeros((nb, beam, 256))
    rowid = np.zeros((nb, beam), dtype=np.int64)
    nrows = np.zeros(nb, dtype=np.int64)
    qctx = np.empty(hd + 1 + 1, dtype=np.uint8)
    dist = np.empty(256)
    bestv = np.empty(256)
    besta = np.empty(256, dtype=np.int64)
    p1t = np.empty(256)
    calls = 0
    # tempered unigram: the backward transition of states outside the beam
    for b in range(256):
        p1t[b] = p1[b]
    if inv_temp != 1.0:
        s = 0.0
        for b in range(256):
            p1t[b] = np.exp(inv_temp * np.log(p1[b]))
            s += p1t[b]
        for b in range(256):
            p1t[b] /= s
    # ---- position 0: the left context is known
    kn_dist(ctx, clen, p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot, ctx_n1, disc, inv_temp, dist)
    calls += 1
    s = 0.0
    for b in range(256):
        pred[0, b] = dist[b]
        alpha[0, b] = dist[b] * ev[0, b]
        s += alpha[0, b]
    for b in range(256):
        alpha[0, b] /= s
        for t in range(hd):
            src = clen - hd + t
            hist[0, b, t] = np.int64(ctx[src]) if src >= 0 else -1
    # ---- forward
    for j in range(1, nb):
        order_idx = np.argsort(-alpha[j - 1])
        amax = alpha[j - 1, order_idx[0]]
        nr = 0
        for q in range(min(beam, 256)):
            a = order_idx[q]
            if alpha[j - 1, a] < prune * amax or alpha[j - 1, a] <= 0.0:
                break
            rowid[j, nr] = a
            nr += 1
        nrows[j] = nr
        for b in range(256):
            bestv[b] = -1.0
            besta[b] = 0
            pred[j, b] = 0.0
        for r in range(nr):
            a = rowid[j, r]
            # context: valid history bytes of a, then a
            cl = 0
            for t in range(hd):
                h = hist[j - 1, a, t]
                if h < 0:
                    cl = 0  # a gap: only the bytes after it are contiguous
                else:
                    qctx[cl] = np.uint8(h)
                    cl += 1
            qctx[cl] = np.uint8(a)
            cl += 1
            kn_dist(qctx, cl, p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot, ctx_n1, disc, inv_temp,
                    dist)
            calls += 1
            wa = alpha[j - 1, a]
            for b in range(256):
                trow[j, r, b] = dist[b]
                v = wa * dist[b]
                pred[j, b] += v
                if v > bestv[b]:
                    bestv[b] = v
                    besta[b] = a
        s = 0.0
        for b in range(256):
            s += pred[j, b]
        s2 = 0.0
        for b in range(256):
            pred[j, b] /= s
            alpha[j, b] = pred[j, b] * ev[j, b]
            s2 += alpha[j, b]
        for b in range(256):
            alpha[j, b] /= s2
            a = besta[b]
            for t in range(hd - 1):
                hist[j, b, t] = hist[j - 1, a, t + 1]
            if hd > 0:
                hist[j, b, hd - 1] = a
    # ---- backward
    for b in range(256):
        beta[nb - 1, b] = 1.0
    w = np.empty(256)
    for j in range(nb - 1, 0, -1):
        fb = 0.0
        for b in range(256):
            w[b] = ev[j, b] * beta[j, b]
            fb += p1t[b] * w[b]
        for a in range(256):
            beta[j - 1, a] = fb
        for r in range(nrows[j]):
            v = 0.0
            for b in range(256):
                v += trow[j, r, b] * w[b]
            beta[j - 1, rowid[j, r]] = v
        m = 0.0
        for a in range(256):
            if beta[j - 1, a] > m:
                m = beta[j - 1, a]
        for a in range(256):
            beta[j - 1, a] /= m
    # ---- extrinsic prior = prediction x backward message
    for j in range(nb):
        s = 0.0
        for b in range(256):
            s += pred[j, b] * beta[j, b]
        for b in range(256):
            v = pred[j, b] * beta[j, b] / s
            out[j, b] = np.log(v) if v > 0.0 else _LOG_FLOOR
            if out[j, b] < _LOG_FLOOR:
                out[j, b] = _LOG_FLOOR
    return calls


@numba.njit(cache=True, nogil=True)
def fb_prior_range(ctxs, clens, llr_info, nb, hdepth, beam, prune, p1, keys, lvl_start, ent_ptr, ent_byte, ent_cnt,
                   ctx_tot, ctx_n1, disc, inv_temp, out, calls, start, stop):
    """:func:`fb_prior` for rows ``start:stop`` (a :func:`~qdecode.kernels.threads.run_ranges` kernel)."""
    for s in range(start, stop):
        calls[s] = fb_prior(ctxs[s], clens[s], llr_info[s], nb, hdepth, beam, prune, p1, keys, lvl_start, ent_ptr,
                            ent_byte, ent_cnt, ctx_tot, ctx_n1, disc, inv_temp, out[s])


@numba.njit(cache=True, nogil=True)
def fused_llr(llr, nb, lam, logpri, out):
    """Fused bit LLRs (eqs. (1)-(2)): ``out`` = ``llr`` with the first ``8 nb`` entries replaced by
    ``log sum_{b: bit=0} P_post(b) - log sum_{b: bit=1} P_post(b)``,
    ``log P_post(b) = lam * logpri[j, b] + channel log-evidence``. ``lam == 0`` copies ``llr``."""
    n = llr.shape[0]
    for i in range(n):
        out[i] = llr[i]
    if lam == 0.0:
        return
    le = np.empty((nb, 256))
    byte_evidence(llr, nb, le)
    post = np.empty(256)
    for j in range(nb):
        m = -np.inf
        for b in range(256):
            v = lam * logpri[j, b] + le[j, b]
            post[b] = v
            if v > m:
                m = v
        for l in range(8):
            s0 = 0.0
            s1 = 0.0
            for b in range(256):
                e = np.exp(post[b] - m)
                if (b >> l) & 1:
                    s1 += e
                else:
                    s0 += e
            if s0 <= 0.0:
                out[8 * j + l] = -745.0
            elif s1 <= 0.0:
                out[8 * j + l] = 745.0
            else:
                out[8 * j + l] = np.log(s0) - np.log(s1)


@numba.njit(cache=True, nogil=True, inline="always")
def _cost(c, hd, Wn, rel, lamlp, nb, x):
    """MAP metric (3): channel discrepancy of codeword ``c`` plus ``-sum_j lamlp[j, byte_j(c)]``."""
    for q in range(Wn):
        x[q] = c[q] ^ hd[q]
    s = 0.0
    for q in range(Wn):
        y = x[q]
        off = q << 6
        while y != 0:
            s += rel[off + ctz64(y)]
            y &= y - _ONE
    lm = 0.0
    for j in range(nb):
        bit = 8 * j
        byte = (c[bit >> 6] >> np.uint64(bit & 63)) & np.uint64(255)
        lm -= lamlp[j, byte]
    return s + lm


@numba.njit(cache=True, nogil=True)
def _keep(cost, c, Wn, topc, topw, ntop, cap):
    """Insert ``c`` into the sorted top list (distinct codewords, at most ``cap``); returns the new size."""
    for t in range(ntop):
        same = True
        for q in range(Wn):
            if topw[t, q] != c[q]:
                same = False
                break
        if same:
            return ntop
    if ntop == cap and cost >= topc[ntop - 1]:
        return ntop
    pos = ntop if ntop < cap else cap - 1
    while pos > 0 and topc[pos - 1] > cost:
        if pos < cap:
            topc[pos] = topc[pos - 1]
            for q in range(Wn):
                topw[pos, q] = topw[pos - 1, q]
        pos -= 1
    topc[pos] = cost
    for q in range(Wn):
        topw[pos, q] = c[q]
    return min(ntop + 1, cap)


@numba.njit(cache=True, nogil=True)
def _enumerate(order_llr, g_packed, order, hd_ch, rel_ch, lamlp, nb, scratch, best_c, best, topc, topw, ntop, cap,
               counts):
    """Order-``order`` TEP enumeration on the MRB of ``order_llr``, scored with :func:`_cost`.

    Candidates are visited weight by weight, lexicographically (the order of
    :func:`qdecode.kernels.osd.osd_classical_solve_ref`); one replaces ``best_c`` only if strictly
    better. Returns ``(best, ntop)``; ``counts[0]`` += re-encodings.
    """
    (perm, tmp, negrel, rel, G, piv, hd, d0, part, best_d, idx, prel, tail, info, cand, pw, pl1, pc,
     kbuf, ktmp) = scratch
    Wn = g_packed.shape[1]
    rk = _classical_mrb(order_llr, g_packed, perm, tmp, negrel, rel, G, piv, hd, d0, kbuf, ktmp)
    x = np.empty(Wn, dtype=np.uint64)
    for q in range(Wn):
        part[0, q] = d0[q] ^ hd[q]  # order-0 codeword
    if order > rk:
        order = rk
    cost = _cost(part[0], hd_ch, Wn, rel_ch, lamlp, nb, x)
    counts[0] += 1
    if cost < best:
        best = cost
        for q in range(Wn):
            best_c[q] = part[0, q]
    if cap > 0:
        ntop = _keep(cost, part[0], Wn, topc, topw, ntop, cap)
    for wt in range(1, order + 1):
        for lvl in range(wt):
            idx[lvl] = lvl
            for q in range(Wn):
                part[lvl + 1, q] = part[lvl, q] ^ G[lvl, q]
        while True:
            cost = _cost(part[wt], hd_ch, Wn, rel_ch, lamlp, nb, x)
            counts[0] += 1
            if cost < best:
                best = cost
                for q in range(Wn):
                    best_c[q] = part[wt, q]
            if cap > 0 and (ntop < cap or cost < topc[ntop - 1]):
                ntop = _keep(cost, part[wt], Wn, topc, topw, ntop, cap)
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
    return best, ntop


@numba.njit(cache=True, nogil=True)
def sem_osd_solve(llr, fused, lamlp, nb, g_packed, byte_tab, order, union, omega, top_k, top_l, out, scratch,
                  scratch2, counts):
    """sem-OSD of one block; writes the codeword into ``out`` (n,) and returns its MAP metric.

    1. TEPs of weight <= ``order`` on the MRB of the fused LLRs ``fused``.
    2. ``union``: the same on the MRB of the channel LLRs ``llr`` (the plain OSD candidates).
    3. ``omega`` > 0: byte substitutions of up to ``omega`` (1 or 2) bytes of the ``top_l`` best
       distinct candidates so far, each byte taking its ``top_k`` most probable values under
       ``lamlp + channel evidence``; re-encoded differentially with ``byte_tab`` (nb, 256, Wn),
       the codeword of the message that is ``v`` at byte ``j`` and zero elsewhere (systematic).
    Every candidate is scored by the MAP metric (3): channel correlation discrepancy against the
    channel hard decisions minus ``sum_j lamlp[j, byte_j]`` (``lamlp`` = lambda x log-prior);
    the first strict minimum wins. ``counts[0]`` += re-encodings.
    """
    n = llr.shape[0]
    Wn = g_packed.shape[1]
    hd_ch = np.zeros(Wn, dtype=np.uint64)
    rel_ch = np.empty(n)
    for j in range(n):
        rel_ch[j] = abs(llr[j])
        if llr[j] <= 0:
            hd_ch[j >> 6] |= _ONE << np.uint64(j & 63)
    best_c = np.zeros(Wn, dtype=np.uint64)
    cap = top_l if omega > 0 else 0
    topc = np.full(max(cap, 1), np.inf)
    topw = np.zeros((max(cap, 1), Wn), dtype=np.uint64)
    best, ntop = _enumerate(fused, g_packed, order, hd_ch, rel_ch, lamlp, nb, scratch, best_c, np.inf, topc, topw,
                            0, cap, counts)
    if union:
        best, ntop = _enumerate(llr, g_packed, order, hd_ch, rel_ch, lamlp, nb, scratch2, best_c, best, topc, topw,
                                ntop, cap, counts)
    if omega > 0 and ntop > 0:
        # per-byte candidate values, most probable first (posterior = lamlp + evidence)
        le = np.empty((nb, 256))
        byte_evidence(llr, nb, le)
        kk = min(top_k + 1, 256)
        alts = np.empty((nb, kk), dtype=np.int64)
        post = np.empty(256)
        for j in range(nb):
            for b in range(256):
                post[b] = -(lamlp[j, b] + le[j, b])
            o = np.argsort(post)
            for t in range(kk):
                alts[j, t] = o[t]
        c1 = np.empty(Wn, dtype=np.uint64)
        c2 = np.empty(Wn, dtype=np.uint64)
        x = np.empty(Wn, dtype=np.uint64)
        base = np.empty(Wn, dtype=np.uint64)
        for t in range(ntop):
            for q in range(Wn):
                base[q] = topw[t, q]
            for j1 in range(nb):
                bit1 = 8 * j1
                v1 = np.int64((base[bit1 >> 6] >> np.uint64(bit1 & 63)) & np.uint64(255))
                used1 = 0
                for a1 in range(kk):
                    if used1 == top_k:
                        break
                    n1 = alts[j1, a1]
                    if n1 == v1:
                        continue
                    used1 += 1
                    for q in range(Wn):
                        c1[q] = base[q] ^ byte_tab[j1, v1 ^ n1, q]
                    cost = _cost(c1, hd_ch, Wn, rel_ch, lamlp, nb, x)
                    counts[0] += 1
                    if cost < best:
                        best = cost
                        for q in range(Wn):
                            best_c[q] = c1[q]
                    if omega >= 2:
                        for j2 in range(j1 + 1, nb):
                            bit2 = 8 * j2
                            v2 = np.int64((base[bit2 >> 6] >> np.uint64(bit2 & 63)) & np.uint64(255))
                            used2 = 0
                            for a2 in range(kk):
                                if used2 == top_k:
                                    break
                                n2 = alts[j2, a2]
                                if n2 == v2:
                                    continue
                                used2 += 1
                                for q in range(Wn):
                                    c2[q] = c1[q] ^ byte_tab[j2, v2 ^ n2, q]
                                cost = _cost(c2, hd_ch, Wn, rel_ch, lamlp, nb, x)
                                counts[0] += 1
                                if cost < best:
                                    best = cost
                                    for q in range(Wn):
                                        best_c[q] = c2[q]
    for j in range(n):
        out[j] = np.uint8((best_c[j >> 6] >> np.uint64(j & 63)) & _ONE)
    return best


@numba.njit(cache=True, nogil=True)
def sem_osd_range(llr, logpri, lam, nb, g_packed, byte_tab, order, union, omega, top_k, top_l, out, counts,
                  start, stop):
    """Fused LLRs + :func:`sem_osd_solve` for rows ``start:stop`` (``run_ranges`` kernel).

    ``lam == 0`` gives the plain OSD candidates and metric: fused LLRs are the channel LLRs, the
    LM term is zero, and the union and the byte-substitution family (LM-driven) are off.
    """
    if start >= stop:
        return
    k = g_packed.shape[0]
    n = llr.shape[1]
    scratch = osd_classical_scratch(k, n, order)
    scratch2 = osd_classical_scratch(k, n, order)
    fused = np.empty(n)
    lamlp = np.zeros((nb, 256))
    cnt = np.zeros(1, dtype=np.int64)
    for s in range(start, stop):
        fused_llr(llr[s], nb, lam, logpri[s], fused)
        if lam != 0.0:
            for j in range(nb):
                for b in range(256):
                    lamlp[j, b] = lam * logpri[s, j, b]
        cnt[0] = 0
        sem_osd_solve(llr[s], fused, lamlp, nb, g_packed, byte_tab, order, union and lam != 0.0,
                      omega if lam != 0.0 else 0, top_k, top_l, out[s], scratch, scratch2, cnt)
        counts[s] = cnt[0]
