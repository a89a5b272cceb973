"""Binary BCH codes (qdecode.codes.bch): parameters, matrices, encoding; galois as the oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.bch import BCHCode, bch_code
from qdecode.codes.catalog import CATALOG, get_code, list_codes

# (k, t) of every distinct narrow-sense primitive BCH code, from the standard table
# (Lin & Costello, Error Control Coding, Appendix C); depends only on cyclotomic cosets.
KNOWN = {
    6: [(57, 1), (51, 2), (45, 3), (39, 4), (36, 5), (30, 6), (24, 7), (18, 10), (16, 11), (10, 13), (7, 15)],
    7: [(120, 1), (113, 2), (106, 3), (99, 4), (92, 5), (85, 6), (78, 7), (71, 9), (64, 10), (57, 11),
        (50, 13), (43, 14), (36, 15), (29, 21), (22, 23), (15, 27), (8, 31)],
    8: [(247, 1), (239, 2), (231, 3), (223, 4), (215, 5), (207, 6), (199, 7), (191, 8), (187, 9), (179, 10),
        (171, 11), (163, 12), (155, 13), (147, 14), (139, 15), (131, 18), (123, 19), (115, 21), (107, 22),
        (99, 23), (91, 25), (87, 26), (79, 27), (71, 29), (63, 30), (55, 31), (47, 42), (45, 43), (37, 45),
        (29, 47), (21, 55), (13, 59), (9, 63)],
}


@pytest.mark.parametrize("m", sorted(KNOWN))
def test_dimensions_match_the_standard_table(m):
    for k, t in KNOWN[m]:
        c = BCHCode(m=m, t=t)
        assert (c.n, c.k, c.t, c.d) == (2**m - 1, k, t, 2 * t + 1)
    # A designed t inside a run of equal codes is raised to the run's largest t.
    assert BCHCode(m=7, t=8).t == 9 and BCHCode(m=7, t=8).k == 71
    assert BCHCode(m=8, t=16).t == 18


def test_bch127_64_structure():
    c = BCHCode(m=7, t=10)
    assert repr(c) == "BCHCode(n=127, k=64, t=10, d=21, shorten=0, prim_poly=0x89)"
    assert c.generator_octal == "1206534025570773100045"  # galois 0.4.11
    assert c.generator.size - 1 == 63 and c.generator[0] == 1 and c.generator[-1] == 1
    assert c.G.shape == (64, 127) and c.H.shape == (63, 127)
    assert c.G.dtype == np.uint8 and c.H.dtype == np.uint8
    assert not ((c.G.astype(int) @ c.H.T) % 2).any()
    assert gf2.rank(c.G) == 64 and gf2.rank(c.H) == 63
    assert np.array_equal(c.G[:, :64], np.eye(64, dtype=np.uint8))
    assert not c.G.flags.writeable
    # binary interface shared with RSCode
    assert c.G_bin is c.G and c.H_bin is c.H and (c.n_bits, c.k_bits) == (127, 64)
    msg = np.eye(64, dtype=np.uint8)[:3]
    assert np.array_equal(c.encode_bits(msg), c.G[:3])


@pytest.mark.parametrize("m,t,s", [(4, 2, 0), (7, 10, 4), (8, 4, 100)])
def test_generator_matrix_and_encoding_match_galois(m, t, s):
    import galois
    c = BCHCode(m=m, t=t, shorten=s)
    ref = galois.BCH(2**m - 1, d=c.d)
    assert ref.k == c.k_mother
    assert np.array_equal(np.array(ref.generator_poly.coeffs)[::-1], c.generator)
    assert np.array_equal(np.array(ref.G)[s:, s:], c.G)
    rng = np.random.default_rng(m * 100 + t)
    msg = rng.integers(0, 2, (200, c.k), dtype=np.uint8)
    ours = c.encode(msg)
    assert ours.shape == (200, c.n) and ours.dtype == np.uint8
    assert np.array_equal(ours, np.array(ref.encode(galois.GF2(msg))))  # shortened: galois takes k - s bits
    # Same code as galois' (non-systematic) parity-check matrix, restricted to the kept columns.
    assert not ((ours.astype(int) @ np.array(ref.H)[:, s:].T) % 2).any()
    assert not c.syndromes(ours).any()


@pytest.mark.parametrize("m,t", [(3, 1), (4, 1), (4, 2), (5, 2), (5, 3), (6, 4)])
def test_matrices_are_consistent(m, t):
    c = BCHCode(m=m, t=t)
    assert not ((c.G.astype(int) @ c.H.T) % 2).any()
    assert gf2.rank(c.G) == c.k and gf2.rank(c.H) == c.n - c.k
    # encode = message @ G
    rng = np.random.default_rng(t)
    msg = rng.integers(0, 2, (50, c.k), dtype=np.uint8)
    assert np.array_equal(c.encode(msg), (msg.astype(int) @ c.G) % 2)


@pytest.mark.parametrize("m,t,d_true", [(4, 2, 5), (4, 3, 7), (5, 3, 7)])
def test_true_minimum_distance_by_enumeration(m, t, d_true):
    c = BCHCode(m=m, t=t)
    msgs = np.array(list(itertools.product([0, 1], repeat=c.k)), dtype=np.uint8)[1:]
    w = c.encode(msgs).sum(axis=1)
    assert w.min() == d_true == c.d


def test_shortening():
    full = BCHCode(m=7, t=10)
    c = bch_code(127, 10, shorten=4)
    assert (c.n, c.k, c.d, c.shorten, c.n_mother, c.k_mother) == (123, 60, 21, 4, 127, 64)
    assert np.array_equal(c.G, full.G[4:, 4:])
    assert np.array_equal(c.generator, full.generator)
    msg = np.random.default_rng(0).integers(0, 2, (20, 60), dtype=np.uint8)
    padded = np.hstack([np.zeros((20, 4), np.uint8), msg])
    assert np.array_equal(c.encode(msg), full.encode(padded)[:, 4:])
    assert abs(c.rate - 60 / 123) < 1e-15


def test_bad_parameters():
    with pytest.raises(ValueError, match="t must be >= 1"):
        BCHCode(m=7, t=0)
    with pytest.raises(ValueError, match="exceeds the length"):
        BCHCode(m=4, t=8)
    rep = BCHCode(m=4, t=7)  # every nonzero exponent is a root: the (15, 1, 15) repetition code
    assert (rep.n, rep.k, rep.d) == (15, 1, 15) and rep.encode(np.ones((1, 1), np.uint8)).all()
    with pytest.raises(ValueError, match="shorten"):
        BCHCode(m=7, t=10, shorten=64)
    with pytest.raises(ValueError, match="shorten"):
        BCHCode(m=7, t=10, shorten=-1)
    with pytest.raises(ValueError, match="unsupported field size"):
        BCHCode(m=17, t=2)
    with pytest.raises(ValueError, match="unsupported field size"):
        BCHCode(m=1, t=1)
    with pytest.raises(ValueError, match="2\\^m - 1"):
        bch_code(128, 10)
    with pytest.raises(ValueError, match="integer"):
        BCHCode(m=7, t=2.5)
    c = BCHCode(m=4, t=2)
    with pytest.raises(ValueError, match="shape"):
        c.encode(np.zeros((3, 8), np.uint8))
    with pytest.raises(ValueError, match="binary"):
        c.encode(np.full((3, 7), 2))


def test_catalogue_entries():
    for name, (n, k, d) in {"bch63_45": (63, 45, 7), "bch127_64": (127, 64, 21), "bch255_131": (255, 131, 37)}.items():
        entry = CATALOG[name]
        assert entry.kind == "classical-linear" and entry.family == "bch"
        c = get_code(name)
        assert (c.n, c.k, c.d) == (n, k, d) == (entry.n, entry.k, entry.d)
        assert c.name == name and get_code(name) is c  # built once
    with pytest.raises(ValueError, match="fixed distance 21"):
        get_code("bch127_64", d=5)
    names = [r["name"] for r in list_codes()]
    assert {"bch63_45", "bch127_64", "bch255_131", "rs16_8"} <= set(names)
