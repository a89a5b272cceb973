"""Relay-BP lanes kernel: outputs identical to the scalar kernel per shot (float64 and fixed point)."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.bp import ALPHA_SHIFT
from qdecode.decoders.confidence import class_codes, gap_db
from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder
from qdecode.kernels.minsum_lanes_narrow import edge_slots
from qdecode.kernels.relay import (
    MessageArith,
    RelayGapOut,
    RelayGraph,
    RelayOut,
    RelaySchedule,
    relay_decode_range,
    relay_gap_range,
    relay_shot_priors_range,
)
from qdecode.kernels.relay_lanes import relay_lanes_range
from qdecode.kernels.relay_lanes_narrow import (
    relay_i8_accepts,
    relay_i8_kernels,
    relay_lanes_i8_gap_range,
    relay_lanes_i8_range,
    relay_lanes_i8_wide_gap_range,
    relay_lanes_i8_wide_range,
    relay_lanes_i8_wide_shot_priors_range,
    relay_template,
)
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit
from tests.kernels.lane_cases import WIDE_DEGREES, wide_case


def _problem(circ, shots, seed):
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    return prob, circ.compile_detector_sampler(seed=seed).sample(shots).astype(np.uint8)


@pytest.fixture(scope="module")
def surface5():
    c = build_circuit("surface", d=5, noise="sd6", p=0.005, basis="Z", memory_basis_only=True)
    return _problem(c, 75, 11)


@pytest.fixture(scope="module")
def bb72():
    c = build_circuit("bb72_12_6", noise="bb-uniform", p=0.006, rounds=2, basis="Z")
    return _problem(c, 45, 3)


def _decoder(prob, bits, gammas=None, **kw):
    params = dict(gamma0=0.125, gamma_interval=(-0.24, 0.66), pre_iter=15, legs=20, leg_iter=12, stop_after=3,
                  alpha=1.0, seed=7, bits=bits, frac_bits=3, threads=1, explicit_gammas=gammas)
    params.update(kw)
    return RelayBpDecoder(prob, **params)


def _leading_args(dec, syn):
    """(graph, schedule, arithmetic, seed, syndromes) of ``dec`` for the relay range kernels."""
    lo, hi = dec.gamma_interval
    return (RelayGraph(dec.var_ptr, dec.var_chks, dec.prior_llr, dec.weight_llr),
            RelaySchedule(dec.gamma0, lo, hi, dec.gammas, dec.pre_iter, dec.legs, dec.leg_iter, dec.stop_after),
            MessageArith(dec.alpha, dec.alpha_num, ALPHA_SHIFT, GAMMA_FRAC_BITS, dec.msg_lim, dec.post_lim),
            np.uint64(dec.seed), syn)


def _run(dec, syn, lanes=None, start=0, stop=None, kernel=relay_lanes_range):
    S = syn.shape[0]
    stop = S if stop is None else stop
    n = dec.problem.num_errors
    out = RelayOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32), np.zeros(S, np.int32),
                   np.zeros(S, np.float64))
    args = (*_leading_args(dec, syn), out)
    if lanes is None:
        relay_decode_range(*args, start, stop)
    else:
        kernel(*args, lanes, start, stop)
    return out


def _assert_same(a, b):
    for name, x, y in zip(("hard", "converged", "iters", "legs", "weight"), a, b):
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("bits", [0, 8])
def test_lanes_identical_drawn_gammas(surface5, bits):
    prob, syn = surface5
    dec = _decoder(prob, bits)
    ref = _run(dec, syn)
    assert ref[3].max() >= 2 and ref[1].any()  # later legs run
    for lanes in (1, 5, 8, 32):  # 75 shots: not a multiple of the lane count
        _assert_same(ref, _run(dec, syn, lanes))


@pytest.mark.parametrize("bits", [0, 8])
def test_lanes_identical_explicit_gammas(bb72, bits):
    prob, syn = bb72
    n = prob.num_errors
    G = np.random.default_rng(5).uniform(-0.24, 0.66, size=(7, n))
    dec = _decoder(prob, bits, gammas=G)
    ref = _run(dec, syn)
    assert ref[3].max() >= 2
    for lanes in (3, 16):
        _assert_same(ref, _run(dec, syn, lanes))


def test_lanes_hard_shots_and_stopping_rules(bb72):
    """Few iterations: many legs fail, some shots never converge (leg 0's decision); legs = 0; S = 1."""
    prob, syn = bb72
    for kw in (dict(pre_iter=2, leg_iter=2, legs=6, stop_after=2), dict(legs=0, stop_after=1),
               dict(stop_after=1), dict(pre_iter=3, leg_iter=3, legs=4, stop_after=20)):
        dec = _decoder(prob, 0, **kw)
        ref = _run(dec, syn)
        _assert_same(ref, _run(dec, syn, 6))
    assert not ref[1].all()


def test_lanes_range_and_order_independent(surface5):
    """A sub-range writes only its rows; a shot's result does not depend on its neighbours."""
    prob, syn = surface5
    dec = _decoder(prob, 0)
    ref = _run(dec, syn)
    part = _run(dec, syn, 8, 10, 47)
    _assert_same(tuple(x[10:47] for x in ref), tuple(x[10:47] for x in part))
    assert not part[0][:10].any() and not part[2][47:].any()
    perm = np.random.default_rng(2).permutation(syn.shape[0])
    shuffled = _run(dec, syn[perm], 8)
    _assert_same(tuple(x[perm] for x in ref), shuffled)


def test_decoder_batch_uses_lanes_identically(surface5):
    """decode_batch (lanes, 2 threads) equals shot-by-shot decode (scalar) and the scalar range kernel."""
    prob, syn = surface5
    dec = _decoder(prob, 8, threads=2)
    ref = _run(dec, syn)
    hard = dec.decode_batch(syn)
    np.testing.assert_array_equal(hard, ref[0])
    np.testing.assert_array_equal(dec.last_info.iterations, ref[2])
    np.testing.assert_array_equal(dec.last_info.extra["legs"], ref[3])
    for s in (0, 17, 74):
        np.testing.assert_array_equal(dec.decode(syn[s]), ref[0][s])
    np.testing.assert_array_equal(dec.decode_batch(syn[:3]), ref[0][:3])  # < 4 shots: scalar kernel


# ------------------------------------------------------------------ the 8-bit kernel (relay_lanes_narrow)


def _accepts(dec):
    lo, hi = dec.gamma_interval
    return relay_i8_accepts(dec.var_ptr, 6, dec.prior_llr, dec.gamma0, lo, hi, dec.gammas, GAMMA_FRAC_BITS, dec.msg_lim,
                            dec.post_lim, dec.alpha_num, ALPHA_SHIFT)


@pytest.mark.parametrize("bits, frac_bits, interval", [(8, 3, (-0.24, 0.66)), (4, 1, (-0.24, 0.66)),
                                                       (6, 2, (-1.5, 2.5))])
def test_i8_lanes_identical_drawn_gammas(surface5, bits, frac_bits, interval):
    """8-bit lanes = scalar kernel per shot; 4-bit messages saturate the posteriors often (the extrinsic
    message comes from the unsaturated sum), wide gamma intervals make large memory terms."""
    prob, syn = surface5
    dec = _decoder(prob, bits, frac_bits=frac_bits, gamma_interval=interval)
    assert _accepts(dec)
    ref = _run(dec, syn)
    assert ref[3].max() >= 2 and ref[1].any()
    for lanes in (1, 5, 64):  # 75 shots: not a multiple of the lane count; 64 runs the fixed-width sweep
        _assert_same(ref, _run(dec, syn, lanes, kernel=relay_lanes_i8_range))


def test_i8_lanes_identical_explicit_gammas_and_stopping_rules(bb72):
    prob, syn = bb72
    G = np.random.default_rng(5).uniform(-0.24, 0.66, size=(7, prob.num_errors))
    failed = False
    for kw in (dict(gammas=G), dict(pre_iter=2, leg_iter=2, legs=6, stop_after=2), dict(legs=0, stop_after=1),
               dict(pre_iter=3, leg_iter=3, legs=4, stop_after=20), dict(alpha=0.625)):
        dec = _decoder(prob, 8, **kw)
        ref = _run(dec, syn)
        for lanes in (3, 64):
            _assert_same(ref, _run(dec, syn, lanes, kernel=relay_lanes_i8_range))
        failed = failed or not ref[1].all()
    assert failed  # some shot never converged: leg 0's decision is returned


def test_i8_lanes_range_and_order_independent(surface5):
    prob, syn = surface5
    dec = _decoder(prob, 8)
    ref = _run(dec, syn)
    part = _run(dec, syn, 64, 10, 47, kernel=relay_lanes_i8_range)
    _assert_same(tuple(x[10:47] for x in ref), tuple(x[10:47] for x in part))
    assert not part[0][:10].any() and not part[2][47:].any()
    perm = np.random.default_rng(2).permutation(syn.shape[0])
    _assert_same(tuple(x[perm] for x in ref), _run(dec, syn[perm], 64, kernel=relay_lanes_i8_range))


def test_i8_accepts_only_what_fits(surface5):
    prob, _ = surface5
    assert not _accepts(_decoder(prob, 0))  # float messages
    assert not _accepts(_decoder(prob, 9))  # msg_lim 255
    assert not _accepts(_decoder(prob, 8, gamma_interval=(-200.0, 0.5)))  # gamma numerators beyond int16
    dec = _decoder(prob, 8)
    assert dec.i8_lanes and not _decoder(prob, 0).i8_lanes
    lo, hi = dec.gamma_interval
    args = (dec.prior_llr, dec.gamma0, lo, hi, dec.gammas, GAMMA_FRAC_BITS, dec.msg_lim, dec.post_lim, dec.alpha_num,
            ALPHA_SHIFT)
    assert relay_i8_accepts(dec.var_ptr, 256, *args)  # uint16 slots (relay_i8_kernels picks the wide entries)
    assert relay_i8_accepts(dec.var_ptr, 65535, *args)
    assert not relay_i8_accepts(dec.var_ptr, 65536, *args)  # beyond uint16 slots
    assert relay_i8_kernels(255).plain is relay_lanes_i8_range
    assert relay_i8_kernels(256).plain is relay_lanes_i8_wide_range


# ------------------------------------------------------------------ checks of degree above 255 (uint16 slots)


@pytest.fixture(scope="module")
def wide():
    """:func:`~tests.kernels.lane_cases.wide_case`: checks of degree 300 and 270, 150 shots."""
    return wide_case(150)


def test_i8_wide_check_identical(wide):
    """A check of degree 300 (and one of 270): accepted, the decoder takes the lanes with uint16 slots, and every
    output equals the scalar kernel's; the least message of the wide check sits at a slot above 255 in the
    template, and the uint8-slot entry refuses the graph."""
    prob, syn, _ = wide
    for kw in (dict(), dict(pre_iter=3, leg_iter=3, legs=6, stop_after=4), dict(alpha=0.625, bits=6, frac_bits=2)):
        dec = _decoder(prob, kw.pop("bits", 8), **kw)
        assert dec.i8_lanes and dec._max_check_degree == WIDE_DEGREES[0]
        assert dec._i8.plain is relay_lanes_i8_wide_range
        lo, hi = dec.gamma_interval
        assert relay_i8_accepts(dec.var_ptr, dec._max_check_degree, dec.prior_llr, dec.gamma0, lo, hi, dec.gammas,
                                GAMMA_FRAC_BITS, dec.msg_lim, dec.post_lim, dec.alpha_num, ALPHA_SHIFT)
        ref = _run(dec, syn)
        assert ref[1].any() and not ref[1].all() and ref[3].max() >= 2
        for lanes in (5, 64):
            _assert_same(ref, _run(dec, syn, lanes, kernel=relay_lanes_i8_wide_range))
        hard = dec.decode_batch(syn)  # the decoder's batch path: the wide lanes
        np.testing.assert_array_equal(hard, ref[0])
        np.testing.assert_array_equal(dec.last_info.iterations, ref[2])
    m = prob.H.shape[0]
    slot, maxc, _ = edge_slots(dec.var_ptr, dec.var_chks, m, np.uint16(0))
    tmpl, _ = relay_template(dec.var_ptr, dec.var_chks, slot, dec.prior_llr.astype(np.int16), np.int32(dec.msg_lim), m)
    assert tmpl.arg.dtype == np.uint16 and 255 < tmpl.arg[0] < WIDE_DEGREES[0]  # check 0's least prior: bits 260:300
    with pytest.raises(ValueError):
        _run(dec, syn[:8], 8, kernel=relay_lanes_i8_range)


def test_i8_wide_gap_and_shot_priors_identical(wide):
    """The gap kernel and the per-shot-priors kernel with uint16 slots equal their scalar kernels."""
    prob, syn, _ = wide
    dec = _decoder(prob, 8, stop_after=5, legs=30)
    assert dec._i8.gap is relay_lanes_i8_wide_gap_range
    assert dec._i8.shot_priors is relay_lanes_i8_wide_shot_priors_range
    _assert_gap_same(_run_gap(dec, syn), _run_gap(dec, syn, 64, kernel=relay_lanes_i8_wide_gap_range))
    S, n = syn.shape[0], prob.num_errors
    wllr = dec.weight_llr[None, :] * np.random.default_rng(6).uniform(0.6, 1.4, size=(S, n))
    llr0 = np.ascontiguousarray(dec.format.quantize(wllr))
    graph, sched, arith, seed, _ = _leading_args(dec, syn)
    outs = []
    for kernel in (relay_shot_priors_range, relay_lanes_i8_wide_shot_priors_range):
        r = RelayOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32), np.zeros(S, np.int32),
                     np.zeros(S, np.float64))
        args = (graph, sched, arith, seed, llr0, wllr, syn, r)
        kernel(*args, 0, S) if kernel is relay_shot_priors_range else kernel(*args, 64, 0, S)
        outs.append(r)
    _assert_same(*outs)


# ------------------------------------------------------------------ the gap on the 8-bit lanes


def _run_gap(dec, syn, lanes=None, start=0, stop=None, kernel=relay_lanes_i8_gap_range):
    """:class:`RelayGapOut` of the scalar ``relay_gap_range`` (``lanes`` None) or ``relay_lanes_i8_gap_range``."""
    S = syn.shape[0]
    stop = S if stop is None else stop
    n = dec.problem.num_errors
    out = RelayGapOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32),
                      np.zeros(S, np.int32), np.zeros(S, np.float64), np.zeros(S, np.float64), np.zeros(S, np.int32))
    args = (*_leading_args(dec, syn), class_codes(dec.problem.L), out)
    if lanes is None:
        relay_gap_range(*args, start, stop)
    else:
        kernel(*args, lanes, start, stop)
    return out


def _assert_gap_same(a, b):
    for name, x, y in zip(RelayGapOut._fields, a, b):  # nan (no leg converged) in the same places
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.fixture(scope="module", params=[3, 5])
def surface_gap(request):
    """Surface-code memory circuits with 400 shots at a noise where legs often disagree."""
    d = request.param
    c = build_circuit("surface", d=d, noise="sd6", p=0.01, basis="Z", memory_basis_only=True)
    return _problem(c, 400, 5 + d)


def test_i8_gap_lanes_identical_to_scalar(surface_gap):
    """The 8-bit lanes' gap (weights, weight_other, classes, decisions) = the scalar kernel's, bit for bit:
    several converged legs per shot (stop_after > 1), shots whose legs disagree (finite gaps), the drain
    (lanes > shots left, the scalar finish), a sub-range, and stopping rules that fill or never fill the records."""
    prob, syn = surface_gap
    unconverged = 0
    for kw in (dict(), dict(stop_after=5, legs=40), dict(pre_iter=3, leg_iter=3, legs=6, stop_after=20),
               dict(stop_after=1)):
        dec = _decoder(prob, 8, **kw)
        assert dec.i8_lanes
        ref = _run_gap(dec, syn)
        unconverged += np.isnan(ref.weight_other).sum()
        if dec.stop_after > 1:
            assert (ref.classes >= 2).sum() >= 3 and np.isfinite(ref.weight_other).sum() >= 3  # legs disagree
            assert np.isinf(ref.weight_other).any()
        for lanes in (7, 64):
            _assert_gap_same(ref, _run_gap(dec, syn, lanes))
        part = _run_gap(dec, syn, 64, 33, 301)
        _assert_gap_same(tuple(x[33:301] for x in ref), tuple(x[33:301] for x in part))
    assert unconverged > 0  # shots where no leg converged (nan) are covered too


def test_confidence_on_i8_lanes_equals_scalar_gap(surface_gap):
    """predict_with_confidence (8-bit lanes, 2 threads) = the scalar gap kernel and the plain prediction."""
    prob, syn = surface_gap
    dec = _decoder(prob, 8, stop_after=5, legs=40, threads=2)
    ref = _run_gap(dec, syn)
    obs, gap = dec.predict_with_confidence(syn)
    extra = dec.last_info.extra
    np.testing.assert_array_equal(extra["weight"], ref.weight)
    np.testing.assert_array_equal(extra["weight_other"], ref.weight_other)
    np.testing.assert_array_equal(extra["classes"], ref.classes)
    np.testing.assert_array_equal(dec.last_info.converged, ref.converged)
    np.testing.assert_array_equal(gap, gap_db(ref.weight, ref.weight_other))
    assert np.isfinite(gap).sum() >= 3
    np.testing.assert_array_equal(obs, dec.predict_observables_batch(syn))
    few_obs, few_gap = dec.predict_with_confidence(syn[:3])  # < MIN_LANE_SHOTS: the scalar kernel
    np.testing.assert_array_equal(few_obs, obs[:3])
    np.testing.assert_array_equal(few_gap, gap[:3])
