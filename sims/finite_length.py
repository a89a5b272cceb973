"""Normal approximation (Polyanskiy-Poor-Verdu 2010) to the best block error rate on the BI-AWGN channel.

For a binary code of length ``n`` carrying ``k`` bits over BPSK-AWGN,

    log2 M*(n, eps) ~= n C - sqrt(n V) Qinv(eps) + (1/2) log2 n
    =>  eps_NA(n, k) = Q( (n C - k + (1/2) log2 n) / sqrt(n V) ),

where ``C`` and ``V`` are the mean and variance (bits, bits^2) of the information density
of the binary-input AWGN channel with uniform inputs. Conditioning on ``x = +1``, the
channel LLR is ``L = 2/sigma^2 + (2/sigma) Z`` with ``Z ~ N(0, 1)`` and

    i(x; y) = 1 - log2(1 + exp(-L)).

``C = E[i]`` and ``V = Var[i]`` are computed with probabilists' Gauss-Hermite quadrature
(nodes/weights for the weight ``exp(-z^2/2)``). The operating point is Eb/N0 in dB with
``sigma^2 = 1 / (2 (k/n) Eb/N0)`` (the same convention as :mod:`qdecode.sims.channels`).

The NA is an approximation, not a bound: it tracks the RCU and meta-converse bounds closely
for BLER between about 1e-5 and 1e-1 and is optimistic far in the tail.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from qdecode.errors import InputError
from qdecode.sims.channels import ebn0_to_sigma2, finite_array

__all__ = ["biawgn_capacity_dispersion", "na_bler", "na_ebn0"]

_LN2 = math.log(2.0)


@functools.lru_cache(maxsize=8)
def _hermite(points: int) -> tuple[np.ndarray, np.ndarray]:
    z, w = np.polynomial.hermite_e.hermegauss(points)
    return z, w / math.sqrt(2.0 * math.pi)  # weights of E[f(Z)], Z ~ N(0, 1)


def biawgn_capacity_dispersion(sigma2: Any, points: int = 200) -> tuple[float, float]:
    """Capacity ``C`` (bit/use) and dispersion ``V`` (bit^2/use) of BI-AWGN at noise variance ``sigma2``.

    Args:
        sigma2: noise variance per real dimension, ``> 0`` and finite.
        points: Gauss-Hermite nodes (200 gives ~1e-8 accuracy for sigma2 >= 0.05).

    Raises:
        ValueError: ``sigma2`` not positive and finite, or ``points < 2``.

    Examples:
        >>> c, v = biawgn_capacity_dispersion(1.0)
        >>> round(c, 5), round(v, 5)
        (0.48594, 0.65968)
    """
    try:
        s2 = float(sigma2)
    except (TypeError, ValueError):
        raise InputError(f"sigma2 must be a positive number, got sigma2={sigma2!r}") from None
    if not (math.isfinite(s2) and s2 > 0):
        raise InputError(f"sigma2 must be positive and finite, got sigma2={sigma2!r}")
    if int(points) < 2:
        raise InputError(f"points must be >= 2, got points={points!r}")
    z, w = _hermite(int(points))
    llr = 2.0 / s2 + (2.0 / math.sqrt(s2)) * z
    dens = 1.0 - np.logaddexp(0.0, -llr) / _LN2
    c = float(np.sum(w * dens))
    v = float(np.sum(w * (dens - c) ** 2))
    return c, v


def _check_nk(n: Any, k: Any) -> tuple[int, int]:
    try:
        ni, ki = int(n), int(k)
    except (TypeError, ValueError):
        raise InputError(f"n and k must be integers, got n={n!r}, k={k!r}") from None
    if ni != n or ki != k or ni < 1 or ki < 1:
        raise InputError(f"n and k must be positive integers, got n={n!r}, k={k!r}")
    if ki > ni:
        raise InputError(f"k must not exceed n, got k={k!r} > n={n!r}")
    return ni, ki


def na_bler(n: int, k: int, ebn0_db: Any, points: int = 200) -> Any:
    """Normal-approximation BLER of the best ``(n, k)`` code on BI-AWGN at ``ebn0_db``.

    Args:
        n, k: block length and information bits (rate ``k/n`` sets the noise).
        ebn0_db: Eb/N0 in dB, a finite scalar or array.
        points: Gauss-Hermite nodes.

    Returns:
        float (scalar input) or float64 array of the same shape.

    Raises:
        ValueError: ``k > n``, non-positive ``n``/``k``, or a non-finite Eb/N0.

    Examples:
        >>> f"{na_bler(127, 64, 2.0):.3g}"
        '0.00731'
    """
    out = np.exp(_log_na_bler(n, k, ebn0_db, points))
    return float(out) if out.ndim == 0 else out


def _log_na_bler(n: Any, k: Any, ebn0_db: Any, points: int) -> np.ndarray:
    """Natural log of the NA BLER (finite far into the tail, where the BLER underflows)."""
    ni, ki = _check_nk(n, k)
    e = finite_array(ebn0_db, "ebn0_db")
    out = np.empty(e.shape, dtype=np.float64)
    for idx, val in np.ndenumerate(e):
        c, v = biawgn_capacity_dispersion(ebn0_to_sigma2(float(val), ki / ni), points)
        # V underflows to 0 only at very high SNR; keep the argument finite there.
        arg = (ni * c - ki + 0.5 * math.log2(ni)) / math.sqrt(max(ni * v, 1e-300))
        out[idx] = log_ndtr(-arg)
    return out


def na_ebn0(n: int, k: int, bler: float, lo: float = -5.0, hi: float = 15.0, points: int = 200) -> float:
    """Inverse of :func:`na_bler`: the Eb/N0 (dB) at which the NA BLER equals ``bler``.

    Solved with Brent's method on ``[lo, hi]`` dB (the NA BLER decreases in Eb/N0).

    Raises:
        ValueError: ``bler`` outside (0, 1), or not bracketed by ``[lo, hi]``.

    Examples:
        >>> round(na_ebn0(128, 64, 1e-4), 2)
        2.92
    """
    _check_nk(n, k)
    try:
        target = float(bler)
    except (TypeError, ValueError):
        raise InputError(f"bler must be a number in (0, 1), got bler={bler!r}") from None
    if not 0.0 < target < 1.0:
        raise InputError(f"bler must be in (0, 1), got bler={bler!r}")

    def gap(e: float) -> float:
        return float(_log_na_bler(n, k, e, points)) - math.log(target)

    g_lo, g_hi = gap(lo), gap(hi)
    if not (g_lo >= 0 >= g_hi):
        raise InputError(
            f"NA BLER {target:g} for (n={n}, k={k}) is not reached between {lo} and {hi} dB "
            f"(BLER there: {na_bler(n, k, lo, points):.3g} .. {na_bler(n, k, hi, points):.3g})"
        )
    return float(brentq(gap, lo, hi, xtol=1e-10, rtol=1e-12))
