"""Relay-BP ensembles (``relay-bp[ensemble=N]``): one shot decoded by ``N`` Relay-BP chains side by side.

The gamma ensemble of arXiv:2506.01779 (Relay-BP) as CUDA-Q QEC's Relay-BP study runs it: ``N``
independent relay chains of one shot, each on its own lane of the 8-bit lanes sweep of
:mod:`qdecode.kernels.relay_lanes_narrow` (uint8 check state, int16 sums; per lane exactly the scalar
kernel's integer arithmetic of :func:`qdecode.kernels.relay.relay_decode`). One *step* advances all ``N``
chains of the shot by one min-sum iteration of their own legs.

Chains. Chain ``c`` runs legs ``r = 0..R`` with ``R = ceil(legs / N)`` (the serial leg budget shared by the
chains, so a shot that never converges costs ``pre_iter + R * leg_iter`` steps instead of the serial
``pre_iter + legs * leg_iter`` iterations), each leg from ``nu = lambda`` with the memory ``M`` relayed from
the chain's previous leg (``M = lambda`` at leg 0), leg 0 for at most ``pre_iter`` iterations, later legs
for at most ``leg_iter``. Chain ``c``'s key is ``key_c = key + c * CHAIN_STRIDE`` (mod 2^64) with ``key =
shot_key(seed, syndrome)``, the serial decoder's key, so chain 0's key is exactly the serial key. Its gammas:

* chain 0, leg 0: ``gamma0`` on every variable (the serial leg 0);
* every other (chain, leg): ``draw_gammas(key_c, r)`` per variable, ``U[gamma_lo, gamma_hi)`` (chain 0's
  legs ``r >= 1`` are the serial decoder's legs ``r``); with an explicit ``(rows, n)`` table, row
  ``(c (R + 1) + r) % rows``.

So chain 0 is the serial decoder truncated to ``R`` legs, and ``N = 1`` is the serial decoder bit for bit.
Chains ``c > 0`` start with drawn gammas instead of repeating chain 0's leg 0: the same leg 0 on every chain
would give ``N`` identical solutions at the same step (counting ``N`` towards ``stop_after`` for one
solution) and spend ``N - 1`` lanes on nothing new. At ``M = lambda`` the memory prior
``(1 - gamma) lambda + gamma M`` is ``lambda`` for any gamma, so a drawn first leg starts as plain min-sum
and differs from leg 0 only from its second iteration on.

Stopping and the answer. After each step the chains' legs that converged (``H e = s``) or reached their
limit end, in chain order; a converged leg counts and is a candidate. The shot stops as soon as the shot
has ``stop_after`` converged legs over all its chains (every converged leg of that step counts), or when
every chain has run its last leg. It returns the converged decision of least weight ``W(e) = sum_{e_j=1}
ln((1-p_j)/p_j)`` (float64 priors; ties: the earliest step, then the lowest chain), else (nothing
converged) chain 0's decision at the end of its leg 0, the serial decoder's fallback, with ``converged =
False``. The chains of a shot run in lock step from the shot's start, whatever else shares the lanes, so
the output is a pure function of (problem, parameters, seed, syndrome).

Outputs per shot (:class:`EnsembleOut`): the decision, ``converged``, ``iterations`` (min-sum iterations
summed over the chains, each chain counted until its last leg ends), ``legs`` (legs run after leg 0, summed
over the chains), ``weight`` and ``steps``, the work clock: lane-group steps (one step = one iteration of all
``N`` chains at once; ``N = 1``: ``steps == iterations``).

Confidence (:func:`relay_ensemble_gap_range`, the serial decoder's gap of
:func:`~qdecode.kernels.relay.relay_gap_range` over all the chains): every converged leg of every chain is
recorded as it ends (its weight, the sum the verdict already forms, and its class code,
:func:`~qdecode.kernels.relay.record_solution`), in step then chain order, so the returned decision is the first
recorded one of least weight, as :func:`~qdecode.kernels.relay.solutions_gap` takes it. Per shot
(:class:`EnsembleGapOut`): ``weight_other``, the least weight of a converged leg of another logical class than
the returned decision (``inf``: every converged leg found its class; ``nan``: none converged), and ``classes``,
the distinct classes among the converged legs. O(n) per converged leg on top of the decoding, in the same
sweep; ``N = 1`` gives the serial gap bit for bit.

The trail (:func:`relay_ensemble_timed_range`, the *anytime* deadline policy's input; the serial kernel's
:class:`~qdecode.kernels.relay.RelayTrail`): the answer so far is the decision kept by the rule above, i.e.
chain 0's leg-0 decision once leg 0 ends (unless a leg converged before), then each converged leg lighter than
the answer so far (none before the first of these). After every step that changed it, one event
(:func:`~qdecode.kernels.relay.record_event`): the steps so far (the work clock), ticks since the shot's start,
and the answer's class code. Its last answer is the returned one; at most ``stop_after + 1`` events (the
fallback, then at most one per step with a converged leg).

Kernels: :func:`relay_ensemble_range` (batches: ``groups = lanes // N`` shots side by side on one sweep, a
finished shot's lanes take the next shot; with no shot left the busy groups are compacted to the front
and the sweep narrows to the least compiled width that holds them) and
:func:`relay_ensemble_timed_range` (the real-time mode: one shot at a time on ``N`` lanes, each timed with
:func:`~qdecode.kernels.clock.ticks`, its trail recorded) and :func:`relay_ensemble_gap_range` (batches, the
gap recorded). All give the same answers, bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from qdecode.kernels.clock import ticks
from qdecode.kernels.relay import RelayTrail, draw_gammas, record_event, record_solution, shot_key, solutions_gap
from qdecode.kernels.relay_lanes import lane_solutions, make_lane_solutions, move_lane_solutions
from qdecode.kernels.relay_lanes_narrow import (
    SWEEP_WIDTHS,
    make_relay_sweep,
    quantised_gammas,
    relay_sweep,
    sweep_width,
)

#: the most chains of one shot (the widest compiled sweep)
MAX_CHAINS = 64
#: ``key_c = key + c * CHAIN_STRIDE``: chain ``c``'s key (odd, the 64-bit golden-ratio constant of splitmix64's
#: sibling, ``0xD1B54A32D192ED03``); :func:`~qdecode.kernels.relay.draw_gammas` hashes it with the leg
CHAIN_STRIDE = np.uint64(0xD1B54A32D192ED03)

I16 = np.int16
U8 = np.uint8


class EnsembleOut(NamedTuple):
    """Per-shot outputs (``S`` shots; a range kernel writes rows ``start:stop``)."""

    hard: np.ndarray  # (S, n) uint8: the returned decision
    converged: np.ndarray  # (S,) bool: some leg of some chain converged
    iterations: np.ndarray  # (S,) int32: min-sum iterations summed over the chains
    legs: np.ndarray  # (S,) int32: legs run after leg 0, summed over the chains
    weight: np.ndarray  # (S,) float64: W(e) of the returned decision
    steps: np.ndarray  # (S,) int32: lane-group steps (the work clock)


class EnsembleGapOut(NamedTuple):
    """Per-shot outputs of :func:`relay_ensemble_gap_range`: :class:`EnsembleOut`'s and the gap's."""

    hard: np.ndarray  # (S, n) uint8
    converged: np.ndarray  # (S,) bool
    iterations: np.ndarray  # (S,) int32
    legs: np.ndarray  # (S,) int32
    weight: np.ndarray  # (S,) float64
    steps: np.ndarray  # (S,) int32
    weight_other: np.ndarray  # (S,) float64: least W of a converged leg of another class (inf: none; nan: no leg)
    classes: np.ndarray  # (S,) int32: distinct classes among the converged legs


class EnsembleShape(NamedTuple):
    """How the lanes are used."""

    chains: int  # N, chains per shot
    groups: int  # G, shots side by side (lanes g N .. g N + N - 1 are shot group g's chains)
    legs: int  # R = ceil(legs / N): legs per chain after its leg 0
    lanes: int  # lanes allocated (a compiled sweep width >= N G, or N G above the widest)


class ChainCounters(NamedTuple):
    """Per-lane (per-chain) counters, ``(lanes,)`` each."""

    leg: np.ndarray  # int64: the chain's leg
    it: np.ndarray  # int64: iterations of the current leg
    total_it: np.ndarray  # int64: iterations over the chain's legs
    done: np.ndarray  # uint8: the chain has run its last leg
    key: np.ndarray  # uint64: the chain's key key_c


class GroupCounters(NamedTuple):
    """Per-group (per-shot) counters, ``(groups,)`` each."""

    shot: np.ndarray  # int64: the group's shot (-1: idle)
    steps: np.ndarray  # int64: steps of the shot
    nconv: np.ndarray  # int64: converged legs over the chains
    any_conv: np.ndarray  # uint8: some leg converged
    weight: np.ndarray  # float64: W of the decision kept so far
    busy: np.ndarray  # int64: chains not done


class EnsembleLanes(NamedTuple):
    """Everything a range kernel works on, allocated once per range (:func:`make_ensemble_lanes`)."""

    shape: EnsembleShape
    sw: object  # RelaySweep of qdecode.kernels.relay_lanes_narrow (graph, priors, lanes, template, scratch)
    st_a: object  # NarrowCheckState (m, lanes): the check state, double-buffered
    st_b: object
    chain: ChainCounters
    group: GroupCounters
    g0n: np.int16  # leg 0's quantised gamma0
    gq: np.ndarray  # (rows, n) int16 quantised explicit gammas (rows 0: drawn)
    g1: np.ndarray  # (n,) float64 scratch of draw_gammas
    gn1: np.ndarray  # (n,) int64 scratch of draw_gammas


# ------------------------------------------------------------------ set-up


@numba.njit(cache=True, nogil=True)
def lanes_for(used):
    """The lanes to allocate for ``used`` busy lanes: the least compiled sweep width >= ``used``
    (:data:`~qdecode.kernels.relay_lanes_narrow.SWEEP_WIDTHS`), else ``used``."""
    for w in SWEEP_WIDTHS:
        if used <= w:
            return w
    return used


@numba.njit(cache=True, nogil=True)
def make_ensemble_lanes(graph, sched, arith, m, chains, groups):
    """:class:`EnsembleLanes` for ``groups`` shots of ``chains`` chains on ``m`` checks (all groups idle)."""
    n = graph.llr0.shape[0]
    legs = (sched.legs + chains - 1) // chains
    lanes = lanes_for(chains * groups)
    shape = EnsembleShape(chains, groups, legs, lanes)
    sw, st_a, st_b = make_relay_sweep(graph, arith, m, lanes, U8(0))  # uint8 slots: check degrees <= 255
    g0n, gq = quantised_gammas(sched, arith.gamma_shift, n)
    ch = ChainCounters(np.zeros(lanes, np.int64), np.zeros(lanes, np.int64), np.zeros(lanes, np.int64),
                       np.ones(lanes, np.uint8), np.zeros(lanes, np.uint64))
    gr = GroupCounters(np.full(groups, -1, np.int64), np.zeros(groups, np.int64), np.zeros(groups, np.int64),
                       np.zeros(groups, np.uint8), np.zeros(groups, np.float64), np.zeros(groups, np.int64))
    return EnsembleLanes(shape, sw, st_a, st_b, ch, gr, g0n, gq, np.zeros(n, np.float64), np.zeros(n, np.int64))


@numba.njit(cache=True, nogil=True)
def chain_key(key, c):
    """Chain ``c``'s key: ``key + c * CHAIN_STRIDE`` (mod 2^64); chain 0's is the shot's key."""
    return key + np.uint64(c) * CHAIN_STRIDE


@numba.njit(cache=True, nogil=True)
def _chain_gammas(w, c, leg, sched, el):
    """Lane ``w`` (chain ``c``) takes the gamma numerators of its leg ``leg`` (module docstring)."""
    gnum = el.sw.lanes.gnum
    n = gnum.shape[0]
    rows = el.gq.shape[0]
    if c == 0 and leg == 0:
        for j in range(n):
            gnum[j, w] = el.g0n
    elif rows > 0:
        row = (c * (el.shape.legs + 1) + leg) % rows
        for j in range(n):
            gnum[j, w] = el.gq[row, j]
    else:
        draw_gammas(el.chain.key[w], leg, sched.gamma_lo, sched.gamma_hi, el.sw.prm.gshift, el.g1, el.gn1)
        for j in range(n):
            gnum[j, w] = I16(el.gn1[j])


@numba.njit(cache=True, nogil=True)
def _load_group(g, s, seed, syndromes, sched, el, sols):
    """Shot ``s`` into group ``g``: every chain's syndrome, memory ``M = lambda``, key, leg 0's gammas, a fresh
    start; the group's counters (and its recorded solutions, ``sols`` not None) reset."""
    ln = el.sw.lanes
    lam = el.sw.lam
    ch, gr = el.chain, el.group
    N = el.shape.chains
    m = syndromes.shape[1]
    key = shot_key(seed, syndromes[s])
    for c in range(N):
        w = g * N + c
        for i in range(m):
            ln.syn[i, w] = U8(syndromes[s, i] & 1)
        for j in range(lam.shape[0]):
            ln.post[j, w] = lam[j]
        ch.leg[w] = 0
        ch.it[w] = 0
        ch.total_it[w] = 0
        ch.done[w] = 0
        ch.key[w] = chain_key(key, c)
        _chain_gammas(w, c, 0, sched, el)
        ln.fresh[w] = 1
    gr.shot[g] = s
    gr.steps[g] = 0
    gr.nconv[g] = 0
    gr.any_conv[g] = 0
    gr.weight[g] = 0.0
    gr.busy[g] = N
    if sols is not None:
        sols.count[g, 0] = 0


@numba.njit(cache=True, nogil=True)
def _move_group(src, dst, state, el, sols):
    """Group ``src`` (its lanes' check state ``state``, lane state, chain and group counters, its recorded
    solutions where ``sols`` is not None) copied to group ``dst`` (the drain's compaction)."""
    ln = el.sw.lanes
    ch, gr = el.chain, el.group
    N = el.shape.chains
    for c in range(N):
        a = src * N + c
        b = dst * N + c
        for i in range(ln.syn.shape[0]):
            state.min1[i, b] = state.min1[i, a]
            state.min2[i, b] = state.min2[i, a]
            state.arg[i, b] = state.arg[i, a]
            state.par[i, b] = state.par[i, a]
            ln.syn[i, b] = ln.syn[i, a]
        for k in range(ln.sgn.shape[0]):
            ln.sgn[k, b] = ln.sgn[k, a]
        for j in range(ln.post.shape[0]):
            ln.post[j, b] = ln.post[j, a]
            ln.gnum[j, b] = ln.gnum[j, a]
            ln.hard[j, b] = ln.hard[j, a]
        ln.fresh[b] = ln.fresh[a]
        ln.unsat[b] = ln.unsat[a]
        ch.leg[b] = ch.leg[a]
        ch.it[b] = ch.it[a]
        ch.total_it[b] = ch.total_it[a]
        ch.done[b] = ch.done[a]
        ch.key[b] = ch.key[a]
    gr.shot[dst] = gr.shot[src]
    gr.steps[dst] = gr.steps[src]
    gr.nconv[dst] = gr.nconv[src]
    gr.any_conv[dst] = gr.any_conv[src]
    gr.weight[dst] = gr.weight[src]
    gr.busy[dst] = gr.busy[src]
    if sols is not None:
        move_lane_solutions(src, dst, sols)


# ------------------------------------------------------------------ the relay loop of one shot


@numba.njit(cache=True, nogil=True)
def _group_verdict(g, wllr, sched, el, out, sols, trail):
    """Group ``g``'s chains after one step (module docstring: legs end in chain order, converged legs counted and
    kept by least weight, chain 0's leg-0 decision as the fallback). Writes the shot's row of ``out``
    (:class:`EnsembleOut`) and returns True when the shot is done.

    ``sols``: None (pruned at compile time), or a :class:`~qdecode.kernels.relay_lanes.LaneSolutions` with a row
    per group: every converged leg's weight and class code is recorded in step and chain order
    (:func:`~qdecode.kernels.relay.record_solution`), and ``out`` (an :class:`EnsembleGapOut`) gets the shot's
    ``weight_other`` and ``classes`` (:func:`~qdecode.kernels.relay.solutions_gap`). ``trail``: None, or the
    :class:`~qdecode.kernels.relay.RelayTrail` of the shot (one group): an event (steps so far, ticks, class
    code) after each step that changed the answer so far (:func:`~qdecode.kernels.relay.record_event`)."""
    ln = el.sw.lanes
    hard, unsat = ln.hard, ln.unsat
    ch, gr = el.chain, el.group
    N = el.shape.chains
    s = gr.shot[g]
    n = hard.shape[0]
    gr.steps[g] += 1
    changed = False
    for c in range(N):
        w = g * N + c
        if ch.done[w]:
            continue
        ch.it[w] += 1
        ch.total_it[w] += 1
        leg = ch.leg[w]
        ok = unsat[w] == 0
        limit = sched.pre_iter if leg == 0 else sched.leg_iter
        if not ok and ch.it[w] < limit:
            continue
        if ok or (c == 0 and leg == 0 and gr.any_conv[g] == 0):
            wt = 0.0
            for j in range(n):
                if hard[j, w]:
                    wt += wllr[j]
            if ok and sols is not None:
                record_solution(lane_solutions(sols, g), hard[:, w], wt)
            if not ok or gr.any_conv[g] == 0 or wt < gr.weight[g]:
                gr.weight[g] = wt
                changed = True
                for j in range(n):
                    out.hard[s, j] = hard[j, w]
            if ok:
                gr.nconv[g] += 1
                gr.any_conv[g] = 1
        if leg >= el.shape.legs:
            ch.done[w] = 1
            gr.busy[g] -= 1
        else:  # the next leg: memory and decision kept, messages from nu = lambda
            ch.leg[w] = leg + 1
            ch.it[w] = 0
            _chain_gammas(w, c, leg + 1, sched, el)
            ln.fresh[w] = 1
    if trail is not None and changed:  # the answer so far changed at this step
        record_event(trail, out.hard[s], gr.steps[g])
    if gr.nconv[g] < sched.stop_after and gr.busy[g] > 0:
        return False
    its = 0
    legs = 0
    for c in range(N):  # a leg started at this step (it == 0) never ran
        w = g * N + c
        its += ch.total_it[w]
        legs += ch.leg[w] - (1 if ch.it[w] == 0 else 0)
    out.converged[s] = gr.any_conv[g] == 1
    out.iterations[s] = its
    out.legs[s] = legs
    out.weight[s] = gr.weight[g]
    out.steps[s] = gr.steps[g]
    if sols is not None:
        out.weight_other[s], out.classes[s] = solutions_gap(lane_solutions(sols, g), gr.any_conv[g] == 1)
    return True


@numba.njit(cache=True, nogil=True)
def _run_groups(graph, sched, seed, syndromes, out, el, sols, trail, start, stop):
    """Shots ``start:stop`` on the groups of ``el`` (:class:`EnsembleLanes`): busy groups are always ``0:nbusy``;
    a finished shot's group takes the next shot; with none left, the last busy group takes the finished one's
    slot and the sweep narrows. ``sols`` and ``trail``: as :func:`_group_verdict` (a trail: one shot, one
    group)."""
    N, G, lanes = el.shape.chains, el.shape.groups, el.shape.lanes
    fresh = el.sw.lanes.fresh
    nxt = start
    nbusy = 0
    for g in range(G):
        if nxt < stop:
            _load_group(g, nxt, seed, syndromes, sched, el, sols)
            nxt += 1
            nbusy += 1
    width = sweep_width(nbusy * N, lanes)
    cur = 0
    while nbusy > 0:
        if cur == 0:
            relay_sweep(width, el.st_a, el.st_b, el.sw)
        else:
            relay_sweep(width, el.st_b, el.st_a, el.sw)
        cur = 1 - cur
        state = el.st_a if cur == 0 else el.st_b
        for w in range(width):
            fresh[w] = 0
        g = 0
        while g < nbusy:
            if not _group_verdict(g, graph.wllr, sched, el, out, sols, trail):
                g += 1
            elif nxt < stop:
                _load_group(g, nxt, seed, syndromes, sched, el, sols)
                nxt += 1
                g += 1
            else:  # the drain: the last busy group takes this slot and is checked next
                nbusy -= 1
                if g < nbusy:
                    _move_group(nbusy, g, state, el, sols)
                el.group.shot[nbusy] = -1
        if nxt >= stop:
            width = sweep_width(nbusy * N, lanes)


# ------------------------------------------------------------------ range kernels


@numba.njit(cache=True, nogil=True)
def relay_ensemble_range(graph, sched, arith, seed, syndromes, out, chains, lanes, start, stop):
    """Relay-BP ensembles of ``chains`` chains on shots ``start:stop`` (releases the GIL).

    Args:
        graph, sched, arith, seed, syndromes: as :func:`qdecode.kernels.relay.relay_decode_range`, for integer
            messages accepted by :func:`~qdecode.kernels.relay_lanes_narrow.relay_i8_accepts`.
        out: :class:`EnsembleOut`; rows ``start:stop`` are written.
        chains: ``N``, 1..:data:`MAX_CHAINS`.
        lanes: lanes of the sweep (64): ``max(1, lanes // N)`` shots side by side (never more than the shots).
    """
    if stop <= start:
        return
    groups = max(1, min(lanes // chains, stop - start))
    el = make_ensemble_lanes(graph, sched, arith, syndromes.shape[1], chains, groups)
    _run_groups(graph, sched, seed, syndromes, out, el, None, None, start, stop)


@numba.njit(cache=True, nogil=True)
def relay_ensemble_gap_range(graph, sched, arith, seed, syndromes, class_code, out, chains, lanes, start, stop):
    """:func:`relay_ensemble_range` that also records every converged leg of every chain, for the gap (module
    docstring, "Confidence"; releases the GIL). The answers are :func:`relay_ensemble_range`'s, bit for bit.

    Args:
        class_code: ``(n,)`` uint64 class code of each variable (:class:`~qdecode.kernels.relay.RelaySolutions`).
        out: :class:`EnsembleGapOut`; rows ``start:stop`` are written.
        The others: as :func:`relay_ensemble_range`.
    """
    if stop <= start:
        return
    groups = max(1, min(lanes // chains, stop - start))
    el = make_ensemble_lanes(graph, sched, arith, syndromes.shape[1], chains, groups)
    # a step starts with at most stop_after - 1 converged legs and ends at most N more: room for all of them
    sols = make_lane_solutions(class_code, max(1, sched.stop_after + chains - 1), groups)
    _run_groups(graph, sched, seed, syndromes, out, el, sols, None, start, stop)


@numba.njit(cache=True, nogil=True)
def relay_ensemble_timed_range(graph, sched, arith, seed, syndromes, out, ticks_out, trails, chains, start, stop):
    """:func:`relay_ensemble_range` in the real-time mode: one shot at a time on ``chains`` lanes, ``ticks_out[s]``
    (int64) = :func:`~qdecode.kernels.clock.ticks` elapsed from loading shot ``s`` (its key included) to its
    decision. The answers are :func:`relay_ensemble_range`'s; the lanes are allocated before the first shot is
    timed.

    ``trails``: :class:`~qdecode.kernels.relay.RelayTrailOut` with ``cap >= 1`` events per shot records each
    shot's trail of answers (module docstring, "The trail"; work in steps, ticks from the shot's start),
    ``cap = 0`` none.
    """
    el = make_ensemble_lanes(graph, sched, arith, syndromes.shape[1], chains, 1)
    start_ticks = np.zeros(1, np.int64)
    for s in range(start, stop):
        trail = RelayTrail(trails.class_code, trails.work[s], trails.ticks[s], trails.code[s], trails.count[s:s + 1],
                           start_ticks)
        trail.count[0] = 0
        t0 = ticks()
        start_ticks[0] = t0
        _run_groups(graph, sched, seed, syndromes, out, el, None, trail, s, s + 1)
        ticks_out[s] = ticks() - t0
