"""``auto``: resolved to a concrete decoder per model, recorded under that decoder's label."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import stim

from qdecode.decoders import DecoderSpec
from qdecode.decoders.auto import GRAPHLIKE_CANDIDATES, HYPERGRAPH_CANDIDATES, choose, model_kind, resolve
from qdecode.decoders.registry import split_label
from qdecode.problem import DecodingProblem, decoding_dem


def _surface():
    c = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                               after_clifford_depolarization=0.004, before_measure_flip_probability=0.004)
    return decoding_dem(c)


def _colour():
    c = stim.Circuit.generated("color_code:memory_xyz", distance=5, rounds=5, after_clifford_depolarization=0.002,
                               before_measure_flip_probability=0.002)  # stim cannot decompose it at d = 5
    return decoding_dem(c)


def test_model_kind_follows_the_structure():
    assert model_kind(DecodingProblem.from_dem(_surface()), DecoderSpec) == "graphlike"
    assert model_kind(DecodingProblem.from_dem(_colour()), DecoderSpec) == "hypergraph"


@pytest.mark.parametrize("dem,candidates", [(_surface, GRAPHLIKE_CANDIDATES), (_colour, HYPERGRAPH_CANDIDATES)])
def test_a_generous_budget_takes_the_most_accurate_candidate_and_a_tiny_one_the_fastest(dem, candidates):
    problem = DecodingProblem.from_dem(dem())
    first = DecoderSpec.create(*split_label(candidates[0]))
    wide = choose(problem, time_budget=1e6, specs=DecoderSpec)
    assert wide.spec == first and len(wide.trials) == 1
    tiny = choose(problem, time_budget=1e-9, specs=DecoderSpec)  # nothing fits: the fastest measured
    measured = [t for t in tiny.trials if np.isfinite(t.ms_per_shot)]
    assert tiny.spec.label() == min(measured, key=lambda t: t.ms_per_shot).label
    assert len(tiny.trials) == len(candidates)


def test_resolve_leaves_concrete_specs_alone_and_never_returns_auto():
    dem = _surface()
    spec = DecoderSpec.create("bposd")
    assert resolve(spec, dem) is spec
    assert resolve(DecoderSpec.create("auto", {"time_budget": 1e6}), dem).name != "auto"


def test_a_sweep_records_the_concrete_decoder(tmp_path):
    from qdecode.cli.main import main

    out = tmp_path / "stats.csv"
    rc = main(["sweep", "--code", "surface", "--d", "3", "--p", "0.004", "--noise", "si1000", "--decoder", "auto",
               "--time-budget", "1000000", "--max-shots", "200", "--out", str(out), "--quiet"])
    assert rc == 0
    labels = {row["decoder"].strip() for row in csv.DictReader(out.open(), skipinitialspace=True)}
    assert labels == {DecoderSpec.create("tesseract", {"beam": "short", "sparsify": "surface"}).label()}


def test_auto_is_refused_where_it_could_not_be_recorded_concretely():
    from qdecode.decoders.registry import UnknownDecoderError
    from qdecode.sinter_adapter import parse_label, sinter_decoders

    with pytest.raises(ValueError, match="resolves per model"):
        parse_label("auto")
    assert "qd-auto" not in dict.keys(sinter_decoders(env=False))
    with pytest.raises(ValueError, match="resolves per model"):  # sinter looking the name up is told why
        "qd-auto" in sinter_decoders(env=False)
    with pytest.raises(UnknownDecoderError, match="cannot be nested"):
        DecoderSpec.create("window", {"inner": "auto"})
