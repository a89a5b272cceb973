"""The nn-pymatching decoder with the shipped d = 5 model."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.nn_pymatching import NnPymatchingDecoder
from qdecode.neural.predecoder_runtime import PredecoderLoadError, shipped_models


@pytest.fixture(scope="module")
def shots(d5):
    circ, _ = d5
    dets, obs = circ.compile_detector_sampler(seed=11).sample(600, separate_observables=True)
    return dets.astype(np.uint8), obs.astype(np.uint8)


def test_shipped_models_listed():
    assert {"d5", "d7"} <= set(shipped_models())


@pytest.mark.parametrize("mode", ["commit", "reweight", "both"])
def test_decodes_and_commit_reduces_defects(d5, shots, mode):
    dets, obs = shots
    dec = NnPymatchingDecoder(d5[1], model="d5", mode=mode, tau=0.8)
    pred = dec.predict_observables_batch(dets)
    assert pred.shape == obs.shape and pred.dtype == np.uint8
    info = dec.last_info.extra
    assert np.array_equal(info["defects_before"], dets.sum(axis=1))
    if mode == "reweight":
        assert np.array_equal(info["defects_after"], info["defects_before"]) and info["committed"].sum() == 0
    else:
        assert info["defects_after"].sum() * 1.5 < info["defects_before"].sum()
    # a decent decoder at d = 5, p = 0.005: LER about 1-2 %
    assert np.mean(np.any(pred != obs, axis=1)) < 0.05
    # zero syndrome -> no flip, nothing committed
    zero = dec.predict_observables_batch(np.zeros((3, dets.shape[1]), np.uint8))
    assert not zero.any() and dec.last_info.extra["committed"].sum() == 0


def test_batch_equals_chunks_and_backends_agree(d5, shots):
    dets, _ = shots
    a = NnPymatchingDecoder(d5[1], model="d5", tau=0.8, batch=1000)
    b = NnPymatchingDecoder(d5[1], model="d5", tau=0.8, batch=77, backend="torch")
    za, zb = a.column_logits(dets[:200]), b.column_logits(dets[:200])
    assert np.max(np.abs(za - zb)) < 1e-4
    assert np.array_equal(a.predict_observables_batch(dets), b.predict_observables_batch(dets))


def test_consistent_rule_commits_only_defect_explaining_columns(d5, shots):
    dets, _ = shots
    pr = d5[1]
    dec = NnPymatchingDecoder(pr, model="d5", tau=0.6, rule="consistent")
    z = dec.column_logits(dets)
    dec.predict_from_logits(dets, z)
    cand = z > np.log(0.6 / 0.4)
    commit = dec._consistent(dets, z, cand)
    assert not (commit & ~cand).any()
    H = pr.H.toarray().astype(np.int64)
    for s in range(dets.shape[0]):
        cols = np.flatnonzero(commit[s])
        if cols.size:
            cover = H[:, cols].sum(axis=1)
            assert cover.max() <= 1  # no shared detector
            assert np.all(dets[s][cover == 1] == 1)  # only defects are removed
    removed = dets.sum() - dec.last_info.extra["defects_after"].sum()
    assert removed == (H @ commit.T.astype(np.int64)).sum()


def test_wrong_distance_and_bad_params(d7, d5, tmp_path):
    with pytest.raises(DecoderInputError, match="trained at d=5"):
        NnPymatchingDecoder(d7[1], model="d5")
    NnPymatchingDecoder(d7[1], model="d5", any_distance=True)  # fully convolutional: allowed on request
    with pytest.raises(DecoderInputError, match="mode"):
        NnPymatchingDecoder(d5[1], mode="fast")
    bad = tmp_path / "x.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(PredecoderLoadError, match="not a readable ONNX"):
        NnPymatchingDecoder(d5[1], model=str(bad))
    with pytest.raises(PredecoderLoadError, match="not found"):
        NnPymatchingDecoder(d5[1], model=str(tmp_path / "missing.onnx"))
    with pytest.raises(DecoderInputError, match="observables only"):
        NnPymatchingDecoder(d5[1]).decode_batch(np.zeros((1, d5[1].num_detectors), np.uint8))


def test_registry_entry(d5, shots):
    from qdecode.decoders.registry import DecoderSpec

    spec = DecoderSpec.create("nn-pymatching", ["mode=both", "tau=0.9"])
    assert spec.label().startswith("nn-pymatching[") and "mode=both" in spec.label()
    dec = spec.build(d5[1])
    packed = np.packbits(shots[0][:50], axis=1, bitorder="little")
    out = dec.predict_observables_packed(packed)
    assert out.shape == (50, 1)


def test_module_imports_without_torch():
    code = (
        "import sys; import qdecode.decoders.nn_pymatching, qdecode.neural.predecoder_layout, "
        "qdecode.neural.predecoder_runtime, qdecode.neural.mechanism_sampler;"
        "bad=[m for m in ('torch','onnxruntime','stim') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name,d", [("d5", 5), ("d7", 7)])
def test_shipped_onnx_matches_torch(name, d, sd6):
    from qdecode.neural.predecoder_layout import PredecoderLayout
    from qdecode.neural.predecoder_runtime import load_predecoder

    circ, pr = sd6(d, 0.005)
    onnx_model = load_predecoder(name)
    assert (onnx_model.meta.distance, onnx_model.meta.rounds) == (d, d)
    lay = PredecoderLayout.from_problem(pr, classes=onnx_model.meta.classes)
    x = lay.inputs(circ.compile_detector_sampler(seed=1234).sample(32).astype(np.uint8))
    diff = np.abs(onnx_model.logits(x) - load_predecoder(name, backend="torch").logits(x))
    assert diff.max() < 1e-4
