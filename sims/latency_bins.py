"""Latency histograms in ``custom_counts``, and the logical error rate under a deadline they give.

A sweep run with ``--latency`` (:mod:`qdecode.sims.sampling`) decodes in real-time mode
(``Decoder.predict_observables_timed``: one shot after another, each timed) and counts every decoded
shot in one bin of each of its two clocks, and the errors among them, as additive ``custom_counts``:

* the *wall* clock, the shot's decoding time in nanoseconds (``DecodeInfo.wall_ns``; how it is
  measured is the decoder's ``wall_method``);
* the *work* clock, the decoder's deterministic count (``DecodeInfo.work``, in the unit of its
  ``work_unit``); decoders without one record the wall clock only.

Bins are log-spaced, :data:`BINS_PER_OCTAVE` per factor of two (steps of 9 %), on one grid for every
row so that ``combine`` sums them: bin ``k >= 1`` holds the values ``v`` with
``2^((k-1)/8) < v <= 2^(k/8)``, bin 0 the values ``v <= 1``. Keys: ``wall<k>`` / ``work<k>`` count the
shots, ``wall<k>E`` / ``work<k>E`` the errors among them (``wall160`` holds times in
``(0.917, 1.0] ms``). Bins without shots are not written. For a row of a latency sweep the shot bins
of each clock sum to ``shots - discards`` (the decoded shots) and the ``E`` bins to ``errors``. The
scheme is recorded in the json_metadata as ``latency_bins = LATENCY_BINS_TAG``, which enters the
strong_id: rows with and without histograms never pool.

The logical error rate under a deadline ``t`` (the *miss* policy: a late shot fails, the definition
``LER(t) = P(latency > t or logical error)`` of CUDA-Q QEC's Relay-BP study)::

    in_time(t)  = sum of <clock><k>  over the bins with upper edge <= t
    wrong(t)    = sum of <clock><k>E over the same bins
    failures(t) = (n - in_time(t)) + wrong(t)        n = shots - discards
    LER(t)      = failures(t) / n

so ``LER(inf) = errors / n``, the row's plain rate. Deadlines are rounded down to the grid: a bin
counts as in time only when all of it is (a 9 % resolution, conservative). Percentiles are
nearest-rank on the histogram: the upper edge of the bin holding the ``ceil(q n)``-th shot.

The *anytime* policy: a late shot takes the decoder's best answer so far (BP: the hard decision of its
last finished iteration; Relay-BP: its best converged leg, else leg 0's decision); a shot with no answer
yet fails. Decoders that record the
*trail* of their answer (``DecodeInfo.extra``: ``trail_work`` / ``trail_wall_ns`` int64 / float64
``(S, T)``, the clock values at which the answer changed, ``trail_obs`` uint64 ``(S, T)`` the
observables of the answer from then on, bit ``i`` = observable ``i``, and ``trail_len`` ``(S,)``)
add, per clock, the key ``<clock>_trail`` (the shots whose trail was recorded) and, for every grid
index ``k``, ``<clock><k>R``: the shots late at edge ``k`` whose answer at edge ``k`` is right (the
*rescued* shots). Then ``failures_anytime(t) = failures(t) - rescued(k*)`` with ``k*`` the grid index
of ``t`` (:func:`grid_index`).

Examples:
    >>> import numpy as np
    >>> counts = latency_bin_counts(np.array([1000.0, 1000.0, 2000.0, 64000.0]), np.array([1, 1, 4, 90]),
    ...                             np.array([False, True, False, False]))
    >>> sorted(counts.items())  # doctest: +NORMALIZE_WHITESPACE
    [('wall128', 1), ('wall80', 2), ('wall80E', 1), ('wall88', 1),
     ('work0', 2), ('work0E', 1), ('work16', 1), ('work52', 1)]
    >>> wall = histogram(counts, "wall")
    >>> wall.quantile(0.5), wall.quantile(1.0)
    (1024.0, 65536.0)
    >>> [deadline_failures(wall, 4, t) for t in (500.0, 1500.0, 3000.0, np.inf)]
    [4, 3, 2, 1]
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Mapping, Sequence

import numpy as np

from qdecode.errors import InputError
from qdecode.sims.stats import Fit, fit_binomial

__all__ = ["BINS_PER_OCTAVE", "CLOCKS", "LATENCY_BINS_KEY", "LATENCY_BINS_TAG", "DeadlinePoint", "LatencyHistogram",
           "anytime_counts", "bin_index", "check_histogram", "deadline_curve", "deadline_failures", "grid_index",
           "has_latency_bins", "histogram", "latency_bin_counts", "rescued_at", "row_histograms", "summary_quantiles",
           "upper_edge"]

#: Bins per factor of two of either clock (upper edges ``2^(k / BINS_PER_OCTAVE)``).
BINS_PER_OCTAVE = 8
#: The two clocks, in key order: ``wall`` (ns) and ``work`` (the decoder's unit).
CLOCKS = ("wall", "work")
#: The json_metadata key that records the bin scheme of a latency row (part of its strong_id).
LATENCY_BINS_KEY = "latency_bins"
#: Its value: upper bin edges ``2^(k/8)`` (ns for the wall clock).
LATENCY_BINS_TAG = f"2^(k/{BINS_PER_OCTAVE})"

_KEY = re.compile(r"(wall|work)(\d+)(E?)")
_RESCUED = re.compile(r"(wall|work)(\d+)R")


def bin_index(values: np.ndarray) -> np.ndarray:
    """int64 bin of each value: ``ceil(8 log2 v)`` for ``v > 1``, 0 for ``v <= 1`` (NaN is refused)."""
    v = np.asarray(values, dtype=np.float64)
    if np.isnan(v).any():
        raise InputError("a latency or work value is NaN")
    k = np.ceil(BINS_PER_OCTAVE * np.log2(np.maximum(v, 1.0)))
    return k.astype(np.int64)


def upper_edge(k: np.ndarray | int) -> np.ndarray | float:
    """The upper edge ``2^(k/8)`` of bin ``k`` (ns for the wall clock)."""
    return np.exp2(np.asarray(k, dtype=np.float64) / BINS_PER_OCTAVE)


def latency_bin_counts(wall_ns: np.ndarray | None, work: np.ndarray | None, errors: np.ndarray) -> dict[str, int]:
    """The latency histograms of one batch of decoded shots, as ``custom_counts``.

    Args:
        wall_ns: float ``(S,)`` each shot's decoding time in ns, or None (not measured).
        work: integer ``(S,)`` each shot's work clock, or None (the decoder has none).
        errors: bool ``(S,)`` whether the shot's predicted observables were wrong.
    """
    errors = np.asarray(errors, dtype=bool)
    out: dict[str, int] = {}
    for clock, values in zip(CLOCKS, (wall_ns, work)):
        if values is None:
            continue
        k = bin_index(values)
        if k.shape != errors.shape:
            raise InputError(f"{clock} clock has shape {k.shape}, errors {errors.shape}")
        bins, shots = np.unique(k, return_counts=True)
        wrong = np.bincount(np.searchsorted(bins, k[errors]), minlength=bins.size)
        for b, n, e in zip(bins.tolist(), shots.tolist(), wrong.tolist()):
            out[f"{clock}{b}"] = n
            if e:
                out[f"{clock}{b}E"] = e
    return out


def has_latency_bins(custom_counts: Mapping[str, int]) -> bool:
    """Whether ``custom_counts`` holds a latency histogram (some ``wall<k>`` or ``work<k>`` key)."""
    return any(_KEY.fullmatch(key) for key in custom_counts)


@dataclasses.dataclass(frozen=True)
class LatencyHistogram:
    """One clock's histogram of one row.

    Attributes:
        clock: ``"wall"`` (ns) or ``"work"``.
        edges: float64 ``(B,)`` ascending upper bin edges of the occupied bins (for the integer work
            clock, their floors: the largest count a bin can hold).
        shots: int64 ``(B,)`` shots per bin; errors: int64 ``(B,)`` errors among them.
    """

    clock: str
    edges: np.ndarray
    shots: np.ndarray
    errors: np.ndarray

    @property
    def total(self) -> int:
        """Shots in the histogram."""
        return int(self.shots.sum())

    def quantile(self, q: float) -> float:
        """Nearest-rank quantile ``0 < q <= 1``: the upper edge of the bin holding the ``ceil(q n)``-th shot."""
        if not 0 < q <= 1:
            raise InputError(f"quantile must lie in (0, 1], got {q!r}")
        rank = max(1, math.ceil(q * self.total - 1e-9))
        return float(self.edges[int(np.searchsorted(np.cumsum(self.shots), rank))])

    def in_time(self, deadline: float) -> tuple[int, int]:
        """``(shots, errors)`` in the bins whose upper edge is at most ``deadline`` (module docstring)."""
        upto = int(np.searchsorted(self.edges, deadline * (1 + 1e-12), side="right"))
        return int(self.shots[:upto].sum()), int(self.errors[:upto].sum())


def histogram(custom_counts: Mapping[str, int], clock: str) -> LatencyHistogram | None:
    """The ``clock`` histogram (``"wall"`` or ``"work"``) of a row's ``custom_counts``, None if it has none."""
    if clock not in CLOCKS:
        raise InputError(f"clock must be one of {CLOCKS}, got {clock!r}")
    shots: dict[int, int] = {}
    errors: dict[int, int] = {}
    for key, value in custom_counts.items():
        m = _KEY.fullmatch(key)
        if m and m.group(1) == clock:
            (errors if m.group(3) else shots)[int(m.group(2))] = int(value)
    if not shots:
        return None
    bins = np.array(sorted(shots), dtype=np.int64)
    edges = upper_edge(bins)
    if clock == "work":  # integer counts: a bin's largest value is the floor of its edge
        edges = np.floor(edges * (1 + 1e-12))
    return LatencyHistogram(clock, edges, np.array([shots[b] for b in bins], dtype=np.int64),
                            np.array([errors.get(b, 0) for b in bins], dtype=np.int64))


def deadline_failures(hist: LatencyHistogram, decoded: int, deadline: float) -> int:
    """Failures under ``deadline`` with the miss policy: late shots plus wrong shots in time (module docstring).

    ``decoded`` is the row's ``shots - discards``; ``deadline`` is in the clock's unit (``inf``: no deadline).
    """
    on_time, wrong = hist.in_time(deadline)
    return decoded - on_time + wrong


def check_histogram(hist: LatencyHistogram, decoded: int, errors: int, where: str) -> None:
    """Refuse a histogram that does not cover its row: every decoded shot and every error, once."""
    got_errors = int(hist.errors.sum())
    if hist.total != decoded or got_errors != errors:
        raise InputError(f"{where}: the {hist.clock} histogram holds {hist.total} shots and {got_errors} errors but "
                         f"the row has {decoded} decoded shots and {errors} errors (rows recorded without "
                         f"--latency pooled in, or an edited file)")


def summary_quantiles(hist: LatencyHistogram, qs: Sequence[float] = (0.5, 0.99, 0.999)) -> dict[str, float]:
    """``{"p50": ..., "p99": ..., "p99.9": ..., "max": ...}`` of a histogram (nearest rank, bin upper edges)."""
    out = {f"p{100 * q:g}": hist.quantile(q) for q in qs}
    out["max"] = float(hist.edges[-1])
    return out


@dataclasses.dataclass(frozen=True)
class DeadlinePoint:
    """The miss-policy logical error rate of one row under one deadline.

    Attributes:
        deadline: in the clock's unit (ns for the wall clock; ``inf``: none).
        decoded: the row's decoded shots (``shots - discards``); late: of them, those past the deadline.
        failures: late shots plus wrong shots in time; fit: :func:`~qdecode.sims.stats.fit_binomial` of
            ``failures / decoded`` (sinter's band).
    """

    deadline: float
    decoded: int
    late: int
    failures: int
    fit: Fit

    @property
    def rate(self) -> float:
        """``failures / decoded``."""
        return self.failures / self.decoded if self.decoded else float("nan")


def row_histograms(row) -> dict[str, LatencyHistogram]:
    """The clocks' histograms of a stats row (``StatsRow``), each checked against the row
    (:func:`check_histogram`): ``{"wall": ..., "work": ...}``, the clocks it recorded."""
    decoded = row.shots - row.discards
    out = {}
    for clock in CLOCKS:
        hist = histogram(row.custom_counts or {}, clock)
        if hist is not None:
            check_histogram(hist, decoded, row.errors, f"row {row.strong_id[:12]} ({row.decoder})")
            out[clock] = hist
    return out


def deadline_curve(hist: LatencyHistogram, decoded: int, deadlines: Sequence[float],
                   max_likelihood_factor: float = 1e3, rescued: Mapping[int, int] | None = None
                   ) -> list[DeadlinePoint]:
    """:class:`DeadlinePoint` of each deadline, in the given order: the miss policy, or with ``rescued``
    (:func:`rescued_at`) the anytime policy (module docstring)."""
    out = []
    for t in deadlines:
        failures = deadline_failures(hist, decoded, t)
        if rescued is not None and t != math.inf:
            failures -= rescued.get(grid_index(t, hist.clock), 0)
        on_time, _ = hist.in_time(t)
        fit = fit_binomial(num_shots=decoded, num_hits=failures, max_likelihood_factor=max_likelihood_factor)
        out.append(DeadlinePoint(float(t), decoded, decoded - on_time, failures, fit))
    return out


def grid_index(deadline: float, clock: str) -> int:
    """The largest bin index ``k`` whose whole bin lies within ``deadline`` (upper edge ``2^(k/8)``, floored
    for the integer work clock); -1 below bin 0's edge."""
    if deadline == math.inf:
        return 1 << 30
    if deadline < 1:
        return -1
    k = int(math.floor(BINS_PER_OCTAVE * math.log2(deadline)))
    edge = (lambda i: math.floor(2 ** (i / BINS_PER_OCTAVE) * (1 + 1e-12))) if clock == "work" else \
        (lambda i: 2 ** (i / BINS_PER_OCTAVE))
    while edge(k + 1) <= deadline * (1 + 1e-12):
        k += 1
    while k >= 0 and edge(k) > deadline * (1 + 1e-12):
        k -= 1
    return k


def anytime_counts(clock: str, latency: np.ndarray, trail_at: np.ndarray, trail_right: np.ndarray,
                   trail_len: np.ndarray) -> dict[str, int]:
    """The anytime policy's counts of one batch on one clock (module docstring): ``<clock>_trail`` and the
    rescued shots ``<clock><k>R`` per grid index.

    Args:
        latency: ``(S,)`` each shot's final value of the clock (its wall time or work).
        trail_at: ``(S, T)`` the clock values at which each shot's answer changed, ascending (first
            ``trail_len[s]`` entries used).
        trail_right: bool ``(S, T)``: whether the answer from that event on is right.
        trail_len: ``(S,)`` events per shot.
    """
    S = latency.shape[0]
    out: dict[str, int] = {f"{clock}_trail": int(S)} if S else {}
    if S == 0:
        return out
    T = trail_at.shape[1]
    final = bin_index(latency)
    used = np.arange(T)[None, :] < np.asarray(trail_len)[:, None]
    if T == 0 or not used.any():
        return out
    start = np.where(used, bin_index(np.where(used, trail_at, 1.0)), 0)
    nxt = np.concatenate([start[:, 1:], np.zeros((S, 1), dtype=np.int64)], axis=1)
    last = np.arange(T)[None, :] == (np.asarray(trail_len)[:, None] - 1)
    stop = np.minimum(np.where(last, final[:, None], nxt), final[:, None])  # late at k: k < final bin
    keep = used & np.asarray(trail_right, dtype=bool) & (stop > start)
    if not keep.any():
        return out
    a, b = start[keep], stop[keep]
    diff = np.zeros(int(b.max()) + 1, dtype=np.int64)
    np.add.at(diff, a, 1)
    np.add.at(diff, b, -1)
    rescued = np.cumsum(diff)
    for k in np.flatnonzero(rescued).tolist():
        out[f"{clock}{k}R"] = int(rescued[k])
    return out


def rescued_at(custom_counts: Mapping[str, int], clock: str) -> dict[int, int] | None:
    """``{k: rescued shots}`` of the anytime policy on ``clock``, or None when the row recorded no trail."""
    if f"{clock}_trail" not in custom_counts:
        return None
    out: dict[int, int] = {}
    for key, value in custom_counts.items():
        m = _RESCUED.fullmatch(key)
        if m and m.group(1) == clock:
            out[int(m.group(2))] = int(value)
    return out
