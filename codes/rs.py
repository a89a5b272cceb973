"""Reed-Solomon codes over GF(2^m) (narrow-sense, systematic, shortened) and their binary images.

Construction. ``alpha`` primitive in GF(2^m), ``N = 2^m - 1``. The narrow-sense RS code with
``r = n - k`` parity symbols has the generator

    g(x) = (x - alpha^1)(x - alpha^2) ... (x - alpha^r),

minimum distance ``d = r + 1`` (MDS) and corrects ``t = floor(r / 2)`` symbol errors, or
``e`` errors and ``f`` erasures with ``2e + f <= r``. A length ``n < N`` code is the mother
``(N, N - r)`` code shortened by ``s = N - n`` (the ``s`` highest-power message symbols fixed
to zero and dropped); e.g. RS(16, 8) over GF(256) is RS(255, 247) shortened by 239. This is
``galois.ReedSolomon(N, N - r)`` decoding length-``n`` words.

Conventions (galois'): a word is a length-``n`` symbol array, index ``a`` holding the
coefficient of ``x^(n-1-a)``; systematic encoding puts the message first and the parity
last, ``c(x) = x^r m(x) + (x^r m(x) mod g(x))``.

Binary image (bit order, used consistently by ``G_bin``, ``H_bin``, :meth:`RSCode.to_bits`
and :meth:`RSCode.from_bits`): symbol ``a`` becomes bits ``a m .. a m + m - 1`` with bit
``a m + b`` the coefficient of ``alpha^b`` of that symbol (polynomial basis, **LSB first**).
So a byte message maps to bits with ``numpy.unpackbits(..., bitorder="little")``.
``G_bin`` (k m x n m) is systematic ``[I | P_bin]`` and ``H_bin = [P_bin^T | I]``
((n-k) m x n m); the binary code has dimension ``k m`` and minimum distance ``>= d``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from qdecode.errors import InputError

from .gf2m import GF2m, gf2m, systematic_matrices
from .gf2m import check_int as _int

__all__ = ["RSCode", "rs_code"]


def _systematic_parity(field: GF2m, g: np.ndarray, n: int, k: int) -> np.ndarray:
    """``P`` (k, r) int64 over GF(2^m): row ``i`` = parity of the unit message at index ``i``.

    Row ``i`` holds ``x^(n-1-i) mod g(x)`` with the coefficient of ``x^(r-1-j)`` in column ``j``;
    rows are built upwards from ``x^r mod g`` by multiplying by ``x`` and reducing.
    """
    r = n - k
    P = np.zeros((k, r), dtype=np.int64)
    g_low = g[:r].astype(np.int64)  # g monic, degree r
    rem = g_low.copy()  # x^r mod g = -g_low = g_low
    for i in range(k - 1, -1, -1):
        P[i] = rem[::-1]
        top = int(rem[r - 1])
        rem = np.concatenate(([0], rem[:-1]))
        if top:
            rem ^= field.mul(top, g_low)
    return P


@dataclasses.dataclass(frozen=True, eq=False)
class RSCode:
    """A narrow-sense Reed-Solomon code over GF(2^m), length ``n <= 2^m - 1``.

    Attributes:
        n: block length in symbols, ``k < n <= 2^m - 1``.
        k: message length in symbols, ``>= 1``.
        m: field degree, ``2 <= m <= 16`` (default 8: byte symbols).
        prim_poly: primitive polynomial (default galois' ``matlab_primitive_poly(2, m)``; 0x11d for m=8).
        name: catalogue name.
        field: the :class:`~qdecode.codes.gf2m.GF2m`.
        generator: int64 ascending coefficients of ``g(x)`` (``generator[i]`` of ``x^i``; monic).
        G: int64 ``(k, n)`` systematic symbol generator matrix ``[I | P]`` over GF(2^m).
        H: int64 ``(n - k, n)`` symbol parity-check matrix ``[P^T | I]`` (``-P^T = P^T`` in
            characteristic 2), ``G H^T = 0`` over GF(2^m).
        G_bin: uint8 ``(k m, n m)`` binary image of the code, systematic.
        H_bin: uint8 ``((n - k) m, n m)`` binary parity-check matrix, ``G_bin H_bin^T = 0``.

    Properties ``t = (n - k) // 2``, ``d = n - k + 1``, ``shorten = 2^m - 1 - n``, ``n_bits``,
    ``k_bits``, ``rate``.

    Raises:
        ValueError: unsupported ``m``, ``n > 2^m - 1``, or not ``1 <= k < n``.

    Examples:
        >>> c = RSCode(16, 8)
        >>> c
        RSCode(n=16, k=8, m=8, t=4, d=9, shorten=239, prim_poly=0x11d)
        >>> [int(v) for v in c.generator[::-1]]
        [1, 227, 44, 178, 71, 172, 8, 224, 37]
        >>> c.G_bin.shape, c.H_bin.shape
        ((64, 128), (64, 128))
    """

    n: int
    k: int
    m: int = 8
    prim_poly: int | None = None
    name: str = ""
    field: GF2m = dataclasses.field(init=False, repr=False)
    generator: np.ndarray = dataclasses.field(init=False, repr=False)
    G: np.ndarray = dataclasses.field(init=False, repr=False)
    H: np.ndarray = dataclasses.field(init=False, repr=False)
    G_bin: np.ndarray = dataclasses.field(init=False, repr=False)
    H_bin: np.ndarray = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        field = gf2m(self.m, self.prim_poly)
        n = _int(self.n, "n")
        k = _int(self.k, "k")
        if not 2 <= n <= field.n_max:
            raise InputError(f"n must be in [2, {field.n_max}] for RS codes over GF(2^{field.m}), got n={self.n!r}")
        if not 1 <= k < n:
            raise InputError(f"need 1 <= k < n for an RS code, got k={self.k!r}, n={n}")
        r = n - k
        g = field.poly_from_roots(field.alpha_power(np.arange(1, r + 1)))
        P = _systematic_parity(field, g, n, k)
        G, H = systematic_matrices(P, np.int64)
        # Binary image of P: message bit (i, b) is the symbol alpha^b at index i; its parity
        # symbols are alpha^b * P[i, :], expanded LSB first.
        mm = field.m
        basis = np.left_shift(1, np.arange(mm, dtype=np.int64))  # alpha^b as integers
        P_sym = field.mul(basis[None, :, None], P[:, None, :])  # (k, m, r)
        P_bin = field.symbols_to_bits(P_sym).reshape(k * mm, r * mm)
        G_bin, H_bin = systematic_matrices(P_bin, np.uint8)
        for a in (g, G, H, G_bin, H_bin):
            a.flags.writeable = False
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "m", field.m)
        object.__setattr__(self, "prim_poly", field.prim_poly)
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "generator", g)
        object.__setattr__(self, "G", G)
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "G_bin", G_bin)
        object.__setattr__(self, "H_bin", H_bin)

    # ------------------------------------------------------------------ parameters
    @property
    def t(self) -> int:
        """Symbol errors corrected without erasures, ``(n - k) // 2``."""
        return (self.n - self.k) // 2

    @property
    def d(self) -> int:
        """Minimum (symbol) distance ``n - k + 1`` (MDS)."""
        return self.n - self.k + 1

    @property
    def shorten(self) -> int:
        """Shortening ``s = 2^m - 1 - n`` relative to the primitive mother code."""
        return self.field.n_max - self.n

    @property
    def n_bits(self) -> int:
        """Length of the binary image, ``n m``."""
        return self.n * self.m

    @property
    def k_bits(self) -> int:
        """Dimension of the binary image, ``k m``."""
        return self.k * self.m

    @property
    def rate(self) -> float:
        """``k / n``."""
        return self.k / self.n

    @property
    def kind(self) -> str:
        """``"rs"`` (used by the BM decoder to pick its kernel)."""
        return "rs"

    def __repr__(self) -> str:
        label = f"name={self.name!r}, " if self.name else ""
        return (
            f"RSCode({label}n={self.n}, k={self.k}, m={self.m}, t={self.t}, d={self.d}, "
            f"shorten={self.shorten}, prim_poly={self.prim_poly:#x})"
        )

    # ------------------------------------------------------------------ encoding
    def encode(self, messages: Any) -> np.ndarray:
        """Systematic symbol encoding: ``(S, k)`` symbols -> int64 ``(S, n)`` = ``[messages | parity]``.

        Raises:
            ValueError: wrong shape or symbols outside ``[0, 2^m)``.
        """
        msg = self._symbols(messages, self.k, "messages")
        parity = np.zeros((msg.shape[0], self.n - self.k), dtype=np.int64)
        P = self.G[:, self.k :]
        for i in range(self.k):  # k vectorised passes over all shots
            parity ^= self.field.mul(msg[:, i : i + 1], P[i][None, :])
        return np.hstack([msg, parity])

    def encode_bits(self, message_bits: Any) -> np.ndarray:
        """Binary-image encoding: uint8 ``(S, k m)`` -> uint8 ``(S, n m)`` (same bit order as ``G_bin``)."""
        b = np.asarray(message_bits)
        if b.ndim != 2 or b.shape[1] != self.k_bits:
            raise InputError(f"message_bits must have shape (S, {self.k_bits}), got {b.shape}")
        return self.to_bits(self.encode(self.from_bits(b)))

    def to_bits(self, symbols: Any) -> np.ndarray:
        """``(S, L)`` symbols -> uint8 ``(S, L m)`` bits, LSB first per symbol."""
        return self.field.symbols_to_bits(symbols)

    def from_bits(self, bits: Any) -> np.ndarray:
        """``(S, L m)`` bits -> int64 ``(S, L)`` symbols (inverse of :meth:`to_bits`)."""
        return self.field.bits_to_symbols(bits)

    def syndromes(self, words: Any) -> np.ndarray:
        """Power-sum syndromes ``S_j = r(alpha^j)``, ``j = 1..n-k``: ``(S, n)`` -> int64 ``(S, n - k)``."""
        w = self._symbols(words, self.n, "words")
        out = np.zeros((w.shape[0], self.n - self.k), dtype=np.int64)
        for j in range(1, self.n - self.k + 1):
            aj = int(self.field.alpha_power(j))
            acc = np.zeros(w.shape[0], dtype=np.int64)
            for a in range(self.n):  # Horner, highest power first
                acc = self.field.mul(acc, aj) ^ w[:, a]
            out[:, j - 1] = acc
        return out

    def _symbols(self, a: Any, width: int, name: str) -> np.ndarray:
        x = np.asarray(a)
        if x.ndim != 2 or x.shape[1] != width:
            raise InputError(f"{name} must have shape (S, {width}), got {x.shape}")
        if x.size and (not np.issubdtype(x.dtype, np.integer) or x.min() < 0 or x.max() >= self.field.order):
            raise InputError(f"{name} must hold GF(2^{self.m}) symbols, integers in [0, {self.field.order})")
        return np.ascontiguousarray(x, dtype=np.int64)


def rs_code(n: int, k: int, m: int = 8, *, prim_poly: int | None = None, name: str = "") -> RSCode:
    """``RSCode(n, k, m)``: e.g. ``rs_code(16, 8)`` is RS(255, 247) over GF(256) shortened to 16 symbols."""
    return RSCode(n=n, k=k, m=m, prim_poly=prim_poly, name=name)
