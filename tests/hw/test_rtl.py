"""Generated min-sum RTL: generator structure and refusals, CLI, bit-exact replay in Icarus Verilog, mutants.

Simulation tests need ``iverilog`` (``make rtl-tools``) and skip without it; synthesis smoke
tests need ``yosys`` / ``nextpnr-ice40`` and are ``slow``.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.hw.rtl import (
    MUTATIONS,
    RtlConfig,
    build_graph,
    config_from_decoder,
    design_from_decoder,
    design_from_vectors,
    export_rtl,
    generate,
    simulate,
)
from qdecode.hw.rtl.arith import csd_terms, eval_terms, index_width, scale_reference, sum_width
from qdecode.hw.vectors import export_vectors, load_vectors
from tests.hw.rtl_cases import H_EDGE, minsum_decoder, needs_iverilog


# ---------------------------------------------------------------- arithmetic
def test_csd_scaler_equals_truncated_product():
    for num in range(257):
        terms = csd_terms(num)
        assert sum(s << k for s, k in terms) == num
        assert all(abs(a[1] - b[1]) >= 2 for a, b in zip(terms, terms[1:]))  # canonical: no adjacent digits
        for x in range(128):
            assert eval_terms(x, terms) == scale_reference(x, num), (num, x)


def test_widths():
    assert [index_width(d) for d in (1, 2, 3, 4, 5, 8, 9)] == [1, 1, 2, 2, 3, 3, 4]
    assert sum_width(2, 127) == 10  # |S| <= 381 -> 10-bit signed
    assert sum_width(6, 127) == 11  # 889
    base = dict(bits=8, frac_bits=3, alpha=0.625, alpha_num=160, beta_q=0, priors=(1,))
    assert RtlConfig(max_iter=63, **base).iter_bits == 6 and RtlConfig(max_iter=64, **base).iter_bits == 7
    assert RtlConfig(max_iter=1, **base).iter_bits == 1


# ------------------------------------------------------------ configuration
def test_config_from_decoder_and_refusals():
    cfg = config_from_decoder(minsum_decoder(H_EDGE))
    assert (cfg.bits, cfg.alpha_num, cfg.msg_lim, cfg.post_lim, cfg.max_iter) == (8, 160, 127, 511, 20)
    with pytest.raises(ValueError, match="flooding"):
        config_from_decoder(minsum_decoder(H_EDGE, schedule="layered"))
    with pytest.raises(ValueError, match="adaptive"):
        config_from_decoder(minsum_decoder(H_EDGE, alpha=0.0))
    with pytest.raises(ValueError, match="fixed-point"):
        config_from_decoder(minsum_decoder(H_EDGE, bits=0))
    with pytest.raises(ValueError, match="BpDecoder"):
        config_from_decoder(object())
    base = dict(bits=8, frac_bits=3, alpha=0.625, alpha_num=160, beta_q=0, max_iter=10, priors=(5, -3))
    with pytest.raises(ValueError, match="msg_lim"):
        RtlConfig(**{**base, "priors": (128,)})
    with pytest.raises(ValueError, match="alpha_num"):
        RtlConfig(**{**base, "alpha_num": 300})
    with pytest.raises(ValueError, match="mutation"):
        RtlConfig(**base, mutation="nope")
    with pytest.raises(ValueError, match="max_iter"):
        RtlConfig(**{**base, "max_iter": 0})
    with pytest.raises(ValueError, match="priors"):
        generate(H_EDGE, RtlConfig(**base))  # 2 priors for 6 columns


# ---------------------------------------------------------------- structure
def test_graph_positions():
    g = build_graph(H_EDGE)
    assert (g.m, g.n, g.edges) == (5, 6, 10)
    assert g.check_degrees() == [1, 2, 3, 4] and g.var_degrees() == [1, 2, 3]
    assert g.rows[2] == () and g.cols[5] == ()
    # variable 3 sits at position 2 of row 1, 0 of row 3, 2 of row 4
    assert [(i, k) for _, i, k in g.cols[3]] == [(1, 2), (3, 0), (4, 2)]


def test_generated_structure_and_determinism():
    H, cfg = design_from_decoder(minsum_decoder(H_EDGE, max_iter=37))
    files = generate(H, cfg)
    assert set(files) == {"bp_top.v", "rtl_manifest.json", "README.md", "synth_ice40.ys", "synth_xc7.ys",
                          "synth_ecp5.ys"}
    v = files["bp_top.v"]
    assert re.findall(r"^module (\w+)", v, re.M) == ["bp_cnu_d1", "bp_cnu_d2", "bp_cnu_d3", "bp_cnu_d4",
                                                     "bp_vnu_d1", "bp_vnu_d2", "bp_vnu_d3", "bp_top"]
    assert "input  wire [4:0] syndrome" in v and "output wire [5:0] hard" in v
    assert "output wire [5:0] iterations" in v  # 37 needs 6 bits
    assert len(re.findall(r"reg \[6:0\] vm_\d+; reg vn_\d+;", v)) == 10  # one 7+1-bit register per edge
    assert len(re.findall(r"^\s+bp_cnu_d\d+ u_c\d+", v, re.M)) == 4  # the empty row has no check unit
    assert len(re.findall(r"^\s+bp_vnu_d\d+ #", v, re.M)) == 5  # the empty column has none either
    assert "assign unsat[2] = syn_r[2];" in v  # an empty row is satisfied only by a 0 syndrome bit
    assert "(x * 160) >> 8" in v and "<< 7" in v and "<< 5" in v  # 160 = 2^7 + 2^5, full product
    mf = json.loads(files["rtl_manifest.json"])
    assert mf["flip_flops"] == 8 * 10 + 5 + 6 + 6 + 4 and mf["cycles_per_iteration"] == 1
    assert mf["check_degrees"] == [1, 2, 3, 4] and mf["empty_checks"] == 1 and mf["empty_variables"] == 1
    assert "iterations + 2" in files["README.md"] and "| `syndrome` | in | 5 |" in files["README.md"]
    assert generate(H, cfg) == files  # same inputs, same bytes
    assert "synth_ice40 -top bp_top" in files["synth_ice40.ys"]
    assert "-flatten -noiopad" in files["synth_xc7.ys"] and "stat -json" in files["synth_ecp5.ys"]


def test_beta_and_mutants_change_text():
    H, cfg = design_from_decoder(minsum_decoder(H_EDGE, beta=0.5))  # beta_q = 4
    assert "(o1_s > 7'd4) ? (o1_s - 7'd4) : 7'd0" in generate(H, cfg)["bp_top.v"]
    H, cfg = design_from_decoder(minsum_decoder(H_EDGE))
    base = generate(H, cfg)["bp_top.v"]
    for mut in MUTATIONS:
        _, mcfg = design_from_decoder(minsum_decoder(H_EDGE), mutation=mut)
        assert generate(H, mcfg)["bp_top.v"] != base, mut


def test_vectors_must_match_design(tmp_path):
    dec = minsum_decoder(H_EDGE)
    syn = np.zeros((3, 5), np.uint8)
    export_vectors(dec.problem, dec, syn, tmp_path / "v", description={"test": 1})
    vs = load_vectors(tmp_path / "v")
    H, cfg = design_from_decoder(minsum_decoder(H_EDGE, alpha=1.0))
    with pytest.raises(ValueError, match="alpha_num"):
        generate(H, cfg, vectors=vs)
    H, cfg = design_from_decoder(minsum_decoder(H_EDGE, p=0.1))
    with pytest.raises(ValueError, match="priors"):
        generate(H, cfg, vectors=vs)
    H, cfg = design_from_vectors(vs)
    assert "tb_bp.v" in generate(H, cfg, vectors=vs)


# ---------------------------------------------------------------------- CLI
def test_cli_errors(tmp_path, cli_error):
    base = ["export-rtl", "--out", str(tmp_path / "r")]
    assert "exactly one of" in cli_error(base)
    assert "--vectors" in cli_error(base + ["--code", "surface", "--d", "3", "--noise", "code-capacity",
                                            "--p", "0.05", "--simulate"])
    assert "adaptive" in cli_error(base + ["--code", "surface", "--d", "3", "--noise", "code-capacity",
                                           "--p", "0.05", "--alpha", "0"])
    assert "--synth target" in cli_error(base + ["--code", "surface", "--d", "3", "--noise", "code-capacity",
                                                 "--p", "0.05", "--synth", "asic"])
    assert "manifest.json" in cli_error(base + ["--vectors", str(tmp_path)])


def test_cli_writes_design(tmp_path):
    out = tmp_path / "r"
    assert main(["export-rtl", "--code", "surface", "--d", "3", "--noise", "code-capacity", "--p", "0.05",
                 "--bits", "6", "--frac-bits", "2", "--max-iter", "9", "--out", str(out)]) == 0
    mf = json.loads((out / "rtl_manifest.json").read_text())
    assert (mf["bits"], mf["max_iter"], mf["iter_bits"], mf["mag_bits"]) == (6, 9, 4, 5)
    assert (out / "bp_top.v").read_text().count("module bp_top") == 1


# ------------------------------------------------------------- simulation
@pytest.fixture(scope="module")
def sc3_vectors(tmp_path_factory):
    """Surface d=3 code capacity at p = 0.05: 200 shots, 8 bits / 3 fraction bits, alpha 0.625."""
    out = tmp_path_factory.mktemp("sc3") / "v"
    assert main(["export-vectors", "--code", "surface", "--d", "3", "--noise", "code-capacity", "--p", "0.05",
                 "--shots", "200", "--seed", "1", "--out", str(out)]) == 0
    return out


@needs_iverilog
def test_sc3_bit_exact_via_cli(sc3_vectors, tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["export-rtl", "--vectors", str(sc3_vectors), "--simulate", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "200 shots, 200 passed, 0 failed" in text
    assert (out / "tb_bp.v").exists()
    vs = load_vectors(sc3_vectors)
    assert 0 < vs.expected_converged.mean() < 1 and vs.expected_iters.max() > 1  # BP really iterates


@needs_iverilog
def test_directed_corner_cases(tmp_path):
    """Empty row with s = 1 (never converges: max_iter), zero syndrome (1 iteration), max_iter = 1."""
    for max_iter in (1, 7):
        dec = minsum_decoder(H_EDGE, max_iter=max_iter, p=0.2)
        rng = np.random.default_rng(5)
        syn = (rng.random((40, 5)) < 0.5).astype(np.uint8)
        syn[0] = 0
        syn[1] = [0, 0, 1, 0, 0]
        vdir = tmp_path / f"v{max_iter}"
        export_vectors(dec.problem, dec, syn, vdir, description={"test": "corners"})
        vs = load_vectors(vdir)
        assert vs.expected_iters[0] == 1 and vs.expected_converged[0]
        assert vs.expected_iters[1] == max_iter and not vs.expected_converged[1]
        H, cfg = design_from_vectors(vs)
        export_rtl(H, cfg, tmp_path / f"r{max_iter}", vectors=vs)
        report = simulate(tmp_path / f"r{max_iter}", vdir)
        assert report.shots == 40 and report.ok, report.summary()
        assert report.total_cycles == int(vs.expected_iters.sum()) + 2 * 40


@pytest.fixture(scope="module")
def mutant_vectors(tmp_path_factory):
    """Surface d=3 code capacity at two narrow formats where the caught mutants show."""
    out = {}
    for bits, frac, alpha in ((6, 2, 0.625), (6, 3, 0.75)):
        d = tmp_path_factory.mktemp("mut") / f"v{bits}_{frac}"
        assert main(["export-vectors", "--code", "surface", "--d", "3", "--noise", "code-capacity", "--p", "0.05",
                     "--shots", "200", "--seed", "1", "--bits", str(bits), "--frac-bits", str(frac),
                     "--alpha", str(alpha), "--out", str(d)]) == 0
        out[(bits, frac)] = d
    return out


# mutation -> vector format where it must be caught (None: equivalent, must pass)
MUTANT_CASES = [
    ("alpha-round", (6, 2)),
    ("msg-wrap", (6, 3)),
    ("min2-zero", (6, 2)),
    ("test-at-zero", (6, 2)),
    ("hard-negative", (6, 2)),
    ("argmin-last", (6, 2)),
]


@needs_iverilog
@pytest.mark.parametrize("mutation, fmt", MUTANT_CASES, ids=[c[0] for c in MUTANT_CASES])
def test_mutants(mutant_vectors, tmp_path, mutation, fmt):
    vs = load_vectors(mutant_vectors[fmt])
    H, cfg = design_from_vectors(vs)
    export_rtl(H, cfg, tmp_path / "good", vectors=vs)
    assert simulate(tmp_path / "good", vs.path).ok
    H, cfg = design_from_vectors(vs, mutation=mutation)
    export_rtl(H, cfg, tmp_path / "mut", vectors=vs)
    report = simulate(tmp_path / "mut", vs.path)
    observable = MUTATIONS[mutation][0]
    if observable:
        assert report.failed > 0 and report.lines, report.summary()
        assert report.lines[0].startswith("MISMATCH shot=")
    else:
        assert report.ok, report.summary()


@needs_iverilog
@pytest.mark.slow
def test_truncated_shift_mutant_on_bb72(tmp_path):
    """Separately truncated shifts: invisible on the small surface sets, caught on [[72,12,6]]."""
    v = tmp_path / "v"
    assert main(["export-vectors", "--code", "bb72_12_6", "--noise", "code-capacity", "--p", "0.05",
                 "--shots", "200", "--seed", "1", "--out", str(v)]) == 0
    vs = load_vectors(v)
    H, cfg = design_from_vectors(vs)
    export_rtl(H, cfg, tmp_path / "good", vectors=vs)
    assert simulate(tmp_path / "good", v).ok
    H, cfg = design_from_vectors(vs, mutation="alpha-truncated-shifts")
    export_rtl(H, cfg, tmp_path / "mut", vectors=vs)
    assert simulate(tmp_path / "mut", v).failed > 0


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed: make rtl-tools")
def test_verilator_agrees(sc3_vectors, tmp_path):
    vs = load_vectors(sc3_vectors)
    H, cfg = design_from_vectors(vs)
    export_rtl(H, cfg, tmp_path / "r", vectors=vs)
    report = simulate(tmp_path / "r", sc3_vectors, simulator="verilator")
    assert report.ok and report.shots == 200, report.summary()


@pytest.mark.skipif(shutil.which("yosys") is None, reason="yosys not installed: make rtl-tools")
def test_synth_ice40_smoke(sc3_vectors, tmp_path):
    from qdecode.hw.rtl import run_pnr, run_synth

    vs = load_vectors(sc3_vectors)
    H, cfg = design_from_vectors(vs)
    export_rtl(H, cfg, tmp_path / "r")
    r = run_synth(tmp_path / "r", "ice40")
    assert r.resources["luts"] > 0 and r.resources["ffs"] > 0 and r.resources["bram"] == 0
    if shutil.which("nextpnr-ice40"):
        pr = run_pnr(tmp_path / "r", "hx8k")
        assert pr.fmax_mhz > 1 and 0 < pr.lc_used < pr.lc_available
