"""`qdecode sweep` on the user's own experiments: circuits written by stim's generators (not by
qdecode), DEM files, decoder DEMs, postselection and sinter's optional counts, each checked
against sinter on the same files where sinter has the feature."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sinter
import stim

from qdecode.cli.main import main
from qdecode.sims.stats import fit_binomial
from qdecode.sims.store import merge_rows, read_rows

QUIET = ["--quiet", "--workers", "0"]


def _rep(d: int, p: float) -> stim.Circuit:
    return stim.Circuit.generated("repetition_code:memory", distance=d, rounds=d,
                                  after_clifford_depolarization=p, before_measure_flip_probability=p)


@pytest.fixture()
def rep_dir(tmp_path):
    folder = tmp_path / "circuits"
    folder.mkdir()
    for d in (3, 5):
        for p in (0.02, 0.04):
            _rep(d, p).to_file(folder / f"code=rep,d={d},p={p},r={d}.stim")
    return folder


def _rows(path):
    return list(merge_rows(read_rows(path)).values())




def test_circuit_glob_metadata_from_names_and_sinter_strong_ids(rep_dir, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", "--circuit", str(rep_dir / "*.stim"), "--decoder", "pymatching", "--max-shots", "2000",
                 "--max-errors", "100000", "--metadata", "noise=si", "--out", str(out), *QUIET]) == 0
    rows = _rows(out)
    assert sorted((r.json_metadata["d"], r.json_metadata["p"]) for r in rows) == [
        (3, 0.02), (3, 0.04), (5, 0.02), (5, 0.04)]
    assert all(r.json_metadata["code"] == "rep" and r.json_metadata["noise"] == "si" and r.shots == 2000 for r in rows)
    # sinter's strong_ids for the same files, decoder name and metadata (its --metadata_func auto)
    paths = sorted(rep_dir.glob("*.stim"))
    tasks = [sinter.Task(circuit=stim.Circuit.from_file(p), decoder="pymatching",
                         json_metadata={**sinter.comma_separated_key_values(str(p)), "noise": "si"}) for p in paths]
    theirs = {s.strong_id for s in sinter.collect(num_workers=1, tasks=tasks, max_shots=100, decoders=["pymatching"])}
    assert theirs == {r.strong_id for r in rows}
    # threshold and plot find d and p in the file-name metadata
    capsys.readouterr()
    assert main(["threshold", str(out)]) == 0
    report = capsys.readouterr().out
    assert "d = 3, 5" in report and "Lambda(p=0.02)" in report and "Lambda(p=0.04)" in report
    assert main(["plot", str(out), "--out", str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 0


def test_recipe_circuit_key_relative_to_the_recipe(rep_dir, tmp_path):
    recipe = rep_dir.parent / "r.toml"
    recipe.write_text('out = "r.csv"\nmax_shots = 500\nmax_errors = 100000\n'
                      '[[tasks]]\ncircuit = ["circuits/code=rep,d=3,*.stim"]\ndecoders = ["pymatching"]\n'
                      'count_detection_events = true\n')
    assert main(["sweep", str(recipe), "--out", str(tmp_path / "r.csv"), *QUIET]) == 0
    rows = _rows(tmp_path / "r.csv")
    assert len(rows) == 2 and all(r.json_metadata["d"] == 3 for r in rows)
    m = _rep(3, 0.02).num_detectors
    assert all(r.custom_counts["detectors_checked"] == 500 * m for r in rows)
    assert all(0 < r.custom_counts["detection_events"] < 500 * m for r in rows)


def test_dem_file_sampled_directly_agrees_with_the_circuit(tmp_path):
    circuit = _rep(5, 0.04)
    (tmp_path / "c.stim").write_text(str(circuit))
    (tmp_path / "m.dem").write_text(str(circuit.detector_error_model(decompose_errors=True)))
    for name, flag in (("c", "--circuit"), ("m", "--dem")):
        assert main(["sweep", flag, str(tmp_path / f"{name}.stim" if name == "c" else tmp_path / "m.dem"),
                     "--decoder", "pymatching", "--max-shots", "40000", "--max-errors", "400",
                     "--out", str(tmp_path / f"{name}.csv"), *QUIET]) == 0
    (a,), (b,) = _rows(tmp_path / "c.csv"), _rows(tmp_path / "m.csv")
    fa, fb = fit_binomial(num_shots=a.shots, num_hits=a.errors, max_likelihood_factor=1e3), \
        fit_binomial(num_shots=b.shots, num_hits=b.errors, max_likelihood_factor=1e3)
    assert fa.low <= fb.high and fb.low <= fa.high  # likelihood intervals overlap
    assert a.strong_id != b.strong_id


def test_decoder_dem_decodes_with_another_model(tmp_path, capsys, cli_error):
    truth, other = _rep(3, 0.02), _rep(3, 0.05)
    (tmp_path / "c.stim").write_text(str(truth))
    (tmp_path / "o.dem").write_text(str(other.detector_error_model(decompose_errors=True)))
    (tmp_path / "bad.dem").write_text(str(_rep(5, 0.02).detector_error_model(decompose_errors=True)))
    out = tmp_path / "s.csv"
    assert main(["sweep", "--circuit", str(tmp_path / "c.stim"), "--decoder", "pymatching", "--decoder-dem",
                 str(tmp_path / "o.dem"), "--max-shots", "1000", "--out", str(out), *QUIET]) == 0
    (row,) = _rows(out)
    assert len(row.json_metadata["decoder_dem"]) == 12 and row.shots == 1000
    err = cli_error(["sweep", "--circuit", str(tmp_path / "c.stim"), "--decoder", "pymatching",
                        "--decoder-dem", str(tmp_path / "bad.dem"), "--out", str(out), *QUIET])
    assert "detectors" in err and "decoder DEM" in err


def _with_postselected_first_round(circuit: stim.Circuit) -> stim.Circuit:
    """The circuit with a 4th coordinate 1 on the first round's detectors (sinter's rule marks them)."""
    out = stim.Circuit()
    first = True
    for inst in circuit.flattened():
        if inst.name == "DETECTOR":
            c = list(inst.gate_args_copy()) + [0.0] * 3
            out.append("DETECTOR", inst.targets_copy(), c[:3] + [1.0 if c[1] == 0 and first else 0.0])
        else:
            out.append(inst)
    del first
    return out


def test_postselection_discards_agree_with_sinter(tmp_path):
    circuit = _with_postselected_first_round(_rep(3, 0.03))
    path = tmp_path / "d=3,p=0.03.stim"
    circuit.to_file(path)
    out = tmp_path / "s.csv"
    shots = 40_000
    assert main(["sweep", "--circuit", str(path), "--decoder", "pymatching", "--postselect", "coord4",
                 "--max-shots", str(shots), "--max-errors", "10000000", "--out", str(out), *QUIET]) == 0
    (ours,) = _rows(out)
    mask = sinter.post_selection_mask_from_4th_coord(circuit)
    assert mask.any()
    task = sinter.Task(circuit=circuit, decoder="pymatching", postselection_mask=mask,
                       json_metadata=sinter.comma_separated_key_values(str(path)))
    (theirs,) = sinter.collect(num_workers=1, tasks=[task], max_shots=shots, decoders=["pymatching"])
    assert theirs.strong_id == ours.strong_id
    assert ours.shots == theirs.shots == shots
    for a, b in ((ours.discards, theirs.discards), (ours.errors, theirs.errors)):
        assert a > 50 and b > 50
        assert abs(a - b) < 5 * math.sqrt(a + b)  # both counts agree within binomial noise


def test_postselect_rules_and_bad_rules(tmp_path, capsys, cli_error):
    from qdecode.sims.postselection import Postselection

    dem = stim.DetectorErrorModel("detector(0, 0) D0\ndetector(1, 0) D1\ndetector(2, 1, 0, 3) D2\nerror(0.1) D0 D1 L0")
    assert list(Postselection.parse("coord4").mask(dem)) == [0b100]
    assert list(Postselection.parse("0,2").mask(dem)) == [0b101]
    assert list(Postselection.parse("c0=1:").mask(dem)) == [0b110]
    assert list(Postselection.parse([1]).mask(dem)) == [0b010]
    for bad in ("c0=3:1", "sometimes", "c1=a:b"):
        with pytest.raises(ValueError):
            Postselection.parse(bad)
    (tmp_path / "c.stim").write_text(str(_rep(3, 0.02)))
    err = cli_error(["sweep", "--circuit", str(tmp_path / "c.stim"), "--decoder", "pymatching",
                        "--postselect", "999", "--out", str(tmp_path / "s.csv"), *QUIET])
    assert "out of range" in err


def test_observable_error_combos_like_sinter(tmp_path):
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=2,
                                     after_clifford_depolarization=0.02)
    # two observables: the logical, and a copy of it, so mistakes come as E_/EE patterns
    text = str(circuit) + "\n" + str(circuit).splitlines()[-1].replace("OBSERVABLE_INCLUDE(0)", "OBSERVABLE_INCLUDE(1)")
    path = tmp_path / "two.stim"
    path.write_text(text)
    out = tmp_path / "s.csv"
    assert main(["sweep", "--circuit", str(path), "--decoder", "pymatching", "--count-observable-error-combos",
                 "--max-shots", "4000", "--max-errors", "100000", "--out", str(out), *QUIET]) == 0
    (row,) = _rows(out)
    combos = {k: v for k, v in row.custom_counts.items() if k.startswith("obs_mistake_mask=")}
    assert sum(combos.values()) == row.errors > 0
    assert set(combos) <= {"obs_mistake_mask=EE", "obs_mistake_mask=E_", "obs_mistake_mask=_E"}


def test_decoder_brackets_compose_with_param(tmp_path, capsys, cli_error):
    (tmp_path / "c.stim").write_text(str(_rep(3, 0.02)))
    out = tmp_path / "s.csv"
    assert main(["sweep", "--circuit", str(tmp_path / "c.stim"), "--decoder", "bposd[osd_order=3]",
                 "--decoder", "pymatching", "--decoder", "bp", "--param", "max_iter=7", "--param", "osd_order=5",
                 "--max-shots", "300", "--out", str(out), *QUIET]) == 0
    labels = sorted(r.decoder for r in _rows(out))
    bposd = next(x for x in labels if x.startswith("bposd"))
    assert "osd_order=3" in bposd and "max_iter=7" in bposd  # the bracket wins over --param
    assert "pymatching" in labels  # a --param it lacks is not forced on it
    assert any(x.startswith("bp[") and "max_iter=7" in x for x in labels)
    err = cli_error(["sweep", "--circuit", str(tmp_path / "c.stim"), "--decoder", "pymatching",
                        "--param", "osd_order=5", "--out", str(out), *QUIET])
    assert "osd_order" in err and "none of the decoders" in err


@pytest.mark.parametrize("content,flag,message", [
    ("this is not a circuit\n", "--circuit", "not a valid stim circuit"),
    ("", "--circuit", "no DETECTOR"),
    ("garbage text\n", "--dem", "not a valid detector error model"),
    ("", "--dem", "empty"),
    ("garbage text\n", "--decoder-dem", "not a valid detector error model"),
    ("", "--learned-noise", "empty"),
    (b"\x00\xff\x10binary", "--dem", "binary"),
])
def test_garbage_and_empty_model_files_give_one_line_errors(tmp_path, capsys, content, flag, message, cli_error):
    bad = tmp_path / "bad.file"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    good = tmp_path / "c.stim"
    good.write_text(str(_rep(3, 0.02)))
    argv = ["sweep", "--decoder", "pymatching", "--out", str(tmp_path / "s.csv"), *QUIET]
    argv += [flag, str(bad)] if flag in ("--circuit", "--dem") else ["--circuit", str(good), flag, str(bad)]
    err = cli_error(argv)
    assert message in err and "bad.file" in err


def test_glob_matching_nothing_and_catalogue_flags_are_errors(tmp_path, capsys, cli_error):
    err = cli_error(["sweep", "--circuit", str(tmp_path / "*.stim"), "--decoder", "pymatching", *QUIET])
    assert "no circuit file matches" in err
    (tmp_path / "c.stim").write_text(str(_rep(3, 0.02)))
    err = cli_error(["sweep", "--circuit", str(tmp_path / "c.stim"), "--p", "0.1", "--decoder", "pymatching", *QUIET])
    assert "--p" in err
    err = cli_error(["sweep", "--circuit", str(tmp_path / "bad name,x.stim"), "--decoder", "pymatching", *QUIET])
    assert "no such circuit file" in err
    (tmp_path / "d=3,oops.stim").write_text(str(_rep(3, 0.02)))
    err = cli_error(["sweep", "--circuit", str(tmp_path / "d=3,oops.stim"), "--decoder", "pymatching", *QUIET])
    assert "not key=value" in err


@pytest.mark.parametrize("recipe,message", [
    ('per_round = "no"\n[[tasks]]\ncode = "surface"\nd = 3\nnoise = "sd6"\np = 0.01\ndecoders = ["pymatching"]\n',
     "per_round must be true or false"),
    ('[[tasks]]\ncode = "nosuchcode"\nnoise = "awgn"\nebn0 = 2.0\ndecoders = ["bm"]\n', "unknown code 'nosuchcode'"),
    ('[[tasks]]\ncode = "surface"\nd = 3\nnoise = "sd6"\np = 0.01\ndecoders = "pymatching"\n'
     'count_detection_events = "yes"\n', "count_detection_events must be true or false"),
    ('[[tasks]]\ncode = 5\nnoise = "sd6"\np = 0.01\ndecoders = ["pymatching"]\n', "code must be a code name"),
    ('max_shots = 1.5\n[[tasks]]\ncode = "surface"\nd = 3\nnoise = "sd6"\np = 0.01\ndecoders = ["pymatching"]\n',
     "max_shots must be an integer"),
])
def test_recipe_values_are_type_checked(tmp_path, capsys, recipe, message, cli_error):
    path = tmp_path / "r.toml"
    path.write_text(recipe)
    assert message in cli_error(["sweep", str(path), *QUIET])


def test_missing_recipe_path_is_an_error_and_embedded_only_by_bare_name(tmp_path, capsys, cli_error):
    err = cli_error(["sweep", str(tmp_path / "quickstart.toml"), *QUIET])
    assert "not found" in err and "quickstart.toml" in err
    err = cli_error(["sweep", "quickstart.toml", *QUIET])
    assert "not found" in err
    err = cli_error(["sweep", "nosuchrecipe", *QUIET])
    assert "embedded: " in err and "quickstart" in err
    from qdecode.sims.recipe import load_recipe

    assert load_recipe("quickstart").source == "embedded:quickstart.toml"
    assert np.isfinite(len(load_recipe("polar").tasks))


def test_predict_discards_out_matches_sinter_predict(tmp_path):
    circuit = _with_postselected_first_round(_rep(3, 0.05))
    dem = circuit.detector_error_model(decompose_errors=True)
    (tmp_path / "m.dem").write_text(str(dem))
    dets, _ = circuit.compile_detector_sampler(seed=4).sample(500, separate_observables=True, bit_packed=True)
    stim.write_shot_data_file(data=dets, path=tmp_path / "d.b8", format="b8", num_detectors=dem.num_detectors)
    assert main(["predict", "--dem", str(tmp_path / "m.dem"), "--dets", str(tmp_path / "d.b8"), "--decoder",
                 "pymatching", "--postselect", "coord4", "--discards-out", str(tmp_path / "q_disc.01"),
                 "--obs-out", str(tmp_path / "q_obs.01")]) == 0
    sinter.predict_on_disk(decoder="pymatching", dem_path=tmp_path / "m.dem", dets_path=tmp_path / "d.b8",
                           dets_format="b8", obs_out_path=tmp_path / "s_obs.01", obs_out_format="01",
                           postselect_detectors_with_non_zero_4th_coord=True,
                           discards_out_path=tmp_path / "s_disc.01", discards_out_format="01")
    ours, theirs = (tmp_path / "q_disc.01").read_text(), (tmp_path / "s_disc.01").read_text()
    assert ours == theirs and 0 < ours.count("1") < 500
    assert (tmp_path / "q_obs.01").read_text() == (tmp_path / "s_obs.01").read_text()


def test_predict_postselect_needs_discards_out(tmp_path, capsys, cli_error):
    (tmp_path / "m.dem").write_text(str(_rep(3, 0.05).detector_error_model()))
    (tmp_path / "d.b8").write_bytes(b"")
    err = cli_error(["predict", "--dem", str(tmp_path / "m.dem"), "--dets", str(tmp_path / "d.b8"), "--decoder",
                        "pymatching", "--postselect", "coord4", "--obs-out", str(tmp_path / "o.01")])
    assert "--discards-out" in err
