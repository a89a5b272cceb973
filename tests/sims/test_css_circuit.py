"""Coloration memory circuits for arbitrary CSS codes (sims/css_circuit.py, arXiv:2109.14609)."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.codes.catalog import get_code
from qdecode.codes.css import CSSCode
from qdecode.codes.surface import rotated_surface_code
from qdecode.sims.circuits import (
    SX_ORDER,
    SZ_ORDER,
    _bb_coords,
    _bb_neighbours,
    bb_memory_circuit,
    build_circuit,
    circuit_metadata,
    detector_bases,
    keep_detectors_of_basis,
)
from qdecode.sims.css_circuit import (
    CSS_NOISE,
    SCHEDULES,
    circuit_from_schedule,
    coloration_schedule,
    css_layout,
    css_memory_circuit,
    cx_layers,
    edge_coloring,
    schedule_violations,
)

HAMMING = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]], dtype=np.uint8)


def _toric(L: int) -> CSSCode:
    """Toric code as the hypergraph product of the length-L cyclic repetition code."""
    H = (np.eye(L, dtype=np.uint8) + np.roll(np.eye(L, dtype=np.uint8), 1, axis=1)) % 2
    eye = np.eye(L, dtype=np.uint8)
    hx = np.hstack([np.kron(H, eye), np.kron(eye, H.T)])
    hz = np.hstack([np.kron(eye, H), np.kron(H.T, eye)])
    return CSSCode(hx=hx, hz=hz, d=L, name=f"toric{L}")


def _bare(code: CSSCode) -> CSSCode:
    """The same code without meta: index layout, plain König colouring (no hook preference)."""
    return CSSCode(hx=code.hx, hz=code.hz, lx=code.lx, lz=code.lz, d=code.d, name=f"{code.name}-bare")


CODES = {
    "surface3": lambda: rotated_surface_code(3),
    "surface5": lambda: rotated_surface_code(5),
    "bb72": lambda: get_code("bb72_12_6"),
    "steane": lambda: CSSCode(hx=HAMMING, hz=HAMMING, d=3, name="steane"),
    "toric3": lambda: _toric(3),
}
# Interleaving is valid where the code gives a hook-aware preference (surface geometry, IBM's BB order).
INTERLEAVED = ("surface3", "surface5", "bb72")


# ------------------------------------------------------------- edge colouring
@pytest.mark.parametrize("seed", range(6))
def test_edge_coloring_is_proper_with_delta_colours(seed):
    rng = np.random.default_rng(seed)
    H = (rng.random((17, 23)) < 0.3).astype(np.uint8)
    T = edge_coloring(H)
    delta = max(H.sum(0).max(), H.sum(1).max())
    assert np.array_equal(T >= 0, H != 0) and T.max() < delta
    for M in (T, T.T):  # no colour twice at a row or a column
        for row in M:
            v = row[row >= 0]
            assert np.unique(v).size == v.size
    assert np.array_equal(T, edge_coloring(H))  # deterministic


def test_edge_coloring_keeps_a_proper_preference_and_rejects_too_few_colours():
    H = np.ones((3, 3), dtype=np.uint8)
    pref = (np.arange(3)[:, None] + np.arange(3)[None, :]) % 3  # a Latin square: proper
    assert np.array_equal(edge_coloring(H, preferred=pref), pref)
    with pytest.raises(ValueError, match="maximum degree"):
        edge_coloring(H, num_colors=2)


# -------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", CODES)
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("basis", ["X", "Z"])
@pytest.mark.parametrize("memory_basis_only", [True, False])
def test_noiseless_circuit_is_deterministic(name, schedule, basis, memory_basis_only):
    code = CODES[name]()
    if schedule == "coloration-interleaved" and name not in INTERLEAVED:
        with pytest.raises(ValueError, match="use schedule='coloration'"):
            css_memory_circuit(code, rounds=2, noise=None, schedule=schedule)
        return
    c = css_memory_circuit(code, rounds=3, noise=None, basis=basis, schedule=schedule,
                           memory_basis_only=memory_basis_only)
    assert c.num_detectors > 0 and c.num_observables == code.k
    assert c.detector_error_model().num_errors == 0  # raises on non-deterministic detectors / observables
    dets, obs = c.compile_detector_sampler(seed=1).sample(64, separate_observables=True)
    assert not dets.any() and not obs.any()
    assert all(len(v) == 3 for v in c.get_detector_coordinates().values())
    kinds = set(detector_bases(c))
    assert kinds == ({basis} if memory_basis_only else {"X", "Z"})
    # (b) every noise model gives a DEM; stim also raises here on non-deterministic detectors
    for noise in CSS_NOISE:
        noisy = css_memory_circuit(code, rounds=2, noise=noise, p=0.002, basis=basis, schedule=schedule,
                                   memory_basis_only=memory_basis_only)
        assert noisy.detector_error_model(decompose_errors=False).num_errors > 0
        assert not noisy.without_noise().compile_detector_sampler(seed=2).sample(16).any()


def test_detector_layout_and_basis_filter():
    code = rotated_surface_code(3)
    both = css_memory_circuit(code, rounds=3, noise="sd6", p=0.001, memory_basis_only=False)
    only = css_memory_circuit(code, rounds=3, noise="sd6", p=0.001)
    # round 0: the 4 Z checks; rounds 1-2: 4 + 4; readout: 4
    assert (both.num_detectors, only.num_detectors) == (4 + 2 * 8 + 4, 4 * 4)
    assert keep_detectors_of_basis(both, "Z").num_detectors == only.num_detectors
    t = [v[2] for v in only.get_detector_coordinates().values()]
    assert t == sorted(t) and t[-1] == 3  # rounds in detector order; readout at t = rounds
    lay = css_layout(CODES["steane"]())
    assert lay.data.shape == (7, 2) and not lay.planar


# ------------------------------------------------------------------- depth
@pytest.mark.parametrize("name,schedule,depth", [
    ("surface3", "coloration", 8), ("surface3", "coloration-interleaved", 4),
    ("bb72", "coloration", 12), ("bb72", "coloration-interleaved", 7),
    ("steane", "coloration", 8), ("toric3", "coloration", 8),
])
def test_cnot_layers_per_round(name, schedule, depth):
    code = CODES[name]()
    tx, tz = coloration_schedule(code, schedule)
    assert np.unique(np.r_[tx[tx >= 0], tz[tz >= 0]]).size == depth
    assert cx_layers(css_memory_circuit(code, rounds=2, noise=None, schedule=schedule)) == 2 * depth
    if name == "bb72":
        assert cx_layers(bb_memory_circuit(code, rounds=2)) == 2 * 7  # Bravyi et al.: 7 CX layers of 8


def test_interleaved_bb_schedule_is_ibms_order():
    code = get_code("bb72_12_6")
    tx, tz = coloration_schedule(code, "coloration-interleaved")
    lay = css_layout(code)
    coords = {key: np.array(v, dtype=np.float64) for key, v in _bb_coords(code.meta).items()}
    assert np.array_equal(lay.data, np.vstack([coords["L"], coords["R"]]))
    assert np.array_equal(lay.x, coords["X"]) and np.array_equal(lay.z, coords["Z"])
    nx, nz = _bb_neighbours(code.meta)
    rows = np.arange(code.meta.half)
    for k in range(6):
        assert (tx[rows, nx[:, k]] == SX_ORDER.index(k)).all()
        assert (tz[rows, nz[:, k]] == SZ_ORDER.index(k)).all()


# --------------------------------------------------------- validity checker
def test_schedule_checker_accepts_valid_and_stim_rejects_invalid():
    code = rotated_surface_code(3)
    for schedule in SCHEDULES:
        assert schedule_violations(code.hx, code.hz, *coloration_schedule(code, schedule)) == []
    bb = get_code("bb72_12_6")
    assert schedule_violations(bb.hx, bb.hz, *coloration_schedule(bb, "coloration-interleaved")) == []
    # The interleaved König colouring without the geometric preference: matchings, but invalid.
    T = edge_coloring(np.vstack([code.hx, code.hz]))
    tx, tz = T[: code.hx.shape[0]], T[code.hx.shape[0]:]
    assert schedule_violations(code.hx, code.hz, tx, tz)
    with pytest.raises(ValueError, match="does not measure the stabilisers"):
        css_memory_circuit(code, rounds=2, noise=None, schedule=(tx, tz))
    bad = circuit_from_schedule(code, tx, tz, rounds=2, noise=None, memory_basis_only=False)
    with pytest.raises(ValueError):
        bad.detector_error_model()  # non-deterministic detectors
    with pytest.raises(ValueError, match="matching"):
        css_memory_circuit(code, rounds=2, noise=None, schedule=(np.where(tx >= 0, 0, -1), tz))


# --------------------------------------------------------- circuit distance
@pytest.mark.parametrize("d", [3, 5])
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("basis", ["X", "Z"])
def test_surface_circuit_distance(d, schedule, basis):
    code = rotated_surface_code(d)
    c = css_memory_circuit(code, rounds=d, noise="sd6", p=0.001, basis=basis, schedule=schedule)
    assert len(c.shortest_graphlike_error()) == d  # hook-aware order: no distance lost
    plain = css_memory_circuit(_bare(code), rounds=d, noise="sd6", p=0.001, basis=basis)
    assert 2 <= len(plain.shortest_graphlike_error()) <= d  # arbitrary order: hooks may cost distance


def test_plain_koenig_order_loses_distance_on_the_surface_code():
    c = css_memory_circuit(_bare(rotated_surface_code(3)), rounds=3, noise="sd6", p=0.001, basis="X")
    assert len(c.shortest_graphlike_error()) == 2  # a hook pair along the Z logical


def test_interleaved_surface_circuit_has_stims_dem_shape():
    for d in (3, 5):
        ours = css_memory_circuit(rotated_surface_code(d), rounds=d, noise="sd6", p=0.001,
                                  schedule="coloration-interleaved")
        ref = build_circuit("surface", d=d, noise="sd6", p=0.001, memory_basis_only=True)
        assert ours.num_detectors == ref.num_detectors
        assert ours.detector_error_model().num_errors == ref.detector_error_model().num_errors


# -------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("kw,match", [
    (dict(rounds=0), "rounds"), (dict(rounds=-2), "rounds"), (dict(rounds=1.5), "rounds"),
    (dict(p=0), "p must"), (dict(p=1), "p must"), (dict(p=-0.1), "p must"), (dict(p=float("nan")), "p must"),
    (dict(schedule="nope"), "schedule"), (dict(basis="Y"), "basis"), (dict(noise="nope"), "noise"),
    (dict(noise="code-capacity"), "code-capacity"),
])
def test_bad_inputs(kw, match):
    args = {**dict(rounds=2, noise="sd6", p=0.001), **kw}
    with pytest.raises(ValueError, match=match) as err:
        css_memory_circuit(rotated_surface_code(3), **args)
    assert "\n" not in str(err.value)


# ------------------------------------------------------------ build_circuit
def test_build_circuit_hookup():
    c = build_circuit("surface", d=3, noise="sd6", p=0.001, schedule="coloration", memory_basis_only=True)
    assert c == css_memory_circuit(rotated_surface_code(3), rounds=3, noise="sd6", p=0.001)
    assert len(c.shortest_graphlike_error()) == 3
    assert set(detector_bases(build_circuit("surface", d=3, noise="sd6", p=0.001, schedule="coloration"))) == {"X", "Z"}
    bb = build_circuit("bb72_12_6", rounds=2, noise="sd6", p=0.001, schedule="coloration-interleaved")
    assert set(detector_bases(bb)) == {"Z"} and cx_layers(bb) == 14
    bb.detector_error_model()
    assert circuit_metadata("bb72_12_6", noise="si1000", p=0.001, schedule="coloration")["schedule"] == "coloration"
    assert "schedule" not in circuit_metadata("bb72_12_6", noise="bb-uniform", p=0.001)  # strong ids unchanged
    assert build_circuit("surface", d=3, noise="sd6", p=0.001) == stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=3, rounds=3, after_clifford_depolarization=0.001,
        before_round_data_depolarization=0.001, before_measure_flip_probability=0.001,
        after_reset_flip_probability=0.001)  # the default is unchanged
    with pytest.raises(ValueError, match="unknown schedule"):
        build_circuit("surface", d=3, noise="sd6", p=0.001, schedule="nope")
    with pytest.raises(ValueError, match="schedule='coloration'"):
        build_circuit("bb72_12_6", noise="sd6", p=0.001)  # BB's dedicated circuit has bb-uniform only


# ----------------------------------------------------------------- LER
def test_bb72_sequential_is_worse_than_interleaved():
    """Sequential (12 layers) vs interleaved (IBM's 7) on BB72, bb-uniform p = 0.003, 6 rounds, BP+OSD-CS10."""
    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.problem import DecodingProblem, decoding_dem

    code = get_code("bb72_12_6")
    fails = {}
    for schedule in SCHEDULES:
        c = css_memory_circuit(code, rounds=6, noise="bb-uniform", p=0.003, schedule=schedule)
        dets, obs = c.compile_detector_sampler(seed=7).sample(600, separate_observables=True)
        pred = BpOsdDecoder(DecodingProblem.from_dem(decoding_dem(c))).predict_observables_batch(dets.astype(np.uint8))
        fails[schedule] = int(np.any(pred != obs, axis=1).sum())
    # about 0.14 vs 0.01-0.02 per shot (Bravyi's circuit: ~0.019)
    assert 40 <= fails["coloration"] <= 150 and fails["coloration-interleaved"] <= 30
