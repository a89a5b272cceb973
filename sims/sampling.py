"""Worker side of a sweep: sample one seeded batch of a task and decode it, chunk by chunk.

:func:`run_batch` is a pure, picklable function of ``(task, batch_index, shots, stream,
error_cap)``. The sampler's seed comes from
``np.random.SeedSequence(entropy=stream, spawn_key=(batch_index,))``, so any batch can be
replayed and different batches / tasks never share a random stream.

A batch is cut into chunks whose sizes depend only on the batch size
(:func:`chunk_sizes`). Each chunk is sampled (in order, from the batch's one seeded
sampler), decoded and counted on its own, and the batch returns one count per chunk. The
sweep driver records a *prefix* of chunks (:mod:`qdecode.sims.sweep`), so a task stops
on a deterministic chunk boundary whatever the timing. ``error_cap`` lets the worker stop
after the chunk at which the batch's own errors reach it: the driver only passes a cap that
the recorded prefix can never need to exceed, so stopping early never changes what is recorded.

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

from qdecode.problem import DecodingProblem
from qdecode.sims.classical_points import run_classical_batch
from qdecode.sims.gap_bins import gap_bin_counts
from qdecode.sims.tasks import CompiledTask, Task, describe_task

# Largest chunk: bounds a worker's memory for large batches.
CHUNK_SHOTS = 65536
# A batch is cut into about this many chunks (fewer when that would go below MIN_CHUNK_SHOTS):
# the recorded errors exceed max_errors by at most one chunk's errors.
CHUNKS_PER_BATCH = 8
MIN_CHUNK_SHOTS = 32
_CACHE_SIZE = 8
_cache: "collections.OrderedDict[Task, tuple[CompiledTask, Any]]" = collections.OrderedDict()


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
            raise ValueError("a DEM task's sampler returns bit-packed, separated observables only")
        dets, obs, _ = self._sampler.sample(shots, bit_packed=True)
        return dets, obs


def compiled(task: Task) -> tuple[CompiledTask, Any]:
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


def count_errors(predicted: np.ndarray, actual: np.ndarray) -> int:
    """Shots whose bit-packed predicted observables differ from the actual ones in any bit."""
    if predicted.shape != actual.shape:
        raise ValueError(f"decoder returned predictions of shape {predicted.shape}, expected {actual.shape}")
    return int(np.count_nonzero(np.any(predicted != actual, axis=1)))


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


def decode_chunk(ct: CompiledTask, dets: np.ndarray, obs: np.ndarray) -> tuple[int, int, dict[str, int]]:
    """Postselect, decode and count one chunk of packed shots.

    Args:
        dets: (S, ceil(m / 8)) uint8 packed detection events.
        obs: (S, ceil(k / 8)) uint8 packed actual observable flips.

    Returns:
        ``(errors, discards, custom_counts)``; errors count among the kept shots. With the
        task's ``gap_histogram`` the decoder's ``predict_with_confidence_packed`` decodes, and
        the kept shots and their errors are also counted per gap bin
        (:func:`qdecode.sims.gap_bins.gap_bin_counts`).
    """
    task = ct.task
    counts: collections.Counter = collections.Counter()
    m = ct.dem.num_detectors
    if task.count_detection_events:  # before postselection, as sinter counts them
        counts["detectors_checked"] += m * dets.shape[0]
        counts["detection_events"] += _popcount(dets)
    discards = 0
    if ct.postselection_mask is not None:
        drop = np.any(dets & ct.postselection_mask, axis=1)
        discards = int(np.count_nonzero(drop))
        if discards:
            dets, obs = dets[~drop], obs[~drop]
    if dets.shape[0] == 0:
        return 0, discards, dict(counts)
    if task.gap_histogram:  # the decoder's confidence too: shots and errors per gap bin
        predicted, gaps = ct.decoder.predict_with_confidence_packed(dets)
        errors = count_errors(predicted, obs)
        counts.update(gap_bin_counts(gaps, np.any(predicted != obs, axis=1)))
    else:
        predicted = ct.decoder.predict_observables_packed(dets)
        errors = count_errors(predicted, obs)
    if task.count_observable_error_combos and errors:
        counts.update(observable_error_combos(predicted, obs, ct.dem.num_observables))
    info = getattr(ct.decoder, "last_info", None)
    if info is not None:
        counts.update(info.counts())
    return errors, discards, dict(counts)


def run_batch(task: Task, task_key: int, batch_index: int, shots: int, stream: tuple[int, ...],
              error_cap: int | None = None) -> BatchResult:
    """Sample and decode the chunks of one batch; stop after the chunk where errors reach ``error_cap``.

    Returns:
        A :class:`BatchResult` with one :class:`ChunkCounts` per decoded chunk; ``seconds`` is
        this process's CPU time for sampling and decoding the chunk (sinter's unit:
        core-seconds). Decoder diagnostics (e.g. ``not_converged``) are summed into each
        chunk's ``custom_counts``.
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
    for n in chunk_sizes(shots):
        t0 = time.process_time()
        dets, obs = sampler.sample(n, separate_observables=True, bit_packed=True)
        e, d, counts = decode_chunk(ct, dets, obs)
        chunks.append(ChunkCounts(n, e, d, time.process_time() - t0 + setup, counts))
        setup = 0.0
        errors += e
        if error_cap is not None and errors >= error_cap:
            break
    return BatchResult(task_key=task_key, batch_index=batch_index, chunks=tuple(chunks))
