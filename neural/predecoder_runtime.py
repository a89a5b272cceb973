"""Loading a trained pre-decoder and running it: onnxruntime (no torch) or torch.

No torch or onnxruntime at module level: :func:`load_predecoder` imports the backend it needs.

Model files (written by :mod:`qdecode.neural.predecoder_train`):

* ``NAME.onnx``: the network with its metadata in the ONNX ``metadata_props``;
* ``NAME.pt``: a dict loadable with ``torch.load(weights_only=True)``: ``format``,
  ``format_version``, ``arch``, ``distance``, ``rounds``, ``noise``, ``classes`` (JSON),
  ``temperature``, ``card`` (JSON) and ``state_dict``.

Shipped models live in ``qdecode/neural/models/`` (:mod:`qdecode.neural.runtime`, which also finds
them and builds the onnxruntime session) and are named ``d5``, ``d7``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from qdecode.errors import InputError, MissingPackageError
from qdecode.neural import runtime
from qdecode.neural.predecoder_layout import Footprint, classes_from_json

FORMAT = runtime.PREDECODER_FORMAT
FORMAT_VERSION = runtime.PREDECODER_FORMAT_VERSION
BACKENDS = runtime.BACKENDS
DEVICES = ("cpu", "cuda")


class PredecoderLoadError(InputError):
    """A missing, corrupt or incompatible pre-decoder model file."""


@dataclasses.dataclass(frozen=True)
class PredecoderMeta:
    """What a model file declares about itself."""

    path: str
    distance: int
    rounds: int
    noise: str
    classes: tuple[Footprint, ...]
    temperature: float
    arch: dict


def shipped_models() -> list[str]:
    """Names of the models shipped in ``qdecode/neural/models`` (``d5``, ``d7``, ...)."""
    return runtime.shipped_models("predecoder")


def resolve_model_path(model: str, backend: str = "onnx") -> Path:
    """A shipped name (``d5``) or a file path -> the file for ``backend``.

    Raises:
        PredecoderLoadError: unknown name, missing file or a file type the backend cannot run.
    """
    return runtime.resolve_model_file(model, "predecoder", backend, what="pre-decoder model",
                                      error=PredecoderLoadError)


def _meta_from_dict(path: Path, d: dict) -> PredecoderMeta:
    try:
        if d.get("format") != FORMAT:
            raise KeyError("format")
        if int(d.get("format_version", 0)) > FORMAT_VERSION:
            raise PredecoderLoadError(f"{path}: model format version {d['format_version']} "
                                      f"is newer than this qdecode reads")
        arch = d["arch"] if isinstance(d["arch"], dict) else json.loads(d["arch"])
        return PredecoderMeta(
            path=str(path),
            distance=int(d["distance"]),
            rounds=int(d["rounds"]),
            noise=str(d.get("noise", "")),
            classes=classes_from_json(d["classes"]),
            temperature=float(d.get("temperature", 1.0)),
            arch=dict(arch),
        )
    except PredecoderLoadError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise PredecoderLoadError(f"{path} is not a qdecode pre-decoder model (missing or bad field {exc})") from None


class PredecoderRunner:
    """Runs a loaded model: ``logits(x float32 (S, 3, T, Y, X)) -> float32 (S, C, T, Y, X)``."""

    meta: PredecoderMeta
    backend: str
    device: str

    def logits(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class _OnnxRunner(PredecoderRunner):
    def __init__(self, path: Path, device: str, threads: int = 0):
        providers: tuple[str, ...] = ("CPUExecutionProvider",)
        if device == "cuda":
            if not runtime.onnx_cuda_available("backend=onnx"):
                raise PredecoderLoadError("device=cuda needs onnxruntime-gpu with the CUDA execution provider")
            providers = ("CUDAExecutionProvider", "CPUExecutionProvider")
        try:
            self._session = runtime.onnx_session(path, max(0, int(threads)), "backend=onnx", providers)
        except ImportError:
            raise
        except Exception as exc:  # onnxruntime raises its own exception types for bad files
            raise PredecoderLoadError(f"{path} is not a readable ONNX model ({type(exc).__name__})") from None
        self.meta = _meta_from_dict(path, dict(self._session.get_modelmeta().custom_metadata_map))
        self._input = self._session.get_inputs()[0].name
        self.backend, self.device = "onnx", device

    def logits(self, x: np.ndarray) -> np.ndarray:
        return self._session.run(None, {self._input: np.ascontiguousarray(x, dtype=np.float32)})[0]


class _TorchRunner(PredecoderRunner):
    def __init__(self, path: Path, device: str, threads: int = 0):
        try:
            import torch
        except ImportError as exc:
            raise MissingPackageError("backend=torch needs torch: pip install 'qdecode[neural]'") from exc
        from qdecode.neural.predecoder_model import ModelArch, PredecoderNet

        if device == "cuda" and not torch.cuda.is_available():
            raise PredecoderLoadError("device=cuda requested but torch sees no CUDA device")
        try:
            blob = torch.load(str(path), map_location="cpu", weights_only=True)
        except Exception as exc:  # pickle / zip errors of a corrupt file
            raise PredecoderLoadError(f"{path} is not a readable torch model file ({type(exc).__name__})") from None
        if not isinstance(blob, dict):
            raise PredecoderLoadError(f"{path} is not a qdecode pre-decoder model")
        self.meta = _meta_from_dict(path, blob)
        try:
            net = PredecoderNet(ModelArch(**self.meta.arch))
            net.load_state_dict(blob["state_dict"])
        except (KeyError, TypeError, RuntimeError) as exc:
            raise PredecoderLoadError(f"{path}: weights do not match the declared architecture ({exc})") from None
        if threads > 0:
            torch.set_num_threads(threads)
        self._torch = torch
        self._net = net.to(device).eval()
        self.backend, self.device = "torch", device

    def logits(self, x: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.inference_mode():
            out = self._net(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(self.device))
        return out.cpu().numpy()


def load_predecoder(model: str, backend: str = "onnx", device: str = "cpu", threads: int = 0) -> PredecoderRunner:
    """Load a shipped model name or a model file for ``backend`` on ``device``.

    ``threads``: CPU threads for inference (0 = the backend's default; for torch this sets
    the process-wide ``torch.set_num_threads``).

    Raises:
        PredecoderLoadError: unknown name, missing/corrupt file, unavailable device.
        ImportError: the backend's package is not installed.
    """
    if device not in DEVICES:
        raise PredecoderLoadError(f"device must be one of {list(DEVICES)}, got {device!r}")
    path = resolve_model_path(model, backend)
    if backend == "onnx":
        return _OnnxRunner(path, device, threads)
    return _TorchRunner(path, device, threads)
