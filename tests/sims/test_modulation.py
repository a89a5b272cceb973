"""NR modulation over AWGN (qdecode.sims.modulation): TS 38.211 mappings, max-log / exact LLRs, noise, bad input.

Oracles: TS 38.211 section 5.1's formulas, written out below for each order independently of the module's
recursion; py3gpp's ``nrSymbolModulate`` (points) and ``nrSymbolDemodulate`` (soft values, QPSK and 16QAM
only); sionna's ``Mapper`` / ``Demapper`` (``"maxlog"`` and ``"app"``). Conventions found:

* sionna labels QAM points as 38.211 does (``pam_gray`` on the even / odd bits, first bit most significant):
  its points equal ours exactly. Its LLR is ``ln P(b=1) / P(b=0)`` (ours is ``ln P(b=0) / P(b=1)``: a sign
  flip) and its ``no`` is the complex noise variance ``N0`` (as ours), so ours = -sionna's.
* py3gpp's BPSK is NR's ``(1 + j)(1 - 2b) / sqrt 2``, ours the real ``1 - 2b`` (the same points turned by 45
  degrees). ``nrSymbolModulate`` computes ``1 - 2b`` in the bits' dtype, so it needs signed bits (uint8
  wraps). Its soft demapper (upper-case names; ``"64QAM"`` / ``"256QAM"`` give an empty array) returns
  ``e / nVar`` times a linear metric (16QAM: ``e / (2 nVar)``): our max-log LLR times ``e / (2 sqrt 2)`` for
  QPSK, ``e sqrt(10) / 8`` for 16QAM, and for 16QAM's first two bits only where ``|Re y|`` (``|Im y|``)
  ``<= 2 / sqrt 10`` (beyond, py3gpp stays linear where max-log doubles its slope). Same sign convention.

Statistical checks use fixed seeds and 5-sigma bounds on the estimators.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from qdecode.errors import InputError
from qdecode.sims.channels import BpskAwgn, ebn0_to_sigma2
from qdecode.sims.modulation import ORDERS, NrQamAwgn, bits_per_symbol, nr_constellation

QAM = ("qpsk", "16qam", "64qam", "256qam")


def _ts38211(order: str, b: tuple[int, ...]) -> complex:
    """TS 38.211 section 5.1, one symbol from its bits b(0) .. b(Qm - 1); BPSK is our real one."""
    s = [1 - 2 * v for v in b]
    if order == "bpsk":
        return complex(s[0])
    if order == "qpsk":  # 5.1.3
        return (s[0] + 1j * s[1]) / math.sqrt(2)
    if order == "16qam":  # 5.1.4
        return (s[0] * (2 - s[2]) + 1j * s[1] * (2 - s[3])) / math.sqrt(10)
    if order == "64qam":  # 5.1.5
        return (s[0] * (4 - s[2] * (2 - s[4])) + 1j * s[1] * (4 - s[3] * (2 - s[5]))) / math.sqrt(42)
    assert order == "256qam"  # 5.1.6
    return (s[0] * (8 - s[2] * (4 - s[4] * (2 - s[6])))
            + 1j * s[1] * (8 - s[3] * (4 - s[5] * (2 - s[7])))) / math.sqrt(170)


def _all_patterns(qm: int) -> np.ndarray:
    """uint8 (2^qm, qm): every bit pattern, the first bit most significant (label order)."""
    return np.array(list(itertools.product((0, 1), repeat=qm)), dtype=np.uint8)


def _bits(rng, shots: int, symbols: int, qm: int) -> np.ndarray:
    return rng.integers(0, 2, (shots, symbols * qm), dtype=np.uint8)


# ----------------------------------------------------------------------------- mappings
@pytest.mark.parametrize("order", list(ORDERS))
def test_points_are_ts38211_for_every_bit_pattern(order):
    qm = bits_per_symbol(order)
    pats = _all_patterns(qm)
    want = np.array([_ts38211(order, tuple(int(v) for v in p)) for p in pats])
    ch = NrQamAwgn(order, 3.0, 0.5)
    # one symbol per shot, and all patterns as the symbols of one shot
    np.testing.assert_allclose(ch.modulate(pats)[:, 0], want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ch.modulate(pats.reshape(1, -1))[0], want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(nr_constellation(order), want, rtol=0, atol=1e-15)
    assert ch.modulate(pats).dtype == np.complex128
    # unit average symbol energy; distinct points
    assert np.mean(np.abs(want) ** 2) == pytest.approx(1.0, abs=1e-14)
    assert np.mean(np.abs(nr_constellation(order)) ** 2) == pytest.approx(1.0, abs=1e-14)
    assert len(set(np.round(want, 12))) == 2**qm
    # Gray: nearest neighbours (distance 2 / normalisation) differ in exactly one bit
    dist = np.abs(want[:, None] - want[None, :])
    dmin = dist[dist > 1e-12].min()
    for a, b in zip(*np.nonzero(np.isclose(dist, dmin))):
        assert np.count_nonzero(pats[a] != pats[b]) == 1


@pytest.mark.parametrize("order", QAM)
def test_points_equal_py3gpp(order):
    py3gpp = pytest.importorskip("py3gpp")
    rng = np.random.default_rng(11)
    qm = bits_per_symbol(order)
    c = np.vstack([_all_patterns(qm).reshape(1, -1), _bits(rng, 1, 2**qm, qm)])
    x = NrQamAwgn(order, 3.0, 0.5).modulate(c)
    for row, got in zip(c, x):
        # py3gpp computes 1 - 2 b in the bits' dtype: give it signed integers (uint8 wraps)
        np.testing.assert_allclose(got, py3gpp.nrSymbolModulate(row.astype(np.int64), order), rtol=0, atol=1e-14)


def test_bpsk_is_nr_bpsk_turned_by_45_degrees():
    py3gpp = pytest.importorskip("py3gpp")
    c = np.array([[0, 1, 1, 0, 1]], dtype=np.uint8)
    nr = py3gpp.nrSymbolModulate(c[0].astype(np.int64), "bpsk")
    ours = NrQamAwgn("bpsk", 3.0, 0.5).modulate(c)[0]
    np.testing.assert_allclose(ours, [1, -1, -1, 1, -1], atol=0)
    np.testing.assert_allclose(nr, ours * (1 + 1j) / math.sqrt(2), atol=1e-15)


# ----------------------------------------------------------------------------- demappers
def _noisy(order: str, ebn0_db: float, seed: int, shots: int = 4, symbols: int = 300):
    ch = NrQamAwgn(order, ebn0_db, 0.5)
    rng = np.random.default_rng(seed)
    c = _bits(rng, shots, symbols, ch.bits_per_symbol)
    return ch, c, ch.receive(c, rng)


@pytest.mark.parametrize("order", list(ORDERS))
def test_maxlog_is_the_full_constellation_minimum(order):
    """The module works per real dimension; the definition is over all M points (and y's imaginary part)."""
    ch, _, y = _noisy(order, 1.0, seed=2)
    y = y + 0.3j * (order == "bpsk")  # an imaginary part must not matter for the real BPSK
    pts, pats = nr_constellation(order), _all_patterns(ch.bits_per_symbol).astype(bool)
    d2 = np.abs(y[..., None] - pts) ** 2
    want = np.stack([(np.where(pats[:, k], d2, np.inf).min(-1) - np.where(~pats[:, k], d2, np.inf).min(-1))
                     for k in range(ch.bits_per_symbol)], axis=-1).reshape(y.shape[0], -1) / ch.n0
    got = ch.demodulate_maxlog(y, ch.n0)
    assert got.shape == (y.shape[0], y.shape[1] * ch.bits_per_symbol) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("order", list(ORDERS))
def test_llrs_equal_sionna(order):
    """sionna labels points as 38.211 does; its LLR is ln P(1)/P(0) with no = N0: ours = -sionna's."""
    pytest.importorskip("sionna")
    torch = pytest.importorskip("torch")
    from sionna.phy.mapping import Demapper, Mapper

    qm = bits_per_symbol(order)
    kind = "pam" if order == "bpsk" else "qam"  # sionna's 1-bit PAM is +-1, our real BPSK
    ch, c, y = _noisy(order, 2.0, seed=3)
    x = Mapper(kind, qm, precision="double")(torch.from_numpy(c.astype(np.float64))).numpy()
    np.testing.assert_allclose(x, ch.modulate(c), rtol=0, atol=1e-15)
    no = torch.tensor(ch.n0, dtype=torch.float64)
    for method, ours in (("maxlog", ch.demodulate_maxlog), ("app", ch.demodulate_exact)):
        theirs = Demapper(method, kind, qm, precision="double")(torch.from_numpy(y), no).numpy()
        np.testing.assert_allclose(ours(y, ch.n0), -theirs, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("order, name", [("qpsk", "QPSK"), ("16qam", "16QAM")])
def test_maxlog_agrees_with_py3gpp_soft_values(order, name):
    pytest.importorskip("py3gpp")
    from py3gpp.nrSymbolDemodulate import nrSymbolDemodulate

    ch, _, y = _noisy(order, 2.0, seed=5, shots=1, symbols=400)
    theirs = nrSymbolDemodulate(y[0], name, nVar=ch.n0, DecisionType="soft").reshape(-1, ch.bits_per_symbol)
    ours = ch.demodulate_maxlog(y, ch.n0)[0].reshape(-1, ch.bits_per_symbol)
    if order == "qpsk":
        np.testing.assert_allclose(ours, theirs * 2 * math.sqrt(2) / math.e, rtol=1e-12)
        return
    d = 1 / math.sqrt(10)
    scale = 8 * d / math.e
    np.testing.assert_allclose(ours[:, 2:], theirs[:, 2:] * scale, rtol=1e-9, atol=1e-9)  # |level| bits: all y
    inner = np.abs(np.stack([y[0].real, y[0].imag], axis=1)) <= 2 * d
    assert 0 < inner.sum() < inner.size
    np.testing.assert_allclose(ours[:, :2][inner], theirs[:, :2][inner] * scale, rtol=1e-9, atol=1e-9)
    assert np.array_equal(ours[:, :2] > 0, theirs[:, :2] > 0)  # the same hard decisions everywhere


@pytest.mark.parametrize("order", list(ORDERS))
def test_maxlog_sign_is_the_nearest_point(order):
    ch, _, y = _noisy(order, -1.0, seed=7)  # noisy: many symbols land nearer another point
    nearest = np.argmin(np.abs(y[..., None] - nr_constellation(order)), axis=-1)
    bits = _all_patterns(ch.bits_per_symbol)[nearest].reshape(y.shape[0], -1)
    assert np.array_equal((ch.demodulate_maxlog(y, ch.n0) <= 0).astype(np.uint8), bits)


@pytest.mark.parametrize("order", list(ORDERS))
def test_exact_and_maxlog(order):
    qm = bits_per_symbol(order)
    bound = math.log(2 ** (qm - 1))  # a log-sum-exp of 2^(Qm-1) terms lies within ln 2^(Qm-1) of its max
    for ebn0 in (-2.0, 6.0):
        ch, _, y = _noisy(order, ebn0, seed=9)
        diff = np.abs(ch.demodulate_exact(y, ch.n0) - ch.demodulate_maxlog(y, ch.n0))
        assert diff.max() <= bound + 1e-9
        if order == "bpsk":  # one point per side: max-log is exact
            assert diff.max() < 1e-12
    # high SNR (Es/N0 = 40 dB: 256QAM's half spacing is 10.8 noise sd): the sums are their largest terms
    ch = NrQamAwgn(order, 40.0 - 10 * math.log10(0.5 * qm), 0.5)
    rng = np.random.default_rng(10)
    y = ch.receive(_bits(rng, 4, 300, qm), rng)
    exact, maxlog = ch.demodulate_exact(y, ch.n0), ch.demodulate_maxlog(y, ch.n0)
    assert np.abs(exact - maxlog).max() < 1e-9 * np.abs(exact).mean()


# ----------------------------------------------------------------------------- channel
def test_conventions():
    ch = NrQamAwgn("64qam", ebn0_db=5.0, rate=0.75)
    assert ch.esn0_db == pytest.approx(5.0 + 10 * math.log10(0.75 * 6))
    assert ch.n0 == pytest.approx(1 / (0.75 * 6 * 10**0.5))
    assert ch.sigma2 == pytest.approx(ch.n0 / 2)
    assert ch.n0 == pytest.approx(10 ** (-ch.esn0_db / 10))  # E_s = 1
    assert NrQamAwgn("QPSK", 1, 1).order == "qpsk" and NrQamAwgn("qpsk", 1, 1).rate == 1.0


@pytest.mark.parametrize("ebn0_db,rate", [(0.0, 0.5), (3.0, 64 / 127), (-2.0, 22 / 64)])
def test_bpsk_is_bpsk_awgn(ebn0_db, rate):
    ch, ref = NrQamAwgn("bpsk", ebn0_db, rate), BpskAwgn(ebn0_db, rate)
    assert ch.sigma2 == ref.sigma2 == ebn0_to_sigma2(ebn0_db, rate) and ch.n0 == 2 * ref.sigma2
    assert ch.esn0_db == pytest.approx(ref.esn0_db)
    c = np.random.default_rng(1).integers(0, 2, (50, 64), dtype=np.uint8)
    llr = ch.transmit(c, np.random.default_rng(4))
    assert llr.dtype == np.float64 and llr.shape == c.shape
    assert np.array_equal(llr, ref.transmit(c, np.random.default_rng(4)))  # same draws, same arithmetic
    y = ch.receive(c, np.random.default_rng(4))
    assert np.all(y.imag == 0)
    np.testing.assert_allclose(ch.demodulate_maxlog(y, ch.n0), llr, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("order", ["qpsk", "16qam"])
def test_llrs_are_consistent_where_they_should_be(order):
    """Gray QPSK is two BPSKs: at the same Eb/N0 and rate its LLRs are BpskAwgn's in distribution,
    N(+-mu, 2 mu), mu = 2 / sigma_BPSK^2. 16QAM's are not Gaussian; check the hard-decision error rate of
    its sign bits against the exact Q-function expression instead."""
    from scipy.special import ndtr

    ch = NrQamAwgn(order, 1.0, 0.5)
    rng = np.random.default_rng(12)
    c = _bits(rng, 200, 250, ch.bits_per_symbol)
    llr = ch.transmit(c, rng)
    assert llr.shape == c.shape and llr.dtype == np.float64
    z = (1 - 2 * c.astype(np.float64)) * llr
    if order == "qpsk":
        mu, n = 2 / ebn0_to_sigma2(1.0, 0.5), z.size
        assert abs(z.mean() - mu) < 5 * math.sqrt(2 * mu / n)
        assert abs(z.var() - 2 * mu) < 5 * 2 * mu * math.sqrt(2 / n)
        return
    # sign bits b0, b1: an inner (+-d) or outer (+-3d) level crosses 0 w.p. Q(d/s) or Q(3d/s), s^2 = N0/2
    d, s = 1 / math.sqrt(10), math.sqrt(ch.sigma2)
    p = 0.5 * (ndtr(-d / s) + ndtr(-3 * d / s))
    sign = z.reshape(z.shape[0], -1, 4)[..., :2]
    hits, n = int(np.count_nonzero(sign <= 0)), sign.size
    assert abs(hits - n * p) < 5 * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("order", QAM)
def test_noise_variance_is_n0(order):
    ch = NrQamAwgn(order, 4.0, 0.5)
    rng = np.random.default_rng(13)
    c = _bits(rng, 100, 400, ch.bits_per_symbol)
    w = (ch.receive(c, rng) - ch.modulate(c)).ravel()
    n, n0 = w.size, ch.n0
    # |w|^2 ~ Exp(N0): sd of the mean N0 / sqrt(n); each real part N(0, N0/2)
    assert abs(np.mean(np.abs(w) ** 2) - n0) < 5 * n0 / math.sqrt(n)
    for part in (w.real, w.imag):
        assert abs(part.mean()) < 5 * math.sqrt(n0 / 2 / n)
        assert abs(part.var() - n0 / 2) < 5 * (n0 / 2) * math.sqrt(2 / n)
    assert abs(np.mean(w.real * w.imag)) < 5 * (n0 / 2) / math.sqrt(n)
    # the same seed gives the same channel
    r1 = ch.transmit(c, np.random.default_rng(3))
    assert np.array_equal(r1, ch.transmit(c, np.random.default_rng(3)))


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, match", [
    (dict(order="8psk", ebn0_db=1, rate=0.5), "order"),
    (dict(order=4, ebn0_db=1, rate=0.5), "order"),
    (dict(order="qpsk", ebn0_db=float("nan"), rate=0.5), "ebn0_db"),
    (dict(order="qpsk", ebn0_db=float("inf"), rate=0.5), "ebn0_db"),
    (dict(order="qpsk", ebn0_db="x", rate=0.5), "ebn0_db"),
    (dict(order="qpsk", ebn0_db=1, rate=0.0), "rate"),
    (dict(order="qpsk", ebn0_db=1, rate=1.5), "rate"),
    (dict(order="qpsk", ebn0_db=1, rate=float("nan")), "rate"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(InputError, match=match) as exc:
        NrQamAwgn(**kwargs)
    assert "\n" not in str(exc.value)


def test_bad_arrays():
    ch = NrQamAwgn("16qam", 2.0, 0.5)
    rng = np.random.default_rng(0)
    bad = [
        (lambda: ch.transmit(np.zeros(8, np.uint8), rng), "2-D"),
        (lambda: ch.transmit(np.full((2, 8), 2, np.uint8), rng), "binary"),
        (lambda: ch.transmit(np.zeros((2, 6), np.uint8), rng), "multiple of Qm=4"),
        (lambda: ch.modulate(np.zeros((2, 7), np.uint8)), "multiple of Qm=4"),
        (lambda: ch.modulate(np.zeros((2, 2, 4), np.uint8)), "2-D"),
        (lambda: ch.demodulate_maxlog(np.zeros(3, complex), 1.0), "2-D"),
        (lambda: ch.demodulate_maxlog(np.array([[1 + 1j, np.nan]]), 1.0), "finite"),
        (lambda: ch.demodulate_exact(np.array([["a"]]), 1.0), "numeric"),
        (lambda: ch.demodulate_maxlog(np.zeros((1, 3), complex), 0.0), "n0"),
        (lambda: ch.demodulate_exact(np.zeros((1, 3), complex), float("nan")), "n0"),
    ]
    for call, match in bad:
        with pytest.raises(InputError, match=match) as exc:
            call()
        assert "\n" not in str(exc.value)
    with pytest.raises(InputError, match="order"):
        nr_constellation("1024qam")
    assert ch.transmit(np.zeros((0, 8), np.uint8), rng).shape == (0, 8)
    assert ch.demodulate_maxlog(np.zeros((3, 0), complex), 1.0).shape == (3, 0)
    assert ch.demodulate_exact(np.zeros((0, 2), complex), 1.0).shape == (0, 8)
