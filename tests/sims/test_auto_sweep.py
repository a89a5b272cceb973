"""``--decoder auto`` in a sweep: one decoder per model kind, announced, kept on resume."""

from __future__ import annotations

import re

from qdecode.cli.main import main
from qdecode.decoders import DecoderSpec
from qdecode.sims.store import read_rows

SWEEP = ["sweep", "--code", "surface", "--d", "3,5,7", "--p", "0.002", "--noise", "si1000", "--decoder", "auto",
         "--max-errors", "100000", "--workers", "0", "--progress-interval", "1000"]


def _labels(out) -> set[str]:
    return {row.decoder for row in read_rows(out)}


def _auto_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "auto (" in line or "no auto candidate" in line]


def test_one_decoder_for_every_distance_announced_and_kept_on_resume(tmp_path, capsys):
    out = tmp_path / "auto.csv"
    assert main([*SWEEP, "--time-budget", "1000000", "--max-shots", "64", "--out", str(out)]) == 0
    (line,) = _auto_lines(capsys.readouterr().err)
    first = DecoderSpec.create("tesseract", {"beam": "short", "sparsify": "surface"}).label()
    assert _labels(out) == {first}  # one decoder for d = 3, 5 and 7
    assert f"auto (graphlike models, 3 tasks): {first}, measured on code=surface, d=7," in line  # the largest
    assert re.search(r"tesseract\[.*\] [0-9.e+-]+ ms \(within\)", line)  # the measured candidates

    # A resume whose budget would now pick another decoder keeps the recorded one, without measuring.
    assert main([*SWEEP, "--time-budget", "1e-9", "--max-shots", "96", "--out", str(out)]) == 0
    (line,) = _auto_lines(capsys.readouterr().err)
    assert line == f"qdecode sweep: auto (graphlike models, 3 tasks): {first} (recorded in the output file)"
    assert _labels(out) == {first}
    assert sum(r.shots for r in read_rows(out)) == 3 * 96


def test_an_unmeetable_budget_warns_with_the_decoder_and_its_time(tmp_path, capsys):
    out = tmp_path / "tiny.csv"
    assert main([*SWEEP[:4], "3", *SWEEP[5:], "--time-budget", "1e-9", "--max-shots", "32", "--out", str(out)]) == 0
    lines = _auto_lines(capsys.readouterr().err)
    (label,) = _labels(out)
    assert len(lines) == 2 and "(over)" in lines[0] and "(within)" not in lines[0]
    match = re.fullmatch(r"qdecode sweep: warning: no auto candidate meets the budget of 1e-09 ms per shot; "
                         r"using the fastest, (\S+) at ([0-9.e+-]+) ms", lines[1])
    assert match and match.group(1) == label and float(match.group(2)) > 1e-9
