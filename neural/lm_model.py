"""Byte-level denoising Transformer prior for sem-OSD: the network (torch).

The neural byte prior of sem-OSD (arXiv:2605.02296; the fused score is reconstructed in
:mod:`qdecode.decoders.sem_osd`). One forward pass per text
block of ``nb`` bytes (``nb = 8``: BCH(127,64), RS(16,8) binary image) gives, for every block
byte ``j``, a 256-way posterior ``q_j(b | left context, channel LLRs of all nb bytes)``.

Input tokens (``context + nb`` of them, one encoder, bidirectional attention):

* ``ctx (B, C)`` int64: the last ``C`` bytes before the block, valid bytes first
  (``ctx[s, :ctx_len[s]]``, most recent last, as :mod:`qdecode.decoders.lm_prior` passes
  them); a valid byte is embedded as its byte token plus a learnt position embedding *counted
  back from the block* (the most recent byte always has the same position), padding is masked
  out of the attention. Context tokens attend causally (to themselves and older bytes), so
  during training each also predicts the next context byte through the same head (an auxiliary
  language-model loss, :meth:`ByteLmPrior.context_logits`: 31 more supervised bytes per sample);
  block tokens attend to everything;
* ``llr (B, 8 nb)`` float32: the block's message-bit channel LLRs (positive = bit 0; byte ``j``
  in bits ``8j .. 8j+7`` LSB first, :mod:`qdecode.kernels.sem_osd`); block position ``j`` is
  embedded from its 8 LLRs (``clip(llr * input_scale, +-llr_clip)`` and the soft bits
  ``tanh(llr / 2)``, one linear layer), plus the token embedding of its hard-decision byte and
  a position embedding.

Output head (posterior-ready by construction): the encoder emits per block position a logit
vector ``z_j (256,)``; with ``le_j(b) = sum_l (1 - 2 bit_l(b)) llr[8j + l] / 2`` the byte's own
channel log-evidence (eq. (1), :func:`qdecode.kernels.sem_osd.byte_evidence`; here a matmul
with the fixed ``(8, 256)`` sign table :func:`sign_table`),

    prior_j = log_softmax(z_j / T),   posterior_j = log_softmax(prior_j + le_j) = log q_j,

so "prior + own evidence, renormalised" reproduces the model's posterior exactly, which is the
contract of a sem-OSD prior row. Training minimises the cross-entropy of ``posterior`` on the
true bytes; the temperature ``T`` (buffer ``inv_temp = 1 / T``) is fitted on held-out text
afterwards. The exact evidence enters analytically, so the encoder only has to model what the
channel cannot tell (the text), and large LLRs are never clipped away.

:func:`export_onnx` writes the graph ``(ctx int64 (B, C), ctx_len int64 (B,), llr float32
(B, 8 nb)) -> (prior (B, nb, 256), posterior (B, nb, 256))`` with dynamic batch, temperature
included; inference without torch: :mod:`qdecode.decoders.lm_transformer`.
"""

from __future__ import annotations

import dataclasses
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

from qdecode.errors import InputError


@dataclasses.dataclass
class LmArch:
    """Architecture of the byte Transformer prior (stored in checkpoints, cards and ONNX metadata)."""

    context: int = 32
    nb: int = 8
    d_model: int = 128
    layers: int = 4
    heads: int = 4
    ff: int = 512
    dropout: float = 0.1
    input_scale: float = 0.25
    llr_clip: float = 8.0

    def validate(self) -> "LmArch":
        if self.context < 1 or self.nb < 1 or self.layers < 1 or self.heads < 1 or self.ff < 1:
            raise InputError(f"bad LM architecture {self}")
        if self.d_model % self.heads:
            raise InputError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        if not (0.0 <= self.dropout < 1.0 and self.input_scale > 0 and self.llr_clip > 0):
            raise InputError("need 0 <= dropout < 1 and positive input_scale, llr_clip")
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LmArch":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names}).validate()


def sign_table() -> torch.Tensor:
    """``(8, 256)`` float32: ``1 - 2 bit_l(b)``, so ``le = 0.5 * llr_byte @ sign_table()``."""
    b = torch.arange(256)
    bits = torch.stack([(b >> l) & 1 for l in range(8)])
    return (1.0 - 2.0 * bits).float()


class _Layer(nn.Module):
    """Pre-norm Transformer encoder layer (explicit ops: exports to plain ONNX)."""

    def __init__(self, d: int, heads: int, ff: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).reshape(B, T, 3, h, D // h).permute(2, 0, 3, 1, 4)
        att = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / (D // h) ** 0.5) + bias  # (B, h, T, T)
        att = self.drop(torch.softmax(att, dim=-1))
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, D)
        x = x + self.drop(self.proj(y))
        return x + self.drop(self.ff2(F.gelu(self.ff1(self.ln2(x)))))


class ByteLmPrior(nn.Module):
    """``forward(ctx, ctx_len, llr) -> (prior, posterior)``, both ``(B, nb, 256)`` log-probabilities."""

    def __init__(self, arch: LmArch) -> None:
        super().__init__()
        self.arch = arch.validate()
        d = arch.d_model
        self.tok = nn.Embedding(256, d)
        self.ctx_pos = nn.Parameter(torch.zeros(arch.context, d))
        self.blk_pos = nn.Parameter(torch.zeros(arch.nb, d))
        self.llr_in = nn.Linear(16, d)
        self.layers = nn.ModuleList(_Layer(d, arch.heads, arch.ff, arch.dropout) for _ in range(arch.layers))
        self.ln_out = nn.LayerNorm(d)
        self.head = nn.Linear(d, 256)
        self.register_buffer("signs", sign_table(), persistent=False)
        self.register_buffer("pow2", 2 ** torch.arange(8), persistent=False)
        self.register_buffer("inv_temp", torch.ones(()))
        nn.init.normal_(self.ctx_pos, std=0.02)
        nn.init.normal_(self.blk_pos, std=0.02)
        nn.init.normal_(self.tok.weight, std=0.02)

    def logits(self, ctx: torch.Tensor, ctx_len: torch.Tensor, llr: torch.Tensor) -> torch.Tensor:
        """Untempered head logits ``z (B, nb, 256)``."""
        return self.head(self.ln_out(self.encode(ctx, ctx_len, llr)[:, ctx.shape[1]:]))

    def context_logits(
        self, ctx: torch.Tensor, ctx_len: torch.Tensor, llr: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(z_all (B, nb, 256), z_ctx (B, C - 1, 256))``: the block logits and the causal next-byte
        logits of the context tokens (token ``i`` predicts context byte ``i + 1``; training only)."""
        x = self.head(self.ln_out(self.encode(ctx, ctx_len, llr)))
        C = ctx.shape[1]
        return x[:, C:], x[:, : C - 1]

    def encode(self, ctx: torch.Tensor, ctx_len: torch.Tensor, llr: torch.Tensor) -> torch.Tensor:
        """Final hidden states ``(B, C + nb, d)`` (context tokens causal, block tokens see everything)."""
        a = self.arch
        B, C = ctx.shape
        nb = a.nb
        x8 = llr.reshape(B, nb, 8)
        feats = torch.cat([torch.clamp(x8 * a.input_scale, -a.llr_clip, a.llr_clip), torch.tanh(0.5 * x8)], dim=2)
        hard = ((x8 < 0).long() * self.pow2).sum(dim=2)  # (B, nb) hard-decision bytes
        blk = self.llr_in(feats) + self.tok(hard) + self.blk_pos
        # context: valid bytes first; the byte i steps back from the block gets ctx_pos[C - i]
        idx = torch.arange(C, device=ctx.device).unsqueeze(0)
        valid = idx < ctx_len.unsqueeze(1)  # (B, C)
        back = (ctx_len.unsqueeze(1) - 1 - idx).clamp(0, C - 1)  # 0 = most recent
        pos = self.ctx_pos[a.context - 1 - back]  # needs C <= context
        cx = self.tok(ctx.clamp(0, 255)) + pos
        x = torch.cat([cx, blk], dim=1)
        keep = torch.cat([valid, torch.ones(B, nb, dtype=torch.bool, device=ctx.device)], dim=1)  # keys
        t = torch.arange(C + nb, device=ctx.device)
        order = (t.unsqueeze(1) >= C) | (t.unsqueeze(0) <= t.unsqueeze(1))  # (query, key): causal context
        allowed = keep[:, None, None, :] & order[None, None]
        bias = torch.zeros(B, 1, C + nb, C + nb, device=ctx.device).masked_fill(~allowed, -1e9)
        for layer in self.layers:
            x = layer(x, bias)
        return x

    def evidence(self, llr: torch.Tensor) -> torch.Tensor:
        """Own channel log-evidence ``le (B, nb, 256)`` (eq. (1))."""
        B = llr.shape[0]
        return 0.5 * torch.matmul(llr.reshape(B, self.arch.nb, 8), self.signs)

    def forward(self, ctx: torch.Tensor, ctx_len: torch.Tensor, llr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        prior = torch.log_softmax(self.logits(ctx, ctx_len, llr) * self.inv_temp, dim=-1)
        post = torch.log_softmax(prior + self.evidence(llr), dim=-1)
        return prior, post


def build_model(arch: LmArch) -> ByteLmPrior:
    return ByteLmPrior(arch)


def count_parameters(net: nn.Module) -> int:
    return int(sum(p.numel() for p in net.parameters()))


def export_onnx(net: ByteLmPrior, path: str, metadata: dict[str, str], opset: int = 17) -> None:
    """ONNX graph ``(ctx, ctx_len, llr) -> (prior, posterior)`` (dynamic batch) with ``metadata``."""
    import onnx

    net = net.eval()
    a = net.arch
    B = 3
    ctx = torch.randint(0, 256, (B, a.context))
    ln = torch.tensor([a.context, 0, 5])
    llr = torch.randn(B, 8 * a.nb) * 4
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (ctx, ln, llr), path, input_names=["ctx", "ctx_len", "llr"],
                          output_names=["prior", "posterior"], opset_version=opset, dynamo=False,
                          dynamic_axes={"ctx": {0: "batch"}, "ctx_len": {0: "batch"}, "llr": {0: "batch"},
                                        "prior": {0: "batch"}, "posterior": {0: "batch"}})
    model = onnx.load(path)
    for k, v in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = str(k), str(v)
    onnx.save(model, path)
