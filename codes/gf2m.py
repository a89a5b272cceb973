"""Arithmetic in GF(2^m), 2 <= m <= 16, with exp/log tables, and binary polynomial helpers.

Representation: an element is an integer ``0 <= a < 2^m`` whose bit ``b`` is the
coefficient of ``alpha^b`` in the polynomial basis, where ``alpha`` (the integer 2, i.e. the
polynomial ``x``) is a root of the primitive polynomial ``p(x)`` defining the field. Because
``p`` is primitive, ``alpha`` generates the multiplicative group: every nonzero ``a`` is
``alpha^log[a]`` for a unique ``0 <= log[a] < 2^m - 1``.

Tables (plain numpy arrays; numba kernels take them as arguments):

* ``exp``: int32 ``(2 (q - 1),)`` with ``exp[i] = alpha^i``, ``q = 2^m``. It holds two periods
  so that ``exp[log[a] + log[b]]`` needs no reduction modulo ``q - 1``.
* ``log``: int32 ``(q,)`` with ``log[alpha^i] = i``; ``log[0] = -1`` is a sentinel (zero has no
  logarithm; callers test for zero first).

Default primitive polynomials are those of ``galois.matlab_primitive_poly(2, m)``, the
polynomials ``galois.BCH`` and ``galois.ReedSolomon`` use by default, so codes built here
compare bit for bit with galois (GF(2^8): ``x^8 + x^4 + x^3 + x^2 + 1`` = ``0x11d``). Note that
``galois.GF(2**m)`` itself defaults to Conway polynomials, which differ for m = 6, 7, 10, 12,
14, 15 and 16.

Polynomials over GF(2^m) here are integer arrays in **ascending** order: ``c[i]`` is the
coefficient of ``x^i`` (galois prints and stores them descending).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from qdecode.errors import InputError

__all__ = [
    "MIN_M",
    "MAX_M",
    "DEFAULT_PRIMITIVE_POLYS",
    "GF2m",
    "gf2m",
    "cyclotomic_coset",
    "cyclotomic_cosets",
    "poly_mul_gf2",
    "poly_mod_gf2",
    "poly_to_int",
]

MIN_M = 2
MAX_M = 16

# galois.matlab_primitive_poly(2, m) for m = 2..16 (bit i = coefficient of x^i).
DEFAULT_PRIMITIVE_POLYS: dict[int, int] = {
    2: 0x7,
    3: 0xB,
    4: 0x13,
    5: 0x25,
    6: 0x43,
    7: 0x89,
    8: 0x11D,
    9: 0x211,
    10: 0x409,
    11: 0x805,
    12: 0x1053,
    13: 0x201B,
    14: 0x4443,
    15: 0x8003,
    16: 0x1100B,
}


def _check_m(m: Any) -> int:
    try:
        mi = int(m)
    except (TypeError, ValueError):
        raise InputError(f"field degree m must be an integer in [{MIN_M}, {MAX_M}], got m={m!r}") from None
    if mi != m or not MIN_M <= mi <= MAX_M:
        raise InputError(
            f"unsupported field size GF(2^{m}): m must be an integer in [{MIN_M}, {MAX_M}] "
            f"(fields GF(4) .. GF(65536))"
        )
    return mi


@dataclasses.dataclass(frozen=True, eq=False)
class GF2m:
    """The field GF(2^m) built from a primitive polynomial.

    Attributes:
        m: extension degree, ``2 <= m <= 16``.
        prim_poly: the primitive polynomial as an integer (bit ``i`` = coefficient of ``x^i``,
            bit ``m`` set); ``None`` selects :data:`DEFAULT_PRIMITIVE_POLYS` ``[m]``.
        exp: int32 ``(2 (2^m - 1),)`` antilog table, ``exp[i] = alpha^i`` (read-only).
        log: int32 ``(2^m,)`` log table, ``log[0] = -1`` (read-only).

    Raises:
        ValueError: ``m`` outside 2..16, or ``prim_poly`` not of degree ``m`` or not primitive.

    Examples:
        >>> F = GF2m(8)
        >>> hex(F.prim_poly), F.order, int(F.mul(2, 0x80)), int(F.mul(F.inv(7), 7))
        ('0x11d', 256, 29, 1)
    """

    m: int
    prim_poly: int | None = None
    exp: np.ndarray = dataclasses.field(init=False, repr=False)
    log: np.ndarray = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        m = _check_m(self.m)
        poly = DEFAULT_PRIMITIVE_POLYS[m] if self.prim_poly is None else self.prim_poly
        try:
            poly = int(poly)
        except (TypeError, ValueError):
            raise InputError(f"prim_poly must be an integer bit mask, got {self.prim_poly!r}") from None
        if poly.bit_length() - 1 != m:
            raise InputError(
                f"prim_poly={poly:#x} has degree {poly.bit_length() - 1}, but GF(2^{m}) needs degree {m}"
            )
        q = 1 << m
        exp = np.zeros(2 * (q - 1), dtype=np.int32)
        log = np.full(q, -1, dtype=np.int32)
        a = 1
        for i in range(q - 1):
            if log[a] != -1:  # alpha's order divides i < q - 1: not primitive
                raise InputError(f"prim_poly={poly:#x} is not primitive over GF(2) (x has order {i})")
            exp[i] = a
            log[a] = i
            a <<= 1
            if a & q:
                a ^= poly
        if a != 1:  # x^(q-1) != 1: p(x) is reducible with x dividing it, or similar
            raise InputError(f"prim_poly={poly:#x} is not primitive over GF(2)")
        exp[q - 1 :] = exp[: q - 1]
        exp.flags.writeable = False
        log.flags.writeable = False
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "prim_poly", poly)
        object.__setattr__(self, "exp", exp)
        object.__setattr__(self, "log", log)

    # ---------------------------------------------------------------- basics
    @property
    def order(self) -> int:
        """Number of field elements, ``2^m``."""
        return 1 << self.m

    @property
    def n_max(self) -> int:
        """Multiplicative order of alpha, ``2^m - 1`` (the primitive code length)."""
        return (1 << self.m) - 1

    def __repr__(self) -> str:
        return f"GF2m(m={self.m}, prim_poly={self.prim_poly:#x})"

    def _arr(self, a: Any, name: str) -> np.ndarray:
        x = np.asarray(a)
        if x.size and (not np.issubdtype(x.dtype, np.integer) or x.min() < 0 or x.max() >= self.order):
            raise InputError(f"{name} must hold integers in [0, {self.order}) for GF(2^{self.m})")
        return x.astype(np.int64)

    def mul(self, a: Any, b: Any) -> np.ndarray:
        """Elementwise product (broadcasting), int64."""
        x, y = np.broadcast_arrays(self._arr(a, "a"), self._arr(b, "b"))
        nz = (x != 0) & (y != 0)
        out = np.zeros(x.shape, dtype=np.int64)
        out[nz] = self.exp[self.log[x[nz]] + self.log[y[nz]]]
        return out

    def inv(self, a: Any) -> np.ndarray:
        """Elementwise inverse; raises ``ZeroDivisionError`` on 0."""
        x = self._arr(a, "a")
        if np.any(x == 0):
            raise ZeroDivisionError("0 has no inverse in GF(2^m)")
        return self.exp[(self.n_max - self.log[x]) % self.n_max].astype(np.int64)

    def div(self, a: Any, b: Any) -> np.ndarray:
        """Elementwise ``a / b``; raises ``ZeroDivisionError`` if any ``b`` is 0."""
        return self.mul(a, self.inv(b))

    def power(self, a: Any, e: Any) -> np.ndarray:
        """Elementwise ``a^e`` for integer exponents (negative allowed for nonzero ``a``); ``0^0 = 1``."""
        x, k = np.broadcast_arrays(self._arr(a, "a"), np.asarray(e, dtype=np.int64))
        out = np.where(k == 0, 1, 0).astype(np.int64)
        nz = x != 0
        if np.any(~nz & (k < 0)):
            raise ZeroDivisionError("0 to a negative power")
        out[nz] = self.exp[(self.log[x[nz]] * k[nz]) % self.n_max]
        return out

    def alpha_power(self, e: Any) -> np.ndarray:
        """``alpha^e`` for integer exponents (any sign), int64."""
        return self.exp[np.asarray(e, dtype=np.int64) % self.n_max].astype(np.int64)

    # ---------------------------------------------------------------- polynomials (ascending)
    def poly_mul(self, p: Any, q: Any) -> np.ndarray:
        """Product of two polynomials over GF(2^m) (ascending coefficients)."""
        a, b = self._arr(p, "p").ravel(), self._arr(q, "q").ravel()
        out = np.zeros(max(a.size + b.size - 1, 1), dtype=np.int64)
        for i, ai in enumerate(a):
            if ai:
                out[i : i + b.size] ^= self.mul(ai, b)
        return out

    def poly_eval(self, p: Any, x: Any) -> np.ndarray:
        """Evaluate ``p`` (ascending) at each element of ``x`` by Horner's rule."""
        c = self._arr(p, "p").ravel()
        xs = self._arr(x, "x")
        acc = np.zeros(xs.shape, dtype=np.int64)
        for coef in c[::-1]:
            acc = self.mul(acc, xs) ^ coef
        return acc

    def poly_from_roots(self, roots: Any) -> np.ndarray:
        """``prod_r (x - r)`` (ascending), monic."""
        out = np.array([1], dtype=np.int64)
        for r in self._arr(roots, "roots").ravel():
            out = self.poly_mul(out, [int(r), 1])  # -r = r in characteristic 2
        return out

    def minimal_poly(self, j: int) -> np.ndarray:
        """Minimal polynomial of ``alpha^j`` over GF(2): uint8 ascending coefficients.

        ``M_j(x) = prod_{e in C_j} (x - alpha^e)`` over the cyclotomic coset ``C_j`` of ``j``
        modulo ``2^m - 1``; its coefficients lie in GF(2) (they are fixed by squaring).
        """
        coset = cyclotomic_coset(j, self.m)
        poly = self.poly_from_roots(self.alpha_power(coset))
        if np.any(poly > 1):  # pragma: no cover - impossible for a correct field
            raise AssertionError("minimal polynomial has coefficients outside GF(2)")
        return poly.astype(np.uint8)

    # ---------------------------------------------------------------- bits <-> symbols
    def symbols_to_bits(self, symbols: Any) -> np.ndarray:
        """``(..., n)`` symbols -> ``(..., n m)`` uint8 bits, LSB first within each symbol.

        Symbol ``i`` occupies bits ``i m .. i m + m - 1``; bit ``i m + b`` is the coefficient of
        ``alpha^b`` in symbol ``i`` (polynomial basis, least significant bit first).
        """
        s = self._arr(symbols, "symbols")
        shifts = np.arange(self.m, dtype=np.int64)
        bits = (s[..., None] >> shifts) & 1
        return bits.reshape(*s.shape[:-1], s.shape[-1] * self.m).astype(np.uint8)

    def bits_to_symbols(self, bits: Any) -> np.ndarray:
        """Inverse of :meth:`symbols_to_bits`: ``(..., n m)`` 0/1 -> ``(..., n)`` int64 symbols."""
        b = np.asarray(bits)
        if b.shape[-1] % self.m:
            raise InputError(f"bit vectors of length {b.shape[-1]} are not a whole number of {self.m}-bit symbols")
        if b.size and not np.all((b == 0) | (b == 1)):
            raise InputError("bits must be 0/1")
        b = b.reshape(*b.shape[:-1], b.shape[-1] // self.m, self.m).astype(np.int64)
        return (b << np.arange(self.m, dtype=np.int64)).sum(axis=-1)

    def multiplication_matrix(self, a: int) -> np.ndarray:
        """The ``m x m`` GF(2) matrix ``M`` of ``x -> a x`` on LSB-first bit rows: ``bits(a x) = bits(x) @ M``."""
        basis = np.left_shift(1, np.arange(self.m, dtype=np.int64))
        return self.symbols_to_bits(self.mul(a, basis)[:, None]).reshape(self.m, self.m)


_FIELDS: dict[tuple[int, int | None], GF2m] = {}


def gf2m(m: int, prim_poly: int | None = None) -> GF2m:
    """A cached :class:`GF2m` (the tables for m = 16 take a few milliseconds to build)."""
    key = (_check_m(m), None if prim_poly is None else int(prim_poly))
    if key not in _FIELDS:
        _FIELDS[key] = GF2m(*key)
    return _FIELDS[key]


# -------------------------------------------------------------------- cyclotomic cosets
def cyclotomic_coset(j: int, m: int) -> np.ndarray:
    """The 2-cyclotomic coset ``{j 2^i mod (2^m - 1)}`` of ``j``, sorted, int64."""
    n = (1 << _check_m(m)) - 1
    j %= n
    out = [j]
    e = (2 * j) % n
    while e != j:
        out.append(e)
        e = (2 * e) % n
    return np.array(sorted(out), dtype=np.int64)


def cyclotomic_cosets(m: int) -> list[np.ndarray]:
    """All 2-cyclotomic cosets modulo ``2^m - 1``, ordered by their smallest element.

    Examples:
        >>> [c.tolist() for c in cyclotomic_cosets(3)]
        [[0], [1, 2, 4], [3, 5, 6]]
    """
    n = (1 << _check_m(m)) - 1
    seen = np.zeros(n, dtype=bool)
    out = []
    for j in range(n):
        if not seen[j]:
            c = cyclotomic_coset(j, m)
            seen[c] = True
            out.append(c)
    return out


# -------------------------------------------------------------------- binary polynomials
def poly_mul_gf2(p: Any, q: Any) -> np.ndarray:
    """Product of two GF(2) polynomials (ascending 0/1 coefficient arrays), uint8."""
    a = np.asarray(p, dtype=np.int64).ravel()
    b = np.asarray(q, dtype=np.int64).ravel()
    return (np.convolve(a, b) & 1).astype(np.uint8)


def poly_mod_gf2(p: Any, g: Any) -> np.ndarray:
    """Remainder of ``p`` divided by ``g`` over GF(2) (ascending), length ``deg g``, uint8."""
    r = np.asarray(p, dtype=np.uint8).ravel().copy() & 1
    gg = np.asarray(g, dtype=np.uint8).ravel() & 1
    nz = np.flatnonzero(gg)
    if nz.size == 0:
        raise ZeroDivisionError("division by the zero polynomial")
    dg = int(nz[-1])
    for i in range(r.size - 1, dg - 1, -1):
        if r[i]:
            r[i - dg : i + 1] ^= gg[: dg + 1]
    out = np.zeros(dg, dtype=np.uint8)
    out[: min(dg, r.size)] = r[:dg]
    return out


def poly_to_int(p: Any) -> int:
    """Ascending 0/1 coefficients -> integer with bit ``i`` = coefficient of ``x^i``."""
    return sum(1 << i for i, c in enumerate(np.asarray(p).ravel()) if c)


def systematic_matrices(P: np.ndarray, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(G, H) = ([I_k | P], [P^T | I_r])`` of a systematic code from its ``(k, r)`` parity part
    (over a field of characteristic 2, so ``-P^T = P^T``); the identities are of ``dtype``."""
    k, r = P.shape
    G = np.hstack([np.eye(k, dtype=dtype), P])
    H = np.hstack([P.T, np.eye(r, dtype=dtype)])
    return G, H


def check_int(value: Any, name: str) -> int:
    """``value`` as an int; ValueError naming ``name`` unless it is integral (``3.0`` is fine)."""
    try:
        iv = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be an integer, got {name}={value!r}") from None
    if iv != value:
        raise InputError(f"{name} must be an integer, got {name}={value!r}")
    return iv
