"""``bplsd``'s gap (``confidence=gap``, :meth:`BpLsdDecoder.predict_with_confidence`): the lightest correction
of another logical class among those LSD finds (one tested in-cluster OSD candidate per cluster).

Oracles: brute-force enumeration of every error on small random problems (a found correction is a real
correction: its weight is one of the enumerated weights of its class, so never below the lightest of that
class); ``mle``'s exact gap where one cluster spans the whole code and its OSD-E tests every correction
(code capacity); the plain decoding path (same observables) and the ``cluster`` confidence (same ``Q``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import stim

import qdecode
from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.bplsd import BpLsdDecoder
from qdecode.decoders.confidence import DB_PER_NEPER
from qdecode.decoders.mle import MleDecoder
from qdecode.decoders.registry import DecoderSpec
from tests.decoders.decoder_problems import code_capacity, random_check_matrix

GAP_TOL_DB = 1e-4  # float32 gaps of weights that agree to 1e-9


def _every_correction(problem, H):
    """(errors uint8 (2^n, n), syndromes as bytes, classes as tuples, W float64 (2^n,)) of every error."""
    n = problem.num_errors
    e = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
    syn = (e @ H.T.astype(np.int64)) % 2
    cls = (e @ problem.L.toarray().T.astype(np.int64)) % 2
    return e, [r.astype(np.uint8).tobytes() for r in syn], [tuple(c) for c in cls], e @ problem.llr


@pytest.mark.parametrize("method,order", [("lsd_cs", 1), ("lsd_cs", 4), ("lsd_e", 1), ("lsd_e", 5)])
def test_found_corrections_are_real(method, order):
    """``weight_best`` is the decision's W; a finite ``weight_other`` is the W of a real correction of another
    class than the decision's (so never below the lightest one); ``nan`` only without any correction."""
    rng = np.random.default_rng(31 + order)
    finite = 0
    for _ in range(60):
        problem, H = random_check_matrix(rng, min_n=2)
        n = problem.num_errors
        e, syn, cls, W = _every_correction(problem, H)
        errors = (rng.random((4, n)) < 0.3).astype(np.int64)
        s = ((errors @ H.T.astype(np.int64)) % 2).astype(np.uint8)
        s[3] = rng.integers(0, 2, s.shape[1])  # possibly outside the column space
        dec = BpLsdDecoder(problem, lsd_order=order, lsd_method=method, bits_per_step=1, lsd_grow=2, lsd_key="last",
                           max_iter=2, alpha=1.0, beta=0.0, schedule="flooding", bits=0, frac_bits=3,
                           confidence="gap")
        obs, gap = dec.predict_with_confidence(s)
        x = dec.last_info.extra
        decision = dec.decode_batch(s)
        assert np.array_equal(obs, dec.predict_observables_batch(s))
        np.testing.assert_allclose(x["weight_best"], decision @ problem.llr, rtol=0, atol=1e-9)
        for i in range(4):
            same_syndrome = np.array([t == s[i].tobytes() for t in syn])
            if not same_syndrome.any():  # no correction at all: LSD fails where BP did
                assert np.isnan(gap[i]) == (not dec.last_info.converged[i])
                continue
            other = same_syndrome & np.array([c != tuple(obs[i]) for c in cls])
            w = x["weight_other"][i]
            if np.isfinite(w):
                finite += 1
                assert np.isclose(W[other], w, rtol=0, atol=1e-9).any(), (i, w)
                assert w >= W[other].min() - 1e-9
                assert gap[i] == pytest.approx((w - x["weight_best"][i]) * DB_PER_NEPER, abs=GAP_TOL_DB)
            else:
                assert np.isposinf(w) and np.isposinf(gap[i])
    assert finite > 40  # the test exercises found second classes


@pytest.mark.parametrize("kind,d,random_priors", [("repetition", 5, True), ("repetition", 7, True),
                                                  ("surface", 3, False), ("surface", 3, True)])
def test_one_exhaustive_cluster_gives_mle_gap(kind, d, random_priors):
    """With clusters grown over the whole (connected) code and OSD-E of order n - rank H inside, LSD tests every
    correction of a nonzero syndrome: ``weight_other`` is the exact lightest of another class (mle's)."""
    rng = np.random.default_rng(13 * d + random_priors)
    problem, s = code_capacity(kind, d, rng, random_priors)
    H = problem.H.toarray()
    nullity = problem.num_errors - int(np.linalg.matrix_rank(H))  # rank over the reals = over GF(2) here
    assert 0 < nullity <= 20
    dec = BpLsdDecoder(problem, lsd_order=nullity, lsd_method="lsd_e", bits_per_step=1, lsd_grow=1000,
                       lsd_key="last", max_iter=20, alpha=1.0, beta=0.0, schedule="flooding", bits=0, frac_bits=3,
                       confidence="gap")
    obs, gap = dec.predict_with_confidence(s)
    x = dec.last_info.extra
    mle = MleDecoder(problem)
    mle_obs, mle_gap = mle.predict_with_confidence(s)
    best, other = mle.last_info.extra["weight_best"], mle.last_info.extra["weight_other"]
    flagged = s.any(axis=1)
    assert np.all(np.isposinf(gap[~flagged]))  # the zero syndrome: no cluster, no search
    want_other = np.where((obs == mle_obs).all(axis=1), other, best)  # one observable: two classes
    np.testing.assert_allclose(x["weight_other"][flagged], want_other[flagged], rtol=0, atol=1e-9)
    lightest = flagged & np.isclose(x["weight_best"], best, rtol=0, atol=1e-9)
    assert lightest.sum() > 0.9 * flagged.sum()
    np.testing.assert_allclose(gap[lightest], mle_gap[lightest], rtol=0, atol=GAP_TOL_DB)


def _circuit():
    circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                  after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    dem = circ.detector_error_model(decompose_errors=False)
    dets, obs = circ.compile_detector_sampler(seed=4243).sample(600, separate_observables=True)
    return dem, dets.astype(np.uint8), obs


@pytest.mark.parametrize("spec", ["bplsd", "bplsd[max_iter=3]", "bplsd[lsd_order=4,lsd_method=lsd_e]"])
def test_circuit_observables_info_and_cluster_q(spec):
    dem, dets, _ = _circuit()
    dec = qdecode.decoder(spec, dem)
    obs, gap = dec.predict_with_confidence(dets)
    info = dec.last_info
    assert obs.shape == (600, 1) and gap.dtype == np.float32 and gap.shape == (600,)
    assert np.array_equal(obs, dec.predict_observables_batch(dets))
    assert np.array_equal(info.converged, dec.last_info.converged)
    wb, wo = info.extra["weight_best"], info.extra["weight_other"]
    np.testing.assert_allclose(wb, dec.decode_batch(dets) @ dec.problem.llr, rtol=1e-12, atol=1e-12)
    assert not np.isnan(gap).any()  # every syndrome is in H's column space
    np.testing.assert_allclose(gap, ((wo - wb) * DB_PER_NEPER).astype(np.float32), rtol=0, atol=0)
    # OSD-CS of order 30 in clusters grown to nullity 600 finds another class on most flagged shots; OSD-E of
    # order 4 (15 patterns on the first 4 non-pivots) on fewer
    assert np.mean(np.isfinite(gap[dets.any(axis=1)])) > (0.2 if "lsd_e" in spec else 0.5)
    if "max_iter=3" in spec:
        assert (~info.converged).sum() >= 20
    # the cluster statistic rides along, equal to the cheap confidence's
    name, _, params = spec.rstrip("]").partition("[")
    cheap = qdecode.decoder(f"{name}[{params + ',' if params else ''}confidence=cluster]", dem)
    _, conf = cheap.predict_with_confidence(dets)
    np.testing.assert_array_equal(info.extra["cluster_q"], cheap.last_info.extra["cluster_q"])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(conf, (-10 * np.log10(info.extra["cluster_q"])).astype(np.float32))


def test_packed_and_unpacked_agree():
    dem, dets, _ = _circuit()
    dec = qdecode.decoder("bplsd", dem)
    obs, gap = dec.predict_with_confidence(dets)
    packed_obs, packed_gap = dec.predict_with_confidence_packed(np.packbits(dets, axis=1, bitorder="little"))
    assert np.array_equal(packed_obs, np.packbits(obs, axis=1, bitorder="little"))
    assert np.array_equal(packed_gap, gap, equal_nan=True)


def test_gap_ranks_failures_low():
    """On a d = 3 circuit at p = 0.02 the shots bplsd fails on sit low in its gap (the direction)."""
    circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                  after_clifford_depolarization=0.02, before_measure_flip_probability=0.02)
    dem = circ.detector_error_model(decompose_errors=False)
    dets, obs = circ.compile_detector_sampler(seed=3).sample(2000, separate_observables=True)
    pred, gap = qdecode.decoder("bplsd", dem).predict_with_confidence(dets.astype(np.uint8))
    fail = np.any(pred != obs, axis=1)
    assert fail.sum() >= 100
    assert np.median(gap[fail]) < np.percentile(gap[~fail], 25)


def test_lsd0_has_no_gap():
    """LSD-0 tests one candidate per cluster: the gap is refused with a pointer to the cluster statistic."""
    dem, dets, _ = _circuit()
    with pytest.raises(ValueError, match="confidence=cluster"):
        qdecode.decoder("bplsd[lsd_order=0]", dem).predict_with_confidence(dets[:4])
    assert qdecode.decoder("bplsd[lsd_order=0,confidence=cluster]", dem).predict_with_confidence(dets[:4])
    with pytest.raises((ValueError, DecoderInputError)):
        qdecode.decoder("bplsd[confidence=posterior]", dem)


def test_labels():
    assert "confidence" not in DecoderSpec.parse("bplsd").label()  # the default gap leaves labels as they were
    assert "confidence=cluster" in DecoderSpec.parse("bplsd[confidence=cluster]").label()
