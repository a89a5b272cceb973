"""Progress of the long commands: on stderr, never on stdout.

Under pytest's capture stderr is not a terminal, and these runs are quicker than the plain-line
interval, so ``bench``, ``tune`` and ``learn-noise`` print nothing to stderr; a fake terminal
(``isatty() -> True``) turns the stage lines and bars on, and stdout stays the same. The sweep's
lines and the plain lines without a terminal are tested in ``test_progress.py``. Also: every
option's default is in ``--help``, and ``--decoder`` lists the registry.
"""

from __future__ import annotations

import argparse
import io
import re
import sys

import pytest
import stim

from qdecode.cli.main import build_parser, main

BENCH = ["bench", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--decoder", "pymatching",
         "--shots", "50", "--warmup", "1"]
TUNE = ["tune", "relay-bp", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--shots", "60",
        "--gamma0-grid", "0.1,0.3", "--lo-grid=-0.1,0", "--hi-grid", "0.5", "--budget", "2", "--legs", "2",
        "--pre-iter", "8", "--leg-iter", "8"]


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    c = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=3, after_clifford_depolarization=0.02)
    dem = c.detector_error_model(decompose_errors=True)
    (d / "model.dem").write_text(str(dem))
    stim.write_shot_data_file(data=c.compile_detector_sampler(seed=3).sample(1200), path=d / "dets.b8",
                              format="b8", num_detectors=dem.num_detectors)
    return d


def _learn(d):
    return ["learn-noise", "--reference-dem", str(d / "model.dem"), "--dets", str(d / "dets.b8")]


def _shape(text: str) -> list[str]:
    """stdout without its measured numbers (timings differ from run to run)."""
    return [re.sub(r"[-+]?\d[\d,.e+-]*", "#", line) for line in text.splitlines()]


def _run(argv, capsys, monkeypatch, tty: bool):
    capsys.readouterr()
    fake = FakeTTY()
    if tty:
        monkeypatch.setattr(sys, "stderr", fake)
    try:
        assert main(argv) == 0
    finally:
        monkeypatch.undo()
    out = capsys.readouterr()
    return out.out, (fake.getvalue() if tty else out.err)


@pytest.mark.parametrize("argv", [BENCH, TUNE], ids=["bench", "tune"])
def test_silent_on_stderr_when_not_a_terminal(argv, capsys, monkeypatch):
    out, err = _run(argv, capsys, monkeypatch, tty=False)
    assert err == "" and out


def test_learn_noise_silent_when_not_a_terminal(shots, capsys, monkeypatch):
    out, err = _run(_learn(shots), capsys, monkeypatch, tty=False)
    assert err == "" and "shots: 1200" in out


def test_bench_stages_on_a_terminal_and_same_stdout(capsys, monkeypatch):
    plain, _ = _run(BENCH, capsys, monkeypatch, tty=False)
    out, err = _run(BENCH, capsys, monkeypatch, tty=True)
    assert "qdecode bench: sampling 50 shots (seed 0) ... done in" in err
    assert "qdecode bench: timing:" in err
    assert _shape(out) == _shape(plain)
    out, err = _run([*BENCH, "--quiet"], capsys, monkeypatch, tty=True)
    assert err == ""


def test_tune_progress_on_a_terminal(capsys, monkeypatch):
    plain, _ = _run(TUNE, capsys, monkeypatch, tty=False)
    out, err = _run(TUNE, capsys, monkeypatch, tty=True)
    assert "gamma0=0.1" in err and "tune relay-bp" in err  # evaluation lines and the bar
    assert out == plain  # deterministic: same seeds, same stdout
    _, err = _run([*TUNE, "--quiet"], capsys, monkeypatch, tty=True)
    assert err == ""


def test_learn_noise_bar_on_a_terminal(shots, capsys, monkeypatch):
    plain, _ = _run(_learn(shots), capsys, monkeypatch, tty=False)
    out, err = _run(_learn(shots), capsys, monkeypatch, tty=True)
    assert "learn-noise" in err and "shot" in err
    assert out == plain


def test_train_reports_unless_silenced(monkeypatch):
    """train reports with or without a terminal (the trainer picks a bar or plain lines:
    tests/neural/test_train_progress.py); --quiet and --no-progress silence it."""
    from qdecode.cli.train import _progress

    args = argparse.Namespace(no_progress=False, quiet=False)
    assert _progress(args) is True  # pytest's stderr is not a terminal: plain lines
    monkeypatch.setattr(sys, "stderr", FakeTTY())
    assert _progress(args) is True
    assert _progress(argparse.Namespace(no_progress=False, quiet=True)) is False
    assert _progress(argparse.Namespace(no_progress=True, quiet=False)) is False


# ------------------------------------------------------------------ --help
def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _owned_parsers():
    from qdecode.cli.main import _COMMANDS

    top = dict(_subparsers(build_parser()))
    for name in _COMMANDS:
        yield name, top[name]
        for sub, p in _subparsers(top[name]):
            yield f"{name} {sub}", p


@pytest.mark.parametrize("name, parser", list(_owned_parsers()), ids=lambda x: x if isinstance(x, str) else "")
def test_help_states_every_default(name, parser):
    parser.format_help()  # renders
    for action in parser._actions:
        if not action.option_strings or action.required or isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            continue
        help_text = " ".join(parser._get_formatter()._expand_help(action).split())
        if action.default in (None, []):
            continue  # nothing is set unless given: no value to state
        assert "default" in help_text.lower(), f"{name} {action.option_strings[0]}: {help_text}"
        shown = f"{action.default:g}" if isinstance(action.default, float) else str(action.default)
        assert shown in help_text, f"{name} {action.option_strings[0]}: {help_text}"


def test_help_lists_registered_decoders(capsys):
    from qdecode.decoders.registry import decoder_names, get_entry

    quantum = [n for n in decoder_names() if get_entry(n).kind == "quantum"]
    for cmd in ("predict", "bench"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "one of: " + ", ".join(quantum) in text.replace("- ", "-")


def test_decoder_choices_help():
    from qdecode.cli.help_text import decoder_choices_help

    assert "pymatching" in decoder_choices_help() and "bm" in decoder_choices_help()
    assert "bm" not in decoder_choices_help("quantum").split(", ")
    assert decoder_choices_help("classical").split(", ")[0] == "bm"


def test_sweep_progress_lines_still_accepted_and_quiet_silences(tmp_path, capsys):
    argv = ["sweep", "--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--decoder", "pymatching",
            "--max-shots", "3000", "--workers", "0", "--out", str(tmp_path / "s.csv")]
    capsys.readouterr()
    assert main([*argv, "--quiet"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("qdecode sweep: 1 tasks")  # the result line only
    assert main(argv[:-1] + [str(tmp_path / "t.csv"), "--progress-lines"]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert any("tasks done" in ln and "ETA" in ln for ln in lines)
    assert any("shots " in ln and "errors " in ln for ln in lines)
