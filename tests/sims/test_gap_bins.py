"""Gap histograms (qdecode.sims.gap_bins): bin names, the sweep's gap path, the post-selection curve.

The sampled tests use the rotated surface code (d = 3 and 5, d rounds, SI1000 at p = 0.003) decoded
by pymatching with its gap, through the sweep harness with a fixed seed: the histogram adds up to
the row, the decoded observables are those of the plain path, and the kept-shot error rate does not
rise with the threshold beyond the binomial intervals.
"""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.confidence import NoConfidenceError
from qdecode.decoders.registry import DecoderSpec
from qdecode.sims.gap_bins import (
    GAP_BINS_KEY,
    GAP_BINS_TAG,
    GAP_CAP_DB,
    at_max_discard,
    discard_curve,
    gap_bin_counts,
    has_gap_bins,
)
from qdecode.sims.sweep import SweepOptions, run_sweep
from qdecode.sims.tasks import CircuitRecipe, SweepTask, describe_task

SHOTS = 20_000


def _task(d: int, gap: bool = True, decoder: str = "pymatching") -> SweepTask:
    recipe = CircuitRecipe(code="surface", noise="si1000", p=0.003, d=d, rounds=d)
    return SweepTask(decoder=DecoderSpec.create(decoder), recipe=recipe, gap_histogram=gap)


@pytest.fixture(scope="module")
def swept():
    """{(d, gap): row} of one seeded sweep, with and without the histogram."""
    tasks = [_task(d, gap) for d in (3, 5) for gap in (True, False)]
    rows = run_sweep(tasks, out_path=None, options=SweepOptions(max_shots=SHOTS, max_errors=10**9, seed=7))
    return {(t.recipe.d, t.gap_histogram): r for t, r in zip(tasks, rows)}


def test_bin_edges_inf_nan_negative_and_cap():
    gaps = np.array([0.0, 0.999, 1.0, 12.0, 12.99, GAP_CAP_DB - 0.5, GAP_CAP_DB, 1e9, np.inf, np.nan, -0.1, -5],
                    dtype=np.float32)
    errors = np.array([0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1], dtype=bool)
    counts = gap_bin_counts(gaps, errors)
    assert counts == {"g0": 2, "g0E": 1, "g1": 1, "g12": 2, "g12E": 2, f"g{GAP_CAP_DB - 1}": 1,
                      f"g{GAP_CAP_DB}": 3, f"g{GAP_CAP_DB}E": 1, "gnan": 1, "gnanE": 1, "gneg": 2, "gnegE": 1}
    assert has_gap_bins(counts) and not has_gap_bins({"not_converged": 3, "detection_events": 5})
    assert gap_bin_counts(np.zeros(0, np.float32), np.zeros(0, bool)) == {}
    with pytest.raises(ValueError, match="one entry per shot"):
        gap_bin_counts(np.zeros(3), np.zeros(2, bool))


def test_curve_orders_nan_and_negative_first_and_counts_postselection_discards():
    counts = {"gnan": 1, "gnanE": 1, "gneg": 2, "g0": 3, "g0E": 1, "g5": 4, "g5E": 1, "g100": 10}
    pts = discard_curve(30, 3, 10, counts)  # 10 shots dropped by detector postselection, 20 decoded
    assert [(p.threshold, p.kept, p.kept_errors) for p in pts] == [(None, 20, 3), (0, 17, 2), (1, 14, 1),
                                                                     (6, 10, 0)]
    assert [p.discard_rate for p in pts] == [10 / 30, 13 / 30, 16 / 30, 20 / 30]
    assert at_max_discard(pts, 0.5).threshold == 0 and at_max_discard(pts, 0.1).threshold is None
    assert at_max_discard(pts, 1.0).threshold == 6
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        at_max_discard(pts, 1.5)
    with pytest.raises(ValueError, match="not a --gap-histogram row"):
        discard_curve(31, 3, 10, counts)


def test_histogram_totals_equal_the_rows_shots_and_errors(swept):
    for d in (3, 5):
        row = swept[(d, True)]
        c = row.custom_counts
        assert row.shots == SHOTS and row.discards == 0
        assert sum(v for k, v in c.items() if has_gap_bins({k: v})) == row.shots - row.discards
        assert sum(v for k, v in c.items() if k.endswith("E") and has_gap_bins({k[:-1]: 1})) == row.errors
        assert row.json_metadata[GAP_BINS_KEY] == GAP_BINS_TAG
        plain = swept[(d, False)]
        assert GAP_BINS_KEY not in plain.json_metadata and not has_gap_bins(plain.custom_counts)
        assert plain.strong_id != row.strong_id  # rows with and without histograms never pool


def test_gap_path_decodes_as_the_plain_path():
    from qdecode.sims.sampling import compiled, decode_chunk

    for gap in (True, False):
        ct, make_sampler = compiled(_task(3, gap))
        dets, obs = make_sampler(seed=11).sample(3000, separate_observables=True, bit_packed=True)
        if gap:
            errors_gap, _, counts = decode_chunk(ct, dets, obs)
        else:
            errors_plain, _, _ = decode_chunk(ct, dets, obs)
    assert errors_gap == errors_plain
    assert sum(v for k, v in counts.items() if k.endswith("E")) == errors_gap


def test_kept_error_rate_does_not_rise_with_the_threshold(swept):
    for d in (3, 5):
        row = swept[(d, True)]
        pts = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)
        assert len(pts) > 10
        rates = [p.discard_rate for p in pts]
        assert rates == sorted(rates) and rates[0] == 0.0
        for i, a in enumerate(pts):
            for b in pts[i + 1:]:
                assert b.fit.low <= a.fit.high, (d, a, b)  # a larger threshold is never worse beyond the bands
        # and the confidence is worth something: 10 % discards cut the error rate at least in half
        ten = at_max_discard(pts, 0.10)
        assert 0.05 < ten.discard_rate <= 0.10
        assert ten.fit.high < pts[0].fit.best / 2


def test_a_decoder_without_confidence_is_refused_by_the_task():
    with pytest.raises(NoConfidenceError, match="uf gives no confidence"):
        _task(3, decoder="uf")
    assert describe_task(_task(3)).json_metadata[GAP_BINS_KEY] == GAP_BINS_TAG
