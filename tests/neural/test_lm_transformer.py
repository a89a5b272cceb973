"""Byte-level Transformer prior of sem-OSD: network, posterior-ready rows, training CLI + resume,
ONNX vs torch, weights-only checkpoints, the shipped model, and clear errors for bad files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from qdecode.decoders.lm_prior import LmPriorError
from qdecode.kernels import sem_osd as ksem

TINY = dict(name="tiny", context=12, d_model=32, layers=1, heads=2, ff=64, batch=16, steps=4, warmup=2,
            val_blocks=40, val_every=2, log_every=2, ckpt_every=2, val_ebn0=[2.0], threads=1)


def _torch():
    import torch
    torch.set_num_threads(1)
    return torch


def _evidence(llr: np.ndarray, nb: int) -> np.ndarray:
    le = np.empty((llr.shape[0], nb, 256))
    for s in range(llr.shape[0]):
        ksem.byte_evidence(np.ascontiguousarray(llr[s], dtype=np.float64), nb, le[s])
    return le


def _log_normalise(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def _inputs(S: int, C: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    ctx = rng.integers(32, 127, size=(S, C + 5)).astype(np.uint8)
    lens = rng.integers(0, C + 6, size=S)
    lens[:3] = [0, C + 5, 1]
    llr = rng.normal(0.0, 5.0, size=(S, 64))
    return ctx, lens, llr


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """A 4-step tiny model trained through the CLI (``.pt``, ``.onnx``, cards)."""
    _torch()
    from qdecode.cli.main import main

    tmp = tmp_path_factory.mktemp("lm_tiny")
    (tmp / "tiny.json").write_text(json.dumps(TINY))
    out = tmp / "run"
    assert main(["train", "lm", "--config", str(tmp / "tiny.json"), "--out", str(out), "--no-progress"]) == 0
    return out


def test_network_rows_are_posterior_ready():
    torch = _torch()
    from qdecode.neural.lm_model import ByteLmPrior, LmArch

    net = ByteLmPrior(LmArch(context=10, d_model=32, layers=2, heads=4, ff=48)).eval()
    net.inv_temp.fill_(0.7)
    rng = np.random.default_rng(1)
    ctx = torch.as_tensor(rng.integers(0, 256, size=(6, 10)))
    lens = torch.as_tensor([0, 10, 3, 7, 1, 10])
    llr = rng.normal(0.0, 6.0, size=(6, 64))
    with torch.no_grad():
        prior, post = net(ctx, lens, torch.as_tensor(llr, dtype=torch.float32))
    assert prior.shape == post.shape == (6, 8, 256)
    assert np.allclose(np.exp(prior.double().numpy()).sum(-1), 1.0, atol=1e-5)
    want = _log_normalise(prior.double().numpy() + _evidence(llr, 8))
    assert np.allclose(post.double().numpy(), want, atol=2e-4)
    # padding beyond ctx_len is ignored
    ctx2 = ctx.clone()
    for s, n in enumerate(lens.tolist()):
        ctx2[s, n:] = 255 - ctx2[s, n:]
    with torch.no_grad():
        assert torch.allclose(net(ctx2, lens, torch.as_tensor(llr, dtype=torch.float32))[0], prior, atol=1e-6)


def test_train_cli_resume_and_card(tiny_lm, tmp_path, capsys):
    _torch()
    from qdecode.cli.main import main

    card = json.loads((tiny_lm / "lm_tiny.card.json").read_text())
    assert card["steps"] == 4 and card["samples"] == 64 and card["parameters"] > 0
    assert card["arch"]["context"] == 12 and card["temperature"] > 0
    assert set(card["val"]["2"]) >= {"transformer", "kn4", "channel", "blocks"}
    assert "Held-out posterior cross-entropy" in (tiny_lm / "lm_tiny.card.md").read_text()
    # stop early, then resume to the end: same steps logged once each
    (tmp_path / "tiny.json").write_text(json.dumps(TINY))
    out = tmp_path / "run"
    args = ["train", "lm", "--config", str(tmp_path / "tiny.json"), "--out", str(out), "--no-progress"]
    assert main(args + ["--steps", "2"]) == 0
    assert main(args) == 0
    steps = [json.loads(line)["step"] for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert steps == [2, 4]
    assert json.loads((out / "lm_tiny.card.json").read_text())["steps"] == 4
    # a checkpoint from another configuration is refused
    capsys.readouterr()
    assert main(args + ["--batch", "8"]) != 0
    assert "different config" in capsys.readouterr().err


def test_onnx_matches_torch_and_weights_only_checkpoint(tiny_lm):
    torch = _torch()
    from qdecode.decoders.lm_transformer import TransformerPrior
    from qdecode.neural.lm_train import load_torch_model

    blob = torch.load(tiny_lm / "lm_tiny.pt", map_location="cpu", weights_only=True)
    assert blob["format"] == "qdecode-lm-byte" and "state_dict" in blob
    net, card = load_torch_model(tiny_lm / "lm_tiny.pt")
    assert float(net.inv_temp) == pytest.approx(card["inv_temp"], rel=1e-6)
    tp = TransformerPrior(str(tiny_lm / "lm_tiny.onnx"))
    ctx, lens, llr = _inputs(40, tp.context_len)
    got = tp.batch(ctx, lens, llr)
    # torch on the same (last context_len bytes of the valid prefix) inputs
    C = tp.context_len
    tctx = np.zeros((40, C), dtype=np.int64)
    m = np.minimum(lens, C)
    for s in range(40):
        tctx[s, : m[s]] = ctx[s, lens[s] - m[s]: lens[s]]
    with torch.no_grad():
        prior, post = net(torch.as_tensor(tctx), torch.as_tensor(m), torch.as_tensor(llr, dtype=torch.float32))
    assert np.allclose(got, prior.double().numpy(), atol=1e-4)
    assert np.allclose(tp.posterior(ctx, lens, llr), post.numpy(), atol=1e-4)
    with pytest.raises(ValueError, match="not found"):
        load_torch_model(tiny_lm / "nope.pt")


def test_shipped_model_prior_rows():
    from qdecode.decoders.lm_prior import NgramPrior, corpus_split
    from qdecode.decoders.lm_transformer import TransformerPrior

    tp = TransformerPrior()  # auto: lm_byte
    assert tp.label.startswith("tf-byte") and tp.nb == 8 and tp.context_len >= 8
    assert tp.card["steps"] > 0 and tp.card["config"]["threads"] == 1
    ctx, lens, llr = _inputs(30, tp.context_len, seed=3)
    lp = tp.batch(ctx, lens, llr)
    assert lp.shape == (30, 8, 256) and lp.dtype == np.float64 and np.all(np.isfinite(lp))
    assert np.allclose(np.exp(lp).sum(-1), 1.0, atol=1e-12)
    # posterior-ready: prior + own evidence, renormalised, is the network's posterior
    assert np.allclose(_log_normalise(lp + _evidence(llr, 8)), tp.posterior(ctx, lens, llr), atol=2e-4)
    # one block through __call__ equals the batch row
    assert np.allclose(tp(ctx[5, : lens[5]].tobytes(), llr[5]), lp[5], atol=1e-9)
    # on held-out English text with weak LLRs the prior ranks the true byte high
    _, test = corpus_split()
    t = np.frombuffer(test, dtype=np.uint8)
    starts = np.arange(64, 64 + 8 * 50, 8)
    blocks = np.stack([t[s: s + 8] for s in starts])
    cctx = np.stack([t[s - tp.context_len: s] for s in starts])
    bits = np.unpackbits(blocks[:, :, None], axis=2, bitorder="little").reshape(50, 64)
    weak = 0.5 * (1.0 - 2.0 * bits)
    post = _log_normalise(tp.batch(cctx, np.full(50, tp.context_len), weak) + _evidence(weak, 8))
    ce_tf = -np.mean(np.take_along_axis(post, blocks[:, :, None].astype(np.int64), axis=2))
    ng = NgramPrior()
    post_ng = _log_normalise(ng.batch(cctx[:, -3:], np.full(50, 3), weak) + _evidence(weak, 8))
    ce_ng = -np.mean(np.take_along_axis(post_ng, blocks[:, :, None].astype(np.int64), axis=2))
    ce_ch = -np.mean(np.take_along_axis(_log_normalise(_evidence(weak, 8)), blocks[:, :, None].astype(np.int64), 2))
    assert ce_tf < ce_ch and ce_tf < 1.5 * ce_ng, (ce_tf, ce_ng, ce_ch)
    with pytest.raises(ValueError, match="llr must have shape"):
        tp.batch(ctx[:2], lens[:2], llr[:2, :56])


def test_shipped_pt_loads_weights_only():
    torch = _torch()
    from qdecode.decoders.lm_transformer import lm_models_dir
    from qdecode.neural.lm_train import load_torch_model

    path = lm_models_dir() / "lm_byte.pt"
    blob = torch.load(path, map_location="cpu", weights_only=True)
    net, card = load_torch_model(path)
    assert json.loads(blob["arch"]) == card["arch"] == net.arch.to_dict()


def _copy_shipped(tmp_path):
    from qdecode.decoders.lm_transformer import lm_models_dir

    src = lm_models_dir()
    shutil.copy(src / "lm_byte.onnx", tmp_path / "lm_x.onnx")
    shutil.copy(src / "lm_byte.card.json", tmp_path / "lm_x.card.json")
    return tmp_path / "lm_x.onnx", tmp_path / "lm_x.card.json"


def test_missing_and_corrupt_files(tmp_path):
    from qdecode.decoders.lm_transformer import TransformerPrior

    with pytest.raises(LmPriorError, match="not found"):
        TransformerPrior(str(tmp_path / "absent.onnx"))
    with pytest.raises(LmPriorError, match="no shipped byte-LM model"):
        TransformerPrior("no_such_model")
    onnx_path, card_path = _copy_shipped(tmp_path)
    assert TransformerPrior(str(onnx_path)).nb == 8
    good_card = card_path.read_text()
    # missing card
    card_path.unlink()
    with pytest.raises(LmPriorError, match="card not found"):
        TransformerPrior(str(onnx_path))
    # corrupt card
    card_path.write_text("{ not json")
    with pytest.raises(LmPriorError, match="corrupt"):
        TransformerPrior(str(onnx_path))
    # a card of another model
    other = json.loads(good_card)
    other["arch"]["d_model"] += 1
    card_path.write_text(json.dumps(other))
    with pytest.raises(LmPriorError, match="does not describe"):
        TransformerPrior(str(onnx_path))
    card_path.write_text(good_card)
    # truncated and garbage ONNX files
    data = onnx_path.read_bytes()
    onnx_path.write_bytes(data[: len(data) // 2])
    with pytest.raises(LmPriorError, match="truncated or corrupt"):
        TransformerPrior(str(onnx_path))
    onnx_path.write_bytes(b"\x00garbage" * 10)
    with pytest.raises(LmPriorError, match="truncated or corrupt"):
        TransformerPrior(str(onnx_path))
