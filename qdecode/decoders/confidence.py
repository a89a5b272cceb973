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
* ``coset-ml``: the exact log-likelihood ratio of two logical *classes*, the answer's and the next
  likeliest, each the sum over all its errors (:mod:`qdecode.decoders.coset_ml`): the same formula with
  ``W`` = ``-ln P(s, class)``, where the other gaps weigh the lightest error of each class;
* ``pymatching``: the exact gap of minimum-weight matching on graphlike models where each
  observable has a consistent detector potential (surface and repetition codes), by ``k``
  extra matchings; up to PyMatching's weight discretisation;
* ``pymatching-correlated``: the same gap of the *uncorrelated* graph (a documented estimate:
  the correlated reweighting is not reflected in it);
* ``tesseract``: the gap of Tesseract's A* search (:mod:`qdecode.decoders.tesseract_decoder`): for
  each observable ``i`` one more search on the DEM with an extra detector on every error that
  flips ``L_i``, which forces ``L_i`` to differ from the best correction (``k + 1`` searches per
  distinct syndrome). Exact where Tesseract's search is (it equals ``mle``'s gap at code
  capacity); elsewhere the lightest other class Tesseract *found*. Its weights are those of its
  own model, whose errors merge only when they flip the same detectors and observables, so on
  DEMs with ``num_collisions > 0`` (stim's colour codes) colliding pairs count as logical errors.
  ``chromobius`` gives none (its module says why);
* ``relay-bp``: the gap between the lightest converged legs of two classes, among the legs it
  ran (:mod:`qdecode.decoders.relay_bp`); ``inf`` when all its converged legs found one class
  (no other class *found*), ``nan`` when none converged. ``relay-bp[ensemble=N]`` takes the same gap
  over the legs of all its chains;
* ``bposd`` / ``bposd-e``: the gap between the returned decision (BP's where it converged, else
  OSD's) and the lightest OSD candidate of another class among those the search tests; OSD then
  runs on every shot (:mod:`qdecode.decoders.bposd`). ``inf`` when every tested candidate is in
  the decision's class (``bposd-e`` at order 4 seldom finds another on circuit DEMs), ``nan`` when
  BP did not converge and the syndrome is outside ``H``'s column space. Exact (``mle``'s) with
  OSD-E of order ``n - rank H``. It can be negative where BP converged to a decision heavier than
  a tested candidate of another class, or with unequal priors (OSD ranks by ``ln(1/p)``, not ``W``);
* ``bplsd``: the same gap over the corrections LSD finds (one tested in-cluster OSD candidate per
  cluster; LSD then runs on every shot, :mod:`qdecode.decoders.bplsd`): the decision against the
  lightest found correction of another class, which changes the class of one cluster. ``inf`` when
  no cluster's search found another class (the zero syndrome has no cluster). Exact (``mle``'s)
  where one cluster spans the code and its OSD-E tests every correction. Refused with
  ``lsd_order = 0`` (LSD-0 tests one candidate per cluster);
* ``bp`` / ``bp-ps``: the posterior estimate :func:`posterior_gap_db` (BP searches no second
  class; ``nan`` where it did not converge).

A second, cheap confidence that is *not* a gap: ``bplsd[confidence=cluster]`` and ``bpuf`` report
the cluster statistic of arXiv:2510.05795 as ``-10 log10 Q`` in dB (:mod:`qdecode.decoders.bplsd`):
larger is more confident, so the same post-selection applies, but it is a heuristic score, not a
likelihood ratio between classes.

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

from qdecode.errors import CapabilityError

#: Decibels per neper of likelihood ratio: ``10 / ln(10)`` (a weight difference of ``ln 10`` is 10 dB).
DB_PER_NEPER = 10.0 / math.log(10.0)

#: Registry names whose decoders give a gap (the entries with ``has_confidence=True``; a test keeps
#: the two in step). Named in :class:`NoConfidenceError`'s message.
CONFIDENCE_DECODERS = ("mle", "pymatching", "pymatching-correlated", "tesseract", "relay-bp", "bposd", "bposd-e",
                       "bp", "bp-ps", "bplsd", "bpuf", "coset-ml")


class NoConfidenceError(CapabilityError):
    """The decoder has no confidence (``predict_with_confidence`` on a decoder without a gap; ask
    ``has_confidence`` first)."""


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


#: Seed of the random class codes of problems with more than 64 observables (:func:`class_codes`).
CLASS_CODE_SEED = 0x51DEC0DE


def class_codes(L) -> np.ndarray:
    """uint64 ``(n,)`` class code of each error mechanism: its row of ``L`` (``(k, n)`` 0/1) as 64 bits.

    The class code of an error ``e`` is the XOR of the codes of its flipped mechanisms, so two errors
    have equal codes iff they flip the same observables (``L e``), which is all a gap compares. For
    ``k <= 64`` bit ``i`` is observable ``i`` (exact); above, each observable gets a random 64-bit
    code (seed :data:`CLASS_CODE_SEED`), and two different classes share a code with probability
    ``2^-64``.

    Examples:
        >>> class_codes(np.array([[1, 0, 1], [0, 1, 1]])).tolist()
        [1, 2, 3]
    """
    import scipy.sparse as sp

    Lc = sp.coo_matrix(L, dtype=np.uint8)
    k, n = Lc.shape
    if k <= 64:
        obs_code = np.left_shift(np.uint64(1), np.arange(k, dtype=np.uint64))
    else:
        obs_code = np.random.default_rng(CLASS_CODE_SEED).integers(0, 2**64, size=k, dtype=np.uint64, endpoint=False)
    Lc.sum_duplicates()
    odd = Lc.data % 2 == 1
    out = np.zeros(n, dtype=np.uint64)
    np.bitwise_xor.at(out, Lc.col[odd], obs_code[Lc.row[odd]])
    return out


def observables_class(obs: np.ndarray) -> np.ndarray:
    """uint64 ``(S,)``: the class code (:func:`class_codes`) of a correction whose observables are ``obs``
    (``(S, k)`` 0/1), to compare with the codes of the candidates a decoder's search tracks.

    Examples:
        >>> observables_class(np.array([[0, 0], [1, 0], [1, 1]], np.uint8)).tolist()
        [0, 1, 3]
    """
    obs = np.asarray(obs)
    codes = class_codes(np.eye(obs.shape[1], dtype=np.uint8))
    return np.bitwise_xor.reduce(np.where(obs == 1, codes, np.uint64(0)), axis=1)


def correction_weight(errors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """float64 ``(S,)``: ``W(e) = sum_j e_j weights[j]`` of each row of ``errors`` (``(S, n)`` 0/1), summed in
    column order from 0.0 as the OSD and LSD kernels sum a candidate's, so that a decision equal to a tracked
    candidate has its weight bit for bit.

    Examples:
        >>> correction_weight(np.array([[1, 0, 1], [0, 0, 0]], np.uint8), np.array([0.5, 2.0, 1.0])).tolist()
        [1.5, 0.0]
    """
    errors = np.asarray(errors)
    if errors.shape[1] == 0:
        return np.zeros(errors.shape[0])
    return np.cumsum(np.where(errors == 1, weights, 0.0), axis=1)[:, -1]


def gallager_phi(x: np.ndarray) -> np.ndarray:
    """``phi(x) = -ln tanh(x / 2) = ln((1 + e^-x) / (1 - e^-x))`` for ``x >= 0`` (float64; ``phi(0) = inf``).

    Its own inverse; ``phi(sum_j phi(|l_j|))`` is the magnitude of the LLR of the parity of
    independent bits with LLRs ``l_j`` (the product-sum check rule).

    Examples:
        >>> x = np.array([0.5, 3.0])
        >>> np.allclose(gallager_phi(gallager_phi(x)), x), float(gallager_phi(np.array([0.0]))[0])
        (True, inf)
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log1p(np.exp(-x)) - np.log(-np.expm1(-x))


def posterior_gap_db(posteriors: np.ndarray, L, converged: np.ndarray) -> np.ndarray:
    """float32 ``(S,)`` the posterior estimate of the gap: ``min_i |LLR(L_i e)|`` in dB.

    For BP, which searches no second class. With the posterior LLRs ``l_j`` (float64 ``(S, n)``)
    taken as independent marginals, the LLR of observable ``i``'s parity ``L_i e`` has magnitude
    ``phi(sum_{j in L_i} phi(|l_j|))`` (:func:`gallager_phi`): how much likelier the decided value
    of observable ``i`` is than its flip. The minimum over the ``k`` observables estimates the gap
    (an estimate: a marginal ratio summed over all corrections, where the gap compares the two
    best). ``inf`` without observables; ``nan`` where ``converged`` (bool ``(S,)``) is False: BP then
    found no correction.

    Examples:
        >>> post = np.array([[-2.0, 3.0, 30.0], [1.0, 1.0, 1.0]])
        >>> [round(float(g), 2) for g in posterior_gap_db(post, np.array([[1, 1, 0]]), np.array([True, False]))]
        [7.35, nan]
    """
    import scipy.sparse as sp

    post = np.asarray(posteriors, dtype=np.float64)
    Lc = sp.csr_matrix(L, dtype=np.float64)
    S = post.shape[0]
    if Lc.shape[0] == 0:
        gap = np.full(S, np.inf)
    else:
        summed = np.asarray((Lc @ gallager_phi(np.abs(post)).T).T)  # (S, k)
        gap = gallager_phi(summed).min(axis=1) * DB_PER_NEPER
    gap[~np.asarray(converged, dtype=bool)] = np.nan
    return gap.astype(np.float32)
