"""GDG kernels: BP with guided decimation guessing (Gong, Cammerer, Renes, arXiv:2403.18901).

Per shot (arXiv:2403.18901 as implemented in the authors' github.com/gongaa/SlidingWindowDecoder,
single-thread version):

1. **Pre-BP**: ``pre_iter`` flooding min-sum iterations on the whole problem (``nu`` clipped to
   +-50 before each check update, scaling ``alpha``), keeping the posteriors ``M_j`` of the last
   ``R = max(4, K)`` iterations in a ring ``hist[j, (t - 1) % R]`` (``K``: the posteriors an OSD key
   sums, :func:`reliability_key`; slots no iteration reached hold the priors). Converged -> return
   the hard decision.
2. **Shortening**: sort the columns by the sum of their last four posteriors ascending (most likely
   flipped first, stable) and keep the first ``new_n`` (default ``min(n, 2m)``); the others are fixed
   to 0. Summed in the order of a 4-slot ring whatever ``R``, so ``R`` changes no decision.
   Everything below runs on this shortened graph.
3. **Decimation state**: a variable is undecided (``vn = -1``) or fixed to 0/1; a check holds its
   residual parity (0/1) and residual degree, or is *cleared* (``-1``) once all its variables are
   fixed (a cleared check with residual parity 1 is a contradiction). **Peeling**: a check of
   residual degree 1 fixes its last variable to its residual parity, repeatedly.
4. **One step** of a branch: ``step_iter`` min-sum iterations on the residual graph (fixed
   variables and cleared checks drop out; a check's sign includes its residual parity; messages
   persist across the steps of a branch and are re-initialised to the priors when a branch is
   (re)loaded); converged when ``H e = s`` over the shortened graph. Otherwise **select**: over
   undecided variables of degree > 2, with the four stored posteriors ``h`` and their sum ``S``:
   aggressive decimation (off in low-error mode) fixes a variable to 0 when all ``h > 30`` and
   depth < 4, or when >= 3 of its active checks are unsatisfied and all ``h > 3``; to 1 when all
   ``h < A`` and ``S < A_sum`` (main branch ``A = -3``, ``A_sum = -12``, ``-16`` at depth 0;
   side branches ``A = 0``, ``A_sum = -10``); then peel. The **guess** is the variable with the
   smallest ``S`` among those whose four posteriors are all <= 0 (value 1), else the smallest
   ``S`` overall (value ``S <= 0``); it is fixed, then peel.
5. **Guessing tree**: the main branch walks up to ``max_step`` steps; at each depth below
   ``max_side_depth`` it pushes a snapshot with the *opposite* value of its guess. Snapshots are
   replayed in push order for at most ``side_step`` steps each; a replayed branch pushes its own
   alternatives only up to depth ``max_tree_depth``; branches deeper than the shallowest
   converged one are skipped, and a branch stops two steps past it. Capacity:
   ``(2^max_tree_depth - 1) * 2 + max_side_depth - max_tree_depth`` snapshots.
6. **Choice**: the converged branch with the least path metric ``PM = sum_{e_j = 1} lambda_j``;
   none converged -> the main branch's last decision, flagged ``converged = False``.

Schedule: :func:`gdg_decode` runs the branches one after the other in one thread (the authors'
single-thread schedule); batches are parallel over shots. :func:`gdg_decode_branch_parallel`
replays the queued alternatives of one shot on several threads with the same results (a
replayed branch is recorded, then applied in queue order; see :func:`_branch`, :func:`_commit`).
Deterministic: no randomness anywhere.

Speed (same arithmetic in the same order as a plain sweep, so bit-identical): each
min-sum call first compacts the residual graph (active edges only, messages copied in and out),
the check update is branch-free (signs and minima are data dependent, and mispredicted branches
were the largest cost), and the variable update is unrolled for degrees 1-3.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

_CLIP = 50.0
_BIG = 1e300  # "no other message" magnitude: finite, so sums of four posteriors stay finite


class GdgGraph(NamedTuple):
    """A problem ``H`` (m, n) as GDG's kernels walk it: both adjacency lists and the priors.

    The whole problem (:func:`gdg_decode`; ``qdecode.decoders.gdg.csr_csc_graph`` gives the first
    five arrays), or a shot's shortened graph (:func:`_short_graph`: views of :class:`GdgWork`, ``n``
    the kept columns).
    """

    chk_ptr: np.ndarray  # (m + 1,) int64: check c's variables are chk_vars[chk_ptr[c]:chk_ptr[c + 1]] (CSR)
    chk_vars: np.ndarray  # (nnz,) int64: variable indices, ascending per check
    var_ptr: np.ndarray  # (n + 1,) int64: variable j's checks are var_chks[var_ptr[j]:var_ptr[j + 1]] (CSC)
    var_chks: np.ndarray  # (nnz,) int64: check indices, ascending per variable
    csc_to_csr: np.ndarray  # (nnz,) int64: CSR position of each CSC entry (per-edge messages sit in CSR order)
    llr: np.ndarray  # (n,) float64: prior LLRs ln((1 - p) / p)


class GdgParams(NamedTuple):
    """GDG's parameters (module docstring; ``qdecode.decoders.gdg.GDG_PARAMS`` describes them)."""

    pre_iter: int  # int64: min-sum iterations of pre-BP
    step_iter: int  # int64: min-sum iterations per decimation step
    max_step: int  # int64: steps of the main branch
    max_tree_depth: int  # int64: depth up to which replayed branches queue their own alternatives
    max_side_depth: int  # int64: depth below which the main branch queues alternatives
    side_step: int  # int64: steps per replayed branch
    new_n_cap: int  # int64: columns kept by the shortening (<= 0: min(n, 2m))
    low_error: bool  # bool: low-error mode, no aggressive decimation
    alpha: float  # float64: min-sum scaling in (0, 1]
    max_iters: int  # int64: iteration budget of a shot, pre-BP included (<= 0: none; see gdg_decode)


class GdgOut(NamedTuple):
    """Per-shot outputs of the range kernels (:func:`gdg_decode_range`): rows ``start:stop`` are written."""

    decision: np.ndarray  # (S, n) uint8: the decoded error of each shot
    converged: np.ndarray  # (S,) bool: a branch (or pre-BP) satisfied the syndrome
    iterations: np.ndarray  # (S,) int64: min-sum iterations, pre-BP and every step of every branch
    branches: np.ndarray  # (S,) int64: branches explored (0 when pre-BP converged)


class BranchState(NamedTuple):
    """The decimation state of the branch being walked: views of one thread's :class:`GdgWork`
    (:func:`_branch_state`, ``n`` = the kept columns); pre-BP takes the same arrays whole (``n``
    columns, ``cn`` = the syndrome, ``err`` = the pre-BP decision, ``cdeg`` unused)."""

    vn: np.ndarray  # (n,) int8: variable values (-1 undecided)
    cn: np.ndarray  # (m,) int8: check residual parities (-1 cleared)
    cdeg: np.ndarray  # (m,) int64: check residual degrees
    err: np.ndarray  # (n,) uint8: the branch's hard decision
    unsat: np.ndarray  # (m,) uint8: checks unsatisfied by err ((H err)_c != s_c)
    nun: np.ndarray  # (1,) int64: the number of unsatisfied checks
    hist: np.ndarray  # (n, R) float64: posteriors of the last R min-sum iterations (ring, slot it % R; R = 4
    # on the shortened graph, pre-BP's ring R = max(4, K) keeps the K posteriors of the OSD key)
    v2c: np.ndarray  # (nnz,) float64: variable-to-check messages per CSR position (kept across a branch's steps)


class SweepGraph(NamedTuple):
    """The graph one :func:`_iterate` call sweeps, with its messages: the residual graph compacted to its
    active edges (:func:`_minsum`, arrays of :class:`MinSumScratch`) or, in pre-BP, the whole graph."""

    cptr: np.ndarray  # (nc + 1,) int64: listed check i owns the edges cptr[i]:cptr[i + 1] (CSR order)
    chk: np.ndarray  # (nc,) int64: the listed checks (problem indices)
    vptr: np.ndarray  # (nv + 1,) int64: listed variable i's edges are vmap[vptr[i]:vptr[i + 1]]
    var: np.ndarray  # (nv,) int64: the listed variables (problem indices)
    vmap: np.ndarray  # (E,) int64: edge positions, variable by variable in CSC order
    v2c: np.ndarray  # (E,) float64: variable-to-check messages per edge
    c2v: np.ndarray  # (E,) float64: check-to-variable messages per edge
    mags: np.ndarray  # (2,) float64 scratch: a check's two scaled output magnitudes


@numba.njit(cache=True, nogil=True)
def _recount(graph, st, syndrome):
    """``st.unsat[c] = (H st.err)_c != s_c`` from scratch; ``st.nun[0]`` = number of unsatisfied checks."""
    chk_ptr, chk_vars = graph.chk_ptr, graph.chk_vars
    err, unsat = st.err, st.unsat
    count = 0
    for c in range(chk_ptr.shape[0] - 1):
        par = syndrome[c]
        for e in range(chk_ptr[c], chk_ptr[c + 1]):
            par ^= err[chk_vars[e]]
        unsat[c] = par
        count += par
    st.nun[0] = count


@numba.njit(cache=True, nogil=True)
def _flip(j, var_ptr, var_chks, unsat, nun):
    """Variable ``j``'s decision flipped: toggle its checks' satisfaction (incremental ``H err + s``)."""
    for k in range(var_ptr[j], var_ptr[j + 1]):
        c = var_chks[k]
        unsat[c] ^= 1
        nun[0] += 1 if unsat[c] else -1


@numba.njit(cache=True, nogil=True)
def _iterate(sweep, graph, st, alpha, iters):
    """``iters`` flooding min-sum iterations over :class:`SweepGraph` ``sweep``; returns (converged, iterations).

    Check ``sweep.chk[i]`` owns the edges ``cptr[i]:cptr[i + 1]`` (messages ``v2c`` / ``c2v`` at those
    positions, in CSR order); variable ``sweep.var[i]`` reaches its edges through
    ``vmap[vptr[i]:vptr[i + 1]]`` (in CSC order). Every listed check and variable takes part.
    ``graph`` (:class:`GdgGraph`: the CSC serves the incremental syndrome bookkeeping, ``llr`` the
    priors) and ``st`` (:class:`BranchState`: residual parities ``cn``, posteriors of the call's
    iteration ``it = 0, 1, ...`` to ``hist[:, it % R]``, ``R = hist.shape[1]``; decisions to ``err``,
    ``unsat`` / ``nun``) are indexed by problem indices.
    """
    cptr, chks, vptr, vars_, vmap, v2c, c2v, mags = sweep
    var_ptr, var_chks, llr = graph.var_ptr, graph.var_chks, graph.llr
    cn, hist, err, unsat, nun = st.cn, st.hist, st.err, st.unsat, st.nun
    nc = chks.shape[0]
    nv = vars_.shape[0]
    ring = hist.shape[1]  # iteration it's posteriors go to slot it % ring (4, or pre-BP's wider ring)
    for it in range(iters):
        for i in range(nc):
            lo = cptr[i]
            hi = cptr[i + 1]
            sgn = cn[chks[i]]
            min1 = _BIG
            min2 = _BIG
            arg = -1
            # branch-free (signs and minima are data dependent, mispredicted branches dominated):
            # the least magnitude min1 at edge arg (the first one on ties) and the second least min2.
            # The fold of qdecode.kernels.minsum.fold_min, written out: that helper inlined here made
            # GDG 20-35% slower on the [[144,12,12]] DEM (benchmarks/README.md, "One min-sum core").
            for t in range(lo, hi):
                x = min(max(v2c[t], -_CLIP), _CLIP)
                v2c[t] = x
                a = abs(x)
                sgn ^= np.int8(x <= 0.0)
                arg = t if a < min1 else arg
                min2 = min(min2, max(a, min1))
                min1 = min(a, min1)
            mags[0] = alpha * min1
            mags[1] = alpha * min2
            for t in range(lo, hi):  # the sign flip is exact: -(alpha m) == (-alpha) m == (alpha m) * -1.0
                c2v[t] = mags[np.int64(t == arg)] * (1.0 - 2.0 * (sgn ^ np.int8(v2c[t] <= 0.0)))
        slot = it % ring
        for i in range(nv):
            j = vars_[i]
            lo = vptr[i]
            hi = vptr[i + 1]
            d = hi - lo
            if d == 3:  # the common degrees unrolled (same additions in the same order)
                t0 = vmap[lo]
                t1 = vmap[lo + 1]
                t2 = vmap[lo + 2]
                c0 = c2v[t0]
                c1 = c2v[t1]
                c2 = c2v[t2]
                post = ((llr[j] + c0) + c1) + c2
                v2c[t0] = post - c0
                v2c[t1] = post - c1
                v2c[t2] = post - c2
            elif d == 1:
                t0 = vmap[lo]
                c0 = c2v[t0]
                post = llr[j] + c0
                v2c[t0] = post - c0
            elif d == 2:
                t0 = vmap[lo]
                t1 = vmap[lo + 1]
                c0 = c2v[t0]
                c1 = c2v[t1]
                post = (llr[j] + c0) + c1
                v2c[t0] = post - c0
                v2c[t1] = post - c1
            else:
                post = llr[j]
                for u in range(lo, hi):
                    post += c2v[vmap[u]]
                for u in range(lo, hi):
                    t = vmap[u]
                    v2c[t] = post - c2v[t]
            hist[j, slot] = post
            hard = 1 if post <= 0.0 else 0
            if hard != err[j]:
                err[j] = hard
                _flip(j, var_ptr, var_chks, unsat, nun)
        if nun[0] == 0:
            return True, it + 1
    return False, iters


@numba.njit(cache=True, nogil=True)
def _minsum(graph, st, ms, alpha, iters):
    """``iters`` flooding min-sum iterations on the residual graph; returns (converged, iterations run).

    On :class:`GdgGraph` ``graph`` and :class:`BranchState` ``st``: ``vn[j] != -1`` (fixed) variables
    and ``cn[c] == -1`` (cleared) checks are skipped; an active check's sign starts from its
    residual parity ``cn[c]``. ``st.v2c`` holds the variable-to-check messages per CSR position
    (persisting across calls; clipped to +-50 when a check reads them). Posteriors go to
    ``hist[j, t % 4]``; the hard decision of undecided variables to ``err``, whose syndrome
    mismatch ``unsat`` / ``nun`` (consistent on entry) is kept up to date incrementally.

    The residual graph is first compacted into :class:`MinSumScratch` ``ms`` (the active edges of
    the active checks, contiguous per check in CSR order, with their messages; for every active
    variable, ascending, the compact positions of its active edges in CSC order), so that the
    iterations (:func:`_iterate`) run without activity tests over active edges only; the messages
    are copied back at the end. Same operations in the same order as a sweep of the full graph
    that skips inactive entries, hence bit-identical.
    """
    chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr = (graph.chk_ptr, graph.chk_vars, graph.var_ptr,
                                                        graph.var_chks, graph.csc_to_csr)
    vn, cn, v2c = st.vn, st.cn, st.v2c
    m_v2c = ms.v2c
    m_pos = ms.pos
    m_cptr = ms.cptr
    m_chk = ms.chk
    m_vptr = ms.vptr
    m_var = ms.var
    m_vmap = ms.vmap
    m_slot = ms.slot
    n = var_ptr.shape[0] - 1
    m = chk_ptr.shape[0] - 1
    nc = 0
    t = 0
    m_cptr[0] = 0
    for c in range(m):
        if cn[c] == -1:
            continue
        for e in range(chk_ptr[c], chk_ptr[c + 1]):
            if vn[chk_vars[e]] != -1:
                continue
            m_pos[t] = e
            m_slot[e] = t
            m_v2c[t] = v2c[e]
            t += 1
        m_chk[nc] = c
        nc += 1
        m_cptr[nc] = t
    ne = t
    nv = 0
    u = 0
    m_vptr[0] = 0
    for j in range(n):
        if vn[j] != -1:
            continue
        for k in range(var_ptr[j], var_ptr[j + 1]):
            if cn[var_chks[k]] != -1:
                m_vmap[u] = m_slot[csc_to_csr[k]]
                u += 1
        m_var[nv] = j
        nv += 1
        m_vptr[nv] = u
    sweep = SweepGraph(m_cptr, m_chk[:nc], m_vptr, m_var[:nv], m_vmap, m_v2c, ms.c2v, ms.mags)
    conv, done = _iterate(sweep, graph, st, alpha, iters)
    for t in range(ne):
        v2c[m_pos[t]] = m_v2c[t]
    return conv, done


@numba.njit(cache=True, nogil=True)
def _init_messages(graph, st):
    """``st.v2c`` = the prior LLR on every edge of an undecided variable."""
    var_ptr, csc_to_csr, llr = graph.var_ptr, graph.csc_to_csr, graph.llr
    vn, v2c = st.vn, st.v2c
    for j in range(var_ptr.shape[0] - 1):
        if vn[j] != -1:
            continue
        for k in range(var_ptr[j], var_ptr[j + 1]):
            v2c[csc_to_csr[k]] = llr[j]


# _set_value, _peel and _decide take the arrays themselves (the CSR / CSC of a GdgGraph, the decimation
# arrays of a BranchState), as _flip does: they run once per fixed variable or several times per step, and
# numba reference-counts every array a call passes or unpacks. Taking (graph, st) made GDG 4 % slower
# (_set_value) and a further 1-2 % (_peel, _decide; benchmarks/gdg_profile.py, [[144,12,12]] windows).
@numba.njit(cache=True, nogil=True)
def _set_value(j, value, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun) -> bool:
    """Fix variable ``j`` to ``value``; False on a contradiction."""
    if vn[j] != -1:
        return vn[j] == value
    vn[j] = value
    if err[j] != value:
        err[j] = value
        _flip(j, var_ptr, var_chks, unsat, nun)
    for k in range(var_ptr[j], var_ptr[j + 1]):
        c = var_chks[k]
        if cn[c] == -1 or cdeg[c] == 0:
            return False
        cdeg[c] -= 1
        if value:
            cn[c] ^= 1
        if cdeg[c] == 0:
            if cn[c] != 0:
                return False
            cn[c] = -1
    return True


@numba.njit(cache=True, nogil=True)
def _peel(chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun) -> bool:
    """Fix the last variable of every residual-degree-1 check to its parity, until none is left."""
    m = chk_ptr.shape[0] - 1
    while True:
        done = True
        for c in range(m):
            if cn[c] == -1 or cdeg[c] >= 2:
                continue
            if cdeg[c] <= 0:
                cn[c] = -1
                continue
            done = False
            last = -1
            for e in range(chk_ptr[c], chk_ptr[c + 1]):
                if vn[chk_vars[e]] == -1:
                    last = chk_vars[e]
                    break
            if last == -1:
                return False
            if not _set_value(last, np.int64(cn[c]), var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
                return False
        if done:
            return True


@numba.njit(cache=True, nogil=True)
def _select(graph, st, side, depth, low_error):
    """Aggressive decimation + guess choice (module docstring, step 4) on :class:`BranchState` ``st``.

    Returns ``(ok, guess, favoured value)``; ``ok`` False on a contradiction or when no
    undecided variable of degree > 2 is left (the branch ends).
    """
    chk_ptr, chk_vars, var_ptr, var_chks = graph.chk_ptr, graph.chk_vars, graph.var_ptr, graph.var_chks
    vn, cn, cdeg, err, unsat, nun, hist = st.vn, st.cn, st.cdeg, st.err, st.unsat, st.nun, st.hist
    A = 0.0 if side else -3.0
    A_sum = -10.0 if side else -12.0
    if depth == 0:
        A_sum = -16.0
    best = 1e308
    best_j = -1
    best_neg = 1e308
    best_neg_j = -1
    for j in range(var_ptr.shape[0] - 1):
        if vn[j] != -1 or var_ptr[j + 1] - var_ptr[j] <= 2:
            continue
        flips = 0
        for k in range(var_ptr[j], var_ptr[j + 1]):
            c = var_chks[k]
            flips += np.int64(cn[c] != -1) & np.int64(unsat[c])
        h0 = hist[j, 0]
        h1 = hist[j, 1]
        h2 = hist[j, 2]
        h3 = hist[j, 3]
        total = (((0.0 + h0) + h1) + h2) + h3
        lo = min(min(h0, h1), min(h2, h3))
        hi = max(max(h0, h1), max(h2, h3))
        all_c = lo >= 30.0  # all four >= 30
        all_d = lo >= 3.0
        all_a = hi <= A
        all_neg = hi <= 0.0
        if not low_error and all_c and depth < 4:
            if not _set_value(j, 0, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
                return False, -1, 0
        elif not low_error and flips >= 3 and all_d:
            if not _set_value(j, 0, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
                return False, -1, 0
        elif not low_error and all_a and total < A_sum:
            if not _set_value(j, 1, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
                return False, -1, 0
        else:
            if total < best:
                best = total
                best_j = j
            if all_neg and total < best_neg:
                best_neg = total
                best_neg_j = j
    if not _peel(chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
        return False, -1, 0
    if best_neg_j != -1:
        return True, best_neg_j, 1
    if best_j == -1:
        return False, -1, 0
    return True, best_j, (0 if best > 0.0 else 1)


@numba.njit(cache=True, nogil=True)
def _decide(j, value, chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun) -> bool:
    """Fix variable ``j`` to ``value`` and peel; False on a contradiction."""
    if not _set_value(j, value, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
        return False
    return _peel(chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun)


@numba.njit(cache=True, nogil=True)
def _push(queue, used, st, var, value, depth):
    """Snapshot ``st``'s decimation state into :class:`GuessQueue` entry ``used`` with the alternative
    ``var = value`` at ``depth``; returns ``used + 1``."""
    vn = st.vn
    queue.vn[used, :vn.shape[0]] = vn
    queue.cn[used] = st.cn
    queue.deg[used] = st.cdeg
    queue.var[used] = var
    queue.val[used] = value
    queue.depth[used] = depth
    return used + 1


@numba.njit(cache=True, nogil=True)
def _path_metric(llr, err, n) -> float:
    pm = 0.0
    for j in range(n):
        if err[j]:
            pm += llr[j]
    return pm


# events of a replayed branch step (:func:`_branch`), replayed by :func:`_commit`
_CONT = 0  # selected, decided, next step
_CONV = 1  # the step's min-sum satisfied the syndrome
_STOP = 2  # depth > (the branch's own bound on) min_depth + 2: stopped before selecting
_SELFAIL = 3  # selection hit a contradiction or found no variable
_DECFAIL = 4  # the decision (and peeling) hit a contradiction


class MinSumScratch(NamedTuple):
    """Scratch of one :func:`_minsum` call: the residual graph compacted to its active edges."""

    v2c: np.ndarray  # (nnz,) float64: variable-to-check messages, compact edge order
    c2v: np.ndarray  # (nnz,) float64: check-to-variable messages, compact edge order
    pos: np.ndarray  # (nnz,) int64: compact edge -> CSR position
    cptr: np.ndarray  # (m + 1,) int64: active check i owns compact edges cptr[i]:cptr[i + 1]
    chk: np.ndarray  # (m,) int64: the active checks
    vptr: np.ndarray  # (n + 1,) int64: active variable i's edges are vmap[vptr[i]:vptr[i + 1]]
    var: np.ndarray  # (n,) int64: the active variables
    vmap: np.ndarray  # (nnz,) int64: compact edge positions in CSC order
    slot: np.ndarray  # (nnz,) int64: CSR position -> compact edge
    ident: np.ndarray  # (max(n, m),) int64: 0, 1, 2, ... (pre-BP iterates on the full graph)
    mags: np.ndarray  # (2,) float64: a check's two scaled output magnitudes


class GuessQueue(NamedTuple):
    """Queued alternatives (snapshots of the decimation state, :func:`_push`), in push order."""

    vn: np.ndarray  # (max_guess, n) int8: variable values (-1 undecided)
    cn: np.ndarray  # (max_guess, m) int8: check residual parities (-1 cleared)
    deg: np.ndarray  # (max_guess, m) int64: check residual degrees
    var: np.ndarray  # (max_guess,) int64: the variable of the alternative
    val: np.ndarray  # (max_guess,) int8: its value
    depth: np.ndarray  # (max_guess,) int64: the depth the alternative starts at


class BranchRecords(NamedTuple):
    """Per-slot records of replayed branches (:func:`_branch`), applied by :func:`_commit`."""

    nst: np.ndarray  # (slots,) int64: steps recorded (-1: the alternative itself contradicted)
    its: np.ndarray  # (slots, side_step) int64: min-sum iterations of each step
    ev: np.ndarray  # (slots, side_step) int8: the event ending each step (_CONT, _CONV, ...)
    psh: np.ndarray  # (slots, side_step) int64: pending alternative queued at each step (-1: none)
    pm: np.ndarray  # (slots,) float64: path metric of the converged decision
    err: np.ndarray  # (slots, n) uint8: the converged decision
    p_vn: np.ndarray  # (slots, pushes, n) int8: pending alternatives, as GuessQueue
    p_cn: np.ndarray  # (slots, pushes, m) int8
    p_deg: np.ndarray  # (slots, pushes, m) int64
    p_var: np.ndarray  # (slots, pushes) int64
    p_val: np.ndarray  # (slots, pushes) int8


class GdgWork(NamedTuple):
    """Work buffers of :func:`gdg_decode` (sized for the whole problem; :func:`make_gdg_work`).

    The ``l*`` arrays hold the shortened graph (kept column ``v`` is column ``order[v]``);
    in the branch-parallel schedule the shared set's graph, queue, records and ``ctl`` are
    read by every thread, the others serve as one thread's scratch.

    numba's dispatch fingerprint of a named tuple is its class name and field names (not its
    module): a second ``GdgWork`` class in the same process (a copy of this module loaded for
    ``benchmarks/gdg_profile.py --baseline``) makes one of the two dispatch through Python typing,
    ~0.5 ms per call. Rename the copy's class to time it against this kernel.
    """

    v2c: np.ndarray  # (nnz,) float64: variable-to-check messages per CSR position
    ms: MinSumScratch
    hist: np.ndarray  # (n, R) float64: pre-BP posteriors of the last R >= 4 iterations (ring, iteration t >= 1
    # in slot (t - 1) % R; :func:`ring_slot`), the priors in slots no iteration reached
    lhist: np.ndarray  # (n, 4) float64: the same on the shortened graph
    hard: np.ndarray  # (n,) uint8: pre-BP hard decision
    lsum: np.ndarray  # (n,) float64: pre-BP posterior sums (the shortening's key)
    order: np.ndarray  # (n,) int64: kept columns, most likely flipped first
    lvar_ptr: np.ndarray  # (n + 1,) int64: CSC of the shortened graph
    lvar_chks: np.ndarray  # (nnz,) int64
    lchk_ptr: np.ndarray  # (m + 1,) int64: CSR of the shortened graph
    lchk_vars: np.ndarray  # (nnz,) int64
    lmap: np.ndarray  # (nnz,) int64: CSR position of each shortened CSC entry
    lllr: np.ndarray  # (n,) float64: priors of the kept columns
    vn: np.ndarray  # (n,) int8: variable values (-1 undecided)
    cn: np.ndarray  # (m,) int8: check residual parities (-1 cleared)
    cdeg: np.ndarray  # (m,) int64: check residual degrees
    err: np.ndarray  # (n,) uint8: the branch's hard decision
    best_err: np.ndarray  # (n,) uint8: the chosen decision
    unsat: np.ndarray  # (m,) uint8: checks unsatisfied by err
    cursor: np.ndarray  # (m + 1,) int64: CSR fill cursor; cursor[m] holds the unsatisfied count
    queue: GuessQueue
    rec: BranchRecords
    ctl: np.ndarray  # (16,) int64: shared decoding state, slots _USED, _CONVERGED, ... below
    ctlf: np.ndarray  # (1,) float64: path metric of the chosen decision


@numba.njit(cache=True, nogil=True)
def make_gdg_work(n, m, nnz, max_guess, slots, side_step, pushes, ring=4):
    """Scratch buffers (:class:`GdgWork`) for :func:`gdg_decode` (sized for the whole problem).

    ``slots`` branch records (:func:`_branch`) of ``side_step`` steps and ``pushes`` pending
    alternatives each; ``max_guess`` queued alternatives; pre-BP keeps its last ``max(4, ring)``
    posteriors (``ring`` >= K for an OSD key summing K of them, :func:`reliability_key`).
    """
    R = max(4, ring)
    f8, i8, u1, s1 = np.float64, np.int64, np.uint8, np.int8
    ms = MinSumScratch(np.zeros(nnz, f8), np.zeros(nnz, f8), np.zeros(nnz, i8), np.zeros(m + 1, i8),
                       np.zeros(m, i8), np.zeros(n + 1, i8), np.zeros(n, i8), np.zeros(nnz, i8), np.zeros(nnz, i8),
                       np.arange(max(n, m)), np.zeros(2, f8))
    queue = GuessQueue(np.zeros((max_guess, n), s1), np.zeros((max_guess, m), s1), np.zeros((max_guess, m), i8),
                       np.zeros(max_guess, i8), np.zeros(max_guess, s1), np.zeros(max_guess, i8))
    rec = BranchRecords(np.zeros(slots, i8), np.zeros((slots, side_step), i8), np.zeros((slots, side_step), s1),
                        np.zeros((slots, side_step), i8), np.zeros(slots, f8), np.zeros((slots, n), u1),
                        np.zeros((slots, pushes, n), s1), np.zeros((slots, pushes, m), s1),
                        np.zeros((slots, pushes, m), i8), np.zeros((slots, pushes), i8),
                        np.zeros((slots, pushes), s1))
    return GdgWork(
        np.zeros(nnz, f8), ms, np.zeros((n, R), f8), np.zeros((n, 4), f8), np.zeros(n, u1),
        np.zeros(n, f8), np.zeros(n, i8),
        np.zeros(n + 1, i8), np.zeros(nnz, i8), np.zeros(m + 1, i8), np.zeros(nnz, i8), np.zeros(nnz, i8),
        np.zeros(n, f8),
        np.zeros(n, s1), np.zeros(m, s1), np.zeros(m, i8), np.zeros(n, u1), np.zeros(n, u1),
        np.zeros(m, u1), np.zeros(m + 1, i8),
        queue, rec, np.zeros(16, i8), np.zeros(1, f8),
    )


# ``ctl`` slots: shared decoding state of the replay phase
_USED = 0  # alternatives queued
_CONVERGED = 1  # some branch converged
_MIN_DEPTH = 2  # depth of the shallowest converged branch (max_step if none)
_ITERS = 3  # BP iterations since pre-BP
_BRANCHES = 4  # branches explored (main included)
_NN = 5  # kept columns
# the main branch's own state while it runs (published by _main_finish)
_M_DEPTH = 6
_M_USED = 7
_M_ITERS = 8
_M_CONV = 9
_M_MIN_DEPTH = 10
_HALT = 11  # branch-parallel schedule: the budget is spent, in-flight replays may stop (their records go unused)
_LIVE_MD = 12  # the latest known bound on min_depth (never below the one the sequential schedule uses)
_LIVE_ITERS = 13  # the latest known iterations since pre-BP (never above the sequential schedule's)


@numba.njit(cache=True, nogil=True)
def _stable_smallest(values, k, order):
    """``order[:k]`` = the first ``k`` entries of ``np.argsort(values, kind="mergesort")``.

    The ``k`` least values in ascending order, ties in index order, found by an O(n) selection
    of the k-th least value and a stable sort of the ``k`` kept entries only (the shortening
    keeps ``k = 2m`` of ``n`` columns; a full sort of all ``n`` was ~10 % of a window decode).
    Entries of ``order`` past ``k`` are left as they are.
    """
    n = values.shape[0]
    if k >= n:
        order[:n] = np.argsort(values, kind="mergesort")
        return
    if k <= 0:
        return
    thr = np.partition(values, k - 1)[k - 1]
    below = np.empty(k, np.int64)
    c = 0
    for j in range(n):  # strictly below the k-th least value: fewer than k of them, in index order
        if values[j] < thr:
            below[c] = j
            c += 1
    perm = np.argsort(values[below[:c]], kind="mergesort")
    for i in range(c):
        order[i] = below[perm[i]]
    for j in range(n):  # then the ties at the k-th value, in index order, up to k in all
        if c >= k:
            break
        if values[j] == thr:
            order[c] = j
            c += 1


@numba.njit(cache=True, nogil=True)
def _short_graph(work, nn):
    """The shortened graph of :class:`GdgWork` ``work`` on its ``nn`` kept columns (a :class:`GdgGraph` of views)."""
    return GdgGraph(work.lchk_ptr, work.lchk_vars, work.lvar_ptr[: nn + 1], work.lvar_chks, work.lmap, work.lllr)


@numba.njit(cache=True, nogil=True)
def _branch_state(work, nn):
    """The decimation state in :class:`GdgWork` ``work`` on ``nn`` kept columns (a :class:`BranchState` of views)."""
    m = work.cn.shape[0]
    return BranchState(work.vn[:nn], work.cn, work.cdeg, work.err[:nn], work.unsat, work.cursor[m:m + 1],
                       work.lhist[:nn], work.v2c)


@numba.njit(cache=True, nogil=True, inline="always")
def ring_slot(t, R):
    """Slot ``(t - 1) mod R`` (in ``0 .. R-1``) of iteration ``t`` in a ring of ``R`` posteriors; iterations
    ``t <= 0`` (before the first) land in slots no iteration ``1 .. R - 1 + t`` wrote, which hold the priors."""
    return ((t - 1) % R + R) % R


@numba.njit(cache=True, nogil=True, inline="always")
def _last_with_slot(T, s, R):
    """The latest iteration ``t <= T`` whose slot in a ring of ``R`` is ``s`` (``t <= 0``: none ran, the prior)."""
    return T - ((T - 1 - s) % R + R) % R


@numba.njit(cache=True, nogil=True)
def _prepare(graph, syndrome, params, work, out):
    """Pre-BP, shortening, reset and first peel (module docstring steps 1-3) of the problem ``graph``.

    Returns ``(finished, converged, iterations)``; ``finished``: ``out`` holds the answer
    (zero syndrome, pre-BP converged, or the first peel contradicted), else the shortened graph
    and the decimation state in ``work`` are ready for :func:`_main_branch`.
    """
    chk_ptr, var_ptr, var_chks, csc_to_csr, llr = (graph.chk_ptr, graph.var_ptr, graph.var_chks, graph.csc_to_csr,
                                                   graph.llr)
    v2c, ms, hist, hard, lsum, order = work.v2c, work.ms, work.hist, work.hard, work.lsum, work.order
    lvar_ptr, lvar_chks, lchk_ptr, lchk_vars = work.lvar_ptr, work.lvar_chks, work.lchk_ptr, work.lchk_vars
    lmap, lllr, lhist, vn, cn, cdeg = work.lmap, work.lllr, work.lhist, work.vn, work.cn, work.cdeg
    err, best_err, unsat, cursor, ctl = work.err, work.best_err, work.unsat, work.cursor, work.ctl
    n = var_ptr.shape[0] - 1
    m = chk_ptr.shape[0] - 1
    nun = cursor[m:m + 1]  # one spare slot of the cursor buffer holds the unsatisfied-check count
    for j in range(n):
        out[j] = 0
    fired = False
    for c in range(m):
        if syndrome[c]:
            fired = True
            break
    if not fired:  # e = 0 is the answer: no BP iterations spent
        return True, True, 0
    # ---- 1. pre-BP on the whole graph (every variable undecided, every check active)
    R = hist.shape[1]
    for j in range(n):
        vn[j] = -1
        hard[j] = 0
        for t in range(R):
            hist[j, t] = llr[j]
    for c in range(m):
        cn[c] = syndrome[c]
    whole = BranchState(vn, cn, cdeg, hard, unsat, nun, hist, v2c)
    _recount(graph, whole, syndrome)
    _init_messages(graph, whole)
    ident = ms.ident  # every check and variable takes part: iterate on the full graph as it is
    sweep = SweepGraph(chk_ptr, ident[:m], var_ptr, ident[:n], csc_to_csr, v2c, ms.c2v, ms.mags)
    conv, iters = _iterate(sweep, graph, whole, params.alpha, params.pre_iter)
    if conv:
        for j in range(n):
            out[j] = hard[j]
        return True, True, iters
    # ---- 2. shortening: the new_n columns most likely flipped, by the sum of the last four posteriors
    # (slot s of a 4-slot ring: iteration t with (t - 1) % 4 == s; the same sums, in the same order, whatever R)
    s0 = ring_slot(_last_with_slot(iters, 0, 4), R)
    s1 = ring_slot(_last_with_slot(iters, 1, 4), R)
    s2 = ring_slot(_last_with_slot(iters, 2, 4), R)
    s3 = ring_slot(_last_with_slot(iters, 3, 4), R)
    for j in range(n):
        lsum[j] = hist[j, s0] + hist[j, s1] + hist[j, s2] + hist[j, s3]
    new_n_cap = params.new_n_cap
    nn = min(n, 2 * m) if new_n_cap <= 0 else min(n, new_n_cap)
    _stable_smallest(lsum, nn, order)
    lvar_ptr[0] = 0
    for v in range(nn):
        j = order[v]
        lllr[v] = llr[j]
        lhist[v, 0] = hist[j, s0]  # the history starts from the pre-BP posteriors of the kept column
        lhist[v, 1] = hist[j, s1]
        lhist[v, 2] = hist[j, s2]
        lhist[v, 3] = hist[j, s3]
        a = lvar_ptr[v]
        for k in range(var_ptr[j], var_ptr[j + 1]):
            lvar_chks[a] = var_chks[k]
            a += 1
        lvar_ptr[v + 1] = a
    for c in range(m + 1):
        lchk_ptr[c] = 0
    for k in range(lvar_ptr[nn]):
        lchk_ptr[lvar_chks[k] + 1] += 1
    for c in range(m):
        lchk_ptr[c + 1] += lchk_ptr[c]
        cursor[c] = lchk_ptr[c]
    for v in range(nn):  # ascending v: each check's list is sorted by shortened index
        for k in range(lvar_ptr[v], lvar_ptr[v + 1]):
            c = lvar_chks[k]
            lchk_vars[cursor[c]] = v
            lmap[k] = cursor[c]
            cursor[c] += 1
    # ---- 3. reset: all shortened variables undecided; checks of degree 0 are cleared
    for v in range(nn):
        vn[v] = -1
        err[v] = 0
        best_err[v] = 0
    for c in range(m):
        cdeg[c] = lchk_ptr[c + 1] - lchk_ptr[c]
        cn[c] = syndrome[c] if cdeg[c] > 0 else -1
    short = _short_graph(work, nn)
    st = _branch_state(work, nn)
    _recount(short, st, syndrome)
    if not _peel(short.chk_ptr, short.chk_vars, short.var_ptr, short.var_chks, st.vn, cn, cdeg, st.err, unsat, nun):
        for j in range(n):  # the pre-BP decision on the kept columns (as the authors do)
            out[j] = 0
        for v in range(nn):
            out[order[v]] = hard[order[v]]
        return True, False, iters
    _init_messages(short, st)
    ctl[_NN] = nn
    return False, False, iters


@numba.njit(cache=True, nogil=True)
def _main_init(max_step, work):
    """Reset the main branch's state (``ctl`` slots ``_M_*``) before its first step."""
    ctl = work.ctl
    ctl[_M_DEPTH] = 0
    ctl[_M_USED] = 0
    ctl[_M_ITERS] = 0
    ctl[_M_CONV] = 0
    ctl[_M_MIN_DEPTH] = max_step
    ctl[_HALT] = 0
    work.ctlf[0] = 1e308


@numba.njit(cache=True, nogil=True)
def _main_step(params, budget, push_return, work):
    """Steps of the main (greedy) branch; returns True once it has ended.

    Each step runs ``params.step_iter`` min-sum iterations, then selects, queues the alternative
    (at depths below ``max_side_depth``) and decides. With ``push_return`` it returns (False)
    right after a step that queued an alternative, so that another thread can replay it while
    the main branch goes on; else it runs to the end. ``budget`` > 0: the branch stops
    (unconverged) at the first step boundary where its iterations reach it.
    """
    step_iter, max_step, max_side_depth = params.step_iter, params.max_step, params.max_side_depth
    low_error, alpha = params.low_error, params.alpha
    ms, ctl, ctlf, queue = work.ms, work.ctl, work.ctlf, work.queue
    nn = ctl[_NN]
    max_guess = queue.var.shape[0]
    short = _short_graph(work, nn)
    st = _branch_state(work, nn)
    chk_ptr, chk_vars, var_ptr, var_chks = short.chk_ptr, short.chk_vars, short.var_ptr, short.var_chks
    vn, cn, cdeg, err, unsat, nun = st.vn, st.cn, st.cdeg, st.err, st.unsat, st.nun
    while ctl[_M_DEPTH] < max_step:
        depth = ctl[_M_DEPTH]
        ok, its = _minsum(short, st, ms, alpha, step_iter)
        ctl[_M_ITERS] += its
        if ok:
            ctl[_M_CONV] = 1
            ctl[_M_MIN_DEPTH] = depth
            ctlf[0] = _path_metric(short.llr, err, nn)
            return True
        if budget > 0 and ctl[_M_ITERS] >= budget:
            return True
        ok, g, fav = _select(short, st, False, depth, low_error)
        if not ok:
            return True
        pushed = False
        used = ctl[_M_USED]
        if depth < max_side_depth and depth <= ctl[_M_MIN_DEPTH] and used < max_guess:
            ctl[_M_USED] = _push(queue, used, st, g, 1 - fav, depth + 1)
            pushed = True
        if not _decide(g, fav, chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
            return True
        ctl[_M_DEPTH] = depth + 1
        if pushed and push_return:
            return ctl[_M_DEPTH] >= max_step
    return True


@numba.njit(cache=True, nogil=True)
def _main_finish(work):
    """Publish the ended main branch: its decision, queued alternatives, convergence and iterations."""
    best_err = work.best_err
    err = work.err
    ctl = work.ctl
    for v in range(ctl[_NN]):
        best_err[v] = err[v]
    ctl[_USED] = ctl[_M_USED]
    ctl[_CONVERGED] = ctl[_M_CONV]
    ctl[_MIN_DEPTH] = ctl[_M_MIN_DEPTH]
    ctl[_ITERS] = ctl[_M_ITERS]
    ctl[_BRANCHES] = 1


@numba.njit(cache=True, nogil=True)
def _main_branch(params, budget, work):
    """The main (greedy) branch in one call (:func:`_main_step` to the end, then :func:`_main_finish`).

    Sets ``ctl`` (queued alternatives, converged, min_depth, iterations, branches = 1),
    ``ctlf[0]`` (its path metric if it converged) and ``best_err`` (its final decision).
    """
    _main_init(params.max_step, work)
    _main_step(params, budget, False, work)
    _main_finish(work)


@numba.njit(cache=True, nogil=True)
def _branch(i, bound, budget, syndrome, params, shared, work, slot):
    """Replay queued alternative ``i`` of ``shared`` on the scratch of ``work``; record it in ``shared``'s slot.

    Bounds, read again at every step from ``shared``'s ``ctl`` (another thread may tighten them
    while the branch runs; the sequential schedule sets them once): ``b`` = min(``bound``,
    ``ctl[_LIVE_MD]``) >= the min_depth the sequential schedule has when it reaches ``i``, and
    ``ctl[_LIVE_ITERS]`` <= the iterations it has spent by then.

    The branch stops once ``depth > b + 2`` and records every alternative it would queue with
    ``depth <= b``; with ``budget`` > 0 it stops (``_STOP``) at the first step boundary where
    ``ctl[_LIVE_ITERS]`` + its own iterations reach the budget. A branch's steps never depend on
    min_depth otherwise (with ``step_iter >= 4`` not on the posterior history it inherits either),
    so the sequential branch is a prefix of the recorded one, which :func:`_commit` cuts with the
    exact min_depth and budget. It returns early, its record unused, once ``i`` starts deeper
    than ``b`` or ``ctl[_HALT]`` is set (the sequential schedule skips it then).
    """
    step_iter, side_step, max_tree_depth = params.step_iter, params.side_step, params.max_tree_depth
    low_error, alpha = params.low_error, params.alpha
    # the shared graph, queue, records and bounds
    ctl = shared.ctl
    nn = ctl[_NN]
    short = _short_graph(shared, nn)
    q = shared.queue
    st_vn, st_cn, st_deg, st_var, st_val, st_depth = q.vn, q.cn, q.deg, q.var, q.val, q.depth
    rec = shared.rec
    r_nst, r_its, r_ev, r_psh, r_pm, r_err = rec.nst, rec.its, rec.ev, rec.psh, rec.pm, rec.err
    p_vn, p_cn, p_deg, p_var, p_val = rec.p_vn, rec.p_cn, rec.p_deg, rec.p_var, rec.p_val
    # this thread's scratch
    ms = work.ms
    st = _branch_state(work, nn)
    chk_ptr, chk_vars, var_ptr, var_chks = short.chk_ptr, short.chk_vars, short.var_ptr, short.var_chks
    vn, cn, cdeg, err, unsat, nun = st.vn, st.cn, st.cdeg, st.err, st.unsat, st.nun
    start = st_depth[i]
    for v in range(nn):
        vn[v] = st_vn[i, v]
        err[v] = vn[v] if vn[v] != -1 else 0
    cn[:] = st_cn[i]
    cdeg[:] = st_deg[i]
    _recount(short, st, syndrome)
    _init_messages(short, st)
    r_nst[slot] = -1  # the alternative itself contradicted
    if not _decide(st_var[i], np.int64(st_val[i]), chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
        return
    npush = 0
    spent = 0
    for step in range(side_step):
        depth = start + step
        b = min(bound, ctl[_LIVE_MD])
        if ctl[_HALT] != 0 or start > b:  # the sequential schedule skips this alternative: the record is unused
            return
        ok, its = _minsum(short, st, ms, alpha, step_iter)
        r_nst[slot] = step + 1
        r_its[slot, step] = its
        r_psh[slot, step] = -1
        spent += its
        if ok:
            r_ev[slot, step] = _CONV
            r_pm[slot] = _path_metric(short.llr, err, nn)
            for v in range(nn):
                r_err[slot, v] = err[v]
            return
        if depth > b + 2 or (budget > 0 and ctl[_LIVE_ITERS] + spent >= budget):
            r_ev[slot, step] = _STOP
            return
        ok, g, fav = _select(short, st, True, depth, low_error)
        if not ok:
            r_ev[slot, step] = _SELFAIL
            return
        if depth <= max_tree_depth and depth <= b and npush < p_var.shape[1]:
            p_vn[slot, npush, :nn] = st.vn
            p_cn[slot, npush] = cn
            p_deg[slot, npush] = cdeg
            p_var[slot, npush] = g
            p_val[slot, npush] = 1 - fav
            r_psh[slot, step] = npush
            npush += 1
        if not _decide(g, fav, chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, unsat, nun):
            r_ev[slot, step] = _DECFAIL
            return
        r_ev[slot, step] = _CONT


@numba.njit(cache=True, nogil=True)
def _commit(i, slot, max_tree_depth, budget, work):
    """Apply queued alternative ``i`` (recorded in ``slot`` unless skipped) exactly as the sequential schedule.

    ``budget`` > 0 bounds ``ctl[_ITERS]`` (iterations after pre-BP): an alternative is skipped once
    they reach it, and a branch is cut at the first step boundary where they do.

    Entries must be committed in queue order. Skips ``i`` when it starts deeper than the
    current min_depth (the record is then ignored); otherwise counts the branch, cuts the
    record at the sequential stopping point, queues its alternatives and keeps the converged
    decision with the least path metric (the first one on ties).
    """
    best_err, ctl, ctlf = work.best_err, work.ctl, work.ctlf
    q = work.queue
    st_vn, st_cn, st_deg, st_var, st_val, st_depth = q.vn, q.cn, q.deg, q.var, q.val, q.depth
    rec = work.rec
    r_nst, r_its, r_ev, r_psh, r_pm, r_err = rec.nst, rec.its, rec.ev, rec.psh, rec.pm, rec.err
    p_vn, p_cn, p_deg, p_var, p_val = rec.p_vn, rec.p_cn, rec.p_deg, rec.p_var, rec.p_val
    nn = ctl[_NN]
    max_guess = st_var.shape[0]
    start = st_depth[i]
    md = ctl[_MIN_DEPTH]
    if start > md or (budget > 0 and ctl[_ITERS] >= budget):
        return
    ctl[_BRANCHES] += 1
    for step in range(max(0, r_nst[slot])):
        depth = start + step
        ctl[_ITERS] += r_its[slot, step]
        ev = r_ev[slot, step]
        if ev == _CONV:
            pm = r_pm[slot]
            if not ctl[_CONVERGED] or pm < ctlf[0]:
                if depth < md:
                    ctl[_MIN_DEPTH] = depth
                for v in range(nn):
                    best_err[v] = r_err[slot, v]
                ctlf[0] = pm
            ctl[_CONVERGED] = 1
            return
        if depth > md + 2 or ev == _STOP or ev == _SELFAIL or (budget > 0 and ctl[_ITERS] >= budget):
            return
        q = r_psh[slot, step]
        used = ctl[_USED]
        if q >= 0 and depth <= max_tree_depth and depth <= md and used < max_guess:
            st_vn[used, :nn] = p_vn[slot, q, :nn]
            st_cn[used] = p_cn[slot, q]
            st_deg[used] = p_deg[slot, q]
            st_var[used] = p_var[slot, q]
            st_val[used] = p_val[slot, q]
            st_depth[used] = depth + 1
            ctl[_USED] = used + 1
        if ev == _DECFAIL:
            return


@numba.njit(cache=True, nogil=True)
def _finish(work, out):
    """``out`` = the chosen decision on the kept columns (0 elsewhere)."""
    order = work.order
    best_err = work.best_err
    ctl = work.ctl
    for v in range(ctl[_NN]):
        out[order[v]] = best_err[v]


@numba.njit(cache=True, nogil=True)
def gdg_decode(graph, syndrome, params, work, out):
    """GDG for one shot (module docstring) on one thread. Writes ``out`` (n,) uint8; returns
    (converged, iterations, branches).

    Args:
        graph: :class:`GdgGraph` of the problem ``H`` (m, n) and its priors.
        syndrome: ``(m,)`` uint8.
        params: :class:`GdgParams`. Its ``max_iters`` is the iteration budget of the shot (pre-BP
            included; ``<= 0``: none). Pre-BP always runs; after it, branches stop at the first step
            boundary where the total reaches the budget and no further alternative starts (a deadline
            for real-time use; the choice is made among the branches finished so far).
        work: :class:`GdgWork` buffers (:func:`make_gdg_work`; at least one record slot of ``side_step`` steps and
            ``max(1, min(max_tree_depth, side_step))`` pushes).
        out: ``(n,)`` uint8, overwritten with the decision.
    """
    finished, conv, iters = _prepare(graph, syndrome, params, work, out)
    if finished:
        return conv, iters, 0
    max_iters, max_tree_depth = params.max_iters, params.max_tree_depth
    budget = max(1, max_iters - iters) if max_iters > 0 else 0
    _main_branch(params, budget, work)
    ctl = work.ctl
    st_depth = work.queue.depth
    i = 0
    while i < ctl[_USED]:  # replay the queued alternatives in queue order
        if budget > 0 and ctl[_ITERS] >= budget:
            break
        if st_depth[i] <= ctl[_MIN_DEPTH]:
            ctl[_LIVE_MD] = ctl[_MIN_DEPTH]
            ctl[_LIVE_ITERS] = ctl[_ITERS]
            _branch(i, ctl[_MIN_DEPTH], budget, syndrome, params, work, work, 0)
        _commit(i, 0, max_tree_depth, budget, work)
        i += 1
    _finish(work, out)
    return ctl[_CONVERGED] != 0, iters + ctl[_ITERS], ctl[_BRANCHES]


@numba.njit(cache=True, nogil=True)
def reliability_key(work, key, pre_iter, k):
    """``key`` (n,) float64 = ``sum_{t = T-k+1}^{T} M_j(t)``, the sum of the pre-BP posteriors of its last ``k``
    iterations (``T = pre_iter``; ascending = most likely flipped), of the latest shot decoded on ``work``
    whose pre-BP ran without converging (so it ran all ``pre_iter`` iterations): an OSD ordering for
    shots where no branch converged. ``k = 1``: the last posterior; ``k = 4`` with ``R = 4``: the
    shortening's key, the same sums bit for bit. Iterations ``t <= 0`` (``k > pre_iter``) stand for
    the prior ``lambda_j``, as in the shortening's key. The terms are added in ring-slot order.
    Needs ``1 <= k <= R``, ``work.hist`` (n, R) (``make_gdg_work(..., ring=k)``).
    """
    hist = work.hist
    R = hist.shape[1]
    if k < 1 or k > R:
        raise ValueError("reliability_key: k must lie in 1 .. the width of the pre-BP ring")
    for j in range(key.shape[0]):
        acc = 0.0
        for s in range(R):
            if _last_with_slot(pre_iter, s, R) > pre_iter - k:  # slot s holds one of the last k
                acc += hist[j, s]
        key[j] = acc


@numba.njit(cache=True, nogil=True)
def reliability_keys(graph, syndromes, shots, params, work, keys, k):
    """``keys[r]`` = :func:`reliability_key` (last ``k`` posteriors) of shot ``shots[r]`` of ``syndromes``, by
    running its pre-BP again on ``work`` (deterministic: the same sums as in its decode). For shots decoded
    on buffers that were reused since (batches); each must have a nonzero syndrome and a pre-BP
    that did not converge (true of every shot whose decode did not converge)."""
    out = np.zeros(graph.var_ptr.shape[0] - 1, dtype=np.uint8)
    for r in range(shots.shape[0]):  # the keys are set before the shortening, which params.new_n_cap sizes
        _prepare(graph, syndromes[shots[r]], params, work, out)
        reliability_key(work, keys[r], params.pre_iter, k)


def pushes_per_branch(max_tree_depth: int, side_step: int) -> int:
    """Alternatives one replayed branch can queue (it starts at depth >= 1)."""
    return max(1, min(int(max_tree_depth), int(side_step)))


@numba.njit(cache=True, nogil=True)
def gdg_decode_range(graph, syndromes, params, max_guess, out, start, stop):
    """:func:`gdg_decode` on shots ``start:stop`` of ``syndromes`` with fresh work buffers of ``max_guess``
    queued alternatives (releases the GIL); ``out``: :class:`GdgOut`."""
    n = graph.var_ptr.shape[0] - 1
    m = graph.chk_ptr.shape[0] - 1
    side_step = params.side_step
    work = make_gdg_work(n, m, graph.var_chks.shape[0], max_guess, 1, side_step,
                         max(1, min(params.max_tree_depth, side_step)))
    gdg_decode_range_work(graph, syndromes, params, work, out, start, stop)


@numba.njit(cache=True, nogil=True)
def gdg_decode_range_work(graph, syndromes, params, work, out, start, stop):
    """:func:`gdg_decode_range` on caller-owned ``work`` buffers (:func:`make_gdg_work`), e.g. kept by a
    decoder between the one-shot calls of a real-time stream (allocating them costs more than a
    typical window decode's pre-BP)."""
    decision, converged, iterations, branches = out
    for s in range(start, stop):
        ok, its, br = gdg_decode(graph, syndromes[s], params, work, decision[s])
        converged[s] = ok
        iterations[s] = its
        branches[s] = br


_SOLO_STEPS = 3  # branch-parallel schedule: main-branch steps before the other threads start


def gdg_decode_branch_parallel(graph, syndrome, params, works, out):
    """:func:`gdg_decode` with the queued alternatives replayed by ``len(works)`` threads; same results.

    ``works[0]``: :func:`make_gdg_work` buffers with at least ``2 * len(works)`` record slots (the
    shared state: shortened graph, queue, records, the chosen decision); every ``works[t]`` is
    also thread ``t``'s scratch. Requires ``step_iter >= 4`` (a replayed branch then depends only
    on its queue entry, not on the posterior history a previous branch left behind).

    Schedule: thread 0 walks the main branch (:func:`_main_step`), publishing each alternative
    as soon as it is queued; the other threads start after its first ``_SOLO_STEPS`` steps (and
    not at all if it ends within them: thread 0 then replays alone); meanwhile and afterwards
    every other thread takes the next published alternative in queue order (at most ``slots``
    ahead of the oldest one not yet applied) and replays it (:func:`_branch`) under the live bounds
    (the min_depth and the iterations spent so far, re-read every step; a spent budget halts the
    replays in flight); once the main branch has ended thread 0 replays
    too. Finished alternatives are applied in queue order after the main branch
    (:func:`_commit`, under a lock), which may queue more. A branch's bounds are never tighter
    than those the sequential schedule applies it with, so the commit reproduces the sequential
    schedule exactly: outputs, convergence flags, iteration and branch counts.
    """
    # long: the thread schedule (main branch, replays, in-order commits) shares its queue state
    import threading

    from qdecode.kernels.threads import shared_executor

    shared = works[0]
    finished, conv, iters = _prepare(graph, syndrome, params, shared, out)
    if finished:
        return conv, iters, 0
    max_step, max_tree_depth, max_iters = params.max_step, params.max_tree_depth, params.max_iters
    budget = max(1, max_iters - iters) if max_iters > 0 else 0
    ctl = shared.ctl
    st_depth = shared.queue.depth
    slots = shared.rec.nst.shape[0]
    _main_init(max_step, shared)
    ctl[_LIVE_MD] = max_step
    ctl[_LIVE_ITERS] = 0
    cond = threading.Condition()
    pos = [0, 0, 0, 0, 0]  # next to claim, next to apply, in flight, aborted, main branch ended
    pub = [0, max_step, 0]  # while the main branch runs: alternatives queued, min_depth, its iterations
    ready = [False] * slots

    def state():  # (queued, min_depth bound, iterations spent so far): call under the lock
        if pos[4]:
            return int(ctl[_USED]), int(ctl[_MIN_DEPTH]), int(ctl[_ITERS])
        return pub[0], pub[1], pub[2]

    def publish_live():  # under the lock: the bounds that replays in flight re-read at every step
        _, ctl[_LIVE_MD], ctl[_LIVE_ITERS] = state()

    def apply_ready():  # under the lock, after the main branch
        while pos[1] < pos[0] and ready[pos[1] % slots]:
            ready[pos[1] % slots] = False
            _commit(pos[1], pos[1] % slots, max_tree_depth, budget, shared)
            pos[1] += 1
        publish_live()
        if budget > 0 and ctl[_ITERS] >= budget:
            # the sequential schedule skips every later alternative: the result is final, so
            # replays in flight stop at their next step and nothing new starts
            ctl[_HALT] = 1

    def work_loop(scratch):
        while True:
            with cond:
                while True:
                    used, bound, spent = state()
                    i = pos[0]
                    if pos[3] or (pos[4] and (pos[1] >= used or ctl[_HALT]) and pos[2] == 0):
                        cond.notify_all()
                        return
                    if i < used and i < pos[1] + slots and not ctl[_HALT]:
                        break
                    cond.wait()
                pos[0] += 1
                pos[2] += 1
            if st_depth[i] <= bound and (budget == 0 or spent < budget):  # else certainly skipped
                _branch(i, bound, budget, syndrome, params, shared, scratch, i % slots)
            with cond:
                ready[i % slots] = True
                pos[2] -= 1
                if pos[4]:
                    apply_ready()
                cond.notify_all()

    def main_part():  # one _main_step call (up to the next queued alternative); True once the main branch ended
        done = _main_step(params, budget, True, shared)
        with cond:
            pub[0], pub[1], pub[2] = int(ctl[_M_USED]), int(ctl[_M_MIN_DEPTH]), int(ctl[_M_ITERS])
            publish_live()
            if done:
                _main_finish(shared)
                pos[4] = 1
                apply_ready()
            cond.notify_all()
        return done

    def main_loop():
        while not main_part():
            pass

    def worker(body, scratch):
        try:
            body(scratch)
        except BaseException:
            with cond:  # let the other threads return instead of waiting for this one
                pos[3] = 1
                cond.notify_all()
            raise

    # the first steps alone: most windows converge within them, and a worker would only add its
    # hand-off (~0.2 ms); the queued alternatives wait and are replayed in order all the same
    ended = False
    for _ in range(_SOLO_STEPS):
        ended = main_part()
        if ended:
            break
    futures = [] if ended else [shared_executor().submit(worker, work_loop, w) for w in works[1:]]
    try:
        worker(lambda _s: (None if ended else main_loop(), work_loop(shared)), shared)
    finally:
        for f in futures:
            f.result()
    _finish(shared, out)
    return ctl[_CONVERGED] != 0, iters + int(ctl[_ITERS]), int(ctl[_BRANCHES])
