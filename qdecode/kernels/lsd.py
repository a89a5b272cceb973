"""Localized statistics decoding (Hillmann et al., arXiv:2406.18655): clusters grown by reliability,
eliminated on the fly, solved locally.

For a syndrome ``s`` of ``H`` (m, n) and an ordering key (BP posterior LLRs: smaller means more
likely flipped), every flagged check seeds a cluster ``C`` = (bits ``V_C``, checks ``U_C``). Round by
round, every *invalid* cluster (smallest first) adds its most likely unowned bit adjacent to one of
its checks (ties: lower index); the bit's checks join ``U_C``, and a check already owned by another
cluster merges the two. ``U_C`` always holds every check of every bit of ``V_C``, so a solution of
``H[U_C, V_C] x = s[U_C]`` flips no check outside ``U_C``. A cluster is *valid* when ``s[U_C]`` is in
the column space of ``H[U_C, V_C]``; growth ends when every cluster is valid, and the union of the
clusters' solutions satisfies ``H e = s``.

On-the-fly elimination: clusters are disjoint in checks, so one global echelon basis serves them
all. A basis vector (packed over the m checks) has a pivot, its lowest check; ``pivot_of[i]`` is the
basis vector pivoted on check ``i``. A new bit's column is reduced by the pivots it meets (its
combination of cluster bits tracked alongside, over per-shot *slots*: bit number ``t`` to join any
cluster gets slot ``t``, so combinations stay as short as the clusters), and it becomes a new basis
vector unless it reduces to zero. Merging two clusters keeps both bases as they are (disjoint
pivots). Validity reduces ``s[U_C]`` by the same pivots; the combination it picks up is the
cluster's LSD-0 solution (non-pivot bits 0).

The cluster statistic (Lee, English and Bartlett, arXiv:2510.05795, their ``Q_LLR`` with
``alpha = 2`` before the division by the total prior LLR): once every cluster is valid, and before
the order-``w`` pre-growth below, ``sqrt(sum_C L_C^2)`` with ``L_C = sum_{j in V_C} lambda_j`` the
prior LLR ``lambda_j = ln((1 - p_j) / p_j)`` summed over a cluster's bits (``nan`` when ``s`` is
outside ``H``'s column space; 0 without clusters). Large clusters of unlikely bits mean a shot the
decoder is unsure of.

Order ``w > 0``: each valid cluster first grows on (valid clusters stay valid: a new check is
unflagged) to nullity ``grow * w``, then its subproblem ``H[U_C, V_C]`` runs OSD-CS or OSD-E of
order ``min(w, nullity)`` (:func:`qdecode.kernels.osd.osd_solve`, ordered by the key, cost
``sum ln(1/p_j)``): a likelihood-weighted search, where ldpc's LSD scores in-cluster candidates by
Hamming weight.

The gap (:func:`lsd_range` with :class:`LsdGapWeights`; the unit of
:mod:`qdecode.decoders.confidence`): with the gap's weights ``v_j = ln((1 - p_j) / p_j)`` a correction
``e`` has ``V(e) = sum_{e_j=1} v_j`` and a class code, the XOR of ``class_code[j]`` over its support.
The corrections LSD *finds* are the combinations of one tested candidate per cluster (clusters are
disjoint in bits and checks, so any such combination satisfies ``H e = s``): a cluster that runs the
in-cluster OSD contributes every candidate its search tests, tracked as that search's top two classes
(:func:`qdecode.kernels.osd.osd_gap_solve`: ``V1_C``, ``code1_C`` and ``V2_C``, the lightest of a class
other than ``code1_C``), any other cluster its one solution (``V2_C = inf``). The lightest combination
is ``V1 = sum_C V1_C`` of class ``code1 = XOR_C code1_C``, and the lightest combination of another class
changes the class of exactly one cluster: ``V2 = V1 + min_C (V2_C - V1_C)`` (changing two costs at
least as much as either change alone, and one change always changes the total class). So, as for
OSD (:class:`qdecode.kernels.osd.OsdGapOut`), the least ``V`` of a found correction of any class other
than ``c`` is ``V2`` where ``c == code1``, else ``V1``. With LSD-0, or a cluster of nullity 0, a cluster
tests one candidate: only the in-cluster search finds other classes.

``bits_per_step``: bits a cluster adds per growth step, the most likely first (1: LSD's default;
0: every unowned neighbouring bit, the Tanner-graph neighbourhood, which with BP posteriors is the
belief-find decoder of Higgott et al., arXiv:2203.04948, in its matrix-inversion form: Delfosse,
Londe and Beverland's union-find for LDPC codes, arXiv:2103.08049).

Work clock: each shot counts its work (:class:`LsdOut` ``work``), a deterministic integer that grows
with the time it takes, in elementary operations: one per Tanner-graph entry a growth step scans
(per check of the cluster, its bits; ``2 c ceil(log2 c)`` more for sorting ``c`` candidates when
``bits_per_step != 1``) and one per entry of an added bit's column; the 64-bit words of every row
operation of the on-the-fly elimination (a column loaded, ``Wm - q + wn`` per pivot that reduces it,
``Wm + wn`` per new basis vector; ``Wm``, ``wn``: words of m checks and of the slots so far) and of the
validity tests (one per cluster check, the same per pivot); the in-cluster OSD's own count
(:mod:`qdecode.kernels.osd`, "Work clock") plus the building of its subproblem; and the per-shot
bookkeeping (the seed scan, one per live cluster each round, the reset: one per bit, check and word).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.gf2 import ctz64
from qdecode.kernels.osd import OsdMatrix, osd_gap_solve, osd_gap_track, osd_scratch, osd_solve

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


class LsdProblem(NamedTuple):
    """The problem ``H`` (m, n) as :func:`lsd_solve` walks it, and the bit costs."""

    col_ptr: np.ndarray  # (n + 1,) int64: bit j's checks are row_idx[col_ptr[j]:col_ptr[j + 1]] (CSC of H)
    row_idx: np.ndarray  # (nnz,) int64: check indices, ascending per bit
    chk_ptr: np.ndarray  # (m + 1,) int64: check i's bits are chk_var[chk_ptr[i]:chk_ptr[i + 1]] (CSR of H)
    chk_var: np.ndarray  # (nnz,) int64: bit indices, ascending per check
    colbits: np.ndarray  # (n, ceil(m / 64)) uint64: the columns packed (check i: bit i & 63 of word i >> 6)
    weights: np.ndarray  # (n,) float64: ln(1 / p_j), the in-cluster OSD's costs (and the cluster statistic's)


class LsdParams(NamedTuple):
    """LSD's parameters (module docstring)."""

    bits_per_step: int  # int64: bits a cluster adds per growth step (0: its whole neighbourhood)
    method: int  # int64: the in-cluster OSD (qdecode.kernels.osd.METHOD_CS / METHOD_E)
    order: int  # int64: the in-cluster OSD's order (0: LSD-0, the elimination solution)
    grow: int  # int64: with order > 0, valid clusters first grow to nullity grow * order


class LsdScratch(NamedTuple):
    """Per-thread state of :func:`lsd_solve` for an ``(m, n)`` problem (``Wm``, ``Wn``: words of m, n bits)."""

    bit_owner: np.ndarray  # (n,) int64
    chk_owner: np.ndarray  # (m,) int64
    cparent: np.ndarray  # (m,) int64: (cluster union-find; clusters are seed indices)
    csize: np.ndarray  # (m,) int64: (bits)
    crank: np.ndarray  # (m,) int64
    cvalid: np.ndarray  # (m,) uint8
    chk_next: np.ndarray  # (m,) int64: (cluster check lists)
    c_head: np.ndarray  # (m,) int64
    c_tail: np.ndarray  # (m,) int64
    pivot_of: np.ndarray  # (m,) int64
    vec: np.ndarray  # (m, Wm) uint64
    comb: np.ndarray  # (m, Wn) uint64: (over slots)
    bit_of_slot: np.ndarray  # (n,) int64
    v: np.ndarray  # (Wm,) uint64
    cv: np.ndarray  # (Wn,) uint64
    seeds: np.ndarray  # (m,) int64: / invalid list
    chk_local: np.ndarray  # (m,) int64: (check -> local row, for OSD)
    bit_local: np.ndarray  # (n,) int64
    cand: np.ndarray  # (n,) int64: (a growth step's candidate bits)
    mark: np.ndarray  # (n,) uint8: (candidate already listed)
    cllr: np.ndarray  # (m,) float64: a cluster's summed prior LLR, at its root (the cluster statistic)
    stat: np.ndarray  # (1,) float64: the last shot's cluster LLR norm (:func:`lsd_solve`)
    ops: np.ndarray  # (1,) int64: the last shot's work (:func:`lsd_solve`; module docstring, "Work clock")


class LsdOut(NamedTuple):
    """Per-shot outputs of :func:`lsd_range` (``V``, class: the gap's weight and class of a candidate, module
    docstring; the last three are written only when :func:`lsd_range` gets an :class:`LsdGapWeights`)."""

    decision: np.ndarray  # (S, n) uint8: rows of the masked shots are overwritten
    status: np.ndarray  # (S,) uint8: 1 on success, 0 when s is outside H's column space
    work: np.ndarray  # (S,) int64 LSD's work of each masked shot (module docstring, "Work clock"), or (0,)
    cluster_norm: np.ndarray  # (S,) float64 cluster LLR norm of each masked shot, or (0,): not wanted
    weight: np.ndarray  # (S,) float64 V1: least V of a found correction (inf: none), or (0,)
    code: np.ndarray  # (S,) uint64 code1: the class code of that correction, or (0,)
    weight_other: np.ndarray  # (S,) float64 V2: least V of a found correction of another class (inf: none), or (0,)


class LsdGapWeights(NamedTuple):
    """The gap's weights and classes of the columns (module docstring), for :func:`lsd_range`."""

    class_code: np.ndarray  # (n,) uint64 class code of each column (qdecode.decoders.confidence.class_codes)
    wgap: np.ndarray  # (n,) float64 the gap's weights v_j = ln((1 - p_j) / p_j)


class LsdGapTrack(NamedTuple):
    """Per-thread gap tracking of :func:`lsd_solve`: the columns' weights and classes and the last shot's result."""

    class_code: np.ndarray  # (n,) uint64 class code of each column
    wgap: np.ndarray  # (n,) float64 the gap's weights v_j
    top_w: np.ndarray  # (2,) float64 [V1, V2] of the last shot (inf: none)
    top_code: np.ndarray  # (1,) uint64 [code1], the class of V1


@numba.njit(cache=True, nogil=True)
def lsd_scratch(m, n):
    """Per-thread state of :func:`lsd_solve` for an ``(m, n)`` problem (reset per shot where used)."""
    Wm = max(1, (m + 63) // 64)
    Wn = max(1, (n + 63) // 64)
    return LsdScratch(
        bit_owner=np.full(n, -1, dtype=np.int64),
        chk_owner=np.full(m, -1, dtype=np.int64),
        cparent=np.zeros(m, dtype=np.int64),
        csize=np.zeros(m, dtype=np.int64),
        crank=np.zeros(m, dtype=np.int64),
        cvalid=np.zeros(m, dtype=np.uint8),
        chk_next=np.full(m, -1, dtype=np.int64),
        c_head=np.zeros(m, dtype=np.int64),
        c_tail=np.zeros(m, dtype=np.int64),
        pivot_of=np.full(m, -1, dtype=np.int64),
        vec=np.zeros((m, Wm), dtype=np.uint64),
        comb=np.zeros((m, Wn), dtype=np.uint64),
        bit_of_slot=np.zeros(n, dtype=np.int64),
        v=np.zeros(Wm, dtype=np.uint64),
        cv=np.zeros(Wn, dtype=np.uint64),
        seeds=np.zeros(m, dtype=np.int64),
        chk_local=np.zeros(m, dtype=np.int64),
        bit_local=np.full(n, -1, dtype=np.int64),
        cand=np.zeros(n, dtype=np.int64),
        mark=np.zeros(n, dtype=np.uint8),
        cllr=np.zeros(m, dtype=np.float64),
        stat=np.zeros(1, dtype=np.float64),
        ops=np.zeros(1, dtype=np.int64))


@numba.njit(cache=True, nogil=True, inline="always")
def _root(cparent, c):
    while cparent[c] != c:
        cparent[c] = cparent[cparent[c]]
        c = cparent[c]
    return c


@numba.njit(cache=True, nogil=True)
def _reduce_syndrome(root, syndrome, chk_next, c_head, pivot_of, vec, comb, v, cv, wn, ops):
    """Reduce ``s[U_root]`` by the pivots; ``cv`` receives the combination. Returns True if it vanishes.
    Adds its work to ``ops[0]`` (module docstring, "Work clock").

    The growth helpers (this one, :func:`_grow`, :func:`_add_bit`) take the arrays themselves, not
    :class:`LsdProblem`: they run once per growth step or added bit, and unpacking named tuples on every
    call of such a helper cost GDG 4 % (its ``_set_value``, measured)."""
    Wm = v.shape[0]
    for q in range(Wm):
        v[q] = 0
    for q in range(wn):
        cv[q] = 0
    work = Wm + wn
    i = c_head[root]
    while i >= 0:
        work += 1
        if syndrome[i]:
            v[i >> 6] |= _ONE << np.uint64(i & 63)
        i = chk_next[i]
    for q in range(Wm):
        while v[q] != 0:
            i = (q << 6) + ctz64(v[q])
            b = pivot_of[i]
            if b < 0:
                ops[0] += work
                return False
            work += Wm - q + wn
            for r in range(q, Wm):  # a pivot is its vector's lowest bit: words below q are 0
                v[r] ^= vec[b, r]
            for r in range(wn):
                cv[r] ^= comb[b, r]
    ops[0] += work
    return True


@numba.njit(cache=True, nogil=True)
def _grow(c, col_ptr, row_idx, chk_ptr, chk_var, colbits, key, bits_per_step, st, nb, nslot):
    """One growth step of cluster ``c``: its ``bits_per_step`` most likely unowned neighbouring bits
    (smallest ``key``, then index; ``0``: all of them, the Tanner-graph neighbourhood) join it
    (:func:`_add_bit`). Returns ``(root, nb, nslot)``, ``root = -1`` when ``c`` has no such bit."""
    bit_owner, chk_next, c_head, cand, mark = st.bit_owner, st.chk_next, st.c_head, st.cand, st.mark
    if bits_per_step == 1:  # the common case: one scan for the minimum
        best = -1
        bk = np.inf
        i = c_head[c]
        scanned = 0
        while i >= 0:
            scanned += 1 + chk_ptr[i + 1] - chk_ptr[i]
            for e in range(chk_ptr[i], chk_ptr[i + 1]):
                j = chk_var[e]
                if bit_owner[j] < 0 and (best < 0 or key[j] < bk or (key[j] == bk and j < best)):
                    bk = key[j]
                    best = j
            i = chk_next[i]
        st.ops[0] += scanned
        if best < 0:
            return -1, nb, nslot
        return _add_bit(best, c, col_ptr, row_idx, colbits, st, nb, nslot)
    nc = 0
    i = c_head[c]
    scanned = 0
    while i >= 0:  # list the candidates first: the bits added below extend this check list
        scanned += 1 + chk_ptr[i + 1] - chk_ptr[i]
        for e in range(chk_ptr[i], chk_ptr[i + 1]):
            j = chk_var[e]
            if bit_owner[j] < 0 and not mark[j]:
                mark[j] = 1
                cand[nc] = j
                nc += 1
        i = chk_next[i]
    st.ops[0] += scanned
    if nc == 0:
        return -1, nb, nslot
    lg = 1
    while (1 << lg) < nc:
        lg += 1
    st.ops[0] += 2 * nc * lg  # the two sorts of the candidates
    picked = np.sort(cand[:nc])
    for t in range(nc):
        mark[picked[t]] = 0
    take = nc if bits_per_step <= 0 else min(nc, bits_per_step)
    ranked = picked[np.argsort(key[picked], kind="mergesort")]  # by key, ties by index
    root = c
    for t in range(take):
        root, nb, nslot = _add_bit(ranked[t], root, col_ptr, row_idx, colbits, st, nb, nslot)
    return root, nb, nslot


@numba.njit(cache=True, nogil=True)
def _add_bit(j, c, col_ptr, row_idx, colbits, st, nb, nslot):
    """Bit ``j`` joins cluster ``c``: its new checks join, clusters owning its other checks merge (the
    smaller into the larger), and its column is eliminated on the fly. Returns ``(root, nb, nslot)``."""
    bit_owner, chk_owner, cparent, csize, crank = st.bit_owner, st.chk_owner, st.cparent, st.csize, st.crank
    chk_next, c_head, c_tail, pivot_of, vec, comb = st.chk_next, st.c_head, st.c_tail, st.pivot_of, st.vec, st.comb
    bit_of_slot, v, cv = st.bit_of_slot, st.v, st.cv
    Wm = v.shape[0]
    root = c
    bit_owner[j] = root
    bit_of_slot[nslot] = j
    slot = nslot
    nslot += 1
    csize[root] += 1
    for e in range(col_ptr[j], col_ptr[j + 1]):
        i = row_idx[e]
        o = chk_owner[i]
        if o < 0:
            chk_owner[i] = root
            chk_next[i] = -1
            chk_next[c_tail[root]] = i
            c_tail[root] = i
        else:
            r2 = _root(cparent, o)
            if r2 != root:  # merge the smaller cluster into the larger
                a, b2 = (root, r2) if csize[root] >= csize[r2] else (r2, root)
                cparent[b2] = a
                csize[a] += csize[b2]
                crank[a] += crank[b2]
                chk_next[c_tail[a]] = c_head[b2]
                c_tail[a] = c_tail[b2]
                root = a
    # on-the-fly elimination of column j
    wn = (nslot + 63) >> 6
    for q in range(Wm):
        v[q] = colbits[j, q]
    for q in range(wn):
        cv[q] = 0
    cv[slot >> 6] = _ONE << np.uint64(slot & 63)
    work = col_ptr[j + 1] - col_ptr[j] + Wm + wn
    for q in range(Wm):
        while v[q] != 0:
            i = (q << 6) + ctz64(v[q])
            b = pivot_of[i]
            if b < 0:
                work += Wm + wn
                pivot_of[i] = nb
                for r in range(Wm):
                    vec[nb, r] = v[r]
                for r in range(wn):
                    comb[nb, r] = cv[r]
                nb += 1
                crank[root] += 1
                for r in range(Wm):
                    v[r] = 0
                break
            work += Wm - q + wn
            for r in range(q, Wm):
                v[r] ^= vec[b, r]
            for r in range(wn):
                cv[r] ^= comb[b, r]
    st.ops[0] += work
    return root, nb, nslot


@numba.njit(cache=True, nogil=True)
def lsd_solve(problem, syndrome, key, params, out, st, gap):
    """LSD of one shot into ``out`` (n,) uint8 (zeroed by the caller). Returns True on success
    (``H out = s``), False when a cluster cannot grow valid (``s`` not in ``H``'s column space).

    ``problem``: :class:`LsdProblem` (its ``weights`` serve order > 0 and the cluster statistic);
    ``syndrome``: (m,) uint8; ``key``: ordering key (n,); ``params``: :class:`LsdParams`
    (``bits_per_step``: see the module docstring; ``method``: the in-cluster OSD's; ``grow``: with
    ``order > 0``, each valid cluster first grows on (it stays valid: a new check is unflagged)
    until its nullity reaches ``grow * order`` or it has no neighbour left, so that the in-cluster
    OSD has that many non-pivot columns to sweep); ``st``: :func:`lsd_scratch`, whose ``stat[0]``
    receives the shot's cluster statistic; ``gap``: an :class:`LsdGapTrack` whose ``top_w`` / ``top_code``
    receive the shot's ``[V1, V2]`` and ``code1`` (module docstring), or ``None`` (pruned at compile time).
    ``st.ops[0]`` receives the shot's work (module docstring, "Work clock").
    """
    col_ptr, row_idx, chk_ptr, chk_var, colbits, weights = problem
    bits_per_step, order, grow = params.bits_per_step, params.order, params.grow
    bit_owner, chk_owner, cparent, csize, crank = st.bit_owner, st.chk_owner, st.cparent, st.csize, st.crank
    cvalid, chk_next, c_head, c_tail, pivot_of = st.cvalid, st.chk_next, st.c_head, st.c_tail, st.pivot_of
    vec, comb, bit_of_slot, v, cv, seeds = st.vec, st.comb, st.bit_of_slot, st.v, st.cv, st.seeds
    chk_local = st.chk_local
    m = syndrome.shape[0]
    Wm = v.shape[0]
    ops = st.ops
    ops[0] = m
    nseed = 0
    for i in range(m):
        if syndrome[i]:
            cparent[i] = i
            csize[i] = 0
            crank[i] = 0
            cvalid[i] = 0
            chk_owner[i] = i
            chk_next[i] = -1
            c_head[i] = i
            c_tail[i] = i
            seeds[nseed] = i
            nseed += 1
    nb = 0
    nslot = 0
    ok = True
    while True:
        # invalid roots, smallest first (insertion sort by (size, id))
        ninv = 0
        ops[0] += nseed
        for t in range(nseed):
            c = seeds[t]
            if cparent[c] == c and not cvalid[c]:
                j = ninv
                while j > 0 and (csize[chk_local[j - 1]] > csize[c]):
                    chk_local[j] = chk_local[j - 1]
                    j -= 1
                chk_local[j] = c
                ninv += 1
        if ninv == 0:
            break
        for t in range(ninv):
            c = chk_local[t]
            if cparent[c] != c or cvalid[c]:
                continue  # merged or made valid earlier in this round
            root, nb, nslot = _grow(c, col_ptr, row_idx, chk_ptr, chk_var, colbits, key, bits_per_step, st, nb,
                                    nslot)
            if root < 0:
                ok = False
                break
            wn = (nslot + 63) >> 6
            cvalid[root] = _reduce_syndrome(root, syndrome, chk_next, c_head, pivot_of, vec, comb, v, cv, wn, ops)
        if not ok:
            break
    st.stat[0] = _cluster_llr_norm(weights, nseed, nslot, st) if ok else np.nan
    if ok and order > 0:  # LSD-w pre-growth: valid clusters stay valid (a new check is unflagged)
        for t in range(nseed):
            c = seeds[t]
            while cparent[c] == c and csize[c] - crank[c] < grow * order:
                r, nb, nslot = _grow(c, col_ptr, row_idx, chk_ptr, chk_var, colbits, key, bits_per_step, st, nb,
                                     nslot)
                if r < 0:
                    break
                c = r
    wn = (nslot + 63) >> 6
    if ok:
        _solve_clusters(problem, syndrome, key, params, st, nseed, nslot, out, gap)
    elif gap is not None:
        gap.top_w[0] = np.inf
        gap.top_w[1] = np.inf
    # reset what this shot touched
    ops[0] += nslot + nseed + nb * (Wm + wn)
    for t in range(nslot):
        bit_owner[bit_of_slot[t]] = -1
    for t in range(nseed):
        c = seeds[t]
        if cparent[c] == c:
            i = c_head[c]
            while i >= 0:
                ops[0] += 1
                nx = chk_next[i]
                pivot_of[i] = -1
                chk_owner[i] = -1
                chk_next[i] = -1
                i = nx
    for t in range(nseed):
        cparent[seeds[t]] = seeds[t]
    for b in range(nb):
        for r in range(Wm):
            vec[b, r] = 0
        for r in range(wn):
            comb[b, r] = 0
    return ok


@numba.njit(cache=True, nogil=True)
def _solve_clusters(problem, syndrome, key, params, st, nseed, nslot, out, gap):
    """Write every valid cluster's solution into ``out``: its LSD-0 solution, or with ``params.order > 0`` and
    nullity its in-cluster OSD's (:func:`_cluster_osd`); with ``gap`` (:class:`LsdGapTrack`; or ``None``) also
    the shot's ``[V1, V2]`` and ``code1`` summed over the clusters (module docstring)."""
    method, order = params.method, params.order
    cparent, csize, crank, chk_next, c_head = st.cparent, st.csize, st.crank, st.chk_next, st.c_head
    pivot_of, vec, comb, v, cv, bit_of_slot = st.pivot_of, st.vec, st.comb, st.v, st.cv, st.bit_of_slot
    wn = (nslot + 63) >> 6
    v1 = 0.0
    code1 = _ZERO
    delta = np.inf  # least V2_C - V1_C
    for t in range(nseed):
        c = st.seeds[t]
        if cparent[c] != c:
            continue
        _reduce_syndrome(c, syndrome, chk_next, c_head, pivot_of, vec, comb, v, cv, wn, st.ops)
        st.ops[0] += wn
        vc = 0.0
        cc = _ZERO
        for q in range(wn):
            x = cv[q]
            while x != 0:
                j = bit_of_slot[(q << 6) + ctz64(x)]
                out[j] = 1
                if gap is not None:
                    vc += gap.wgap[j]
                    cc ^= gap.class_code[j]
                x &= x - _ONE
        if order > 0 and csize[c] > crank[c]:
            vc, cc, v2c = _cluster_osd(c, problem, syndrome, key, method, min(order, csize[c] - crank[c]),
                                       crank[c], st, nslot, out, gap)
            delta = min(delta, v2c - vc)
        v1 += vc
        code1 ^= cc
    if gap is not None:
        gap.top_w[0] = v1
        gap.top_w[1] = v1 + delta
        gap.top_code[0] = code1


@numba.njit(cache=True, nogil=True)
def _cluster_llr_norm(weights, nseed, nslot, st):
    """``sqrt(sum_C L_C^2)`` over the current clusters (:class:`LsdScratch` ``st``; module docstring).

    ``weights`` are ``ln(1/p_j)``, so ``lambda_j = w_j + ln(1 - e^{-w_j})`` (= ``ln((1 - p_j) / p_j)``).
    """
    cparent, seeds, cllr = st.cparent, st.seeds, st.cllr
    st.ops[0] += 2 * nseed + nslot
    for t in range(nseed):
        cllr[seeds[t]] = 0.0
    for t in range(nslot):
        j = st.bit_of_slot[t]
        w = weights[j]
        cllr[_root(cparent, st.bit_owner[j])] += w + np.log1p(-np.exp(-w))
    total = 0.0
    for t in range(nseed):
        c = seeds[t]
        if cparent[c] == c:
            total += cllr[c] * cllr[c]
    return np.sqrt(total)


@numba.njit(cache=True, nogil=True)
def _cluster_osd(c, problem, syndrome, key, method, order, rank, st, nslot, out, gap):
    """OSD (``method``: ``METHOD_CS`` or ``METHOD_E``) of order ``order`` on cluster ``c``'s subproblem
    ``H[U_c, V_c]`` (its checks and its bits among the first ``nslot`` slots of :class:`LsdScratch` ``st``),
    written over ``out``'s entries on ``V_c`` (its OSD-0 equals the LSD-0 solution up to the column order).

    Returns ``(V1_c, code1_c, V2_c)`` of the candidates the search tested (:func:`~qdecode.kernels.osd.osd_gap_solve`
    with the columns' weights and classes of ``gap``, an :class:`LsdGapTrack`), or ``(nan, 0, nan)`` when
    ``gap`` is ``None`` (plain :func:`~qdecode.kernels.osd.osd_solve`)."""
    col_ptr, row_idx, weights = problem.col_ptr, problem.row_idx, problem.weights
    chk_next, c_head, bit_owner, cparent = st.chk_next, st.c_head, st.bit_owner, st.cparent
    bit_of_slot, chk_local, bit_local = st.bit_of_slot, st.chk_local, st.bit_local
    mc = 0
    i = c_head[c]
    while i >= 0:
        chk_local[i] = mc
        mc += 1
        i = chk_next[i]
    nc = 0
    for t in range(nslot):
        j = bit_of_slot[t]
        if _root(cparent, bit_owner[j]) == c:
            bit_local[j] = nc
            nc += 1
    bits = np.zeros(nc, dtype=np.int64)
    nnz = 0
    for t in range(nslot):
        j = bit_of_slot[t]
        if bit_local[j] >= 0:
            bits[bit_local[j]] = j
            nnz += col_ptr[j + 1] - col_ptr[j]
    lptr = np.zeros(nc + 1, dtype=np.int64)
    lrow = np.zeros(nnz, dtype=np.int64)
    Wl = max(1, (mc + 63) // 64)
    lbits = np.zeros((nc, Wl), dtype=np.uint64)
    lw = np.zeros(nc, dtype=np.float64)
    lkey = np.zeros(nc, dtype=np.float64)
    e = 0
    for a in range(nc):
        j = bits[a]
        lw[a] = weights[j]
        lkey[a] = key[j]
        for k in range(col_ptr[j], col_ptr[j + 1]):
            r = chk_local[row_idx[k]]
            lrow[e] = r
            lbits[a, r >> 6] |= _ONE << np.uint64(r & 63)
            e += 1
        lptr[a + 1] = e
    ls = np.zeros(mc, dtype=np.uint8)
    i = c_head[c]
    while i >= 0:
        ls[chk_local[i]] = syndrome[i]
        i = chk_next[i]
    lout = np.zeros(nc, dtype=np.uint8)
    lout0 = np.zeros(nc, dtype=np.uint8)
    result = (np.nan, _ZERO, np.nan)
    scratch = osd_scratch(mc, nc, rank, order)
    # the subproblem built (the slots scanned twice, its entries, its checks twice) and written back
    st.ops[0] += 2 * nslot + nnz + nc * Wl + 2 * mc + 2 * nc
    if gap is None:
        osd_solve(lptr, lrow, lbits, lw, rank, method, order, ls, lkey, lout, lout0, scratch)
    else:
        lcode = np.empty(nc, dtype=np.uint64)
        lwgap = np.empty(nc, dtype=np.float64)
        for a in range(nc):
            lcode[a] = gap.class_code[bits[a]]
            lwgap[a] = gap.wgap[bits[a]]
        track = osd_gap_track(lcode, lwgap, rank)
        osd_gap_solve(OsdMatrix(lptr, lrow, lbits, lw, rank), method, order, ls, lkey, lout, lout0, scratch, track)
        result = (track.top_w[0], track.top_code[0], track.top_w[1])
        st.ops[0] += 2 * nc
    st.ops[0] += scratch.work[0]
    for a in range(nc):
        out[bits[a]] = lout[a]
        bit_local[bits[a]] = -1
    return result


@numba.njit(cache=True, nogil=True)
def lsd_range(problem, syndromes, keys, mask, params, out, gap, start, stop):
    """:func:`lsd_solve` (:class:`LsdProblem` ``problem``, :class:`LsdParams` ``params``) on the shots ``s``
    in ``start:stop`` with ``mask[s]``; ``keys`` (S, n); ``out``: :class:`LsdOut` (its rows of those
    shots are written); ``gap``: :class:`LsdGapWeights` (then ``out.weight``, ``code`` and
    ``weight_other`` are written too), or ``None``."""
    if gap is None:
        _lsd_shots(problem, None, syndromes, keys, mask, params, out, None, start, stop)
    else:
        track = LsdGapTrack(gap.class_code, gap.wgap, np.full(2, np.inf), np.zeros(1, dtype=np.uint64))
        _lsd_shots(problem, None, syndromes, keys, mask, params, out, track, start, stop)


@numba.njit(cache=True, nogil=True)
def lsd_shot_weights_range(problem, shot_weights, syndromes, keys, mask, params, out, start, stop):
    """:func:`lsd_range` without the gap, each shot with its own costs: row ``s`` of ``shot_weights`` (float64
    ``(S, n)``, ``ln(1/p)`` of the shot's priors, e.g. after heralds fired) stands for ``problem.weights``."""
    _lsd_shots(problem, shot_weights, syndromes, keys, mask, params, out, None, start, stop)


@numba.njit(cache=True, nogil=True)
def _lsd_shots(problem, shot_weights, syndromes, keys, mask, params, out, track, start, stop):
    """The loop of :func:`lsd_range`, with ``track`` an :class:`LsdGapTrack` or ``None``, and ``shot_weights``
    (``(S, n)``: each shot's costs) or ``None`` (``problem.weights`` for every shot)."""
    m = syndromes.shape[1]
    n = problem.col_ptr.shape[0] - 1
    st = lsd_scratch(m, n)
    want_norm = out.cluster_norm.shape[0] > 0
    want_work = out.work.shape[0] > 0
    for s in range(start, stop):
        if not mask[s]:
            continue
        for j in range(n):
            out.decision[s, j] = 0
        if shot_weights is None:
            ok = lsd_solve(problem, syndromes[s], keys[s], params, out.decision[s], st, track)
        else:
            shot = LsdProblem(problem.col_ptr, problem.row_idx, problem.chk_ptr, problem.chk_var, problem.colbits,
                              shot_weights[s])
            ok = lsd_solve(shot, syndromes[s], keys[s], params, out.decision[s], st, track)
        out.status[s] = 1 if ok else 0
        if want_work:
            out.work[s] = st.ops[0] + n  # the decision cleared
        if want_norm:
            out.cluster_norm[s] = st.stat[0]
        if track is not None:
            out.weight[s] = track.top_w[0]
            out.code[s] = track.top_code[0]
            out.weight_other[s] = track.top_w[1]
