"""Memory-experiment circuits for any CSS code, scheduled by an edge colouring of its Tanner graph.

Coloration circuits (Tremblay, Delfosse, Beverland, PRL 129, 050504 (2022), arXiv:2109.14609,
Algorithm 1). Every check gets one ancilla; a check's CNOTs are the edges of the bipartite Tanner
graph (checks x data qubits). A proper edge colouring with ``K`` colours splits the edges into
``K`` matchings, and each matching is one layer of CNOTs in which no qubit is used twice. König's
theorem gives ``K = Delta`` (the maximum degree) for every bipartite graph; :func:`edge_coloring`
constructs such a colouring with alternating-path recolouring.

Schedules (``SCHEDULES``):

* ``"coloration"`` (Algorithm 1): all X-check layers, then all Z-check layers, each half coloured
  separately, ``Delta_X + Delta_Z`` CNOT layers per round. Always valid: an X check ``a`` and a Z
  check ``b`` that overlap on ``S`` (``|S|`` even because they commute) have every X gate first,
  an even count (see :func:`schedule_violations`).
* ``"coloration-interleaved"``: X and Z edges coloured together (``Delta`` of ``[H_X; H_Z]``
  layers, e.g. 4 for the surface code, 6 or 7 for BB codes). Used only when the result passes
  the validity condition; otherwise a ``ValueError`` says to use ``"coloration"``.

Validity (both schedules, and any user time steps): with ``t_a(q)`` the layer of X check ``a``'s
CNOT on qubit ``q`` and ``t_b(q)`` that of Z check ``b``, the circuit measures the stabilisers
iff ``#{q in supp(a) & supp(b) : t_a(q) < t_b(q)}`` is even for every pair: pulling ``b``'s
final Z measurement back through ``CX(q -> b)`` gives ``Z_q``, which ``CX(a -> q)`` copies onto
the ``|+>`` ancilla of ``a`` exactly when ``a``'s gate on ``q`` is earlier, and an odd number of
such copies anticommutes with ``a``'s preparation (the ancilla's outcome would be random).

Hook-aware order (cheap where the code says where its qubits are): the colouring starts from a
preferred layer per edge and keeps it wherever it is free at both ends. On the rotated surface
code (``codes.surface``) the preference is geometric: X checks visit NW, NE, SW, SE (row-major),
Z checks NW, SW, NE, SE (column-major), so a fault on an X ancilla after two CNOTs leaves a
horizontal pair of X errors, perpendicular to the vertical X logical, and likewise for Z; the
preference is a proper colouring, so it is kept exactly and the circuit distance is ``d``. On BB
codes (``codes.bb``) the preference is each check's neighbour order in Bravyi et al.'s circuit
(arXiv:2308.07915): sequential, each check keeps IBM's gate order (which barely matters there:
on the gross code it fails 0.93x as often as a plain colouring); interleaved, the layers are IBM's
seven, and the logical error rate is that of Bravyi's circuit. Codes without coordinates get a
plain König colouring (no hook control).

Round structure (``D`` CNOT layers): a boundary moment (measure the previous round's checks
whose last gate was in the last layer, reset the checks whose first gate is in the first layer;
one ``MR`` / ``MRX`` when both), then ``D`` CNOT moments. A check's ancilla is reset in the moment
just before its first CNOT and measured in the moment just after its last one, so it is live
only while its check runs (arXiv:2109.14609's point that an ancilla is busy for its own layers).
The data are reset in the memory basis in the first boundary moment and read out in the last.
So a circuit of ``R`` rounds has ``R (D + 1) + 1`` moments.

Detectors: round 0 compares the memory basis's checks with their deterministic value; round
``r > 0`` compares each check with round ``r - 1``; the last detectors recompute the memory
basis's checks from the data readout. Coordinates are ``(x, y, t)`` (the check's position, the
round; ``t = rounds`` for the readout). ``OBSERVABLE_INCLUDE`` ``i`` is logical ``i`` of the memory
basis (``lz`` rows for ``"Z"``). Check ancillas are reset / measured with ``RX`` / ``MX`` (X)
and ``R`` / ``M`` (Z), so :func:`qdecode.sims.circuits.detector_bases` classifies every detector.

Noise (the models of :mod:`qdecode.sims.noise`, applied as they are to the project's other circuits):

* ``bb-uniform``: CX ``p``, preparation and measurement flips ``p``, ``DEPOLARIZE1(p)`` on every idle
  location (a data qubit, or a live ancilla, untouched in a moment; marked with ``I``), noiseless
  final data readout (as the Bravyi circuit of :func:`qdecode.sims.circuits.bb_memory_circuit`).
* ``sd6``: as stim's generated circuits with all four knobs ``p``: CX ``p``, ``DEPOLARIZE1(p)`` on the
  data at the start of every round, reset and measurement flips ``p``; no idle noise. (stim's
  surface-code circuits reach X ancillas through ``H``, which adds ``DEPOLARIZE1(p)``; this circuit
  uses ``RX`` / ``MX``.)
* ``si1000``: the circuit is rewritten to CZ form (:func:`qdecode.sims.noise.to_cz_circuit`) and
  noised by :func:`qdecode.sims.noise.si1000_rules`, idles inferred from liveness.
* ``phenomenological``: ``DEPOLARIZE1(p)`` on the data at the start of every round, measurement flips
  ``p``, noiseless gates and resets.

``code-capacity`` has no syndrome-extraction circuit; use
:func:`qdecode.sims.circuits.bb_code_capacity_circuit` (any CSS code).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple, Sequence

import numpy as np

from qdecode.errors import InputError

from .noise import (
    NoiseRules,
    bb_uniform_rules,
    check_basis,
    check_p,
    check_positive_int,
    insert_noise,
    si1000_rules,
    to_cz_circuit,
)

__all__ = [
    "SCHEDULES",
    "CSS_NOISE",
    "Layout",
    "css_layout",
    "edge_coloring",
    "coloration_schedule",
    "schedule_violations",
    "css_memory_circuit",
    "circuit_from_schedule",
    "cx_layers",
]

#: Schedule names accepted by :func:`css_memory_circuit`.
SCHEDULES: tuple[str, ...] = ("coloration", "coloration-interleaved")
#: Noise models :func:`css_memory_circuit` applies (``None`` gives the noiseless circuit).
CSS_NOISE: tuple[str, ...] = ("sd6", "si1000", "bb-uniform", "phenomenological")


# ------------------------------------------------------------------ validation
def _noise(noise: Any, p: Any) -> tuple[str | None, float]:
    if noise is None:
        return None, 0.0
    if noise == "code-capacity":
        raise InputError("code-capacity noise has no syndrome-extraction circuit; use "
                         "qdecode.sims.circuits.bb_code_capacity_circuit (any CSS code)")
    if noise not in CSS_NOISE:
        raise InputError(f"unknown noise model {noise!r} for a coloration circuit; valid names: {', '.join(CSS_NOISE)}")
    return str(noise), check_p(p)


# ---------------------------------------------------------------------- layout
# Bravyi et al.'s cycle (arXiv:2308.07915): the neighbour (0..5) a BB check touches in each of its
# 7 slots ("idle": none). Neighbours: X check 0-2 left data via A1..A3, 3-5 right data via B1..B3;
# Z check 0-2 left via B1^T..B3^T, 3-5 right via A1^T..A3^T. Used by qdecode.sims.circuits too.
SX_ORDER: tuple[Any, ...] = ("idle", 1, 4, 3, 5, 0, 2)
SZ_ORDER: tuple[Any, ...] = (3, 5, 0, 1, 2, 4, "idle")
_BB_X_SLOT = tuple(SX_ORDER.index(k) for k in range(6))  # slot of neighbour k
_BB_Z_SLOT = tuple(SZ_ORDER.index(k) for k in range(6))


def _is_bb(code: Any) -> bool:
    meta = code.meta
    return meta is not None and hasattr(meta, "A") and hasattr(meta, "half") and code.n == 2 * meta.half


@dataclasses.dataclass(frozen=True)
class Layout:
    """Positions of the qubits (used for ``QUBIT_COORDS``, detector coordinates, hook order).

    Attributes:
        data: ``(n, 2)`` float64 ``(x, y)`` of the data qubits.
        x: ``(mx, 2)`` float64 positions of the X checks (their ancillas).
        z: ``(mz, 2)`` float64 positions of the Z checks.
        planar: the positions are Euclidean (the row / column-major hook order applies); ``False``
            for index layouts and tori.
    """

    data: np.ndarray
    x: np.ndarray
    z: np.ndarray
    planar: bool = False


def css_layout(code: Any) -> Layout:
    """Qubit positions of a CSS code.

    * rotated surface code (``meta`` with ``x_corners`` / ``z_corners``, :mod:`qdecode.codes.surface`):
      data ``(r, c)`` at ``(2c + 1, 2r + 1)``, the check on corner ``(i, j)`` at ``(2j, 2i)``; planar.
    * BB code (``meta`` a ``BBSpec``): the torus coordinates of
      :func:`qdecode.sims.circuits.bb_memory_circuit` (L ``(2a, 2b)``, R ``(2a+1, 2b+1)``,
      X ``(2a, 2b+1)``, Z ``(2a+1, 2b)``); not planar.
    * ``meta`` a dict with ``data_coords``, ``x_coords``, ``z_coords`` (``(n, 2)``, ``(mx, 2)``,
      ``(mz, 2)``): those; planar.
    * otherwise an index layout: data ``j`` at ``(j, 0)``, X check ``i`` at ``(i, 1)``, Z check ``i``
      at ``(i, 2)``; not planar.
    """
    n, mx, mz = code.n, code.hx.shape[0], code.hz.shape[0]
    meta = code.meta
    if isinstance(meta, dict) and "x_corners" in meta and "z_corners" in meta:
        d = int(round(np.sqrt(n)))
        if d * d == n and len(meta["x_corners"]) == mx and len(meta["z_corners"]) == mz:
            rc = np.array([(j % d, j // d) for j in range(n)], dtype=np.float64)
            return Layout(
                data=2 * rc + 1,
                x=np.array([(2 * j, 2 * i) for i, j in meta["x_corners"]], dtype=np.float64).reshape(mx, 2),
                z=np.array([(2 * j, 2 * i) for i, j in meta["z_corners"]], dtype=np.float64).reshape(mz, 2),
                planar=True,
            )
    if _is_bb(code):
        ab = np.array([(a, b) for a in range(meta.l) for b in range(meta.m)], dtype=np.float64).reshape(-1, 2)
        return Layout(data=np.vstack([2 * ab, 2 * ab + 1]), x=2 * ab + (0, 1), z=2 * ab + (1, 0), planar=False)
    if isinstance(meta, dict) and {"data_coords", "x_coords", "z_coords"} <= set(meta):
        lay = Layout(*(np.asarray(meta[k], dtype=np.float64) for k in ("data_coords", "x_coords", "z_coords")),
                     planar=True)
        if lay.data.shape == (n, 2) and lay.x.shape == (mx, 2) and lay.z.shape == (mz, 2):
            return lay
    return Layout(
        data=np.column_stack([np.arange(n), np.zeros(n)]).astype(np.float64),
        x=np.column_stack([np.arange(mx), np.ones(mx)]).astype(np.float64),
        z=np.column_stack([np.arange(mz), np.full(mz, 2)]).astype(np.float64),
        planar=False,
    )


# --------------------------------------------------------------- edge colouring
def edge_coloring(H: Any, *, num_colors: int | None = None, preferred: Any = None) -> np.ndarray:
    """Proper edge colouring of the bipartite graph of ``H`` (rows x columns, one edge per 1).

    König's theorem: ``Delta`` colours suffice, ``Delta`` the largest row or column weight. Edges
    are coloured in row-major order: with the smallest colour free at both ends when there is
    one; otherwise, with ``c`` free at the row ``i`` and ``d`` free at the column ``j`` (``c`` is
    used at ``j``, ``d`` at ``i``), the path from ``j`` that alternates ``c``- and ``d``-edges is
    swapped ``c <-> d``. The path cannot reach ``i`` (it would arrive over a ``c``-edge, and
    ``c`` is free at ``i``) and it starts at ``j``'s ``c``-edge, so afterwards ``c`` is free at
    both ends. ``O(E (K + V))`` time; deterministic.

    Args:
        H: ``(m, n)`` array, nonzero = edge.
        num_colors: ``K >= Delta`` (default ``Delta``).
        preferred: optional ``(m, n)`` int array of preferred colours (``< 0`` or ``>= K``: none).
            A first pass gives each edge its preferred colour where that colour is still free at
            both ends; the rest are coloured as above (which may recolour earlier edges).

    Returns:
        ``(m, n)`` int64: the colour ``0..K-1`` of every edge, ``-1`` off the support.

    Raises:
        ValueError: ``num_colors < Delta``.

    Examples:
        >>> T = edge_coloring([[1, 1, 0], [0, 1, 1], [1, 0, 1]])
        >>> int(T.max()) + 1, sorted(T[0][T[0] >= 0].tolist())
        (2, [0, 1])
    """
    Hb = np.asarray(H) != 0
    if Hb.ndim != 2:
        raise InputError(f"H must be a 2-D array, got shape {Hb.shape}")
    m, n = Hb.shape
    delta = int(max(Hb.sum(axis=1).max(initial=0), Hb.sum(axis=0).max(initial=0)))
    K = delta if num_colors is None else int(num_colors)
    if K < delta:
        raise InputError(f"num_colors={num_colors} is below the maximum degree {delta}")
    at_row = np.full((m, K), -1, dtype=np.int64)  # at_row[i, c]: column of row i's edge of colour c
    at_col = np.full((n, K), -1, dtype=np.int64)  # at_col[j, c]: row of column j's edge of colour c
    rows, cols = np.nonzero(Hb)
    pending: list[tuple[int, int]] = []
    pref = None if preferred is None else np.asarray(preferred, dtype=np.int64)
    if pref is not None and pref.shape != Hb.shape:
        raise InputError(f"preferred has shape {pref.shape}, H has {Hb.shape}")
    for i, j in zip(rows.tolist(), cols.tolist()):
        c = -1 if pref is None else int(pref[i, j])
        if 0 <= c < K and at_row[i, c] < 0 and at_col[j, c] < 0:
            at_row[i, c], at_col[j, c] = j, i
        else:
            pending.append((i, j))
    for i, j in pending:
        free_i, free_j = at_row[i] < 0, at_col[j] < 0
        both = np.flatnonzero(free_i & free_j)
        if both.size:
            c = int(both[0])
            at_row[i, c], at_col[j, c] = j, i
            continue
        c, d = int(np.flatnonzero(free_i)[0]), int(np.flatnonzero(free_j)[0])
        path: list[tuple[int, int, int]] = []  # (row, column, colour) of the alternating path's edges
        v, on_col, colour = j, True, c
        while True:
            w = int(at_col[v, colour] if on_col else at_row[v, colour])
            if w < 0:
                break
            path.append((w, v, colour) if on_col else (v, w, colour))
            v, on_col, colour = w, not on_col, d if colour == c else c
        for r, q, col in path:
            at_row[r, col] = at_col[q, col] = -1
        for r, q, col in path:
            new = d if col == c else c
            at_row[r, new], at_col[q, new] = q, r
        at_row[i, c], at_col[j, c] = j, i
    T = np.full((m, n), -1, dtype=np.int64)
    ri, ci = np.nonzero(at_row >= 0)
    T[ri, at_row[ri, ci]] = ci
    return T


def _compress(T: np.ndarray) -> np.ndarray:
    """Renumber the used values of ``T >= 0`` as ``0, 1, ...`` in increasing order (drops empty layers)."""
    out = np.full(T.shape, -1, dtype=np.int64)
    used = T >= 0
    out[used] = np.unique(T[used], return_inverse=True)[1].reshape(-1)
    return out


def _color(H: np.ndarray, pref: np.ndarray) -> np.ndarray:
    """Colour ``H`` starting from the preferred layers ``pref`` (compressed first); compressed result."""
    pref = _compress(np.where(H != 0, pref, -1))
    k = int(pref.max(initial=-1)) + 1
    delta = int(max(H.sum(axis=1).max(initial=0), H.sum(axis=0).max(initial=0)))
    # More colours than Delta only when the preference asks for them (e.g. IBM's 7 BB layers).
    return _compress(edge_coloring(H, num_colors=max(delta, k), preferred=pref))


# ------------------------------------------------------------------ preferences
def _preferred_times(code: Any, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Preferred layer of every X and Z edge on a common time axis (``-1``: none)."""
    hx, hz = code.hx, code.hz
    px = np.full(hx.shape, -1, dtype=np.int64)
    pz = np.full(hz.shape, -1, dtype=np.int64)
    meta = code.meta
    if _is_bb(code):
        h = meta.half
        rows = np.arange(h)
        for k in range(3):  # neighbours k and 3 + k of every check, at their slots in IBM's 7-layer cycle
            px[rows, np.argmax(meta.A[k], axis=1)] = _BB_X_SLOT[k]
            px[rows, h + np.argmax(meta.B[k], axis=1)] = _BB_X_SLOT[3 + k]
            pz[rows, np.argmax(meta.B[k].T, axis=1)] = _BB_Z_SLOT[k]
            pz[rows, h + np.argmax(meta.A[k].T, axis=1)] = _BB_Z_SLOT[3 + k]
        return px, pz
    if not layout.planar:
        return px, pz
    for H, P, pos, major in ((hx, px, layout.x, (1, 0)), (hz, pz, layout.z, (0, 1))):
        i, j = np.nonzero(H)
        off = layout.data[j] - pos[i]  # (dx, dy) of each edge
        key = off[:, list(major)]  # X: sort by (dy, dx) = row-major; Z: (dx, dy) = column-major
        kinds, rank = np.unique(np.round(key, 9), axis=0, return_inverse=True)
        delta = int(max(H.sum(axis=1).max(initial=0), H.sum(axis=0).max(initial=0)))
        if len(kinds) <= delta:  # translation-invariant stencil: one layer per direction
            P[i, j] = rank.reshape(-1)
        else:  # irregular: each check's own row / column-major order
            order = np.lexsort((key[:, 1], key[:, 0], i))
            pos_in_row = np.zeros(len(i), dtype=np.int64)
            starts = np.r_[0, np.flatnonzero(np.diff(i[order])) + 1]
            for s, e in zip(starts, np.r_[starts[1:], len(order)]):
                pos_in_row[order[s:e]] = np.arange(e - s)
            P[i, j] = pos_in_row
    return px, pz


def coloration_schedule(code: Any, schedule: str = "coloration", *,
                        layout: Layout | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CNOT layers of a coloration schedule.

    Args:
        code: a :class:`~qdecode.codes.css.CSSCode`.
        schedule: ``"coloration"`` (X layers, then Z layers) or ``"coloration-interleaved"``.
        layout: positions for the hook-aware preference (default :func:`css_layout`).

    Returns:
        ``(tx, tz)``: ``(mx, n)`` and ``(mz, n)`` int64 layer index of every CNOT (``-1`` off the
        support), layers ``0..D-1`` on one time axis, every layer a matching.

    Raises:
        ValueError: unknown schedule, or an interleaved colouring that fails the validity
            condition (:func:`schedule_violations`).
    """
    if schedule not in SCHEDULES:
        raise InputError(f"unknown schedule {schedule!r}; valid names: {', '.join(SCHEDULES)}")
    lay = css_layout(code) if layout is None else layout
    hx, hz = np.asarray(code.hx, dtype=np.uint8), np.asarray(code.hz, dtype=np.uint8)
    px, pz = _preferred_times(code, lay)
    if schedule == "coloration":
        tx = _color(hx, px)
        tz = _color(hz, pz)
        tz = np.where(tz >= 0, tz + int(tx.max(initial=-1)) + 1, -1)
        return tx, tz
    T = _color(np.vstack([hx, hz]), np.vstack([px, pz]))
    tx, tz = T[: hx.shape[0]], T[hx.shape[0]:]
    bad = schedule_violations(hx, hz, tx, tz)
    if bad:
        a, b = bad[0]
        raise InputError(f"the interleaved colouring of {getattr(code, 'name', '') or 'this code'} does not measure "
                         f"the stabilisers ({len(bad)} X/Z check pairs, e.g. X{a}/Z{b}, have an odd number of X-first "
                         f"shared qubits); use schedule='coloration'")
    return tx, tz


def schedule_violations(hx: Any, hz: Any, tx: Any, tz: Any) -> list[tuple[int, int]]:
    """X/Z check pairs for which a CNOT schedule does not measure the stabilisers.

    Pair ``(a, b)`` is violated when ``#{q : hx[a,q] = hz[b,q] = 1, tx[a,q] < tz[b,q]}`` is odd
    (module docstring). Sparse: only pairs sharing a qubit are visited.

    Args:
        hx, hz: ``(mx, n)``, ``(mz, n)`` 0/1 check matrices.
        tx, tz: same shapes, int layer of each CNOT (read on the supports only).

    Returns:
        Sorted list of violating ``(a, b)``; empty for a valid schedule.
    """
    hx, hz = np.asarray(hx) != 0, np.asarray(hz) != 0
    tx, tz = np.asarray(tx, dtype=np.int64), np.asarray(tz, dtype=np.int64)
    mz = hz.shape[0]
    keys: list[np.ndarray] = []
    for q in range(hx.shape[1]):
        a, b = np.flatnonzero(hx[:, q]), np.flatnonzero(hz[:, q])
        if a.size and b.size:
            first = tx[a, q][:, None] < tz[b, q][None, :]
            ia, ib = np.nonzero(first)
            keys.append(a[ia] * mz + b[ib])
    if not keys:
        return []
    uniq, counts = np.unique(np.concatenate(keys), return_counts=True)
    odd = uniq[counts % 2 == 1]
    return [(int(k // mz), int(k % mz)) for k in odd]


def _check_matchings(hx: np.ndarray, hz: np.ndarray, tx: np.ndarray, tz: np.ndarray) -> None:
    for name, H, T in (("tx", hx, tx), ("tz", hz, tz)):
        if T.shape != H.shape:
            raise InputError(f"{name} has shape {T.shape}, expected {H.shape}")
        if not np.array_equal(T >= 0, H != 0):
            raise InputError(f"{name} must be >= 0 exactly on the support of its check matrix")
    T = np.vstack([tx, tz])
    for axis, what in ((1, "a check"), (0, "a qubit")):
        M = T if axis == 1 else T.T
        for idx, row in enumerate(M):
            v = row[row >= 0]
            if np.unique(v).size != v.size:
                raise InputError(f"layer used twice by {what} ({'row' if axis == 1 else 'column'} {idx}); "
                                 f"every layer must be a matching")


# ---------------------------------------------------------------------- circuit
def css_memory_circuit(
    code: Any,
    *,
    rounds: int,
    noise: str | None,
    p: float | None = None,
    basis: str = "Z",
    schedule: str | Sequence[Any] = "coloration",
    memory_basis_only: bool = True,
    layout: Layout | None = None,
) -> Any:
    """Noisy memory experiment for any CSS code with a coloration syndrome-extraction circuit.

    Args:
        code: a :class:`~qdecode.codes.css.CSSCode` (``hx``, ``hz``, ``lx``, ``lz``).
        rounds: syndrome rounds (>= 1).
        noise: ``"sd6"``, ``"si1000"``, ``"bb-uniform"``, ``"phenomenological"``, or ``None`` (noiseless).
        p: physical error rate in (0, 1) (ignored when ``noise`` is ``None``).
        basis: memory basis ``"Z"`` or ``"X"``.
        schedule: a name in :data:`SCHEDULES`, or ``(tx, tz)`` layer matrices (as returned by
            :func:`coloration_schedule`), checked for matchings and validity.
        memory_basis_only: keep only the memory basis's detectors (independent X / Z decoding).
        layout: qubit positions (default :func:`css_layout`).

    Returns:
        ``stim.Circuit`` with detectors ``(x, y, t)`` and ``k`` observables.

    Raises:
        ValueError: ``rounds < 1``, ``p`` outside (0, 1), unknown noise, schedule or basis, an
            invalid ``(tx, tz)`` or an interleaved colouring that fails the validity condition.
    """
    r = check_positive_int(rounds, "rounds")
    b = check_basis(basis)
    nz, pf = _noise(noise, p)
    lay = css_layout(code) if layout is None else layout
    if isinstance(schedule, str):
        tx, tz = coloration_schedule(code, schedule, layout=lay)
    else:
        try:
            tx, tz = (np.asarray(t, dtype=np.int64) for t in schedule)
        except (TypeError, ValueError):
            raise InputError(f"schedule must be one of {', '.join(SCHEDULES)} or a (tx, tz) pair, "
                             f"got {schedule!r}") from None
        _check_matchings(np.asarray(code.hx), np.asarray(code.hz), tx, tz)
        bad = schedule_violations(code.hx, code.hz, tx, tz)
        if bad:
            raise InputError(f"schedule does not measure the stabilisers: {len(bad)} X/Z check pairs, e.g. "
                             f"X{bad[0][0]}/Z{bad[0][1]}, have an odd number of X-first shared qubits")
    return circuit_from_schedule(code, tx, tz, rounds=r, noise=nz, p=pf if nz else None, basis=b,
                                 memory_basis_only=memory_basis_only, layout=lay)


class _Timing(NamedTuple):
    """The checks (kind, row) with a non-empty row, their ancillas, (x, y), first / last layer; each layer's CXs."""

    checks: list[tuple[str, int]]
    anc: dict[tuple[str, int], int]
    xy: dict[tuple[str, int], Any]
    first: dict[tuple[str, int], int]
    last: dict[tuple[str, int], int]
    cx_pairs: list[list[int]]


def _timing(hx: np.ndarray, hz: np.ndarray, tx: np.ndarray, tz: np.ndarray, lay: Layout, n: int) -> _Timing:
    """Each check's ancilla, coordinates and span of layers (renumbered 0..D-1), from the ``(m, n)`` int64 layers."""
    # Checks with an empty row measure the identity: no ancilla, no detector.
    checks: list[tuple[str, int]] = [("X", i) for i in range(hx.shape[0]) if hx[i].any()]
    checks += [("Z", i) for i in range(hz.shape[0]) if hz[i].any()]
    T = np.vstack([tx, tz])
    layers = np.unique(T[T >= 0])
    T = np.where(T >= 0, np.searchsorted(layers, T), -1)  # contiguous layers 0..D-1
    mx = hx.shape[0]
    row = {c: (c[1] if c[0] == "X" else mx + c[1]) for c in checks}
    anc = {c: n + k for k, c in enumerate(checks)}
    supp = {c: np.flatnonzero(T[row[c]] >= 0) for c in checks}
    # CX targets of each layer: X checks control their data, data control Z-check ancillas.
    cx_pairs: list[list[int]] = [[] for _ in range(int(layers.size))]
    for c in checks:
        for q in supp[c]:
            t = int(T[row[c], q])
            cx_pairs[t] += [anc[c], int(q)] if c[0] == "X" else [int(q), anc[c]]
    return _Timing(
        checks=checks,
        anc=anc,
        xy={c: (lay.x if c[0] == "X" else lay.z)[c[1]] for c in checks},
        first={c: int(T[row[c], supp[c]].min()) for c in checks},
        last={c: int(T[row[c], supp[c]].max()) for c in checks},
        cx_pairs=cx_pairs,
    )


class _RoundWriter:
    """Appends a memory experiment's rounds to a circuit, keeping the measurement record of every check."""

    def __init__(self, circ: Any, tim: _Timing, n: int, rounds: int, basis: str, noise: str | None,
                 memory_basis_only: bool) -> None:
        self.circ, self.tim, self.n, self.rounds, self.basis, self.noise = circ, tim, n, rounds, basis, noise
        self.memory_basis_only = memory_basis_only
        # Idle markers (explicit I gates) the noise model reads: every idle location for bb-uniform,
        # the data at each round start for sd6 / phenomenological (stim's before_round_data_depolarization);
        # none for si1000, whose pass infers idles itself (and whose CZ rewrite takes no I gates).
        self.markers = {"bb-uniform": "all", "sd6": "data", "phenomenological": "data"}.get(noise or "", "none")
        self.data = list(range(n))
        self.starts = [c for c in tim.checks if tim.first[c] == 0]
        self.ends = [c for c in tim.checks if tim.last[c] == len(tim.cx_pairs) - 1]
        self.in_layer = [set(pairs) for pairs in tim.cx_pairs]
        self.nmeas = 0
        self.drec = 0
        self.rec: list[dict[tuple[str, int], int]] = [{} for _ in range(rounds)]  # round -> check -> record index

    def measure(self, cs: list[tuple[str, int]], rnd: int, reset_too: bool) -> None:
        """Measure (and reset, with ``reset_too``) the ancillas of checks ``cs``, X checks first, as round ``rnd``."""
        for kind in ("X", "Z"):
            group = [c for c in cs if c[0] == kind]
            if group:
                gate = ("MRX" if reset_too else "MX") if kind == "X" else ("MR" if reset_too else "M")
                self.circ.append(gate, [self.tim.anc[c] for c in group])
                for c in group:
                    self.rec[rnd][c] = self.nmeas
                    self.nmeas += 1

    def reset(self, cs: list[tuple[str, int]]) -> None:
        """Reset the ancillas of checks ``cs`` (X checks in ``|+>``, first)."""
        for kind, gate in (("X", "RX"), ("Z", "R")):
            group = [self.tim.anc[c] for c in cs if c[0] == kind]
            if group:
                self.circ.append(gate, group)

    def target(self, i: int) -> Any:
        """The ``rec[-k]`` target of absolute measurement index ``i``."""
        import stim

        return stim.target_rec(i - self.nmeas)

    def detectors(self, rnd: int) -> None:
        """Compare every check of round ``rnd`` with round ``rnd - 1`` (memory basis only in round 0)."""
        for c in self.tim.checks:
            if self.memory_basis_only and c[0] != self.basis:
                continue
            if rnd == 0 and c[0] != self.basis:
                continue  # first-round outcomes of the other basis are random
            tg = [self.target(self.rec[rnd][c])] + ([self.target(self.rec[rnd - 1][c])] if rnd else [])
            self.circ.append("DETECTOR", tg, [float(self.tim.xy[c][0]), float(self.tim.xy[c][1]), float(rnd)])

    def boundary(self, rnd: int) -> None:
        """The moment closing round ``rnd - 1`` and opening round ``rnd`` (data reset first, readout last)."""
        import stim

        r, data, starts, ends = self.rounds, self.data, self.starts, self.ends
        if rnd:
            both = [c for c in ends if rnd < r and self.tim.first[c] == 0]
            self.measure([c for c in ends if c not in both], rnd - 1, False)
            self.measure(both, rnd - 1, True)
            self.reset([c for c in starts if c not in both] if rnd < r else [])
        else:
            self.circ.append("R" if self.basis == "Z" else "RX", data)
            self.reset(starts)
        if rnd == r:
            tag = "noiseless" if self.noise == "bb-uniform" else ""  # IBM's circuits read the data out noiselessly
            self.circ.append(stim.CircuitInstruction("M" if self.basis == "Z" else "MX", data, tag=tag))
            self.drec = self.nmeas
            self.nmeas += self.n
        elif (self.markers == "data") or (self.markers == "all" and rnd):
            self.circ.append("I", data)
        if rnd:
            self.detectors(rnd - 1)

    def cx_moments(self, rnd: int) -> None:
        """Round ``rnd``'s CX moments, each with the resets and measurements of checks starting / ending there."""
        tim, in_layer = self.tim, self.in_layer
        for t in range(len(tim.cx_pairs)):
            self.circ.append("TICK")
            self.reset([c for c in tim.checks if tim.first[c] == t + 1])
            self.measure([c for c in tim.checks if tim.last[c] == t - 1], rnd, False)
            if tim.cx_pairs[t]:
                self.circ.append("CX", tim.cx_pairs[t])
            if self.markers == "all":
                idle = [q for q in self.data if q not in in_layer[t]]
                idle += [tim.anc[c] for c in tim.checks
                         if tim.first[c] < t < tim.last[c] and tim.anc[c] not in in_layer[t]]
                if idle:
                    self.circ.append("I", idle)
        self.circ.append("TICK")

    def readout_detectors(self, H: np.ndarray, L: np.ndarray) -> None:
        """The memory basis's checks (rows of ``H``) recomputed from the data readout, and the logicals ``L``."""
        for c in self.tim.checks:
            if c[0] != self.basis:
                continue
            tg = [self.target(self.drec + int(q)) for q in np.flatnonzero(H[c[1]])]
            tg.append(self.target(self.rec[self.rounds - 1][c]))
            xy = self.tim.xy[c]
            self.circ.append("DETECTOR", tg, [float(xy[0]), float(xy[1]), float(self.rounds)])
        for o in range(L.shape[0]):
            self.circ.append("OBSERVABLE_INCLUDE", [self.target(self.drec + int(q)) for q in np.flatnonzero(L[o])], [o])


def _with_noise(circ: Any, noise: str | None, p: float) -> Any:
    """``circ`` with the noise model ``noise`` at strength ``p`` inserted (``circ`` itself when ``None``)."""
    if noise is None:
        return circ
    if noise == "si1000":
        return insert_noise(to_cz_circuit(circ), si1000_rules(p))
    if noise == "bb-uniform":
        return insert_noise(circ, bb_uniform_rules(p))
    if noise == "sd6":
        return insert_noise(circ, NoiseRules(after_2q=p, after_1q=p, reset_flip=p, measure_flip=p, identity=p))
    return insert_noise(circ, NoiseRules(measure_flip=p, identity=p))  # phenomenological


def circuit_from_schedule(
    code: Any,
    tx: Any,
    tz: Any,
    *,
    rounds: int,
    noise: str | None,
    p: float | None = None,
    basis: str = "Z",
    memory_basis_only: bool = True,
    layout: Layout | None = None,
) -> Any:
    """The memory circuit of given CNOT layers, *without* the validity check (layers must be matchings).

    Same arguments and result as :func:`css_memory_circuit` (``tx``, ``tz`` as in
    :func:`coloration_schedule`; layer values need not be contiguous). A schedule that fails
    :func:`schedule_violations` gives non-deterministic detectors (stim's
    ``detector_error_model`` raises), which is what tests of the condition need.
    """
    import stim

    r = check_positive_int(rounds, "rounds")
    b = check_basis(basis)
    nz, pf = _noise(noise, p)
    lay = css_layout(code) if layout is None else layout
    hx, hz = np.asarray(code.hx, dtype=np.uint8), np.asarray(code.hz, dtype=np.uint8)
    tx, tz = np.asarray(tx, dtype=np.int64), np.asarray(tz, dtype=np.int64)
    _check_matchings(hx, hz, tx, tz)
    n = code.n
    tim = _timing(hx, hz, tx, tz, lay, n)

    circ = stim.Circuit()
    for q in range(n):
        circ.append("QUBIT_COORDS", [q], [float(v) for v in lay.data[q]])
    for c in tim.checks:
        circ.append("QUBIT_COORDS", [tim.anc[c]], [float(v) for v in tim.xy[c]])
    writer = _RoundWriter(circ, tim, n, r, b, nz, memory_basis_only)
    for rnd in range(r + 1):
        writer.boundary(rnd)
        if rnd < r:
            writer.cx_moments(rnd)
    writer.readout_detectors(hz if b == "Z" else hx, code.lz if b == "Z" else code.lx)
    return _with_noise(circ, nz, pf)


def cx_layers(circuit: Any) -> int:
    """Number of moments (``TICK``-separated) holding a two-qubit gate: the circuit's CNOT depth.

    Args:
        circuit: a ``stim.Circuit`` (flattened).
    """
    import stim

    count, seen = 0, False
    for inst in circuit.flattened():
        if inst.name == "TICK":
            count += seen
            seen = False
        elif not seen:
            data = stim.gate_data(inst.name)
            seen = bool(data.is_two_qubit_gate and data.is_unitary)
    return count + seen
