"""sem-OSD: ordered statistics decoding with a byte-level language-model prior (registry ``sem-osd``).

A reconstruction of Yue, Vucetic and Li's "Semantic OSD" (arXiv:2605.02296; the paper
publishes no code, so the fused score and the search below are this project's design), for
systematic binary codes whose first ``k = 8 nb`` codeword bits are the message bytes (BCH(127,64):
8 bytes; RS(16,8) binary image: 8 GF(256) symbols = bytes), byte ``j`` in bits ``8j .. 8j+7``,
LSB first (:mod:`qdecode.kernels.sem_osd`). Per block:

1. prior: ``logpri = prior(context, llr of the message bits)`` (nb, 256), one evaluation per
   block (:mod:`qdecode.decoders.lm_prior`; default the order-4 Kneser-Ney n-gram with
   forward-backward marginals);
2. fused LLRs: exact byte-level Bayes fusion ``lam * logpri + channel evidence`` marginalised to
   bits (eqs. (1)-(2)); parity bits keep their channel LLRs;
3. OSD of order ``order`` on the MRB of the fused LLRs, every candidate scored by the MAP metric
   (3) ``sum_{c_i != hd_i} |L_ch,i| - lam * sum_j logpri[j, byte_j]`` (table look-ups);
4. ``union``: the channel-ordered OSD candidates of the same order, scored the same way;
5. ``omega`` > 0: substitutions of up to ``omega`` bytes (``top_k`` values each) in the
   ``top_l`` best candidates, re-encoded differentially;
6. output: the candidate with the smallest metric.

``lam = 0`` is plain OSD exactly: the fused LLRs are the channel LLRs, the metric is the
correlation discrepancy and the LM-driven parts (union, substitutions) are off, so the output
equals :class:`~qdecode.decoders.osd.OsdBlockDecoder` of the same order, bit for bit.

Context (``context`` parameter): rows of a batch are consecutive text blocks.

* ``decoded`` (default): pass 1 decodes every block with plain OSD of the same order; pass 2 runs
  sem-OSD on block ``s`` with the last ``context_len`` bytes of pass 1's decisions on blocks
  ``.. s - 1`` as left context (block 0 of a batch has none; a prior with a context longer than a
  block reads back over several blocks). Never the truth.
* ``genie``: the true previous bytes, given by the caller as ``context_bytes`` (S, c) uint8
  (the harness hands them over when :attr:`SemOsdDecoder.needs_true_context` is true); an upper
  bound, reported separately.
* ``none``: no left context.

``last_info.counts()`` gives ``reencodings`` (candidates visited, all families, pass 2),
``table_evals`` (of those, the ones that passed the lower bound and got the table metric),
``metric_evals`` (the ones whose MAP metric was computed exactly; the others could not change
the result, see :mod:`qdecode.kernels.sem_osd`) and ``lm_calls`` (n-gram distributions used by
the prior; the transformer prior counts one network evaluation per block).

Priors: ``prior="ngram"`` (default) or ``"transformer"`` (the byte Transformer of
:mod:`qdecode.decoders.lm_transformer`, shipped model ``lm_byte`` or ``model=PATH``, 32 bytes of
left context) or any object with the prior interface.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo
from qdecode.decoders.block import BlockDecoder, LinearCode
from qdecode.decoders.params import Param, uses_params
from qdecode.kernels import gf2
from qdecode.kernels import osd as kosd
from qdecode.kernels import sem_osd as ksem
from qdecode.kernels.threads import run_ranges

__all__ = ["SemOsdDecoder", "SemOsdInfo", "CONTEXT_MODES", "message_bytes"]

CONTEXT_MODES = ("decoded", "genie", "none")


@dataclasses.dataclass
class SemOsdInfo(DecodeInfo):
    """Per-block ``reencodings`` and ``lm_calls`` (in ``extra``); counts() sums them."""

    def counts(self) -> dict[str, int]:
        out = super().counts()
        for key, v in self.extra.items():
            out[key] = int(np.sum(v, dtype=np.int64))
        return out


def message_bytes(codewords: np.ndarray, nb: int) -> np.ndarray:
    """``(S, nb)`` uint8 message bytes of systematic codewords (first ``8 nb`` bits, LSB first)."""
    c = np.ascontiguousarray(np.asarray(codewords, dtype=np.uint8)[:, : 8 * nb])
    return np.packbits(c.reshape(c.shape[0], nb, 8), axis=2, bitorder="little")[:, :, 0]


def _systematic(G: np.ndarray) -> np.ndarray:
    """``G`` row-reduced to ``[I_k | P]`` on its first ``k`` columns (ValueError if impossible)."""
    Gm = gf2.gf2_row_basis(np.asarray(G, dtype=np.uint8))
    k = Gm.shape[0]
    A = Gm.copy()
    for c in range(k):
        rows = np.nonzero(A[c:, c])[0]
        if rows.size == 0:
            raise ValueError("sem-osd needs a systematic code whose message is the first k bits")
        r = c + rows[0]
        if r != c:
            A[[c, r]] = A[[r, c]]
        hit = np.nonzero(A[:, c])[0]
        for h in hit:
            if h != c:
                A[h] ^= A[c]
    return np.ascontiguousarray(A, dtype=np.uint8)


#: Parameters of the registry's ``sem-osd`` and of :class:`SemOsdDecoder`.
SEM_OSD_PARAMS = {
    "order": Param(int, 2, "bit-flip TEP order m", minimum=0, maximum=4),
    "lam": Param(float, 1.0, "LM weight lambda (0 = plain OSD)", minimum=0.0),
    "omega": Param(int, 1, "byte substitutions per candidate (0 = off)", minimum=0, maximum=2),
    "top_k": Param(int, 8, "values per byte in the substitution family", minimum=1, maximum=255),
    "top_l": Param(int, 4, "base candidates of the substitution family", minimum=1, maximum=64),
    "union": Param(bool, True, "also score the channel-ordered OSD candidates"),
    "context": Param(str, "decoded", "left context: decoded (pass-1 OSD of the previous block) | "
                                     "genie (true previous bytes) | none", ("decoded", "genie", "none")),
    "lm_order": Param(int, 4, "Kneser-Ney byte n-gram order", minimum=2, maximum=6),
    "beam": Param(int, 8, "forward-backward states per byte", minimum=1, maximum=256),
    "prior": Param(str, "ngram", "byte prior: ngram (Kneser-Ney, forward-backward) | transformer "
                                "(byte Transformer, onnxruntime)", ("ngram", "transformer"),
                   label_default=False),
    "model": Param(str, "auto", "transformer prior model: auto (shipped lm_byte), a shipped name or a "
                                ".onnx path", label_default=False),
}


def _sem_osd_record(self, args: dict) -> dict:
    out = {k: args[k] for k in SEM_OSD_PARAMS}
    if not isinstance(out["prior"], str):  # a prior object given from Python
        out["prior"] = type(out["prior"]).__name__
    return out


@uses_params(SEM_OSD_PARAMS, record=_sem_osd_record)
class SemOsdDecoder(BlockDecoder):
    """sem-OSD for a systematic binary code carrying bytes (module docstring).

    A :class:`~qdecode.decoders.block.BlockDecoder`; every output is a codeword. Rows of a batch
    are consecutive blocks (the ``decoded`` context reads the previous rows), so a block decoded
    alone or in another batch may decode differently.

    Args:
        G: ``(k, n)`` binary generator matrix; ``k`` a multiple of 8, message = first ``k`` bits.
        prior: a byte prior (:mod:`qdecode.decoders.lm_prior` interface), or ``"ngram"`` /
            ``None`` (the Kneser-Ney n-gram of order ``lm_order``, ``beam``; the default) or
            ``"transformer"`` (:class:`~qdecode.decoders.lm_transformer.TransformerPrior` of
            ``model``, onnxruntime).
        order: bit-flip TEP order ``m``.
        lam: LM weight lambda (>= 0; 0 is plain OSD).
        omega: byte substitutions per candidate (0, 1 or 2).
        top_k, top_l: values per byte, and base candidates, of the substitution family.
        union: also score the channel-ordered OSD candidates.
        context: ``decoded`` | ``genie`` | ``none``.
        code: the code object ``G`` came from (the registry passes the catalogue code); default a
            :class:`~qdecode.decoders.block.LinearCode` of the systematic generator.
    """

    def __init__(self, G: Any, prior: Any, *, order: int, lam: float, omega: int, top_k: int, top_l: int,
                 union: bool, context: str, lm_order: int, beam: int, model: str, code: Any = None) -> None:
        if not (isinstance(lam, (int, float)) and np.isfinite(lam) and lam >= 0):
            raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
        if context not in CONTEXT_MODES:
            raise ValueError(f"context must be one of {list(CONTEXT_MODES)}, got {context!r}")
        if int(order) < 0 or int(omega) not in (0, 1, 2) or not 1 <= int(top_k) <= 255 or int(top_l) < 1:
            raise ValueError(f"need order >= 0, omega in 0..2, 1 <= top_k <= 255, top_l >= 1; got "
                             f"order={order}, omega={omega}, top_k={top_k}, top_l={top_l}")
        Gs = _systematic(G)
        self.k, self.n = Gs.shape
        if self.k % 8:
            raise ValueError(f"sem-osd needs a whole number of message bytes, but k = {self.k}")
        self.G = Gs
        self.code = code if code is not None else LinearCode(Gs)
        self.nb = self.k // 8
        self.order = min(int(order), self.k)
        self.lam = float(lam)
        self.omega, self.top_k, self.top_l = int(omega), int(top_k), int(top_l)
        self.union = bool(union)
        self.context = context
        if prior is None or (isinstance(prior, str) and prior == "ngram"):
            from qdecode.decoders.lm_prior import NgramPrior

            prior = NgramPrior(order=lm_order, beam=beam)
        elif isinstance(prior, str) and prior == "transformer":
            from qdecode.decoders.lm_transformer import TransformerPrior

            prior = TransformerPrior(model)
        elif isinstance(prior, str):
            raise ValueError(f"prior must be 'ngram', 'transformer' or a prior object, got {prior!r}")
        self.prior = prior
        self.context_len = int(getattr(prior, "context_len", 3))
        self._g_packed = np.zeros((self.k, gf2.num_words(self.n)), dtype=np.uint64)
        gf2.pack_rows(self.G, self._g_packed)
        # byte_tab[j, v]: codeword of the message with byte j = v and zeros elsewhere
        Wn = self._g_packed.shape[1]
        tab = np.zeros((self.nb, 256, Wn), dtype=np.uint64)
        for j in range(self.nb):
            for l in range(8):
                sel = ((np.arange(256) >> l) & 1).astype(bool)
                tab[j, sel] ^= self._g_packed[8 * j + l]
        self._byte_tab = tab
        self.last_info: SemOsdInfo | None = None

    @property
    def needs_true_context(self) -> bool:
        """True for ``context=genie``: the caller must pass ``context_bytes`` (the truth)."""
        return self.context == "genie"

    def _contexts(self, x: np.ndarray, context_bytes: Any, threads: int | None) -> tuple[np.ndarray, np.ndarray]:
        S = x.shape[0]
        c = max(self.context_len, 1)
        ctx = np.zeros((S, c), dtype=np.uint8)
        lens = np.zeros(S, dtype=np.int64)
        if self.context == "genie":
            if context_bytes is None:
                raise ValueError("context=genie needs context_bytes: the true bytes before each block")
            cb = np.asarray(context_bytes)
            if cb.ndim != 2 or cb.shape[0] != S or (cb.size and (cb.min() < 0 or cb.max() > 255)):
                raise ValueError(f"context_bytes must be (blocks={S}, c) bytes, got shape {cb.shape}")
            cb = cb.astype(np.uint8)[:, -c:] if cb.shape[1] else cb.astype(np.uint8)
            ctx[:, : cb.shape[1]] = cb
            lens[:] = cb.shape[1]
        elif context_bytes is not None:
            raise ValueError(f"context_bytes is only for context=genie (this decoder uses context={self.context})")
        elif self.context == "decoded" and S > 1:
            first = np.zeros(x.shape, dtype=np.uint8)
            run_ranges(kosd.osd_classical_range, (x, self._g_packed, self.order, first), S, threads)
            # the last c bytes of the pass-1 decisions on the blocks before s (as many as the batch has)
            flat = message_bytes(first, self.nb).reshape(-1)
            start = np.arange(1, S) * self.nb  # block s begins at byte s * nb
            ln = np.minimum(start, c)
            idx = start[:, None] - ln[:, None] + np.arange(c)[None, :]
            ctx[1:] = np.where(np.arange(c)[None, :] < ln[:, None], flat[np.clip(idx, 0, flat.size - 1)], 0)
            lens[1:] = ln
        return ctx, lens

    def decode_llr_batch(self, llr: Any, *, context_bytes: Any = None, threads: int | None = None) -> np.ndarray:
        """Channel LLRs ``(S, n)`` of consecutive blocks -> codewords ``(S, n)`` uint8.

        Raises:
            ValueError: wrong shape, non-finite LLRs (:class:`~qdecode.decoders.base.DecoderInputError`),
                or ``context_bytes`` missing (genie) or given with another context mode.
        """
        return super().decode_llr_batch(llr, context_bytes=context_bytes, threads=threads)

    def _decode_llr_batch(self, x: np.ndarray, *, context_bytes: Any = None,
                          threads: int | None = None) -> np.ndarray:
        S = x.shape[0]
        out = np.zeros(x.shape, dtype=np.uint8)
        counts = np.zeros((S, 3), dtype=np.int64)
        if S == 0:
            self.last_info = SemOsdInfo(extra={"reencodings": counts[:, 0], "table_evals": counts[:, 1],
                                               "metric_evals": counts[:, 2]})
            return out
        info_llr = np.ascontiguousarray(x[:, : self.k])
        if self.lam == 0.0:
            logpri = np.zeros((S, self.nb, 256))
            calls = np.zeros(S, dtype=np.int64)
        else:
            ctx, lens = self._contexts(x, context_bytes, threads)
            logpri = self._prior(ctx, lens, info_llr)
            calls = np.asarray(getattr(self.prior, "last_calls", np.zeros(S)), dtype=np.int64)
        code = ksem.SemOsdCode(self._g_packed, self._byte_tab, self.nb)
        params = ksem.SemOsdParams(self.order, self.union, self.omega, self.top_k, self.top_l)
        run_ranges(ksem.sem_osd_range, (x, logpri, self.lam, code, params, out, counts), S, threads)
        self.last_info = SemOsdInfo(extra={"reencodings": counts[:, 0], "table_evals": counts[:, 1],
                                           "metric_evals": counts[:, 2], "lm_calls": calls})
        return out

    def _prior(self, ctx: np.ndarray, lens: np.ndarray, info_llr: np.ndarray) -> np.ndarray:
        S = ctx.shape[0]
        if hasattr(self.prior, "batch"):
            lp = np.asarray(self.prior.batch(ctx, lens, info_llr), dtype=np.float64)
        else:
            lp = np.stack([np.asarray(self.prior(ctx[s, : lens[s]].tobytes(), info_llr[s]), dtype=np.float64)
                           for s in range(S)])
        if lp.shape != (S, self.nb, 256) or not np.all(np.isfinite(lp)):
            raise ValueError(f"the prior must return finite log-probabilities of shape ({S}, {self.nb}, 256), "
                             f"got {lp.shape}")
        return np.ascontiguousarray(lp)

    def decode_llr(self, llr: Any, *, context_bytes: Any = None) -> np.ndarray:
        """One block ``(n,)`` -> codeword ``(n,)`` (``context_bytes``: the bytes before it, genie mode)."""
        cb = None if context_bytes is None else np.frombuffer(bytes(context_bytes), dtype=np.uint8).reshape(1, -1)
        return super().decode_llr(llr, context_bytes=cb)

    def _message_bits(self, codewords: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(codewords[:, : self.k])  # systematic: the message is the first k bits
