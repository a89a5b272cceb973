"""CRISP neural polar / PAC decoder: model shapes, training + resume, ONNX export, shipped model, errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from qdecode.codes.catalog import get_code
from tests.stats_checks import assert_ratio_at_most


def _torch():
    import torch
    torch.set_num_threads(1)
    return torch


def _tiny_cfg(**kw):
    from qdecode.neural.crisp_train import CrispConfig

    base = dict(name="tiny", code="polar32_16", inputs="cancel+sc", width=16, depth=2, batch=32, steps=6, warmup=2,
                k_start=14, stage_steps=2, log_every=2, ckpt_every=3, val_ebn0=(3.0,), val_blocks=40, threads=1)
    base.update(kw)
    return CrispConfig(**base)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 6-step GRU model for polar32_16, exported (``.pt`` + ``.onnx``)."""
    _torch()
    from qdecode.neural.crisp_train import train

    out = tmp_path_factory.mktemp("crisp_tiny")
    card = train(_tiny_cfg(), out, resume=False, progress=False)
    return out, card


def test_model_shapes():
    torch = _torch()
    from qdecode.neural.crisp_model import CrispArch, build_model, shifted_onehot

    bits = torch.randint(0, 2, (5, 32))
    prev = shifted_onehot(bits)
    assert prev.shape == (5, 32, 2) and float(prev[:, 0].abs().sum()) == 0.0
    assert torch.equal(prev[:, 1:].argmax(-1), bits[:, :-1])
    llr = torch.randn(5, 32)
    for kind in ("gru", "conv"):
        net = build_model(CrispArch(n=32, kind=kind, width=8, depth=3))
        assert net(llr, prev).shape == (5, 32)
    net = build_model(CrispArch(n=32, width=8, depth=3))
    logit, h = net.step(llr, prev[:, 0], net.initial_hidden(5))
    assert logit.shape == (5,) and h.shape == (3, 5, 8)
    # the step cell equals the teacher-forced sequence network
    hs = net.initial_hidden(5)
    steps = []
    for t in range(32):
        lt, hs = net.step(llr, prev[:, t], hs)
        steps.append(lt)
    assert torch.allclose(torch.stack(steps, 1), net(llr, prev), atol=1e-5)
    with pytest.raises(ValueError, match="kind"):
        CrispArch(kind="lstm").validate()


def test_curriculum_schedule_and_data():
    _torch()
    from qdecode.neural.crisp_train import encode_v, reliability_order, sample_batch, schedule

    code = get_code("polar32_16")
    order = reliability_order(code)
    assert sorted(order.tolist()) == code.info_positions.tolist()
    assert order[-1] == 31 and order[0] == 7  # least reliable info position of RM(2,5) in 5G order is 7
    cfg = _tiny_cfg(curriculum="l2r", k_start=4, stage_steps=10)
    assert [schedule(cfg, 16, s)[0] for s in (0, 9, 10, 119, 120, 10**6)] == [4, 4, 5, 15, 16, 16]
    assert schedule(_tiny_cfg(curriculum="abrupt"), 16, 0) == (16, 0.0)
    k, off = schedule(_tiny_cfg(curriculum="n2c", k_start=4, stage_steps=10, n2c_db=2.0), 16, 0)
    assert k == 16 and off == -2.0
    rng = np.random.default_rng(0)
    llr, v = sample_batch(code, rng, 200, np.sort(order[:3]), 40.0, 40.0)
    assert llr.dtype == np.float32 and v.shape == (200, 32)
    assert np.all(v[:, np.setdiff1d(np.arange(32), order[:3])] == 0)
    x = encode_v(code, v)
    assert np.array_equal((llr < 0).astype(np.uint8), x)  # 40 dB: hard decisions are the codeword
    assert np.array_equal(code.extract(x), v[:, code.info_positions])


def test_train_smoke_resume_exact(tmp_path):
    torch = _torch()
    from qdecode.neural.crisp_train import train

    full = train(_tiny_cfg(steps=4), tmp_path / "a", resume=False, progress=False)
    part = train(_tiny_cfg(steps=4), tmp_path / "b", resume=False, progress=False, stop_after=2)
    assert part == {"finished": False, "step": 2, "wall_s": pytest.approx(part["wall_s"])}
    resumed = train(_tiny_cfg(steps=4), tmp_path / "b", resume=True, progress=False)
    assert full["steps"] == resumed["steps"] == 4 and resumed["samples"] == 4 * 32
    a = torch.load(tmp_path / "a" / "crisp_tiny.pt", weights_only=True)["state_dict"]
    b = torch.load(tmp_path / "b" / "crisp_tiny.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    card = json.loads((tmp_path / "b" / "crisp_tiny.card.json").read_text())
    assert card["wall_s"] > 0 and card["config"]["curriculum"] == "l2r" and "3" in card["val"]
    assert (tmp_path / "b" / "crisp_tiny.card.md").read_text().startswith("# CRISP model")
    # resuming with a different recipe is refused
    with pytest.raises(ValueError, match="different config"):
        train(_tiny_cfg(steps=4, width=8), tmp_path / "b", resume=True, progress=False)


def test_onnx_step_matches_torch(tiny_model):
    torch = _torch()
    import onnxruntime as ort

    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.neural.crisp_train import load_torch_model, sample_batch

    out, _ = tiny_model
    net, desc, _ = load_torch_model(out / "crisp_tiny.pt")
    assert desc["N"] == 32 and desc["k"] == 16
    sess = ort.InferenceSession(str(out / "crisp_tiny.onnx"), providers=["CPUExecutionProvider"])
    code = get_code("polar32_16")
    llr, _ = sample_batch(code, np.random.default_rng(5), 64, np.asarray(code.info_positions), 2.0, 2.0)
    step_in = np.concatenate([llr, llr[:, :1] * 0.5], axis=1)  # cancel+sc: N LLRs + the SC-LLR column
    g = torch.Generator().manual_seed(0)
    prev = torch.nn.functional.one_hot(torch.randint(0, 2, (64,), generator=g), 2).float()
    h = torch.randn(2, 64, 16, generator=g)
    with torch.no_grad():
        lt, ht = net.step(torch.as_tensor(step_in), prev, h)
    lo, ho = sess.run(None, {"llr": step_in, "prev": prev.numpy(), "h": h.numpy()})
    assert np.abs(lo - lt.numpy()).max() < 1e-4 and np.abs(ho - ht.numpy()).max() < 1e-4
    # full decoding: onnxruntime and torch backends decide the same bits; frozen bits are 0
    d_onnx = CrispDecoder(code, str(out / "crisp_tiny.onnx"))
    d_torch = CrispDecoder(code, str(out / "crisp_tiny.pt"), backend="torch")
    v = d_onnx.decode_v(llr)
    assert np.array_equal(v, d_torch.decode_v(llr))
    assert np.all(v[:, code.frozen_positions] == 0)
    x = d_onnx.decode_llr_batch(llr)
    assert np.array_equal(code.extract(x), d_onnx.message_bits(x))
    assert np.array_equal(x, code.encode(d_onnx.message_bits(x)))


def test_cancel_inputs_match_sequential_decoding():
    """Teacher-forced cancelled inputs equal what the decoder computes step by step."""
    torch = _torch()
    from qdecode.neural.crisp_model import CrispArch, build_model, shifted_onehot
    from qdecode.neural.crisp_train import cancelled_llrs, code_rows, encode_v, sample_batch

    code = get_code("pac32_16")
    rows = code_rows(code)
    llr, v = sample_batch(code, np.random.default_rng(3), 20, np.asarray(code.info_positions), 40.0, 40.0)
    c = cancelled_llrs(llr, v, rows)
    for t in (0, 7, 31):
        w = v.copy()
        w[:, :t] = 0
        assert np.array_equal((c[:, t] < 0).astype(np.uint8), encode_v(code, w))
    net = build_model(CrispArch(n=32, width=8, depth=2, inputs="cancel"))
    seq = net(torch.as_tensor(c), shifted_onehot(torch.as_tensor(v)))
    h, prev, steps = net.initial_hidden(20), torch.zeros(20, 2), []
    for t in range(32):
        lt, h = net.step(torch.as_tensor(c[:, t]), prev, h)
        steps.append(lt)
        prev = torch.nn.functional.one_hot(torch.as_tensor(v[:, t]).long(), 2).float()
    assert torch.allclose(torch.stack(steps, 1), seq, atol=1e-5)
    with pytest.raises(ValueError, match="GRU only"):
        CrispArch(kind="conv", inputs="cancel").validate()


@pytest.mark.parametrize("cname", ["polar32_16", "pac32_16"])
def test_cancel_sc_model_with_zero_head_is_sc(tmp_path, cname):
    """A ``cancel+sc`` network whose learnt head is zero decides exactly like min-sum SC (ONNX path)."""
    torch = _torch()
    from qdecode.decoders.crisp import CrispDecoder, _sc_llr_at
    from qdecode.decoders.sc_scl import ScDecoder
    from qdecode.neural.crisp_model import CrispArch, build_model
    from qdecode.neural.crisp_train import CrispConfig, save_model, sc_llr_zero_prefix
    from qdecode.sims.channels import BpskAwgn

    L = np.random.default_rng(0).normal(1, 2, size=(4, 32)).astype(np.float32)
    full = sc_llr_zero_prefix(L)
    assert all(np.allclose(full[:, t], _sc_llr_at(L, t)) for t in range(32))
    code = get_code(cname)
    net = build_model(CrispArch(n=32, width=8, depth=1, inputs="cancel+sc"))
    with torch.no_grad():
        net.head.weight.zero_()
    card = {"config": CrispConfig(name="zero").to_dict(), "arch": net.arch.to_dict(), "code": {"name": cname, "N": 32,
            "k": 16, "conv": list(code.conv)}, "parameters": 0, "steps": 0, "samples": 0, "final_loss": 0.0,
            "wall_s": 0.0, "host": "test"}
    save_model(net, CrispConfig(name="zero"), code, card, tmp_path / "crisp_zero")
    rng = np.random.default_rng(9)
    x = code.encode(rng.integers(0, 2, size=(1500, 16), dtype=np.uint8))
    llr = BpskAwgn(2.0, code.rate).transmit(x, rng)
    ours = CrispDecoder(code, str(tmp_path / "crisp_zero.onnx")).decode_llr_batch(llr)
    assert np.array_equal(ours, ScDecoder(code).decode_llr_batch(llr))


def test_raw_gru_onnx_and_torch_agree(tmp_path):
    _torch()
    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.neural.crisp_train import train

    train(_tiny_cfg(inputs="raw", steps=2, name="raw"), tmp_path, resume=False, progress=False)
    code = get_code("polar32_16")
    llr = np.random.default_rng(4).normal(2.0, 2.0, size=(11, 32))
    a = CrispDecoder(code, str(tmp_path / "crisp_raw.onnx")).decode_v(llr)
    assert np.array_equal(a, CrispDecoder(code, str(tmp_path / "crisp_raw.pt"), backend="torch").decode_v(llr))


def test_conv_variant_exports_and_decodes(tmp_path):
    _torch()
    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.neural.crisp_train import train

    train(_tiny_cfg(kind="conv", inputs="raw", width=8, depth=3, steps=2, code="pac32_16", name="conv"), tmp_path,
          resume=False, progress=False)
    code = get_code("pac32_16")
    llr = np.random.default_rng(2).normal(2.0, 2.0, size=(9, 32))
    a = CrispDecoder(code, str(tmp_path / "crisp_conv.onnx")).decode_llr_batch(llr)
    b = CrispDecoder(code, str(tmp_path / "crisp_conv.pt"), backend="torch").decode_llr_batch(llr)
    assert np.array_equal(a, b) and a.shape == (9, 32)
    assert not np.any((a.astype(int) @ code.H.T.astype(int)) % 2)  # PAC codewords


def test_bad_model_files(tmp_path, tiny_model):
    from qdecode.decoders.base import DecoderInputError
    from qdecode.decoders.crisp import CrispDecoder, CrispModelError

    code = get_code("polar32_16")
    with pytest.raises(CrispModelError, match="not found"):
        CrispDecoder(code, str(tmp_path / "nope.onnx"))
    with pytest.raises(CrispModelError, match="no shipped CRISP model"):
        CrispDecoder(code, "no_such_model")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not an onnx file")
    with pytest.raises(CrispModelError, match="cannot load"):
        CrispDecoder(code, str(bad))
    with pytest.raises(CrispModelError, match="needs a .pt"):
        CrispDecoder(code, str(bad), backend="torch")
    out, _ = tiny_model
    with pytest.raises(CrispModelError, match="trained for 'polar32_16'"):
        CrispDecoder(get_code("pac32_16"), str(out / "crisp_tiny.onnx"))
    with pytest.raises(CrispModelError, match="trained for"):
        CrispDecoder(get_code("polar64_22"), str(out / "crisp_tiny.onnx"))
    badpt = tmp_path / "bad.pt"
    badpt.write_bytes(b"garbage")
    with pytest.raises(CrispModelError, match="cannot read"):
        CrispDecoder(code, str(badpt), backend="torch")
    dec = CrispDecoder(code, str(out / "crisp_tiny.onnx"))
    with pytest.raises(DecoderInputError):
        dec.decode_llr_batch(np.zeros((2, 31)))
    with pytest.raises(DecoderInputError):
        dec.decode_llr_batch(np.full((2, 32), np.nan))


def _shipped(name: str):
    from qdecode.decoders.crisp import models_dir

    path = models_dir() / f"crisp_{name}.onnx"
    assert path.is_file(), f"shipped CRISP model {name} is missing: {path}"  # a missing model fails, never skips
    return path


def test_shipped_polar32_16_matches_sc():
    """The shipped Polar(32,16) model, onnxruntime only, at 3 dB on 8000 blocks.

    What holds for the first shipped model (cancel+sc GRU, 3000 steps): it decides like SC (its BLER
    at most 1.05x SC's at 99.9 %; 8000 blocks reject 1.5x); the target of the CRISP paper
    (arXiv:2210.00313) is strictly below SC (not met yet). Tighten to ``crisp_err < sc_err`` when a model
    that beats SC is shipped.
    """
    _shipped("polar32_16")
    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.decoders.registry import get_entry
    from qdecode.decoders.sc_scl import ScDecoder
    from qdecode.sims.channels import BpskAwgn

    code = get_code("polar32_16")
    rng = np.random.default_rng(123)
    msgs = rng.integers(0, 2, size=(8000, code.k), dtype=np.uint8)
    x = code.encode(msgs)
    llr = BpskAwgn(3.0, code.rate).transmit(x, rng)
    dec = get_entry("crisp").factory(code, model="auto", backend="onnx", threads=1)
    assert isinstance(dec, CrispDecoder)
    crisp_err = int(np.any(dec.decode_llr_batch(llr) != x, axis=1).sum())
    sc_err = int(np.any(ScDecoder(code).decode_llr_batch(llr) != x, axis=1).sum())
    assert_ratio_at_most(crisp_err, len(x), sc_err, len(x), 1.05, detects=1.5, what="crisp polar32_16 vs SC")
    assert crisp_err < 0.1 * len(x)  # far from the trivial decoder (BLER ~1)
    assert np.array_equal(dec.message_bits(dec.decode_llr_batch(llr[:50])),
                          code.extract(dec.decode_llr_batch(llr[:50])))


def test_decoders_import_and_run_without_torch(tiny_model):
    out, _ = tiny_model
    code = (
        "import sys, numpy as np\n"
        "import qdecode.decoders\n"
        "from qdecode.decoders.crisp import CrispDecoder\n"
        "from qdecode.decoders.registry import get_entry\n"
        "from qdecode.codes.catalog import get_code\n"
        "get_entry('crisp')\n"
        f"d = CrispDecoder(get_code('polar32_16'), {str(out / 'crisp_tiny.onnx')!r})\n"
        "assert d.decode_llr_batch(np.full((3, 32), 2.0)).shape == (3, 32)\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_train_crisp(tmp_path, capsys):
    _torch()
    from qdecode.cli.main import main

    cfg = _tiny_cfg(steps=2, name="cli").to_dict()
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    out = tmp_path / "run"
    rc = main(["train", "crisp", "--config", str(tmp_path / "c.json"), "--out", str(out), "--no-progress",
               "--steps", "3", "--curriculum", "abrupt"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["steps"] == 3 and res["samples"] == 3 * 32
    card = json.loads((out / "crisp_cli.card.json").read_text())
    assert card["config"]["curriculum"] == "abrupt"
    assert (out / "crisp_cli.onnx").exists() and (out / "checkpoint.pt").exists()


def test_cli_train_crisp_stops_early_and_resumes(tmp_path, capsys):
    _torch()
    from qdecode.cli.main import main

    (tmp_path / "c.json").write_text(json.dumps(_tiny_cfg(steps=2, name="cli").to_dict()))
    out = tmp_path / "run"
    args = ["train", "crisp", "--config", str(tmp_path / "c.json"), "--out", str(out), "--no-progress"]
    assert main(args + ["--max-wall-s", "0"]) == 0
    cap = capsys.readouterr()
    assert "stopped at step 0" in cap.err and cap.out == ""
    assert (out / "checkpoint.pt").exists() and not (out / "crisp_cli.onnx").exists()
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 2
    assert (out / "crisp_cli.onnx").exists()


def _blocks(code, ebn0, n, seed):
    from qdecode.sims.channels import BpskAwgn

    rng = np.random.default_rng(seed)
    x = code.encode(rng.integers(0, 2, size=(n, code.k), dtype=np.uint8))
    return x, BpskAwgn(ebn0, code.rate).transmit(x, rng)


@pytest.mark.parametrize("inputs", ["cancel+sc", "raw"])
def test_beam_of_one_path_is_the_greedy_decoder(tmp_path, inputs):
    """The beam search with one path makes exactly the greedy decisions (ties -> 0 in both)."""
    _torch()
    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.neural.crisp_train import train

    train(_tiny_cfg(inputs=inputs, steps=3), tmp_path, resume=False, progress=False)
    code = get_code("polar32_16")
    _, llr = _blocks(code, 2.0, 300, 4)
    dec = CrispDecoder(code, str(tmp_path / "crisp_tiny.onnx"))
    x = dec.check_llr(llr).astype(np.float32)
    assert np.array_equal(dec._decode_chunk_beam(x), dec._decode_chunk_onnx(x))
    assert dec._decode_chunk_onnx(x).any()  # not a trivial all-zero comparison


def test_beam_search_on_the_shipped_model_beats_greedy_and_sc():
    """Shipped ``polar32_16_map`` at 2 dB, 3000 fixed blocks: beam 4 well below greedy and SC
    (measured 190 vs 389 / 391 errors; OSD-4 ~ ML ~165), through the registry with labels."""
    _shipped("polar32_16_map")
    from qdecode.decoders.registry import DecoderSpec, get_entry
    from qdecode.decoders.sc_scl import ScDecoder

    code = get_code("polar32_16")
    x, llr = _blocks(code, 2.0, 3000, 77)
    greedy = get_entry("crisp").factory(code, model="polar32_16_map", backend="onnx", threads=1)
    beam = get_entry("crisp").factory(code, model="polar32_16_map", backend="onnx", threads=1, beam=4)
    e_greedy = int(np.any(greedy.decode_llr_batch(llr) != x, axis=1).sum())
    e_beam = int(np.any(beam.decode_llr_batch(llr) != x, axis=1).sum())
    e_sc = int(np.any(ScDecoder(code).decode_llr_batch(llr) != x, axis=1).sum())
    assert e_beam < 0.7 * min(e_greedy, e_sc), (e_beam, e_greedy, e_sc)
    assert DecoderSpec.create("crisp", []).label() == "crisp[model=auto]"
    assert DecoderSpec.create("crisp", ["beam=4"]).label() == "crisp[beam=4,model=auto]"


def test_beam_parameter_errors(tiny_model, tmp_path):
    from qdecode.decoders.crisp import CrispDecoder, CrispModelError

    out, _ = tiny_model
    code = get_code("polar32_16")
    with pytest.raises(ValueError, match="beam must be >= 1"):
        CrispDecoder(code, str(out / "crisp_tiny.onnx"), beam=0)
    _torch()
    with pytest.raises(CrispModelError, match="onnx backend"):
        CrispDecoder(code, str(out / "crisp_tiny.pt"), backend="torch", beam=2)
