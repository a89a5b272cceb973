"""Layered min-sum on lanes (kernels/minsum_lanes_layered.py) against the scalar layered kernel."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.bp import ALPHA_SHIFT, BpDecoder, MessageFormat, bp_outputs
from qdecode.kernels.bp import bp_decode_range
from qdecode.kernels.bp_args import BpOut, MinSumParams
from qdecode.kernels.minsum_lanes_layered import minsum_layered_lanes_range
from tests.kernels.lane_cases import lane_case


def _both(graph, llr0, syn, fmt, max_iter, alpha, beta, lanes, hist_k):
    S, n = syn.shape[0], llr0.shape[1]
    beta_q = fmt.dtype.type(int(round(beta * fmt.scale)) if fmt.bits else beta)
    prm = MinSumParams(max_iter, float(alpha), fmt.alpha_num(alpha), ALPHA_SHIFT, alpha == 0, beta_q, fmt.msg_lim,
                       fmt.post_lim)
    ref = BpOut(*bp_outputs(S, n, fmt.dtype, True))
    bp_decode_range(graph, llr0, syn, 0, True, prm, ref, hist_k, 0, S)
    got = BpOut(*bp_outputs(S, n, fmt.dtype, True))
    minsum_layered_lanes_range(graph, llr0, syn, prm, got, hist_k, lanes, 0, S)
    return ref, got


FORMATS = {"i8": (8, 3, "float64"), "i12": (12, 5, "float64"), "f32": (0, 0, "float32"), "f64": (0, 0, "float64")}


@pytest.mark.parametrize("fmt_name", list(FORMATS))
@pytest.mark.parametrize("name,alpha,beta,per_shot,lanes,shots,hist_k", [
    ("surf5", 1.0, 0.0, False, 32, 120, 1),
    ("surf5", 0.625, 0.25, True, 13, 70, 1),
    ("bb72", 0.0, 0.0, False, 32, 90, 4),
    ("bb72", 0.75, 0.0, True, 64, 101, 1),
])
def test_bit_identical_to_the_scalar_layered_kernel(fmt_name, name, alpha, beta, per_shot, lanes, shots, hist_k):
    prob, dets, graph = lane_case(name, 200)
    fmt = MessageFormat.create(*FORMATS[fmt_name])
    llr = prob.llr[None, :]
    if per_shot:
        llr = llr * np.random.default_rng(2).uniform(0.5, 1.5, size=(shots, llr.shape[1]))
    ref, got = _both(graph, fmt.quantize(llr), dets[:shots], fmt, 25, alpha, beta, lanes, hist_k)
    for a, b in zip(ref, got):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
    assert 0 < ref[2].sum() < shots or name == "surf5"


def test_random_syndromes_run_to_max_iter():
    prob, _, graph = lane_case("surf5", 10)
    syn = np.random.default_rng(5).integers(0, 2, size=(40, prob.H.shape[0]), dtype=np.uint8)
    fmt = MessageFormat.create(8, 3)
    ref, got = _both(graph, fmt.quantize(prob.llr[None, :]), syn, fmt, 9, 0.875, 0.0, 32, 1)
    assert np.any(ref[3] == 9)
    for a, b in zip(ref, got):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_decoder_uses_the_layered_lanes():
    prob, dets, _ = lane_case("bb72", 200)
    dec = BpDecoder(prob, max_iter=20, alpha=0.625, beta=0.0, schedule="layered", bits=8, frac_bits=3)
    assert dec.layered_lanes
    hard, post, conv, iters = dec._run(dec.prior_llr, dets[:50], True)
    ref = BpOut(*bp_outputs(50, prob.num_errors, dec.msg_dtype, True))
    bp_decode_range(dec.graph, dec.prior_llr, dets[:50], 0, True, dec.kernel_params(), ref, 1, 0, 50)
    for a, b in zip((hard, post, conv, iters), ref):
        np.testing.assert_array_equal(a, b)
