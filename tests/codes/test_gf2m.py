"""GF(2^m) tables and helpers (qdecode.codes.gf2m), with galois as the oracle where it is cheap."""

from __future__ import annotations

import galois
import numpy as np
import pytest

from qdecode.codes.gf2m import (
    DEFAULT_PRIMITIVE_POLYS,
    GF2m,
    cyclotomic_coset,
    cyclotomic_cosets,
    gf2m,
    poly_mod_gf2,
    poly_mul_gf2,
    poly_to_int,
)


def test_default_polynomials_are_galois_code_defaults():
    # galois.BCH / galois.ReedSolomon build their fields with matlab_primitive_poly(2, m).
    for m in range(2, 17):
        assert DEFAULT_PRIMITIVE_POLYS[m] == int(galois.matlab_primitive_poly(2, m)), m


@pytest.mark.parametrize("m", range(2, 17))
def test_tables_are_a_bijection(m):
    F = gf2m(m)
    q = 1 << m
    assert F.exp.shape == (2 * (q - 1),) and F.log.shape == (q,)
    assert F.log[0] == -1
    # exp over one period hits every nonzero element once; log inverts it.
    assert np.array_equal(np.sort(F.exp[: q - 1]), np.arange(1, q))
    assert np.array_equal(F.exp[F.log[1:]], np.arange(1, q))
    assert np.array_equal(F.exp[q - 1 :], F.exp[: q - 1])
    assert not F.exp.flags.writeable and not F.log.flags.writeable


@pytest.mark.parametrize("m", [3, 7, 8])
def test_multiplication_matches_galois(m):
    F = gf2m(m)
    G = galois.GF(2**m, irreducible_poly=F.prim_poly)
    rng = np.random.default_rng(m)
    a = rng.integers(0, 2**m, 2000)
    b = rng.integers(0, 2**m, 2000)
    assert np.array_equal(F.mul(a, b), np.array(G(a) * G(b)))
    nz = b != 0
    assert np.array_equal(F.div(a[nz], b[nz]), np.array(G(a[nz]) / G(b[nz])))
    assert np.array_equal(F.power(a, 5), np.array(G(a) ** 5))
    assert np.array_equal(F.alpha_power(np.arange(-3, 20)), np.array(G.primitive_element ** np.arange(-3, 20)))


def test_field_axioms_m16():
    F = gf2m(16)
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(1, 1 << 16, 5000) for _ in range(3))
    assert np.array_equal(F.mul(F.mul(a, b), c), F.mul(a, F.mul(b, c)))
    assert np.array_equal(F.mul(a, b ^ c), F.mul(a, b) ^ F.mul(a, c))
    assert np.all(F.mul(a, F.inv(a)) == 1)
    assert np.array_equal(F.mul(a, 0), np.zeros_like(a))


def test_cyclotomic_cosets_partition_and_minimal_polynomials():
    cos = cyclotomic_cosets(7)
    assert sorted(np.concatenate(cos).tolist()) == list(range(127))
    assert [c.size for c in cos].count(7) == 18  # 126 = 18 * 7 nonzero exponents (7 is prime)
    assert list(cyclotomic_coset(9, 7)) == [9, 17, 18, 34, 36, 68, 72]  # 17 is in the coset of 9
    F = gf2m(7)
    G = galois.GF(2**7, irreducible_poly=F.prim_poly)
    for j in (1, 3, 9, 21):
        mp = F.minimal_poly(j)
        assert mp.size - 1 == cyclotomic_coset(j, 7).size
        assert F.poly_eval(mp.astype(np.int64), F.alpha_power(j)) == 0
        ref = (G.primitive_element**j).minimal_poly()
        assert np.array_equal(mp[::-1], np.array(ref.coeffs)), j


def test_polynomial_helpers():
    F = gf2m(8)
    roots = F.alpha_power(np.arange(1, 9))
    g = F.poly_from_roots(roots)
    assert [int(v) for v in g[::-1]] == [1, 227, 44, 178, 71, 172, 8, 224, 37]  # galois 0.4.11, 0x11D
    assert np.all(F.poly_eval(g, roots) == 0)
    assert np.array_equal(F.poly_mul([1, 1], [1, 1]), [1, 0, 1])
    assert list(poly_mul_gf2([1, 1], [1, 1])) == [1, 0, 1]
    assert list(poly_mod_gf2([0, 0, 0, 1], [1, 1, 0, 1])) == [1, 1, 0]  # x^3 = x + 1 mod x^3+x+1
    assert poly_to_int([1, 0, 1, 1]) == 0b1101


def test_bits_symbols_lsb_first():
    F = gf2m(8)
    bits = F.symbols_to_bits(np.array([[1, 0x80, 0x1D]]))
    assert bits.shape == (1, 24) and bits.dtype == np.uint8
    assert bits[0, :8].tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert bits[0, 8:16].tolist() == [0, 0, 0, 0, 0, 0, 0, 1]
    assert bits[0, 16:].tolist() == [1, 0, 1, 1, 1, 0, 0, 0]
    assert np.array_equal(bits[0], np.unpackbits(np.array([1, 0x80, 0x1D], np.uint8), bitorder="little"))
    rng = np.random.default_rng(1)
    s = rng.integers(0, 256, (5, 7))
    assert np.array_equal(F.bits_to_symbols(F.symbols_to_bits(s)), s)
    # the multiplication matrix acts on LSB-first bit rows
    a, x = 0x53, rng.integers(0, 256, 50)
    M = F.multiplication_matrix(a)
    lhs = F.symbols_to_bits(F.mul(a, x)[:, None])
    assert np.array_equal(lhs, (F.symbols_to_bits(x[:, None]).astype(int) @ M) % 2)


@pytest.mark.parametrize("m", [0, 1, 17, 2.5, "8x", None])
def test_unsupported_field_sizes(m):
    with pytest.raises(ValueError, match="m"):
        GF2m(m)


def test_bad_primitive_polynomials():
    with pytest.raises(ValueError, match="not primitive"):
        GF2m(4, 0x1F)  # x^4+x^3+x^2+x+1: irreducible, but x has order 5
    with pytest.raises(ValueError, match="not primitive"):
        GF2m(4, 0x15)  # x^4+x^2+1 = (x^2+x+1)^2: reducible
    with pytest.raises(ValueError, match="degree"):
        GF2m(8, 0x89)
    F = GF2m(7, 0x83)  # galois.GF(2**7)'s Conway polynomial is primitive too
    assert repr(F) == "GF2m(m=7, prim_poly=0x83)"
    with pytest.raises(ValueError, match="integers in"):
        gf2m(4).mul([16], [1])
    with pytest.raises(ZeroDivisionError):
        gf2m(4).inv([0])
