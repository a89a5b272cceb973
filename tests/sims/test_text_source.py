"""Text message source of classical sweeps: disjoint from the LM text, paired blocks, end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from qdecode.decoders.lm_prior import corpus_bytes, corpus_split
from qdecode.sims.classical_points import ClassicalRecipe, run_classical_batch
from qdecode.sims.text_source import bits_to_bytes, bytes_to_bits, heldout_text_blocks, text_batch


def test_text_blocks_are_disjoint_from_lm_text():
    lm, test = corpus_split()
    data = corpus_bytes()
    assert lm + test == data and len(lm) == int(0.8 * len(data))
    blocks = heldout_text_blocks(8)
    assert blocks.tobytes() == test[: blocks.size]  # blocks come from the test part only, in order
    assert all(32 <= b <= 126 or b == 10 for b in set(data))
    # consecutive rows and the true previous bytes
    rows, prev = text_batch(np.random.default_rng(1), 50, 8, context=3)
    assert np.array_equal(prev[1:], rows[:-1, -3:])
    assert rows.tobytes() in (test * 2)


def test_bit_order_matches_rs_symbols():
    from qdecode.codes.catalog import get_code

    rs = get_code("rs16_8")
    b = np.random.default_rng(0).integers(0, 256, size=(5, 8)).astype(np.uint8)
    assert np.array_equal(bytes_to_bits(b), rs.to_bits(b.astype(np.int64)))
    assert np.array_equal(bits_to_bytes(bytes_to_bits(b)), b)


class _Recorder:
    def __init__(self):
        self.llr = None

    def decode_llr_batch(self, llr):
        self.llr = np.array(llr)
        return (llr <= 0).astype(np.uint8)


def test_text_source_metadata_and_paired_blocks():
    text = ClassicalRecipe(code="bch127_64", noise="awgn", ebn0=2.0, source="text")
    uni = ClassicalRecipe(code="bch127_64", noise="awgn", ebn0=2.0)
    assert text.metadata()["source"] == "text" and "source" not in uni.metadata()
    assert text.strong_id("osd", text.metadata()) != uni.strong_id("osd", uni.metadata())
    with pytest.raises(ValueError, match="source"):
        ClassicalRecipe(code="bch127_64", noise="awgn", ebn0=2.0, source="klingon")
    code, ch = text.build_code(), text.build_channel(64 / 127)
    a, b = _Recorder(), _Recorder()
    _, counts = run_classical_batch(code, ch, a, 99, 64, source="text")
    run_classical_batch(code, ch, b, 99, 64, source="text")
    assert np.array_equal(a.llr, b.llr) and "byte_errors" in counts


def test_inline_sweep_text_source_end_to_end(tmp_path):
    from qdecode.cli.main import main
    from qdecode.sims.store import read_rows

    out = tmp_path / "s.csv"
    rc = main(["sweep", "--code", "bch127_64", "--noise", "awgn", "--ebn0", "2.0", "--source", "text",
               "--decoder", "sem-osd", "--decoder", "osd", "--max-shots", "64", "--out", str(out),
               "--workers", "0", "--quiet"])
    assert rc == 0
    rows = read_rows(out)
    assert {r.decoder.split("[")[0] for r in rows} == {"sem-osd", "osd"}
    for r in rows:
        meta = r.json_metadata if isinstance(r.json_metadata, dict) else json.loads(r.json_metadata)
        assert meta["source"] == "text" and r.shots == 64 and "byte_errors" in r.custom_counts
    sem = next(r for r in rows if r.decoder.startswith("sem-osd"))
    assert (sem.custom_counts["reencodings"] > 0
            and sem.errors <= next(r for r in rows if r.decoder.startswith("osd")).errors)
