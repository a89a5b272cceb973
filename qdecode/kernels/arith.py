"""Arithmetic shared by the float and fixed-point kernels (one code path for both).

``sat_add(a, b)`` / ``sat_sub(a, b)`` add and subtract two integers of one type with saturation at that
type's range (LLVM's ``llvm.sadd.sat`` / ``llvm.ssub.sat``: one ``vpaddsb`` / ``vpsubsb`` per 64 int8 lanes on
AVX-512, where a widen-clip-narrow sequence costs five instructions at half the width).

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
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

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




def as_type_of(x, like):
    """``x`` cast to the type of the scalar ``like`` (integers wrap, floats truncate toward zero, as numba's
    casts). The Python body is the reference; jitted code runs :func:`_as_type_of_overload`."""
    t = np.dtype(type(numba_scalar(like))).type
    x = numba_scalar(x)
    if issubclass(t, np.integer) and isinstance(x, (np.integer, np.bool_)):
        return t(np.int64(x) if isinstance(x, np.bool_) else x)  # numpy scalar -> scalar casts wrap
    return t(x)


@overload(as_type_of, inline="always")
def _as_type_of_overload(x, like):
    cast = numba.np.numpy_support.as_dtype(like).type
    return lambda x, like: cast(x)


def _saturate(v, t):
    """The Python integer ``v`` saturated to the range of the numpy integer type ``t``, as ``t``."""
    info = np.iinfo(t)
    return t(min(max(int(v), int(info.min)), int(info.max)))


def sat_add(a, b):
    """``a + b`` saturated to the range of their common signed integer type (``a``, ``b`` numpy integers of one
    type). The Python body is the reference; jitted code runs ``llvm.sadd.sat`` (:func:`_sat_add_overload`)."""
    return _saturate(int(a) + int(b), type(a))


def sat_sub(a, b):
    """``a - b`` saturated to the range of their common signed integer type; jitted: ``llvm.ssub.sat``."""
    return _saturate(int(a) - int(b), type(a))


def _sat_intrinsic(name):
    """An intrinsic ``f(a, b)`` calling ``llvm.<name>.sat`` on two signed integers of one type."""

    @intrinsic
    def sat_op(typingctx, a, b):
        if not (isinstance(a, types.Integer) and a.signed and a == b):
            return None
        sig = a(a, b)

        def codegen(context, builder, signature, args):
            ty = context.get_value_type(signature.return_type)
            fn = builder.module.declare_intrinsic(f"llvm.{name}.sat", [ty], ir.FunctionType(ty, [ty, ty]))
            return builder.call(fn, args)

        return sig, codegen

    return sat_op


_sadd_sat = _sat_intrinsic("sadd")
_ssub_sat = _sat_intrinsic("ssub")


@overload(sat_add)
def _sat_add_overload(a, b):
    if isinstance(a, types.Integer) and a.signed and a == b:
        return lambda a, b: _sadd_sat(a, b)
    return None


@overload(sat_sub)
def _sat_sub_overload(a, b):
    if isinstance(a, types.Integer) and a.signed and a == b:
        return lambda a, b: _ssub_sat(a, b)
    return None
