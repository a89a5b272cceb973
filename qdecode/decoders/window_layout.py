"""Round layout of a circuit-level decoding problem and the sliding-window plan over it.

A memory experiment emits its detectors round by round. :class:`RoundLayout` assigns every
detector a round index ``0 .. R-1`` and :func:`plan_windows` cuts the problem into windows
(the overlapping recovery of Dennis et al., arXiv:quant-ph/0110143):

* **Rounds.** From a constant number ``h`` of detectors per round (round = detector index
  // h), from an explicit per-detector array, or else inferred (:meth:`RoundLayout.for_problem`):

  1. from a time coordinate: the *last* coordinate of stim's ``DETECTOR(x, y, t)`` (the distinct
     values, sorted, are numbered ``0 .. R-1``, so a final data-readout round ``t = rounds`` is one
     more round), or an earlier one (``DETECTOR(x, y, t, color)``), used only when it is
     *consistent with the mechanisms*: non-decreasing in detector index (stim declares detectors
     in time order) and no mechanism spanning more rounds than the window plan assumes
     (``max(2, W - F + 1)``, see below). A coordinate holding a measurement index, a color or a
     basis fails this check;
  2. else from the detector connectivity (:func:`infer_rounds_from_connectivity`): detectors in
     index order are cut into layers such that every mechanism spans at most two consecutive
     layers, the layering is accepted only when some layers repeat (a memory experiment's
     rounds are translates of each other) and it gives more than one window;
  3. else, when there is nothing to slice (the connectivity gives at most ``W`` rounds, or no
     mechanism joins two detectors), every detector is in one round: one window over the whole
     problem, which is the inner decoder itself;
  4. else the decoder refuses with a :class:`DecoderInputError` naming ``per_round``: windows
     over rounds that cut mechanisms spanning more rounds than the plan assumes would commit
     half-seen errors on nearly every shot, with no warning.
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


def max_span_rounds(W: int, F: int) -> int:
    """Rounds one mechanism may span for the window plan ``(W, F)``: ``max(2, W - F + 1)``.

    Circuit-level mechanisms span at most two consecutive rounds (an error between the
    measurements of rounds r and r + 1). With ``F < W`` a mechanism spanning up to
    ``W - F + 1`` rounds is never committed while cut by a window's future edge (module
    docstring), so the plan tolerates that much; with ``F = W`` it tolerates the two rounds of
    an ordinary circuit (a committed boundary column is forwarded whole).
    """
    return max(2, int(W) - int(F) + 1)


@dataclasses.dataclass(frozen=True)
class RoundLayout:
    """The round of every detector.

    Attributes:
        detector_round: int64 ``(m,)``, values ``0 .. num_rounds-1``, every round non-empty.
        num_rounds: ``R``.
        source: where the rounds came from: ``"detector_rounds"``, ``"per_round"``,
            ``"coordinate last"`` / ``"coordinate <i>"`` (a DEM detector coordinate),
            ``"connectivity"``, ``"one window"`` or ``"empty"`` (no detectors).
    """

    detector_round: np.ndarray
    num_rounds: int
    source: str = "detector_rounds"

    @classmethod
    def from_rounds(cls, rounds: Any, source: str = "detector_rounds") -> "RoundLayout":
        """From an integer round label per detector; the distinct labels are renumbered 0..R-1 in order."""
        r = np.asarray(rounds)
        if r.ndim != 1:
            raise DecoderInputError(f"detector rounds must be 1-D (one per detector), got shape {r.shape}")
        if r.size and not np.all(np.isfinite(r.astype(np.float64))):
            raise DecoderInputError("detector rounds contain NaN or infinite values")
        values, index = np.unique(r, return_inverse=True)
        return cls(detector_round=index.astype(np.int64).reshape(-1), num_rounds=int(values.size), source=source)

    def max_span(self, H: sp.csr_matrix) -> int:
        """The most rounds one column of ``H`` spans (``r_max - r_min + 1``; 0 without columns)."""
        r_min, r_max = column_first_round(H, self)
        return int((r_max - r_min).max()) + 1 if r_min.size else 0

    @classmethod
    def for_problem(
        cls, problem: DecodingProblem, per_round: int = 0, detector_rounds: Any = None, *,
        W: int = 3, F: int = 1,
    ) -> "RoundLayout":
        """The layout of ``problem``'s detectors.

        Args:
            problem: the decoding problem (its ``dem`` supplies detector coordinates).
            per_round: ``h > 0``: detector ``i`` is in round ``i // h``; 0: infer the rounds
                (time coordinate when consistent with the mechanisms, else connectivity; module
                docstring).
            detector_rounds: optional explicit round label per detector (overrides both).
            W, F: the window plan the rounds are for; inferred rounds must not make a
                mechanism span more than :func:`max_span_rounds` ``(W, F)`` rounds; rounds
                inferred from connectivity are used when they give more than one window
                (``R > W``), and one round (one window) when they do not.

        Raises:
            DecoderInputError: a negative ``per_round``, a wrong-length ``detector_rounds``, or
                rounds that cannot be inferred (the message names ``per_round``).
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
                       num_rounds=-(-m // int(per_round)), source="per_round")
        if m == 0:
            return cls(detector_round=np.zeros(0, dtype=np.int64), num_rounds=0, source="empty")
        span = max_span_rounds(W, F)
        layout, why, unordered = _coordinate_rounds(problem, span)
        if layout is not None:
            return layout
        inferred = infer_rounds_from_connectivity(problem.H)
        if inferred is not None and inferred.num_rounds > W:
            return inferred
        if unordered is not None:
            return unordered
        if inferred is not None or np.diff(problem.H.tocsc().indptr).max(initial=0) <= 1:
            # Nothing to slice: the connectivity gives at most W rounds (one window would cover
            # them all), or no mechanism joins two detectors (every detector is its own part).
            # One round, so one window: the inner decoder on the whole problem (exact; no
            # mechanism is cut). Refusing would leave such models (isolated detectors) undecodable.
            return cls(detector_round=np.zeros(m, dtype=np.int64), num_rounds=1, source="one window")
        raise DecoderInputError(
            f"cannot tell the detectors' rounds: {why}, and the detector connectivity gives no repeating rounds; "
            "pass per_round (detectors per round) or detector_rounds"
        )

    def detectors_of_round(self, r: int) -> np.ndarray:
        """int64 indices of round ``r``'s detectors, ascending (the order of ``push_round``'s columns)."""
        return np.flatnonzero(self.detector_round == r)


def _coordinate_rounds(
    problem: DecodingProblem, span: int
) -> tuple["RoundLayout | None", str, "RoundLayout | None"]:
    """``(layout, why_not, unordered)``: rounds from the first usable time coordinate, last first.

    A coordinate is usable when its rounds are non-decreasing in detector index and no column
    spans more than ``span`` rounds; ``layout`` is ``None`` when none is, and ``why_not`` says
    what was wrong with the last coordinate. ``unordered``: the last coordinate's rounds when
    they respect ``span`` but are out of detector order (hand-written DEMs may declare detectors
    in any order; the windows then cut no mechanism beyond the plan's assumption), used when
    the connectivity gives no rounds.
    """
    m = problem.num_detectors
    if problem.dem is None:
        return None, "the problem has no detector error model (coordinates)", None
    coords = problem.dem.get_detector_coordinates()
    lengths = np.array([len(coords.get(i, ())) for i in range(m)], dtype=np.int64)
    if lengths.min() == 0:
        return None, f"detector {int(np.argmin(lengths))} has no coordinates", None
    ncoord = int(lengths.min())
    why, unordered = "", None
    # stim's time coordinate is the last one; other tools append a color / basis after it
    for axis in [-1, *range(ncoord - 2, -1, -1)]:
        values = np.array([coords[i][axis] for i in range(m)], dtype=np.float64)
        name = "last" if axis == -1 else f"coordinate {axis}"
        layout = RoundLayout.from_rounds(values, source=f"coordinate {'last' if axis == -1 else axis}")
        spanned = layout.max_span(problem.H)
        ordered = bool(np.all(np.diff(layout.detector_round) >= 0))
        if spanned <= span and ordered:
            return layout, "", None
        if axis == -1:
            unordered = layout if spanned <= span else None
            why = (f"the {name} detector coordinate gives {layout.num_rounds} rounds in which a mechanism spans "
                   f"{spanned} rounds (the window plan assumes <= {span})" if spanned > span
                   else f"the {name} detector coordinate is not in detector order (not a time)")
    return None, why, unordered


def infer_rounds_from_connectivity(H: sp.csr_matrix) -> "RoundLayout | None":
    """Rounds of a memory experiment's detectors from which detectors share mechanisms.

    Assumes stim's convention that detectors are declared in time order, so every round is a
    contiguous range of detector indices ``[b_r, b_{r+1})``. Given the first boundary ``b_1``,
    each next one is forced: ``b_{r+1} = 1 + max{ j : j shares a mechanism with some i < b_r }``
    (the smallest boundary such that every mechanism spans at most two consecutive layers; a
    mechanism's detectors pairwise share it, so this bounds every column). Every ``b_1`` in
    ``1 .. 1 + (detector 0's last neighbour)`` is tried; a layering is kept when it is also
    tight from the other side (the first detector of each layer but the last shares a
    mechanism with a later layer), and the kept layering with the fewest mechanisms crossing
    its boundaries per boundary (a round boundary is crossed only by time-like mechanisms;
    a boundary inside a round also cuts space-like ones), then the most layers, wins.

    The layering is returned only if two consecutive layers of equal size ``h`` are
    translates (the mechanisms starting in one, shifted by ``h`` detectors, are exactly those
    starting in the next): a memory experiment repeats its rounds, a one-round (code-capacity)
    problem cut into spatial slices does not.

    Args:
        H: ``(m, n)`` check matrix (CSR or anything scipy converts).

    Returns:
        :class:`RoundLayout` with ``source="connectivity"``, or ``None``.
    """
    H = sp.csr_matrix(H)
    m, n = H.shape
    if m < 2:
        return None
    Hc = sp.csc_matrix(H)
    Hc.sort_indices()
    nz = np.flatnonzero(np.diff(Hc.indptr))
    if nz.size == 0:
        return None
    cmin = np.minimum.reduceat(Hc.indices, Hc.indptr[nz]).astype(np.int64)
    cmax = np.maximum.reduceat(Hc.indices, Hc.indptr[nz]).astype(np.int64)
    full_max = np.zeros(n, dtype=np.int64)
    full_min = np.zeros(n, dtype=np.int64)
    full_max[nz], full_min[nz] = cmax, cmin
    rows = np.flatnonzero(np.diff(H.indptr))
    high = np.arange(m, dtype=np.int64)  # last detector sharing a mechanism with each detector
    low = np.arange(m, dtype=np.int64)  # first one
    high[rows] = np.maximum(high[rows], np.maximum.reduceat(full_max[H.indices], H.indptr[rows]))
    low[rows] = np.minimum(low[rows], np.minimum.reduceat(full_min[H.indices], H.indptr[rows]))
    reach = np.maximum.accumulate(high)  # reach[x]: last neighbour of detectors 0..x
    back = np.minimum.accumulate(low[::-1])[::-1]  # back[y]: first neighbour of detectors y..m-1
    delta = np.zeros(m + 1, dtype=np.int64)
    np.add.at(delta, cmin + 1, 1)
    np.add.at(delta, cmax + 1, -1)
    cut = np.cumsum(delta)  # cut[b]: mechanisms with cmin < b <= cmax (crossing boundary b)
    best = None
    for b1 in range(1, min(int(high[0]) + 1, m - 1) + 1):
        b = [0, b1]
        # Each step is forced and strictly advances, or the layering is abandoned: where no
        # mechanism crosses boundary b (reach[b - 1] = b - 1, e.g. isolated detectors) the next
        # layer would be empty, and appending b again would loop forever. At most m steps.
        while b[-1] < m:
            nxt = min(int(reach[b[-1] - 1]) + 1, m)
            if nxt <= b[-1]:
                break
            b.append(nxt)
        if b[-1] < m or any(back[b[r + 1]] != b[r] for r in range(len(b) - 2)):
            continue
        score = (float(np.mean(cut[b[1:-1]])), -len(b), b1)
        if best is None or score < best[0]:
            best = (score, b)
    if best is None:
        return None
    bounds = np.asarray(best[1], dtype=np.int64)
    rounds = np.repeat(np.arange(bounds.size - 1, dtype=np.int64), np.diff(bounds))
    layout = RoundLayout(detector_round=rounds, num_rounds=int(bounds.size - 1), source="connectivity")
    return layout if _has_repeated_round(Hc, nz, cmin, bounds, layout) else None


def _has_repeated_round(Hc: sp.csc_matrix, nz: np.ndarray, cmin: np.ndarray, bounds: np.ndarray,
                        layout: RoundLayout) -> bool:
    """Whether some consecutive layers ``r, r+1`` of equal size ``h`` are translates by ``h``."""
    first = layout.detector_round[cmin]  # first layer of each non-empty column
    sizes = np.diff(bounds)
    keys: dict[int, set[tuple[int, ...]]] = {}
    for r in range(layout.num_rounds - 1):
        if sizes[r] != sizes[r + 1]:
            continue
        h = int(sizes[r])
        for q in (r, r + 1):
            if q not in keys:
                cols = nz[first == q]
                keys[q] = {tuple(Hc.indices[Hc.indptr[j]:Hc.indptr[j + 1]].tolist()) for j in cols}
        shifted = {tuple(i + h for i in key) for key in keys[r]}
        if shifted == keys[r + 1] and keys[r]:
            return True
    return False


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
