"""Worker side of a sweep: sample one seeded batch of a task and decode it.

:func:`run_batch` is a pure, picklable function of ``(task, batch_index, shots,
stream)``: the stim sampler's seed comes from
``np.random.SeedSequence(entropy=stream, spawn_key=(batch_index,))``, so any batch
can be replayed and different batches / tasks never share a random stream.
Each worker process builds a task's circuit, DEM and decoder once and keeps it in
a small LRU cache keyed by strong_id.

The hot path is bit-packed end to end: stim samples packed detection events and
observables, the decoder maps packed detectors to packed predictions, and errors
are counted with one vectorised comparison. No per-shot Python.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from typing import Any

import numpy as np

from qdecode.problem import DecodingProblem
from qdecode.sims.classical import run_classical_batch
from qdecode.sims.tasks import CompiledTask, Task, describe_task

# Shots sampled and decoded per inner chunk: bounds memory for large batches.
CHUNK_SHOTS = 65536
_CACHE_SIZE = 8
_cache: "collections.OrderedDict[Task, tuple[CompiledTask, Any]]" = collections.OrderedDict()


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """Counts of one finished batch (one CSV row)."""

    task_key: int
    batch_index: int
    shots: int
    errors: int
    discards: int
    seconds: float
    custom_counts: dict[str, int]


def batch_seed(stream: tuple[int, ...], batch_index: int) -> int:
    """64-bit stim seed for one batch of one task stream."""
    seq = np.random.SeedSequence(entropy=list(stream), spawn_key=(batch_index,))
    return int(seq.generate_state(1, dtype=np.uint64)[0])


def compiled(task: Task) -> tuple[CompiledTask, Any]:
    """(compiled task, stim sampler factory or classical channel) from this process's cache."""
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
        entry = (ct, ct.circuit.compile_detector_sampler)
    _cache[task] = entry
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return entry


def count_errors(predicted: np.ndarray, actual: np.ndarray) -> int:
    """Shots whose bit-packed predicted observables differ from the actual ones in any bit."""
    if predicted.shape != actual.shape:
        raise ValueError(f"decoder returned predictions of shape {predicted.shape}, expected {actual.shape}")
    return int(np.count_nonzero(np.any(predicted != actual, axis=1)))


def run_batch(task: Task, task_key: int, batch_index: int, shots: int, stream: tuple[int, ...]) -> BatchResult:
    """Sample ``shots`` shots of ``task`` with the batch's seed, decode, count errors.

    Returns:
        A :class:`BatchResult`; ``seconds`` is this process's CPU time for sampling and
        decoding (sinter's unit: core-seconds). Decoder diagnostics (e.g.
        ``not_converged``) are summed into ``custom_counts``.
    """
    ct, make_sampler = compiled(task)
    t0 = time.process_time()
    if task.classical is not None:  # make_sampler is the channel
        errors, counts = run_classical_batch(ct.code, make_sampler, ct.decoder, batch_seed(stream, batch_index), shots,
                                             source=task.classical.source)
        return BatchResult(task_key=task_key, batch_index=batch_index, shots=shots, errors=errors, discards=0,
                           seconds=time.process_time() - t0, custom_counts=counts)
    sampler = make_sampler(seed=batch_seed(stream, batch_index))
    errors = 0
    counts: collections.Counter = collections.Counter()
    left = shots
    while left > 0:
        n = min(left, CHUNK_SHOTS)
        dets, obs = sampler.sample(n, separate_observables=True, bit_packed=True)
        predicted = ct.decoder.predict_observables_packed(dets)
        errors += count_errors(predicted, obs)
        info = getattr(ct.decoder, "last_info", None)
        if info is not None:
            counts.update(info.counts())
        left -= n
    seconds = time.process_time() - t0
    return BatchResult(
        task_key=task_key,
        batch_index=batch_index,
        shots=shots,
        errors=errors,
        discards=0,
        seconds=seconds,
        custom_counts=dict(counts),
    )
