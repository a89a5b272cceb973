"""``qdecode stream``: a small real run end to end, its JSON and CSV outputs, and one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import stim

from qdecode.cli.main import main

SMALL = ["stream", "--code", "surface", "--d", "3", "--rounds", "50", "--noise", "sd6", "--p", "0.004",
         "--shots", "60", "--seed", "11", "--quiet"]


def _json(capsys, argv):
    capsys.readouterr()
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_small_run_end_to_end(capsys, tmp_path):
    out = tmp_path / "windows.csv"
    r = _json(capsys, SMALL + ["--decoder", "uf", "--out", str(out)])
    assert (r["window"], r["commit"], r["shots"], r["rounds"]) == (6, 3, 60, 50)  # W = 2d, C = d
    assert r["decoder"].startswith("uf") and r["tiled_windows"] > 0 and r["distinct_windows"] <= 5
    assert r["windows_per_shot"] == 1 + -(-(51 - 6) // 3)  # 51 time layers (50 rounds + the data readout)
    # the answers are the library's on the same plan and shots (a fixed seed)
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims import streaming as st
    from qdecode.sims.circuits import build_circuit

    circuit = build_circuit("surface", d=3, rounds=50, noise="sd6", p=0.004)
    plan = st.plan_stream(DecodingProblem.from_dem(decoding_dem(circuit)), "uf", 6, 3)
    again = st.run_stream(plan, circuit, 60, 11, rounds=50)
    assert r["errors"] == again.errors and 0 < again.errors < 60
    assert r["ler_per_shot"] == pytest.approx(list(again.logical_error_rates()["per_shot"]))
    assert r["sustained_period_us"] > 0 and 0 < r["overhead"] < 10
    rx = r["reaction"]
    assert rx["period_us"] == 1.0 and 0 < rx["p50_us"] <= rx["p99_us"] <= rx["max_us"]
    assert len(r["reaction_near_sustained"]) == len(st.PERIOD_FACTORS)
    table = np.loadtxt(out, delimiter=",", skiprows=1, dtype=np.int64)
    assert out.read_text().splitlines()[0] == "shot,window,need_round,decoded,service_ns,inner_ns"
    assert table.shape == (60 * r["windows_per_shot"], 6)
    service, inner = table[:, 4], table[:, 5]
    assert np.all(service >= inner) and np.all(inner[table[:, 3] == 0] == 0)
    assert service.sum() / (60 * 51) / 1e3 == pytest.approx(r["sustained_period_us"])


def test_text_report(capsys):
    capsys.readouterr()
    assert main(SMALL + ["--decoder", "pymatching", "--round-us", "5", "--window", "4", "--commit", "2"]) == 0
    text = capsys.readouterr().out
    assert "windows W=4 C=2; inner pymatching" in text
    assert "sustained round period" in text and "reaction at 5 us per round: p50" in text
    assert "harness / inner = " in text and "logical error rate per shot" in text


def test_a_circuit_file(capsys, tmp_path):
    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=12,
                               after_clifford_depolarization=0.003)
    path = tmp_path / "c.stim"
    path.write_text(str(c))
    r = _json(capsys, ["stream", "--circuit", str(path), "--shots", "20", "--quiet"])
    assert (r["window"], r["commit"], r["tiled_windows"]) == (3, 1, 0) and r["rounds"] == 12


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("extra, message", [
    (["--decoder", "no-such-decoder"], "no-such-decoder"),
    (["--decoder", "window"], "cannot run inside a window"),
    (["--window", "2", "--commit", "3"], "--commit must not exceed --window"),
    (["--round-us", "0"], "--round-us must be > 0"),
    (["--round-us", "-2"], "--round-us must be > 0"),
    (["--shots", "0"], "--shots must be >= 1"),
    (["--repeats", "0"], "--repeats must be >= 1"),
])
def test_bad_input_is_one_line(cli_error, extra, message):
    assert message in cli_error(SMALL + extra)


def test_bad_experiment_is_one_line(cli_error, tmp_path):
    assert "exactly one of --code and --circuit" in cli_error(["stream", "--quiet"])
    assert "needs --noise, --p and --rounds" in cli_error(["stream", "--code", "surface", "--d", "3", "--quiet"])
    c = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=6, after_clifford_depolarization=0.01)
    stripped = "\n".join("DETECTOR " + line.split(")", 1)[1] if line.strip().startswith("DETECTOR(") else line
                         for line in str(c.flattened()).splitlines())
    path = tmp_path / "no_time.stim"
    path.write_text(stripped)
    assert "time coordinates" in cli_error(["stream", "--circuit", str(path), "--quiet"])
