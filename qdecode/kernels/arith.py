"""Arithmetic shared by the float and fixed-point kernels (one code path for both).

``_scale(x, alpha, num, shift)`` multiplies a non-negative magnitude by the min-sum
scaling factor: ``x * alpha`` for floats, ``(x * num) >> shift`` (truncating) for
integers, selected at compile time by the type of ``x``. ``_clip(x, lim)`` saturates
symmetrically to ``[-lim, lim]``.
"""

from __future__ import annotations

import numba
from numba import types
from numba.extending import overload


def _scale(x, alpha, num, shift):  # pragma: no cover - replaced by the overload in jitted code
    raise NotImplementedError


@overload(_scale, jit_options={"cache": True})
def _scale_overload(x, alpha, num, shift):
    """alpha * x for floats; ``(x * num) >> shift`` for integers (x >= 0)."""
    if isinstance(x, types.Integer):
        return lambda x, alpha, num, shift: (x * num) >> shift
    return lambda x, alpha, num, shift: x * alpha


@numba.njit(cache=True, nogil=True, inline="always")
def _clip(x, lim):
    y = x if x < lim else lim  # selects, not branches: keeps lane loops vectorisable
    return y if y > -lim else -lim


