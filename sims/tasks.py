"""Sweep tasks: what to sample (a circuit) and how to decode it (a decoder spec).

A :class:`Task` is small and picklable: it names a generated circuit by its
parameters (code, d, rounds, noise, p, basis) or carries explicit circuit text.
Workers materialise it once (:func:`compile_task`) and cache the result.

The strong_id is computed exactly as sinter computes it (SHA-256 of the JSON of
circuit text, decoder name, DEM text, postselection mask and metadata), with the
DEM derived as sinter derives it, so the same task run by ``sinter collect`` and
by qdecode shares a strong_id and ``sinter combine`` pools them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from qdecode.decoders.registry import DecoderSpec


@dataclasses.dataclass(frozen=True)
class CircuitRecipe:
    """Parameters of a generated memory-experiment circuit (see :mod:`qdecode.sims.circuits`)."""

    code: str
    noise: str
    p: float
    d: int | None = None
    rounds: int | None = None
    basis: str = "Z"
    memory_basis_only: bool | None = None  # None: the code family's default

    def build(self):
        from qdecode.sims.circuits import build_circuit

        return build_circuit(
            self.code,
            d=self.d,
            rounds=self.rounds,
            noise=self.noise,
            p=self.p,
            basis=self.basis,
            memory_basis_only=self.memory_basis_only,
        )

    def metadata(self) -> dict[str, Any]:
        """sinter-style short keys: ``code, d, r, p, b, noise`` (rounds and d resolved)."""
        from qdecode.sims.circuits import circuit_metadata, default_memory_basis_only

        m = circuit_metadata(
            self.code, d=self.d, rounds=self.rounds, noise=self.noise, p=self.p,
            basis=self.basis, memory_basis_only=self.memory_basis_only,
        )
        meta: dict[str, Any] = {"code": self.code, "noise": self.noise, "p": self.p, "r": m["rounds"], "b": m["basis"]}
        if m.get("d") is not None:
            meta["d"] = m["d"]
        if self.memory_basis_only is not None and self.memory_basis_only != default_memory_basis_only(m["family"]):
            meta["dets"] = "memory" if self.memory_basis_only else "both"  # only when not the default
        return meta


@dataclasses.dataclass(frozen=True)
class Task:
    """One sweep point: a circuit source (or a classical code + channel), a decoder, metadata.

    Exactly one of ``recipe`` / ``circuit_text`` / ``classical`` is set; a classical point
    (:class:`qdecode.sims.classical.ClassicalRecipe`) needs a classical decoder and vice versa.

    ``learned_dem``: text of a detector error model (e.g. from ``qdecode learn-noise``) that the
    decoder is built from instead of the circuit's own DEM; shots still come from the circuit.
    It must have the circuit's detector and observable counts, and it is recorded in the
    json_metadata as ``learned_noise`` (a hash of the text), so such rows never pool with
    true-DEM rows.
    """

    decoder: DecoderSpec
    recipe: CircuitRecipe | None = None
    circuit_text: str | None = None
    extra_metadata: tuple[tuple[str, Any], ...] = ()
    classical: Any = None
    learned_dem: str | None = None

    def __post_init__(self) -> None:
        given = sum(x is not None for x in (self.recipe, self.circuit_text, self.classical))
        if given != 1:
            raise ValueError("a Task needs exactly one of recipe=, circuit_text= or classical=")
        want = "classical" if self.classical is not None else "quantum"
        if self.decoder.kind != want:
            what = "a classical code" if want == "classical" else "a circuit"
            raise ValueError(f"decoder {self.decoder.name!r} is a {self.decoder.kind} decoder and cannot decode {what}")
        if self.learned_dem is not None and self.classical is not None:
            raise ValueError("a learned detector error model applies to circuits, not to classical codes")

    def circuit(self):
        import stim

        if self.recipe is not None:
            return self.recipe.build()
        return stim.Circuit(self.circuit_text)

    def json_metadata(self) -> dict[str, Any]:
        if self.classical is not None:
            meta: dict[str, Any] = self.classical.metadata()
        else:
            meta = self.recipe.metadata() if self.recipe is not None else {}
        meta.update(dict(self.extra_metadata))
        if self.learned_dem is not None:
            meta["learned_noise"] = learned_noise_id(self.learned_dem)
        return meta


def decoding_dem(circuit):
    """The DEM decoders see, derived as sinter derives it (decomposed when possible)."""
    try:
        return circuit.detector_error_model(decompose_errors=True, approximate_disjoint_errors=True)
    except ValueError:
        try:
            return circuit.detector_error_model(approximate_disjoint_errors=True)
        except ValueError:
            return circuit.detector_error_model(approximate_disjoint_errors=True, flatten_loops=True)


def learned_noise_id(dem_text: str) -> str:
    """Short identity of a learned DEM (first 12 hex digits of the SHA-256 of its text)."""
    return hashlib.sha256(dem_text.encode("utf-8")).hexdigest()[:12]


def learned_decoding_dem(circuit, dem_text: str):
    """The learned DEM parsed and checked against ``circuit``'s detector and observable counts."""
    import stim

    try:
        dem = stim.DetectorErrorModel(dem_text)
    except ValueError as exc:
        raise ValueError(f"learned noise: malformed detector error model: {exc}") from None
    want = (circuit.num_detectors, circuit.num_observables)
    got = (dem.num_detectors, dem.num_observables)
    if got != want:
        raise ValueError(
            f"learned noise: the DEM has {got[0]} detectors and {got[1]} observables, but the circuit "
            f"has {want[0]} and {want[1]} (learn it from this circuit's detection events)"
        )
    return dem


def strong_id(circuit, dem, decoder_label: str, json_metadata: Any) -> str:
    """sinter's strong_id: SHA-256 of the JSON of the task's identifying values."""
    value = {
        "circuit": str(circuit),
        "decoder": decoder_label,
        "decoder_error_model": str(dem),
        "postselection_mask": None,
        "json_metadata": json_metadata,
    }
    return hashlib.sha256(json.dumps(value).encode("utf-8")).hexdigest()


@dataclasses.dataclass
class CompiledTask:
    """A task materialised in one process: circuit, DEM, sampler, decoder and identity."""

    task: Task
    circuit: Any
    dem: Any
    strong_id: str
    json_metadata: dict[str, Any]
    decoder: Any = None  # built lazily in workers only
    code: Any = None  # classical points: the BinaryCode (circuit and dem are None)

    @property
    def label(self) -> str:
        return self.task.decoder.label()


def describe_task(task: Task) -> CompiledTask:
    """Circuit, DEM, metadata and strong_id of ``task`` (no decoder built)."""
    if task.classical is not None:
        meta = task.json_metadata()
        return CompiledTask(task=task, circuit=None, dem=None, json_metadata=meta,
                            strong_id=task.classical.strong_id(task.decoder.label(), meta))
    circuit = task.circuit()
    dem = decoding_dem(circuit) if task.learned_dem is None else learned_decoding_dem(circuit, task.learned_dem)
    meta = task.json_metadata()
    return CompiledTask(task=task, circuit=circuit, dem=dem, strong_id=strong_id(circuit, dem, task.decoder.label(), meta), json_metadata=meta)
