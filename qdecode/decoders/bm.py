"""Berlekamp-Massey bounded-distance decoding of BCH and Reed-Solomon codes (hard and soft input).

``BmDecoder(code)`` takes a code object from :mod:`qdecode.codes.bch` or
:mod:`qdecode.codes.rs` (duck-typed: ``kind`` is ``"bch"`` or ``"rs"``, and ``n``, ``k``,
``t``, ``field`` with ``exp``/``log`` tables; this package does not import ``qdecode.codes``).

* ``decode_hard_batch(words, erasures=None)``: BCH: uint8 bits ``(S, n)``; RS: symbols
  ``(S, n)`` in ``[0, 2^m)``, optionally with an ``(S, n)`` erasure mask (errors and erasures,
  ``2 e + f <= n - k``). Returns the corrected words (the received word where decoding fails).
* ``decode_llr_batch(llr)``: channel LLRs ``(S, n_bits)`` (positive = bit 0; ``n_bits = n``
  for BCH, ``n m`` for RS's binary image, LSB first per symbol) -> uint8 codeword bits
  ``(S, n_bits)``. Hard decision ``llr <= 0 -> 1`` (DESIGN §3's sign convention), then the
  algebraic decoder; soft information is not used beyond the sign.
* ``last_info``: ``converged`` = decoding succeeded (``~failed``), ``extra["failed"]`` (bool)
  and ``extra["corrected"]`` (int32: errors corrected, erasures excluded; ``-1`` on failure).

A decoder failure is declared when the Berlekamp-Massey LFSR length ``L`` exceeds what the
code can correct (``2 L + f > n - k``), or the errata locator does not have exactly
``L + f`` distinct roots at transmitted positions. See :mod:`qdecode.kernels.bm`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo, DecoderInputError
from qdecode.decoders.params import uses_params
from qdecode.kernels.bm import bch_decode_range, bch_syndrome_table, rs_decode_range
from qdecode.kernels.threads import run_ranges

__all__ = ["BmDecoder"]


@uses_params({})
class BmDecoder:
    """Batched Berlekamp-Massey + Chien (+ Forney) decoder for one BCH or RS code.

    Args:
        code: a :class:`~qdecode.codes.bch.BCHCode` or :class:`~qdecode.codes.rs.RSCode`.
        threads: threads for large batches (default: numba's thread count).

    Attributes:
        code: the code.
        kind: ``"bch"`` or ``"rs"``.
        n: block length in bits (BCH) or symbols (RS).
        n_bits: length of the binary word ``decode_llr_batch`` takes (``n`` or ``n m``).
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

    def __init__(self, code: Any, threads: int | None = None) -> None:
        kind = getattr(code, "kind", None)
        if kind not in ("bch", "rs"):
            raise ValueError(f"BmDecoder needs a BCH or Reed-Solomon code (kind 'bch' or 'rs'), got {type(code).__name__}")
        self.code = code
        self.kind = kind
        self.n = int(code.n)
        self.k = int(code.k)
        self.t = int(code.t)
        self.m = int(code.field.m)
        self.threads = threads
        self._exp = np.ascontiguousarray(code.field.exp, dtype=np.int32)
        self._log = np.ascontiguousarray(code.field.log, dtype=np.int32)
        self._nm = int(code.field.n_max)
        self.n_bits = self.n if kind == "bch" else self.n * self.m
        if kind == "bch":
            self._synt = bch_syndrome_table(self._exp, self._nm, self.t, self.n)
        self.last_info: DecodeInfo | None = None

    def __repr__(self) -> str:
        return f"BmDecoder({self.code!r})"

    # ------------------------------------------------------------------ hard input
    def decode_hard_batch(self, words: Any, erasures: Any = None) -> np.ndarray:
        """Correct received hard words.

        Args:
            words: BCH: 0/1 ``(S, n)``; RS: integer symbols ``(S, n)`` in ``[0, 2^m)``.
            erasures: RS only: bool or 0/1 ``(S, n)``, ``True`` = symbol erased (its value is ignored).

        Returns:
            BCH: uint8 ``(S, n)``; RS: int64 ``(S, n)``. Failed words are returned unchanged.

        Raises:
            DecoderInputError: wrong shape, values out of range, or erasures given for BCH.
        """
        if self.kind == "bch":
            if erasures is not None:
                raise DecoderInputError("erasure decoding is implemented for Reed-Solomon codes only, not BCH")
            w = self._bits(words, self.n, "words")
            out = np.empty_like(w)
            nerr = np.empty(w.shape[0], dtype=np.int32)
            run_ranges(bch_decode_range, (w, self._synt, self._exp, self._log, self._nm, self.t, out, nerr),
                       w.shape[0], self.threads)
        else:
            w = self._symbols(words)
            if erasures is None:
                er = np.zeros((0, 0), dtype=np.uint8)
                has = False
            else:
                er = self._bits(erasures, self.n, "erasures")
                if er.shape[0] != w.shape[0]:
                    raise DecoderInputError(f"erasures have {er.shape[0]} rows but words have {w.shape[0]}")
                has = True
            out = np.empty_like(w)
            nerr = np.empty(w.shape[0], dtype=np.int32)
            run_ranges(rs_decode_range,
                       (w, er, has, self._exp, self._log, self._nm, self.n - self.k, out, nerr),
                       w.shape[0], self.threads)
            out = out.astype(np.int64)
        failed = nerr < 0
        self.last_info = DecodeInfo(converged=~failed, iterations=None, extra={"failed": failed, "corrected": nerr})
        return out

    def decode_hard(self, word: Any, erasures: Any = None) -> np.ndarray:
        """One word: ``(n,)`` -> ``(n,)`` (the batch path with S = 1)."""
        w = np.asarray(word)
        if w.ndim != 1:
            raise DecoderInputError(f"decode_hard takes one word of shape ({self.n},), got {w.shape}")
        e = None if erasures is None else np.asarray(erasures)[None, :]
        return self.decode_hard_batch(w[None, :], e)[0]

    # ------------------------------------------------------------------ soft input
    def decode_llr_batch(self, llr: Any) -> np.ndarray:
        """Channel LLRs ``(S, n_bits)`` (positive = bit 0) -> uint8 codeword bits ``(S, n_bits)``.

        Hard decision ``llr <= 0 -> 1`` then bounded-distance decoding; where decoding fails
        the hard decisions are returned (``last_info.extra["failed"]`` flags them).

        Raises:
            DecoderInputError: wrong shape, a non-numeric dtype, or NaN LLRs (+-inf are allowed).
        """
        x = np.asarray(llr)
        if x.ndim != 2 or x.shape[1] != self.n_bits:
            raise DecoderInputError(f"llr must have shape (shots, {self.n_bits}), got {x.shape}")
        if not np.issubdtype(x.dtype, np.number) or np.issubdtype(x.dtype, np.complexfloating):
            raise DecoderInputError(f"llr must be real numbers, got dtype {x.dtype}")
        if np.isnan(x).any():
            raise DecoderInputError("llr contains NaN")
        hard = (x <= 0).view(np.uint8)
        if self.kind == "bch":
            return self.decode_hard_batch(hard)
        sym = self.code.field.bits_to_symbols(hard)
        return self.code.field.symbols_to_bits(self.decode_hard_batch(sym))

    def decode_llr(self, llr: Any) -> np.ndarray:
        """One block: ``(n_bits,)`` LLRs -> ``(n_bits,)`` uint8 codeword."""
        x = np.asarray(llr)
        if x.ndim != 1:
            raise DecoderInputError(f"decode_llr takes one block of shape ({self.n_bits},), got {x.shape}")
        return self.decode_llr_batch(x[None, :])[0]

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
        if x.ndim != 2 or x.shape[1] != self.n:
            raise DecoderInputError(f"words must have shape (shots, {self.n}), got {x.shape}")
        q = 1 << self.m
        if not np.issubdtype(x.dtype, np.integer):
            raise DecoderInputError(f"RS words must be integer symbols, got dtype {x.dtype}")
        if x.size and (x.min() < 0 or x.max() >= q):
            raise DecoderInputError(f"RS words must hold GF(2^{self.m}) symbols in [0, {q})")
        return np.ascontiguousarray(x, dtype=np.int32)
