"""Round layout of a circuit-level decoding problem and the sliding-window plan over it.

A memory experiment emits its detectors round by round. :class:`RoundLayout` assigns every
detector a round index ``0 .. R-1`` and :func:`plan_windows` cuts the problem into windows
(Dennis et al.'s overlapping recovery; the recipe of ``research/qldpc.md`` §2.2 / §4):

* **Rounds.** From the detectors' time coordinate (the *last* coordinate of stim's
  ``DETECTOR(x, y, t)``; the distinct time values, sorted, are numbered ``0 .. R-1``, so a
  final data-readout round ``t = rounds`` is one more round), from a constant number ``h`` of
  detectors per round (round = detector index // h), or from an explicit per-detector array.
* **Column span.** Column ``j`` (error mechanism) touches rounds ``r_min(j) .. r_max(j)``. A
  column with no detector (it flips observables only) gets ``r_min = R - 1``: it belongs to the
  last window, where a decoder leaves it at 0 unless it lowers the cost (it never does).
* **Window k** covers rounds ``[kF, kF + W)``; the last window is the first one reaching round
  ``R - 1`` and covers ``[kF, R)``. Its rows are the detectors of those rounds; its columns are
  the mechanisms with ``r_min`` in those rounds. A column whose support reaches *beyond* the
  window's future edge (``r_max >= kF + W``) is kept with only its in-window rows (a *boundary
  column*, see below). Columns with ``r_min < kF`` are absent: earlier windows committed them
  and their effect has been forwarded into the syndrome.
* **Commit.** Window k commits the columns with ``r_min`` in ``[kF, kF + F)`` (the last window
  commits all of its columns). The commit regions tile ``[0, R)``, so every column is
  committed by exactly one window.

Boundary columns. An error straddling the future edge flips detectors both inside the window
and after it. Dropping such a column would leave its in-window flips unexplainable; keeping it
whole would require detectors the window has not seen. Keeping its in-window rows, with its own
prior, makes it an effective "this detector was flipped by something the next rounds will
explain" column: the marginal probability that it flips its in-window detectors is unchanged,
and only the correlation with unseen detectors is lost. GDG's notebook instead replaces all
straddling columns at a last-round detector by a single identity column whose prior is their
summed prior; keeping the columns individually gives the same marginal flip rate per detector
while also keeping their joint in-window support (a straddling error touching two last-round
detectors stays one column). With ``F < W`` a boundary column has ``r_min >= kF + F`` for
mechanisms spanning at most ``W - F + 1`` rounds, so it is decoded but not committed: the
next window sees it whole. With ``F = W`` a committed column may be a boundary column; its full
syndrome effect (including the rows after the window) is forwarded all the same.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import DecoderInputError
from qdecode.problem import DecodingProblem


@dataclasses.dataclass(frozen=True)
class RoundLayout:
    """The round of every detector.

    Attributes:
        detector_round: int64 ``(m,)``, values ``0 .. num_rounds-1``, every round non-empty.
        num_rounds: ``R``.
    """

    detector_round: np.ndarray
    num_rounds: int

    @classmethod
    def from_rounds(cls, rounds: Any) -> "RoundLayout":
        """From an integer round label per detector; the distinct labels are renumbered 0..R-1 in order."""
        r = np.asarray(rounds)
        if r.ndim != 1:
            raise DecoderInputError(f"detector rounds must be 1-D (one per detector), got shape {r.shape}")
        if r.size and not np.all(np.isfinite(r.astype(np.float64))):
            raise DecoderInputError("detector rounds contain NaN or infinite values")
        values, index = np.unique(r, return_inverse=True)
        return cls(detector_round=index.astype(np.int64).reshape(-1), num_rounds=int(values.size))

    @classmethod
    def for_problem(
        cls, problem: DecodingProblem, per_round: int = 0, detector_rounds: Any = None
    ) -> "RoundLayout":
        """The layout of ``problem``'s detectors.

        Args:
            problem: the decoding problem (its ``dem`` supplies detector coordinates).
            per_round: ``h > 0``: detector ``i`` is in round ``i // h``; 0: use coordinates.
            detector_rounds: optional explicit round label per detector (overrides both).

        Raises:
            DecoderInputError: no way to tell the rounds (no DEM, or a detector without
                coordinates, and ``per_round = 0``), a negative ``per_round``, or a wrong-length
                ``detector_rounds``.
        """
        m = problem.num_detectors
        if detector_rounds is not None:
            layout = cls.from_rounds(detector_rounds)
            if layout.detector_round.size != m:
                raise DecoderInputError(
                    f"detector_rounds has {layout.detector_round.size} entries but the problem has {m} detectors"
                )
            return layout
        if isinstance(per_round, bool) or int(per_round) != per_round or per_round < 0:
            raise DecoderInputError(f"per_round (detectors per round) must be an integer >= 0, got {per_round!r}")
        if per_round > 0:
            return cls(detector_round=np.arange(m, dtype=np.int64) // int(per_round),
                       num_rounds=-(-m // int(per_round)))
        if problem.dem is None:
            raise DecoderInputError(
                "cannot tell the detectors' rounds: the problem has no detector error model "
                "(coordinates); pass per_round (detectors per round) or detector_rounds"
            )
        coords = problem.dem.get_detector_coordinates()
        times = np.empty(m, dtype=np.float64)
        for i in range(m):
            c = coords.get(i, ())
            if len(c) == 0:
                raise DecoderInputError(
                    f"detector {i} has no coordinates, so its round (the last coordinate) is unknown; "
                    "pass per_round (detectors per round) instead"
                )
            times[i] = c[-1]
        return cls.from_rounds(times)

    def detectors_of_round(self, r: int) -> np.ndarray:
        """int64 indices of round ``r``'s detectors, ascending (the order of ``push_round``'s columns)."""
        return np.flatnonzero(self.detector_round == r)


def column_first_round(H: sp.csr_matrix, layout: RoundLayout) -> tuple[np.ndarray, np.ndarray]:
    """``(r_min, r_max)`` int64 ``(n,)``: first and last round each column touches.

    Detector-less columns get ``r_min = r_max = R - 1`` (they join the last window).
    """
    Hc = sp.csc_matrix(H)
    n = Hc.shape[1]
    last = max(layout.num_rounds - 1, 0)
    r_min = np.full(n, last, dtype=np.int64)
    r_max = np.full(n, last, dtype=np.int64)
    deg = np.diff(Hc.indptr)
    nz = np.flatnonzero(deg)
    if nz.size:
        rr = layout.detector_round[Hc.indices]
        starts = Hc.indptr[nz]
        r_min[nz] = np.minimum.reduceat(rr, starts)
        r_max[nz] = np.maximum.reduceat(rr, starts)
    return r_min, r_max


@dataclasses.dataclass(frozen=True)
class WindowPlan:
    """One window's slice of the problem.

    Attributes:
        index: window number k.
        rounds: ``(first, stop)``: the window covers rounds ``[first, stop)``.
        commit_stop: the window commits columns with ``r_min`` in ``[first, commit_stop)``.
        rows: int64 ``(m_k,)`` global detector indices, ascending.
        cols: int64 ``(n_k,)`` global column indices, ascending.
        commit_local: int64 ``(c_k,)`` positions in ``cols`` of the committed columns.
        last: whether this is the last window (it commits everything it holds).
    """

    index: int
    rounds: tuple[int, int]
    commit_stop: int
    rows: np.ndarray
    cols: np.ndarray
    commit_local: np.ndarray
    last: bool

    @property
    def commit_cols(self) -> np.ndarray:
        """int64 ``(c_k,)`` global indices of the committed columns."""
        return self.cols[self.commit_local]


def num_windows(num_rounds: int, W: int, F: int) -> int:
    """``K = 1 + max(0, ceil((R - W) / F))``: windows until one reaches the last round."""
    return 1 + max(0, -(-(num_rounds - W) // F))


def check_window_sizes(W: Any, F: Any) -> tuple[int, int]:
    """Validate ``W >= 1`` and ``1 <= F <= W`` (integers); return them as ints."""
    for name, v in (("W (window rounds)", W), ("F (commit rounds)", F)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer, float)) or int(v) != v:
            raise DecoderInputError(f"{name} must be an integer, got {v!r}")
    W, F = int(W), int(F)
    if W < 1:
        raise DecoderInputError(f"W (window rounds) must be >= 1, got {W}")
    if F < 1:
        raise DecoderInputError(f"F (commit rounds) must be >= 1, got {F}")
    if F > W:
        raise DecoderInputError(f"F (commit rounds) must not exceed W (window rounds): F={F} > W={W}")
    return W, F


def plan_windows(layout: RoundLayout, r_min: np.ndarray, W: int, F: int) -> list[WindowPlan]:
    """The windows of a problem with detector rounds ``layout`` and column first rounds ``r_min``.

    Every column is committed by exactly one window (checked).
    """
    W, F = check_window_sizes(W, F)
    R = layout.num_rounds
    K = num_windows(R, W, F)
    plans = []
    committed = np.zeros(r_min.size, dtype=np.int64)
    for k in range(K):
        first = k * F
        last = k == K - 1
        stop = max(R, first + 1) if last else first + W
        commit_stop = stop if last else first + F
        rows = np.flatnonzero((layout.detector_round >= first) & (layout.detector_round < stop))
        in_window = (r_min >= first) & (r_min < stop) if not last else r_min >= first
        cols = np.flatnonzero(in_window)
        commit_local = np.flatnonzero(r_min[cols] < commit_stop)
        committed[cols[commit_local]] += 1
        plans.append(WindowPlan(k, (first, stop), commit_stop, rows, cols, commit_local, last))
    if r_min.size and not np.all(committed == 1):  # pragma: no cover - guaranteed by the tiling
        raise AssertionError("window plan does not commit every column exactly once")
    return plans
