"""Detector-volume layout and mechanism sampler (no torch needed)."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.neural.mechanism_sampler import MechanismSampler
from qdecode.neural.predecoder_layout import (
    LayoutError,
    PredecoderLayout,
    classes_from_json,
    classes_to_json,
)
from qdecode.problem import DecodingProblem


def test_class_table_same_at_d5_and_d7(d5, d7):
    a = PredecoderLayout.from_problem(d5[1])
    b = PredecoderLayout.from_problem(d7[1])
    assert a.classes == b.classes
    assert a.num_classes == 71
    assert a.shape == (6, 6, 6) and b.shape == (8, 8, 8)
    assert (a.distance, a.rounds, b.distance, b.rounds) == (5, 5, 7, 7)
    assert classes_from_json(classes_to_json(a.classes)) == a.classes
    # a fixed table from d = 5 lays out d = 7 the same way
    assert np.array_equal(PredecoderLayout.from_problem(d7[1], classes=a.classes).col_flat, b.col_flat)


def test_columns_occupy_distinct_output_slots(d5):
    lay = PredecoderLayout.from_problem(d5[1])
    assert np.unique(lay.col_flat).size == d5[1].num_errors
    assert lay.col_flat.max() < lay.num_classes * lay.num_voxels


def test_gather_scatter_round_trip(d5):
    lay = PredecoderLayout.from_problem(d5[1])
    rng = np.random.default_rng(0)
    vals = rng.random((3, d5[1].num_errors)).astype(np.float32)
    vol = lay.scatter(vals, fill=-1.0)
    assert vol.shape == (3, lay.num_classes, *lay.shape)
    assert np.array_equal(lay.gather(vol), vals)
    assert np.count_nonzero(vol != -1.0) == vals.size


def test_inputs_channels(d5):
    circ, pr = d5
    lay = PredecoderLayout.from_problem(pr)
    dets = circ.compile_detector_sampler(seed=3).sample(4).astype(np.uint8)
    x = lay.inputs(dets)
    assert x.shape == (4, 3, 6, 6, 6) and x.dtype == np.float32
    assert np.array_equal(x[:, 0].reshape(4, -1)[:, lay.det_voxel], dets)
    assert x[:, 0].sum() == dets.sum()
    # presence: every detector on exactly one sector channel; t = 0 holds only the memory basis
    pres = x[0, 1:].reshape(2, -1)[:, lay.det_voxel]
    assert np.array_equal(pres.sum(axis=0), np.ones(pr.num_detectors))
    assert x[0, 2, 0].sum() == 0 and x[0, 1, 0].sum() == 12


def test_layout_errors(d5):
    pr = d5[1]
    with pytest.raises(LayoutError, match="coordinates"):
        PredecoderLayout.from_problem(DecodingProblem.from_check_matrix(pr.H, pr.priors, pr.L))
    lay = PredecoderLayout.from_problem(pr)
    with pytest.raises(LayoutError, match="does not know"):
        PredecoderLayout.from_problem(pr, classes=lay.classes[:-3])


def test_sampler_labels_consistent(d5, sd6):
    circ, pr = d5
    pr3 = sd6(5, 0.003)[1]
    s = MechanismSampler([(0.003, pr3), (0.005, pr)])
    b = s.sample(500, np.random.default_rng(1), p_range=(0.003, 0.005))
    assert 0.003 <= b.p <= 0.005
    H = pr.H.toarray().astype(np.int64)
    L = pr.L.toarray().astype(np.int64)
    assert np.array_equal(b.dets, (b.errors @ H.T) % 2)
    assert np.array_equal(b.obs, (b.errors @ L.T) % 2)
    assert np.allclose(s.priors(0.005), pr.priors) and np.allclose(s.priors(0.003), pr3.priors)


def test_sampler_matches_stim_detector_rates(d5):
    circ, pr = d5
    s = MechanismSampler([(0.005, pr)])
    b = s.sample(20000, np.random.default_rng(2), p=0.005)
    stim_rate = circ.compile_detector_sampler(seed=5).sample(20000).mean(axis=0)
    assert np.max(np.abs(b.dets.mean(axis=0) - stim_rate)) < 0.012  # ~4 sigma at rate 0.1, 20k shots


def test_sampler_rejects_mismatched_grid(d5, d7):
    with pytest.raises(ValueError, match="share"):
        MechanismSampler([(0.003, d5[1]), (0.005, d7[1])])

