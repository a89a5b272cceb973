"""The narrow lane kernels (8-bit fixed point, float32) are bit-identical to ``minsum_lanes_range``."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from qdecode.decoders.bp import ALPHA_SHIFT, MessageFormat, bp_outputs
from qdecode.kernels.bp_args import BpOut, MinSumParams
from qdecode.kernels.minsum_lanes import minsum_lanes_range
from qdecode.kernels.minsum_lanes_narrow import (
    F32Coeffs,
    F32Params,
    IntCoeffs,
    IntParams,
    NarrowCheckState,
    NarrowGraph,
    NarrowLanes,
    NarrowScratch,
    NarrowSweep,
    NoAliasCompiler,
    _sweep_f32_w64,
    _sweep_int_w64,
    edge_slots,
    minsum_lanes_f32_range,
    minsum_lanes_f32_wide_range,
    minsum_lanes_i8_range,
    minsum_lanes_i8_wide_range,
    minsum_lanes_i16_range,
    minsum_lanes_i16_wide_range,
    narrow_kernel,
    narrow_lanes,
)
from qdecode.problem import DecodingProblem
from tests.kernels.lane_cases import WIDE_DEGREES, lane_case, wide_case


def _run(kernel, graph, llr0, syn, fmt, max_iter, alpha, beta, lanes, keep_post, hist_k=1):
    S, n = syn.shape[0], graph.var_ptr.shape[0] - 1
    out = BpOut(*bp_outputs(S, n, fmt.dtype, keep_post))
    beta_q = fmt.dtype.type(int(round(beta * fmt.scale)) if fmt.bits else beta)
    prm = MinSumParams(max_iter, float(alpha), fmt.alpha_num(alpha), ALPHA_SHIFT, alpha == 0, beta_q, fmt.msg_lim,
                       fmt.post_lim)
    kernel(graph, llr0, syn, prm, out, hist_k, lanes, 0, S)
    return out


#: narrow kind -> (message format, kernel): 8-bit, 12- and 16-bit (the 16-bit kernel), float32
KINDS = {
    "i8": lambda: (MessageFormat.create(8, 3), minsum_lanes_i8_range),
    "i12": lambda: (MessageFormat.create(12, 5), minsum_lanes_i16_range),
    "i16": lambda: (MessageFormat.create(16, 8), minsum_lanes_i16_range),
    "f32": lambda: (MessageFormat.create(0, 0, "float32"), minsum_lanes_f32_range),
}


def _priors(prob, fmt, S, per_shot, rng):
    if not per_shot:
        return fmt.quantize(prob.llr[None, :])
    scale = rng.uniform(0.5, 1.5, size=(S, prob.llr.shape[0]))  # a different prior row per shot
    return fmt.quantize(prob.llr[None, :] * scale)


CASES = [  # (problem, alpha, beta, per-shot priors, lanes, shots, max_iter)
    ("surf5", 1.0, 0.0, False, 64, 203, 30),
    ("surf5", 0.625, 0.0, True, 32, 77, 30),
    ("surf5", 0.0, 0.0, False, 13, 50, 30),
    ("surf5", 0.75, 0.5, True, 64, 130, 25),
    ("bb72", 1.0, 0.0, False, 64, 150, 40),
    ("bb72", 0.0, 0.25, True, 128, 141, 40),
    ("bb72", 0.625, 0.0, False, 40, 90, 40),
]


@pytest.mark.parametrize("name,alpha,beta,per_shot,lanes,shots,max_iter", CASES)
@pytest.mark.parametrize("kind", ["i8", "i12", "i16", "f32"])
def test_bit_identical(kind, name, alpha, beta, per_shot, lanes, shots, max_iter):
    prob, dets, graph = lane_case(name, 400)
    rng = np.random.default_rng(3)
    syn = dets[:shots]
    fmt, kernel = KINDS[kind]()
    llr0 = _priors(prob, fmt, shots, per_shot, rng)
    ref = _run(minsum_lanes_range, graph, llr0, syn, fmt, max_iter, alpha, beta, 32, True)
    got = _run(kernel, graph, llr0, syn, fmt, max_iter, alpha, beta, lanes, True)
    for a, b in zip(ref, got):
        assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
    assert 0 < ref[2].sum() < shots or name == "surf5"  # some shots converge early, persistent lanes refill
    hard2, post2, conv2, it2 = _run(kernel, graph, llr0, syn, fmt, max_iter, alpha, beta, lanes, False)
    assert post2.shape[0] == 0
    assert np.array_equal(hard2, ref[0]) and np.array_equal(conv2, ref[2]) and np.array_equal(it2, ref[3])


@pytest.mark.parametrize("kind", ["i8", "i16", "f32"])
def test_random_syndromes_run_to_max_iter(kind):
    """Uniformly random syndromes (most shots run all iterations): still identical."""
    prob, _, graph = lane_case("surf5", 400)
    syn = np.random.default_rng(5).integers(0, 2, size=(70, prob.H.shape[0]), dtype=np.uint8)
    fmt, kernel = KINDS[kind]()
    llr0 = fmt.quantize(prob.llr[None, :])
    ref = _run(minsum_lanes_range, graph, llr0, syn, fmt, 12, 0.875, 0.0, 32, True)
    got = _run(kernel, graph, llr0, syn, fmt, 12, 0.875, 0.0, 64, True)
    assert np.any(ref[3] == 12) and not ref[2].all()
    for a, b in zip(ref, got):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_i8_rejects_wide_formats():
    prob, dets, graph = lane_case("surf5", 400)
    fmt = MessageFormat.create(10, 3)
    with pytest.raises(ValueError):
        _run(minsum_lanes_i8_range, graph, fmt.quantize(prob.llr[None, :]), dets[:8], fmt, 5, 1.0, 0.0, 8, False)
    fmt = MessageFormat.create(17, 3)
    with pytest.raises(ValueError):
        _run(minsum_lanes_i16_range, graph, fmt.quantize(prob.llr[None, :]), dets[:8], fmt, 5, 1.0, 0.0, 8, False)


#: narrow kind -> its kernel with uint16 edge slots (check degrees above 255)
WIDE = {"i8": minsum_lanes_i8_wide_range, "i12": minsum_lanes_i16_wide_range, "i16": minsum_lanes_i16_wide_range,
        "f32": minsum_lanes_f32_wide_range}


@pytest.mark.parametrize("kind", ["i8", "i16", "f32"])
def test_wide_check_bit_identical(kind):
    """A check of degree 300 and one of 270 (uint16 slots, the least message often at a slot above 255):
    :func:`narrow_kernel` picks the format's wide kernel, which equals the reference on every output (per-shot
    priors and shared ones, with and without posteriors); the uint8-slot kernel refuses the graph."""
    prob, syn, graph = wide_case(150)
    assert int(np.diff(graph.chk_ptr).max()) == WIDE_DEGREES[0]
    fmt, kernel = KINDS[kind]()
    wide = WIDE[kind]
    rng = np.random.default_rng(4)
    for per_shot, alpha in ((False, 1.0), (True, 0.625), (False, 0.0)):
        llr0 = _priors(prob, fmt, syn.shape[0], per_shot, rng)
        assert narrow_kernel(llr0, graph.var_ptr, graph.chk_ptr, fmt.msg_lim, fmt.post_lim, fmt.alpha_num(alpha),
                             ALPHA_SHIFT, alpha == 0) is wide
        ref = _run(minsum_lanes_range, graph, llr0, syn, fmt, 25, alpha, 0.0, 32, True)
        assert 0 < ref[2].sum() < syn.shape[0]  # some shots converge, some run every iteration
        got = _run(wide, graph, llr0, syn, fmt, 25, alpha, 0.0, narrow_lanes(wide), True)
        for a, b in zip(ref, got):
            assert a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))
        hard2, post2, conv2, it2 = _run(wide, graph, llr0, syn, fmt, 25, alpha, 0.0, 13, False)
        assert np.array_equal(hard2, ref[0]) and np.array_equal(conv2, ref[2]) and np.array_equal(it2, ref[3])
    with pytest.raises(ValueError):  # uint8 slots hold check degrees <= 255
        _run(kernel, graph, llr0, syn[:8], fmt, 5, 1.0, 0.0, 8, False)


def test_edge_slots_types_and_limits():
    """Slots are each edge's position in its check, in the dtype asked for; a check too wide for the type gets
    "none" (the kernels refuse such graphs), and :func:`narrow_kernel` refuses a check above 65535."""
    prob, _, graph = wide_case(8)
    m = prob.H.shape[0]
    slot8, maxc, maxv = edge_slots(graph.var_ptr, graph.var_chks, m, np.uint8(0))
    slot16, _, _ = edge_slots(graph.var_ptr, graph.var_chks, m, np.uint16(0))
    assert slot8.dtype == np.uint8 and slot16.dtype == np.uint16 and maxc == 300 and maxv == 4
    first = graph.var_ptr[:-1]  # each variable's first edge: check 0 for bits 0:300, its slot the bit index
    assert np.array_equal(slot16[first[:300]], np.arange(300))
    assert np.array_equal(slot8[first[:300]], np.minimum(np.arange(300), 255))
    fmt = MessageFormat.create(8, 3)
    llr0 = fmt.quantize(prob.llr[None, :])
    wide_ptr = np.array([0, 65536], np.int64)
    assert narrow_kernel(llr0, graph.var_ptr, wide_ptr, fmt.msg_lim, fmt.post_lim, 1, 0, False) is None
    narrow_ptr = np.array([0, 255], np.int64)
    assert narrow_kernel(llr0, graph.var_ptr, narrow_ptr, fmt.msg_lim, fmt.post_lim, 1, 0, False) is \
        minsum_lanes_i8_range


def _sweep_args(kind):
    """Arguments ``(cur, nxt, sw)`` of the 64-lane sweep in the wrapper's types (C-contiguous arrays in named
    tuples)."""
    W, z = 64, np.zeros
    graph = NarrowGraph(z(3, np.int64), z(4, np.uint32), z(4, np.uint8))
    if kind == "i8":
        ct, st = np.uint8, np.int16
        coef = IntCoeffs(z(W, np.int32), z(W, np.int32), False, 1, 0, 8)
        prm = IntParams(True, False, np.int32(0), np.int32(127), np.int16(127), np.uint8(127), np.int16(511))
    else:
        ct = st = np.float32
        coef = F32Coeffs(z(W, np.float64), False, 1.0)
        prm = F32Params(True, False, ct(0), ct(1e30), ct(1e30))
    cur, nxt = (NarrowCheckState(z((4, W), ct), z((4, W), ct), z((4, W), np.uint8), z((4, W), np.uint8))
                for _ in range(2))
    lanes = NarrowLanes(z((4, W), np.uint8), z((4, W), np.uint8), z((2, W), st), z((2, W), np.uint8), z((2, W), st),
                        z(W, np.int32), z((0, 2, W), st), z(W, np.int64))
    scratch = NarrowScratch(z((4, W), ct), z((4, W), ct), z((4, W), np.uint8), z(W, st), z((2, W), st))
    return cur, nxt, NarrowSweep(graph, coef, prm, lanes, scratch)


@pytest.mark.parametrize("kind", ["i8", "f32"])
def test_sweep_has_noalias_and_no_memcheck(kind):
    """A fresh, uncached compile of the 64-lane sweep (cache-loaded code carries no IR): LLVM ``noalias``
    on the arguments and no runtime alias checks (``vector.memcheck``) in the lane loops."""
    sweep = _sweep_int_w64 if kind == "i8" else _sweep_f32_w64
    fresh = numba.njit(nogil=True, pipeline_class=NoAliasCompiler)(sweep.py_func)
    sig = tuple(numba.typeof(a) for a in _sweep_args(kind))
    fresh.compile(sig)
    ir = fresh.inspect_llvm(sig)
    assert "noalias" in ir
    assert "vector.memcheck" not in ir


@pytest.mark.parametrize("kind", ["i8", "i16", "f32"])
def test_posterior_history_identical(kind):
    """``hist_k = 4``: ``post_out`` holds the sum of the last 4 posteriors, as the reference's."""
    prob, dets, graph = lane_case("bb72", 400)
    fmt, kernel = KINDS[kind]()
    llr0 = fmt.quantize(prob.llr[None, :])
    ref = _run(minsum_lanes_range, graph, llr0, dets[:100], fmt, 30, 1.0, 0.0, 32, True, hist_k=4)
    got = _run(kernel, graph, llr0, dets[:100], fmt, 30, 1.0, 0.0, 64, True, hist_k=4)
    for a, b in zip(ref, got):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def test_decoder_dispatch_on_foreign_inputs():
    """BpDecoder picks the narrow kernels on a DEM qdecode did not write (stim's color code), and the kernels
    with uint16 edge slots for a check wider than 255; all give the reference kernel's results."""
    import scipy.sparse as sp
    import stim

    from qdecode.decoders.bp import BpDecoder
    from qdecode.kernels.minsum_lanes_narrow import minsum_lanes_f32_range, minsum_lanes_i8_range

    circ = stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=5,
                                  after_clifford_depolarization=0.002, before_measure_flip_probability=0.002)
    prob = DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=False))
    dets = circ.compile_detector_sampler(seed=9).sample(70).astype(np.uint8)
    rng = np.random.default_rng(9)
    wide = sp.csr_matrix(np.vstack([np.ones((1, 300), np.uint8), (rng.random((20, 300)) < 0.05).astype(np.uint8)]))
    wide_prob = DecodingProblem(H=wide, L=None, priors=np.full(300, 0.01))
    # C order, as check_syndromes hands it to _run (a transposed array would compile the kernels once more)
    wide_dets = np.ascontiguousarray((wide @ (rng.random((70, 300)) < 0.01).T % 2).T, dtype=np.uint8)
    cases = [(prob, dets, {"bits": 8, "frac_bits": 3}, minsum_lanes_i8_range),
             (prob, dets, {"bits": 12, "frac_bits": 6}, minsum_lanes_i16_range),
             (prob, dets, {"bits": 16, "frac_bits": 10}, minsum_lanes_i16_range),
             (prob, dets, {"bits": 17, "frac_bits": 10}, None),  # wider than the 16-bit kernel: the reference
             (prob, dets, {"dtype": "float32"}, minsum_lanes_f32_range),
             (wide_prob, wide_dets, {"bits": 8, "frac_bits": 3}, minsum_lanes_i8_wide_range)]
    for problem, s, fmt, kernel in cases:
        dec = BpDecoder(problem, max_iter=20, alpha=0.625, beta=0.0, schedule="flooding",
                        **{"bits": 0, "frac_bits": 3, **fmt})
        assert dec.narrow is kernel
        hard, post, conv, iters = dec._run(dec.prior_llr, s, True)
        ref = BpOut(*bp_outputs(len(s), problem.num_errors, dec.msg_dtype, True))
        minsum_lanes_range(dec.graph, dec.prior_llr, s, dec.kernel_params(), ref, 1, 32, 0, len(s))
        for a, b in zip((hard, post, conv, iters), ref):
            np.testing.assert_array_equal(a, b)
