"""DecodingProblem: DEM merge rule, collision counting, validation."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.problem import DecodingProblem, ProblemError


def test_merge_identical_detector_sets_xor_probability():
    dem = stim.DetectorErrorModel(
        """
        error(0.1) D0 D1
        error(0.2) D1 D0
        error(0.05) D1 ^ D2
        detector D2
        """
    )
    prob = DecodingProblem.from_dem(dem)
    assert prob.num_errors == 2
    assert prob.num_detectors == 3
    p01 = 0.1 * 0.8 + 0.2 * 0.9
    np.testing.assert_allclose(prob.priors, [p01, 0.05])
    assert prob.H.toarray().tolist() == [[1, 0], [1, 1], [0, 1]]
    ptr, idx = prob.column_sources
    assert ptr.tolist() == [0, 2, 3] and idx.tolist() == [0, 1, 2]


def test_collision_keeps_most_likely_observables_and_counts():
    dem = stim.DetectorErrorModel("error(0.01) D0 L0\nerror(0.2) D0\nerror(0.03) D0 L0\n")
    prob = DecodingProblem.from_dem(dem)
    assert prob.num_errors == 1
    assert prob.num_collisions == 2
    assert prob.L.toarray().tolist() == [[0]]  # the p=0.2 mechanism flips no observable


def test_xor_of_repeated_targets_and_repeat_blocks_flattened():
    dem = stim.DetectorErrorModel(
        """
        repeat 3 {
            error(0.1) D0 D1 D1
            shift_detectors 1
        }
        """
    )
    prob = DecodingProblem.from_dem(dem)
    assert prob.num_errors == 3
    assert prob.H.toarray().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]


def test_matches_stim_circuit_dem_shapes():
    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=0.01)
    dem = c.detector_error_model(decompose_errors=True)
    prob = DecodingProblem.from_dem(dem)
    assert prob.num_detectors == dem.num_detectors
    assert prob.num_observables == dem.num_observables == 1
    Hc = prob.H.tocsc()
    keys = {tuple(Hc.indices[Hc.indptr[j]:Hc.indptr[j + 1]]) for j in range(prob.num_errors)}
    assert len(keys) == prob.num_errors  # merged: every column distinct
    # Total probability mass of single-detector-set events is preserved by merging (XOR rule).
    assert 0 < prob.priors.max() < 0.5


def test_malformed_dem_text_is_a_problem_error():
    with pytest.raises(ProblemError, match="malformed detector error model"):
        DecodingProblem.from_dem("error(0.1) D0 Q7\n")


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_priors_outside_open_unit_interval_rejected(p):
    with pytest.raises(ProblemError, match=r"strictly inside \(0, 1\)"):
        DecodingProblem.from_check_matrix([[1, 1]], p)


def test_shape_and_binary_validation():
    with pytest.raises(ProblemError, match="binary"):
        DecodingProblem.from_check_matrix([[1, 2]], 0.1)
    with pytest.raises(ProblemError, match=r"shape \(2,\)"):
        DecodingProblem.from_check_matrix([[1, 1]], [0.1, 0.1, 0.1])
    with pytest.raises(ProblemError, match="L has 3 columns"):
        DecodingProblem.from_check_matrix([[1, 1]], 0.1, L=[[1, 0, 1]])
    with pytest.raises(ProblemError, match="2-D"):
        DecodingProblem.from_check_matrix([1, 1], 0.1)


def test_llr_sign_convention():
    prob = DecodingProblem.from_check_matrix([[1]], 0.2)
    assert prob.llr[0] == pytest.approx(np.log(0.8 / 0.2))
