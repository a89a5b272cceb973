"""Fitting the byte n-gram of sem-OSD on the text corpus, and its disk cache.

Training side of :class:`qdecode.decoders.lm_prior.KneserNey` (which only scores):

* :func:`count_kneser_ney`: interpolated Kneser-Ney counts of a byte text (numpy, about a
  second for the order-4 corpus model), as the :class:`~qdecode.kernels.sem_osd.NgramModel` that
  :mod:`qdecode.kernels.sem_osd` reads (built here once, then passed whole);
* :func:`fit_kn_temperature`: the inverse temperature minimising the held-out cross-entropy,
  with :func:`fit_inverse_temperature` (a golden-section search shared with
  :mod:`qdecode.neural.lm_train`);
* :func:`corpus_kneser_ney`: the model of the corpus' LM part (:func:`qdecode.language_model.corpus.lm_split`:
  counts on its first 90 %, temperature on its last 10 %), trained at first use and cached as
  ``.npz`` under ``$QDECODE_LM_CACHE`` if set, else ``$XDG_CACHE_HOME/qdecode/lm``
  (``~/.cache/qdecode/lm``); the file name carries the order and a hash of the training text.
  A cache file that cannot be read raises :class:`~qdecode.language_model.corpus.CorpusError` naming it.

Imports numpy, :mod:`qdecode.kernels.sem_osd` and :mod:`qdecode.language_model.corpus` only.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from qdecode.errors import InputError
from qdecode.kernels import sem_osd as ksem
from qdecode.language_model.corpus import CorpusError, lm_split, lm_text_hash

__all__ = ["FIELDS", "CACHE_VERSION", "count_kneser_ney", "check_arrays", "context_windows",
           "fit_inverse_temperature", "fit_kn_temperature", "cache_dir", "save_cache", "load_cache",
           "corpus_kneser_ney"]

log = logging.getLogger(__name__)

#: The Kneser-Ney arrays: the fields of :class:`~qdecode.kernels.sem_osd.NgramModel`, by name in the cache file.
FIELDS = ("p1", "keys", "lvl_start", "ent_ptr", "ent_byte", "ent_cnt", "ctx_tot", "ctx_n1", "disc")
CACHE_VERSION = 1


def count_kneser_ney(text: bytes, order: int) -> ksem.NgramModel:
    """The interpolated Kneser-Ney model of byte ``text`` at ``order`` (one absolute discount per level,
    ``D = n1 / (n1 + 2 n2)``, clipped to [0.05, 0.95]).

    Raises:
        ValueError: ``order < 1``.
        CorpusError: ``text`` is not longer than ``order``.
    """
    if order < 1:
        raise InputError(f"n-gram order must be >= 1, got {order}")
    t = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
    if t.size <= order:
        raise CorpusError("training text shorter than the n-gram order")
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
    def cat(xs, dt):
        return np.ascontiguousarray(np.concatenate(xs) if xs else np.zeros(0), dtype=dt)

    return ksem.NgramModel(
        p1=np.ascontiguousarray(p1),
        keys=cat(keys, np.int64),
        lvl_start=np.asarray(lvl_start, dtype=np.int64),
        ent_ptr=np.ascontiguousarray(np.append(cat(ent_ptr, np.int64), base), dtype=np.int64),
        ent_byte=cat(ent_byte, np.int64),
        ent_cnt=cat(ent_cnt, np.float64),
        ctx_tot=cat(ctx_tot, np.float64),
        ctx_n1=cat(ctx_n1, np.float64),
        disc=disc,
    )


def check_arrays(order: int, model: ksem.NgramModel, inv_temp: float) -> None:
    """Raises :class:`CorpusError` when ``model``'s arrays are not a consistent model of ``order``."""
    p1, keys, lvl_start, ent_ptr = model.p1, model.keys, model.lvl_start, model.ent_ptr
    ok = (p1.shape == (256,) and lvl_start.shape == (order,) and model.disc.shape == (order,)
          and ent_ptr.shape == (keys.size + 1,) and model.ent_byte.size == model.ent_cnt.size
          and np.all(np.isfinite(p1)) and np.all(p1 > 0) and inv_temp > 0)
    if not ok:
        raise CorpusError("n-gram cache arrays are inconsistent; delete the cache file to retrain")


def context_windows(text: bytes, order: int, max_positions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(contexts (P, c) uint8, lengths (P,), next bytes (P,))`` of up to ``max_positions`` evenly
    spaced full-context positions of ``text`` (``c = max(order - 1, 1)``)."""
    t = np.frombuffer(text, dtype=np.uint8)
    c = max(order - 1, 1)
    pos = np.arange(c, t.size)
    if pos.size > max_positions:
        pos = pos[np.linspace(0, pos.size - 1, max_positions).astype(np.int64)]
    ctx = np.stack([t[pos - c + i] for i in range(c)], axis=1)
    return ctx, np.full(pos.size, order - 1, dtype=np.int64), t[pos]


def fit_inverse_temperature(ce: Callable[[float], float], iters: int) -> float:
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


def fit_kn_temperature(order: int, model: ksem.NgramModel, text: bytes, max_positions: int = 5000) -> float:
    """The ``inv_temp`` minimising the cross-entropy of ``text`` (golden section on [0.25, 4])."""
    ctx, ln, y = context_windows(text, order, max_positions)
    dist = np.empty((ctx.shape[0], 256))
    ksem.kn_dist_batch(np.ascontiguousarray(ctx, dtype=np.uint8), np.ascontiguousarray(ln, dtype=np.int64),
                       model, 1.0, dist)
    logp = np.log(dist)
    rows = np.arange(y.size)

    def ce(b: float) -> float:
        z = b * logp
        m = z.max(axis=1, keepdims=True)
        lse = (m[:, 0] + np.log(np.exp(z - m).sum(axis=1)))
        return float(np.mean(lse - z[rows, y]))

    return fit_inverse_temperature(ce, 28)


def cache_dir() -> Path:
    """``$QDECODE_LM_CACHE``, else ``$XDG_CACHE_HOME/qdecode/lm`` (``~/.cache/qdecode/lm``)."""
    env = os.environ.get("QDECODE_LM_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "qdecode" / "lm"


def save_cache(path: Path, order: int, model: ksem.NgramModel, inv_temp: float, text_hash: str) -> None:
    """Write the model atomically to ``path`` (``.npz``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}.npz")
    np.savez_compressed(tmp, version=CACHE_VERSION, order=order, inv_temp=inv_temp,
                        text_hash=text_hash, **{f: getattr(model, f) for f in FIELDS})
    os.replace(tmp, path)


def load_cache(path: Path, order: int, text_hash: str) -> tuple[ksem.NgramModel, float]:
    """``(model, inv_temp)`` of the cache file ``path``, checked.

    Raises:
        CorpusError: unreadable, corrupt, stale (version, order or text differ) or inconsistent file.
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            if int(z["version"]) != CACHE_VERSION or int(z["order"]) != order or str(z["text_hash"]) != text_hash:
                raise InputError("stale (version, order or corpus differ)")
            model = ksem.NgramModel(**{f: np.ascontiguousarray(z[f]) for f in FIELDS})
            inv_temp = float(z["inv_temp"])
    except Exception as exc:  # noqa: BLE001 - report any unreadable cache the same way
        raise CorpusError(f"n-gram cache {path} is unreadable or corrupt ({exc}); delete it to retrain") from None
    check_arrays(order, model, inv_temp)
    return model, inv_temp


def corpus_kneser_ney(order: int = 4, *, cache: bool = True) -> tuple[ksem.NgramModel, float]:
    """``(model, inv_temp)`` of the order-``order`` model of the corpus' LM part (cached; module docstring)."""
    train, held = lm_split()
    text_hash = lm_text_hash()
    path = cache_dir() / f"kn_byte_o{order}_{text_hash}.npz"
    if cache and path.exists():
        return load_cache(path, order, text_hash)
    model = count_kneser_ney(train, order)
    inv_temp = fit_kn_temperature(order, model, held)
    if cache:
        try:
            save_cache(path, order, model, inv_temp, text_hash)
        except OSError as exc:
            log.warning("could not cache the n-gram model at %s: %s", path, exc)
    return model, inv_temp
