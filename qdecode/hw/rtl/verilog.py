"""Verilog-2005 spelling helpers shared by the templates (constants, concatenations, headers).

Every generated file starts with :data:`HEADER` (a `` `timescale `` so that simulators agree on
time units, and `` `default_nettype none `` so that a typo in a generated name is an error, not
an implicit wire).
"""

from __future__ import annotations

from qdecode.errors import InputError

HEADER = "`timescale 1ns/1ps\n`default_nettype none\n"
FOOTER = "`default_nettype wire\n"


def uconst(value: int, width: int) -> str:
    """Unsigned sized decimal constant, e.g. ``7'd63``."""
    if value < 0 or value >> width:
        raise InputError(f"{value} does not fit {width} unsigned bits")
    return f"{width}'d{value}"


def sconst(value: int, width: int) -> str:
    """Signed sized constant: ``8'sd5`` or ``-8'sd5`` (never ``8'sd-5``)."""
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    if not lo <= value <= hi:
        raise InputError(f"{value} does not fit {width} signed bits")
    return f"-{width}'sd{-value}" if value < 0 else f"{width}'sd{value}"


def concat(parts: list[str]) -> str:
    """``{p[-1], ..., p[0]}``: element ``k`` of ``parts`` lands at the low end (``[k*w +: w]``)."""
    if not parts:
        raise InputError("empty concatenation")
    return parts[0] if len(parts) == 1 else "{" + ", ".join(reversed(parts)) + "}"
