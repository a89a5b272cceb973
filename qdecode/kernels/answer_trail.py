"""The trail of a shot's answer: the moments a decoder's answer so far changed, for the *anytime* deadline policy.

A decoder stopped at time ``t`` answers with what it holds at ``t``: BP its hard decision after the last
finished iteration, Relay-BP its lightest converged leg so far, else leg 0's decision. A timed kernel that
records, for each shot, every moment this answer's observables change (the work clock and the
:func:`~qdecode.kernels.clock.ticks` since the shot started, with the answer's class code) lets one run
give the logical error rate at every deadline (``sims/latency_bins.py``, ``qdecode deadline --policy
anytime``).

Class codes (:func:`qdecode.decoders.confidence.class_codes`): the answer ``e`` has code
``XOR_{j: e_j = 1} class_code[j]``; with at most 64 observables bit ``i`` is observable ``i``, so the code
*is* the predicted observables.

Capacity 0 (:func:`no_answer_trail`) records nothing: the kernels' plain path passes it, and a test on
``trail.work.shape[0]`` keeps the recording out of their hot loops.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.clock import ticks


class AnswerTrail(NamedTuple):
    """One shot's trail (capacity ``cap``; 0: not recorded). Event ``i``: the work clock ``work[i]`` when the
    answer changed, :func:`~qdecode.kernels.clock.ticks` since the shot started ``ticks[i]`` (``ticks() - t0``),
    and the new answer's class code ``code[i]``."""

    class_code: np.ndarray  # (n,) uint64: the class code of each variable
    work: np.ndarray  # (cap,) int64
    ticks: np.ndarray  # (cap,) int64
    code: np.ndarray  # (cap,) uint64
    count: np.ndarray  # (1,) int64: events recorded
    t0: np.ndarray  # (1,) int64: ticks at the shot's start (set by the caller)


class AnswerTrailOut(NamedTuple):
    """The trails of ``S`` shots, ``cap`` events each (:func:`answer_trail_out`, :func:`shot_trail`)."""

    class_code: np.ndarray  # (n,) uint64, as AnswerTrail
    work: np.ndarray  # (S, cap) int64
    ticks: np.ndarray  # (S, cap) int64
    code: np.ndarray  # (S, cap) uint64
    count: np.ndarray  # (S,) int64


def answer_trail_out(class_code: np.ndarray, shots: int, cap: int) -> AnswerTrailOut:
    """Zeroed room for ``shots`` trails of ``cap`` events each (``class_code``: ``(n,)`` uint64)."""
    return AnswerTrailOut(np.ascontiguousarray(class_code, dtype=np.uint64), np.zeros((shots, cap), np.int64),
                          np.zeros((shots, cap), np.int64), np.zeros((shots, cap), np.uint64),
                          np.zeros(shots, np.int64))


@numba.njit(cache=True, nogil=True)
def no_answer_trail():
    """An empty :class:`AnswerTrail` (capacity 0): the kernels record nothing."""
    return AnswerTrail(np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64),
                       np.zeros(1, np.int64), np.zeros(1, np.int64))


@numba.njit(cache=True, nogil=True)
def shot_trail(trails, s, start_ticks):
    """Shot ``s``'s :class:`AnswerTrail`, a view of ``trails`` (:class:`AnswerTrailOut`); ``start_ticks``:
    ``(1,)`` int64 the caller sets to the shot's starting ticks. Capacity 0 gives :func:`no_answer_trail`'s
    layout with no room."""
    return AnswerTrail(trails.class_code, trails.work[s], trails.ticks[s], trails.code[s], trails.count[s:s + 1],
                       start_ticks)


@numba.njit(cache=True, nogil=True)
def answer_code(class_code, hard):
    """The class code of decision ``hard`` (``(n,)`` uint8): XOR of ``class_code[j]`` over ``hard[j] = 1``
    (O(n))."""
    code = np.uint64(0)
    for j in range(hard.shape[0]):
        if hard[j]:
            code ^= class_code[j]
    return code


@numba.njit(cache=True, nogil=True)
def record_answer(trail, work, code):
    """Append ``(work, ticks since trail.t0, code)`` to ``trail`` when it has room (O(1))."""
    c = trail.count[0]
    if c >= trail.work.shape[0]:
        return
    trail.work[c] = work
    trail.ticks[c] = ticks() - trail.t0[0]
    trail.code[c] = code
    trail.count[0] = c + 1
