"""Streaming sliding-window decoding of a long memory experiment against a round clock.

A memory experiment's syndrome arrives round by round; :func:`run_stream` decodes it as a real-time
decoder would: one shot (one experiment) at a time, window after window of the plan of
:mod:`qdecode.decoders.window_layout` (``W`` rounds per window, the first ``F`` committed; the last
window commits the rest), each window as soon as its last round is in. The answers are those of
the ``window`` decoder (:class:`~qdecode.decoders.window.WindowDecoder`) on the same problem, ``W``,
``F`` and inner decoder, bit for bit (``tests/sims/test_streaming.py``): per window, the window's
residual syndrome goes to the inner decoder unless it is zero, and the committed columns' syndrome
effect is forwarded to the residual (detectors of later rounds included) and their observable flips
are summed (:func:`qdecode.kernels.window_commit.commit_window`).

**Preparation, outside timing** (:func:`plan_stream`). The problem (for ``pymatching`` / ``uf``
its graphlike form, as ``window`` does) is cut into windows; each window is reduced to a *class*:
its sub-problem ``(H[rows, cols], priors[cols], L[:, cols])`` with rows relative to the window's
first detector, its commit positions and forward / observable maps. In the bulk of a memory
experiment consecutive windows are translates of each other, so a plan of 10^4 rounds has a handful
of classes, each with one compiled inner decoder. Rounds are the distinct values of the DEM's last
detector coordinate (stim's ``DETECTOR(x, y, t)``), the one source of arrival times; a circuit
without it is refused (no connectivity inference, which ``window`` allows, since a stream needs to
know when a detector arrives).

**Tiling** (:func:`plan_tiled`). The DEM of 10^4 rounds of the d = 7 surface code has 480,000
detectors and ~9 million mechanisms; building the problem and its graphlike form takes ~4 minutes.
For a circuit generated with a number of rounds (:func:`qdecode.sims.circuits.build_circuit`), the
plan is instead built from the same circuit with few rounds ``r0`` (``r0 = rounds mod F`` plus
enough to hold a bulk window twice) and extended: copies of a bulk class are inserted between two
consecutive windows of that class, offsets stepping by ``F`` rounds of detectors. This is exact
because stim's DEM of the longer circuit repeats the same loop body (same mechanisms, same
probabilities, shifted detectors): the test compares the tiled plan with the plan of the whole long
problem, window by window (classes, offsets, rounds), and decodes both; at run time the tiled plan's
detector and observable counts must equal the long circuit's. Shots are sampled from the long
circuit with stim's detector sampler, in chunks of :data:`SAMPLE_CHUNK` shots.

**Clock and schedule.** Per shot, each window's *service time* is measured with
``time.perf_counter_ns`` around the whole window step (slicing the residual, the inner decoder's
call, the commit); the inner decoder's call is timed on its own, and *harness time* is the rest
(every window whose syndrome is zero is harness only). Round ``r`` arrives at ``r T`` (``T`` the
round period); window ``k`` needs rounds up to ``R_k`` (the last round it covers) and starts at
``max(R_k T, finish_{k-1})``; it finishes ``service_k`` later; its *reaction time* is
``finish_k - R_k T``, the time from the arrival of the last syndrome it needs to its committed
correction (:func:`schedule`). A decoder paced in real time (idle until a round arrives, one window
at a time on one thread) would follow exactly this schedule with the same service times, since a
window's work does not depend on when it runs; measuring service times once therefore gives the
reaction distribution at any period. The *sustained period* is the mean service time per round,
``sum(service) / rounds`` over all shots: the shortest period at which the backlog does not grow
(at a shorter period the queue grows by ``service - T`` per round without bound; at this one it is
critically loaded, so reaction times grow like the square root of the stream's length, which the
reactions at a few periods around it show). Each shot starts with an idle decoder and a fresh
residual (a copy of the shot's detection events: ingestion is outside the clock; it costs one copy
of ``m`` bytes per shot, a few nanoseconds per round). The garbage collector is off while a shot
is timed, as a real-time loop would keep it; one untimed warm-up shot (JIT compilation, first-call
allocations) precedes the timed ones.

**Overhead.** ``overhead = harness / inner`` summed over all windows of all shots: the time the
streaming harness adds outside the inner decoder's calls, as a fraction of the inner decoder's time
(the target of issue 44: at most 0.2, the harness adding at most 20 %).

Logical error rate: a shot fails when any predicted observable differs from the sampled one;
:meth:`StreamResult.logical_error_rates` gives the per-shot rate and its per-round equivalent with
the binomial bands of :func:`qdecode.sims.stats.fit_binomial` (sinter's convention).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import time
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import Decoder, DecoderInputError
from qdecode.decoders.window import GRAPHLIKE_INNER, UNSUPPORTED_INNER
from qdecode.decoders.window_layout import RoundLayout, check_window_sizes, column_first_round, plan_windows
from qdecode.errors import InputError
from qdecode.problem import DecodingProblem
from qdecode.sims.stats import Fit, fit_binomial, shot_error_rate_to_per_round

#: Shots per stim sampler call (bit-packed; one shot is unpacked at a time).
SAMPLE_CHUNK = 64
#: Mantissa bits of the priors that tell window classes apart (:func:`prior_key`; relative 1e-12).
PRIOR_BITS = 40
#: Periods, as multiples of the sustained period, at which :meth:`StreamResult.summary` reports reactions.
PERIOD_FACTORS = (0.9, 1.0, 1.1, 1.25, 1.5, 2.0)


# ---------------------------------------------------------------------------------------- the plan
@dataclasses.dataclass
class WindowClass:
    """One distinct window: its compiled inner decoder and the maps of its commit.

    Row indices are relative to the window's first detector (the instance's ``offset``).

    Attributes:
        decoder: the inner decoder compiled for the window's sub-problem.
        rows: int64 ``(m_w,)`` the window's detectors, relative, ascending.
        lo, hi: ``rows == arange(lo, hi)`` when the rows are contiguous (a slice), else ``-1, -1``.
        commit_local: int64 ``(c,)`` positions in the sub-problem's columns of the committed ones.
        fwd_ptr, fwd_rows: int64 CSR over the committed columns: the detectors each flips (relative).
        obs_ptr, obs_idx: int64 CSR over the committed columns: the observables each flips.
        key: hex digest of everything above but the decoder (two windows with one key are the same).
        num_errors: columns of the sub-problem.
    """

    decoder: Decoder | None
    rows: np.ndarray
    lo: int
    hi: int
    commit_local: np.ndarray
    fwd_ptr: np.ndarray
    fwd_rows: np.ndarray
    obs_ptr: np.ndarray
    obs_idx: np.ndarray
    key: str
    num_errors: int


@dataclasses.dataclass
class StreamPlan:
    """The windows of one stream: which class each is, where it sits, which round it waits for.

    Attributes:
        classes: the distinct windows.
        window_class: int64 ``(K,)`` class of window ``k``.
        offset: int64 ``(K,)`` global index of window ``k``'s first detector.
        need_round: int64 ``(K,)`` the last round window ``k`` covers (it starts once that round is in).
        num_rounds: rounds (distinct detector time coordinates, the final data readout included).
        num_detectors, num_observables: of the whole stream.
        W, F: window and commit sizes in rounds.
        inner: the inner decoder's label.
        tiled_windows: windows inserted by :func:`plan_tiled` (0: planned on the whole problem).
    """

    classes: list[WindowClass]
    window_class: np.ndarray
    offset: np.ndarray
    need_round: np.ndarray
    num_rounds: int
    num_detectors: int
    num_observables: int
    W: int
    F: int
    inner: str
    tiled_windows: int = 0

    @property
    def num_windows(self) -> int:
        return int(self.window_class.size)

    def class_counts(self) -> list[int]:
        """Windows per class (how often each compiled inner decoder is used)."""
        return np.bincount(self.window_class, minlength=len(self.classes)).tolist()


def resolve_inner(inner: Any, params: Any = None):
    """The inner decoder's :class:`~qdecode.decoders.registry.DecoderSpec` from a name or label.

    Args:
        inner: ``"pymatching"``, ``"relay-bp[gamma0=0.1]"``, a sinter name, or a ``DecoderSpec``.
        params: extra ``key=value`` strings or a mapping (with a name only).

    Raises:
        DecoderInputError: an unknown decoder or parameter, a classical decoder, or one that
            cannot run inside a window (``window`` itself, correlated matching).
    """
    from qdecode.decoders.registry import DecoderSpec, UnknownDecoderError

    if isinstance(inner, DecoderSpec):
        spec = inner
    else:
        try:
            spec = DecoderSpec.parse(str(inner), params)
        except UnknownDecoderError as exc:
            raise DecoderInputError(f"inner decoder: {exc}") from None
    if spec.name in UNSUPPORTED_INNER:
        raise DecoderInputError(
            f"inner decoder {spec.name!r} cannot run inside a window: {UNSUPPORTED_INNER[spec.name]}")
    if spec.kind != "quantum":
        raise DecoderInputError(f"inner decoder {spec.name!r} is a classical (block) decoder, not a syndrome decoder")
    return spec


def stream_layout(problem: DecodingProblem, W: int, F: int) -> RoundLayout:
    """Rounds from the DEM's last detector coordinate (time), checked as ``window`` checks them.

    Raises:
        DecoderInputError: no DEM, a detector without coordinates, or a last coordinate that is not
            a time (out of detector order, or mechanisms spanning more rounds than ``(W, F)`` allow).
    """
    W, F = check_window_sizes(W, F)
    layout = RoundLayout.for_problem(problem, 0, None, W=W, F=F)
    if layout.source != "coordinate last":
        raise DecoderInputError(
            "streaming needs detector time coordinates (stim's DETECTOR(x, y, t), the last coordinate, in "
            f"detector order) to know when each round arrives; this model's rounds came from {layout.source!r}"
        )
    return layout


def _csr_of_columns(M: sp.csc_matrix, cols: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """int64 ``(ptr, idx)``: for each column of ``cols``, its rows of ``M`` minus ``shift``."""
    sub = M[:, cols].tocsc()
    sub.sort_indices()
    return sub.indptr.astype(np.int64), sub.indices.astype(np.int64) - shift


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def canonical_problem(problem: DecodingProblem) -> DecodingProblem:
    """``problem``'s columns in a canonical order: ascending by their detector tuples, then observables.

    A DEM lists its mechanisms in the order of its instructions; stim folds a memory experiment's
    rounds into a loop whose body may hold two rounds, so consecutive rounds list the same
    mechanisms in different orders. :meth:`DecodingProblem.from_dem` merges equal detector sets, so
    detector tuples tell columns apart (detector-less columns by their observables), and the order
    of tuples is unchanged by a shift of every detector index: translated windows list their columns
    alike. The returned problem has no DEM (its columns are not the DEM's).
    """
    Hc, Lc = sp.csc_matrix(problem.H), sp.csc_matrix(problem.L)
    Hc.sort_indices()
    Lc.sort_indices()
    keys = []
    for M in (Lc, Hc):  # np.lexsort sorts by its last key first: detectors, then observables
        deg = np.diff(M.indptr)
        width = int(deg.max(initial=0))
        pad = np.full((M.shape[1], width), -1, dtype=np.int64)
        pos = np.arange(M.indices.size) - np.repeat(M.indptr[:-1], deg)
        pad[np.repeat(np.arange(M.shape[1]), deg), pos] = M.indices
        keys.extend(pad[:, c] for c in range(width - 1, -1, -1))
    order = np.lexsort(keys) if keys else np.arange(problem.num_errors)
    return DecodingProblem.from_check_matrix(problem.H[:, order], problem.priors[order], problem.L[:, order])


def prior_key(priors: np.ndarray, bits: int | None) -> np.ndarray:
    """float64 priors with their mantissas rounded to ``bits`` bits (None: unchanged), for class keys.

    :meth:`DecodingProblem.from_dem` sums merged mechanisms in the order of the DEM, which differs
    between the two rounds of a folded loop body, so translated windows' priors differ in their last
    bits (1e-19 at p = 1e-3); with ``bits = 40`` (relative 1e-12) they are one class.
    """
    p = np.asarray(priors, dtype=np.float64)
    if bits is None:
        return p
    mant, exp = np.frexp(p)
    return np.ldexp(np.round(mant * 2.0 ** bits) / 2.0 ** bits, exp)


def plan_stream(problem: DecodingProblem, inner: Any, W: int, F: int, *, build: bool = True,
                prior_bits: int | None = PRIOR_BITS) -> StreamPlan:
    """Plan the windows of ``problem`` and compile one inner decoder per distinct window.

    Args:
        problem: a circuit-level problem with a DEM (:meth:`DecodingProblem.from_dem`).
        inner: inner decoder (see :func:`resolve_inner`).
        W, F: window and commit sizes in rounds (``1 <= F <= W``).
        build: compile the inner decoders (False: plan only, ``decoder`` is None; for tests).
        prior_bits: windows whose priors agree to this many mantissa bits are one class, decoded
            with the first one's priors (:func:`prior_key`); None: exact priors, so every window is
            decoded with its own (the ``window`` decoder's answers bit for bit).

    Raises:
        DecoderInputError: see :func:`resolve_inner`, :func:`stream_layout`.
    """
    spec = resolve_inner(inner)
    W, F = check_window_sizes(W, F)
    layout = stream_layout(problem, W, F)
    if spec.name in GRAPHLIKE_INNER:
        from qdecode.decoders.graphlike import graphlike_problem

        work = canonical_problem(graphlike_problem(problem))
    else:
        work = canonical_problem(problem)
    r_min, _ = column_first_round(work.H, layout)
    Hc, Lc = work.H.tocsc(), work.L.tocsc()
    first_det = np.searchsorted(layout.detector_round, np.arange(layout.num_rounds))
    by_key: dict[str, int] = {}
    classes: list[WindowClass] = []
    wclass, offset, need = [], [], []
    for plan in plan_windows(layout, r_min, W, F):
        o = int(first_det[plan.rounds[0]])
        rel = plan.rows - o
        sub_H = work.H[plan.rows][:, plan.cols].tocsr()
        sub_L = work.L[:, plan.cols].tocsr()
        priors = work.priors[plan.cols]
        fwd_ptr, fwd_rows = _csr_of_columns(Hc, plan.commit_cols, o)
        obs_ptr, obs_idx = _csr_of_columns(Lc, plan.commit_cols, 0)
        key = _digest(rel, sub_H.indptr, sub_H.indices, sub_L.indptr, sub_L.indices, prior_key(priors, prior_bits),
                      plan.commit_local, fwd_ptr, fwd_rows, obs_ptr, obs_idx)
        if key not in by_key:
            by_key[key] = len(classes)
            contiguous = rel.size > 0 and bool(np.all(np.diff(rel) == 1))
            decoder = None
            if build:
                sub = DecodingProblem.from_check_matrix(sub_H, priors, sub_L)
                decoder = spec.build(sub)
            classes.append(WindowClass(decoder, rel.astype(np.int64), int(rel[0]) if contiguous else -1,
                                       int(rel[-1]) + 1 if contiguous else -1, plan.commit_local.astype(np.int64),
                                       fwd_ptr, fwd_rows, obs_ptr, obs_idx, key, int(plan.cols.size)))
        wclass.append(by_key[key])
        offset.append(o)
        need.append(plan.rounds[1] - 1)
    return StreamPlan(classes, np.asarray(wclass, np.int64), np.asarray(offset, np.int64),
                      np.asarray(need, np.int64), layout.num_rounds, problem.num_detectors,
                      problem.num_observables, W, F, spec.label())


def tile_plan(plan: StreamPlan, extra: int) -> StreamPlan:
    """``plan`` with ``extra`` more bulk windows, i.e. ``extra * F`` more rounds.

    The copies go between the first two consecutive windows of one class (neither the last
    window), offsets stepping by that pair's offset difference. Valid where the longer problem
    repeats the shorter one's bulk (module docstring, "Tiling").

    Raises:
        DecoderInputError: no two consecutive windows share a class (no bulk to repeat), or their
            offset step is not positive.
    """
    if extra == 0:
        return plan
    wc, off, need = plan.window_class, plan.offset, plan.need_round
    same = np.flatnonzero(wc[:-2] == wc[1:-1]) if wc.size >= 3 else np.zeros(0, np.int64)
    if same.size == 0:
        raise DecoderInputError("the short plan has no repeating bulk window to tile; use more rounds")
    j = int(same[0])
    step = int(off[j + 1] - off[j])
    if step <= 0 or need[j + 1] - need[j] != plan.F:
        raise DecoderInputError(f"bulk windows {j}, {j + 1} do not step forward by {plan.F} rounds")
    i = np.arange(1, extra + 1, dtype=np.int64)
    return dataclasses.replace(
        plan,
        window_class=np.concatenate([wc[:j + 1], np.full(extra, wc[j]), wc[j + 1:]]),
        offset=np.concatenate([off[:j + 1], off[j] + step * i, off[j + 1:] + step * extra]),
        need_round=np.concatenate([need[:j + 1], need[j] + plan.F * i, need[j + 1:] + plan.F * extra]),
        num_rounds=plan.num_rounds + plan.F * extra,
        num_detectors=plan.num_detectors + step * extra,
        tiled_windows=plan.tiled_windows + extra,
    )


def short_rounds(rounds: int, W: int, F: int) -> int:
    """Rounds of the short circuit that :func:`plan_tiled` plans on: ``rounds`` itself when that is
    already short, else the least ``r0 >= W + 4F + 2`` with ``r0 = rounds (mod F)``."""
    base = W + 4 * F + 2
    if rounds <= base + F:
        return rounds
    return base + (rounds - base) % F


def plan_tiled(make_circuit: Callable[[int], Any], rounds: int, inner: Any, W: int, F: int) -> tuple[StreamPlan, Any]:
    """The plan of ``make_circuit(rounds)``, built on a short circuit and tiled (module docstring).

    Args:
        make_circuit: ``rounds -> stim.Circuit``, the same memory experiment with that many rounds.
        rounds: syndrome rounds of the long circuit.
        inner, W, F: as :func:`plan_stream`.

    Returns:
        ``(plan, circuit)``: the tiled plan and the long circuit (to sample from).

    Raises:
        DecoderInputError: as :func:`plan_stream`, or the tiled plan does not match the long
            circuit's detector / observable counts.
    """
    from qdecode.problem import decoding_dem

    W, F = check_window_sizes(W, F)
    circuit = make_circuit(rounds)
    r0 = short_rounds(rounds, W, F)
    short = make_circuit(r0) if r0 != rounds else circuit
    plan = plan_stream(DecodingProblem.from_dem(decoding_dem(short)), inner, W, F)
    if r0 != rounds:
        plan = tile_plan(plan, (rounds - r0) // F)
    if (plan.num_detectors, plan.num_observables) != (circuit.num_detectors, circuit.num_observables):
        raise DecoderInputError(
            f"the tiled plan has {plan.num_detectors} detectors and {plan.num_observables} observables, the "
            f"{rounds}-round circuit {circuit.num_detectors} and {circuit.num_observables}: its rounds do not repeat"
        )
    return plan, circuit


# ------------------------------------------------------------------------------------ one shot
@dataclasses.dataclass
class StreamSteps:
    """What :func:`stream_shot` needs, resolved once per plan (outside timing).

    Attributes:
        residual: uint8 ``(m,)`` the residual syndrome buffer, reused by every shot.
        steps: per window ``(decode, view, rows, maps, offset, next_lo, next_hi)``: the inner
            decoder's ``decode_batch``, the window's syndrome as a ``(1, m_w)`` view of ``residual``
            (``None`` where its rows are not contiguous: then ``rows``, absolute, index it), the
            window's :func:`~qdecode.kernels.window_commit.commit_map`, its first detector, and the
            next window's detector bounds for the commit kernel's look-ahead (``0, 0``: none or
            not contiguous).
    """

    residual: np.ndarray
    steps: list[tuple]


def stream_steps(plan: StreamPlan) -> StreamSteps:
    """The :class:`StreamSteps` of ``plan`` (inner decoders compiled)."""
    from qdecode.kernels.window_commit import commit_map

    residual = np.zeros(plan.num_detectors, dtype=np.uint8)
    maps = [commit_map(c.commit_local, c.fwd_ptr, c.fwd_rows, c.obs_ptr, c.obs_idx) for c in plan.classes]
    bounds = []
    for w, o in zip(plan.window_class.tolist(), plan.offset.tolist()):
        c = plan.classes[w]
        bounds.append((o + c.lo, o + c.hi) if c.lo >= 0 else (-1, -1))
    steps = []
    for k, (w, o) in enumerate(zip(plan.window_class.tolist(), plan.offset.tolist())):
        c = plan.classes[w]
        lo, hi = bounds[k]
        view = residual[None, lo:hi] if lo >= 0 else None
        nxt = bounds[k + 1] if k + 1 < len(bounds) and bounds[k + 1][0] >= 0 else (0, 0)
        steps.append((c.decoder.decode_batch, view, c.rows + o, maps[w], o, *nxt))
    return StreamSteps(residual, steps)


def stream_shot(plan: StreamPlan, dets: np.ndarray, service_ns: np.ndarray, inner_ns: np.ndarray,
                decoded: np.ndarray, steps: StreamSteps | None = None) -> np.ndarray:
    """Decode one shot window by window, timing each window; return its predicted observables.

    Args:
        plan: the stream plan (inner decoders compiled).
        dets: uint8 ``(m,)`` the shot's detection events (not modified; copied into the buffer).
        service_ns, inner_ns: int64 ``(K,)`` filled with each window's service time and the inner
            decoder call's time, in nanoseconds (``inner_ns`` 0 where the window syndrome is zero).
        decoded: bool ``(K,)`` filled: whether the inner decoder ran.
        steps: :func:`stream_steps` of ``plan`` (computed when None).

    Returns:
        uint8 ``(k,)`` predicted observable flips.
    """
    from qdecode.kernels.window_commit import commit_window

    steps = stream_steps(plan) if steps is None else steps
    residual = steps.residual
    np.copyto(residual, dets, casting="unsafe")
    obs = np.zeros(plan.num_observables, dtype=np.uint8)
    clock = time.perf_counter_ns
    ends, inner = [], []  # plain lists: appending costs less than numpy item assignment
    end, inner_call = ends.append, inner.append
    nonzero = -1  # the previous commit's look-ahead: 1 / 0, or -1 (unknown)
    t0 = clock()
    for decode, view, rows, maps, o, next_lo, next_hi in steps.steps:
        s = view if view is not None else residual[rows][None, :]
        if nonzero == 1 or (nonzero < 0 and s.any()):
            t1 = clock()
            est = decode(s)
            t2 = clock()
            flag = commit_window(est, maps, o, residual, obs, next_lo, next_hi)
            nonzero = flag if next_hi else -1
            inner_call(t2 - t1)
        else:
            nonzero = -1
            inner_call(-1)
        end(clock())
    # outside the clock: a window's service time runs from the previous window's end (the loop's
    # own bookkeeping included) to its own
    service_ns[:] = np.diff(np.asarray(ends, dtype=np.int64), prepend=t0)
    spent = np.asarray(inner, dtype=np.int64)
    decoded[:] = spent >= 0
    inner_ns[:] = np.maximum(spent, 0)
    return obs


# -------------------------------------------------------------------------------- the schedule
def schedule(need_round: np.ndarray, service_ns: np.ndarray, period_ns: float) -> tuple[np.ndarray, np.ndarray]:
    """Finish and reaction times of one shot's windows at round period ``period_ns``.

    Round ``r`` arrives at ``r * period_ns``; window ``k`` starts at ``max(arrival of
    need_round[k], finish[k - 1])`` and finishes ``service_ns[k]`` later. With ``a`` the arrivals
    and ``c`` the cumulative service, ``finish[k] = c[k] + max_{j <= k} (a[j] - c[j - 1])`` (the
    max-plus form of the recursion).

    Args:
        need_round: int64 ``(K,)`` or ``(S, K)``, non-decreasing along the last axis.
        service_ns: ``(K,)`` or ``(S, K)`` service times in ns (each row one shot, starting idle).
        period_ns: the round period in ns, > 0.

    Returns:
        ``(finish, reaction)``: float64 arrays of ``service_ns``'s shape, in ns.

    Examples:
        >>> f, r = schedule(np.array([2, 3, 4]), np.array([5, 1, 1]), 2.0)
        >>> f.tolist(), r.tolist()  # window 0 ends at 4 + 5 = 9; window 1 waits for it
        ([9.0, 10.0, 11.0], [5.0, 4.0, 3.0])
    """
    if not period_ns > 0:
        raise InputError(f"the round period must be > 0, got {period_ns}")
    service = np.asarray(service_ns, dtype=np.float64)
    arrival = np.broadcast_to(np.asarray(need_round, dtype=np.float64) * float(period_ns), service.shape)
    done = np.cumsum(service, axis=-1)
    finish = done + np.maximum.accumulate(arrival - (done - service), axis=-1)
    return finish, finish - arrival


# ------------------------------------------------------------------------------------- results
@dataclasses.dataclass
class StreamResult:
    """Timings and predictions of :func:`run_stream`.

    Attributes:
        service_ns: int64 ``(S, K)`` service time of every window of every shot, ns.
        inner_ns: int64 ``(S, K)`` time in the inner decoder's call (0 where it did not run), ns.
        decoded: bool ``(S, K)`` whether the inner decoder ran.
        need_round: int64 ``(K,)`` the last round each window needs.
        predictions, observables: uint8 ``(S, k)`` predicted and sampled observable flips.
        rounds: syndrome rounds per shot, for the per-round error rate.
        num_rounds: rounds of the stream's clock (detector time layers).
    """

    service_ns: np.ndarray
    inner_ns: np.ndarray
    decoded: np.ndarray
    need_round: np.ndarray
    predictions: np.ndarray
    observables: np.ndarray
    rounds: int
    num_rounds: int

    @property
    def shots(self) -> int:
        return int(self.service_ns.shape[0])

    @property
    def errors(self) -> int:
        """Shots with any observable mispredicted."""
        return int(np.count_nonzero(np.any(self.predictions != self.observables, axis=1)))

    def sustained_period_ns(self) -> float:
        """Mean service time per round (ns): the shortest period without a growing backlog."""
        return float(self.service_ns.sum(dtype=np.float64) / (self.shots * self.num_rounds))

    def overhead(self) -> float:
        """Harness time outside the inner decoder's calls / the inner decoder's time."""
        inner = float(self.inner_ns.sum(dtype=np.float64))
        harness = float(self.service_ns.sum(dtype=np.float64)) - inner
        return harness / inner if inner > 0 else float("inf")

    def reaction_us(self, period_ns: float) -> dict[str, float]:
        """Reaction time over every window of every shot at ``period_ns``: p50, p99, max, mean (us)."""
        _, reaction = schedule(self.need_round, self.service_ns, period_ns)
        q50, q99 = np.percentile(reaction, [50, 99])
        return {"period_us": period_ns / 1e3, "p50_us": float(q50) / 1e3, "p99_us": float(q99) / 1e3,
                "max_us": float(reaction.max()) / 1e3, "mean_us": float(reaction.mean()) / 1e3}

    def logical_error_rates(self) -> dict[str, Fit]:
        """``{"per_shot": Fit, "per_round": Fit}``: the binomial band of the shot failure rate
        (:func:`qdecode.sims.stats.fit_binomial`) and its per-round equivalent over ``rounds`` rounds."""
        shot = fit_binomial(num_shots=self.shots, num_hits=self.errors)
        return {"per_shot": shot, "per_round": shot_error_rate_to_per_round(shot, self.rounds)}

    def summary(self, period_ns: float) -> dict[str, Any]:
        """The numbers a report prints: times in us, rates as ``[low, best, high]``."""
        sustained = self.sustained_period_ns()
        windows_decoded = int(np.count_nonzero(self.decoded))
        rates = self.logical_error_rates()
        inner = self.inner_ns[self.decoded]
        return {
            "shots": self.shots, "rounds": self.rounds, "windows_per_shot": int(self.need_round.size),
            "errors": self.errors,
            "ler_per_shot": list(rates["per_shot"]), "ler_per_round": list(rates["per_round"]),
            "sustained_period_us": sustained / 1e3,
            "sustained_rounds_per_s": 1e9 / sustained if sustained > 0 else float("inf"),
            "service_per_window_us": float(self.service_ns.mean()) / 1e3,
            "inner_per_decoded_window_us": float(inner.mean()) / 1e3 if inner.size else 0.0,
            "windows_decoded_fraction": windows_decoded / self.service_ns.size,
            "inner_s": float(self.inner_ns.sum()) / 1e9,
            "harness_s": float(self.service_ns.sum() - self.inner_ns.sum()) / 1e9,
            "overhead": self.overhead(),
            "reaction": self.reaction_us(period_ns),
            "reaction_near_sustained": ([self.reaction_us(f * sustained) for f in PERIOD_FACTORS]
                                        if sustained > 0 else []),
        }


def _timed_shot(plan: StreamPlan, dets: np.ndarray, steps: StreamSteps, repeats: int, service: np.ndarray,
                inner: np.ndarray, decoded: np.ndarray) -> np.ndarray:
    """Stream one shot ``repeats`` times (garbage collector off); keep, per window, the repeat with the
    least service time (its inner time with it); return the prediction (checked equal across repeats)."""
    s_try, i_try = np.empty_like(service), np.empty_like(inner)
    enabled = gc.isenabled()
    gc.disable()
    try:
        pred = stream_shot(plan, dets, service, inner, decoded, steps)
        for _ in range(repeats - 1):
            again = stream_shot(plan, dets, s_try, i_try, decoded, steps)
            if not np.array_equal(again, pred):  # pragma: no cover - decoders are deterministic
                raise AssertionError("a repeated shot gave another prediction")
            better = s_try < service
            service[better], inner[better] = s_try[better], i_try[better]
    finally:
        if enabled:
            gc.enable()
    return pred


def run_stream(plan: StreamPlan, circuit: Any, shots: int, seed: int | None, *, rounds: int | None = None,
               repeats: int = 1, progress: Callable[[int, int], None] | None = None) -> StreamResult:
    """Sample ``shots`` shots of ``circuit`` and stream each through ``plan`` (module docstring).

    Args:
        plan: a plan whose detectors and observables are the circuit's.
        circuit: ``stim.Circuit`` to sample (stim's detector sampler, ``seed``).
        shots: shots to time, >= 1 (plus one untimed warm-up shot, the first sampled, decoded twice).
        seed: sampler seed (None: stim's entropy).
        rounds: syndrome rounds for the per-round error rate (default: ``plan.num_rounds``).
        repeats: stream every shot this many times and keep, per window, the least service time
            (with its inner time). A window's work is a function of the shot, so repeats differ only by
            interference: on a shared machine the scheduler preempts the process for whole time slices
            (4 ms stalls at 250 Hz), which a single pass charges to the window it lands in.
        progress: called as ``progress(done, shots)`` after each sampled chunk.

    Raises:
        DecoderInputError: ``shots < 1``, ``repeats < 1`` or a circuit that does not match the plan.
    """
    if isinstance(shots, bool) or int(shots) != shots or shots < 1:
        raise DecoderInputError(f"shots must be an integer >= 1, got {shots!r}")
    if isinstance(repeats, bool) or int(repeats) != repeats or repeats < 1:
        raise DecoderInputError(f"repeats must be an integer >= 1, got {repeats!r}")
    if (circuit.num_detectors, circuit.num_observables) != (plan.num_detectors, plan.num_observables):
        raise DecoderInputError("the circuit's detectors / observables do not match the stream plan")
    shots = int(shots)
    K, k, m = plan.num_windows, plan.num_observables, plan.num_detectors
    service = np.zeros((shots, K), dtype=np.int64)
    inner = np.zeros((shots, K), dtype=np.int64)
    decoded = np.zeros((shots, K), dtype=np.bool_)
    pred = np.zeros((shots, k), dtype=np.uint8)
    actual = np.zeros((shots, k), dtype=np.uint8)
    steps = stream_steps(plan)
    sampler = circuit.compile_detector_sampler(seed=seed)
    done = 0
    warm = True
    while done < shots:
        n = min(SAMPLE_CHUNK, shots - done)
        packed, packed_obs = sampler.sample(n, separate_observables=True, bit_packed=True)
        obs = np.unpackbits(packed_obs, axis=1, count=k, bitorder="little")
        for i in range(n):
            dets = np.unpackbits(packed[i], count=m, bitorder="little")
            if warm:  # JIT and first-call costs, discarded
                stream_shot(plan, dets, service[done], inner[done], decoded[done], steps)
                warm = False
            pred[done] = _timed_shot(plan, dets, steps, int(repeats), service[done], inner[done], decoded[done])
            actual[done] = obs[i]
            done += 1
        if progress is not None:
            progress(done, shots)
    return StreamResult(service, inner, decoded, plan.need_round.copy(), pred, actual,
                        int(rounds if rounds is not None else plan.num_rounds), plan.num_rounds)
