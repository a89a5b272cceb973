"""Reed-Solomon codes (qdecode.codes.rs): generator, systematic encoding, binary image; galois as oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.catalog import CATALOG, get_code
from qdecode.codes.rs import RSCode, rs_code


def test_rs16_8_structure():
    c = rs_code(16, 8)
    assert repr(c) == "RSCode(n=16, k=8, m=8, t=4, d=9, shorten=239, prim_poly=0x11d)"
    assert [int(v) for v in c.generator[::-1]] == [1, 227, 44, 178, 71, 172, 8, 224, 37]  # galois 0.4.11, 0x11D
    assert (c.n_bits, c.k_bits) == (128, 64)
    assert c.G.shape == (8, 16) and np.array_equal(c.G[:, :8], np.eye(8, dtype=np.int64))
    assert c.G_bin.shape == (64, 128) and c.H_bin.shape == (64, 128)
    assert c.G_bin.dtype == np.uint8 and c.H_bin.dtype == np.uint8
    assert not ((c.G_bin.astype(int) @ c.H_bin.T) % 2).any()
    assert gf2.rank(c.G_bin) == 64 and gf2.rank(c.H_bin) == 64
    assert np.array_equal(c.G_bin[:, :64], np.eye(64, dtype=np.uint8))
    assert not c.G_bin.flags.writeable
    # symbol-level parity check: G H^T = 0 over GF(256)
    GHt = np.zeros((8, 8), dtype=np.int64)
    for j in range(16):
        GHt ^= c.field.mul(c.G[:, j : j + 1], c.H[:, j][None, :])
    assert not GHt.any() and c.H.shape == (8, 16)


@pytest.mark.parametrize("n,k,m", [(16, 8, 8), (255, 223, 8), (15, 9, 4), (10, 4, 4), (40, 30, 6)])
def test_encoding_matches_galois(n, k, m):
    import galois
    c = RSCode(n, k, m)
    nm = 2**m - 1
    ref = galois.ReedSolomon(nm, nm - (n - k))  # shortened by passing k - s symbols
    assert np.array_equal(np.array(ref.generator_poly.coeffs)[::-1], c.generator)
    rng = np.random.default_rng(n + k)
    msg = rng.integers(0, 2**m, (100, k))
    cw = c.encode(msg)
    assert cw.dtype == np.int64 and cw.shape == (100, n)
    assert np.array_equal(cw, np.array(ref.encode(ref.field(msg))))
    assert not c.syndromes(cw).any()
    assert np.array_equal(c.G, np.array(ref.G)[nm - n :, nm - n :])


def test_binary_image_bit_order_and_consistency():
    c = RSCode(16, 8)
    rng = np.random.default_rng(0)
    msg = rng.integers(0, 256, (50, 8))
    cw = c.encode(msg)
    bits = c.to_bits(cw)
    # LSB first per symbol: numpy's little-endian unpacking of the byte symbols
    assert np.array_equal(bits, np.unpackbits(cw.astype(np.uint8), axis=1, bitorder="little"))
    assert np.array_equal(c.from_bits(bits), cw)
    mbits = c.to_bits(msg)
    assert np.array_equal((mbits.astype(int) @ c.G_bin) % 2, bits)
    assert np.array_equal(c.encode_bits(mbits), bits)
    assert not ((bits.astype(int) @ c.H_bin.T) % 2).any()
    # a single flipped bit is detected in both views
    bad = bits.copy()
    bad[:, 77] ^= 1
    assert ((bad.astype(int) @ c.H_bin.T) % 2).any(axis=1).all()
    assert c.syndromes(c.from_bits(bad)).any(axis=1).all()


def test_binary_image_minimum_distance_small_code():
    c = RSCode(7, 3, m=3)  # (21, 9) binary image of a d = 5 code
    msgs = np.array(list(itertools.product([0, 1], repeat=c.k_bits)), dtype=np.uint8)[1:]
    cw_bits = c.encode_bits(msgs)
    assert not ((cw_bits.astype(int) @ c.H_bin.T) % 2).any()
    assert cw_bits.sum(axis=1).min() >= c.d
    sym = c.from_bits(cw_bits)
    assert (sym != 0).sum(axis=1).min() == c.d  # MDS
    assert gf2.rank(c.H_bin) == (c.n - c.k) * c.m


def test_bad_parameters():
    with pytest.raises(ValueError, match="k < n"):
        RSCode(16, 16)
    with pytest.raises(ValueError, match="k < n"):
        RSCode(16, 20)
    with pytest.raises(ValueError, match="k < n"):
        RSCode(16, 0)
    with pytest.raises(ValueError, match="n must be in"):
        RSCode(256, 200)
    with pytest.raises(ValueError, match="unsupported field size"):
        RSCode(16, 8, m=17)
    with pytest.raises(ValueError, match="unsupported field size"):
        RSCode(3, 1, m=1)
    c = RSCode(16, 8)
    with pytest.raises(ValueError, match="shape"):
        c.encode(np.zeros((2, 9), int))
    with pytest.raises(ValueError, match="symbols"):
        c.encode(np.full((2, 8), 256))
    with pytest.raises(ValueError, match="symbols"):
        c.encode(np.zeros((2, 8)))
    with pytest.raises(ValueError, match="shape"):
        c.encode_bits(np.zeros((2, 63), np.uint8))


def test_catalogue_entry():
    entry = CATALOG["rs16_8"]
    assert entry.kind == "classical-linear" and entry.family == "rs"
    c = get_code("rs16_8")
    assert (c.n, c.k, c.d, c.m) == (16, 8, 9, 8) == (entry.n, entry.k, entry.d, 8)
    assert c.name == "rs16_8"
