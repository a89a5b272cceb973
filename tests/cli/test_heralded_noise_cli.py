"""`qdecode circuit` and `qdecode sweep` with heralded noise: --erasure-fraction, --leakage, --loss.

A circuit with erasure conversion carries ``DETECTOR[herald]`` and its DEM ``detector[herald]``;
the sweep flags are lists multiplied with the others, recorded as ``F`` / ``leak`` / ``loss`` in the
json_metadata only when non-zero; bad values are one line and exit status 2.
"""

from __future__ import annotations

import pytest
import stim

from qdecode.cli.main import main
from qdecode.sims.heralded_noise import herald_detectors
from qdecode.sims.store import read_rows

SWEEP = ["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.005", "--decoder", "pymatching",
         "--max-shots", "300", "--max-errors", "100000", "--workers", "0", "--quiet", "--seed", "3"]


def test_circuit_with_erasure_conversion(tmp_path, capsys):
    path, dem_path = tmp_path / "c.stim", tmp_path / "c.dem"
    base = ["circuit", "surface", "--d", "3", "--p", "0.001", "--erasure-fraction", "0.5"]
    assert main([*base, "--out", str(path)]) == 0
    circuit = stim.Circuit.from_file(path)
    assert "DETECTOR[herald]" in str(circuit) and "HERALDED_ERASE(0.00025)" in str(circuit)
    assert "DEPOLARIZE2(0.0005)" in str(circuit)
    assert len(herald_detectors(circuit)) == 144  # 24 CX per round x 3 rounds x 2 qubits
    assert main([*base, "--dem", "--out", str(dem_path)]) == 0
    dem = stim.DetectorErrorModel.from_file(dem_path)
    assert "detector[herald]" in str(dem) and herald_detectors(dem) == herald_detectors(circuit)
    assert main(["circuit", "surface", "--d", "3", "--p", "0.001", "--erasure-fraction", "0"]) == 0
    assert "HERALD" not in capsys.readouterr().out  # F = 0: the circuit as before


@pytest.mark.parametrize("flag", ["--leakage", "--loss"])
def test_circuit_with_leakage_or_loss(flag, capsys):
    assert main(["circuit", "surface", "--d", "3", "--p", "0.001", flag, "0.01"]) == 0
    circuit = stim.Circuit(capsys.readouterr().out)
    assert len(herald_detectors(circuit)) == {"--leakage": 8 * 3 + 9 * 3, "--loss": 8 * 3 + 9}[flag]


@pytest.mark.parametrize("flag, value, message", [
    ("--erasure-fraction", "1.5", r"--erasure-fraction must lie in [0, 1], got 1.5"),
    ("--erasure-fraction", "-0.1", r"--erasure-fraction must lie in [0, 1], got -0.1"),
    ("--leakage", "1", r"--leakage must lie in [0, 1), got 1.0"),
    ("--leakage", "-0.01", r"--leakage must lie in [0, 1), got -0.01"),
    ("--loss", "1.0", r"--loss must lie in [0, 1), got 1.0"),
    ("--loss", "nan", r"--loss must lie in [0, 1), got nan"),
])
def test_bad_heralded_values(flag, value, message, capsys, cli_error, tmp_path):
    assert message in cli_error(["circuit", "surface", "--d", "3", "--p", "0.001", flag, value])
    out = ["--out", str(tmp_path / "x.csv")]
    assert message in cli_error([*SWEEP, *out, flag, f"0,{value}"])
    assert not (tmp_path / "x.csv").exists()


def test_heralded_flags_need_a_catalogue_circuit(tmp_path, capsys, cli_error):
    err = cli_error(["circuit", "surface", "--d", "3", "--p", "0.01", "--noise", "phenomenological",
                     "--erasure-fraction", "0.5"])
    assert "noise 'phenomenological'" in err and "DEPOLARIZE2" in err
    circuit = tmp_path / "d=3.stim"
    circuit.write_text(str(stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2,
                                                  after_clifford_depolarization=0.01)))
    err = cli_error(["sweep", "--circuit", str(circuit), "--decoder", "pymatching", "--loss", "0.01",
                     "--out", str(tmp_path / "x.csv")])
    assert "--loss describes a catalogue code" in err
    err = cli_error(["sweep", "--code", "bch63_45", "--noise", "awgn", "--ebn0", "2", "--decoder", "bm",
                     "--leakage", "0.01", "--out", str(tmp_path / "x.csv")])
    assert "--leakage applies to circuits of quantum codes" in err
    err = cli_error(["sweep", "quickstart", "--erasure-fraction", "0.5", "--out", str(tmp_path / "x.csv")])
    assert "--erasure-fraction applies to an inline sweep" in err


def test_sweep_lists_multiply_and_metadata_keys_only_when_non_zero(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main([*SWEEP, "--erasure-fraction", "0,0.5", "--loss", "0,0.01", "--out", str(out)]) == 0
    rows = read_rows(out)
    points = {}
    for r in rows:
        key = (r.json_metadata.get("F"), r.json_metadata.get("loss"), "leak" in r.json_metadata)
        points[key] = points.get(key, 0) + r.shots
    assert points == {(None, None, False): 300, (0.5, None, False): 300, (None, 0.01, False): 300,
                      (0.5, 0.01, False): 300}
    plain = tmp_path / "plain.csv"
    assert main([*SWEEP, "--out", str(plain)]) == 0
    ids = {r.strong_id for r in read_rows(plain)}
    assert ids == {r.strong_id for r in rows if "F" not in r.json_metadata and "loss" not in r.json_metadata}


@pytest.mark.parametrize("dem,match", [
    ("error(0.1) D0 D1\ndetector[herald] D0\ndetector[herald] D1\n", "flips herald detectors D0 and D1"),
    ("error(0.1) D1\ndetector[herald] D0\ndetector D1\n", "D0 is flipped by no error mechanism"),
])
def test_predict_refuses_bad_heralds_in_one_line(tmp_path, capsys, dem, match):
    (tmp_path / "m.dem").write_text(dem)
    (tmp_path / "s.b8").write_bytes(bytes(4))
    code = main(["predict", "--dem", str(tmp_path / "m.dem"), "--dets", str(tmp_path / "s.b8"), "--decoder", "uf",
                 "--obs-out", str(tmp_path / "o.b8")])
    err = capsys.readouterr().err
    assert code == 2 and match in err and err.count("\n") == 1


def test_sweep_records_the_heralds_mode_in_the_decoder_label(tmp_path):
    out = tmp_path / "s.csv"
    i = SWEEP.index("--decoder")
    args = [*SWEEP[:i], *SWEEP[i + 2:], "--erasure-fraction", "0.9", "--decoder", "uf[length_steps=8]",
            "--decoder", "pymatching[heralds=ignore]", "--out", str(out)]
    assert main(args) == 0
    labels = {r.decoder for r in read_rows(out)}
    assert labels == {"uf[growth=weighted,length_steps=8]", "pymatching[heralds=ignore]"}
