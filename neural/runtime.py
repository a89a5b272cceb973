"""The neural runtime: shipped model files, their lookup, and inference (``qdecode.neural.runtime``).

What decoders need at decode time, and nothing of training; generic across model families. Decoders
(:mod:`qdecode.decoders.crisp`, :mod:`qdecode.decoders.lm_transformer`,
:mod:`qdecode.decoders.nn_pymatching` through :mod:`qdecode.neural.predecoder_runtime`) use this
module; trainers (``qdecode.neural.*_train``) import it too, never the other way round.

* **Model directory and lookup**: shipped models live in ``qdecode/neural/models/`` as
  ``FAMILY_NAME.onnx`` (onnxruntime), ``FAMILY_NAME.pt`` (torch, ``torch.load(weights_only=True)``)
  and a model card ``FAMILY_NAME.card.json`` / ``.card.md``; families ``crisp``, ``lm`` and
  ``predecoder``. :func:`models_dir`, :func:`shipped_models`, :func:`resolve_model_file`.
* **Model formats**: the ``format`` / ``format_version`` every family's files declare (ONNX
  ``metadata_props``, the ``.pt`` dict and the card), e.g. :data:`CRISP_FORMAT`.
* **ONNX inference**: :func:`onnx_session` (one onnxruntime session builder),
  :func:`open_onnx_model` (session + checked metadata), :func:`read_card` (the JSON card beside a
  model file).
* **torch model files** (``backend="torch"``): :func:`load_crisp_torch`, :func:`load_lm_torch`
  (network in eval mode + descriptors). Family-specific inference is not here: CRISP's decoding
  loops (onnx and torch) are in :mod:`qdecode.decoders.crisp`, the pre-decoder's runners in
  :mod:`qdecode.neural.predecoder_runtime`, built on this module.

No torch and no onnxruntime at module level: importing this module needs only the standard library; each
function imports the backend it runs (ImportError naming the ``qdecode[neural]`` extra when it is
missing).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from qdecode.errors import InputError, MissingPackageError

__all__ = [
    "MODELS_DIR", "BACKENDS", "CRISP_FORMAT", "CRISP_FORMAT_VERSION", "LM_FORMAT", "LM_FORMAT_VERSION",
    "PREDECODER_FORMAT", "PREDECODER_FORMAT_VERSION", "models_dir", "shipped_models", "resolve_model_file",
    "card_path", "read_card", "onnx_session", "onnx_cuda_available", "open_onnx_model", "load_crisp_torch",
    "load_lm_torch",
]

#: ``qdecode/neural/models``: the one place shipped model files are looked up.
MODELS_DIR = Path(__file__).resolve().parent / "models"
BACKENDS = ("onnx", "torch")
SUFFIXES = {"onnx": ".onnx", "torch": ".pt"}

CRISP_FORMAT, CRISP_FORMAT_VERSION = "qdecode-crisp", 1
LM_FORMAT, LM_FORMAT_VERSION = "qdecode-lm-byte", 1
PREDECODER_FORMAT, PREDECODER_FORMAT_VERSION = "qdecode-predecoder", 1


# ----------------------------------------------------------------------------- model files
def models_dir() -> Path:
    """``qdecode/neural/models`` (the shipped models of every family)."""
    return MODELS_DIR


def shipped_models(family: str) -> list[str]:
    """Names of the shipped models of ``family`` (``"crisp"`` -> ``polar32_16``, ...): the
    ``FAMILY_NAME.onnx`` files of :func:`models_dir`."""
    prefix = f"{family}_"
    return sorted(p.stem.removeprefix(prefix) for p in MODELS_DIR.glob(f"{prefix}*.onnx"))


def resolve_model_file(model: str | os.PathLike, family: str, backend: str, *, what: str,
                       error: type[Exception] = ValueError, backends: tuple[str, ...] = BACKENDS) -> Path:
    """A shipped name or a file path -> the model file ``backend`` runs.

    ``model``: a path ending in ``.onnx`` / ``.pt`` (used as it is), or a shipped name ``NAME``
    (``models_dir() / FAMILY_NAME.onnx`` or ``.pt``). ``what`` names the family in messages (e.g.
    ``"CRISP model"``); ``error`` is the exception raised; ``backends``: those the family runs.

    Raises:
        error: unknown backend, missing file, unknown shipped name, or a file of the other backend.
    """
    if backend not in backends:
        raise error(f"backend must be one of {list(backends)}, got {backend!r}")
    suffix = SUFFIXES[backend]
    exts = "/".join(SUFFIXES[b] for b in backends)
    path = Path(model)
    if path.suffix in (".onnx", ".pt"):
        if not path.is_file():
            raise error(f"{what} file not found: {path}")
        if path.suffix != suffix:
            raise error(f"backend={backend} needs a {suffix} model file, got {path.name}")
        return path
    shipped = MODELS_DIR / f"{family}_{model}{suffix}"
    if not shipped.is_file():
        known = ", ".join(shipped_models(family)) or "none"
        raise error(f"unknown {what} {str(model)!r}: no shipped {what} of that name (shipped: {known}); "
                    f"give a {exts} path")
    return shipped


def card_path(model_path: str | os.PathLike) -> Path:
    """``STEM.card.json`` beside ``STEM.onnx`` / ``STEM.pt``."""
    p = Path(model_path)
    return p.with_name(p.name[: -len(p.suffix)] + ".card.json") if p.suffix else p.with_name(p.name + ".card.json")


def read_card(model_path: str | os.PathLike, *, what: str, error: type[Exception] = ValueError) -> dict:
    """The model card (a JSON object) that sits beside ``model_path``.

    Raises:
        error: the card is missing, unreadable or not a JSON object.
    """
    cp = card_path(model_path)
    if not cp.is_file():
        raise error(f"{what} card not found: {cp} (it must sit beside {Path(model_path).name})")
    try:
        card = json.loads(cp.read_text(encoding="utf-8"))
        if not isinstance(card, dict):
            raise InputError("not a JSON object")
    except (OSError, ValueError) as exc:
        raise error(f"{what} card {cp} is unreadable or corrupt ({exc})") from None
    return card


# ----------------------------------------------------------------------------- onnxruntime
def _ort(who: str):
    try:
        import onnxruntime as ort
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingPackageError(f"{who} needs onnxruntime: pip install 'qdecode[neural]' ({exc})") from None
    return ort


def onnx_cuda_available(who: str = "device=cuda") -> bool:
    """Whether onnxruntime offers the CUDA execution provider (ImportError without onnxruntime)."""
    return "CUDAExecutionProvider" in _ort(who).get_available_providers()


def onnx_session(path: str | os.PathLike, threads: int | None, who: str,
                 providers: tuple[str, ...] = ("CPUExecutionProvider",)):
    """An ``onnxruntime.InferenceSession`` of ``path`` with ``threads`` intra-op threads (0 / None:
    onnxruntime's default), CPU by default.

    ``who`` names the caller in the ImportError raised when onnxruntime is missing; onnxruntime's
    own exceptions for an unreadable model propagate (callers turn them into their model errors).
    """
    ort = _ort(who)
    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=opts, providers=list(providers))


def open_onnx_model(path: Path, *, fmt: str, version: int, what: str, error: type[Exception], threads: int | None,
                    who: str) -> tuple[Any, dict[str, str]]:
    """``(session, metadata)`` of an ONNX model file of family ``fmt`` / ``version`` on the CPU.

    Raises:
        error: unreadable (truncated, corrupt) file, another family's file or another version.
        ImportError: onnxruntime is not installed.
    """
    try:
        sess = onnx_session(path, threads, who)
    except ImportError:  # onnxruntime missing: not a model problem
        raise
    except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
        raise error(f"cannot load {what} {path} (truncated or corrupt?): {type(exc).__name__}: {exc}") from None
    meta = dict(sess.get_modelmeta().custom_metadata_map)
    if meta.get("format") != fmt:
        raise error(f"{path} is not a {what} (format {meta.get('format')!r})")
    if meta.get("format_version") != str(version):
        raise error(f"{path}: unsupported {what} format version {meta.get('format_version')!r}")
    return sess, meta


# ----------------------------------------------------------------------------- torch (backend="torch")
def _torch(who: str):
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingPackageError(f"{who} needs torch: pip install 'qdecode[neural]' ({exc})") from None
    return torch


def load_crisp_torch(path: str | os.PathLike):
    """``(net, code descriptor, card)`` from a ``crisp_NAME.pt`` file (eval mode).

    Raises:
        ValueError: missing, corrupt or foreign file, or weights that do not fit the architecture.
        ImportError: torch is not installed.
    """
    _torch("backend='torch'")
    from qdecode.neural.crisp_model import CrispArch, build_model
    from qdecode.neural.model_file import load_weights, read_model_blob

    blob = read_model_blob(path, CRISP_FORMAT, CRISP_FORMAT_VERSION, "CRISP model")
    net = load_weights(build_model(CrispArch.from_dict(json.loads(blob["arch"]))), blob, path)
    return net, json.loads(blob["code"]), json.loads(blob.get("card", "{}"))


def load_lm_torch(path: str | os.PathLike):
    """``(net, card)`` from a ``lm_NAME.pt`` file (eval mode, temperature applied).

    Raises:
        ValueError: missing, corrupt or foreign file.
        ImportError: torch is not installed.
    """
    _torch("the byte-LM torch model")
    from qdecode.neural.lm_model import ByteLmPrior, LmArch
    from qdecode.neural.model_file import load_weights, read_model_blob

    blob = read_model_blob(path, LM_FORMAT, LM_FORMAT_VERSION, "byte-LM model")
    net = load_weights(ByteLmPrior(LmArch.from_dict(json.loads(blob["arch"]))), blob, path)
    return net, json.loads(blob.get("card", "{}"))
