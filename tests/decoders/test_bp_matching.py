"""Residual matching and the two-stage ``bp-pymatching`` decoder.

Oracles: PyMatching on the full syndrome (prior weights), and the ``beliefmatching`` package
(BP posteriors -> matching weights on the full syndrome), which ``bp-pymatching`` with
``mode=accurate, tau > 1`` reproduces.
"""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.bp_matching import BpMatchingDecoder, posterior_probabilities
from qdecode.decoders.registry import DecoderSpec
from qdecode.decoders.residual_matching import ResidualMatcher
from qdecode.problem import DecodingProblem
from qdecode.sims.circuits import build_circuit
from tests.stats_checks import assert_ratio_at_most


def _surface(d: int, p: float, shots: int, seed: int = 11):
    circ = build_circuit("surface", d=d, rounds=d, noise="sd6", p=p)
    dem = circ.detector_error_model(decompose_errors=True)
    dets, obs = circ.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
    return dem, DecodingProblem.from_dem(dem), dets.astype(np.uint8), obs.astype(np.uint8)


@pytest.fixture(scope="module")
def d3():
    return _surface(3, 0.005, 3000)


def test_routes_reproduce_the_graph_priors(d3):
    """With q = the column priors, every edge gets the DEM graph's own probability back."""
    _, problem, _, _ = d3
    rm = ResidualMatcher(problem)
    pe = rm.edge_probabilities(problem.priors[None, :])[0]
    np.testing.assert_allclose(pe, rm.graph.priors, rtol=5e-3)
    A, parent, frac = rm.routes
    # each column's shares sum to one, and every route's edges XOR to the column's detectors
    np.testing.assert_allclose(np.bincount(parent, weights=frac, minlength=problem.num_errors), 1.0)
    Hg = rm.graph.H.toarray().astype(np.int64)
    Hp = problem.H.toarray()
    routes = A.T.toarray().astype(np.int64)
    for v in range(routes.shape[0]):
        np.testing.assert_array_equal((Hg @ routes[v]) & 1, Hp[:, parent[v]])


def test_commit_bookkeeping(d3):
    _, problem, dets, _ = d3
    rm = ResidualMatcher(problem)
    rng = np.random.default_rng(5)
    commit = rng.random((50, problem.num_errors)) < 0.02
    residual, flip = rm.commit(dets[:50], commit)
    H = problem.H.toarray().astype(np.int64)
    L = problem.L.toarray().astype(np.int64)
    np.testing.assert_array_equal(residual, dets[:50] ^ ((commit @ H.T) & 1))
    np.testing.assert_array_equal(flip, (commit @ L.T) & 1)
    with pytest.raises(DecoderInputError, match="commit must have shape"):
        rm.commit(dets[:50], commit[:, :-1])


def test_prior_weights_reweighted_equals_plain_matching(d3):
    """match_reweighted with q = priors and nothing committed == PyMatching on the DEM."""
    import pymatching

    dem, problem, dets, _ = d3
    rm = ResidualMatcher(problem)
    plain = pymatching.Matching.from_detector_error_model(dem).decode_batch(dets[:400])
    np.testing.assert_array_equal(rm.match(dets[:400]), plain)
    q = np.broadcast_to(problem.priors, (400, problem.num_errors))
    np.testing.assert_array_equal(rm.match_reweighted(dets[:400], q), plain)
    with pytest.raises(DecoderInputError, match="probabilities"):
        rm.match_reweighted(dets[:2], np.full((2, problem.num_errors), 1.5))


def test_accurate_without_commits_is_belief_matching(d3):
    """tau > 1, accurate mode == the beliefmatching package (product-sum BP, same iterations)."""
    import beliefmatching
    dem, problem, dets, _ = d3
    ours = BpMatchingDecoder(problem, mode="accurate", tau=2.0, max_iter=20).predict_observables_batch(dets[:300])
    theirs = beliefmatching.BeliefMatching(dem, max_bp_iters=20).decode_batch(dets[:300])
    assert np.mean(np.all(ours == theirs, axis=1)) >= 0.99


def test_fast_and_accurate_modes_on_the_same_shots(d3):
    """Both modes decode; commits shrink the matcher's syndrome; accurate is no worse than plain MWPM."""
    import pymatching

    dem, problem, dets, obs = d3
    plain = pymatching.Matching.from_detector_error_model(dem).decode_batch(dets)
    plain_err = int(np.count_nonzero(np.any(plain != obs, axis=1)))
    for mode, bp_graph in (("fast", "edges"), ("fast", "hyper"), ("accurate", "hyper")):
        dec = BpMatchingDecoder(problem, mode=mode, tau=0.5, bp_graph=bp_graph)
        pred = dec.predict_observables_batch(dets)
        errors = int(np.count_nonzero(np.any(pred != obs, axis=1)))
        counts = dec.last_info.counts()
        assert counts["residual_defects"] * 2 < counts["defects"]  # >= 2x fewer defects
        assert counts["defects"] == int(dets.sum())
        assert counts["match_ns"] > 0 and "not_converged" in counts
        if mode == "accurate":
            assert errors <= plain_err
        else:
            # fast mode: about plain matching's failures (the decoder's docstring), at 99.9 % confidence
            assert_ratio_at_most(errors, len(dets), plain_err, len(dets), 1.0, what=f"fast, {bp_graph}")


def test_commit_threshold_semantics(d3):
    """tau > 1 commits nothing: fast mode is then plain matching."""
    import pymatching

    dem, problem, dets, _ = d3
    dec = BpMatchingDecoder(problem, mode="fast", tau=1.5, time_full=True)
    pred = dec.predict_observables_batch(dets[:200])
    np.testing.assert_array_equal(pred, pymatching.Matching.from_detector_error_model(dem).decode_batch(dets[:200]))
    counts = dec.last_info.counts()
    assert counts["committed"] == 0 and counts["residual_defects"] == counts["defects"]
    assert counts["match_full_ns"] > 0


def test_posterior_probabilities_are_stable():
    q = posterior_probabilities(np.array([-1e4, -2.0, 0.0, 2.0, 1e4]))
    np.testing.assert_allclose(q, [1.0, 1 / (1 + np.exp(-2.0)), 0.5, 1 / (1 + np.exp(2.0)), 0.0])


def test_registry_and_bad_parameters(d3):
    _, problem, dets, _ = d3
    spec = DecoderSpec.create("bp-pymatching", {"mode": "accurate", "tau": 0.7})
    assert spec.label().startswith("bp-pymatching[") and "mode=accurate" in spec.label()
    dec = spec.build(problem)
    packed = np.packbits(dets[:20], axis=1, bitorder="little")
    out = dec.predict_observables_packed(packed)
    np.testing.assert_array_equal(np.unpackbits(out, axis=1, bitorder="little", count=1),
                                  dec.predict_observables_batch(dets[:20]))
    with pytest.raises(DecoderInputError, match="mode"):
        BpMatchingDecoder(problem, mode="slow")
    with pytest.raises(DecoderInputError, match="bp_graph"):
        BpMatchingDecoder(problem, bp_graph="tree")
    with pytest.raises(DecoderInputError, match="method"):
        BpMatchingDecoder(problem, method="sum")
    with pytest.raises(DecoderInputError, match="tau"):
        BpMatchingDecoder(problem, tau=-1.0)
    with pytest.raises(DecoderInputError, match="observables only"):
        dec.decode_batch(dets[:2])
    with pytest.raises(DecoderInputError, match="binary"):
        dec.predict_observables_batch(np.full((1, problem.num_detectors), 2))


def test_predecoders_recipe_parses():
    from qdecode.sims.recipe import load_recipe

    rec = load_recipe("predecoders")
    labels = {t.decoder.label() for t in rec.tasks}
    assert any(label.startswith("bp-pymatching[") and "mode=accurate" in label for label in labels)
    assert {"pymatching", "pymatching-correlated"} <= labels
