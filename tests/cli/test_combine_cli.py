"""`qdecode combine`: sums per strong_id, sinter's CSV format, the same totals as `sinter combine`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from qdecode.cli.main import main
from qdecode.sims.store import CSV_HEADER, StatsRow, StatsWriter, parse_rows, read_rows

SINTER = os.path.join(os.path.dirname(sys.executable), "sinter")


def _write(path, rows):
    with StatsWriter(path, fsync=False) as w:
        for row in rows:
            w.append(row)
    return str(path)


def _files(tmp_path):
    """Two files sharing tasks, with discards, custom counts and distances that sort 9 < 11."""
    a = [
        StatsRow("id-d11", "pymatching", {"d": 11, "p": 0.001}, shots=1000, errors=3, discards=10, seconds=0.5,
                 custom_counts={"obs_mistake_mask=E_": 2, "obs_mistake_mask=_E": 1}),
        StatsRow("id-d9", "pymatching", {"d": 9, "p": 0.001}, shots=500, errors=7, seconds=0.25),
        StatsRow("id-d9", "pymatching", {"d": 9, "p": 0.001}, shots=500, errors=5, discards=4, seconds=0.25,
                 custom_counts={"not_converged": 3}),
    ]
    b = [
        StatsRow("id-bp", "bp", {"d": 9, "p": 0.001}, shots=200, errors=50, discards=20, seconds=12.5),
        StatsRow("id-d11", "pymatching", {"d": 11, "p": 0.001}, shots=3000, errors=1, discards=30, seconds=1.5,
                 custom_counts={"obs_mistake_mask=E_": 1}),
    ]
    return _write(tmp_path / "a.csv", a), _write(tmp_path / "b.csv", b)


def _combine(capsys, argv):
    capsys.readouterr()
    assert main(["combine", *argv]) == 0
    return capsys.readouterr().out


def _totals(rows):
    return {r.strong_id: (r.decoder, r.json_metadata, r.shots, r.errors, r.discards, round(r.seconds, 3),
                          dict(r.custom_counts)) for r in rows}


def test_combine_sums_per_strong_id_in_first_seen_order(tmp_path, capsys):
    a, b = _files(tmp_path)
    out = _combine(capsys, [a, b])
    lines = out.splitlines()
    assert lines[0] == CSV_HEADER and len(lines) == 4
    rows = parse_rows(out)
    assert [r.strong_id for r in rows] == ["id-d11", "id-d9", "id-bp"]
    d11, d9, bp = rows
    assert (d11.shots, d11.errors, d11.discards, d11.seconds) == (4000, 4, 40, 2.0)
    assert d11.custom_counts == {"obs_mistake_mask=E_": 3, "obs_mistake_mask=_E": 1}
    assert (d9.shots, d9.errors, d9.discards, dict(d9.custom_counts)) == (1000, 12, 4, {"not_converged": 3})
    assert lines[1:] == [r.to_csv_line() for r in rows]  # the store's exact line format
    # --out writes the same text; metadata and error orders; custom counts stripped.
    target = tmp_path / "sub" / "all.csv"
    assert main(["combine", a, b, "--out", str(target)]) == 0
    assert target.read_text() == out
    assert "3 rows" in capsys.readouterr().err
    assert [r.strong_id for r in parse_rows(_combine(capsys, [a, b, "--order", "metadata"]))] == \
        ["id-d9", "id-bp", "id-d11"]  # d=9 before d=11, ties keep first-seen order
    assert [r.strong_id for r in parse_rows(_combine(capsys, [a, b, "--order", "error"]))] == \
        ["id-d11", "id-d9", "id-bp"]
    assert all(not r.custom_counts for r in parse_rows(_combine(capsys, [a, b, "--strip-custom-counts"])))


@pytest.mark.skipif(not os.path.exists(SINTER), reason="sinter command not installed")
@pytest.mark.parametrize("order", ["metadata", "preserve", "error"])
def test_combine_matches_sinter_combine(tmp_path, capsys, order):
    a, b = _files(tmp_path)
    theirs = subprocess.run([SINTER, "combine", "--order", order, a, b], check=True, capture_output=True,
                            text=True).stdout
    ours = _combine(capsys, ["--order", order, a, b])
    assert _totals(parse_rows(ours)) == _totals(parse_rows(theirs))
    assert [r.strong_id for r in parse_rows(ours)] == [r.strong_id for r in parse_rows(theirs)]
    assert ours == theirs  # byte for byte, custom counts included
    # Either tool reads the other's output and gets the same totals back.
    mine = tmp_path / "ours.csv"
    mine.write_text(ours)
    again = subprocess.run([SINTER, "combine", str(mine)], check=True, capture_output=True, text=True).stdout
    assert _totals(parse_rows(again)) == _totals(read_rows(mine))




def test_combine_errors_are_one_line(tmp_path, capsys, cli_error):
    a, _ = _files(tmp_path)
    clash = _write(tmp_path / "clash.csv", [StatsRow("id-d9", "bp", {"d": 9, "p": 0.001}, shots=10)])
    err = cli_error(["combine", a, clash])
    assert "strong_id id-d9" in err and "a.csv" in err and "clash.csv" in err and "'bp'" in err
    meta = _write(tmp_path / "meta.csv", [StatsRow("id-d9", "pymatching", {"d": 9, "p": 0.002}, shots=10)])
    assert "0.002" in cli_error(["combine", a, meta])
    assert "nope.csv: no such file" in cli_error(["combine", a, str(tmp_path / "nope.csv")])
    assert "--order must be one of" in cli_error(["combine", a, "--order", "random"])
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert "not a sinter stats CSV" in cli_error(["combine", str(bad)])
