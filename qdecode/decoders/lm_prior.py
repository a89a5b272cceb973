"""Byte-level language-model priors for sem-OSD: scoring with a fitted model.

Prior interface (what :class:`~qdecode.decoders.sem_osd.SemOsdDecoder` calls)::

    prior(context_bytes, noisy_block_llr) -> (nb, 256) float64 log-probabilities

``context_bytes``: the bytes before the block (most recent last; may be empty);
``noisy_block_llr``: the ``8 nb`` channel LLRs of the block's message bits, byte ``j`` in bits
``8j .. 8j+7`` LSB first (:mod:`qdecode.kernels.sem_osd`). Row ``j`` is a normalised
"posterior-ready" log-prior of byte ``j``: adding byte ``j``'s own channel log-evidence
(``sum_l (1 - 2 bit_l(b)) L_{8j+l} / 2``) gives its posterior marginal. A prior may also offer
``batch(contexts (S, c) uint8, context_lengths (S,), llr (S, 8 nb)) -> (S, nb, 256)`` (used when
present) and must have ``context_len`` (bytes of left context it uses) and ``label``. A neural
prior (e.g. a denoising byte transformer) plugs in with the same two methods.

:class:`NgramPrior`: interpolated Kneser-Ney byte n-gram (order 4 by default) with
forward-backward marginals over the block's bytes (:func:`qdecode.kernels.sem_osd.fb_prior`),
calibrated by a temperature fitted on held-out text. The kernels look the n-gram distributions
up in :meth:`KneserNey.dist_table` (every distribution of the model, built once per model and
temperature: 27 MB and a fraction of a second for the order-4 corpus model) instead of
evaluating them.

The corpus (CPython's ``pydoc_data.topics`` text, its 80 / 20 split) is
:mod:`qdecode.language_model.corpus`; the n-gram's training (counts, temperature) and its disk cache are
:mod:`qdecode.language_model.ngram`. This module keeps what decoding needs: :class:`KneserNey` scores with
fitted arrays (:meth:`KneserNey.train` and :func:`load_kneser_ney`, the cached corpus model, call
:mod:`qdecode.language_model.ngram`), and the priors. The names
``corpus_bytes`` and ``corpus_split`` are re-exported from :mod:`qdecode.language_model.corpus`;
:class:`LmPriorError` is :class:`qdecode.language_model.corpus.CorpusError`.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from qdecode.errors import InputError
from qdecode.kernels import sem_osd as ksem
from qdecode.kernels.threads import run_ranges
from qdecode.language_model import ngram
from qdecode.language_model.corpus import CorpusError as LmPriorError
from qdecode.language_model.corpus import corpus_bytes, corpus_split  # noqa: F401 - re-exported (__all__)

__all__ = ["LmPriorError", "BatchedPrior", "corpus_bytes", "corpus_split", "KneserNey", "load_kneser_ney",
           "NgramPrior", "ngram_prior"]

TABLE_MAX_BYTES = 64 << 20  # largest distribution table (KneserNey.dist_table) kept per model
_lock = threading.Lock()
_table_lock = threading.Lock()


class KneserNey:
    """Interpolated Kneser-Ney byte n-gram (one absolute discount per level, ``D = n1 / (n1 + 2 n2)``).

    ``arrays``: the model's :class:`~qdecode.kernels.sem_osd.NgramModel` (as :mod:`qdecode.kernels.sem_osd`
    describes it), passed whole to the kernels. :meth:`train` counts in numpy (seconds,
    :mod:`qdecode.language_model.ngram`); :meth:`dist` evaluates one context; ``inv_temp`` is ``1 / temperature``.
    """

    def __init__(self, order: int, arrays: ksem.NgramModel, inv_temp: float = 1.0) -> None:
        self.order = int(order)
        self.arrays = arrays
        self.inv_temp = float(inv_temp)

    @classmethod
    def train(cls, text: bytes, order: int) -> "KneserNey":
        """The model of ``text`` at ``order`` (:func:`qdecode.language_model.ngram.count_kneser_ney`),
        ``inv_temp`` 1."""
        return cls(order, ngram.count_kneser_ney(text, order))

    def dist_table(self) -> np.ndarray:
        """Every next-byte distribution of the model at its current temperature,
        ``(1 + contexts, 256)`` (:func:`qdecode.kernels.sem_osd.kn_table`), built at first use and
        kept; a ``(0, 256)`` array when it would exceed ``TABLE_MAX_BYTES`` (the kernels then
        evaluate distributions directly, with the same values)."""
        with _table_lock:
            cached = getattr(self, "_table", None)
            if cached is not None and cached[0] == self.inv_temp:
                return cached[1]
            rows = 1 + int(self.arrays.keys.size)
            if rows * 256 * 8 > TABLE_MAX_BYTES:
                tab = np.zeros((0, 256))
            else:
                tab = np.empty((rows, 256))
                ksem.kn_table(self.arrays, self.inv_temp, tab)
            self._table = (self.inv_temp, tab)
            return tab

    def dist_batch(self, contexts: np.ndarray, lengths: np.ndarray, inv_temp: float | None = None) -> np.ndarray:
        """Next-byte distributions ``(P, 256)`` after each context row (most recent byte last)."""
        ctx = np.ascontiguousarray(contexts, dtype=np.uint8)
        ln = np.ascontiguousarray(lengths, dtype=np.int64)
        out = np.empty((ctx.shape[0], 256))
        ksem.kn_dist_batch(ctx, ln, self.arrays, self.inv_temp if inv_temp is None else float(inv_temp), out)
        return out

    def dist(self, context: bytes) -> np.ndarray:
        """Next-byte distribution (256,) after ``context``."""
        c = np.frombuffer(bytes(context), dtype=np.uint8)[-max(self.order - 1, 1):]
        row = np.zeros((1, max(c.size, 1)), dtype=np.uint8)
        row[0, :c.size] = c
        return self.dist_batch(row, np.array([c.size]))[0]

    def _windows(self, text: bytes, max_positions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return ngram.context_windows(text, self.order, max_positions)

    def cross_entropy(self, text: bytes, max_positions: int = 50000) -> float:
        """Bits per byte of ``text`` under the (tempered) model, full contexts only."""
        ctx, ln, y = self._windows(text, max_positions)
        p = self.dist_batch(ctx, ln)
        return float(-np.mean(np.log2(p[np.arange(y.size), y])))


def load_kneser_ney(order: int = 4, *, cache: bool = True) -> KneserNey:
    """The KN model of ``order`` trained on the corpus' LM part (cached; temperature fitted;
    :func:`qdecode.language_model.ngram.corpus_kneser_ney`)."""
    model, inv_temp = ngram.corpus_kneser_ney(order, cache=cache)
    return KneserNey(order, model, inv_temp)


@functools.lru_cache(maxsize=8)
def _model(order: int) -> KneserNey:
    with _lock:
        return load_kneser_ney(order)


class BatchedPrior:
    """The one-block prior interface ``prior(context_bytes, noisy_block_llr) -> (nb, 256)`` of a prior
    that implements ``batch(contexts, context_lengths, llr)`` and ``context_len`` (mixin)."""

    def __call__(self, context_bytes: Any, noisy_block_llr: Any) -> np.ndarray:
        c = np.frombuffer(bytes(context_bytes), dtype=np.uint8)[-self.context_len:] if len(context_bytes) else \
            np.zeros(0, dtype=np.uint8)
        ctx = np.zeros((1, max(c.size, 1)), dtype=np.uint8)
        ctx[0, :c.size] = c
        llr = np.asarray(noisy_block_llr, dtype=np.float64).reshape(1, -1)
        return self.batch(ctx, np.array([c.size]), llr)[0]


class NgramPrior(BatchedPrior):
    """Kneser-Ney byte n-gram prior with forward-backward block marginals (module docstring).

    Args:
        order: n-gram order (2..6; 4 default).
        beam: forward states expanded per byte position.
        model: a trained :class:`KneserNey` (default: the corpus model of ``order``, cached).
        prune: forward states below ``prune`` times the best state are not expanded (0: exact
            for blocks of up to two bytes with ``beam=256``).
    """

    def __init__(self, order: int = 4, beam: int = 8, model: KneserNey | None = None, prune: float = 1e-12) -> None:
        if not 2 <= int(order) <= 6:
            raise InputError(f"n-gram order must be in 2..6, got {order}")
        if not 1 <= int(beam) <= 256:
            raise InputError(f"beam must be in 1..256, got {beam}")
        self.model = model if model is not None else _model(int(order))
        self.order = self.model.order
        self.beam = int(beam)
        self.prune = float(prune)
        self.context_len = self.order - 1

    @property
    def label(self) -> str:
        return f"kn{self.order}"

    def batch(self, contexts: Any, lengths: Any, llr: Any, *, threads: int | None = None) -> np.ndarray:
        """``(S, nb, 256)`` log-priors; ``contexts`` (S, c) uint8 with the valid bytes first
        (``contexts[s, :lengths[s]]``, most recent last)."""
        x = np.ascontiguousarray(llr, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] % 8 or x.shape[1] == 0:
            raise InputError(f"llr must have shape (blocks, 8 nb), got {x.shape}")
        S, nb = x.shape[0], x.shape[1] // 8
        ctx = np.ascontiguousarray(contexts, dtype=np.uint8)
        ln = np.ascontiguousarray(lengths, dtype=np.int64)
        if ctx.ndim != 2 or ctx.shape[0] != S or ln.shape != (S,) or np.any(ln < 0) or np.any(ln > ctx.shape[1]):
            raise InputError("contexts must be (S, c) uint8 with lengths (S,) in 0..c")
        if ctx.shape[1] == 0:
            ctx = np.zeros((S, 1), dtype=np.uint8)
        out = np.empty((S, nb, 256))
        calls = np.zeros(S, dtype=np.int64)
        if S:
            lm = ksem.TemperedNgram(self.model.arrays, self.model.inv_temp, self.model.dist_table())
            run_ranges(ksem.fb_prior_range, (ctx, ln, x, nb, max(self.order - 2, 0), self.beam, self.prune, lm, out,
                                             calls), S, threads)
        self.last_calls = calls
        return out


def ngram_prior(order: int = 4, beam: int = 8) -> NgramPrior:
    """Convenience constructor (the corpus model of ``order``)."""
    return NgramPrior(order=order, beam=beam)
