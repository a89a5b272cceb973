"""CRISP: a trained sequential neural decoder for polar / PAC codes, run batched on the CPU.

The network (:mod:`qdecode.neural.crisp_model`, trained by :mod:`qdecode.neural.crisp_train`)
decides the rate-profiled vector ``v`` (``v_A`` = data, ``v_F = 0``; ``u = v T`` for PAC codes)
position by position. Inference here needs only numpy and **onnxruntime** (imported when a
decoder is built; no torch): the GRU model is exported as a single-step cell
``(llr (B, N), prev (B, 2), h) -> (logit (B,), h')`` and :meth:`CrispDecoder.decode_llr_batch`
loops over the ``N`` positions with the hidden state carried for the whole batch. Frozen
positions are forced to 0 and that decision is fed back as the next step's previous bit;
information positions take ``logit > 0 -> 1``. The codeword is re-encoded from ``v``. For
``inputs="cancel"`` models the step input is the LLR vector with the decided bits'
contribution removed (sign flips by the partial re-encoding, kept per block); ``"cancel+sc"``
models also get the min-sum SC LLR of the current bit on that block as one more column. A
dilated-conv model (a whole-sequence ONNX graph) is run once per position on the prefix.
``backend="torch"`` runs the ``.pt`` file with torch instead (optional; :func:`torch_decode_v`,
the model file read by :func:`qdecode.neural.runtime.load_crisp_torch`). All of CRISP's inference
is here; :mod:`qdecode.neural.runtime` only finds, checks and opens model files.

Models: ``model="auto"`` (the shipped model named after the code, e.g. ``polar32_16``), a
shipped name (``crisp_NAME.onnx`` in ``qdecode/neural/models/``, e.g. ``polar32_16_map``, the
model distilled from the exact sequential-MAP teacher, :mod:`qdecode.neural.crisp_teacher`) or a path to a ``.onnx``
(``.pt`` for the torch backend). The file records the code it was trained for (``N``,
information set, pre-transform); building a decoder for another code is an error.

Examples:
    >>> from qdecode.codes.catalog import get_code
    >>> import numpy as np
    >>> code = get_code("polar32_16")
    >>> dec = CrispDecoder(code)  # the shipped model trained for polar32_16 (needs onnxruntime)
    >>> x = code.encode(np.array([[1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0]], np.uint8))
    >>> bool(np.array_equal(dec.decode_llr_batch(8.0 * (1.0 - 2.0 * x)), x))  # a clean channel decodes back
    True
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo
from qdecode.decoders.block import BlockDecoder
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.errors import InputError, MissingPackageError

__all__ = ["CrispDecoder", "CrispModelError", "models_dir", "shipped_models", "resolve_model", "torch_decode_v",
           "CRISP_PARAMS"]


def _runtime():
    """:mod:`qdecode.neural.runtime` (model files, onnxruntime sessions), imported when needed."""
    from qdecode.neural import runtime

    return runtime


class CrispModelError(InputError):
    """A missing, corrupt or mismatched CRISP model file."""


def models_dir() -> Path:
    """``qdecode/neural/models`` (:func:`qdecode.neural.runtime.models_dir`)."""
    return _runtime().models_dir()


def shipped_models() -> list[str]:
    """Names of the shipped CRISP models (``polar32_16``, ...)."""
    return _runtime().shipped_models("crisp")


def resolve_model(model: str, code: Any = None, backend: str = "onnx") -> Path:
    """``"auto"`` / a shipped name / a path -> the model file for ``backend``.

    Raises:
        CrispModelError: unknown name or missing file.
    """
    name = str(model)
    if name == "auto":
        name = getattr(code, "name", "") or ""
        if not name:
            raise CrispModelError("model='auto' needs a catalogue code with a name; give model=NAME or a path")
    return _runtime().resolve_model_file(name, "crisp", backend, what="CRISP model", error=CrispModelError)


def _check_code(desc: dict, code: Any, path: Path) -> None:
    N = int(code.N)
    A = [int(i) for i in code.info_positions]
    conv = [int(c) for c in code.conv]
    if getattr(code, "crc", None) is not None:
        raise CrispModelError("CRISP models decode codes without CRC")
    if desc.get("N") != N or desc.get("info_positions") != A or desc.get("conv") != conv:
        raise CrispModelError(
            f"CRISP model {path.name} was trained for {desc.get('name')!r} (N={desc.get('N')}, "
            f"k={desc.get('k')}, conv={desc.get('conv')}), not for "
            f"{getattr(code, 'name', '') or type(code).__name__} (N={N}, k={code.k}, conv={conv}); "
            "the information set or pre-transform differs")


#: Parameters of the registry's ``crisp`` and of :class:`CrispDecoder`.
CRISP_PARAMS = {
    "model": Param(str, "auto", "shipped model name (polar32_16, polar32_16_map: distilled from the exact "
                                "sequential-MAP teacher, ...; see shipped_models()) or a .onnx/.pt path; "
                                "auto: the model named after the code"),
    "backend": Param(str, "onnx", "onnx (onnxruntime, no torch) | torch", ("onnx", "torch"), in_label=False),
    "threads": Param(int, 1, "runtime intra-op threads (0: runtime default)", minimum=0, in_label=False),
    "beam": Param(int, 1, "paths kept per block: 1 = greedy (CRISP as published); > 1 = beam / list "
                          "search over the network's conditionals with frozen-bit penalties (GRU, onnx)",
                  minimum=1, label_default=False),
}


@uses_params(CRISP_PARAMS)
class CrispDecoder(BlockDecoder):
    """Batched CRISP decoding of a polar / PAC code with a trained model.

    A :class:`~qdecode.decoders.block.BlockDecoder`: ``decode_llr_batch``, ``message_bits``
    (``code.extract``); every output is a codeword (re-encoded from ``v``). :meth:`decode_v`
    also gives the decided ``v`` itself.

    Args:
        code: a :class:`~qdecode.codes.polar.PolarCode` / :class:`~qdecode.codes.pac.PacCode`
            without CRC (the one the model was trained for).
        model: ``"auto"``, a shipped name or a file path (see the module docstring).
        backend: ``"onnx"`` (onnxruntime, default) or ``"torch"``.
        threads: onnxruntime / torch intra-op threads (``0``: the runtime's default).
        chunk: blocks per inference batch.
        beam: paths kept per block (``1``: greedy, CRISP as published). ``beam > 1`` (GRU models,
            onnx backend) is list / beam search over the network's sequential conditionals: every
            path carries its own hidden state and cancellation, an information position extends
            each path by both bits at cost ``-log sigma(+-logit)``, a frozen position forces 0 and
            charges ``-log P(v_t = 0)`` from the network's logit there (the frozen-bit penalty of
            SCL), and the ``beam`` cheapest paths survive; the cheapest at the end is decoded.
            Cost ~``beam`` x greedy.

    Raises:
        CrispModelError: missing / corrupt file, wrong format or a model for another code.
        ImportError: the backend package is not installed.
    """

    def __init__(self, code: Any, model: str, *, backend: str, threads: int, chunk: int = 8192,
                 beam: int) -> None:
        for attr in ("N", "k", "info_positions", "frozen_mask", "conv", "pretransform"):
            if not hasattr(code, attr):
                raise InputError(f"CRISP needs a polar or PAC code, got {type(code).__name__}")
        self.code = code
        self.N = int(code.N)
        self.k = int(code.k)
        self.frozen = np.asarray(code.frozen_mask, dtype=bool)
        self.backend = backend
        self.threads = int(threads)
        if self.threads < 0:
            raise InputError(f"threads must be >= 0, got {threads}")
        self.chunk = max(1, int(chunk))
        self.beam = int(beam)
        if self.beam < 1:
            raise InputError(f"beam must be >= 1, got {beam}")
        self.path = resolve_model(model, code, backend)
        self.last_info: DecodeInfo | None = None
        if backend == "onnx":
            self._load_onnx()
        else:
            self._load_torch()

    # ------------------------------------------------------------------ loading
    def _load_onnx(self) -> None:
        rt = _runtime()
        sess, meta = rt.open_onnx_model(self.path, fmt=rt.CRISP_FORMAT, version=rt.CRISP_FORMAT_VERSION,
                                        what="CRISP model", error=CrispModelError, threads=self.threads,
                                        who="the crisp decoder")
        try:
            self.arch = json.loads(meta["arch"])
            desc = json.loads(meta["code"])
        except (KeyError, ValueError) as exc:
            raise CrispModelError(f"{self.path}: corrupt CRISP metadata ({exc})") from None
        _check_code(desc, self.code, self.path)
        self._sess = sess
        self.kind = self.arch.get("kind", "gru")
        self._prepare()
        if self.beam > 1 and self.kind != "gru":
            raise CrispModelError(f"beam > 1 needs a GRU model; {self.path.name} is {self.kind!r}")

    def _load_torch(self) -> None:
        try:
            import torch
        except ImportError as exc:  # pragma: no cover
            raise MissingPackageError(f"backend='torch' needs torch: pip install 'qdecode[neural]' ({exc})") from None
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            net, desc, _ = _runtime().load_crisp_torch(self.path)
        except ValueError as exc:
            raise CrispModelError(str(exc)) from None
        _check_code(desc, self.code, self.path)
        if self.beam > 1:
            raise CrispModelError("beam > 1 runs on the onnx backend")
        self._net = net
        self.arch = net.arch.to_dict()
        self.kind = self.arch["kind"]
        self._prepare()

    def _prepare(self) -> None:
        """Rows of ``T G_N`` for ``inputs='cancel'`` models (``None`` for raw-input models)."""
        self._rows = None
        self._sc_column = self.arch.get("inputs", "raw") == "cancel+sc"
        if self.arch.get("inputs", "raw") in ("cancel", "cancel+sc"):
            from qdecode.codes.polar import polar_transform

            self._rows = polar_transform(self.code.pretransform(np.eye(self.N, dtype=np.uint8)))
            self._flip = (1.0 - 2.0 * self._rows).astype(np.float32)  # sign flips of deciding v_t = 1

    # ------------------------------------------------------------------ decoding
    _length_name = "N"

    @property
    def n(self) -> int:  # type: ignore[override]
        return self.N

    def _decide(self, t: int, logit: np.ndarray, v: np.ndarray, prev: np.ndarray) -> None:
        bit = np.zeros(v.shape[0], dtype=np.uint8) if self.frozen[t] else (logit > 0).astype(np.uint8)
        v[:, t] = bit
        prev[:] = 0.0
        prev[np.arange(v.shape[0]), bit] = 1.0

    def _decode_chunk_onnx(self, llr: np.ndarray) -> np.ndarray:
        B, N = llr.shape
        v = np.zeros((B, N), dtype=np.uint8)
        prev = np.zeros((B, 2), dtype=np.float32)
        if self.kind == "gru":
            h = np.zeros((int(self.arch["depth"]), B, int(self.arch["width"])), dtype=np.float32)
            sign = np.ones((B, N), dtype=np.float32) if self._rows is not None else None
            for t in range(N):
                xin = llr * sign if sign is not None else llr
                if self._sc_column:
                    xin = np.concatenate([xin, _sc_llr_at(xin, t)[:, None]], axis=1)
                logit, h = self._sess.run(None, {"llr": xin, "prev": prev, "h": h})
                self._decide(t, logit.reshape(B), v, prev)
                if sign is not None and not self.frozen[t]:
                    sign[v[:, t] == 1] *= self._flip[t]
        else:
            seq = np.zeros((B, N, 2), dtype=np.float32)
            for t in range(N):
                (logits,) = self._sess.run(None, {"llr": llr, "prev": seq})
                self._decide(t, logits[:, t], v, prev)
                if t + 1 < N:
                    seq[:, t + 1] = prev
        return v

    def _decode_chunk_beam(self, llr: np.ndarray) -> np.ndarray:
        """Beam search over the GRU's conditionals (``self.beam`` paths per block; class docstring)."""
        B, N = llr.shape
        L = self.beam
        rows = np.arange(B)[:, None]
        v = np.zeros((B, L, N), dtype=np.uint8)
        h = np.zeros((int(self.arch["depth"]), B * L, int(self.arch["width"])), dtype=np.float32)
        sign = np.ones((B, L, N), dtype=np.float32)
        bits = np.zeros((B, L), dtype=np.int64)  # the previous decision of every path
        started = False
        pm = np.full((B, L), np.inf)
        pm[:, 0] = 0.0  # one live path at the start; the others join at the first information bit
        cancel = self._rows is not None
        for t in range(N):
            x = (llr[:, None, :] * sign if cancel else np.broadcast_to(llr[:, None, :], (B, L, N))).reshape(B * L, N)
            if self._sc_column:
                x = np.concatenate([x, _sc_llr_at(x, t)[:, None]], axis=1)
            prev = np.zeros((B * L, 2), dtype=np.float32)
            if started:
                prev[np.arange(B * L), bits.reshape(-1)] = 1.0
            logit, h = self._sess.run(None, {"llr": np.ascontiguousarray(x, dtype=np.float32), "prev": prev, "h": h})
            z = logit.reshape(B, L).astype(np.float64)
            cost0 = np.logaddexp(0.0, z)  # -log P(v_t = 0) = log(1 + e^z)
            started = True
            if self.frozen[t]:
                pm = pm + cost0
                bits[:] = 0
                continue
            cand = np.concatenate([pm + cost0, pm + np.logaddexp(0.0, -z)], axis=1)  # (B, 2L): bit 0 | bit 1
            sel = np.argsort(cand, axis=1, kind="stable")[:, :L]
            parent, bit = sel % L, sel // L
            pm = cand[rows, sel]
            v = v[rows, parent]
            v[:, :, t] = bit
            sign = sign[rows, parent]
            if cancel:
                one = bit == 1
                sign[one] *= self._flip[t]
            bits = bit
            h = h[:, (rows * L + parent).reshape(-1)]
        best = np.argmin(pm, axis=1)
        return v[np.arange(B), best]

    def _decode_chunk_torch(self, llr: np.ndarray) -> np.ndarray:
        return torch_decode_v(self._net, llr, self.frozen, self._rows)

    def decode_v(self, llr: Any) -> np.ndarray:
        """``(S, N)`` LLRs -> ``(S, N)`` uint8 decided ``v`` (data on ``A``, zeros on ``F``)."""
        return self._decode_v(self.check_llr(llr))

    def _decode_v(self, llr: np.ndarray) -> np.ndarray:
        x = llr.astype(np.float32)
        S = x.shape[0]
        out = np.zeros((S, self.N), dtype=np.uint8)
        run = self._decode_chunk_onnx if self.backend == "onnx" else self._decode_chunk_torch
        if self.beam > 1:
            run = self._decode_chunk_beam
        for a in range(0, S, self.chunk):
            out[a : a + self.chunk] = run(x[a : a + self.chunk])
        self.last_info = DecodeInfo()
        return out

    def _decode_llr_batch(self, llr: np.ndarray) -> np.ndarray:
        from qdecode.codes.polar import polar_transform

        return polar_transform(self.code.pretransform(self._decode_v(llr)))

    def _message_bits(self, codewords: np.ndarray) -> np.ndarray:
        return self.code.extract(codewords)


def torch_decode_v(net: Any, llr: np.ndarray, frozen: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Sequential CRISP decoding with the torch network: ``(S, N)`` LLRs -> ``(S, N)`` uint8 ``v``.

    The ``backend="torch"`` path of :class:`CrispDecoder` (greedy), also the validation decode of
    :mod:`qdecode.neural.crisp_train`. ``net``: a CRISP network in eval mode
    (:func:`qdecode.neural.runtime.load_crisp_torch`, or a trainer's); ``frozen``: ``(N,)`` bool
    (forced to 0); ``rows``: the rows of ``T G_N`` (:func:`qdecode.neural.crisp_model.code_rows`),
    needed for ``inputs='cancel'`` models.

    Raises:
        ValueError: an ``inputs='cancel'`` model without ``rows``.
        ImportError: torch is not installed.
    """
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingPackageError(f"backend='torch' needs torch: pip install 'qdecode[neural]' ({exc})") from None
    from qdecode.neural.crisp_model import with_sc_column

    with torch.no_grad():
        net.eval()
        x = torch.as_tensor(np.asarray(llr, dtype=np.float32))
        S, N = x.shape
        v = np.zeros((S, N), dtype=np.uint8)
        prev = torch.zeros(S, 2)
        if net.arch.kind == "gru":
            h = net.initial_hidden(S)
            cancel = net.arch.inputs in ("cancel", "cancel+sc")
            if cancel:
                if rows is None:
                    raise InputError("inputs='cancel' needs the code's rows (code_rows(code))")
                part = np.zeros((S, N), dtype=np.uint8)
            for t in range(N):
                xin = x * torch.as_tensor(1.0 - 2.0 * part, dtype=torch.float32) if cancel else x
                if net.arch.inputs == "cancel+sc":
                    xin = torch.as_tensor(with_sc_column(xin.numpy(), t))
                logit, h = net.step(xin, prev, h)
                bit = np.zeros(S, dtype=np.uint8) if frozen[t] else (logit.numpy() > 0).astype(np.uint8)
                v[:, t] = bit
                if cancel:
                    part ^= bit[:, None] & rows[t][None, :]
                prev = F.one_hot(torch.as_tensor(bit, dtype=torch.long), 2).float()
        else:
            seq = torch.zeros(S, N, 2)
            for t in range(N):
                logit = net(x, seq)[:, t]
                bit = np.zeros(S, dtype=np.uint8) if frozen[t] else (logit.numpy() > 0).astype(np.uint8)
                v[:, t] = bit
                if t + 1 < N:
                    seq[:, t + 1] = F.one_hot(torch.as_tensor(bit, dtype=torch.long), 2).float()
    return v


def _sc_llr_at(llr: np.ndarray, t: int) -> np.ndarray:
    """Min-sum SC LLR of ``u_t`` given ``u_{<t} = 0`` for every row of ``llr (B, N)`` (float32 ``(B,)``).

    Walks the polar tree from the root to leaf ``t``: a 0 bit of ``t`` (most significant first)
    takes ``f(a, b)``, a 1 bit takes ``g = a + b`` (the left half decided as all-zero).
    """
    L = llr
    n = L.shape[1]
    while n > 1:
        n //= 2
        a, b = L[:, :n], L[:, n : 2 * n]
        if t & n:
            L = a + b
        else:
            L = np.sign(a) * np.sign(b) * np.minimum(np.abs(a), np.abs(b))
    return L[:, 0].astype(np.float32)


ENTRIES = {
    "crisp": DecoderEntry("crisp", lambda code, **kw: CrispDecoder(code, **kw), CRISP_PARAMS, kind="classical",
                          doc="CRISP sequential neural (GRU) decoder of polar / PAC codes, onnxruntime inference"),
}
