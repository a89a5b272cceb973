"""Binary narrow-sense primitive BCH codes (optionally shortened), systematic, galois-compatible.

Construction. Let ``alpha`` be a primitive element of GF(2^m) and ``N = 2^m - 1``. The
narrow-sense BCH code with designed error-correcting capability ``t`` has the generator

    g(x) = lcm(M_1(x), M_2(x), ..., M_{2t}(x)),

the product of the distinct minimal polynomials of ``alpha^1 .. alpha^{2t}`` (one per
cyclotomic coset that meets ``{1..2t}``), so ``k = N - deg g`` and the BCH bound gives
``d >= 2t + 1``. Several ``t`` can give the same ``g``; the code reports the largest such
``t`` (the same rule ``galois.BCH(n, k)`` applies), so the decoder corrects as much as the
code allows. Example: m = 7, t = 10 gives the (127, 64) code with deg g = 63 (nine
cosets, because 17 lies in the coset of 9).

Conventions (identical to galois, so galois is a direct oracle):

* A word is a length-``n`` array ``c``; array index ``a`` holds the coefficient of
  ``x^(n-1-a)`` (descending powers, galois' order).
* Systematic encoding: the message is the first ``k`` entries (powers ``n-1 .. n-k``), the
  parity the last ``n - k`` (powers ``n-k-1 .. 0``): ``c(x) = x^(n-k) m(x) + (x^(n-k) m(x) mod g(x))``.
* Shortening by ``s``: the first ``s`` message positions (the highest powers) are fixed to
  zero and dropped, giving an ``(N - s, k - s)`` code with the same ``g`` and ``d``;
  galois decodes such a word when it is passed ``N - s`` symbols.

``G = [I_k | P]`` (k x n) and ``H = [P^T | I_{n-k}]`` ((n-k) x n), both uint8, full rank,
``G H^T = 0 (mod 2)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from qdecode.errors import InputError

from .gf2m import GF2m, cyclotomic_coset, gf2m, poly_mul_gf2, poly_to_int, systematic_matrices
from .gf2m import check_int as _int

__all__ = ["BCHCode", "bch_generator_poly", "bch_code"]


def bch_generator_poly(field: GF2m, t: int) -> tuple[np.ndarray, int]:
    """Generator polynomial of the narrow-sense primitive binary BCH code of designed ``t``.

    Args:
        field: GF(2^m) (its primitive polynomial fixes ``alpha``).
        t: designed error-correcting capability, ``1 <= 2t < 2^m - 1``.

    Returns:
        ``(g, t_eff)``: ``g`` uint8 ascending coefficients (``g[i]`` of ``x^i``), and the
        largest ``t_eff >= t`` whose roots ``alpha^1 .. alpha^{2 t_eff}`` are all roots of ``g``.
    """
    n = field.n_max
    covered = np.zeros(n, dtype=bool)
    g = np.array([1], dtype=np.uint8)
    for j in range(1, 2 * t + 1):
        if not covered[j % n]:
            coset = cyclotomic_coset(j, field.m)
            covered[coset] = True
            g = poly_mul_gf2(g, field.minimal_poly(j))
    t_eff = t
    # alpha^(2t+1) in an included coset implies alpha^(2t+2) = (alpha^(t+1))^2 is too.
    while 2 * t_eff + 2 < n and covered[(2 * t_eff + 1) % n] and covered[(2 * t_eff + 2) % n]:
        t_eff += 1
    return g, t_eff


def _systematic_parity_gf2(g: np.ndarray, n: int, k: int) -> np.ndarray:
    """``P`` (k, n-k) uint8: row ``i`` is the parity of the unit message at array index ``i``.

    Message index ``i`` is the power ``n-1-i``; its parity is ``x^(n-1-i) mod g(x)``, whose
    coefficient of ``x^(n-k-1-j)`` goes to parity column ``j``. Rows are built from the last
    (``x^(n-k)``) upwards by multiplying by ``x`` and reducing once.
    """
    r = n - k
    P = np.zeros((k, r), dtype=np.uint8)
    g_low = g[:r].astype(np.uint8)  # g is monic of degree r
    rem = np.zeros(r, dtype=np.uint8)  # ascending coefficients of x^p mod g
    rem[:] = g_low  # x^r mod g = g_low (characteristic 2)
    for i in range(k - 1, -1, -1):
        P[i] = rem[::-1]
        top = rem[r - 1]
        rem = np.concatenate(([0], rem[:-1])).astype(np.uint8)
        if top:
            rem ^= g_low
    return P


@dataclasses.dataclass(frozen=True, eq=False)
class BCHCode:
    """A binary narrow-sense primitive BCH code, shortened by ``shorten`` positions.

    Construct with :func:`bch_code` (``bch_code(127, t=10)``) or ``BCHCode(m=7, t=10)``.

    Attributes:
        m: field degree, ``2 <= m <= 16`` (mother length ``N = 2^m - 1``).
        t: designed error-correcting capability (raised to the largest ``t`` with the same
            generator, see the module docstring).
        shorten: number of shortened (dropped) message positions ``s``, ``0 <= s < k_mother``.
        prim_poly: primitive polynomial of GF(2^m) (default: galois' default for BCH codes).
        name: catalogue name.
        field: the :class:`~qdecode.codes.gf2m.GF2m` used for syndromes.
        generator: uint8 ascending coefficients of ``g(x)`` (``generator[i]`` is that of ``x^i``).
        G: uint8 ``(k, n)`` systematic generator matrix ``[I | P]``.
        H: uint8 ``(n - k, n)`` parity-check matrix ``[P^T | I]``.

    Properties ``n``, ``k``, ``d`` (the designed distance ``2t + 1``, a lower bound on the
    true minimum distance), ``n_mother``, ``k_mother``, ``rate``; and, for code-agnostic
    binary soft decoders (the same names as :class:`~qdecode.codes.rs.RSCode`), ``G_bin = G``,
    ``H_bin = H``, ``n_bits = n``, ``k_bits = k`` and ``encode_bits = encode``.

    Raises:
        ValueError: unsupported ``m``, ``t < 1``, a code with ``k < 1``, or ``shorten`` out of range.

    Examples:
        >>> c = BCHCode(m=7, t=10)
        >>> c
        BCHCode(n=127, k=64, t=10, d=21, shorten=0, prim_poly=0x89)
        >>> c.generator_octal
        '1206534025570773100045'
    """

    m: int
    t: int
    shorten: int = 0
    prim_poly: int | None = None
    name: str = ""
    field: GF2m = dataclasses.field(init=False, repr=False)
    generator: np.ndarray = dataclasses.field(init=False, repr=False)
    G: np.ndarray = dataclasses.field(init=False, repr=False)
    H: np.ndarray = dataclasses.field(init=False, repr=False)
    _k_mother: int = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        field = gf2m(self.m, self.prim_poly)
        nm = field.n_max
        t = _int(self.t, "t")
        if t < 1:
            raise InputError(f"t must be >= 1, got t={self.t!r}")
        if 2 * t + 1 > nm:
            raise InputError(f"designed distance 2t+1 = {2 * t + 1} exceeds the length {nm} "
                             f"of BCH codes over GF(2^{field.m})")
        g, t_eff = bch_generator_poly(field, t)
        km = nm - (g.size - 1)
        if km < 1:
            raise InputError(f"BCH code of length {nm} with t={t} has dimension {km} < 1")
        s = _int(self.shorten, "shorten")
        if not 0 <= s < km:
            raise InputError(f"shorten must be in [0, {km}) for the ({nm}, {km}) BCH code, "
                             f"got shorten={self.shorten!r}")
        n, k = nm - s, km - s
        P = _systematic_parity_gf2(g, n, k)
        G, H = systematic_matrices(P, np.uint8)
        for a in (g, G, H):
            a.flags.writeable = False
        object.__setattr__(self, "m", field.m)
        object.__setattr__(self, "t", t_eff)
        object.__setattr__(self, "shorten", s)
        object.__setattr__(self, "prim_poly", field.prim_poly)
        object.__setattr__(self, "field", field)
        object.__setattr__(self, "generator", g)
        object.__setattr__(self, "G", G)
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "_k_mother", km)

    # ------------------------------------------------------------------ parameters
    @property
    def n_mother(self) -> int:
        """Length of the unshortened code, ``2^m - 1``."""
        return self.field.n_max

    @property
    def k_mother(self) -> int:
        """Dimension of the unshortened code."""
        return self._k_mother

    @property
    def n(self) -> int:
        """Block length (after shortening)."""
        return self.n_mother - self.shorten

    @property
    def k(self) -> int:
        """Number of information bits (after shortening)."""
        return self._k_mother - self.shorten

    @property
    def d(self) -> int:
        """Designed distance ``2t + 1`` (BCH bound; the true distance is at least this)."""
        return 2 * self.t + 1

    @property
    def rate(self) -> float:
        """``k / n``."""
        return self.k / self.n

    @property
    def kind(self) -> str:
        """``"bch"`` (used by the BM decoder to pick its kernel)."""
        return "bch"

    @property
    def G_bin(self) -> np.ndarray:
        """The binary generator matrix (``G`` itself; RS codes expose their binary image here)."""
        return self.G

    @property
    def H_bin(self) -> np.ndarray:
        """The binary parity-check matrix (``H`` itself)."""
        return self.H

    @property
    def n_bits(self) -> int:
        """Binary length, ``n``."""
        return self.n

    @property
    def k_bits(self) -> int:
        """Binary dimension, ``k``."""
        return self.k

    @property
    def generator_octal(self) -> str:
        """``g(x)`` as an octal string (highest power first), the usual table notation."""
        return format(poly_to_int(self.generator), "o")

    def __repr__(self) -> str:
        label = f"name={self.name!r}, " if self.name else ""
        return (
            f"BCHCode({label}n={self.n}, k={self.k}, t={self.t}, d={self.d}, shorten={self.shorten}, "
            f"prim_poly={self.prim_poly:#x})"
        )

    # ------------------------------------------------------------------ encoding
    def encode(self, messages: Any) -> np.ndarray:
        """Systematic encoding: uint8 ``(S, k)`` -> uint8 ``(S, n)`` = ``[messages | parity]``.

        Raises:
            ValueError: wrong shape or non-binary entries.
        """
        msg = _as_bits(messages, self.k, "messages")
        # float32 BLAS product is exact here (sums <= k < 2^24), then reduce mod 2.
        parity = (msg.astype(np.float32) @ self.G[:, self.k :].astype(np.float32)).astype(np.int64) & 1
        return np.hstack([msg, parity.astype(np.uint8)])

    def encode_bits(self, messages: Any) -> np.ndarray:
        """Same as :meth:`encode` (the binary interface shared with :class:`~qdecode.codes.rs.RSCode`)."""
        return self.encode(messages)

    def syndromes(self, words: Any) -> np.ndarray:
        """Binary syndromes ``words @ H^T mod 2``: uint8 ``(S, n)`` -> uint8 ``(S, n - k)``."""
        w = _as_bits(words, self.n, "words")
        return ((w.astype(np.float32) @ self.H.T.astype(np.float32)).astype(np.int64) & 1).astype(np.uint8)


def bch_code(n: int, t: int, *, shorten: int = 0, prim_poly: int | None = None, name: str = "") -> BCHCode:
    """The BCH code of mother length ``n = 2^m - 1`` and designed ``t`` (shortened by ``shorten``).

    Raises:
        ValueError: ``n`` is not ``2^m - 1`` for ``2 <= m <= 16``, or see :class:`BCHCode`.
    """
    ni = _int(n, "n")
    m = (ni + 1).bit_length() - 1
    if ni < 3 or (1 << m) - 1 != ni:
        raise InputError(f"primitive BCH codes need n = 2^m - 1 (3, 7, 15, ..., 65535), got n={n!r}; "
                         f"use shorten= for other lengths")
    return BCHCode(m=m, t=t, shorten=shorten, prim_poly=prim_poly, name=name)


def _as_bits(a: Any, width: int, name: str) -> np.ndarray:
    x = np.asarray(a)
    if x.ndim != 2 or x.shape[1] != width:
        raise InputError(f"{name} must have shape (S, {width}), got {x.shape}")
    if x.size and not np.all((x == 0) | (x == 1)):
        raise InputError(f"{name} must be binary (0/1)")
    return np.ascontiguousarray(x, dtype=np.uint8)
