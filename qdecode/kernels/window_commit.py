"""The commit step of a streaming sliding-window decoder, one shot at a time.

A window's inner decoder returns its estimate ``est`` over the window's columns; the window
commits the columns at ``commit_local`` and forwards their syndrome effect to the detectors of
later rounds (:mod:`qdecode.decoders.window` step 3, for one shot). Written as a kernel because a
window of a low-noise memory experiment commits only a handful of nonzero columns, so the loop
costs well under a microsecond, where the equivalent numpy calls (a gather, ``flatnonzero``, a
sparse product) cost several (``qdecode.sims.streaming`` counts it as harness time against the
inner decoder's own).
"""

from __future__ import annotations

import numba
import numpy as np

#: Header of a commit map: ``[c, fwd_ptr at, fwd_rows at, obs_ptr at, obs_idx at, prefix]``, then the
#: arrays; ``prefix`` is 1 when the committed columns are the window's first ``c`` (``commit_local ==
#: arange(c)``, the usual case: columns sorted by their first detector), so the kernel scans ``est``
#: directly (~0.05 us for 1,680 columns against ~1.2 us through the index array).
HEADER = 6


def commit_map(commit_local: np.ndarray, fwd_ptr: np.ndarray, fwd_rows: np.ndarray, obs_ptr: np.ndarray,
               obs_idx: np.ndarray) -> np.ndarray:
    """One int64 array holding a window's commit maps (one argument instead of five: each array
    argument costs numba's dispatcher a type check per call).

    Args:
        commit_local: int64 ``(c,)`` positions in the window's estimate of the committed columns.
        fwd_ptr, fwd_rows: CSR over the ``c`` committed columns (``(c + 1,)``, ``(nnz,)``): the
            detectors each column flips, relative to the window's first detector (all rounds,
            those after the window included).
        obs_ptr, obs_idx: CSR over the committed columns: the observables each flips.

    Returns:
        int64 ``(6 + 2c + 2 + len(fwd_rows) + len(obs_idx),)``: :data:`HEADER` then the arrays.
    """
    parts = [np.asarray(a, dtype=np.int64) for a in (commit_local, fwd_ptr, fwd_rows, obs_ptr, obs_idx)]
    starts = np.cumsum([HEADER] + [a.size for a in parts])
    prefix = int(np.array_equal(parts[0], np.arange(parts[0].size)))
    return np.concatenate([np.array([parts[0].size, *starts[1:5], prefix], dtype=np.int64), *parts])


@numba.njit(cache=True, nogil=True)
def commit_window(est: np.ndarray, maps: np.ndarray, offset: int, residual: np.ndarray, obs: np.ndarray,
                  next_lo: int, next_hi: int) -> int:
    """Commit one window's estimate for one shot, in place; say whether the next window has work.

    Args:
        est: uint8 ``(1, n_w)`` the inner decoder's estimate over the window's columns (its
            ``decode_batch`` output for the one shot, passed as it is).
        maps: int64, the window's :func:`commit_map`.
        offset: int, the global index of the window's first detector.
        residual: uint8 ``(m,)`` the shot's residual syndrome; the committed columns' detectors
            are flipped (XOR).
        obs: uint8 ``(k,)`` the shot's predicted observables; flipped likewise.
        next_lo, next_hi: the next window's detectors ``residual[next_lo:next_hi]`` (0, 0: none).

    Returns:
        1 if ``residual[next_lo:next_hi]`` is nonzero after the commit, else 0.

    Examples:
        >>> import numpy as np
        >>> res, obs = np.array([1, 1, 0, 1], np.uint8), np.zeros(1, np.uint8)
        >>> maps = commit_map([0, 1], [0, 2, 3], [0, 1, 2], [0, 1, 1], [0])
        >>> commit_window(np.array([[1, 0, 1]], np.uint8), maps, 1, res, obs, 1, 2)  # res[1:2] is 0 now
        0
        >>> res.tolist(), obs.tolist()
        ([1, 0, 1, 1], [1])
    """
    c = maps[0]
    fp, fr, op, oi, prefix = maps[1], maps[2], maps[3], maps[4], maps[5]
    row = est[0]
    if prefix:
        # scan 8 columns at a time: a low-noise window commits a few of ~1,000 columns
        words = c // 8
        packed = row[:8 * words].view(np.uint64)
        for w in range(words):
            if packed[w] != 0:
                for i in range(8 * w, 8 * w + 8):
                    if row[i] != 0:
                        _flip(i, maps, fp, fr, op, oi, offset, residual, obs)
        for i in range(8 * words, c):
            if row[i] != 0:
                _flip(i, maps, fp, fr, op, oi, offset, residual, obs)
    else:
        for i in range(c):
            if row[maps[HEADER + i]] != 0:
                _flip(i, maps, fp, fr, op, oi, offset, residual, obs)
    return _any_nonzero(residual, next_lo, next_hi)


@numba.njit(cache=True, nogil=True, inline="always")
def _flip(i: int, maps: np.ndarray, fp: int, fr: int, op: int, oi: int, offset: int, residual: np.ndarray,
          obs: np.ndarray) -> None:
    """Flip the detectors and observables of committed column ``i`` (``maps`` as :func:`commit_map`)."""
    for q in range(maps[fp + i], maps[fp + i + 1]):
        residual[offset + maps[fr + q]] ^= np.uint8(1)
    for q in range(maps[op + i], maps[op + i + 1]):
        obs[maps[oi + q]] ^= np.uint8(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _any_nonzero(residual: np.ndarray, lo: int, hi: int) -> int:
    """1 if ``residual[lo:hi]`` (uint8) holds a nonzero byte, else 0; 8 bytes at a time."""
    words = (hi - lo) // 8
    packed = residual[lo:lo + 8 * words].view(np.uint64)
    for w in range(words):
        if packed[w] != 0:
            return 1
    for j in range(lo + 8 * words, hi):
        if residual[j] != 0:
            return 1
    return 0
