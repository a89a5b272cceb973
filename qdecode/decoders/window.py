"""Sliding-window decoding of circuit-level problems, batch and streaming.

``WindowDecoder(problem, inner=DecoderSpec.parse("bposd"), W=3, F=1, per_round=0)`` (or
``qdecode.decoder("window[inner=bposd]", problem)``) decodes a
memory experiment of ``R`` detector rounds in windows of ``W`` rounds, committing ``F`` rounds
per window (layout, column selection and the boundary-column treatment:
:mod:`qdecode.decoders.window_layout`). For window ``k = 0 .. K-1``, on every shot at once:

1. ``s_k = residual[:, rows_k]`` (``residual`` starts as the syndrome);
2. shots with ``s_k = 0`` are not decoded (their window estimate is 0, no inner iterations;
   every decoder returns 0 on a zero syndrome, DESIGN §8); the others go through the window's
   inner decoder, compiled once for the sub-problem ``(H[rows_k, cols_k], L[:, cols_k],
   priors[cols_k])``;
3. the estimate on the committed columns ``C_k`` is final: ``e[C_k] = ê_k[C_k]``,
   ``residual ^= H[:, C_k] e[C_k]`` over *all* rows (rows after the window included) and
   ``observables ^= L[:, C_k] e[C_k]`` (mod 2); the rest of ``ê_k`` is discarded.

If every window's inner decode satisfies its window syndrome, the total ``e`` satisfies
``H e = s``: the rows of round ``r`` are touched only by columns with ``r_min <= r``, all of
which are committed by the time the window that commits round ``r`` is done.

Inner decoders: any registered name (``bposd``, ``relay-bp``, ``bp``, ``pymatching``, ``uf``,
``gdg``) or a :class:`DecoderSpec`. Matching decoders (``pymatching``, ``uf``: :data:`GRAPHLIKE_INNER`)
need graph edges, so for them the problem
is first put in its decomposed graphlike form (:mod:`qdecode.decoders.graphlike`) and the
windows slice that; ``decode_batch`` then has no per-column meaning for the original problem
(unless it was graphlike already) and only observable predictions are available.

Streaming: ``stream = decoder.stream()``; ``stream.push_round(dets)`` with round ``r``'s
detectors ``(S, m_r)`` (columns in ascending detector order) returns a :class:`WindowCommit`
when a window becomes decodable (window ``k < K-1`` once round ``kF + W - 1`` is in), else
``None``; ``stream.finish()`` decodes the last window after the last round. The batch path runs
the very same per-window step, so both give bit-identical results.

``last_info`` (:class:`WindowDecodeInfo`): ``converged`` = every decoded window's inner decode
converged (inner decoders without a notion of convergence count as converged), ``iterations`` =
sum over windows; ``extra``: ``window_converged`` bool ``(S, K)``, ``window_iterations`` int32
``(S, K)``, ``window_decoded`` bool ``(S, K)`` (window syndrome nonzero, inner decoder run),
``windows_decoded`` int32 ``(S,)`` (its row sums), and ``inner_<key>`` float64 ``(S,)``: each
per-shot numeric ``extra`` counter of the inner decoder summed over windows (Relay-BP's ``legs``,
BP+OSD's ``osd`` = windows that needed OSD).
``last_window_seconds`` float64 ``(K,)``: wall time of each window step of the latest batch.

Work clock (``work_unit``, ``last_info.work``): the sum over the windows of the inner decoder's work clock on
each shot, in the inner decoder's unit (0 for a window it did not decode), where the inner decoder has one;
with a fallback, only where the fallback (``bposd``) counts in the same unit (an inner ``bposd`` or
``bposd-e``, whose operations it adds); otherwise none. ``last_info.work`` is None after a batch in which
an inner decode reported no work (PyMatching's ``decode_batch``, the per-column path the windows call,
reports none).

Fallback (``fallback="last"`` or ``"all"``; default ``"none"``): where the inner decoder reports a
non-converged window (GDG's flagged shots, BP that did not converge), that window is decoded
again with BP+OSD-CS (registry ``bposd`` defaults: min-sum 80 iterations, OSD-CS10), whose
estimate always satisfies the window syndrome, and its estimate is committed instead. The GDG
authors run BP+OSD-CS10 on the last window; ``last`` does so only where GDG did not converge
there, which removes the "flagged" shots (nonzero final residual syndrome). ``extra``:
``window_fallback`` bool ``(S, K)``; ``counts()`` adds ``fallbacks``. For GDG the cheaper route is
the inner decoder's own ``osd_method`` (``window[inner=gdg,osd_method=osd_cs,...]``): OSD ordered by
GDG's pre-BP posteriors, no further BP iterations (a redo runs BP on the whole window first).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderCapabilityError, DecoderInputError, check_syndromes
from qdecode.decoders.params import DecoderEntry, Param, UnknownDecoderError, uses_params
from qdecode.decoders.window_layout import RoundLayout, WindowPlan, check_window_sizes, column_first_round, plan_windows
from qdecode.problem import DecodingProblem

#: Inner decoders that decode a matching graph and therefore see the graphlike problem (a window's
#: sub-problem is a bare check matrix, so its hyperedges could no longer be decomposed there).
GRAPHLIKE_INNER = frozenset({"pymatching", "uf"})
#: Where a non-converged inner decode is redone with BP+OSD-CS.
FALLBACKS = ("none", "last", "all")
#: Parameters of ``window`` and :class:`WindowDecoder` (the inner decoder's parameters nest in the registry).
WINDOW_PARAMS = {
    "inner": Param(str, "bposd", "registered decoder run in each window; its parameters are accepted too"),
    "W": Param(int, 3, "window size in rounds", minimum=1),
    "F": Param(int, 1, "rounds committed per window (<= W)", minimum=1),
    "per_round": Param(int, 0, "detectors per round; 0 = inferred (time coordinate, else connectivity)", minimum=0),
    "fallback": Param(str, "none", "redo non-converged window decodes with BP+OSD-CS10: none | last | all",
                      FALLBACKS, label_default=False),
}
#: Inner decoders that cannot run inside a window, with the reason.
UNSUPPORTED_INNER = {
    "pymatching-correlated": "correlated matching needs the whole DEM's hyperedges, which a window "
    "cuts; use inner=pymatching",
    "window": "a window decoder cannot be the inner decoder of another window decoder",
}


@dataclasses.dataclass
class WindowDecodeInfo(DecodeInfo):
    """:class:`DecodeInfo` whose counters also report how many inner window decodes ran."""

    def counts(self) -> dict[str, int]:
        out = super().counts()
        decoded = self.extra.get("window_decoded") if self.extra else None
        if decoded is not None:
            out["window_decodes"] = int(np.count_nonzero(decoded))
        fell = self.extra.get("window_fallback") if self.extra else None
        if fell is not None:
            out["fallbacks"] = int(np.count_nonzero(fell))
        return out


@dataclasses.dataclass
class WindowCommit:
    """What one window committed, for every shot of the batch or stream.

    Attributes:
        window: window index k.
        columns: int64 ``(c,)`` committed columns (of :attr:`WindowDecoder.work_problem`).
        errors: uint8 ``(S, c)`` their final values.
        observables: uint8 ``(S, k_obs)`` observable flips of this commit, ``L[:, columns] e mod 2``.
        seconds: wall time of the window step (inner decode + commit).
    """

    window: int
    columns: np.ndarray
    errors: np.ndarray
    observables: np.ndarray
    seconds: float


@dataclasses.dataclass
class _Window:
    """A planned window with its compiled inner decoder and commit matrices."""

    plan: WindowPlan
    decoder: Decoder
    fwd_rows: np.ndarray  # int64: rows the committed columns touch (all rounds)
    fwd_H: sp.csr_matrix  # (len(fwd_rows), c) int32: H[fwd_rows][:, commit_cols]
    commit_L: sp.csr_matrix  # (k_obs, c) int32: L[:, commit_cols]
    backup: Decoder | None = None  # BP+OSD-CS for the shots whose inner decode did not converge


class _State:
    """Per-batch decoding state shared by the batch and streaming paths."""

    def __init__(self, S: int, m: int, n: int, k_obs: int, K: int, keep_errors: bool, fallback: bool = False):
        self.residual = np.zeros((S, m), dtype=np.uint8)
        self.errors = np.zeros((S, n), dtype=np.uint8) if keep_errors else None
        self.observables = np.zeros((S, k_obs), dtype=np.uint8)
        self.converged = np.ones((S, K), dtype=np.bool_)
        self.iterations = np.zeros((S, K), dtype=np.int32)
        self.decoded = np.zeros((S, K), dtype=np.bool_)
        self.fallback = np.zeros((S, K), dtype=np.bool_) if fallback else None  # windows redone by BP+OSD
        self.seconds = np.zeros(K, dtype=np.float64)
        self.inner_extra: dict[str, np.ndarray] = {}
        self.work: np.ndarray | None = None  # int64 (S,): the inner work clocks summed (WindowDecoder.work_unit)
        self.work_missing = False  # an inner decode reported no work clock: the batch has none

    def add_inner_extra(self, shots: np.ndarray, extra) -> None:
        """Sum the inner decoder's per-shot numeric counters into ``(S,)`` accumulators."""
        for key, value in (extra or {}).items():
            arr = np.asarray(value)
            if arr.ndim == 1 and arr.shape[0] == shots.size and arr.dtype.kind in "iufb":
                acc = self.inner_extra.setdefault(str(key), np.zeros(self.residual.shape[0], dtype=np.float64))
                acc[shots] += arr

    def add_work(self, shots: np.ndarray, info) -> None:
        """Add an inner decode's work clock (``info.work``, int ``(len(shots),)``) to the shots' totals; an info
        without one (None, or no ``work``) leaves the batch without a work clock."""
        work = None if info is None else info.work
        if work is None:
            self.work_missing = True
            return
        if self.work is None:
            self.work = np.zeros(self.residual.shape[0], dtype=np.int64)
        self.work[shots] += np.asarray(work, dtype=np.int64)

    def info(self, counts_work: bool = False) -> WindowDecodeInfo:
        """The batch's :class:`WindowDecodeInfo`; with ``counts_work`` its work clock (zeros where no window ran)."""
        work = None
        if counts_work and not self.work_missing:
            work = self.work if self.work is not None else np.zeros(self.residual.shape[0], dtype=np.int64)
        return WindowDecodeInfo(
            work=work,
            converged=self.converged.all(axis=1),
            iterations=self.iterations.sum(axis=1, dtype=np.int64).astype(np.int32),
            extra={"window_converged": self.converged, "window_iterations": self.iterations,
                   "window_decoded": self.decoded, "windows_decoded": self.decoded.sum(axis=1, dtype=np.int32),
                   **({} if self.fallback is None else {"window_fallback": self.fallback}),
                   **{f"inner_{key}": acc for key, acc in self.inner_extra.items()}},
        )


def _mod2_product(M: sp.csr_matrix, x: np.ndarray) -> np.ndarray:
    """``(x @ M.T) mod 2`` as uint8 ``(S, rows of M)`` for a uint8 ``(S, cols of M)`` array."""
    if M.shape[0] == 0 or x.shape[0] == 0:
        return np.zeros((x.shape[0], M.shape[0]), dtype=np.uint8)
    return (np.asarray(M @ x.T.astype(np.int32)).T & 1).astype(np.uint8)


def _window_record(self, args: dict) -> dict:
    own = {k: args[k] for k in WINDOW_PARAMS}
    own["inner"] = self.inner_spec.name
    return {**own, **dict(self.inner_spec.params)}


@uses_params(WINDOW_PARAMS, record=_window_record)
class WindowDecoder(Decoder):
    """Sliding-window decoder over any registered inner decoder.

    Args:
        problem: a circuit-level problem (usually :meth:`DecodingProblem.from_dem`).
        inner: :class:`~qdecode.decoders.registry.DecoderSpec`, or a registered decoder name with ``specs``,
            run in every window.
        W: window size in rounds, >= 1.
        F: committed rounds per window, ``1 <= F <= W``.
        per_round: detectors per round (round = detector index // per_round); 0 infers the
            rounds: from a DEM time coordinate consistent with the mechanisms, else from the
            detector connectivity, else refuses (:meth:`RoundLayout.for_problem`).
        inner_params: parameters of the inner decoder when ``inner`` is a name (mapping or
            ``"key=value"`` strings, validated by the registry).
        detector_rounds: optional explicit round label per detector (overrides ``per_round``).
        fallback: ``"none"``, ``"last"`` or ``"all"``: windows where a non-converged inner decode
            is redone with BP+OSD-CS10 (module docstring).
        specs: the registry's spec class (``qdecode.DecoderSpec``), which builds the inner and fallback
            decoders; default: the class of ``inner`` when that is a spec. The registry passes it, so this
            module never imports the registry.

    Work bound: a call decodes K = 1 + max(0, ceil((R - ``W``) / ``F``)) windows in order, for R
    detector rounds (defaults ``W`` 3, ``F`` 1). In each window a shot gets at most one decode by
    the inner decoder (default ``bposd``; none where the window syndrome is zero), within that
    decoder's own work bound on the window's sub-problem. With ``fallback`` ``"last"`` or ``"all"``
    (default ``"none"``) a shot gets at most one more decode per window by BP+OSD-CS (``bposd``
    defaults: at most 80 BP iterations, then OSD-CS of order 10). Committing a window is one sparse
    product over its committed columns. No loop depends on convergence.

    Work clock (:attr:`work_unit`): the inner decoder's, summed over the windows a shot was decoded in (0
    where its window syndrome was zero): e.g. BP+OSD's operations for the default ``bposd``, min-sum
    iterations for ``relay-bp`` or ``gdg``, growth steps for ``uf``. None where the inner decoder has no work
    clock, or with a ``fallback`` whose unit (``bposd``'s operations) differs from the inner decoder's. Wall
    clock: one call per shot (:attr:`wall_method` ``"call"``).

    Raises:
        DecoderInputError: bad ``W`` / ``F`` / ``per_round``, unknown rounds, an inner decoder
            that cannot run in a window, or an unknown inner decoder / parameter.
    """

    def __init__(
        self,
        problem: DecodingProblem,
        *,
        inner: Any,
        W: int,
        F: int,
        per_round: int,
        inner_params: Mapping[str, Any] | None = None,
        detector_rounds: Any = None,
        fallback: str,
        specs: Any = None,
    ):
        self.W, self.F = check_window_sizes(W, F)
        if not isinstance(inner, str):
            if not callable(getattr(inner, "build", None)):
                raise DecoderInputError(f"inner must be a registered decoder name or a DecoderSpec, got {inner!r}")
            if inner_params:
                raise DecoderInputError("inner_params cannot be combined with an inner DecoderSpec")
            spec = inner
            specs = type(inner) if specs is None else specs
        else:
            if specs is None:
                raise DecoderInputError(f"inner={inner!r} is a name: pass specs=qdecode.DecoderSpec, an inner "
                                        f"DecoderSpec, or build through qdecode.decoder('window[inner={inner}]', ...)")
            if inner in UNSUPPORTED_INNER:
                raise DecoderInputError(f"inner={inner!r} cannot run inside a window: {UNSUPPORTED_INNER[inner]}")
            try:
                spec = specs.create(inner, inner_params)
            except UnknownDecoderError as exc:
                raise DecoderInputError(f"window inner decoder: {exc}") from None
        if spec.name in UNSUPPORTED_INNER:
            raise DecoderInputError(f"inner={spec.name!r} cannot run inside a window: {UNSUPPORTED_INNER[spec.name]}")
        if fallback not in FALLBACKS:
            raise DecoderInputError(f"fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}")
        if fallback != "none" and spec.name in GRAPHLIKE_INNER:
            raise DecoderInputError(f"fallback={fallback!r} needs per-column estimates; inner={spec.name!r} has none")
        self.fallback = fallback
        self.inner_spec = spec
        self.specs = specs
        self.problem = problem
        self.layout = RoundLayout.for_problem(problem, per_round, detector_rounds, W=self.W, F=self.F)
        if spec.name in GRAPHLIKE_INNER:
            from qdecode.decoders.graphlike import graphlike_problem

            self.work_problem = graphlike_problem(problem)
        else:
            self.work_problem = problem
        work = self.work_problem
        self.r_min, self.r_max = column_first_round(work.H, self.layout)
        plans = plan_windows(self.layout, self.r_min, self.W, self.F)
        self.windows = [self._compile(plan, k == len(plans) - 1) for k, plan in enumerate(plans)]
        self.work_unit = self._work_unit()
        self.round_detectors = [self.layout.detectors_of_round(r) for r in range(self.layout.num_rounds)]
        self.last_window_seconds = np.zeros(len(self.windows), dtype=np.float64)

    # --------------------------------------------------------------- building
    def _compile(self, plan: WindowPlan, k_is_last: bool) -> _Window:
        work = self.work_problem
        whole = plan.rows.size == work.num_detectors and plan.cols.size == work.num_errors
        if whole:  # one window covering everything: decode the problem itself (exact reproduction)
            sub = work
        else:
            sub = DecodingProblem.from_check_matrix(
                work.H[plan.rows][:, plan.cols], work.priors[plan.cols], work.L[:, plan.cols]
            )
        decoder = self.inner_spec.build(sub)
        last = k_is_last
        backup = None
        if self.fallback == "all" or (self.fallback == "last" and last):
            # the fallback as it was when window labels were first recorded (osd_key=last):
            # window's label does not spell the fallback's parameters
            backup = self.specs.from_label("bposd").build(sub)
        Hc = work.H[:, plan.commit_cols].astype(np.int32).tocsr()
        fwd_rows = np.flatnonzero(np.diff(Hc.indptr))
        return _Window(plan, decoder, fwd_rows, Hc[fwd_rows], work.L[:, plan.commit_cols].astype(np.int32).tocsr(),
                       backup)

    def _work_unit(self) -> str | None:
        """The inner decoders' common work unit (every window and fallback decoder's), or None (module docstring)."""
        units = {w.decoder.work_unit for w in self.windows}
        units |= {w.backup.work_unit for w in self.windows if w.backup is not None}
        return units.pop() if len(units) == 1 else None

    @property
    def num_windows(self) -> int:
        return len(self.windows)

    @property
    def per_column(self) -> bool:
        """Whether the committed columns are the problem's own (so ``decode_batch`` is available)."""
        return self.work_problem is self.problem

    # ------------------------------------------------------------- one window
    def _step(self, k: int, state: _State) -> WindowCommit:
        """Decode window ``k`` on every shot of ``state`` and commit it (the shared batch/stream step)."""
        t0 = time.perf_counter()
        w = self.windows[k]
        plan = w.plan
        S = state.residual.shape[0]
        commit_cols = plan.commit_cols
        committed = np.zeros((S, commit_cols.size), dtype=np.uint8)
        flips = np.zeros((S, state.observables.shape[1]), dtype=np.uint8)
        s_win = state.residual[:, plan.rows]
        shots = np.flatnonzero(s_win.any(axis=1))
        if shots.size:
            w.decoder.last_info = None
            est = w.decoder.decode_batch(s_win[shots])
            info = w.decoder.last_info
            counts_work = self.work_unit is not None
            if counts_work:
                state.add_work(shots, info)
            if info is not None and info.converged is not None:
                state.converged[shots, k] = info.converged
                if w.backup is not None and not info.converged.all():
                    redo = np.flatnonzero(~info.converged)
                    est = est.copy()
                    est[redo] = w.backup.decode_batch(s_win[shots[redo]])
                    if counts_work:
                        state.add_work(shots[redo], w.backup.last_info)
                    state.converged[shots[redo], k] = True  # OSD satisfies the window syndrome
                    state.fallback[shots[redo], k] = True
            if info is not None and info.iterations is not None:
                state.iterations[shots, k] = info.iterations
            if info is not None:
                state.add_inner_extra(shots, info.extra)
            state.decoded[shots, k] = True
            ec = np.ascontiguousarray(est[:, plan.commit_local])
            rows = slice(None) if shots.size == S else shots  # all shots (e.g. a one-shot stream): no ix_
            committed[rows] = ec
            if w.fwd_rows.size:
                if shots.size == S:
                    state.residual[:, w.fwd_rows] ^= _mod2_product(w.fwd_H, ec)
                else:
                    state.residual[np.ix_(shots, w.fwd_rows)] ^= _mod2_product(w.fwd_H, ec)
            flips[rows] = _mod2_product(w.commit_L, ec)
            state.observables[rows] ^= flips[rows]
            if state.errors is not None:
                if shots.size == S:
                    state.errors[:, commit_cols] = ec
                else:
                    state.errors[np.ix_(shots, commit_cols)] = ec
        seconds = time.perf_counter() - t0
        state.seconds[k] = seconds
        return WindowCommit(k, commit_cols, committed, flips, seconds)

    def _run(self, syndromes: np.ndarray, keep_errors: bool) -> _State:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        work = self.work_problem
        state = _State(s.shape[0], work.num_detectors, work.num_errors, work.num_observables,
                       len(self.windows), keep_errors, self.fallback != "none")
        state.residual[:] = s
        for k in range(len(self.windows)):
            self._step(k, state)
        self.last_info = state.info(self.work_unit is not None)
        self.last_window_seconds = state.seconds
        return state

    # ------------------------------------------------------------------ batch
    @property
    def gives_errors(self) -> bool:
        """Per-column estimates only where the windows decode the problem itself, not its graphlike form."""
        return self.per_column

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, n)``: the concatenated committed estimates."""
        if not self.gives_errors:
            raise DecoderCapabilityError(
                f"window[inner={self.inner_spec.name}] decodes the graphlike form of this problem, "
                "so it has no per-column estimate for it; use predict_observables_batch"
            )
        return self._run(syndromes, True).errors

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)``: ``L e mod 2`` accumulated over the commits."""
        return self._run(syndromes, False).observables

    # -------------------------------------------------------------- streaming
    def stream(self) -> "WindowStream":
        """A round-by-round decoder for one batch of shots (see :class:`WindowStream`)."""
        return WindowStream(self)


class WindowStream:
    """Real-time use: feed detector rounds in order, receive commits as windows close.

    The number of shots ``S`` is fixed by the first :meth:`push_round`. After :meth:`finish`,
    :attr:`observables`, :attr:`errors` (per-column problems only) and :attr:`info` hold the
    totals, which equal the batch path's outputs bit for bit.
    """

    def __init__(self, decoder: WindowDecoder):
        self.decoder = decoder
        self.next_round = 0
        self.next_window = 0
        self._state: _State | None = None
        self.finished = False

    @property
    def num_rounds(self) -> int:
        return self.decoder.layout.num_rounds

    def _ready(self, k: int) -> bool:
        """Window ``k`` (not the last) can run once its last round has been pushed."""
        plan = self.decoder.windows[k].plan
        return not plan.last and self.next_round >= plan.rounds[1]

    def push_round(self, detectors: np.ndarray) -> WindowCommit | None:
        """Add the next round's detectors ``(S, m_r)``; return the commit of a window it completes.

        Raises:
            DecoderInputError: wrong shape / values, a different shot count than earlier rounds,
                or more rounds than the problem has.
        """
        if self.finished or self.next_round >= self.num_rounds:
            raise DecoderInputError(f"all {self.num_rounds} rounds have already been pushed")
        r = self.next_round
        rows = self.decoder.round_detectors[r]
        d = np.asarray(detectors)
        if d.ndim != 2 or d.shape[1] != rows.size:
            raise DecoderInputError(
                f"round {r} has {rows.size} detectors: push an array of shape (shots, {rows.size}), got {d.shape}"
            )
        d = check_syndromes(d, rows.size)
        if self._state is None:
            work = self.decoder.work_problem
            self._state = _State(d.shape[0], work.num_detectors, work.num_errors, work.num_observables,
                                 self.decoder.num_windows, self.decoder.per_column, self.decoder.fallback != "none")
        elif d.shape[0] != self._state.residual.shape[0]:
            raise DecoderInputError(
                f"round {r} has {d.shape[0]} shots but earlier rounds had {self._state.residual.shape[0]}"
            )
        self._state.residual[:, rows] ^= d
        self.next_round += 1
        if self.next_window < self.decoder.num_windows and self._ready(self.next_window):
            commit = self.decoder._step(self.next_window, self._state)
            self.next_window += 1
            return commit
        return None

    def finish(self) -> WindowCommit:
        """Decode the last window (all rounds must have been pushed) and return its commit."""
        if self.finished:
            raise DecoderInputError("finish() was already called on this stream")
        if self.next_round < self.num_rounds or self._state is None:
            raise DecoderInputError(f"finish() needs all {self.num_rounds} rounds; {self.next_round} pushed")
        commit = None
        while self.next_window < self.decoder.num_windows:  # only the last one is left
            commit = self.decoder._step(self.next_window, self._state)
            self.next_window += 1
        self.finished = True
        self.decoder.last_info = self._state.info(self.decoder.work_unit is not None)
        self.decoder.last_window_seconds = self._state.seconds
        assert commit is not None
        return commit

    def _done(self) -> _State:
        if not self.finished:
            raise DecoderInputError("the stream is not finished: push every round, then call finish()")
        assert self._state is not None
        return self._state

    @property
    def observables(self) -> np.ndarray:
        """uint8 ``(S, k)`` predicted observable flips (after :meth:`finish`)."""
        return self._done().observables

    @property
    def errors(self) -> np.ndarray:
        """uint8 ``(S, n)`` total committed correction (after :meth:`finish`; per-column problems only)."""
        state = self._done()
        if state.errors is None:
            raise DecoderInputError("this window decoder has no per-column estimate (graphlike inner decoder)")
        return state.errors

    @property
    def info(self) -> WindowDecodeInfo:
        """Per-shot diagnostics (after :meth:`finish`)."""
        return self._done().info(self.decoder.work_unit is not None)


def _window_factory(problem, *, specs, inner, W, F, per_round, fallback, **inner_params):
    return WindowDecoder(problem, inner=inner, W=W, F=F, per_round=per_round, fallback=fallback,
                         inner_params=inner_params, specs=specs)


ENTRIES = {
    "window": DecoderEntry("window", _window_factory, WINDOW_PARAMS, nested="inner", builds_decoders=True,
                           doc="sliding-window decoding (W rounds, commit F) with any registered inner decoder"),
}
