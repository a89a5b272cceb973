"""Tests of qdecode.sims.stats: binomial fits (against sinter), per-round rates, thresholds, Lambda."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qdecode.sims.stats import (
    Fit,
    binomial_likelihood_interval,
    estimate_thresholds,
    fit_binomial,
    fss_threshold,
    pairwise_crossings,
    pairwise_threshold,
    rows_to_curves,
    shot_error_rate_to_per_round,
    suppression_factors,
    threshold_report,
)
from qdecode.sims.store import StatsRow

sinter = pytest.importorskip("sinter")

P_TH = 0.0075


def _rows(model, ds, ps, shots, seed, decoder="dec", rounds=None):
    """Synthetic merged rows: errors ~ Binomial(shots, model(p, d)), one fixed numpy seed."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in ds:
        for p in ps:
            md = {"d": d, "p": float(p)}
            if rounds is not None:
                md["r"] = rounds(d)
            errors = int(rng.binomial(shots, model(p, d)))
            rows.append(StatsRow(strong_id=f"{decoder}-{d}-{p!r}", decoder=decoder, json_metadata=md,
                                 shots=shots, errors=errors))
    return rows


def _fss_model(p, d, p_th=P_TH, nu=1.3):
    x = (p - p_th) * d ** (1 / nu)
    return 0.12 + 20 * x + 500 * x * x


def _power_model(p, d, p_th=P_TH):
    # All distances meet at p_th (P = 0.1 there), and eps_d / eps_{d+2} = p_th / p exactly.
    return min(0.5, 0.1 * (p / p_th) ** ((d + 1) / 2))


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


@settings(max_examples=150, deadline=None)
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


# ---------------------------------------------------------------------------------------
# Thresholds
# ---------------------------------------------------------------------------------------


def test_fss_recovers_known_threshold():
    rows = _rows(_fss_model, [3, 5, 7, 9], np.linspace(0.0065, 0.0085, 9), 20000, seed=2)
    est = estimate_thresholds(rows, n_bootstrap=200, seed=1)[("dec",)]
    assert est.method == "fss" and est.found
    assert est.low <= P_TH <= est.high
    assert est.low < est.p_th < est.high
    assert abs(est.p_th - P_TH) < 2e-4
    assert est.high - est.low < 5e-4
    assert est.nu_low <= 1.3 <= est.nu_high
    assert est.distances == (3, 5, 7, 9)
    assert est.params["A"] == pytest.approx(0.12, abs=0.01)
    assert 0.3 < est.reduced_chi2 < 3
    assert est.n_bootstrap_failed == 0
    assert "p_th = 0.0075" in str(est)
    # Same seed, same answer.
    again = estimate_thresholds(rows, n_bootstrap=200, seed=1)[("dec",)]
    assert (again.p_th, again.low, again.high) == (est.p_th, est.low, est.high)


def test_fss_per_decoder_and_explicit_window():
    rows = _rows(_fss_model, [3, 5, 7], np.linspace(0.0065, 0.0085, 9), 20000, seed=3, decoder="a")
    rows += _rows(lambda p, d: _fss_model(p, d, p_th=0.0060), [3, 5, 7], np.linspace(0.005, 0.007, 9), 20000,
                  seed=4, decoder="b")
    est = estimate_thresholds(rows, n_bootstrap=50)
    assert est[("a",)].low <= P_TH <= est[("a",)].high
    assert est[("b",)].low <= 0.0060 <= est[("b",)].high
    curves = rows_to_curves(rows)[("a",)]
    windowed = fss_threshold(curves, p_window=(0.0068, 0.0082), n_bootstrap=0)
    assert windowed.p_window == (pytest.approx(0.0068, rel=0.05), pytest.approx(0.0082, rel=0.05))
    assert abs(windowed.p_th - P_TH) < 3e-4
    with pytest.raises(ValueError, match="unknown threshold method 'magic'"):
        estimate_thresholds(rows, method="magic")


def test_fss_needs_three_distances():
    rows = _rows(_fss_model, [3, 5], np.linspace(0.0065, 0.0085, 5), 1000, seed=0)
    curves = rows_to_curves(rows)[("dec",)]
    with pytest.raises(ValueError, match=r"at least 3 distances with data, got 2 \(d=\[3, 5\]\)"):
        fss_threshold(curves)
    # Two distances are enough for the pairwise estimate.
    assert pairwise_threshold(curves, n_bootstrap=20).method == "pairwise"


def test_fss_reports_no_crossing():
    # Larger d is better everywhere: the threshold lies above the sampled range.
    rows = _rows(_power_model, [3, 5, 7], np.geomspace(0.001, 0.004, 6), 10**5, seed=0)
    est = fss_threshold(rows_to_curves(rows)[("dec",)])
    assert not est.found and math.isnan(est.p_th)
    assert "no crossing in range" in est.note
    assert "threshold above range" in est.note


def test_pairwise_crossings_find_the_common_point():
    rows = _rows(_power_model, [3, 5, 7, 9], np.geomspace(0.003, 0.015, 12), 10**6, seed=5)
    curves = rows_to_curves(rows)[("dec",)]
    crossings = pairwise_crossings(curves)
    assert [(c.d_small, c.d_large) for c in crossings] == [(3, 5), (5, 7), (7, 9)]
    for c in crossings:
        assert c.p == pytest.approx(P_TH, rel=0.02)
    est = pairwise_threshold(curves, n_bootstrap=100, seed=0)
    assert est.low <= P_TH <= est.high
    assert math.isnan(est.nu)


def test_pairwise_no_crossing_and_zero_error_points():
    rows = _rows(_power_model, [3, 5], np.geomspace(0.0001, 0.001, 5), 10**4, seed=0)
    curves = rows_to_curves(rows)[("dec",)]
    assert curves[1].errors[0] == 0  # d=5 at the lowest p has no errors; it is left out of the logs
    (c,) = pairwise_crossings(curves)
    assert c.p is None
    assert c.note.startswith("no crossing in range")
    est = pairwise_threshold(curves, n_bootstrap=10)
    assert not est.found and "no crossing in range" in est.note
    with pytest.raises(ValueError, match=r"at least 2 distances with data, got 1 \(d=\[3\]\)"):
        pairwise_crossings(curves[:1])


# ---------------------------------------------------------------------------------------
# Suppression factor
# ---------------------------------------------------------------------------------------


def test_suppression_factor_matches_model():
    ps = np.geomspace(0.002, 0.006, 5)
    rows = _rows(_power_model, [3, 5, 7], ps, 10**6, seed=0, rounds=lambda d: d)
    curves = rows_to_curves(rows)[("dec",)]
    lambdas = suppression_factors(curves, p_th=P_TH, n_bootstrap=200, seed=0)
    assert [s.p for s in lambdas] == pytest.approx(ps.tolist())
    for s in lambdas:
        truth = P_TH / s.p
        assert s.low <= truth <= s.high, (s.p, truth, s)
        assert s.lambda_ == pytest.approx(truth, rel=0.06)
        assert s.lambda_ == pytest.approx(math.exp(-2 * s.slope))
        assert s.distances == (3, 5, 7)
    # Per round (r = d rounds) larger codes also spread their failures over more rounds, so
    # Lambda per round is larger, by about (d + 2) / d for small rates.
    per_round = suppression_factors(curves, p_th=P_TH, per_round=True, n_bootstrap=0)
    for s, r in zip(lambdas, per_round):
        assert s.lambda_ * 1.2 < r.lambda_ < s.lambda_ * 1.8
    # Only p below the threshold are reported.
    assert suppression_factors(curves, p_th=0.003, n_bootstrap=0)[-1].p < 0.003


def test_suppression_factor_zero_errors_and_errors():
    rows = [
        StatsRow("a", "pm", {"d": 3, "p": 0.001}, shots=10**5, errors=200),
        StatsRow("b", "pm", {"d": 5, "p": 0.001}, shots=10**5, errors=40),
        StatsRow("c", "pm", {"d": 7, "p": 0.001}, shots=10**5, errors=0),
        StatsRow("d", "pm", {"d": 3, "p": 0.0005}, shots=10**5, errors=5),
        StatsRow("e", "pm", {"d": 5, "p": 0.0005}, shots=10**5, errors=0),
    ]
    curves = rows_to_curves(rows)[("pm",)]
    low_p, high_p = suppression_factors(curves, n_bootstrap=50)
    assert math.isnan(low_p.lambda_) and "fewer than 2 distances with errors" in low_p.note
    assert high_p.distances == (3, 5)
    assert "d=[7] have no errors" in high_p.note
    assert high_p.lambda_ == pytest.approx(200 / 40)  # two points: exactly eps_3 / eps_5
    with pytest.raises(ValueError, match="suppression factor fit needs at least 2 distances"):
        suppression_factors(curves[:1])


def test_threshold_report_never_raises_per_group():
    rows = _rows(_fss_model, [3, 5, 7], np.linspace(0.0065, 0.0085, 7), 20000, seed=1, decoder="good")
    rows += _rows(_fss_model, [3], np.linspace(0.0065, 0.0085, 3), 1000, seed=1, decoder="lonely")
    reports = threshold_report(rows, n_bootstrap=20)
    good, lonely = reports[("good",)], reports[("lonely",)]
    assert good.threshold is not None and good.threshold.found and not good.errors
    assert len(good.crossings) == 2
    assert lonely.threshold is None and lonely.errors
    text = good.format()
    assert "crossing d=3/5" in text and "threshold: p_th" in text
    assert "at least 2 distances" in lonely.format()
