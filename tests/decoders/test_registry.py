"""Registry and DecoderSpec: names, parameters, labels, errors."""

from __future__ import annotations

import pickle

import pytest

from qdecode.decoders import DecoderSpec, Param, UnknownDecoderError, decoder_names, register
from qdecode.decoders.matching import MatchingDecoder


@pytest.fixture
def toy_decoder():
    register(
        "toy-test",
        lambda problem, alpha, max_iter, flooding: MatchingDecoder(problem),
        {"alpha": Param(float, 0.625), "max_iter": Param(int, 100), "flooding": Param(bool, True)},
    )
    yield "toy-test"
    from qdecode.decoders.registry import _REGISTRY

    _REGISTRY.pop("toy-test", None)  # later tests see only the built-in decoders


def test_builtins_registered():
    assert {"pymatching", "pymatching-correlated"} <= set(decoder_names())
    assert DecoderSpec.create("pymatching").label() == "pymatching"


def test_label_carries_every_parameter_sorted(toy_decoder):
    spec = DecoderSpec.create(toy_decoder, ["max_iter=30", "alpha=0.75"])
    assert spec.label() == "toy-test[alpha=0.75,flooding=true,max_iter=30]"
    assert DecoderSpec.create(toy_decoder, {"max_iter": 30, "alpha": 0.75}) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_unknown_names_and_params_are_named(toy_decoder):
    with pytest.raises(UnknownDecoderError, match="unknown decoder 'nope'.*pymatching"):
        DecoderSpec.create("nope")
    with pytest.raises(UnknownDecoderError, match="no parameter 'gamma'.*alpha"):
        DecoderSpec.create(toy_decoder, ["gamma=1"])
    with pytest.raises(UnknownDecoderError, match="max_iter='ten' is not a valid int"):
        DecoderSpec.create(toy_decoder, ["max_iter=ten"])
    with pytest.raises(UnknownDecoderError, match="key=value"):
        DecoderSpec.create(toy_decoder, ["alpha"])
    with pytest.raises(UnknownDecoderError, match="not a valid bool"):
        DecoderSpec.create(toy_decoder, ["flooding=maybe"])
