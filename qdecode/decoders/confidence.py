"""Soft output: the *gap* of a decoded shot, in dB, and the names that go with it.

The gap is the one unit of confidence in qdecode. With mechanism weights
``w_j = ln((1 - p_j) / p_j)`` and ``W(e) = sum_j w_j e_j`` (so ``P(e) ~ exp(-W(e))``), let
``e_best`` be the best correction a decoder found and ``e_other`` the best correction it found in a
*different logical class* (``L e_other != L e_best`` mod 2 in at least one observable). Then::

    gap_db = (W(e_other) - W(e_best)) * 10 / ln(10)

the log-likelihood ratio of the two corrections in decibels (10 dB: the best correction is ten
times likelier than any correction of another class). Conventions:

* ``inf`` where no other class exists: no observable can be flipped consistently with the
  syndrome (``k = 0``, or observables that the syndrome determines);
* ``nan`` where the decoder cannot tell (``pymatching`` on a graph where an observable has no
  consistent detector potential, see :mod:`qdecode.decoders.matching_gap`);
* ``0`` where the decoder's choice between two classes is a tie.

For ``k > 1`` observables "a different class" means *any* observable differs. The lightest such
correction is found one observable at a time: for each ``i`` the lightest correction with
observable ``i`` flipped relative to ``e_best`` (the other observables free), and the minimum over
``i``. That minimum is exactly the lightest correction of any other class, since every such
correction differs from ``e_best`` in some observable ``i`` and so is a candidate for that ``i``.
Hence ``k`` extra searches per shot (``k + 1`` in all).

Which decoders give one: the registry entries with ``has_confidence=True``
(:class:`qdecode.decoders.params.DecoderEntry`; the same flag is the class attribute
:attr:`Decoder.has_confidence <qdecode.decoders.base.Decoder.has_confidence>`), listed in
:data:`CONFIDENCE_DECODERS`:

* ``mle``: the exact gap (integer programs: one per observable after the best one);
* ``pymatching``: the exact gap of minimum-weight matching on graphlike models where each
  observable has a consistent detector potential (surface and repetition codes), by ``k``
  extra matchings; up to PyMatching's weight discretisation;
* ``pymatching-correlated``: the same gap of the *uncorrelated* graph (a documented estimate:
  the correlated reweighting is not reflected in it).

Any other decoder raises :class:`NoConfidenceError` (a ``ValueError``: the CLI reports it as one
line, exit status 2) from ``predict_with_confidence``.

Examples:
    >>> import numpy as np
    >>> gap_db(np.array([1.0, 2.0, 0.5]), np.array([1.0 + np.log(10), np.inf, np.nan]))
    array([10., inf, nan], dtype=float32)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

#: Decibels per neper of likelihood ratio: ``10 / ln(10)`` (a weight difference of ``ln 10`` is 10 dB).
DB_PER_NEPER = 10.0 / math.log(10.0)

#: Registry names whose decoders give a gap (the entries with ``has_confidence=True``; a test keeps
#: the two in step). Named in :class:`NoConfidenceError`'s message.
CONFIDENCE_DECODERS = ("mle", "pymatching", "pymatching-correlated")


class NoConfidenceError(ValueError):
    """The decoder has no confidence (``predict_with_confidence`` on a decoder without a gap)."""


class ConfidentPrediction(NamedTuple):
    """What ``predict_with_confidence`` returns (a tuple: ``obs, gap = decoder.predict_with_confidence(s)``).

    Attributes:
        observables: uint8 ``(S, k)`` predicted observable flips (bit-packed ``(S, ceil(k/8))``
            from the packed variant), the same as ``predict_observables_batch``.
        gap_db: float32 ``(S,)`` gap of each shot in dB (module docstring); ``inf``: no other
            class; ``nan``: the decoder cannot tell.
    """

    observables: np.ndarray
    gap_db: np.ndarray


def gap_db(weight_best: np.ndarray, weight_other: np.ndarray) -> np.ndarray:
    """float32 ``(S,)`` ``(weight_other - weight_best) * 10 / ln 10`` from float64 ``(S,)`` weights.

    ``weight_other = inf`` (no other class) gives ``inf``, a ``nan`` weight gives ``nan``.
    """
    wb = np.asarray(weight_best, dtype=np.float64)
    wo = np.asarray(weight_other, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf (no best either) is nan, as it should be
        return ((wo - wb) * DB_PER_NEPER).astype(np.float32)


def no_confidence_error(decoder: object) -> NoConfidenceError:
    """The one-line error for ``decoder`` (an instance or a name) that has no confidence."""
    name = decoder if isinstance(decoder, str) else type(decoder).__name__
    return NoConfidenceError(f"decoder {name} gives no confidence (gap); decoders that do: "
                             f"{', '.join(CONFIDENCE_DECODERS)}")
