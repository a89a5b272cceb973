"""Latency histograms and the two deadline policies against the shots themselves (brute force)."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.sims.latency_bins import (
    anytime_counts,
    bin_index,
    deadline_curve,
    grid_index,
    histogram,
    latency_bin_counts,
    rescued_at,
    upper_edge,
)


def _brute(latency, wrong, at, right, length, k):
    """Failures at grid index k: in-time shots that are wrong, late shots without a right answer at edge k."""
    bl, ba = bin_index(latency), bin_index(at)
    fails = 0
    for s in range(latency.shape[0]):
        if bl[s] <= k:
            fails += int(wrong[s])
        else:
            seen = [i for i in range(length[s]) if ba[s, i] <= k]
            fails += 0 if seen and right[s, seen[-1]] else 1
    return fails


@pytest.mark.parametrize("clock", ["wall", "work"])
def test_anytime_and_miss_failures_equal_the_brute_force(clock):
    rng = np.random.default_rng(3)
    S, T = 2000, 4
    latency = rng.integers(5, 400, S).astype(float)
    if clock == "wall":
        latency = latency * 1234.5
    length = rng.integers(0, T + 1, S)
    at = np.minimum(np.sort(rng.uniform(0.01, 1.0, (S, T)), axis=1) * latency.max(), latency[:, None])
    right = rng.random((S, T)) < 0.7
    wrong = rng.random(S) < 0.1
    wall, work = (latency, None) if clock == "wall" else (None, latency.astype(np.int64))
    counts = {**latency_bin_counts(wall, work, wrong), **anytime_counts(clock, latency, at, right, length)}
    hist, rescued = histogram(counts, clock), rescued_at(counts, clock)
    assert counts[f"{clock}_trail"] == S and hist.total == S
    for t in np.quantile(latency, [0.0, 0.1, 0.5, 0.9, 0.999]).tolist() + [latency.max() * 2, np.inf]:
        k = grid_index(t, clock)
        miss, anytime = (deadline_curve(hist, S, [t], rescued=r)[0].failures for r in (None, rescued))
        assert anytime == _brute(latency, wrong, at, right, length, k)
        assert miss == _brute(latency, wrong, at, np.zeros_like(right), length, k)  # no answer is right
        assert anytime <= miss
    assert deadline_curve(hist, S, [np.inf], rescued=rescued)[0].failures == int(wrong.sum())


def test_grid_index_is_the_last_bin_within_the_deadline():
    for t in (1.0, 1.5, 2.0, 10.0, 1000.0, 12345.6):
        k = grid_index(t, "wall")
        assert upper_edge(k) <= t * (1 + 1e-9) < upper_edge(k + 1)
    assert grid_index(10, "work") == 27  # floor(2^(27/8)) = 10: every count of bin 27 is <= 10
    assert grid_index(0.5, "wall") == -1


def test_rows_without_a_trail_have_no_anytime_counts():
    counts = latency_bin_counts(np.array([10.0, 20.0]), None, np.array([False, True]))
    assert rescued_at(counts, "wall") is None
    assert anytime_counts("wall", np.zeros(0), np.zeros((0, 2)), np.zeros((0, 2), bool), np.zeros(0, int)) == {}
