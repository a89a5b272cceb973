"""Training the convolutional pre-decoder on DEM-native labels; checkpoints; ONNX export.

Data: fresh batches from :class:`qdecode.neural.mechanism_sampler.MechanismSampler` on the
SD6 circuit (``qdecode.sims.circuits.build_circuit``), ``p`` drawn per batch from
``[p_min, p_max]``; batch ``i`` is drawn from ``np.random.default_rng([seed, i])``, so a
resumed run sees exactly the batches an uninterrupted one would.

Loss: binary cross-entropy of every column's logit (gathered from the network's output,
:meth:`PredecoderLayout.gather`) against the column's label, summed over columns and averaged
over shots (nats per shot). AdamW, linear warm-up then cosine decay, optional EMA of the
weights (the EMA weights are validated and exported).

After training, a temperature ``T`` is fitted on held-out samples (minimum BCE of
``logit / T``) and folded into the network (``inv_temperature`` buffer). Outputs in ``out_dir``:

* ``checkpoint.pt``: full state for resuming (model, EMA, optimizer, step, history);
* ``predecoder_NAME.pt`` / ``.onnx``: the exported model (:mod:`qdecode.neural.predecoder_runtime`);
* ``predecoder_NAME.card.md`` / ``.card.json``: the model card (data, noise, steps, wall time);
* ``train_log.jsonl``: one JSON line per log interval.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from qdecode.errors import InputError
from qdecode.neural import train_common
from qdecode.neural.mechanism_sampler import MechanismSampler
from qdecode.neural.predecoder_layout import PredecoderLayout, classes_from_json, classes_to_json
from qdecode.neural.predecoder_model import ModelArch, PredecoderNet
from qdecode.neural.predecoder_runtime import FORMAT, FORMAT_VERSION, PredecoderLoadError


@dataclasses.dataclass
class TrainConfig(train_common.JsonConfig):
    """Everything that determines a training run (stored in checkpoints and the model card)."""

    KIND = "pre-decoder training"

    name: str = "d5"
    code: str = "surface"
    distance: int = 5
    rounds: int = 0  # 0: rounds = distance
    noise: str = "sd6"
    p_min: float = 0.003
    p_max: float = 0.006
    p_grid_points: int = 5
    width: int = 32
    layers: int = 4
    kernel: int = 3
    batch: int = 256
    steps: int = 4000
    lr: float = 1e-3
    lr_final_ratio: float = 0.02
    warmup_steps: int = 100
    weight_decay: float = 1e-4
    grad_clip: float = 1.0
    ema_decay: float = 0.999
    seed: int = 0
    threads: int = 1
    val_shots: int = 2048
    val_p: tuple[float, ...] = (0.003, 0.005)
    calib_shots: int = 8192
    log_every: int = 50
    val_every: int = 500
    checkpoint_every_s: float = 180.0
    init_from: str = ""  # a predecoder .pt to start from (e.g. d7 fine-tuned from d5)

    def __post_init__(self) -> None:
        self.val_p = tuple(self.val_p)

    @property
    def num_rounds(self) -> int:
        return self.rounds or self.distance


# ---------------------------------------------------------------------------------- data
def build_sampler(cfg: TrainConfig) -> MechanismSampler:
    """Problems of the training circuit on a grid of ``p`` -> a mechanism sampler."""
    from qdecode.problem import DecodingProblem
    from qdecode.sims.circuits import build_circuit

    ps = np.linspace(cfg.p_min, cfg.p_max, max(cfg.p_grid_points, 2)) if cfg.p_max > cfg.p_min else [cfg.p_min]
    grid = []
    for p in sorted(set([*map(float, ps), *map(float, cfg.val_p)])):
        circ = build_circuit(cfg.code, d=cfg.distance, rounds=cfg.num_rounds, noise=cfg.noise, p=p)
        grid.append((p, DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))))
    return MechanismSampler(grid)


def _batch_tensors(layout: PredecoderLayout, batch) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.from_numpy(layout.inputs(batch.dets)), torch.from_numpy(batch.errors.astype(np.float32))


def column_logits(net: torch.nn.Module, x: torch.Tensor, col_flat: torch.Tensor) -> torch.Tensor:
    """``(S, n)`` per-column logits of the network output for input ``x``."""
    out = net(x)
    return out.reshape(out.shape[0], -1).index_select(1, col_flat)


def _loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, labels, reduction="sum") / logits.shape[0]


def _lr(cfg: TrainConfig, step: int) -> float:
    return train_common.cosine_lr(step, cfg.lr, cfg.warmup_steps, cfg.steps, cfg.lr_final_ratio)


def _held_out(sampler: MechanismSampler, cfg: TrainConfig, shots: int, salt: int):
    """Fixed held-out batches, one per ``val_p`` (seeded apart from the training stream)."""
    out = []
    for i, p in enumerate(cfg.val_p):
        rng = np.random.default_rng([cfg.seed, 10**9 + salt, i])
        out.append(sampler.sample(shots, rng, p=p))
    return out


@torch.no_grad()
def evaluate_loss(net, layout, batches, col_flat, chunk: int = 1024) -> dict[str, float]:
    """Mean BCE (nats/shot) of ``net`` and of the priors alone on held-out batches."""
    res: dict[str, float] = {}
    net.eval()
    for b in batches:
        tot = 0.0
        for s in range(0, b.dets.shape[0], chunk):
            x = torch.from_numpy(layout.inputs(b.dets[s:s + chunk]))
            y = torch.from_numpy(b.errors[s:s + chunk].astype(np.float32))
            tot += float(_loss(column_logits(net, x, col_flat), y)) * y.shape[0]
        res[f"val_loss_p{b.p:g}"] = tot / b.dets.shape[0]
    net.train()
    return res


@torch.no_grad()
def fit_temperature(net, layout, batches, col_flat) -> float:
    """Temperature ``T`` minimising held-out BCE of ``logit / T`` (golden-section on log T)."""
    logits, labels = [], []
    net.eval()
    for b in batches:
        for s in range(0, b.dets.shape[0], 1024):
            logits.append(column_logits(net, torch.from_numpy(layout.inputs(b.dets[s:s + 1024])), col_flat))
            labels.append(torch.from_numpy(b.errors[s:s + 1024].astype(np.float32)))
    net.train()
    z, y = torch.cat(logits), torch.cat(labels)

    def f(logt: float) -> float:
        return float(_loss(z / math.exp(logt), y))

    a, b = -1.0, 1.0
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(40):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return math.exp((a + b) / 2)


# ---------------------------------------------------------------------------------- export
def model_blob(net: PredecoderNet, cfg: TrainConfig, layout: PredecoderLayout, card: dict) -> dict:
    """The ``torch.load(weights_only=True)``-loadable export dict."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "arch": dataclasses.asdict(net.arch),
        "distance": cfg.distance,
        "rounds": cfg.num_rounds,
        "noise": cfg.noise,
        "classes": classes_to_json(layout.classes),
        "temperature": float(1.0 / float(net.inv_temperature)),
        "card": json.dumps(card),
        "state_dict": train_common.state_dict_copy(net),
    }


def export_onnx(net: PredecoderNet, blob: dict, path: str | os.PathLike, layout: PredecoderLayout) -> None:
    """Write ``net`` as ONNX (dynamic batch and volume axes) with the blob's metadata."""
    import onnx

    net = copy.deepcopy(net).eval()
    dummy = torch.zeros((2, *layout.inputs(np.zeros((1, layout.det_voxel.size), np.uint8)).shape[1:]))
    axes = {0: "shots", 2: "T", 3: "Y", 4: "X"}
    with warnings.catch_warnings():  # the legacy (TorchScript) exporter warns it is deprecated
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (dummy,), str(path), input_names=["events"], output_names=["logits"],
                          dynamic_axes={"events": axes, "logits": axes}, opset_version=17, dynamo=False)
    model = onnx.load(str(path))
    meta = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in blob.items() if k != "state_dict"}
    for k, v in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = k, v
    onnx.save(model, str(path))


def write_card(path_stem: Path, card: dict) -> None:
    """``STEM.card.json`` and a human-readable ``STEM.card.md``."""
    cfg = card["config"]
    lines = [
        f"# qdecode pre-decoder `{cfg['name']}`",
        "",
        f"Fully convolutional 3D network (Conv3d, {cfg['layers']} layers of width {cfg['width']}, "
        f"kernel {cfg['kernel']}, GELU, 1x1x1 head with {card['num_classes']} footprint-class channels; "
        f"{card['parameters']:,} parameters; receptive field {card['receptive_field']}).",
        "",
        "## Training data",
        f"- circuit: `{cfg['code']}` d = {cfg['distance']}, rounds = {cfg['rounds'] or cfg['distance']}, "
        f"noise `{cfg['noise']}` "
        "(stim rotated_memory_z; after_clifford_depolarization = before_round_data_depolarization = "
        "before_measure_flip_probability = after_reset_flip_probability = p; both detector bases)",
        f"- labels: DEM mechanisms sampled directly (numpy sampler over merged DEM columns), "
        f"p ~ U[{cfg['p_min']}, {cfg['p_max']}] per batch",
        f"- samples: {card['samples']:,} ({card['steps']} steps x batch {cfg['batch']}), fresh every step, "
        f"seed {cfg['seed']}",
        f"- initialised from: {cfg['init_from'] or 'random (seeded)'}",
        f"- reproduce: `qdecode train predecoder --config neural/configs/predecoder_{cfg['name']}.json --out DIR` "
        "(the config is stored in the `.card.json`)",
        "",
        "## Optimisation",
        f"- AdamW lr {cfg['lr']} (warm-up {cfg['warmup_steps']}, cosine to x{cfg['lr_final_ratio']}), "
        f"weight decay {cfg['weight_decay']}, grad clip {cfg['grad_clip']}, EMA {cfg['ema_decay']}",
        f"- wall time {card['wall_s']:.0f} s on {cfg['threads']} CPU thread(s) ({card['host']})",
        f"- temperature (held-out calibration): {card['temperature']:.4f}",
        "",
        "## Held-out loss (nats/shot; BCE summed over mechanisms)",
    ]
    for k, v in card["val"].items():
        lines.append(f"- {k}: {v:.4f}")
    lines += ["", "## Notes", card.get("notes", ""), ""]
    train_common.write_card_files(path_stem, card, lines)


# ---------------------------------------------------------------------------------- training
def _load_init(net: PredecoderNet, path: str, layout: PredecoderLayout) -> None:
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise PredecoderLoadError(f"{path} is not a qdecode pre-decoder model")
    if classes_from_json(blob["classes"]) != layout.classes:
        raise PredecoderLoadError(f"{path}: its class table differs from this circuit's")
    net.load_state_dict(blob["state_dict"])
    net.inv_temperature.fill_(1.0)


def train(cfg: TrainConfig, out_dir: str | os.PathLike, *, resume: bool = True, progress: bool = True,
          max_wall_s: float | None = None, max_steps: int | None = None,
          log: Callable[[str], None] | None = None) -> dict:
    """Train (or resume) a pre-decoder; export it when ``cfg.steps`` are done.

    Args:
        cfg: the run's configuration.
        out_dir: folder for checkpoint, log, exported model and card.
        resume: continue from ``out_dir/checkpoint.pt`` when it exists (same config required).
        progress: draw a tqdm bar on stderr.
        max_wall_s: stop (with a checkpoint, no export) after this many seconds of this call.
        max_steps: stop likewise after this many steps of this call.

    Returns:
        the model card dict (``{"finished": False, ...}`` when stopped early).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train_common.setup_torch(cfg.threads, cfg.seed)
    sampler = build_sampler(cfg)
    layout = PredecoderLayout.from_problem(sampler.problem)
    col_flat = torch.from_numpy(layout.col_flat)
    arch = ModelArch(num_classes=layout.num_classes, width=cfg.width, layers=cfg.layers, kernel=cfg.kernel)
    net = PredecoderNet(arch, prior=float(np.mean(sampler.priors(cfg.p_min))))
    if cfg.init_from:
        _load_init(net, cfg.init_from, layout)
    ema = copy.deepcopy(net) if cfg.ema_decay > 0 else net
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step, wall, history = 0, 0.0, []
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        saved = dict(state["config"])
        if saved != cfg.to_dict():
            diff = sorted(k for k in saved if saved.get(k) != cfg.to_dict().get(k))
            raise InputError(f"{ckpt} was written with a different config (differs in {diff}); "
                             f"use another --out or --no-resume")
        net.load_state_dict(state["model"])
        ema.load_state_dict(state["ema"])
        opt.load_state_dict(state["optimizer"])
        step, wall, history = state["step"], state["wall_s"], state["history"]
    val_batches = _held_out(sampler, cfg, cfg.val_shots, salt=1)

    def save() -> None:
        tmp = ckpt.with_suffix(".tmp")
        torch.save({"config": cfg.to_dict(), "model": net.state_dict(), "ema": ema.state_dict(),
                    "optimizer": opt.state_dict(), "step": step, "wall_s": wall, "history": history}, tmp)
        os.replace(tmp, ckpt)

    loop = train_common.StepLoop(out, cfg.steps, step, f"train {cfg.name}", progress)
    t_call = time.perf_counter()
    t_last = t_call
    t_ckpt = t_call
    run_loss, run_n = 0.0, 0
    stopped = False
    first_step = step
    with loop:
        while step < cfg.steps:
            if (max_wall_s is not None and time.perf_counter() - t_call >= max_wall_s) or (
                    max_steps is not None and step - first_step >= max_steps):
                stopped = True
                break
            rng = np.random.default_rng([cfg.seed, step])
            batch = sampler.sample(cfg.batch, rng, p_range=(cfg.p_min, cfg.p_max))
            x, y = _batch_tensors(layout, batch)
            train_common.set_lr(opt, _lr(cfg, step))
            loss = _loss(column_logits(net, x, col_flat), y)
            train_common.optimizer_step(net, opt, loss, cfg.grad_clip)
            if ema is not net:
                with torch.no_grad():
                    decay = min(cfg.ema_decay, (1 + step) / (10 + step))
                    for pe, pn in zip(ema.parameters(), net.parameters()):
                        pe.mul_(decay).add_(pn, alpha=1 - decay)
            step += 1
            now = time.perf_counter()
            wall += now - t_last
            t_last = now
            run_loss += float(loss.detach())
            run_n += 1
            loop.tick()
            if step % cfg.log_every == 0 or step == cfg.steps:
                rec: dict[str, Any] = {"step": step, "samples": step * cfg.batch, "wall_s": round(wall, 1),
                                       "lr": _lr(cfg, step - 1), "train_loss": run_loss / max(run_n, 1)}
                if step % cfg.val_every == 0 or step == cfg.steps:
                    rec.update(evaluate_loss(ema, layout, val_batches, col_flat))
                loop.record(history, rec)
                if loop.bar is not None:
                    loop.bar.set_postfix(loss=f"{rec['train_loss']:.3f}")
                if log is not None:
                    log(json.dumps(rec))
                run_loss, run_n = 0.0, 0
            if now - t_ckpt >= cfg.checkpoint_every_s:
                save()
                t_ckpt = now
    save()
    if stopped:
        return {"finished": False, "step": step, "wall_s": wall}
    return finish(cfg, out, ema, layout, sampler, wall, step)


def finish(cfg: TrainConfig, out: Path, net: PredecoderNet, layout: PredecoderLayout,
           sampler: MechanismSampler, wall: float, step: int, notes: str = "") -> dict:
    """Calibrate the temperature, export ``.pt`` + ``.onnx`` and write the model card."""
    col_flat = torch.from_numpy(layout.col_flat)
    net = copy.deepcopy(net)
    net.inv_temperature.fill_(1.0)
    calib = _held_out(sampler, cfg, cfg.calib_shots, salt=2)
    temperature = fit_temperature(net, layout, calib, col_flat)
    net.inv_temperature.fill_(1.0 / temperature)
    val = evaluate_loss(net, layout, _held_out(sampler, cfg, cfg.val_shots, salt=1), col_flat)
    with torch.no_grad():
        prior = {}
        for b in _held_out(sampler, cfg, cfg.val_shots, salt=1):
            pri = torch.from_numpy(sampler.priors(b.p))
            z = torch.log(pri / (1 - pri)).float().expand(b.errors.shape[0], -1)
            prior[f"prior_only_loss_p{b.p:g}"] = float(_loss(z, torch.from_numpy(b.errors.astype(np.float32))))
    val.update(prior)
    import platform

    card = {
        "name": cfg.name,
        "config": cfg.to_dict(),
        "parameters": net.num_parameters(),
        "num_classes": layout.num_classes,
        "receptive_field": net.arch.receptive_field,
        "steps": step,
        "samples": step * cfg.batch,
        "wall_s": wall,
        "host": f"{platform.processor() or platform.machine()}, torch {torch.__version__}",
        "temperature": temperature,
        "val": val,
        "notes": notes or cfg_notes(cfg),
    }
    blob = model_blob(net, cfg, layout, card)
    stem = out / f"predecoder_{cfg.name}"
    torch.save(blob, stem.with_suffix(".pt"))
    export_onnx(net, blob, stem.with_suffix(".onnx"), layout)
    write_card(stem, card)
    return card


def cfg_notes(cfg: TrainConfig) -> str:
    if cfg.init_from:
        return (f"Initialised from `{Path(cfg.init_from).name}` and fine-tuned at d = {cfg.distance}: "
                "the network is fully convolutional "
                "and the footprint-class table is the same at every d >= 5, so the weights transfer.")
    return "Trained from scratch."


def export_checkpoint(cfg: TrainConfig, out_dir: str | os.PathLike, name: str | None = None) -> dict:
    """Calibrate and export the EMA weights of ``out_dir/checkpoint.pt`` as they are now.

    For evaluating a run before it finishes; the files are named ``predecoder_NAME`` (default
    ``{cfg.name}_stepN``) and the card records the step reached.
    """
    out = Path(out_dir)
    state = torch.load(out / "checkpoint.pt", map_location="cpu", weights_only=False)
    torch.set_num_threads(max(1, cfg.threads))
    sampler = build_sampler(cfg)
    layout = PredecoderLayout.from_problem(sampler.problem)
    arch = ModelArch(num_classes=layout.num_classes, width=cfg.width, layers=cfg.layers, kernel=cfg.kernel)
    net = PredecoderNet(arch)
    net.load_state_dict(state["ema"])
    export_cfg = dataclasses.replace(cfg, name=name or f"{cfg.name}_step{state['step']}")
    return finish(export_cfg, out, net, layout, sampler, state["wall_s"], state["step"],
                  notes=f"Intermediate export at step {state['step']} of {cfg.steps}. " + cfg_notes(cfg))
