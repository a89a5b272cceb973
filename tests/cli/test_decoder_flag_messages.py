"""Decoder flags of ``sweep`` / ``predict`` that misled (issue 43): the confidence decoders their help
lists, ``--time-budget`` with a decoder other than ``auto``, and ``--quiet`` against the OSD clamp warning."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
import stim

from qdecode.cli.common import time_budget_params
from qdecode.cli.main import build_parser, main
from qdecode.decoders.registry import decoder_names, get_entry

# surface d = 3: k = n - rank(H) is far below 1000, so OSD clamps the order and warns
_CLAMPED = ["sweep", "--code", "surface", "--d", "3", "--noise", "si1000", "--p", "0.001",
            "--decoder", "bposd[osd_order=1000]", "--max-shots", "64", "--max-batch-size", "64"]


def _help(command: str) -> str:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return " ".join(sub.choices[command].format_help().split())


@pytest.mark.parametrize("command, flag", [("sweep", "--gap-histogram"), ("predict", "--gap-out")])
def test_gap_flags_list_every_decoder_with_a_confidence(command, flag):
    text = _help(command)
    names = [n for n in decoder_names() if get_entry(n).has_confidence]
    assert len(names) >= 11  # mle, pymatching(-correlated), tesseract, relay-bp, the BP / OSD / LSD family
    listed = text.split(flag, 1)[1].split("decoders with a confidence: ", 1)[1]
    assert listed.startswith(", ".join(names)), listed[:300]


def test_top_level_help_stays_light():
    """Building every parser (each ``qdecode`` call) must not load the registry's decoder modules."""
    code = ("import sys; from qdecode.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in ('numba', 'stim', 'qdecode.decoders.bposd') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("tb")
    c = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=2, after_clifford_depolarization=0.02)
    (d / "m.dem").write_text(str(c.detector_error_model(decompose_errors=True)))
    stim.write_shot_data_file(data=c.compile_detector_sampler(seed=1).sample(8), path=d / "d.b8", format="b8",
                              num_detectors=c.num_detectors)
    return d


@pytest.mark.parametrize("decoder", ["bposd", "bposd[osd_order=3]", "qd-bposd"])
def test_time_budget_without_auto_names_the_flag(tmp_path, model, cli_error, decoder):
    expected = (f"--time-budget applies to --decoder auto only (got --decoder {decoder}); drop --time-budget, "
                f"or decode with --decoder auto")
    err = cli_error([*_CLAMPED[:-6], "--decoder", decoder, "--time-budget", "0.5", "--out", str(tmp_path / "x.csv")])
    assert err == f"qdecode sweep: error: {expected}"
    assert not (tmp_path / "x.csv").exists()
    err = cli_error(["predict", "--dem", str(model / "m.dem"), "--dets", str(model / "d.b8"), "--decoder", decoder,
                     "--time-budget", "0.5", "--obs-out", str(tmp_path / "o.01")])
    assert err == f"qdecode predict: error: {expected}"
    assert "no parameter" not in err and "none of the decoders" not in err


def test_time_budget_with_auto_is_its_parameter(tmp_path, cli_error):
    assert time_budget_params(0.5, ["bposd", "auto"]) == ["time_budget=0.5"]
    assert time_budget_params(None, ["bposd"]) == []
    err = cli_error(["sweep", "quickstart", "--time-budget", "0.5", "--out", str(tmp_path / "x.csv")])
    assert "--time-budget applies to an inline sweep" in err  # a recipe ignored it without a word


def test_quiet_silences_the_osd_clamp_warning_inline(tmp_path, caplog, capsys):
    # two models (p differs), so that neither run reuses a decoder the other built
    other_p = [x if x != "0.001" else "0.002" for x in _CLAMPED]
    with caplog.at_level(logging.WARNING):
        assert main([*_CLAMPED, "--workers", "0", "--quiet", "--out", str(tmp_path / "b.csv")]) == 0
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("qdecode")]
    assert logging.getLogger("qdecode").level == logging.NOTSET  # restored: --quiet lasts one run
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert main([*other_p, "--workers", "0", "--out", str(tmp_path / "a.csv")]) == 0
    assert any("clamping" in r.getMessage() for r in caplog.records)  # the warning this test is about


def test_quiet_silences_the_osd_clamp_warning_in_worker_processes(tmp_path):
    """The worker builds its own decoder (and warns there): the pool hands it the sweep's log level."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    run = subprocess.run([sys.executable, "-m", "qdecode.cli.main", *_CLAMPED, "--workers", "1", "--quiet",
                          "--out", str(tmp_path / "w.csv")], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "clamp" not in run.stderr, run.stderr


def test_threshold_without_histograms_names_every_decoder_with_a_confidence(tmp_path, cli_error):
    from qdecode.sims.store import StatsRow, StatsWriter

    plain = tmp_path / "plain.csv"
    with StatsWriter(plain, fsync=False) as w:
        w.append(StatsRow("id", "pymatching", {"d": 3, "p": 0.01}, shots=100, errors=3))
    err = cli_error(["threshold", str(plain), "--max-discard", "0.01"])
    names = [n for n in decoder_names() if get_entry(n).has_confidence]
    assert err.endswith(f"a decoder that gives a confidence: {', '.join(names)})"), err
