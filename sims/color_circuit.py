"""Superdense colour-code memory circuits that Chromobius decodes.

The code and its geometry are :mod:`qdecode.codes.color` (``[[(3d^2+1)/4, 1, d]]``, plaquettes
with data at the offsets ``e_0 .. e_5``, colours ``0, 1, 2``).

**Circuit: superdense syndrome extraction** (Gidney & Jones, arXiv:2312.08813). Every plaquette
``P`` has two ancillas ``a``, ``b``, made into a Bell pair (stabilisers ``X_a X_b``, ``Z_a Z_b``) at
the start of the round and read out in the Bell basis at its end::

    RX a; R b                   (MRX a; MR b after the first round)
    CX a b                      Bell pair
    7 data layers               CX a q (a collects X_q), CX q b (b collects Z_q)
    CX a b; MX a -> X_P; M b -> Z_P

``CX a q`` multiplies ``X_q`` into the pair's ``X_a X_b`` and ``CX q b`` multiplies ``Z_q`` into
``Z_a Z_b``; the final ``CX a b`` turns the two products into single-qubit readouts. With these
fixed roles, ``Z_P`` and ``X_P`` push forward through a round to themselves (``a`` X-collects all of
``P``'s qubits, an even number on each edge shared with a neighbour, so the kicked-back ``Z_a``
cancel, and likewise ``X_b``): a round never changes a stabiliser. The readouts are the
stabilisers when, for every neighbour ``P'`` (``P`` included), the number of shared qubits that
``P'`` X-collects before ``P`` Z-collects them is even, and the same with X and Z exchanged.
:data:`SCHEDULE` gives the layer of each plaquette's gate on each offset, the same on every
plaquette. An exhaustive search over all translation-invariant schedules found none with six data
layers and 876 with seven that are valid on the patches d = 3, 5, 7 (boundary plaquettes included). Among
those, :data:`SCHEDULE` was chosen for circuit distance: under ``sd6`` stim's
``search_for_undetectable_logical_errors`` (an upper bound) finds no logical error below weight
``d`` at d = 5 and 7, where 852 of the 876 have one of weight 3 or 4 (hook errors); among the rest
it had the fewest Chromobius failures at d = 5, p = 0.003. :func:`schedule_violations` checks all of this on a
patch by GF(2) propagation. The Bell readout also acts as a flag: a fault on one half spreads to
the data it still has to visit (a hook) and also flips the other readout of the same plaquette.
Qubits per patch: ``n`` data + ``2 (n - 1) / 2`` ancillas ``= 2n - 1``; 9 CX layers per round.

**Detectors** (what Chromobius needs): coordinates ``(x, y, t, c + 3 [Z])`` with ``c`` the
plaquette colour and ``[Z] = 1`` for a Z-type stabiliser: Chromobius' basis-and-colour
annotation (``0, 1, 2`` = red, green, blue X; ``3, 4, 5`` = Z). Round 0 compares the memory
basis's plaquettes with their deterministic value (the data are reset in that basis); round
``r > 0`` compares both bases with round ``r - 1``; the final detectors recompute the memory
basis's plaquettes from the data readout (``t = rounds``). Observable 0: the data readout on the
bottom row.

**Why not stim's circuit.** ``stim.Circuit.generated("color_code:memory_xyz")`` measures each
plaquette once per round in a rotating X/Y/Z frame; its detectors have three coordinates and,
once annotated, its DEM with two-qubit gate noise is not decodable by Chromobius at ``d >= 5``
(errors that do not decompose into Chromobius' basic errors). The superdense circuit has CSS
detectors of fixed basis and colour, which is the structure Chromobius is built for.

**Noise** (the models of :mod:`qdecode.sims.noise`, as for the project's other circuits):

* ``si1000``: rewritten to CZ form (:func:`~qdecode.sims.noise.to_cz_circuit`) and noised by
  :func:`~qdecode.sims.noise.si1000_rules` (idles inferred, including the data during the
  measure/reset moment);
* ``sd6``: uniform depolarizing as stim's generated circuits: ``DEPOLARIZE2(p)`` after every CX,
  ``DEPOLARIZE1(p)`` on the data at the start of every round, reset and measurement flips ``p``;
* ``bb-uniform``: uniform depolarizing with idles (Bravyi et al.'s model, and the "uniform" model of
  Gidney & Jones' colour-code benchmarks): ``DEPOLARIZE2(p)`` after every CX, ``DEPOLARIZE1(p)`` on
  every idle qubit in every moment (data during the measure/reset moment included), reset and
  measurement flips ``p``;
* ``phenomenological``: ``DEPOLARIZE1(p)`` on the data before each round, measurement flips ``p``,
  noiseless gates;
* ``code-capacity`` (:func:`color_code_capacity_circuit`): data reset, ``DEPOLARIZE1(p)`` once,
  a noiseless readout whose plaquette parities are the detectors (one perfect round).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from qdecode.codes.color import ColorLayout, color_layout
from qdecode.errors import InputError

from .noise import NoiseRules, check_basis, check_p, check_positive_int, insert_noise, si1000_rules, to_cz_circuit

__all__ = [
    "COLOR_NOISE",
    "SCHEDULE",
    "schedule_violations",
    "cx_layers",
    "color_memory_circuit",
    "superdense_memory_circuit",
    "color_code_capacity_circuit",
    "XYZ_NOISE",
    "xyz_memory_circuit",
]

#: Noise models of the colour-code circuits.
COLOR_NOISE: tuple[str, ...] = ("sd6", "si1000", "bb-uniform", "phenomenological", "code-capacity")

#: Noise models of the XYZ circuit (stim's generator parameters).
XYZ_NOISE: tuple[str, ...] = ("sd6", "phenomenological")

#: ``(tau_X, tau_Z)``: data layer in which ancilla ``a`` X-collects (``CX a q``) and ancilla ``b``
#: Z-collects (``CX q b``) the data qubit at offset ``e_k``, ``k = 0 .. 5``; the same on every
#: plaquette. Seven layers, the fewest with these roles (see the module docstring).
SCHEDULE: tuple[tuple[int, ...], tuple[int, ...]] = ((0, 1, 4, 3, 6, 5), (3, 2, 5, 6, 1, 0))


# -------------------------------------------------------------------- schedule
Schedule = tuple[Sequence[int], Sequence[int]]


def _check_schedule_shape(schedule: Any) -> list[str]:
    try:
        tx, tz = (tuple(int(t) for t in half) for half in schedule)
    except (TypeError, ValueError):
        return ["a schedule is a pair (layer of a's X-collect at offset e, layer of b's Z-collect at offset e)"]
    out = []
    for name, half in (("X", tx), ("Z", tz)):
        if len(half) != 6 or min(half) < 0 or len(set(half)) != 6:
            out.append(f"the {name}-collecting layers {half} are not 6 distinct layers >= 0")
    return out


def cx_layers(d: int, schedule: Schedule | None = None) -> list[list[tuple[int, int]]]:
    """The data layers of the round as ``(control, target)`` qubit pairs (qubit numbering of
    :func:`superdense_memory_circuit`): ``CX a q`` in layer ``tau_X[e]``, ``CX q b`` in layer ``tau_Z[e]``
    for the data qubit ``q`` at offset ``e`` of each plaquette.

    Raises:
        ValueError: a malformed schedule.
    """
    sched = SCHEDULE if schedule is None else schedule
    bad = _check_schedule_shape(sched)
    if bad:
        raise InputError(bad[0])
    tx, tz = (tuple(int(t) for t in half) for half in sched)
    lay = color_layout(d)
    n = lay.n
    out: list[list[tuple[int, int]]] = [[] for _ in range(1 + max(tx + tz))]
    for i in range(lay.m):
        a, b = n + 2 * i, n + 2 * i + 1
        for e in range(6):
            q = int(lay.support[i, e])
            if q >= 0:
                out[tx[e]].append((a, q))
                out[tz[e]].append((q, b))
    for gates in out:
        gates.sort()
    return out


def schedule_violations(d: int, schedule: Schedule | None = None) -> list[str]:
    """Why ``schedule`` (default :data:`SCHEDULE`) fails on the distance-``d`` patch; ``[]`` if valid.

    Paulis are GF(2) vectors over all qubits; through ``CX c t`` an X on ``c`` spreads to ``t``
    and a Z on ``t`` spreads to ``c``. Over the data layers of one round (the Bell-pair CXs
    excluded) the schedule must satisfy, on every plaquette ``P`` with pair ``(a, b)``:

    * *readout*: ``X_a X_b`` (``Z_a Z_b``) at the end pulls back to ``X_P`` (``Z_P``) on the data
      times ``I`` or ``X_a' X_b'`` (``Z_a' Z_b'``) on every pair: a stabiliser of the fresh Bell
      pairs, so the two readouts are ``X_P`` and ``Z_P`` whatever the data state;
    * *no back-action*: ``X_P`` and ``Z_P`` on the data at the start push forward to themselves
      with nothing on any ancilla, so the round leaves every stabiliser as it was (without this,
      a round reads the stabilisers correctly but scrambles the other basis's values with its
      neighbours' outcomes, and repeated rounds disagree);

    and no qubit is used twice in a layer.
    """
    sched = SCHEDULE if schedule is None else schedule
    out = _check_schedule_shape(sched)
    if out:
        return out
    lay = color_layout(d)
    n, m = lay.n, lay.m
    layers = cx_layers(d, sched)
    for t, gates in enumerate(layers):
        used = [q for g in gates for q in g]
        if len(used) != len(set(used)):
            out.append(f"data layer {t} uses a qubit twice")
    if out:
        return out
    a = n + 2 * np.arange(m)
    b = a + 1
    want = np.zeros((m, n), dtype=np.uint8)
    for i in range(m):
        want[i, lay.support[i][lay.support[i] >= 0]] = 1
    pair = np.zeros((m, n + 2 * m), dtype=np.uint8)
    pair[np.arange(m), a] = pair[np.arange(m), b] = 1
    stab = np.zeros((m, n + 2 * m), dtype=np.uint8)
    stab[:, :n] = want
    gates = [(np.array([g[0] for g in L], dtype=np.int64), np.array([g[1] for g in L], dtype=np.int64))
             for L in layers]
    vx, vz = pair.copy(), pair.copy()
    for c, tg in reversed(gates):  # pull the readouts back to the start of the round
        vx[:, tg] ^= vx[:, c]
        vz[:, c] ^= vz[:, tg]
    fx, fz = stab.copy(), stab.copy()
    for c, tg in gates:  # push the stabilisers forward to the end of the round
        fx[:, tg] ^= fx[:, c]
        fz[:, c] ^= fz[:, tg]
    for kind, v, f in (("X", vx, fx), ("Z", vz, fz)):
        for i in np.flatnonzero((v[:, :n] != want).any(axis=1)):
            out.append(f"the {kind} readout of plaquette {i} pulls back to the wrong data operator")
        for i in np.flatnonzero((v[:, a] != v[:, b]).any(axis=1)):
            out.append(f"the {kind} readout of plaquette {i} pulls back to a non-stabiliser of some Bell pair")
        for i in np.flatnonzero((f[:, :n] != want).any(axis=1) | f[:, n:].any(axis=1)):
            out.append(f"the round changes the {kind} stabiliser of plaquette {i} (back-action)")
    return out


# -------------------------------------------------------------------- circuits
def _noise(noise: Any, p: Any) -> tuple[str | None, float]:
    if noise is None:
        return None, 0.0
    if noise not in COLOR_NOISE:
        raise InputError(f"unknown noise model {noise!r} for a colour-code circuit; valid names: "
                         f"{', '.join(COLOR_NOISE)}")
    return str(noise), check_p(p)


def _color_coord(color: int, basis: str) -> float:
    """Chromobius' 4th detector coordinate: colour + 3 for a Z-type stabiliser."""
    return float(int(color) + (3 if basis == "Z" else 0))


def color_memory_circuit(
    d: int,
    *,
    rounds: int | None = None,
    basis: str = "Z",
    noise: str | None = None,
    p: float = 0.0,
    memory_basis_only: bool = False,
) -> Any:
    """Colour-code memory experiment: :func:`superdense_memory_circuit`, or
    :func:`color_code_capacity_circuit` for ``noise="code-capacity"`` (``rounds`` ignored).

    Args:
        d: distance (odd, >= 3).
        rounds: syndrome rounds (default ``d``).
        basis: memory basis ``"X"`` or ``"Z"``.
        noise: a :data:`COLOR_NOISE` name, or ``None`` for the noiseless circuit.
        p: noise strength in (0, 1) (ignored when ``noise`` is ``None``).
        memory_basis_only: keep only the memory basis's detectors.

    Returns:
        ``stim.Circuit`` with 4-coordinate detectors and one observable.
    """
    if noise == "code-capacity":
        return color_code_capacity_circuit(d, p=p, basis=basis)
    return superdense_memory_circuit(d, rounds=d if rounds is None else rounds, basis=basis, noise=noise, p=p,
                                     memory_basis_only=memory_basis_only)


def superdense_memory_circuit(
    d: int,
    *,
    rounds: int,
    basis: str = "Z",
    noise: str | None = None,
    p: float = 0.0,
    memory_basis_only: bool = False,
    schedule: Schedule | None = None,
) -> Any:
    """Superdense colour-code memory circuit (module docstring), optionally noised.

    Qubits: data ``0 .. n-1`` (the order of :func:`color_layout`), then per plaquette ``i`` the
    pair ``a = n + 2i`` (read out with ``MX``: ``X_P``) and ``b = n + 2i + 1`` (``M``: ``Z_P``). Moments per round: one
    measure/reset moment and 8 CX moments; the last round ends with a measurement moment that
    also reads the data out.

    Args:
        d: distance (odd, >= 3).
        rounds: number of syndrome rounds (>= 1).
        basis: memory basis.
        noise: ``"sd6"``, ``"si1000"``, ``"bb-uniform"``, ``"phenomenological"`` or ``None``.
        p: noise strength.
        memory_basis_only: write only the memory basis's detectors.
        schedule: the data layers (default :data:`SCHEDULE`).

    Returns:
        ``stim.Circuit`` (flat).

    Raises:
        ValueError: bad ``d``, ``rounds``, basis, noise name or ``p``; an invalid ``schedule``.
    """
    import stim

    lay = color_layout(d)
    r = check_positive_int(rounds, "rounds")
    b = check_basis(basis)
    nz, pf = _noise(noise, p)
    if nz == "code-capacity":
        raise InputError("code-capacity noise has no syndrome-extraction circuit; use color_code_capacity_circuit")
    sched = SCHEDULE if schedule is None else schedule
    bad = schedule_violations(d, sched)
    if bad:
        raise InputError(f"invalid superdense schedule: {bad[0]} ({len(bad)} problems)")
    n, m = lay.n, lay.m
    data = list(range(n))
    anc_a = [n + 2 * i for i in range(m)]
    anc_b = [n + 2 * i + 1 for i in range(m)]
    pairs = [q for i in range(m) for q in (anc_a[i], anc_b[i])]
    xy_data = ColorLayout.position(lay.data)
    xy_cen = ColorLayout.position(lay.centers)

    layers = [[q for g in gates for q in g] for gates in cx_layers(d, sched)]

    c = stim.Circuit()
    for q in data:
        c.append("QUBIT_COORDS", [q], [float(xy_data[q, 0]), float(xy_data[q, 1])])
    for i in range(m):  # the pair sits on the centre, a quarter unit either side
        c.append("QUBIT_COORDS", [anc_a[i]], [float(xy_cen[i, 0]) - 0.25, float(xy_cen[i, 1])])
        c.append("QUBIT_COORDS", [anc_b[i]], [float(xy_cen[i, 0]) + 0.25, float(xy_cen[i, 1])])

    idle_marks = nz in ("sd6", "phenomenological")  # DEPOLARIZE1(p) on the data at each round start
    nmeas = 0
    prev: dict[str, np.ndarray] = {}
    rec = lambda k: stim.target_rec(int(k) - nmeas)  # noqa: E731 - absolute record -> lookback

    for rnd in range(r):
        if rnd == 0:
            c.append("R" if b == "Z" else "RX", data)
            c.append("RX", anc_a)
            c.append("R", anc_b)
        if idle_marks:
            c.append("I", data)
        c.append("TICK")
        c.append("CX", pairs)
        for layer in layers:
            c.append("TICK")
            c.append("CX", layer)
        c.append("TICK")
        c.append("CX", pairs)
        c.append("TICK")
        last = rnd == r - 1
        if last:
            c.append("MX", anc_a)
            c.append("M", anc_b)
        else:  # measure and re-prepare in one operation (the next round's reset)
            c.append("MRX", anc_a)
            c.append("MR", anc_b)
        cur = {"X": nmeas + np.arange(m), "Z": nmeas + m + np.arange(m)}
        nmeas += 2 * m
        if last:
            c.append("M" if b == "Z" else "MX", data)
            drec = nmeas + np.arange(n)
            nmeas += n
        for kind in ("X", "Z"):
            if memory_basis_only and kind != b:
                continue
            if rnd == 0 and kind != b:
                continue  # the other basis's first outcomes are random
            for i in range(m):
                tg = [rec(cur[kind][i])] + ([rec(prev[kind][i])] if rnd else [])
                c.append("DETECTOR", tg, [float(xy_cen[i, 0]), float(xy_cen[i, 1]), float(rnd),
                                          _color_coord(lay.colors[i], kind)])
        prev = cur

    for i in range(m):
        qs = lay.support[i][lay.support[i] >= 0]
        tg = [rec(drec[q]) for q in qs] + [rec(prev[b][i])]
        c.append("DETECTOR", tg, [float(xy_cen[i, 0]), float(xy_cen[i, 1]), float(r), _color_coord(lay.colors[i], b)])
    c.append("OBSERVABLE_INCLUDE", [rec(drec[q]) for q in np.flatnonzero(lay.data[:, 1] == 0)], [0])

    if nz is None:
        return c
    if nz == "si1000":
        return insert_noise(to_cz_circuit(c), si1000_rules(pf))
    if nz == "bb-uniform":
        return insert_noise(c, NoiseRules(after_2q=pf, reset_flip=pf, measure_flip=pf, idle=pf))
    if nz == "sd6":
        return insert_noise(c, NoiseRules(after_2q=pf, after_1q=pf, reset_flip=pf, measure_flip=pf, identity=pf))
    return insert_noise(c, NoiseRules(measure_flip=pf, identity=pf))  # phenomenological


def color_code_capacity_circuit(d: int, *, p: float, basis: str = "Z") -> Any:
    """Code capacity: data reset in ``basis``, ``DEPOLARIZE1(p)`` once, noiseless readout.

    The detectors are the memory basis's plaquette parities of the readout (a perfect round),
    coordinates ``(x, y, 0, c + 3 [Z])``; the observable is the bottom row. A data error flips the
    plaquettes around it: three of distinct colours in the bulk (Chromobius' rainbow triplet),
    one or two on the sides.

    Returns:
        ``stim.Circuit``.
    """
    import stim

    lay = color_layout(d)
    b = check_basis(basis)
    pf = check_p(p)
    n = lay.n
    xy_cen = ColorLayout.position(lay.centers)
    xy_data = ColorLayout.position(lay.data)
    c = stim.Circuit()
    for q in range(n):
        c.append("QUBIT_COORDS", [q], [float(xy_data[q, 0]), float(xy_data[q, 1])])
    c.append("R" if b == "Z" else "RX", range(n))
    c.append("TICK")
    c.append("DEPOLARIZE1", range(n), [pf])
    c.append("TICK")
    c.append("M" if b == "Z" else "MX", range(n))
    for i in range(lay.m):
        qs = lay.support[i][lay.support[i] >= 0]
        c.append("DETECTOR", [stim.target_rec(int(q) - n) for q in qs],
                 [float(xy_cen[i, 0]), float(xy_cen[i, 1]), 0.0, _color_coord(lay.colors[i], b)])
    c.append("OBSERVABLE_INCLUDE", [stim.target_rec(int(q) - n) for q in np.flatnonzero(lay.data[:, 1] == 0)], [0])
    return c


def xyz_memory_circuit(d: int, *, rounds: int, noise: str, p: float) -> Any:
    """The XYZ colour-code memory: ``stim.Circuit.generated("color_code:memory_xyz")``.

    Every round applies ``C_XYZ`` to the data and measures each plaquette once, so a plaquette's
    outcomes cycle through its X, Y and Z stabilisers (the same triangular patch and coordinates
    as :func:`qdecode.codes.color.color_layout`). ``sd6``: stim's four noise knobs at ``p``
    (``DEPOLARIZE1`` after single-qubit Cliffords, ``DEPOLARIZE2`` after two-qubit ones, data
    depolarised before each round, reset and measurement flips); ``phenomenological``: data
    depolarised before each round and measurement flips only.

    Detectors keep stim's three coordinates ``(x, y, t)``: they are not of one basis, and Chromobius
    cannot decode this circuit at d >= 5 even under phenomenological noise (it fails to decompose
    its errors into basic ones; measured with Chromobius 1.1.1 and colour annotations added), so
    the ``chromobius`` decoder refuses it; BP-family decoders (``bposd``, ``relay-bp``) decode it.

    Raises:
        ValueError: bad ``d`` / ``rounds`` / ``p``, or a noise model outside :data:`XYZ_NOISE`.
    """
    import stim

    lay = color_layout(d)
    r = check_positive_int(rounds, "rounds")
    if noise not in XYZ_NOISE:
        raise InputError(f"noise model {noise!r} is not available for the XYZ colour-code circuit; valid names: "
                         f"{', '.join(XYZ_NOISE)}")
    pf = check_p(p)
    knobs = {"before_round_data_depolarization": pf, "before_measure_flip_probability": pf}
    if noise == "sd6":
        knobs.update(after_clifford_depolarization=pf, after_reset_flip_probability=pf)
    return stim.Circuit.generated("color_code:memory_xyz", distance=lay.d, rounds=r, **knobs)
