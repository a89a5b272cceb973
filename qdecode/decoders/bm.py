"""Berlekamp-Massey bounded-distance decoding of BCH and Reed-Solomon codes (hard and soft input).

``BmDecoder(code)`` takes a code object from :mod:`qdecode.codes.bch` or
:mod:`qdecode.codes.rs` (duck-typed: ``kind`` is ``"bch"`` or ``"rs"``, and ``n``, ``k``,
``t``, ``field`` with ``exp``/``log`` tables; this package does not import ``qdecode.codes``).
It is a :class:`~qdecode.decoders.block.BlockDecoder` on the code's binary word (``n`` bits:
``n`` for BCH, ``n_sym m`` for RS's binary image, LSB first per symbol):

* ``decode_hard_batch(words)``: uint8 bits ``(S, n)`` -> the corrected words (the received word
  where decoding fails). The native entry: the algebraic decoder works on hard decisions.
* ``decode_llr_batch(llr)``: channel LLRs ``(S, n)`` (positive = bit 0) -> uint8 codeword bits
  ``(S, n)``. Hard decision ``llr <= 0 -> 1``, then the algebraic decoder; soft information is
  not used beyond the sign (so +-inf LLRs are accepted).
* ``decode_symbols_batch(symbols, erasures=None)`` (RS only): symbols ``(S, n_sym)`` in
  ``[0, 2^m)``, optionally with an ``(S, n_sym)`` erasure mask (errors and erasures,
  ``2 e + f <= n - k``) -> int64 symbols.
* ``last_info``: ``converged`` = decoding succeeded (``~failed``), ``extra["failed"]`` (bool)
  and ``extra["corrected"]`` (int32: errors corrected, erasures excluded; ``-1`` on failure).
  Outputs are codewords where ``converged`` (``always_codeword = False``).

A decoder failure is declared when the Berlekamp-Massey LFSR length ``L`` exceeds what the
code can correct (``2 L + f > n - k``), or the errata locator does not have exactly
``L + f`` distinct roots at transmitted positions. See :mod:`qdecode.kernels.bm`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo, DecoderInputError
from qdecode.decoders.block import BlockDecoder
from qdecode.decoders.params import uses_params
from qdecode.errors import InputError
from qdecode.kernels.bm import bch_decode_range, bch_syndrome_table, rs_decode_range
from qdecode.kernels.threads import run_ranges

__all__ = ["BmDecoder"]


@uses_params({})
class BmDecoder(BlockDecoder):
    """Batched Berlekamp-Massey + Chien (+ Forney) decoder for one BCH or RS code.

    Args:
        code: a :class:`~qdecode.codes.bch.BCHCode` or :class:`~qdecode.codes.rs.RSCode`.
        threads: threads for large batches (default: numba's thread count).

    Attributes:
        code: the code.
        kind: ``"bch"`` or ``"rs"``.
        n, k: block length and message length in bits (RS: of the binary image, ``n_sym m``).
        n_bits: ``n`` (the name the codes use).
        n_sym, k_sym: block and message length in symbols (BCH: bits).
        t: errors corrected without erasures.
        last_info: :class:`~qdecode.decoders.base.DecodeInfo` of the latest call.

    Raises:
        ValueError: ``code`` is neither a BCH nor an RS code of this package.

    Examples:
        >>> import numpy as np
        >>> from qdecode.codes.bch import BCHCode
        >>> code = BCHCode(m=4, t=2)                       # (15, 7), t = 2
        >>> word = code.encode(np.ones((1, 7), np.uint8))
        >>> noisy = word.copy(); noisy[0, [3, 9]] ^= 1
        >>> dec = BmDecoder(code)
        >>> bool((dec.decode_hard_batch(noisy) == word).all()), dec.last_info.extra["corrected"].tolist()
        (True, [2])
    """

    always_codeword = False  # a failed word comes back as received (last_info.converged is False)
    accepts_infinite_llr = True  # only the sign of an LLR is read

    def __init__(self, code: Any, threads: int | None = None) -> None:
        kind = getattr(code, "kind", None)
        if kind not in ("bch", "rs"):
            raise InputError(f"BmDecoder needs a BCH or Reed-Solomon code (kind 'bch' or 'rs'), "
                             f"got {type(code).__name__}")
        self.code = code
        self.kind = kind
        self.n_sym = int(code.n)
        self.k_sym = int(code.k)
        self.t = int(code.t)
        self.m = int(code.field.m)
        self.threads = threads
        self._exp = np.ascontiguousarray(code.field.exp, dtype=np.int32)
        self._log = np.ascontiguousarray(code.field.log, dtype=np.int32)
        self._nm = int(code.field.n_max)
        width = 1 if kind == "bch" else self.m
        self.n = self.n_bits = self.n_sym * width
        self.k = self.k_sym * width
        if kind == "bch":
            self._synt = bch_syndrome_table(self._exp, self._nm, self.t, self.n_sym)
        self.last_info: DecodeInfo | None = None

    def __repr__(self) -> str:
        return f"BmDecoder({self.code!r})"

    # ------------------------------------------------------------------ hard input
    def decode_hard_batch(self, words: Any, erasures: Any = None) -> np.ndarray:
        """Correct received hard words: uint8 bits ``(S, n)`` -> uint8 ``(S, n)``.

        Failed words are returned unchanged (``last_info.converged`` false). RS symbol words
        (and erasures) go to :meth:`decode_symbols_batch`.

        Raises:
            DecoderInputError: wrong shape, values out of range, or erasures given for BCH.
        """
        if self.kind == "bch" and erasures is not None:
            raise DecoderInputError("erasure decoding is implemented for Reed-Solomon codes only, not BCH")
        if erasures is not None:
            raise DecoderInputError("erasures are per symbol: use decode_symbols_batch(symbols, erasures)")
        return self._decode_hard_batch(self.check_words(words))

    def decode_hard(self, word: Any, erasures: Any = None) -> np.ndarray:
        """One word: ``(n,)`` -> ``(n,)`` (the batch path with S = 1)."""
        w = np.asarray(word)
        if w.ndim != 1:
            raise DecoderInputError(f"decode_hard takes one word of shape ({self.n},), got {w.shape}")
        e = None if erasures is None else np.asarray(erasures)[None, :]
        return self.decode_hard_batch(w[None, :], e)[0]

    def _decode_hard_batch(self, words: np.ndarray) -> np.ndarray:
        if self.kind == "bch":
            out = np.empty_like(words)
            nerr = np.empty(words.shape[0], dtype=np.int32)
            run_ranges(bch_decode_range, (words, self._synt, self._exp, self._log, self._nm, self.t, out, nerr),
                       words.shape[0], self.threads)
            self._set_info(nerr)
            return out
        sym = self.code.field.bits_to_symbols(words)
        return np.ascontiguousarray(self.code.field.symbols_to_bits(self.decode_symbols_batch(sym)), dtype=np.uint8)

    def decode_symbols_batch(self, symbols: Any, erasures: Any = None) -> np.ndarray:
        """RS errors-and-erasures decoding on symbols.

        Args:
            symbols: integer symbols ``(S, n_sym)`` in ``[0, 2^m)``.
            erasures: bool or 0/1 ``(S, n_sym)``, ``True`` = symbol erased (its value is ignored).

        Returns:
            int64 ``(S, n_sym)``. Failed words are returned unchanged.

        Raises:
            DecoderInputError: a BCH code, wrong shape or values out of range.
        """
        if self.kind != "rs":
            raise DecoderInputError("decode_symbols_batch is for Reed-Solomon codes; BCH words are bits")
        w = self._symbols(symbols)
        if erasures is None:
            er = np.zeros((0, 0), dtype=np.uint8)
            has = False
        else:
            er = self._bits(erasures, self.n_sym, "erasures")
            if er.shape[0] != w.shape[0]:
                raise DecoderInputError(f"erasures have {er.shape[0]} rows but words have {w.shape[0]}")
            has = True
        out = np.empty_like(w)
        nerr = np.empty(w.shape[0], dtype=np.int32)
        run_ranges(rs_decode_range,
                   (w, er, has, self._exp, self._log, self._nm, self.n_sym - self.k_sym, out, nerr),
                   w.shape[0], self.threads)
        self._set_info(nerr)
        return out.astype(np.int64)

    def _set_info(self, nerr: np.ndarray) -> None:
        failed = nerr < 0
        self.last_info = DecodeInfo(converged=~failed, iterations=None, extra={"failed": failed, "corrected": nerr})

    # ------------------------------------------------------------------ soft input
    def _decode_llr_batch(self, llr: np.ndarray) -> np.ndarray:
        """Hard decision ``llr <= 0 -> 1`` then bounded-distance decoding; where decoding fails
        the hard decisions are returned (``last_info.extra["failed"]`` flags them)."""
        return self._decode_hard_batch((llr <= 0).view(np.uint8))

    def _message_bits(self, codewords: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(codewords[:, : self.k])  # systematic: [message | parity]

    # ------------------------------------------------------------------ validation
    def _bits(self, a: Any, width: int, name: str) -> np.ndarray:
        x = np.asarray(a)
        if x.ndim != 2 or x.shape[1] != width:
            raise DecoderInputError(f"{name} must have shape (shots, {width}), got {x.shape}")
        if x.dtype == np.bool_:
            return np.ascontiguousarray(x.view(np.uint8))
        if x.size and not np.all((x == 0) | (x == 1)):
            raise DecoderInputError(f"{name} must be binary (0/1)")
        return np.ascontiguousarray(x, dtype=np.uint8)

    def _symbols(self, a: Any) -> np.ndarray:
        x = np.asarray(a)
        if x.ndim != 2 or x.shape[1] != self.n_sym:
            raise DecoderInputError(f"words must have shape (shots, {self.n_sym}), got {x.shape}")
        q = 1 << self.m
        if not np.issubdtype(x.dtype, np.integer):
            raise DecoderInputError(f"RS words must be integer symbols, got dtype {x.dtype}")
        if x.size and (x.min() < 0 or x.max() >= q):
            raise DecoderInputError(f"RS words must hold GF(2^{self.m}) symbols in [0, {q})")
        return np.ascontiguousarray(x, dtype=np.int32)
