"""Semantic OSD kernels: byte n-gram prior (Kneser-Ney + forward-backward), fused LLRs, MAP search.

Bit order (one convention end to end): a block carries ``nb`` bytes in its first ``k = 8 nb``
codeword bits; byte ``j`` is bits ``8j .. 8j+7`` with bit ``8j + l`` = ``(byte >> l) & 1``
(LSB first, ``numpy.unpackbits(..., bitorder="little")``), which is the Reed-Solomon binary
image's symbol order and, packed into uint64 words, puts byte ``j`` at ``(word >> 8j) & 255``.

Kneser-Ney model of order ``N``: the nine arrays of an :class:`NgramModel` (built by
:func:`qdecode.language_model.ngram.count_kneser_ney`):

* ``p1`` (256,): interpolated unigram level (continuation counts + uniform floor).
* contexts of length ``L = 1 .. N-1`` are integer keys (oldest byte in the high bits), sorted
  within their level: ``keys[lvl_start[L-1]:lvl_start[L]]``; context ``i`` owns entries
  ``ent_ptr[i]:ent_ptr[i+1]`` of ``ent_byte`` / ``ent_cnt`` (raw counts at ``L = N-1``,
  continuation counts below), with totals ``ctx_tot[i]`` and distinct-follower counts
  ``ctx_n1[i]``; ``disc[L]`` is the absolute discount of level ``L``.

The prior's kernels take it as a :class:`TemperedNgram`: the model, its inverse temperature and
its :func:`kn_table` at that temperature.

:func:`kn_dist` evaluates the full 256-way next-byte distribution of one context (interpolated
KN, recursion stops at the first unseen context), optionally tempered (``p^(1/T)``, renormalised).
Its result depends only on the deepest context matched, so :func:`kn_table` tabulates all of
them once per model and temperature (one row per context) and :func:`kn_row` finds the row
(binary searches only; the same values bit for bit).

:func:`fb_prior` is the block prior: forward-backward over the block's bytes on a first-order
chain whose state is the previous byte; the transition out of state ``a`` at position ``j - 1``
uses the n-gram context "best history of ``a`` + ``a``" (the older bytes along ``a``'s best
forward path; exact for the first two positions of an order-4 model, where the history is the
left context). Rows are restricted to a beam of the forward states (at most ``beam`` states with
mass above ``prune`` (1e-12) times the best; equal masses: lower byte first); states outside it
get the tempered unigram as their backward transition. Output: per-position *extrinsic*
log-priors ``log P(b_j | context, channel at the other bytes)``, so that adding position ``j``'s
own channel evidence (``sum_l (1 - 2 bit_l(b)) L_{8j+l} / 2``) gives the forward-backward posterior
marginal. Working arrays come from :func:`fb_scratch`, allocated once per range of blocks.

:func:`sem_osd_solve` is the per-block search (see :mod:`qdecode.decoders.sem_osd`). Its
candidates are visited in a fixed order and the first strict minimum of the MAP metric wins;
candidates are skipped, not reordered: per block, 8-bit chunk tables give every candidate's
metric in ``ceil(n / 8)`` look-ups (channel discrepancy of the chunk's bits, minus
``lam log P`` for a message byte), and only a candidate whose table metric is within a
tolerance (``1e-9`` of the metric's scale, far above rounding) of the current threshold (the
incumbent, or the worst entry of the substitution family's top list) is scored exactly, so the
output is that of scoring every candidate. Scratch: :func:`sem_osd_scratch`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.gf2 import ctz64
from qdecode.kernels.osd import classical_mrb, osd_classical_scratch

__all__ = [
    "NgramModel",
    "TemperedNgram",
    "kn_dist",
    "kn_dist_batch",
    "kn_row",
    "kn_table",
    "fb_scratch",
    "fb_prior",
    "fb_prior_range",
    "fused_llr",
    "byte_evidence",
    "SemOsdCode",
    "SemOsdParams",
    "sem_osd_scratch",
    "sem_osd_solve",
    "sem_osd_range",
]

_ONE = np.uint64(1)
_LOG_FLOOR = -700.0


class NgramModel(NamedTuple):
    """Interpolated Kneser-Ney byte n-gram of order ``N`` (module docstring): ``C`` contexts of lengths
    ``1 .. N-1`` with ``E`` (context, next byte) entries in all."""

    p1: np.ndarray  # (256,) float64: interpolated unigram level (continuation counts + uniform floor)
    keys: np.ndarray  # (C,) int64: context bytes packed big-endian (oldest high), sorted within each level
    lvl_start: np.ndarray  # (N,) int64: the length-L contexts are keys[lvl_start[L-1]:lvl_start[L]]
    ent_ptr: np.ndarray  # (C + 1,) int64: context i's entries are ent_ptr[i]:ent_ptr[i+1]
    ent_byte: np.ndarray  # (E,) int64: the next byte of each entry
    ent_cnt: np.ndarray  # (E,) float64: its raw count (L = N-1) or continuation count (shorter contexts)
    ctx_tot: np.ndarray  # (C,) float64: total count of each context's entries
    ctx_n1: np.ndarray  # (C,) float64: distinct next bytes of each context
    disc: np.ndarray  # (N,) float64: absolute discount of the level of length-L contexts, L = 0 (unigram) .. N-1


class TemperedNgram(NamedTuple):
    """An :class:`NgramModel` at one temperature, as :func:`fb_prior` evaluates it."""

    model: NgramModel  # the n-gram
    inv_temp: float  # 1 / temperature (1: the model itself)
    dtab: np.ndarray  # (1 + C, 256) float64: kn_table(model, inv_temp); (0, 256): computed with kn_dist instead


@numba.njit(cache=True, nogil=True, inline="always")
def _context_index(ctx, clen, L, keys, lvl_start):
    """Index in ``keys`` of the length-``L`` context ``ctx[clen - L:clen]`` (bytes packed big-endian
    into an int64 key; level ``L``'s keys are sorted in ``keys[lvl_start[L-1]:lvl_start[L]]``), or -1."""
    key = np.int64(0)
    for i in range(L):
        key = (key << 8) | np.int64(ctx[clen - L + i])
    lo = lvl_start[L - 1]
    hi = lvl_start[L]
    while lo < hi:  # binary search
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo >= lvl_start[L] or keys[lo] != key:
        return -1
    return lo


@numba.njit(cache=True, nogil=True)
def kn_dist(ctx, clen, model, inv_temp, out):
    """Next-byte distribution after ``ctx[:clen]`` (most recent byte last) of ``model``
    (:class:`NgramModel`) at inverse temperature ``inv_temp`` into ``out`` (256,)."""
    p1, keys, lvl_start, ent_ptr, ent_byte = model.p1, model.keys, model.lvl_start, model.ent_ptr, model.ent_byte
    ent_cnt, ctx_tot, ctx_n1, disc = model.ent_cnt, model.ctx_tot, model.ctx_n1, model.disc
    for b in range(256):
        out[b] = p1[b]
    nlev = lvl_start.shape[0] - 1  # context lengths 1 .. nlev
    top = min(clen, nlev)
    for L in range(1, top + 1):
        i = _context_index(ctx, clen, L, keys, lvl_start)
        if i < 0:
            break
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
            v = math.exp(inv_temp * (math.log(out[b]) if out[b] > 0.0 else -math.inf))
            out[b] = v
            s += v
        for b in range(256):
            out[b] /= s


@numba.njit(cache=True, nogil=True)
def kn_dist_batch(ctxs, clens, model, inv_temp, out):
    """:func:`kn_dist` for each row of ``ctxs`` (P, c) with lengths ``clens`` into ``out`` (P, 256)."""
    for r in range(ctxs.shape[0]):
        kn_dist(ctxs[r], clens[r], model, inv_temp, out[r])


@numba.njit(cache=True, nogil=True)
def _deepest_row(ctx, clen, keys, lvl_start):
    """:func:`kn_row` on the two arrays it reads (what :func:`fb_prior`'s look-ups call)."""
    nlev = lvl_start.shape[0] - 1
    top = min(clen, nlev)
    row = 0
    for L in range(1, top + 1):
        i = _context_index(ctx, clen, L, keys, lvl_start)
        if i < 0:
            break
        row = i + 1
    return row


@numba.njit(cache=True, nogil=True)
def kn_row(ctx, clen, model):
    """Row of :func:`kn_table` that holds :func:`kn_dist` of ``ctx[:clen]``: ``0`` for the unigram
    level, ``1 + i`` when context ``i`` is the deepest level matched (the recursion of
    :func:`kn_dist` stops at the first unseen context, so its result depends on that index only)."""
    return _deepest_row(ctx, clen, model.keys, model.lvl_start)


@numba.njit(cache=True, nogil=True)
def kn_table(model, inv_temp, out):
    """Every distribution :func:`kn_dist` can return, ``out`` (1 + contexts, 256) (rows as :func:`kn_row`).

    Row ``1 + i`` is :func:`kn_dist` of context ``i``'s own bytes, which runs the same floating-point
    operations as any longer context whose deepest matched level is ``i``, so a look-up is bit for bit
    the direct evaluation.
    """
    keys, lvl_start = model.keys, model.lvl_start
    nlev = lvl_start.shape[0] - 1
    ctx = np.zeros(max(nlev, 1), dtype=np.uint8)
    kn_dist(ctx, 0, model, inv_temp, out[0])
    for L in range(1, nlev + 1):
        for i in range(lvl_start[L - 1], lvl_start[L]):
            key = keys[i]
            for t in range(L):
                ctx[t] = np.uint8((key >> np.int64(8 * (L - 1 - t))) & np.int64(255))
            kn_dist(ctx, L, model, inv_temp, out[i + 1])


@numba.njit(cache=True, nogil=True, inline="always")
def _kn_fill(ctx, clen, lm, out):
    """:func:`kn_dist` of the :class:`TemperedNgram` ``lm`` into ``out``: a :func:`kn_table` row when
    ``lm.dtab`` has rows, else computed."""
    dtab = lm.dtab
    if dtab.shape[0] > 0:
        r = _deepest_row(ctx, clen, lm.model.keys, lm.model.lvl_start)
        for b in range(256):
            out[b] = dtab[r, b]
    else:
        kn_dist(ctx, clen, lm.model, lm.inv_temp, out)


@numba.njit(cache=True, nogil=True)
def byte_evidence(llr_info, nb, le):
    """``le[j, b] = sum_l (1 - 2 bit_l(b)) llr[8j + l] / 2`` (channel log-evidence of byte value b).

    Summed over ``l = 0..7`` in that order for every ``b``; the partial sums of the low bits are
    shared (a prefix tree: 510 additions per byte instead of 2048, same values bit for bit).
    """
    for j in range(nb):
        row = le[j]
        row[0] = 0.0
        size = 1
        for l in range(8):
            v = 0.5 * llr_info[8 * j + l]
            for p in range(size):
                a = row[p]
                row[p] = a + v
                row[p + size] = a - v
            size *= 2


class FbScratch(NamedTuple):
    """Scratch of :func:`fb_prior` (``nbb = max(nb, 1)`` bytes, ``B`` beam states, ``hd`` history bytes)."""

    le: np.ndarray  # (nbb, 256) float64
    ev: np.ndarray  # (nbb, 256) float64
    hist: np.ndarray  # (nbb, 256, max(hd, 1)) int64
    alpha: np.ndarray  # (nbb, 256) float64
    pred: np.ndarray  # (nbb, 256) float64
    beta: np.ndarray  # (nbb, 256) float64
    trow: np.ndarray  # (nbb, B, 256) float64
    rowid: np.ndarray  # (nbb, B) int64
    nrows: np.ndarray  # (nbb,) int64
    qctx: np.ndarray  # (hd + 2,) uint8
    dist: np.ndarray  # (256,) float64
    bestv: np.ndarray  # (256,) float64
    besta: np.ndarray  # (256,) int64
    p1t: np.ndarray  # (256,) float64
    w: np.ndarray  # (256,) float64
    topv: np.ndarray  # (B,) float64
    topi: np.ndarray  # (B,) int64


@numba.njit(cache=True, nogil=True)
def fb_scratch(nb, beam, hdepth):
    """Scratch of :func:`fb_prior` for blocks of ``nb`` bytes (reused across blocks)."""
    hd = max(hdepth, 0)
    B = min(max(beam, 1), 256)
    nbb = max(nb, 1)
    le = np.empty((nbb, 256))
    ev = np.empty((nbb, 256))
    hist = np.empty((nbb, 256, max(hd, 1)), dtype=np.int64)
    alpha = np.empty((nbb, 256))
    pred = np.empty((nbb, 256))
    beta = np.empty((nbb, 256))
    trow = np.empty((nbb, B, 256))
    rowid = np.empty((nbb, B), dtype=np.int64)
    nrows = np.zeros(nbb, dtype=np.int64)
    qctx = np.empty(hd + 2, dtype=np.uint8)
    dist = np.empty(256)
    bestv = np.empty(256)
    besta = np.empty(256, dtype=np.int64)
    p1t = np.empty(256)
    w = np.empty(256)
    topv = np.empty(B)
    topi = np.empty(B, dtype=np.int64)
    return FbScratch(le, ev, hist, alpha, pred, beta, trow, rowid, nrows, qctx, dist, bestv, besta, p1t, w, topv,
                     topi)


@numba.njit(cache=True, nogil=True)
def _top_states(a, B, topv, topi):
    """The ``min(B, 256)`` largest entries of ``a`` (256,), largest first (equal values: lower index
    first) into ``topi``; returns how many."""
    m = 0
    for b in range(256):
        v = a[b]
        if m == B and not v > topv[m - 1]:
            continue
        pos = m if m < B else B - 1
        while pos > 0 and v > topv[pos - 1]:
            if pos < B:
                topv[pos] = topv[pos - 1]
                topi[pos] = topi[pos - 1]
            pos -= 1
        topv[pos] = v
        topi[pos] = b
        if m < B:
            m += 1
    return m


@numba.njit(cache=True, nogil=True)
def fb_prior(ctx, clen, llr_info, nb, hdepth, beam, prune, lm, scratch, out):
    """Extrinsic forward-backward log-priors ``out`` (nb, 256) of one block (module docstring).

    Args:
        ctx, clen: left context bytes (most recent last) and how many are valid.
        llr_info: (8 nb,) channel LLRs of the message bits (LSB-first bytes).
        hdepth: history bytes kept per state (``order - 2``, at least 0).
        beam: most forward states expanded per position.
        prune: states with forward mass below ``prune`` times the best are not expanded.
        lm: :class:`TemperedNgram`: the n-gram, its inverse temperature and its :func:`kn_table` at that
            temperature (look-ups), or a (0, 256) table (distributions computed with :func:`kn_dist`; same values).
        scratch: :func:`fb_scratch` of at least ``nb``, ``beam`` and ``hdepth`` (no allocation here).
    Returns:
        Number of n-gram distributions evaluated.
    """
    # long: forward pass, backward pass and marginals of one block over one scratch (split: to do)
    le, ev, hist, alpha, pred, beta = scratch.le, scratch.ev, scratch.hist, scratch.alpha, scratch.pred, scratch.beta
    trow, rowid, nrows, qctx, dist = scratch.trow, scratch.rowid, scratch.nrows, scratch.qctx, scratch.dist
    bestv, besta, p1t, w, topv = scratch.bestv, scratch.besta, scratch.p1t, scratch.w, scratch.topv
    topi = scratch.topi
    byte_evidence(llr_info, nb, le)
    for j in range(nb):
        m = le[j, 0]
        for b in range(1, 256):
            if le[j, b] > m:
                m = le[j, b]
        for b in range(256):
            ev[j, b] = math.exp(le[j, b] - m)
    hd = max(hdepth, 0)
    B = min(beam, 256, trow.shape[1])
    calls = 0
    # tempered unigram: the backward transition of states outside the beam
    _kn_fill(qctx, 0, lm, p1t)
    # ---- position 0: the left context is known
    _kn_fill(ctx, clen, lm, dist)
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
        ntop = _top_states(alpha[j - 1], B, topv, topi)
        amax = alpha[j - 1, topi[0]]
        nr = 0
        for q in range(ntop):
            a = topi[q]
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
            tr = trow[j, r]
            _kn_fill(qctx, cl, lm, tr)
            calls += 1
            wa = alpha[j - 1, a]
            for b in range(256):
                v = wa * tr[b]
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
            out[j, b] = math.log(v) if v > 0.0 else _LOG_FLOOR
            if out[j, b] < _LOG_FLOOR:
                out[j, b] = _LOG_FLOOR
    return calls


@numba.njit(cache=True, nogil=True)
def fb_prior_range(ctxs, clens, llr_info, nb, hdepth, beam, prune, lm, out, calls, start, stop):
    """:func:`fb_prior` for rows ``start:stop`` (a :func:`~qdecode.kernels.threads.run_ranges` kernel;
    one scratch per call)."""
    if start >= stop:
        return
    scratch = fb_scratch(nb, beam, hdepth)
    for s in range(start, stop):
        calls[s] = fb_prior(ctxs[s], clens[s], llr_info[s], nb, hdepth, beam, prune, lm, scratch, out[s])


@numba.njit(cache=True, nogil=True)
def _fused_from_evidence(llr, nb, lam, logpri, le, e, out):
    """:func:`fused_llr` with the byte evidence ``le`` of ``llr`` given and ``e`` (256,) as scratch."""
    n = llr.shape[0]
    for i in range(n):
        out[i] = llr[i]
    if lam == 0.0:
        return
    for j in range(nb):
        m = -np.inf
        for b in range(256):
            v = lam * logpri[j, b] + le[j, b]
            e[b] = v
            if v > m:
                m = v
        for b in range(256):
            e[b] = math.exp(e[b] - m)
        for l in range(8):
            s0 = 0.0
            s1 = 0.0
            for b in range(256):
                if (b >> l) & 1:
                    s1 += e[b]
                else:
                    s0 += e[b]
            if s0 <= 0.0:
                out[8 * j + l] = -745.0
            elif s1 <= 0.0:
                out[8 * j + l] = 745.0
            else:
                out[8 * j + l] = math.log(s0) - math.log(s1)


@numba.njit(cache=True, nogil=True)
def fused_llr(llr, nb, lam, logpri, out):
    """Fused bit LLRs (eqs. (1)-(2)): ``out`` = ``llr`` with the first ``8 nb`` entries replaced by
    ``log sum_{b: bit=0} P_post(b) - log sum_{b: bit=1} P_post(b)``,
    ``log P_post(b) = lam * logpri[j, b] + channel log-evidence``. ``lam == 0`` copies ``llr``.
    (Allocates its scratch; the decoder's range kernel uses :func:`_fused_from_evidence`.)"""
    le = np.empty((max(nb, 1), 256))
    byte_evidence(llr, nb, le)
    _fused_from_evidence(llr, nb, lam, logpri, le, np.empty(256), out)


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


@numba.njit(cache=True, nogil=True, inline="always")
def _fast_cost(c, ctab, nch):
    """The MAP metric (3) by 8-bit chunk tables (:func:`_chunk_tables`): equal to :func:`_cost` up to
    rounding (a different summation order); only used to skip candidates."""
    if nch == 16 and c.shape[0] == 2:  # 121 <= n <= 128 (BCH(127,64), the RS(16,8) image): words in registers
        w0 = c[0]
        w1 = c[1]
        s0 = 0.0
        s1 = 0.0
        for q in range(8):
            sh = np.uint64(q << 3)
            s0 += ctab[q, np.int64((w0 >> sh) & np.uint64(255))]
            s1 += ctab[q + 8, np.int64((w1 >> sh) & np.uint64(255))]
        return s0 + s1
    s = 0.0
    for q in range(nch):
        s += ctab[q, np.int64((c[q >> 3] >> np.uint64((q & 7) << 3)) & np.uint64(255))]
    return s


@numba.njit(cache=True, nogil=True)
def _chunk_tables(hd, rel, n, lamlp, nb, ctab, dtmp):
    """``ctab[q, v]``: metric (3) restricted to codeword bits ``8q .. 8q+7`` equal to ``v``: the
    channel discrepancy of those bits plus, for a message byte ``q < nb``, ``-lamlp[q, v]``.
    Returns ``sum_i rel_i + sum_j max_v |lamlp[j, v]|`` (the scale of the rounding tolerance)."""
    nch = ctab.shape[0]
    scale = 0.0
    for q in range(nch):
        h = np.int64((hd[q >> 3] >> np.uint64((q & 7) << 3)) & np.uint64(255))
        dtmp[0] = 0.0
        for x in range(1, 256):
            l = 0
            while not (x >> l) & 1:
                l += 1
            i = 8 * q + l
            dtmp[x] = dtmp[x & (x - 1)] + (rel[i] if i < n else 0.0)
        for v in range(256):
            ctab[q, v] = dtmp[v ^ h]
        scale += dtmp[255]
        if q < nb:
            mx = 0.0
            for v in range(256):
                ctab[q, v] -= lamlp[q, v]
                if abs(lamlp[q, v]) > mx:
                    mx = abs(lamlp[q, v])
            scale += mx
    return scale


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


@numba.njit(cache=True, nogil=True, inline="always")
def _threshold(best, topc, ntop, cap):
    """Cost a candidate must undercut to change anything: the incumbent, or while the top list is
    being filled nothing (inf), then its worst entry (which is >= the incumbent)."""
    if cap == 0:
        return best
    if ntop < cap:
        return np.inf
    return max(best, topc[ntop - 1])

class Scorer(NamedTuple):
    """What scoring a candidate reads and writes (:func:`_score`): one block's metric tables, the incumbent and
    the top list. ``Wn``: words of n bits, ``nch`` bytes, ``cap`` the top list's capacity (at least 1)."""

    ctab: np.ndarray  # (nch, 256) float64: per-byte table metric (:func:`_chunk_tables`)
    hd_ch: np.ndarray  # (Wn,) uint64: channel hard decisions
    rel_ch: np.ndarray  # (n,) float64: channel reliabilities |llr|
    lamlp: np.ndarray  # (nbb, 256) float64: lambda x log-prior per message byte
    nb: int  # message bytes
    Wn: int
    x: np.ndarray  # (Wn,) uint64: scratch of :func:`_cost`
    best_c: np.ndarray  # (Wn,) uint64: the incumbent codeword
    topc: np.ndarray  # (cap,) float64: the top list's costs, best first
    topw: np.ndarray  # (cap, Wn) uint64: ... and codewords
    counts: np.ndarray  # (3,) int64: += candidates, table metrics, exact metric evaluations
    tol: float  # slack on every threshold (above any rounding difference of the bounds)


@numba.njit(cache=True, nogil=True, inline="always")
def _score(c, thr, sc, best, ntop, cap):
    """Score candidate codeword ``c`` (``Wn`` uint64 words) with :class:`Scorer` ``sc``: skipped when its table
    metric (:func:`_fast_cost`) exceeds ``thr``; else its exact metric (:func:`_cost`) replaces the
    incumbent ``best`` / ``sc.best_c`` when strictly smaller and enters the top list (capacity
    ``cap``; 0: no top list). Returns ``(best, ntop)``; ``counts[1]`` += 1, ``counts[2]`` += 1 per exact
    metric."""
    ctab, hd_ch, rel_ch, lamlp, nb, Wn = sc.ctab, sc.hd_ch, sc.rel_ch, sc.lamlp, sc.nb, sc.Wn
    x, best_c, topc, topw, counts = sc.x, sc.best_c, sc.topc, sc.topw, sc.counts
    nch = ctab.shape[0]
    counts[1] += 1
    if _fast_cost(c, ctab, nch) > thr:
        return best, ntop
    cost = _cost(c, hd_ch, Wn, rel_ch, lamlp, nb, x)
    counts[2] += 1
    if cost < best:
        best = cost
        for q in range(Wn):
            best_c[q] = c[q]
    if cap > 0 and (ntop < cap or cost < topc[ntop - 1]):
        ntop = _keep(cost, c, Wn, topc, topw, ntop, cap)
    return best, ntop



@numba.njit(cache=True, nogil=True)
def _bound_weights(ctab, nb, hd, rel, n, zw, mu, mtab):
    """Additive lower bound of the table metric: ``F(c) >= Fmin + sum_i mu_i [c_i != z_i]``.

    Chunk ``q`` has its minimum ``m_q`` at byte ``z_q``. Parity chunks are additive already
    (``z`` = hard decisions, ``mu`` = ``|llr|``, ``m_q = 0``). For a message chunk, bit ``l``
    gets ``mu = min over bytes v differing from z_q in bit l of (ctab[q, v] - m_q) / (bits in
    which v and z_q differ)``, so ``sum_{l in diff(v)} mu_l <= ctab[q, v] - m_q`` for every
    ``v``. ``mtab[q, v]``: ``sum_l mu[8q + l] bit_l(v)``. Returns ``Fmin = sum_q m_q``.
    """
    nch = ctab.shape[0]
    Wn = zw.shape[0]
    for q in range(Wn):
        zw[q] = hd[q]
    fmin = 0.0
    for q in range(nch):
        if q < nb:
            z = 0
            m = ctab[q, 0]
            for v in range(1, 256):
                if ctab[q, v] < m:
                    m = ctab[q, v]
                    z = v
            fmin += m
            for l in range(8):
                mu[8 * q + l] = np.inf
            for v in range(256):
                dff = v ^ z
                if dff == 0:
                    continue
                pc = 0
                y = dff
                while y:
                    pc += 1
                    y &= y - 1
                r = (ctab[q, v] - m) / pc
                y = dff
                l = 0
                while y:
                    if y & 1 and r < mu[8 * q + l]:
                        mu[8 * q + l] = r
                    y >>= 1
                    l += 1
            sh = np.uint64((q & 7) << 3)
            zw[q >> 3] = (zw[q >> 3] & ~(np.uint64(255) << sh)) | (np.uint64(z) << sh)
        else:
            for l in range(8):
                i = 8 * q + l
                if i < n:
                    mu[i] = rel[i]
        for l in range(8):
            if 8 * q + l >= n:
                mu[8 * q + l] = 0.0
        mtab[q, 0] = 0.0
        for x in range(1, 256):
            l = 0
            while not (x >> l) & 1:
                l += 1
            mtab[q, x] = mtab[q, x & (x - 1)] + mu[8 * q + l]
    return fmin


@numba.njit(cache=True, nogil=True)
def _mrb_bound_terms(part, G, piv, rk, bnd, cand):
    """Per-MRB terms of the additive bound (:func:`_bound_weights`) for :func:`_enumerate`, into
    :class:`BoundTerms` ``bnd``: ``delta[t]`` (flipping pivot ``t``), ``smin[t] = min(delta[t:])``, and the
    off-MRB weights ``wr[t]`` of ``G_t`` and ``r1[t]`` of ``e0 ^ G_t``. Returns ``a0`` (order-0 word's MRB
    term)."""
    zw, mu, mtab, e0, pmask = bnd.zw, bnd.mu, bnd.mtab, bnd.e0, bnd.pmask
    delta, smin, wr, r1 = bnd.delta, bnd.smin, bnd.wr, bnd.r1
    Wn = zw.shape[0]
    nch = mtab.shape[0]
    for q in range(Wn):
        e0[q] = part[0, q] ^ zw[q]
        pmask[q] = 0
    a0 = 0.0
    for t in range(rk):
        p = piv[t]
        pmask[p >> 6] |= _ONE << np.uint64(p & 63)
        if (e0[p >> 6] >> np.uint64(p & 63)) & _ONE:
            a0 += mu[p]
            delta[t] = -mu[p]
        else:
            delta[t] = mu[p]
    smin[rk] = np.inf
    for t in range(rk - 1, -1, -1):
        smin[t] = min(smin[t + 1], delta[t])
    for t in range(rk):
        for q in range(Wn):
            cand[q] = G[t, q] & ~pmask[q]
        wr[t] = _fast_cost(cand, mtab, nch)
        for q in range(Wn):
            cand[q] = (e0[q] ^ G[t, q]) & ~pmask[q]
        r1[t] = _fast_cost(cand, mtab, nch)
    return a0


@numba.njit(cache=True, nogil=True)
def _enum_singles(part, G, rk, sc, use_lb, base, bnd, cand, best, ntop, cap):
    """Weight 1 of :func:`_enumerate` (:class:`Scorer` ``sc``, :class:`BoundTerms` ``bnd``); returns
    ``(best, ntop)``."""
    Wn, tol, topc, counts = sc.Wn, sc.tol, sc.topc, sc.counts
    delta, r1 = bnd.delta, bnd.r1
    for t in range(rk):
        counts[0] += 1
        thr = _threshold(best, topc, ntop, cap) + tol
        if use_lb and base + delta[t] + r1[t] > thr:
            continue
        for q in range(Wn):
            cand[q] = part[0, q] ^ G[t, q]
        best, ntop = _score(cand, thr, sc, best, ntop, cap)
    return best, ntop


@numba.njit(cache=True, nogil=True)
def _enum_pairs(part, G, rk, sc, use_lb, base, bnd, cand, best, ntop, cap):
    """Weight 2 of :func:`_enumerate`: pairs ``(i, j)``, ``i < j``, lexicographic (``part[1]`` holds
    ``part[0] ^ G_i``); returns ``(best, ntop)``."""
    Wn, tol, topc, counts = sc.Wn, sc.tol, sc.topc, sc.counts
    delta, smin, wr, r1 = bnd.delta, bnd.smin, bnd.wr, bnd.r1
    for i in range(rk - 1):
        bi = 0.0
        ri = 0.0
        wi = 0.0
        if use_lb:
            thr = _threshold(best, topc, ntop, cap) + tol
            bi = base + delta[i]
            if bi + smin[i + 1] > thr:
                counts[0] += rk - 1 - i
                continue
            ri = r1[i]
            wi = wr[i]
        for q in range(Wn):
            part[1, q] = part[0, q] ^ G[i, q]
        for j in range(i + 1, rk):
            counts[0] += 1
            thr = _threshold(best, topc, ntop, cap) + tol
            if use_lb:
                lb = abs(ri - wr[j])
                lb2 = abs(r1[j] - wi)
                if lb2 > lb:
                    lb = lb2
                if bi + delta[j] + lb > thr:
                    continue
            for q in range(Wn):
                cand[q] = part[1, q] ^ G[j, q]
            best, ntop = _score(cand, thr, sc, best, ntop, cap)
    return best, ntop


@numba.njit(cache=True, nogil=True)
def _enum_deep(part, G, rk, order, idx, sc, best, ntop, cap):
    """Weights 3 .. ``order`` of :func:`_enumerate`: every pattern, table-metric filter only
    (``part[l + 1] = part[l] ^ G[idx[l]]``); returns ``(best, ntop)``."""
    Wn, tol, topc, counts = sc.Wn, sc.tol, sc.topc, sc.counts
    for wt in range(3, order + 1):
        for lvl in range(wt):
            idx[lvl] = lvl
            for q in range(Wn):
                part[lvl + 1, q] = part[lvl, q] ^ G[lvl, q]
        while True:
            counts[0] += 1
            best, ntop = _score(part[wt], _threshold(best, topc, ntop, cap) + tol, sc, best, ntop, cap)
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


class BoundTerms(NamedTuple):
    """The lower-bound terms of :func:`_enumerate` (:func:`_bound_weights`, :func:`_mrb_bound_terms`): ``Wn``
    words of n bits, ``nch`` bytes, ``kx = max(k, 1)``."""

    fmin: float  # Fmin of the additive bound (0 when the bounds are off)
    zw: np.ndarray  # (Wn,) uint64: the reference word z
    mu: np.ndarray  # (8 nch,) float64: per-bit weights of the bound
    mtab: np.ndarray  # (nch, 256) float64: per-byte table of the bound
    e0: np.ndarray  # (Wn,) uint64: the order-0 word XOR z
    pmask: np.ndarray  # (Wn,) uint64: the MRB's pivot positions
    delta: np.ndarray  # (kx,) float64: delta_t = +-mu[piv_t]
    smin: np.ndarray  # (kx + 1,) float64: smallest delta_j, j >= t
    wr: np.ndarray  # (kx,) float64: off-MRB weight of G_t
    r1: np.ndarray  # (kx,) float64: off-MRB weight of e0 ^ G_t


@numba.njit(cache=True, nogil=True)
def _enumerate(order_llr, g_packed, order, sc, use_lb, bnd, mrb, cand, best, ntop, cap):
    """Order-``order`` TEP enumeration on the MRB of ``order_llr``, scored with :func:`_cost`.

    Candidates are visited weight by weight, lexicographically (the order of plain OSD,
    :func:`qdecode.kernels.osd.osd_classical_solve`); one replaces ``best_c`` only if strictly
    better. A candidate is scored exactly only when neither of two lower bounds on its metric
    exceeds :func:`_threshold` by more than ``tol`` (otherwise it could change neither the
    incumbent nor the top list):

    * weights 1 and 2: the additive bound of :func:`_bound_weights` (``Fmin`` plus a weighted
      Hamming distance to the reference word ``z``), split as in plain OSD
      (:func:`qdecode.kernels.osd.osd_classical_solve`): on the MRB, systematic row ``t`` is 1
      at its pivot only, so flipping it adds exactly ``delta_t = +-mu[piv_t]``; off the MRB the
      triangle inequality ``|w(e0 ^ G_i) - w(G_j)|``. A pair group ``(i, .)`` is skipped
      whole when ``delta_i`` plus the smallest ``delta_j, j > i`` already exceeds it;
    * the table metric :func:`_fast_cost` (equal to the exact metric up to rounding).

    The first is used only when ``use_lb`` (the caller sets it when there is no top list): with
    a top list the threshold is its worst entry, which the bounds rarely exceed (measured on
    BCH(127,64) at 2 dB: 2 % of the pairs skipped, for more work than they save), while the
    table metric still skips all but a few dozen candidates.

    ``sc``: :class:`Scorer`; ``bnd``: :class:`BoundTerms`; ``mrb``:
    :class:`~qdecode.kernels.osd.OsdClassicalScratch`. Returns ``(best, ntop)``; ``counts[0]`` += candidates
    visited, ``counts[1]`` += table metrics, ``counts[2]`` += exact metric evaluations.
    """
    perm, tmp, negrel, rel, G, piv = mrb.perm, mrb.tmp, mrb.negrel, mrb.rel, mrb.G, mrb.piv
    hd, d0, part, idx, kbuf, ktmp = mrb.hd, mrb.d0, mrb.part, mrb.idx, mrb.kbuf, mrb.ktmp
    hd_ch, rel_ch, lamlp, nb, x = sc.hd_ch, sc.rel_ch, sc.lamlp, sc.nb, sc.x
    best_c, topc, topw, counts = sc.best_c, sc.topc, sc.topw, sc.counts
    Wn = g_packed.shape[1]
    rk = classical_mrb(order_llr, g_packed, perm, tmp, negrel, rel, G, piv, hd, d0, kbuf, ktmp)
    for q in range(Wn):
        part[0, q] = d0[q] ^ hd[q]  # order-0 codeword
    if order > rk:
        order = rk
    cost = _cost(part[0], hd_ch, Wn, rel_ch, lamlp, nb, x)
    counts[0] += 1
    counts[2] += 1
    if cost < best:
        best = cost
        for q in range(Wn):
            best_c[q] = part[0, q]
    if cap > 0:
        ntop = _keep(cost, part[0], Wn, topc, topw, ntop, cap)
    base = 0.0
    if order >= 1 and use_lb:
        base = bnd.fmin + _mrb_bound_terms(part, G, piv, rk, bnd, cand)
    if order >= 1:
        best, ntop = _enum_singles(part, G, rk, sc, use_lb, base, bnd, cand, best, ntop, cap)
    if order >= 2:
        best, ntop = _enum_pairs(part, G, rk, sc, use_lb, base, bnd, cand, best, ntop, cap)
    best, ntop = _enum_deep(part, G, rk, order, idx, sc, best, ntop, cap)
    return best, ntop


@numba.njit(cache=True, nogil=True, inline="always")
def _byte_alternatives(base, j, alts, kk, top_k, out):
    """Byte ``j`` of codeword ``base`` and the first ``top_k`` other values among its candidates
    ``alts[j, :kk]`` (most probable first) into ``out``; returns ``(byte, count)``."""
    bit = 8 * j
    v = np.int64((base[bit >> 6] >> np.uint64(bit & 63)) & np.uint64(255))
    cnt = 0
    for a in range(kk):
        if cnt == top_k:
            break
        nv = alts[j, a]
        if nv != v:
            out[cnt] = nv
            cnt += 1
    return v, cnt


@numba.njit(cache=True, nogil=True, inline="always")
def _try_substitution(c, best, sc):
    """Score one byte-substitution candidate ``c``: :func:`_score` with the threshold ``best + tol`` and no top
    list; returns the new best cost (``c`` copied into ``sc.best_c`` when it wins). ``counts[0]`` += 1."""
    counts = sc.counts
    counts[0] += 1
    best, _ = _score(c, best + sc.tol, sc, best, 0, 0)
    return best


class SemOsdCode(NamedTuple):
    """The code sem-OSD searches: a systematic binary code of ``k = 8 nb`` message bits and length ``n``
    (``Wn``: words of n bits), its generator rows and its per-byte re-encodings."""

    g_packed: np.ndarray  # (k, Wn) uint64: generator rows, packed (bit j of the row at word j >> 6, bit j & 63)
    byte_tab: np.ndarray  # (nb, 256, Wn) uint64: the codeword of the message that is v at byte j, zero elsewhere
    nb: int  # message bytes


class SemOsdParams(NamedTuple):
    """The search settings of :func:`sem_osd_solve` (the families of candidates and their sizes)."""

    order: int  # TEP order on each MRB (weights 0 .. order)
    union: bool  # also search the MRB of the channel LLRs (the plain OSD candidates)
    omega: int  # byte substitutions of up to omega (0, 1 or 2) bytes; 0: none
    top_k: int  # values tried per substituted byte (its most probable others)
    top_l: int  # distinct best candidates whose bytes are substituted (the top list's capacity)


class SemOsdScratch(NamedTuple):
    """Scratch of :func:`sem_osd_solve` (``Wn``: words of n bits, ``nch`` bytes, ``kx = max(k, 1)``)."""

    mrb: object  # osd_classical_scratch(k, n, order)
    hd_ch: np.ndarray  # (Wn,) uint64
    rel_ch: np.ndarray  # (n,) float64
    best_c: np.ndarray  # (Wn,) uint64
    topc: np.ndarray  # (cap,) float64
    topw: np.ndarray  # (cap, Wn) uint64
    ctab: np.ndarray  # (nch, 256) float64
    dtmp: np.ndarray  # (256,) float64
    x: np.ndarray  # (Wn,) uint64
    cand: np.ndarray  # (Wn,) uint64
    c1: np.ndarray  # (Wn,) uint64
    c2: np.ndarray  # (Wn,) uint64
    base: np.ndarray  # (Wn,) uint64
    alts: np.ndarray  # (nbb, kk) int64
    altv: np.ndarray  # (kk,) float64
    post: np.ndarray  # (256,) float64
    le: np.ndarray  # (nbb, 256) float64
    fused: np.ndarray  # (n,) float64
    lamlp: np.ndarray  # (nbb, 256) float64
    zw: np.ndarray  # (Wn,) uint64
    mu: np.ndarray  # (8 * nch,) float64
    mtab: np.ndarray  # (nch, 256) float64
    e0: np.ndarray  # (Wn,) uint64
    pmask: np.ndarray  # (Wn,) uint64
    delta: np.ndarray  # (kx,) float64
    smin: np.ndarray  # (kx + 1,) float64
    wr: np.ndarray  # (kx,) float64
    r1: np.ndarray  # (kx,) float64


@numba.njit(cache=True, nogil=True)
def sem_osd_scratch(k, n, nb, order, top_k, top_l):
    """Scratch of :func:`sem_osd_solve` (and the fused LLRs) for one thread, reused across blocks."""
    Wn = max(1, (n + 63) // 64)
    nbb = max(nb, 1)
    kk = min(top_k + 1, 256)
    cap = max(top_l, 1)
    nch = (n + 7) // 8
    kx = max(k, 1)
    mrb = osd_classical_scratch(k, n, order)
    hd_ch = np.zeros(Wn, dtype=np.uint64)
    rel_ch = np.empty(n)
    best_c = np.zeros(Wn, dtype=np.uint64)
    topc = np.empty(cap)
    topw = np.zeros((cap, Wn), dtype=np.uint64)
    ctab = np.empty((nch, 256))
    dtmp = np.empty(256)
    x = np.empty(Wn, dtype=np.uint64)
    cand = np.empty(Wn, dtype=np.uint64)
    c1 = np.empty(Wn, dtype=np.uint64)
    c2 = np.empty(Wn, dtype=np.uint64)
    base = np.empty(Wn, dtype=np.uint64)
    alts = np.empty((nbb, kk), dtype=np.int64)
    altv = np.empty(kk)
    post = np.empty(256)
    le = np.empty((nbb, 256))
    fused = np.empty(n)
    lamlp = np.zeros((nbb, 256))
    # bound terms (_bound_weights, _enumerate)
    zw = np.zeros(Wn, dtype=np.uint64)
    mu = np.zeros(8 * nch)
    mtab = np.empty((nch, 256))
    e0 = np.zeros(Wn, dtype=np.uint64)
    pmask = np.zeros(Wn, dtype=np.uint64)
    delta = np.empty(kx)
    smin = np.empty(kx + 1)
    wr = np.empty(kx)
    r1 = np.empty(kx)
    return SemOsdScratch(mrb, hd_ch, rel_ch, best_c, topc, topw, ctab, dtmp, x, cand, c1, c2, base, alts, altv, post,
                         le, fused, lamlp, zw, mu, mtab, e0, pmask, delta, smin, wr, r1)


@numba.njit(cache=True, nogil=True)
def sem_osd_solve(llr, fused, lamlp, le, code, params, out, scratch, counts):
    """sem-OSD of one block; writes the codeword into ``out`` (n,) uint8 and returns its MAP metric.

    ``code``: :class:`SemOsdCode` (``g_packed``, ``byte_tab``, ``nb``); ``params``: :class:`SemOsdParams`
    (``order``, ``union``, ``omega``, ``top_k``, ``top_l``). ``llr``, ``fused``: (n,) float64 channel and
    fused LLRs; ``lamlp``, ``le``: (nb, 256) float64 lambda x log-prior and channel byte evidence.

    1. TEPs of weight <= ``order`` on the MRB of the fused LLRs ``fused``.
    2. ``union``: the same on the MRB of the channel LLRs ``llr`` (the plain OSD candidates).
    3. ``omega`` > 0: byte substitutions of up to ``omega`` (1 or 2) bytes of the ``top_l`` best
       distinct candidates so far, each byte taking its ``top_k`` most probable values under
       ``lamlp + channel evidence`` (``le``: :func:`byte_evidence` of ``llr``; ties: lower value
       first); re-encoded differentially with ``byte_tab`` (nb, 256, Wn), the codeword of the
       message that is ``v`` at byte ``j`` and zero elsewhere (systematic).
    Every candidate is scored by the MAP metric (3): channel correlation discrepancy against the
    channel hard decisions minus ``sum_j lamlp[j, byte_j]`` (``lamlp`` = lambda x log-prior);
    the first strict minimum wins. Candidates that cannot change the outcome are skipped by
    lower bounds (:func:`_enumerate`), so the result is that of scoring all of them (checked
    against the unpruned search of ``tests/kernels/sem_osd_reference.py``).
    ``counts`` (3,) int64: += candidates, table metrics, exact metric evaluations.
    ``scratch``: :func:`sem_osd_scratch` (no other allocation but two ``top_k``-sized lists).
    """
    g_packed, byte_tab, nb = code.g_packed, code.byte_tab, code.nb
    order, union, omega, top_k, top_l = params.order, params.union, params.omega, params.top_k, params.top_l
    mrb, hd_ch, rel_ch, best_c, topc = scratch.mrb, scratch.hd_ch, scratch.rel_ch, scratch.best_c, scratch.topc
    topw, ctab, dtmp, x, cand, c1 = scratch.topw, scratch.ctab, scratch.dtmp, scratch.x, scratch.cand, scratch.c1
    c2, base, alts, altv, post, zw = scratch.c2, scratch.base, scratch.alts, scratch.altv, scratch.post, scratch.zw
    mu, mtab, e0, pmask, delta = scratch.mu, scratch.mtab, scratch.e0, scratch.pmask, scratch.delta
    smin, wr, r1 = scratch.smin, scratch.wr, scratch.r1
    n = llr.shape[0]
    Wn = g_packed.shape[1]
    for q in range(Wn):
        hd_ch[q] = 0
        best_c[q] = 0
    for j in range(n):
        rel_ch[j] = abs(llr[j])
        if llr[j] <= 0:
            hd_ch[j >> 6] |= _ONE << np.uint64(j & 63)
    scale = _chunk_tables(hd_ch, rel_ch, n, lamlp, nb, ctab, dtmp)
    tol = 1e-9 * scale  # far above any rounding difference between the bounds and the exact metric
    cap = top_l if omega > 0 else 0
    use_lb = cap == 0 and order >= 1
    fmin = _bound_weights(ctab, nb, hd_ch, rel_ch, n, zw, mu, mtab) if use_lb else 0.0
    bnd = BoundTerms(fmin, zw, mu, mtab, e0, pmask, delta, smin, wr, r1)
    for t in range(topc.shape[0]):
        topc[t] = np.inf
    sc = Scorer(ctab, hd_ch, rel_ch, lamlp, nb, Wn, x, best_c, topc, topw, counts, tol)
    best, ntop = _enumerate(fused, g_packed, order, sc, use_lb, bnd, mrb, cand, np.inf, 0, cap)
    if union:
        best, ntop = _enumerate(llr, g_packed, order, sc, use_lb, bnd, mrb, cand, best, ntop, cap)
    if omega > 0 and ntop > 0:
        # per-byte candidate values, most probable first (posterior = lamlp + evidence)
        kk = min(top_k + 1, 256)
        alt1 = np.empty(max(top_k, 1), dtype=np.int64)  # a byte's alternatives (two top_k-sized lists)
        alt2 = np.empty(max(top_k, 1), dtype=np.int64)
        for j in range(nb):
            for b in range(256):
                post[b] = lamlp[j, b] + le[j, b]
            _top_states(post, kk, altv, alts[j])
        for t in range(ntop):
            for q in range(Wn):
                base[q] = topw[t, q]
            for j1 in range(nb):
                v1, k1 = _byte_alternatives(base, j1, alts, kk, top_k, alt1)
                for a1 in range(k1):
                    for q in range(Wn):
                        c1[q] = base[q] ^ byte_tab[j1, v1 ^ alt1[a1], q]
                    best = _try_substitution(c1, best, sc)
                    if omega >= 2:
                        for j2 in range(j1 + 1, nb):
                            v2, k2 = _byte_alternatives(base, j2, alts, kk, top_k, alt2)
                            for a2 in range(k2):
                                for q in range(Wn):
                                    c2[q] = c1[q] ^ byte_tab[j2, v2 ^ alt2[a2], q]
                                best = _try_substitution(c2, best, sc)
    for j in range(n):
        out[j] = np.uint8((best_c[j >> 6] >> np.uint64(j & 63)) & _ONE)
    return best


@numba.njit(cache=True, nogil=True)
def sem_osd_range(llr, logpri, lam, code, params, out, counts, start, stop):
    """Fused LLRs + :func:`sem_osd_solve` for rows ``start:stop`` (``run_ranges`` kernel; one scratch
    per call).

    ``llr`` (S, n) float64 channel LLRs; ``logpri`` (S, nb, 256) float64 per-byte log-priors, weighted by
    ``lam``; ``code``: :class:`SemOsdCode`; ``params``: :class:`SemOsdParams`; ``out`` (S, n) uint8
    codewords (rows ``start:stop`` written); ``counts`` (S, 3) int64: candidates, table metrics and exact
    metric evaluations per block.

    ``lam == 0`` gives the plain OSD candidates and metric: fused LLRs are the channel LLRs, the
    LM term is zero, and the union and the byte-substitution family (LM-driven) are off.
    """
    if start >= stop:
        return
    nb = code.nb
    k = code.g_packed.shape[0]
    n = llr.shape[1]
    scratch = sem_osd_scratch(k, n, nb, params.order, params.top_k, params.top_l)
    e, le, fused, lamlp = scratch.post, scratch.le, scratch.fused, scratch.lamlp
    lm = lam != 0.0
    # the LM-driven families are off without the LM (docstring)
    solve_params = SemOsdParams(params.order, params.union and lm, params.omega if lm else 0, params.top_k,
                                params.top_l)
    for s in range(start, stop):
        byte_evidence(llr[s], nb, le)
        _fused_from_evidence(llr[s], nb, lam, logpri[s], le, e, fused)
        if lm:
            for j in range(nb):
                for b in range(256):
                    lamlp[j, b] = lam * logpri[s, j, b]
        for t in range(3):
            counts[s, t] = 0
        sem_osd_solve(llr[s], fused, lamlp, le, code, solve_params, out[s], scratch, counts[s])
