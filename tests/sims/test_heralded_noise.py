"""Heralded noise (:mod:`qdecode.sims.heralded_noise`): erasure conversion, leakage and atom loss.

The passes must keep every original detector and observable deterministic and meaning what it
meant (the ``rec[-k]`` re-mapping), add exactly the heralds the model says, read each herald record
exactly once, and fire the herald detectors at the model's rates (exact binomial intervals, fixed
seeds). The recipe and task plumbing must leave circuits without heralded noise, their metadata and
strong ids as they were.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import stim
from scipy.stats import binom

from qdecode.decoders.registry import DecoderSpec
from qdecode.errors import InputError
from qdecode.heralds import HERALD_TAG
from qdecode.sims.circuits import build_circuit
from qdecode.sims.heralded_noise import (
    add_heralded_noise,
    add_leakage,
    add_loss,
    check_erasure_fraction,
    check_heralded_rate,
    erasure_convert,
    herald_detectors,
    herald_probability,
)
from qdecode.sims.recipe import RecipeError, parse_recipe
from qdecode.sims.tasks import CircuitRecipe, SweepTask, describe_task

#: a false-failure probability for each statistical check (two-sided exact binomial interval)
ALPHA = 1e-6


def _surface(p=0.001, d=3, rounds=3, basis="z"):
    return stim.Circuit.generated(f"surface_code:rotated_memory_{basis}", distance=d, rounds=rounds,
                                  after_clifford_depolarization=p, before_round_data_depolarization=p,
                                  before_measure_flip_probability=p, after_reset_flip_probability=p)


#: A hand-made circuit with a classically controlled gate after herald records, MPP, MX and a reset.
_FEEDBACK = stim.Circuit("""
    QUBIT_COORDS(0, 0) 0
    QUBIT_COORDS(1, 0) 1
    QUBIT_COORDS(2, 0) 2
    R 0 1 2
    X_ERROR(0.01) 0
    M 0
    DETECTOR(0, 0, 0) rec[-1]
    CX rec[-1] 1
    CX 0 1 1 2
    DEPOLARIZE2(0.02) 0 1 1 2
    CZ 0 2
    DEPOLARIZE2(0.01) 0 2
    M 0
    CX rec[-1] 2 rec[-2] 2
    MPP Z1*Z2
    DETECTOR(0, 0, 1) rec[-1] rec[-3]
    R 0
    CX 0 1
    DEPOLARIZE2(0.03) 0 1
    M 0 1 2
    DETECTOR(1, 0, 2) rec[-2] rec[-3]
    DETECTOR(2, 0, 2) rec[-1] rec[-2] rec[-4]
    OBSERVABLE_INCLUDE(0) rec[-1] rec[-2] rec[-6]
""")

PASSES = {
    "erasure": lambda c: erasure_convert(c, 0.3),
    "erasure-full": lambda c: erasure_convert(c, 1.0),
    "leakage": lambda c: add_leakage(c, 0.01),
    "loss": lambda c: add_loss(c, 0.01),
    "all": lambda c: add_heralded_noise(c, erasure_fraction=0.5, leakage=0.01, loss=0.02),
}
CIRCUITS = {
    "stim-surface-z": lambda: _surface(),
    "stim-surface-x": lambda: _surface(basis="x", rounds=4),
    "surface-si1000": lambda: build_circuit("surface", d=3, noise="si1000", p=0.001),
    "color-xyz": lambda: build_circuit("color", d=3, noise="sd6", p=0.001, basis="XYZ"),
    "bb72": lambda: build_circuit("bb72_12_6", noise="bb-uniform", p=0.001, rounds=2),
    "feedback": lambda: _FEEDBACK.copy(),
}


# ------------------------------------------------------------------ helpers
def _records(circuit):
    """(herald record indices of each qubit in order, list of (tag, record set) of each detector)."""
    heralds: list[tuple[int, int]] = []  # (absolute record, qubit)
    detectors: list[tuple[str, frozenset]] = []
    count = 0
    for inst in circuit.flattened():
        if inst.name == "DETECTOR":
            recs = frozenset(count + t.value for t in inst.targets_copy())
            detectors.append((inst.tag, recs))
        if inst.name == "HERALDED_ERASE":
            heralds += [(count + i, t.value) for i, t in enumerate(inst.targets_copy())]
        count += inst.num_measurements
    return heralds, detectors


def _error_table(dem, drop=frozenset()):
    """{(detectors, observables): p} of ``dem``'s errors touching no detector of ``drop``, the other
    detectors renumbered in order (errors with the same symptoms combined as independent)."""
    keep = [i for i in range(dem.num_detectors) if i not in drop]
    new = {old: i for i, old in enumerate(keep)}
    table: dict = {}
    for inst in dem.flattened():
        if inst.type != "error":
            continue
        targets = inst.targets_copy()
        dets = {t.val for t in targets if t.is_relative_detector_id()}
        if dets & drop:
            continue
        obs = tuple(sorted(t.val for t in targets if t.is_logical_observable_id()))
        key = (tuple(sorted(new[d] for d in dets)), obs)
        p, q = table.get(key, 0.0), inst.args_copy()[0]
        table[key] = p * (1 - q) + q * (1 - p)
    return table


def _scaled_depolarize2(circuit, factor):
    """The flattened circuit with every DEPOLARIZE2(p) -> DEPOLARIZE2(factor p) (dropped at 0)."""
    out = stim.Circuit()
    for inst in circuit.flattened():
        if inst.name == "DEPOLARIZE2":
            p = factor * inst.gate_args_copy()[0]
            if p > 0:
                out.append(stim.CircuitInstruction("DEPOLARIZE2", inst.targets_copy(), [p]))
        else:
            out.append(inst)
    return out


def _coords(dem, drop=frozenset()):
    coords = dem.get_detector_coordinates()
    return [coords[i] for i in range(dem.num_detectors) if i not in drop]


# ------------------------------------------------------------------ structure and determinism
def test_fraction_zero_returns_the_circuit_unchanged():
    c = _surface()
    assert str(erasure_convert(c, 0.0)) == str(c)
    assert str(add_leakage(c, 0)) == str(c) and str(add_loss(c, 0.0)) == str(c)
    assert add_heralded_noise(c) is c
    assert "HERALDED" not in str(add_heralded_noise(c, erasure_fraction=0.0))


def test_erasure_conversion_of_one_gate_layer():
    c = stim.Circuit("QUBIT_COORDS(0, 0) 0\nQUBIT_COORDS(1, 0) 1\nR 0 1\nCX 0 1\nDEPOLARIZE2(0.02) 0 1\nM 0 1\n"
                     "DETECTOR(0, 0, 0) rec[-2]\nOBSERVABLE_INCLUDE(0) rec[-1]")
    out = erasure_convert(c, 0.25)
    assert str(out).splitlines()[4:] == [
        "DEPOLARIZE2(0.015) 0 1",
        "HERALDED_ERASE(0.0025) 0 1",
        "DETECTOR[herald](0, 0, 0) rec[-2]",
        "DETECTOR[herald](1, 0, 0) rec[-1]",
        "M 0 1",
        "DETECTOR(0, 0, 0) rec[-2]",
        "OBSERVABLE_INCLUDE(0) rec[-1]",
    ]
    full = erasure_convert(c, 1.0)  # (1 - F) p = 0: the DEPOLARIZE2 is omitted
    assert "DEPOLARIZE2" not in str(full) and "HERALDED_ERASE(0.01) 0 1" in str(full)


def test_remapped_classical_control_targets():
    out = add_loss(_FEEDBACK, 0.01)
    text = str(out)
    # CX 0 1 1 2 and CZ 0 2 add 6 herald records between the two M 0: the feedback reaches further back
    assert "CX rec[-1] 2 rec[-8] 2" in text
    assert "CX rec[-1] 1" in text  # before any herald: unchanged


@pytest.mark.parametrize("circuit_name", sorted(CIRCUITS))
@pytest.mark.parametrize("pass_name", sorted(PASSES))
def test_original_detectors_stay_deterministic_and_heralds_are_read_once(circuit_name, pass_name):
    c = CIRCUITS[circuit_name]()
    out = PASSES[pass_name](c)
    heralds = herald_detectors(out)
    assert heralds and out.num_detectors == c.num_detectors + len(heralds)
    assert out.num_observables == c.num_observables
    dem = out.detector_error_model(approximate_disjoint_errors=True)  # stim derives a DEM: all deterministic
    assert herald_detectors(dem) == heralds
    assert dem.num_detectors - len(herald_detectors(dem)) == c.num_detectors
    dets, obs = out.without_noise().compile_detector_sampler(seed=3).sample(64, separate_observables=True)
    assert not dets.any() and not obs.any()
    # every herald record is read by exactly one herald detector, and herald detectors read only heralds
    records, detectors = _records(out)
    read = [r for tag, recs in detectors if tag == HERALD_TAG for r in recs]
    assert sorted(read) == sorted(r for r, _ in records)
    assert all(not (recs & {r for r, _ in records}) for tag, recs in detectors if tag != HERALD_TAG)
    # the original detectors keep their coordinates and order
    original = c.detector_error_model(approximate_disjoint_errors=True)
    assert _coords(dem, frozenset(heralds)) == _coords(original)


@pytest.mark.parametrize("circuit_name", sorted(CIRCUITS))
@pytest.mark.parametrize("fraction", [0.0, 0.4, 1.0])
def test_errors_without_heralds_are_the_original_model(circuit_name, fraction):
    """Leakage and loss leave the original errors alone; erasure conversion scales DEPOLARIZE2 by (1 - F).
    So the DEM restricted to errors that fire no herald, herald detectors removed, is the original's."""
    c = CIRCUITS[circuit_name]()
    out = add_heralded_noise(c, erasure_fraction=fraction, leakage=0.01, loss=0.02)
    dem = out.detector_error_model(approximate_disjoint_errors=True)
    want = _scaled_depolarize2(c, 1 - fraction).detector_error_model(approximate_disjoint_errors=True)
    got = _error_table(dem, frozenset(herald_detectors(dem)))
    expected = _error_table(want)
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[k], expected[k], rel_tol=1e-9) for k in expected)


def test_erasure_heralds_count_and_coordinates():
    c = _surface(rounds=3)
    out = erasure_convert(c, 0.5)
    depolarized = sum(len(inst.targets_copy()) for inst in c.flattened() if inst.name == "DEPOLARIZE2")
    assert len(herald_detectors(out)) == depolarized == 144  # 24 CX per round, 3 rounds, 2 qubits each
    dem = out.detector_error_model(approximate_disjoint_errors=True)
    coords = dem.get_detector_coordinates()
    qubit_xy = {tuple(v) for v in c.get_final_qubit_coordinates().values()}
    ts = [coords[i][2] for i in herald_detectors(dem)]
    assert all(tuple(coords[i][:2]) in qubit_xy for i in herald_detectors(dem))
    assert {t: ts.count(t) for t in set(ts)} == {0.0: 48, 1.0: 48, 2.0: 48}  # the round of the gate


def test_loss_heralds_data_qubits_at_the_final_readout_and_leakage_every_round():
    c = _surface(rounds=3)  # 8 ancillas measured every round, 9 data qubits read at the end
    loss, leak = add_loss(c, 0.01), add_leakage(c, 0.01)
    assert len(herald_detectors(loss)) == 8 * 3 + 9
    assert len(herald_detectors(leak)) == 8 * 3 + 9 * 3
    data = {q for q, xy in c.get_final_qubit_coordinates().items() if xy[0] % 2 == 1}
    for out, data_groups in ((loss, 9), (leak, 27)):
        records, detectors = _records(out)
        qubit_of = dict(records)
        groups = [recs for tag, recs in detectors if tag == HERALD_TAG]
        assert all(len({qubit_of[r] for r in recs}) == 1 for recs in groups)  # one qubit per herald detector
        assert sum(qubit_of[next(iter(recs))] in data for recs in groups) == data_groups
    dem = loss.detector_error_model(approximate_disjoint_errors=True)
    coords = dem.get_detector_coordinates()
    final = [coords[i] for i in herald_detectors(dem) if coords[i][0] % 2 == 1]
    assert len(final) == 9 and all(xyt[2] == 3.0 for xyt in final)  # heralded with the final readout (t = rounds)


def test_mpp_closes_its_qubits_groups_and_mpad_closes_none():
    c = stim.Circuit("R 0 1 2\nCX 0 1 1 2\nMPAD 0\nMPP Z1*Z2\nM 0\nDETECTOR rec[-2]\nDETECTOR rec[-3]")
    out = str(add_loss(c, 0.01))
    mpp = out.index("MPP Z1*Z2")
    assert out[mpp:].splitlines()[1:3] == ["DETECTOR[herald] rec[-5] rec[-4]", "DETECTOR[herald] rec[-3]"]
    leak = str(add_leakage(c, 0.01)).splitlines()
    assert leak[leak.index("MPAD 0") + 1] == "MPP Z1*Z2"  # MPAD measures no qubit: no layer closes there


def test_combined_passes_keep_the_round_clock():
    out = add_heralded_noise(_surface(rounds=3), erasure_fraction=0.5, leakage=0.01, loss=0.01)
    dem = out.detector_error_model(approximate_disjoint_errors=True)
    coords = dem.get_detector_coordinates()
    ts = {coords[i][2] for i in herald_detectors(dem)}
    assert ts == {0.0, 1.0, 2.0, 3.0}  # rounds 0-2, and the final readout at t = rounds


def test_no_herald_coordinates_without_xyt_detectors():
    c = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2, after_clifford_depolarization=0.01)
    out = erasure_convert(c, 0.5)  # the repetition code's detectors are (x, t): no (x, y, t) to follow
    assert all(not inst.gate_args_copy() for inst in out.flattened() if inst.tag == HERALD_TAG)
    assert herald_detectors(out)


# ------------------------------------------------------------------ rates
def test_erasure_herald_rate_on_the_rotated_surface_code():
    p, fraction, shots = 0.01, 0.5, 50_000
    out = erasure_convert(_surface(p=p, rounds=3), fraction)
    heralds = herald_detectors(out)
    dets = out.compile_detector_sampler(seed=11).sample(shots)[:, heralds]
    rate = fraction * p / 2
    lo, hi = binom.interval(1 - ALPHA, dets.size, rate)
    assert lo <= dets.sum() <= hi, (dets.sum(), lo, hi)
    lo1, hi1 = binom.interval(1 - ALPHA / len(heralds), shots, rate)  # each herald on its own
    per = dets.sum(axis=0)
    assert per.min() >= lo1 and per.max() <= hi1, (per.min(), per.max(), lo1, hi1)


@pytest.mark.parametrize("make", [add_leakage, add_loss])
def test_grouped_herald_rates(make):
    """A herald detector over n erasure records fires with P(odd count) = (1 - (1 - 2P)^n) / 2."""
    p, shots = 0.02, 20_000
    out = make(_surface(p=0.001, rounds=3), p)
    _, detectors = _records(out)
    sizes = np.array([len(recs) for tag, recs in detectors])
    heralds = np.array(herald_detectors(out))
    dets = out.compile_detector_sampler(seed=5).sample(shots)
    for n in sorted(set(sizes[heralds])):
        cols = heralds[sizes[heralds] == n]
        fired = dets[:, cols].sum()
        lo, hi = binom.interval(1 - ALPHA, shots * len(cols), herald_probability(int(n), p))
        assert lo <= fired <= hi, (n, fired, lo, hi)


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, True, "0.5"])
def test_bad_erasure_fraction(bad):
    with pytest.raises(InputError, match=r"erasure_fraction must lie in \[0, 1\]"):
        erasure_convert(_surface(), bad)
    with pytest.raises(InputError, match=r"--erasure-fraction must lie in \[0, 1\]"):
        check_erasure_fraction(bad, "--erasure-fraction")


@pytest.mark.parametrize("bad", [-0.01, 1.0, 2.0, math.nan, math.inf])
def test_bad_leakage_and_loss(bad):
    with pytest.raises(InputError, match=r"leakage must lie in \[0, 1\)"):
        add_leakage(_surface(), bad)
    with pytest.raises(InputError, match=r"loss must lie in \[0, 1\)"):
        add_heralded_noise(_surface(), loss=bad)
    with pytest.raises(InputError, match=r"leak must lie in \[0, 1\)"):
        check_heralded_rate(bad, "leak")
    with pytest.raises(InputError, match="leakage must lie"):
        CircuitRecipe(code="surface", noise="sd6", p=0.001, d=3, leakage=bad)


def test_nothing_to_act_on_is_an_error():
    phenomenological = build_circuit("surface", d=3, noise="phenomenological", p=0.01)
    with pytest.raises(InputError, match="no two-qubit depolarizing noise"):
        add_heralded_noise(phenomenological, erasure_fraction=0.5)
    with pytest.raises(InputError, match="noise 'phenomenological': .*DEPOLARIZE2"):
        CircuitRecipe(code="surface", noise="phenomenological", p=0.01, d=3, erasure_fraction=0.5).build()
    with pytest.raises(InputError, match="no two-qubit gate"):
        add_heralded_noise(stim.Circuit("X_ERROR(0.1) 0\nM 0\nDETECTOR rec[-1]"), loss=0.1)


# ------------------------------------------------------------------ recipes and tasks
def test_recipe_without_heralded_noise_is_unchanged():
    plain = CircuitRecipe(code="surface", noise="sd6", p=0.002, d=3)
    assert plain.metadata() == {"code": "surface", "noise": "sd6", "p": 0.002, "r": 3, "b": "Z", "d": 3}
    assert str(plain.build()) == str(build_circuit("surface", d=3, noise="sd6", p=0.002))
    explicit = CircuitRecipe(code="surface", noise="sd6", p=0.002, d=3, erasure_fraction=0.0, leakage=0, loss=0.0)
    spec = DecoderSpec.parse("pymatching")
    assert describe_task(SweepTask(decoder=spec, recipe=plain)).strong_id == \
        describe_task(SweepTask(decoder=spec, recipe=explicit)).strong_id


def test_recipe_with_heralded_noise():
    r = CircuitRecipe(code="surface", noise="sd6", p=0.002, d=3, erasure_fraction=0.5, leakage=0.001, loss=0.002)
    meta = r.metadata()
    assert (meta["F"], meta["leak"], meta["loss"]) == (0.5, 0.001, 0.002)
    want = add_heralded_noise(build_circuit("surface", d=3, noise="sd6", p=0.002), erasure_fraction=0.5,
                              leakage=0.001, loss=0.002)
    assert str(r.build()) == str(want)
    only_loss = CircuitRecipe(code="surface", noise="sd6", p=0.002, d=3, loss=0.01).metadata()
    assert "loss" in only_loss and "F" not in only_loss and "leak" not in only_loss
    task = SweepTask(decoder=DecoderSpec.parse("pymatching"), recipe=r)
    assert "F=0.5" in task.describe() and "leak=0.001" in task.describe()


def test_recipe_keys_expand_as_a_product():
    table = {"code": "surface", "d": 3, "noise": "sd6", "p": [0.001, 0.002], "decoders": ["pymatching"],
             "erasure_fraction": [0, 0.5], "loss": [0.0, 0.01, 0.02]}
    recipe = parse_recipe({"tasks": [table]})
    assert len(recipe.tasks) == 2 * 2 * 3
    points = {(t.recipe.p, t.recipe.erasure_fraction, t.recipe.loss, t.recipe.leakage) for t in recipe.tasks}
    assert len(points) == 12 and all(leak == 0.0 for *_, leak in points)


@pytest.mark.parametrize("key, value, message", [
    ("erasure_fraction", 1.2, r"erasure_fraction must lie in \[0, 1\], got 1.2"),
    ("leakage", [0.01, 1], r"leakage must lie in \[0, 1\), got 1"),
    ("loss", True, "loss must be a number"),
    ("loss", [], "loss is an empty list"),
])
def test_recipe_bad_heralded_values(key, value, message):
    table = {"code": "surface", "d": 3, "noise": "sd6", "p": 0.001, "decoders": ["pymatching"], key: value}
    with pytest.raises(RecipeError, match=message):
        parse_recipe({"tasks": [table]}, source="r.toml")


def test_recipe_heralded_keys_need_a_catalogue_circuit():
    classical = {"code": "bch63_45", "noise": "awgn", "ebn0": 2.0, "decoders": ["bm"], "loss": 0.01}
    with pytest.raises(RecipeError, match="'loss' does not apply to the classical code"):
        parse_recipe({"tasks": [classical]})
    user = {"dem": "nowhere.dem", "decoders": ["pymatching"], "erasure_fraction": 0.5}
    with pytest.raises(RecipeError, match="'erasure_fraction' does not apply to a user's circuit"):
        parse_recipe({"tasks": [user]})
