"""`qdecode sweep / plot / threshold / circuit / codes` end to end, sinter interop, bad input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sinter
import stim

from qdecode.cli.main import main
from qdecode.sims.store import merge_rows, read_rows

SINTER = str(Path(sys.executable).with_name("sinter"))  # sinter's console script in this environment
INLINE = ["sweep", "--code", "surface", "--d", "3,5", "--noise", "sd6", "--p", "0.006,0.01",
          "--decoder", "pymatching", "--max-shots", "4000", "--max-errors", "100000", "--workers", "0", "--quiet"]




def test_inline_sweep_then_plot_threshold_and_sinter_tools(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(INLINE + ["--out", str(out)]) == 0
    rows = read_rows(out)
    assert sum(r.shots for r in rows) == 4 * 4000
    meta = {tuple(sorted(r.json_metadata.items())) for r in rows}
    assert len(meta) == 4 and all(dict(m)["noise"] == "sd6" and dict(m)["r"] == dict(m)["d"] for m in meta)
    png = tmp_path / "f.png"
    assert main(["plot", str(out), "--out", str(png), "--per-round"]) == 0
    assert png.stat().st_size > 10_000
    assert main(["threshold", str(out), "--bootstrap", "20"]) == 0
    assert "crossing d=3/5" in capsys.readouterr().out
    # sinter plot renders our CSV, sinter combine merges ours with one of sinter's.
    sinter_png = tmp_path / "sinter.png"
    subprocess.run(
        [SINTER, "plot", "--in", str(out), "--out", str(sinter_png),
         "--x_func", "m.p", "--group_func", "m.d", "--xaxis", "[log]p"],
        check=True, capture_output=True,
    )
    assert sinter_png.stat().st_size > 10_000
    theirs = tmp_path / "theirs.csv"
    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=0.01)
    sinter.collect(num_workers=1, tasks=[sinter.Task(circuit=c, json_metadata={"d": 3, "p": 0.01})],
                   decoders=["pymatching"], max_shots=1000, save_resume_filepath=str(theirs))
    combined = subprocess.run([SINTER, "combine", str(out), str(theirs)],
                              check=True, capture_output=True, text=True).stdout
    assert len(combined.strip().splitlines()) == 1 + 4 + 1


def test_recipe_rerun_resumes_and_bad_recipe_key(tmp_path, capsys, cli_error):
    recipe = tmp_path / "r.toml"
    out = tmp_path / "r.csv"
    recipe.write_text(
        f'out = "{out}"\nmax_shots = 3000\nmax_errors = 1000000\n'
        '[[tasks]]\ncode = "surface"\nd = [3]\nrounds = "2d"\nnoise = "phenomenological"\np = [0.02]\n'
        'decoders = ["pymatching"]\n'
    )
    assert main(["sweep", str(recipe), "--workers", "0", "--quiet"]) == 0
    assert main(["sweep", str(recipe), "--workers", "0", "--quiet", "--max-shots", "5000"]) == 0
    rows = read_rows(out)
    assert sum(r.shots for r in rows) == 5000 and rows[0].json_metadata["r"] == 6
    bad = tmp_path / "bad.toml"
    bad.write_text(recipe.read_text().replace("max_errors", "max_erors"))
    assert "unknown key 'max_erors'" in cli_error(["sweep", str(bad)])
    bad.write_text(recipe.read_text().replace("noise =", "noize ="))
    err = cli_error(["sweep", str(bad)])
    assert "[[tasks]] #1: unknown key 'noize'" in err
    bad.write_text(recipe.read_text().replace('"pymatching"', '"pymatching[alpha=1]"'))
    assert "has no parameter 'alpha'" in cli_error(["sweep", str(bad)])
    bad.write_text("max_shots = [\n")
    assert "invalid TOML" in cli_error(["sweep", str(bad)])


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--code", "nosuchcode", "--noise", "sd6", "--p", "0.01", "--decoder", "pymatching"], "nosuchcode"),
        (["--code", "surface", "--d", "3", "--noise", "sd6", "--p", "1.5", "--decoder", "pymatching"], "p"),
        (["--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--decoder", "nope"],
         "unknown decoder 'nope'"),
        (["--code", "surface", "--d", "3", "--noise", "loud", "--p", "0.01", "--decoder", "pymatching"], "loud"),
        (["--code", "surface", "--d", "3", "--p", "0.01", "--decoder", "pymatching"], "--noise"),
        (["no_such_recipe.toml"], "no_such_recipe"),
    ],
)
def test_bad_sweep_input_one_line_error(tmp_path, capsys, extra, message, cli_error):
    err = cli_error(["sweep", *extra, "--out", str(tmp_path / "x.csv"), "--workers", "0"])
    assert message in err


def test_circuit_and_codes_commands(tmp_path, capsys):
    path = tmp_path / "c.stim"
    assert main(["circuit", "surface", "--d", "3", "--p", "0.001", "--noise", "si1000", "--out", str(path)]) == 0
    c = stim.Circuit.from_file(path)
    assert c.num_detectors > 0 and c.detector_error_model() is not None
    assert main(["circuit", "bb72_12_6", "--rounds", "2", "--p", "0.001", "--noise", "bb-uniform", "--dem"]) == 0
    assert "error(" in capsys.readouterr().out
    assert main(["codes"]) == 0
    listing = capsys.readouterr().out
    for name in ("surface", "bb72_12_6", "bb90_8_10", "bb108_8_10", "bb144_12_12", "bb288_12_18"):
        assert name in listing


def test_sigkill_mid_sweep_then_resume_loses_nothing_and_double_counts_nothing(tmp_path):
    """A real SIGKILL of a running `qdecode sweep`, then a rerun to completion."""
    out = tmp_path / "kill.csv"
    max_shots = 600_000
    argv = [sys.executable, "-m", "qdecode.cli.main", "sweep", "--code", "surface", "--d", "5", "--noise", "sd6",
            "--p", "0.005", "--decoder", "pymatching", "--max-shots", str(max_shots), "--max-errors", "100000000",
            "--max-batch-size", "2000", "--workers", "2", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if out.exists() and len(out.read_text().splitlines()) > 6:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-write if unlucky
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = read_rows(out)
    shots_before = sum(r.shots for r in before)
    assert 0 < shots_before < max_shots
    lines_before = [ln for ln in out.read_text().splitlines(keepends=True) if ln.endswith("\n")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = read_rows(out)
    assert sum(r.shots for r in rows) == max_shots  # nothing lost, nothing counted twice
    assert out.read_text().startswith("".join(lines_before))  # finished rows untouched


def test_scheduler_address_and_dask_workers_give_pool_statistics(tmp_path):
    """--scheduler ADDRESS (a running cluster) and --dask-workers N match --workers N for a fixed seed."""
    import distributed
    base = ["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.008", "--decoder", "pymatching",
            "--max-shots", "12000", "--max-errors", "100000000", "--max-batch-size", "3000", "--seed", "4", "--quiet"]
    results = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        for name, flags in (("pool", ["--workers", "2"]), ("scheduler", ["--scheduler", cluster.scheduler_address])):
            out = tmp_path / f"{name}.csv"
            assert main(base + flags + ["--out", str(out)]) == 0
            results[name] = sorted((r.strong_id, r.shots, r.errors) for r in read_rows(out))
    out = tmp_path / "local.csv"
    assert main(base + ["--dask-workers", "2", "--out", str(out)]) == 0
    results["dask-workers"] = sorted((r.strong_id, r.shots, r.errors) for r in read_rows(out))
    assert results["pool"] == results["scheduler"] == results["dask-workers"]


def test_bposd_sweep_on_a_bb_code_and_sinter_adapter(tmp_path):
    out = tmp_path / "bb.csv"
    assert main(["sweep", "--code", "bb72_12_6", "--rounds", "2", "--noise", "bb-uniform", "--p", "0.004",
                 "--decoder", "bposd", "--param", "max_iter=30", "--param", "osd_order=4", "--max-shots", "300",
                 "--workers", "2", "--quiet", "--out", str(out)]) == 0
    (row,) = merge_rows(read_rows(out)).values()
    assert row.shots == 300 and row.decoder.startswith("bposd[") and "osd_order=4" in row.decoder
    assert row.custom_counts["iterations"] >= 300  # BP diagnostics reach the CSV
    assert "not_converged" in row.custom_counts


def test_dask_workers_keep_dask_logs_quiet_unless_verbose(tmp_path):
    argv = [sys.executable, "-m", "qdecode.cli.main", "sweep", "--code", "surface", "--d", "3", "--noise", "sd6",
            "--p", "0.01", "--decoder", "pymatching", "--max-shots", "2000", "--dask-workers", "2", "--quiet",
            "--out", str(tmp_path / "s.csv")]  # --quiet: no progress lines (it leaves Dask's log level alone)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    # no Dask INFO log (its warnings, e.g. a port in use by another test's cluster, may appear)
    lines = done.stderr.splitlines()
    assert not [ln for ln in lines if " - INFO - " in ln], done.stderr
    ours = [ln for ln in lines if ln.startswith("qdecode")]
    assert len(ours) == 1 and ours[0].startswith("qdecode sweep: 1 tasks"), done.stderr
