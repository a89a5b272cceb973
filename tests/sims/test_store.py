"""The stats CSV: sinter's exact format, round trips, truncated-line handling."""

from __future__ import annotations

import collections
import logging

import pytest
import sinter

from qdecode.sims.store import CSV_HEADER, CsvFormatError, StatsRow, StatsWriter, merge_rows, parse_rows, read_rows


def _row(**kw):
    base = dict(strong_id="ab12", decoder="pymatching", json_metadata={"d": 5, "p": 0.005}, shots=1000, errors=7,
                seconds=1.5)
    base.update(kw)
    return StatsRow(**base)


def test_header_and_line_identical_to_sinter():
    assert CSV_HEADER == sinter.CSV_HEADER
    for kw in (dict(), dict(seconds=0.1234), dict(seconds=123.45), dict(custom_counts={"not_converged": 3})):
        ours = _row(**kw)
        theirs = sinter.TaskStats(
            strong_id=ours.strong_id, decoder=ours.decoder, json_metadata=ours.json_metadata,
            shots=ours.shots, errors=ours.errors, discards=ours.discards, seconds=ours.seconds,
            custom_counts=collections.Counter(ours.custom_counts),
        )
        assert ours.to_csv_line() == theirs.to_csv_line()


def test_round_trip_byte_for_byte(tmp_path):
    path = tmp_path / "s.csv"
    rows = [_row(), _row(strong_id="cd34", decoder="bp[alpha=0.625]", custom_counts={"not_converged": 2})]
    with StatsWriter(path) as w:
        for r in rows:
            w.append(r)
    text = path.read_text()
    back = read_rows(path)
    assert [r.to_csv_line() for r in back] == [r.to_csv_line() for r in rows]
    assert CSV_HEADER + "\n" + "".join(r.to_csv_line() + "\n" for r in back) == text
    # and sinter reads it
    stats = sinter.read_stats_from_csv_files(path)
    assert sorted(s.shots for s in stats) == [1000, 1000]


def test_truncated_last_line_skipped_with_warning_and_cut_on_append(tmp_path, caplog):
    path = tmp_path / "s.csv"
    with StatsWriter(path) as w:
        w.append(_row())
    full = path.read_text()
    path.write_text(full + _row(errors=9).to_csv_line()[:30])
    with caplog.at_level(logging.WARNING):
        rows = read_rows(path)
    assert len(rows) == 1 and "truncated" in caplog.text
    with StatsWriter(path) as w:
        w.append(_row(errors=3))
    rows = read_rows(path)
    assert [r.errors for r in rows] == [7, 3]
    assert path.read_text() == full + _row(errors=3).to_csv_line() + "\n"


def test_bad_line_in_the_middle_is_an_error():
    text = CSV_HEADER + "\n" + "garbage,line\n" + _row().to_csv_line() + "\n"
    with pytest.raises(CsvFormatError, match=":2:"):
        parse_rows(text)


def test_missing_columns_named():
    with pytest.raises(CsvFormatError, match="strong_id"):
        parse_rows("shots,errors,discards,seconds,decoder,json_metadata\n")


def test_merge_and_add_rules():
    a, b = _row(), _row(shots=500, errors=1, seconds=0.5)
    total = merge_rows([a, b])["ab12"]
    assert (total.shots, total.errors, total.seconds) == (1500, 8, 2.0)
    with pytest.raises(ValueError, match="differ"):
        a + _row(decoder="other")
    with pytest.raises(ValueError, match="errors \\+ discards > shots"):
        _row(errors=2000)


def test_reads_sinter_written_file(tmp_path):
    path = tmp_path / "sinter.csv"
    stat = sinter.TaskStats(strong_id="ff", decoder="pymatching", json_metadata={"d": 3}, shots=10, errors=1,
                            seconds=0.2)
    path.write_text(sinter.CSV_HEADER + "\n" + stat.to_csv_line() + "\n")
    (row,) = read_rows(path)
    assert (row.shots, row.errors, row.json_metadata) == (10, 1, {"d": 3})


def test_adding_rows_keeps_a_count_that_sums_to_zero():
    # A count recorded as 0 is "none happened", not "not recorded": a combined file must keep it, or pooling it
    # with rows that carry the count would look like a source that never records it (plots refuse those).
    a = StatsRow(strong_id="ab", decoder="bposd", json_metadata={}, shots=10, custom_counts={"not_converged": 0})
    b = StatsRow(strong_id="ab", decoder="bposd", json_metadata={}, shots=5, custom_counts={"not_converged": 0,
                                                                                             "iterations": 7})
    total = a + b
    assert dict(total.custom_counts) == {"not_converged": 0, "iterations": 7}
    assert '""not_converged"":0' in total.to_csv_line()
