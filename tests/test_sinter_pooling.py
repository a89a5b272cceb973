"""One decoder, one name: ``qdecode sweep`` and ``sinter collect`` (through the plug-in) pool.

Two ways, both documented in ``qdecode/sinter_adapter.py``: the sinter name on both sides
(``qd-bposd[osd_order=4]``, recorded verbatim by both), or the canonical label on both sides.
"""

from __future__ import annotations

import numpy as np
import pytest
import sinter
import stim

import qdecode
from qdecode.cli.main import main
from qdecode.decoders.registry import DecoderSpec, UnknownDecoderError
from qdecode.sims.recipe import compose_decoders
from qdecode.sims.store import merge_rows, read_rows
from qdecode.sinter_adapter import sinter_decoders

QUIET = ["--quiet", "--workers", "1"]


@pytest.fixture()
def circuit_file(tmp_path):
    circuit = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                     after_clifford_depolarization=0.01)
    path = tmp_path / "d=3,p=0.01.stim"
    path.write_text(str(circuit))
    return path


def _sinter_rows(path, name: str, labels: list[str], shots: int):
    task = sinter.Task(circuit=stim.Circuit.from_file(path), json_metadata=sinter.comma_separated_key_values(str(path)))
    return sinter.collect(num_workers=1, tasks=[task], decoders=[name], max_shots=shots,
                          custom_decoders=sinter_decoders(*labels, env=False))


def _sweep(path, decoder: str, out) -> list:
    assert main(["sweep", "--circuit", str(path), "--decoder", decoder, "--max-shots", "300",
                 "--max-errors", "100000", "--out", str(out), *QUIET]) == 0
    return list(merge_rows(read_rows(out)).values())


@pytest.mark.parametrize("name", ["qd-bposd[osd_order=4]", "qd-relay-bp"])
def test_a_sinter_name_is_recorded_verbatim_and_pools(circuit_file, tmp_path, name):
    (ours,) = _sweep(circuit_file, name, tmp_path / "q.csv")
    assert ours.decoder == name
    # the plug-in accepts the label with or without its prefix
    (theirs,) = _sinter_rows(circuit_file, name, [name.removeprefix("qd-")], shots=200)
    assert theirs.decoder == name and theirs.strong_id == ours.strong_id
    # resuming the qdecode CSV with sinter's rows appended pools them into one row
    with open(tmp_path / "q.csv", "a") as f:
        print(theirs.to_csv_line(), file=f)
    (pooled,) = merge_rows(read_rows(tmp_path / "q.csv")).values()
    assert pooled.shots == ours.shots + theirs.shots


@pytest.mark.parametrize("asked", [[], ["bposd[osd_order=4]"]], ids=["resolved-on-lookup", "asked-as-sweep-does"])
def test_the_canonical_label_pools(circuit_file, tmp_path, asked):
    """Issue 43: the plug-in asked for ``bposd[osd_order=4]`` offered its label without ``osd_key``."""
    (ours,) = _sweep(circuit_file, "bposd[osd_order=4]", tmp_path / "q.csv")
    canonical = DecoderSpec.parse("bposd[osd_order=4]").label()
    assert ours.decoder == canonical and "osd_key=sum4" in canonical  # a request spells out changed defaults
    (theirs,) = _sinter_rows(circuit_file, canonical, asked, shots=200)
    assert theirs.strong_id == ours.strong_id


def test_sinter_name_and_request_differ_where_defaults_changed():
    """``qd-bposd`` was recorded before ``osd_key`` became ``sum4``: it keeps meaning ``last``."""
    old, new = DecoderSpec.parse("qd-bposd"), DecoderSpec.parse("bposd")
    assert dict(old.params)["osd_key"] == "last" and dict(new.params)["osd_key"] == "sum4"
    assert old.record_label == "qd-bposd" and new.record_label == new.label()
    assert DecoderSpec.parse("qd-bposd[osd_key=sum4]") == new  # same configuration, its own recorded name


def _repetition() -> stim.Circuit:
    return stim.Circuit.generated("repetition_code:memory", distance=5, rounds=2, before_measure_flip_probability=0.05)


def test_brackets_and_prefixes_everywhere():
    circuit = _repetition()
    dem = circuit.detector_error_model()
    a = qdecode.decoder("bposd[osd_order=1]", dem)
    b = qdecode.decoder("bposd", dem, osd_order=1)
    dets = circuit.compile_detector_sampler(seed=1).sample(200)
    np.testing.assert_array_equal(a.predict_observables_batch(dets), b.predict_observables_batch(dets))
    with pytest.raises(UnknownDecoderError, match="given twice"):
        qdecode.decoder("bposd[osd_order=1]", dem, osd_order=3)
    with pytest.raises(UnknownDecoderError, match="sinter name"):
        compose_decoders(["qd-bposd"], ["osd_order=4"])
    with pytest.raises(UnknownDecoderError, match="sinter plug-in's name of 'bposd'"):
        DecoderSpec.create("qd-bposd")
    assert "qd-bposd[osd_order=4]" in sinter_decoders("qd-bposd[osd_order=4]", env=False)


def test_predict_takes_a_bracket_label_and_a_sinter_name(tmp_path):
    circuit = _repetition()
    (tmp_path / "m.dem").write_text(str(circuit.detector_error_model()))
    dets = circuit.compile_detector_sampler(seed=2).sample(100)
    stim.write_shot_data_file(data=dets, path=str(tmp_path / "d.01"), format="01", num_detectors=circuit.num_detectors)
    outs = []
    for i, name in enumerate(["bposd[osd_order=1]", "qd-bposd[osd_order=1,osd_key=sum4]"]):
        out = tmp_path / f"o{i}.01"
        assert main(["predict", "--dem", str(tmp_path / "m.dem"), "--dets", str(tmp_path / "d.01"),
                     "--dets-format", "01", "--decoder", name, "--obs-out", str(out)]) == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]
