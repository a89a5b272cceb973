"""Relay-BP ensemble kernel (:mod:`qdecode.kernels.relay_ensemble`): one chain is the serial kernel, the
stopping rule counts converged legs over the chains, and the batch and timed kernels agree bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.bp import ALPHA_SHIFT
from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder
from qdecode.kernels.relay import MessageArith, RelayGraph, RelayOut, RelaySchedule, relay_decode_range, shot_key
from qdecode.kernels.relay_ensemble import (
    EnsembleOut,
    chain_key,
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


def _ensemble(dec, syn, chains, lanes=64, timed=False, ranges=None):
    S, n = syn.shape[0], dec.problem.num_errors
    out = EnsembleOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32),
                      np.zeros(S, np.int32), np.zeros(S, np.float64), np.zeros(S, np.int32))
    for a, b in ranges or [(0, S)]:
        if timed:
            ticks = np.zeros(S, np.int64)
            relay_ensemble_timed_range(*_args(dec, syn), out, ticks, chains, a, b)
            assert np.all(ticks[a:b] > 0)
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
