"""`qdecode sweep --gap-histogram`, `combine` of gap bins, `plot --y discard_vs_error`, `threshold --max-discard`."""

from __future__ import annotations

import pytest

from qdecode.cli.main import main
from qdecode.sims.gap_bins import GAP_BINS_KEY, discard_curve
from qdecode.sims.seed_streams import is_seed_key
from qdecode.sims.store import StatsRow, StatsWriter, merge_rows, read_rows

SWEEP = ["sweep", "--code", "surface", "--d", "3", "--noise", "si1000", "--p", "0.003", "--max-shots", "3000",
         "--max-errors", "1000000", "--workers", "0", "--quiet", "--seed", "3"]


@pytest.fixture(scope="module")
def gap_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("gap") / "g.csv"
    assert main(SWEEP + ["--decoder", "pymatching", "--gap-histogram", "--out", str(out)]) == 0
    return out


def _one_line_error(capsys, code, *needles):
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, err


def test_sweep_records_the_histogram_and_the_flag_in_the_strong_id(gap_csv, tmp_path):
    (row,) = merge_rows(read_rows(gap_csv)).values()
    assert row.json_metadata[GAP_BINS_KEY] == "1dB..100"
    assert discard_curve(row.shots, row.errors, row.discards, row.custom_counts)[0].kept == 3000
    plain = tmp_path / "plain.csv"
    assert main(SWEEP + ["--decoder", "pymatching", "--out", str(plain)]) == 0
    (other,) = merge_rows(read_rows(plain)).values()
    assert other.strong_id != row.strong_id  # never pooled with the histogram rows
    assert not [k for k in other.custom_counts if not is_seed_key(k)]  # and no bins (only the stream's record)


def test_decoder_without_confidence_is_refused_before_sampling(tmp_path, capsys):
    out = tmp_path / "x.csv"
    capsys.readouterr()
    code = main(SWEEP + ["--decoder", "pymatching", "--decoder", "uf", "--gap-histogram", "--out", str(out)])
    _one_line_error(capsys, code, "--gap-histogram", "uf gives no confidence", "pymatching")
    assert not out.exists()


def test_recipe_key_and_its_errors(tmp_path, capsys):
    recipe = tmp_path / "r.toml"
    out = tmp_path / "r.csv"
    recipe.write_text(f'out = "{out}"\nmax_shots = 500\nmax_errors = 100000\n[[tasks]]\ncode = "surface"\nd = 3\n'
                      f'noise = "si1000"\np = 0.003\ndecoders = ["pymatching"]\ngap_histogram = true\n')
    assert main(["sweep", str(recipe), "--workers", "0", "--quiet"]) == 0
    (row,) = merge_rows(read_rows(out)).values()
    assert row.json_metadata[GAP_BINS_KEY] == "1dB..100" and sum(
        v for k, v in row.custom_counts.items() if not k.endswith("E") and not is_seed_key(k)) == 500
    capsys.readouterr()
    for text, needle in (('gap_histogram = "yes"', "gap_histogram must be true or false"),
                         ('decoders = ["uf"]\ngap_histogram = true', "uf gives no confidence")):
        bad = tmp_path / "bad.toml"
        bad.write_text('[[tasks]]\ncode = "surface"\nd = 3\nnoise = "si1000"\np = 0.003\n'
                       + (text if "decoders" in text else f'decoders = ["pymatching"]\n{text}') + "\n")
        _one_line_error(capsys, main(["sweep", str(bad), "--workers", "0", "--quiet"]), needle)
    _one_line_error(capsys, main(["sweep", str(recipe), "--gap-histogram"]), "--gap-histogram applies to an inline")


def test_combine_sums_gap_bins(gap_csv, tmp_path, capsys):
    row = read_rows(gap_csv)[0]
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    extra = StatsRow(row.strong_id, row.decoder, row.json_metadata, shots=10, errors=2,
                     custom_counts={"g12": 6, "g12E": 1, "g3": 4, "g3E": 1})
    for path, rows in ((a, read_rows(gap_csv)), (b, [extra])):
        with StatsWriter(path, fsync=False) as w:
            for r in rows:
                w.append(r)
    out = tmp_path / "c.csv"
    assert main(["combine", str(a), str(b), "--out", str(out)]) == 0
    (combined,) = read_rows(out)
    (first,) = merge_rows(read_rows(gap_csv)).values()
    for key in ("g12", "g12E", "g3", "g3E"):
        assert combined.custom_counts[key] == first.custom_counts.get(key, 0) + extra.custom_counts[key]
    assert combined.shots == first.shots + 10 and combined.errors == first.errors + 2
    pts = discard_curve(combined.shots, combined.errors, combined.discards, combined.custom_counts)
    assert pts[0].kept == combined.shots and pts[0].kept_errors == combined.errors


def test_threshold_max_discard(gap_csv, capsys):
    capsys.readouterr()
    assert main(["threshold", str(gap_csv), "--max-discard", "0.1"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("# post-selection on the decoder's gap, at most 0.1 of shots discarded")
    fields = lines[2].split("\t")
    assert fields[0] == "pymatching, d=3, p=0.003, r=3"
    (row,) = merge_rows(read_rows(gap_csv)).values()
    pts = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)
    best = max((p for p in pts if p.discard_rate <= 0.1), key=lambda p: p.discard_rate)
    assert fields[1:6] == [str(best.threshold), f"{best.discard_rate:.4g}", str(best.kept), str(best.kept_errors),
                           f"{best.fit.best:.4g}"]
    assert float(fields[6]) <= float(fields[5]) <= float(fields[7]) and float(fields[2]) <= 0.1
    _one_line_error(capsys, main(["threshold", str(gap_csv), "--max-discard", "1.5"]), "--max-discard")


def test_plot_discard_vs_error(gap_csv, tmp_path, capsys):
    png = tmp_path / "d.png"
    assert main(["plot", str(gap_csv), "--y", "discard_vs_error", "--out", str(png)]) == 0
    assert png.stat().st_size > 10_000
    assert main(["plot", str(gap_csv), "--y", "discard_vs_error", "--xscale", "linear", "--out", str(png)]) == 0
    capsys.readouterr()
    _one_line_error(capsys, main(["plot", str(gap_csv), "--y", "discard_vs_error", "--x", "d", "--out", str(png)]),
                    "--x does not apply")
    plain = tmp_path / "plain.csv"
    with StatsWriter(plain, fsync=False) as w:
        w.append(StatsRow("id", "pymatching", {"d": 3, "p": 0.01}, shots=100, errors=3))
    _one_line_error(capsys, main(["plot", str(plain), "--y", "discard_vs_error", "--out", str(png)]),
                    "no row has a gap histogram")
    _one_line_error(capsys, main(["threshold", str(plain), "--max-discard", "0.01"]), "no row has a gap histogram")
