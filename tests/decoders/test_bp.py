"""BP decoders: an independent numpy reference, ldpc as oracle, properties, bad input."""

from __future__ import annotations

import ldpc
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from qdecode.decoders import DecoderInputError, DecoderSpec, UnknownDecoderError
from qdecode.decoders.bp import BpDecoder
from qdecode.kernels.answer_trail import no_answer_trail
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit


def reference_minsum(H, llr, s, *, max_iter, alpha_of, beta, msg_lim, post_lim):
    """Flooding min-sum written from the textbook rule (exclusive min per edge), integers only.

    Independent of the kernels: per edge, the message is the minimum magnitude over the
    *other* edges of the check (none: msg_lim), scaled as (x * num) >> shift with
    ``(num, shift) = alpha_of(t)`` at iteration t, offset, saturated; its sign is s_i xor
    the parity of the other edges' signs (x <= 0 counts as negative).
    """
    H = np.asarray(H)
    rows, cols = np.nonzero(H)  # CSR order
    v2c = np.clip(llr[cols], -msg_lim, msg_lim).astype(np.int64)
    c2v = np.zeros_like(v2c)
    for it in range(1, max_iter + 1):
        num, shift = alpha_of(it)
        for i in range(H.shape[0]):
            idx = np.flatnonzero(rows == i)
            for e in idx:
                others = [x for x in idx if x != e]
                mag = min((abs(int(v2c[x])) for x in others), default=msg_lim)
                neg = (int(s[i]) + sum(int(v2c[x]) <= 0 for x in others)) % 2
                mag = min(max((mag * num >> shift) - beta, 0), msg_lim)
                c2v[e] = -mag if neg else mag
        post = llr.astype(np.int64).copy()
        np.add.at(post, cols, c2v)
        post = np.clip(post, -post_lim, post_lim)
        v2c = np.clip(post[cols] - c2v, -msg_lim, msg_lim)
        hard = (post <= 0).astype(np.uint8)
        if np.array_equal(H @ hard % 2, s):
            return hard, it, True, post
    return hard, max_iter, False, post


def _surface_problem(p=0.01, d=3):
    c = build_circuit("surface", d=d, noise="sd6", p=p, basis="Z", memory_basis_only=True)
    return c, DecodingProblem.from_dem(decoding_dem(c))


@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (0.625, 0.0), (0.0, 0.0), (0.75, 0.5)])
def test_fixed_point_bit_exact_against_numpy_reference(alpha, beta):
    c, prob = _surface_problem(0.01)
    dets = c.compile_detector_sampler(seed=3).sample(40).astype(np.uint8)
    dec = BpDecoder(prob, max_iter=12, alpha=alpha, beta=beta, bits=8, frac_bits=3)
    hard, post = dec.decode_soft_batch(dets)
    H = prob.H.toarray()
    if dec.adaptive:  # alpha(t) = 1 - 2^-t as (x * (2^t - 1)) >> t
        alpha_of = lambda t: ((1 << t) - 1, t)  # noqa: E731
    else:
        alpha_of = lambda t: (dec.alpha_num, 8)  # noqa: E731
    for k in range(len(dets)):
        ref_hard, ref_it, ref_ok, ref_post = reference_minsum(
            H, dec.prior_llr[0], dets[k], max_iter=12, alpha_of=alpha_of,
            beta=int(dec.beta), msg_lim=int(dec.msg_lim), post_lim=int(dec.post_lim),
        )
        assert np.array_equal(hard[k], ref_hard)
        assert dec.last_info.iterations[k] == ref_it and dec.last_info.converged[k] == ref_ok
        np.testing.assert_array_equal(post[k] * 8, ref_post)


@pytest.mark.parametrize("method,bpm", [("minsum", "minimum_sum"), ("productsum", "product_sum")])
def test_float_bp_agrees_with_ldpc(method, bpm):
    """bb72 circuit DEM (Z memory, Z detectors, 3 rounds, p = 0.003), flooding, 40 iterations.

    Convergence flags and hard decisions agree on >= 99% of shots. What remains comes
    from exact ties between message magnitudes and floating-point summation order,
    which these degenerate DEMs (many columns with equal priors) make common.
    """
    c = build_circuit("bb72_12_6", noise="bb-uniform", p=0.003, rounds=3, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    dets = c.compile_detector_sampler(seed=11).sample(400).astype(np.uint8)
    ours = BpDecoder(prob, method=method, max_iter=40, alpha=1.0)
    hard = ours.decode_batch(dets)
    conv = ours.last_info.converged
    ref = ldpc.BpDecoder(prob.H, error_channel=list(prob.priors), max_iter=40, bp_method=bpm,
                         ms_scaling_factor=1.0, schedule="parallel")
    ref_hard, ref_conv = [], []
    for s in dets:
        ref_hard.append(ref.decode(s))
        ref_conv.append(ref.converge)
    ref_hard, ref_conv = np.array(ref_hard), np.array(ref_conv)
    assert (conv == ref_conv).mean() >= 0.99
    both = conv & ref_conv
    assert (hard[both] == ref_hard[both]).all(axis=1).mean() >= 0.99


def test_lanes_kernel_equals_single_shot_kernel():
    from qdecode.kernels import bp as K
    from qdecode.kernels.bp_args import MinSumParams

    c, prob = _surface_problem(0.012, d=5)
    dets = c.compile_detector_sampler(seed=1).sample(37).astype(np.uint8)
    dec = BpDecoder(prob, max_iter=30, alpha=0.0)
    hard, post = dec.decode_soft_batch(dets)
    conv, its = dec.last_info.converged.copy(), dec.last_info.iterations.copy()
    work = K.make_work(dec.graph, dec.prior_llr[0])
    prm = MinSumParams(30, 0.0, 256, 8, True, 0.0, dec.msg_lim, dec.post_lim)
    for k, s in enumerate(dets):
        p1 = np.empty(prob.num_errors)
        h1 = np.zeros(prob.num_errors, np.uint8)
        ok, it = K._bp_two_phase(dec.graph, dec.prior_llr[0], s, 0, False, prm, work, p1, h1,
                                 np.zeros((0, prob.num_errors)), no_answer_trail())
        assert (ok, it) == (conv[k], its[k])
        np.testing.assert_array_equal(h1, hard[k])
        np.testing.assert_array_equal(p1, post[k])


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["minsum", "productsum"]), st.sampled_from(["flooding", "layered"]))
def test_properties_random_codes(seed, method, schedule):
    rng = np.random.default_rng(seed)
    m, n = rng.integers(3, 9), rng.integers(5, 16)
    H = (rng.random((m, n)) < 0.35).astype(np.uint8)
    H[rng.integers(m), :] |= 0  # keep shape
    priors = rng.uniform(0.01, 0.3, n)
    prob = DecodingProblem.from_check_matrix(H, priors)
    dec = BpDecoder(prob, method=method, schedule=schedule, max_iter=20)
    e = (rng.random((16, n)) < priors).astype(np.uint8)
    s = (e @ H.T % 2).astype(np.uint8)
    est = dec.decode_batch(s)
    conv = dec.last_info.converged
    assert np.array_equal((est[conv] @ H.T) % 2, s[conv])  # converged => H e = s
    zero = dec.decode(np.zeros(m, np.uint8))
    assert not zero.any()  # priors < 0.5: zero syndrome decodes to zero
    singles = np.array([dec.decode(x) for x in s])
    assert np.array_equal(singles, est)  # batch == loop of single shots


def test_wide_fixed_point_matches_float_decisions():
    c, prob = _surface_problem(0.008, d=5)
    dets = c.compile_detector_sampler(seed=5).sample(300).astype(np.uint8)
    f = BpDecoder(prob, max_iter=30, alpha=0.75).decode_batch(dets)
    q = BpDecoder(prob, max_iter=30, alpha=0.75, bits=24, frac_bits=14).decode_batch(dets)
    assert (f == q).all(axis=1).mean() >= 0.99


def test_classical_soft_decoding_through_the_same_kernel():
    H = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]], dtype=np.uint8)
    prob = DecodingProblem.from_check_matrix(H, 0.1)
    dec = BpDecoder(prob, method="productsum", max_iter=20)
    llr = np.full((2, 7), 4.0)
    llr[0, 2] = -1.0  # one unreliable wrong bit: corrected to the all-zero codeword
    out = dec.decode_llr_batch(llr)
    assert not out.any()
    with pytest.raises(DecoderInputError, match="NaN"):
        dec.decode_llr_batch(np.full((1, 7), np.nan))


def test_layered_converges_in_fewer_iterations_than_flooding():
    c, prob = _surface_problem(0.01, d=5)
    dets = c.compile_detector_sampler(seed=2).sample(300).astype(np.uint8)
    flood = BpDecoder(prob, max_iter=50, alpha=1.0)
    layer = BpDecoder(prob, max_iter=50, alpha=1.0, schedule="layered")
    flood.decode_batch(dets)
    layer.decode_batch(dets)
    assert layer.last_info.iterations.mean() < flood.last_info.iterations.mean()


def test_bad_input_errors():
    prob = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
    dec = BpDecoder(prob)
    with pytest.raises(DecoderInputError, match="columns"):
        dec.decode_batch(np.zeros((1, 3), np.uint8))
    with pytest.raises(DecoderInputError, match="binary"):
        dec.decode_batch(np.array([[0, 2]]))
    with pytest.raises(DecoderInputError, match="max_iter"):
        BpDecoder(prob, max_iter=0)
    with pytest.raises(DecoderInputError, match="alpha"):
        BpDecoder(prob, alpha=1.5)
    with pytest.raises(DecoderInputError, match="schedule"):
        BpDecoder(prob, schedule="random")
    with pytest.raises(DecoderInputError, match="frac_bits"):
        BpDecoder(prob, bits=8, frac_bits=8)
    with pytest.raises(UnknownDecoderError, match="max_iter=0 must be >= 1"):
        DecoderSpec.create("bp", ["max_iter=0"])
    with pytest.raises(UnknownDecoderError, match="osd_order=-1 must be >= 0"):
        DecoderSpec.create("bposd", ["osd_order=-1"])
    with pytest.raises(UnknownDecoderError, match="schedule='serial' must be one of"):
        DecoderSpec.create("bp", ["schedule=serial"])


def test_bposd_matches_ldpc_bposd_and_solves_syndrome():
    c = build_circuit("bb72_12_6", noise="bb-uniform", p=0.004, rounds=2, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    dets = c.compile_detector_sampler(seed=4).sample(300).astype(np.uint8)
    ours = DecoderSpec.create("bposd", ["max_iter=20", "osd_order=6", "osd_key=last"]).build(prob)  # ldpc's order
    est = ours.decode_batch(dets)
    assert np.array_equal((sp.csr_matrix(prob.H) @ est.T % 2).T, dets)  # OSD always solves H e = s
    ref = ldpc.BpOsdDecoder(prob.H, error_channel=list(prob.priors), max_iter=20, bp_method="minimum_sum",
                            ms_scaling_factor=1.0, schedule="parallel", osd_method="osd_cs", osd_order=6)
    ref_est = np.array([ref.decode(s) for s in dets])
    assert (ref_est == est).all(axis=1).mean() >= 0.99


@pytest.mark.parametrize("alpha", [0.0, 0.75])
def test_fixed_point_8_bits_reaches_float_ler_on_bb144_code_capacity(alpha):
    """[[144,12,12]] code capacity, p = 0.04, 20k shots: 8-bit messages with 3 fraction bits
    give the float min-sum logical error rate within binomial (sinter-style) intervals."""
    from qdecode.sims.stats import fit_binomial

    c = build_circuit("bb144_12_12", noise="code-capacity", p=0.04, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    dets, obs = c.compile_detector_sampler(seed=5).sample(20_000, separate_observables=True)
    fits = []
    for bits in (0, 8):
        pred = BpDecoder(prob, max_iter=50, alpha=alpha, bits=bits, frac_bits=3).predict_observables_batch(dets)
        errors = int(np.any(pred != obs, axis=1).sum())
        assert errors >= 50
        fits.append(fit_binomial(num_shots=len(dets), num_hits=errors, max_likelihood_factor=1e3))
    f, q = fits
    assert f.low <= q.high and q.low <= f.high, fits
