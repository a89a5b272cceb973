"""CRISP sequential neural decoder for polar / PAC codes: the networks (torch).

After Hebbar et al., "CRISP: Curriculum based Sequential neural decoders for Polar code
family" (ICML 2023, arXiv:2210.00313); our own implementation. The decoder walks the ``N``
positions of the rate-profiled vector ``v`` (``v_A`` = data bits, ``v_F`` = 0; for plain
polar codes ``v = u``, for PAC codes ``u = v T`` is the convolution of ``v``) in natural
order. At step ``t`` the network sees

* the whole received block as channel LLRs ``llr`` (``(B, N)``, positive = bit 0; scaled by
  ``input_scale`` and clipped at ``+-llr_clip`` inside the network), and
* the one-hot of the previous decided bit ``v_{t-1}`` (``(B, 2)``; all zeros at ``t = 0``),

and emits one logit per position, ``> 0`` meaning ``v_t = 1``. Training uses teacher forcing
(the true previous bit); decoding feeds back its own decision (frozen positions are forced
to 0 by the decoder, :mod:`qdecode.decoders.crisp`).

Channel input (:class:`CrispArch.inputs`):

* ``"raw"`` (the paper's): every step sees the same received LLRs; the network must carry
  the effect of its past decisions in its state;
* ``"cancel"`` (our option, GRU only): step ``t`` sees the LLRs with the contribution of the
  decided bits removed, ``llr * (1 - 2 c_t)`` where ``c_t = sum_{i<t} v_i g_i`` is the partial
  re-encoding (``g_i`` = row ``i`` of ``T G_N``), i.e. the block as if ``v_{<t}`` were 0 -- the
  same successive cancellation SC does. ``forward`` then takes per-step LLRs ``(B, N, N)``;
  the step cell's ``llr`` input is the cancelled vector, computed by the caller;
* ``"cancel+sc"`` (our option, GRU only): as ``"cancel"``, plus one more input column, the
  min-sum SC LLR of the current bit given the cancelled block (``sc_llr_zero_prefix``), which
  also enters the output as a skip connection, ``logit = head(h) - sc_gain * llr_sc``
  (``sc_gain`` learnt, initialised to 1): the untrained network decides like SC and training
  learns the correction. The ``llr`` tensors then have ``N + 1`` columns.

Two architectures, chosen by :class:`CrispArch.kind`:

* ``"gru"``: a unidirectional GRU of ``depth`` layers and ``width`` units and a linear head.
  :meth:`CrispGRU.step` is the single-step cell (``(llr, prev, h) -> (logit, h')``) that is
  exported to ONNX, so inference loops over the ``N`` positions carrying the hidden state.
* ``"conv"``: a causal stack of dilated ``Conv1d`` layers (kernel 2, dilations 1, 2, 4, ...,
  GELU, residual) over the same per-step inputs. Its ONNX export is the whole-sequence
  network (``(llr, prev (B, N, 2)) -> logits (B, N)``); because it is causal, the decoder
  runs it once per position on the prefix decided so far.

Also here (numpy, shared by the trainer, the sequential-MAP teacher and the torch inference path
of :mod:`qdecode.neural.runtime`): :func:`encode_v` (``v -> (v T) G_N``), :func:`code_rows`, and
the SC input column of ``inputs='cancel+sc'`` (:func:`sc_llr_zero_prefix`, :func:`with_sc_column`).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from qdecode.errors import InputError

KINDS = ("gru", "conv")
INPUTS = ("raw", "cancel", "cancel+sc")


@dataclasses.dataclass
class CrispArch:
    """Architecture of a CRISP network (stored in checkpoints, cards and ONNX metadata)."""

    n: int = 32
    kind: str = "gru"
    width: int = 128
    depth: int = 2
    input_scale: float = 0.125
    llr_clip: float = 40.0
    kernel: int = 2  # conv only
    inputs: str = "raw"  # "raw" (the paper's) | "cancel" (GRU only; see the module docstring)

    def validate(self) -> "CrispArch":
        if self.kind not in KINDS:
            raise InputError(f"CRISP kind must be one of {KINDS}, got {self.kind!r}")
        if self.inputs not in INPUTS:
            raise InputError(f"CRISP inputs must be one of {INPUTS}, got {self.inputs!r}")
        if self.inputs != "raw" and self.kind != "gru":
            raise InputError(f"inputs={self.inputs!r} is implemented for the GRU only")
        if self.n < 2 or self.width < 1 or self.depth < 1 or self.kernel < 1:
            raise InputError(f"bad CRISP architecture {self}")
        if not (self.input_scale > 0 and self.llr_clip > 0):
            raise InputError("input_scale and llr_clip must be positive")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CrispArch":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise InputError(f"unknown CRISP architecture fields {sorted(unknown)}")
        return cls(**d).validate()


# ----------------------------------------------------------------------------- input encoding (numpy)
def encode_v(code, v: np.ndarray) -> np.ndarray:
    """``(S, N)`` rate-profiled ``v`` -> codewords ``(v T) G_N``."""
    from qdecode.codes.polar import polar_transform

    return polar_transform(code.pretransform(v))


def code_rows(code) -> np.ndarray:
    """``(N, N)`` uint8: row ``i`` is the codeword of the unit vector ``v = e_i`` (rows of ``T G_N``)."""
    return encode_v(code, np.eye(code.N, dtype=np.uint8))


def sc_llr_zero_prefix(llr: np.ndarray) -> np.ndarray:
    """Min-sum SC LLRs of every ``u_t`` given ``u_{<t} = 0``: ``(..., N)`` -> ``(..., N)``.

    Column ``t`` of the result is SC's LLR for the first undecided bit once the decided bits
    are cancelled (``inputs='cancel+sc'`` uses column ``t`` of the step-``t`` cancelled block).
    """
    L = np.asarray(llr, dtype=np.float32)
    n = L.shape[-1]
    if n == 1:
        return L.copy()
    a, b = L[..., : n // 2], L[..., n // 2:]
    f = np.sign(a) * np.sign(b) * np.minimum(np.abs(a), np.abs(b))
    return np.concatenate([sc_llr_zero_prefix(f), sc_llr_zero_prefix(a + b)], axis=-1)


def with_sc_column(cancelled: np.ndarray, t: int | None = None) -> np.ndarray:
    """Append the SC LLR column: per-step ``(B, N, N)`` -> ``(B, N, N + 1)`` (step ``t`` takes column ``t``),
    or one step ``(B, N)`` at position ``t`` -> ``(B, N + 1)``."""
    sc = sc_llr_zero_prefix(cancelled)
    if t is None:
        N = cancelled.shape[-1]
        col = sc[:, np.arange(N), np.arange(N)]
        return np.concatenate([cancelled, col[..., None]], axis=-1).astype(np.float32)
    return np.concatenate([cancelled, sc[:, t : t + 1]], axis=-1).astype(np.float32)



# ----------------------------------------------------------------------------- networks
def shifted_onehot(bits: torch.Tensor) -> torch.Tensor:
    """Teacher-forcing inputs: ``(B, N)`` 0/1 bits -> ``(B, N, 2)`` one-hot of ``bits[:, t-1]``
    (zeros at ``t = 0``)."""
    oh = F.one_hot(bits.long(), 2).to(torch.float32)
    return torch.cat([torch.zeros_like(oh[:, :1]), oh[:, :-1]], dim=1)


class _Base(nn.Module):
    def __init__(self, arch: CrispArch) -> None:
        super().__init__()
        self.arch = arch.validate()
        self.register_buffer("scale", torch.tensor(float(arch.input_scale)))
        self.register_buffer("clip", torch.tensor(float(arch.llr_clip)))

    def _features(self, llr: torch.Tensor) -> torch.Tensor:
        return torch.clamp(llr, -self.clip, self.clip) * self.scale


class CrispGRU(_Base):
    """GRU CRISP network: ``forward(llr (B, N), prev (B, N, 2)) -> logits (B, N)``."""

    def __init__(self, arch: CrispArch) -> None:
        super().__init__(arch)
        if arch.kind != "gru":
            raise InputError("CrispGRU needs kind='gru'")
        self.extra = 1 if arch.inputs == "cancel+sc" else 0
        self.gru = nn.GRU(arch.n + self.extra + 2, arch.width, num_layers=arch.depth, batch_first=True)
        self.head = nn.Linear(arch.width, 1)
        if self.extra:
            self.sc_gain = nn.Parameter(torch.tensor(1.0))
            with torch.no_grad():  # start from SC's decisions: the learnt part begins at ~0
                self.head.weight.mul_(0.01)
                self.head.bias.zero_()

    def _skip(self, llr: torch.Tensor) -> torch.Tensor | float:
        if not self.extra:
            return 0.0
        return -self.sc_gain * torch.clamp(llr[..., -1], -self.clip, self.clip)

    def forward(self, llr: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        """``llr``: ``(B, N)`` (the same at every step) or ``(B, T, N)`` (per step, ``inputs='cancel'``)."""
        y = self._features(llr)
        T = prev.shape[1]
        if y.dim() == 2:
            y = y.unsqueeze(1).expand(-1, T, -1)
        x = torch.cat([y, prev], dim=2)
        out, _ = self.gru(x)
        skip = self._skip(llr)
        if llr.dim() == 2 and self.extra:
            skip = skip.unsqueeze(1)
        return self.head(out).squeeze(-1) + skip

    def initial_hidden(self, batch: int) -> torch.Tensor:
        return torch.zeros(self.arch.depth, batch, self.arch.width)

    def step(self, llr: torch.Tensor, prev: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One position: ``llr (B, N)``, ``prev (B, 2)``, ``h (depth, B, width)`` -> ``(logit (B,), h')``."""
        y = self._features(llr)
        x = torch.cat([y, prev], dim=1).unsqueeze(1)
        out, h2 = self.gru(x, h)
        return self.head(out[:, 0]).squeeze(-1) + self._skip(llr), h2


class _GruStep(nn.Module):
    """Wrapper whose ``forward`` is :meth:`CrispGRU.step` (what is exported to ONNX)."""

    def __init__(self, net: CrispGRU) -> None:
        super().__init__()
        self.net = net

    def forward(self, llr, prev, h):
        return self.net.step(llr, prev, h)


class CrispConv(_Base):
    """Causal dilated-convolution CRISP network: ``forward(llr (B, N), prev (B, N, 2)) -> logits (B, N)``."""

    def __init__(self, arch: CrispArch) -> None:
        super().__init__(arch)
        if arch.kind != "conv":
            raise InputError("CrispConv needs kind='conv'")
        w = arch.width
        self.inp = nn.Conv1d(arch.n + 2, w, 1)
        self.dilations = [2 ** i for i in range(arch.depth)]
        self.convs = nn.ModuleList(nn.Conv1d(w, w, arch.kernel, dilation=d) for d in self.dilations)
        self.head = nn.Conv1d(w, 1, 1)

    def forward(self, llr: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        y = self._features(llr)
        T = prev.shape[1]
        x = torch.cat([y.unsqueeze(1).expand(-1, T, -1), prev], dim=2).transpose(1, 2)  # (B, C, T)
        h = self.inp(x)
        for d, conv in zip(self.dilations, self.convs):
            h = h + F.gelu(conv(F.pad(h, ((self.arch.kernel - 1) * d, 0))))
        return self.head(h).squeeze(1)


def build_model(arch: CrispArch) -> nn.Module:
    """The network for ``arch`` (``CrispGRU`` or ``CrispConv``)."""
    arch.validate()
    return CrispGRU(arch) if arch.kind == "gru" else CrispConv(arch)


def export_onnx(net: nn.Module, path: str, metadata: dict[str, str], opset: int = 17) -> None:
    """Write the ONNX inference graph with ``metadata`` in ``metadata_props``.

    GRU: the single-step cell, inputs ``llr (B, N)``, ``prev (B, 2)``, ``h (depth, B, width)``,
    outputs ``logit (B,)``, ``h_out``. Conv: the sequence network, inputs ``llr (B, N)``,
    ``prev (B, N, 2)``, output ``logits (B, N)``.
    """
    import onnx

    net = net.eval()
    arch = net.arch
    B = 3
    llr = torch.randn(B, arch.n + (1 if arch.inputs == "cancel+sc" else 0)) * 4
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # legacy-exporter / GRU batch-size notices (h is an explicit input)
        if arch.kind == "gru":
            args = (llr, torch.zeros(B, 2), net.initial_hidden(B))
            torch.onnx.export(_GruStep(net), args, path, input_names=["llr", "prev", "h"],
                              output_names=["logit", "h_out"], opset_version=opset, dynamo=False,
                              dynamic_axes={"llr": {0: "batch"}, "prev": {0: "batch"}, "h": {1: "batch"},
                                            "logit": {0: "batch"}, "h_out": {1: "batch"}})
        else:
            args = (llr, torch.zeros(B, arch.n, 2))
            torch.onnx.export(net, args, path, input_names=["llr", "prev"], output_names=["logits"],
                              opset_version=opset, dynamo=False,
                              dynamic_axes={"llr": {0: "batch"}, "prev": {0: "batch"}, "logits": {0: "batch"}})
    model = onnx.load(path)
    for k, v in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = str(k), str(v)
    onnx.save(model, path)
