"""Every registered syndrome decoder's real-time mode (``predict_observables_timed``): the batch path's answers,
a wall time per shot, and the work clock it declares (``work_unit``) deterministic."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecodeInfo, joined_infos
from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem
from tests.decoders.decoder_problems import QUANTUM, accepted_decoder, accepted_dem


def _packed(name: str, shots: int) -> np.ndarray:
    sampler = accepted_dem(name).compile_sampler(seed=7)
    dets, _, _ = sampler.sample(shots, bit_packed=True)
    return dets


@pytest.mark.parametrize("name", QUANTUM)
def test_timed_path_gives_the_batch_answers_and_a_time_per_shot(name):
    dec = accepted_decoder(name)
    packed = _packed(name, 12)
    want = dec.predict_observables_packed(packed)
    batch_work = None if dec.last_info is None else dec.last_info.work
    got = dec.predict_observables_timed(packed)
    info = dec.last_info
    np.testing.assert_array_equal(got, want)
    assert info.wall_ns is not None and info.wall_ns.shape == (12,) and np.all(info.wall_ns > 0)
    assert dec.wall_method in ("call", "kernel")
    if dec.work_unit is None:
        return
    assert info.work is not None and info.work.dtype == np.int64 and info.work.shape == (12,)
    np.testing.assert_array_equal(info.work, batch_work)  # the work clock does not depend on the path
    dec.predict_observables_timed(packed)
    np.testing.assert_array_equal(dec.last_info.work, info.work)


def test_timed_path_on_no_shots():
    dec = accepted_decoder("relay-bp")
    empty = _packed("relay-bp", 1)[:0]
    assert dec.predict_observables_timed(empty).shape == (0, 1)
    assert dec.last_info.wall_ns.shape == (0,)


def test_joined_infos_keeps_per_shot_fields_and_the_class():
    infos = [DecodeInfo(converged=np.array([True]), iterations=np.array([3], np.int32), work=np.array([3]),
                     extra={"legs": np.array([1])}),
             DecodeInfo(converged=np.array([False]), iterations=np.array([9], np.int32), work=np.array([9]),
                        extra={"legs": np.array([4])})]
    joined = joined_infos(infos, np.array([10.0, 20.0]))
    assert joined.converged.tolist() == [True, False] and joined.work.tolist() == [3, 9]
    assert joined.extra["legs"].tolist() == [1, 4] and joined.wall_ns.tolist() == [10.0, 20.0]
    assert joined.take(slice(1, 2), 2).work.tolist() == [9]
    bare = joined_infos([None, None], np.array([1.0, 2.0]))  # decoders without diagnostics
    assert bare.work is None and bare.converged is None and bare.wall_ns.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("spec", ["relay-bp", "relay-bp[ensemble=8]"])
def test_relay_trail_ends_at_the_returned_answer(spec):
    """Relay-BP's trail of answers (the anytime policy's input): leg 0's decision, then each lighter converged leg
    (an ensemble's: its chain 0's leg 0, then each lighter converged leg of any chain; work in steps); its last
    answer is the decoder's own, and its clocks ascend within the shot's."""
    dec = DecoderSpec.parse(spec).build(DecodingProblem.from_dem(accepted_dem("relay-bp")))
    packed = _packed("relay-bp", 200)
    got = dec.predict_observables_timed(packed)
    info = dec.last_info
    length, work, wall, code = (info.extra[k] for k in ("trail_len", "trail_work", "trail_wall_ns", "trail_obs"))
    assert work.shape == (200, dec.stop_after + 1) and np.all(length >= 1)
    last = code[np.arange(200), length - 1]
    np.testing.assert_array_equal(last, got[:, 0].astype(np.uint64))  # one observable: its bit is the code
    assert np.all(work[:, 0] <= dec.pre_iter) and np.all(work[np.arange(200), length - 1] <= info.work)
    for s in range(200):
        assert np.all(np.diff(work[s, :length[s]]) > 0) and np.all(np.diff(wall[s, :length[s]]) >= 0)
        assert wall[s, length[s] - 1] <= info.wall_ns[s]
    assert np.any(length > 1)  # some shots found a lighter converged leg after leg 0


@pytest.mark.parametrize("spec", ["bp[max_iter=20]", "bp[max_iter=20,bits=8]", "bp[max_iter=20,schedule=layered]",
                                  "bp-ps[max_iter=20]"])
def test_bp_trail_is_the_hard_decision_after_each_iteration(spec):
    """BP's trail of answers (the anytime policy's input) against a brute force: BP is a pure function, so
    decoding again with ``max_iter = t`` gives the hard decision after ``t`` iterations, whose observables must be
    the trail's answer at work ``t`` (its last event at or before ``t``; iteration 0: the priors' decision)."""
    problem = DecodingProblem.from_dem(_noisy_surface_dem())
    dets, _, _ = _noisy_surface_dem().compile_sampler(seed=11).sample(40)
    dets = dets.astype(np.uint8)
    dec = DecoderSpec.parse(spec).build(problem)
    packed = np.packbits(dets, axis=1, bitorder="little")
    got = dec.predict_observables_timed(packed)
    info = dec.last_info
    length, work, wall, code = (info.extra[k] for k in ("trail_len", "trail_work", "trail_wall_ns", "trail_obs"))
    assert work.shape == (40, dec.max_iter + 1) and np.all(length >= 1) and np.all(work[:, 0] == 0)
    bits = np.left_shift(np.uint64(1), np.arange(got.shape[1] * 8, dtype=np.uint64))
    answer = np.unpackbits(got, axis=1, bitorder="little").astype(np.uint64) @ bits[:got.shape[1] * 8]
    np.testing.assert_array_equal(code[np.arange(40), length - 1], answer)
    for s in range(40):
        assert np.all(np.diff(work[s, :length[s]]) > 0) and np.all(np.diff(wall[s, :length[s]]) >= 0)
        assert work[s, length[s] - 1] <= info.work[s] and wall[s, length[s] - 1] <= info.wall_ns[s]
    for t in range(1, int(info.work.max()) + 1):
        running = DecoderSpec.parse(spec.replace("max_iter=20", f"max_iter={t}")).build(problem)
        obs = running.predict_observables_batch(dets).astype(np.uint64) @ bits[:problem.num_observables]
        at = np.array([code[s, np.searchsorted(work[s, :length[s]], t, side="right") - 1] for s in range(40)])
        alive = info.work >= t  # shots still iterating at t; the others keep their final answer
        np.testing.assert_array_equal(at[alive], obs[alive])
    assert np.any(length > 2)  # some shots changed their answer during BP


@functools.lru_cache(maxsize=None)
def _noisy_surface_dem() -> stim.DetectorErrorModel:
    """A d = 3 surface-code memory noisy enough (p = 0.02) that BP's answers change while it iterates."""
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                     after_clifford_depolarization=0.02, before_measure_flip_probability=0.02)
    return circuit.detector_error_model(decompose_errors=True)
