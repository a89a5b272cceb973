"""The byte-level Transformer prior of sem-OSD, run with onnxruntime (no torch).

:class:`TransformerPrior` has the prior interface of :mod:`qdecode.decoders.lm_prior`
(``__call__(context_bytes, noisy_block_llr) -> (nb, 256)``, ``batch(contexts, lengths, llr) ->
(S, nb, 256)``, ``context_len``, ``label``). The network (:mod:`qdecode.neural.lm_model`,
trained by ``qdecode train lm``) reads the last ``context_len`` bytes before a block and the
block's ``8 nb`` message-bit LLRs and returns, per byte ``j``, the prior row
``log_softmax(z_j / T)``; adding byte ``j``'s own channel log-evidence (eq. (1),
:func:`qdecode.kernels.sem_osd.byte_evidence`) and renormalising gives the network's posterior
``q_j`` exactly (posterior-ready by construction). One network evaluation per block, batched
over blocks (``chunk`` per onnxruntime call); never per candidate.

Models: ``model="auto"`` is the shipped ``lm_byte`` (``qdecode/neural/models/lm_byte.onnx``);
a name ``NAME`` is ``lm_NAME.onnx`` there; a path to a ``.onnx`` file is used as it is. The card
``STEM.card.json`` must sit beside the ``.onnx`` file (it names the model and its temperature).
A missing, truncated or corrupt file, or a card that does not match the graph, raises
:class:`~qdecode.decoders.lm_prior.LmPriorError`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from qdecode.decoders.lm_prior import BatchedPrior, LmPriorError
from qdecode.errors import InputError

__all__ = ["TransformerPrior", "resolve_lm_model", "lm_models_dir"]

_WHAT = "byte-LM model"


def _runtime():
    """:mod:`qdecode.neural.runtime` (model files, onnxruntime / torch inference), imported when needed."""
    from qdecode.neural import runtime

    return runtime


def lm_models_dir() -> Path:
    """``qdecode/neural/models`` (:func:`qdecode.neural.runtime.models_dir`)."""
    return _runtime().models_dir()


def resolve_lm_model(model: str = "auto") -> Path:
    """``"auto"`` / a shipped name / a ``.onnx`` path -> the ONNX file (LmPriorError if missing)."""
    name = "byte" if str(model) == "auto" else str(model)
    return _runtime().resolve_model_file(name, "lm", "onnx", what=_WHAT, error=LmPriorError, backends=("onnx",))


class TransformerPrior(BatchedPrior):
    """Byte Transformer prior for sem-OSD (module docstring).

    Args:
        model: ``"auto"`` (shipped ``lm_byte``), a shipped name or a ``.onnx`` path.
        threads: onnxruntime intra-op threads (1 default; 0: the runtime's default).
        chunk: blocks per onnxruntime call.

    Raises:
        LmPriorError: missing / truncated / corrupt model or card, or a card that does not match.
        ImportError: onnxruntime is not installed.
    """

    def __init__(self, model: str = "auto", *, threads: int = 1, chunk: int = 2048) -> None:
        self.path = resolve_lm_model(model)
        self.threads = int(threads)
        if self.threads < 0:
            raise InputError(f"threads must be >= 0, got {threads}")
        self.chunk = max(1, int(chunk))
        rt = _runtime()
        card_path = rt.card_path(self.path)
        self.card = rt.read_card(self.path, what=_WHAT, error=LmPriorError)
        self._sess, meta = rt.open_onnx_model(self.path, fmt=rt.LM_FORMAT, version=rt.LM_FORMAT_VERSION, what=_WHAT,
                                              error=LmPriorError, threads=self.threads, who="the transformer prior")
        try:
            self.arch = json.loads(meta["arch"])
            self.inv_temp = float(meta["inv_temp"])
            self.context_len = int(self.arch["context"])
            self.nb = int(self.arch["nb"])
        except (KeyError, ValueError, TypeError) as exc:
            raise LmPriorError(f"{self.path}: corrupt byte-LM metadata ({exc})") from None
        if self.card.get("format") != rt.LM_FORMAT or self.card.get("arch") != self.arch or not np.isclose(
                float(self.card.get("inv_temp", np.nan)), self.inv_temp, rtol=1e-6):
            raise LmPriorError(f"model card {card_path} does not describe {self.path.name} "
                               "(format, architecture or temperature differ)")
        self.name = str(meta.get("name") or self.card.get("name") or self.path.stem)
        self._digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:8]

    @property
    def label(self) -> str:
        return f"tf-{self.name}-{self._digest}"

    def _inputs(self, contexts: Any, lengths: Any, llr: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = np.asarray(llr, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != 8 * self.nb:
            raise InputError(f"llr must have shape (blocks, {8 * self.nb}) for this model (nb = {self.nb}), "
                             f"got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise InputError("llr must be finite")
        S = x.shape[0]
        ctx = np.asarray(contexts)
        ln = np.asarray(lengths, dtype=np.int64)
        if ctx.ndim != 2 or ctx.shape[0] != S or ln.shape != (S,) or np.any(ln < 0) or np.any(ln > ctx.shape[1]):
            raise InputError("contexts must be (S, c) uint8 with lengths (S,) in 0..c")
        C = self.context_len
        m = np.minimum(ln, C)
        ar = np.arange(C)
        valid = ar[None, :] < m[:, None]
        if ctx.shape[1]:
            idx = np.clip(ln[:, None] - m[:, None] + ar[None, :], 0, ctx.shape[1] - 1)
            c = np.where(valid, np.take_along_axis(ctx.astype(np.int64), idx, axis=1), 0)
        else:
            c = np.zeros((S, C), dtype=np.int64)
        return np.ascontiguousarray(c, dtype=np.int64), np.ascontiguousarray(m, dtype=np.int64), \
            np.ascontiguousarray(np.clip(x, -1e4, 1e4), dtype=np.float32)

    def _run(self, contexts: Any, lengths: Any, llr: Any) -> tuple[np.ndarray, np.ndarray]:
        c, m, x = self._inputs(contexts, lengths, llr)
        S = x.shape[0]
        pr = np.empty((S, self.nb, 256), dtype=np.float32)
        po = np.empty((S, self.nb, 256), dtype=np.float32)
        for a in range(0, S, self.chunk):
            b = min(S, a + self.chunk)
            pr[a:b], po[a:b] = self._sess.run(None, {"ctx": c[a:b], "ctx_len": m[a:b], "llr": x[a:b]})
        self.last_calls = np.ones(S, dtype=np.int64)
        return pr, po

    def batch(self, contexts: Any, lengths: Any, llr: Any, *, threads: int | None = None) -> np.ndarray:
        """``(S, nb, 256)`` float64 log-priors (each row normalised); ``contexts`` (S, c) uint8 with
        the valid bytes first (``contexts[s, :lengths[s]]``, most recent last). ``threads`` is
        accepted for interface compatibility (the session's thread count applies)."""
        pr, _ = self._run(contexts, lengths, llr)
        lp = pr.astype(np.float64)
        mx = lp.max(axis=2, keepdims=True)
        return lp - (mx + np.log(np.exp(lp - mx).sum(axis=2, keepdims=True)))

    def posterior(self, contexts: Any, lengths: Any, llr: Any) -> np.ndarray:
        """The network's own posterior ``log q (S, nb, 256)`` (float32 graph output)."""
        return self._run(contexts, lengths, llr)[1]
