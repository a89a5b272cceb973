"""Classical channels (qdecode.sims.channels): LLR statistics, flip rates, Gilbert-Elliott chain, bad input.

Statistical checks use fixed seeds; rates are checked with binomial likelihood bands
(qdecode.sims.stats.fit_binomial), Gaussian moments with 5-sigma bounds on the estimators.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from qdecode.sims.channels import (
    BpskAwgn,
    Bsc,
    GilbertElliottAwgn,
    GilbertElliottBsc,
    ebn0_to_sigma2,
    gilbert_elliott_states,
)
from qdecode.sims.stats import fit_binomial


def _in_band(hits: int, shots: int, p: float) -> bool:
    f = fit_binomial(num_shots=shots, num_hits=hits)
    return f.low <= p <= f.high


def test_sigma_convention():
    assert ebn0_to_sigma2(0.0, 0.5) == pytest.approx(1.0)
    ch = BpskAwgn(ebn0_db=5.0, rate=64 / 127)
    assert ch.sigma2 == pytest.approx(1 / (2 * (64 / 127) * 10**0.5))
    assert ch.esn0_db == pytest.approx(5.0 + 10 * math.log10(64 / 127))
    assert ch.llr_mean == pytest.approx(2 / ch.sigma2)


def test_ebn0_to_sigma2_scalars_and_arrays_are_the_old_numbers():
    """One definition serves the channels (scalars -> float) and the trainers (arrays): bit for bit
    the formulas each used to carry (the trainers' copy was the numpy expression below)."""
    rng = np.random.default_rng(7)
    for rate in (0.5, 64 / 127, 22 / 64, 1.0):
        for e in (0.0, -2.0, 3.7, 10.0):
            got = ebn0_to_sigma2(e, rate)
            assert type(got) is float
            assert got == 1.0 / (2.0 * rate * 10.0 ** (e / 10.0))
        e = rng.uniform(-2.0, 6.0, size=(17, 1))
        old = 1.0 / (2.0 * rate * 10.0 ** (np.asarray(e, dtype=np.float64) / 10.0))
        got = ebn0_to_sigma2(e, rate)
        assert got.shape == (17, 1) and got.dtype == np.float64
        np.testing.assert_array_equal(got, old)
        # an element of the array is the scalar's number to the last ulp or so: numpy's vector pow
        # and libm's pow may round apart; each path keeps the rounding its callers always had
        scalars = [ebn0_to_sigma2(float(x), rate) for x in e.ravel()]
        np.testing.assert_allclose(got.ravel(), scalars, rtol=1e-15, atol=0)
    assert np.asarray(ebn0_to_sigma2([0.0, 10.0], 0.5)).tolist() == pytest.approx([1.0, 0.1])
    with pytest.raises(ValueError, match="ebn0_db"):
        ebn0_to_sigma2(np.array([0.0, np.nan]), 0.5)
    with pytest.raises(ValueError, match="rate"):
        ebn0_to_sigma2(np.zeros(3), 0.0)


@pytest.mark.parametrize("ebn0_db,rate", [(0.0, 0.5), (3.0, 64 / 127), (-2.0, 22 / 64)])
def test_awgn_llr_is_consistent_gaussian(ebn0_db, rate):
    ch = BpskAwgn(ebn0_db, rate)
    rng = np.random.default_rng(7)
    c = rng.integers(0, 2, (400, 250), dtype=np.uint8)
    llr = ch.transmit(c, rng)
    assert llr.shape == c.shape and llr.dtype == np.float64
    # flip the sign of bits sent as 1: then every entry ~ N(mu, 2 mu), mu = 2 / sigma^2
    z = (1 - 2 * c.astype(np.float64)) * llr
    mu, N = ch.llr_mean, z.size
    assert abs(z.mean() - mu) < 5 * math.sqrt(2 * mu / N)
    # sample variance of a Gaussian: sd ~ var * sqrt(2 / N)
    assert abs(z.var() - 2 * mu) < 5 * 2 * mu * math.sqrt(2 / N)
    # raw-bit error rate of the hard decisions is Q(1/sigma)
    from scipy.special import ndtr

    hits = int(np.count_nonzero(z <= 0))
    assert _in_band(hits, N, float(ndtr(-1 / math.sqrt(ch.sigma2))))
    assert np.array_equal(ch.transmit(c, np.random.default_rng(1)), ch.transmit(c, np.random.default_rng(1)))
    assert np.array_equal(ch.transmit(c, 5), ch.transmit(c, 5))  # an int seeds a default_rng


def test_bsc_flip_rate_and_llr():
    ch = Bsc(0.07)
    rng = np.random.default_rng(2)
    c = rng.integers(0, 2, (200, 500), dtype=np.uint8)
    llr = ch.transmit(c, rng)
    mag = math.log(0.93 / 0.07)
    assert np.allclose(np.abs(llr), mag)
    flipped = (llr < 0) != (c == 1)
    assert _in_band(int(flipped.sum()), c.size, 0.07)
    assert ch.llr_magnitude == pytest.approx(mag)


def test_gilbert_elliott_chain_statistics():
    p_gb, p_bg = 0.03, 0.25
    rng = np.random.default_rng(3)
    bad = gilbert_elliott_states((4000, 300), p_gb, p_bg, rng)
    pi_b = p_gb / (p_gb + p_bg)
    # stationary from the first bit on, and overall
    assert _in_band(int(bad[:, 0].sum()), bad.shape[0], pi_b)
    assert _in_band(int(bad[:, -1].sum()), bad.shape[0], pi_b)
    assert abs(bad.mean() - pi_b) < 0.01
    # transition probabilities: each bit's successor is a Bernoulli trial given its state
    prev, nxt = bad[:, :-1], bad[:, 1:]
    assert _in_band(int((prev & ~nxt).sum()), int(prev.sum()), p_bg)
    assert _in_band(int((~prev & nxt).sum()), int((~prev).sum()), p_gb)
    # mean burst length 1/p_bg over complete bursts (both ends inside the block; dropping
    # the censored ones biases the mean down by ~ mean/block = 4/300, inside the tolerance)
    runs = _complete_run_lengths(bad)
    assert abs(runs.mean() - 1 / p_bg) < 5 * (math.sqrt(1 - p_bg) / p_bg) / math.sqrt(runs.size) + 0.05
    ch = GilbertElliottBsc(p_gb, p_bg)
    assert ch.pi_bad == pytest.approx(pi_b) and ch.mean_burst == pytest.approx(4.0)


def _complete_run_lengths(bad: np.ndarray) -> np.ndarray:
    padded = np.zeros((bad.shape[0], bad.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = bad
    d = np.diff(padded, axis=1)
    out = []
    for row in range(bad.shape[0]):
        s = np.flatnonzero(d[row] == 1)
        e = np.flatnonzero(d[row] == -1)
        keep = (s > 0) & (e < bad.shape[1])  # drop bursts touching either end (censored)
        out.append((e - s)[keep])
    return np.concatenate(out)


def test_gilbert_elliott_bsc_llrs():
    ch = GilbertElliottBsc(p_gb=0.05, p_bg=0.2, eps_good=0.01, eps_bad=0.3, csi=True)
    c = np.random.default_rng(40).integers(0, 2, (2000, 200), dtype=np.uint8)
    llr, bad = ch.transmit_with_states(c, np.random.default_rng(4))
    flipped = (llr <= 0) != (c == 1)
    assert _in_band(int(flipped[bad].sum()), int(bad.sum()), 0.3)
    assert _in_band(int(flipped[~bad].sum()), int((~bad).sum()), 0.01)
    assert np.allclose(np.abs(llr[bad]), math.log(0.7 / 0.3))
    assert np.allclose(np.abs(llr[~bad]), math.log(0.99 / 0.01))
    blind = GilbertElliottBsc(p_gb=0.05, p_bg=0.2, eps_good=0.01, eps_bad=0.3, csi=False)
    e = 0.8 * 0.01 + 0.2 * 0.3
    assert blind.eps_average == pytest.approx(e)
    lb = blind.transmit(c, np.random.default_rng(4))
    assert np.allclose(np.abs(lb), math.log((1 - e) / e))
    # same seed, same states and flips: only the magnitudes differ
    assert np.array_equal(np.sign(lb), np.sign(llr))


@pytest.mark.parametrize("reference", ["average", "good"])
def test_gilbert_elliott_awgn(reference):
    ch = GilbertElliottAwgn(p_gb=0.02, p_bg=0.1, ebn0_db=4.0, rate=0.5, delta_db=10.0, csi=True, reference=reference)
    s2 = ebn0_to_sigma2(4.0, 0.5)
    pi_b = 0.02 / 0.12
    assert ch.sigma2_bad == pytest.approx(10 * ch.sigma2_good)
    if reference == "average":
        assert ch.sigma2_average == pytest.approx(s2)
    else:
        assert ch.sigma2_good == pytest.approx(s2)
    assert ch.sigma2_average == pytest.approx((1 - pi_b) * ch.sigma2_good + pi_b * ch.sigma2_bad)
    c = np.random.default_rng(50).integers(0, 2, (1000, 256), dtype=np.uint8)
    llr, bad = ch.transmit_with_states(c, np.random.default_rng(5))
    z = (1 - 2 * c.astype(np.float64)) * llr
    for mask, s in ((bad, ch.sigma2_bad), (~bad, ch.sigma2_good)):
        mu, N = 2 / s, int(mask.sum())
        assert abs(z[mask].mean() - mu) < 5 * math.sqrt(2 * mu / N)
        assert abs(z[mask].var() - 2 * mu) < 5 * 2 * mu * math.sqrt(2 / N)
    blind = GilbertElliottAwgn(p_gb=0.02, p_bg=0.1, ebn0_db=4.0, rate=0.5, delta_db=10.0, csi=False,
                               reference=reference)
    lb, bad2 = blind.transmit_with_states(c, np.random.default_rng(5))
    assert np.array_equal(bad, bad2)
    # state-blind = received y scaled by 2 / sigma_avg^2; state-aware = y scaled by 2 / sigma_state^2
    y = llr * np.where(bad, ch.sigma2_bad, ch.sigma2_good) / 2
    assert np.allclose(lb, 2 * y / ch.sigma2_average)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: Bsc(0.0), "p must be a probability"),
        (lambda: Bsc(1.0), "p must be a probability"),
        (lambda: Bsc(float("nan")), "p must be finite"),
        (lambda: Bsc("x"), "p must be a real number"),
        (lambda: BpskAwgn(float("inf"), 0.5), "ebn0_db must be finite"),
        (lambda: BpskAwgn(float("nan"), 0.5), "ebn0_db must be finite"),
        (lambda: BpskAwgn(3.0, 0.0), "rate"),
        (lambda: BpskAwgn(3.0, 1.5), "rate"),
        (lambda: GilbertElliottBsc(0.0, 0.1), "p_gb"),
        (lambda: GilbertElliottBsc(0.1, 1.5), "p_bg"),
        (lambda: GilbertElliottBsc(0.1, 0.1, eps_good=0.0), "eps_good"),
        (lambda: GilbertElliottBsc(0.1, 0.1, eps_bad=1.0), "eps_bad"),
        (lambda: GilbertElliottAwgn(0.1, 0.1, delta_db=-1.0), "delta_db"),
        (lambda: GilbertElliottAwgn(0.1, 0.1, ebn0_db=float("nan")), "ebn0_db"),
        (lambda: GilbertElliottAwgn(0.1, 0.1, reference="bad"), "reference"),
        (lambda: gilbert_elliott_states((2, 3), -0.1, 0.5, 0), "p_gb"),
        (lambda: ebn0_to_sigma2(float("inf"), 0.5), "ebn0_db"),
    ],
)
def test_bad_parameters_name_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_codewords():
    ch = BpskAwgn(3.0, 0.5)
    with pytest.raises(ValueError, match="2-D"):
        ch.transmit(np.zeros(5, np.uint8), 0)
    with pytest.raises(ValueError, match="binary"):
        Bsc(0.1).transmit(np.full((2, 3), 2), 0)
    assert ch.transmit(np.zeros((0, 7), np.uint8), 0).shape == (0, 7)
