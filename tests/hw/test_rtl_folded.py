"""Folded (partially parallel) min-sum RTL: shape and cycle formula, refusals, bit-exact replay in Icarus Verilog.

Simulation tests need ``iverilog`` (``make rtl-tools``) and skip without it; the slice synthesis
smoke test needs ``yosys`` and is ``slow``.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.hw.rtl import build_graph, design_from_decoder, design_from_vectors, export_rtl, generate, simulate
from qdecode.hw.rtl.folded import fold_shape, folded_flip_flops
from qdecode.hw.vectors import export_vectors, load_vectors
from tests.hw.rtl_cases import H_EDGE, minsum_decoder, needs_iverilog


def test_fold_shape_and_flip_flops():
    g = build_graph(H_EDGE)  # 5 x 6, row degrees up to 4, column degrees up to 3
    sh = fold_shape(g, 2)
    assert (sh["check_slots"], sh["var_slots"], sh["cycles_per_iteration"]) == (3, 3, 6)
    assert (sh["pe_check_degree"], sh["pe_var_degree"], sh["index_bits"], sh["slot_bits"]) == (4, 3, 2, 2)
    assert fold_shape(g, 100)["cycles_per_iteration"] == 2  # P >= max(m, n): one slot per side
    assert fold_shape(g, 1)["cycles_per_iteration"] == 11
    _, cfg = design_from_decoder(minsum_decoder(H_EDGE, max_iter=37))
    # messages 8 * 10, check states 5 * (7 + 7 + 2 + 1), syndrome 5, decisions 6, it 6, slot 2, 5 control
    assert folded_flip_flops(g, cfg, sh) == 80 + 5 * 17 + 5 + 6 + 6 + 2 + 5
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="parallelism"):
            fold_shape(g, bad)


def test_folded_structure_and_determinism():
    H, cfg = design_from_decoder(minsum_decoder(H_EDGE, max_iter=37))
    files = generate(H, cfg, parallelism=2)
    assert {"bp_top.v", "bp_slice.v", "synth_slice_ice40.ys", "synth_slice_xc7.ys", "synth_ice40.ys"} <= set(files)
    v = files["bp_top.v"]
    assert re.findall(r"^module (\w+)", v, re.M) == ["bp_cnu_d4", "bp_vpe_d3", "bp_syndrome_test", "bp_top"]
    assert len(re.findall(r"^\s+bp_cnu_d4 u_cp\d+", v, re.M)) == 2
    assert len(re.findall(r"^\s+bp_vpe_d3 u_vp\d+", v, re.M)) == 2
    assert "input  wire [4:0] syndrome" in v and "output wire [5:0] iterations" in v
    mf = json.loads(files["rtl_manifest.json"])
    assert mf["architecture"] == "folded" and mf["cycles_per_iteration"] == 6 and mf["parallelism"] == 2
    assert "iterations * 6 + 2" in files["README.md"]
    assert re.findall(r"^module (\w+)", files["bp_slice.v"], re.M) == ["bp_cnu_d4", "bp_vpe_d3", "bp_slice",
                                                                    "bp_syndrome_test"]
    assert "stat_slice_ice40.json" in files["synth_slice_ice40.ys"] and "-top bp_slice" in files["synth_slice_xc7.ys"]
    assert generate(H, cfg, parallelism=2) == files
    assert generate(H, cfg)["bp_top.v"] != v  # fully parallel by default
    assert json.loads(generate(H, cfg)["rtl_manifest.json"])["architecture"] == "fully-parallel"


def test_cli_parallelism_refusals(tmp_path, cli_error):
    base = ["export-rtl", "--out", str(tmp_path / "r"), "--code", "surface", "--d", "3", "--noise", "code-capacity",
            "--p", "0.05"]
    assert "--parallelism must be >= 1" in cli_error(base + ["--parallelism", "0"])
    assert "--parallelism must be >= 1" in cli_error(base + ["--fold", "-3"])


@needs_iverilog
@pytest.mark.parametrize("P", [1, 2, 3, 6])
def test_folded_corner_cases(tmp_path, P):
    """Empty row with s = 1, zero syndrome, max_iter = 1 and 7, folds with padding slots and P >= m."""
    for max_iter in (1, 7):
        dec = minsum_decoder(H_EDGE, max_iter=max_iter, p=0.2)
        syn = (np.random.default_rng(5).random((40, 5)) < 0.5).astype(np.uint8)
        syn[0] = 0
        syn[1] = [0, 0, 1, 0, 0]
        vdir = tmp_path / f"v{max_iter}"
        export_vectors(dec.problem, dec, syn, vdir, description={"test": "corners"})
        vs = load_vectors(vdir)
        H, cfg = design_from_vectors(vs)
        mf = export_rtl(H, cfg, tmp_path / f"r{max_iter}", vectors=vs, parallelism=P)
        report = simulate(tmp_path / f"r{max_iter}", vdir)
        assert report.shots == 40 and report.ok, report.summary()
        cpi = mf["cycles_per_iteration"]
        assert cpi == -(-5 // P) + -(-6 // P)
        assert report.total_cycles == int(vs.expected_iters.sum()) * cpi + 2 * 40


# (export-vectors problem, P, expected cycles per iteration)
CASES = [
    (["--code", "surface", "--d", "3"], 3, 3 + 3),  # 8 x 7
    (["--code", "surface", "--d", "5"], 4, 6 + 6),  # 24 x 21
    (["--code", "bb72_12_6"], 12, 3 + 6),  # 36 x 72
]


@needs_iverilog
@pytest.mark.parametrize("prob, P, cpi", CASES, ids=["sc3", "sc5", "bb72"])
def test_folded_bit_exact_via_cli(tmp_path, capsys, prob, P, cpi):
    v = tmp_path / "v"
    assert main(["export-vectors", *prob, "--noise", "code-capacity", "--p", "0.05", "--shots", "200", "--seed", "1",
                 "--out", str(v)]) == 0
    out = tmp_path / "r"
    code = main(["export-rtl", "--vectors", str(v), "--parallelism", str(P), "--simulate", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "200 shots, 200 passed, 0 failed" in text and "cycles 0)" in text
    mf = json.loads((out / "rtl_manifest.json").read_text())
    assert mf["cycles_per_iteration"] == cpi
    vs = load_vectors(v)
    assert vs.expected_iters.max() > 1
    total = int(re.search(r"; (\d+) cycles;", text).group(1))
    assert total == int(vs.expected_iters.sum()) * cpi + 2 * 200  # cycles per iteration measured = formula


@needs_iverilog
def test_folded_mutant_caught(tmp_path):
    """A contract mutation is caught in the folded design too (its control has its own test-at-zero rule)."""
    dec = minsum_decoder(H_EDGE, max_iter=7, p=0.2)
    syn = (np.random.default_rng(5).random((40, 5)) < 0.5).astype(np.uint8)
    syn[:3] = 0  # the priors already satisfy a zero syndrome: the model still runs iteration 1
    export_vectors(dec.problem, dec, syn, tmp_path / "v", description={"test": 1})
    vs = load_vectors(tmp_path / "v")
    H, cfg = design_from_vectors(vs, mutation="test-at-zero")
    export_rtl(H, cfg, tmp_path / "r", vectors=vs, parallelism=2)
    assert simulate(tmp_path / "r", tmp_path / "v").failed > 0


@pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys not installed: make rtl-tools")
def test_slice_synth_smoke(tmp_path):
    from qdecode.hw.rtl import run_synth

    H, cfg = design_from_decoder(minsum_decoder(H_EDGE))
    export_rtl(H, cfg, tmp_path / "r", parallelism=2)
    r = run_synth(tmp_path / "r", "ice40", top="bp_slice", prefix="slice_")
    assert r.resources["luts"] > 0 and r.resources["ffs"] == 0  # the slice is combinational
    full = run_synth(tmp_path / "r", "ice40")
    assert full.resources["ffs"] > 0
