"""A clock that jitted kernels can read: :func:`ticks`, and :func:`ticks_per_ns` to turn its counts into time.

Kernels that time each shot (the *wall* clock of a decoder's timed path,
``Decoder.predict_observables_timed``) read :func:`ticks` before and after the shot. In jitted code it
is the CPU's time-stamp counter, read with one instruction (x86-64 ``rdtsc`` through LLVM's
``readcyclecounter``; AArch64 the virtual counter ``cntvct_el0``), which costs about 10-30 ns and
does not change what the kernel computes. The counter runs at a constant rate on every CPU this
project targets (the "invariant TSC" of x86 since 2008; AArch64's generic timer by definition), so
ticks convert to time by one factor, :func:`ticks_per_ns`, measured once per process against
``time.perf_counter_ns`` (about 20 ms).

With ``NUMBA_DISABLE_JIT=1`` (kernels as their own reference) the Python body runs and returns
``time.perf_counter_ns()``; :func:`ticks_per_ns` then measures 1.0. Either way a difference of two
:func:`ticks` divided by :func:`ticks_per_ns` is nanoseconds.

Resolution: one tick (0.3-1 ns on x86; 1-40 ns on AArch64, whose counter runs at 25 MHz-1 GHz), plus
the read's own cost; the calibration's relative error is below 1e-4 (20 ms against perf_counter's
nanoseconds).
"""

from __future__ import annotations

import platform
import time

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

_MACHINE = platform.machine().lower()
_CALIBRATION_NS = 20_000_000


def ticks():
    """The time-stamp counter as int64 (jitted); ``time.perf_counter_ns()`` in Python (the reference)."""
    return np.int64(time.perf_counter_ns())


@intrinsic
def _read_counter(typingctx):  # noqa: ARG001 (numba passes the typing context to every intrinsic)
    """int64 ticks of the CPU's constant-rate counter (one instruction)."""
    del typingctx  # unused: the signature takes no arguments

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        if _MACHINE in ("aarch64", "arm64"):
            asm = ir.InlineAsm(ir.FunctionType(i64, []), "mrs $0, cntvct_el0", "=r", side_effect=True)
            return builder.call(asm, [])
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(i64, []))
        return builder.call(fn, [])

    return types.int64(), codegen


@overload(ticks, jit_options={"cache": True})
def _ticks_overload():
    """Jitted :func:`ticks`: the counter itself."""
    return lambda: _read_counter()


@numba.njit(cache=True, nogil=True)
def jitted_ticks():
    """:func:`ticks` as jitted code reads it (for the calibration and for Python callers that time kernels)."""
    return ticks()


_RATE: list[float] = []  # ticks per ns, measured once per process


def ticks_per_ns() -> float:
    """Ticks of :func:`ticks` per nanosecond, measured once per process against ``time.perf_counter_ns``.

    Examples:
        >>> rate = ticks_per_ns()
        >>> rate > 0
        True
    """
    if not _RATE:
        jitted_ticks()  # compile (or load) outside the measured interval
        c0, t0 = jitted_ticks(), time.perf_counter_ns()
        while time.perf_counter_ns() - t0 < _CALIBRATION_NS:
            pass
        c1, t1 = jitted_ticks(), time.perf_counter_ns()
        _RATE.append(float(c1 - c0) / float(t1 - t0))
    return _RATE[0]
