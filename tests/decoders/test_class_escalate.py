"""Class escalation: valid corrections, never heavier than the lightest candidate, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.decoders import DecoderInputError
from qdecode.decoders.base import observables_from_errors
from qdecode.decoders.bposd import BpOsdDecoder
from qdecode.decoders.class_escalate import MAX_OBSERVABLES, ClassEscalateDecoder, syndrome_ok
from qdecode.decoders.registry import DecoderSpec
from qdecode.decoders.relay_bp import RelayBpDecoder
from qdecode.problem import DecodingProblem, decoding_dem

_SMALL = {"calib_shots": 200, "forced_legs": 20, "forced_leg_iter": 20}


@pytest.fixture(scope="module")
def color():
    c = stim.Circuit.generated("color_code:memory_xyz", distance=3, rounds=3, after_clifford_depolarization=0.01,
                               before_round_data_depolarization=0.01, before_measure_flip_probability=0.01,
                               after_reset_flip_probability=0.01)
    prob = DecodingProblem.from_dem(decoding_dem(c))
    dets, obs = c.compile_detector_sampler(seed=5).sample(300, separate_observables=True)
    return prob, dets.astype(np.uint8), obs.astype(np.uint8)


def _lightest_candidate(prob, dets):
    """The step-1 winner, computed independently from the two candidate decoders."""
    w = prob.llr
    relay = RelayBpDecoder(prob, gamma0=0.15, pre_iter=80, legs=300, leg_iter=60, stop_after=10, alpha=1.0, seed=0,
                           bits=8, frac_bits=3)
    bposd = BpOsdDecoder(prob, osd_order=10, osd_key="sum4", max_iter=80, alpha=1.0, beta=0.0, schedule="flooding",
                         bits=0, frac_bits=3, dtype="float64")
    ws = []
    for e in (relay.decode_batch(dets), bposd.decode_batch(dets)):
        ws.append(np.where(syndrome_ok(prob.H.tocsr(), e, dets), e @ w, np.inf))
    return np.minimum(*ws)


def test_valid_and_never_heavier(color):
    prob, dets, _ = color
    dec = ClassEscalateDecoder(prob, flag_frac=0.5, **_SMALL)
    e = dec.decode_batch(dets)
    assert e.shape == (dets.shape[0], prob.num_errors) and e.dtype == np.uint8
    ok = syndrome_ok(prob.H.tocsr(), e, dets)
    base = _lightest_candidate(prob, dets)
    assert np.all(ok[np.isfinite(base)])
    w = e @ prob.llr
    assert np.all(w[ok] <= base[ok] + 1e-9)
    assert np.allclose(dec.last_info.extra["weight"][ok], w[ok])
    info = dec.last_info.extra
    assert not np.any(info["switched"] & ~info["flagged"])


def test_no_escalation_is_the_lightest_candidate(color):
    prob, dets, _ = color
    dec = ClassEscalateDecoder(prob, flag_frac=0.0, **_SMALL)
    e = dec.decode_batch(dets)
    assert not dec.last_info.extra["flagged"].any()
    base = _lightest_candidate(prob, dets)
    assert np.allclose(np.where(np.isfinite(base), e @ prob.llr, np.inf), base)


def test_escalation_switches_classes_only_to_lighter(color):
    prob, dets, obs = color
    dec = ClassEscalateDecoder(prob, flag_frac=1.0, **_SMALL)
    e = dec.decode_batch(dets)
    assert dec.last_info.extra["flagged"].all()
    base = _lightest_candidate(prob, dets)
    switched = dec.last_info.extra["switched"]
    assert np.all((e @ prob.llr)[switched] < base[switched])
    fails = int((observables_from_errors(e, prob) != obs).any(1).sum())
    assert fails <= 0.2 * dets.shape[0]  # sanity: a working decoder at p = 0.01, d = 3


def test_deterministic_and_batch_independent(color):
    prob, dets, _ = color
    a = ClassEscalateDecoder(prob, flag_frac=0.3, **_SMALL)
    b = ClassEscalateDecoder(prob, flag_frac=0.3, **_SMALL)
    assert a.threshold == b.threshold
    ea = a.decode_batch(dets)
    assert np.array_equal(ea, b.decode_batch(dets))
    parts = np.vstack([a.decode_batch(dets[:97]), a.decode_batch(dets[97:])])
    assert np.array_equal(ea, parts)


def test_rejects_bad_parameters(color):
    prob, _, _ = color
    with pytest.raises(DecoderInputError):
        ClassEscalateDecoder(prob, flag_frac=1.5, **_SMALL)
    with pytest.raises(DecoderInputError):
        ClassEscalateDecoder(prob, osd=2, **_SMALL)


def test_class_escalate_refuses_many_observables_with_the_cost_and_the_way_out():
    k = MAX_OBSERVABLES + 1
    # k observables, each flipped by its own mechanism beside a detector: one forced decoder each
    H = np.zeros((k, k), np.uint8)
    np.fill_diagonal(H, 1)
    problem = DecodingProblem.from_check_matrix(H, np.full(k, 0.01), L=np.eye(k, dtype=np.uint8))
    with pytest.raises(DecoderInputError) as info:
        DecoderSpec.create("class-escalate").build(problem)
    msg = str(info.value)
    assert msg.startswith(f"class-escalate: the model has {k} observables, over its limit "
                          f"max_observables={MAX_OBSERVABLES}: escalation decodes each flagged shot once per "
                          f"observable ({k} forced Relay-BPs)"), msg
    assert f"use relay-bp or bposd, or class-escalate[max_observables={k}] to run it anyway" in msg
    dec = DecoderSpec.parse(f"class-escalate[max_observables={k}]").build(problem)  # the way out works
    syndromes = np.eye(k, dtype=np.uint8)
    assert np.array_equal(dec.predict_observables_batch(syndromes), syndromes)
    # the limit changes whether it runs, never what it returns: not in the label (old labels keep their strong_id)
    assert DecoderSpec.parse(f"class-escalate[max_observables={k}]").label() == DecoderSpec.create(
        "class-escalate").label()


def test_candidates_take_their_tables_defaults_as_when_labels_were_first_recorded():
    """class-escalate reads its candidates' defaults from their parameter tables; a change of those defaults
    would change what a recorded class-escalate label means, so it must fail here first."""
    from qdecode.decoders.bposd import BPOSD_PARAMS
    from qdecode.decoders.class_escalate import CANDIDATE_DEFAULTS_AT_FIRST_LABEL
    from qdecode.decoders.params import defaults
    from qdecode.decoders.relay_bp import RELAY_PARAMS

    relay = {k: v for k, v in defaults(RELAY_PARAMS).items() if k != "stop_after"}
    assert relay == CANDIDATE_DEFAULTS_AT_FIRST_LABEL["relay-bp"]
    assert defaults(BPOSD_PARAMS) == CANDIDATE_DEFAULTS_AT_FIRST_LABEL["bposd"]
