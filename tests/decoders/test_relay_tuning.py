"""IBM's Relay-BP tuning recipe (`qdecode.decoders.relay_tuning`, `qdecode tune relay-bp`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.relay_bp import RelayBpDecoder, mem_bp
from qdecode.decoders.relay_tuning import tune_relay
from qdecode.problem import DecodingProblem


@pytest.fixture(scope="module")
def shots():
    from qdecode.problem import decoding_dem
    from qdecode.sims.circuits import build_circuit

    circ = build_circuit("surface", d=5, rounds=5, noise="sd6", p=0.009, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    dets, obs = circ.compile_detector_sampler(seed=11).sample(250, separate_observables=True)
    return prob, dets.astype(np.uint8), obs.astype(np.uint8)


def _kw():
    return dict(gamma0_grid=(0.0, 0.3, 0.6), lo_grid=(-0.3, 0.0), hi_grid=(0.4, 0.8), budget=6, legs=10, threads=1)


def test_tuning_recipe(shots):
    prob, dets, obs = shots
    res = tune_relay(prob, dets, obs, **_kw())
    # stage 1: the chosen gamma0 has the fewest Mem-BP logical failures, checked independently
    wrong = {}
    for g0 in (0.0, 0.3, 0.6):
        dec = mem_bp(prob, gamma0=g0, threads=1)
        pred = dec.predict_observables_batch(dets)
        wrong[g0] = np.any(pred != obs, axis=1) | ~dec.last_info.converged
        ev = next(e for e in res.gamma0_sweep if e.params["gamma0"] == g0)
        assert ev.failures == int(np.any(pred != obs, axis=1).sum())
    assert min(res.gamma0_sweep, key=lambda e: e.key).params["gamma0"] == res.best_gamma0
    # stage 2 trains on exactly the shots Mem-BP(best) fails
    assert np.array_equal(res.train_shots, np.flatnonzero(wrong[res.best_gamma0]))
    assert res.train_shots.size > 0
    assert 4 <= len(res.interval_trials) <= 6  # the 2x2 grid, then pattern moves, within the budget
    best = min(res.interval_trials, key=lambda e: e.key)
    assert res.best_interval == (best.params["gamma_lo"], best.params["gamma_hi"])
    assert all(e.params["gamma_lo"] < e.params["gamma_hi"] for e in res.interval_trials)
    # the reported failure count is what Relay-BP (deterministic per shot) with those parameters
    # really does on the train shots
    lo, hi = res.best_interval
    dec = RelayBpDecoder(prob, gamma0=res.best_gamma0, gamma_interval=(lo, hi), legs=10, stop_after=1, threads=1)
    t = res.train_shots
    assert int(np.any(dec.predict_observables_batch(dets[t]) != obs[t], axis=1).sum()) == best.failures
    # relaying fixes some of Mem-BP's failures
    assert best.failures < t.size


def test_tuning_bad_input(shots):
    prob, dets, obs = shots
    with pytest.raises(DecoderInputError, match="budget"):
        tune_relay(prob, dets, obs, budget=0)
    with pytest.raises(DecoderInputError, match="same number of shots"):
        tune_relay(prob, dets, obs[:-1])
    with pytest.raises(DecoderInputError, match="gamma0_grid"):
        tune_relay(prob, dets, obs, gamma0_grid=())
    with pytest.raises(DecoderInputError, match="no pair"):
        tune_relay(prob, dets, obs, gamma0_grid=(0.3,), lo_grid=(0.5,), hi_grid=(0.1,), legs=2)


def test_tune_cli(tmp_path, capsys):
    from qdecode.cli.main import main

    out = tmp_path / "t.json"
    argv = ["tune", "relay-bp", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.012", "--shots", "400",
            "--gamma0-grid", "0.2,0.5", "--lo-grid", "-0.2", "--hi-grid", "0.6", "--budget", "3", "--legs", "10",
            "--json", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    best_line = next(line for line in text.splitlines() if line.startswith("best:"))
    assert "--param gamma0=" in best_line
    doc = json.loads(out.read_text())
    assert len(doc["gamma0_sweep"]) == 2 and doc["search"]["stop_after"] == 1
    assert len(doc["interval_trials"]) <= 3
    capsys.readouterr()
    assert main(argv[:-2] + ["--gamma0-grid", "a,b"]) == 2
    assert "--gamma0-grid" in capsys.readouterr().err
