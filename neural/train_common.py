"""The skeleton the trainers share (``crisp_train``, ``lm_train``, ``predecoder_train``).

Written once here: the JSON config dataclass round trip (:class:`JsonConfig`), the warm-up +
cosine learning rate (:func:`cosine_lr`), thread and seed set-up (:func:`setup_torch`), the
resumable checkpoint of ``model_file`` wired to a run (:func:`resume`), the progress bar / JSONL
log / stop test of the step loop (:class:`StepLoop`), one optimiser step (:func:`optimizer_step`),
the exported weights (:func:`state_dict_copy`) and the model-card pair (:func:`write_card_files`).
Each trainer keeps what is its own: the data, the loss, the card text and the model format. The
files they write are unchanged, so checkpoints, configs and models written before stay readable.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from qdecode.errors import InputError
from qdecode.neural.model_file import read_checkpoint

__all__ = [
    "JsonConfig",
    "cosine_lr",
    "setup_torch",
    "resume",
    "StepLoop",
    "optimizer_step",
    "set_lr",
    "state_dict_copy",
    "host_description",
    "write_card_files",
]


class JsonConfig:
    """Mixin for a training config dataclass stored as JSON (checkpoints, cards, ``--config``).

    Tuple fields are written as JSON lists and read back as tuples of floats by the dataclass's
    own ``__post_init__``. ``KIND`` names the config in error messages; a ``"comment"`` key is
    allowed in files and ignored.
    """

    KIND = "training"

    @classmethod
    def from_json(cls, path: str | os.PathLike):
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_dict(cls, d: dict):
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names - {"comment"}
        if unknown:
            raise InputError(f"unknown {cls.KIND} config keys: {sorted(unknown)}")
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def cosine_lr(step: int, lr: float, warmup: int, steps: int, min_frac: float) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay from ``lr`` to ``lr * min_frac`` at ``steps``."""
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    lo = lr * min_frac
    return lo + 0.5 * (lr - lo) * (1.0 + math.cos(math.pi * min(1.0, t)))


def setup_torch(threads: int, seed: int) -> None:
    """``threads`` CPU threads (at least 1) and the torch seed of a run."""
    torch.set_num_threads(max(1, int(threads)))
    torch.manual_seed(seed)


def resume(ckpt: Path, net: torch.nn.Module, opt: torch.optim.Optimizer, config: dict,
           key: Callable[[dict], dict]) -> tuple[int, float, list]:
    """Load ``ckpt`` (checked against ``config`` on ``key``) into ``net`` and ``opt``.

    Returns:
        ``(step, wall_s, history)`` of the run so far.
    """
    state = read_checkpoint(ckpt, config, key)
    net.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    return int(state["step"]), float(state["wall_s"]), json.loads(state["history"])


class StepLoop:
    """The progress bar, the JSONL log and the early-stop test around a trainer's step loop.

    Use as a context manager (closes the log and the bar)::

        with StepLoop(out, cfg.steps, step, f"train crisp {cfg.name}", progress) as loop:
            while step < cfg.steps:
                if loop.should_stop(step, max_wall_s, stop_after): ...
    """

    #: seconds between plain progress lines when stderr is not a terminal (as `qdecode sweep`'s default)
    LINE_INTERVAL = 30.0

    def __init__(self, out: Path, total: int, initial: int, desc: str, progress: bool) -> None:
        self.t0 = time.time()
        self.bar = None
        self.total, self.step, self.initial, self.desc = total, initial, initial, desc
        # Without a terminal (a log file, nohup, CI) a bar would be noise: a plain line with the
        # step count and an ETA at most every LINE_INTERVAL seconds instead.
        self.next_line = None
        if progress and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=desc, unit="step", dynamic_ncols=True)
        elif progress:
            self.next_line = time.monotonic() + self.LINE_INTERVAL
        self.log = (out / "train_log.jsonl").open("a", encoding="utf-8")

    def elapsed(self) -> float:
        """Seconds since the loop began (this call of ``train``)."""
        return time.time() - self.t0

    def should_stop(self, step: int, max_wall_s: float | None, stop_after: int | None) -> bool:
        """``max_wall_s`` seconds of this call have passed, or ``step`` reached ``stop_after``."""
        return (max_wall_s is not None and self.elapsed() > max_wall_s) or (
            stop_after is not None and step >= stop_after)

    def tick(self, **postfix: Any) -> None:
        self.step += 1
        if self.bar is not None:
            self.bar.update(1)
            if postfix:
                self.bar.set_postfix(**postfix)
        elif self.next_line is not None and time.monotonic() >= self.next_line:
            self.next_line = time.monotonic() + self.LINE_INTERVAL
            print(self.line(**postfix), file=sys.stderr, flush=True)

    def line(self, **postfix: Any) -> str:
        """``qdecode train crisp x: step 300/2000, 1m elapsed, ETA ~5m40s, loss=0.41`` (no terminal)."""
        elapsed = self.elapsed()
        done = self.step - self.initial
        text = f"qdecode {self.desc}: step {self.step}/{self.total}, {elapsed:.0f} s elapsed"
        if 0 < done and self.step < self.total:
            text += f", ETA ~{elapsed * (self.total - self.step) / done:.0f} s"
        return text + "".join(f", {k}={v}" for k, v in postfix.items())

    def record(self, history: list, rec: dict) -> None:
        """Append ``rec`` to ``history`` and to the log file."""
        history.append(rec)
        self.log.write(json.dumps(rec) + "\n")
        self.log.flush()

    def __enter__(self) -> "StepLoop":
        return self

    def __exit__(self, *exc: object) -> None:
        self.log.close()
        if self.bar is not None:
            self.bar.close()


def optimizer_step(net: torch.nn.Module, opt: torch.optim.Optimizer, loss: torch.Tensor, grad_clip: float) -> None:
    """Backward pass, gradient-norm clip (when ``grad_clip > 0``) and one optimiser step."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(net.parameters(), grad_clip)
    opt.step()


def set_lr(opt: torch.optim.Optimizer, lr: float) -> None:
    for g in opt.param_groups:
        g["lr"] = lr


def state_dict_copy(net: torch.nn.Module) -> dict:
    """Detached copies of ``net``'s weights, as model files store them."""
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def host_description() -> str:
    """The machine and torch version a model card records."""
    return f"{platform.machine()} {platform.processor() or platform.system()}, torch {torch.__version__}"


def write_card_files(stem: Path, card: dict, lines: list[str]) -> None:
    """``STEM.card.json`` (the card) and ``STEM.card.md`` (``lines``, joined)."""
    stem.with_suffix(".card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    stem.with_suffix(".card.md").write_text("\n".join(lines), encoding="utf-8")
