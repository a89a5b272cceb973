"""Tests of qdecode.sims.stats: binomial fits (against sinter), per-round rates, rows to curves."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sinter
from hypothesis import given, settings
from hypothesis import strategies as st

from qdecode.sims.stats import (
    Fit,
    binomial_likelihood_interval,
    fit_binomial,
    rows_to_curves,
    shot_error_rate_to_per_round,
)
from qdecode.sims.store import StatsRow

# ---------------------------------------------------------------------------------------
# fit_binomial
# ---------------------------------------------------------------------------------------

_CASES = [
    (0, 0), (1, 0), (1, 1), (7, 3), (10, 5), (100, 0), (100, 100), (12345, 17), (10**6, 1000),
    (10**8, 2), (10**8, 10**6), (10**9, 123456), (10**7, 5 * 10**6), (10**10, 10**8), (10**12, 5),
    (2**40, 2**39), (10**11, 10**11 - 3),
]


def _random_cases(count, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(10 ** rng.uniform(0, 11))
        if rng.random() < 0.3:
            k = int(rng.integers(0, n + 1))
        else:
            k = min(n, int(rng.poisson(10 ** rng.uniform(0, 4))))
        out.append((n, k))
    return out


@pytest.mark.parametrize("shots,hits", _CASES + _random_cases(150))
def test_fit_binomial_matches_sinter(shots, hits):
    ours = fit_binomial(num_shots=shots, num_hits=hits)
    theirs = sinter.fit_binomial(num_shots=shots, num_hits=hits, max_likelihood_factor=1e3)
    for a, b in zip((ours.low, ours.best, ours.high), (theirs.low, theirs.best, theirs.high)):
        assert a == pytest.approx(b, rel=1e-12, abs=0)


@pytest.mark.parametrize("factor", [1, 2, 9, 1e6])
def test_fit_binomial_matches_sinter_other_factors(factor):
    for shots, hits in _CASES + _random_cases(20, seed=2):
        ours = fit_binomial(num_shots=shots, num_hits=hits, max_likelihood_factor=factor)
        theirs = sinter.fit_binomial(num_shots=shots, num_hits=hits, max_likelihood_factor=factor)
        assert (ours.low, ours.best, ours.high) == pytest.approx((theirs.low, theirs.best, theirs.high), rel=1e-12)


def test_fit_binomial_documented_values():
    assert tuple(fit_binomial(num_shots=10**8, num_hits=2)) == (2e-10, 2e-08, 1.259e-07)
    assert tuple(fit_binomial(num_shots=10, num_hits=5, max_likelihood_factor=9)) == (0.202, 0.5, 0.798)
    assert fit_binomial(num_shots=0, num_hits=0) == Fit(low=0.0, best=0.5, high=1.0)


def test_fit_binomial_rejects_bad_input():
    with pytest.raises(ValueError, match="max_likelihood_factor=0.5"):
        fit_binomial(num_shots=10, num_hits=1, max_likelihood_factor=0.5)
    with pytest.raises(ValueError, match="num_hits=11, num_shots=10"):
        fit_binomial(num_shots=10, num_hits=11)
    with pytest.raises(ValueError, match="num_hits=-1"):
        binomial_likelihood_interval(num_shots=10, num_hits=-1)


@pytest.mark.parametrize("shots,hits", [(100, 0), (100, 3), (10**6, 1000), (10**8, 2), (50, 50), (10**9, 4 * 10**8)])
def test_exact_interval_solves_the_likelihood_equation(shots, hits):
    fit = binomial_likelihood_interval(num_shots=shots, num_hits=hits)

    def loglik(p):
        a = hits * math.log(p) if hits else 0.0
        b = (shots - hits) * math.log1p(-p) if shots - hits else 0.0
        return a + b

    peak = loglik(fit.best)
    for edge, bound in ((fit.low, 0.0), (fit.high, 1.0)):
        if edge != bound:
            assert loglik(edge) - peak == pytest.approx(-math.log(1e3), abs=1e-6)
    if hits == 0:
        assert fit.high == pytest.approx(1 - 1e3 ** (-1 / shots), rel=1e-10)
    # sinter's answer sits on a 1/100-hit grid near the exact edges.
    s = sinter.fit_binomial(num_shots=shots, num_hits=hits, max_likelihood_factor=1e3)
    assert abs(s.high - fit.high) <= max(0.011 / shots, 2e-3 * fit.high)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    shots=st.integers(min_value=1, max_value=10**12),
    frac=st.floats(min_value=0, max_value=1),
    factor=st.sampled_from([1.0, 2.0, 10.0, 1e3, 1e9]),
)
def test_fit_is_ordered(shots, frac, factor):
    hits = min(shots, int(frac * shots))
    for fn in (fit_binomial, binomial_likelihood_interval):
        fit = fn(num_shots=shots, num_hits=hits, max_likelihood_factor=factor)
        assert 0.0 <= fit.low <= fit.best <= fit.high <= 1.0
        assert fit.best == hits / shots


# ---------------------------------------------------------------------------------------
# Per-round conversion
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [1, 3])
@pytest.mark.parametrize("rounds", [1, 2, 3.5, 10, 100, 0.5])
@pytest.mark.parametrize("p_shot", [0.0, 1e-8, 1e-5, 0.01, 0.3, 0.5, 0.6, 0.99, 1.0])
def test_per_round_matches_sinter(p_shot, rounds, values):
    ours = shot_error_rate_to_per_round(p_shot, rounds, values=values)
    theirs = sinter.shot_error_rate_to_piece_error_rate(p_shot, pieces=rounds, values=values)
    assert isinstance(ours, float)
    assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-300)


def test_per_round_fit_and_array():
    fit = fit_binomial(num_shots=10**5, num_hits=300)
    conv = shot_error_rate_to_per_round(fit, 7)
    theirs = sinter.shot_error_rate_to_piece_error_rate(sinter.Fit(fit.low, fit.best, fit.high), pieces=7)
    assert isinstance(conv, Fit)
    assert tuple(conv) == pytest.approx((theirs.low, theirs.best, theirs.high), rel=1e-9)
    arr = shot_error_rate_to_per_round(np.array([[0.1, 0.7], [0.0, 1e-3]]), np.array([1, 5]))
    assert arr.shape == (2, 2)
    assert arr[0, 0] == 0.1  # rounds == 1 is the identity
    assert arr[0, 1] == pytest.approx(sinter.shot_error_rate_to_piece_error_rate(0.7, pieces=5))


def test_per_round_is_accurate_for_tiny_rates():
    # P_round -> P_shot / r for small rates (the direct power formula loses ~1e-16/P relative).
    s = 1e-14
    assert shot_error_rate_to_per_round(s, 10) == pytest.approx(s / 10, rel=1e-12)
    q = shot_error_rate_to_per_round(0.2, 9)
    assert 0.5 - 0.5 * (1 - 2 * q) ** 9 == pytest.approx(0.2, rel=1e-13)


def test_per_round_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\[0, 1\], got \[1.5\]"):
        shot_error_rate_to_per_round(1.5, 3)
    with pytest.raises(ValueError, match="rounds must be > 0"):
        shot_error_rate_to_per_round(0.1, 0)


# ---------------------------------------------------------------------------------------
# Rows -> curves
# ---------------------------------------------------------------------------------------


def test_rows_to_curves_sorts_merges_and_groups():
    rows = [
        StatsRow("a", "pm", {"d": 5, "p": 0.002, "r": 5}, shots=100, errors=3, discards=10),
        StatsRow("b", "pm", {"d": 3, "p": 0.001, "r": 3}, shots=50, errors=1),
        StatsRow("c", "pm", {"d": 5, "p": 0.001, "r": 5}, shots=70, errors=2),
        StatsRow("a", "pm", {"d": 5, "p": 0.002, "r": 5}, shots=100, errors=4),  # second part of task a
        StatsRow("d", "bp", {"d": 3, "p": 0.001}, shots=10, errors=1),
        StatsRow("e", "bp", {"p": 0.001}, shots=10, errors=1),  # no d: skipped
    ]
    curves = rows_to_curves(rows)
    assert list(curves) == [("pm",), ("bp",)]
    pm = curves[("pm",)]
    assert [c.d for c in pm] == [3, 5]
    d5 = pm[1]
    assert d5.p.tolist() == [0.001, 0.002]
    assert d5.shots.tolist() == [70, 190]  # merged, discards removed
    assert d5.errors.tolist() == [2, 7]
    assert d5.rounds.tolist() == [5, 5]
    assert d5.rates(per_round=False).tolist() == pytest.approx([2 / 70, 7 / 190])
    with pytest.raises(ValueError, match="per-round rates need 'r' or 'rounds'"):
        curves[("bp",)][0].rates(per_round=True)


def test_rows_to_curves_names_the_missing_group_key():
    rows = [
        StatsRow("x", "pm", {"d": 3, "p": 0.001, "b": "X"}, shots=10, errors=1),
        StatsRow("z", "pm", {"d": 3, "p": 0.001, "b": "Z"}, shots=10, errors=1),
    ]
    with pytest.raises(ValueError, match=r"differ in \{'b': \('X', 'Z'\)\}"):
        rows_to_curves(rows)
    assert set(rows_to_curves(rows, group_keys=("decoder", "b"))) == {("pm", "X"), ("pm", "Z")}
    with pytest.raises(ValueError, match="no rows with both 'p' and 'd'"):
        rows_to_curves([StatsRow("q", "pm", {"n": 3}, shots=1)])
