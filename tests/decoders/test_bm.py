"""Berlekamp-Massey decoding of BCH and RS codes (qdecode.decoders.bm / kernels.bm).

Oracles: galois 0.4.11's decoder on 10^4 stored random words per code (tests/data, made by
generate_bm_golden.py because galois needs minutes for them), galois live on a few words
(slow), the bounded-distance property, and the exact BLER of a bounded-distance decoder
on BPSK-AWGN, ``P(more than t bit errors)``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import binom

from qdecode.codes.bch import BCHCode
from qdecode.codes.catalog import get_code
from qdecode.codes.rs import RSCode
from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.bm import BmDecoder
from qdecode.sims.channels import BpskAwgn
from qdecode.sims.stats import fit_binomial

DATA = Path(__file__).resolve().parents[1] / "data"


def _unpack(a: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(a, axis=1, count=n, bitorder="little")


# ----------------------------------------------------------------------------- galois, 10^4 words
def test_bch127_64_agrees_with_galois_on_10k_words():
    z = np.load(DATA / "bm_galois_bch127_64.npz")
    code = get_code("bch127_64")
    cw = code.encode(_unpack(z["messages"], 64))
    err = _unpack(z["errors"], 127)
    rx = cw ^ err
    ref = rx ^ _unpack(z["decoded_xor"], 127)
    ref_nerr = z["n_errors"].astype(np.int32)
    assert rx.shape == (10_000, 127)
    dec = BmDecoder(code)
    out = dec.decode_hard_batch(rx)
    nerr = dec.last_info.extra["corrected"]
    np.testing.assert_array_equal(nerr, ref_nerr)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(dec.last_info.extra["failed"], ref_nerr < 0)
    # Both regimes are exercised: every word of weight <= 10 decoded, heavier ones mostly fail.
    w = err.sum(axis=1)
    assert np.array_equal(out[w <= 10], cw[w <= 10])
    assert (w <= 10).sum() > 3000 and (nerr < 0).sum() > 5000


def test_rs16_8_agrees_with_galois_on_10k_words_with_erasures():
    z = np.load(DATA / "bm_galois_rs16_8.npz")
    code = get_code("rs16_8")
    cw = code.encode(z["messages"].astype(np.int64))
    era = _unpack(z["erasures"], 16).astype(bool)
    rx = np.where(era, z["erased_values"].astype(np.int64), cw ^ z["errors"].astype(np.int64))
    ref = rx ^ z["decoded_xor"].astype(np.int64)
    ref_nerr = z["n_errors"].astype(np.int32)
    dec = BmDecoder(code)
    out = dec.decode_symbols_batch(rx, era)
    nerr = dec.last_info.extra["corrected"]
    # galois' Berlekamp-Massey keeps only len(sequence) coefficients, so when the LFSR length
    # L exceeds that, it reports a shorter locator and returns a word that is NOT a codeword
    # (with 7 erasures there is one modified syndrome). We declare failure there instead.
    # Everywhere else the answers agree exactly.
    galois_wrong = (ref_nerr >= 0) & code.syndromes(ref).any(axis=1)
    agree = ~galois_wrong
    np.testing.assert_array_equal(nerr[agree], ref_nerr[agree])
    np.testing.assert_array_equal(out[agree], ref[agree])
    assert np.all(nerr[galois_wrong] == -1)
    assert np.array_equal(out[galois_wrong], rx[galois_wrong])
    assert galois_wrong.sum() == 880  # of 10^4 stored words: 875 with 7 erasures, 5 with 6
    # Every word within the errors-and-erasures bound is decoded to the transmitted codeword.
    f = era.sum(axis=1)
    e = ((z["errors"] != 0) & ~era).sum(axis=1)
    inside = 2 * e + f <= 8
    assert inside.sum() > 2000
    assert np.array_equal(out[inside], cw[inside])
    assert np.array_equal(nerr[inside], e[inside])


@pytest.mark.slow
def test_live_galois_small_codes():
    import galois
    rng = np.random.default_rng(11)
    code = BCHCode(m=6, t=4, shorten=3)
    ref = galois.BCH(63, d=code.d)
    cw = code.encode(rng.integers(0, 2, (300, code.k), dtype=np.uint8))
    err = (rng.random(cw.shape) < 0.08).astype(np.uint8)
    out = BmDecoder(code).decode_hard_batch(cw ^ err)
    r_out, r_n = ref.decode(galois.GF2(cw ^ err), output="codeword", errors=True)
    assert np.array_equal(out, np.array(r_out))
    rs = RSCode(12, 6, m=4)
    ref = galois.ReedSolomon(15, 9)
    cw = rs.encode(rng.integers(0, 16, (300, 6)))
    rx = cw ^ np.where(rng.random(cw.shape) < 0.15, rng.integers(1, 16, cw.shape), 0)
    era = rng.random(cw.shape) < 0.1
    dec = BmDecoder(rs)
    out = dec.decode_symbols_batch(rx, era)
    r_out, r_n = ref.decode(ref.field(rx), erasures=era, output="codeword", errors=True)
    r_out = np.array(r_out)
    ok = (r_n < 0) | ~rs.syndromes(r_out).any(axis=1)
    assert np.array_equal(out[ok], r_out[ok]) and np.array_equal(dec.last_info.extra["corrected"][ok], r_n[ok])


# ----------------------------------------------------------------------------- properties
@pytest.mark.parametrize("m,t,s", [(4, 2, 0), (5, 3, 7), (7, 10, 0), (8, 18, 0), (10, 12, 400)])
def test_bch_corrects_up_to_t_and_is_bounded_distance(m, t, s):
    code = BCHCode(m=m, t=t, shorten=s)
    rng = np.random.default_rng(m)
    S = 600
    cw = code.encode(rng.integers(0, 2, (S, code.k), dtype=np.uint8))
    w = rng.integers(0, 2 * code.t + 3, S)
    err = np.zeros_like(cw)
    for i in range(S):
        err[i, rng.choice(code.n, w[i], replace=False)] = 1
    dec = BmDecoder(code)
    out = dec.decode_hard_batch(cw ^ err)
    nerr = dec.last_info.extra["corrected"]
    ok = w <= code.t
    assert np.array_equal(out[ok], cw[ok]) and np.array_equal(nerr[ok], w[ok])
    # success => a codeword within distance t of the received word, at distance nerr
    succ = nerr >= 0
    assert not code.syndromes(out[succ]).any()
    assert np.array_equal((out[succ] ^ cw[succ] ^ err[succ]).sum(axis=1), nerr[succ])
    assert np.all(nerr <= code.t)
    assert np.array_equal(out[~succ], (cw ^ err)[~succ])
    assert np.array_equal(dec.last_info.converged, succ)


@pytest.mark.parametrize("n,k,m", [(16, 8, 8), (15, 9, 4), (31, 19, 5), (100, 70, 8), (300, 240, 10)])
def test_rs_errors_and_erasures_within_bound(n, k, m):
    code = RSCode(n, k, m)
    rng = np.random.default_rng(n)
    S = 400
    r = n - k
    cw = code.encode(rng.integers(0, 2**m, (S, k)))
    f = rng.integers(0, r + 1, S)
    e = (r - f) // 2
    rx = cw.copy()
    era = np.zeros(cw.shape, dtype=bool)
    for i in range(S):
        pos = rng.permutation(n)
        rx[i, pos[: e[i]]] ^= rng.integers(1, 2**m, e[i])
        era[i, pos[e[i] : e[i] + f[i]]] = True
        rx[i, pos[e[i] : e[i] + f[i]]] = rng.integers(0, 2**m, f[i])
    dec = BmDecoder(code)
    out = dec.decode_symbols_batch(rx, era)
    assert np.array_equal(out, cw)
    assert np.array_equal(dec.last_info.extra["corrected"], e)
    # errors only, up to t
    rx2 = cw.copy()
    for i in range(S):
        pos = rng.choice(n, code.t, replace=False)
        rx2[i, pos] ^= rng.integers(1, 2**m, code.t)
    assert np.array_equal(dec.decode_symbols_batch(rx2), cw)
    # beyond the bound: success only ever yields a codeword within the decoding radius
    rx3 = rng.integers(0, 2**m, (S, n))
    out3 = dec.decode_symbols_batch(rx3)
    nerr3 = dec.last_info.extra["corrected"]
    succ = nerr3 >= 0
    assert not code.syndromes(out3[succ]).any()
    assert np.array_equal((out3[succ] != rx3[succ]).sum(axis=1), nerr3[succ])
    assert np.array_equal(out3[~succ], rx3[~succ])


def test_batch_equals_single_and_threads_agree():
    code = BCHCode(m=7, t=10)
    rng = np.random.default_rng(3)
    rx = code.encode(rng.integers(0, 2, (64, 64), dtype=np.uint8)) ^ (rng.random((64, 127)) < 0.07)
    one = BmDecoder(code, threads=1).decode_hard_batch(rx)
    two = BmDecoder(code, threads=2).decode_hard_batch(rx)
    assert np.array_equal(one, two)
    dec = BmDecoder(code)
    for i in range(0, 64, 9):
        assert np.array_equal(dec.decode_hard(rx[i]), one[i])
    assert dec.decode_hard_batch(np.zeros((0, 127), np.uint8)).shape == (0, 127)


def test_llr_interface_bch_and_rs_binary_image():
    code = BCHCode(m=7, t=10)
    rng = np.random.default_rng(4)
    cw = code.encode(rng.integers(0, 2, (100, 64), dtype=np.uint8))
    llr = BpskAwgn(5.0, code.rate).transmit(cw, rng)
    dec = BmDecoder(code)
    out = dec.decode_llr_batch(llr)
    assert out.dtype == np.uint8 and out.shape == (100, 127)
    assert np.array_equal(out, dec.decode_hard_batch((llr <= 0).astype(np.uint8)))
    assert np.array_equal(dec.decode_llr(llr[0]), out[0])
    # llr = 0 decides 1 (DESIGN: llr <= 0 -> 1); the all-ones word is a BCH codeword (alpha^0 is no root)
    assert np.array_equal(dec.decode_llr_batch(np.zeros((1, 127))), np.ones((1, 127), np.uint8))
    assert np.array_equal(dec.decode_llr_batch(np.full((1, 127), np.inf)), np.zeros((1, 127), np.uint8))
    # RS: bits -> symbols (LSB first) -> BM -> bits
    rs = get_code("rs16_8")
    msg = rng.integers(0, 2, (200, 64), dtype=np.uint8)
    bits = rs.encode_bits(msg)
    noisy = bits.copy()
    for i in range(200):  # 4 corrupted symbols, several bits each
        for s in rng.choice(16, 4, replace=False):
            noisy[i, 8 * s : 8 * s + 8] ^= rng.integers(0, 2, 8, dtype=np.uint8)
    llr = np.where(noisy == 1, -1.5, 1.5)
    rdec = BmDecoder(rs)
    assert rdec.n_bits == 128
    assert np.array_equal(rdec.decode_llr_batch(llr), bits)


def test_bad_input():
    dec = BmDecoder(BCHCode(m=4, t=2))
    with pytest.raises(DecoderInputError, match="shape"):
        dec.decode_hard_batch(np.zeros((2, 14), np.uint8))
    with pytest.raises(DecoderInputError, match="binary"):
        dec.decode_hard_batch(np.full((2, 15), 3))
    with pytest.raises(DecoderInputError, match="Reed-Solomon codes only"):
        dec.decode_hard_batch(np.zeros((2, 15), np.uint8), np.zeros((2, 15), bool))
    with pytest.raises(DecoderInputError, match="shape"):
        dec.decode_llr_batch(np.zeros((2, 16)))
    with pytest.raises(DecoderInputError, match="NaN"):
        dec.decode_llr_batch(np.full((2, 15), np.nan))
    with pytest.raises(DecoderInputError, match="one block"):
        dec.decode_llr(np.zeros((1, 15)))
    rdec = BmDecoder(RSCode(16, 8))
    with pytest.raises(DecoderInputError, match="symbols"):
        rdec.decode_symbols_batch(np.full((1, 16), 256))
    with pytest.raises(DecoderInputError, match="integer"):
        rdec.decode_symbols_batch(np.zeros((1, 16)))
    with pytest.raises(DecoderInputError, match="rows"):
        rdec.decode_symbols_batch(np.zeros((2, 16), int), np.zeros((3, 16), bool))
    with pytest.raises(DecoderInputError, match="shape"):
        rdec.decode_llr_batch(np.zeros((1, 16)))
    with pytest.raises(ValueError, match="BCH or Reed-Solomon"):
        BmDecoder(object())
    # erasing everything is a clean failure, not an error
    out = rdec.decode_symbols_batch(np.zeros((1, 16), int), np.ones((1, 16), bool))
    assert rdec.last_info.extra["failed"].tolist() == [True] and out.shape == (1, 16)


# ----------------------------------------------------------------------------- BLER vs exact formula
def _exact_bd_bler(code: BCHCode, ebn0_db: float) -> float:
    """P(more than t of n bits flipped), p = Q(sqrt(2 R Eb/N0)) = Q(1 / sigma)."""
    p = float(ndtr(-1.0 / math.sqrt(BpskAwgn(ebn0_db, code.rate).sigma2)))
    return float(binom.sf(code.t, code.n, p))


def _measure_bler(code: BCHCode, ebn0_db: float, shots: int, seed: int) -> tuple[int, int]:
    dec = BmDecoder(code)
    ch = BpskAwgn(ebn0_db, code.rate)
    rng = np.random.default_rng(seed)
    errors = 0
    for start in range(0, shots, 50_000):
        s = min(50_000, shots - start)
        cw = code.encode(rng.integers(0, 2, (s, code.k), dtype=np.uint8))
        out = dec.decode_llr_batch(ch.transmit(cw, rng))
        errors += int(np.any(out != cw, axis=1).sum())
    return shots, errors


@pytest.mark.parametrize("ebn0_db,shots,reference",
                         [(4.0, 20_000, 9.85e-2), (5.0, 60_000, 7.91e-3), (6.0, 400_000, 1.57e-4)])
def test_bch127_64_bler_matches_bounded_distance_formula(ebn0_db, shots, reference):
    code = get_code("bch127_64")
    exact = _exact_bd_bler(code, ebn0_db)
    assert abs(exact / reference - 1) < 0.01  # exact P(> 10 bit errors), as AFF3CT's references
    n, hits = _measure_bler(code, ebn0_db, shots, seed=int(ebn0_db * 10))
    fit = fit_binomial(num_shots=n, num_hits=hits)
    assert fit.low <= exact <= fit.high, (ebn0_db, hits, n, fit, exact)
    assert hits >= 25  # ~1970, ~475 and ~63 expected block errors


@pytest.mark.slow
def test_bch127_64_bler_6db_many_errors():
    code = get_code("bch127_64")
    exact = _exact_bd_bler(code, 6.0)
    n, hits = _measure_bler(code, 6.0, 1_500_000, seed=606)
    fit = fit_binomial(num_shots=n, num_hits=hits)
    assert fit.low <= exact <= fit.high and hits >= 150
