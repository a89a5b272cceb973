"""5G NR modulation over complex AWGN with max-log (and exact) bit LLRs.

The Gray mappings of 3GPP TS 38.211 section 5.1: QPSK (5.1.3), 16QAM (5.1.4), 64QAM (5.1.5) and
256QAM (5.1.6), and a real BPSK (bit ``c`` sent as ``1 - 2c``, as in :class:`~qdecode.sims.channels.BpskAwgn`;
NR's BPSK of 5.1.2, ``(1 + j)(1 - 2c) / sqrt(2)``, is that point set turned by 45 degrees, which changes
no LLR). Every constellation has unit average symbol energy (``E_s = 1``). A codeword's bits are grouped
``Qm`` per symbol in order: symbol ``i`` carries ``b(Qm i), ..., b(Qm i + Qm - 1)``. For QAM the even bits
of a group (``b(Qm i)``, ``b(Qm i + 2)``, ...) set the in-phase level and the odd bits the quadrature level,
each by the recursion of 38.211 (``Qm = 2m``, ``c_0 .. c_{m-1}`` the bits of one dimension)::

    p(c_0) = 1 - 2 c_0,     p(c_0 .. c_{m-1}) = (1 - 2 c_0) (2^(m-1) - p(c_1 .. c_{m-1})),

scaled by ``1 / sqrt(2 (M - 1) / 3)`` (``sqrt 2``, ``sqrt 10``, ``sqrt 42``, ``sqrt 170``). A symbol's
*label* is the integer whose binary digits are its bits, ``b(Qm i)`` the most significant;
:func:`nr_constellation` lists the points in label order.

Channel: ``y = x + w`` with ``w`` circular complex Gaussian of variance ``N0`` (``N0 / 2`` per real
dimension). With ``E_s = 1``, ``E_b = E_s / (R Qm)``, so ``Es/N0 = Eb/N0 + 10 log10(R Qm)`` dB and

    N0 = 1 / (R Qm Eb/N0) = 2 sigma_BPSK^2 / Qm,     sigma_BPSK^2 = ebn0_to_sigma2(Eb/N0, R).

BPSK keeps :class:`~qdecode.sims.channels.BpskAwgn`'s real channel (noise ``sigma^2 = N0 / 2`` on the
real line only; the imaginary part of the complex channel carries no information about a real point set):
for the same Eb/N0, rate and seed, ``NrQamAwgn("bpsk", ...)`` gives BpskAwgn's LLRs to the bit.

LLRs use the project's sign, ``llr = ln P(y | bit 0) / P(y | bit 1)`` (positive means 0; hard decision
``llr <= 0 -> 1``). The max-log LLR of bit ``k`` is

    llr_k = (min_{s: b_k(s) = 1} |y - s|^2 - min_{s: b_k(s) = 0} |y - s|^2) / N0,

the exact one ``ln sum_{b_k = 0} exp(-|y - s|^2 / N0) - ln sum_{b_k = 1} exp(-|y - s|^2 / N0)``. Because
``|y - s|^2 = (Re y - Re s)^2 + (Im y - Im s)^2`` and an NR QAM label splits into an in-phase and a
quadrature half, the minimum over the other dimension is the same on both sides and cancels:
:meth:`NrQamAwgn.demodulate_maxlog` takes the minima over the ``2^m`` levels of one dimension
(per bit position, vectorised over all symbols), which is the max-log LLR over the full constellation
exactly, not an approximation of it. :meth:`NrQamAwgn.demodulate_exact`, the reference, works on the
full ``M``-point constellation (log-sum-exp, in chunks of symbols).

Examples:
    >>> ch = NrQamAwgn("16qam", ebn0_db=4.0, rate=0.5)
    >>> ch.bits_per_symbol, round(ch.esn0_db, 3)
    (4, 7.01)
    >>> bits = np.array([[0, 0, 1, 1, 1, 0, 0, 0]], dtype=np.uint8)
    >>> (ch.modulate(bits) * np.sqrt(10)).round(12).tolist()
    [[(3+3j), (-1+1j)]]
    >>> (ch.demodulate_maxlog(ch.modulate(bits), ch.n0) < 0).astype(int).tolist()
    [[0, 0, 1, 1, 1, 0, 0, 0]]
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

from qdecode.errors import InputError
from qdecode.sims.channels import as_generator, ebn0_to_sigma2, finite_value

__all__ = ["ORDERS", "bits_per_symbol", "nr_constellation", "NrQamAwgn"]

#: Bits per symbol ``Qm`` of each modulation order.
ORDERS: dict[str, int] = {"bpsk": 1, "qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8}

#: Symbols per chunk of the exact demapper (a chunk holds a (chunk, M) float64 metric array).
_EXACT_CHUNK_POINTS = 1 << 21


# ----------------------------------------------------------------------------- validation
def _order(order: Any) -> str:
    key = str(order).strip().lower() if isinstance(order, str) else None
    if key not in ORDERS:
        raise InputError(f"order must be one of {', '.join(ORDERS)}, got order={order!r}")
    return key


def bits_per_symbol(order: str) -> int:
    """``Qm`` of ``order`` (``"bpsk"``, ``"qpsk"``, ``"16qam"``, ``"64qam"``, ``"256qam"``)."""
    return ORDERS[_order(order)]


# ----------------------------------------------------------------------------- constellations
def _labels(num_bits: int) -> np.ndarray:
    """uint8 ``(2^num_bits, num_bits)``: row ``v`` is the binary expansion of ``v``, most significant first."""
    v = np.arange(1 << num_bits)[:, None]
    return ((v >> np.arange(num_bits - 1, -1, -1)) & 1).astype(np.uint8)


@functools.lru_cache(maxsize=None)
def _pam(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Unnormalised Gray PAM levels of one dimension (38.211's recursion) in label order, and the labels."""
    lab = _labels(m)
    sign = 1 - 2 * lab.astype(np.int64)
    p = sign[:, m - 1]
    for t in range(m - 2, -1, -1):
        p = sign[:, t] * ((1 << (m - 1 - t)) - p)
    return p.astype(np.float64), lab


def _scale(qm: int) -> float:
    """Amplitude normalisation: ``1`` for BPSK, ``1 / sqrt(2 (M - 1) / 3)`` for square M-QAM."""
    return 1.0 if qm == 1 else 1.0 / math.sqrt(2.0 * ((1 << qm) - 1) / 3.0)


@functools.lru_cache(maxsize=None)
def _constellation(order: str) -> np.ndarray:
    qm = ORDERS[order]
    if qm == 1:
        pts = np.array([1.0 + 0j, -1.0 + 0j])
    else:
        m = qm // 2
        levels, _ = _pam(m)
        lab = _labels(qm)
        weights = 1 << np.arange(m - 1, -1, -1)
        i_idx = lab[:, 0::2] @ weights
        q_idx = lab[:, 1::2] @ weights
        pts = (levels[i_idx] + 1j * levels[q_idx]) * _scale(qm)
    pts.setflags(write=False)
    return pts


def nr_constellation(order: str) -> np.ndarray:
    """complex128 ``(2^Qm,)`` read-only: point ``v`` carries the bits of ``v``, ``b(Qm i)`` most significant.

    Examples:
        >>> (nr_constellation("qpsk") * np.sqrt(2)).round(12).tolist()
        [(1+1j), (1-1j), (-1+1j), (-1-1j)]
    """
    return _constellation(_order(order))


# ----------------------------------------------------------------------------- the channel
@dataclasses.dataclass(frozen=True)
class NrQamAwgn:
    """NR modulation ``order`` over complex AWGN at ``ebn0_db`` for a code of rate ``rate``; max-log LLRs.

    Attributes:
        order: ``"bpsk"`` (real, ``0 -> +1``), ``"qpsk"``, ``"16qam"``, ``"64qam"`` or ``"256qam"``
            (TS 38.211 section 5.1).
        ebn0_db: Eb/N0 in dB (finite).
        rate: code rate ``k / n`` in (0, 1]; ``Es/N0 = Eb/N0 + 10 log10(rate Qm)``.

    Examples:
        >>> NrQamAwgn("qpsk", ebn0_db=0.0, rate=0.5).n0
        1.0
    """

    order: str
    ebn0_db: float
    rate: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", _order(self.order))
        object.__setattr__(self, "ebn0_db", finite_value(self.ebn0_db, "ebn0_db"))
        r = finite_value(self.rate, "rate")
        if not 0.0 < r <= 1.0:
            raise InputError(f"rate must be the code rate k/n in (0, 1], got rate={self.rate!r}")
        object.__setattr__(self, "rate", r)

    @property
    def bits_per_symbol(self) -> int:
        """``Qm``: 1, 2, 4, 6 or 8."""
        return ORDERS[self.order]

    @property
    def constellation(self) -> np.ndarray:
        """The points in label order (:func:`nr_constellation`)."""
        return _constellation(self.order)

    @property
    def esn0_db(self) -> float:
        """Es/N0 in dB, ``Eb/N0 + 10 log10(R Qm)``."""
        return self.ebn0_db + 10.0 * math.log10(self.rate * self.bits_per_symbol)

    @property
    def n0(self) -> float:
        """Complex noise variance per symbol, ``1 / (R Qm Eb/N0)`` (``E_s = 1``)."""
        return 2.0 * ebn0_to_sigma2(self.ebn0_db, self.rate) / self.bits_per_symbol

    @property
    def sigma2(self) -> float:
        """Noise variance per real dimension, ``N0 / 2`` (BPSK: :class:`~qdecode.sims.channels.BpskAwgn`'s)."""
        return self.n0 / 2.0

    # -------------------------------------------------------------- checks
    def _bits(self, bits: Any, name: str = "codewords") -> np.ndarray:
        c = np.asarray(bits)
        if c.ndim != 2:
            raise InputError(f"{name} must be 2-D (shots, n), got shape {c.shape}")
        if c.size and not np.all((c == 0) | (c == 1)):
            raise InputError(f"{name} must be binary (0/1)")
        qm = self.bits_per_symbol
        if c.shape[1] % qm:
            raise InputError(f"{name} length n={c.shape[1]} must be a multiple of Qm={qm} for {self.order}")
        return c.astype(np.uint8, copy=False)

    @staticmethod
    def _symbols(y: Any) -> np.ndarray:
        a = np.asarray(y)
        if a.ndim != 2:
            raise InputError(f"y must be 2-D (shots, symbols), got shape {a.shape}")
        if not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
            raise InputError(f"y must be numeric (complex received symbols), got dtype {a.dtype}")
        a = a.astype(np.complex128, copy=False)
        if not np.all(np.isfinite(a)):
            raise InputError("y must be finite")
        return a

    @staticmethod
    def _n0(n0: Any) -> float:
        v = finite_value(n0, "n0")
        if v <= 0.0:
            raise InputError(f"n0 must be a positive noise variance, got n0={n0!r}")
        return v

    # -------------------------------------------------------------- mapping
    def modulate(self, bits: Any) -> np.ndarray:
        """uint8 ``(S, n)`` -> complex128 ``(S, n / Qm)``: symbol ``i`` of bits ``Qm i .. Qm i + Qm - 1``."""
        c = self._bits(bits, "bits")
        qm = self.bits_per_symbol
        groups = c.reshape(c.shape[0], c.shape[1] // qm, qm)
        weights = 1 << np.arange(qm - 1, -1, -1)
        return self.constellation[groups @ weights]

    def demodulate_maxlog(self, y: Any, n0: Any) -> np.ndarray:
        """Max-log LLRs: complex ``(S, N)`` symbols, complex noise variance ``n0`` -> float64 ``(S, N Qm)``.

        Per bit position, the minima of the squared distance over the levels of its dimension with that
        bit 0 and 1 (equal to the minima over the full constellation, module docstring); a loop over the
        ``2^m`` levels (at most 16), each step vectorised over every symbol of every shot.
        """
        ys = self._symbols(y)
        v = self._n0(n0)
        qm = self.bits_per_symbol
        m = max(1, qm // 2)
        levels, lab = _pam(m)
        levels = levels * _scale(qm)
        llr = np.empty(ys.shape + (qm,), dtype=np.float64)
        parts = (ys.real,) if qm == 1 else (ys.real, ys.imag)  # I carries the even bits, Q the odd ones
        for offset, part in enumerate(parts):
            best = np.full((2, m) + part.shape, np.inf)  # [bit value, bit of the dimension, ...]
            for a, bits in zip(levels, lab):
                d = np.square(part - a)
                for t in range(m):
                    np.minimum(best[bits[t], t], d, out=best[bits[t], t])
            for t in range(m):
                llr[..., offset + len(parts) * t] = (best[1, t] - best[0, t]) / v
        return llr.reshape(ys.shape[0], ys.shape[1] * qm)

    def demodulate_exact(self, y: Any, n0: Any) -> np.ndarray:
        """Exact LLRs (log-sum-exp over the full constellation): the reference for :meth:`demodulate_maxlog`."""
        ys = self._symbols(y)
        v = self._n0(n0)
        qm = self.bits_per_symbol
        pts = self.constellation
        lab = _labels(qm).astype(bool)
        flat = ys.ravel()
        out = np.empty((flat.size, qm), dtype=np.float64)
        chunk = max(1, _EXACT_CHUNK_POINTS // pts.size)
        for lo in range(0, flat.size, chunk):
            metric = -np.square(np.abs(flat[lo:lo + chunk, None] - pts[None, :])) / v
            for k in range(qm):
                out[lo:lo + chunk, k] = (logsumexp(metric[:, ~lab[:, k]], axis=1)
                                         - logsumexp(metric[:, lab[:, k]], axis=1))
        return out.reshape(ys.shape[0], ys.shape[1] * qm)

    # -------------------------------------------------------------- channel
    def receive(self, codewords: Any, rng: Any) -> np.ndarray:
        """uint8 ``(S, n)`` -> complex128 received symbols ``(S, n / Qm)``, ``x + w``, ``E|w|^2 = N0``.

        The noise draws one ``standard_normal((2, S, n / Qm))`` (real parts, then imaginary parts); BPSK draws
        ``standard_normal((S, n))`` for the real part only, as :class:`~qdecode.sims.channels.BpskAwgn` does.
        """
        x = self.modulate(codewords)
        g = as_generator(rng)
        if self.bits_per_symbol == 1:
            return x + math.sqrt(self.sigma2) * g.standard_normal(x.shape)
        z = g.standard_normal((2,) + x.shape)
        return x + math.sqrt(self.sigma2) * (z[0] + 1j * z[1])

    def transmit(self, codewords: Any, rng: Any) -> np.ndarray:
        """uint8 ``(S, n)`` -> float64 max-log LLRs ``(S, n)`` (``n`` a multiple of ``Qm``).

        BPSK: ``2 y / sigma^2``, BpskAwgn's arithmetic and draws (the max-log LLR ``4 y / N0`` in closed form).
        """
        c = self._bits(codewords)
        if self.bits_per_symbol == 1:
            s2 = self.sigma2
            y = 1.0 - 2.0 * c + math.sqrt(s2) * as_generator(rng).standard_normal(c.shape)
            return (2.0 / s2) * y
        return self.demodulate_maxlog(self.receive(c, rng), self.n0)
