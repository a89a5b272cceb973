"""Training reports progress without a terminal: plain lines with the step and an ETA."""

from __future__ import annotations

from qdecode.neural import train_common


def test_plain_lines_without_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(train_common.StepLoop, "LINE_INTERVAL", 0.0)  # a line at every step
    with train_common.StepLoop(tmp_path, total=10, initial=4, desc="train x", progress=True) as loop:
        assert loop.bar is None  # capsys' stderr is not a terminal
        for _ in range(2):
            loop.tick(loss=0.5)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("qdecode train x: step 5/10, ") and "ETA ~" in lines[0] and lines[0].endswith("loss=0.5")
    assert lines[1].startswith("qdecode train x: step 6/10, ")


def test_no_progress_is_silent(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(train_common.StepLoop, "LINE_INTERVAL", 0.0)
    with train_common.StepLoop(tmp_path, total=3, initial=0, desc="train x", progress=False) as loop:
        loop.tick()
    assert capsys.readouterr().err == ""
