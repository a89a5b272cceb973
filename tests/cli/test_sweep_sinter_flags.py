"""sinter's ``collect`` flags on ``qdecode sweep``: --also_print_results_to_stdout,
--existing_data_filepaths and --start_batch_size (each also spelled with dashes)."""

from __future__ import annotations

import sinter

from qdecode.cli.main import main
from qdecode.sims.store import merge_rows, read_rows

SURFACE = ["--code", "surface", "--d", "3", "--noise", "sd6", "--p", "0.01", "--decoder", "pymatching",
           "--max-errors", "100000", "--quiet", "--workers", "0"]

def test_results_to_stdout_are_sinter_csv_rows_equal_to_the_file(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", *SURFACE, "--max-shots", "1000", "--out", str(out), "--also_print_results_to_stdout"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("     shots,    errors,  discards, seconds,decoder,strong_id")
    (path := tmp_path / "printed.csv").write_text(printed)
    (ours,) = merge_rows(read_rows(out)).values()
    (theirs,) = sinter.stats_from_csv_files(path)
    assert (theirs.shots, theirs.errors, theirs.strong_id) == (ours.shots, ours.errors, ours.strong_id) == \
        (1000, ours.errors, ours.strong_id)

def test_existing_data_counts_toward_the_stopping_rule_and_is_not_copied(tmp_path, cli_error):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["sweep", *SURFACE, "--max-shots", "1000", "--out", str(first)]) == 0
    assert main(["sweep", *SURFACE, "--max-shots", "1000", "--out", str(second),
                 "--existing_data_filepaths", str(first)]) == 0
    assert list(read_rows(second)) == []  # already done by a.csv's rows
    assert main(["sweep", *SURFACE, "--max-shots", "1500", "--out", str(second),
                 "--existing-data-filepaths", str(first)]) == 0
    assert sum(r.shots for r in read_rows(second)) == 500
    assert "that is --out itself" in cli_error(["sweep", *SURFACE, "--out", str(first),
                                                "--existing-data-filepaths", str(first)])
    assert "no such file" in cli_error(["sweep", *SURFACE, "--out", str(first),
                                        "--existing-data-filepaths", str(tmp_path / "nope.csv")])

def test_start_batch_size_sets_the_first_batch(tmp_path, cli_error):
    out = tmp_path / "s.csv"
    assert main(["sweep", *SURFACE, "--max-shots", "300", "--start_batch_size", "100", "--out", str(out)]) == 0
    assert [r.shots for r in read_rows(out)] == [100, 200]
    assert "--start-batch-size must be >= 1" in cli_error(["sweep", *SURFACE, "--start-batch-size", "0"])
    assert "exceeds --max-batch-size" in cli_error(["sweep", *SURFACE, "--start-batch-size", "64",
                                                    "--max-batch-size", "32"])
