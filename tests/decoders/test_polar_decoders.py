"""SC / SCL decoders for polar and PAC codes: an independent recursive SC, exhaustive ML,
path-metric identities, CRC-aided selection, reference BLERs, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from qdecode.codes.catalog import get_code
from qdecode.codes.pac import PacCode
from qdecode.codes.polar import PolarCode, polar_transform
from qdecode.decoders import DecoderInputError
from qdecode.decoders.sc_scl import ScDecoder, SclDecoder
from qdecode.sims.stats import fit_binomial


# ----------------------------------------------------------------------------- helpers
def awgn_llr(code, ebn0_db, blocks, seed):
    """BPSK-AWGN (bit 0 -> +1, sigma^2 = 1/(2 R Eb/N0)), LLR = 2y/sigma^2; random messages."""
    rng = np.random.default_rng(seed)
    msgs = rng.integers(0, 2, (blocks, code.k), dtype=np.uint8)
    x = code.encode(msgs)
    sigma2 = 1.0 / (2.0 * code.rate * 10.0 ** (ebn0_db / 10.0))
    y = (1.0 - 2.0 * x) + rng.normal(0.0, np.sqrt(sigma2), x.shape)
    return msgs, x, 2.0 * y / sigma2


def discrepancy(llr, cw):
    """Correlation discrepancy sum_{j: c_j != hard(y_j)} |llr_j| (the BPSK-AWGN ML metric)."""
    return (np.abs(llr) * (cw != np.signbit(llr))).sum(axis=1)


def reference_sc(llr, frozen, conv, exact):
    """Textbook recursive SC (Arikan), leaf by leaf, written independently of the kernels.

    f = 2 atanh(tanh(a/2) tanh(b/2)) (exact) or sign*sign*min (min-sum), g = b + (1-2u) a;
    frozen u_i = sum_{j>=1} c_j v_{i-j}; information u_i = [llr < 0 or llr = -0.0].
    """
    N = llr.size
    v = np.zeros(N, dtype=np.uint8)

    def f(a, b):
        if exact:
            return 2.0 * np.arctanh(np.clip(np.tanh(a / 2) * np.tanh(b / 2), -1 + 1e-16, 1 - 1e-16))
        return np.sign(a) * np.sign(b) * np.minimum(abs(a), abs(b))

    def rec(lv, lo):
        if lv.size == 1:
            i = lo
            fi = 0
            for j in range(1, len(conv)):
                if conv[j] and i >= j:
                    fi ^= int(v[i - j])
            if frozen[i]:
                v[i] = 0
                return np.array([fi], dtype=np.uint8)
            u = int(np.signbit(lv[0]))
            v[i] = u ^ fi
            return np.array([u], dtype=np.uint8)
        h = lv.size // 2
        b1 = rec(f(lv[:h], lv[h:]), lo)
        b2 = rec(lv[h:] + (1.0 - 2.0 * b1) * lv[:h], lo + h)
        return np.concatenate([b1 ^ b2, b2])

    return rec(np.asarray(llr, dtype=np.float64), 0)


def all_codewords(code):
    msgs = np.array(list(itertools.product([0, 1], repeat=code.k)), dtype=np.uint8)
    return code.encode(msgs)


def ml_decode(code, llr, chunk=4096):
    """Exhaustive ML over all 2^k codewords: maximise the correlation sum_j (1 - 2c_j) llr_j."""
    cws = all_codewords(code)
    signs = 1.0 - 2.0 * cws.astype(np.float64)
    best = np.empty(llr.shape[0], dtype=np.int64)
    for a in range(0, llr.shape[0], chunk):
        best[a : a + chunk] = np.argmax(llr[a : a + chunk] @ signs.T, axis=1)
    return cws[best]


CODES = {
    "polar32_16": lambda: get_code("polar32_16"),
    "polar64_22": lambda: get_code("polar64_22"),
    "polar128_64": lambda: get_code("polar128_64"),
    "pac32_16": lambda: get_code("pac32_16"),
    "pac64_22_5g": lambda: PacCode.from_profile(64, 22, "5g"),
    "polar64_20_crc6": lambda: PolarCode.from_construction(64, 20, "5g", crc="crc6"),
    "bhat128_40": lambda: PolarCode.from_construction(128, 40, "bhattacharyya", design_ebn0_db=2.0),
}


@pytest.fixture(params=sorted(CODES), scope="module")
def code(request):
    return CODES[request.param]()


# ----------------------------------------------------------------------------- correctness
def test_noiseless_blocks_decode_to_the_codeword(code):
    rng = np.random.default_rng(3)
    msgs = rng.integers(0, 2, (300, code.k), dtype=np.uint8)
    x = code.encode(msgs)
    llr = 3.0 * (1.0 - 2.0 * x)
    for dec in (ScDecoder(code), ScDecoder(code, exact=True), SclDecoder(code, 1), SclDecoder(code, 8)):
        assert np.array_equal(dec.decode_llr_batch(llr), x)
        assert np.array_equal(dec.message_bits(dec.decode_llr_batch(llr)), msgs)
        assert dec.last_info.extra["crc_ok"].all()


@pytest.mark.parametrize("exact", [False, True])
def test_sc_matches_the_recursive_reference(code, exact):
    _, _, llr = awgn_llr(code, 1.5, 150, seed=4)
    got = ScDecoder(code, exact=exact).decode_llr_batch(llr)
    ref = np.array([reference_sc(row, code.frozen_mask, code.conv, exact) for row in llr])
    assert np.array_equal(got, ref)


def test_scl_with_one_path_is_sc_bit_for_bit(code):
    for exact in (False, True):
        _, _, llr = awgn_llr(code, 1.0, 2000, seed=5)
        sc = ScDecoder(code, exact=exact)
        scl = SclDecoder(code, 1, exact=exact, crc=False)
        assert np.array_equal(sc.decode_llr_batch(llr), scl.decode_llr_batch(llr))
        assert np.array_equal(sc.message_bits(sc.decode_llr_batch(llr)), scl.message_bits(scl.decode_llr_batch(llr)))


def test_sc_shortcuts_agree_with_leaf_by_leaf_decisions_on_ties(code):
    # quantised LLRs (BSC-like, with signed zeros) make f/g ties common; SC's rate-1
    # shortcut and SCL(L=1)'s leaf-by-leaf decisions still agree (sign-bit hard decisions)
    rng = np.random.default_rng(13)
    llr = rng.choice([-2.0, -1.0, -0.0, 0.0, 1.0, 2.0], (2000, code.N))
    assert np.array_equal(ScDecoder(code).decode_llr_batch(llr), SclDecoder(code, 1, crc=False).decode_llr_batch(llr))


def test_path_metric_is_the_correlation_discrepancy(code):
    _, _, llr = awgn_llr(code, 1.0, 1000, seed=6)
    dec = SclDecoder(code, 8, crc=False)
    cw = dec.decode_llr_batch(llr)
    np.testing.assert_allclose(dec.last_info.extra["metric"], discrepancy(llr, cw), rtol=1e-9, atol=1e-9)
    # exact mode: the same up to the constant sum_j log1p(exp(-|llr_j|))
    dec = SclDecoder(code, 8, exact=True, crc=False)
    cw = dec.decode_llr_batch(llr)
    const = np.log1p(np.exp(-np.abs(llr))).sum(axis=1)
    np.testing.assert_allclose(dec.last_info.extra["metric"], discrepancy(llr, cw) + const, rtol=1e-9)


def test_outputs_are_codewords_and_batch_equals_single(code):
    _, _, llr = awgn_llr(code, 0.0, 64, seed=7)
    for dec in (ScDecoder(code), SclDecoder(code, 4)):
        cw = dec.decode_llr_batch(llr)
        ok = dec.last_info.extra["crc_ok"]  # all True without a CRC
        # outputs whose CRC holds are codewords; re-encoding their messages gives them back
        assert not ((cw[ok].astype(np.int64) @ code.H.T.astype(np.int64)) % 2).any()
        assert np.array_equal(code.encode(dec.message_bits(dec.decode_llr_batch(llr)))[ok], cw[ok])
        singles = np.array([dec.decode_llr(row) for row in llr])
        assert np.array_equal(singles, cw)


def test_threads_do_not_change_results():
    code = get_code("polar64_22")
    _, _, llr = awgn_llr(code, 1.0, 999, seed=8)
    for make in (lambda t: ScDecoder(code, threads=t), lambda t: SclDecoder(code, 8, threads=t)):
        assert np.array_equal(make(1).decode_llr_batch(llr), make(3).decode_llr_batch(llr))


@pytest.mark.parametrize(
    "make",
    [
        lambda: PolarCode.from_construction(16, 6, "5g"),
        lambda: PolarCode.from_construction(32, 8, "bhattacharyya"),
        lambda: PacCode.from_profile(16, 6),
        lambda: PacCode.from_profile(32, 8, poly=0o13),
    ],
)
def test_scl_with_all_paths_is_exact_ml(make):
    # L >= 2^K keeps every information path; the final metric is the ML metric, so the
    # output is an ML codeword (ties have probability zero with Gaussian noise)
    code = make()
    _, _, llr = awgn_llr(code, 1.0, 400, seed=9)
    ml = ml_decode(code, llr)
    dec = SclDecoder(code, 2**code.K)
    assert np.array_equal(dec.decode_llr_batch(llr), ml)
    np.testing.assert_allclose(dec.last_info.extra["metric"], discrepancy(llr, ml), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", ["polar32_16", "pac32_16"])
def test_scl_never_beats_ml_and_mostly_finds_it(name):
    code = get_code(name)
    _, _, llr = awgn_llr(code, 1.0, 400, seed=10)
    ml = ml_decode(code, llr)
    d_ml = discrepancy(llr, ml)
    fractions = []
    for L in (8, 32):
        dec = SclDecoder(code, L)
        cw = dec.decode_llr_batch(llr)
        d = dec.last_info.extra["metric"]
        assert np.all(d >= d_ml - 1e-9)  # ML minimises the discrepancy over all codewords
        same = (cw == ml).all(axis=1)
        assert np.allclose(d[same], d_ml[same])
        fractions.append(same.mean())
    assert fractions[0] >= 0.95 and fractions[1] >= fractions[0] - 1e-12 and fractions[1] >= 0.99


def test_list_decoding_improves_on_sc_for_pac():
    code = get_code("pac32_16")
    _, x, llr = awgn_llr(code, 2.0, 4000, seed=11)
    err_sc = (ScDecoder(code).decode_llr_batch(llr) != x).any(axis=1).sum()
    err_scl = (SclDecoder(code, 8).decode_llr_batch(llr) != x).any(axis=1).sum()
    assert err_scl < 0.6 * err_sc


# ----------------------------------------------------------------------------- CRC
def test_crc_aided_selection():
    code = PolarCode.from_construction(64, 20, "5g", crc="crc6")
    _, x, llr = awgn_llr(code, 1.0, 3000, seed=12)
    ca = SclDecoder(code, 8)  # CRC used by default
    assert ca.use_crc
    cw = ca.decode_llr_batch(llr)
    ok = ca.last_info.extra["crc_ok"]
    assert np.array_equal(ca.last_info.converged, ok)
    # every output whose CRC holds is a codeword of the CRC-concatenated code
    assert not ((cw[ok].astype(np.int64) @ code.H.T.astype(np.int64)) % 2).any()
    plain = SclDecoder(code, 8, crc=False)
    cw_plain = plain.decode_llr_batch(llr)
    assert np.array_equal(plain.last_info.converged, plain.last_info.extra["crc_ok"])
    no_crc = SclDecoder(get_code("polar32_16"), 4)
    no_crc.decode_llr_batch(llr[:3, :32])
    assert no_crc.last_info.converged is None and no_crc.last_info.extra["crc_ok"].all()
    # the CRC-aided choice never has a smaller metric than the unconstrained best path
    assert np.all(ca.last_info.extra["metric"] >= plain.last_info.extra["metric"] - 1e-9)
    # and it decodes more blocks correctly
    assert (cw == x).all(axis=1).sum() > (cw_plain == x).all(axis=1).sum()
    # SC reports whether its decoded CRC holds: v_A = (x G_N)_A for a plain polar code
    sc = ScDecoder(code)
    cw_sc = sc.decode_llr_batch(llr)
    v_info = polar_transform(cw_sc)[:, code.info_positions]
    assert np.array_equal(sc.last_info.extra["crc_ok"], code.crc.check(v_info))
    assert not sc.last_info.extra["crc_ok"].all()  # at 1 dB SC fails some blocks


def test_crc_parameter_parsing():
    plain = get_code("polar32_16")
    with pytest.raises(ValueError, match="no CRC"):
        SclDecoder(plain, 8, crc=True)
    assert not SclDecoder(plain, 8, crc="auto").use_crc
    with_crc = PolarCode.from_construction(32, 10, crc="crc6")
    assert SclDecoder(with_crc, 8, crc="true").use_crc
    assert not SclDecoder(with_crc, 8, crc="false").use_crc
    with pytest.raises(ValueError, match="crc must be"):
        SclDecoder(with_crc, 8, crc="maybe")


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("make", [lambda c: ScDecoder(c), lambda c: SclDecoder(c, 4)])
def test_bad_llr_raises(make):
    dec = make(get_code("polar32_16"))
    with pytest.raises(DecoderInputError, match=r"shape \(shots, N=32\)"):
        dec.decode_llr_batch(np.zeros((3, 31)))
    with pytest.raises(DecoderInputError, match=r"shape \(shots, N=32\)"):
        dec.decode_llr_batch(np.zeros(32))
    bad = np.zeros((2, 32))
    bad[1, 5] = np.nan
    with pytest.raises(DecoderInputError, match="NaN"):
        dec.decode_llr_batch(bad)
    bad[1, 5] = np.inf
    with pytest.raises(DecoderInputError, match="infinite"):
        dec.decode_llr_batch(bad)
    with pytest.raises(DecoderInputError, match="real array"):
        dec.decode_llr_batch([["a"] * 32])
    assert isinstance(DecoderInputError("x"), ValueError)
    assert dec.decode_llr_batch(np.zeros((0, 32))).shape == (0, 32)


@pytest.mark.parametrize("L, match", [(0, "1..65536"), (-2, "1..65536"), (1.5, "positive integer"),
                                      ("x", "positive integer"), (True, "positive integer"), (1 << 17, "1..65536")])
def test_bad_list_size_raises(L, match):
    with pytest.raises(ValueError, match=match):
        SclDecoder(get_code("polar32_16"), L)


def test_non_polar_code_raises():
    with pytest.raises(ValueError, match="not a polar/PAC code"):
        ScDecoder(object())
    with pytest.raises(ValueError, match="threads"):
        ScDecoder(get_code("polar32_16"), threads=0)


# ----------------------------------------------------------------------------- reference BLERs
# An earlier independent run (BPSK-AWGN; benchmarks/README.md): SC = exact-boxplus SC,
# "ML" = OSD-4 (= ML lower bound there).
# (code, Eb/N0) -> (SC errors, ML errors, blocks).
REFERENCE = {
    ("polar32_16", 1.0): (3782, 2368, 15000),
    ("polar32_16", 2.0): (2774, 1343, 24500),
    ("polar32_16", 3.0): (1155, 397, 30500),
    ("pac32_16", 1.0): (11403, 6609, 45000),
    ("pac32_16", 2.0): (4894, 1997, 42000),
    ("pac32_16", 3.0): (1769, 483, 44000),
    ("polar64_22", 1.0): (2502, 1159, 10500),
    ("polar64_22", 2.0): (1513, 512, 16500),
    ("polar64_22", 3.0): (458, 99, 17000),
}
FAST = {key for key in REFERENCE if key[1] < 3.0}


def overlap(ours_hits, ours_shots, ref_hits, ref_shots):
    a = fit_binomial(num_shots=ours_shots, num_hits=ours_hits)
    b = fit_binomial(num_shots=ref_shots, num_hits=ref_hits)
    return a.low <= b.high and b.low <= a.high, a, b


def bler_case(name, ebn0, blocks):
    code = get_code(name)
    sc_ref, ml_ref, n_ref = REFERENCE[(name, ebn0)]
    _, x, llr = awgn_llr(code, ebn0, blocks, seed=int(100 * ebn0) + len(name))
    sc_err = int((ScDecoder(code, exact=True).decode_llr_batch(llr) != x).any(axis=1).sum())
    scl_err = int((SclDecoder(code, 8).decode_llr_batch(llr) != x).any(axis=1).sum())
    ok_sc, a, b = overlap(sc_err, blocks, sc_ref, n_ref)
    assert ok_sc, f"{name} {ebn0} dB SC: ours {a} vs reference {b}"
    ok_ml, a, b = overlap(scl_err, blocks, ml_ref, n_ref)
    assert ok_ml, f"{name} {ebn0} dB SCL-8: ours {a} vs reference ML {b}"
    assert scl_err >= 100


@pytest.mark.parametrize("name, ebn0", sorted(FAST))
def test_bler_matches_reference(name, ebn0):
    bler_case(name, ebn0, 20000)


@pytest.mark.slow
@pytest.mark.parametrize("name, ebn0", sorted(set(REFERENCE) - FAST))
def test_bler_matches_reference_slow(name, ebn0):
    bler_case(name, ebn0, 100000)
