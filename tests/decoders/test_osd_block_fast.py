"""The pruned classical OSD (``kernels.osd.osd_classical_solve``) against the unpruned reference.

``tests/kernels/osd_reference.py`` (``osd_classical_solve_ref``, ``osd_reference_decode``) is the
plain Fossorier-Lin enumeration (every test pattern of weight 1..order costed in full, first
strict minimum wins). The fast kernel only skips candidates that provably cannot beat the
incumbent, so its codewords must equal the reference's bit for bit, ties included. The
quantised-LLR cases make exact ties (and zero LLRs) common.
"""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.codes.catalog import get_code
from qdecode.decoders.osd import OsdBlockDecoder
from qdecode.kernels import gf2
from qdecode.kernels import osd as kosd
from tests.kernels.osd_reference import osd_classical_solve_ref, osd_reference_decode


def _generator(name: str) -> np.ndarray:
    code = get_code(name)
    return np.asarray(code.G_bin if name.startswith("rs") else code.G, dtype=np.uint8)


def _awgn_llr(rng, shots, k, n, ebn0_db):
    """BPSK-AWGN LLRs of random codewords' worth of noise (all-zero codeword; OSD is linear)."""
    sigma2 = 1.0 / (2.0 * (k / n) * 10.0 ** (ebn0_db / 10.0))
    y = 1.0 + np.sqrt(sigma2) * rng.standard_normal((shots, n))
    return 2.0 * y / sigma2


def _discrepancy(llr, cw):
    hard = (llr <= 0).astype(np.uint8)
    return np.where(cw != hard, np.abs(llr), 0.0).sum(axis=1)


# (code, orders, blocks per (order, Eb/N0)); order 3 on k = 64 costs ~2 ms/block in the reference
_CASES = [
    ("bch63_45", (0, 1, 2, 3), 1500),
    ("bch127_64", (0, 1, 2), 1500),
    ("bch127_64", (3,), 150),
    ("rs16_8", (0, 1, 2), 1500),
    ("rs16_8", (3,), 150),
]


@pytest.mark.parametrize("name,orders,shots", _CASES)
def test_fast_osd_matches_reference(name, orders, shots):
    G = _generator(name)
    k, n = G.shape
    rng = np.random.default_rng(2026)
    H = gf2.gf2_nullspace(G).astype(np.int64)
    for order in orders:
        dec = OsdBlockDecoder(G=G, order=order)
        for ebn0 in (2.0, 3.0, 4.0):
            llr = _awgn_llr(rng, shots, k, n, ebn0)
            ref = osd_reference_decode(dec, llr)
            new = dec.decode_llr_batch(llr)
            assert np.array_equal(new, ref), (name, order, ebn0)
            # codewords, and never worse than the reference
            assert not np.any((new.astype(np.int64) @ H.T) % 2)
            assert np.all(_discrepancy(llr, new) <= _discrepancy(llr, ref))


@pytest.mark.parametrize("name", ["bch63_45", "rs16_8"])
def test_fast_osd_matches_reference_with_ties(name):
    """LLRs on a coarse grid (many equal reliabilities, some zeros): tie-breaking must agree."""
    G = _generator(name)
    k, n = G.shape
    rng = np.random.default_rng(7)
    llr = np.round(_awgn_llr(rng, 800, k, n, 1.0) * 0.5) / 0.5
    for order in (1, 2, 3):
        dec = OsdBlockDecoder(G=G, order=order)
        assert np.array_equal(dec.decode_llr_batch(llr), osd_reference_decode(dec, llr)), order


def test_fast_osd_multiword_and_small_k():
    """n > 128 (4 words per row), a rank-deficient-looking order clamp, and threads."""
    G = _generator("bch255_131")
    k, n = G.shape
    rng = np.random.default_rng(11)
    llr = _awgn_llr(rng, 120, k, n, 2.5)
    dec = OsdBlockDecoder(G=G, order=2)
    ref = osd_reference_decode(dec, llr, threads=1)
    assert np.array_equal(dec.decode_llr_batch(llr, threads=2), ref)
    small = OsdBlockDecoder(G=[[1, 1, 0, 1, 0], [0, 1, 1, 0, 1]], order=5)  # order clamped to k = 2
    llr = _awgn_llr(rng, 300, 2, 5, 0.0)
    assert np.array_equal(small.decode_llr_batch(llr), osd_reference_decode(small, llr))


def test_solve_returns_reference_discrepancy():
    G = _generator("bch63_45")
    k, n = G.shape
    dec = OsdBlockDecoder(G=G, order=2)
    rng = np.random.default_rng(3)
    llr = _awgn_llr(rng, 50, k, n, 2.0)
    sc = kosd.osd_classical_scratch(k, n, 2)
    a = np.zeros(n, np.uint8)
    b = np.zeros(n, np.uint8)
    for row in llr:
        da = kosd.osd_classical_solve(row, dec._g_packed, 2, a, sc)
        db = osd_classical_solve_ref(row, dec._g_packed, 2, b, sc)
        assert da == db and np.array_equal(a, b)
