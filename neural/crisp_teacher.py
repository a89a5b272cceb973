"""Exact sequential-MAP teacher for CRISP distillation on short polar / PAC codes.

For a code with ``k`` information bits (``2^k`` codewords; practical up to ``k ~ 20``) the
exact posterior of every information bit *given the true prefix*,

    ``P(v_t = 1 | y, v_{<t})``,   ``t`` in the information set, in decoding (natural) order,

is what a sequential decoder (SC, CRISP) should output at step ``t`` under teacher forcing.
:class:`MapTeacher` computes it exactly:

* messages ``m = 0 .. 2^k - 1`` are laid out so that the ``j``-th decoded information bit
  is bit ``j`` of ``m`` (the first decoded bit is the least significant), so the messages
  sharing a prefix of ``j`` decoded bits are the residue class ``m = p mod 2^j``, and summing
  out the last undecided bit (the most significant) adds the two contiguous halves of the
  weight vector;
* ``log P(y | x_m) = 1/2 sum_i llr_i (1 - 2 x_{m,i}) + const`` for all ``m`` at once, one
  ``(B, N) x (N, 2^k)`` matrix product (LLR positive = bit 0; computed in log2 units so the
  weights are one in-place ``exp2``);
* the weights ``2^(. - max)`` (float32) are summed level by level (a binary tree over ``m``,
  no cumulative-sum cancellation, so unlikely prefixes keep their relative precision): with
  ``S`` reduced to the low ``j + 1`` bits, bit ``j``'s conditional log-odds given the true
  prefix ``p`` is ``log S[p + 2^j] - log S[p]``. Weights below ``2^-126`` of the block's
  best codeword underflow; log-odds are therefore clipped at about +-87.

Cost: ~2 ``2^k`` multiply-adds + ``2^k`` ``exp2`` per block and decoded bit set, about
0.3-0.5 ms per block for ``k = 16`` on one CPU thread.

The same walk with the *decided* prefix instead of the true one is greedy sequential MAP
decoding (:meth:`MapTeacher.decode`), which is close to ML (block-MAP) decoding.

For the l2r curriculum the teacher is built on the revealed positions only (the unrevealed
information positions are frozen to 0 in the data, i.e. a sub-code).
"""

from __future__ import annotations

import numpy as np
import torch

from qdecode.errors import InputError
from qdecode.neural.crisp_model import encode_v

__all__ = ["MapTeacher"]


class MapTeacher:
    """Exact conditionals ``P(v_t = 1 | y, v_{<t})`` on the information positions of a (sub-)code.

    Args:
        code: a polar / PAC code (``N``, ``pretransform``; :func:`qdecode.neural.crisp_model.encode_v`).
        positions: the free positions of ``v`` (default: the code's information set); all
            other positions of ``v`` are 0.
        chunk: blocks per internal batch (memory ~ ``chunk * 2^k * 4`` bytes, times 2).

    Raises:
        ValueError: more than 22 free positions (the codebook would not fit).
    """

    def __init__(self, code, positions=None, chunk: int = 128) -> None:
        pos = np.sort(np.asarray(code.info_positions if positions is None else positions, dtype=np.int64))
        k = int(pos.size)
        if k > 22:
            raise InputError(f"MapTeacher enumerates 2^k codewords; k = {k} is too large")
        self.N, self.k, self.positions, self.chunk = int(code.N), k, pos, max(1, int(chunk))
        m = np.arange(2**k, dtype=np.int64)
        bits = ((m[:, None] >> np.arange(k)[None, :]) & 1).astype(np.uint8)
        v = np.zeros((2**k, self.N), dtype=np.uint8)
        v[:, pos] = bits
        x = encode_v(code, v)
        self.codewords = x  # (2^k, N) uint8, row m = codeword of message m (LSB = first decoded bit)
        # log2-likelihood signs: lw2 = llr @ signs = log2 P(y | x_m) + const
        self._signs_t = torch.as_tensor(
            (0.5 / np.log(2.0) * (1.0 - 2.0 * x.astype(np.float64))).T.astype(np.float32).copy())

    def message_index(self, v: np.ndarray) -> np.ndarray:
        """``(B, N)`` ``v`` -> ``(B,)`` int64 message integers (first decoded bit = LSB)."""
        b = np.asarray(v)[:, self.positions].astype(np.int64)
        return (b << np.arange(self.k)[None, :]).sum(axis=1)

    def _unpack(self, msg: np.ndarray) -> np.ndarray:
        v = np.zeros((msg.shape[0], self.N), dtype=np.uint8)
        v[:, self.positions] = ((msg[:, None] >> np.arange(self.k)[None, :]) & 1).astype(np.uint8)
        return v

    def _weights(self, llr: torch.Tensor) -> torch.Tensor:
        lw = llr @ self._signs_t  # (B, 2^k) log2-likelihoods up to a per-block constant
        return lw.sub_(lw.max(dim=1, keepdim=True).values).exp2_()

    @torch.no_grad()
    def logits(self, llr: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Teacher-forced conditional log-odds ``log P(v_t=1 | y, v_<t) / P(v_t=0 | ...)``.

        Args:
            llr: ``(B, N)`` channel LLRs (positive = bit 0).
            v: ``(B, N)`` true ``v`` (only its values on ``positions`` are used).

        Returns:
            ``(B, k)`` float32, column ``j`` for ``positions[j]`` (clipped at about +-100).
        """
        x = torch.as_tensor(np.asarray(llr, dtype=np.float32))
        mt = torch.as_tensor(self.message_index(v))
        B, k = x.shape[0], self.k
        out = torch.empty(B, k, dtype=torch.float32)
        tiny = torch.finfo(torch.float32).tiny
        for a in range(0, B, self.chunk):
            S = self._weights(x[a : a + self.chunk])
            m = mt[a : a + self.chunk]
            for j in range(k - 1, -1, -1):  # S: marginal over the low j + 1 bits, shape (b, 2^(j+1))
                p = m & ((1 << j) - 1)
                s0 = S.gather(1, p[:, None])[:, 0]
                s1 = S.gather(1, (p + (1 << j))[:, None])[:, 0]
                out[a : a + self.chunk, j] = torch.log(s1.clamp_min(tiny)) - torch.log(s0.clamp_min(tiny))
                if j:
                    S = S[:, : 1 << j] + S[:, 1 << j :]
        return out.numpy()

    def probs(self, llr: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``(B, k)`` ``P(v_t = 1 | y, v_{<t})`` (float32)."""
        return (1.0 / (1.0 + np.exp(-np.clip(self.logits(llr, v), -80, 80)))).astype(np.float32)

    @torch.no_grad()
    def decode(self, llr: np.ndarray) -> np.ndarray:
        """Greedy sequential MAP decoding: ``(B, N)`` LLRs -> ``(B, N)`` uint8 ``v`` (each bit the
        exact MAP decision given the bits decided before it)."""
        x = torch.as_tensor(np.asarray(llr, dtype=np.float32))
        B, k = x.shape[0], self.k
        msg = np.zeros(B, dtype=np.int64)
        for a in range(0, B, self.chunk):
            S = self._weights(x[a : a + self.chunk])
            levels = [S]  # levels[i]: marginal over the low k - i bits
            for j in range(k - 1, 0, -1):
                levels.append(levels[-1][:, : 1 << j] + levels[-1][:, 1 << j :])
            p = torch.zeros(S.shape[0], dtype=torch.int64)
            for j in range(k):
                L = levels[k - 1 - j]  # low j + 1 bits
                s0 = L.gather(1, p[:, None])[:, 0]
                s1 = L.gather(1, (p + (1 << j))[:, None])[:, 0]
                p = p + (s1 > s0).long() * (1 << j)
            msg[a : a + self.chunk] = p.numpy()
        return self._unpack(msg)

    @torch.no_grad()
    def decode_ml(self, llr: np.ndarray) -> np.ndarray:
        """Block ML decoding (the most likely codeword): ``(B, N)`` LLRs -> ``(B, N)`` uint8 ``v``."""
        x = torch.as_tensor(np.asarray(llr, dtype=np.float32))
        B = x.shape[0]
        msg = np.concatenate([(x[a : a + self.chunk] @ self._signs_t).argmax(dim=1).numpy()
                              for a in range(0, B, self.chunk)]) if B else np.zeros(0, np.int64)
        return self._unpack(msg)
