"""Fixed-point configuration of a generated decoder, derived from a fixed-point :class:`BpDecoder`.

:class:`RtlConfig` holds exactly the constants of the bit-exact contract with
:func:`qdecode.kernels.bp.minsum_flooding` (flooding min-sum on the compressed check state; the kernel takes
them as a :class:`~qdecode.kernels.bp_args.MinSumParams`):

* ``bits`` message width ``W``; ``msg_lim = 2^(W-1) - 1``; ``post_lim = 2^(W+1) - 1``;
* ``alpha_num`` in ``1 .. 256``: check magnitudes are scaled by ``(x * alpha_num) >> 8`` (truncating);
* ``beta_q >= 0``: offset subtracted after scaling, floored at 0;
* ``max_iter >= 1``; ``priors`` the quantised prior LLRs ``lambda_j`` (``|lambda_j| <= msg_lim``),
  baked into the design as constants.

Refused (``ValueError``): floating point, product-sum, the layered schedule, adaptive alpha
(``alpha = 0``; its per-iteration shift is not implemented in RTL).

:data:`MUTATIONS` are deliberate deviations from the contract, used to show that the test bench
catches wrong arithmetic; each is marked observable (the bench must report mismatches) or
equivalent (the rule cannot change hard decisions, iterations or convergence flags).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from qdecode.decoders.bp import ALPHA_SHIFT, BpDecoder
from qdecode.errors import InputError

#: name -> (observable, what the mutant does). Equivalent mutants must pass the bench.
MUTATIONS: dict[str, tuple[bool, str]] = {
    "alpha-truncated-shifts": (True, "scale as a sum of separately truncated shifts sum_k (x >> (8 - k))"),
    "alpha-round": (True, "scale with rounding (x * alpha_num + 128) >> 8 instead of truncation"),
    "msg-wrap": (True, "variable-to-check messages wrap (keep the low bits) instead of saturating"),
    "min2-zero": (True, "second minimum initialised to 0 instead of msg_lim"),
    "test-at-zero": (True, "convergence also tested before iteration 1"),
    "hard-negative": (True, "hard decision [posterior < 0] instead of [posterior <= 0]"),
    "argmin-last": (False, "ties at the minimum go to the last position (o1 == o2 then: equivalent)"),
}


@dataclasses.dataclass(frozen=True)
class RtlConfig:
    """Constants of one generated decoder (see the module docstring for the arithmetic)."""

    bits: int
    frac_bits: int
    alpha: float
    alpha_num: int
    beta_q: int
    max_iter: int
    priors: tuple[int, ...]
    mutation: str | None = None

    def __post_init__(self) -> None:
        if not 2 <= self.bits <= 24:
            raise InputError(f"RTL needs fixed-point messages with 2 <= bits <= 24, got {self.bits}")
        if not 0 <= self.frac_bits < self.bits:
            raise InputError(f"frac_bits must satisfy 0 <= frac_bits < bits={self.bits}, got {self.frac_bits}")
        if not 1 <= self.alpha_num <= 1 << ALPHA_SHIFT:
            raise InputError(f"alpha_num must lie in 1..{1 << ALPHA_SHIFT} (alpha in (0, 1]), got {self.alpha_num}")
        if self.beta_q < 0:
            raise InputError(f"beta_q must be >= 0, got {self.beta_q}")
        if self.max_iter < 1:
            raise InputError(f"max_iter must be >= 1, got {self.max_iter}")
        bad = [p for p in self.priors if abs(p) > self.msg_lim]
        if bad:
            raise InputError(f"prior {bad[0]} exceeds msg_lim {self.msg_lim} at {self.bits} bits")
        if self.mutation is not None and self.mutation not in MUTATIONS:
            raise InputError(f"unknown mutation {self.mutation!r}; known: {', '.join(MUTATIONS)}")

    @property
    def msg_lim(self) -> int:
        """Message saturation ``2^(bits-1) - 1`` (symmetric, so negation never overflows)."""
        return (1 << (self.bits - 1)) - 1

    @property
    def post_lim(self) -> int:
        """Posterior saturation ``2^(bits+1) - 1`` (posteriors are ``bits + 2`` wide)."""
        return (1 << (self.bits + 1)) - 1

    @property
    def mag_bits(self) -> int:
        """Width of a message magnitude, ``bits - 1``."""
        return self.bits - 1

    @property
    def iter_bits(self) -> int:
        """Width of the iteration counter (holds ``0 .. max_iter``)."""
        return max(1, int(self.max_iter).bit_length())

    def priors_sha256(self) -> str:
        """sha256 of the priors as little-endian int64 (compared with a vector set's ``priors_q.hex``)."""
        return priors_sha256(self.priors)

    def as_dict(self) -> dict[str, Any]:
        return {"bits": self.bits, "frac_bits": self.frac_bits, "alpha": self.alpha, "alpha_num": self.alpha_num,
                "alpha_shift": ALPHA_SHIFT, "beta_q": self.beta_q, "max_iter": self.max_iter,
                "msg_lim": self.msg_lim, "post_lim": self.post_lim, "schedule": "flooding", "method": "minsum",
                "mutation": self.mutation, "priors_sha256": self.priors_sha256()}


def priors_sha256(priors) -> str:
    return hashlib.sha256(np.asarray(priors, dtype="<i8").tobytes()).hexdigest()


def config_from_decoder(decoder: Any, *, mutation: str | None = None) -> RtlConfig:
    """The :class:`RtlConfig` of a fixed-point flooding min-sum :class:`BpDecoder` (its priors included).

    Raises:
        ValueError: not a BpDecoder, floating point, product-sum, layered, or adaptive alpha.
    """
    if not isinstance(decoder, BpDecoder):
        raise InputError(f"RTL export needs a fixed-point BpDecoder, got {type(decoder).__name__}")
    if not decoder.bits:
        raise InputError("RTL export needs a fixed-point decoder (bits > 0)")
    if decoder.method != 0:
        raise InputError("RTL export needs the min-sum method")
    if decoder.layered:
        raise InputError("RTL export implements the flooding schedule only (got layered)")
    if decoder.adaptive:
        raise InputError("RTL export does not implement adaptive alpha (alpha = 0); give a fixed alpha in (0, 1]")
    priors = tuple(int(x) for x in np.asarray(decoder.prior_llr[0]).tolist())
    return RtlConfig(bits=decoder.bits, frac_bits=decoder.frac_bits, alpha=float(decoder.alpha),
                     alpha_num=int(decoder.alpha_num), beta_q=int(decoder.beta), max_iter=int(decoder.max_iter),
                     priors=priors, mutation=mutation)
