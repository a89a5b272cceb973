"""``bplsd``: BP + localized statistics decoding; valid corrections, parity with ldpc's LSD-0."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.bplsd import BpLsdDecoder
from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem
from qdecode.sims.circuits import build_circuit
from qdecode.sims.stats import fit_binomial


@pytest.fixture(scope="module")
def bb72():
    circ = build_circuit("bb72_12_6", noise="bb-uniform", p=0.004)
    prob = DecodingProblem.from_dem(circ.detector_error_model())
    dets, obs = circ.compile_detector_sampler(seed=3).sample(600, separate_observables=True)
    return prob, dets.astype(np.uint8), obs.astype(np.uint8)


@pytest.mark.parametrize("order", [0, 4])
def test_every_lsd_correction_satisfies_the_syndrome(bb72, order):
    prob, dets, _ = bb72
    dec = BpLsdDecoder(prob, lsd_order=order, max_iter=30)
    e = dec.decode_batch(dets)
    H = prob.H.toarray().astype(np.int64)
    assert np.array_equal((e.astype(np.int64) @ H.T) & 1, dets)
    info = dec.last_info
    assert info.extra["lsd"].sum() > 50  # BP fails on enough shots for LSD to matter here
    assert not info.extra["lsd_failed"].any()


def test_lsd0_logical_error_rate_equals_ldpc_within_intervals(bb72):
    """Same shots, same BP (min-sum, alpha 1, 30 iterations): our LSD-0 against ldpc's BpLsdDecoder."""
    import ldpc
    prob, dets, obs = bb72
    ours = DecoderSpec.create("bplsd", {"max_iter": 30, "lsd_order": 0, "lsd_key": "last"}).build(
        prob).predict_observables_batch(dets)
    H = prob.H.toarray().astype(np.uint8)
    peer = ldpc.BpLsdDecoder(H, error_channel=list(prob.priors), max_iter=30, bp_method="minimum_sum",
                             ms_scaling_factor=1.0, schedule="parallel", bits_per_step=1, lsd_order=0)
    L = prob.L.toarray().astype(np.int64)
    theirs = np.array([(L @ peer.decode(d)) & 1 for d in dets], dtype=np.uint8)
    k_ours = int(np.any(ours != obs, axis=1).sum())
    k_theirs = int(np.any(theirs != obs, axis=1).sum())
    a = fit_binomial(num_shots=len(obs), num_hits=k_ours, max_likelihood_factor=1e3)
    b = fit_binomial(num_shots=len(obs), num_hits=k_theirs, max_likelihood_factor=1e3)
    assert a.low <= b.high and b.low <= a.high, (k_ours, k_theirs)


def test_in_cluster_osd_does_not_lose_to_lsd0(bb72):
    prob, dets, obs = bb72
    f = {}
    for order in (0, 10):
        pred = DecoderSpec.create("bplsd", {"lsd_order": order, "max_iter": 30}).build(prob).predict_observables_batch(
            dets)
        f[order] = int(np.any(pred != obs, axis=1).sum())
    assert f[10] <= f[0]


def test_history_key_does_not_lose_to_the_last_posterior(bb72):
    """Clusters grown by the sum of the last four posteriors (the default) fail no more often than by
    the last one (colour code d = 5: 146 against 549 failures in 20,000 shots, benchmarks/README.md)."""
    prob, dets, obs = bb72
    f = {}
    for key in ("last", "sum4"):
        dec = DecoderSpec.create("bplsd", {"lsd_key": key, "lsd_order": 0, "max_iter": 30}).build(prob)
        f[key] = int(np.any(dec.predict_observables_batch(dets) != obs, axis=1).sum())
    assert f["sum4"] <= f["last"] + 3, f


def test_converged_shots_keep_bp_and_zero_syndrome_is_zero(bb72):
    prob, dets, _ = bb72
    dec = BpLsdDecoder(prob, max_iter=30)
    assert not dec.decode_batch(np.zeros((3, prob.num_detectors), dtype=np.uint8)).any()
    bp = DecoderSpec.create("bp", {"max_iter": 30}).build(prob)
    e_bp = bp.decode_batch(dets)
    e = dec.decode_batch(dets)
    conv = dec.last_info.converged
    assert np.array_equal(e[conv], e_bp[conv])


@pytest.mark.parametrize("params", [{"bits_per_step": 0}, {"bits_per_step": 3, "lsd_order": 3},
                                    {"lsd_order": 4, "lsd_method": "lsd_e"}])
def test_growth_steps_and_exhaustive_in_cluster_osd_give_valid_corrections(bb72, params):
    prob, dets, obs = bb72
    dec = DecoderSpec.create("bplsd", {**params, "max_iter": 30}).build(prob)
    e = dec.decode_batch(dets)
    H = prob.H.toarray().astype(np.int64)
    assert np.array_equal((e.astype(np.int64) @ H.T) & 1, dets)
    f = int(np.any(dec.predict_observables_batch(dets) != obs, axis=1).sum())
    assert f < 0.3 * len(obs)


def test_bpuf_is_lsd0_with_whole_neighbourhood_growth(bb72):
    """``bpuf`` (belief-find, inversion form) decodes hypergraph DEMs with valid corrections and equals
    ``bplsd[bits_per_step=0]``."""
    prob, dets, _ = bb72
    a = DecoderSpec.create("bpuf", {"max_iter": 30}).build(prob).decode_batch(dets)
    b = DecoderSpec.create("bplsd", {"bits_per_step": 0, "max_iter": 30, "lsd_order": 0, "lsd_key": "last"}).build(
        prob).decode_batch(dets)
    assert np.array_equal(a, b)
    H = prob.H.toarray().astype(np.int64)
    assert np.array_equal((a.astype(np.int64) @ H.T) & 1, dets)


def test_exhaustive_order_is_bounded():
    circ = build_circuit("surface", d=3, noise="code-capacity", p=0.05)
    prob = DecodingProblem.from_dem(circ.detector_error_model())
    with pytest.raises(ValueError, match="too large for lsd_e"):
        BpLsdDecoder(prob, lsd_order=21, lsd_method="lsd_e")
