"""Gap histograms in ``custom_counts``, and the post-selection curve they give.

A sweep run with ``--gap-histogram`` (:mod:`qdecode.sims.sampling`) counts every decoded shot in
one bin of its gap (the decoder's confidence in dB, :mod:`qdecode.decoders.confidence`), and the
errors among them, as additive ``custom_counts`` of the stats row. Bins are 1 dB wide:

* ``g<i>`` for ``0 <= i < GAP_CAP_DB``: shots whose gap lies in ``[i, i + 1)`` dB; ``g12``
  holds the gaps in ``[12, 13)``;
* ``g<GAP_CAP_DB>`` (``g100``): gaps of ``GAP_CAP_DB`` dB and above, ``inf`` (no other logical
  class) included;
* ``gneg``: negative gaps (a decoder whose choice is not the lightest correction it saw:
  ``pymatching-correlated``'s gap is that of the uncorrelated graph);
* ``gnan``: gaps the decoder cannot tell (``nan``);

and for each bin key ``K`` the key ``KE`` (``g12E``, ``gnegE``, ``gnanE``) counts the errors
among its shots. Bins without shots are not written. So, for a row of a gap-histogram sweep,
the shot bins sum to ``shots - discards`` (the decoded shots) and the ``E`` bins to ``errors``.
The bin scheme is recorded in the json_metadata as ``gap_bins = GAP_BINS_TAG``, which enters the
strong_id: rows with and without histograms (or with another scheme) never pool.

Post-selection by the gap, from the histogram alone. The bins are ordered by confidence:
``gnan < gneg < g0 < g1 < ... < g100`` (a shot whose confidence cannot be told is the first to
go). A threshold ``t`` (an integer number of dB, ``0 <= t <= GAP_CAP_DB``) keeps the bins ``g<i>``
with ``i >= t`` and discards the others; the threshold ``None`` keeps every bin. With ``n``
decoded shots and ``D`` shots the task's own detector postselection dropped::

    kept(t)        = sum of g<i> for i >= t
    kept_errors(t) = sum of g<i>E for i >= t
    discard(t)     = (D + n - kept(t)) / shots
    LER(t)         = kept_errors(t) / kept(t)

with the binomial band of :func:`qdecode.sims.stats.fit_binomial` on ``LER(t)`` (sinter's
convention). Because the bins are 1 dB wide, only the discard rates at bin edges are reachable:
:func:`at_max_discard` reports the discard rate actually achieved, at or below the one asked for.

Examples:
    >>> import numpy as np
    >>> counts = gap_bin_counts(np.array([12.5, 0.2, np.inf, np.nan, 250.0], dtype=np.float32),
    ...                         np.array([True, False, False, False, False]))
    >>> sorted(counts.items())
    [('g0', 1), ('g100', 2), ('g12', 1), ('g12E', 1), ('gnan', 1)]
    >>> [(p.threshold, p.kept, p.kept_errors) for p in discard_curve(5, 1, 0, counts)]
    [(None, 5, 1), (0, 4, 1), (1, 3, 1), (13, 2, 0)]
"""

from __future__ import annotations

import dataclasses
import re
from typing import Mapping, Sequence

import numpy as np

from qdecode.errors import InputError
from qdecode.sims.stats import Fit, fit_binomial

__all__ = ["GAP_CAP_DB", "GAP_BINS_TAG", "GAP_BINS_KEY", "gap_bin_counts", "has_gap_bins", "DiscardPoint",
           "discard_curve", "at_max_discard"]

#: Gaps of this many dB and above (and ``inf``) share the last bin ``g<GAP_CAP_DB>``.
GAP_CAP_DB = 100
#: The json_metadata key that records the bin scheme of a gap-histogram row (part of its strong_id).
GAP_BINS_KEY = "gap_bins"
#: Its value: 1 dB bins up to the cap.
GAP_BINS_TAG = f"1dB..{GAP_CAP_DB}"

_BIN_KEY = re.compile(r"g(\d+|neg|nan)")


def _bin_names() -> list[str]:
    """Bin keys in confidence order: ``gnan, gneg, g0, ..., g<GAP_CAP_DB>``."""
    return ["gnan", "gneg"] + [f"g{i}" for i in range(GAP_CAP_DB + 1)]


def gap_bin_counts(gaps: np.ndarray, errors: np.ndarray) -> dict[str, int]:
    """The gap histogram of one batch of decoded shots, as ``custom_counts``.

    Args:
        gaps: float ``(S,)`` gap of each decoded shot in dB (``inf`` and ``nan`` allowed).
        errors: bool ``(S,)`` whether the shot's predicted observables were wrong.

    Returns:
        ``{bin: shots, bin + "E": errors}`` for the bins with shots (module docstring); the
        ``E`` keys only where they are non-zero.
    """
    g = np.asarray(gaps, dtype=np.float64).reshape(-1)
    e = np.asarray(errors, dtype=bool).reshape(-1)
    if g.shape != e.shape:
        raise InputError(f"gaps {g.shape} and errors {e.shape} must have one entry per shot")
    index = np.empty(g.shape, dtype=np.int64)  # 0: nan, 1: negative, 2 + i: g<i>
    nan = np.isnan(g)
    index[nan] = 0
    finite = ~nan
    clipped = np.minimum(g[finite], GAP_CAP_DB)  # inf and >= cap -> the cap's bin
    index[finite] = np.where(clipped < 0, 1, 2 + np.floor(np.maximum(clipped, 0.0)).astype(np.int64))
    n = GAP_CAP_DB + 3
    shots = np.bincount(index, minlength=n)
    errs = np.bincount(index[e], minlength=n)
    out: dict[str, int] = {}
    for name, s, k in zip(_bin_names(), shots.tolist(), errs.tolist()):
        if s:
            out[name] = s
        if k:
            out[name + "E"] = k
    return out


def has_gap_bins(custom_counts: Mapping[str, int]) -> bool:
    """Whether ``custom_counts`` hold any gap bin (``g<i>``, ``gneg`` or ``gnan``)."""
    return any(_BIN_KEY.fullmatch(k) for k in custom_counts)


def _histogram(custom_counts: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """int64 ``(GAP_CAP_DB + 3,)`` shots and errors per bin, in confidence order."""
    names = _bin_names()
    shots = np.array([int(custom_counts.get(k, 0)) for k in names], dtype=np.int64)
    errors = np.array([int(custom_counts.get(k + "E", 0)) for k in names], dtype=np.int64)
    return shots, errors


@dataclasses.dataclass(frozen=True)
class DiscardPoint:
    """One post-selection threshold of a row's gap histogram.

    Attributes:
        threshold: keep the shots with gap >= this many dB (``None``: keep every decoded shot).
        shots: the row's shots (discards included).
        kept: shots kept (decoded and not below the threshold).
        kept_errors: errors among the kept shots.
        discard_rate: ``(shots - kept) / shots``, detector postselection's discards included.
        fit: :func:`~qdecode.sims.stats.fit_binomial` of ``kept_errors / kept`` (NaN without kept shots).
    """

    threshold: int | None
    shots: int
    kept: int
    kept_errors: int
    discard_rate: float
    fit: Fit


def discard_curve(shots: int, errors: int, discards: int, custom_counts: Mapping[str, int], *,
                  max_likelihood_factor: float = 1e3) -> list[DiscardPoint]:
    """The post-selection curve of one row: every threshold at which the kept set changes.

    Starts at ``None`` (nothing discarded by the gap) and goes up bin edge by bin edge; a
    threshold that keeps the same shots as the one before (an empty bin) is left out, and so is
    every threshold that keeps no shot. Kept-shot error rates carry the binomial band of
    ``max_likelihood_factor`` (sinter's 1000 by default).

    Raises:
        ValueError: the histogram does not add up to the row (``shots - discards`` shots and
            ``errors`` errors): a row without ``--gap-histogram``, or merged with one.
    """
    hist_shots, hist_errors = _histogram(custom_counts)
    decoded = shots - discards
    if int(hist_shots.sum()) != decoded or int(hist_errors.sum()) != errors:
        raise InputError(f"the gap histogram holds {int(hist_shots.sum())} shots and {int(hist_errors.sum())} "
                         f"errors, but the row has {decoded} decoded shots and {errors} errors "
                         f"(not a --gap-histogram row?)")
    # kept at bin j = everything from bin j up: suffix sums (index 0 = gnan keeps all decoded shots)
    kept = np.cumsum(hist_shots[::-1])[::-1]
    kept_err = np.cumsum(hist_errors[::-1])[::-1]
    out: list[DiscardPoint] = []
    last = -1
    for j in range(len(kept)):
        k = int(kept[j])
        if j == 1 or k == last or k == 0:  # j == 1 (gneg) is no integer threshold: it goes with g0's
            continue
        threshold = None if j == 0 else j - 2
        last = k
        ke = int(kept_err[j])
        fit = fit_binomial(num_shots=k, num_hits=ke, max_likelihood_factor=max_likelihood_factor)
        out.append(DiscardPoint(threshold, shots, k, ke, (shots - k) / shots if shots else float("nan"), fit))
    return out


def at_max_discard(points: Sequence[DiscardPoint], max_discard: float) -> DiscardPoint:
    """The point of the largest threshold whose discard rate is at most ``max_discard``.

    ``points`` is a :func:`discard_curve` (discard rates rise with the threshold). Bins are
    discrete, so the point's ``discard_rate`` is usually below ``max_discard``; the point
    without gap post-selection (threshold ``None``) when even the first bin edge discards more.

    Raises:
        ValueError: ``max_discard`` outside ``[0, 1]``, or no point at all.
    """
    if not 0.0 <= max_discard <= 1.0:
        raise InputError(f"the discard fraction must lie in [0, 1], got {max_discard:g}")
    if not points:
        raise InputError("no post-selection point (no kept shots)")
    ok = [p for p in points if p.discard_rate <= max_discard]
    return ok[-1] if ok else points[0]
