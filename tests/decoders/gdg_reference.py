"""Plain-Python GDG, written from the algorithm description, for tests.

Sources: arXiv:2403.18901 and the authors' code, github.com/gongaa/SlidingWindowDecoder.

Deliberately a different shape from the numba kernel: adjacency lists of Python ints, dicts for
messages keyed by (check, variable), a class for the decimation state, snapshots as deep copies.
Floating-point operations happen in the same order as the kernel's (checks ascending, variables
ascending), so outputs must agree bit for bit.
"""

from __future__ import annotations

import copy

import numpy as np

CLIP = 50.0
BIG = 1e300


class State:
    def __init__(self, checks_of, vars_of, syndrome):
        self.value = {v: None for v in range(len(checks_of))}  # None = undecided
        self.parity = {}
        self.degree = {}
        self.cleared = set()
        for c, vs in enumerate(vars_of):
            self.degree[c] = len(vs)
            self.parity[c] = int(syndrome[c])
            if not vs:
                self.cleared.add(c)
        self.checks_of, self.vars_of = checks_of, vars_of

    def fix(self, v, val):
        if self.value[v] is not None:
            return self.value[v] == val
        self.value[v] = val
        for c in self.checks_of[v]:
            if c in self.cleared or self.degree[c] == 0:
                return False
            self.degree[c] -= 1
            self.parity[c] ^= val
            if self.degree[c] == 0:
                if self.parity[c]:
                    return False
                self.cleared.add(c)
        return True

    def peel(self):
        while True:
            progress = False
            for c in range(len(self.vars_of)):
                if c in self.cleared or self.degree[c] >= 2:
                    continue
                if self.degree[c] <= 0:
                    self.cleared.add(c)
                    continue
                progress = True
                free = [v for v in self.vars_of[c] if self.value[v] is None]
                if not free or not self.fix(free[0], self.parity[c]):
                    return False
            if not progress:
                return True


class Graph:
    def __init__(self, H, llr):
        H = np.asarray(H.toarray() if hasattr(H, "toarray") else H, dtype=np.uint8)
        self.m, self.n = H.shape
        self.vars_of = [[int(v) for v in np.flatnonzero(H[c])] for c in range(self.m)]
        self.checks_of = [[int(c) for c in np.flatnonzero(H[:, v])] for v in range(self.n)]
        self.llr = [float(x) for x in llr]


def minsum(g, st, syndrome, llr, iters, alpha, v2c, hist, err, posteriors=None):
    """Returns (converged, iterations); mutates v2c, hist, err; unsat as a list. ``posteriors`` (a list), if
    given, receives every iteration's posteriors (a list of n floats, undecided variables' only meaningful)."""
    c2v = {}
    unsat = [0] * g.m
    for it in range(iters):
        for c in range(g.m):
            if c in st.cleared:
                continue
            live = [v for v in g.vars_of[c] if st.value[v] is None]
            sgn = st.parity[c]
            mags = []
            for v in live:
                x = min(CLIP, max(-CLIP, v2c[(c, v)]))
                v2c[(c, v)] = x
                if x <= 0.0:
                    sgn ^= 1
                mags.append(abs(x))
            for i, v in enumerate(live):
                others = mags[:i] + mags[i + 1:]
                mag = min(others) if others else BIG
                s = sgn ^ (1 if v2c[(c, v)] <= 0.0 else 0)
                c2v[(c, v)] = -alpha * mag if s else alpha * mag
        for v in range(g.n):
            if st.value[v] is not None:
                continue
            active = [c for c in g.checks_of[v] if c not in st.cleared]
            post = llr[v]
            for c in active:
                post += c2v[(c, v)]
            for c in active:
                v2c[(c, v)] = post - c2v[(c, v)]
            hist[v][it % 4] = post
            err[v] = 1 if post <= 0.0 else 0
        if posteriors is not None:
            posteriors.append([h[it % 4] for h in hist])
        ok = True
        for c in range(g.m):
            par = int(syndrome[c])
            for v in g.vars_of[c]:
                par ^= err[v]
            unsat[c] = par
            ok = ok and not par
        if ok:
            return True, it + 1, unsat
    return False, iters, unsat


def select(g, st, hist, unsat, side, depth, low_error):
    A = 0.0 if side else -3.0
    A_sum = -16.0 if depth == 0 else (-10.0 if side else -12.0)
    best, best_v, best_neg, best_neg_v = 1e308, -1, 1e308, -1
    for v in range(g.n):
        if st.value[v] is not None or len(g.checks_of[v]) <= 2:
            continue
        flips = sum(1 for c in g.checks_of[v] if c not in st.cleared and unsat[c])
        h = hist[v]
        total = h[0] + h[1] + h[2] + h[3]
        if not low_error and all(x >= 30.0 for x in h) and depth < 4:
            if not st.fix(v, 0):
                return None
        elif not low_error and flips >= 3 and all(x >= 3.0 for x in h):
            if not st.fix(v, 0):
                return None
        elif not low_error and all(x <= A for x in h) and total < A_sum:
            if not st.fix(v, 1):
                return None
        else:
            if total < best:
                best, best_v = total, v
            if all(x <= 0.0 for x in h) and total < best_neg:
                best_neg, best_neg_v = total, v
    if not st.peel():
        return None
    if best_neg_v != -1:
        return best_neg_v, 1
    if best_v == -1:
        return None
    return best_v, (0 if best > 0.0 else 1)


def gdg_reference(H, llr, syndrome, *, pre_iter=8, step_iter=6, max_step=25, max_tree_depth=3,
                  max_side_depth=10, side_step=10, new_n=0, low_error=False, alpha=1.0, trace=None):
    """Returns (error (n,) uint8, converged, iterations, branches); ``trace`` (a dict), if given,
    receives ``"sums"``: the pre-BP posterior sums of the four last iterations (when pre-BP ran
    without converging), and ``"posteriors"``: pre-BP's posteriors, iteration by iteration."""
    full = Graph(H, llr)
    n, m = full.n, full.m
    out = np.zeros(n, dtype=np.uint8)
    if not np.any(syndrome):
        return out, True, 0, 0
    st = State(full.checks_of, full.vars_of, np.zeros(m, dtype=np.uint8))
    st.cleared = set()  # pre-BP: every check active, signs from the syndrome
    st.parity = {c: int(syndrome[c]) for c in range(m)}
    v2c = {(c, v): full.llr[v] for v in range(n) for c in full.checks_of[v]}
    hist = [[full.llr[v]] * 4 for v in range(n)]
    hard = [0] * n
    ok, iters, _ = minsum(full, st, syndrome, full.llr, pre_iter, alpha, v2c, hist, hard,
                          None if trace is None else trace.setdefault("posteriors", []))
    if ok:
        return np.array(hard, dtype=np.uint8), True, iters, 0
    sums = [h[0] + h[1] + h[2] + h[3] for h in hist]
    if trace is not None:
        trace["sums"] = sums
    order = sorted(range(n), key=lambda j: sums[j])  # Python's sort is stable
    nn = min(n, 2 * m) if new_n <= 0 else min(n, new_n)
    kept = order[:nn]
    Hd = np.asarray(H.toarray() if hasattr(H, "toarray") else H, dtype=np.uint8)
    g = Graph(Hd[:, kept], [full.llr[j] for j in kept])
    lhist = [list(hist[j]) for j in kept]
    st = State(g.checks_of, g.vars_of, syndrome)
    if not st.peel():
        for j in kept:
            out[j] = hard[j]
        return out, False, iters, 0

    def fresh():
        return {(c, v): g.llr[v] for v in range(g.n) if st.value[v] is None for c in g.checks_of[v]}

    def err_of(state):
        return [state.value[v] if state.value[v] is not None else 0 for v in range(g.n)]

    def sync(e):  # decided variables carry their value in the decision vector
        for u in range(g.n):
            if st.value[u] is not None:
                e[u] = st.value[u]

    def pm(e):
        total = 0.0
        for v in range(g.n):
            if e[v]:
                total += g.llr[v]
        return total

    stack = []
    cap = max(1, (2 ** max_tree_depth - 1) * 2 + max_side_depth - max_tree_depth)
    v2c = fresh()
    err = err_of(st)
    converged, min_pm, min_depth, branches = False, 1e308, max_step, 1
    for depth in range(max_step):
        ok, its, unsat = minsum(g, st, syndrome, g.llr, step_iter, alpha, v2c, lhist, err)
        iters += its
        if ok:
            converged, min_depth, min_pm = True, depth, pm(err)
            break
        pick = select(g, st, lhist, unsat, False, depth, low_error)
        sync(err)
        if pick is None:
            break
        v, fav = pick
        if depth < max_side_depth and depth <= min_depth and len(stack) < cap:
            stack.append((copy.deepcopy((st.value, st.parity, st.degree, st.cleared)), v, 1 - fav, depth + 1))
        fixed = st.fix(v, fav) and st.peel()
        sync(err)
        if not fixed:
            break
    best = list(err)
    i = 0
    while i < len(stack):
        snap, v, val, start = stack[i]
        i += 1
        if start > min_depth:
            continue
        branches += 1
        st.value, st.parity, st.degree, st.cleared = copy.deepcopy(snap)
        err = err_of(st)
        v2c = fresh()
        fixed = st.fix(v, val) and st.peel()
        sync(err)
        if not fixed:
            continue
        for step in range(side_step):
            depth = start + step
            ok, its, unsat = minsum(g, st, syndrome, g.llr, step_iter, alpha, v2c, lhist, err)
            iters += its
            if ok:
                p = pm(err)
                if not converged or p < min_pm:
                    min_depth = min(min_depth, depth)
                    best, min_pm = list(err), p
                converged = True
                break
            if depth > min_depth + 2:
                break
            pick = select(g, st, lhist, unsat, True, depth, low_error)
            sync(err)
            if pick is None:
                break
            u, fav = pick
            if depth <= max_tree_depth and depth <= min_depth and len(stack) < cap:
                stack.append((copy.deepcopy((st.value, st.parity, st.degree, st.cleared)), u, 1 - fav, depth + 1))
            fixed = st.fix(u, fav) and st.peel()
            sync(err)
            if not fixed:
                break
    for k, j in enumerate(kept):
        out[j] = best[k]
    return out, converged, iters, branches
