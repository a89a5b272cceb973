"""The decoders whose confidence is found rather than exact: ``relay-bp`` (the gap between its legs),
``bplsd[confidence=cluster]`` / ``bpuf`` (the cluster statistic; ``bplsd``'s gap:
``test_bplsd_confidence.py``) and ``bp`` / ``bp-ps`` (the posterior estimate).

Oracles: brute-force enumeration of every error on small random problems (the gap that Relay-BP's
legs find can never beat the exact one: its two corrections are real corrections of two classes),
an independent NumPy computation of the cluster statistic from LSD's clusters on hand-checked
problems, the tanh rule for the parity of independent bits, and the plain decoding paths (the
confident prediction must equal them).
"""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.decoders.confidence import DB_PER_NEPER, posterior_gap_db
from qdecode.decoders.registry import decoder
from qdecode.problem import DecodingProblem


def _circuit(d: int = 3, p: float = 0.01):
    circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=d, rounds=d,
                                  after_clifford_depolarization=p, before_measure_flip_probability=p)
    dem = circ.detector_error_model(decompose_errors=False)
    dets = dem.compile_sampler(seed=11).sample(300)[0].astype(np.uint8)
    return dem, dets


@pytest.mark.parametrize("spec", ["relay-bp", "relay-bp[bits=0]", "relay-bp[bits=0,stop_after=3,legs=40]",
                                  "bplsd[confidence=cluster]",
                                  "bplsd[lsd_order=0,confidence=cluster]", "bpuf", "bp", "bp-ps", "bp[bits=8]"])
def test_confident_prediction_equals_the_plain_one(spec):
    dem, dets = _circuit()
    dec = decoder(spec, dem)
    obs, gap = dec.predict_with_confidence(dets)
    assert gap.shape == (len(dets),) and gap.dtype == np.float32
    assert np.array_equal(obs, dec.predict_observables_batch(dets))
    assert not np.any(gap < 0)  # both confidences are >= 0 (or inf / nan)
    packed_obs, packed_gap = dec.predict_with_confidence_packed(np.packbits(dets, axis=1, bitorder="little"))
    assert np.array_equal(packed_obs, np.packbits(obs, axis=1, bitorder="little"))
    assert np.array_equal(packed_gap, gap, equal_nan=True)


def test_bp_gap_is_nan_exactly_where_bp_fails():
    dem, dets = _circuit(p=0.03)
    dec = decoder("bp[max_iter=10]", dem)
    _, gap = dec.predict_with_confidence(dets)
    conv = dec.last_info.converged
    assert 0 < conv.sum() < len(conv)
    assert np.array_equal(np.isnan(gap), ~conv)


def test_posterior_gap_is_the_tanh_rule():
    """|LLR| of a parity of independent bits: 2 atanh(prod tanh(|l_j| / 2)), least over the observables."""
    rng = np.random.default_rng(2)
    post = rng.normal(0, 4, (50, 9))
    L = (rng.random((3, 9)) < 0.4).astype(np.uint8)
    L[:, 0] = 1
    want = np.full(50, np.inf)
    for row in L:
        t = np.prod(np.tanh(np.abs(post[:, row == 1]) / 2), axis=1)
        want = np.minimum(want, 2 * np.arctanh(t) * DB_PER_NEPER)
    got = posterior_gap_db(post, L, np.ones(50, bool))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert np.all(np.isposinf(posterior_gap_db(post, np.zeros((0, 9)), np.ones(50, bool))))


def _random_problem(rng):
    n = int(rng.integers(4, 12))
    m = int(rng.integers(2, 6))
    H = (rng.random((m, n)) < 0.4).astype(np.uint8)
    L = (rng.random((int(rng.integers(1, 3)), n)) < 0.4).astype(np.uint8)
    return DecodingProblem.from_check_matrix(H, rng.uniform(0.02, 0.3, n), L)


def test_relay_gap_is_never_above_the_exact_one():
    """The legs' two lightest corrections of different classes are real corrections: W_best is at least the
    lightest of all, and W_other at least the lightest of any other class (brute force over all 2^n errors)."""
    rng = np.random.default_rng(5)
    finite = 0
    for _ in range(150):
        problem = _random_problem(rng)
        n = problem.num_errors
        E = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int64)
        syn = (E @ problem.H.T.toarray().astype(np.int64)) % 2
        obs_all = (E @ problem.L.T.toarray().astype(np.int64)) % 2
        W = E @ problem.llr
        e = (rng.random((6, n)) < 0.25).astype(np.int64)
        s = ((e @ problem.H.T.toarray().astype(np.int64)) % 2).astype(np.uint8)
        dec = decoder("relay-bp[bits=0,legs=30,stop_after=6,pre_iter=20,leg_iter=20]", problem)
        obs, gap = dec.predict_with_confidence(s)
        x = dec.last_info.extra
        for i in range(len(s)):
            if not dec.last_info.converged[i]:
                assert np.isnan(gap[i]) and x["classes"][i] == 0
                continue
            rows = np.all(syn == s[i], axis=1)
            assert x["weight"][i] >= W[rows].min() - 1e-9
            assert x["classes"][i] >= 1
            other_rows = rows & np.any(obs_all != obs[i], axis=1)
            if np.isfinite(x["weight_other"][i]):
                finite += 1
                assert x["classes"][i] >= 2
                assert x["weight_other"][i] >= W[other_rows].min() - 1e-9
                assert gap[i] == pytest.approx((x["weight_other"][i] - x["weight"][i]) * DB_PER_NEPER, abs=1e-4)
            else:
                assert x["classes"][i] == 1 and np.isposinf(gap[i])
    assert finite > 20  # the test exercises two-class shots


def test_cluster_statistic_by_hand():
    """Repetition code of 5 bits (priors 0.1, 0.2, 0.1, 0.2, 0.1) with single-bit clusters: Q is the 2-norm
    of the clusters' prior LLRs (not the BP posteriors that order the growth) over their total."""
    priors = np.array([0.1, 0.2, 0.1, 0.2, 0.1])
    H = np.zeros((4, 5), dtype=np.uint8)
    H[np.arange(4), np.arange(4)] = 1
    H[np.arange(4), np.arange(1, 5)] = 1
    problem = DecodingProblem.from_check_matrix(H, priors, L=[[1, 0, 0, 0, 0]])
    lam = np.log((1 - priors) / priors)
    dec = decoder("bplsd[lsd_order=0,max_iter=1,confidence=cluster]", problem)
    s = np.array([[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 1]], dtype=np.uint8)
    obs, conf = dec.predict_with_confidence(s)
    q = dec.last_info.extra["cluster_q"]
    assert q[0] == 0 and np.isposinf(conf[0])
    # flagged check 0: its cluster takes the bit BP's posterior puts first, bit 0 (its only check is
    # flagged; bit 1's other check is not), which makes the cluster valid
    assert q[1] == pytest.approx(lam[0] / lam.sum())
    # checks 0 and 3 flagged: two clusters of one end bit each, bits 0 and 4
    assert q[2] == pytest.approx(np.hypot(lam[0], lam[4]) / lam.sum())
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(conf, -10 * np.log10(q), rtol=1e-6)


def test_cluster_confidence_ranks_failures_low():
    """On a d=5 circuit at p = 0.01 the shots bplsd fails on sit in the low-confidence half (a sanity check
    of the direction: -10 log10 Q is larger for shots the decoder is surer of)."""
    circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=5, rounds=5,
                                  after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    dem = circ.detector_error_model(decompose_errors=False)
    dets, obs = circ.compile_detector_sampler(seed=3).sample(3000, separate_observables=True)
    dec = decoder("bplsd[confidence=cluster]", dem)
    pred, conf = dec.predict_with_confidence(dets.astype(np.uint8))
    fail = np.any(pred != obs, axis=1)
    assert fail.sum() >= 20
    assert np.median(conf[fail]) < np.median(conf[~fail])
