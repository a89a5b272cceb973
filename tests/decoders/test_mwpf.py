"""``mwpf``: MWPF (hypergraph minimum-weight parity factor) behind qdecode's decoder protocol."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.mwpf_decoder import ENTRIES, MWPF_PARAMS, SOLVERS, MwpfDecoder
from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.stats import fit_binomial


def _mwpf(problem: DecodingProblem, **params) -> MwpfDecoder:
    """The decoder; what ``params`` leaves out takes the registry table's default (``uses_params``)."""
    return MwpfDecoder(problem, **params)


@functools.cache
def _surface(shots: int = 4000):
    circuit = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                     after_clifford_depolarization=0.005)
    dem = decoding_dem(circuit)
    dets, obs = circuit.compile_detector_sampler(seed=11).sample(shots, separate_observables=True)
    return dem, DecodingProblem.from_dem(dem), dets, obs


@functools.cache
def _colour(shots: int = 800):
    circuit = stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=2,
                                     after_clifford_depolarization=0.007, before_measure_flip_probability=0.007)
    dem = circuit.detector_error_model()
    dets, obs = circuit.compile_detector_sampler(seed=7).sample(shots, separate_observables=True, bit_packed=True)
    obs = np.unpackbits(obs, axis=1, count=dem.num_observables, bitorder="little")
    return dem, DecodingProblem.from_dem(dem), dets, obs


def _failures(pred: np.ndarray, obs: np.ndarray) -> int:
    return int(np.count_nonzero(np.any(pred != obs, axis=1)))


def _syndromes(problem: DecodingProblem, errors: np.ndarray) -> np.ndarray:
    return ((problem.H @ errors.T.astype(np.int64)).T & 1).astype(np.uint8)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_correction_satisfies_its_syndrome(solver):
    _, problem, dets, _ = _surface()
    errors = _mwpf(problem, solver=solver).decode_batch(dets[:1000])
    assert errors.dtype == np.uint8 and errors.shape == (1000, problem.num_errors)
    assert np.array_equal(_syndromes(problem, errors), dets[:1000].astype(np.uint8))
    assert not errors[~dets[:1000].any(axis=1)].any()  # all-zero syndromes: no correction


def test_colour_code_corrections_satisfy_their_syndromes():
    _, problem, packed, _ = _colour()
    dets = np.unpackbits(packed[:200], axis=1, count=problem.num_detectors, bitorder="little")
    errors = _mwpf(problem, cluster_node_limit=5).decode_batch(dets)
    assert np.array_equal(_syndromes(problem, errors), dets)


def test_graphlike_ler_matches_pymatching_within_intervals():
    import pymatching
    dem, problem, dets, obs = _surface()
    ours = _failures(_mwpf(problem).predict_observables_batch(dets), obs)
    theirs = _failures(pymatching.Matching.from_detector_error_model(dem).decode_batch(dets), obs)
    assert theirs >= 10  # enough failures for the comparison to mean something
    a = fit_binomial(num_shots=len(dets), num_hits=ours, max_likelihood_factor=1e3)
    b = fit_binomial(num_shots=len(dets), num_hits=theirs, max_likelihood_factor=1e3)
    assert a.low <= b.high and b.low <= a.high, (ours, theirs)


def test_colour_code_ler_no_worse_than_bposd_within_intervals():
    """Hyperedges (stim's colour code d = 5, undecomposed DEM): mwpf against bposd on the same shots."""
    _, problem, packed, obs = _colour()
    ours = _failures(np.unpackbits(_mwpf(problem).predict_observables_packed(packed), axis=1,
                                   count=problem.num_observables, bitorder="little"), obs)
    bposd = DecoderSpec.create("bposd").build(problem)
    theirs = _failures(np.unpackbits(bposd.predict_observables_packed(packed), axis=1,
                                     count=problem.num_observables, bitorder="little"), obs)
    assert theirs >= 10
    a = fit_binomial(num_shots=len(obs), num_hits=ours, max_likelihood_factor=1e3)
    b = fit_binomial(num_shots=len(obs), num_hits=theirs, max_likelihood_factor=1e3)
    assert a.low <= b.high, (ours, theirs)


def test_packed_path_equals_unpacked_path():
    _, problem, packed, _ = _colour()
    dec = _mwpf(problem)
    packed = packed[:300]
    dets = np.unpackbits(packed, axis=1, count=problem.num_detectors, bitorder="little")
    flips = dec.predict_observables_batch(dets)
    got = dec.predict_observables_packed(packed)
    assert got.dtype == np.uint8 and got.shape == (300, (problem.num_observables + 7) // 8)
    assert np.array_equal(np.unpackbits(got, axis=1, count=problem.num_observables, bitorder="little"), flips)
    assert np.array_equal(dec.decode(dets[5]), dec.decode_batch(dets[5:6])[0])


def test_errors_above_one_half_are_complemented_exactly():
    """A p > 1/2 mechanism is decoded as its complement: the answers equal exact MLE on every syndrome,
    and the errors (complement undone) satisfy the syndromes."""
    dem = stim.DetectorErrorModel("error(0.7) D0 L0\nerror(0.1) D0 D1\nerror(0.2) D1 L0\nerror(0.05) D1\n"
                                  "error(0.15) D0 D1 D2\nerror(0.1) D2")
    problem = DecodingProblem.from_dem(dem)
    dets = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=np.uint8)
    dec = _mwpf(problem)
    errors = dec.decode_batch(dets)
    assert np.array_equal(_syndromes(problem, errors), dets)
    exact = DecoderSpec.create("mle").build(problem).predict_observables_batch(dets)
    assert np.array_equal(dec.predict_observables_batch(dets), exact)


def test_bare_check_matrix_and_detector_free_columns():
    """No DEM needed; a column that flips no detector stays out of the hypergraph (never chosen
    unless p > 1/2, when it is always flipped)."""
    H = np.array([[1, 1, 0, 0], [0, 1, 1, 0]], dtype=np.uint8)
    L = np.array([[1, 0, 0, 1]], dtype=np.uint8)
    dets = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.uint8)
    for p_free, want_free in ((0.1, 0), (0.8, 1)):
        problem = DecodingProblem(H=H, L=L, priors=np.array([0.1, 0.1, 0.1, p_free]))
        errors = _mwpf(problem).decode_batch(dets)
        assert np.array_equal(_syndromes(problem, errors), dets)
        assert (errors[:, 3] == want_free).all()


def test_constant_prediction_without_the_solver():
    """Observables no detector sees: every shot gets L (p > 1/2) mod 2."""
    dem = stim.DetectorErrorModel("error(0.1) D0 D1\nerror(0.2) D1\nerror(0.6) L0\nerror(0.1) L1")
    dec = _mwpf(DecodingProblem.from_dem(dem))
    dets = np.array([[0, 0], [1, 1], [0, 1]], dtype=np.uint8)
    assert np.array_equal(dec.predict_observables_batch(dets), np.tile([1, 0], (3, 1)))
    assert np.array_equal(dec.predict_observables_packed(np.packbits(dets, axis=1, bitorder="little")),
                          np.ones((3, 1), dtype=np.uint8))


def test_refusals_are_one_line():
    _, problem, _, _ = _surface()
    with pytest.raises(DecoderInputError, match="solver must be one of"):
        _mwpf(problem, solver="blossom")
    with pytest.raises(DecoderInputError, match="cluster_node_limit"):
        _mwpf(problem, cluster_node_limit=-1)
    dec = _mwpf(DecodingProblem.from_dem(stim.DetectorErrorModel("error(0.1) D0 D1\ndetector D2")))
    with pytest.raises(DecoderInputError, match="produced by no set") as info:
        dec.decode_batch(np.array([[0, 0, 1]], dtype=np.uint8))
    assert "\n" not in str(info.value)
    assert np.array_equal(dec.decode_batch(np.array([[1, 1, 0]], dtype=np.uint8)), [[1]])  # still usable
    with pytest.raises(DecoderInputError):
        dec.decode_batch(np.array([[2, 0, 0]]))


def test_cluster_node_limit_zero_is_mwpfs_default():
    _, problem, dets, _ = _surface()
    assert _mwpf(problem).cluster_node_limit == 50
    assert _mwpf(problem)._solver.config["cluster_node_limit"] == 50
    assert _mwpf(problem, cluster_node_limit=7)._solver.config["cluster_node_limit"] == 7


def test_registry_entry():
    entry = ENTRIES["mwpf"]
    assert entry.params is not MWPF_PARAMS and dict(entry.params) == MWPF_PARAMS
    assert "Work bound:" in MwpfDecoder.__doc__
    _, problem, dets, _ = _surface()
    dec = entry.factory(problem, **{k: p.default for k, p in entry.params.items()})
    assert dec.params == {"solver": "joint_single_hair", "cluster_node_limit": 0, "only_solve_primal_once": False}
    from qdecode.decoders.registry import BUILTIN_DECODERS

    if "mwpf" in BUILTIN_DECODERS:  # once registered: the label round-trips and builds the same decoder
        spec = DecoderSpec.create("mwpf", {"cluster_node_limit": 20})
        assert DecoderSpec.from_label(spec.label()) == spec
        assert isinstance(spec.build(problem), MwpfDecoder)
