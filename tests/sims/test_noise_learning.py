"""Noise learning from detection events: moments, estimators, sectors, class rescaling."""

from __future__ import annotations

import re

import numpy as np
import pytest
import stim

from qdecode.problem import decoding_dem
from qdecode.sims import noise_learning as nl
from qdecode.sims.circuits import build_circuit

D, P_TRUE, P_REF, SHOTS = 3, 0.005, 0.001, 300_000


@pytest.fixture(scope="module")
def surface():
    """d=3 sd6 surface memory: true circuit at 0.005, reference DEM at 0.001, 3e5 packed shots."""
    truth = build_circuit("surface", d=D, rounds=D, noise="sd6", p=P_TRUE)
    reference = decoding_dem(build_circuit("surface", d=D, rounds=D, noise="sd6", p=P_REF))
    dets = truth.compile_detector_sampler(seed=20260).sample(SHOTS, bit_packed=True)
    return truth, decoding_dem(truth), reference, dets


def _estimate(reference, dets, sectors):
    classes = nl.NoiseClasses.from_dem(reference, sectors)
    acc = nl.MomentAccumulator(classes.num_detectors, classes.pairs)
    acc.add(dets, bit_packed=True)
    return classes, nl.estimate_classes(classes, acc)


def _probs(dem) -> np.ndarray:
    return np.array([i.args_copy()[0] for i in dem.flattened() if i.type == "error"])


# ----------------------------------------------------------------------------- moments
def test_moments_match_dense_products_packed_unpacked_and_chunked(monkeypatch):
    rng = np.random.default_rng(5)
    x = (rng.random((3001, 21)) < 0.2).astype(np.uint8)
    pairs = np.array([[0, 1], [3, 20], [7, 7], [19, 2]])
    gram = x.T.astype(np.int64) @ x
    want = gram[pairs[:, 0], pairs[:, 1]]
    a = nl.MomentAccumulator(21, pairs)
    a.add(x)
    b = nl.MomentAccumulator(21, pairs)
    monkeypatch.setattr(nl, "CHUNK_SHOTS", 1000)  # several internal chunks, a ragged last one
    packed = np.packbits(x, axis=1, bitorder="little")
    b.add(packed[:1234], bit_packed=True)
    b.add(packed[1234:], bit_packed=True)
    for acc in (a, b):
        assert acc.shots == 3001
        np.testing.assert_array_equal(acc.ones, x.sum(axis=0))
        np.testing.assert_array_equal(acc.pair_ones, want)


def test_moments_reject_bad_shapes():
    acc = nl.MomentAccumulator(10, [[0, 1]])
    with pytest.raises(ValueError, match="10 detectors"):
        acc.add(np.zeros((4, 9), dtype=np.uint8))
    with pytest.raises(ValueError, match="2 bytes"):
        acc.add(np.zeros((4, 1), dtype=np.uint8), bit_packed=True)
    with pytest.raises(ValueError, match="0/1"):
        acc.add(np.full((4, 10), 2, dtype=np.uint8))
    with pytest.raises(ValueError, match="out of range"):
        nl.MomentAccumulator(3, [[0, 3]])


# ---------------------------------------------------------------------------- sectors
def test_sectors_from_dem_are_the_detector_bases(surface):
    truth, true_dem, _, _ = surface
    by_dem = {tuple(s) for s in nl.sectors_from_dem(true_dem)}
    by_circuit = {tuple(s) for s in nl.sectors_from_circuit(truth)}
    assert by_dem == by_circuit and len(by_circuit) == 2


# -------------------------------------------------------------------------- estimators
def test_per_sector_estimates_recover_true_class_probabilities(surface):
    """Stated tolerance at 3e5 shots: median relative error < 5%, 90th percentile < 12%
    (the statistical error of a class with p ~ 2e-3 is ~6%; 4e6 shots gave 0.4% median)."""
    truth, true_dem, reference, dets = surface
    classes, est = _estimate(reference, dets, truth)
    want, unmatched = classes.totals_of(true_dem)
    assert unmatched == 0 and not classes.heavy.any()
    assert np.all(est.status == nl.OK)
    rel = np.abs(est.raw / want - 1)
    for sel in (classes.is_pair, ~classes.is_pair):
        assert np.median(rel[sel]) < 0.05
        assert np.quantile(rel[sel], 0.9) < 0.12
    # and the reference is far off (5x), so this is not the reference echoed back
    assert np.median(np.abs(classes.reference_totals() / want - 1)) > 0.7


def test_all_detector_boundary_estimate_is_the_pitfall(surface):
    """Over all detectors at once, Y/CNOT mechanisms flip two X and two Z detectors and are
    missing from N(i): the boundary estimate goes wrong (even negative); per sector it does not."""
    truth, true_dem, reference, dets = surface
    everything = [np.arange(true_dem.num_detectors)]
    classes, est = _estimate(reference, dets, everything)
    single = ~classes.is_pair
    want, _ = classes.totals_of(true_dem)
    rel = np.abs(est.raw[single] / want[single] - 1)
    assert np.median(rel) > 0.3
    assert np.count_nonzero(est.status[single] == nl.LOW) >= 3  # p_iB <= 0
    assert classes.heavy.sum() > 0  # the 4-detector Y mechanisms
    sec_classes, sec_est = _estimate(reference, dets, truth)
    sec_want, _ = sec_classes.totals_of(true_dem)
    sec_rel = np.abs(sec_est.raw / sec_want - 1)[~sec_classes.is_pair]
    assert np.median(sec_rel) < 0.05 and np.max(sec_rel) < 0.2


def test_invalid_estimates_fall_back_to_reference_times_sector_median():
    # D0 and D1 never fire together (negative covariance: p_01 <= 0); D1, D2 strongly correlated.
    rng = np.random.default_rng(1)
    u = rng.random(20000)
    x = np.zeros((20000, 3), dtype=np.uint8)
    x[:, 0] = u < 0.1
    x[:, 1] = (u >= 0.1) & (u < 0.2)
    x[:, 2] = x[:, 1] ^ (rng.random(20000) < 0.02)
    ref = stim.DetectorErrorModel("error(0.01) D0 D1\nerror(0.02) D1 D2\nerror(0.01) D0\nerror(0.01) D2")
    classes = nl.NoiseClasses.from_dem(ref, [[0, 1, 2]])
    acc = nl.MomentAccumulator(3, classes.pairs)
    acc.add(x)
    est = nl.estimate_classes(classes, acc)
    pair01 = int(np.flatnonzero((classes.class_dets == [0, 1]).all(axis=1))[0])
    pair12 = int(np.flatnonzero((classes.class_dets == [1, 2]).all(axis=1))[0])
    assert est.status[pair01] == nl.LOW and est.status[pair12] == nl.OK
    assert est.p_hat[pair01] == pytest.approx(0.01 * est.raw[pair12] / 0.02)
    learned, report = nl.learn_noise(ref, x, [[0, 1, 2]])
    assert report.clipped.get("pair p<=0") == 1
    assert np.all((_probs(learned) > 0) & (_probs(learned) < 0.5))


# ----------------------------------------------------------------------------- rescaling
def test_learned_dem_moves_to_the_truth_and_keeps_the_structure(surface):
    truth, true_dem, reference, dets = surface
    learned, report = nl.learn_noise(reference, [dets[:100_000], dets[100_000:]], truth, bit_packed=True)
    assert report.shots == SHOTS and report.instructions_heavy == 0 and report.instructions_mixed > 0
    assert report.classes_rescaled == report.pair_classes + report.boundary_classes
    for s in report.scale_summary.values():  # truth / reference = 5 for sd6 (up to O(p) corrections)
        assert 4.5 < s["median"] < 5.5
    got, want, ref = _probs(learned), _probs(true_dem), _probs(reference)
    assert np.median(np.abs(got / want - 1)) < 0.05
    assert np.median(np.abs(ref / want - 1)) > 0.7
    assert np.all((got > 0) & (got < 0.5))
    # identical text except the error probabilities
    strip = re.compile(r"^error\([^)]*\)", re.M)
    assert strip.sub("error(p)", str(learned)) == strip.sub("error(p)", str(reference.flattened()))
    assert str(learned) != str(reference.flattened())
    assert learned.get_detector_coordinates() == reference.get_detector_coordinates()


def test_fit_matches_every_class_total_and_geomean_is_exact_for_uniform_scaling(surface):
    truth, true_dem, reference, _ = surface
    classes = nl.NoiseClasses.from_dem(reference, truth)
    # a target that scales X-sector classes by 3 and Z-sector classes by 6: mixed instructions
    # cannot satisfy both with one factor, the fit finds factors that do
    ref_totals = classes.reference_totals()
    target = ref_totals * np.where(classes.class_sector == classes.sector_names.index("X"), 3.0, 6.0)
    fit = nl.rescale(classes, target, mixed="fit")
    geo = nl.rescale(classes, target, mixed="geomean")
    assert fit.max_class_residual < 1e-8
    assert geo.max_class_residual > 1e-2
    # uniform factor: both policies give exactly factor x reference
    uni = nl.rescale(classes, 1 - (1 - 2 * ref_totals) ** 4, mixed="geomean")  # XOR of 4 copies
    exact = nl.rescale(classes, 1 - (1 - 2 * ref_totals) ** 4, mixed="fit")
    np.testing.assert_allclose(classes.totals(exact.probs), 1 - (1 - 2 * ref_totals) ** 4, rtol=1e-8)
    np.testing.assert_allclose(uni.probs / classes.p_ref, np.median(uni.probs / classes.p_ref), rtol=2e-2)
    identity = nl.rescale(classes, ref_totals, mixed="geomean")
    np.testing.assert_allclose(identity.probs, classes.p_ref, rtol=1e-12)


def test_learn_noise_bit_packed_and_unpacked_agree_and_bad_inputs(surface):
    truth, _, reference, dets = surface
    few = dets[:20_000]
    unpacked = np.unpackbits(few, axis=1, count=reference.num_detectors, bitorder="little")
    a, _ = nl.learn_noise(reference, few, truth, bit_packed=True)
    b, _ = nl.learn_noise(reference, iter([unpacked[:7000], unpacked[7000:]]), truth)
    assert str(a) == str(b)
    with pytest.raises(ValueError, match="at least 1000"):
        nl.learn_noise(reference, few[:999], truth, bit_packed=True)
    with pytest.raises(ValueError, match="mixed"):
        nl.learn_noise(reference, few, truth, bit_packed=True, mixed="nope")
    with pytest.raises(ValueError, match="columns"):
        nl.learn_noise(reference, unpacked[:, :-1], truth)
    with pytest.raises(ValueError, match="more than one sector"):
        nl.learn_noise(reference, unpacked, [[0, 1], [1, 2]])
