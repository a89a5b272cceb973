"""The offline English text corpus: what the byte-level language models learn from and what the
sweeps' ``text`` message source transmits.

The corpus is the documentation text shipped with CPython (``pydoc_data.topics.topics``, values
joined in sorted-key order), restricted to printable ASCII (0x20-0x7E) and newlines. Nothing is
downloaded. It is split once (:func:`corpus_split`):

* the first ``TRAIN_FRACTION`` (80 %) is the language models' part; :func:`lm_split` cuts it
  again into training text (its first 90 %) and held-out text (its last ``HELDOUT_FRACTION``,
  10 %: temperature fits and validation) -- the same cut for the n-gram
  (:mod:`qdecode.language_model.ngram`) and the byte Transformer (:mod:`qdecode.neural.lm_train`);
* the last 20 % is the channel-test text (:mod:`qdecode.sims.text_source`), never seen in training.

This module imports only numpy, so decoders (:mod:`qdecode.decoders.lm_prior`), trainers and
the sweeps' text source can all use it.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np

from qdecode.errors import InputError

__all__ = ["CorpusError", "TRAIN_FRACTION", "HELDOUT_FRACTION", "corpus_bytes", "corpus_split", "lm_split",
           "lm_text_hash"]

TRAIN_FRACTION = 0.8
HELDOUT_FRACTION = 0.1  # of the LM part: temperature fit and validation


class CorpusError(InputError):
    """The corpus, or a cached model fitted on it, is missing or unreadable.

    :class:`qdecode.decoders.lm_prior.LmPriorError` is this class.
    """


@functools.lru_cache(maxsize=1)
def corpus_bytes() -> bytes:
    """The whole corpus: CPython's ``pydoc_data.topics`` text, printable ASCII + newlines.

    Raises:
        CorpusError: this Python has no (or an empty or too short) ``pydoc_data.topics``.
    """
    try:
        from pydoc_data.topics import topics  # standard library
    except Exception as exc:  # noqa: BLE001 - any failure means "no corpus"
        raise CorpusError(
            "the English corpus is unavailable: this Python lacks the standard-library module "
            f"pydoc_data.topics ({exc}); use a full CPython build"
        ) from None
    if not isinstance(topics, dict) or not topics:
        raise CorpusError("the English corpus pydoc_data.topics.topics is empty or not a dict")
    text = "".join(str(topics[k]) for k in sorted(topics))
    raw = np.frombuffer(text.encode("ascii", errors="ignore"), dtype=np.uint8)
    keep = ((raw >= 0x20) & (raw <= 0x7E)) | (raw == 0x0A)
    data = raw[keep].tobytes()
    if len(data) < 10000:
        raise CorpusError(f"the English corpus pydoc_data.topics is too short ({len(data)} bytes)")
    return data


def corpus_split() -> tuple[bytes, bytes]:
    """``(lm_text, test_text)``: the first 80 % (LM training) and the last 20 % (channel test)."""
    data = corpus_bytes()
    cut = int(len(data) * TRAIN_FRACTION)
    return data[:cut], data[cut:]


def lm_split() -> tuple[bytes, bytes]:
    """``(train, heldout)``: the LM part of the corpus cut 90 / 10 (counts or weights / temperature)."""
    lm_text, _ = corpus_split()
    cut = int(len(lm_text) * (1.0 - HELDOUT_FRACTION))
    return lm_text[:cut], lm_text[cut:]


def lm_text_hash() -> str:
    """16 hex digits of SHA-256 of ``train | heldout`` (:func:`lm_split`): names the text a model learnt."""
    train, held = lm_split()
    return hashlib.sha256(train + b"|" + held).hexdigest()[:16]
