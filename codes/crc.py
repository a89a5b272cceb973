"""Cyclic redundancy checks in the 3GPP convention, as linear maps over GF(2).

A CRC of degree ``r`` with generator ``g(D) = D^r + g_{r-1} D^{r-1} + ... + g_0`` appends to
the message ``a_0 .. a_{k-1}`` (``a_0`` the highest-order coefficient, i.e. sent first) the
parity bits ``p_0 .. p_{r-1}`` with ``p(D) = a(D) D^r mod g(D)`` (``p_0`` the coefficient of
``D^{r-1}``). Zero initial state, no reflection, no final XOR: 3GPP TS 38.212 §5.1. The
word ``[a, p]`` is then a multiple of ``g(D)``, and the map is linear, so the CRC is
``p = a @ P mod 2`` with a ``(k, r)`` parity matrix ``P`` whose row ``i`` is the remainder of
``D^{k-1-i+r}``; batches are one matrix product.

Generators of 5G NR (the integer omits the leading ``D^r``; bit ``j`` is ``g_j``):

=========  ==  =========  ==========================================================
name       r   poly       g(D)
=========  ==  =========  ==========================================================
crc6       6   0x21       D^6 + D^5 + 1                      (uplink control, polar)
crc11      11  0x621      D^11 + D^10 + D^9 + D^5 + 1        (uplink control, polar)
crc16      16  0x1021     D^16 + D^12 + D^5 + 1              (CCITT)
crc24a     24  0x864CFB   transport blocks
crc24b     24  0x800063   D^24 + D^23 + D^6 + D^5 + D + 1    (code blocks)
crc24c     24  0xB2B117   downlink control (polar)
=========  ==  =========  ==========================================================

Examples:
    >>> import numpy as np
    >>> crc = Crc.from_name("crc6")
    >>> word = crc.attach(np.array([[1, 0, 1, 1, 0, 0, 1]], dtype=np.uint8))
    >>> word.shape, bool(crc.check(word)[0])
    ((1, 13), True)
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from qdecode.errors import InputError

__all__ = ["CRC_POLYNOMIALS", "Crc"]

# name -> (degree r, generator without its leading D^r term)
CRC_POLYNOMIALS: dict[str, tuple[int, int]] = {
    "crc6": (6, 0x21),
    "crc11": (11, 0x621),
    "crc16": (16, 0x1021),
    "crc24a": (24, 0x864CFB),
    "crc24b": (24, 0x800063),
    "crc24c": (24, 0xB2B117),
}


@dataclasses.dataclass(frozen=True)
class Crc:
    """A CRC of degree ``degree`` with generator ``D^degree + poly(D)``.

    Attributes:
        name: label (``"crc11"``, or ``"custom"``).
        degree: ``r``, number of parity bits (1 .. 32).
        poly: generator without the leading term; bit ``j`` is the coefficient of ``D^j``.
            Must have ``g_0 = 1`` (otherwise ``D`` divides ``g`` and the last bit goes unchecked).

    Raises:
        ValueError: degree outside 1..32, ``poly`` wider than the degree, or ``g_0 = 0``.
    """

    name: str
    degree: int
    poly: int

    def __post_init__(self) -> None:
        if not (isinstance(self.degree, (int, np.integer)) and 1 <= self.degree <= 32):
            raise InputError(f"CRC degree must be an integer in 1..32, got {self.degree!r}")
        if not (isinstance(self.poly, (int, np.integer)) and 0 <= self.poly < (1 << self.degree)):
            raise InputError(f"CRC poly {self.poly!r} must be an integer below 2^degree = {1 << self.degree}")
        if not self.poly & 1:
            raise InputError(f"CRC poly {self.poly:#x} has g_0 = 0; the generator must have a constant term")

    @classmethod
    def from_name(cls, name: str) -> "Crc":
        """A 5G NR CRC by name (``crc6``, ``crc11``, ``crc16``, ``crc24a``, ``crc24b``, ``crc24c``).

        Raises:
            ValueError: unknown name (the message lists the valid ones).
        """
        key = str(name).strip().lower().replace("-", "").replace("_", "")
        if key not in CRC_POLYNOMIALS:
            raise InputError(f"unknown CRC {name!r}; use one of {', '.join(CRC_POLYNOMIALS)}")
        r, p = CRC_POLYNOMIALS[key]
        return cls(key, r, p)

    @functools.lru_cache(maxsize=8)
    def parity_matrix(self, k: int) -> np.ndarray:
        """``(k, r)`` uint8 ``P`` with ``crc(a) = a @ P mod 2`` for ``k``-bit messages (read-only)."""
        if k < 0:
            raise InputError(f"message length must be >= 0, got {k}")
        r, g = self.degree, self.poly
        top = 1 << (r - 1)
        mask = (1 << r) - 1
        P = np.zeros((k, r), dtype=np.uint8)
        # rem_t = D^(r+t) mod g, built up for t = 0, 1, ... ; row i needs t = k-1-i.
        rem = g  # D^r = g(D) - D^r ... i.e. D^r mod g is the low part of g
        for t in range(k):
            bits = [(rem >> (r - 1 - j)) & 1 for j in range(r)]  # p_0 = coefficient of D^(r-1)
            P[k - 1 - t] = bits
            rem = ((rem << 1) & mask) ^ (g if rem & top else 0)
        P.flags.writeable = False
        return P

    def compute(self, msgs: np.ndarray) -> np.ndarray:
        """CRC bits of each row: ``(S, k)`` 0/1 -> ``(S, r)`` uint8."""
        a = _bits2d(msgs, "msgs")
        P = self.parity_matrix(a.shape[1])
        return ((a.astype(np.int32) @ P.astype(np.int32)) & 1).astype(np.uint8)

    def attach(self, msgs: np.ndarray) -> np.ndarray:
        """``(S, k)`` -> ``(S, k + r)``: the message followed by its CRC bits."""
        a = _bits2d(msgs, "msgs")
        return np.concatenate([a, self.compute(a)], axis=1)

    def check(self, words: np.ndarray) -> np.ndarray:
        """``(S, k + r)`` words -> ``(S,)`` bool, whether the last ``r`` bits are the CRC of the rest."""
        w = _bits2d(words, "words")
        r = self.degree
        if w.shape[1] < r:
            raise InputError(f"words must have at least {r} columns (the CRC bits), got {w.shape[1]}")
        return np.all(self.compute(w[:, : w.shape[1] - r]) == w[:, w.shape[1] - r :], axis=1)


def _bits2d(a: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(a)
    if x.ndim != 2:
        raise InputError(f"{name} must be 2-D (rows, bits), got shape {x.shape}")
    if x.size and not np.all((x == 0) | (x == 1)):
        raise InputError(f"{name} must be binary (0/1)")
    return np.ascontiguousarray(x, dtype=np.uint8)
