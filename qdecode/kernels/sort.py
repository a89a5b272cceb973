"""Stable ascending argsorts of float keys, for OSD's reliability order and SCL's path metrics.

Three entry points, one result (equal keys keep index order, so every stable sort agrees):
:func:`stable_argsort` (indirect merge sort), :func:`stable_argsort_direct` (merges (key, index)
pairs by value, branch-free: OSD's hot per-shot sort) and :func:`stable_argsort_prefix` (a
prefix of the keys; rank counting for short ones).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["stable_argsort", "stable_argsort_direct", "stable_argsort_prefix"]


@numba.njit(cache=True, nogil=True)
def stable_argsort(keys, perm, tmp):
    """Stable ascending argsort of ``keys`` into ``perm`` (``tmp``: same-size int64 scratch).

    Insertion-sorted runs of 16 merged bottom-up; equal keys keep index order.
    """
    n = keys.shape[0]
    for i in range(n):
        perm[i] = i
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            x = perm[i]
            kx = keys[x]
            j = i - 1
            while j >= lo and keys[perm[j]] > kx:
                perm[j + 1] = perm[j]
                j -= 1
            perm[j + 1] = x
    src = perm
    dst = tmp
    in_perm = True
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if keys[src[j]] < keys[src[i]]:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        in_perm = not in_perm
        width *= 2
    if not in_perm:
        for i in range(n):
            perm[i] = src[i]


@numba.njit(cache=True, nogil=True)
def stable_argsort_direct(keys, perm, kbuf, ktmp, ptmp):
    """Same output as :func:`stable_argsort`, sorting (key, index) pairs by value (no indirection).

    ``kbuf``, ``ktmp``: float64 scratch, ``ptmp``: int64 scratch, all of ``keys``' length.
    """
    n = keys.shape[0]
    for i in range(n):
        kbuf[i] = keys[i]
        perm[i] = i
    run = 8
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            kx = kbuf[i]
            x = perm[i]
            j = i - 1
            while j >= lo and kbuf[j] > kx:
                kbuf[j + 1] = kbuf[j]
                perm[j + 1] = perm[j]
                j -= 1
            kbuf[j + 1] = kx
            perm[j + 1] = x
    ks = kbuf
    ps = perm
    kd = ktmp
    pd = ptmp
    in_perm = True
    width = run
    inf = np.inf
    nm1 = n - 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            # branch-free merge: an exhausted run reads as +inf (keys are finite); ties take the left run
            for k in range(lo, hi):
                ki = ks[min(i, nm1)] if i < mid else inf
                kj = ks[min(j, nm1)] if j < hi else inf
                tr = kj < ki
                pi_ = ps[min(i, nm1)]
                pj_ = ps[min(j, nm1)]
                kd[k] = kj if tr else ki
                pd[k] = pj_ if tr else pi_
                t = np.int64(tr)
                j += t
                i += 1 - t
        ks, kd = kd, ks
        ps, pd = pd, ps
        in_perm = not in_perm
        width *= 2
    if not in_perm:
        for i in range(n):
            perm[i] = ps[i]


@numba.njit(cache=True, nogil=True)
def stable_argsort_prefix(keys, n, order, tmp):
    """``order[:n]`` = stable ascending argsort of ``keys[:n]`` (``tmp``: int64 scratch of length >= ``n``).

    Rank counting up to 64 keys (SCL's 2L candidates), :func:`stable_argsort` above.
    """
    if n <= 64:
        # rank counting: branch-free compares (a sort's data-dependent branches mispredict)
        for i in range(n):
            ki = keys[i]
            r = 0
            for j in range(n):
                kj = keys[j]
                r += (kj < ki) | ((kj == ki) & (j < i))
            order[r] = i
        return
    stable_argsort(keys[:n], order[:n], tmp[:n])
