"""Relay-BP vectors (``export-vectors --decoder relay-bp``) and the Relay-BP RTL: refusals, replay, bit-exact bench.

Simulation tests need ``iverilog`` (``make rtl-tools``) and skip without it.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from qdecode.cli.main import main
from qdecode.decoders.relay_bp import RelayBpDecoder
from qdecode.hw.relay_vectors import export_relay_vectors, gamma_table, load_relay_vectors, replay_relay_vectors
from qdecode.hw.rtl import check_vectors, design_from_vectors, simulate
from qdecode.hw.rtl.relay_top import RELAY_MUTATIONS, generate_relay, relay_config_from_vectors
from qdecode.hw.vectors import VectorFormatError, load_vectors, replay_vectors
from tests.hw.rtl_cases import needs_iverilog

RELAY_SMALL = ["--decoder", "relay-bp", "--code", "bb72_12_6", "--noise", "code-capacity", "--p", "0.1",
               "--pre-iter", "12", "--legs", "6", "--leg-iter", "6", "--stop-after", "3", "--gamma-rows", "3",
               "--shots", "40", "--seed", "2"]


@pytest.fixture(scope="module")
def relay_small(tmp_path_factory):
    out = tmp_path_factory.mktemp("relay") / "v"
    assert main(["export-vectors", *RELAY_SMALL, "--out", str(out)]) == 0
    return out


def test_relay_vectors_files_and_replay(relay_small):
    vs, relay = load_relay_vectors(relay_small)
    mf = vs.manifest
    assert mf["decoder"] == "relay-bp" and mf["gamma0_num"] == 38 and mf["max_iter"] == 12 + 6 * 6
    assert relay["gammas_q"].shape == (3, 72) and mf["gamma_bits"] == 9
    assert relay["legs"].max() == 6 and (relay["legs"] > 0).all()  # stop_after 3: later legs always run
    assert not vs.expected_converged.all()  # the not-converged path is exercised too
    rep = replay_relay_vectors(relay_small)
    assert rep.ok and rep.shots == 40, rep.summary()
    with pytest.raises(VectorFormatError, match="relay-bp vector set"):
        replay_vectors(relay_small)  # the min-sum replay refuses it
    assert main(["export-vectors", "--replay", str(relay_small)]) == 0  # the CLI dispatches
    # the weights are integer sums of the quantised priors
    w = np.array([vs.priors_q[vs.expected_hard[s] == 1].sum() for s in range(40)])
    assert np.array_equal(w, relay["weight"])


def test_relay_replay_catches_corruption(relay_small, tmp_path):
    import shutil as sh

    d = tmp_path / "v"
    sh.copytree(relay_small, d)
    lines = (d / "expected_legs.txt").read_text().split("\n")
    lines[0] = str(int(lines[0]) + 1)
    (d / "expected_legs.txt").write_text("\n".join(lines))
    rep = replay_relay_vectors(d)
    assert not rep.ok and rep.mismatches[0].file == "expected_legs.txt" and rep.mismatches[0].line == 1


def test_relay_refusals(relay_small, tmp_path, cli_error):
    from qdecode.problem import DecodingProblem

    vs = load_vectors(relay_small)
    prob = DecodingProblem.from_check_matrix(vs.H, 0.1)
    dets = np.zeros((2, vs.H.shape[0]), np.uint8)
    kw = dict(gamma0=0.15, pre_iter=5, legs=2, leg_iter=5, stop_after=1, alpha=1.0, seed=0, frac_bits=3)
    with pytest.raises(ValueError, match="explicit gamma table"):
        export_relay_vectors(prob, RelayBpDecoder(prob, bits=8, **kw), dets, tmp_path / "a", description={})
    with pytest.raises(ValueError, match="fixed-point"):
        export_relay_vectors(prob, RelayBpDecoder(prob, bits=0, explicit_gammas=gamma_table(72, 2, -0.2, 0.6, 0),
                                                  **kw), dets, tmp_path / "b", description={})
    with pytest.raises(VectorFormatError, match="relay-bp vector set"):
        design_from_vectors(vs)  # the min-sum design refuses a relay set
    with pytest.raises(VectorFormatError, match="not a relay-bp"):
        load_relay_vectors(_bp_vectors(tmp_path))
    base = ["export-vectors", "--out", str(tmp_path / "c"), *RELAY_SMALL[:8]]
    assert "--gamma-rows must be >= 1" in cli_error(base + ["--gamma-rows", "0"])
    assert "--gamma-lo must be < --gamma-hi" in cli_error(base + ["--gamma-lo", "0.5", "--gamma-hi", "0.1"])
    assert "--dump-messages" in cli_error(base + ["--dump-messages", "1"])
    assert "drop --schedule" in cli_error(base + ["--schedule", "layered"])
    rtl = ["export-rtl", "--vectors", str(relay_small), "--out", str(tmp_path / "r")]
    assert "--parallelism is not implemented" in cli_error(rtl + ["--parallelism", "4"])
    assert "drop --alpha" in cli_error(rtl + ["--alpha", "0.5"])


def _bp_vectors(tmp_path):
    v = tmp_path / "bp"
    assert main(["export-vectors", "--code", "surface", "--d", "3", "--noise", "code-capacity", "--p", "0.05",
                 "--shots", "4", "--out", str(v)]) == 0
    return v


def test_relay_design_structure_and_determinism(relay_small):
    vs, relay = load_relay_vectors(relay_small)
    cfg = relay_config_from_vectors(vs, relay)
    files = generate_relay(vs.H, cfg, vectors=vs, relay=relay)
    v = files["relay_top.v"]
    assert re.findall(r"^module (\w+)", v, re.M) == ["bp_cnu_d6", "relay_vnu_d3", "relay_top"]
    assert len(re.findall(r"'d\d+: gtab = 648'h", v)) == 3  # the gamma ROM: one 72 x 9-bit word per row
    assert "(prod + 20'sd128) >>> 8" in v  # rounding of the memory prior, 11 x 9-bit product
    assert files["gammas_q.hex"] == (relay_small / "gammas_q.hex").read_text()
    mf = json.loads(files["rtl_manifest.json"])
    assert mf["top"] == "relay_top" and mf["latency_cycles"].startswith("iterations + legs_run + 2")
    assert "synth_ice40 -top relay_top" in files["synth_ice40.ys"]
    assert generate_relay(vs.H, cfg, vectors=vs, relay=relay) == files
    with pytest.raises(ValueError, match="relay-bp set"):
        check_vectors({}, vs)  # the min-sum design's bench refuses a relay set
    with pytest.raises(ValueError, match="unknown relay mutation"):
        relay_config_from_vectors(vs, relay, mutation="nope")


@needs_iverilog
def test_relay_bit_exact_small(relay_small, tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["export-rtl", "--vectors", str(relay_small), "--simulate", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "40 shots, 40 passed, 0 failed" in text and "legs 0, weight 0" in text
    vs, relay = load_relay_vectors(relay_small)
    total = int(re.search(r"; (\d+) cycles;", text).group(1))
    assert total == int(vs.expected_iters.sum() + relay["legs"].sum()) + 2 * 40  # iterations + legs + 2 per shot


@needs_iverilog
@pytest.mark.parametrize("mutation", sorted(RELAY_MUTATIONS))
def test_relay_mutants_caught(relay_small, tmp_path, mutation):
    vs, relay = load_relay_vectors(relay_small)
    cfg = relay_config_from_vectors(vs, relay, mutation=mutation)
    out = tmp_path / "m"
    out.mkdir()
    for name, text in generate_relay(vs.H, cfg, vectors=vs, relay=relay).items():
        (out / name).write_text(text)
    assert simulate(out, relay_small).failed > 0


@needs_iverilog
@pytest.mark.slow
def test_relay_bit_exact_bb72_200(tmp_path, capsys):
    """Acceptance: 200 shots of [[72,12,6]] code capacity at p = 0.05, bit-exact (hard, iterations,
    converged, legs, weight, cycles)."""
    v = tmp_path / "v"
    assert main(["export-vectors", "--decoder", "relay-bp", "--code", "bb72_12_6", "--noise", "code-capacity",
                 "--p", "0.05", "--pre-iter", "20", "--legs", "10", "--leg-iter", "10", "--stop-after", "3",
                 "--gamma-rows", "4", "--shots", "200", "--seed", "1", "--out", str(v)]) == 0
    code = main(["export-rtl", "--vectors", str(v), "--simulate", "--out", str(tmp_path / "r")])
    text = capsys.readouterr().out
    assert code == 0 and "200 shots, 200 passed, 0 failed" in text, text
    vs = load_vectors(v)
    assert vs.expected_iters.max() > 20  # later legs iterate
