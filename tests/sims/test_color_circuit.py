"""Triangular colour codes (codes/color.py) and their superdense circuits (sims/color_circuit.py)."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.codes.catalog import get_code, get_entry
from qdecode.codes.color import color_layout, triangular_color_code
from qdecode.codes.distance import css_distance
from qdecode.codes.gf2 import rank as gf2_rank
from qdecode.sims.circuits import build_circuit, circuit_metadata
from qdecode.sims.color_circuit import (
    COLOR_NOISE,
    SCHEDULE,
    color_code_capacity_circuit,
    cx_layers,
    schedule_violations,
    superdense_memory_circuit,
)
from qdecode.sims.dem_distance import circuit_distance


@pytest.mark.parametrize("d", [3, 5, 7, 9])
def test_code_parameters_and_colouring(d):
    code = triangular_color_code(d)
    lay = color_layout(d)
    n = (3 * d * d + 1) // 4
    assert code.n == n and code.hx.shape == (lay.m, n) and lay.m == (n - 1) // 2
    assert not (code.hx.astype(np.int64) @ code.hz.T.astype(np.int64) % 2).any()  # self-dual CSS
    assert n - 2 * gf2_rank(code.hx) == 1
    assert code.lx.sum() == d and not (code.hz.astype(np.int64) @ code.lx[0] % 2).any()
    weights = code.hx.sum(axis=1)
    assert set(weights.tolist()) <= {4, 6} and (weights == 4).sum() == 3 * (d - 1) // 2  # (d-1)/2 per side
    # proper 3-colouring: plaquettes sharing a qubit have different colours
    overlap = code.hx.astype(np.int64) @ code.hx.T.astype(np.int64)
    i, j = np.nonzero(np.triu(overlap, 1))
    assert (lay.colors[i] != lay.colors[j]).all()
    # every data qubit is reached from its plaquettes through offsets of one parity only
    for q in range(n):
        ks = {k % 2 for k in range(6) for p in range(lay.m) if lay.support[p, k] == q}
        assert len(ks) == 1


@pytest.mark.parametrize("d", [3, 5])
def test_exact_distance(d):
    code = triangular_color_code(d)
    res = css_distance(code)
    assert res.optimal and res.distance == d
    entry = get_entry("color")
    assert entry.n_at(d) == code.n and get_code("color", d).n == code.n


@pytest.mark.parametrize("d", [4, 1, 2.5, "x"])
def test_bad_distance(d):
    with pytest.raises(ValueError, match="odd integer >= 3"):
        color_layout(d)


@pytest.mark.parametrize("d", [3, 5, 7, 9])
def test_schedule_is_valid(d):
    assert schedule_violations(d) == []
    layers = cx_layers(d)
    assert len(layers) == 1 + max(SCHEDULE[0] + SCHEDULE[1])


def test_invalid_schedules_are_named():
    assert "not 6 distinct" in schedule_violations(3, ((0, 0, 1, 2, 3, 4), SCHEDULE[1]))[0]
    assert "a schedule is a pair" in schedule_violations(3, "abc")[0]
    # a translation-invariant order that is valid in the bulk only: boundary plaquettes read garbage
    bulk_only = ((0, 1, 2, 3, 4, 5), (1, 0, 3, 6, 5, 2))
    assert schedule_violations(3, bulk_only)
    with pytest.raises(ValueError, match="invalid superdense schedule"):
        superdense_memory_circuit(3, rounds=2, schedule=bulk_only)
    # an order that uses a qubit twice in a layer
    assert "twice" in " ".join(schedule_violations(3, ((0, 1, 2, 3, 4, 5), (0, 1, 2, 3, 4, 5))))


@pytest.mark.parametrize("d", [3, 5])
@pytest.mark.parametrize("basis", ["X", "Z"])
@pytest.mark.parametrize("rounds", [1, 3])
@pytest.mark.parametrize("memory_basis_only", [False, True])
def test_noiseless_circuits_are_deterministic(d, basis, rounds, memory_basis_only):
    c = superdense_memory_circuit(d, rounds=rounds, basis=basis, memory_basis_only=memory_basis_only)
    c.detector_error_model()  # stim raises on a non-deterministic detector or observable
    sample = c.compile_detector_sampler(seed=1).sample(20, append_observables=True)
    assert not sample.any()
    coords = c.get_detector_coordinates()
    colours = {int(v[3]) for v in coords.values()}
    assert all(len(v) == 4 for v in coords.values())
    want = {0, 1, 2} if basis == "X" else {3, 4, 5}
    if not memory_basis_only and rounds > 1:
        want = {0, 1, 2, 3, 4, 5}
    assert colours == want


@pytest.mark.parametrize("noise", [n for n in COLOR_NOISE])
def test_every_noise_model_builds_and_chromobius_compiles(noise):
    import chromobius
    for basis in "XZ":
        c = build_circuit("color", d=5, noise=noise, p=0.001, basis=basis)
        dem = c.detector_error_model()
        assert dem.num_errors > 0 and c.num_observables == 1
        chromobius.compile_decoder_for_dem(dem)
    meta = circuit_metadata("color", d=5, noise=noise, p=0.001)
    assert meta["n"] == 19 and meta["memory_basis_only"] is False


def test_bad_arguments():
    with pytest.raises(ValueError, match="odd integer"):
        build_circuit("color", d=4, noise="sd6", p=0.001)
    with pytest.raises(ValueError, match="unknown noise model 'gaussian'"):
        build_circuit("color", d=3, noise="gaussian", p=0.001)
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        build_circuit("color", d=3, noise="sd6", p=1.5)
    with pytest.raises(ValueError, match="basis"):
        superdense_memory_circuit(3, rounds=2, basis="Y")


@pytest.mark.parametrize("basis", ["X", "Z"])
def test_circuit_distance_d3(basis):
    c = superdense_memory_circuit(3, rounds=3, basis=basis, noise="sd6", p=0.001)
    res = circuit_distance(c.detector_error_model())
    assert res.optimal and res.distance == 3


def test_circuit_distance_d5_upper_bound():
    # stim's heuristic search returns the lightest undetectable logical error it finds (an upper bound);
    # hook errors of a poor schedule show up as weight 3 or 4 here.
    for basis in "XZ":
        c = superdense_memory_circuit(5, rounds=5, basis=basis, noise="sd6", p=0.001)
        err = c.search_for_undetectable_logical_errors(
            dont_explore_detection_event_sets_with_size_above=4, dont_explore_edges_with_degree_above=4,
            dont_explore_edges_increasing_symptom_degree=False)
        assert len(err) == 5


def test_code_capacity_circuit_corrects_single_errors():
    import chromobius
    c = color_code_capacity_circuit(5, p=0.01)
    dem = c.detector_error_model()
    dec = chromobius.compile_decoder_for_dem(dem)
    code = triangular_color_code(5)
    # every single X error on the data (a Z-basis memory sees X errors): syndrome = the plaquettes it touches
    syn = code.hz.T.astype(np.uint8)  # (n, m)
    packed = np.ascontiguousarray(np.packbits(syn, axis=1, bitorder="little"))
    pred = dec.predict_obs_flips_from_dets_bit_packed(packed)[:, 0] & 1
    assert (pred == code.lz[0]).all()


def test_foreign_superdense_circuit_matches_ours_in_structure():
    """Gidney & Jones' own superdense d = 5 circuit (tests/data/chromobius) and ours: same qubits,
    detectors and annotation convention, both decodable by Chromobius."""
    theirs = stim.Circuit.from_file("tests/data/chromobius/superdense_color_code_d5_r20_p1000.stim")
    ours = superdense_memory_circuit(5, rounds=20, basis="X", noise="bb-uniform", p=0.001)
    assert theirs.num_qubits == ours.num_qubits == 37
    assert theirs.num_detectors == ours.num_detectors == 360
    colours = lambda c: sorted(int(v[3]) for v in c.get_detector_coordinates().values())  # noqa: E731
    assert colours(theirs) == colours(ours)


def test_xyz_basis():
    from qdecode.decoders.base import DecoderInputError
    from qdecode.decoders.registry import decoder
    from qdecode.problem import DecodingProblem

    c = build_circuit("color", d=5, noise="phenomenological", p=0.002, basis="XYZ")
    ref = stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=5, before_round_data_depolarization=0.002,
                                 before_measure_flip_probability=0.002)
    assert c == ref
    assert circuit_metadata("color", d=5, noise="sd6", p=0.002, basis="XYZ")["basis"] == "XYZ"
    problem = DecodingProblem.from_dem(c.detector_error_model())
    with pytest.raises(DecoderInputError, match=r"4th coordinate .*`--basis XYZ` circuits have none"):
        decoder("chromobius", problem)
    dets, obs = c.compile_detector_sampler(seed=3).sample(400, separate_observables=True)
    pred = decoder("bposd", problem).predict_observables_batch(dets.astype(np.uint8))
    assert (pred != obs).any(axis=1).sum() < 0.3 * max(1, obs.any(axis=1).sum())
    with pytest.raises(ValueError, match="'XYZ' for the colour code"):
        build_circuit("surface", d=3, noise="sd6", p=0.001, basis="XYZ")
    with pytest.raises(ValueError, match="not available for the XYZ"):
        build_circuit("color", d=3, noise="bb-uniform", p=0.001, basis="XYZ")


def test_recipe_accepts_xyz(tmp_path):
    from qdecode.sims.recipe import load_recipe

    f = tmp_path / "r.toml"
    f.write_text('[[tasks]]\ncode = "color"\nd = [3]\nnoise = "sd6"\nbasis = ["Z", "XYZ"]\np = [0.001]\n'
                 'decoders = ["bposd"]\n')
    rec = load_recipe(str(f))
    assert len(rec.tasks) == 2
