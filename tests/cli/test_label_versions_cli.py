"""A changed default never pools with rows recorded under the old one, and the old spelling still resumes them."""

from __future__ import annotations

import csv

from qdecode.cli.main import main
from qdecode.decoders import DecoderSpec


def _rows(path):
    out = {}
    for row in csv.DictReader(path.open(), skipinitialspace=True):
        out[row["decoder"].strip()] = out.get(row["decoder"].strip(), 0) + int(row["shots"])
    return out


def test_old_and_new_bposd_defaults_are_two_curves(tmp_path):
    out = tmp_path / "stats.csv"
    common = ["sweep", "--code", "surface", "--d", "3", "--p", "0.01", "--noise", "si1000", "--out", str(out),
              "--quiet", "--max-errors", "1000000"]
    old = "bposd[osd_key=last]"  # what a CSV row labelled bposd[...] without osd_key was recorded as
    assert main([*common, "--decoder", old, "--max-shots", "300"]) == 0
    old_label = DecoderSpec.create("bposd", {"osd_key": "last"}).label()
    assert "osd_key" not in old_label and _rows(out) == {old_label: 300}
    assert main([*common, "--decoder", "bposd", "--max-shots", "200"]) == 0  # today's default: sum4
    new_label = DecoderSpec.create("bposd").label()
    assert "osd_key=sum4" in new_label
    assert _rows(out) == {old_label: 300, new_label: 200}
    # the recorded label itself, read back, is the old configuration: it resumes the old rows
    assert DecoderSpec.from_label(old_label) == DecoderSpec.create("bposd", {"osd_key": "last"})
    assert main([*common, "--decoder", old, "--max-shots", "500"]) == 0
    assert _rows(out) == {old_label: 500, new_label: 200}
