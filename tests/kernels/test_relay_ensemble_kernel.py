"""Relay-BP ensemble kernel (:mod:`qdecode.kernels.relay_ensemble`): one chain is the serial kernel (answers, gap
and trail of answers), the stopping rule counts converged legs over the chains, and the batch, gap and timed
kernels agree bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.bp import ALPHA_SHIFT
from qdecode.decoders.confidence import class_codes
from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder
from qdecode.kernels.relay import (
    MessageArith,
    RelayGapOut,
    RelayGraph,
    RelayOut,
    RelaySchedule,
    RelayTrailOut,
    relay_decode_range,
    relay_decode_timed_range,
    relay_gap_range,
    shot_key,
)
from qdecode.kernels.relay_ensemble import (
    EnsembleGapOut,
    EnsembleOut,
    chain_key,
    relay_ensemble_gap_range,
    relay_ensemble_range,
    relay_ensemble_timed_range,
)
from tests.kernels.lane_cases import lane_case


@pytest.fixture(scope="module")
def surf5():
    prob, dets, _ = lane_case("surf5", 150)
    return prob, dets


@pytest.fixture(scope="module")
def bb72():
    prob, dets, _ = lane_case("bb72", 60)
    return prob, dets


def _decoder(prob, gammas=None, **kw):
    params = dict(gamma0=0.125, gamma_interval=(-0.24, 0.66), pre_iter=15, legs=20, leg_iter=12, stop_after=3,
                  alpha=1.0, seed=7, bits=8, frac_bits=3, threads=1, explicit_gammas=gammas)
    params.update(kw)
    return RelayBpDecoder(prob, **params)


def _args(dec, syn):
    lo, hi = dec.gamma_interval
    return (RelayGraph(dec.var_ptr, dec.var_chks, dec.prior_llr, dec.weight_llr),
            RelaySchedule(dec.gamma0, lo, hi, dec.gammas, dec.pre_iter, dec.legs, dec.leg_iter, dec.stop_after),
            MessageArith(dec.alpha, dec.alpha_num, ALPHA_SHIFT, GAMMA_FRAC_BITS, dec.msg_lim, dec.post_lim),
            np.uint64(dec.seed), syn)


def _serial(dec, syn):
    S, n = syn.shape[0], dec.problem.num_errors
    out = RelayOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32), np.zeros(S, np.int32),
                   np.zeros(S, np.float64))
    relay_decode_range(*_args(dec, syn), out, 0, S)
    return out


def _fields(S, n):
    return (np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32), np.zeros(S, np.int32),
            np.zeros(S, np.float64))


def _trails(dec, S, cap):
    z = np.zeros
    return RelayTrailOut(class_codes(dec.problem.L), z((S, cap), np.int64), z((S, cap), np.int64),
                         z((S, cap), np.uint64), z(S, np.int64))


def _ensemble(dec, syn, chains, lanes=64, timed=False, ranges=None, trails=None, gap=False):
    """The ensemble kernel's outputs: batch (``gap``: the gap kernel, :class:`EnsembleGapOut`) or timed (``trails``:
    a :class:`RelayTrailOut` to fill, else room for none)."""
    S, n = syn.shape[0], dec.problem.num_errors
    if gap:
        out = EnsembleGapOut(*_fields(S, n), np.zeros(S, np.int32), np.zeros(S, np.float64), np.zeros(S, np.int32))
    else:
        out = EnsembleOut(*_fields(S, n), np.zeros(S, np.int32))
    for a, b in ranges or [(0, S)]:
        if timed:
            ticks = np.zeros(S, np.int64)
            relay_ensemble_timed_range(*_args(dec, syn), out, ticks, _trails(dec, S, 0) if trails is None else trails,
                                       chains, a, b)
            assert np.all(ticks[a:b] > 0)
        elif gap:
            relay_ensemble_gap_range(*_args(dec, syn), class_codes(dec.problem.L), out, chains, lanes, a, b)
        else:
            relay_ensemble_range(*_args(dec, syn), out, chains, lanes, a, b)
    return out


def _assert_same(a, b, fields=("hard", "converged", "iterations", "legs", "weight")):
    for f in fields:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


@pytest.mark.parametrize("case", ["surf5", "bb72"])
def test_one_chain_is_the_serial_kernel(case, request):
    """``chains = 1``: every output of the serial scalar kernel, bit for bit, and steps = iterations; on both the
    batch (64 shots side by side) and the timed kernel."""
    prob, syn = request.getfixturevalue(case)
    dec = _decoder(prob)
    ref = _serial(dec, syn)
    assert 0 < ref.converged.mean() and ref.legs.max() > 0  # the relay legs are exercised
    for out in (_ensemble(dec, syn, 1), _ensemble(dec, syn, 1, timed=True)):
        _assert_same(out, ref)
        np.testing.assert_array_equal(out.steps, ref.iterations)


def test_one_chain_is_the_serial_kernel_with_explicit_gammas(surf5):
    prob, syn = surf5
    rng = np.random.default_rng(5)
    dec = _decoder(prob, gammas=rng.uniform(-0.3, 0.7, (3, prob.num_errors)), stop_after=4)
    _assert_same(_ensemble(dec, syn, 1), _serial(dec, syn))


@pytest.mark.parametrize("chains", [2, 3, 8])
def test_identical_chains_count_every_converged_leg(surf5, chains):
    """An explicit gamma table of ``R + 1`` rows whose row 0 is ``gamma0``: every chain runs the serial chain's legs
    (chain ``c``, leg ``r`` takes row ``(c (R + 1) + r) % (R + 1) = r``), so each of its convergences is ``N``
    converged legs at one step. ``stop_after = N j`` then stops where the serial decoder with ``stop_after = j``
    stops: the same decision and weight, ``steps`` = the serial iterations, ``N`` times the iterations and legs."""
    prob, syn = surf5
    legs = 4 * chains  # R = 4 legs per chain
    table = np.random.default_rng(1).uniform(-0.24, 0.66, (5, prob.num_errors))
    table[0] = 0.125
    for j in (1, 2):
        ens = _ensemble(_decoder(prob, gammas=table, legs=legs, stop_after=chains * j), syn, chains)
        ref = _serial(_decoder(prob, gammas=table, legs=4, stop_after=j), syn)
        _assert_same(ens, ref, ("hard", "converged", "weight"))
        np.testing.assert_array_equal(ens.steps, ref.iterations)
        np.testing.assert_array_equal(ens.iterations, chains * ref.iterations)
        np.testing.assert_array_equal(ens.legs, chains * ref.legs)


def test_no_convergence_returns_chain_zero_leg_zero(surf5):
    """Nothing converges (one iteration, no relay legs): the decision is chain 0's leg 0, the serial fallback."""
    prob, syn = surf5
    dec = _decoder(prob, pre_iter=1, legs=0)
    ref = _serial(dec, syn)
    ens = _ensemble(dec, syn, 4)
    lost = ~ens.converged
    assert lost.sum() >= 10
    assert not ref.converged[lost].any()
    np.testing.assert_array_equal(ens.hard[lost], ref.hard[lost])
    np.testing.assert_array_equal(ens.weight[lost], ref.weight[lost])
    np.testing.assert_array_equal(ens.steps, np.ones_like(ens.steps))


@pytest.mark.parametrize("chains", [3, 8])
def test_batch_timed_and_groupings_agree(bb72, chains):
    """The answers depend only on the shot: batch kernel (64 or 16 lanes, one range or several) == timed kernel."""
    prob, syn = bb72
    dec = _decoder(prob, stop_after=2)
    ref = _ensemble(dec, syn, chains)
    fields = ("hard", "converged", "iterations", "legs", "weight", "steps")
    _assert_same(_ensemble(dec, syn, chains, timed=True), ref, fields)
    _assert_same(_ensemble(dec, syn, chains, lanes=16, ranges=[(0, 7), (7, 8), (8, 60)]), ref, fields)
    _assert_same(_ensemble(dec, syn[::-1].copy(), chains), EnsembleOut(*(x[::-1] for x in ref)), fields)


@pytest.mark.parametrize("chains", [2, 8])
def test_work_bound_and_syndromes(bb72, chains):
    """steps <= pre_iter + ceil(legs / N) leg_iter; chains' iterations <= N steps; a converged decision has
    H e = s; more chains take fewer steps on average."""
    prob, syn = bb72
    dec = _decoder(prob)
    out = _ensemble(dec, syn, chains)
    R = -(-dec.legs // chains)
    assert out.steps.max() <= dec.pre_iter + R * dec.leg_iter
    assert np.all(out.iterations <= chains * out.steps) and np.all(out.steps <= out.iterations)
    H = prob.H.toarray().astype(np.int64)
    res = ((out.hard.astype(np.int64) @ H.T) & 1) != syn
    assert not res[out.converged].any()
    assert out.steps.mean() < _serial(dec, syn).iterations.mean()


def test_chain_keys():
    key = shot_key(np.uint64(3), np.array([1, 0, 1], np.uint8))
    assert chain_key(key, 0) == key
    assert len({int(chain_key(key, c)) for c in range(64)}) == 64


@pytest.mark.parametrize("case", ["surf5", "bb72"])
def test_one_chain_gap_and_trail_are_the_serial_kernels(case, request):
    """``chains = 1``: the gap kernel's ``weight_other`` and ``classes`` are the serial
    :func:`~qdecode.kernels.relay.relay_gap_range`'s, and the timed kernel's trail of answers (work, class codes,
    lengths) the serial :func:`~qdecode.kernels.relay.relay_decode_timed_range`'s, bit for bit."""
    prob, syn = request.getfixturevalue(case)
    dec = _decoder(prob)
    S, n = syn.shape[0], prob.num_errors
    ref = RelayGapOut(*_fields(S, n), np.zeros(S, np.float64), np.zeros(S, np.int32))
    relay_gap_range(*_args(dec, syn), class_codes(prob.L), ref, 0, S)
    got = _ensemble(dec, syn, 1, gap=True)
    _assert_same(got, ref, ("hard", "converged", "iterations", "legs", "weight", "weight_other", "classes"))
    kinds = {"inf": np.isinf(ref.weight_other).any(), "nan": np.isnan(ref.weight_other).any(),
             "finite": np.isfinite(ref.weight_other).any()}
    assert kinds == {"inf": True, "nan": case == "bb72", "finite": case == "surf5"}  # one class; none; two
    cap = dec.stop_after + 1
    want = _trails(dec, S, cap)
    relay_decode_timed_range(*_args(dec, syn), RelayOut(*_fields(S, n)), np.zeros(S, np.int64), want, 0, S)
    trails = _trails(dec, S, cap)
    _ensemble(dec, syn, 1, timed=True, trails=trails)
    for f in ("work", "code", "count"):
        np.testing.assert_array_equal(getattr(trails, f), getattr(want, f), err_msg=f)
    assert want.count.max() > 1


@pytest.mark.parametrize("chains", [3, 8])
def test_gap_kernel_answers_and_groupings(bb72, chains):
    """The gap kernel returns the plain kernel's answers; its gap depends only on the shot (64 or 16 lanes, one
    range or several); ``weight_other`` is never below the weight, nan exactly where nothing converged, and
    ``classes`` counts at least the returned class (several where the gap is finite)."""
    prob, syn = bb72
    dec = _decoder(prob, stop_after=3)
    plain = _ensemble(dec, syn, chains)
    got = _ensemble(dec, syn, chains, gap=True)
    _assert_same(got, plain, ("hard", "converged", "iterations", "legs", "weight", "steps"))
    _assert_same(_ensemble(dec, syn, chains, lanes=16, ranges=[(0, 7), (7, 8), (8, 60)], gap=True), got,
                 ("hard", "weight", "steps", "weight_other", "classes"))
    conv = got.converged
    assert np.all(np.isnan(got.weight_other[~conv])) and np.all(got.classes[~conv] == 0)
    assert np.all(got.weight_other[conv] >= got.weight[conv]) and np.all(got.classes[conv] >= 1)
    finite = np.isfinite(got.weight_other)
    assert finite.any() and np.all(got.classes[finite] >= 2) and np.all(got.classes[conv & ~finite] == 1)


@pytest.mark.parametrize("chains", [3, 8])
def test_trail_of_answers(bb72, chains):
    """The timed kernel's trail: the answers are the batch kernel's; each shot's trail starts at or before chain 0's
    leg 0 ends, has strictly increasing steps and ascending ticks, at most ``stop_after + 1`` events, and ends at
    the returned answer's class at or before the shot's last step."""
    prob, syn = bb72
    dec = _decoder(prob, stop_after=3)
    S = syn.shape[0]
    ref = _ensemble(dec, syn, chains)
    trails = _trails(dec, S, dec.stop_after + 1)
    got = _ensemble(dec, syn, chains, timed=True, trails=trails)
    _assert_same(got, ref, ("hard", "converged", "iterations", "legs", "weight", "steps"))
    length = trails.count
    assert np.all(length >= 1) and np.all(trails.work[:, 0] <= dec.pre_iter)
    codes = (got.hard.astype(np.uint64) * class_codes(prob.L)[None, :])
    answer = np.bitwise_xor.reduce(codes, axis=1)
    np.testing.assert_array_equal(trails.code[np.arange(S), length - 1], answer)
    for s in range(S):
        w, t = trails.work[s, :length[s]], trails.ticks[s, :length[s]]
        assert np.all(np.diff(w) > 0) and np.all(np.diff(t) >= 0) and w[-1] <= got.steps[s]
    assert np.any(length > 1)
