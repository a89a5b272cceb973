"""The block-decoder protocol: classical codes decoded from channel LLRs, batch-first.

The classical counterpart of :class:`qdecode.decoders.base.Decoder` (as sinter's ``Decoder`` /
``CompiledDecoder`` pair states one contract for every decoder). Every registry entry of kind
``"classical"`` (``bm``, ``osd``, ``sc``, ``scl``, ``sem-osd``, ``crisp``) builds a
:class:`BlockDecoder`; ``tests/decoders/test_block_conformance.py`` runs them all through the
same checks.

Shapes and dtypes (S = blocks, n = code length in bits, k = message bits). Reed-Solomon codes
are decoded on their binary image, so ``n = n_sym m`` and ``k = k_sym m`` there (the numbers
``qdecode.sims.classical_points.BinaryCode`` uses):

* ``decode_llr_batch(llr float (S, n)) -> codewords uint8 (S, n)``. Channel LLRs
  ``log P(y | bit 0) / P(y | bit 1)``: **positive = bit 0 more likely** (BPSK ``0 -> +1``;
  the hard decision of an LLR ``<= 0`` is 1). Any real dtype is accepted and read as float64.
* ``decode_llr(llr (n,)) -> uint8 (n,)``: the batch path with S = 1.
* ``decode_hard_batch(words uint8 (S, n)) -> uint8 (S, n)``: hard-decision input (0/1 bits,
  bool accepted). Decoders with a native hard-decision algorithm (BM) override it; the default
  decodes the LLRs ``+1`` for bit 0 and ``-1`` for bit 1 (unit reliabilities, whose signs are
  the received bits), so a soft decoder sees every bit equally reliable.
* ``decode_hard(word (n,)) -> (n,)``: the hard batch path with S = 1.
* ``message_bits(codewords uint8 (S, n)) -> uint8 (S, k)``: the messages of codewords, the
  inverse of the code's encoder (``code.encode`` / ``encode_bits``; CRC bits dropped for
  CRC-aided polar codes). Compose it with a decode call: ``dec.message_bits(dec.decode_llr_batch(llr))``.
* ``last_info``: :class:`~qdecode.decoders.base.DecodeInfo` of the latest call (or ``None``).
  ``converged`` (bool ``(S,)``), where given, says that decoding succeeded by the decoder's own
  test (BM: bounded-distance decoding found a codeword; SCL with a CRC: the CRC holds). A decoder of a
  rate-matched code (5G NR LDPC), whose transmitted bits do not hold the whole message, puts its message
  decisions in ``extra["message_bits"]`` (uint8 ``(S, k)``).
* ``code``: the code object the decoder was built for (a :mod:`qdecode.codes` BCH, RS, polar or
  PAC code, or a :class:`LinearCode` for a decoder built from a bare matrix); ``n``, ``k``.
* ``always_codeword``: ``True`` if every output row is a codeword of ``code``; ``False`` if only
  the rows with ``last_info.converged`` true are (BM returns the hard decisions of a failed
  word; CRC-aided SCL / SC return a codeword of the polar code without its CRC when no path
  passes the CRC).

Input validation happens here, once (:meth:`BlockDecoder.check_llr`, :meth:`check_words`):
a wrong number of dimensions or columns, a non-real dtype, NaN LLRs and (unless the decoder
sets :attr:`BlockDecoder.accepts_infinite_llr`, as BM does: it reads only the sign) infinite
LLRs raise a one-line :class:`~qdecode.decoders.base.DecoderInputError` (a ``ValueError``)
naming the problem. ``S = 0`` is allowed and gives ``(0, n)``.

Subclasses implement ``_decode_llr_batch(llr)`` on validated C-contiguous float64 ``(S, n)``
LLRs (keyword options of ``decode_llr_batch``, e.g. sem-OSD's ``context_bytes``, are passed
through).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo, DecoderInputError
from qdecode.errors import InputError

__all__ = ["BlockDecoder", "LinearCode", "check_block_llr", "message_map"]


def _width(n: int, length_name: str) -> str:
    return f"{length_name}={n}" if length_name else str(n)


def check_block_llr(llr: Any, n: int, *, allow_inf: bool = False, length_name: str = "") -> np.ndarray:
    """Validate channel LLRs of shape ``(blocks, n)``; return them C-contiguous float64.

    Messages read ``llr must have shape (shots, 63), got (2, 64)`` (``(shots, N=32)`` with
    ``length_name="N"``, as the polar decoders name their length).

    Raises:
        DecoderInputError: not a real array, wrong shape, NaN (or, without ``allow_inf``,
            infinite) values.
    """
    a = np.asarray(llr) if not isinstance(llr, np.ndarray) else llr
    if a.dtype == object or a.dtype.kind in "USVcmM":
        raise DecoderInputError(f"llr must be a real array of shape (shots, {_width(n, length_name)}), "
                                f"got dtype {a.dtype}")
    if a.ndim != 2 or a.shape[1] != n:
        raise DecoderInputError(f"llr must have shape (shots, {_width(n, length_name)}), got {a.shape}")
    x = np.ascontiguousarray(a, dtype=np.float64)
    if not np.isfinite(x).all():
        if np.isnan(x).any():
            raise DecoderInputError("llr must be finite; found NaN values")
        if not allow_inf:
            raise DecoderInputError("llr must be finite; found infinite values")
    return x


def message_map(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An information set of the full-rank generator ``G (k, n)`` and the map back to messages.

    Returns ``(cols, A)``: ``k`` column indices and a ``(k, k)`` uint8 matrix with
    ``(u G)[:, cols] A = u`` for every message ``u`` (``A = G[:, cols]^{-1}`` over GF(2)).

    Raises:
        ValueError: ``G`` has dependent rows.
    """
    G = np.asarray(G, dtype=np.uint8) & 1
    k, n = G.shape
    M = np.concatenate([G, np.eye(k, dtype=np.uint8)], axis=1)  # [G | I]: rows track A with A G = rref
    cols: list[int] = []
    r = 0
    for c in range(n):
        if r == k:
            break
        hit = np.nonzero(M[r:, c])[0]
        if hit.size == 0:
            continue
        p = r + hit[0]
        if p != r:
            M[[r, p]] = M[[p, r]]
        rows = np.nonzero(M[:, c])[0]
        rows = rows[rows != r]
        M[rows] ^= M[r]
        cols.append(c)
        r += 1
    if r < k:
        raise InputError(f"the generator matrix has rank {r} < {k} rows")
    # rows of M[:, :n] = R = B G with R[:, cols] = I, so G[:, cols] = B^{-1} and u = (u G)[:, cols] B
    return np.asarray(cols, dtype=np.int64), np.ascontiguousarray(M[:, n:])


@dataclasses.dataclass(frozen=True, eq=False)
class LinearCode:
    """A binary linear code given only by its generator rows (a decoder built from a bare matrix).

    Attributes:
        G: uint8 ``(k, n)`` full-rank generator; the encoder is ``u -> u G mod 2``.
        n, k.
    """

    G: np.ndarray

    @property
    def n(self) -> int:
        return int(self.G.shape[1])

    @property
    def k(self) -> int:
        return int(self.G.shape[0])

    @functools.cached_property
    def H(self) -> np.ndarray:
        """uint8 ``(n - k, n)`` parity checks (null space of ``G``)."""
        from qdecode.kernels.gf2 import gf2_nullspace

        return np.ascontiguousarray(gf2_nullspace(self.G), dtype=np.uint8)

    def encode(self, messages: Any) -> np.ndarray:
        u = np.asarray(messages, dtype=np.int64)
        return ((u @ self.G.astype(np.int64)) & 1).astype(np.uint8)


class BlockDecoder(abc.ABC):
    """A decoder compiled for one classical binary block code (module docstring: the contract).

    Subclasses set ``code``, ``n`` (LLR width, bits) and ``k`` (message bits) and implement
    :meth:`_decode_llr_batch`; they may override :meth:`_decode_hard_batch` (a native
    hard-decision decoder) and :meth:`_message_bits` (a cheaper inverse encoder).
    """

    code: Any
    n: int
    k: int
    last_info: DecodeInfo | None = None
    #: True: every output row is a codeword; False: the rows with ``last_info.converged`` are.
    always_codeword: bool = True
    #: True: +-inf LLRs are accepted (the decoder reads signs only); NaN is always refused.
    accepts_infinite_llr: bool = False
    #: How messages name the block length (``"N"`` for polar codes; empty: the number alone).
    _length_name: str = ""

    # ------------------------------------------------------------------ validation
    def check_llr(self, llr: Any) -> np.ndarray:
        """``(S, n)`` real LLRs -> C-contiguous float64 (one-line DecoderInputError otherwise)."""
        return check_block_llr(llr, self.n, allow_inf=self.accepts_infinite_llr, length_name=self._length_name)

    def check_words(self, words: Any, name: str = "words") -> np.ndarray:
        """``(S, n)`` 0/1 (or bool) words -> C-contiguous uint8 (one-line DecoderInputError otherwise)."""
        x = np.asarray(words)
        if x.ndim != 2 or x.shape[1] != self.n:
            raise DecoderInputError(f"{name} must have shape (shots, {_width(self.n, self._length_name)}), "
                                    f"got {x.shape}")
        if x.dtype == np.bool_:
            return np.ascontiguousarray(x.view(np.uint8))
        if x.dtype.kind not in "iuf":
            raise DecoderInputError(f"{name} must be 0/1 bits, got dtype {x.dtype}")
        if x.size and not np.all((x == 0) | (x == 1)):
            raise DecoderInputError(f"{name} must be binary (0/1)")
        return np.ascontiguousarray(x, dtype=np.uint8)

    @staticmethod
    def _one(a: Any, n: int, what: str) -> np.ndarray:
        x = np.asarray(a)
        if x.ndim != 1:
            raise DecoderInputError(f"{what} takes one block of shape ({n},), got {x.shape}")
        return x[None, :]

    # ------------------------------------------------------------------ soft input
    def decode_llr_batch(self, llr: Any, **options: Any) -> np.ndarray:
        """Channel LLRs ``(S, n)`` (positive = bit 0) -> uint8 codewords ``(S, n)``.

        Raises:
            DecoderInputError: wrong shape, a non-real dtype, NaN or (for most decoders) infinite LLRs.
        """
        return self._decode_llr_batch(self.check_llr(llr), **options)

    def decode_llr(self, llr: Any, **options: Any) -> np.ndarray:
        """One block: ``(n,)`` LLRs -> ``(n,)`` uint8 codeword (the batch path with S = 1)."""
        return self.decode_llr_batch(self._one(llr, self.n, "decode_llr"), **options)[0]

    @abc.abstractmethod
    def _decode_llr_batch(self, llr: np.ndarray, **options: Any) -> np.ndarray:
        """Validated C-contiguous float64 ``(S, n)`` LLRs -> uint8 ``(S, n)``; sets ``last_info``."""

    # ------------------------------------------------------------------ hard input
    def decode_hard_batch(self, words: Any) -> np.ndarray:
        """Hard-decision words uint8 ``(S, n)`` -> uint8 ``(S, n)``.

        Default: :meth:`decode_llr_batch` of the unit LLRs ``1 - 2 words`` (+1 for 0, -1 for 1).
        """
        return self._decode_hard_batch(self.check_words(words))

    def decode_hard(self, word: Any) -> np.ndarray:
        """One hard word: ``(n,)`` -> ``(n,)`` (the hard batch path with S = 1)."""
        return self.decode_hard_batch(self._one(word, self.n, "decode_hard"))[0]

    def _decode_hard_batch(self, words: np.ndarray) -> np.ndarray:
        return self._decode_llr_batch(1.0 - 2.0 * words.astype(np.float64))

    # ------------------------------------------------------------------ messages
    def message_bits(self, codewords: Any) -> np.ndarray:
        """Codewords uint8 ``(S, n)`` -> their message bits uint8 ``(S, k)`` (inverse of the encoder).

        Rows that are not codewords get the message read off the information set (meaningless).
        """
        return self._message_bits(self.check_words(codewords, "codewords"))

    def _message_bits(self, codewords: np.ndarray) -> np.ndarray:
        cols, A = self._message_map
        c = codewords[:, cols].astype(np.int64)
        return np.ascontiguousarray((c @ A.astype(np.int64)) & 1, dtype=np.uint8)

    def generator(self) -> np.ndarray:
        """uint8 ``(k, n)`` generator of ``code``'s encoder (``code.encode_bits(u) = u G``)."""
        G = getattr(self.code, "G_bin", None)
        if G is None:
            G = self.code.G
        return np.asarray(G, dtype=np.uint8)

    @functools.cached_property
    def _message_map(self) -> tuple[np.ndarray, np.ndarray]:
        return message_map(self.generator())
