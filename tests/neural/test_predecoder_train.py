"""Seconds-scale training, resume, export, ONNX/torch agreement and model-file errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from qdecode.neural.predecoder_layout import PredecoderLayout
from qdecode.neural.predecoder_runtime import PredecoderLoadError, load_predecoder
from qdecode.neural.predecoder_train import TrainConfig, train


def tiny(**kw) -> TrainConfig:
    base = dict(name="tiny", distance=3, steps=6, batch=16, width=4, layers=2, p_grid_points=2, warmup_steps=2,
                val_shots=32, calib_shots=64, log_every=2, val_every=4, checkpoint_every_s=1e9, ema_decay=0.9)
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    card = train(tiny(), out, progress=False)
    return out, card


def test_smoke_training_exports_model_and_card(trained):
    out, card = trained
    for suffix in (".pt", ".onnx", ".card.md", ".card.json"):
        assert (out / f"predecoder_tiny{suffix}").exists()
    assert card["steps"] == 6 and card["samples"] == 96
    assert 0.2 < card["temperature"] < 5
    blob = torch.load(out / "predecoder_tiny.pt", weights_only=True)
    assert blob["distance"] == 3 and blob["format"] == "qdecode-predecoder"
    meta = json.loads((out / "predecoder_tiny.card.json").read_text())
    assert meta["config"]["distance"] == 3 and "wall_s" in meta
    lines = (out / "train_log.jsonl").read_text().splitlines()
    assert len(lines) == 3 and "val_loss_p0.003" in json.loads(lines[-1])


def test_resume_reproduces_uninterrupted_run(trained, tmp_path):
    out, _ = trained
    train(tiny(), tmp_path, progress=False, max_steps=3)
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert state["step"] == 3
    train(tiny(), tmp_path, progress=False)  # resumes at step 3
    a = torch.load(out / "predecoder_tiny.pt", weights_only=True)["state_dict"]
    b = torch.load(tmp_path / "predecoder_tiny.pt", weights_only=True)["state_dict"]
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_resume_refuses_other_config(trained, tmp_path):
    train(tiny(), tmp_path, progress=False, max_steps=1)
    with pytest.raises(ValueError, match="different config"):
        train(tiny(lr=5e-3), tmp_path, progress=False)


def test_onnx_and_torch_agree(trained, sd6):
    out, _ = trained
    circ, pr = sd6(3, 0.005)
    lay = PredecoderLayout.from_problem(pr)
    x = lay.inputs(circ.compile_detector_sampler(seed=7).sample(64).astype(np.uint8))
    a = load_predecoder(str(out / "predecoder_tiny.onnx")).logits(x)
    b = load_predecoder(str(out / "predecoder_tiny.pt"), backend="torch").logits(x)
    assert a.shape == (64, lay.num_classes, *lay.shape)
    assert np.max(np.abs(a - b)) < 1e-4


def test_model_file_errors(trained, tmp_path):
    out, _ = trained
    with pytest.raises(PredecoderLoadError, match="not found"):
        load_predecoder(str(tmp_path / "nope.onnx"))
    with pytest.raises(PredecoderLoadError, match="unknown pre-decoder model"):
        load_predecoder("d99")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00garbage" * 50)
    with pytest.raises(PredecoderLoadError, match="not a readable ONNX"):
        load_predecoder(str(bad))
    badpt = tmp_path / "bad.pt"
    badpt.write_bytes(b"\x00garbage" * 50)
    with pytest.raises(PredecoderLoadError, match="not a readable torch"):
        load_predecoder(str(badpt), backend="torch")
    other = tmp_path / "other.pt"
    torch.save({"format": "something-else", "state_dict": {}}, other)
    with pytest.raises(PredecoderLoadError, match="not a qdecode pre-decoder"):
        load_predecoder(str(other), backend="torch")
    with pytest.raises(PredecoderLoadError, match="needs a .pt"):
        load_predecoder(str(out / "predecoder_tiny.onnx"), backend="torch")
    with pytest.raises(PredecoderLoadError, match="device"):
        load_predecoder(str(out / "predecoder_tiny.onnx"), device="tpu")


def test_cli_train_predecoder(tmp_path):
    from qdecode.cli.main import main

    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps(tiny(steps=2).to_dict()))
    assert main(["train", "predecoder", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    assert (tmp_path / "o" / "predecoder_tiny.onnx").exists()
    assert main(["train", "predecoder", "--config", str(tmp_path / "missing.json"), "--out", str(tmp_path)]) == 2
