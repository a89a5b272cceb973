"""Herald detectors (qdecode.heralds, kernels.herald_priors, decoders.heralded): the DEM split, the per-shot prior
rule against a direct computation, herald-aware decoders against the same decoder built on each shot's
explicit priors, bad input, and the herald advantage on a sampled erasure circuit."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.decoders.registry import decoder
from qdecode.errors import InputError
from qdecode.heralds import ABSENT_PRIOR, herald_columns, split_heralds
from qdecode.kernels.herald_priors import PRIOR_CLAMP, shot_priors
from qdecode.problem import DecodingProblem
from tests.decoders.test_conformance import herald_text
from tests.stats_checks import assert_ratio_at_most

#: stim's DEM of ``HERALDED_ERASE(0.01) 0`` before ``M 0`` with a herald detector and a detector on the result.
ERASURE = """error(0.005) D0
error(0.005) D0 D1 L0
error(0.002) D1 L0
detector[herald] D0
detector(1, 2) D1
"""


def test_split_heralds_renumbers_and_keeps_coordinates():
    h = split_heralds(stim.DetectorErrorModel(ERASURE))
    assert h.detectors.tolist() == [0] and h.kept.tolist() == [1]
    assert h.base_dem.num_detectors == 1 and h.blind_dem.num_detectors == 1
    base = DecodingProblem.from_dem(h.base_dem, heralds="checks")
    blind = DecodingProblem.from_dem(h.blind_dem, heralds="checks")
    # one column (D0 L0): the ordinary 0.002 XOR the heralded effect at ABSENT_PRIOR; blind: XOR 0.005
    assert base.priors == pytest.approx([0.002 + ABSENT_PRIOR], rel=1e-9)
    assert blind.priors == pytest.approx([0.002 * 0.995 + 0.005 * 0.998])
    assert "detector(1, 2) D0" in str(h.base_dem)
    assert len(h.mechanisms) == 2 and {m.herald for m in h.mechanisms} == {0}


def test_erased_bit_gets_probability_one_half():
    h = split_heralds(stim.DetectorErrorModel(ERASURE))
    base = DecodingProblem.from_dem(h.base_dem, heralds="checks")
    cols = herald_columns(h, base, components=False)
    assert cols.ptr.tolist() == [0, 1] and cols.col.tolist() == [0]
    assert cols.flip == pytest.approx([0.0])  # q = 1/2: the two outcomes are equally likely


def _reference_priors(heralds, problem, fired):
    """The rule of qdecode.heralds, computed directly: per shot, per column, XOR of the base prior and the
    conditional flip probability of each fired herald (dense, float64)."""
    cols = herald_columns(heralds, problem, components=False)
    out = np.tile(problem.priors, (fired.shape[0], 1))
    for s in range(fired.shape[0]):
        for h in np.flatnonzero(fired[s]):
            for k in range(cols.ptr[h], cols.ptr[h + 1]):
                j, q = cols.col[k], (1 - cols.flip[k]) / 2
                out[s, j] = out[s, j] * (1 - q) + q * (1 - out[s, j])
    return np.clip(out, PRIOR_CLAMP, 1 - PRIOR_CLAMP)


def test_shot_priors_match_the_direct_rule():
    dem = stim.DetectorErrorModel(herald_text())
    h = split_heralds(dem)
    base = DecodingProblem.from_dem(h.base_dem, heralds="checks")
    rng = np.random.default_rng(3)
    fired = (rng.random((50, h.count)) < 0.2).astype(np.uint8)
    cols = herald_columns(h, base, components=False)
    sp = shot_priors(np.ascontiguousarray(base.priors), *cols, fired)
    dense = np.tile(base.priors, (50, 1))
    for s in range(50):
        cs = sp.col[sp.ptr[s]:sp.ptr[s + 1]]
        assert len(set(cs.tolist())) == cs.size  # each column once per shot
        dense[s, cs] = sp.prior[sp.ptr[s]:sp.ptr[s + 1]]
    assert np.allclose(dense, _reference_priors(h, base, fired), rtol=1e-12, atol=0)
    assert sp.ptr[0] == 0 and (np.diff(sp.ptr) >= 0).all()


@pytest.mark.parametrize("name", ["bp", "bposd[max_iter=2]", "bplsd[max_iter=2]", "bpuf[max_iter=2]"])
def test_herald_aware_decoder_equals_the_decoder_on_each_shots_priors(name):
    """The herald path decodes shot s exactly as the same decoder built on the base problem with shot s's
    priors (an independent construction of those priors, :func:`_reference_priors`); two BP iterations send
    most shots on to OSD / LSD, whose per-shot costs are then compared too."""
    dem = stim.DetectorErrorModel(herald_text(p=0.04, erase=0.3))
    prob = DecodingProblem.from_dem(dem)
    dets, _, _ = dem.compile_sampler(seed=11).sample(30)
    dets = dets.astype(np.uint8)
    dec = decoder(name, prob)
    assert dec.uses == "priors"
    got = dec.predict_observables_batch(dets)
    post = {k: v for k, v in dec.last_info.extra.items() if k in ("osd", "lsd")}
    assert name == "bp" or sum(int(v.sum()) for v in post.values()) >= 10
    h = prob.heralds
    base = DecodingProblem.from_dem(h.base_dem, heralds="checks")
    priors = _reference_priors(h, base, dets[:, h.detectors])
    for s in range(dets.shape[0]):
        one = DecodingProblem(H=base.H, L=base.L, priors=priors[s])
        want = decoder(name, one).predict_observables_batch(dets[s:s + 1, h.kept])
        assert np.array_equal(got[s], want[0]), s


def test_modes_choose_what_the_decoder_sees():
    dem = stim.DetectorErrorModel(herald_text())
    aware, ignore = DecodingProblem.from_dem(dem), DecodingProblem.from_dem(dem, heralds="ignore")
    checks = DecodingProblem.from_dem(dem, heralds="checks")
    assert checks.heralds is None and aware.heralds.mode == "aware"
    assert decoder("uf", aware).uses == "priors"
    assert decoder("uf", ignore).uses == "ignore"
    assert decoder("pymatching", aware).uses == "checks"  # PyMatching takes no per-shot weights
    assert decoder("uf", ignore).inner.problem.num_detectors == dem.num_detectors - aware.heralds.count
    assert not hasattr(decoder("uf", checks), "uses")  # a plain decoder: the heralds are ordinary detectors


@pytest.mark.parametrize("text,match", [
    ("error(0.1) D0 D1 D2\ndetector[herald] D0\ndetector[herald] D1\ndetector D2", "flips herald detectors D0 and D1"),
    ("error(0.1) D1\ndetector[herald] D0\ndetector D1", "D0 is flipped by no error mechanism"),
    ("error(0.1) D0 D1\ndetector[herald] D0\ndetector D0\ndetector D1", "D0 is declared both as a herald and"),
    ("error(0.1) D0 L0\nlogical_observable[herald] L0", "L0 is tagged 'herald'"),
])
def test_bad_heralds_are_one_line_input_errors(text, match):
    with pytest.raises(InputError, match=match) as info:
        DecodingProblem.from_dem(text)
    assert "\n" not in str(info.value)


def test_unknown_mode_is_an_input_error():
    with pytest.raises(InputError, match="heralds must be one of aware, ignore, checks"):
        DecodingProblem.from_dem(ERASURE, heralds="blind")


def test_herald_aware_union_find_beats_the_herald_blind_matching():
    """On the herald DEM, union-find with per-shot lengths fails at most 0.5x as often as PyMatching on the
    marginalised model (at 99.9 %, with the power to reject a ratio of 1)."""
    dem = stim.DetectorErrorModel(herald_text(erase=0.2))
    dets, obs, _ = dem.compile_sampler(seed=5).sample(4000)
    dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
    aware = decoder("uf[length_steps=8]", DecodingProblem.from_dem(dem))
    blind = decoder("pymatching", DecodingProblem.from_dem(dem, heralds="ignore"))
    ours = int((aware.predict_observables_batch(dets) != obs).any(1).sum())
    ref = int((blind.predict_observables_batch(dets) != obs).any(1).sum())
    assert_ratio_at_most(ours, 4000, ref, 4000, 0.5, detects=1.0,
                         what="herald-aware uf against herald-blind pymatching")


def test_relay_bp_takes_per_shot_priors_and_an_ensemble_sees_checks():
    dem = stim.DetectorErrorModel(herald_text())
    prob = DecodingProblem.from_dem(dem)
    dets, _, _ = dem.compile_sampler(seed=11).sample(20)
    dets = dets.astype(np.uint8)
    dec = decoder("relay-bp", prob)
    assert dec.uses == "priors"
    got = dec.predict_observables_batch(dets)
    h = prob.heralds
    base = DecodingProblem.from_dem(h.base_dem, heralds="checks")
    priors = _reference_priors(h, base, dets[:, h.detectors])
    for s in range(dets.shape[0]):
        one = DecodingProblem(H=base.H, L=base.L, priors=priors[s])
        assert np.array_equal(got[s], decoder("relay-bp", one).predict_observables_batch(dets[s:s + 1, h.kept])[0])
    assert decoder("relay-bp[ensemble=4]", prob).uses == "checks"


def test_heralds_parameter_of_every_quantum_decoder():
    """``heralds=`` in a label picks the mode per decoder (sweeps and the sinter plug-in spell it there); the
    default is left out of labels, so no label written before heralds existed changes."""
    from qdecode.decoders.registry import DecoderSpec, UnknownDecoderError

    dem = stim.DetectorErrorModel(herald_text())
    prob = DecodingProblem.from_dem(dem)
    spec = DecoderSpec.parse("uf[heralds=ignore,length_steps=8]")
    assert spec.label() == "uf[growth=weighted,length_steps=8,heralds=ignore]"
    assert DecoderSpec.from_label(spec.label()) == spec
    assert DecoderSpec.create("bposd", {"heralds": "aware"}) == DecoderSpec.create("bposd")
    assert DecoderSpec.parse("qd-pymatching[heralds=ignore]").build(prob).uses == "ignore"
    assert spec.build(prob).uses == "ignore"
    assert not hasattr(DecoderSpec.parse("bp[heralds=checks]").build(prob), "uses")
    plain = DecodingProblem.from_dem("error(0.1) D0 D1\nerror(0.1) D1\ndetector D1")  # no heralds: no effect
    assert plain.heralds is None and not hasattr(spec.build(plain), "uses")
    with pytest.raises(UnknownDecoderError, match="heralds='blind' must be one of"):
        DecoderSpec.parse("uf[heralds=blind]")


def test_every_path_accepts_an_undecomposed_heralded_model():
    """stim derives a heralded circuit's DEM only with approximate_disjoint_errors; undecomposed, it still decodes
    through ``qdecode.decoder`` given the stim object (BP+OSD), and union-find refuses it in one line."""
    from qdecode.sims.heralded_noise import erasure_convert

    circuit = erasure_convert(stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=2,
                                                     after_clifford_depolarization=0.02), 0.9)
    dem = circuit.detector_error_model(approximate_disjoint_errors=True)
    dets, obs = circuit.compile_detector_sampler(seed=2).sample(200, separate_observables=True)
    dec = decoder("bposd", dem)
    assert dec.uses == "priors"
    pred = dec.predict_observables_batch(dets.astype(np.uint8))
    assert (pred != obs).any(axis=1).sum() < 20
    with pytest.raises(InputError, match="decomposed hyperedges") as info:
        decoder("uf", dem)
    assert "\n" not in str(info.value)


def test_relay_bp_per_shot_priors_on_lanes_equal_the_scalar_kernel():
    """A batch (8-bit lanes, each lane with its shot's priors and template) and the same shots one at a time
    (the scalar kernel): the same answers, iterations and legs, shot for shot."""
    dem = stim.DetectorErrorModel(herald_text(p=0.03, erase=0.3))
    prob = DecodingProblem.from_dem(dem)
    dets, _, _ = dem.compile_sampler(seed=4).sample(300)
    dets = dets.astype(np.uint8)
    dec = decoder("relay-bp", prob)
    batch = dec.predict_observables_batch(dets)
    info = dec.last_info
    assert (info.extra["legs"] > 0).sum() >= 10  # enough shots go on past leg 0
    for s in range(dets.shape[0]):
        assert np.array_equal(dec.predict_observables_batch(dets[s:s + 1])[0], batch[s]), s
        assert dec.last_info.iterations[0] == info.iterations[s] and dec.last_info.extra["legs"][0] == \
            info.extra["legs"][s], s
