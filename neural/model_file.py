"""Reading the ``.pt`` model files of ``qdecode train`` (CRISP, byte LM): one checked loader;
and the resumable training checkpoints those trainers share.

A model file is a plain dict saved with ``torch.save`` and read back with
``torch.load(weights_only=True)`` (no pickled code): ``format`` (a string naming the model
family), ``format_version`` (int), ``arch`` (JSON), ``state_dict`` and the family's own
JSON fields (card, code, ...). Every failure -- missing file, unreadable / corrupt file,
another family's file, an unsupported version, weights that do not fit the declared
architecture -- becomes a ``ValueError`` naming the file and the reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import torch

from qdecode.errors import InputError


def read_model_blob(path: str | os.PathLike, fmt: str, version: int, what: str) -> dict:
    """The checked dict of model file ``path`` of family ``fmt`` / ``version``.

    ``what``: how messages name the family (e.g. ``"CRISP model"``).

    Raises:
        ValueError: missing, unreadable or corrupt file; other format; other version.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} file not found: {p}")
    try:
        blob = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a corrupt file
        raise InputError(f"cannot read {what} {p}: {type(exc).__name__}: {exc}") from None
    if not isinstance(blob, dict) or blob.get("format") != fmt:
        found = blob.get("format") if isinstance(blob, dict) else None
        raise InputError(f"{p} is not a {what} file (format {found!r}, expected {fmt!r})")
    if blob.get("format_version") != version:
        raise InputError(f"{p}: unsupported {what} format version {blob.get('format_version')}")
    return blob


def load_weights(net: torch.nn.Module, blob: dict, path: str | os.PathLike) -> torch.nn.Module:
    """``net`` with ``blob["state_dict"]`` loaded, in eval mode.

    Raises:
        ValueError: the weights do not match the network's architecture.
    """
    try:
        net.load_state_dict(blob["state_dict"])
    except (KeyError, RuntimeError) as exc:
        raise InputError(f"{Path(path)}: weights do not match the declared architecture ({exc})") from None
    return net.eval()


def read_checkpoint(ckpt: str | os.PathLike, config: dict, key: Callable[[dict], dict]) -> dict:
    """The training checkpoint ``ckpt`` (``model``, ``opt``, ``step``, ``wall_s``, ``history`` JSON,
    ``config`` JSON) after checking it was trained with ``config`` (compared on ``key(config)``:
    the fields a resumed run may not change).

    Raises:
        ValueError: unreadable checkpoint, or one from a different configuration.
    """
    ckpt = Path(ckpt)
    try:
        state = torch.load(ckpt, map_location="cpu", weights_only=True)
        saved = json.loads(state["config"])
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"cannot read checkpoint {ckpt}: {type(exc).__name__}: {exc} "
                         "(delete it or pass --no-resume)") from None
    if key(saved) != key(config):
        diff = sorted(k for k in key(saved) if saved.get(k) != config.get(k))
        raise InputError(f"checkpoint {ckpt} was trained with a different config (differs in {diff}); "
                         "use another --out or --no-resume")
    return state


def write_checkpoint(ckpt: str | os.PathLike, net: torch.nn.Module, opt: torch.optim.Optimizer, step: int,
                     wall_s: float, history: list, config: dict) -> None:
    """Write the checkpoint :func:`read_checkpoint` reads, atomically (a killed run keeps the previous one)."""
    ckpt = Path(ckpt)
    tmp = ckpt.with_suffix(".tmp")
    torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step, "wall_s": wall_s,
                "history": json.dumps(history), "config": json.dumps(config)}, tmp)
    os.replace(tmp, ckpt)
