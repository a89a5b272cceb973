"""Classical binary-input channels: BPSK over AWGN, BSC, and Gilbert-Elliott burst channels.

Every channel is a small frozen dataclass whose ``transmit(codewords, rng)`` maps uint8
codewords ``(S, n)`` to float64 channel LLRs ``(S, n)`` with the project's sign convention
``llr = ln P(y | bit 0) / P(y | bit 1)`` (positive means bit 0; hard decision ``llr <= 0 -> 1``).
Parameters are validated at construction (``ValueError`` naming the parameter).

BPSK-AWGN conventions: bit ``c`` is sent as ``x = 1 - 2c`` (``E_s = 1``),
``y = x + sigma z`` with ``z ~ N(0, 1)``, ``N0 = 2 sigma^2``, ``E_b = E_s / R``, so

    sigma^2 = 1 / (2 R Eb/N0)        and        llr = 2 y / sigma^2.

Given the bit, ``llr ~ N(+-mu, 2 mu)`` with ``mu = 2 / sigma^2`` (the consistency condition).

Gilbert-Elliott (E. N. Gilbert, Bell Syst. Tech. J. 39(5):1253, 1960; E. O. Elliott,
Bell Syst. Tech. J. 42(5):1977, 1963): a two-state Markov chain per transmitted bit, good (G)
and bad (B), ``P(G -> B) = p_gb``, ``P(B -> G) = p_bg``; stationary ``P(B) = p_gb / (p_gb + p_bg)``,
mean burst (B-sojourn) length ``1 / p_bg``, mean gap ``1 / p_gb``. Each block starts in the
stationary distribution, independently of other blocks. Two variants:

* :class:`GilbertElliottBsc`: crossover ``eps_good`` / ``eps_bad`` by state.
* :class:`GilbertElliottAwgn`: BPSK with noise variance ``sigma_G^2`` or
  ``sigma_B^2 = sigma_G^2 10^(delta_db / 10)``; ``Eb/N0`` fixes either the *average* noise
  power ``pi_G sigma_G^2 + pi_B sigma_B^2`` (``reference="average"``, default) or the good
  state's (``reference="good"``).

LLRs are state-aware (``csi=True``: genie knowledge of the state, ``2y/sigma_state^2`` or
``+-ln((1-eps_state)/eps_state)``) or state-blind (``csi=False``: the memoryless average,
``2y/sigma_avg^2`` with the average noise power, or ``+-ln((1-eps_avg)/eps_avg)`` with the
average crossover ``pi_G eps_G + pi_B eps_B``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from qdecode.errors import InputError

__all__ = [
    "ebn0_to_sigma2",
    "BpskAwgn",
    "Bsc",
    "GilbertElliottBsc",
    "GilbertElliottAwgn",
    "gilbert_elliott_states",
]


# ----------------------------------------------------------------------------- validation
def finite_value(value: Any, name: str) -> float:
    """``value`` as a finite float (a one-line ``InputError`` naming ``name`` if it is not a finite real number)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a real number, got {name}={value!r}") from None
    if not math.isfinite(v):
        raise InputError(f"{name} must be finite, got {name}={value!r}")
    return v


def finite_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array whose entries are all finite (``ValueError`` naming ``name`` if not)."""
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a finite number or array, got {value!r}") from None
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be finite, got {value!r}")
    return a


def _open_unit(value: Any, name: str) -> float:
    v = finite_value(value, name)
    if not 0.0 < v < 1.0:
        raise InputError(f"{name} must be a probability strictly between 0 and 1, got {name}={value!r}")
    return v


def _transition(value: Any, name: str) -> float:
    v = finite_value(value, name)
    if not 0.0 < v <= 1.0:
        raise InputError(f"{name} must be a transition probability in (0, 1], got {name}={value!r}")
    return v


def _rate(value: Any) -> float:
    v = finite_value(value, "rate")
    if not 0.0 < v <= 1.0:
        raise InputError(f"rate must be the code rate k/n in (0, 1], got rate={value!r}")
    return v


def _codewords(codewords: Any) -> np.ndarray:
    c = np.asarray(codewords)
    if c.ndim != 2:
        raise InputError(f"codewords must be 2-D (shots, n), got shape {c.shape}")
    if c.size and not np.all((c == 0) | (c == 1)):
        raise InputError("codewords must be binary (0/1)")
    return c.astype(np.uint8, copy=False)


def as_generator(rng: Any) -> np.random.Generator:
    """``rng`` if it is a ``numpy.random.Generator``, else ``numpy.random.default_rng(rng)`` (a seed)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def ebn0_to_sigma2(ebn0_db: Any, rate: Any) -> Any:
    """Noise variance per real dimension for BPSK: ``1 / (2 R 10^(Eb/N0 / 10))``.

    The one definition of this convention (the channels below and the trainers use it). A scalar
    ``ebn0_db`` gives a ``float``; an array gives a float64 array of its shape (the trainers draw
    one Eb/N0 per row). Every value must be finite and ``rate`` in (0, 1].

    Examples:
        >>> round(ebn0_to_sigma2(0.0, 0.5), 12)
        1.0
        >>> ebn0_to_sigma2(np.array([[0.0], [10.0]]), 0.5).ravel().round(12).tolist()
        [1.0, 0.1]
    """
    r = _rate(rate)
    if np.ndim(ebn0_db) == 0:
        e = finite_value(ebn0_db, "ebn0_db")
        return 1.0 / (2.0 * r * 10.0 ** (e / 10.0))
    return 1.0 / (2.0 * r * 10.0 ** (finite_array(ebn0_db, "ebn0_db") / 10.0))


# ----------------------------------------------------------------------------- memoryless
@dataclasses.dataclass(frozen=True)
class BpskAwgn:
    """BPSK over AWGN at ``ebn0_db`` for a code of rate ``rate``.

    Attributes:
        ebn0_db: Eb/N0 in dB (finite).
        rate: code rate ``k / n`` in (0, 1].

    Examples:
        >>> ch = BpskAwgn(ebn0_db=0.0, rate=0.5)
        >>> ch.sigma2, ch.llr_mean
        (1.0, 2.0)
    """

    ebn0_db: float
    rate: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "ebn0_db", finite_value(self.ebn0_db, "ebn0_db"))
        object.__setattr__(self, "rate", _rate(self.rate))

    @property
    def sigma2(self) -> float:
        """Noise variance per real dimension, ``1 / (2 R Eb/N0)``."""
        return ebn0_to_sigma2(self.ebn0_db, self.rate)

    @property
    def esn0_db(self) -> float:
        """Es/N0 in dB, ``Eb/N0 + 10 log10 R``."""
        return self.ebn0_db + 10.0 * math.log10(self.rate)

    @property
    def llr_mean(self) -> float:
        """Mean LLR of a transmitted 0, ``mu = 2 / sigma^2`` (variance ``2 mu``)."""
        return 2.0 / self.sigma2

    def transmit(self, codewords: Any, rng: Any) -> np.ndarray:
        """uint8 ``(S, n)`` -> float64 LLRs ``(S, n)``: ``2 (1 - 2c + sigma z) / sigma^2``."""
        c = _codewords(codewords)
        s2 = self.sigma2
        y = 1.0 - 2.0 * c + math.sqrt(s2) * as_generator(rng).standard_normal(c.shape)
        return (2.0 / s2) * y


@dataclasses.dataclass(frozen=True)
class Bsc:
    """Binary symmetric channel with crossover probability ``p`` in (0, 1).

    LLR ``+-ln((1-p)/p)``: positive where the received bit is 0.
    """

    p: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _open_unit(self.p, "p"))

    @property
    def llr_magnitude(self) -> float:
        """``ln((1 - p) / p)``."""
        return math.log((1.0 - self.p) / self.p)

    def transmit(self, codewords: Any, rng: Any) -> np.ndarray:
        """uint8 ``(S, n)`` -> float64 LLRs ``(S, n)`` of the received (flipped w.p. ``p``) bits."""
        c = _codewords(codewords)
        received = c ^ (as_generator(rng).random(c.shape) < self.p)
        return np.where(received, -self.llr_magnitude, self.llr_magnitude)


# ----------------------------------------------------------------------------- Gilbert-Elliott
def gilbert_elliott_states(shape: tuple[int, int], p_gb: float, p_bg: float, rng: Any) -> np.ndarray:
    """Sample the per-bit channel states: bool ``(S, n)``, ``True`` = bad.

    Each row is an independent Markov chain started from the stationary distribution
    (``P(B) = p_gb / (p_gb + p_bg)``). Vectorised over rows; one pass over the ``n`` columns.
    """
    p_gb = _transition(p_gb, "p_gb")
    p_bg = _transition(p_bg, "p_bg")
    S, n = (int(v) for v in shape)
    g = as_generator(rng)
    states = np.zeros((S, n), dtype=bool)
    if n == 0:
        return states
    u = g.random((S, n))
    cur = u[:, 0] < p_gb / (p_gb + p_bg)
    states[:, 0] = cur
    for j in range(1, n):
        # bad stays bad w.p. 1 - p_bg; good turns bad w.p. p_gb
        cur = np.where(cur, u[:, j] >= p_bg, u[:, j] < p_gb)
        states[:, j] = cur
    return states


@dataclasses.dataclass(frozen=True)
class _GeMarkov:
    p_gb: float
    p_bg: float

    def _check_markov(self) -> None:
        object.__setattr__(self, "p_gb", _transition(self.p_gb, "p_gb"))
        object.__setattr__(self, "p_bg", _transition(self.p_bg, "p_bg"))

    @property
    def pi_bad(self) -> float:
        """Stationary probability of the bad state, ``p_gb / (p_gb + p_bg)``."""
        return self.p_gb / (self.p_gb + self.p_bg)

    @property
    def mean_burst(self) -> float:
        """Mean sojourn in the bad state, ``1 / p_bg`` bits."""
        return 1.0 / self.p_bg

    def states(self, shape: tuple[int, int], rng: Any) -> np.ndarray:
        """bool ``(S, n)`` bad-state indicators (see :func:`gilbert_elliott_states`)."""
        return gilbert_elliott_states(shape, self.p_gb, self.p_bg, rng)

    def transmit(self, codewords: Any, rng: Any) -> np.ndarray:
        """uint8 ``(S, n)`` -> float64 LLRs ``(S, n)`` (``transmit_with_states`` without the states)."""
        llr, _ = self.transmit_with_states(codewords, rng)
        return llr


@dataclasses.dataclass(frozen=True)
class GilbertElliottBsc(_GeMarkov):
    """Gilbert-Elliott channel with BSC states.

    Attributes:
        p_gb: P(good -> bad) per bit, in (0, 1].
        p_bg: P(bad -> good) per bit, in (0, 1].
        eps_good: crossover probability in the good state, in (0, 1).
        eps_bad: crossover probability in the bad state, in (0, 1).
        csi: state-aware LLRs (``True``) or state-blind LLRs from the average crossover.
    """

    eps_good: float = 1e-3
    eps_bad: float = 0.2
    csi: bool = True

    def __post_init__(self) -> None:
        self._check_markov()
        object.__setattr__(self, "eps_good", _open_unit(self.eps_good, "eps_good"))
        object.__setattr__(self, "eps_bad", _open_unit(self.eps_bad, "eps_bad"))
        object.__setattr__(self, "csi", bool(self.csi))

    @property
    def eps_average(self) -> float:
        """Average crossover ``pi_G eps_good + pi_B eps_bad``."""
        return (1.0 - self.pi_bad) * self.eps_good + self.pi_bad * self.eps_bad

    def transmit_with_states(self, codewords: Any, rng: Any) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`transmit`, also returning the bool ``(S, n)`` bad-state mask."""
        c = _codewords(codewords)
        g = as_generator(rng)
        bad = self.states(c.shape, g)
        eps = np.where(bad, self.eps_bad, self.eps_good)
        received = c ^ (g.random(c.shape) < eps)
        if self.csi:
            mag = np.log((1.0 - eps) / eps)
        else:
            e = self.eps_average
            mag = np.full(c.shape, math.log((1.0 - e) / e))
        return np.where(received, -mag, mag), bad


@dataclasses.dataclass(frozen=True)
class GilbertElliottAwgn(_GeMarkov):
    """Gilbert-Elliott channel with BPSK-AWGN states of different noise power.

    Attributes:
        p_gb: P(good -> bad) per bit, in (0, 1].
        p_bg: P(bad -> good) per bit, in (0, 1].
        ebn0_db: Eb/N0 in dB of the reference noise power (finite).
        rate: code rate in (0, 1].
        delta_db: how much noisier the bad state is, ``sigma_B^2 / sigma_G^2`` in dB (>= 0).
        csi: state-aware (``2y/sigma_state^2``) or state-blind (``2y/sigma_avg^2``) LLRs.
        reference: ``"average"`` (Eb/N0 of the average noise power) or ``"good"`` (of the good state).
    """

    ebn0_db: float = 4.0
    rate: float = 0.5
    delta_db: float = 10.0
    csi: bool = True
    reference: str = "average"

    def __post_init__(self) -> None:
        self._check_markov()
        object.__setattr__(self, "ebn0_db", finite_value(self.ebn0_db, "ebn0_db"))
        object.__setattr__(self, "rate", _rate(self.rate))
        delta = finite_value(self.delta_db, "delta_db")
        if delta < 0:
            raise InputError(f"delta_db must be >= 0 (the bad state is the noisier one), "
                             f"got delta_db={self.delta_db!r}")
        object.__setattr__(self, "delta_db", delta)
        object.__setattr__(self, "csi", bool(self.csi))
        if self.reference not in ("average", "good"):
            raise InputError(f"reference must be 'average' or 'good', got reference={self.reference!r}")

    @property
    def sigma2_good(self) -> float:
        """Noise variance in the good state."""
        s2 = ebn0_to_sigma2(self.ebn0_db, self.rate)
        if self.reference == "good":
            return s2
        ratio = 10.0 ** (self.delta_db / 10.0)
        return s2 / ((1.0 - self.pi_bad) + self.pi_bad * ratio)

    @property
    def sigma2_bad(self) -> float:
        """Noise variance in the bad state, ``sigma_G^2 10^(delta_db/10)``."""
        return self.sigma2_good * 10.0 ** (self.delta_db / 10.0)

    @property
    def sigma2_average(self) -> float:
        """Stationary average noise variance ``pi_G sigma_G^2 + pi_B sigma_B^2``."""
        return (1.0 - self.pi_bad) * self.sigma2_good + self.pi_bad * self.sigma2_bad

    def transmit_with_states(self, codewords: Any, rng: Any) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`transmit`, also returning the bool ``(S, n)`` bad-state mask."""
        c = _codewords(codewords)
        g = as_generator(rng)
        bad = self.states(c.shape, g)
        s2 = np.where(bad, self.sigma2_bad, self.sigma2_good)
        y = 1.0 - 2.0 * c + np.sqrt(s2) * g.standard_normal(c.shape)
        if self.csi:
            return 2.0 * y / s2, bad
        return (2.0 / self.sigma2_average) * y, bad
