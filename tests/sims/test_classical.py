"""Classical sweep points: recipes, tasks, seeded batches, the ML lower bound, CLI sweep + plot."""

from __future__ import annotations

import pytest

from qdecode.decoders.registry import DecoderSpec
from qdecode.sims.classical_points import BinaryCode, ClassicalRecipe, run_classical_batch
from qdecode.sims.recipe import RecipeError, parse_recipe
from qdecode.sims.tasks import describe_task


def _recipe(**task):
    return parse_recipe({"tasks": [task]}, source="t.toml")


def test_recipe_expands_ebn0_times_decoders():
    r = _recipe(code="bch127_64", noise="awgn", ebn0=[2.0, 3], decoders=["bm", "osd[order=1]"])
    assert len(r.tasks) == 4
    t = r.tasks[0]
    assert t.classical.code == "bch127_64" and t.classical.ebn0 == 2.0 and t.decoder.label() == "bm"
    meta = describe_task(t).json_metadata
    assert meta == {"code": "bch127_64", "noise": "awgn", "n": 127, "k": 64, "ebn0": 2.0}
    ids = {describe_task(t).strong_id for t in r.tasks}
    assert len(ids) == 4
    # RS runs on its binary image
    rs = _recipe(code="rs16_8", noise="bsc", p=0.01, decoders=["bm"]).tasks[0]
    assert describe_task(rs).json_metadata["n"] == 128 and describe_task(rs).json_metadata["k"] == 64


@pytest.mark.parametrize("task, match", [
    (dict(code="bch127_64", noise="awgn", ebn0=2, d=3, decoders=["bm"]), "does not apply"),
    (dict(code="surface", d=3, noise="sd6", p=0.01, ebn0=2, decoders=["pymatching"]), "classical codes only"),
    (dict(code="bch127_64", noise="bsc", ebn0=2, decoders=["bm"]), "takes p"),
    (dict(code="bch127_64", noise="awgn", p=0.1, decoders=["bm"]), "takes ebn0"),
    (dict(code="bch127_64", noise="sd6", ebn0=2, decoders=["bm"]), "unknown channel"),
    (dict(code="bch127_64", noise="ge", channel={"p_gb": 0.1, "p_bg": 0.5, "sigma": 1}, decoders=["bm"]), "sigma"),
    (dict(code="bch127_64", noise="ge", channel={"p_gb": 2, "p_bg": 0.5}, decoders=["bm"]), "p_gb"),
    (dict(code="bch127_64", noise="awgn", ebn0=2, decoders=["pymatching"]), "quantum decoder"),
    (dict(code="surface", d=3, noise="sd6", p=0.01, decoders=["bm"]), "classical decoder"),
    (dict(code="bch127_64", noise="awgn", ebn0="x", decoders=["bm"]), "ebn0"),
    (dict(code="bch127_64", noise="awgn", ebn0=float("nan"), decoders=["bm"]), "finite"),
    (dict(code="bch127_64", noise="bsc", p=1.5, decoders=["bm"]), "p must lie"),
])
def test_bad_classical_recipes(task, match):
    with pytest.raises(RecipeError, match=match):
        _recipe(**task)


def test_batches_are_seeded_and_count_errors():
    from qdecode.codes.catalog import get_code

    view = BinaryCode.of(get_code("bch127_64"))
    chan = ClassicalRecipe("bch127_64", "awgn", ebn0=3.5).build_channel(view.rate)
    dec = DecoderSpec.create("bm").build(view.code)
    a = run_classical_batch(view, chan, dec, seed=5, shots=3000)
    assert run_classical_batch(view, chan, dec, seed=5, shots=3000) == a  # a batch replays from its seed
    c = run_classical_batch(view, chan, dec, seed=6, shots=3000)
    assert c != a
    errors, counts = a
    assert 0 < errors < 3000 and counts["bit_errors"] >= 11 * errors  # BM fails only with > t = 10 wrong bits
    assert counts["ml_lb"] <= errors


def test_ml_lower_bound_equals_errors_for_an_ml_decoder():
    """Exhaustive OSD (order k) is ML: every block error it makes is also an ML error."""
    from qdecode.codes.bch import BCHCode
    from qdecode.decoders.osd import OsdBlockDecoder

    view = BinaryCode.of(BCHCode(m=4, t=2))  # (15, 7)
    chan = ClassicalRecipe("bch127_64", "awgn", ebn0=1.0).build_channel(view.rate)
    ml = OsdBlockDecoder(G=view.code.G, order=7)
    errors, counts = run_classical_batch(view, chan, ml, seed=1, shots=2000)
    assert errors > 30 and counts["ml_lb"] == errors
    bm = DecoderSpec.create("bm").build(view.code)
    e_bm, c_bm = run_classical_batch(view, chan, bm, seed=1, shots=2000)
    assert e_bm > errors and c_bm["ml_lb"] <= errors  # same blocks: BM's ML-certain failures are ML failures


def test_inline_sweep_and_bler_plot(tmp_path, capsys):
    from qdecode.cli.main import main
    from qdecode.sims.store import read_rows

    out = tmp_path / "bch.csv"
    argv = ["sweep", "--code", "bch127_64", "--noise", "awgn", "--ebn0", "3,4", "--decoder", "osd",
            "--param", "order=1", "--max-shots", "3000", "--max-errors", "50", "--out", str(out), "--workers", "0",
            "--quiet"]
    assert main(argv) == 0
    rows = read_rows(out)
    assert {r.json_metadata["ebn0"] for r in rows} == {3.0, 4.0}
    assert all(r.decoder == "osd[order=1]" and "ml_lb" in r.custom_counts for r in rows)
    png = tmp_path / "bch.png"
    assert main(["plot", str(out), "--out", str(png)]) == 0 and png.stat().st_size > 1000
    from qdecode.cli.plot import _read, classical_references

    refs = classical_references(_read([str(out)]))
    assert refs[0][0].startswith("normal approximation")
    capsys.readouterr()
    assert main(["sweep", "--code", "bch127_64", "--noise", "awgn", "--ebn0", "3", "--p", "0.1", "--decoder", "bm",
                 "--out", str(out)]) == 2
    assert "not both" in capsys.readouterr().err


def test_sinter_decoders_are_quantum_only():
    from qdecode.sinter_adapter import sinter_decoders

    names = sinter_decoders()  # listed names; looking up a classical qd- name raises why (test_sinter_adapter.py)
    assert "qd-bposd" in names and "qd-bm" not in dict.keys(names) and "qd-osd" not in dict.keys(names)


@pytest.mark.parametrize("name, count", [("bch127_64", 29), ("rs16_8", 27), ("polar", 57), ("ge_bch", 8),
                                         ("sem_osd_ge", 61)])
def test_embedded_classical_recipes_parse(name, count):
    from qdecode.sims.recipe import load_recipe

    rec = load_recipe(name)
    assert len(rec.tasks) == count and all(t.classical is not None for t in rec.tasks)


@pytest.mark.parametrize("name, count", [("qldpc_decoders", 30), ("mle_reference", 14), ("color", 22)])
def test_embedded_decoder_comparison_recipes_parse(name, count):
    """The issue-21 comparison recipes expand to their tasks (code x p x decoder) with no sampling."""
    from qdecode.sims.recipe import load_recipe

    rec = load_recipe(name)
    assert len(rec.tasks) == count and all(t.classical is None for t in rec.tasks)
