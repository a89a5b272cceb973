"""Arithmetic shared by the float and fixed-point kernels (one code path for both).

``scale(x, alpha, num, shift)`` multiplies a non-negative magnitude by the min-sum
scaling factor: ``x * alpha`` for floats, ``(x * num) >> shift`` (truncating) for
integers, selected at compile time by the type of ``x``. ``clip(x, lim)`` saturates
symmetrically to ``[-lim, lim]``.

Kernels are their own reference: a helper that jitted code gets through ``numba.extending.overload``
(the implementation chosen by numba type while compiling) also has a plain Python body, which is the
reference, chosen by the runtime type of its arguments. With ``NUMBA_DISABLE_JIT=1`` every kernel runs
as Python through those bodies (``tests/kernels/test_jit_off.py`` checks both modes agree bit for bit).
:func:`numba_scalar` types a Python scalar as numba does (``int`` -> int64, ``float`` -> float64), so
that the Python bodies promote as the jitted code does (numpy 2 treats Python scalars as weakly typed).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

_INT64_MIN = -(1 << 63)


def numba_scalar(x):
    """``x`` with the type numba gives it: a Python ``bool`` / ``int`` / ``float`` as ``np.bool_`` / ``np.int64``
    / ``np.float64``; numpy scalars (and anything else) unchanged. Python-mode helper of the stubs' bodies."""
    if isinstance(x, bool):
        return np.bool_(x)
    if isinstance(x, int):
        return np.int64(x)
    if isinstance(x, float):
        return np.float64(x)
    return x


def wrap_int64(v):
    """The Python integer ``v`` as int64 with two's-complement wraparound (numba's int64 arithmetic)."""
    return np.int64(((int(v) - _INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + _INT64_MIN)


def scale(x, alpha, num, shift):
    """``alpha * x`` for floats; ``(x * num) >> shift`` (int64, as numba promotes the integer operands) for
    integers (x >= 0). The Python body is the reference; jitted code runs :func:`_scale_overload`."""
    if isinstance(x, (int, np.integer)):
        return np.int64(int(wrap_int64(int(x) * int(num))) >> int(shift))
    return numba_scalar(x) * numba_scalar(alpha)


@overload(scale, jit_options={"cache": True})
def _scale_overload(x, alpha, num, shift):
    """alpha * x for floats; ``(x * num) >> shift`` for integers (x >= 0)."""
    if isinstance(x, types.Integer):
        return lambda x, alpha, num, shift: (x * num) >> shift
    return lambda x, alpha, num, shift: x * alpha


@numba.njit(cache=True, nogil=True, inline="always")
def clip(x, lim):
    """``x`` saturated symmetrically to ``[-lim, lim]`` (float or integer, as selects)."""
    y = x if x < lim else lim  # selects, not branches: keeps lane loops vectorisable
    return y if y > -lim else -lim


