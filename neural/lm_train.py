"""Training the byte-level Transformer prior of sem-OSD: data, checkpoints, calibration, export.

Data (fresh every step, never stored), from the LM part of the corpus only
(:func:`qdecode.language_model.corpus.lm_split`, never the channel-test part): its first
``1 - HELDOUT_FRACTION`` (90 %) trains, its last 10 % is held out (validation, temperature) --
the same split as the n-gram's counts / temperature text (:mod:`qdecode.language_model.ngram`). A sample
is a block of ``nb`` consecutive bytes at a random start (a multiple of ``align``: 8 gives the 8-byte-aligned windows
of the channel's blocking, 1 any offset, i.e. 8x more distinct windows) with its left context
(up to ``context`` bytes; with probability ``p_short`` cut to a uniform random length in
``0..context``, so short contexts, e.g. a batch's first block, are seen in training). The
block's ``8 nb`` message bits (byte ``j`` = bits ``8j..8j+7``, LSB first) are sent BPSK over AWGN
at an Eb/N0 drawn per block uniformly from ``[ebn0_min, ebn0_max]`` dB with the suite's
convention ``sigma^2 = 1 / (2 R Eb/N0)``, ``R = rate`` (64/127, BCH(127,64)), LLR ``2 y / sigma^2``.
Step ``i`` draws from ``np.random.default_rng([seed, i])``, so a resumed run sees the batches an
uninterrupted one would.

Loss: cross-entropy of the model's posterior (:mod:`qdecode.neural.lm_model`) on the true bytes
(what is logged and reported), plus ``aux_weight`` times the causal next-byte cross-entropy of
the context tokens (clean text; more language-model supervision per sample).
AdamW, linear warm-up, cosine decay to ``lr * lr_min_frac``. After the last step the
temperature ``T`` of the prior logits is fitted on held-out blocks (golden section on
``log(1/T)`` in ``[1/4, 4]``, Eb/N0 uniform over the training range) and stored in the model
(buffer ``inv_temp``, so the exported graph applies it) and the card.

Outputs in ``out_dir``: ``checkpoint.pt`` (resume state), ``lm_NAME.pt`` (``torch.load(...,
weights_only=True)``: format, arch, card, state dict), ``lm_NAME.onnx`` (metadata: format,
arch, temperature), ``lm_NAME.card.json`` / ``.card.md`` (data, params, steps, wall time,
held-out cross-entropy in bits/byte beside the order-4 Kneser-Ney prior and the channel alone)
and ``train_log.jsonl``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from qdecode.errors import InputError
from qdecode.language_model.corpus import lm_split, lm_text_hash
from qdecode.language_model.ngram import fit_inverse_temperature
from qdecode.neural import train_common
from qdecode.neural.lm_model import LmArch, build_model, count_parameters, export_onnx
from qdecode.neural.model_file import read_checkpoint, write_checkpoint
from qdecode.neural.runtime import LM_FORMAT as FORMAT
from qdecode.neural.runtime import LM_FORMAT_VERSION as FORMAT_VERSION
from qdecode.neural.runtime import load_lm_torch as load_torch_model  # noqa: F401 - re-exported
from qdecode.sims.channels import ebn0_to_sigma2


@dataclasses.dataclass
class LmConfig(train_common.JsonConfig, LmArch):
    """Everything that determines a training run (stored in checkpoints and the card): the
    architecture fields of :class:`LmArch` (its defaults) and the training fields below."""

    KIND = "LM"

    name: str = "byte"
    batch: int = 128
    steps: int = 4000
    lr: float = 1e-3
    lr_min_frac: float = 0.05
    warmup: int = 200
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    ebn0_min: float = 0.0
    ebn0_max: float = 4.0
    rate: float = 64 / 127
    align: int = 8
    p_short: float = 0.15
    aux_weight: float = 0.5
    seed: int = 0
    threads: int = 1
    log_every: int = 50
    ckpt_every: int = 250
    val_every: int = 500
    val_blocks: int = 2000
    val_ebn0: tuple = (0.0, 1.0, 2.0, 3.0, 4.0)

    def __post_init__(self) -> None:
        self.val_ebn0 = tuple(float(v) for v in self.val_ebn0)

    def arch(self) -> LmArch:
        return LmArch(**{f.name: getattr(self, f.name) for f in dataclasses.fields(LmArch)}).validate()

    def validate(self) -> "LmConfig":
        if self.steps < 1 or self.batch < 1 or self.align < 1 or self.val_blocks < 1:
            raise InputError("steps, batch, align and val_blocks must be >= 1")
        if not self.ebn0_min <= self.ebn0_max or not 0 < self.rate <= 1 or not 0 <= self.p_short <= 1:
            raise InputError("need ebn0_min <= ebn0_max, 0 < rate <= 1, 0 <= p_short <= 1")
        self.arch()
        return self


# ----------------------------------------------------------------------------- data
def text_split() -> tuple[np.ndarray, np.ndarray]:
    """``(train, heldout)`` uint8 arrays: the LM part of the corpus split 90 / 10 (as the n-gram's)."""
    train, held = lm_split()
    return np.frombuffer(train, dtype=np.uint8), np.frombuffer(held, dtype=np.uint8)



def block_llr(blocks: np.ndarray, ebn0_db: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """BPSK-AWGN LLRs ``(B, 8 nb)`` float32 of byte blocks ``(B, nb)`` (LSB-first bits), Eb/N0 per row."""
    bits = np.unpackbits(blocks[:, :, None], axis=2, bitorder="little").reshape(blocks.shape[0], -1)
    s2 = ebn0_to_sigma2(np.asarray(ebn0_db, dtype=np.float64).reshape(-1, 1), rate)
    y = 1.0 - 2.0 * bits + np.sqrt(s2) * rng.standard_normal(bits.shape)
    return (2.0 * y / s2).astype(np.float32)


def sample_blocks(text: np.ndarray, starts: np.ndarray, lens: np.ndarray, context: int, nb: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(ctx int64 (B, context), blocks uint8 (B, nb))``: the ``lens[i]`` bytes before ``starts[i]``
    (valid bytes first, zero padded) and the block at ``starts[i]``."""
    ar = np.arange(context)
    idx = starts[:, None] - lens[:, None] + ar[None, :]
    valid = ar[None, :] < lens[:, None]
    ctx = np.where(valid, text[np.clip(idx, 0, text.size - 1)], 0).astype(np.int64)
    blocks = text[starts[:, None] + np.arange(nb)[None, :]]
    return ctx, blocks


def sample_batch(cfg: LmConfig, text: np.ndarray, rng: np.random.Generator, batch: int,
                 ebn0: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(ctx, ctx_len, llr, blocks)`` of ``batch`` random windows of ``text`` (module docstring)."""
    n_start = (text.size - cfg.nb) // cfg.align + 1
    starts = rng.integers(0, n_start, size=batch) * cfg.align
    lens = np.minimum(starts, cfg.context)
    short = rng.random(batch) < cfg.p_short
    lens = np.where(short, (rng.random(batch) * (lens + 1)).astype(np.int64), lens)
    ctx, blocks = sample_blocks(text, starts, lens, cfg.context, cfg.nb)
    lo, hi = (cfg.ebn0_min, cfg.ebn0_max) if ebn0 is None else ebn0
    llr = block_llr(blocks, rng.uniform(lo, hi, size=batch), cfg.rate, rng)
    return ctx, lens.astype(np.int64), llr, blocks


def heldout_set(cfg: LmConfig, held: np.ndarray, ebn0: float | None, blocks: int, salt: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fixed held-out blocks: evenly spaced aligned starts with full context, one Eb/N0 (or the
    training range when ``ebn0`` is None)."""
    first = -(-cfg.context // cfg.nb) * cfg.nb
    starts = np.arange(first, held.size - cfg.nb + 1, cfg.nb)
    if starts.size > blocks:
        starts = starts[np.linspace(0, starts.size - 1, blocks).astype(np.int64)]
    lens = np.full(starts.size, cfg.context, dtype=np.int64)
    ctx, blk = sample_blocks(held, starts, lens, cfg.context, cfg.nb)
    rng = np.random.default_rng([cfg.seed, 10**9 + salt])
    eb = rng.uniform(cfg.ebn0_min, cfg.ebn0_max, size=starts.size) if ebn0 is None else np.full(starts.size, ebn0)
    return ctx, lens, block_llr(blk, eb, cfg.rate, rng), blk


@torch.no_grad()
def model_outputs(net, ctx, lens, llr, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``(prior, posterior)`` float32 ``(S, nb, 256)`` of the torch network (eval mode)."""
    net.eval()
    pr, po = [], []
    for a in range(0, ctx.shape[0], chunk):
        p, q = net(torch.as_tensor(ctx[a:a + chunk]), torch.as_tensor(lens[a:a + chunk]),
                   torch.as_tensor(llr[a:a + chunk]))
        pr.append(p.numpy())
        po.append(q.numpy())
    return np.concatenate(pr), np.concatenate(po)


def posterior_ce_bits(logpost: np.ndarray, blocks: np.ndarray) -> float:
    """Mean ``-log2 q_j(true byte)`` (bits per byte) of log-posteriors ``(S, nb, 256)``."""
    S, nb = blocks.shape
    lp = logpost[np.arange(S)[:, None], np.arange(nb)[None, :], blocks]
    return float(-np.mean(lp) / math.log(2.0))


def prior_posterior(logprior: np.ndarray, llr: np.ndarray) -> np.ndarray:
    """``log_softmax(prior + own evidence)`` in float64 (the sem-OSD fusion of a prior row)."""
    from qdecode.kernels import sem_osd as ksem

    S, nb = logprior.shape[:2]
    out = np.empty((S, nb, 256))
    le = np.empty((nb, 256))
    x = np.asarray(llr, dtype=np.float64)
    for s in range(S):
        ksem.byte_evidence(x[s], nb, le)
        out[s] = logprior[s] + le
    m = out.max(axis=2, keepdims=True)
    return out - (m + np.log(np.exp(out - m).sum(axis=2, keepdims=True)))


def heldout_ce(net, cfg: LmConfig, held: np.ndarray, *, with_ngram: bool = True) -> dict[str, dict[str, float]]:
    """Held-out posterior cross-entropy (bits/byte) at each ``cfg.val_ebn0``: the transformer, the
    order-4 Kneser-Ney prior (forward-backward, beam 8, same context) and the channel alone."""
    ng = None
    if with_ngram:  # the n-gram decoder's own scorer as a baseline (lazy: only this report needs it)
        from qdecode.decoders.lm_prior import NgramPrior

        ng = NgramPrior(order=4, beam=8)
    out = {}
    for i, eb in enumerate(cfg.val_ebn0):
        ctx, lens, llr, blk = heldout_set(cfg, held, eb, cfg.val_blocks, salt=100 + i)
        _, post = model_outputs(net, ctx, lens, llr)
        rec = {"blocks": int(blk.shape[0]), "transformer": posterior_ce_bits(post, blk),
               "channel": posterior_ce_bits(prior_posterior(np.zeros(post.shape), llr), blk)}
        if ng is not None:
            c = ng.context_len
            nctx = np.ascontiguousarray(ctx[:, cfg.context - c:].astype(np.uint8))
            lp = ng.batch(nctx, np.full(ctx.shape[0], c), llr.astype(np.float64))
            rec["kn4"] = posterior_ce_bits(prior_posterior(lp, llr), blk)
        out[f"{eb:g}"] = rec
    return out


def fit_temperature(net, cfg: LmConfig, held: np.ndarray) -> float:
    """Fit ``inv_temp`` (golden section on its log over [1/4, 4]) minimising the held-out posterior CE."""
    ctx, lens, llr, blk = heldout_set(cfg, held, None, max(cfg.val_blocks, 2000), salt=7)
    old = float(net.inv_temp)
    net.inv_temp.fill_(1.0)
    with torch.no_grad():
        net.eval()
        z = torch.cat([net.logits(torch.as_tensor(ctx[a:a + 1024]), torch.as_tensor(lens[a:a + 1024]),
                                  torch.as_tensor(llr[a:a + 1024])) for a in range(0, ctx.shape[0], 1024)]).double()
        le = net.evidence(torch.as_tensor(llr)).double()
    y = torch.as_tensor(blk.astype(np.int64))

    def ce(b: float) -> float:
        post = torch.log_softmax(torch.log_softmax(z * b, -1) + le, -1)
        return float(-post.gather(2, y[..., None]).mean())

    inv = fit_inverse_temperature(ce, 30)
    if not math.isfinite(inv):  # pragma: no cover
        inv = old
    net.inv_temp.fill_(inv)
    return inv


def _lr(cfg: LmConfig, step: int) -> float:
    return train_common.cosine_lr(step, cfg.lr, cfg.warmup, cfg.steps, cfg.lr_min_frac)


# ----------------------------------------------------------------------------- export
def corpus_descriptor() -> dict:
    train, held = text_split()
    return {"source": "CPython pydoc_data.topics (printable ASCII + newlines), LM part (first 80 %)",
            "train_bytes": int(train.size), "heldout_bytes": int(held.size),
            "sha256_16": lm_text_hash()}


def model_blob(net, card: dict) -> dict:
    """The dict written to ``lm_NAME.pt`` (``torch.load(weights_only=True)`` friendly)."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "arch": json.dumps(net.arch.to_dict()),
            "inv_temp": float(net.inv_temp), "card": json.dumps(card),
            "state_dict": train_common.state_dict_copy(net)}


def save_model(net, cfg: LmConfig, card: dict, stem: Path) -> None:
    """``STEM.pt``, ``STEM.onnx`` (metadata: format, arch, temperature) and the card files."""
    torch.save(model_blob(net, card), stem.with_suffix(".pt"))
    meta = {"format": FORMAT, "format_version": str(FORMAT_VERSION), "arch": json.dumps(net.arch.to_dict()),
            "inv_temp": repr(float(net.inv_temp)), "name": cfg.name}
    export_onnx(net, str(stem.with_suffix(".onnx")), meta)
    write_card(stem, card)


def write_card(stem: Path, card: dict) -> None:
    """``STEM.card.json`` and a human-readable ``STEM.card.md``."""
    cfg, arch, corp = card["config"], card["arch"], card["corpus"]
    lines = [
        f"# Byte-level Transformer prior `{cfg['name']}` (sem-OSD)",
        "",
        "Denoising byte Transformer for sem-OSD (arXiv:2605.02296): per block of "
        f"{arch['nb']} bytes, the posterior of every byte given the left context and the block's channel LLRs; "
        "the prior row handed to sem-OSD is `log_softmax(z / T)` and `posterior = log_softmax(prior + own "
        "channel evidence)`, i.e. posterior-ready by construction.",
        "",
        "## Model",
        f"- pre-norm Transformer encoder, {arch['layers']} layers, d_model {arch['d_model']}, {arch['heads']} heads, "
        f"FF {arch['ff']}, dropout {arch['dropout']}; {card['parameters']:,} parameters",
        f"- tokens: the last {arch['context']} context bytes (byte embedding + position counted back from the block, "
        f"padding masked) and the {arch['nb']} block bytes (linear layer of the 8 LLRs x {arch['input_scale']} "
        f"clipped at +-{arch['llr_clip']} and tanh(LLR/2), + hard-decision byte embedding + position)",
        f"- temperature T = {1.0 / card['inv_temp']:.4f} (fitted on held-out text; applied in the exported graph)",
        "",
        "## Training",
        f"- text: {corp['source']}; train {corp['train_bytes']:,} bytes, held out {corp['heldout_bytes']:,} bytes "
        f"(last 10 % of the LM part; the channel-test 20 % is never used); windows aligned to {cfg['align']} byte(s), "
        f"context cut to a random length with probability {cfg['p_short']}",
        f"- channel: BPSK-AWGN on the {8 * arch['nb']} message bits, Eb/N0 uniform in [{cfg['ebn0_min']}, "
        f"{cfg['ebn0_max']}] dB per block, sigma^2 = 1/(2 R Eb/N0), R = {cfg['rate']:.4f}, fresh every step, "
        f"seed {cfg['seed']}",
        f"- loss: cross-entropy of the posterior on the true bytes; AdamW lr {cfg['lr']}, warm-up {cfg['warmup']}, "
        f"cosine decay, batch {cfg['batch']}",
        f"- steps {card['steps']:,}, samples {card['samples']:,}, final loss (mean of the last 100 steps) "
        f"{card['final_loss']:.4f} nats/byte",
        f"- wall time {card['wall_s']:.0f} s on {cfg['threads']} CPU thread(s) ({card['host']})",
        "",
        "## Held-out posterior cross-entropy (bits/byte; full context, same blocks and noise)",
        "| Eb/N0 (dB) | blocks | transformer | KN order 4 (fb, beam 8) | channel only |",
        "|---|---|---|---|---|",
    ]
    for eb, r in card.get("val", {}).items():
        kn = f"{r['kn4']:.4f}" if "kn4" in r else "-"
        lines.append(f"| {eb} | {r['blocks']} | {r['transformer']:.4f} | {kn} | {r['channel']:.4f} |")
    lines += ["", "Retrain: `qdecode train lm --config qdecode/neural/configs/lm_byte.json --out DIR`", ""]
    train_common.write_card_files(stem, card, lines)


# ----------------------------------------------------------------------------- training
def _config_key(d: dict) -> dict:
    """Config fields that must match to resume (run length, threads, logging may change)."""
    return {k: v for k, v in d.items() if k not in ("steps", "threads", "log_every", "ckpt_every", "val_every",
                                                     "val_blocks", "val_ebn0", "name")}


def _load_checkpoint(ckpt: Path, cfg: LmConfig) -> dict:
    return read_checkpoint(ckpt, cfg.to_dict(), _config_key)


def train(cfg: LmConfig, out_dir: str | os.PathLike, *, resume: bool = True, progress: bool = True,
          max_wall_s: float | None = None, stop_after: int | None = None, with_ngram: bool = True) -> dict:
    """Train (or resume) the byte prior; calibrate, export and write the card when ``cfg.steps`` is reached.

    ``max_wall_s`` (seconds of this call) and ``stop_after`` (a step count) stop early: the
    checkpoint is written and a later call resumes exactly where this one stopped.

    Returns:
        the model card dict; ``{"finished": False, "step": ..., "wall_s": ...}`` when stopped early.

    Raises:
        ValueError: bad config, or a checkpoint in ``out_dir`` from a different configuration.
    """
    cfg.validate()
    text, held = text_split()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train_common.setup_torch(cfg.threads, cfg.seed)
    net = build_model(cfg.arch())
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step, wall_prev, history = 0, 0.0, []
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        step, wall_prev, history = train_common.resume(ckpt, net, opt, cfg.to_dict(), _config_key)
    vctx, vlen, vllr, vblk = heldout_set(cfg, held, 2.0, min(cfg.val_blocks, 1000), salt=3)

    def save() -> None:
        write_checkpoint(ckpt, net, opt, step, wall_prev + loop.elapsed(), history, cfg.to_dict())

    recent: list[float] = [h["loss"] for h in history[-2:]]
    net.train()
    with train_common.StepLoop(out, cfg.steps, step, f"train lm {cfg.name}", progress) as loop:
        while step < cfg.steps:
            if loop.should_stop(step, max_wall_s, stop_after):
                save()
                return {"finished": False, "step": step, "wall_s": wall_prev + loop.elapsed()}
            rng = np.random.default_rng([cfg.seed, step])
            ctx, lens, llr, blk = sample_batch(cfg, text, rng, cfg.batch)
            train_common.set_lr(opt, _lr(cfg, step))
            net.train()
            tctx, tlen, tllr = torch.as_tensor(ctx), torch.as_tensor(lens), torch.as_tensor(llr)
            z, zc = net.context_logits(tctx, tlen, tllr)
            post = torch.log_softmax(torch.log_softmax(z, -1) + net.evidence(tllr), -1)
            loss = F.nll_loss(post.reshape(-1, 256), torch.as_tensor(blk.astype(np.int64)).reshape(-1))
            if cfg.aux_weight > 0 and cfg.context > 1:
                m = torch.arange(1, cfg.context) < tlen.unsqueeze(1)  # target byte i + 1 is valid
                if bool(m.any()):
                    aux = F.cross_entropy(zc[m], tctx[:, 1:][m])
                    loss_total = loss + cfg.aux_weight * aux
                else:
                    loss_total = loss
            else:
                loss_total = loss
            train_common.optimizer_step(net, opt, loss_total, cfg.grad_clip)
            step += 1
            recent.append(loss.item())
            recent = recent[-100:]
            loop.tick(loss=f"{np.mean(recent):.4f}")
            if step % cfg.log_every == 0 or step == cfg.steps:
                rec = {"step": step, "loss": float(np.mean(recent[-cfg.log_every:])), "lr": _lr(cfg, step - 1),
                       "wall_s": wall_prev + loop.elapsed()}
                if step % cfg.val_every == 0 or step == cfg.steps:
                    rec["val_ce_2db_bits"] = posterior_ce_bits(model_outputs(net, vctx, vlen, vllr)[1], vblk)
                loop.record(history, rec)
            if step % cfg.ckpt_every == 0:
                save()
        save()
        wall_s = wall_prev + loop.elapsed()
    return finish(cfg, out, net, step, wall_s, recent, with_ngram=with_ngram)


def finish(cfg: LmConfig, out: Path, net, step: int, wall_s: float, recent: list[float], *,
           with_ngram: bool = True) -> dict:
    """Fit the temperature, measure held-out cross-entropy, export ``lm_NAME.{pt,onnx}``, write the card."""
    net.eval()
    fit_temperature(net, cfg, text_split()[1])
    inv = float(net.inv_temp)  # as stored (float32 buffer)
    val = heldout_ce(net, cfg, text_split()[1], with_ngram=with_ngram)
    card = {
        "format": FORMAT, "name": cfg.name, "arch": net.arch.to_dict(), "config": cfg.to_dict(),
        "corpus": corpus_descriptor(), "steps": step, "samples": step * cfg.batch, "wall_s": wall_s,
        "final_loss": float(np.mean(recent[-100:])) if recent else float("nan"),
        "parameters": count_parameters(net), "inv_temp": inv, "temperature": 1.0 / inv, "val": val,
        "host": train_common.host_description(),
        "finished": True,
    }
    save_model(net, cfg, card, out / f"lm_{cfg.name}")
    return card


def export_checkpoint(cfg: LmConfig, out_dir: str | os.PathLike, *, with_ngram: bool = True) -> dict:
    """Calibrate and export the checkpoint in ``out_dir`` as it is now (``lm_NAME.*``; a run stopped
    by ``max_wall_s`` before ``cfg.steps``; the card records the steps actually taken)."""
    cfg.validate()
    torch.set_num_threads(max(1, int(cfg.threads)))
    out = Path(out_dir)
    state = _load_checkpoint(out / "checkpoint.pt", cfg)
    net = build_model(cfg.arch())
    net.load_state_dict(state["model"])
    history = json.loads(state["history"])
    recent = [h["loss"] for h in history[-2:]]
    return finish(cfg, out, net, int(state["step"]), float(state["wall_s"]), recent, with_ngram=with_ngram)
