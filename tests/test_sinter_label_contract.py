"""The label contract, over every registered decoder: ``qdecode sweep`` records a label, and
``sinter collect`` given that label (through the plug-in) records the same string, under the same
strong_id, and resumes the sweep's CSV into one row per task (issue 43).

Every quantum decoder the registry has is swept at its defaults (``--decoder <name>``, whose
recorded label spells today's defaults out), plus a bracketed request whose label carries a
label-versioned parameter (``bposd[osd_order=4]`` -> ``...,osd_key=sum4,...``) and a sinter name
recorded verbatim. None is skipped: the two decoders that need structure get a circuit they
decode (Chromobius a colour code, the shipped ``nn-pymatching`` model the d = 5 rotated surface
code; as in ``tests/decoders/decoder_problems.py``). ``auto`` is not a decoder sinter can run: a
sweep records the concrete decoder it chose.
"""

from __future__ import annotations

import shutil

import pytest
import sinter
import stim

from qdecode.cli.main import main
from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.sims.store import merge_rows, read_rows
from qdecode.sinter_adapter import ENV_VAR, name_spec, recorded_name, sinter_decoders

SWEEP_SHOTS = 64
SINTER_SHOTS = 32  # more shots sinter adds to each of the sweep's rows
EXTRA = ["bposd[osd_order=4]", "relay-bp[gamma0=0.1,stop_after=2]", "qd-relay-bp[legs=20]"]
#: Decoder -> the circuit it decodes (the others take the d = 3 surface code).
CIRCUIT_OF = {"chromobius": "color", "nn-pymatching": "surface5"}


def quantum_decoders() -> list[str]:
    return [n for n in decoder_names() if get_entry(n).kind == "quantum" and n != "auto"]


def _circuit(kind: str) -> stim.Circuit:
    if kind == "color":
        from qdecode.sims.color_circuit import color_memory_circuit

        return color_memory_circuit(3, rounds=3, noise="sd6", p=0.002)
    d = 5 if kind == "surface5" else 3
    return stim.Circuit.generated("surface_code:rotated_memory_z", distance=d, rounds=d,
                                  after_clifford_depolarization=0.004, before_measure_flip_probability=0.004)


def test_the_plugin_lists_the_label_sweep_records_for_every_decoder(monkeypatch):
    """Without running: every label asked of the plug-in is listed under the name ``sweep`` records
    for it (the canonical label with every label-versioned parameter), meaning that configuration."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    asked = [*quantum_decoders(), *EXTRA]
    decs = sinter_decoders(*asked, env=False)
    for text in asked:
        spec = DecoderSpec.parse(text)  # what qdecode sweep --decoder <text> runs
        name = recorded_name(text)
        assert name == spec.record_label
        if name in sinter.BUILT_IN_DECODERS:  # pymatching: sinter's own decoder of that name
            assert name not in decs
            continue
        assert name in dict.keys(decs), name
        assert decs[name].spec == spec, name
    # the example: the label sweep writes for bposd[osd_order=4] spells osd_key=sum4
    assert "osd_key=sum4" in recorded_name("bposd[osd_order=4]")
    assert recorded_name("bposd[osd_order=4]") in dict.keys(sinter_decoders("bposd[osd_order=4]", env=False))


@pytest.mark.timeout(600)
def test_sweep_then_sinter_collect_with_the_recorded_label_gives_one_strong_id(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    groups: dict[str, list[str]] = {}
    for name in quantum_decoders():
        groups.setdefault(CIRCUIT_OF.get(name, "surface3"), []).append(name)
    groups["surface3"] += EXTRA
    csv = tmp_path / "sweep.csv"
    paths = {}
    for kind, names in groups.items():
        path = tmp_path / f"code={kind},d=3.stim"
        _circuit(kind).to_file(path)
        paths[kind] = path
        args = ["sweep", "--circuit", str(path), "--max-shots", str(SWEEP_SHOTS), "--max-errors", "100000",
                "--out", str(csv), "--quiet", "--workers", "0"]
        for name in names:
            args += ["--decoder", name]
        assert main(args) == 0
    swept = {(row.decoder, row.json_metadata["code"]): row for row in merge_rows(read_rows(csv)).values()}
    assert len(swept) == sum(len(names) for names in groups.values())
    for kind, names in groups.items():  # the sweep recorded what recorded_name says
        assert {d for d, k in swept if k == kind} == {recorded_name(n) for n in names}

    # sinter, given each recorded label and the plug-in with no argument, resumes the sweep's CSV
    resumed = tmp_path / "sinter.csv"
    shutil.copy(csv, resumed)
    tasks = [sinter.Task(circuit=stim.Circuit.from_file(paths[kind]), decoder=label,
                         json_metadata=sinter.comma_separated_key_values(str(paths[kind])))
             for label, kind in swept]
    decs = sinter_decoders(env=False)
    for label, _ in swept:  # each is ours (resolved on lookup), or sinter's own pymatching
        assert label in decs or label in sinter.BUILT_IN_DECODERS, label
        assert label in sinter.BUILT_IN_DECODERS or decs[label].spec == name_spec(label)
    stats = sinter.collect(num_workers=1, tasks=tasks, max_shots=SWEEP_SHOTS + SINTER_SHOTS, max_errors=10**6,
                           custom_decoders=decs, save_resume_filepath=resumed, max_batch_size=SINTER_SHOTS)
    by_key = {(s.decoder, s.json_metadata["code"]): s for s in stats}
    assert by_key.keys() == swept.keys()
    for key, row in swept.items():
        assert by_key[key].strong_id == row.strong_id, key
        assert by_key[key].shots == SWEEP_SHOTS + SINTER_SHOTS, key  # the sweep's shots were resumed
    # sinter's CSV: the sweep's rows and sinter's new ones, one strong_id per task
    pooled = merge_rows(read_rows(resumed))
    assert {row.strong_id for row in pooled.values()} == {row.strong_id for row in swept.values()}
    assert all(row.shots == SWEEP_SHOTS + SINTER_SHOTS for row in pooled.values())
