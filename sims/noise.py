"""Noise models as passes over noiseless stim circuits.

A noiseless input circuit is split into *moments* (the instructions between two
``TICK``s). :func:`insert_noise` then adds, per :class:`NoiseRules`:

* ``DEPOLARIZE2`` after every two-qubit Clifford, ``DEPOLARIZE1`` after every
  single-qubit Clifford;
* ``X_ERROR`` after ``R`` / ``MR`` and ``Z_ERROR`` after ``RX`` / ``MRX`` (preparation flips);
* a result-flip probability on ``M`` / ``MX`` / ``MY`` / ``MR`` / ``MRX`` (the gate argument),
  optionally followed by ``DEPOLARIZE1`` on the measured qubits;
* ``DEPOLARIZE1`` after explicit ``I`` gates (idle markers a generator placed);
* ``DEPOLARIZE1`` on *idle* qubits: qubits that are live in the moment (after
  their first and before their last operation in the circuit) but untouched
  by it, plus an extra ``DEPOLARIZE1`` on idle qubits in moments that contain
  a measurement or reset ("resonator idle" in SI1000).

Instructions tagged ``[noiseless]`` (e.g. ``M[noiseless] 0 1 2``) get no noise but
still count as touching their qubits. Annotations (``DETECTOR``, ``OBSERVABLE_INCLUDE``,
coordinates) keep their place, so measurement-record offsets stay valid.
``REPEAT`` blocks are flattened first.

Models (``NOISE_MODELS``), all parametrised by one strength ``p``:

* ``sd6``: uniform depolarizing, as stim's generated circuits with
  ``after_clifford_depolarization = before_round_data_depolarization =
  before_measure_flip_probability = after_reset_flip_probability = p``.
* ``si1000``: superconducting-inspired (Gidney, Newman, Fowler, Broughton,
  Quantum 5, 605 (2021), arXiv:2108.10457) on a CZ circuit:
  CZ -> ``DEPOLARIZE2(p)``; 1q Clifford -> ``DEPOLARIZE1(p/10)``; reset ->
  ``X_ERROR(2p)``; measurement flip ``5p`` then ``DEPOLARIZE1(p)`` on the measured
  qubit; idle ``DEPOLARIZE1(p/10)``; idle during a measurement/reset moment an
  additional ``DEPOLARIZE1(2p)``. X-basis resets/measurements and CX gates are first
  rewritten with H (:func:`to_cz_circuit`); ``MR`` stays one operation (flip ``5p``
  then ``X_ERROR(2p)``).
* ``bb-uniform``: Bravyi et al., Nature 627, 778 (2024): every CX ->
  ``DEPOLARIZE2(p)``; preparation flips ``p`` (``X_ERROR`` after ``R``, ``Z_ERROR`` after
  ``RX``); measurement flips ``p``; ``DEPOLARIZE1(p)`` on the idle locations the BB
  generator marks with ``I``; the final data readout noiseless (as IBM's published
  circuits for Relay-BP).
* ``phenomenological``: data depolarization ``p`` before each syndrome round and
  measurement flips ``p``; gates noiseless.
* ``code-capacity``: data depolarization ``p`` once, perfect syndrome extraction.

``sd6``, ``phenomenological`` and ``code-capacity`` are realised through stim's
generator parameters (see :mod:`qdecode.sims.circuits`); ``si1000`` and ``bb-uniform``
through this pass.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from qdecode.errors import InputError

__all__ = [
    "NoiseModel",
    "NoiseRules",
    "NOISE_MODELS",
    "noise_names",
    "get_noise_model",
    "check_basis",
    "check_p",
    "si1000_rules",
    "bb_uniform_rules",
    "insert_noise",
    "to_cz_circuit",
    "split_moments",
]


@dataclasses.dataclass(frozen=True)
class NoiseModel:
    """A named noise model.

    Attributes:
        name: CLI name.
        level: ``"circuit"``, ``"phenomenological"`` or ``"code-capacity"``.
        description: one line.
        reference: citation.
    """

    name: str
    level: str
    description: str
    reference: str = ""


NOISE_MODELS: dict[str, NoiseModel] = {
    "sd6": NoiseModel(
        "sd6", "circuit",
        "uniform depolarizing p after every Clifford, on data before each round, on resets and measurements",
        "stim generated circuits; Gidney et al., Quantum 5, 605 (2021) (SD6)",
    ),
    "si1000": NoiseModel(
        "si1000", "circuit",
        "superconducting-inspired: CZ p, 1q p/10, idle p/10, reset 2p, measure 5p, resonator idle 2p",
        "Gidney, Newman, Fowler, Broughton, Quantum 5, 605 (2021), arXiv:2108.10457",
    ),
    "bb-uniform": NoiseModel(
        "bb-uniform", "circuit",
        "Bravyi et al. uniform model: CX p, prep p, measure p, idle p; noiseless final data readout",
        "Bravyi et al., Nature 627, 778 (2024), arXiv:2308.07915",
    ),
    "code-capacity": NoiseModel(
        "code-capacity", "code-capacity", "data depolarizing p once, perfect syndrome", "",
    ),
    "phenomenological": NoiseModel(
        "phenomenological", "phenomenological",
        "data depolarizing p before each round, measurement flips p, noiseless gates", "",
    ),
}


def noise_names() -> list[str]:
    """All noise-model names."""
    return list(NOISE_MODELS)


def get_noise_model(name: str) -> NoiseModel:
    """Look up a noise model.

    Raises:
        ValueError: unknown name (the message lists the valid names).
    """
    try:
        return NOISE_MODELS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown noise model {name!r}; valid names: {', '.join(NOISE_MODELS)}") from None


def check_basis(basis: Any) -> str:
    """A memory basis, ``"X"`` or ``"Z"`` (any case), else a one-line ``ValueError``."""
    b = str(basis).upper()
    if b not in ("X", "Z"):
        raise InputError(f"basis must be 'X' or 'Z', got basis={basis!r}")
    return b


def check_positive_int(value: Any, name: str) -> int:
    """``value`` as an int >= 1 (``rounds``, ``d``, ...), else a one-line ``ValueError`` naming ``name``."""
    try:
        iv = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a positive integer, got {name}={value!r}") from None
    if iv != value or iv < 1:
        raise InputError(f"{name} must be a positive integer, got {name}={value!r}")
    return iv


def check_p(p: Any) -> float:
    """Validate a physical error rate.

    Raises:
        ValueError: ``p`` is not a number strictly inside (0, 1).
    """
    try:
        pf = float(p)
    except (TypeError, ValueError):
        raise InputError(f"p must be a number in (0, 1), got p={p!r}") from None
    if not (0.0 < pf < 1.0):
        raise InputError(f"p must lie strictly inside (0, 1), got p={p!r}")
    return pf


@dataclasses.dataclass(frozen=True)
class NoiseRules:
    """Probabilities used by :func:`insert_noise` (0 disables a channel).

    Attributes:
        after_2q: ``DEPOLARIZE2`` after two-qubit Cliffords.
        after_1q: ``DEPOLARIZE1`` after single-qubit Cliffords.
        reset_flip: flip after resets (``X_ERROR`` for Z-basis, ``Z_ERROR`` for X-basis).
        measure_flip: classical flip of measurement results.
        after_measure: ``DEPOLARIZE1`` on measured qubits after a (non-reset) measurement.
        idle: ``DEPOLARIZE1`` on live, untouched qubits in every moment.
        idle_mr_extra: additional ``DEPOLARIZE1`` on idle qubits in moments with a measurement or reset.
        identity: ``DEPOLARIZE1`` after explicit ``I`` gates (idle markers placed by a generator).
    """

    after_2q: float = 0.0
    after_1q: float = 0.0
    reset_flip: float = 0.0
    measure_flip: float = 0.0
    after_measure: float = 0.0
    idle: float = 0.0
    idle_mr_extra: float = 0.0
    identity: float = 0.0


def si1000_rules(p: float) -> NoiseRules:
    """SI1000 rules for strength ``p`` (see the module docstring)."""
    p = check_p(p)
    return NoiseRules(
        after_2q=p, after_1q=p / 10, reset_flip=2 * p, measure_flip=5 * p,
        after_measure=p, idle=p / 10, idle_mr_extra=2 * p, identity=p / 10,
    )


def bb_uniform_rules(p: float) -> NoiseRules:
    """Bravyi et al. uniform rules for strength ``p``.

    Idle locations are not inferred: the BB circuit generator marks them with
    explicit ``I`` gates (its schedule decides which qubits wait when), and each
    ``I`` becomes ``DEPOLARIZE1(p)``.
    """
    p = check_p(p)
    return NoiseRules(after_2q=p, reset_flip=p, measure_flip=p, identity=p)


# ----------------------------------------------------------------- gate classes
_ANNOTATIONS = {"DETECTOR", "OBSERVABLE_INCLUDE", "QUBIT_COORDS", "SHIFT_COORDS", "MPAD"}
_NOISE = {
    "DEPOLARIZE1", "DEPOLARIZE2", "X_ERROR", "Y_ERROR", "Z_ERROR", "PAULI_CHANNEL_1",
    "PAULI_CHANNEL_2", "E", "ELSE_CORRELATED_ERROR", "CORRELATED_ERROR", "HERALDED_ERASE",
    "HERALDED_PAULI_CHANNEL_1", "I_ERROR", "II_ERROR",
}
_RESET_Z = {"R"}
_RESET_X = {"RX"}
_MEASURE = {"M", "MX", "MY"}
_MEASURE_RESET_Z = {"MR"}
_MEASURE_RESET_X = {"MRX"}
_ANY_MEASURE = _MEASURE | _MEASURE_RESET_Z | _MEASURE_RESET_X
_ANY_MR = _ANY_MEASURE | _RESET_Z | _RESET_X
_NOISELESS_TAG = "noiseless"


@functools.lru_cache(maxsize=None)
def _is_two_qubit(gate: str) -> bool:
    import stim

    data = stim.gate_data(gate)
    return bool(data.is_two_qubit_gate and data.is_unitary)


@functools.lru_cache(maxsize=None)
def _is_one_qubit_clifford(gate: str) -> bool:
    import stim

    data = stim.gate_data(gate)
    return bool(data.is_single_qubit_gate and data.is_unitary)


def split_moments(circuit: Any) -> list[list[Any]]:
    """Split a (flattened) circuit into moments: lists of instructions between TICKs.

    Args:
        circuit: a ``stim.Circuit``; ``REPEAT`` blocks are flattened.

    Returns:
        One list of ``stim.CircuitInstruction`` per moment (TICKs removed). The
        number of moments is ``num_ticks + 1`` (the last may be empty).
    """
    moments: list[list[Any]] = [[]]
    for inst in circuit.flattened():
        if inst.name == "TICK":
            moments.append([])
        else:
            moments[-1].append(inst)
    return moments


def _qubits(inst: Any) -> list[int]:
    return [t.value for t in inst.targets_copy() if t.is_qubit_target]


def _join(moments: list[list[Any]]) -> Any:
    import stim

    out = stim.Circuit()
    for i, mom in enumerate(moments):
        if i:
            out.append("TICK")
        for inst in mom:
            out.append(inst)
    return out


def insert_noise(circuit: Any, rules: NoiseRules) -> Any:
    """Add noise to a noiseless circuit moment by moment.

    Args:
        circuit: noiseless ``stim.Circuit`` with moments separated by ``TICK``.
        rules: the probabilities to apply.

    Returns:
        A new flat ``stim.Circuit`` (same measurements, detectors and observables).

    Raises:
        ValueError: the input already contains noise channels or noisy measurements,
            or uses a gate the pass does not know how to noise (e.g. ``MPP``).
    """
    import stim

    moments = split_moments(circuit)
    # Liveness: a qubit is live strictly between its first and last touching moment.
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for mi, mom in enumerate(moments):
        for inst in mom:
            if inst.name in _ANNOTATIONS:
                continue
            for q in _qubits(inst):
                first.setdefault(q, mi)
                last[q] = mi

    live_qubits = sorted(first)
    q_first = np.array([first[q] for q in live_qubits], dtype=np.int64)
    q_last = np.array([last[q] for q in live_qubits], dtype=np.int64)
    q_arr = np.array(live_qubits, dtype=np.int64)
    use_idle = bool(rules.idle or rules.idle_mr_extra)

    out_moments: list[list[Any]] = []
    for mi, mom in enumerate(moments):
        touched: set[int] = set()
        has_mr = False
        new: list[Any] = []
        last_gate_pos = -1
        for inst in mom:
            name = inst.name
            if name in _ANNOTATIONS:
                new.append(inst)
                continue
            if name in _NOISE:
                raise InputError(f"insert_noise needs a noiseless circuit; found {name} in moment {mi}")
            qs = _qubits(inst)
            touched.update(qs)
            noiseless = _NOISELESS_TAG in inst.tag.split(",") if inst.tag else False
            args = inst.gate_args_copy()
            if name in _ANY_MR:
                has_mr = True
            if noiseless:
                new.append(inst)
                last_gate_pos = len(new) - 1
                continue
            if name in _ANY_MEASURE:
                if args and args[0] > 0:
                    raise InputError(f"insert_noise needs noiseless measurements; "
                                     f"found {name}({args[0]}) in moment {mi}")
                targets = inst.targets_copy()
                new.append(stim.CircuitInstruction(name, targets, [rules.measure_flip] if rules.measure_flip else []))
                if name in _MEASURE and rules.after_measure:
                    new.append(stim.CircuitInstruction("DEPOLARIZE1", qs, [rules.after_measure]))
                if name in _MEASURE_RESET_Z and rules.reset_flip:
                    new.append(stim.CircuitInstruction("X_ERROR", qs, [rules.reset_flip]))
                if name in _MEASURE_RESET_X and rules.reset_flip:
                    new.append(stim.CircuitInstruction("Z_ERROR", qs, [rules.reset_flip]))
            elif name in _RESET_Z | _RESET_X:
                new.append(inst)
                if rules.reset_flip:
                    new.append(stim.CircuitInstruction("X_ERROR" if name in _RESET_Z else "Z_ERROR", qs,
                                                       [rules.reset_flip]))
            elif _is_two_qubit(name):
                new.append(inst)
                if rules.after_2q:
                    new.append(stim.CircuitInstruction("DEPOLARIZE2", qs, [rules.after_2q]))
            elif name == "I":
                new.append(inst)
                if rules.identity:
                    new.append(stim.CircuitInstruction("DEPOLARIZE1", qs, [rules.identity]))
            elif _is_one_qubit_clifford(name):
                new.append(inst)
                if rules.after_1q:
                    new.append(stim.CircuitInstruction("DEPOLARIZE1", qs, [rules.after_1q]))
            else:
                raise InputError(f"insert_noise does not know how to add noise to {name!r} (moment {mi})")
            last_gate_pos = len(new) - 1
        idle: list[int] = []
        if use_idle:
            cand = q_arr[(q_first < mi) & (mi < q_last)]
            idle = [int(q) for q in cand if int(q) not in touched]
        idle_ops = []
        if idle and rules.idle:
            idle_ops.append(stim.CircuitInstruction("DEPOLARIZE1", idle, [rules.idle]))
        if idle and has_mr and rules.idle_mr_extra:
            idle_ops.append(stim.CircuitInstruction("DEPOLARIZE1", idle, [rules.idle_mr_extra]))
        new[last_gate_pos + 1 : last_gate_pos + 1] = idle_ops
        out_moments.append(new)
    return _join(out_moments)


def _merge_h_moments(moments: list[list[Any]]) -> list[list[Any]]:
    """Merge consecutive moments holding only ``H`` gates (H H = I); drop empty moments."""
    import stim

    out: list[list[Any]] = []
    pending: set[int] | None = None

    def flush() -> None:
        nonlocal pending
        if pending:
            out.append([stim.CircuitInstruction("H", sorted(pending))])
        pending = None

    for mom in moments:
        if mom and all(inst.name == "H" and not inst.tag for inst in mom):
            acc = pending if pending is not None else set()
            for inst in mom:
                for q in _qubits(inst):
                    acc ^= {q}
            pending = acc
            continue
        flush()
        if mom:
            out.append(mom)
    flush()
    return out


def to_cz_circuit(circuit: Any) -> Any:
    """Rewrite a noiseless circuit into the SI1000 gate set {R, M, MR, H, CZ}.

    ``CX c t`` becomes ``H t; CZ c t; H t`` (the H's in their own moments before
    and after), ``RX`` becomes ``R`` followed by an ``H`` moment, ``MX`` an ``H``
    moment followed by ``M`` (``MRX`` likewise with ``MR``). Consecutive
    H-only moments are then merged (H H cancels), which removes the back-to-back
    basis changes between CZ layers. Measurement order and annotations are
    preserved, so detectors and observables are unchanged.

    Raises:
        ValueError: a gate other than R, RX, M, MX, MR, MRX, H, CX, CZ or an annotation.
    """
    import stim

    moments = split_moments(circuit)
    new_moments: list[list[Any]] = []
    allowed = {"R", "RX", "M", "MX", "MR", "MRX", "H", "CX", "CZ"} | _ANNOTATIONS
    for mi, mom in enumerate(moments):
        before: set[int] = set()
        after: set[int] = set()
        body: list[Any] = []
        for inst in mom:
            name = inst.name
            if name not in allowed:
                raise InputError(f"to_cz_circuit cannot convert {name!r} (moment {mi})")
            qs = _qubits(inst)
            args = inst.gate_args_copy()
            if name == "CX":
                tgts = qs[1::2]
                before.update(tgts)
                after.update(tgts)
                body.append(stim.CircuitInstruction("CZ", qs, args, tag=inst.tag))
            elif name == "RX":
                after.update(qs)
                body.append(stim.CircuitInstruction("R", qs, args, tag=inst.tag))
            elif name in ("MX", "MRX"):
                before.update(qs)
                if name == "MRX":
                    after.update(qs)
                body.append(stim.CircuitInstruction(name[:-1], inst.targets_copy(), args, tag=inst.tag))
            else:
                body.append(inst)
        if before:
            new_moments.append([stim.CircuitInstruction("H", sorted(before))])
        new_moments.append(body)
        if after:
            new_moments.append([stim.CircuitInstruction("H", sorted(after))])
    return _join(_merge_h_moments(new_moments))

