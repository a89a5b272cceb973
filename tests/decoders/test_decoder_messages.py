"""One-line messages for misused decoder entry points (issue 43): ``qdecode.decoder``'s first argument,
a classical decoder given a syndrome problem, empty entries in a label."""

from __future__ import annotations

import numpy as np
import pytest
import stim

import qdecode
from qdecode.decoders.params import UnknownDecoderError
from qdecode.decoders.registry import DecoderSpec, decoder, split_label
from qdecode.problem import DecodingProblem


@pytest.fixture(scope="module")
def dem():
    return stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                  after_clifford_depolarization=0.002).detector_error_model()


@pytest.mark.parametrize("name, got", [(None, "None"), (5, "int"), (b"bposd", "bytes"), (["bposd"], "list")])
def test_decoder_name_of_the_wrong_type_says_what_it_takes(dem, name, got):
    with pytest.raises(TypeError) as info:
        qdecode.decoder(name, dem)
    msg = str(info.value)
    assert msg == ("decoder() takes a decoder name or label string ('bposd', 'bposd[osd_order=4]') or a "
                   f"DecoderSpec as its first argument, got {got}")


def test_decoder_takes_a_spec(dem):
    spec = DecoderSpec.create("bposd", {"osd_order": 3})
    dec = decoder(spec, dem)
    assert dec.params["osd_order"] == 3
    syndromes = np.zeros((2, dem.num_detectors), np.uint8)
    assert np.array_equal(dec.predict_observables_batch(syndromes), decoder("bposd[osd_order=3]", dem)
                          .predict_observables_batch(syndromes))
    with pytest.raises(TypeError, match=r"decoder\(spec, \.\.\.\) takes no parameters \(got osd_order\)"):
        decoder(spec, dem, osd_order=4)


@pytest.mark.parametrize("name, hint", [
    ("osd", "did you mean bposd or bposd-e?"),
    ("sem-osd", "did you mean bposd or bposd-e?"),
    ("bm", "use a syndrome decoder (pymatching, bposd, relay-bp, ...; decoder_names() lists them all)"),
    ("sc", "use a syndrome decoder"),  # not 'class-escalate', whose name merely contains "sc"
])
def test_classical_decoder_on_a_syndrome_problem_names_the_syndrome_decoders(dem, name, hint):
    for target, got in ((dem, "DetectorErrorModel"), (DecodingProblem.from_dem(dem), "DecodingProblem")):
        with pytest.raises(TypeError) as info:
            qdecode.decoder(name, target)
        msg = str(info.value)
        assert msg.startswith(f"decoder {name!r} is a classical decoder: it decodes a classical code's words"), msg
        assert f"not the syndromes of a {got}; for syndrome decoding, {hint}" in msg
        assert "generator matrix (G or G_bin)" not in msg and "\n" not in msg


def test_classical_decoder_still_takes_its_code():
    from qdecode.codes.catalog import get_code

    assert type(qdecode.decoder("osd", get_code("bch63_45"), order=1)).__name__ == "OsdBlockDecoder"


@pytest.mark.parametrize("label, message", [
    ("bposd[osd_order=4,]", "an empty parameter (a stray comma?)"),
    ("bposd[,osd_order=4]", "an empty parameter (a stray comma?)"),
    ("bposd[osd_order=4,,max_iter=9]", "an empty parameter (a stray comma?)"),
    ("bposd[ , ]", "an empty parameter (a stray comma?)"),
    ("bposd[]", "empty brackets; write 'bposd' for its defaults"),
    ("bposd[  ]", "empty brackets"),
    ("bposd[=4]", "parameter '=4' has no name before '='"),
])
def test_empty_label_entries_are_refused(dem, label, message):
    for parse in (split_label, DecoderSpec.parse, DecoderSpec.from_label, lambda t: decoder(t, dem)):
        with pytest.raises(UnknownDecoderError, match=message.replace("(", r"\(").replace(")", r"\)").replace(
                "?", r"\?").replace("[", r"\[")):
            parse(label)
    with pytest.raises(UnknownDecoderError, match="stray comma"):
        DecoderSpec.parse("qd-" + label if "," in label else "qd-bposd[osd_order=4,]")


def test_well_formed_labels_still_parse():
    assert split_label("bposd") == ("bposd", {})
    assert split_label(" bposd[ osd_order=4 , max_iter=9 ] ") == ("bposd", {"osd_order": "4", "max_iter": "9"})
    for name in qdecode.decoders.decoder_names():
        spec = DecoderSpec.create(name)
        assert DecoderSpec.from_label(spec.label()) == spec

