"""Polar codes: 5G sequence, constructions, CRC, encoding, G/H, distance, catalogue, bad input."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.catalog import get_code
from qdecode.codes.crc import CRC_POLYNOMIALS, Crc
from qdecode.codes.polar import (
    PolarCode,
    bhattacharyya_log_z,
    info_set,
    polar_transform,
    reliability_5g,
    weight_enumerator,
)

# Sionna's copy of the TS 38.212 sequence; see tests/data/PROVENANCE.md.
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "polar" / "polar_5G.csv"
PREFIX_5G = [0, 1, 2, 4, 8, 16, 32, 3, 5, 64, 9, 6, 17, 10, 18, 128]  # TS 38.212 Table 5.3.1.2-1
SET_32_16 = [7, 11, 13, 14, 15, 19, 21, 22, 23, 25, 26, 27, 28, 29, 30, 31]  # RM(2,5)
SET_64_22 = [23, 27, 29, 30, 31, 39, 43, 45, 46, 47, 51, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]


def mod2(a, b):
    return (a.astype(np.int64) @ b.astype(np.int64)) % 2


def kron_gn(N):
    g = np.array([[1]], dtype=np.int64)
    while g.shape[0] < N:
        g = np.kron(g, np.array([[1, 0], [1, 1]]))
    return g


# ----------------------------------------------------------------------------- 5G sequence
def test_5g_sequence_is_a_permutation_with_the_known_prefix():
    q = reliability_5g(1024)
    assert q.shape == (1024,)
    assert np.array_equal(np.sort(q), np.arange(1024))
    assert q[:16].tolist() == PREFIX_5G
    assert q[-1] == 1023


def test_5g_sequence_matches_fixture():
    rows = [line.strip().split(";") for line in FIXTURE.read_text().splitlines() if line.strip()]
    ref = np.array([int(i) for _, i in rows])
    assert np.array_equal(reliability_5g(1024), ref)


@pytest.mark.parametrize("N", [2, 16, 32, 256])
def test_5g_subsequence_keeps_order(N):
    full = reliability_5g(1024)
    assert np.array_equal(reliability_5g(N), full[full < N])


# ----------------------------------------------------------------------------- constructions
def test_info_sets_of_the_research_note():
    assert info_set(32, 16, "5g").tolist() == SET_32_16
    assert info_set(32, 16, "rm").tolist() == SET_32_16
    assert info_set(64, 22, "5g").tolist() == SET_64_22
    # RM(2, 6): every index of weight >= 4
    assert info_set(64, 22, "rm").tolist() == [i for i in range(64) if bin(i).count("1") >= 4]


def test_bhattacharyya_matches_the_recursive_definition():
    def z(vec):  # first half of a block: z- = a + b - ab; second half: z+ = ab
        if vec.size == 1:
            return vec
        a, b = vec[: vec.size // 2], vec[vec.size // 2 :]
        return np.concatenate([z(a + b - a * b), z(a * b)])

    for N, z0 in [(2, 0.5), (16, 0.3), (64, 0.7)]:
        np.testing.assert_allclose(np.exp(bhattacharyya_log_z(N, z0)), z(np.full(N, z0)), rtol=1e-12)


def test_bhattacharyya_respects_the_polarization_partial_order():
    # setting a 0 bit of i to 1 never makes the synthetic channel worse
    lz = bhattacharyya_log_z(128, 0.5)
    for i in range(128):
        for b in range(7):
            if not (i >> b) & 1:
                assert lz[i | (1 << b)] <= lz[i] + 1e-12


def test_bhattacharyya_set_is_the_k_smallest_z():
    N, K = 128, 40
    A = info_set(N, K, "bhattacharyya", design_ebn0_db=2.0)
    lz = bhattacharyya_log_z(N, np.exp(-(K / N) * 10 ** 0.2))
    assert lz[A].max() <= np.delete(lz, A).min()
    # a design point so good that z0 underflows still works (log domain)
    assert info_set(N, K, "bhattacharyya", design_ebn0_db=45.0).size == K


# ----------------------------------------------------------------------------- transform, G, H
def test_polar_transform_is_u_times_kronecker_power_and_an_involution():
    rng = np.random.default_rng(0)
    u = rng.integers(0, 2, (50, 64), dtype=np.uint8)
    x = polar_transform(u)
    assert np.array_equal(x, mod2(u, kron_gn(64)))
    assert np.array_equal(polar_transform(x), u)


@pytest.mark.parametrize(
    "code",
    [
        PolarCode.from_construction(32, 16, "5g"),
        PolarCode.from_construction(64, 22, "bhattacharyya", design_ebn0_db=1.0),
        PolarCode.from_construction(128, 64, "rm"),
        PolarCode.from_construction(64, 20, "5g", crc="crc6"),
        PolarCode.from_construction(128, 40, "5g", crc="crc11"),
    ],
    ids=repr,
)
def test_generator_and_parity_checks(code):
    G, H = code.G, code.H
    assert G.shape == (code.k, code.N) and H.shape == (code.N - code.k, code.N)
    assert not mod2(G, H.T).any()
    assert gf2.rank(G) == code.k and gf2.rank(H) == code.N - code.k
    rng = np.random.default_rng(1)
    msgs = rng.integers(0, 2, (200, code.k), dtype=np.uint8)
    x = code.encode(msgs)
    assert x.dtype == np.uint8
    assert np.array_equal(x, mod2(msgs, G))
    assert np.array_equal(code.extract(x), msgs)
    if code.crc is not None:  # the CRC bits on A are the CRC of the message
        v = polar_transform(x)[:, code.info_positions]
        assert code.crc.check(v).all()


def test_plain_generator_rows_are_kronecker_rows():
    code = PolarCode.from_construction(64, 22, "5g")
    assert np.array_equal(code.G, kron_gn(64)[code.info_positions])
    assert np.array_equal(code.H, kron_gn(64)[:, code.frozen_positions].T)


def test_distance_and_weight_enumerators_of_the_research_note():
    c32 = get_code("polar32_16")
    assert c32.d == 8 and weight_enumerator(c32.G)[8] == 620
    c64 = get_code("polar64_22")
    assert c64.d == 8 and weight_enumerator(c64.G)[8] == 8
    # brute force on a small code: the closed form equals the enumerated minimum weight
    small = PolarCode.from_construction(16, 7, "bhattacharyya")
    A = weight_enumerator(small.G)
    assert small.d == int(np.flatnonzero(A[1:])[0] + 1)
    assert A.sum() == 2**7


def test_catalogue_entries():
    for name, (n, k) in {"polar32_16": (32, 16), "polar64_22": (64, 22), "polar128_64": (128, 64)}.items():
        c = get_code(name)
        assert (c.n, c.k, c.N, c.name) == (n, k, n, name)
        assert c.crc is None and c.construction == "5g"
        assert c.info_positions.tolist() == info_set(n, k, "5g").tolist()
    assert get_code("polar128_64").d == 8


# ----------------------------------------------------------------------------- CRC
def crc_long_division(bits, degree, poly):
    """Remainder of bits(D) D^r by g(D), MSB first, by textbook long division."""
    g = [1] + [(poly >> (degree - 1 - j)) & 1 for j in range(degree)]
    reg = list(bits) + [0] * degree
    for i in range(len(bits)):
        if reg[i]:
            for j in range(degree + 1):
                reg[i + j] ^= g[j]
    return reg[len(bits):]


@pytest.mark.parametrize("name", sorted(CRC_POLYNOMIALS))
def test_crc_matches_long_division_and_detects_single_errors(name):
    crc = Crc.from_name(name)
    rng = np.random.default_rng(2)
    msgs = rng.integers(0, 2, (20, 37), dtype=np.uint8)
    par = crc.compute(msgs)
    for row, p in zip(msgs, par):
        assert p.tolist() == crc_long_division(row.tolist(), crc.degree, crc.poly)
    words = crc.attach(msgs)
    assert crc.check(words).all()
    for i in range(words.shape[1]):
        bad = words.copy()
        bad[:, i] ^= 1
        assert not crc.check(bad).any()


def test_crc16_check_value():
    # CRC-16/XMODEM (poly 0x1021, zero init, no reflection) of b"123456789" is 0x31C3
    bits = np.unpackbits(np.frombuffer(b"123456789", dtype=np.uint8))[None]
    assert int("".join(map(str, Crc.from_name("crc16").compute(bits)[0])), 2) == 0x31C3


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: PolarCode.from_construction(48, 10), "power of two"),
        (lambda: PolarCode.from_construction(1, 1), "power of two"),
        (lambda: PolarCode.from_construction(32, 33), "exceeds the length"),
        (lambda: PolarCode.from_construction(32, 0), "positive integer"),
        (lambda: PolarCode.from_construction(32, 30, crc="crc6"), "exceeds the length"),
        (lambda: PolarCode.from_construction(32, 16, "gaussian"), "unknown polar construction"),
        (lambda: PolarCode.from_construction(2048, 16, "5g"), "N <= 1024"),
        (lambda: PolarCode.from_construction(32, 16, crc="crc7"), "unknown CRC"),
        (lambda: PolarCode.from_construction(32, 16, "bhattacharyya", design_ebn0_db=float("nan")), "finite"),
        (lambda: PolarCode(32, [1, 1, 2]), "distinct"),
        (lambda: PolarCode(32, [0, 32]), "lie in"),
        (lambda: PolarCode(32, [3.5]), "integer"),
        (lambda: PolarCode(32, [5], conv=(0, 1)), "c_0 = 1"),
        (lambda: PolarCode(32, [5, 6], crc=Crc.from_name("crc6")), "at least 7"),
        (lambda: bhattacharyya_log_z(16, 1.5), r"in \(0, 1\]"),
        (lambda: bhattacharyya_log_z(16), "exactly one"),
        (lambda: bhattacharyya_log_z(16, log_z0=0.5), "<= 0"),
        (lambda: Crc("x", 0, 1), "degree"),
        (lambda: Crc("x", 4, 0b1010), "constant term"),
        (lambda: Crc("x", 4, 0b10001), "below 2"),
    ],
)
def test_bad_construction_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_messages_raise():
    code = PolarCode.from_construction(32, 16)
    with pytest.raises(ValueError, match=r"shape \(S, k=16\)"):
        code.encode(np.zeros((2, 15), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"shape \(S, k=16\)"):
        code.encode(np.zeros(16, dtype=np.uint8))
    with pytest.raises(ValueError, match="binary"):
        code.encode(np.full((1, 16), 2))
    with pytest.raises(ValueError, match="shape"):
        code.extract(np.zeros((1, 31), dtype=np.uint8))
    with pytest.raises(ValueError, match="2-D"):
        polar_transform(np.zeros(8, dtype=np.uint8))


def test_all_small_codes_roundtrip_exhaustively():
    # every info set of an N = 8 code: encode is injective and extract inverts it
    for A in itertools.combinations(range(8), 3):
        code = PolarCode(8, A)
        msgs = np.array(list(itertools.product([0, 1], repeat=3)), dtype=np.uint8)
        x = code.encode(msgs)
        assert len({tuple(r) for r in x}) == 8
        assert np.array_equal(code.extract(x), msgs)
