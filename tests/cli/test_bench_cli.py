"""`qdecode bench`: table output, CSV rows, one-line errors."""

from __future__ import annotations

import csv

from qdecode.cli.bench import CSV_COLUMNS
from qdecode.cli.main import main

SURFACE = ["--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.005"]




def test_bench_pymatching_csv(tmp_path, capsys):
    path = tmp_path / "bench.csv"
    argv = ["bench", *SURFACE, "--decoder", "pymatching", "--shots", "300", "--seed", "4",
            "--warmup", "5", "--csv", str(path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for word in ("throughput", "shots/s", "us/round", "p50", "p99.9", "max", "logical"):
        assert word in out
    assert main(argv + ["--threads", "1"]) == 0
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == CSV_COLUMNS
        rows = list(reader)
    assert len(rows) == 2
    r = rows[0]
    assert (r["decoder"], r["code"], r["d"], r["rounds"], r["noise"], r["basis"]) == (
        "pymatching", "surface", "3", "3", "sd6", "Z")
    assert float(r["p"]) == 0.005 and int(r["shots"]) == 300 and int(r["seed"]) == 4
    for key in ("shots_per_s", "us_per_shot", "us_per_round", "lat_p50_us", "lat_p99_us", "lat_p999_us",
                "lat_max_us", "lat_p99_us_per_round", "ler"):
        assert float(r[key]) >= 0, key
    assert float(r["lat_p50_us"]) <= float(r["lat_p99_us"]) <= float(r["lat_max_us"])
    assert int(r["errors"]) == round(float(r["ler"]) * 300)
    assert r["iter_mean"] == "" and r["convergence_rate"] == "" and r["extra_stats"] == ""
    assert r["cpu"] and int(r["threads"]) >= 1 and r["qdecode_version"]
    assert int(rows[1]["threads"]) == 1
    assert rows[0]["errors"] == rows[1]["errors"]  # same seed, same shots, deterministic decoder


def test_bench_bp_registry(tmp_path, capsys):
    path = tmp_path / "bench.csv"
    assert main(["bench", *SURFACE, "--decoder", "bp", "--param", "bits=8", "--param", "max_iter=30",
                 "--shots", "200", "--latency-shots", "50", "--warmup", "3", "--csv", str(path)]) == 0
    out = capsys.readouterr().out
    assert "iterations" in out and "converged" in out
    r = next(csv.DictReader(open(path, newline="")))
    assert r["decoder"].startswith("bp[") and int(r["latency_shots"]) == 50
    assert 1 <= float(r["iter_mean"]) <= float(r["iter_max"]) <= 30
    assert 0 < float(r["convergence_rate"]) <= 1


def test_bench_relay_reports_legs(tmp_path, capsys):
    import json

    path = tmp_path / "relay.csv"
    argv = ["bench", *SURFACE, "--decoder", "relay-bp", "--param", "legs=20", "--shots", "200",
            "--latency-shots", "40", "--warmup", "3", "--csv", str(path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    legs_line = next(line for line in out.splitlines() if line.startswith("legs"))
    assert "p99" in legs_line and "max" in legs_line
    r = next(csv.DictReader(open(path, newline="")))
    stats = json.loads(r["extra_stats"])
    assert set(stats) == {"legs", "weight"}
    assert 0 <= stats["legs"]["p50"] <= stats["legs"]["p99"] <= stats["legs"]["max"] <= 20
    assert stats["weight"]["mean"] >= 0


def test_bench_dem_file(tmp_path, capsys):
    import stim

    c = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=2,
                               after_clifford_depolarization=0.01)
    (tmp_path / "m.dem").write_text(str(c.detector_error_model(decompose_errors=True)))
    path = tmp_path / "b.csv"
    assert main(["bench", "--dem", str(tmp_path / "m.dem"), "--rounds", "2", "--decoder", "pymatching",
                 "--shots", "100", "--warmup", "2", "--csv", str(path)]) == 0
    r = next(csv.DictReader(open(path, newline="")))
    assert r["code"] == "m.dem" and r["rounds"] == "2" and r["d"] == "" and float(r["us_per_round"]) > 0


def test_bench_errors(tmp_path, capsys, cli_error):
    assert "unknown decoder 'nope'" in cli_error(["bench", *SURFACE, "--decoder", "nope"])
    assert "--shots must be >= 1" in cli_error(["bench", *SURFACE, "--decoder", "pymatching", "--shots", "0"])
    assert "exactly one of" in cli_error(["bench", "--decoder", "pymatching"])
    assert "exactly one of" in cli_error(["bench", *SURFACE, "--dem", "x.dem", "--decoder", "pymatching"])
    assert "--noise" in cli_error(["bench", "--code", "surface", "--d", "3", "--p", "0.01", "--decoder", "pymatching"])
    assert "--threads" in cli_error(["bench", *SURFACE, "--decoder", "pymatching", "--threads", "0"])
    assert "no parameter" in cli_error(["bench", *SURFACE, "--decoder", "pymatching", "--param", "x=1"])
    assert "x.dem" in cli_error(["bench", "--dem", str(tmp_path / "x.dem"), "--decoder", "pymatching"])
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n")
    assert "header" in cli_error(["bench", *SURFACE, "--decoder", "pymatching", "--shots", "10",
                                     "--csv", str(bad)])


def test_threads_restored(capsys):
    import numba

    before = numba.get_num_threads()
    assert main(["bench", *SURFACE, "--decoder", "pymatching", "--shots", "20", "--warmup", "1", "--threads", "1"]) == 0
    assert "1 numba thread(s)" in capsys.readouterr().out
    assert numba.get_num_threads() == before


def test_bench_window_reports_per_window_latency(tmp_path, capsys):
    path = tmp_path / "w.csv"
    assert main(["bench", *SURFACE, "--decoder", "window", "--param", "inner=bposd", "--param", "W=2",
                 "--param", "F=1", "--shots", "60", "--latency-shots", "20", "--warmup", "2", "--csv", str(path)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("per window"))
    assert "(3 windows per shot)" in line  # d=3: 4 detector rounds, W=2, F=1 -> windows at rounds 0, 1, 2
    r = next(csv.DictReader(open(path, newline="")))
    assert 0 <= float(r["win_p50_us"]) <= float(r["win_p99_us"]) <= float(r["win_max_us"])


def test_bench_and_tune_take_a_circuit_file(tmp_path, capsys, cli_error):
    import stim

    c = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=2,
                               after_clifford_depolarization=0.01)
    (tmp_path / "c.stim").write_text(str(c))
    path = tmp_path / "b.csv"
    assert main(["bench", "--circuit", str(tmp_path / "c.stim"), "--rounds", "2", "--decoder", "pymatching",
                 "--shots", "100", "--warmup", "2", "--csv", str(path)]) == 0
    r = next(csv.DictReader(open(path, newline="")))
    assert r["code"] == "c.stim" and r["rounds"] == "2"
    assert main(["tune", "relay-bp", "--circuit", str(tmp_path / "c.stim"), "--shots", "100", "--gamma0-grid",
                 "0.1", "--lo-grid", "-0.2", "--hi-grid", "0.6", "--legs", "4", "--quiet"]) == 0
    assert "exactly one of --code, --circuit or --dem" in cli_error(
        ["bench", "--circuit", "c.stim", "--dem", "x.dem", "--decoder", "pymatching"])
    assert "--p applies to" in cli_error(["bench", "--circuit", str(tmp_path / "c.stim"), "--p", "0.1",
                                          "--decoder", "pymatching"])
