"""5G NR LDPC codes (3GPP TS 38.212): base graphs, encoding, rate matching, code-block segmentation.

Lifting (§5.3.2). A base graph ``BG1`` (46 x 68, 22 systematic columns) or ``BG2`` (42 x 52, 10) is
lifted by ``Z`` from the 51 sizes ``Z = a 2^j <= 384``, ``a`` in (2, 3, 5, 7, 9, 11, 13, 15)
(Table 5.3.2-1; ``i_LS`` is the index of ``a``). Block ``(i, j)`` of ``H`` is zero or the
``Z x Z`` identity cyclically shifted right by ``P_ij = V_ij(i_LS) mod Z`` (Tables 5.3.2-2 / -3,
shipped in ``data/nr5g_bg1.csv`` / ``nr5g_bg2.csv``): row ``r`` has its one in column
``(r + P_ij) mod Z``, so the block maps ``x`` to ``(P^s x)_r = x_{(r+s) mod Z}``.

Mother codeword (``n_mother = 68 Z`` or ``52 Z`` bits, ``H c = 0``)::

    c = [ c_0 .. c_{K'-1} | F filler zeros <NULL> | parity ]   with  K_cb = 22 Z (BG1) or 10 Z (BG2)

``K'`` (``K`` here) is the code block (message plus any CRC), ``Z`` the least lifting size with
``K_b Z >= K'`` (``K_b`` = 22 for BG1; 10, 9, 8 or 6 for BG2 by §5.2.2), ``F = K_cb - K'``. The
encoder output is ``d = c_{2Z} .. c_{n_mother-1}`` (``N = 66 Z`` / ``50 Z`` bits; the first ``2 Z``
systematic bits are never sent). Encoding uses the standard's structure: the first four rows
(the core) have a dual-diagonal parity part whose rows sum to a single circulant ``P^x`` on the
first core parity block, so that block is ``P^{-x} (lambda_0 + .. + lambda_3)`` (``lambda_i`` the
systematic part of row ``i``), the other three follow row by row, and every extension parity
block is a direct sum. All of it runs on whole ``(Z, W)`` blocks of bits packed across shots.

Rate matching (§5.4.2). Bit selection reads the circular buffer ``d_0 .. d_{N_cb-1}``
(``N_cb = N``, or ``min(N, N_ref)`` with limited-buffer rate matching) from
``k_0 = floor(c_rv N_cb / N) Z`` (``c_rv`` = 0, 17, 33, 56 for BG1 and 0, 13, 25, 43 for BG2,
Table 5.4.2.1-2), skipping filler bits, until ``E`` bits ``e`` are taken (wrapping around
repeats bits). Bit interleaving with modulation order ``Qm`` writes
``f_{i + j Qm} = e_{i E/Qm + j}`` (§5.4.2.2).

Segmentation (§5.2.2, §7.2.1): a transport block of ``A`` bits gets CRC24A (``A > 3824``) or
CRC16; the ``B`` bits are split into ``C = ceil(B / (K_cb,max - 24))`` code blocks, each with a
CRC24B when ``C > 1`` (``K_cb,max`` = 8448 for BG1, 3840 for BG2).

Examples:
    >>> import numpy as np
    >>> code = Nr5gCode.from_params(bg=2, K=512, E=1024)
    >>> code.Z, code.n_filler, code.n_mother, code.name
    (64, 128, 3328, 'nr5g[bg=2,k=512,n=1024]')
    >>> u = np.random.default_rng(0).integers(0, 2, size=(3, 512), dtype=np.uint8)
    >>> c = code.mother_encode(u)
    >>> bool(np.all((code.H.astype(np.int64) @ c.T) % 2 == 0))
    True
    >>> bool(np.array_equal(code.message_bits(code.encode(u)), u))
    True
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from qdecode.errors import InputError
from qdecode.kernels import gf2 as gf2_kernel

from .crc import Crc

__all__ = [
    "LIFTING_SIZES",
    "QM_VALUES",
    "Nr5gCode",
    "Segmentation",
    "base_graph",
    "desegment",
    "lifting_set",
    "lifting_size",
    "segment",
    "segmentation",
    "select_base_graph",
    "shift_matrix",
    "transport_block_crc",
    "transport_block_to_code_blocks",
]

_DATA = Path(__file__).resolve().parent / "data"
_SET_BASES = (2, 3, 5, 7, 9, 11, 13, 15)  # a of Z = a 2^j, in i_LS order (Table 5.3.2-1)
LIFTING_SIZES: tuple[int, ...] = tuple(sorted(a << j for a in _SET_BASES for j in range(8) if a << j <= 384))
QM_VALUES = (1, 2, 4, 6, 8)  # pi/2-BPSK or BPSK, QPSK, 16QAM, 64QAM, 256QAM
# bg -> (base rows, base columns, systematic columns, nonzero blocks, K_cb,max)
_BG = {1: (46, 68, 22, 316, 8448), 2: (42, 52, 10, 197, 3840)}
_K0 = {1: ((0, 17, 33, 56), 66), 2: ((0, 13, 25, 43), 50)}  # Table 5.4.2.1-2: k0 = floor(c Ncb / (n Z)) Z
_CORE = 4  # rows / parity columns of the dual-diagonal core
_CB_CRC = 24  # CRC24B per code block when C > 1
_CHUNK = 4096  # shots per chunk of message_bits' matrix products


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _check_bg(bg: Any) -> int:
    if isinstance(bg, bool) or not isinstance(bg, (int, np.integer)) or int(bg) not in _BG:
        raise InputError(f"base graph bg must be 1 or 2, got {bg!r}")
    return int(bg)


def lifting_set(Z: int) -> int:
    """The set index ``i_LS`` (0..7) of lifting size ``Z`` (Table 5.3.2-1: ``Z = a 2^j``, ``a`` the
    ``i_LS``-th of 2, 3, 5, 7, 9, 11, 13, 15).

    Raises:
        InputError: ``Z`` is not one of :data:`LIFTING_SIZES`.
    """
    z = _int(Z, "Z")
    if z not in LIFTING_SIZES:
        raise InputError(f"Z = {z} is not a 5G NR lifting size (Table 5.3.2-1: a 2^j <= 384, a odd in 2..15 or 2)")
    while z % 2 == 0 and z not in _SET_BASES:
        z //= 2
    return _SET_BASES.index(z)


def _kb(bg: int, B: int) -> int:
    """``K_b`` of §5.2.2: 22 for BG1; for BG2 10, 9, 8 or 6 as ``B`` exceeds 640, 560, 192 or not."""
    if bg == 1:
        return 22
    return 10 if B > 640 else 9 if B > 560 else 8 if B > 192 else 6


def lifting_size(bg: int, K: int) -> int:
    """``Z_c``: the least lifting size with ``K_b Z >= K`` for a single code block of ``K = K'`` bits
    (§5.2.2, with ``B = K'``; for ``C > 1`` code blocks §5.2.2's ``K_b`` from ``B`` is the same).

    Raises:
        InputError: bad ``bg``, or ``K`` outside ``1 .. K_cb,max`` (8448 for BG1, 3840 for BG2).
    """
    bg, K = _check_bg(bg), _int(K, "K")
    if not 1 <= K <= _BG[bg][4]:
        raise InputError(f"code block size K = {K} is outside 1..{_BG[bg][4]} for base graph {bg}")
    kb = _kb(bg, K)
    return next(z for z in LIFTING_SIZES if kb * z >= K)


@functools.lru_cache(maxsize=2)
def base_graph(bg: int) -> np.ndarray:
    """The shift table of base graph ``bg``: int16 ``(8, rows, cols)``, entry ``[i_LS, i, j] = V_ij``
    (0..383), ``-1`` where the base graph has a zero block (read-only; ``rows x cols`` = 46 x 68 or
    42 x 52).

    Raises:
        InputError: ``bg`` not 1 or 2.
        RuntimeError: the shipped table is corrupt.
    """
    bg = _check_bg(bg)
    rows, cols, _, nnz, _ = _BG[bg]
    path = _DATA / f"nr5g_bg{bg}.csv"
    lines = [line.split() for line in path.read_text(encoding="ascii").splitlines()
             if line.strip() and not line.startswith("#")]
    table = np.array(lines, dtype=np.int64)
    V = np.full((8, rows, cols), -1, dtype=np.int16)
    if table.shape == (nnz, 10) and table[:, 0].max() < rows and table[:, 1].max() < cols:
        V[:, table[:, 0], table[:, 1]] = table[:, 2:].T
    if table.shape != (nnz, 10) or int((V[0] >= 0).sum()) != nnz or V.max() >= 384:
        raise RuntimeError(f"{path} is not the {rows} x {cols} table of {nnz} blocks (corrupt package data)")
    V.flags.writeable = False
    return V


@functools.lru_cache(maxsize=64)
def shift_matrix(bg: int, Z: int) -> np.ndarray:
    """int32 ``(rows, cols)``: ``V_ij(i_LS(Z)) mod Z`` on the base graph's nonzero blocks, ``-1``
    elsewhere (read-only).

    Raises:
        InputError: bad ``bg`` or ``Z``.
    """
    bg, i_ls = _check_bg(bg), lifting_set(Z)
    v = base_graph(bg)[i_ls].astype(np.int32)
    P = np.where(v >= 0, v % int(Z), -1).astype(np.int32)
    P.flags.writeable = False
    return P


def select_base_graph(A: int, R: float) -> int:
    """Base graph for a transport block of ``A`` bits at target code rate ``R`` (38.212 §7.2.2):
    BG2 if ``A <= 292``, or ``A <= 3824`` and ``R <= 0.67``, or ``R <= 0.25``; else BG1.

    Raises:
        InputError: ``A < 1`` or ``R`` outside ``(0, 1]``.
    """
    A = _int(A, "A")
    if A < 1:
        raise InputError(f"transport block size A must be >= 1, got {A}")
    if not (isinstance(R, (int, float, np.integer, np.floating)) and 0.0 < float(R) <= 1.0):
        raise InputError(f"code rate R must be a number in (0, 1], got {R!r}")
    return 2 if A <= 292 or (A <= 3824 and R <= 0.67) or R <= 0.25 else 1


def _binary(x: Any, name: str, width: int, ndim: int = 2) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != ndim or a.shape[-1] != width:
        want = "(S, " * (ndim - 1) + f"{width}" + ")" * (ndim - 1)
        raise InputError(f"{name} must have shape {want}, got {a.shape}")
    if a.dtype.kind not in "biuf":
        raise InputError(f"{name} must be binary (0/1), got dtype {a.dtype}")
    if a.size and a.dtype.kind != "b" and not (a.max() <= 1 if a.dtype.kind == "u" else np.all((a == 0) | (a == 1))):
        raise InputError(f"{name} must be binary (0/1)")
    return np.ascontiguousarray(a, dtype=np.uint8)


def _runs(cols: np.ndarray) -> tuple[tuple[int, int, int], ...]:
    """Maximal runs of consecutive columns: ``(offset, first column, length)`` with
    ``cols[offset + t] = first + t`` for ``t < length``."""
    cut = np.flatnonzero(np.diff(cols) != 1) + 1
    starts, ends = np.r_[0, cut], np.r_[cut, cols.size]
    return tuple((int(a), int(cols[a]), int(b - a)) for a, b in zip(starts, ends))


def _shift(x: np.ndarray, s: int) -> np.ndarray:
    """``P^s x`` for a ``(Z, W)`` block of packed bits: row ``r`` of the result is row ``(r + s) mod Z``."""
    return np.concatenate((x[s:], x[:s])) if s else x


class _Step(NamedTuple):
    """Solve base row ``row`` for parity block ``col`` (shift ``shift`` there), given ``known`` parity
    blocks ``(column, shift)`` of that row."""

    row: int
    col: int
    shift: int
    known: tuple[tuple[int, int], ...]


class _EncoderPlan(NamedTuple):
    systematic: tuple[tuple[tuple[int, int], ...], ...]  # per base row: (column, shift) of systematic blocks
    first: tuple[int, int]  # (column, x): the core rows sum to P^x on this parity block
    steps: tuple[_Step, ...]  # the remaining parity blocks, in an order where each is one unknown


class _InverseMap(NamedTuple):
    """``message_bits``: direct message columns and where they are read, and the solved ones."""

    direct: np.ndarray  # message indices read directly
    direct_src: np.ndarray  # their positions in the rate-matched word
    solved: np.ndarray  # message indices solved from the parity checks
    known_src: np.ndarray  # rate-matched positions of the known bits the solution reads
    B: Any  # CSR uint8 (r, len(known_src)): the chosen checks restricted to the known bits
    T: np.ndarray  # float32 (len(solved), r): solved bits = T (B x) mod 2


@dataclasses.dataclass(frozen=True)
class Nr5gCode:
    """A 5G NR LDPC code block with rate matching (module docstring has the maths).

    Attributes:
        bg: base graph, 1 or 2.
        K: code block size ``K'`` (bits into the encoder, any CRC included; fillers excluded).
        E: rate-matched length (bits sent).
        rv: redundancy version 0..3 (start ``k0`` of the circular buffer).
        Qm: modulation order of the bit interleaver (1, 2, 4, 6, 8); ``E`` is a multiple of it.
        n_ref: ``N_ref`` of limited-buffer rate matching (``N_cb = min(N, N_ref)``), or ``None``
            (``N_cb = N``). Must be at least ``K_cb``.

    Derived: ``Z``, ``i_ls``, ``k_cb`` (22Z / 10Z), ``n_filler`` (``K_cb - K``), ``n_mother``
    (68Z / 52Z), ``N`` (66Z / 50Z), ``n_cb``, ``k0``, ``shifts``, ``H``, ``n = E``, ``k = K``, ``name``.

    Raises:
        InputError: any parameter out of range (one line).
    """

    bg: int
    K: int
    E: int
    rv: int = 0
    Qm: int = 1
    n_ref: int | None = None

    def __post_init__(self) -> None:
        bg = _check_bg(self.bg)
        Z = lifting_size(bg, self.K)
        E, rv, Qm = _int(self.E, "E"), _int(self.rv, "rv"), _int(self.Qm, "Qm")
        if rv not in (0, 1, 2, 3):
            raise InputError(f"redundancy version rv must be 0..3, got {rv}")
        if Qm not in QM_VALUES:
            raise InputError(f"modulation order Qm must be one of {QM_VALUES}, got {Qm}")
        if E < Qm or E % Qm:
            raise InputError(f"rate-matched length E = {E} must be a positive multiple of Qm = {Qm}")
        k_cb = _BG[bg][2] * Z
        if self.n_ref is not None and _int(self.n_ref, "n_ref") < k_cb:
            raise InputError(f"n_ref = {self.n_ref} must be at least K_cb = {k_cb} (the buffer holds every "
                             "systematic bit)")
        for key, value in (("bg", bg), ("K", int(self.K)), ("E", E), ("rv", rv), ("Qm", Qm)):
            object.__setattr__(self, key, value)
        if self.n_ref is not None:
            object.__setattr__(self, "n_ref", int(self.n_ref))
        object.__setattr__(self, "Z", Z)

    @classmethod
    def from_params(cls, bg: int, K: int, E: int, rv: int = 0, Qm: int = 1, n_ref: int | None = None) -> "Nr5gCode":
        """The code block of ``K`` bits on base graph ``bg``, rate-matched to ``E`` bits (see the class)."""
        return cls(bg, K, E, rv, Qm, n_ref)

    # ------------------------------------------------------------------ sizes
    @property
    def i_ls(self) -> int:
        """Set index of ``Z`` (Table 5.3.2-1)."""
        return lifting_set(self.Z)

    @property
    def k_cb(self) -> int:
        """``K_cb = 22 Z`` (BG1) or ``10 Z`` (BG2): systematic columns, fillers included."""
        return _BG[self.bg][2] * self.Z

    @property
    def n_filler(self) -> int:
        """``F = K_cb - K``: filler bits (known zeros, never sent)."""
        return self.k_cb - self.K

    @property
    def n_mother(self) -> int:
        """Columns of ``H``: ``68 Z`` or ``52 Z`` (the ``2 Z`` punctured ones included)."""
        return _BG[self.bg][1] * self.Z

    @property
    def N(self) -> int:
        """38.212's ``N`` = ``66 Z`` or ``50 Z``: the encoder output ``d`` (mother code minus ``2 Z``)."""
        return self.n_mother - 2 * self.Z

    @property
    def n_cb(self) -> int:
        """Circular buffer length ``N_cb``: ``N``, or ``min(N, N_ref)`` with limited-buffer rate matching."""
        return self.N if self.n_ref is None else min(self.N, self.n_ref)

    @property
    def k0(self) -> int:
        """Start of bit selection in ``d``: ``floor(c_rv N_cb / (n Z)) Z`` (Table 5.4.2.1-2)."""
        coeff, cols = _K0[self.bg]
        return (coeff[self.rv] * self.n_cb // (cols * self.Z)) * self.Z

    @property
    def shifts(self) -> np.ndarray:
        """int32 ``(rows, cols)`` shift matrix of this ``Z`` (:func:`shift_matrix`)."""
        return shift_matrix(self.bg, self.Z)

    @property
    def n(self) -> int:
        """Transmitted length (= ``E``)."""
        return self.E

    @property
    def k(self) -> int:
        """Message bits (= ``K``)."""
        return self.K

    @property
    def rate(self) -> float:
        """``K / E``."""
        return self.K / self.E

    @property
    def name(self) -> str:
        """The catalogue spec, e.g. ``nr5g[bg=2,k=512,n=1024]`` (``rv``, ``qm``, ``nref`` when not default)."""
        extra = "".join(f",{key}={v}" for key, v, default in
                        (("rv", self.rv, 0), ("qm", self.Qm, 1), ("nref", self.n_ref, None)) if v != default)
        return f"nr5g[bg={self.bg},k={self.K},n={self.E}{extra}]"

    @functools.cached_property
    def H(self) -> sp.csr_matrix:
        """Mother parity-check matrix: CSR uint8 ``(rows Z, n_mother)``, columns in the standard's order."""
        Z, P = self.Z, self.shifts
        bi, bj = np.nonzero(P >= 0)
        r = np.arange(Z)
        rows = (bi[:, None] * Z + r).ravel()
        cols = (bj[:, None] * Z + (r + P[bi, bj][:, None]) % Z).ravel()
        data = np.ones(rows.size, dtype=np.uint8)
        H = sp.csr_matrix((data, (rows, cols)), shape=(P.shape[0] * Z, self.n_mother), dtype=np.uint8)
        H.sort_indices()
        return H

    # ------------------------------------------------------------------ encoding
    @functools.cached_property
    def _plan(self) -> _EncoderPlan:
        return _encoder_plan(self.shifts, _BG[self.bg][2], self.Z)

    def mother_encode(self, messages: Any) -> np.ndarray:
        """``(S, K)`` 0/1 messages -> ``(S, n_mother)`` uint8 mother codewords ``[u, 0^F, parity]``
        with ``H c = 0`` (vectorised over shots: bits packed across shots, ``Z``-row blocks).

        Raises:
            InputError: wrong shape or non-binary messages.
        """
        u = _binary(messages, "messages", self.K)
        S, Z, kb = u.shape[0], self.Z, _BG[self.bg][2]
        out = np.zeros((S, self.n_mother), dtype=np.uint8)
        out[:, : self.K] = u
        if S == 0:
            return out
        X = np.zeros((self.k_cb, (S + 7) // 8), dtype=np.uint8)
        X[: self.K] = np.packbits(u.T, axis=1)
        parity = _parity_blocks(X.reshape(kb, Z, -1), self._plan, self.shifts.shape[1] - kb).reshape(-1, X.shape[1])
        for w in range(0, X.shape[1], 8):  # unpack 64 shots at a time: the transpose stays in cache
            lo, hi = 8 * w, min(S, 8 * w + 64)
            out[lo:hi, self.k_cb:] = np.unpackbits(parity[:, w : w + 8], axis=1, count=hi - lo).T
        return out

    # ------------------------------------------------------------------ rate matching
    @functools.cached_property
    def _buffer(self) -> np.ndarray:
        """int64: the non-filler positions of ``d`` in bit-selection order from ``k0`` (one lap)."""
        order = (self.k0 + np.arange(self.n_cb)) % self.n_cb
        filler = (order >= self.K - 2 * self.Z) & (order < self.k_cb - 2 * self.Z)
        return order[~filler]

    @functools.cached_property
    def _e_index(self) -> np.ndarray:
        """int64 ``(E,)``: output bit ``t`` is ``e[_e_index[t]]`` (bit interleaving, §5.4.2.2)."""
        return np.arange(self.E).reshape(self.Qm, self.E // self.Qm).T.ravel()

    @functools.cached_property
    def transmitted_columns(self) -> np.ndarray:
        """int64 ``(E,)``: the mother-code column carried by each rate-matched bit (read-only)."""
        buf = self._buffer
        cols = 2 * self.Z + buf[self._e_index % buf.size]
        cols.flags.writeable = False
        return cols

    @functools.cached_property
    def _lap(self) -> tuple[tuple[int, int, int], ...]:
        """:func:`_runs` of one lap of the buffer, as columns of ``d``."""
        return _runs(self._buffer)

    def _laps(self):
        """``(e offset, d column, length)`` of every contiguous piece of ``e`` (bit selection)."""
        L = self._buffer.size
        for start in range(0, self.E, L):
            for off, col, n in self._lap:
                if start + off >= self.E:
                    break
                yield start + off, col, min(n, self.E - start - off)

    def _select(self, d: np.ndarray, offset: int) -> np.ndarray:
        """Bit selection then interleaving of ``d = x[:, offset:]``: ``(S, E)``."""
        e = np.empty((d.shape[0], self.E), dtype=d.dtype)
        for t, col, n in self._laps():
            e[:, t : t + n] = d[:, offset + col : offset + col + n]
        # f_{i + j Qm} = e_{i E/Qm + j}: e as (Qm, E/Qm), read column by column
        return e.reshape(-1, self.Qm, self.E // self.Qm).transpose(0, 2, 1).reshape(-1, self.E)

    def rate_match(self, d: Any) -> np.ndarray:
        """Bit selection and interleaving: ``(S, N)`` 0/1 encoder output ``d`` (filler positions are
        ignored) -> ``(S, E)`` uint8.

        Raises:
            InputError: wrong shape or non-binary ``d``.
        """
        return self._select(_binary(d, "d", self.N), 0)

    def encode(self, messages: Any) -> np.ndarray:
        """``(S, K)`` messages -> ``(S, E)`` uint8 rate-matched words (what a channel carries)."""
        return self._select(self.mother_encode(messages), 2 * self.Z)

    def rate_recover(self, llr: Any) -> np.ndarray:
        """De-interleave and undo bit selection: ``(S, E)`` LLRs -> float64 ``(S, n_mother)``.

        Repeated bits add their LLRs; punctured and unsent columns get 0 (the first ``2 Z``
        included); filler columns ``+inf`` (known zeros, LLR ``ln(P(0)/P(1))``).

        Raises:
            InputError: wrong shape or NaN.
        """
        x = np.asarray(llr, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.E:
            raise InputError(f"llr must have shape (S, {self.E}), got {x.shape}")
        if np.isnan(x).any():
            raise InputError("llr must not contain NaN")
        e = x.reshape(-1, self.E // self.Qm, self.Qm).transpose(0, 2, 1).reshape(-1, self.E)
        out = np.zeros((x.shape[0], self.n_mother))
        d = out[:, 2 * self.Z :]
        for t, col, n in self._laps():
            d[:, col : col + n] += e[:, t : t + n]
        out[:, self.K : self.k_cb] = np.inf
        return out

    # ------------------------------------------------------------------ inverse
    @functools.cached_property
    def _inverse(self) -> _InverseMap:
        return _inverse_map(self)

    def message_bits(self, words: Any) -> np.ndarray:
        """Inverse of :meth:`encode` on codewords: ``(S, E)`` -> ``(S, K)`` uint8.

        Sent message bits are read; the others (the ``2 Z`` punctured ones, and any not sent) are
        solved from the parity checks by a linear map computed once per code: unsent parity bits
        are peeled off with their checks, then one GF(2) elimination over the checks that still
        involve unknown bits, of the size of those unknowns. That is ``2 Z`` bits when the
        systematic part is sent (rv 0 and ``E`` not far below ``K``: BG1, Z = 384 in well under a
        second) and up to ``K + 4 Z`` when rv 1..3 with a short ``E`` leave most systematic bits
        unsent (BG1, Z = 384, rv 2, E = 12672: about 15 s, once per code).

        Raises:
            InputError: wrong shape or non-binary words; the ``E`` sent bits do not determine the
                message (the rate-matched code is not injective).
        """
        w = _binary(words, "words", self.E)
        inv = self._inverse
        out = np.empty((w.shape[0], self.K), dtype=np.uint8)
        out[:, inv.direct] = w[:, inv.direct_src]
        for lo in range(0, w.shape[0], _CHUNK) if inv.solved.size else ():
            known = np.ascontiguousarray(w[lo : lo + _CHUNK, inv.known_src].T)
            y = np.asarray(inv.B @ known) & 1  # uint8 sums wrap mod 256: the parity is exact
            z = inv.T @ y.astype(np.float32)
            out[lo : lo + _CHUNK, inv.solved] = (np.rint(z).astype(np.int64) & 1).T
        return out

    def __repr__(self) -> str:
        return f"Nr5gCode({self.name}, Z={self.Z}, i_ls={self.i_ls}, F={self.n_filler})"


def _encoder_plan(P: np.ndarray, kb: int, Z: int) -> _EncoderPlan:
    """The solve order of the parity blocks of shift matrix ``P`` (checks the 38.212 structure)."""
    rows, cols = P.shape
    systematic = tuple(tuple((int(j), int(P[i, j])) for j in np.flatnonzero(P[i, :kb] >= 0)) for i in range(rows))
    core = range(kb, kb + _CORE)
    # Sum of the core rows: a circulant appearing an even number of times cancels.
    residue = {j: {int(s) for s in P[:_CORE, j] if s >= 0 and np.sum(P[:_CORE, j] == s) % 2} for j in core}
    first = [j for j in core if residue[j]]
    ext_ok = all(np.flatnonzero(P[i, kb + _CORE:] >= 0).tolist() == [i - _CORE] for i in range(_CORE, rows))
    if len(first) != 1 or len(residue[first[0]]) != 1 or not ext_ok or (P[:_CORE, kb + _CORE:] >= 0).any():
        raise RuntimeError("the base graph does not have the TS 38.212 dual-diagonal structure (corrupt data)")
    known, steps, pending = {first[0]}, [], list(range(rows))
    while pending:
        for i in pending:
            par = [int(j) for j in np.flatnonzero(P[i, kb:] >= 0) + kb]
            unknown = [j for j in par if j not in known]
            if len(unknown) == 1:
                u = unknown[0]
                steps.append(_Step(i, u, int(P[i, u]), tuple((j, int(P[i, j])) for j in par if j != u)))
                known.add(u)
                pending.remove(i)
                break
            if not unknown:  # a redundant core row (the four sum to the first block's equation)
                pending.remove(i)
                break
        else:
            raise RuntimeError("the parity blocks cannot be solved row by row (corrupt base graph)")
    return _EncoderPlan(systematic, (first[0], next(iter(residue[first[0]]))), tuple(steps))


def _parity_blocks(X: np.ndarray, plan: _EncoderPlan, n_parity: int) -> np.ndarray:
    """Parity blocks ``(n_parity, Z, W)`` of packed systematic blocks ``X`` ``(kb, Z, W)``."""
    kb, Z, W = X.shape
    lam = np.zeros((len(plan.systematic), Z, W), dtype=np.uint8)
    for i, terms in enumerate(plan.systematic):
        for j, s in terms:
            lam[i] ^= _shift(X[j], s)
    out = np.zeros((n_parity, Z, W), dtype=np.uint8)
    col, x = plan.first
    out[col - kb] = _shift(np.bitwise_xor.reduce(lam[:_CORE], axis=0), (Z - x) % Z)
    for step in plan.steps:
        acc = lam[step.row].copy()
        for j, s in step.known:
            acc ^= _shift(out[j - kb], s)
        out[step.col - kb] = _shift(acc, (Z - step.shift) % Z)
    return out


def _peel(H: sp.csr_matrix, unknown: np.ndarray, needed: np.ndarray) -> np.ndarray:
    """Drop checks that cannot help: repeatedly remove an unknown, unneeded column that meets at most
    one remaining check, with that check. Returns the bool mask of the remaining checks; ``unknown``
    is updated in place."""
    Hc = H.tocsc()
    alive = np.ones(H.shape[0], dtype=bool)
    while True:
        degree = Hc.T @ alive.astype(np.int32)
        free = np.flatnonzero(unknown & ~needed & (degree <= 1))
        if free.size == 0:
            return alive
        sub = Hc[:, free]
        alive[sub.indices[alive[sub.indices]]] = False
        unknown[free] = False


def _inverse_map(code: Nr5gCode) -> _InverseMap:
    """The linear map of :meth:`Nr5gCode.message_bits` (see there)."""
    tx = code.transmitted_columns
    cols, first = np.unique(tx, return_index=True)
    src = np.full(code.n_mother, -1, dtype=np.int64)
    src[cols] = first
    msg = np.arange(code.K)
    direct, solved = msg[src[: code.K] >= 0], msg[src[: code.K] < 0]
    empty = np.zeros(0, dtype=np.int64)
    if solved.size == 0:
        return _InverseMap(direct, src[direct], solved, empty, None, np.zeros((0, 0), dtype=np.float32))
    not_injective = InputError(f"{code.name}: the E = {code.E} sent bits do not determine the K = {code.K} "
                               "message bits (the rate-matched code is not injective); use a larger E")
    if cols.size < code.K:
        raise not_injective
    known = np.zeros(code.n_mother, dtype=bool)
    known[cols] = True
    known[code.K : code.k_cb] = True  # fillers: known zeros
    unknown, needed = ~known, np.zeros(code.n_mother, dtype=bool)
    needed[solved] = True
    alive = _peel(code.H, unknown, needed)
    rows = np.flatnonzero(alive & (code.H @ unknown.astype(np.int32) > 0))
    U = np.flatnonzero(unknown)
    Hr = code.H[rows]
    # One elimination of [A^T | I] (A: the remaining checks on the unknown bits): its first r pivots
    # pick r independent checks P, and T1 = the right part has T1[:r] A[P]^T = I, so x = T1[:r]^T b_P
    # solves A[P] x = b_P; rows r.. of T1 span the null space of A: an unknown is determined iff
    # they are zero at it.
    R, piv = gf2_kernel.gf2_rref(np.hstack([Hr[:, U].T.toarray(), np.eye(U.size, dtype=np.uint8)]))
    r = int(np.searchsorted(piv, rows.size))
    T1 = R[:, rows.size :]
    pos = np.searchsorted(U, solved)
    if T1[r:, pos].any():
        raise not_injective
    Hp = Hr[piv[:r]]
    sent = cols[np.isin(cols, Hp.indices)]  # the sent columns the chosen checks read
    B = sp.csr_matrix(Hp[:, sent], dtype=np.uint8)
    T = np.ascontiguousarray(T1[:r, pos].T, dtype=np.float32)
    return _InverseMap(direct, src[direct], solved, src[sent], B, T)


# ---------------------------------------------------------------------- segmentation
class Segmentation(NamedTuple):
    """Code-block segmentation of ``B`` bits (§5.2.2).

    Attributes:
        B: bits in (transport block plus its CRC).
        C: number of code blocks.
        k_prime: ``K'``, bits per code block including its CRC (fillers excluded).
        crc_bits: ``L``, 24 (CRC24B) when ``C > 1``, else 0.
        Z: lifting size ``Z_c``.
        k_cb: ``K = 22 Z_c`` or ``10 Z_c`` (fillers included).
    """

    B: int
    C: int
    k_prime: int
    crc_bits: int
    Z: int
    k_cb: int


def segmentation(B: int, bg: int) -> Segmentation:
    """The §5.2.2 parameters for ``B`` bits on base graph ``bg``.

    Raises:
        InputError: ``B < 1``, bad ``bg``, or ``C`` does not divide ``B`` (38.212 needs ``K' = B'/C``
            whole; the transport block sizes of 38.214 §5.1.3.2 satisfy it).
    """
    bg, B = _check_bg(bg), _int(B, "B")
    if B < 1:
        raise InputError(f"segmentation needs B >= 1 bits, got {B}")
    kcb_max = _BG[bg][4]
    C, L = (1, 0) if B <= kcb_max else (math.ceil(B / (kcb_max - _CB_CRC)), _CB_CRC)
    if B % C:
        raise InputError(f"B = {B} bits do not split into C = {C} equal code blocks (38.212 §5.2.2 needs "
                         "K' = B'/C whole; use a 38.214 transport block size)")
    k_prime = B // C + L
    kb = _kb(bg, B)
    Z = next(z for z in LIFTING_SIZES if kb * z >= k_prime)
    return Segmentation(B, C, k_prime, L, Z, _BG[bg][2] * Z)


def transport_block_crc(A: int) -> Crc:
    """The transport-block CRC of §7.2.1: CRC24A if ``A > 3824``, else CRC16."""
    return Crc.from_name("crc24a" if _int(A, "A") > 3824 else "crc16")


def _rows(x: Any, name: str) -> tuple[np.ndarray, bool]:
    a = np.asarray(x)
    if a.ndim not in (1, 2) or a.shape[-1] < 1:
        raise InputError(f"{name} must have shape (bits,) or (S, bits), got {a.shape}")
    return _binary(a.reshape(-1, a.shape[-1]), name, a.shape[-1]), a.ndim == 1


def segment(b: Any, bg: int) -> np.ndarray:
    """Split ``(B,)`` or ``(S, B)`` bits (transport block plus its CRC) into code blocks:
    ``(C, K')`` or ``(S, C, K')`` uint8, each block followed by its CRC24B when ``C > 1``; the
    fillers are not included (they are :class:`Nr5gCode`'s).

    Raises:
        InputError: non-binary bits, bad shape, or a ``B`` that :func:`segmentation` refuses.
    """
    x, flat = _rows(b, "b")
    seg = segmentation(x.shape[1], bg)
    blocks = x.reshape(x.shape[0], seg.C, seg.B // seg.C)
    if seg.C > 1:
        crc = Crc.from_name("crc24b")
        blocks = crc.attach(blocks.reshape(-1, blocks.shape[2])).reshape(x.shape[0], seg.C, seg.k_prime)
    return blocks[0] if flat else blocks


def transport_block_to_code_blocks(tb: Any, bg: int) -> np.ndarray:
    """Attach the transport-block CRC (§7.2.1) to ``(A,)`` or ``(S, A)`` bits, then :func:`segment`:
    ``(C, K')`` or ``(S, C, K')`` uint8."""
    x, flat = _rows(tb, "tb")
    blocks = segment(transport_block_crc(x.shape[1]).attach(x), bg)
    return blocks[0] if flat else blocks


def desegment(blocks: Any) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`transport_block_to_code_blocks`: ``(C, K')`` or ``(S, C, K')`` code blocks
    -> ``(tb, ok)``, the ``(A,)`` / ``(S, A)`` transport block and whether every CRC (each block's
    CRC24B when ``C > 1``, then the transport block's) checks, bool ``()`` / ``(S,)``.

    Raises:
        InputError: bad shape or non-binary bits, or too few bits for a transport-block CRC.
    """
    a = np.asarray(blocks)
    if a.ndim not in (2, 3):
        raise InputError(f"blocks must have shape (C, K') or (S, C, K'), got {a.shape}")
    flat = a.ndim == 2
    x = _binary(a.reshape(-1, a.shape[-2], a.shape[-1]), "blocks", a.shape[-1], ndim=3)
    S, C, k_prime = x.shape
    ok = np.ones(S, dtype=bool)
    if C > 1:
        if k_prime <= _CB_CRC:
            raise InputError(f"code blocks of {k_prime} bits cannot carry a {_CB_CRC}-bit CRC")
        ok &= Crc.from_name("crc24b").check(x.reshape(S * C, k_prime)).reshape(S, C).all(axis=1)
        x = x[:, :, : k_prime - _CB_CRC]
    b = x.reshape(S, -1)
    L = 24 if b.shape[1] - 24 > 3824 else 16
    if b.shape[1] <= L:
        raise InputError(f"{b.shape[1]} bits are too few for a transport block and its {L}-bit CRC")
    ok &= transport_block_crc(b.shape[1] - L).check(b)
    tb = np.ascontiguousarray(b[:, : b.shape[1] - L])
    return (tb[0], ok[0]) if flat else (tb, ok)
