"""Heralded noise: erasure conversion, leakage and atom loss as a post-pass over a noisy stim circuit.

Each pass walks an already-noisy circuit, ``REPEAT`` blocks flattened (``circuit.flattened()``), and
inserts stim's ``HERALDED_ERASE(q) ...``: with probability ``q`` the qubit gets a uniformly random
Pauli (I, X, Y or Z, 1/4 each) and the herald's measurement record is 1; otherwise nothing happens and
the record is 0. The herald records are read by detectors tagged ``herald``
(``DETECTOR[herald] rec[-k]``; in the detector error model ``detector[herald] D5``,
:func:`herald_detectors` lists them), so a decoder sees which erasures happened (where in time it
can be told) as detection events of their own. stim derives a detector error model from heralded
noise only with ``approximate_disjoint_errors=True`` (:func:`qdecode.problem.decoding_dem` passes it).

Because herald records are new measurement records, every later ``rec[-k]`` target of the circuit
(``DETECTOR``, ``OBSERVABLE_INCLUDE``, classically controlled gates such as ``CX rec[-1] 0``) is
rewritten: each is turned into the absolute index of the original record it names and written back
as an offset from the end of the new record list, so every original detector and observable keeps
its meaning (and stays deterministic).

The three models (:func:`add_heralded_noise` applies them in this order):

* **Erasure conversion**, fraction ``F`` in [0, 1] (Wu, Kolkowitz, Puri, Thompson, "Erasure
  conversion for fault-tolerant quantum computing in alkaline earth Rydberg atom arrays",
  Nat. Commun. 13, 4657 (2022), arXiv:2201.03540): a fraction ``F`` of each two-qubit gate's
  depolarizing error becomes a heralded erasure. Every ``DEPOLARIZE2(p) a b ...`` becomes
  ``DEPOLARIZE2((1 - F) p)`` on the same pairs (omitted when ``(1 - F) p = 0``) followed by
  ``HERALDED_ERASE(F p / 2)`` on every qubit of those pairs, each erased independently with
  ``F p / 2`` (so an erasure hits a gate with probability ``1 - (1 - F p / 2)^2``, about ``F p``),
  followed at once by one ``DETECTOR[herald]`` per herald record. ``F = 0`` returns the circuit
  unchanged.
* **Leakage**, probability ``P`` per qubit per two-qubit gate: after every unitary two-qubit gate
  (``CX``, ``CZ``, ``SWAP``, ...; pairs with a classical control bit are skipped)
  ``HERALDED_ERASE(P)`` on both qubits, modelling a leak at that gate as an erasure. A leak is not
  seen when it happens: the herald records of a qubit are collected into an open group, and a group
  is closed by one ``DETECTOR[herald]`` over all its records (their XOR; for rare events XOR is
  about OR: "this qubit leaked at one of these gates"). For leakage a group is closed (1) when its
  qubit is measured or reset (``M``, ``MR``, ``MX``, ``MPP``, ``R``, ...; herald instructions and
  ``MPAD`` measure no qubit), and (2) whenever any measurement instruction acts, for every qubit with
  an open group, placed right after that instruction: a leakage-reduction unit after every
  syndrome-measurement layer returns leaked data qubits and heralds their leakage once per round.
* **Atom loss**, probability ``P`` per qubit per two-qubit gate: the same erasures, but a group is
  closed only by rule (1), when its qubit is measured or reset: an ancilla measured every round
  heralds its loss at its next measurement, a data qubit (measured only at the end) only at the
  final readout, one ``DETECTOR[herald]`` over all its gates since its preparation.

Groups still open at the end of the circuit are closed there. In both leakage and loss a leaked or
lost qubit receives a random Pauli once and does not spread errors through later gates (stim has
no leakage or loss state): the models capture the heralding, not the spreading, of these errors.

Herald detectors get coordinates ``(x, y, t)`` when the circuit's detectors carry at least three
coordinates (``x, y, t, ...``) and the erased qubit has two ``QUBIT_COORDS``: the qubit's
position and ``t`` one more than the time coordinate of the last detector declared before the
herald detector (0 before the first), i.e. the round the erasure is heralded in; otherwise none.

>>> import stim
>>> c = stim.Circuit("R 0 1\\nCX 0 1\\nDEPOLARIZE2(0.01) 0 1\\nM 0 1\\nDETECTOR rec[-1]\\nDETECTOR rec[-2]")
>>> print(erasure_convert(c, 0.5))
R 0 1
CX 0 1
DEPOLARIZE2(0.005) 0 1
HERALDED_ERASE(0.0025) 0 1
DETECTOR[herald] rec[-2]
DETECTOR[herald] rec[-1]
M 0 1
DETECTOR rec[-1]
DETECTOR rec[-2]
"""

from __future__ import annotations

from typing import Any, Iterable

from qdecode.errors import InputError
from qdecode.heralds import HERALD_TAG
from qdecode.heralds import herald_detectors as dem_herald_detectors

__all__ = [
    "add_heralded_noise",
    "add_leakage",
    "add_loss",
    "check_erasure_fraction",
    "check_heralded_rate",
    "erasure_convert",
    "herald_detectors",
    "herald_probability",
]

#: Instructions whose records are not measurements of a qubit (heralds; MPAD's targets are the bits it pads).
_NOT_MEASUREMENTS = frozenset({"HERALDED_ERASE", "HERALDED_PAULI_CHANNEL_1", "MPAD"})


def check_erasure_fraction(value: Any, name: str = "erasure_fraction") -> float:
    """``value`` as a float in [0, 1], else :class:`~qdecode.errors.InputError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"{name} must lie in [0, 1], got {value!r}")
    return float(value)


def check_heralded_rate(value: Any, name: str) -> float:
    """``value`` (a leakage or loss probability) as a float in [0, 1), else :class:`InputError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise InputError(f"{name} must lie in [0, 1), got {value!r}")
    return float(value)


class _Rewriter:
    """The rewritten circuit under construction, with the record bookkeeping of the walk.

    ``new_index[i]``: the index in the new circuit of the original circuit's record ``i``;
    ``count``: records in the new circuit so far. Coordinates as the module docstring says.
    """

    def __init__(self, flat: Any):
        import stim

        self.out = stim.Circuit()
        self.new_index: list[int] = []
        self.count = 0
        self.qubit_coords: dict[int, list[float]] = {}
        self.last_t: float | None = None
        self.with_coords = any(inst.name == "DETECTOR" and len(inst.gate_args_copy()) >= 3 for inst in flat)

    def copy(self, inst: Any) -> None:
        """Append an original instruction, its ``rec`` targets re-pointed at the same original records."""
        import stim

        targets = inst.targets_copy()
        if any(t.is_measurement_record_target for t in targets):
            old = len(self.new_index)
            targets = [stim.target_rec(self.new_index[old + t.value] - self.count)
                       if t.is_measurement_record_target else t for t in targets]
            inst = stim.CircuitInstruction(inst.name, targets, inst.gate_args_copy(), tag=inst.tag)
        if inst.name == "QUBIT_COORDS":
            for t in targets:
                self.qubit_coords[t.value] = inst.gate_args_copy()
        elif inst.name == "DETECTOR" and inst.tag != HERALD_TAG and len(inst.gate_args_copy()) >= 3:
            self.last_t = inst.gate_args_copy()[2]  # an earlier pass's herald detectors do not move the clock
        self.out.append(inst)
        n = inst.num_measurements
        self.new_index.extend(range(self.count, self.count + n))
        self.count += n

    def append_new(self, name: str, targets: list[int], args: list[float], tag: str = "") -> None:
        """Append an instruction of the pass that reads no record (its records, if any, are counted by the caller)."""
        import stim

        self.out.append(stim.CircuitInstruction(name, targets, args, tag=tag))

    def erase(self, qubits: list[int], p: float) -> list[int]:
        """``HERALDED_ERASE(p)`` on ``qubits``; the new indices of their herald records, in order."""
        self.append_new("HERALDED_ERASE", qubits, [p])
        first = self.count
        self.count += len(qubits)
        return list(range(first, self.count))

    def herald_detector(self, records: Iterable[int], qubit: int) -> None:
        """``DETECTOR[herald]`` over the new records ``records`` (their XOR), at ``qubit``'s coordinates."""
        import stim

        coords: list[float] = []
        xy = self.qubit_coords.get(qubit)
        if self.with_coords and xy is not None and len(xy) == 2:
            coords = [*xy, 0.0 if self.last_t is None else self.last_t + 1]
        targets = [stim.target_rec(r - self.count) for r in sorted(records)]
        self.out.append(stim.CircuitInstruction("DETECTOR", targets, coords, tag=HERALD_TAG))


def erasure_convert(circuit: Any, fraction: float) -> Any:
    """``circuit`` with a fraction ``fraction`` of every ``DEPOLARIZE2`` converted into heralded erasures.

    ``DEPOLARIZE2(p)`` -> ``DEPOLARIZE2((1 - F) p)`` (omitted when 0), ``HERALDED_ERASE(F p / 2)`` on
    every qubit of its pairs and one ``DETECTOR[herald]`` per herald record (module docstring; Wu et
    al., arXiv:2201.03540). The circuit comes back flattened; ``fraction = 0`` returns a copy of it
    unchanged. :class:`InputError` for a fraction outside [0, 1].
    """
    fraction = check_erasure_fraction(fraction)
    if fraction == 0:
        return circuit.copy()
    flat = circuit.flattened()
    w = _Rewriter(flat)
    for inst in flat:
        if inst.name != "DEPOLARIZE2":
            w.copy(inst)
            continue
        p = inst.gate_args_copy()[0]
        qubits = [t.value for t in inst.targets_copy()]
        if (1 - fraction) * p > 0:
            w.append_new("DEPOLARIZE2", qubits, [(1 - fraction) * p], inst.tag)
        if fraction * p > 0:
            for q, record in zip(qubits, w.erase(qubits, fraction * p / 2)):
                w.herald_detector([record], q)
    return w.out


def _gate_pairs(inst: Any) -> list[int]:
    """The qubits of a unitary two-qubit gate's pairs whose both targets are qubits (in target order)."""
    targets = inst.targets_copy()
    out: list[int] = []
    for a, b in zip(targets[::2], targets[1::2]):
        if a.is_qubit_target and b.is_qubit_target:
            out += [a.value, b.value]
    return out


def _heralded_gate_errors(circuit: Any, p: float, per_round: bool) -> Any:
    """The leakage (``per_round``) or loss pass: erasures after two-qubit gates, heralded in groups.

    After every unitary two-qubit gate, ``HERALDED_ERASE(p)`` on its qubits; each qubit's herald
    records wait in an open group, closed by one ``DETECTOR[herald]`` over them when the qubit is
    measured or reset and, with ``per_round``, for every qubit whenever any measurement happens;
    open groups are closed at the end (module docstring).
    """
    import stim

    flat = circuit.flattened()
    w = _Rewriter(flat)
    groups: dict[int, list[int]] = {}

    def close(qubits: Iterable[int]) -> None:
        for q in qubits:
            if groups.get(q):
                w.herald_detector(groups.pop(q), q)

    for inst in flat:
        w.copy(inst)
        data = stim.gate_data(inst.name)
        if data.is_unitary and data.is_two_qubit_gate:
            qubits = _gate_pairs(inst)
            if qubits:
                for q, record in zip(qubits, w.erase(qubits, p)):
                    groups.setdefault(q, []).append(record)
            continue
        measured = data.produces_measurements and inst.name not in _NOT_MEASUREMENTS
        if measured or data.is_reset:
            ended = [t.qubit_value for t in inst.targets_copy() if t.qubit_value is not None]  # MPP's Paulis too
            close(dict.fromkeys(ended))
            if measured and per_round:
                close(sorted(groups))
    close(sorted(groups))
    return w.out


def add_leakage(circuit: Any, p: float) -> Any:
    """``circuit`` with leakage ``p`` per qubit per two-qubit gate, heralded once per measurement layer.

    Erasures after every two-qubit gate; a qubit's heralds since its last herald detector are read
    by one ``DETECTOR[herald]`` at its next measurement or reset, or at any earlier measurement of
    another qubit (a leakage-reduction unit after every syndrome round); module docstring.
    """
    p = check_heralded_rate(p, "leakage")
    return circuit.copy() if p == 0 else _heralded_gate_errors(circuit, p, per_round=True)


def add_loss(circuit: Any, p: float) -> Any:
    """``circuit`` with atom loss ``p`` per qubit per two-qubit gate, heralded at the qubit's next measurement.

    Erasures after every two-qubit gate; a qubit's heralds since its last measurement or reset are
    read by one ``DETECTOR[herald]`` at its next measurement or reset (a data qubit: the final
    readout); module docstring.
    """
    p = check_heralded_rate(p, "loss")
    return circuit.copy() if p == 0 else _heralded_gate_errors(circuit, p, per_round=False)


def herald_detectors(model: Any) -> list[int]:
    """Indices of the herald detectors (tag ``herald``) of a ``stim.Circuit`` or ``stim.DetectorErrorModel``."""
    import stim

    if isinstance(model, stim.DetectorErrorModel):
        return dem_herald_detectors(model).tolist()
    detectors = [inst.tag == HERALD_TAG for inst in model.flattened() if inst.name == "DETECTOR"]
    return [i for i, herald in enumerate(detectors) if herald]


def add_heralded_noise(circuit: Any, *, erasure_fraction: float = 0.0, leakage: float = 0.0,
                       loss: float = 0.0) -> Any:
    """``circuit`` with erasure conversion, leakage and atom loss, in that order (module docstring).

    All zero returns ``circuit`` itself. A non-zero option that finds nothing to act on (no
    ``DEPOLARIZE2`` to convert, no two-qubit gate to leak or lose at) is an :class:`InputError`,
    not a silently unchanged circuit.
    """
    erasure_fraction = check_erasure_fraction(erasure_fraction)
    leakage = check_heralded_rate(leakage, "leakage")
    loss = check_heralded_rate(loss, "loss")
    if not (erasure_fraction or leakage or loss):
        return circuit
    flat = circuit.flattened()
    if erasure_fraction and not any(inst.name == "DEPOLARIZE2" and inst.gate_args_copy()[0] > 0 for inst in flat):
        raise InputError(f"erasure fraction {erasure_fraction:g}: the circuit has no two-qubit depolarizing "
                         f"noise (DEPOLARIZE2) to convert into erasures")
    if (leakage or loss) and not any(_is_two_qubit_unitary(inst.name) and _gate_pairs(inst) for inst in flat):
        raise InputError(f"{'leakage' if leakage else 'loss'} {leakage or loss:g}: the circuit has no two-qubit "
                         f"gate to leak or lose a qubit at")
    if erasure_fraction:
        circuit = erasure_convert(circuit, erasure_fraction)
    if leakage:
        circuit = add_leakage(circuit, leakage)
    if loss:
        circuit = add_loss(circuit, loss)
    return circuit


def _is_two_qubit_unitary(name: str) -> bool:
    import stim

    data = stim.gate_data(name)
    return data.is_unitary and data.is_two_qubit_gate


def herald_probability(records: int, p: float) -> float:
    """Probability that a herald detector over ``records`` independent ``HERALDED_ERASE(p)`` fires (odd count)."""
    return (1 - (1 - 2 * p) ** records) / 2
