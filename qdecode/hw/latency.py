"""Latency and throughput of a decoder: the distribution, not just the mean.

* :func:`measure_latency` decodes shots one at a time (1-shot batches through
  ``decoder.predict_observables_batch``) and times each call with
  ``time.perf_counter_ns``; warm-up calls (numba JIT, caches) run before timing.
  The number is the latency of the Python API call, overhead included.
* :func:`measure_throughput` times one batch call over all shots (after a warm-up
  batch) and reads the iteration counts / convergence flags from ``last_info``.
* :func:`run_bench` does both plus the logical error rate; :meth:`BenchReport.as_row`
  gives the numbers for the bench CSV.

Percentiles use the nearest-rank definition (an observed value, never interpolated):
``p_q = sorted(x)[ceil(q/100 * N) - 1]``, so p99.9 of fewer than 1000 shots is the max.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import platform
import time
from typing import Any, Mapping, Sequence

import numpy as np

from qdecode.errors import InputError

__all__ = [
    "BenchReport",
    "LatencyReport",
    "ThroughputReport",
    "append_csv",
    "cpu_model",
    "measure_latency",
    "measure_throughput",
    "nearest_rank",
    "run_bench",
]


def nearest_rank(values: np.ndarray, q: float) -> float:
    """Nearest-rank percentile ``q`` (0 < q <= 100) of a non-empty sample.

    Examples:
        >>> nearest_rank(np.arange(1, 101), 99), nearest_rank(np.arange(1, 101), 99.9)
        (99.0, 100.0)
    """
    x = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if x.size == 0:
        raise InputError("percentile of an empty sample")
    k = max(1, math.ceil(q / 100.0 * x.size))
    return float(x[min(k, x.size) - 1])


def _check_shots(syndromes: np.ndarray, what: str = "syndromes") -> np.ndarray:
    s = np.asarray(syndromes)
    if s.ndim != 2:
        raise InputError(f"{what} must be 2-D (shots, detectors), got shape {s.shape}")
    if s.shape[0] < 1:
        raise InputError(f"need at least 1 shot, got {s.shape[0]}")
    return np.ascontiguousarray(s, dtype=np.uint8)


@dataclasses.dataclass
class LatencyReport:
    """Per-shot latency (1-shot calls), microseconds.

    Attributes:
        latency_ns: int64 ``(N,)`` raw per-call times.
        rounds: QEC rounds per shot, for the per-round figures (None when unknown).
        iterations: per-shot iteration counts from ``last_info`` (None when the decoder has none).
        window_s: float64 ``(N, K)`` time of each of the K window steps of every shot (sliding-window
            decoders: ``decoder.last_window_seconds``; None otherwise).
    """

    latency_ns: np.ndarray
    rounds: int | None = None
    iterations: np.ndarray | None = None
    window_s: np.ndarray | None = None

    def window_summary(self) -> dict[str, float] | None:
        """``{windows, p50_us, p99_us, max_us, mean_us}`` over all (shot, window) steps, or None."""
        if self.window_s is None or self.window_s.size == 0:
            return None
        w = self.window_s.ravel() * 1e6
        return {"windows": float(self.window_s.shape[1]), "p50_us": nearest_rank(w, 50),
                "p99_us": nearest_rank(w, 99), "max_us": float(w.max()), "mean_us": float(w.mean())}

    @property
    def shots(self) -> int:
        return int(self.latency_ns.size)

    def percentile_us(self, q: float) -> float:
        return nearest_rank(self.latency_ns, q) / 1e3

    @property
    def p50_us(self) -> float:
        return self.percentile_us(50)

    @property
    def p99_us(self) -> float:
        return self.percentile_us(99)

    @property
    def p999_us(self) -> float:
        return self.percentile_us(99.9)

    @property
    def max_us(self) -> float:
        return float(self.latency_ns.max()) / 1e3

    @property
    def mean_us(self) -> float:
        return float(self.latency_ns.mean()) / 1e3

    def summary(self) -> dict[str, float]:
        """``{p50_us, p99_us, p999_us, max_us, mean_us}`` and, with rounds, the ``*_us_per_round`` values."""
        out = {"p50_us": self.p50_us, "p99_us": self.p99_us, "p999_us": self.p999_us,
               "max_us": self.max_us, "mean_us": self.mean_us}
        if self.rounds:
            out.update({f"{k[:-3]}_us_per_round": v / self.rounds for k, v in list(out.items())})
        return out


@dataclasses.dataclass
class ThroughputReport:
    """One timed batch call.

    Attributes:
        shots: batch size.
        seconds: wall time of the call.
        rounds: QEC rounds per shot (None when unknown).
        predictions: uint8 ``(S, k)`` predicted observables.
        iterations, converged: from ``decoder.last_info`` (None when absent).
        extra: the per-shot numeric arrays of ``last_info.extra`` (Relay-BP's ``legs`` and
            ``weight``, ...), each of length ``shots``.
    """

    shots: int
    seconds: float
    rounds: int | None
    predictions: np.ndarray
    iterations: np.ndarray | None = None
    converged: np.ndarray | None = None
    extra: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @property
    def shots_per_s(self) -> float:
        return self.shots / self.seconds if self.seconds > 0 else math.inf

    @property
    def us_per_shot(self) -> float:
        return self.seconds * 1e6 / self.shots

    @property
    def us_per_round(self) -> float | None:
        return self.us_per_shot / self.rounds if self.rounds else None

    @property
    def rounds_per_s(self) -> float | None:
        return self.shots_per_s * self.rounds if self.rounds else None


def _info(decoder) -> tuple[np.ndarray | None, np.ndarray | None]:
    info = getattr(decoder, "last_info", None)
    if info is None:
        return None, None
    it = getattr(info, "iterations", None)
    cv = getattr(info, "converged", None)
    return (None if it is None else np.asarray(it).copy(), None if cv is None else np.asarray(cv, dtype=bool).copy())


def _per_shot_extra(decoder, shots: int) -> dict[str, np.ndarray]:
    """Numeric per-shot arrays (length ``shots``) from ``decoder.last_info.extra``, copied."""
    extra = getattr(getattr(decoder, "last_info", None), "extra", None) or {}
    out = {}
    for key, value in extra.items():
        arr = np.asarray(value)
        if arr.ndim == 1 and arr.size == shots and arr.dtype.kind in "iufb":
            out[str(key)] = arr.astype(np.float64)
    return out


def measure_latency(
    decoder,
    syndromes: np.ndarray,
    *,
    rounds: int | None = None,
    warmup: int = 20,
    max_shots: int | None = None,
) -> LatencyReport:
    """Time ``decoder.predict_observables_batch`` on 1-shot batches, one shot at a time.

    Args:
        decoder: any qdecode decoder.
        syndromes: ``(S, m)`` 0/1.
        rounds: rounds per shot (per-round figures).
        warmup: untimed 1-shot calls first (cycling through the shots); JIT happens here.
        max_shots: time at most this many shots (default all).

    Returns:
        :class:`LatencyReport` with the raw ``perf_counter_ns`` deltas and, when the
        decoder reports them, each shot's iteration count.
    """
    s = _check_shots(syndromes)
    S = s.shape[0] if max_shots is None else min(s.shape[0], int(max_shots))
    if S < 1:
        raise InputError(f"max_shots must be >= 1, got {max_shots}")
    call = decoder.predict_observables_batch
    for i in range(max(0, int(warmup))):
        call(s[i % s.shape[0]: i % s.shape[0] + 1])
    lat = np.empty(S, dtype=np.int64)
    iters = np.empty(S, dtype=np.int64)
    have_iters = True
    windows = []
    clock = time.perf_counter_ns
    for i in range(S):
        one = s[i: i + 1]
        t0 = clock()
        call(one)
        t1 = clock()
        lat[i] = t1 - t0
        ws = getattr(decoder, "last_window_seconds", None)
        if ws is not None:
            windows.append(np.array(ws, dtype=np.float64))
        if have_iters:
            it, _ = _info(decoder)
            if it is None or it.size != 1:
                have_iters = False
            else:
                iters[i] = int(it[0])
    window_s = np.stack(windows) if windows and len(windows) == S else None
    return LatencyReport(latency_ns=lat, rounds=rounds, iterations=iters if have_iters else None, window_s=window_s)


def measure_throughput(
    decoder,
    syndromes: np.ndarray,
    *,
    rounds: int | None = None,
    warmup_shots: int = 64,
) -> ThroughputReport:
    """Time one ``decoder.predict_observables_batch`` call over all shots (after an untimed warm-up batch)."""
    s = _check_shots(syndromes)
    if warmup_shots > 0:
        decoder.predict_observables_batch(s[: min(int(warmup_shots), s.shape[0])])
    t0 = time.perf_counter_ns()
    pred = decoder.predict_observables_batch(s)
    t1 = time.perf_counter_ns()
    it, cv = _info(decoder)
    if it is not None and it.size != s.shape[0]:
        it = None
    if cv is not None and cv.size != s.shape[0]:
        cv = None
    return ThroughputReport(shots=s.shape[0], seconds=(t1 - t0) / 1e9, rounds=rounds,
                            predictions=np.asarray(pred, dtype=np.uint8), iterations=it, converged=cv,
                            extra=_per_shot_extra(decoder, s.shape[0]))


@dataclasses.dataclass
class BenchReport:
    """Throughput, latency distribution, iterations and logical errors of one decoder on one problem."""

    throughput: ThroughputReport
    latency: LatencyReport
    errors: int | None
    consistent: bool

    @property
    def shots(self) -> int:
        return self.throughput.shots

    @property
    def ler(self) -> float | None:
        return None if self.errors is None else self.errors / self.shots

    def iteration_stats(self) -> dict[str, float] | None:
        it = self.throughput.iterations
        if it is None:
            return None
        return {"iter_mean": float(np.mean(it)), "iter_p50": nearest_rank(it, 50),
                "iter_p99": nearest_rank(it, 99), "iter_max": float(np.max(it))}

    def extra_stats(self) -> dict[str, dict[str, float]]:
        """mean / p50 / p99 / max of each per-shot extra counter (e.g. Relay-BP ``legs``)."""
        return {key: {"mean": float(np.mean(v)), "p50": nearest_rank(v, 50), "p99": nearest_rank(v, 99),
                      "max": float(np.max(v))}
                for key, v in sorted(self.throughput.extra.items()) if v.size}

    @property
    def convergence_rate(self) -> float | None:
        cv = self.throughput.converged
        return None if cv is None else float(np.mean(cv))

    def as_row(self) -> dict[str, Any]:
        """Flat numbers for the CSV (empty strings for values that do not apply)."""
        tp, lat = self.throughput, self.latency
        row: dict[str, Any] = {
            "shots": self.shots,
            "batch_seconds": tp.seconds,
            "shots_per_s": tp.shots_per_s,
            "us_per_shot": tp.us_per_shot,
            "us_per_round": tp.us_per_round,
            "rounds_per_s": tp.rounds_per_s,
            "latency_shots": lat.shots,
        }
        summ = lat.summary()
        for key in ("p50", "p99", "p999", "max", "mean"):
            row[f"lat_{key}_us"] = summ[f"{key}_us"]
        for key in ("p50", "p99", "p999", "max", "mean"):
            row[f"lat_{key}_us_per_round"] = summ.get(f"{key}_us_per_round")
        its = self.iteration_stats() or {}
        for key in ("iter_mean", "iter_p50", "iter_p99", "iter_max"):
            row[key] = its.get(key)
        win = lat.window_summary() or {}
        for key in ("p50", "p99", "max"):
            row[f"win_{key}_us"] = win.get(f"{key}_us")
        row["convergence_rate"] = self.convergence_rate
        row["extra_stats"] = json.dumps(self.extra_stats(), sort_keys=True) if self.throughput.extra else None
        row["errors"] = self.errors
        row["ler"] = self.ler
        return {k: ("" if v is None else v) for k, v in row.items()}


def run_bench(
    decoder,
    syndromes: np.ndarray,
    observables: np.ndarray | None = None,
    *,
    rounds: int | None = None,
    warmup: int = 20,
    latency_shots: int | None = None,
) -> BenchReport:
    """Throughput over the whole batch, per-shot latency, iterations and logical errors.

    ``observables`` ``(S, k)`` are the true flips; errors count shots whose predicted
    observables differ in any position. ``consistent`` tells whether the 1-shot
    predictions of the latency run equal the batch predictions (they must: decoders
    are deterministic).
    """
    s = _check_shots(syndromes)
    tp = measure_throughput(decoder, s, rounds=rounds, warmup_shots=max(1, warmup))
    lat = measure_latency(decoder, s, rounds=rounds, warmup=warmup, max_shots=latency_shots)
    errors = None
    if observables is not None:
        obs = np.asarray(observables, dtype=np.uint8)
        if obs.shape != tp.predictions.shape:
            raise InputError(f"observables have shape {obs.shape}, predictions {tp.predictions.shape}")
        errors = int(np.count_nonzero(np.any(obs != tp.predictions, axis=1)))
    # determinism check on a few shots (cheap; the latency loop did not keep outputs)
    k = min(8, s.shape[0])
    consistent = bool(np.array_equal(
        np.concatenate([decoder.predict_observables_batch(s[i: i + 1]) for i in range(k)]), tp.predictions[:k]))
    return BenchReport(throughput=tp, latency=lat, errors=errors, consistent=consistent)


# ------------------------------------------------------------------ machine
def cpu_model() -> str:
    """CPU model name from ``/proc/cpuinfo`` (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def append_csv(path: str | os.PathLike, row: Mapping[str, Any], columns: Sequence[str] | None = None) -> None:
    """Append ``row`` to a CSV file, writing the header when the file is new or empty.

    Raises:
        ValueError: the existing file's header differs from ``columns``.
    """
    cols = list(columns or row.keys())
    exists = os.path.exists(path) and os.path.getsize(path) > 0
    if exists:
        with open(path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
        if header != cols:
            raise InputError(f"{path}: existing CSV header does not match the bench columns; use a new file")
    with open(path, "a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        if not exists:
            w.writeheader()
        w.writerow({c: row.get(c, "") for c in cols})
