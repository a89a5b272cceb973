"""PAC codes: polarization-adjusted convolutional codes (Arikan 2019, arXiv:1908.09594).

A PAC code is a polar code with a rate-1 convolutional pre-transform between the rate
profile and the polar transform::

    data (k bits) -> v (N bits: v_A = data, v_F = 0)          rate profile A
                  -> u_i = sum_{j=0}^{M} c_j v_{i-j} mod 2    convolution (v_{<0} = 0)
                  -> x = u G_N                                polar transform

so ``G_PAC = (T G_N)[A, :]`` with ``T`` the upper-triangular Toeplitz matrix
``T[i, i + j] = c_j``. The SC / list decoders follow ``u`` along the polar tree while
tracking the convolution state (the last ``M`` bits of ``v``) per path: at a frozen leaf
``u_i = sum_{j>=1} c_j v_{i-j}`` is known, at an information leaf both values of ``v_i`` are
tried (see :mod:`qdecode.kernels.polar`).

Polynomial bit order: the integer ``poly`` lists ``c_0 .. c_M`` from its most significant
set bit down to bit 0, so the default ``0o133 = 0b1011011`` (91) is
``c = (1, 0, 1, 1, 0, 1, 1)`` (memory ``M = 6``), the polynomial of Arikan's paper and of
CRISP's ``pac_code.py`` (``-g 91``). ``c_0 = 1`` always (the top bit), which makes ``T``
invertible.

Rate profiles: ``"rm"`` (the ``K`` indices of largest ``wt(i)``, ties by Bhattacharyya
order, as in Arikan's paper) or ``"5g"`` / ``"bhattacharyya"`` (the polar constructions of
:mod:`qdecode.codes.polar`).

Examples:
    >>> c = PacCode.from_profile(32, 16)
    >>> c.conv, c.d
    ((1, 0, 1, 1, 0, 1, 1), 8)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from qdecode.errors import InputError

from .crc import Crc
from .polar import PolarCode, info_set

__all__ = ["DEFAULT_POLY", "PacCode", "poly_coefficients"]

DEFAULT_POLY = 0o133


def poly_coefficients(poly: int) -> tuple[int, ...]:
    """``(c_0, .., c_M)`` of a generator integer, most significant set bit first.

    >>> poly_coefficients(0o133)
    (1, 0, 1, 1, 0, 1, 1)

    Raises:
        ValueError: not a positive integer, or wider than 64 bits.
    """
    if isinstance(poly, bool) or not isinstance(poly, (int, np.integer)) or poly < 1:
        raise InputError(f"PAC polynomial must be a positive integer (e.g. 0o133), got {poly!r}")
    poly = int(poly)
    if poly.bit_length() > 64:
        raise InputError(f"PAC polynomial {poly:#o} has memory above 63")
    return tuple((poly >> b) & 1 for b in range(poly.bit_length() - 1, -1, -1))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PacCode(PolarCode):
    """A PAC code: a :class:`~qdecode.codes.polar.PolarCode` whose ``conv`` is the pre-transform.

    Build it with :meth:`from_profile`; ``poly`` holds the generator integer (``conv`` its
    coefficients, see :func:`poly_coefficients`). Everything else (``G``, ``H``, ``encode``,
    ``extract``, ``d``) is inherited.
    """

    poly: int = DEFAULT_POLY

    def __post_init__(self) -> None:
        coeffs = poly_coefficients(self.poly)
        if tuple(self.conv) not in ((1,), coeffs):
            raise InputError(f"conv {tuple(self.conv)} does not match poly {self.poly:#o}")
        object.__setattr__(self, "conv", coeffs)
        super().__post_init__()

    @classmethod
    def from_profile(
        cls,
        N: int,
        k: int,
        profile: str = "rm",
        *,
        poly: int = DEFAULT_POLY,
        crc: Crc | str | None = None,
        design_ebn0_db: float = 0.0,
        name: str = "",
    ) -> "PacCode":
        """PAC code with ``k`` data bits (plus CRC bits) on the rate profile ``profile``.

        Args:
            N: length, a power of two.
            k: data bits (``k + r <= N``).
            profile: ``"rm"`` (default), ``"5g"`` or ``"bhattacharyya"``.
            poly: convolution generator (default ``0o133``), bit order as in :func:`poly_coefficients`.
            crc: optional CRC (a :class:`Crc` or a 5G name) on the data bits.
            design_ebn0_db: design point of the Bhattacharyya profile / RM tie-break.

        Raises:
            ValueError: bad ``N``, ``k``, profile or polynomial.
        """
        coeffs = poly_coefficients(poly)
        crc_obj = Crc.from_name(crc) if isinstance(crc, str) else crc
        r = crc_obj.degree if crc_obj is not None else 0
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        if k + r > N:
            raise InputError(f"k + crc bits = {k} + {r} exceeds the length N = {N}")
        A = info_set(N, k + r, profile, design_ebn0_db=design_ebn0_db)
        label = f"{str(profile).lower()} profile, g={int(poly):#o}" + (f"+{crc_obj.name}" if crc_obj else "")
        return cls(N, A, crc=crc_obj, conv=coeffs, name=name, construction=label, poly=int(poly))

    @property
    def memory(self) -> int:
        """Convolution memory ``M`` (= ``len(conv) - 1``)."""
        return len(self.conv) - 1
