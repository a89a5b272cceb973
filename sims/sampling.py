"""Worker side of a sweep: sample one seeded batch of a task, decode it in large calls, count it per chunk.

:func:`run_batch` is a pure, picklable function of ``(task, batch_index, shots, stream,
error_cap)``. The sampler's seed comes from
``np.random.SeedSequence(entropy=stream, spawn_key=(batch_index,))``, so any batch can be
replayed and different batches / tasks never share a random stream.

Chunks: a batch is cut into chunks whose sizes depend only on the batch size
(:func:`chunk_sizes`: about 8 per batch, at least 32 shots). Chunks are the unit of counting: the
batch returns one count per chunk, and the sweep driver records a *prefix* of chunks
(:mod:`qdecode.sims.sweep`), so a task stops on a deterministic chunk boundary whatever the timing.

Sampling: consecutive chunks are sampled together, in one stim call of up to ``SAMPLE_SHOTS``
shots (:func:`sample_plan`, a function of the chunk plan only), from the batch's one seeded
sampler; stim's stream depends on the call sizes, so the plan is part of what a seed means. stim
costs about 20x more per shot on a 32-shot call than on 256 or more (surface code d = 5: 13 against
0.6 us), which for a fast decoder (PyMatching, about 1 us per shot) was most of a sweep's time.

Decoder calls: consecutive chunks are decoded together, in one call of up to ``CALL_SHOTS``
shots (:func:`call_plan`: a function of the chunk plan and the task's number of error
mechanisms only), because lane decoders and ``class-escalate`` are several times slower per
shot on small calls (a 64-shot lane costs the same with one live shot; ``benchmarks/README.md``,
"In-sweep decoder speed"). The call's per-shot results are then cut back at the chunk
boundaries: errors, discards, detection events, observable-error patterns and gap bins from
per-shot arrays, and the decoder's diagnostics through ``last_info.take(chunk).counts()``
(:meth:`qdecode.decoders.base.DecodeInfo.take`). Each chunk's counts are therefore exactly
those of its own shots, and since every registered decoder decodes each shot independently of
the others in its call (``tests/sims/test_sampling_calls.py``), exactly what a call per chunk
would record. A decoder whose ``last_info`` cannot be cut per shot (``take`` returns None: batch
totals; no registered decoder today, ``bp-pymatching`` shares its matcher clocks by shots) is
decoded one call per chunk instead, from its first such call on. ``seconds`` of a chunk is its
share (by shots) of its call's CPU time.

``error_cap`` lets the worker stop after the chunk at which the batch's own errors reach it:
the driver only passes a cap that the recorded prefix can never need to exceed, so stopping
early never changes what is recorded. The worker notices the cap only after a call, so it may
decode up to one call (< ``CALL_SHOTS`` shots) past the stopping chunk; those shots are dropped
unrecorded (work lost, never statistics changed).

Each worker process builds a task's model, DEM and decoder once and keeps it in a small
LRU cache. The hot path is bit-packed end to end: stim samples packed detection events and
observables, postselected shots are dropped with one vectorised mask test, the decoder maps
packed detectors to packed predictions, and errors are counted with one vectorised
comparison. No per-shot Python.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from typing import Any

import numpy as np

from qdecode.errors import InputError
from qdecode.problem import DecodingProblem
from qdecode.sims.classical_points import run_classical_batch
from qdecode.sims.gap_bins import gap_bin_counts
from qdecode.sims.latency_bins import anytime_counts, latency_bin_counts
from qdecode.sims.tasks import CompiledTask, SweepTask, describe_task

# Largest chunk: bounds a worker's memory for large batches.
CHUNK_SHOTS = 65536
# A batch is cut into about this many chunks (fewer when that would go below MIN_CHUNK_SHOTS):
# the recorded errors exceed max_errors by at most one chunk's errors.
CHUNKS_PER_BATCH = 8
MIN_CHUNK_SHOTS = 32
# Largest decoder call: consecutive chunks are decoded together up to this many shots (module
# docstring), and up to CALL_BYTES of a decoder's (shots, num_errors) uint8 estimate. 8192: lane
# decoders and class-escalate reach their large-batch throughput by 2,048-8,192 shots, and it bounds
# the shots decoded past an error_cap stop.
CALL_SHOTS = 8192
CALL_BYTES = 256 << 20
# Largest stim call: consecutive chunks are sampled together up to this many shots (module docstring).
SAMPLE_SHOTS = 8192
_CACHE_SIZE = 8
_cache: "collections.OrderedDict[SweepTask, tuple[CompiledTask, Any]]" = collections.OrderedDict()
# Tasks whose decoder's last_info cannot be cut per shot (DecodeInfo.take is None): one call per chunk.
_per_chunk_calls: set[SweepTask] = set()


@dataclasses.dataclass(frozen=True)
class ChunkCounts:
    """Counts of one decoded chunk."""

    shots: int
    errors: int
    discards: int
    seconds: float
    custom_counts: dict[str, int]


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """Counts of one finished batch, per chunk in sampling order.

    ``chunks`` may stop before the batch's planned size when the worker reached its
    ``error_cap``; the driver records a prefix of them (one CSV row per batch).
    """

    task_key: int
    batch_index: int
    chunks: tuple[ChunkCounts, ...]

    @property
    def shots(self) -> int:
        return sum(c.shots for c in self.chunks)

    @property
    def errors(self) -> int:
        return sum(c.errors for c in self.chunks)


def chunk_sizes(shots: int) -> list[int]:
    """Deterministic chunk plan of a batch: sizes summing to ``shots``.

    About ``CHUNKS_PER_BATCH`` equal chunks, each between ``MIN_CHUNK_SHOTS`` and
    ``CHUNK_SHOTS`` shots (the last one takes the remainder).
    """
    if shots <= 0:
        return []
    size = min(CHUNK_SHOTS, max(MIN_CHUNK_SHOTS, -(-shots // CHUNKS_PER_BATCH)))
    full, rest = divmod(shots, size)
    return [size] * full + ([rest] if rest else [])


def batch_seed(stream: tuple[int, ...], batch_index: int) -> int:
    """64-bit stim seed for one batch of one task stream."""
    seq = np.random.SeedSequence(entropy=list(stream), spawn_key=(batch_index,))
    return int(seq.generate_state(1, dtype=np.uint64)[0])


class _DemShots:
    """``stim`` DEM sampler with the detector sampler's call signature (packed dets, packed obs)."""

    def __init__(self, dem, seed: int):
        self._sampler = dem.compile_sampler(seed=seed)

    def sample(self, shots: int, *, separate_observables: bool = True, bit_packed: bool = True):
        """(packed detection events, packed observables): the only output the sweep asks for."""
        if not (separate_observables and bit_packed):
            raise InputError("a DEM task's sampler returns bit-packed, separated observables only")
        dets, obs, _ = self._sampler.sample(shots, bit_packed=True)
        return dets, obs


def compiled(task: SweepTask) -> tuple[CompiledTask, Any]:
    """(compiled task, sampler factory ``seed -> sampler`` or classical channel) from this process's cache."""
    hit = _cache.get(task)
    if hit is not None:
        _cache.move_to_end(task)
        return hit
    ct = describe_task(task)
    if task.classical is not None:
        ct.code = task.classical.build_code()
        ct.decoder = task.decoder.build(ct.code.code)
        entry = (ct, task.classical.build_channel(ct.code.rate))
    else:
        ct.decoder = task.decoder.build(DecodingProblem.from_dem(ct.dem))
        if ct.circuit is not None:
            entry = (ct, ct.circuit.compile_detector_sampler)
        else:
            dem = ct.sampled
            entry = (ct, lambda seed: _DemShots(dem, seed))
    _cache[task] = entry
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return entry


def failed_shots(predicted: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """bool ``(S,)``: the shots whose bit-packed predicted observables differ from the actual ones in any bit."""
    if predicted.shape != actual.shape:
        raise InputError(f"decoder returned predictions of shape {predicted.shape}, expected {actual.shape}")
    return np.any(predicted != actual, axis=1)


def count_errors(predicted: np.ndarray, actual: np.ndarray) -> int:
    """The number of :func:`failed_shots`."""
    return int(np.count_nonzero(failed_shots(predicted, actual)))


def observable_error_combos(predicted: np.ndarray, actual: np.ndarray, num_obs: int) -> dict[str, int]:
    """sinter's ``obs_mistake_mask=...`` counts: one key per pattern of mispredicted observables.

    The key's character ``j`` is ``E`` when observable ``j`` was mispredicted, ``_`` otherwise.
    """
    diff = predicted ^ actual
    failed = diff[np.any(diff != 0, axis=1)]
    if failed.shape[0] == 0:
        return {}
    patterns, counts = np.unique(failed, axis=0, return_counts=True)
    out = {}
    for row, n in zip(patterns, counts):
        bits = np.unpackbits(row, count=num_obs, bitorder="little")
        out["obs_mistake_mask=" + "".join("_E"[b] for b in bits)] = int(n)
    return out


def _popcount(packed: np.ndarray) -> int:
    return int(np.unpackbits(packed, axis=None).sum(dtype=np.int64)) if packed.size else 0


def call_plan(sizes: list[int], num_errors: int) -> list[int]:
    """Chunks per decoder call: consecutive groups of ``sizes`` (a batch's :func:`chunk_sizes`).

    A call takes chunks while its shots stay within ``min(CALL_SHOTS, CALL_BYTES // num_errors)``;
    a chunk larger than that is a call of its own. A function of its arguments only, so a batch
    is decoded in the same calls in every process.

    Returns:
        The number of chunks of each call, in order (summing to ``len(sizes)``).
    """
    return group_plan(sizes, max(1, min(CALL_SHOTS, CALL_BYTES // max(1, num_errors))))


def sample_plan(sizes: list[int]) -> list[int]:
    """Chunks per stim call: consecutive groups of ``sizes`` within ``SAMPLE_SHOTS`` shots (module docstring)."""
    return group_plan(sizes, SAMPLE_SHOTS)


def group_plan(sizes: list[int], limit: int) -> list[int]:
    """Consecutive groups of ``sizes`` whose sums stay within ``limit`` (a larger size is a group of its
    own); returns the number of sizes in each group, in order."""
    plan: list[int] = []
    shots = 0
    for n in sizes:
        if plan and shots + n <= limit:
            plan[-1] += 1
            shots += n
        else:
            plan.append(1)
            shots = n
    return plan


def decode_chunk(ct: CompiledTask, dets: np.ndarray, obs: np.ndarray) -> tuple[int, int, dict[str, int]]:
    """Postselect, decode and count one chunk of packed shots: :func:`decode_chunks` with one chunk."""
    ((errors, discards, counts),) = decode_chunks(ct, dets, obs, [dets.shape[0]])
    return errors, discards, counts


def decode_chunks(ct: CompiledTask, dets: np.ndarray, obs: np.ndarray,
                  sizes: list[int]) -> list[tuple[int, int, dict[str, int]]]:
    """Postselect and decode consecutive chunks of packed shots in one decoder call; count each chunk.

    Args:
        dets: (S, ceil(m / 8)) uint8 packed detection events, S = ``sum(sizes)``.
        obs: (S, ceil(k / 8)) uint8 packed actual observable flips.
        sizes: the chunks' shots, in order.

    Returns:
        One ``(errors, discards, custom_counts)`` per chunk: its own shots' counts (module
        docstring); errors count among the kept shots. With the task's ``gap_histogram`` the
        decoder's ``predict_with_confidence_packed`` decodes, and the kept shots and their
        errors are also counted per gap bin (:func:`qdecode.sims.gap_bins.gap_bin_counts`). With its
        ``latency_histogram`` the decoder's ``predict_observables_timed`` decodes (real-time mode),
        and they are counted per bin of both clocks (:func:`qdecode.sims.latency_bins.latency_bin_counts`).
        Where the decoder's ``last_info`` cannot be cut per chunk (``DecodeInfo.take`` is None)
        the chunks are decoded again, one call each, and so are the task's later calls.
    """
    task = ct.task
    bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    if bounds[-1] != dets.shape[0]:
        raise InputError(f"chunk sizes sum to {bounds[-1]} but {dets.shape[0]} shots were given")
    counts = [collections.Counter() for _ in sizes]
    m = ct.dem.num_detectors
    if task.count_detection_events:  # before postselection, as sinter counts them
        for c, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            counts[c]["detectors_checked"] += m * int(b - a)
            counts[c]["detection_events"] += _popcount(dets[a:b])
    kept = np.ones(dets.shape[0], dtype=bool)
    if ct.postselection_mask is not None:
        kept = ~np.any(dets & ct.postselection_mask, axis=1)
        if not kept.all():
            dets, obs = dets[kept], obs[kept]
    # chunk c's kept shots are kept_bounds[c]:kept_bounds[c + 1] of the postselected arrays
    kept_bounds = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])[bounds]
    discards = (np.diff(bounds) - np.diff(kept_bounds)).tolist()
    decoded = None if task in _per_chunk_calls and len(sizes) > 1 else _decode_counted(ct, dets, obs, kept_bounds)
    if decoded is None:  # diagnostics not attributable per shot: one call per chunk from now on
        _per_chunk_calls.add(task)
        decoded = [_decode_counted(ct, dets[a:b], obs[a:b], np.array([0, b - a]))[0]
                   for a, b in zip(kept_bounds[:-1], kept_bounds[1:])]
    out = []
    for (errors, decoder_counts), d, cnt in zip(decoded, discards, counts):
        cnt.update(decoder_counts)
        out.append((errors, int(d), dict(cnt)))
    return out


def _decode_counted(ct: CompiledTask, dets: np.ndarray, obs: np.ndarray,
                    kept_bounds: np.ndarray) -> list[tuple[int, collections.Counter]] | None:
    """Decode the postselected shots in one call; ``(errors, decoder counts)`` of each range
    ``kept_bounds[c]:kept_bounds[c + 1]``, or None if ``last_info`` cannot be cut into them."""
    task = ct.task
    out: list[tuple[int, collections.Counter]] = [(0, collections.Counter()) for _ in kept_bounds[1:]]
    if dets.shape[0] == 0:
        return out
    gaps = None
    if task.gap_histogram:  # the decoder's confidence too: shots and errors per gap bin
        predicted, gaps = ct.decoder.predict_with_confidence_packed(dets)
    elif task.latency_histogram:  # real-time mode: every shot alone, timed; shots and errors per clock bin
        predicted = ct.decoder.predict_observables_timed(dets)
    else:
        predicted = ct.decoder.predict_observables_packed(dets)
    failed = failed_shots(predicted, obs)
    info = getattr(ct.decoder, "last_info", None)
    whole = len(out) == 1
    for c, (a, b) in enumerate(zip(kept_bounds[:-1].tolist(), kept_bounds[1:].tolist())):
        if a == b:
            continue  # no shot decoded for this chunk: no decoder counts, as in a call of its own
        sl = slice(a, b)
        counts = out[c][1]
        errors = int(np.count_nonzero(failed[sl]))
        if gaps is not None:
            counts.update(gap_bin_counts(gaps[sl], failed[sl]))
        if task.latency_histogram:
            counts.update(latency_bin_counts(info.wall_ns[sl], None if info.work is None else info.work[sl],
                                             failed[sl]))
            counts.update(trail_counts(info, sl, obs[sl]))
        if task.count_observable_error_combos and errors:
            counts.update(observable_error_combos(predicted[sl], obs[sl], ct.dem.num_observables))
        if info is not None:
            part = info if whole else info.take(sl, dets.shape[0])
            if part is None:
                return None
            counts.update(part.counts())
        out[c] = (errors, counts)
    return out


def trail_counts(info, shots: slice, actual: np.ndarray) -> dict[str, int]:
    """The anytime policy's counts (:func:`qdecode.sims.latency_bins.anytime_counts`) of the shots ``shots`` of
    a timed call whose ``info.extra`` holds the trail of each shot's answers (``trail_obs`` uint64 ``(S, T)``,
    bit ``i`` = observable ``i``; ``trail_wall_ns``, ``trail_work``, ``trail_len``); {} without one.

    ``actual``: the shots' bit-packed actual observables ``(s, ceil(k/8))``, ``k <= 64``.
    """
    extra = info.extra or {}
    if "trail_len" not in extra:
        return {}
    if actual.shape[1] > 8:
        raise InputError(f"a trail of answers covers at most 64 observables, got {8 * actual.shape[1]} bits")
    code = np.zeros((actual.shape[0], 8), dtype=np.uint8)
    code[:, :actual.shape[1]] = actual
    right = extra["trail_obs"][shots] == code.view("<u8")[:, :1]
    length = extra["trail_len"][shots]
    out = anytime_counts("wall", info.wall_ns[shots], extra["trail_wall_ns"][shots], right, length)
    if info.work is not None:
        out.update(anytime_counts("work", info.work[shots], extra["trail_work"][shots], right, length))
    return out


def run_batch(task: SweepTask, task_key: int, batch_index: int, shots: int, stream: tuple[int, ...],
              error_cap: int | None = None) -> BatchResult:
    """Sample and decode the chunks of one batch; stop after the chunk where errors reach ``error_cap``.

    Quantum tasks decode their chunks in the calls of :func:`call_plan`; the cap is checked
    chunk by chunk after each call (module docstring). Classical points decode one chunk per call.

    Returns:
        A :class:`BatchResult` with one :class:`ChunkCounts` per chunk up to the stop; ``seconds``
        is this process's CPU time for sampling and decoding the chunk (sinter's unit:
        core-seconds), a call's time shared among its chunks by shots. Decoder diagnostics (e.g.
        ``not_converged``) are summed into each chunk's ``custom_counts``.
    """
    ct, make_sampler = compiled(task)
    seed = batch_seed(stream, batch_index)
    chunks: list[ChunkCounts] = []
    errors = 0
    if task.classical is not None:  # make_sampler is the channel; one generator across chunks
        rng = np.random.default_rng(seed)
        for n in chunk_sizes(shots):
            t0 = time.process_time()
            e, counts = run_classical_batch(ct.code, make_sampler, ct.decoder, rng, n, source=task.classical.source)
            chunks.append(ChunkCounts(n, e, 0, time.process_time() - t0, counts))
            errors += e
            if error_cap is not None and errors >= error_cap:
                break
        return BatchResult(task_key=task_key, batch_index=batch_index, chunks=tuple(chunks))
    t0 = time.process_time()
    sampler = make_sampler(seed=seed)
    setup = time.process_time() - t0
    sizes = chunk_sizes(shots)
    for sampled in split_plan(sizes, sample_plan(sizes)):
        t0 = time.process_time()
        dets, obs = sampler.sample(sum(sampled), separate_observables=True, bit_packed=True)
        setup += time.process_time() - t0
        first = 0
        for group in split_plan(sampled, call_plan(sampled, ct.dem.num_errors)):
            t0 = time.process_time()
            end = first + sum(group)
            results = decode_chunks(ct, dets[first:end], obs[first:end], group)
            first = end
            # the call's CPU time, plus the sampling of its stim call shared by shots, and the sampler's setup
            seconds = time.process_time() - t0 + setup * sum(group) / sum(sampled)
            for n, (e, d, counts) in zip(group, results):
                chunks.append(ChunkCounts(n, e, d, seconds * n / sum(group), counts))
                errors += e
                if error_cap is not None and errors >= error_cap:
                    return BatchResult(task_key=task_key, batch_index=batch_index, chunks=tuple(chunks))
        setup = 0.0
    return BatchResult(task_key=task_key, batch_index=batch_index, chunks=tuple(chunks))


def split_plan(sizes: list[int], plan: list[int]) -> list[list[int]]:
    """``sizes`` cut into consecutive groups of ``plan[i]`` items each."""
    out, start = [], 0
    for count in plan:
        out.append(sizes[start:start + count])
        start += count
    return out
