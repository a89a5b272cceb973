"""Tests of qdecode.sims.threshold: crossings, FSS thresholds, Lambda, per-group reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from qdecode.sims.stats import rows_to_curves
from qdecode.sims.store import StatsRow
from qdecode.sims.threshold import (
    estimate_thresholds,
    fss_threshold,
    pairwise_crossings,
    pairwise_threshold,
    suppression_factors,
    threshold_report,
)

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
    assert "(95% bootstrap percentile interval, fss, nu = " in str(est)  # says what the interval is
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
