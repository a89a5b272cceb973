"""GDG kernels: BP with guided decimation guessing (Gong, Cammerer, Renes, arXiv:2403.18901).

Per shot (research note ``qldpc.md`` §2.1; the authors' single-thread schedule):

1. **Pre-BP**: ``pre_iter`` flooding min-sum iterations on the whole problem (``nu`` clipped to
   +-50 before each check update, scaling ``alpha``), keeping the posteriors ``M_j`` of the last
   four iterations in a ring ``hist[j, t % 4]``. Converged -> return the hard decision.
2. **Shortening**: sort the columns by ``sum(hist[j])`` ascending (most likely flipped first,
   stable) and keep the first ``new_n`` (default ``min(n, 2m)``); the others are fixed to 0.
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

Branches run one after the other in one thread (the authors' single-thread schedule); batches
are parallel over shots. Deterministic: no randomness anywhere.
"""

from __future__ import annotations

import numba
import numpy as np

_CLIP = 50.0
_BIG = 1e300  # "no other message" magnitude: finite, so sums of four posteriors stay finite


@numba.njit(cache=True, nogil=True)
def _recount(chk_ptr, chk_vars, err, syndrome, unsat, nun):
    """``unsat[c] = (H err)_c != s_c`` from scratch; ``nun[0]`` = number of unsatisfied checks."""
    count = 0
    for c in range(chk_ptr.shape[0] - 1):
        par = syndrome[c]
        for e in range(chk_ptr[c], chk_ptr[c + 1]):
            par ^= err[chk_vars[e]]
        unsat[c] = par
        count += par
    nun[0] = count


@numba.njit(cache=True, nogil=True)
def _flip(j, var_ptr, var_chks, unsat, nun):
    """Variable ``j``'s decision flipped: toggle its checks' satisfaction (incremental ``H err + s``)."""
    for k in range(var_ptr[j], var_ptr[j + 1]):
        c = var_chks[k]
        unsat[c] ^= 1
        nun[0] += 1 if unsat[c] else -1


@numba.njit(cache=True, nogil=True)
def _minsum(chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr, llr,
            vn, cn, alpha, iters, v2c, c2v, hist, err, unsat, nun):
    """``iters`` flooding min-sum iterations on the residual graph; returns (converged, iterations run).

    ``vn[j] != -1`` (fixed) variables and ``cn[c] == -1`` (cleared) checks are skipped; an
    active check's sign starts from its residual parity ``cn[c]``. Posteriors go to
    ``hist[j, t % 4]``; the hard decision of undecided variables to ``err``, whose syndrome
    mismatch ``unsat`` / ``nun`` (consistent on entry) is kept up to date incrementally.
    """
    n = var_ptr.shape[0] - 1
    m = chk_ptr.shape[0] - 1
    for it in range(iters):
        for c in range(m):
            if cn[c] == -1:
                continue
            sgn = cn[c]
            min1 = _BIG
            min2 = _BIG
            arg = -1
            for e in range(chk_ptr[c], chk_ptr[c + 1]):
                if vn[chk_vars[e]] != -1:
                    continue
                x = v2c[e]
                if x > _CLIP:
                    x = _CLIP
                elif x < -_CLIP:
                    x = -_CLIP
                v2c[e] = x
                a = abs(x)
                if x <= 0.0:
                    sgn ^= 1
                if a < min1:
                    min2 = min1
                    min1 = a
                    arg = e
                elif a < min2:
                    min2 = a
            for e in range(chk_ptr[c], chk_ptr[c + 1]):
                if vn[chk_vars[e]] != -1:
                    continue
                mag = min2 if e == arg else min1
                s = sgn ^ (1 if v2c[e] <= 0.0 else 0)
                c2v[e] = -alpha * mag if s else alpha * mag
        for j in range(n):
            if vn[j] != -1:
                continue
            post = llr[j]
            for k in range(var_ptr[j], var_ptr[j + 1]):
                if cn[var_chks[k]] != -1:
                    post += c2v[csc_to_csr[k]]
            for k in range(var_ptr[j], var_ptr[j + 1]):
                if cn[var_chks[k]] != -1:
                    e = csc_to_csr[k]
                    v2c[e] = post - c2v[e]
            hist[j, it % 4] = post
            hard = 1 if post <= 0.0 else 0
            if hard != err[j]:
                err[j] = hard
                _flip(j, var_ptr, var_chks, unsat, nun)
        if nun[0] == 0:
            return True, it + 1
    return False, iters


@numba.njit(cache=True, nogil=True)
def _init_messages(var_ptr, csc_to_csr, llr, vn, v2c):
    for j in range(var_ptr.shape[0] - 1):
        if vn[j] != -1:
            continue
        for k in range(var_ptr[j], var_ptr[j + 1]):
            v2c[csc_to_csr[k]] = llr[j]


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
def _select(chk_ptr, chk_vars, var_ptr, var_chks, vn, cn, cdeg, err, hist, unsat, nun, side, depth, low_error):
    """Aggressive decimation + guess choice (module docstring, step 4).

    Returns ``(ok, guess, favoured value)``; ``ok`` False on a contradiction or when no
    undecided variable of degree > 2 is left (the branch ends).
    """
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
            if cn[c] != -1 and unsat[c]:
                flips += 1
        all_c = True
        all_d = True
        all_a = True
        all_neg = True
        total = 0.0
        for t in range(4):
            h = hist[j, t]
            total += h
            if h < 30.0:
                all_c = False
            if h < 3.0:
                all_d = False
            if h > A:
                all_a = False
            if h > 0.0:
                all_neg = False
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
def _push(used, vn, cn, cdeg, var, value, depth, st_vn, st_cn, st_deg, st_var, st_val, st_depth):
    """Snapshot the decimation state with the alternative ``var = value`` at ``depth``; returns ``used + 1``."""
    st_vn[used, :vn.shape[0]] = vn
    st_cn[used] = cn
    st_deg[used] = cdeg
    st_var[used] = var
    st_val[used] = value
    st_depth[used] = depth
    return used + 1


@numba.njit(cache=True, nogil=True)
def _path_metric(llr, err, n) -> float:
    pm = 0.0
    for j in range(n):
        if err[j]:
            pm += llr[j]
    return pm


@numba.njit(cache=True, nogil=True)
def _make_work(n, m, nnz, max_guess):
    """Per-thread scratch buffers for :func:`gdg_decode` (sized for the whole problem)."""
    f8, i8, u1 = np.float64, np.int64, np.uint8
    return (
        np.zeros(nnz, f8), np.zeros(nnz, f8), np.zeros((n, 4), f8), np.zeros((n, 4), f8), np.zeros(n, u1),
        np.zeros(n, f8), np.zeros(n, i8),
        np.zeros(n + 1, i8), np.zeros(nnz, i8), np.zeros(m + 1, i8), np.zeros(nnz, i8), np.zeros(nnz, i8),
        np.zeros(n, f8),
        np.zeros(n, np.int8), np.zeros(m, np.int8), np.zeros(m, i8), np.zeros(n, u1), np.zeros(n, u1),
        np.zeros(m, u1), np.zeros(m + 1, i8),
        np.zeros((max_guess, n), np.int8), np.zeros((max_guess, m), np.int8), np.zeros((max_guess, m), i8),
        np.zeros(max_guess, i8), np.zeros(max_guess, np.int8), np.zeros(max_guess, i8),
    )


@numba.njit(cache=True, nogil=True)
def gdg_decode(chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr, llr, syndrome,
               pre_iter, step_iter, max_step, max_tree_depth, max_side_depth, side_step, new_n_cap,
               low_error, alpha, work, out):
    """GDG for one shot (module docstring). Writes ``out`` (n,) uint8; returns (converged, iterations, branches).

    Args:
        chk_ptr, chk_vars: CSR of ``H`` (checks -> variables), int64.
        var_ptr, var_chks, csc_to_csr: CSC of ``H`` and the CSR position of each CSC entry, int64.
        llr: ``(n,)`` float64 prior LLRs ``ln((1-p)/p)``.
        syndrome: ``(m,)`` uint8.
        new_n_cap: columns kept by the shortening (``<= 0``: ``min(n, 2m)``).
        work: :func:`_make_work` buffers.
    """
    (v2c, c2v, hist, lhist, hard, lsum, order,
     lvar_ptr, lvar_chks, lchk_ptr, lchk_vars, lmap, lllr,
     vn, cn, cdeg, err, best_err, unsat, cursor,
     st_vn, st_cn, st_deg, st_var, st_val, st_depth) = work
    n = var_ptr.shape[0] - 1
    m = chk_ptr.shape[0] - 1
    max_guess = st_var.shape[0]
    nun = cursor[m:m + 1]  # one spare slot of the cursor buffer holds the unsatisfied-check count
    for j in range(n):
        out[j] = 0
    fired = False
    for c in range(m):
        if syndrome[c]:
            fired = True
            break
    if not fired:  # e = 0 is the answer: no BP iterations spent
        return True, 0, 0
    # ---- 1. pre-BP on the whole graph (every variable undecided, every check active)
    for j in range(n):
        vn[j] = -1
        hard[j] = 0
        for t in range(4):
            hist[j, t] = llr[j]
    for c in range(m):
        cn[c] = syndrome[c]
    _recount(chk_ptr, chk_vars, hard, syndrome, unsat, nun)
    _init_messages(var_ptr, csc_to_csr, llr, vn, v2c)
    conv, iters = _minsum(chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr, llr,
                          vn, cn, alpha, pre_iter, v2c, c2v, hist, hard, unsat, nun)
    if conv:
        for j in range(n):
            out[j] = hard[j]
        return True, iters, 0
    # ---- 2. shortening: the new_n columns most likely flipped
    for j in range(n):
        lsum[j] = hist[j, 0] + hist[j, 1] + hist[j, 2] + hist[j, 3]
    order[:] = np.argsort(lsum, kind="mergesort")
    nn = min(n, 2 * m) if new_n_cap <= 0 else min(n, new_n_cap)
    lvar_ptr[0] = 0
    for v in range(nn):
        j = order[v]
        lllr[v] = llr[j]
        for t in range(4):  # the history starts from the pre-BP posteriors of the kept column
            lhist[v, t] = hist[j, t]
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
    lvp = lvar_ptr[: nn + 1]
    # ---- 3. reset: all shortened variables undecided; checks of degree 0 are cleared
    for v in range(nn):
        vn[v] = -1
        err[v] = 0
        best_err[v] = 0
    for c in range(m):
        cdeg[c] = lchk_ptr[c + 1] - lchk_ptr[c]
        cn[c] = syndrome[c] if cdeg[c] > 0 else -1
    vnv = vn[:nn]
    errv = err[:nn]
    histv = lhist[:nn]
    _recount(lchk_ptr, lchk_vars, errv, syndrome, unsat, nun)
    if not _peel(lchk_ptr, lchk_vars, lvp, lvar_chks, vnv, cn, cdeg, errv, unsat, nun):
        for j in range(n):  # the pre-BP decision on the kept columns (as the authors do)
            out[j] = 0
        for v in range(nn):
            out[order[v]] = hard[order[v]]
        return False, iters, 0
    _init_messages(lvp, lmap, lllr, vnv, v2c)
    # ---- 4./5. main branch, then the stacked alternatives
    used = 0
    branches = 1
    converged = False
    min_pm = 1e308
    min_depth = max_step
    for depth in range(max_step):
        ok, its = _minsum(lchk_ptr, lchk_vars, lvp, lvar_chks, lmap, lllr,
                          vnv, cn, alpha, step_iter, v2c, c2v, histv, errv, unsat, nun)
        iters += its
        if ok:
            converged = True
            min_depth = depth
            min_pm = _path_metric(lllr, errv, nn)
            break
        ok, g, fav = _select(lchk_ptr, lchk_vars, lvp, lvar_chks, vnv, cn, cdeg, errv, histv, unsat, nun,
                             False, depth, low_error)
        if not ok:
            break
        if depth < max_side_depth and depth <= min_depth and used < max_guess:
            used = _push(used, vnv, cn, cdeg, g, 1 - fav, depth + 1, st_vn, st_cn, st_deg, st_var, st_val, st_depth)
        if not _decide(g, fav, lchk_ptr, lchk_vars, lvp, lvar_chks, vnv, cn, cdeg, errv, unsat, nun):
            break
    for v in range(nn):
        best_err[v] = err[v]
    i = 0
    while i < used:
        start = st_depth[i]
        if start > min_depth:
            i += 1
            continue
        branches += 1
        for v in range(nn):
            vn[v] = st_vn[i, v]
            err[v] = vn[v] if vn[v] != -1 else 0
        cn[:] = st_cn[i]
        cdeg[:] = st_deg[i]
        _recount(lchk_ptr, lchk_vars, errv, syndrome, unsat, nun)
        _init_messages(lvp, lmap, lllr, vnv, v2c)
        if not _decide(st_var[i], np.int64(st_val[i]), lchk_ptr, lchk_vars, lvp, lvar_chks, vnv, cn, cdeg, errv,
                       unsat, nun):
            i += 1
            continue
        for step in range(side_step):
            depth = start + step
            ok, its = _minsum(lchk_ptr, lchk_vars, lvp, lvar_chks, lmap, lllr,
                              vnv, cn, alpha, step_iter, v2c, c2v, histv, errv, unsat, nun)
            iters += its
            if ok:
                pm = _path_metric(lllr, errv, nn)
                if not converged or pm < min_pm:
                    if depth < min_depth:
                        min_depth = depth
                    for v in range(nn):
                        best_err[v] = err[v]
                    min_pm = pm
                converged = True
                break
            if depth > min_depth + 2:
                break
            ok, g, fav = _select(lchk_ptr, lchk_vars, lvp, lvar_chks, vnv, cn, cdeg, errv, histv, unsat, nun,
                                 True, depth, low_error)
            if not ok:
                break
            if depth <= max_tree_depth and depth <= min_depth and used < max_guess:
                used = _push(used, vnv, cn, cdeg, g, 1 - fav, depth + 1, st_vn, st_cn, st_deg, st_var, st_val,
                             st_depth)
            if not _decide(g, fav, lchk_ptr, lchk_vars, lvp, lvar_chks, vnv, cn, cdeg, errv, unsat, nun):
                break
        i += 1
    for v in range(nn):
        out[order[v]] = best_err[v]
    return converged, iters, branches


@numba.njit(cache=True, nogil=True)
def gdg_decode_range(chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr, llr, syndromes,
                     pre_iter, step_iter, max_step, max_tree_depth, max_side_depth, side_step, new_n_cap,
                     low_error, alpha, max_guess, out, converged_out, iters_out, branches_out, start, stop):
    """:func:`gdg_decode` on shots ``start:stop`` of ``syndromes`` (releases the GIL)."""
    n = var_ptr.shape[0] - 1
    m = chk_ptr.shape[0] - 1
    work = _make_work(n, m, var_chks.shape[0], max_guess)
    for s in range(start, stop):
        ok, its, br = gdg_decode(chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr, llr, syndromes[s],
                                 pre_iter, step_iter, max_step, max_tree_depth, max_side_depth, side_step,
                                 new_n_cap, low_error, alpha, work, out[s])
        converged_out[s] = ok
        iters_out[s] = its
        branches_out[s] = br
