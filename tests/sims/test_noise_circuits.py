"""Noise passes and memory circuits (surface and BB), checked against IBM's published circuits."""

from __future__ import annotations

import collections
import gzip
from pathlib import Path

import numpy as np
import pytest
import stim

from qdecode.problem import DecodingProblem
from qdecode.sims.circuits import (
    build_circuit,
    circuit_metadata,
    detector_bases,
    keep_detectors_of_basis,
)
from qdecode.sims.noise import NOISE_MODELS, NoiseRules, insert_noise, to_cz_circuit

# IBM's circuits from the Relay-BP repository; see tests/data/PROVENANCE.md.
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "ibm_bb"

COMBOS = [
    ("surface", dict(d=3, noise="sd6")),
    ("surface", dict(d=5, rounds=2, noise="si1000")),
    ("surface", dict(d=3, noise="phenomenological")),
    ("surface", dict(d=5, noise="code-capacity")),
    ("bb72_12_6", dict(rounds=2, noise="bb-uniform")),
    ("bb90_8_10", dict(rounds=1, noise="bb-uniform")),
    ("bb108_8_10", dict(rounds=2, noise="bb-uniform")),
    ("bb144_12_12", dict(rounds=1, noise="bb-uniform")),
    ("bb288_12_18", dict(rounds=1, noise="bb-uniform")),
    ("bb72_12_6", dict(noise="code-capacity")),
]


def _load_fixture(name: str) -> stim.Circuit:
    with gzip.open(FIXTURES / name, "rt") as f:
        return stim.Circuit(f.read())


def _dem_stats(circuit: stim.Circuit) -> tuple[DecodingProblem, np.ndarray]:
    prob = DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=False))
    # P(detector fires) = (1 - prod_j (1 - 2 p_j)) / 2 over the columns touching it.
    log_terms = prob.H.astype(np.float64) @ np.log1p(-2 * prob.priors)
    return prob, (1 - np.exp(log_terms)) / 2


# ---------------------------------------------------------------- validation
def test_noise_model_names():
    assert set(NOISE_MODELS) == {"sd6", "si1000", "bb-uniform", "code-capacity", "phenomenological"}


@pytest.mark.parametrize("p", [0, 1, -0.1, 1.5, float("nan"), "abc"])
def test_bad_p(p):
    with pytest.raises(ValueError, match="p"):
        build_circuit("surface", d=3, noise="sd6", p=p)


def test_bad_names_and_missing_d():
    with pytest.raises(ValueError, match="valid names: surface, bb72_12_6"):
        build_circuit("no_such_code", d=3, noise="sd6", p=0.001)
    with pytest.raises(ValueError, match="valid names: sd6, si1000"):
        build_circuit("surface", d=3, noise="nope", p=0.001)
    with pytest.raises(ValueError, match="needs a distance"):
        build_circuit("surface", noise="sd6", p=0.001)
    with pytest.raises(ValueError, match="not available for code 'bb72_12_6'"):
        build_circuit("bb72_12_6", noise="sd6", p=0.001)
    with pytest.raises(ValueError, match="basis"):
        build_circuit("surface", d=3, noise="sd6", p=0.001, basis="Y")
    with pytest.raises(ValueError, match="rounds"):
        build_circuit("surface", d=3, rounds=0, noise="sd6", p=0.001)


def test_metadata():
    m = circuit_metadata("surface", d=5, noise="code-capacity", p=0.01, rounds=7)
    assert m["rounds"] == 1 and m["n"] == 25 and m["k"] == 1 and m["basis"] == "Z"
    m = circuit_metadata("bb144_12_12", noise="bb-uniform", p=0.003, basis="x")
    assert (m["n"], m["k"], m["d"], m["rounds"], m["basis"]) == (144, 12, 12, 12, "X")


# ------------------------------------------------------- determinism, shape
@pytest.mark.parametrize("code,kw", COMBOS)
@pytest.mark.parametrize("basis", ["X", "Z"])
@pytest.mark.parametrize("memory_basis_only", [True, False])
def test_noiseless_circuit_is_deterministic(code, kw, basis, memory_basis_only):
    c = build_circuit(code, p=0.001, basis=basis, memory_basis_only=memory_basis_only, **kw)
    clean = c.without_noise()
    clean.detector_error_model()  # raises on non-deterministic detectors / observables
    dets, obs = clean.compile_detector_sampler().sample(64, separate_observables=True)
    assert not dets.any() and not obs.any()
    assert c.num_detectors > 0 and c.num_observables >= 1
    coords = c.get_detector_coordinates()
    assert all(len(v) == 3 for v in coords.values())
    if memory_basis_only and kw["noise"] != "si1000":
        assert set(detector_bases(c)) == {basis}
    if kw["noise"] == "si1000":  # CZ form hides the check types; compare with the CX circuit
        ref = build_circuit(code, p=0.001, basis=basis, memory_basis_only=memory_basis_only, **{**kw, "noise": "sd6"})
        assert c.num_detectors == ref.num_detectors
    c.detector_error_model(decompose_errors=False)  # the noisy DEM builds


@pytest.mark.parametrize("d", [3, 5])
@pytest.mark.parametrize("noise", ["sd6", "si1000", "phenomenological"])
@pytest.mark.parametrize("basis", ["X", "Z"])
def test_surface_circuit_distance(d, noise, basis):
    c = build_circuit("surface", d=d, noise=noise, p=0.001, basis=basis, memory_basis_only=True)
    assert len(c.shortest_graphlike_error()) == d
    assert c.num_detectors == (d * d - 1) // 2 * (d + 1)


def test_surface_sd6_is_stims_circuit():
    ours = build_circuit("surface", d=3, rounds=4, noise="sd6", p=0.002)  # default: both bases
    ref = stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=3, rounds=4, after_clifford_depolarization=0.002,
        before_round_data_depolarization=0.002, before_measure_flip_probability=0.002,
        after_reset_flip_probability=0.002)
    assert ours == ref


def test_si1000_structure():
    p = 0.002
    c = build_circuit("surface", d=3, rounds=2, noise="si1000", p=p, basis="X", memory_basis_only=False)
    names = collections.Counter(inst.name for inst in c.flattened())
    assert names["CX"] == 0 and names["RX"] == 0 and names["MX"] == 0 and names["CZ"] > 0
    probs = {round(a, 12) for inst in c.flattened()
             if inst.name in ("DEPOLARIZE1", "DEPOLARIZE2", "X_ERROR", "M", "MR")
             for a in inst.gate_args_copy()}
    assert probs == {round(v, 12) for v in (p, p / 10, 2 * p, 5 * p)}
    for inst in c.flattened():
        if inst.name == "DEPOLARIZE2":
            assert inst.gate_args_copy() == [p]
        if inst.name in ("M", "MR"):
            assert inst.gate_args_copy() == [5 * p]
        if inst.name == "X_ERROR":
            assert inst.gate_args_copy() == [2 * p]
    # Same detectors / observables as the CX circuit it came from.
    ref = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=2)
    assert c.num_detectors == ref.num_detectors and c.num_measurements == ref.num_measurements


@pytest.mark.parametrize("task", ["surface_code:rotated_memory_x", "surface_code:rotated_memory_z"])
def test_to_cz_is_equivalent(task):
    ref = stim.Circuit.generated(task, distance=3, rounds=3)
    cz = to_cz_circuit(ref)
    assert {inst.name for inst in cz.flattened()} <= {"R", "M", "MR", "H", "CZ", "DETECTOR",
                                                       "OBSERVABLE_INCLUDE", "QUBIT_COORDS", "SHIFT_COORDS", "TICK"}
    # Preparation and measurement flips sit at equivalent places in both forms (X_ERROR after
    # R then H == Z_ERROR after RX), so the two detector error models must coincide.
    rules = NoiseRules(reset_flip=0.01, measure_flip=0.02)
    dem_ref = insert_noise(ref, rules).detector_error_model()
    dem_cz = insert_noise(cz, rules).detector_error_model()
    assert dem_cz.approx_equals(dem_ref, atol=1e-12)


def test_insert_noise_rules_and_errors():
    c = stim.Circuit("R 0 1 2\nTICK\nH 0\nTICK\nCX 0 1\nTICK\nM[noiseless] 2\nM 0 1")
    noisy = insert_noise(c, NoiseRules(after_2q=0.1, after_1q=0.01, reset_flip=0.2, measure_flip=0.3, idle=0.05))
    text = str(noisy)
    assert "X_ERROR(0.2) 0 1 2" in text and "DEPOLARIZE1(0.01) 0" in text
    assert "DEPOLARIZE2(0.1) 0 1" in text and "M(0.3) 0 1" in text and "M[noiseless] 2" in text
    # Qubit 2 idles in the H and CX moments (live between its reset and its measurement),
    # qubit 1 during H; nothing idles in the reset or measurement moments.
    moments = str(noisy).split("TICK")
    assert "DEPOLARIZE1(0.05) 1 2" in moments[1] and "DEPOLARIZE1(0.05) 2" in moments[2]
    assert "0.05" not in moments[0] and "0.05" not in moments[3]
    with pytest.raises(ValueError, match="noiseless"):
        insert_noise(stim.Circuit("R 0\nX_ERROR(0.1) 0\nM 0"), NoiseRules())


# ------------------------------------------------------------------- BB / IBM
def test_bb_code_capacity():
    c = build_circuit("bb72_12_6", noise="code-capacity", p=0.01, rounds=5)
    prob = DecodingProblem.from_dem(c.detector_error_model(decompose_errors=False))
    assert c.num_detectors == 36 and c.num_observables == 12
    assert prob.num_errors == 72  # one column per data qubit (X part of the depolarizing channel)
    np.testing.assert_allclose(prob.priors, 2 * 0.01 / 3)


def _timelines(c: stim.Circuit) -> dict[int, list[tuple]]:
    out: dict[int, list[tuple]] = collections.defaultdict(list)
    for inst in c.flattened():
        if inst.name in ("DETECTOR", "OBSERVABLE_INCLUDE", "QUBIT_COORDS", "TICK", "I"):
            continue
        args = tuple(inst.gate_args_copy())
        qs = [t.value for t in inst.targets_copy()]
        if inst.name in ("CX", "DEPOLARIZE2"):
            for a, b in zip(qs[::2], qs[1::2]):
                out[a].append((inst.name, args, "c", b))
                out[b].append((inst.name, args, "t", a))
        else:
            for q in qs:
                out[q].append((inst.name, args))
    return dict(out)


@pytest.mark.parametrize("basis", ["Z", "X"])
def test_bb72_matches_ibm_gate_for_gate(basis):
    fx = _load_fixture(f"bb72_12_6_memory{basis}_r6_p0.003.stim.gz")
    ours = build_circuit("bb72_12_6", noise="bb-uniform", p=0.003, basis=basis, memory_basis_only=False)
    # Per-qubit sequences of gates and noise channels (with partners and probabilities) agree.
    assert _timelines(ours) == _timelines(fx)


@pytest.mark.parametrize(
    "code,rounds,fname,dets,cols",
    [
        ("bb72_12_6", 6, "bb72_12_6_memory{b}_r6_p0.003.stim.gz", 252, 2232),
        ("bb144_12_12", 12, "bb144_12_12_memory{b}_r12_p0.003.stim.gz", 936, 8784),
    ],
)
@pytest.mark.parametrize("basis", ["Z", "X"])
def test_bb_dem_matches_ibm(code, rounds, fname, dets, cols, basis):
    fx = keep_detectors_of_basis(_load_fixture(fname.format(b=basis)), basis)
    ours = build_circuit(code, rounds=rounds, noise="bb-uniform", p=0.003, basis=basis)
    p_ours, rate_ours = _dem_stats(ours)
    p_fx, rate_fx = _dem_stats(fx)
    assert p_ours.num_detectors == p_fx.num_detectors == dets
    assert p_ours.num_errors == p_fx.num_errors == cols
    assert p_ours.num_observables == p_fx.num_observables == 12
    np.testing.assert_allclose(np.sort(p_ours.priors), np.sort(p_fx.priors), rtol=1e-9)
    np.testing.assert_allclose(np.sort(rate_ours), np.sort(rate_fx), rtol=1e-9)
    w_ours = np.sort(np.diff(p_ours.H.tocsc().indptr))
    w_fx = np.sort(np.diff(p_fx.H.tocsc().indptr))
    assert np.array_equal(w_ours, w_fx)


@pytest.mark.parametrize("p", ["0.001", "0.004"])
def test_bb144_other_p_match_ibm(p):
    fx = keep_detectors_of_basis(_load_fixture(f"bb144_12_12_memoryZ_r12_p{p}.stim.gz"), "Z")
    ours = build_circuit("bb144_12_12", noise="bb-uniform", p=float(p), basis="Z")
    _, r1 = _dem_stats(ours)
    _, r2 = _dem_stats(fx)
    assert abs(r1.sum() - r2.sum()) < 1e-9 * r2.sum()


def test_fixture_basis_split():
    fx = _load_fixture("bb72_12_6_memoryZ_r6_p0.003.stim.gz")
    kinds = collections.Counter(detector_bases(fx))
    assert kinds == {"Z": 252, "X": 180}
