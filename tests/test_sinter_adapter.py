"""The sinter adapter gives the same statistics as sinter's built-in pymatching."""

from __future__ import annotations

import numpy as np
import pytest
import sinter
import stim

import qdecode
from qdecode.decoders import DecoderSpec
from qdecode.sinter_adapter import SinterDecoder
from tests.stats_checks import assert_ratio_at_most


def _circuit():
    return stim.Circuit.generated(
        "surface_code:rotated_memory_x", distance=3, rounds=3,
        after_clifford_depolarization=0.01, before_measure_flip_probability=0.01,
    )


def test_sinter_decoders_lists_every_registered_decoder():
    decs = qdecode.sinter_decoders()
    assert "qd-pymatching" in decs and "qd-pymatching-correlated" in decs
    assert all(isinstance(d, sinter.Decoder) for d in decs.values())


def test_compiled_decoder_matches_builtin_bit_for_bit():
    c = _circuit()
    dem = c.detector_error_model(decompose_errors=True)
    dets, _ = c.compile_detector_sampler(seed=5).sample(3000, separate_observables=True, bit_packed=True)
    ours = SinterDecoder(DecoderSpec.create("pymatching")).compile_decoder_for_dem(dem=dem)
    theirs = sinter.BUILT_IN_DECODERS["pymatching"].compile_decoder_for_dem(dem=dem)
    a = ours.decode_shots_bit_packed(bit_packed_detection_event_data=dets)
    b = theirs.decode_shots_bit_packed(bit_packed_detection_event_data=dets)
    assert a.dtype == np.uint8 and a.shape == (3000, 1)
    np.testing.assert_array_equal(a, b)


def test_sinter_collect_runs_our_decoder():
    task = sinter.Task(circuit=_circuit(), json_metadata={"d": 3})
    (stat,) = sinter.collect(
        num_workers=1, tasks=[task], decoders=["qd-pymatching"], custom_decoders=qdecode.sinter_decoders(),
        max_shots=2000, max_errors=10**6,
    )
    assert stat.shots == 2000 and 0 < stat.errors < 400


# ----------------------------------------------------------------- labelled decoders
def _rep_circuit():
    return stim.Circuit.generated("repetition_code:memory", distance=3, rounds=3, after_clifford_depolarization=0.01)


def test_labelled_decoders_under_the_spelling_and_the_canonical_label(monkeypatch):
    from qdecode.sinter_adapter import ENV_VAR, name_spec, recorded_name, sinter_decoders

    monkeypatch.delenv(ENV_VAR, raising=False)
    decs = sinter_decoders("relay-bp[gamma0=0.1]", ["bposd[osd_order=4]; bp[max_iter=7]"])
    spec = decs["qd-relay-bp[gamma0=0.1]"].spec
    assert spec == DecoderSpec.from_label("relay-bp[gamma0=0.1]")  # a sinter name is a recorded label
    assert dict(spec.params)["bits"] == 0  # what qd-relay-bp[...] meant before bits=8 became the default
    assert decs["qd-" + spec.label()].spec == spec  # resolved on lookup, the same configuration
    # the asked label is listed under the name sweep records for it: a request, today's bits=8
    request = DecoderSpec.parse("relay-bp[gamma0=0.1]")
    assert dict(request.params)["bits"] == 8
    listed = dict.keys(decs)
    assert recorded_name("relay-bp[gamma0=0.1]") == request.label() in listed
    assert decs[request.label()].spec == request and decs["qd-" + request.label()] is decs[request.label()]
    assert dict(decs["qd-bposd[osd_order=4]"].spec.params)["osd_order"] == 4
    assert dict(decs["qd-bp[max_iter=7]"].spec.params)["max_iter"] == 7
    assert decs["qd-bposd"].spec == DecoderSpec.from_label("bposd")  # the meaning qd-bposd always had
    assert dict(decs["qd-bposd"].spec.params)["osd_key"] == "last"
    assert "qd-bm" not in dict.keys(decs) and "bm[order=1]" not in decs  # classical decoders have no DEM to decode
    with pytest.raises(ValueError, match="'bm' is a classical decoder"):  # a qd- name says why it is refused
        "qd-bm" in decs
    for name in listed:  # every name means what a CSV row recorded under it means
        assert decs[name].spec == name_spec(name) == DecoderSpec.from_label(name.removeprefix("qd-")), name


def test_bad_labels_name_the_problem(monkeypatch):
    from qdecode.sinter_adapter import ENV_VAR, sinter_decoders

    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(ValueError, match="has no parameter 'nope'"):
        sinter_decoders("bposd[nope=1]")
    with pytest.raises(ValueError, match="classical decoder"):
        sinter_decoders("bm")
    monkeypatch.setenv(ENV_VAR, "bposd[osd_order=4];relay-bp[gamma0=oops]")
    with pytest.raises(ValueError, match=r"QDECODE_SINTER_DECODERS: bad decoder label 'relay-bp\[gamma0=oops\]'"):
        sinter_decoders()
    monkeypatch.setenv(ENV_VAR, "nosuch[x=1]")
    with pytest.raises(ValueError, match="QDECODE_SINTER_DECODERS.*unknown decoder 'nosuch'"):
        qdecode.sinter_decoders()


def test_env_var_adds_labelled_decoders(monkeypatch):
    from qdecode.sinter_adapter import ENV_VAR

    monkeypatch.setenv(ENV_VAR, " relay-bp[gamma0=0.1] ; ;bposd[osd_order=20]")
    decs = qdecode.sinter_decoders()  # what sinter's command line calls
    assert "qd-relay-bp[gamma0=0.1]" in decs and "qd-bposd[osd_order=20]" in decs
    assert "qd-pymatching" in decs


def test_sinter_collect_with_a_labelled_decoder(monkeypatch):
    from qdecode.sinter_adapter import ENV_VAR, sinter_decoders

    monkeypatch.delenv(ENV_VAR, raising=False)
    task = sinter.Task(circuit=_rep_circuit(), json_metadata={"d": 3})
    (stat,) = sinter.collect(
        num_workers=1, tasks=[task], decoders=["qd-bposd[osd_order=4]"],
        custom_decoders=sinter_decoders("bposd[osd_order=4]"), max_shots=2000, max_errors=10**6,
    )
    assert stat.decoder == "qd-bposd[osd_order=4]" and stat.shots == 2000 and stat.errors < 200


def test_sinter_command_line_with_the_env_var(tmp_path):
    import csv
    import os
    import subprocess
    import sys
    from pathlib import Path

    circuit = tmp_path / "rep.stim"
    circuit.write_text(str(_rep_circuit()))
    out = tmp_path / "out.csv"
    sinter_cli = Path(sys.executable).with_name("sinter")
    cmd = [str(sinter_cli), "collect", "--circuits", str(circuit), "--decoders", "qd-bposd[osd_order=4]",
           "--custom_decoders_module_function", "qdecode:sinter_decoders", "--max_shots", "1000",
           "--processes", "1", "--save_resume_filepath", str(out), "--quiet"]
    env = {**os.environ, "QDECODE_SINTER_DECODERS": "relay-bp[gamma0=0.1];bposd[osd_order=4]"}
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(out.open(newline=""), skipinitialspace=True))  # sinter appends batch by batch
    assert {r["decoder"] for r in rows} == {"qd-bposd[osd_order=4]"}
    assert sum(int(r["shots"]) for r in rows) == 1000
    (stat,) = sinter.read_stats_from_csv_files(out)
    assert stat.decoder == "qd-bposd[osd_order=4]" and stat.shots == 1000
    # a bad label: sinter reports our ValueError naming the variable and the label
    env["QDECODE_SINTER_DECODERS"] = "bposd[osd_order=-1]"
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "QDECODE_SINTER_DECODERS: bad decoder label 'bposd[osd_order=-1]'" in res.stderr


def _sinter_collect(tmp_path, *decoders: str, env_labels: str | None = None):
    """``sinter collect`` (its command line, in a subprocess) on the d = 3 repetition code with
    ``--custom_decoders_module_function qdecode:sinter_decoders``; -> (process, rows by decoder)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from qdecode.sinter_adapter import ENV_VAR

    circuit = tmp_path / "rep.stim"
    circuit.write_text(str(_rep_circuit()))
    out = tmp_path / "out.csv"
    out.unlink(missing_ok=True)
    cmd = [str(Path(sys.executable).with_name("sinter")), "collect", "--circuits", str(circuit), "--decoders",
           *decoders, "--custom_decoders_module_function", "qdecode:sinter_decoders", "--max_shots", "300",
           "--processes", "1", "--save_resume_filepath", str(out), "--quiet"]
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if env_labels is not None:
        env[ENV_VAR] = env_labels
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    stats = {s.decoder: s for s in sinter.read_stats_from_csv_files(out)} if out.exists() else {}
    return res, stats


def test_sinter_command_line_takes_bracketed_names_without_the_env_var(tmp_path):
    """Issue 43: a bracketed name in ``sinter collect --decoders`` needed QDECODE_SINTER_DECODERS."""
    from qdecode.sinter_adapter import default_label

    canonical = default_label("bposd")  # the label qdecode sweep --decoder bposd records
    res, stats = _sinter_collect(tmp_path, "qd-relay-bp[bits=8,stop_after=2]", canonical, "pymatching")
    assert res.returncode == 0, res.stderr
    assert set(stats) == {"qd-relay-bp[bits=8,stop_after=2]", canonical, "pymatching"}
    assert all(s.shots == 300 for s in stats.values())


def test_sinter_command_line_refuses_a_bad_name_in_one_line(tmp_path):
    res, stats = _sinter_collect(tmp_path, "qd-bposd[osd_order=4]", "qd-bposd[nope=1]")
    assert res.returncode != 0 and not stats
    last = res.stderr.strip().splitlines()[-1]
    assert last == ("ValueError: sinter collect --decoders: bad decoder name 'qd-bposd[nope=1]': decoder 'bposd' "
                    "has no parameter 'nope' (known: alpha, beta, bits, dtype, frac_bits, max_iter, osd_key, "
                    "osd_order, schedule, heralds)"), res.stderr


def test_command_line_names_are_read_only_from_sinter_collect():
    from qdecode.sinter_adapter import collect_command_line_names

    argv = ["--circuits", "a.stim", "--decoders", "qd-bp", "--max_shots", "9", "--decoders", "x", "y"]
    assert collect_command_line_names(["/v/bin/sinter", "collect", *argv]) == ["qd-bp", "x", "y"]
    assert collect_command_line_names(["/v/lib/sinter/_command/_main.py", "collect", *argv]) == ["qd-bp", "x", "y"]
    assert collect_command_line_names(["/v/bin/sinter", "collect", "--decoder=qd-bp"]) == ["qd-bp"]  # abbreviated
    assert collect_command_line_names(["/v/bin/sinter", "plot", *argv]) == []
    assert collect_command_line_names(["/v/bin/pytest", "collect", *argv]) == []
    assert collect_command_line_names(["/v/bin/sinter"]) == []


def test_gap_sampler_names_resolve_on_lookup():
    from qdecode.sinter_adapter import SinterGapSampler, sinter_gap_samplers

    samplers = sinter_gap_samplers(env=False)
    assert "qd-gap-relay-bp[bits=8,stop_after=2]" not in dict.keys(samplers)
    sampler = samplers["qd-gap-relay-bp[bits=8,stop_after=2]"]
    assert isinstance(sampler, SinterGapSampler) and dict(sampler.spec.params)["bits"] == 8
    assert "qd-gap-relay-bp[bits=8]" in samplers and samplers.get("qd-relay-bp") is None
    with pytest.raises(ValueError, match="gives no confidence"):
        "qd-gap-mem-bp" in samplers


def test_the_readme_says_what_every_bare_name_means():
    """The README's paragraph on bare ``qd-`` names states exactly :func:`legacy_bare_names`."""
    import re
    from pathlib import Path

    from qdecode.sinter_adapter import legacy_bare_names

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (para,) = re.findall(r"^\*\*Bare `qd-` names keep their old meanings\.\*\*.*?(?=\n\n)", text, re.S | re.M)
    para = " ".join(para.split())
    legacy = legacy_bare_names()
    assert set(re.findall(r"`(qd-[\w-]+)`", para)) - {"qd-"} == set(legacy), para
    for name, changed in legacy.items():
        for key, (old, new) in changed.items():
            assert f"{key}={old}" in para, (name, key)
    assert legacy["qd-bposd"] == {"osd_key": ("last", "sum4")} and legacy["qd-relay-bp"] == {"bits": (0, 8)}


def test_sweep_help_says_what_every_bare_name_means(capsys):
    from qdecode.cli.main import main
    from qdecode.sinter_adapter import legacy_bare_names

    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    start = text.index("--decoder DECODER decoder name")
    decoder_help = text[start:text.index("--param", start)]
    for name, changed in legacy_bare_names().items():
        assert name in decoder_help, name
        for key, (old, _new) in changed.items():
            assert f"{key}={old}" in decoder_help, (name, key)


def test_sinter_collect_on_a_heralded_circuit_uses_the_heralds():
    """A circuit with DETECTOR[herald]: sinter derives the DEM and samples the heralds as detection events; the
    plug-in's uf reads them (per-shot edge lengths) and fails less often than the herald-blind PyMatching."""
    from qdecode.sims.heralded_noise import erasure_convert

    circuit = erasure_convert(stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                                     after_clifford_depolarization=0.03), 0.9)
    task = sinter.Task(circuit=circuit, json_metadata={"d": 3})
    stats = sinter.collect(num_workers=1, tasks=[task], decoders=["qd-uf[length_steps=8]",
                                                                   "qd-pymatching[heralds=ignore]"],
                           custom_decoders=qdecode.sinter_decoders("uf[length_steps=8]", "pymatching[heralds=ignore]"),
                           max_shots=4000, max_errors=10**6, start_batch_size=4000)
    fails = {s.decoder: s.errors for s in stats}
    assert all(s.shots == 4000 for s in stats)
    aware, blind = fails["qd-uf[length_steps=8]"], fails["qd-pymatching[heralds=ignore]"]
    assert_ratio_at_most(aware, 4000, blind, 4000, 0.7, detects=1.0, what="sinter: herald-aware uf against blind")
