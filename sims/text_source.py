"""Message sources of classical sweeps: uniform random bits, or held-out English text.

``text``: the channel-test part of the offline corpus (:func:`qdecode.decoders.lm_prior.corpus_split`,
the last 20 % of CPython's ``pydoc_data.topics`` text; the LM learns only from the first 80 %),
cut into blocks of ``nb = k / 8`` bytes. A batch of ``S`` blocks is ``S`` *consecutive* blocks
starting at a block index drawn from the batch's generator (wrapping around the end), so row
``s - 1`` is the text just before row ``s`` (what sem-OSD's context uses). Bytes map to message
bits LSB first (byte ``j`` -> bits ``8j .. 8j+7``, bit ``8j + l`` = ``(byte >> l) & 1``), the
Reed-Solomon binary image's symbol order, for every code.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["SOURCES", "heldout_text_blocks", "text_batch", "bytes_to_bits", "bits_to_bytes"]

SOURCES = ("uniform", "text")


@functools.lru_cache(maxsize=4)
def heldout_text_blocks(nb: int) -> np.ndarray:
    """The channel-test text as ``(B, nb)`` uint8 blocks (the tail shorter than a block dropped)."""
    from qdecode.language_model.corpus import corpus_split

    _, test = corpus_split()
    t = np.frombuffer(test, dtype=np.uint8)
    B = t.size // nb
    out = t[: B * nb].reshape(B, nb).copy()
    out.setflags(write=False)
    return out


def text_batch(rng: np.random.Generator, shots: int, nb: int, context: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``(blocks (shots, nb), previous bytes (shots, context))`` of consecutive test-text blocks.

    The previous bytes of row ``s`` are the ``context`` bytes of text before it (the truth; for a
    genie-context decoder).
    """
    blocks = heldout_text_blocks(nb)
    B = blocks.shape[0]
    start = int(rng.integers(0, B))
    idx = (start + np.arange(shots)) % B
    flat = blocks.reshape(-1)
    pos = idx[:, None] * nb - context + np.arange(context)[None, :]
    prev = flat[pos % flat.size]
    return blocks[idx], np.ascontiguousarray(prev)


def bytes_to_bits(blocks: np.ndarray) -> np.ndarray:
    """``(S, nb)`` bytes -> ``(S, 8 nb)`` message bits, LSB first per byte."""
    return np.unpackbits(np.asarray(blocks, dtype=np.uint8), axis=1, bitorder="little")


def bits_to_bytes(bits: np.ndarray) -> np.ndarray:
    """``(S, 8 nb)`` message bits -> ``(S, nb)`` bytes, LSB first per byte."""
    return np.packbits(np.asarray(bits, dtype=np.uint8), axis=1, bitorder="little")
