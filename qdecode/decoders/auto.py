"""``auto``: the frontier's pick for a model, within a CPU-time budget per shot.

``qdecode sweep --decoder auto`` (or ``auto[time_budget=0.5]``, or ``--time-budget 0.5``) resolves,
once per task and before any shot is sampled, to a concrete registered decoder, and the CSV's
``decoder`` column records that decoder's full label, never ``auto``: rows pool only with rows of
the same concrete decoder.

The choice has two steps.

1. **Structure.** A model whose every mechanism touches at most two detectors (after stim's
   ``^`` decomposition; PyMatching accepts it) is *graphlike*; any other is a *hypergraph*
   (colour codes, qLDPC codes). Each kind has a candidate list, most accurate first, taken from
   the measured fronts in ``benchmarks/README.md`` ("The accuracy frontier"):

   * graphlike (surface codes): Tesseract's surface preset, ``bposd`` (history-ordered OSD),
     correlated PyMatching, PyMatching;
   * hypergraph: Tesseract's colour preset, ``relay-bp[stop_after=10]``, ``relay-bp``, ``bposd``,
     ``gdg[osd_method=osd_cs]`` (GDG with its history-ordered OSD fallback), Chromobius (only where the
     detectors carry Chromobius' colour coordinate).

2. **Size, by measurement.** A model's size decides how long each candidate takes, so each
   candidate in turn decodes the same calibration shots (sampled from the model's own priors,
   fixed seed) after an untimed warm-up: a probe of 16 shots, then, unless the probe is over 10x
   the budget, one batch sized to about a second of CPU (512 to 2,048 shots: lane kernels reach
   their throughput only on large batches). The first candidate whose CPU time per shot is
   within ``time_budget`` milliseconds is chosen; when none fits, the fastest one measured
   (``AutoChoice.within_budget`` is then False, and a sweep says so in a warning line).
   A candidate that refuses the model (Chromobius without colour coordinates) is skipped.

The measurement makes the choice depend on the machine near the budget's edge; the recorded
label says what ran. ``choose`` reports every measured candidate (``AutoChoice.trials``).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, NamedTuple

import numpy as np

from qdecode.decoders.params import DecoderEntry, Param
from qdecode.problem import DecodingProblem

__all__ = ["AUTO_PARAMS", "GRAPHLIKE_CANDIDATES", "HYPERGRAPH_CANDIDATES", "AutoChoice", "Trial", "choose",
           "model_kind", "resolve", "calibration_syndromes", "time_budget_param", "ENTRIES"]

#: Parameters of ``auto``.
AUTO_PARAMS = {
    "time_budget": Param(float, 1.0, "CPU milliseconds per shot the chosen decoder may take (measured on "
                         "calibration shots)", minimum=0.0, min_exclusive=True),
}

#: Candidates for graphlike models, most accurate first (surface code d = 5, uniform p = 0.004: 76, 80,
#: 105 and 168 failures in 20,000 shots at 0.79, 0.82, 0.007 and 0.002 ms; benchmarks/README.md).
GRAPHLIKE_CANDIDATES = ("tesseract[beam=short,sparsify=surface]", "bposd", "pymatching-correlated", "pymatching")
#: Candidates for hypergraph models, most accurate first. Colour code d = 5, p = 0.002: 65, 69, 88, 83
#: and 97 failures in 20,000 shots at 1.37, 0.48, 0.27, 0.35 and 0.17 ms. ``bposd`` comes after
#: ``relay-bp``: equal within intervals on colour codes, and on [[144,12,12]] relay-bp fails 4.4x
#: less often (benchmarks/README.md, relay_ler.py). GDG takes its OSD fallback: where no branch converged, plain
#: ``gdg`` returns a decision that violates the syndrome (70 of its 78 failures on [[144,12,12]] at p = 0.004
#: against 32 with the fallback; benchmarks/results/gdg_window.json). Chromobius is last, where it applies.
HYPERGRAPH_CANDIDATES = ("tesseract[beam=short,sparsify=color]", "relay-bp[stop_after=10]", "relay-bp", "bposd",
                         "gdg[osd_method=osd_cs]", "chromobius")

#: Calibration: a probe of PROBE_SHOTS shots rejects a candidate slower than PROBE_FACTOR x the
#: budget; the others decode one batch of up to CALIBRATION_SHOTS shots (lane kernels need large
#: batches to reach their throughput), sized to take about CALIBRATION_SECONDS of CPU.
PROBE_SHOTS = 16
PROBE_FACTOR = 10.0
MIN_BATCH = 512
CALIBRATION_SHOTS = 2048
CALIBRATION_SECONDS = 1.0
CALIBRATION_SEED = 20261203


class Trial(NamedTuple):
    """One candidate's calibration: its label, CPU ms per shot (inf: refused) and shots timed."""

    label: str
    ms_per_shot: float
    shots: int


@dataclasses.dataclass(frozen=True)
class AutoChoice:
    """The resolved decoder (:class:`~qdecode.decoders.registry.DecoderSpec`), the model's kind, the trials,
    and whether the choice met the budget (False: none did, and the fastest measured was taken)."""

    spec: Any
    kind: str
    trials: tuple[Trial, ...]
    within_budget: bool = True


def model_kind(problem: DecodingProblem, specs: Any) -> str:
    """``"graphlike"`` where PyMatching accepts the model (every mechanism on at most two detectors,
    after ``^`` decomposition), else ``"hypergraph"``. ``specs``: the registry's spec class
    (``qdecode.decoders.registry.DecoderSpec``), which builds the decoders tried."""
    from qdecode.decoders.base import DecoderInputError

    if problem.dem is None:
        return "graphlike" if problem.is_graphlike() else "hypergraph"
    try:
        specs.create("pymatching").build(problem)
    except DecoderInputError:
        return "hypergraph"
    return "graphlike"


def calibration_syndromes(problem: DecodingProblem, shots: int = CALIBRATION_SHOTS) -> np.ndarray:
    """uint8 ``(shots, m)`` syndromes of errors drawn from the model's priors (fixed seed)."""
    rng = np.random.default_rng(CALIBRATION_SEED)
    errors = (rng.random((shots, problem.num_errors)) < problem.priors).astype(np.uint8)
    return ((problem.H @ errors.T) % 2).T.astype(np.uint8)


def _cpu_ms_per_shot(decoder: Any, syndromes: np.ndarray) -> float:
    t0 = time.process_time()
    decoder.predict_observables_batch(syndromes)
    return 1e3 * (time.process_time() - t0) / syndromes.shape[0]


def _measure(decoder: Any, syndromes: np.ndarray, time_budget: float) -> tuple[float, int]:
    """(CPU ms per shot, shots timed): a probe, then, unless it is far over budget, one large batch."""
    decoder.predict_observables_batch(syndromes[:4])  # warm-up: JIT or cache load, untimed
    probe = _cpu_ms_per_shot(decoder, syndromes[:PROBE_SHOTS])
    if probe > PROBE_FACTOR * time_budget:
        return probe, PROBE_SHOTS
    shots = int(min(syndromes.shape[0], max(MIN_BATCH, 1e3 * CALIBRATION_SECONDS / max(probe, 1e-4))))
    return _cpu_ms_per_shot(decoder, syndromes[:shots]), shots


def choose(problem: DecodingProblem, time_budget: float = AUTO_PARAMS["time_budget"].default, *,
           specs: Any) -> AutoChoice:
    """The most accurate candidate for ``problem`` whose measured CPU time per shot is within
    ``time_budget`` ms (module docstring); the fastest measured one when none is. ``specs``: the
    registry's spec class (``qdecode.DecoderSpec``), which parses and builds the candidates."""
    from qdecode.decoders.base import DecoderInputError

    kind = model_kind(problem, specs)
    candidates = GRAPHLIKE_CANDIDATES if kind == "graphlike" else HYPERGRAPH_CANDIDATES
    syndromes = calibration_syndromes(problem)
    trials: list[Trial] = []
    measured = {}  # label -> spec of the candidates that built
    for label in candidates:
        spec = specs.parse(label)
        try:
            decoder = spec.build(problem)
        except (DecoderInputError, ImportError):
            trials.append(Trial(spec.label(), float("inf"), 0))
            continue
        ms, shots = _measure(decoder, syndromes, time_budget)
        trials.append(Trial(spec.label(), ms, shots))
        measured[spec.label()] = spec
        if ms <= time_budget:
            return AutoChoice(spec, kind, tuple(trials))
    fastest = min((t for t in trials if t.label in measured), key=lambda t: t.ms_per_shot)
    return AutoChoice(measured[fastest.label], kind, tuple(trials), within_budget=False)


def resolve(spec: Any, dem: Any) -> Any:
    """``spec`` itself, or, for an ``auto`` spec, the concrete spec chosen for the model ``dem``."""
    if spec.name != "auto":
        return spec
    return choose(DecodingProblem.from_dem(dem), **dict(spec.params), specs=type(spec)).spec


def time_budget_param(ms: float | None) -> list[str]:
    """The command lines' ``--time-budget MS`` as a parameter, ``["time_budget=MS"]`` ([] when not given)."""
    return [] if ms is None else [f"time_budget={ms}"]


def _build(problem: DecodingProblem, *, specs: Any, time_budget: float):
    """Registry factory: the chosen decoder, built (``qdecode predict --decoder auto``)."""
    return choose(problem, time_budget, specs=specs).spec.build(problem)


ENTRIES = {
    "auto": DecoderEntry("auto", _build, AUTO_PARAMS, builds_decoders=True,
                         doc="the frontier's pick for the model within time_budget ms per shot, resolved "
                             "to a concrete decoder before sampling (recorded under that decoder's label)"),
}
