"""Stable ascending argsorts of float keys, for OSD's reliability order and SCL's path metrics.

One merge sort, :func:`stable_argsort` (merges (key, index) pairs by value, branch-free: OSD's hot
per-shot sort), and :func:`stable_argsort_prefix` (a prefix of the keys; rank counting for short ones,
the merge sort for longer), with one result: equal keys keep index order.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["stable_argsort", "stable_argsort_prefix"]


@numba.njit(cache=True, nogil=True)
def stable_argsort(keys, perm, kbuf, ktmp, ptmp):
    """Stable ascending argsort of float ``keys`` (``(n,)``) into int64 ``perm``; equal keys keep index order.

    ``kbuf``, ``ktmp``: float64 scratch, ``ptmp``: int64 scratch, all of ``keys``' length. Sorts (key, index)
    pairs by value, not indices through the keys (no dependent loads): insertion-sorted runs of 8, then
    bottom-up merges. The merge is branch-free (a data-dependent branch mispredicts on random keys): it
    reads both run heads (indices clamped in range) and takes the right one when the left run is exhausted,
    or when the right run is not and its head is strictly smaller; ties take the left run, which keeps the
    sort stable. Infinite keys sort like any other.
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
    nm1 = n - 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                ii = min(i, nm1)
                jj = min(j, nm1)
                ki = ks[ii]
                kj = ks[jj]
                tr = (i >= mid) | ((j < hi) & (kj < ki))
                kd[k] = kj if tr else ki
                pd[k] = ps[jj] if tr else ps[ii]
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
def stable_argsort_prefix(keys, n, order, kbuf, ktmp, ptmp):
    """``order[:n]`` = stable ascending argsort of ``keys[:n]`` (scratch as :func:`stable_argsort`'s, of
    length >= ``n``).

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
    stable_argsort(keys[:n], order[:n], kbuf[:n], ktmp[:n], ptmp[:n])
