"""Every registered syndrome decoder's real-time mode (``predict_observables_timed``): the batch path's answers,
a wall time per shot, and the work clock it declares (``work_unit``) deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.base import DecodeInfo, joined_infos
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


def test_relay_trail_ends_at_the_returned_answer():
    """Relay-BP's trail of answers (the anytime policy's input): leg 0's decision, then each lighter converged leg;
    its last answer is the decoder's own, and its clocks ascend within the shot's."""
    dec = accepted_decoder("relay-bp")
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
