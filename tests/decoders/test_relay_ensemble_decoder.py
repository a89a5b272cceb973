"""``relay-bp[ensemble=N]``: the parameter, its label, the decoder's paths and clocks (kernel: tests/kernels)."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.registry import DecoderSpec
from qdecode.decoders.relay_bp import RelayBpDecoder
from tests.kernels.lane_cases import lane_case

FAST = dict(pre_iter=20, legs=24, leg_iter=15, stop_after=3, threads=1)


@pytest.fixture(scope="module")
def bb72():
    prob, dets, _ = lane_case("bb72", 80)
    return prob, dets


def _packed(dets):
    return np.packbits(dets, axis=1, bitorder="little")


def _obs(dec, packed):
    return np.unpackbits(packed, axis=1, count=dec.problem.num_observables, bitorder="little")


def test_ensemble_one_is_the_serial_decoder(bb72):
    prob, dets = bb72
    serial = RelayBpDecoder(prob, **FAST)
    one = RelayBpDecoder(prob, ensemble=1, **FAST)
    for method in ("decode_batch", "predict_observables_batch"):
        np.testing.assert_array_equal(getattr(one, method)(dets), getattr(serial, method)(dets))
        for f in ("converged", "iterations", "work"):
            np.testing.assert_array_equal(getattr(one.last_info, f), getattr(serial.last_info, f))
    assert one.work_unit == serial.work_unit == RelayBpDecoder.work_unit and one.has_confidence


@pytest.mark.parametrize("chains", [4, 8])
def test_batch_timed_threads_and_batch_sizes_agree(bb72, chains):
    """Answers and work clock: batch path (1 or 2 threads, whole or cut batches, single shots) == timed path."""
    prob, dets = bb72
    dec = RelayBpDecoder(prob, ensemble=chains, **FAST)
    batch = dec.predict_observables_batch(dets)
    work = dec.last_info.work.copy()
    iters = dec.last_info.iterations.copy()
    timed = _obs(dec, dec.predict_observables_timed(_packed(dets)))
    np.testing.assert_array_equal(timed, batch)
    np.testing.assert_array_equal(dec.last_info.work, work)
    np.testing.assert_array_equal(dec.last_info.iterations, iters)
    assert dec.last_info.wall_ns.shape == (dets.shape[0],) and np.all(dec.last_info.wall_ns > 0)
    assert np.all(work <= iters) and work.mean() < iters.mean()  # steps, not the chains' iterations
    two = RelayBpDecoder(prob, ensemble=chains, **{**FAST, "threads": 2})
    np.testing.assert_array_equal(two.predict_observables_batch(dets), batch)
    cut = np.concatenate([dec.predict_observables_batch(dets[a:a + 5]) for a in range(0, dets.shape[0], 5)])
    np.testing.assert_array_equal(cut, batch)
    errors = dec.decode_batch(dets)
    for i in (0, 17, 40):
        np.testing.assert_array_equal(dec.decode(dets[i]), errors[i])


def test_ensemble_changes_answers_and_work(bb72):
    """The ensemble is a different decoder (chains c > 0 draw their own gammas) that takes fewer steps."""
    prob, dets = bb72
    serial = RelayBpDecoder(prob, **FAST)
    ens = RelayBpDecoder(prob, ensemble=8, **FAST)
    e_serial, e_ens = serial.decode_batch(dets), ens.decode_batch(dets)
    assert not np.array_equal(e_serial, e_ens)
    assert ens.last_info.work.mean() < serial.last_info.work.mean()
    assert ens.last_info.converged.mean() >= serial.last_info.converged.mean()
    assert "steps" in ens.work_unit


def test_label_round_trip():
    spec = DecoderSpec.create("relay-bp", {"ensemble": "8"})
    assert dict(spec.params)["ensemble"] == 8
    label = spec.label()
    assert "ensemble=8" in label and "bits=8" in label
    assert DecoderSpec.from_label(label) == spec
    assert dict(DecoderSpec.from_label("relay-bp[ensemble=8]").params)["ensemble"] == 8
    # a label without ensemble (every label recorded before it existed) means the serial decoder
    assert "ensemble" not in DecoderSpec.create("relay-bp").label()
    assert dict(DecoderSpec.from_label("relay-bp[legs=4]").params)["ensemble"] == 1
    assert dict(DecoderSpec.from_label("relay-bp").params)["ensemble"] == 1
    with pytest.raises(ValueError, match="ensemble"):
        DecoderSpec.create("relay-bp", {"ensemble": 0})
    with pytest.raises(ValueError, match="ensemble"):
        DecoderSpec.create("relay-bp", {"ensemble": 65})


def test_refusals(bb72):
    prob, dets = bb72
    with pytest.raises(DecoderInputError, match="ensemble=8 runs on the 8-bit lanes kernel") as exc:
        RelayBpDecoder(prob, ensemble=8, bits=0)
    assert "\n" not in str(exc.value)
    with pytest.raises(DecoderInputError, match="ensemble"):
        RelayBpDecoder(prob, ensemble=True)
    dec = DecoderSpec.create("relay-bp", {"ensemble": 2}).build(prob)
    assert not dec.has_confidence
    with pytest.raises(DecoderInputError, match="no confidence"):
        dec.predict_with_confidence(dets)
