"""``tesseract``'s gap (:mod:`qdecode.decoders.confidence`): equal to ``mle``'s exact gap where the search is
exact (code capacity), the sinter path's observables on circuit-level models, packed against unpacked, and
the corner cases (errors above one half, fixed observables, no search at all)."""

from __future__ import annotations

import numpy as np
import pytest
import stim

import qdecode
from qdecode.decoders.confidence import DB_PER_NEPER
from qdecode.decoders.registry import get_entry
from qdecode.decoders.tesseract_decoder import TesseractDecoder, free_observables
from qdecode.problem import DecodingProblem
from tests.decoders.decoder_problems import code_capacity

#: float32 gaps and Tesseract's merged costs against HiGHS' exact weights
TOL_DB = 1e-4


def _dem(H, L, priors) -> stim.DetectorErrorModel:
    """One ``error`` instruction per column of ``H`` / ``L`` (0/1 arrays), with its prior."""
    H, L = np.asarray(H), np.asarray(L)
    lines = []
    for j, p in enumerate(priors):
        targets = [f"D{d}" for d in np.flatnonzero(H[:, j])] + [f"L{o}" for o in np.flatnonzero(L[:, j])]
        lines.append(f"error({float(p)!r}) {' '.join(targets)}")
    return stim.DetectorErrorModel("\n".join(lines))


def _assert_mle_gap(dem, s):
    dec = qdecode.decoder("tesseract", dem)
    obs, gap = dec.predict_with_confidence(s)
    assert np.array_equal(obs, dec.predict_observables_batch(s))
    mle = qdecode.decoder("mle", dem)
    mle_obs, exact = mle.predict_with_confidence(s)
    assert np.array_equal(np.isinf(gap), np.isinf(exact))
    np.testing.assert_allclose(gap, exact, rtol=0, atol=TOL_DB)
    # the weights themselves: Tesseract's costs are sum ln((1 - p) / p), in the problem's units
    for name in ("weight_best", "weight_other"):
        got, want = dec.last_info.extra[name], mle.last_info.extra[name]
        assert got.dtype == np.float64 and got.shape == (s.shape[0],)
        fin = np.isfinite(want)
        assert np.array_equal(fin, np.isfinite(got))
        np.testing.assert_allclose(got[fin], want[fin], rtol=0, atol=TOL_DB / DB_PER_NEPER)
    # where the classes are not tied, the best class is the exact one
    clear = np.abs(exact) > TOL_DB
    assert np.array_equal(obs[clear], mle_obs[clear])
    return gap


@pytest.mark.parametrize("kind,d,random_priors", [("repetition", 5, True), ("repetition", 7, True),
                                                  ("surface", 3, False), ("surface", 3, True)])
def test_gap_equals_mle_gap_at_code_capacity(kind, d, random_priors):
    rng = np.random.default_rng(11 * d + random_priors)
    problem, s = code_capacity(kind, d, rng, random_priors)
    dem = _dem(problem.H.toarray(), problem.L.toarray(), problem.priors)
    assert not s[:, dem.num_detectors:].any()  # detectors no error flips (the other basis) end the list
    s = s[:, :dem.num_detectors]
    gap = _assert_mle_gap(dem, s)
    assert np.all(np.isfinite(gap)) and np.all(gap >= 0)


def test_errors_above_one_half():
    """Complemented errors (p > 1/2): the gap is unchanged by it and the weights are the model's own."""
    dem = stim.DetectorErrorModel("error(0.7) D0 L0\nerror(0.1) D0 D1\nerror(0.2) D1 L0\nerror(0.05) D0 D1 D2\n"
                                  "error(0.6) D1 D2\nerror(0.15) D2 L1\nerror(0.3) D0 D2 L1")
    assert DecodingProblem.from_dem(dem).num_collisions == 0  # else the problem's columns are not Tesseract's
    s = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=np.uint8)
    _assert_mle_gap(dem, s)


def _circuit_shots(circuit: stim.Circuit, shots: int, seed: int):
    dem = circuit.detector_error_model(decompose_errors=False)
    dets = circuit.compile_detector_sampler(seed=seed).sample(shots)
    return dem, dets.astype(np.uint8)


@pytest.mark.parametrize("code", ["surface", "color"])
def test_circuit_level_observables_are_the_sinter_paths(code):
    if code == "surface":
        circuit = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                         after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    else:
        circuit = stim.Circuit.generated("color_code:memory_xyz", distance=3, rounds=3,
                                         after_clifford_depolarization=0.004, before_measure_flip_probability=0.004)
    dem, s = _circuit_shots(circuit, 300, seed=4)
    assert np.count_nonzero(np.any(s, axis=1)) > 50
    dec = qdecode.decoder("tesseract", dem)
    assert dec.has_confidence and get_entry("tesseract").has_confidence
    obs, gap = dec.predict_with_confidence(s)
    assert obs.shape == (300, 1) and gap.shape == (300,) and gap.dtype == np.float32
    assert np.array_equal(obs, dec.predict_observables_batch(s))
    assert np.all(np.isfinite(gap)) and np.all(gap >= 0)
    # a fresh decoder (no remembered answers) gives the same, and packed equals unpacked
    again = qdecode.decoder("tesseract", dem)
    packed_obs, packed_gap = again.predict_with_confidence_packed(np.packbits(s, axis=1, bitorder="little"))
    assert np.array_equal(packed_obs, np.packbits(obs, axis=1, bitorder="little"))
    assert np.array_equal(packed_gap, gap)
    if code == "surface":  # a few shots against the exact gap (Tesseract is exact on these; no collisions)
        assert DecodingProblem.from_dem(dem).num_collisions == 0
        _, exact = qdecode.decoder("mle", dem).predict_with_confidence(s[:15])
        np.testing.assert_allclose(gap[:15], exact, rtol=0, atol=TOL_DB)


def test_two_observables_and_sparsify():
    """k = 2 (each observable searched, the least kept) and a sparsified preset, against exact MLE."""
    dem = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2,
                                 after_clifford_depolarization=0.02).detector_error_model(decompose_errors=False)
    two = _add_observable(dem)
    problem = DecodingProblem.from_dem(two)
    e = (np.random.default_rng(2).random((60, problem.num_errors)) < 3 * problem.priors).astype(np.int64)
    s = ((e @ problem.H.T.toarray().astype(np.int64)) % 2).astype(np.uint8)
    for kwargs in ({}, {"beam": "short", "sparsify": "surface"}):
        dec = qdecode.decoder("tesseract", two, **kwargs)
        obs, gap = dec.predict_with_confidence(s)
        assert obs.shape == (60, 2)
        assert np.array_equal(obs, dec.predict_observables_batch(s))
        _, exact = qdecode.decoder("mle", two).predict_with_confidence(s)
        np.testing.assert_allclose(gap, exact, rtol=0, atol=TOL_DB)


def _add_observable(dem: stim.DetectorErrorModel) -> stim.DetectorErrorModel:
    """``dem`` with observable L1 on every error that flips D0 but not L0 (a second, independent class)."""
    out = stim.DetectorErrorModel()
    for inst in dem.flattened():
        if inst.type == "error":
            targets = inst.targets_copy()
            dets = {t.val for t in targets if t.is_relative_detector_id()}
            flips_l0 = any(t.is_logical_observable_id() for t in targets)
            if 0 in dets and not flips_l0:
                inst = stim.DemInstruction("error", inst.args_copy(), [*targets, stim.target_logical_observable_id(1)])
        out.append(inst)
    return out


def test_colliding_errors_are_a_logical_to_tesseract():
    """Two errors with the same detectors and different observables (a collision): Tesseract keeps both,
    so together they flip L0 with no detection event, and the zero syndrome's gap is their weight."""
    dem = stim.DetectorErrorModel("error(0.1) D0 L0\nerror(0.1) D0 D1\nerror(0.1) D1\nerror(0.05) D0 D1 L0")
    assert DecodingProblem.from_dem(dem).num_collisions == 1
    _, gap = qdecode.decoder("tesseract", dem).predict_with_confidence(np.zeros((1, 2), dtype=np.uint8))
    np.testing.assert_allclose(gap, (np.log(9.0) + np.log(19.0)) * DB_PER_NEPER, rtol=1e-6)  # < 3 ln 9


def test_fixed_observables_no_observables_and_no_search():
    # L0 is D0's bit: no correction of another class, and no search for it
    fixed = stim.DetectorErrorModel("error(0.1) D0 L0\nerror(0.1) D1\nerror(0.2) D0 D1 L0")
    assert free_observables(fixed, 2, 1) == []
    s = np.array([[0, 0], [1, 0], [1, 1]], dtype=np.uint8)
    dec = qdecode.decoder("tesseract", fixed)
    obs, gap = dec.predict_with_confidence(s)
    assert np.array_equal(obs, dec.predict_observables_batch(s)) and np.all(np.isposinf(gap))
    assert dec._searches.keys() == {-1}  # the plain search only
    # no observables: the observables do not depend on the detectors, nothing is searched
    no_obs = DecodingProblem.from_dem("error(0.1) D0\nerror(0.1) D0 D1")
    obs, gap = TesseractDecoder(no_obs).predict_with_confidence(s)
    assert obs.shape == (3, 0) and np.all(np.isposinf(gap))
    # an observable no detector sees: flipping it costs its own weight, on every shot
    silent = DecodingProblem.from_dem("error(0.1) D0\nerror(0.1) D0 D1\nerror(0.7) L0\nerror(0.2) L0")
    dec = TesseractDecoder(silent)
    obs, gap = dec.predict_with_confidence(s)
    assert obs.ravel().tolist() == [1, 1, 1]  # the merged L0 mechanism has p = 0.62
    want = np.log(0.62 / 0.38) * DB_PER_NEPER
    np.testing.assert_allclose(gap, want, rtol=1e-6)
    _, exact = qdecode.decoder("mle", silent).predict_with_confidence(s[1:])  # (mle skips the zero syndrome)
    np.testing.assert_allclose(gap[1:], exact, rtol=0, atol=TOL_DB)


def test_doc_example_and_empty_batch():
    rep3 = DecodingProblem.from_dem("error(0.1) D0 L0\nerror(0.1) D0 D1\nerror(0.1) D1")
    dec = TesseractDecoder(rep3)
    obs, gap = dec.predict_with_confidence(np.array([[1, 0], [0, 0]], dtype=np.uint8))
    w = np.log(9.0) * DB_PER_NEPER
    np.testing.assert_allclose(gap, [w, 3 * w], rtol=1e-6)
    obs, gap = dec.predict_with_confidence(np.zeros((0, 2), dtype=np.uint8))
    assert obs.shape == (0, 1) and gap.shape == (0,)


def test_no_correction_is_nan_and_a_tie_is_zero():
    dem = stim.DetectorErrorModel("error(0.1) D0 D1 L0\nerror(0.2) D0 D1\nerror(0.1) D2 L0\nerror(0.1) D2")
    dec = qdecode.decoder("tesseract", dem)
    s = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1]], dtype=np.uint8)  # no error gives D0 alone
    obs, gap = dec.predict_with_confidence(s)
    assert np.array_equal(obs, dec.predict_observables_batch(s))
    assert np.isnan(gap[0]) and np.isnan(dec.last_info.extra["weight_best"][0])
    np.testing.assert_allclose(gap[1:], [(np.log(9.0) - np.log(4.0)) * DB_PER_NEPER, 0.0], rtol=0, atol=1e-5)
