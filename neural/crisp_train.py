"""Training CRISP decoders for polar / PAC codes: data, curricula, checkpoints, export.

Data (fresh every step, never stored): uniform data bits on the information set ``A``,
``v_A = bits``, ``v_F = 0``, codeword ``x = (v T) G_N`` with the code's own encoder
(:class:`qdecode.codes.polar.PolarCode` / :class:`qdecode.codes.pac.PacCode`), BPSK over AWGN
at an Eb/N0 drawn per block uniformly from ``[ebn0_min, ebn0_max]`` dB, with the suite's
convention (``sigma^2 = 1 / (2 R Eb/N0)``, ``R = k / N``, LLR ``= 2 y / sigma^2``, positive =
bit 0; :mod:`qdecode.sims.channels`). Step ``i`` draws from ``np.random.default_rng([seed, i])``,
so a resumed run sees the batches an uninterrupted one would.

Loss: binary cross-entropy (teacher forcing) of the logits at the *revealed* information
positions against ``v`` (``targets="bits"``, the default); frozen positions carry no loss (the
decoder forces them to 0). ``targets="map"`` (knowledge distillation, codes with ``k <= 20``)
replaces the hard bits by the exact sequential-MAP conditionals ``P(v_t = 1 | y, v_{<t})`` of
:class:`qdecode.neural.crisp_teacher.MapTeacher` on the current (sub-)code, mixed with the hard
bits by ``target_mix`` (``target = (1 - mix) p + mix v``); the logged ``kl`` is the BCE minus
the targets' entropy. Validation of such runs also reports the teacher's greedy sequential-MAP
BLER (~ML) on the same blocks.

Curricula (``curriculum``):

* ``"l2r"`` (left to right by reliability, CRISP's principled curriculum): the information
  positions, sorted from least to most reliable (5G NR reliability order), are revealed one
  at a time; the first ``k_start`` from step 0, one more every ``stage_steps`` steps.
  Unrevealed information positions are frozen (``v = 0``, known) in the data, i.e. the
  model first learns a sub-code of lower rate;
* ``"n2c"`` (noisy to clean): all ``K`` bits from step 0; the Eb/N0 window starts
  ``n2c_db`` dB lower and slides linearly up to ``[ebn0_min, ebn0_max]`` over the first
  ``(K - k_start) * stage_steps`` steps;
* ``"abrupt"`` (the ablation): all ``K`` bits and the final Eb/N0 window from step 0.

``inputs`` (:mod:`qdecode.neural.crisp_model`): ``"raw"`` is the paper's; ``"cancel"`` feeds
step ``t`` the LLRs with the (teacher-forced) bits ``v_{<t}`` cancelled (:func:`cancelled_llrs`);
``"cancel+sc"`` adds SC's LLR of the current bit (:func:`with_sc_column`) with a skip
connection to the output. Measured on Polar(32,16), 2x128 GRU, batch 512, 1 thread
(2026-11-30): raw stayed at BLER ~1 after 1750 steps (loss 0.63 nats/bit at full K); cancel
reached BLER ~0.9 after 2000 steps (loss 0.27); cancel+sc (3000 steps) decides like SC and
has not learnt to beat it. None of these budgets is the paper's (~10^5 steps x 4096).

AdamW, linear warm-up then cosine decay to ``lr * lr_min_frac``. Outputs in ``out_dir``:
``checkpoint.pt`` (resume state), ``crisp_NAME.pt`` / ``.onnx`` (export, see
:func:`save_model`), ``crisp_NAME.card.md`` / ``.card.json`` (model card: code, data,
curriculum, steps, samples, wall time, validation BLER beside SC) and ``train_log.jsonl``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from qdecode.decoders.crisp import torch_decode_v
from qdecode.errors import InputError
from qdecode.neural import train_common
from qdecode.neural.crisp_model import (  # noqa: F401 - encode_v .. with_sc_column: part of this module's API
    CrispArch,
    build_model,
    code_rows,
    encode_v,
    export_onnx,
    sc_llr_zero_prefix,
    shifted_onehot,
    with_sc_column,
)
from qdecode.neural.crisp_teacher import MapTeacher
from qdecode.neural.model_file import write_checkpoint
from qdecode.neural.runtime import CRISP_FORMAT as FORMAT
from qdecode.neural.runtime import CRISP_FORMAT_VERSION as FORMAT_VERSION
from qdecode.neural.runtime import load_crisp_torch as load_torch_model  # noqa: F401 - re-exported
from qdecode.sims.channels import ebn0_to_sigma2

CURRICULA = ("l2r", "n2c", "abrupt")
TARGETS = ("bits", "map")


@dataclasses.dataclass
class CrispConfig(train_common.JsonConfig):
    """Everything that determines a CRISP training run (stored in checkpoints and the card)."""

    KIND = "CRISP"

    name: str = "polar32_16"
    code: str = "polar32_16"
    kind: str = "gru"
    width: int = 128
    depth: int = 2
    kernel: int = 2
    inputs: str = "raw"
    input_scale: float = 0.125
    llr_clip: float = 40.0
    batch: int = 512
    steps: int = 5000
    lr: float = 1e-3
    lr_min_frac: float = 0.05
    warmup: int = 100
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    ebn0_min: float = 1.0
    ebn0_max: float = 3.0
    curriculum: str = "l2r"
    k_start: int = 4
    stage_steps: int = 150
    n2c_db: float = 2.0
    seed: int = 0
    threads: int = 1
    log_every: int = 50
    ckpt_every: int = 250
    val_ebn0: tuple = (1.0, 2.0, 3.0)
    val_blocks: int = 2000
    targets: str = "bits"
    target_mix: float = 0.0

    def __post_init__(self) -> None:
        self.val_ebn0 = tuple(float(v) for v in self.val_ebn0)

    def validate(self) -> "CrispConfig":
        if self.curriculum not in CURRICULA:
            raise InputError(f"curriculum must be one of {CURRICULA}, got {self.curriculum!r}")
        if self.targets not in TARGETS:
            raise InputError(f"targets must be one of {TARGETS}, got {self.targets!r}")
        if not 0.0 <= self.target_mix <= 1.0:
            raise InputError(f"target_mix must be in [0, 1], got {self.target_mix}")
        if self.steps < 1 or self.batch < 1 or self.stage_steps < 1 or self.k_start < 1:
            raise InputError("steps, batch, stage_steps and k_start must be >= 1")
        if not self.ebn0_min <= self.ebn0_max:
            raise InputError("ebn0_min must be <= ebn0_max")
        self.arch(2)
        return self

    def arch(self, n: int) -> CrispArch:
        return CrispArch(n=n, kind=self.kind, width=self.width, depth=self.depth, input_scale=self.input_scale,
                         llr_clip=self.llr_clip, kernel=self.kernel, inputs=self.inputs).validate()


# ----------------------------------------------------------------------------- codes and data
def load_code(name: str):
    """A polar / PAC code from the catalogue (``polar32_16``, ``polar64_22``, ``pac32_16``, ...)."""
    from qdecode.codes.catalog import get_code

    code = get_code(name)
    if not hasattr(code, "info_positions"):
        raise InputError(f"CRISP needs a polar or PAC code, got {name!r}")
    if getattr(code, "crc", None) is not None:
        raise InputError(f"CRISP training supports codes without CRC, {name!r} has one")
    return code


def code_descriptor(code) -> dict:
    """What a model records about its code (checked by the decoder)."""
    return {"name": code.name, "N": int(code.N), "k": int(code.k),
            "info_positions": [int(i) for i in code.info_positions], "conv": [int(c) for c in code.conv]}


def reliability_order(code) -> np.ndarray:
    """Information positions from least to most reliable (5G NR order; Bhattacharyya above N = 1024)."""
    from qdecode.codes.polar import bhattacharyya_log_z, reliability_5g

    A = np.asarray(code.info_positions)
    if code.N <= 1024:
        rank = np.empty(code.N, dtype=np.int64)
        rank[reliability_5g(code.N)] = np.arange(code.N)
    else:
        rank = np.argsort(np.argsort(-bhattacharyya_log_z(code.N, 0.5)))
    return A[np.argsort(rank[A], kind="stable")]



def cancelled_llrs(llr: np.ndarray, v: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Teacher-forced per-step inputs of ``inputs='cancel'``: ``(B, N)`` -> ``(B, N, N)``,
    step ``t`` = ``llr * (1 - 2 c_t)`` with ``c_t = sum_{i<t} v_i rows_i mod 2``."""
    B, N = v.shape
    contrib = v[:, :, None].astype(np.int32) * rows[None].astype(np.int32)  # (B, N, N)
    c = np.cumsum(contrib, axis=1) & 1
    c = np.concatenate([np.zeros((B, 1, N), dtype=c.dtype), c[:, :-1]], axis=1)
    return (llr[:, None, :] * (1.0 - 2.0 * c)).astype(np.float32)


def sample_batch(code, rng: np.random.Generator, batch: int, revealed: np.ndarray,
                 ebn0_lo: float, ebn0_hi: float) -> tuple[np.ndarray, np.ndarray]:
    """``(llr float32 (B, N), v uint8 (B, N))`` with random bits on ``revealed`` positions only."""
    N = code.N
    v = np.zeros((batch, N), dtype=np.uint8)
    v[:, revealed] = rng.integers(0, 2, size=(batch, len(revealed)), dtype=np.uint8)
    x = encode_v(code, v)
    s2 = ebn0_to_sigma2(rng.uniform(ebn0_lo, ebn0_hi, size=(batch, 1)), code.k / N)
    y = 1.0 - 2.0 * x + np.sqrt(s2) * rng.standard_normal((batch, N))
    return (2.0 * y / s2).astype(np.float32), v


def schedule(cfg: CrispConfig, K: int, step: int) -> tuple[int, float]:
    """``(revealed information bits, Eb/N0 offset in dB)`` at ``step``."""
    k0 = min(cfg.k_start, K)
    span = (K - k0) * cfg.stage_steps
    if cfg.curriculum == "l2r":
        return min(K, k0 + step // cfg.stage_steps), 0.0
    if cfg.curriculum == "n2c" and span > 0 and step < span:
        return K, -cfg.n2c_db * (1.0 - step / span)
    return K, 0.0


def _lr(cfg: CrispConfig, step: int) -> float:
    return train_common.cosine_lr(step, cfg.lr, cfg.warmup, cfg.steps, cfg.lr_min_frac)


def validate_bler(net, code, cfg: CrispConfig, salt: int = 1) -> dict[str, dict[str, float]]:
    """BLER of the network and of SC on the same fixed blocks at each ``cfg.val_ebn0`` (and of the
    sequential-MAP teacher when ``cfg.targets == "map"``)."""
    from qdecode.decoders.sc_scl import ScDecoder

    sc = ScDecoder(code)
    teacher = None
    if cfg.targets == "map":
        teacher = MapTeacher(code)
    out = {}
    frozen = np.asarray(code.frozen_mask)
    for i, eb in enumerate(cfg.val_ebn0):
        rng = np.random.default_rng([cfg.seed, 10**9 + salt, i])
        llr, v = sample_batch(code, rng, cfg.val_blocks, np.asarray(code.info_positions), eb, eb)
        x = encode_v(code, v)
        v_hat = torch_decode_v(net, llr, frozen, code_rows(code))
        crisp_err = int(np.any(v_hat != v, axis=1).sum())
        sc_err = int(np.any(sc.decode_llr_batch(llr.astype(np.float64)) != x, axis=1).sum())
        out[f"{eb:g}"] = {"blocks": cfg.val_blocks, "crisp_errors": crisp_err, "sc_errors": sc_err,
                          "crisp_bler": crisp_err / cfg.val_blocks, "sc_bler": sc_err / cfg.val_blocks}
        if teacher is not None:
            map_err = int(np.any(teacher.decode(llr) != v, axis=1).sum())
            out[f"{eb:g}"].update(seqmap_errors=map_err, seqmap_bler=map_err / cfg.val_blocks)
    return out


# ----------------------------------------------------------------------------- export
def model_blob(net, cfg: CrispConfig, code, card: dict) -> dict:
    """The dict written to ``crisp_NAME.pt`` (``torch.load(weights_only=True)`` friendly)."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "arch": json.dumps(net.arch.to_dict()),
            "code": json.dumps(code_descriptor(code)), "card": json.dumps(card),
            "state_dict": train_common.state_dict_copy(net)}


def save_model(net, cfg: CrispConfig, code, card: dict, stem: Path) -> None:
    """``STEM.pt``, ``STEM.onnx`` (metadata: format, arch, code) and the card files."""
    torch.save(model_blob(net, cfg, code, card), stem.with_suffix(".pt"))
    meta = {"format": FORMAT, "format_version": str(FORMAT_VERSION), "arch": json.dumps(net.arch.to_dict()),
            "code": json.dumps(code_descriptor(code)), "name": cfg.name}
    export_onnx(net, str(stem.with_suffix(".onnx")), meta)
    write_card(stem, card)


def write_card(stem: Path, card: dict) -> None:
    """``STEM.card.json`` and a human-readable ``STEM.card.md``."""
    cfg, arch = card["config"], card["arch"]
    lines = [
        f"# CRISP model `{cfg['name']}`",
        "",
        f"Sequential neural decoder (CRISP, Hebbar et al. ICML 2023; qdecode's own implementation) for "
        f"`{card['code']['name']}` (N = {card['code']['N']}, k = {card['code']['k']}, conv = {card['code']['conv']}).",
        "",
        "## Model",
        f"- {arch['kind'].upper()}, depth {arch['depth']}, width {arch['width']}; input per step: the N channel LLRs "
        f"(x {arch['input_scale']}, clipped at +-{arch['llr_clip']}"
        + ("; with the decided bits' contribution cancelled, i.e. sign-flipped by the partial re-encoding"
           if arch.get("inputs") in ("cancel", "cancel+sc") else "; the same received vector at every step")
        + ("; plus the min-sum SC LLR of the current bit on the cancelled block, also added to the output "
           "(learnt gain)" if arch.get("inputs") == "cancel+sc" else "") +
        f") and the one-hot previous bit; {card['parameters']:,} parameters",
        "- output: one logit per position (> 0 means v_t = 1); frozen positions forced to 0 at decode time",
        "",
        "## Training",
        f"- data: uniform data bits, BPSK-AWGN, Eb/N0 uniform in [{cfg['ebn0_min']}, {cfg['ebn0_max']}] dB per block "
        f"(sigma^2 = 1/(2 R Eb/N0)), fresh every step, seed {cfg['seed']}",
        f"- curriculum: {cfg['curriculum']} (k_start {cfg['k_start']}, {cfg['stage_steps']} steps per stage)",
        (f"- loss: BCE on revealed information bits (teacher forcing); AdamW lr {cfg['lr']}, cosine decay, "
         f"batch {cfg['batch']}"
         if cfg.get("targets", "bits") == "bits" else
         f"- loss: BCE (teacher forcing) against the exact sequential-MAP conditionals P(v_t = 1 | y, v_<t) of the "
         f"revealed information bits (distillation from an enumerating teacher; "
         f"hard-bit mix {cfg.get('target_mix', 0.0)}); "
         f"AdamW lr {cfg['lr']}, cosine decay, batch {cfg['batch']}"),
        f"- steps {card['steps']:,}, samples {card['samples']:,}, final loss (mean of the last 100 steps) "
        f"{card['final_loss']:.4f}",
        f"- wall time {card['wall_s']:.0f} s on {cfg['threads']} CPU thread(s) ({card['host']})",
        "",
    ]
    val = card.get("val", {})
    seqmap = bool(val) and all("seqmap_bler" in r for r in val.values())
    if seqmap:
        lines += ["## Validation (BLER (errors), same blocks for CRISP, min-sum SC "
                  "and the sequential-MAP teacher ~ ML)",
                  "| Eb/N0 (dB) | blocks | CRISP | SC | seq-MAP teacher |", "|---|---|---|---|---|"]
    else:
        lines += ["## Validation (BLER, same blocks for CRISP and min-sum SC)",
                  "| Eb/N0 (dB) | blocks | CRISP | SC |", "|---|---|---|---|"]
    for eb, r in val.items():
        lines.append(f"| {eb} | {r['blocks']} | {r['crisp_bler']:.4g} ({r['crisp_errors']}) | "
                     f"{r['sc_bler']:.4g} ({r['sc_errors']}) |"
                     + (f" {r['seqmap_bler']:.4g} ({r['seqmap_errors']}) |" if seqmap else ""))
    lines += ["", "Retrain: `qdecode train crisp --config qdecode/neural/configs/crisp_NAME.json --out DIR`", ""]
    train_common.write_card_files(stem, card, lines)


# ----------------------------------------------------------------------------- training
def _config_key(d: dict) -> dict:
    """Config fields that must match to resume (run length, threads, logging may change)."""
    d = {"targets": "bits", "target_mix": 0.0, **d}  # checkpoints from before these fields existed
    return {k: v for k, v in d.items() if k not in ("steps", "threads", "log_every", "ckpt_every", "val_blocks",
                                                     "val_ebn0", "name")}


def train(cfg: CrispConfig, out_dir: str | os.PathLike, *, resume: bool = True, progress: bool = True,
          max_wall_s: float | None = None, stop_after: int | None = None) -> dict:
    """Train (or resume) a CRISP model; export it and write the card when ``cfg.steps`` is reached.

    ``max_wall_s`` (seconds of this call) and ``stop_after`` (a step count) stop early: the
    checkpoint is written and a later call resumes exactly where this one stopped.

    Returns:
        the model card dict; ``{"finished": False, "step": ..., "wall_s": ...}`` when stopped
        early (checkpoint written; call again to resume).

    Raises:
        ValueError: bad config, or a checkpoint in ``out_dir`` from a different configuration.
    """
    cfg.validate()
    code = load_code(cfg.code)
    N, K = code.N, code.K
    order = reliability_order(code)
    rows = code_rows(code)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train_common.setup_torch(cfg.threads, cfg.seed)
    net = build_model(cfg.arch(N))
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step, wall_prev, history = 0, 0.0, []
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        step, wall_prev, history = train_common.resume(ckpt, net, opt, cfg.to_dict(), _config_key)

    def save() -> None:
        write_checkpoint(ckpt, net, opt, step, wall_prev + loop.elapsed(), history, cfg.to_dict())

    recent: list[float] = [h["loss"] for h in history[-2:]]
    recent_kl: list[float] = []
    teachers: dict[int, Any] = {}
    net.train()
    with train_common.StepLoop(out, cfg.steps, step, f"train crisp {cfg.name}", progress) as loop:
        while step < cfg.steps:
            if loop.should_stop(step, max_wall_s, stop_after):
                save()
                return {"finished": False, "step": step, "wall_s": wall_prev + loop.elapsed()}
            k_rev, off = schedule(cfg, K, step)
            revealed = np.sort(order[:k_rev])
            rng = np.random.default_rng([cfg.seed, step])
            llr, v = sample_batch(code, rng, cfg.batch, revealed, cfg.ebn0_min + off, cfg.ebn0_max + off)
            vt = torch.as_tensor(v)
            target = vt.float()
            if cfg.targets == "map":
                if k_rev not in teachers:
                    teachers[k_rev] = MapTeacher(code, revealed)
                p = torch.as_tensor(teachers[k_rev].probs(llr, v))
                target = target.clone()
                target[:, torch.as_tensor(revealed)] = (1.0 - cfg.target_mix) * p + cfg.target_mix * target[:, revealed]
            train_common.set_lr(opt, _lr(cfg, step))
            if cfg.inputs in ("cancel", "cancel+sc"):
                llr = cancelled_llrs(llr, v, rows)
            if cfg.inputs == "cancel+sc":
                llr = with_sc_column(llr)
            logits = net(torch.as_tensor(llr), shifted_onehot(vt))
            idx = torch.as_tensor(revealed)
            tgt = target[:, idx]
            loss = F.binary_cross_entropy_with_logits(logits[:, idx], tgt)
            train_common.optimizer_step(net, opt, loss, cfg.grad_clip)
            step += 1
            recent.append(loss.item())
            recent = recent[-100:]
            if cfg.targets == "map":
                with torch.no_grad():
                    tc = tgt.clamp(1e-7, 1 - 1e-7)
                    ent = -(tc * tc.log() + (1 - tc) * (1 - tc).log()).mean().item()
                recent_kl = (recent_kl + [recent[-1] - ent])[-100:]
            loop.tick(loss=f"{np.mean(recent):.4f}", k=k_rev)
            if step % cfg.log_every == 0 or step == cfg.steps:
                rec = {"step": step, "loss": float(np.mean(recent[-cfg.log_every:])), "k_revealed": k_rev,
                       "ebn0_offset": off, "lr": _lr(cfg, step - 1), "wall_s": wall_prev + loop.elapsed()}
                if recent_kl:
                    rec["kl"] = float(np.mean(recent_kl[-cfg.log_every:]))
                loop.record(history, rec)
            if step % cfg.ckpt_every == 0:
                save()
        save()
        wall_s = wall_prev + loop.elapsed()
    return finish(cfg, out, net, code, step, wall_s, recent)


def finish(cfg: CrispConfig, out: Path, net, code, step: int, wall_s: float, recent: list[float]) -> dict:
    """Validate, export ``crisp_NAME.{pt,onnx}`` and write the model card."""
    val = validate_bler(net, code, cfg)
    card = {
        "format": FORMAT, "name": cfg.name, "code": code_descriptor(code), "arch": net.arch.to_dict(),
        "config": cfg.to_dict(), "steps": step, "samples": step * cfg.batch, "wall_s": wall_s,
        "final_loss": float(np.mean(recent[-100:])) if recent else float("nan"),
        "parameters": int(sum(p.numel() for p in net.parameters())), "val": val,
        "host": train_common.host_description(),
        "finished": True,
    }
    save_model(net, cfg, code, card, out / f"crisp_{cfg.name}")
    return card
