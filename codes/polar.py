"""Polar codes (Arikan 2009) of length ``N = 2^m``: constructions, optional CRC, encoding.

Encoding, with the kernel ``F = [[1, 0], [1, 1]]`` and ``G_N = F^{(x)m}`` (natural order, no
bit-reversal permutation)::

    message a (k bits) -> [a, crc(a)] (K = k + r bits) -> v (N bits: v_A = [a, crc], v_F = 0)
                       -> u = v T (pre-transform; T = I for plain polar) -> x = u G_N

The ``K`` information (and CRC) bits go to the information set ``A`` in increasing index
order, so the CRC bits sit at the last (decoded-last) information positions. ``G_N`` is an
involution over GF(2) (``G_N G_N = I``), so ``u = x G_N``; for plain polar codes the parity
checks are ``u_F = 0``, i.e. ``H = G_N[:, F]^T``. The batched transform is the
``m``-stage butterfly ``x[left] ^= x[right]`` over block halves (``N log N / 2`` XORs per
block), never a matrix product per shot.

Information sets (``K`` most reliable synthetic channels ``u_i``):

* ``"5g"``: the 5G NR reliability sequence (3GPP TS 38.212 Table 5.3.1.2-1, shipped in
  ``data/polar_5g_reliability.txt``), entries ``< N`` kept in order; ``N <= 1024``.
* ``"bhattacharyya"``: BEC-style Bhattacharyya recursion from ``z_0 = exp(-R Eb/N0)`` (the
  BI-AWGN Bhattacharyya parameter at a design Eb/N0): the first half of a block sees
  ``z^- = 2z - z^2`` and the second half ``z^+ = z^2``, recursively (the most significant
  index bit is the first polarisation step, matching the SC decoder's recursion).
* ``"rm"``: Reed-Muller rate profile, the ``K`` indices of largest binary weight
  ``wt(i)`` (ties broken by the Bhattacharyya order); for ``K = sum_{j>=m-r} C(m, j)`` it is
  ``RM(r, m)``.

The minimum distance of a plain polar code is the smallest weight of a row of ``G_N`` in
``A``, ``min_{i in A} 2^{wt(i)}`` (Hussami, Korada & Urbanke, ISIT 2009; checked against the
weight enumerator in the tests). For codes with a CRC or a pre-transform it is counted from
the weight enumerator (``k <= 22`` only).

Examples:
    >>> import numpy as np
    >>> c = PolarCode.from_construction(32, 16, "5g")
    >>> c.n, c.k, c.d
    (32, 16, 8)
    >>> x = c.encode(np.ones((1, 16), dtype=np.uint8))
    >>> bool(np.all((x.astype(int) @ c.H.T.astype(int)) % 2 == 0))
    True
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from qdecode.errors import InputError

from . import gf2
from .crc import Crc

__all__ = [
    "CONSTRUCTIONS",
    "PolarCode",
    "polar_transform",
    "reliability_5g",
    "bhattacharyya_log_z",
    "info_set",
    "weight_enumerator",
]

CONSTRUCTIONS = ("5g", "bhattacharyya", "rm")
_DATA = Path(__file__).resolve().parent / "data" / "polar_5g_reliability.txt"
_MAX_5G = 1024


def _log2_length(N: Any) -> int:
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)):
        raise InputError(f"polar length N must be an integer power of two, got {N!r}")
    N = int(N)
    if N < 2 or N & (N - 1):
        raise InputError(f"polar length N must be a power of two >= 2, got {N}")
    if N > 1 << 20:
        raise InputError(f"polar length N = {N} is above the supported 2^20")
    return N.bit_length() - 1


@functools.lru_cache(maxsize=1)
def _sequence_1024() -> np.ndarray:
    vals = [int(t) for line in _DATA.read_text(encoding="ascii").splitlines()
            if line.strip() and not line.startswith("#") for t in line.split()]
    q = np.array(vals, dtype=np.int64)
    if q.shape != (_MAX_5G,) or not np.array_equal(np.sort(q), np.arange(_MAX_5G)):
        raise RuntimeError(f"{_DATA} is not a permutation of 0..1023 (corrupt package data)")
    q.flags.writeable = False
    return q


def reliability_5g(N: int = 1024) -> np.ndarray:
    """5G NR reliability order for length ``N``: int64 ``(N,)``, least reliable index first.

    The entries of the 1024-long sequence ``Q`` that are ``< N``, in ``Q``'s order
    (38.212 §5.3.1.2).

    Raises:
        ValueError: ``N`` not a power of two or above 1024.
    """
    _log2_length(N)
    if N > _MAX_5G:
        raise InputError(f"the 5G reliability sequence covers N <= 1024, got N = {N}")
    q = _sequence_1024()
    return q[q < N].copy()


def bhattacharyya_log_z(N: int, z0: float | None = None, *, log_z0: float | None = None) -> np.ndarray:
    """``ln Z(W_N^(i))`` of the ``N`` synthetic channels of a channel with Bhattacharyya ``z0``.

    Exact for the BEC; the standard (upper-bound) construction for other channels.
    Computed in the log domain so that tiny parameters do not underflow:
    ``ln z^+ = 2 ln z`` and ``ln z^- = ln z + ln(2 - z)``. Give ``z0`` or ``log_z0 = ln z0``
    (the latter for channels so good that ``z0`` underflows).

    Returns:
        float64 ``(N,)``; smaller is more reliable.
    """
    m = _log2_length(N)
    if (z0 is None) == (log_z0 is None):
        raise InputError("give exactly one of z0 or log_z0")
    if log_z0 is None:
        if not (0.0 < z0 <= 1.0):
            raise InputError(f"Bhattacharyya parameter z0 must be in (0, 1], got {z0}")
        log_z0 = math.log(z0)
    if not (-math.inf < log_z0 <= 0.0):
        raise InputError(f"log_z0 must be finite and <= 0, got {log_z0}")
    lz = np.array([float(log_z0)])
    for _ in range(m):
        # Entry j holds the channel reached by the index bits decided so far (most
        # significant first). Splitting it appends the next, less significant bit: the
        # minus channel (bit 0) at 2j, the plus channel (bit 1) at 2j + 1.
        minus = lz + np.log(2.0 - np.exp(lz))
        plus = 2.0 * lz
        lz = np.stack([minus, plus], axis=1).reshape(-1)
    return lz


def info_set(N: int, K: int, construction: str = "5g", *, design_ebn0_db: float = 0.0) -> np.ndarray:
    """The ``K`` most reliable indices under a construction, sorted ascending (int64).

    Args:
        N: length, a power of two.
        K: number of information (incl. CRC) positions, ``0 <= K <= N``.
        construction: ``"5g"``, ``"bhattacharyya"`` or ``"rm"``.
        design_ebn0_db: design Eb/N0 of the Bhattacharyya construction (also the tie-break
            of the RM profile); ``z_0 = exp(-(K/N) 10^(Eb/N0 / 10))``.

    Raises:
        ValueError: bad ``N``, ``K`` outside ``0..N``, unknown construction, ``N > 1024`` for 5G.
    """
    _log2_length(N)
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or not 0 <= K <= N:
        raise InputError(f"K must be an integer with 0 <= K <= N = {N}, got {K!r}")
    key = str(construction).strip().lower()
    if key not in CONSTRUCTIONS:
        raise InputError(f"unknown polar construction {construction!r}; use one of {', '.join(CONSTRUCTIONS)}")
    if key == "5g":
        order = reliability_5g(N)  # least reliable first
        return np.sort(order[N - K:])
    if not math.isfinite(design_ebn0_db):
        raise InputError(f"design_ebn0_db must be finite, got {design_ebn0_db}")
    rate = max(K, 1) / N
    lz = bhattacharyya_log_z(N, log_z0=-rate * 10.0 ** (design_ebn0_db / 10.0))
    idx = np.arange(N)
    if key == "bhattacharyya":
        # most reliable = smallest ln z; ties toward the larger index (a fixed, documented rule)
        order = np.lexsort((-idx, lz))
    else:
        wt = np.array([bin(i).count("1") for i in range(N)])
        order = np.lexsort((-idx, lz, -wt))
    return np.sort(order[:K])


def polar_transform(u: np.ndarray) -> np.ndarray:
    """``x = u G_N`` (mod 2) for every row: ``(S, N)`` 0/1 -> ``(S, N)`` uint8 (a new array).

    ``m`` butterfly stages; stage ``s`` XORs the second half of every block of ``2^(s+1)``
    into its first half. Also the inverse (``G_N`` is an involution).
    """
    x = np.array(u, dtype=np.uint8, copy=True, order="C")
    if x.ndim != 2:
        raise InputError(f"u must be 2-D (rows, N), got shape {x.shape}")
    N = x.shape[1]
    _log2_length(N)
    S = x.shape[0]
    h = 1
    while h < N:
        v = x.reshape(S, N // (2 * h), 2, h)
        v[:, :, 0, :] ^= v[:, :, 1, :]
        h *= 2
    return x


def weight_enumerator(G: np.ndarray, *, max_codewords: int = 1 << 22) -> np.ndarray:
    """Weight distribution ``A_w`` (int64 ``(n+1,)``) of the code spanned by ``G``'s rows.

    Enumerates all ``2^k`` codewords as packed 64-bit words by doubling
    (``C_{i+1} = C_i  u  (C_i + g_i)``), so memory is ``2^k ceil(n/64)`` words.

    Raises:
        ValueError: more than ``max_codewords`` codewords.
    """
    G = gf2.as_gf2(G, "G")
    k, n = G.shape
    if (1 << k) > max_codewords:
        raise InputError(f"2^k = 2^{k} codewords exceed max_codewords = {max_codewords}")
    W = (n + 63) // 64
    pad = np.zeros((k, W * 64), dtype=np.uint8)
    pad[:, :n] = G
    rows = np.packbits(pad, axis=1, bitorder="little").view(np.uint64).reshape(k, W)
    words = np.zeros((1 << k, W), dtype=np.uint64)
    size = 1
    for i in range(k):
        np.bitwise_xor(words[:size], rows[i], out=words[size : 2 * size])
        size *= 2
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        weights = np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    else:  # pragma: no cover - numpy 1.x
        table = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)
        weights = table[words.view(np.uint8)].reshape(1 << k, -1).sum(axis=1)
    return np.bincount(weights, minlength=n + 1).astype(np.int64)


@dataclasses.dataclass(frozen=True, eq=False)
class PolarCode:
    """A polar code of length ``N = 2^m`` with an optional CRC and pre-transform.

    Attributes:
        N: block length (a power of two); also available as ``n``.
        info_positions: int64 ``(K,)`` sorted information set ``A`` (message + CRC bits).
        crc: :class:`~qdecode.codes.crc.Crc` appended to the message, or ``None``.
        conv: pre-transform coefficients ``(c_0, .., c_M)`` with ``c_0 = 1``:
            ``u_i = sum_j c_j v_{i-j}`` (``(1,)`` = plain polar; see :mod:`qdecode.codes.pac`).
        name: catalogue name.
        construction: how ``info_positions`` were chosen (free text).

    Derived: ``m = log2 N``, ``K = |A|``, ``k = K - crc.degree`` message bits, ``G``
    (``(k, N)`` uint8), ``H`` (``(N - k, N)`` uint8, ``G H^T = 0``), ``d``.

    Raises:
        ValueError: bad ``N``, positions not distinct / out of range, ``c_0 != 1``, or a CRC
            longer than the information set.
    """

    N: int
    info_positions: Any
    crc: Crc | None = None
    conv: Sequence[int] = (1,)
    name: str = ""
    construction: str = ""

    def __post_init__(self) -> None:
        m = _log2_length(self.N)
        a = np.asarray(self.info_positions)
        if a.ndim != 1 or (a.size and not np.issubdtype(a.dtype, np.integer)):
            raise InputError(f"info_positions must be a 1-D integer array, got {a.dtype} {a.shape}")
        a = np.sort(a.astype(np.int64))
        if a.size and (a[0] < 0 or a[-1] >= self.N):
            raise InputError(f"info_positions must lie in 0..{self.N - 1}")
        if np.unique(a).size != a.size:
            raise InputError("info_positions must be distinct")
        if self.crc is not None and not isinstance(self.crc, Crc):
            raise InputError(f"crc must be a Crc or None, got {type(self.crc).__name__}")
        r = self.crc.degree if self.crc is not None else 0
        if a.size < r + 1:
            raise InputError(f"need at least {r + 1} information positions for a {r}-bit CRC and one message bit, "
                             f"got {a.size}")
        c = np.asarray(self.conv, dtype=np.int64)
        if c.ndim != 1 or c.size < 1 or c.size > 64 or not np.all((c == 0) | (c == 1)) or c[0] != 1:
            raise InputError("conv must be 1..64 binary coefficients (c_0, ..., c_M) with c_0 = 1")
        a.flags.writeable = False
        object.__setattr__(self, "info_positions", a)
        object.__setattr__(self, "conv", tuple(int(v) for v in c))
        object.__setattr__(self, "N", int(self.N))
        object.__setattr__(self, "m", m)

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_construction(
        cls,
        N: int,
        k: int,
        construction: str = "5g",
        *,
        crc: Crc | str | None = None,
        design_ebn0_db: float = 0.0,
        name: str = "",
    ) -> "PolarCode":
        """Polar code with ``k`` message bits (plus the CRC's ``r``) on the ``k + r`` best channels.

        Args:
            N: length, a power of two.
            k: message bits, ``1 <= k`` and ``k + r <= N``.
            construction: ``"5g"`` (N <= 1024), ``"bhattacharyya"`` or ``"rm"``.
            crc: a :class:`Crc`, a 5G CRC name (``"crc6"``, ``"crc11"``, ...), or ``None``.
            design_ebn0_db: design point of the Bhattacharyya construction / RM tie-break.
        """
        crc_obj = Crc.from_name(crc) if isinstance(crc, str) else crc
        r = crc_obj.degree if crc_obj is not None else 0
        _log2_length(N)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        if k + r > N:
            raise InputError(f"k + crc bits = {k} + {r} exceeds the length N = {N}")
        A = info_set(N, k + r, construction, design_ebn0_db=design_ebn0_db)
        label = str(construction).lower() + (f"+{crc_obj.name}" if crc_obj is not None else "")
        return cls(N, A, crc=crc_obj, name=name, construction=label)

    # ------------------------------------------------------------------ properties
    @property
    def n(self) -> int:
        """Block length (= ``N``)."""
        return self.N

    @property
    def K(self) -> int:
        """Information-set size ``|A|`` (message plus CRC bits)."""
        return int(self.info_positions.size)

    @property
    def k(self) -> int:
        """Message bits per block."""
        return self.K - self.crc_bits

    @property
    def crc_bits(self) -> int:
        """Number of CRC bits ``r`` (0 without CRC)."""
        return self.crc.degree if self.crc is not None else 0

    @property
    def rate(self) -> float:
        """``k / N``."""
        return self.k / self.N

    @functools.cached_property
    def frozen_positions(self) -> np.ndarray:
        """int64 ``(N - K,)`` frozen set ``F`` (complement of ``A``), sorted."""
        f = np.setdiff1d(np.arange(self.N), self.info_positions)
        f.flags.writeable = False
        return f

    @functools.cached_property
    def frozen_mask(self) -> np.ndarray:
        """uint8 ``(N,)``: 1 at frozen positions."""
        f = np.ones(self.N, dtype=np.uint8)
        f[self.info_positions] = 0
        f.flags.writeable = False
        return f

    @property
    def is_plain(self) -> bool:
        """No CRC and no pre-transform."""
        return self.crc is None and self.conv == (1,)

    @functools.cached_property
    def G(self) -> np.ndarray:
        """``(k, N)`` uint8 generator: row ``i`` is the codeword of the ``i``-th unit message."""
        g = self.encode(np.eye(self.k, dtype=np.uint8))
        g.flags.writeable = False
        return g

    @functools.cached_property
    def H(self) -> np.ndarray:
        """``(N - k, N)`` uint8 parity checks, full rank, ``G H^T = 0``.

        Plain polar: ``G_N[:, F]^T`` (the frozen ``u`` bits); otherwise a null-space basis of ``G``.
        """
        if self.is_plain:
            gn = polar_transform(np.eye(self.N, dtype=np.uint8))
            h = np.ascontiguousarray(gn[:, self.frozen_positions].T)
        else:
            h = gf2.nullspace(self.G)
        h.flags.writeable = False
        return h

    @functools.cached_property
    def d(self) -> int | None:
        """Minimum distance: closed form for plain polar codes, else enumerated when ``k <= 22``
        (``None`` above)."""
        if self.is_plain:
            return int(min(1 << bin(int(i)).count("1") for i in self.info_positions))
        if self.k > 22:
            return None
        A = weight_enumerator(self.G)
        return int(np.flatnonzero(A[1:])[0] + 1)

    # -------------------------------------------------------------------- encoding
    def _check_msgs(self, msgs: Any) -> np.ndarray:
        a = np.asarray(msgs)
        if a.ndim != 2 or a.shape[1] != self.k:
            raise InputError(f"msgs must have shape (S, k={self.k}), got {a.shape}")
        if a.size and not np.all((a == 0) | (a == 1)):
            raise InputError("msgs must be binary (0/1)")
        return np.ascontiguousarray(a, dtype=np.uint8)

    def place(self, msgs: Any) -> np.ndarray:
        """``(S, k)`` messages -> ``(S, N)`` uint8 ``v``: ``[msg, crc(msg)]`` on ``A``, zeros on ``F``."""
        a = self._check_msgs(msgs)
        bits = self.crc.attach(a) if self.crc is not None else a
        v = np.zeros((a.shape[0], self.N), dtype=np.uint8)
        v[:, self.info_positions] = bits
        return v

    def pretransform(self, v: np.ndarray) -> np.ndarray:
        """``u_i = sum_j c_j v_{i-j} mod 2`` for every row (identity for plain polar)."""
        v = np.asarray(v, dtype=np.uint8)
        if self.conv == (1,):
            return v.copy()
        u = v.copy()
        for j, cj in enumerate(self.conv[1:], start=1):
            if cj and j < self.N:
                u[:, j:] ^= v[:, :-j]
        return u

    def encode(self, msgs: Any) -> np.ndarray:
        """``(S, k)`` 0/1 messages -> ``(S, N)`` uint8 codewords (batched butterfly).

        Raises:
            ValueError: wrong shape or non-binary messages.
        """
        return polar_transform(self.pretransform(self.place(msgs)))

    def extract(self, codewords: Any) -> np.ndarray:
        """Inverse of :meth:`encode` on codewords: ``(S, N)`` -> ``(S, k)`` message bits.

        ``u = x G_N``, then ``v`` by inverting the pre-transform (``c_0 = 1``:
        ``v_i = u_i + sum_{j>=1} c_j v_{i-j}``), then ``v_A`` without the CRC bits.
        """
        x = np.asarray(codewords)
        if x.ndim != 2 or x.shape[1] != self.N:
            raise InputError(f"codewords must have shape (S, N={self.N}), got {x.shape}")
        u = polar_transform(x)
        if self.conv != (1,):
            v = u.copy()
            taps = [j for j, cj in enumerate(self.conv) if cj and j > 0]
            for i in range(self.N):
                for j in taps:
                    if j <= i:
                        v[:, i] ^= v[:, i - j]
            u = v
        return np.ascontiguousarray(u[:, self.info_positions[: self.k]])

    def __repr__(self) -> str:
        extra = f", crc={self.crc.name}" if self.crc is not None else ""
        return (f"{type(self).__name__}(name={self.name!r}, N={self.N}, k={self.k}{extra}, "
                f"construction={self.construction!r})")
