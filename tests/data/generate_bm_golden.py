"""Regenerate galois' decoding of random noisy words for BCH(127,64) and RS(16,8) (tests/decoders/test_bm.py).

    python tests/data/generate_bm_golden.py            # ~10^4 words per code; galois takes minutes

galois decodes too slowly (and JIT-compiles for ~30 s per field) for the test suite to call
it on 10^4 words, so its answers are stored here with the galois version:

``bm_galois_bch127_64.npz``: ``messages`` (S, 64) uint8 bits packed little-endian along axis 1,
``errors`` (S, 127) packed error patterns (weights uniform in 5..20 around t = 10),
``decoded_xor`` (S, 127) packed = galois' decoded codeword XOR the received word,
``n_errors`` int8 (S,) galois' count (-1 = failure), ``galois`` (version string).

``bm_galois_rs16_8.npz``: ``messages`` (S, 8) uint8 symbols, ``errors`` (S, 16) uint8 error
values (0 = none; 0..6 errors), ``erasures`` (S, 16) packed mask (0..9 erasures, on
positions without errors, their received symbols replaced by random bytes), ``decoded_xor``
(S, 16) uint8, ``n_errors`` int8, ``galois``.

Received word = encode(messages) XOR errors (erased symbols overwritten by ``erased_values``).
Inputs are stored rather than regenerated from a seed so that the test never depends on
numpy's random-stream details.
"""

from __future__ import annotations

import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WORDS = 10_000


def _bch(rng: np.random.Generator) -> None:
    import galois

    from qdecode.codes.bch import BCHCode

    code = BCHCode(m=7, t=10)
    ref = galois.BCH(127, 64)
    assert np.array_equal(np.array(ref.G), code.G)
    msg = rng.integers(0, 2, (WORDS, code.k), dtype=np.uint8)
    cw = code.encode(msg)
    weights = rng.integers(5, 21, WORDS)
    err = np.zeros_like(cw)
    for i, w in enumerate(weights):
        err[i, rng.choice(code.n, size=w, replace=False)] = 1
    rx = cw ^ err
    t0 = time.time()
    dec, nerr = ref.decode(galois.GF2(rx), output="codeword", errors=True)
    print(f"galois BCH(127,64): {WORDS} words in {time.time() - t0:.1f} s", file=sys.stderr)
    dec = np.array(dec, dtype=np.uint8)
    np.savez_compressed(
        HERE / "bm_galois_bch127_64.npz",
        messages=np.packbits(msg, axis=1, bitorder="little"),
        errors=np.packbits(err, axis=1, bitorder="little"),
        decoded_xor=np.packbits(dec ^ rx, axis=1, bitorder="little"),
        n_errors=np.asarray(nerr, dtype=np.int8),
        galois=np.array(metadata.version("galois")),
    )


def _rs(rng: np.random.Generator) -> None:
    import galois

    from qdecode.codes.rs import RSCode

    code = RSCode(16, 8)
    ref = galois.ReedSolomon(255, 247)
    msg = rng.integers(0, 256, (WORDS, code.k))
    cw = code.encode(msg)
    n_err = rng.integers(0, 7, WORDS)
    n_era = rng.integers(0, 10, WORDS)
    err = np.zeros(cw.shape, dtype=np.int64)
    era = np.zeros(cw.shape, dtype=bool)
    era_val = np.zeros(cw.shape, dtype=np.int64)
    for i in range(WORDS):
        pos = rng.permutation(code.n)
        e = pos[: n_err[i]]
        f = pos[n_err[i] : n_err[i] + n_era[i]]
        err[i, e] = rng.integers(1, 256, e.size)
        era[i, f] = True
        era_val[i, f] = rng.integers(0, 256, f.size)
    rx = np.where(era, era_val, cw ^ err)
    t0 = time.time()
    dec, nerr = ref.decode(ref.field(rx), erasures=era, output="codeword", errors=True)
    print(f"galois RS(16,8): {WORDS} words in {time.time() - t0:.1f} s", file=sys.stderr)
    dec = np.array(dec, dtype=np.int64)
    np.savez_compressed(
        HERE / "bm_galois_rs16_8.npz",
        messages=msg.astype(np.uint8),
        errors=err.astype(np.uint8),
        erasures=np.packbits(era, axis=1, bitorder="little"),
        erased_values=era_val.astype(np.uint8),
        decoded_xor=(dec ^ rx).astype(np.uint8),
        n_errors=np.asarray(nerr, dtype=np.int8),
        galois=np.array(metadata.version("galois")),
    )


def main() -> None:
    which = sys.argv[1:] or ["bch", "rs"]
    if "bch" in which:
        _bch(np.random.default_rng(2027))
    if "rs" in which:
        _rs(np.random.default_rng(2028))


if __name__ == "__main__":
    main()
