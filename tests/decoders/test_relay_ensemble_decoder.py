"""``relay-bp[ensemble=N]``: the parameter, its label (every path that names it builds the same decoder), the
decoder's paths and clocks, its confidence (kernel: tests/kernels)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import stim

import qdecode
from qdecode.cli.main import main
from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.registry import DecoderSpec
from qdecode.decoders.relay_bp import RelayBpDecoder
from qdecode.problem import DecodingProblem
from qdecode.sinter_adapter import sinter_decoders
from tests.kernels.lane_cases import lane_case
from tests.stats_checks import assert_ratio_above

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
    assert dec.has_confidence


# ------------------------------------------------------------------ every path that names an ensemble


@functools.lru_cache(maxsize=None)
def _surface(shots: int = 300, p: float = 0.01):
    """``(circuit, dem, dets uint8, obs uint8)``: a d = 3 rotated surface-code memory, fixed seed."""
    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=p, before_measure_flip_probability=p)
    dem = c.detector_error_model(decompose_errors=True)
    dets, obs = c.compile_detector_sampler(seed=3).sample(shots, separate_observables=True)
    return c, dem, dets.astype(np.uint8), obs.astype(np.uint8)


def test_every_path_that_names_an_ensemble_builds_the_same_decoder(tmp_path, capsys):
    """``relay-bp[ensemble=8]`` without ``bits`` is the 8-bit ensemble by every path: a request (``--decoder``,
    ``qdecode.decoder``), a recorded label (``DecoderSpec.from_label``, a CSV's decoder column) and the sinter
    name ``qd-relay-bp[ensemble=8]`` (``qdecode.decoder``, the sinter plug-in, ``qdecode predict --decoder``):
    the same parameters, the same predictions. A bare label still means float64 (labels recorded before bits
    became 8), and an explicit bits the ensemble cannot run is a one-line error on every path."""
    _, dem, dets, _ = _surface()
    problem = DecodingProblem.from_dem(dem)
    request = DecoderSpec.parse("relay-bp[ensemble=8]")
    assert dict(request.params)["bits"] == 8
    for spec in (DecoderSpec.from_label("relay-bp[ensemble=8]"), DecoderSpec.parse("qd-relay-bp[ensemble=8]"),
                 DecoderSpec.from_label("relay-bp[ensemble=8,legs=300]")):
        assert spec == request, spec.label()
    assert DecoderSpec.from_label(request.label()) == request
    assert dict(DecoderSpec.from_label("relay-bp").params)["bits"] == 0  # unchanged: the serial decoder's float64
    assert dict(DecoderSpec.from_label("relay-bp[ensemble=1]").params)["bits"] == 0
    want = request.build(problem).predict_observables_batch(dets)
    packed = np.packbits(dets, axis=1, bitorder="little")
    for name in ("relay-bp[ensemble=8]", "qd-relay-bp[ensemble=8]"):
        dec = qdecode.decoder(name, dem)
        assert (dec.bits, dec.ensemble) == (8, 8)
        np.testing.assert_array_equal(dec.predict_observables_batch(dets), want)
    compiled = sinter_decoders()["qd-relay-bp[ensemble=8]"].compile_decoder_for_dem(dem=dem)
    got = compiled.decode_shots_bit_packed(bit_packed_detection_event_data=packed)
    np.testing.assert_array_equal(np.unpackbits(got, axis=1, count=1, bitorder="little"), want)
    (tmp_path / "m.dem").write_text(str(dem))
    stim.write_shot_data_file(data=dets.astype(bool), path=tmp_path / "d.b8", format="b8",
                              num_detectors=dem.num_detectors)
    predict = ["predict", "--dem", str(tmp_path / "m.dem"), "--dets", str(tmp_path / "d.b8"), "--quiet"]
    for i, name in enumerate(("relay-bp[ensemble=8]", "qd-relay-bp[ensemble=8]")):
        out = tmp_path / f"o{i}.01"
        assert main(predict + ["--decoder", name, "--obs-out", str(out)]) == 0
        lines = out.read_text().split()
        np.testing.assert_array_equal(np.array([int(x) for x in lines], np.uint8)[:, None], want)
    for bits in (0, 16):
        for spec in (DecoderSpec.parse(f"relay-bp[ensemble=8,bits={bits}]"),
                     DecoderSpec.parse(f"qd-relay-bp[ensemble=8,bits={bits}]")):
            with pytest.raises(DecoderInputError, match=f"got bits={bits}") as exc:
                spec.build(problem)
            assert "\n" not in str(exc.value) and str(exc.value).startswith("relay-bp")
        capsys.readouterr()
        code = main(predict + ["--decoder", f"qd-relay-bp[ensemble=8,bits={bits}]", "--obs-out", str(tmp_path / "x")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and f"got bits={bits}" in err, err


# ------------------------------------------------------------------ confidence


@pytest.mark.parametrize("chains", [4, 8])
def test_confidence_is_a_pure_function_of_the_shot(bb72, chains):
    """The ensemble's gap: the predictions and work of the plain path; the same across runs, threads and batch
    cuts; finite gaps never negative, nan exactly where nothing converged; ``N = 1``: the serial decoder's."""
    prob, dets = bb72
    dec = RelayBpDecoder(prob, ensemble=chains, **FAST)
    plain = dec.predict_observables_batch(dets)
    work = dec.last_info.work.copy()
    obs, gap = dec.predict_with_confidence(dets)
    info = dec.last_info
    np.testing.assert_array_equal(obs, plain)
    np.testing.assert_array_equal(info.work, work)
    assert gap.dtype == np.float32 and gap.shape == (dets.shape[0],)
    assert np.array_equal(np.isnan(gap), ~info.converged) and np.all(gap[np.isfinite(gap)] >= 0)
    assert np.isfinite(gap).any() and np.isinf(gap).any()
    np.testing.assert_array_equal(dec.predict_with_confidence(dets).gap_db, gap)
    two = RelayBpDecoder(prob, ensemble=chains, **{**FAST, "threads": 2})
    np.testing.assert_array_equal(two.predict_with_confidence(dets).gap_db, gap)
    cut = np.concatenate([dec.predict_with_confidence(dets[a:a + 7]).gap_db for a in range(0, dets.shape[0], 7)])
    np.testing.assert_array_equal(cut, gap)
    packed = dec.predict_with_confidence_packed(np.packbits(dets, axis=1, bitorder="little"))
    np.testing.assert_array_equal(packed.gap_db, gap)
    serial = RelayBpDecoder(prob, **FAST)
    np.testing.assert_array_equal(RelayBpDecoder(prob, ensemble=1, **FAST).predict_with_confidence(dets).gap_db,
                                  serial.predict_with_confidence(dets).gap_db)


def test_low_confidence_shots_fail_more_often():
    """On a d = 3 surface-code memory at p = 0.01 (3000 shots, fixed seed), the shots whose gap is below 10 dB (or
    nan) fail more than 4 times as often as the others (the exact conditional binomial test of the two rates,
    99.9 %; measured: about 19 times)."""
    _, dem, dets, obs = _surface(3000)
    dec = qdecode.decoder("relay-bp[ensemble=8,pre_iter=20,legs=24,leg_iter=15,stop_after=3]", dem)
    pred, gap = dec.predict_with_confidence(dets)
    fail = np.any(pred != obs, axis=1)
    low = ~(gap > 10.0)
    assert 20 <= low.sum() <= 300
    assert 0 < fail[~low].mean() < 0.1
    assert_ratio_above(int(fail[low].sum()), int(low.sum()), int(fail[~low].sum()), int((~low).sum()), 4.0,
                       what="gap < 10 dB against the others")
