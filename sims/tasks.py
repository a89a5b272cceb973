"""Sweep tasks: what to sample (a circuit) and how to decode it (a decoder spec).

A :class:`SweepTask` is small and picklable: it names a generated circuit by its
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

from qdecode.decoders.confidence import no_confidence_error
from qdecode.decoders.registry import DecoderSpec, get_entry
from qdecode.errors import InputError
from qdecode.problem import decoding_dem
from qdecode.sims.gap_bins import GAP_BINS_KEY, GAP_BINS_TAG
from qdecode.sims.heralded_noise import add_heralded_noise, check_erasure_fraction, check_heralded_rate
from qdecode.sims.latency_bins import LATENCY_BINS_KEY, LATENCY_BINS_TAG


@dataclasses.dataclass(frozen=True)
class CircuitRecipe:
    """Parameters of a generated memory-experiment circuit (see :mod:`qdecode.sims.circuits`).

    ``erasure_fraction``, ``leakage``, ``loss``: heralded noise added to the built circuit by
    :func:`qdecode.sims.heralded_noise.add_heralded_noise` (erasure conversion of that fraction of
    every ``DEPOLARIZE2``; leakage or atom loss with that probability per qubit per two-qubit gate);
    all 0 (the default) builds the circuit as before.
    """

    code: str
    noise: str
    p: float
    d: int | None = None
    rounds: int | None = None
    basis: str = "Z"
    memory_basis_only: bool | None = None  # None: the code family's default
    erasure_fraction: float = 0.0
    leakage: float = 0.0
    loss: float = 0.0

    def __post_init__(self) -> None:
        check_erasure_fraction(self.erasure_fraction)
        check_heralded_rate(self.leakage, "leakage")
        check_heralded_rate(self.loss, "loss")

    def build(self):
        from qdecode.sims.circuits import build_circuit

        circuit = build_circuit(
            self.code,
            d=self.d,
            rounds=self.rounds,
            noise=self.noise,
            p=self.p,
            basis=self.basis,
            memory_basis_only=self.memory_basis_only,
        )
        try:  # the circuit itself when all three are 0
            return add_heralded_noise(circuit, erasure_fraction=self.erasure_fraction, leakage=self.leakage,
                                      loss=self.loss)
        except InputError as exc:  # nothing to act on: say which noise model that was
            raise InputError(f"noise {self.noise!r}: {exc}") from None

    def metadata(self) -> dict[str, Any]:
        """sinter-style short keys: ``code, d, r, p, b, noise`` (rounds and d resolved), and ``F`` / ``leak`` /
        ``loss`` only when the heralded noise is non-zero (so the metadata of a circuit without it is unchanged)."""
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
        for key, value in (("F", self.erasure_fraction), ("leak", self.leakage), ("loss", self.loss)):
            if value:
                meta[key] = value
        return meta


@dataclasses.dataclass(frozen=True)
class SweepTask:
    """One sweep point: what to sample, how to decode it, and its metadata.

    Exactly one sample source is set: ``recipe`` (a generated catalogue circuit),
    ``circuit_text`` (a user's stim circuit), ``dem_text`` (a user's detector error model,
    sampled directly when there is no circuit) or ``classical`` (a
    :class:`qdecode.sims.classical_points.ClassicalRecipe`; it needs a classical decoder and vice versa).

    ``decoder_dem``: text of a detector error model the decoder is built from instead of the
    sampled model's own (``--decoder-dem``; ``qdecode learn-noise`` output for
    ``--learned-noise``). It must have the sampled model's detector and observable counts, and
    a hash of its text is recorded in the json_metadata under ``decoder_dem_key``
    (``decoder_dem`` or ``learned_noise``), so such rows never pool with true-model rows.

    ``postselect``: detectors whose detection events discard the shot
    (:mod:`qdecode.sims.postselection`). ``count_observable_error_combos`` /
    ``count_detection_events``: sinter's optional ``custom_counts`` (``obs_mistake_mask=E_...``
    per mispredicted-observable pattern; ``detection_events`` and ``detectors_checked``).
    ``gap_histogram``: decode with the decoder's confidence and count shots and errors per 1 dB
    bin of the gap (:mod:`qdecode.sims.gap_bins`); unlike the two counts above (sinter's flags,
    outside sinter's strong_id) it is recorded in the json_metadata (``gap_bins``) and so in the
    strong_id, because the post-selection curve needs every shot of a row in the histogram. It
    needs a decoder with a confidence (``get_entry(name).has_confidence``).
    ``latency_histogram``: decode in real-time mode (``Decoder.predict_observables_timed``: one shot
    after another, each timed) and count shots and errors per bin of the wall and work clocks
    (:mod:`qdecode.sims.latency_bins`); recorded in the json_metadata (``latency_bins``) and so in
    the strong_id, for the same reason. Not with ``gap_histogram`` (the timed path gives no confidence).
    """

    decoder: DecoderSpec
    recipe: CircuitRecipe | None = None
    circuit_text: str | None = None
    extra_metadata: tuple[tuple[str, Any], ...] = ()
    classical: Any = None
    decoder_dem: str | None = None
    decoder_dem_key: str = "decoder_dem"
    dem_text: str | None = None
    postselect: Any = None
    count_observable_error_combos: bool = False
    count_detection_events: bool = False
    gap_histogram: bool = False
    latency_histogram: bool = False

    def __post_init__(self) -> None:
        given = sum(x is not None for x in (self.recipe, self.circuit_text, self.dem_text, self.classical))
        if given != 1:
            raise InputError("a SweepTask needs exactly one of recipe=, circuit_text=, dem_text= or classical=")
        want = "classical" if self.classical is not None else "quantum"
        if self.decoder.kind != want:
            what = "a classical code" if want == "classical" else "a circuit"
            raise InputError(f"decoder {self.decoder.name!r} is a {self.decoder.kind} decoder and cannot decode {what}")
        if self.classical is not None and (self.decoder_dem is not None or self.postselect is not None):
            raise InputError("a decoder DEM and postselection apply to circuits and DEMs, not to classical codes")
        if self.gap_histogram:
            if self.classical is not None:
                raise InputError("a gap histogram applies to circuits and DEMs, not to classical codes")
            if not get_entry(self.decoder.name).has_confidence:
                raise no_confidence_error(self.decoder.name)
        if self.latency_histogram:
            if self.classical is not None:
                raise InputError("a latency histogram applies to circuits and DEMs, not to classical codes")
            if self.gap_histogram:
                raise InputError("a latency histogram and a gap histogram cannot be recorded together: the timed "
                                 "decoding path gives no confidence")
        if self.decoder_dem_key not in ("decoder_dem", "learned_noise"):
            raise InputError(f"decoder_dem_key must be 'decoder_dem' or 'learned_noise', got {self.decoder_dem_key!r}")

    def describe(self) -> str:
        """The task in a few words for error messages: what is sampled and the decoder.

        ``code=surface, d=3, p=0.9, noise=sd6, basis=Z, decoder=pymatching`` for a catalogue
        circuit; a user's circuit or DEM is named by its metadata (its ``key=value`` file name).
        Built from the task's fields only, so it works when building the circuit is what failed.
        """
        if self.recipe is not None:
            r = self.recipe
            fields = [("code", r.code), ("d", r.d), ("rounds", r.rounds), ("p", r.p), ("noise", r.noise),
                      ("basis", r.basis), ("F", r.erasure_fraction or None), ("leak", r.leakage or None),
                      ("loss", r.loss or None)]
        elif self.classical is not None:
            c = self.classical
            fields = [("code", c.code), ("noise", c.noise), ("ebn0", c.ebn0), ("p", c.p)]
        else:
            source = "circuit" if self.circuit_text is not None else "dem"
            fields = [("source", f"user {source}"), *self.extra_metadata]
        fields.append(("decoder", self.decoder.record_label))
        return ", ".join(f"{k}={v}" for k, v in fields if v is not None)

    def circuit(self):
        """The stim circuit sampled, or None for a task sampled from a DEM."""
        import stim

        if self.recipe is not None:
            return self.recipe.build()
        if self.dem_text is not None:
            return None
        return stim.Circuit(self.circuit_text)

    def json_metadata(self) -> dict[str, Any]:
        if self.classical is not None:
            meta: dict[str, Any] = self.classical.metadata()
        else:
            meta = self.recipe.metadata() if self.recipe is not None else {}
        meta.update(dict(self.extra_metadata))
        if self.decoder_dem is not None:
            meta[self.decoder_dem_key] = learned_noise_id(self.decoder_dem)
        if self.gap_histogram:
            meta[GAP_BINS_KEY] = GAP_BINS_TAG
        if self.latency_histogram:
            meta[LATENCY_BINS_KEY] = LATENCY_BINS_TAG
        return meta


def learned_noise_id(dem_text: str) -> str:
    """Short identity of a learned DEM (first 12 hex digits of the SHA-256 of its text)."""
    return hashlib.sha256(dem_text.encode("utf-8")).hexdigest()[:12]


def learned_decoding_dem(model, dem_text: str, *, what: str = "learned noise"):
    """The decoder's DEM parsed and checked against the sampled ``model``'s detector and observable counts.

    ``model`` is the sampled ``stim.Circuit`` or ``stim.DetectorErrorModel``; ``what`` names
    the DEM's role in error messages.
    """
    from qdecode.sims.model_files import parse_dem

    dem = parse_dem(dem_text, where=what)
    want = (model.num_detectors, model.num_observables)
    got = (dem.num_detectors, dem.num_observables)
    if got != want:
        source = "circuit" if hasattr(model, "compile_detector_sampler") else "sampled DEM"
        raise InputError(
            f"{what}: the DEM has {got[0]} detectors and {got[1]} observables, but the {source} "
            f"has {want[0]} and {want[1]}"
        )
    return dem


def strong_id(circuit, dem, decoder_label: str, json_metadata: Any, postselection_mask=None) -> str:
    """sinter's strong_id: SHA-256 of the JSON of the task's identifying values.

    ``circuit`` is the sampled circuit, or for a task sampled from a DEM the sampled DEM (its
    text takes the circuit's place); ``dem`` is the decoder's model; ``postselection_mask``
    the bit-packed uint8 mask or None, written as sinter writes it (a list of byte values).
    """
    value = {
        "circuit": str(circuit),
        "decoder": decoder_label,
        "decoder_error_model": str(dem),
        "postselection_mask": None if postselection_mask is None else [int(b) for b in postselection_mask],
        "json_metadata": json_metadata,
    }
    return hashlib.sha256(json.dumps(value).encode("utf-8")).hexdigest()


@dataclasses.dataclass
class CompiledTask:
    """A task materialised in one process: sampled model, decoder DEM, mask, decoder and identity.

    ``circuit`` is None for a task sampled from a DEM (``sampled`` is then that DEM);
    ``dem`` is the model the decoder is built from; ``postselection_mask`` is sinter's
    bit-packed mask or None.
    """

    task: SweepTask
    circuit: Any
    dem: Any
    strong_id: str
    json_metadata: dict[str, Any]
    decoder: Any = None  # built lazily in workers only
    code: Any = None  # classical points: the BinaryCode (circuit and dem are None)
    sampled: Any = None  # the stim.Circuit or stim.DetectorErrorModel shots come from
    postselection_mask: Any = None

    @property
    def label(self) -> str:
        return self.task.decoder.record_label


def describe_task(task: SweepTask) -> CompiledTask:
    """Circuit, DEM, metadata and strong_id of ``task`` (no decoder built)."""
    if task.classical is not None:
        meta = task.json_metadata()
        return CompiledTask(task=task, circuit=None, dem=None, json_metadata=meta,
                            strong_id=task.classical.strong_id(task.decoder.record_label, meta))
    circuit = task.circuit()
    if circuit is None:
        from qdecode.sims.model_files import parse_dem

        sampled = parse_dem(task.dem_text, where="sampled DEM")
        own_dem = sampled
    else:
        sampled = circuit
        own_dem = None
    if task.decoder_dem is not None:
        what = "learned noise" if task.decoder_dem_key == "learned_noise" else "decoder DEM"
        dem = learned_decoding_dem(sampled, task.decoder_dem, what=what)
    else:
        dem = own_dem if own_dem is not None else decoding_dem(circuit)
    if task.decoder.name == "auto":  # resolved here, once: the compiled task (and its label) is the concrete one
        from qdecode.decoders.auto import resolve

        task = dataclasses.replace(task, decoder=resolve(task.decoder, dem))
    mask = task.postselect.mask(sampled) if task.postselect is not None else None
    meta = task.json_metadata()
    sid = strong_id(sampled, dem, task.decoder.record_label, meta, mask)
    return CompiledTask(task=task, circuit=circuit, dem=dem, strong_id=sid, json_metadata=meta, sampled=sampled,
                        postselection_mask=mask)
