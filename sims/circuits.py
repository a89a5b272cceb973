"""Memory-experiment circuits for the catalogue codes.

``build_circuit(code, d=, rounds=, noise=, p=, basis=)`` returns a ``stim.Circuit``:

* ``surface``: stim's ``surface_code:rotated_memory_{x,z}`` generator with
  ``sd6`` / ``phenomenological`` / ``code-capacity`` parameters, or a noiseless
  generated circuit rewritten to CZ form and noised with SI1000 (``si1000``).
* BB codes: :func:`bb_memory_circuit`, the depth-8 syndrome cycle of Bravyi et al.
  (Nature 627, 778 (2024)) with the ``bb-uniform`` noise of
  :mod:`qdecode.sims.noise`, or a ``code-capacity`` circuit.
* ``color``: the superdense circuit of :mod:`qdecode.sims.color_circuit` (Gidney & Jones,
  arXiv:2312.08813) with ``sd6`` / ``si1000`` / ``phenomenological`` noise, or ``code-capacity``;
  its detectors carry a 4th coordinate, basis and colour, for Chromobius.
* any other CSS family, or any CSS code with ``schedule=`` given: the coloration circuit of
  :func:`qdecode.sims.css_circuit.css_memory_circuit` (arXiv:2109.14609) with ``sd6``, ``si1000``,
  ``bb-uniform`` or ``phenomenological`` noise, or a ``code-capacity`` circuit.

With ``memory_basis_only`` (the default for BB codes) only the detectors of the
memory basis are kept (Z checks for a Z-basis memory), which makes the X and Z
decoding problems independent ("XZ decoding"). Surface-code circuits keep both
bases by default (stim's standard generated circuit).

Detector coordinates are ``(x, y, t)``: the check's position and its round
(final data-readout detectors get ``t = rounds``); colour-code detectors add ``c + 3 [Z]``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from qdecode.errors import InputError

from .color_circuit import COLOR_NOISE, XYZ_NOISE, color_memory_circuit, xyz_memory_circuit
from .css_circuit import CSS_NOISE, SCHEDULES, SX_ORDER, SZ_ORDER, css_memory_circuit
from .noise import (
    NOISE_MODELS,
    bb_uniform_rules,
    check_basis,
    check_p,
    check_positive_int,
    insert_noise,
    si1000_rules,
    to_cz_circuit,
)

__all__ = [
    "build_circuit",
    "circuit_metadata",
    "bb_memory_circuit",
    "bb_code_capacity_circuit",
    "keep_detectors_of_basis",
    "detector_bases",
    "SUPPORTED_NOISE",
]

#: Noise models each code family supports.
SUPPORTED_NOISE: dict[str, tuple[str, ...]] = {
    "surface": ("sd6", "si1000", "phenomenological", "code-capacity"),
    "bb": ("bb-uniform", "code-capacity"),
    "color": COLOR_NOISE,
}
#: Noise models of the coloration circuits (families without a dedicated circuit, or ``schedule=``).
COLORATION_NOISE: tuple[str, ...] = (*CSS_NOISE, "code-capacity")



# ------------------------------------------------------------------ validation
def _basis(basis: Any, family: str = "") -> str:
    b = str(basis).upper()
    if b == "XYZ":
        if family == "color":
            return b
        raise InputError(f"basis must be 'X' or 'Z' ('XYZ' for the colour code), got basis={basis!r}")
    return check_basis(basis)


def _resolve(code: str, d: Any, rounds: Any, noise: str, p: Any, basis: Any, schedule: Any = None) -> dict[str, Any]:
    """Validate arguments and resolve defaults; returns the metadata dict."""
    from qdecode.codes.catalog import get_entry

    entry = get_entry(code)  # UnknownCodeError lists the names
    if not entry.kind.startswith("quantum"):
        raise InputError(
            f"code {code!r} is a {entry.kind} code: it has no memory-experiment circuit; sweep it over a "
            f"channel instead (qdecode sweep --code {code} --noise awgn --ebn0 ...)"
        )
    family = entry.family
    if schedule is not None and schedule not in SCHEDULES:
        raise InputError(f"unknown schedule {schedule!r}; valid names: {', '.join(SCHEDULES)}")
    if schedule is None and family not in SUPPORTED_NOISE:
        schedule = "coloration"  # no dedicated circuit: the generic one
    supported = COLORATION_NOISE if schedule is not None else SUPPORTED_NOISE[family]
    if noise not in NOISE_MODELS:
        from .classical_points import CHANNELS

        if noise in CHANNELS:
            raise InputError(f"{noise!r} is a channel for classical codes, not a circuit noise model; "
                             f"code {code!r} takes one of: {', '.join(supported)}")
        raise InputError(f"unknown noise model {noise!r}; valid names: {', '.join(NOISE_MODELS)}")
    if noise not in supported:
        hint = " (or schedule='coloration' for the generic circuit)" if noise in COLORATION_NOISE else ""
        raise InputError(
            f"noise model {noise!r} is not available for code {code!r}; use one of: {', '.join(supported)}{hint}"
        )
    pf = check_p(p)
    b = _basis(basis, family if schedule is None else "")
    if b == "XYZ" and noise not in XYZ_NOISE:
        raise InputError(f"noise model {noise!r} is not available for the XYZ colour-code circuit; use one of: "
                         f"{', '.join(XYZ_NOISE)}")
    if entry.parametrised:
        if d is None:
            raise InputError(f"code {code!r} needs a distance: pass d (e.g. d=5)")
        dv = check_positive_int(d, "d")
        if dv < 2:
            raise InputError(f"d must be >= 2 for code {code!r}, got d={d!r}")
    elif entry.d is None:  # no known distance (e.g. a user's bb[...] spec without d)
        if d is not None:
            raise InputError(f"code {code!r} has no known distance, so d={d!r} cannot be checked; leave d out "
                             f"(or state it in the spec, bb[...,d=N])")
        dv = None
    else:
        if d is not None and int(d) != entry.d:
            raise InputError(f"code {code!r} has fixed distance {entry.d}; got d={d!r}")
        dv = int(entry.d)
    if noise == "code-capacity":
        r = 1
    elif rounds is None:
        if dv is None:
            raise InputError(f"code {code!r} has no known distance, so rounds has no default: "
                             f"pass rounds (e.g. --rounds 6)")
        r = dv
    else:
        r = check_positive_int(rounds, "rounds")
    if noise == "code-capacity":
        schedule = None  # no syndrome-extraction circuit
    meta = {"code": code, "family": family, "d": dv, "rounds": r, "noise": noise, "p": pf, "basis": b}
    if schedule is not None:  # only then: the metadata (and so the strong ids) of dedicated circuits is unchanged
        meta["schedule"] = schedule
    return meta


def default_memory_basis_only(family: str) -> bool:
    """Whether a family's circuits keep only the memory basis's detectors by default: not for the
    surface code (stim's standard circuit) and the colour code (Chromobius decodes both bases)."""
    return family not in ("surface", "color")


def circuit_metadata(
    code: str,
    *,
    d: int | None = None,
    rounds: int | None = None,
    noise: str,
    p: float,
    basis: str = "Z",
    memory_basis_only: bool | None = None,
    schedule: str | None = None,
) -> dict[str, Any]:
    """The resolved parameters of :func:`build_circuit` (for sinter ``json_metadata``).

    Returns:
        dict with ``code, family, n, k, d, rounds, noise, p, basis, memory_basis_only, schedule``.
        ``rounds`` is the effective number (1 for ``code-capacity``, ``d`` by default);
        ``schedule`` (the coloration schedule used) only for coloration circuits, so that the
        metadata of the dedicated circuits, and the strong ids of results recorded with them, stay
        as they were.

    Raises:
        ValueError: same conditions as :func:`build_circuit`.
    """
    from qdecode.codes.catalog import get_entry

    meta = _resolve(code, d, rounds, noise, p, basis, schedule)
    entry = get_entry(code)
    meta["n"] = entry.n_at(meta["d"])  # d^2 (surface), 2d^2 (toric), ...
    meta["k"] = entry.k
    meta["memory_basis_only"] = (default_memory_basis_only(meta["family"]) if memory_basis_only is None
                                 else bool(memory_basis_only))
    return meta


def build_circuit(
    code: str,
    *,
    d: int | None = None,
    rounds: int | None = None,
    noise: str,
    p: float,
    basis: str = "Z",
    memory_basis_only: bool | None = None,
    schedule: str | None = None,
) -> Any:
    """Build a noisy memory-experiment circuit.

    Args:
        code: catalogue name (``surface``, ``bb72_12_6``, ...).
        d: distance; required for ``surface``, optional (must match) for fixed codes.
        rounds: syndrome rounds; defaults to ``d``; forced to 1 for ``code-capacity``.
        noise: ``sd6``, ``si1000``, ``phenomenological``, ``code-capacity`` (surface),
            ``bb-uniform``, ``code-capacity`` (BB codes), or any of
            :data:`COLORATION_NOISE` for a coloration circuit.
        p: physical error rate in (0, 1).
        basis: memory basis ``"Z"`` or ``"X"``; ``"XYZ"`` for the colour code: stim's
            ``color_code:memory_xyz`` circuit (:func:`~qdecode.sims.color_circuit.xyz_memory_circuit`).
        memory_basis_only: keep only the memory basis's detectors. ``None`` takes the
            family default (:func:`default_memory_basis_only`): stim's standard circuit
            with both bases for the surface code (what sinter users sample, and what
            correlated matching needs), memory basis only for BB codes (IBM's "XZ
            decoding" DEMs).
        schedule: ``None`` for the family's dedicated circuit (the coloration circuit for
            families without one), or a :data:`qdecode.sims.css_circuit.SCHEDULES` name
            (``"coloration"``, ``"coloration-interleaved"``) for the coloration circuit of
            any CSS code. Ignored for ``code-capacity``.

    Returns:
        ``stim.Circuit`` with detectors (coordinates ``(x, y, t)``) and ``k`` observables.

    Raises:
        ValueError: unknown code (also a ``KeyError``) or noise, ``p`` outside (0, 1),
            ``d`` missing for ``surface``, unsupported code/noise combination, bad basis,
            unknown schedule.
    """
    import stim

    meta = _resolve(code, d, rounds, noise, p, basis, schedule)
    b, r, pf, nz = meta["basis"], meta["rounds"], meta["p"], meta["noise"]
    if memory_basis_only is None:
        memory_basis_only = default_memory_basis_only(meta["family"])
    if meta["family"] == "surface" and meta.get("schedule") is None:
        circ = _surface_circuit(meta["d"], r, nz, pf, b, memory_basis_only)
        memory_basis_only = False  # already filtered (before any CZ rewrite)
    elif meta["family"] == "color" and b == "XYZ":
        return xyz_memory_circuit(meta["d"], rounds=r, noise=nz, p=pf)
    elif meta["family"] == "color" and meta.get("schedule") is None:
        return color_memory_circuit(meta["d"], rounds=r, basis=b, noise=nz, p=pf,
                                    memory_basis_only=memory_basis_only)
    else:
        from qdecode.codes.catalog import get_code, get_entry

        css = get_code(code, meta["d"]) if get_entry(code).parametrised else get_code(code)
        if meta.get("schedule") is not None:
            return css_memory_circuit(css, rounds=r, noise=nz, p=pf, basis=b, schedule=meta["schedule"],
                                      memory_basis_only=memory_basis_only)
        if nz == "code-capacity":
            circ = bb_code_capacity_circuit(css, p=pf, basis=b, memory_basis_only=memory_basis_only)
            return circ
        circ = bb_memory_circuit(css, rounds=r, basis=b)
        circ = insert_noise(circ, bb_uniform_rules(pf))
    if memory_basis_only:
        circ = keep_detectors_of_basis(circ, b)
    assert isinstance(circ, stim.Circuit)
    return circ


# ------------------------------------------------------------------- surface
def _surface_circuit(d: int, rounds: int, noise: str, p: float, basis: str, memory_basis_only: bool) -> Any:
    import stim

    task = f"surface_code:rotated_memory_{basis.lower()}"
    if noise == "sd6":
        kw = dict(after_clifford_depolarization=p, before_round_data_depolarization=p,
                  before_measure_flip_probability=p, after_reset_flip_probability=p)
    elif noise == "phenomenological":
        kw = dict(before_round_data_depolarization=p, before_measure_flip_probability=p)
    elif noise == "code-capacity":
        kw = dict(before_round_data_depolarization=p)
    elif noise == "si1000":
        noiseless = stim.Circuit.generated(task, distance=d, rounds=rounds)
        if memory_basis_only:  # classify on the CX circuit, where H marks X-type readout
            noiseless = keep_detectors_of_basis(noiseless, basis)
        return insert_noise(to_cz_circuit(noiseless), si1000_rules(p))
    else:  # pragma: no cover - filtered by _resolve
        raise InputError(f"noise {noise!r} not available for the surface code")
    circ = stim.Circuit.generated(task, distance=d, rounds=rounds, **kw)
    return keep_detectors_of_basis(circ, basis) if memory_basis_only else circ


# ------------------------------------------------------------ detector bases
def detector_bases(circuit: Any) -> list[str]:
    """Basis (``"X"``, ``"Y"``, ``"Z"`` or ``"mixed"``) of every detector.

    Each measurement result gets an *effective* basis: the measured Pauli (``M`` /
    ``MR`` -> Z, ``MX`` / ``MRX`` -> X, ``MY`` / ``MRY`` -> Y) pulled back through the
    single-qubit Cliffords applied to that qubit since its last reset or
    multi-qubit gate. So an X-check ancilla read out as ``H; M`` (stim's surface-code
    circuits) counts as X. A detector gets the common basis of its records, or
    ``"mixed"`` when they differ (or come from ``MPP`` / pair measurements).

    Args:
        circuit: a ``stim.Circuit`` (flattened internally).

    Returns:
        One label per detector, in detector order.
    """
    import stim

    frames: dict[int, Any] = {}  # qubit -> accumulated 1q Clifford tableau since last entangler/reset
    meas_basis: list[str] = []
    out: list[str] = []
    single = {"M": "Z", "MR": "Z", "MX": "X", "MRX": "X", "MY": "Y", "MRY": "Y"}
    resets = {"R", "RX", "RY"}

    def pulled_back(q: int, pauli: str) -> str:
        frame = frames.get(q)
        if frame is None:
            return pauli
        ps = frame.inverse()(stim.PauliString(pauli))
        return "_XYZ"[ps[0]]

    for inst in circuit.flattened():
        name = inst.name
        targets = inst.targets_copy()
        if name == "DETECTOR":
            n = len(meas_basis)
            kinds = {meas_basis[n + t.value] for t in targets if t.is_measurement_record_target}
            out.append(kinds.pop() if len(kinds) == 1 else "mixed")
            continue
        if name in single:
            for t in targets:
                meas_basis.append(pulled_back(t.value, single[name]))
                if name.startswith("MR"):
                    frames.pop(t.value, None)
            continue
        data = stim.gate_data(name)
        if data.produces_measurements:  # MPP, MXX, heralded noise, ...
            before = stim.Circuit()
            before.append(inst)
            meas_basis.extend("mixed" for _ in range(before.num_measurements))
            for t in targets:
                if t.is_qubit_target:
                    frames.pop(t.value, None)
            continue
        if name in resets:
            for t in targets:
                frames.pop(t.value, None)
        elif data.is_unitary and data.is_single_qubit_gate:
            tab = stim.Tableau.from_named_gate(name)
            for t in targets:
                q = t.value
                frames[q] = tab * frames[q] if q in frames else tab
        elif data.is_unitary and data.is_two_qubit_gate:
            for t in targets:
                if t.is_qubit_target:
                    frames.pop(t.value, None)
    return out


def keep_detectors_of_basis(circuit: Any, basis: str) -> Any:
    """Copy of ``circuit`` (flattened) keeping only the detectors of one basis.

    The basis of a detector is decided by :func:`detector_bases`. Measurements,
    noise and observables are unchanged, so the detector error model is the
    original one restricted to the kept detectors.

    Args:
        circuit: ``stim.Circuit``.
        basis: ``"X"`` or ``"Z"``.
    """
    import stim

    b = _basis(basis)
    kinds = detector_bases(circuit)
    out = stim.Circuit()
    k = 0
    for inst in circuit.flattened():
        if inst.name == "DETECTOR":
            if kinds[k] == b:
                out.append(inst)
            k += 1
        else:
            out.append(inst)
    return out


# ------------------------------------------------------------------------ BB
def _bb_neighbours(spec: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(nx, nz)``: ``(lm, 6)`` data-qubit neighbours of every X and Z check.

    X check ``i``: columns 0-2 are left data via A1, A2, A3 (``A_k[i, j] = 1``),
    3-5 right data via B1, B2, B3. Z check ``i``: 0-2 left data via B1^T..B3^T,
    3-5 right data via A1^T..A3^T. Data qubit indices: left ``j``, right ``lm + j``.
    """
    h = spec.half
    nx = np.zeros((h, 6), dtype=np.int64)
    nz = np.zeros((h, 6), dtype=np.int64)
    for k in range(3):
        nx[:, k] = np.argmax(spec.A[k], axis=1)
        nx[:, 3 + k] = h + np.argmax(spec.B[k], axis=1)
        nz[:, k] = np.argmax(spec.B[k].T, axis=1)
        nz[:, 3 + k] = h + np.argmax(spec.A[k].T, axis=1)
    return nx, nz


def _bb_coords(spec: Any) -> dict[str, list[tuple[int, int]]]:
    """Planar coordinates on the 2l x 2m torus: L (2a, 2b), R (2a+1, 2b+1), X (2a, 2b+1), Z (2a+1, 2b)."""
    idx = [(a, b) for a in range(spec.l) for b in range(spec.m)]
    return {
        "L": [(2 * a, 2 * b) for a, b in idx],
        "R": [(2 * a + 1, 2 * b + 1) for a, b in idx],
        "X": [(2 * a, 2 * b + 1) for a, b in idx],
        "Z": [(2 * a + 1, 2 * b) for a, b in idx],
    }


class _BBCycle(NamedTuple):
    """A BB cycle's qubits (int64 indices), CX layers L1..L7 as (targets, idle data), first-cycle data resets."""

    data: np.ndarray
    xq: np.ndarray
    zq: np.ndarray
    layers: list[tuple[list[int], np.ndarray]]
    first_used: np.ndarray
    late: np.ndarray
    data_reset: str


def _bb_cycle(spec: Any, basis: str, sx: Sequence[Any], sz: Sequence[Any]) -> _BBCycle:
    """The qubits and CX layers of the depth-8 cycle of schedules ``sx``, ``sz`` (checked: no idle data in L2..L6)."""
    h = spec.half
    nx, nzb = _bb_neighbours(spec)
    data = np.arange(2 * h)
    xq = 2 * h + np.arange(h)
    zq = 3 * h + np.arange(h)
    first_used = np.unique(nzb[:, sz[0]])  # data touched by the Z checks in L1

    def cx_layer(t: int) -> tuple[list[int], np.ndarray]:
        """CX targets of layer t and the data qubits it leaves idle."""
        targets: list[int] = []
        used: list[np.ndarray] = []
        if sx[t] != "idle":
            targets += np.column_stack([xq, nx[:, sx[t]]]).ravel().tolist()
            used.append(nx[:, sx[t]])
        if sz[t] != "idle":
            targets += np.column_stack([nzb[:, sz[t]], zq]).ravel().tolist()
            used.append(nzb[:, sz[t]])
        idle = np.setdiff1d(data, np.concatenate(used)) if used else data
        return targets, idle

    layers = [cx_layer(t) for t in range(7)]
    for t in range(1, 6):
        if layers[t][1].size:
            raise InputError(f"schedule leaves data qubits idle in CX layer {t + 1}; not a valid depth-8 cycle")
    return _BBCycle(data, xq, zq, layers, first_used, np.setdiff1d(data, first_used), "R" if basis == "Z" else "RX")


def _bb_qubit_coords(c: Any, coords: dict[str, list[tuple[int, int]]], h: int) -> None:
    """Append the ``QUBIT_COORDS`` of the left and right data, then the X and Z checks (``h`` = lm of each)."""
    for k, kind in enumerate("LRXZ"):
        for j in range(h):
            c.append("QUBIT_COORDS", [k * h + j], coords[kind][j])


def _bb_gate_moments(c: Any, cyc: _BBCycle, first: bool, last: bool) -> None:
    """Append one cycle's moments up to L7's CX gates (with L0 before the first cycle)."""
    # L0 (first cycle only): reset the data used in L1 and the Z checks.
    if first:
        c.append(cyc.data_reset, cyc.first_used.tolist())
        c.append("R", cyc.zq.tolist())
        c.append("TICK")
    # L1: X checks prepared; Z checks start; the other data wait (or are reset in cycle 0).
    c.append("RX", cyc.xq.tolist())
    if first:
        if cyc.late.size:
            c.append(cyc.data_reset, cyc.late.tolist())
    elif cyc.layers[0][1].size:
        c.append("I", cyc.layers[0][1].tolist())
    c.append("CX", cyc.layers[0][0])
    c.append("TICK")
    # L2..L6
    for t in range(1, 6):
        if last and t == 5:
            # IBM's circuits put the last cycle's L7 idle noise (Z checks and the
            # data idle in L7) before the L6 gates; reproduce that placement.
            c.append("I", np.concatenate([cyc.zq, cyc.layers[6][1]]).tolist())
        c.append("CX", cyc.layers[t][0])
        c.append("TICK")
    c.append("CX", cyc.layers[6][0])


def _bb_check_readout(c: Any, cyc: _BBCycle, last: bool, nmeas: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Append L7's and L8's check readout; return the Z / X record indices ((lm,) int64) and the new count."""
    h = cyc.zq.size
    # L7: X checks finish; Z checks are measured (except in the last cycle).
    if not last:
        c.append("I", cyc.layers[6][1].tolist())
        c.append("M", cyc.zq.tolist())
    c.append("TICK")
    # L8: X checks measured (and, in the last cycle, the Z checks).
    if last:
        c.append("M", cyc.zq.tolist())
    c.append("MX", cyc.xq.tolist())
    return nmeas + np.arange(h), nmeas + h + np.arange(h), nmeas + 2 * h


def _bb_round_detectors(c: Any, checks: Sequence[tuple[str, np.ndarray, np.ndarray | None, Sequence]], basis: str,
                        r: int, nmeas: int) -> None:
    """Append round ``r``'s detectors; ``checks``: (kind, records, previous round's or None, coordinates)."""
    import stim

    for kind, rec, prev, xy in checks:
        if prev is None and kind != basis:
            continue  # first-round outcomes of the other basis are random
        for i in range(rec.size):
            tg = [stim.target_rec(int(rec[i]) - nmeas)]
            if prev is not None:
                tg.append(stim.target_rec(int(prev[i]) - nmeas))
            c.append("DETECTOR", tg, [xy[i][0], xy[i][1], r])


def _bb_final_detectors(c: Any, code: Any, basis: str, check_rec: np.ndarray, drec: np.ndarray,
                        rounds: int, nmeas: int) -> None:
    """Append the memory-basis checks recomputed from the data records ``drec`` (2lm,), and the observables."""
    import stim

    H = code.hz if basis == "Z" else code.hx
    xy = _bb_coords(code.meta)[basis]
    for i in range(check_rec.size):
        tg = [stim.target_rec(int(drec[j]) - nmeas) for j in np.flatnonzero(H[i])]
        tg.append(stim.target_rec(int(check_rec[i]) - nmeas))
        c.append("DETECTOR", tg, [xy[i][0], xy[i][1], rounds])
    L = code.lz if basis == "Z" else code.lx
    for o in range(L.shape[0]):
        c.append("OBSERVABLE_INCLUDE", [stim.target_rec(int(drec[j]) - nmeas) for j in np.flatnonzero(L[o])], [o])


def bb_memory_circuit(
    code: Any,
    *,
    rounds: int,
    basis: str = "Z",
    sx: Sequence[Any] = SX_ORDER,
    sz: Sequence[Any] = SZ_ORDER,
) -> Any:
    """Noiseless BB memory experiment with Bravyi et al.'s depth-8 syndrome cycle.

    Qubits: left data ``0..lm-1``, right data ``lm..2lm-1``, X checks
    ``2lm..3lm-1``, Z checks ``3lm..4lm-1`` (IBM's numbering). One cycle is eight
    moments (TICK-separated): ``L1``: X checks prepared in ``|+>``, Z checks CX with
    neighbour ``sz[0]``; ``L2..L6``: X checks CX (control) with ``sx[t]``, Z checks CX
    (target) with ``sz[t]``; ``L7``: X checks with ``sx[6]`` while Z checks are
    measured; ``L8``: X checks measured, Z checks reset, data idle. In the first
    cycle the data qubits are reset (in the memory basis) just before their first
    use, and in the last cycle the Z checks are measured in ``L8`` together with the
    X checks and the data, whose readout is tagged ``[noiseless]``. This placement
    reproduces IBM's published circuits exactly once :func:`insert_noise` adds the
    ``bb-uniform`` rules: idle noise on the left data in ``L1`` (not in the first
    cycle), on the right data in ``L7``, on all data in ``L8``, and on the Z checks in
    the last ``L7``.

    Detectors: each check's outcome is compared with the previous round (the
    memory basis's checks also in round 0, against the deterministic value), and
    the memory basis's checks are recomputed from the data readout. Both bases
    are included; use :func:`keep_detectors_of_basis` to drop one.

    Args:
        code: a BB :class:`~qdecode.codes.css.CSSCode` (``meta`` is its ``BBSpec``).
        rounds: number of syndrome cycles (>= 1).
        basis: memory basis ``"Z"`` or ``"X"``; ``"XYZ"`` for the colour code: stim's
            ``color_code:memory_xyz`` circuit (:func:`~qdecode.sims.color_circuit.xyz_memory_circuit`).
        sx, sz: the schedules (7 entries, neighbour index or ``"idle"``).

    Returns:
        Noiseless flat ``stim.Circuit``.
    """
    import stim

    spec = code.meta
    if spec is None or not hasattr(spec, "A"):
        raise InputError(f"bb_memory_circuit needs a BB code (with BBSpec meta), got {code!r}")
    rounds = check_positive_int(rounds, "rounds")
    b = _basis(basis)
    if len(sx) != 7 or len(sz) != 7 or sx[0] != "idle" or sz[6] != "idle":
        raise InputError(f"schedules must have 7 entries with sx[0] = sz[6] = 'idle'; got sx={sx}, sz={sz}")
    cyc = _bb_cycle(spec, b, sx, sz)
    coords = _bb_coords(spec)
    c = stim.Circuit()
    _bb_qubit_coords(c, coords, spec.half)

    nmeas = 0
    prev_z: np.ndarray | None = None
    prev_x: np.ndarray | None = None
    for r in range(rounds):
        last = r == rounds - 1
        _bb_gate_moments(c, cyc, r == 0, last)
        zrec, xrec, nmeas = _bb_check_readout(c, cyc, last, nmeas)
        # L8, continued: all data wait and the Z checks are reset; last cycle: the data are read out.
        if last:
            c.append(stim.CircuitInstruction("M" if b == "Z" else "MX", cyc.data.tolist(), tag="noiseless"))
            drec = nmeas + np.arange(cyc.data.size)
            nmeas += cyc.data.size
        else:
            c.append("I", cyc.data.tolist())
            c.append("R", cyc.zq.tolist())
        # Z checks first, as IBM
        _bb_round_detectors(c, (("Z", zrec, prev_z, coords["Z"]), ("X", xrec, prev_x, coords["X"])), b, r, nmeas)
        prev_z, prev_x = zrec.copy(), xrec.copy()
        if not last:
            c.append("TICK")
    _bb_final_detectors(c, code, b, zrec if b == "Z" else xrec, drec, rounds, nmeas)
    return c


def bb_code_capacity_circuit(code: Any, *, p: float, basis: str = "Z", memory_basis_only: bool = True) -> Any:
    """Code-capacity memory circuit: ``DEPOLARIZE1(p)`` on the data once, perfect syndrome.

    The data are prepared in the memory basis, depolarized, and read out
    noiselessly; the memory basis's detectors are the check parities of the
    readout. With ``memory_basis_only=False`` the other basis's stabilisers are
    also measured (noiselessly, with ``MPP``) before and after the noise and
    compared. Works for any :class:`~qdecode.codes.css.CSSCode`.

    Args:
        code: the CSS code.
        p: depolarizing probability in (0, 1).
        basis: ``"Z"`` or ``"X"``.
        memory_basis_only: only the memory basis's detectors.

    Returns:
        ``stim.Circuit``.
    """
    import stim

    pf = check_p(p)
    b = _basis(basis)
    n = code.n
    data = list(range(n))
    other = "X" if b == "Z" else "Z"
    H_mem = code.hz if b == "Z" else code.hx
    H_oth = code.hx if b == "Z" else code.hz

    def mpp_targets(row: np.ndarray, pauli: str) -> list[Any]:
        qs = np.flatnonzero(row)
        tg: list[Any] = []
        for j, q in enumerate(qs):
            if j:
                tg.append(stim.target_combiner())
            tg.append(stim.target_x(int(q)) if pauli == "X" else stim.target_z(int(q)))
        return tg

    c = stim.Circuit()
    c.append("R" if b == "Z" else "RX", data)
    c.append("TICK")
    m_oth = H_oth.shape[0]
    if not memory_basis_only:
        for row in H_oth:
            c.append("MPP", mpp_targets(row, other))
        c.append("TICK")
    c.append("DEPOLARIZE1", data, [pf])
    c.append("TICK")
    if not memory_basis_only:
        for row in H_oth:
            c.append("MPP", mpp_targets(row, other))
        for i in range(m_oth):
            c.append("DETECTOR", [stim.target_rec(-m_oth + i), stim.target_rec(-2 * m_oth + i)],
                     [i, 1 if other == "X" else 0, 0])
        c.append("TICK")
    c.append("M" if b == "Z" else "MX", data)
    for i, row in enumerate(H_mem):
        c.append("DETECTOR", [stim.target_rec(int(j) - n) for j in np.flatnonzero(row)], [i, 0 if b == "Z" else 1, 1])
    L = code.lz if b == "Z" else code.lx
    for o in range(L.shape[0]):
        c.append("OBSERVABLE_INCLUDE", [stim.target_rec(int(j) - n) for j in np.flatnonzero(L[o])], [o])
    return c
