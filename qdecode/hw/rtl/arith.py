"""Word widths and constant arithmetic shared by the RTL templates (pure Python, no Verilog text).

The generated decoder works on these integer formats (``bits`` = message width ``W``):

==================  ===========================  =================================================
quantity            range                        Verilog word
==================  ===========================  =================================================
message magnitude   ``0 .. msg_lim``             unsigned ``W - 1`` bits (``msg_lim = 2^(W-1) - 1``)
prior ``lambda_j``  ``-msg_lim .. msg_lim``      signed ``W`` bits
posterior sum       ``|S| <= (dv + 1) msg_lim``  signed :func:`sum_width` bits
posterior           ``-post_lim .. post_lim``    signed ``W + 2`` bits (``post_lim = 2^(W+1) - 1``)
==================  ===========================  =================================================

The min-sum scaling ``(x * alpha_num) >> 8`` is a constant multiplication; :func:`csd_terms`
writes ``alpha_num`` in canonical signed-digit form so that the product is a short sum of shifted
copies of ``x``, formed at full width and truncated once (never a sum of separately truncated
shifts, which loses up to one LSB per term).
"""

from __future__ import annotations

from qdecode.errors import InputError


def clog2(x: int) -> int:
    """``ceil(log2(x))`` for ``x >= 1`` (``clog2(1) = 0``)."""
    if x < 1:
        raise InputError(f"clog2 needs x >= 1, got {x}")
    return (int(x) - 1).bit_length()


def index_width(degree: int) -> int:
    """Bits of a position ``0 .. degree-1`` inside a check's row (at least 1)."""
    return max(1, clog2(max(1, degree)))


def unsigned_width(value: int) -> int:
    """Bits to hold ``0 .. value`` unsigned (at least 1)."""
    return max(1, int(value).bit_length())


def signed_width(bound: int) -> int:
    """Bits of a two's-complement word holding ``-bound .. bound``."""
    return int(bound).bit_length() + 1


def sum_width(degree: int, msg_lim: int) -> int:
    """Signed width of ``lambda + sum of degree check messages`` (each ``|.| <= msg_lim``)."""
    return signed_width((degree + 1) * msg_lim)


def csd_terms(num: int) -> list[tuple[int, int]]:
    """Canonical signed-digit form of ``num >= 0``: ``[(sign, shift), ...]`` with
    ``sum(sign * 2**shift) == num``, signs in ``{+1, -1}``, no two adjacent non-zero digits,
    highest shift first.

    Examples:
        >>> csd_terms(160)   # 0.625 = 128 + 32
        [(1, 7), (1, 5)]
        >>> csd_terms(224)   # 0.875 = 256 - 32
        [(1, 8), (-1, 5)]
        >>> csd_terms(0)
        []
    """
    if num < 0:
        raise InputError(f"csd_terms needs num >= 0, got {num}")
    digits: list[tuple[int, int]] = []
    x, k = int(num), 0
    while x:
        if x & 1:
            d = 2 - (x & 3)  # +1 when x = 1 mod 4, -1 when x = 3 mod 4
            digits.append((d, k))
            x -= d
        x >>= 1
        k += 1
    return digits[::-1]


def scale_reference(x: int, num: int, shift: int = 8) -> int:
    """The kernel's scaling ``(x * num) >> shift`` (the contract :func:`csd_terms` must meet)."""
    return (int(x) * int(num)) >> shift


def eval_terms(x: int, terms: list[tuple[int, int]], shift: int = 8) -> int:
    """``(sum(sign * (x << k))) >> shift``: what the emitted shift-add scaler computes."""
    return sum(s * (int(x) << k) for s, k in terms) >> shift
