"""Byte-level language-model priors for sem-OSD, and the offline English corpus they learn from.

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

Corpus (:func:`corpus_bytes`, :func:`corpus_split`): the documentation text shipped with CPython
(``pydoc_data.topics.topics``, values joined in sorted-key order), restricted to printable ASCII
(0x20-0x7E) and newlines. The first 80 % is the LM's part (its first 90 % for counts, the last
10 % to fit the temperature); the last 20 % is the channel-test text that the sweeps' ``text``
source transmits. Nothing is downloaded.

Counts are trained at first use (about a second) and cached as ``.npz`` under
``$QDECODE_LM_CACHE`` if set, else ``$XDG_CACHE_HOME/qdecode/lm`` (``~/.cache/qdecode/lm``); the
file name carries the order and a hash of the training text. A cache file that cannot be read
raises :class:`LmPriorError` naming it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from qdecode.kernels import sem_osd as ksem
from qdecode.kernels.threads import run_ranges

__all__ = ["LmPriorError", "BatchedPrior", "corpus_bytes", "corpus_split", "KneserNey", "load_kneser_ney", "NgramPrior", "ngram_prior"]

log = logging.getLogger(__name__)

TRAIN_FRACTION = 0.8
HELDOUT_FRACTION = 0.1  # of the LM part: temperature fit
TABLE_MAX_BYTES = 64 << 20  # largest distribution table (KneserNey.dist_table) kept per model
_CACHE_VERSION = 1
_lock = threading.Lock()
_table_lock = threading.Lock()


class LmPriorError(ValueError):
    """The corpus or a cached model is missing or unreadable."""


@functools.lru_cache(maxsize=1)
def corpus_bytes() -> bytes:
    """The whole corpus: CPython's ``pydoc_data.topics`` text, printable ASCII + newlines."""
    try:
        from pydoc_data.topics import topics  # standard library
    except Exception as exc:  # noqa: BLE001 - any failure means "no corpus"
        raise LmPriorError(
            "the English corpus is unavailable: this Python lacks the standard-library module "
            f"pydoc_data.topics ({exc}); use a full CPython build"
        ) from None
    if not isinstance(topics, dict) or not topics:
        raise LmPriorError("the English corpus pydoc_data.topics.topics is empty or not a dict")
    text = "".join(str(topics[k]) for k in sorted(topics))
    raw = np.frombuffer(text.encode("ascii", errors="ignore"), dtype=np.uint8)
    keep = ((raw >= 0x20) & (raw <= 0x7E)) | (raw == 0x0A)
    data = raw[keep].tobytes()
    if len(data) < 10000:
        raise LmPriorError(f"the English corpus pydoc_data.topics is too short ({len(data)} bytes)")
    return data


def corpus_split() -> tuple[bytes, bytes]:
    """``(lm_text, test_text)``: the first 80 % (LM training) and the last 20 % (channel test)."""
    data = corpus_bytes()
    cut = int(len(data) * TRAIN_FRACTION)
    return data[:cut], data[cut:]


def _cache_dir() -> Path:
    env = os.environ.get("QDECODE_LM_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "qdecode" / "lm"


class KneserNey:
    """Interpolated Kneser-Ney byte n-gram (one absolute discount per level, ``D = n1 / (n1 + 2 n2)``).

    Arrays as :mod:`qdecode.kernels.sem_osd` describes them. :meth:`train` counts in numpy
    (seconds); :meth:`dist` evaluates one context; ``inv_temp`` is ``1 / temperature``.
    """

    _FIELDS = ("p1", "keys", "lvl_start", "ent_ptr", "ent_byte", "ent_cnt", "ctx_tot", "ctx_n1", "disc")

    def __init__(self, order: int, arrays: dict[str, np.ndarray], inv_temp: float = 1.0) -> None:
        self.order = int(order)
        for f in self._FIELDS:
            setattr(self, f, arrays[f])
        self.inv_temp = float(inv_temp)

    @property
    def arrays(self) -> tuple:
        return tuple(getattr(self, f) for f in self._FIELDS)

    @classmethod
    def train(cls, text: bytes, order: int) -> "KneserNey":
        if order < 1:
            raise ValueError(f"n-gram order must be >= 1, got {order}")
        t = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
        if t.size <= order:
            raise LmPriorError("training text shorter than the n-gram order")
        # uniq[L]: sorted distinct (L+1)-gram keys, cnt[L]: raw count (top) or continuation count
        levels: list[tuple[np.ndarray, np.ndarray]] = [None] * order  # type: ignore[list-item]
        top = order - 1
        key = np.zeros(t.size - top, dtype=np.int64)
        for a in range(order):
            key = (key << 8) | t[a: t.size - top + a]
        uniq, cnt = np.unique(key, return_counts=True)
        levels[top] = (uniq, cnt.astype(np.float64))
        for L in range(top - 1, -1, -1):
            higher = levels[L + 1][0]  # distinct (L+2)-grams
            suffix = higher & ((1 << (8 * (L + 1))) - 1)
            u, c = np.unique(suffix, return_counts=True)  # N1+(. w) continuation counts
            levels[L] = (u, c.astype(np.float64))
        disc = np.zeros(order, dtype=np.float64)
        for L in range(order):
            c = levels[L][1]
            n1 = float(np.count_nonzero(c == 1))
            n2 = float(np.count_nonzero(c == 2))
            d = n1 / (n1 + 2.0 * n2) if n1 + n2 > 0 else 0.5
            disc[L] = min(max(d, 0.05), 0.95)
        # unigram level interpolated with the uniform distribution
        u, c = levels[0]
        cont = np.zeros(256, dtype=np.float64)
        cont[u] = c
        tot = cont.sum()
        nz = np.count_nonzero(cont)
        p1 = np.maximum(cont - disc[0], 0.0) / tot + disc[0] * nz / tot / 256.0
        keys, lvl_start, ent_ptr, ent_byte, ent_cnt, ctx_tot, ctx_n1 = [], [0], [], [], [], [], []
        base = 0
        for L in range(1, order):
            g, c = levels[L]
            ctx = g >> 8
            cu, first, ncount = np.unique(ctx, return_index=True, return_counts=True)
            keys.append(cu)
            ent_ptr.append(base + first)
            ent_byte.append((g & 255).astype(np.int64))
            ent_cnt.append(c)
            ctx_tot.append(np.add.reduceat(c, first))
            ctx_n1.append(ncount.astype(np.float64))
            base += g.size
            lvl_start.append(lvl_start[-1] + cu.size)
        cat = (lambda xs, dt: np.ascontiguousarray(np.concatenate(xs) if xs else np.zeros(0), dtype=dt))
        arrays = {
            "p1": np.ascontiguousarray(p1),
            "keys": cat(keys, np.int64),
            "lvl_start": np.asarray(lvl_start, dtype=np.int64),
            "ent_ptr": np.ascontiguousarray(np.append(cat(ent_ptr, np.int64), base), dtype=np.int64),
            "ent_byte": cat(ent_byte, np.int64),
            "ent_cnt": cat(ent_cnt, np.float64),
            "ctx_tot": cat(ctx_tot, np.float64),
            "ctx_n1": cat(ctx_n1, np.float64),
            "disc": disc,
        }
        return cls(order, arrays)

    def dist_table(self) -> np.ndarray:
        """Every next-byte distribution of the model at its current temperature,
        ``(1 + contexts, 256)`` (:func:`qdecode.kernels.sem_osd.kn_table`), built at first use and
        kept; a ``(0, 256)`` array when it would exceed ``TABLE_MAX_BYTES`` (the kernels then
        evaluate distributions directly, with the same values)."""
        with _table_lock:
            cached = getattr(self, "_table", None)
            if cached is not None and cached[0] == self.inv_temp:
                return cached[1]
            rows = 1 + int(self.keys.size)
            if rows * 256 * 8 > TABLE_MAX_BYTES:
                tab = np.zeros((0, 256))
            else:
                tab = np.empty((rows, 256))
                ksem.kn_table(*self.arrays, self.inv_temp, tab)
            self._table = (self.inv_temp, tab)
            return tab

    def dist_batch(self, contexts: np.ndarray, lengths: np.ndarray, inv_temp: float | None = None) -> np.ndarray:
        """Next-byte distributions ``(P, 256)`` after each context row (most recent byte last)."""
        ctx = np.ascontiguousarray(contexts, dtype=np.uint8)
        ln = np.ascontiguousarray(lengths, dtype=np.int64)
        out = np.empty((ctx.shape[0], 256))
        ksem.kn_dist_batch(ctx, ln, *self.arrays, self.inv_temp if inv_temp is None else float(inv_temp), out)
        return out

    def dist(self, context: bytes) -> np.ndarray:
        """Next-byte distribution (256,) after ``context``."""
        c = np.frombuffer(bytes(context), dtype=np.uint8)[-max(self.order - 1, 1):]
        row = np.zeros((1, max(c.size, 1)), dtype=np.uint8)
        row[0, :c.size] = c
        return self.dist_batch(row, np.array([c.size]))[0]

    def _windows(self, text: bytes, max_positions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = np.frombuffer(text, dtype=np.uint8)
        c = max(self.order - 1, 1)
        pos = np.arange(c, t.size)
        if pos.size > max_positions:
            pos = pos[np.linspace(0, pos.size - 1, max_positions).astype(np.int64)]
        ctx = np.stack([t[pos - c + i] for i in range(c)], axis=1)
        return ctx, np.full(pos.size, self.order - 1, dtype=np.int64), t[pos]

    def cross_entropy(self, text: bytes, max_positions: int = 50000) -> float:
        """Bits per byte of ``text`` under the (tempered) model, full contexts only."""
        ctx, ln, y = self._windows(text, max_positions)
        p = self.dist_batch(ctx, ln)
        return float(-np.mean(np.log2(p[np.arange(y.size), y])))

    def fit_temperature(self, text: bytes, max_positions: int = 5000) -> float:
        """Fit ``inv_temp`` minimising the cross-entropy of ``text`` (golden section on [0.25, 4])."""
        ctx, ln, y = self._windows(text, max_positions)
        logp = np.log(self.dist_batch(ctx, ln, inv_temp=1.0))
        rows = np.arange(y.size)

        def ce(b: float) -> float:
            z = b * logp
            m = z.max(axis=1, keepdims=True)
            lse = (m[:, 0] + np.log(np.exp(z - m).sum(axis=1)))
            return float(np.mean(lse - z[rows, y]))

        self.inv_temp = fit_inverse_temperature(ce, 28)
        return self.inv_temp

    def save(self, path: Path, text_hash: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
        np.savez_compressed(tmp, version=_CACHE_VERSION, order=self.order, inv_temp=self.inv_temp,
                            text_hash=text_hash, **{f: getattr(self, f) for f in self._FIELDS})
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, order: int, text_hash: str) -> "KneserNey":
        try:
            with np.load(path, allow_pickle=False) as z:
                if int(z["version"]) != _CACHE_VERSION or int(z["order"]) != order or str(z["text_hash"]) != text_hash:
                    raise ValueError("stale (version, order or corpus differ)")
                arrays = {f: np.ascontiguousarray(z[f]) for f in cls._FIELDS}
                inv_temp = float(z["inv_temp"])
        except Exception as exc:  # noqa: BLE001 - report any unreadable cache the same way
            raise LmPriorError(f"n-gram cache {path} is unreadable or corrupt ({exc}); delete it to retrain") from None
        m = cls(order, arrays, inv_temp)
        m._check()
        return m

    def _check(self) -> None:
        ok = (self.p1.shape == (256,) and self.lvl_start.shape == (self.order,) and self.disc.shape == (self.order,)
              and self.ent_ptr.shape == (self.keys.size + 1,) and self.ent_byte.size == self.ent_cnt.size
              and np.all(np.isfinite(self.p1)) and np.all(self.p1 > 0) and self.inv_temp > 0)
        if not ok:
            raise LmPriorError("n-gram cache arrays are inconsistent; delete the cache file to retrain")


def load_kneser_ney(order: int = 4, *, cache: bool = True) -> KneserNey:
    """The KN model of ``order`` trained on the corpus' LM part (cached; temperature fitted)."""
    lm_text, _ = corpus_split()
    cut = int(len(lm_text) * (1.0 - HELDOUT_FRACTION))
    train, held = lm_text[:cut], lm_text[cut:]
    text_hash = hashlib.sha256(train + b"|" + held).hexdigest()[:16]
    path = _cache_dir() / f"kn_byte_o{order}_{text_hash}.npz"
    if cache and path.exists():
        return KneserNey.load(path, order, text_hash)
    model = KneserNey.train(train, order)
    model.fit_temperature(held)
    if cache:
        try:
            model.save(path, text_hash)
        except OSError as exc:
            log.warning("could not cache the n-gram model at %s: %s", path, exc)
    return model


def fit_inverse_temperature(ce, iters: int) -> float:
    """The inverse temperature ``b`` in [1/4, 4] minimising the held-out cross-entropy ``ce(b)``:
    golden-section search on ``log b`` (``iters`` steps); returns the final bracket's midpoint."""
    lo, hi = math.log(0.25), math.log(4.0)
    gr = (math.sqrt(5.0) - 1) / 2
    a, b = hi - gr * (hi - lo), lo + gr * (hi - lo)
    fa, fb = ce(math.exp(a)), ce(math.exp(b))
    for _ in range(iters):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - gr * (hi - lo)
            fa = ce(math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + gr * (hi - lo)
            fb = ce(math.exp(b))
    return math.exp((lo + hi) / 2)


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
            raise ValueError(f"n-gram order must be in 2..6, got {order}")
        if not 1 <= int(beam) <= 256:
            raise ValueError(f"beam must be in 1..256, got {beam}")
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
            raise ValueError(f"llr must have shape (blocks, 8 nb), got {x.shape}")
        S, nb = x.shape[0], x.shape[1] // 8
        ctx = np.ascontiguousarray(contexts, dtype=np.uint8)
        ln = np.ascontiguousarray(lengths, dtype=np.int64)
        if ctx.ndim != 2 or ctx.shape[0] != S or ln.shape != (S,) or np.any(ln < 0) or np.any(ln > ctx.shape[1]):
            raise ValueError("contexts must be (S, c) uint8 with lengths (S,) in 0..c")
        if ctx.shape[1] == 0:
            ctx = np.zeros((S, 1), dtype=np.uint8)
        out = np.empty((S, nb, 256))
        calls = np.zeros(S, dtype=np.int64)
        if S:
            run_ranges(ksem.fb_prior_range, (ctx, ln, x, nb, max(self.order - 2, 0), self.beam, self.prune,
                                             *self.model.arrays, self.model.inv_temp, self.model.dist_table(),
                                             out, calls), S, threads)
        self.last_calls = calls
        return out



def ngram_prior(order: int = 4, beam: int = 8) -> NgramPrior:
    """Convenience constructor (the corpus model of ``order``)."""
    return NgramPrior(order=order, beam=beam)
