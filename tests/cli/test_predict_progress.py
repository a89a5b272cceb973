"""``qdecode predict`` shows progress on long runs (issue 43): it decodes in blocks and advances a
ProgressBar on stderr after each; stdout and the output files are the same with and without it."""

from __future__ import annotations

import io
import sys
import types

import numpy as np
import pytest
import stim

import qdecode.cli.progress as progress
from qdecode.cli.main import main
from qdecode.cli.predict import MAX_BLOCK, decode_blocks, next_block


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("predict_progress")
    c = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                               after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    dem = c.detector_error_model(decompose_errors=True)
    (d / "model.dem").write_text(str(dem))
    dets = c.compile_detector_sampler(seed=7).sample(3000)
    stim.write_shot_data_file(data=dets, path=d / "dets.b8", format="b8", num_detectors=dem.num_detectors)
    return d


def _predict(d, name, decoder, *extra):
    return ["predict", "--dem", str(d / "model.dem"), "--dets", str(d / "dets.b8"), "--dets-format", "b8",
            "--decoder", decoder, "--obs-out", str(d / f"{name}.01"), *extra]


@pytest.mark.parametrize("decoder, gap", [("pymatching", True), ("bposd", False)])
def test_progress_on_a_terminal_same_output(files, decoder, gap, capsys, monkeypatch):
    extra = lambda name: ["--gap-out", str(files / f"{name}.gap")] if gap else []  # noqa: E731
    capsys.readouterr()
    assert main([*_predict(files, "quiet", decoder, "--quiet"), *extra("quiet")]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out == ""
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    assert main([*_predict(files, "bar", decoder), *extra("bar")]) == 0
    monkeypatch.undo()
    assert "predict:" in fake.getvalue() and "/3000" in fake.getvalue()  # a bar over the 3000 shots
    assert capsys.readouterr().out == ""  # progress never on stdout
    assert (files / "bar.01").read_bytes() == (files / "quiet.01").read_bytes()
    if gap:
        assert (files / "bar.gap").read_text() == (files / "quiet.gap").read_text()


def test_plain_lines_without_a_terminal(files, capsys, monkeypatch):
    capsys.readouterr()
    assert main(_predict(files, "silent", "pymatching")) == 0
    assert capsys.readouterr().err == ""  # quicker than LINE_INTERVAL: nothing, as bench and tune
    monkeypatch.setattr(progress, "LINE_INTERVAL", 0.0)
    assert main(_predict(files, "lines", "pymatching")) == 0
    err = capsys.readouterr().err
    assert "qdecode predict: " in err and "/3000 shot" in err and "\r" not in err
    assert (files / "lines.01").read_bytes() == (files / "silent.01").read_bytes()


def test_blocks_give_the_arrays_of_one_call(files):
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem

    dem = stim.DetectorErrorModel.from_file(files / "model.dem")
    packed = stim.read_shot_data_file(path=files / "dets.b8", format="b8", num_detectors=dem.num_detectors,
                                      bit_packed=True)
    dec = DecoderSpec.parse("pymatching", []).build(DecodingProblem.from_dem(dem))
    sizes = []
    preds, gaps = decode_blocks(dec, packed, confidence=True, advance=sizes.append)
    assert len(sizes) > 2 and sum(sizes) == len(packed)  # several blocks
    one, one_gap = dec.predict_with_confidence_packed(packed)
    np.testing.assert_array_equal(preds, one)
    np.testing.assert_array_equal(gaps, one_gap)
    assert decode_blocks(dec, packed[:0], confidence=False)[0].shape == (0, 1)  # zero shots: one empty call


def test_next_block_sizes_blocks_to_about_a_second():
    assert next_block(0, 0.0, 0) == 16
    assert next_block(16, 16 * 2e-6, 16) == 128  # fast: grows 8x a step ...
    assert next_block(10**5, 10**5 * 2e-6, 8192) == MAX_BLOCK  # ... up to the sweep's call size
    assert next_block(16, 16 * 0.49, 16) == 2  # Tesseract-slow: about a second per block
    assert next_block(16, 16 * 5.0, 16) == 1


def test_a_slow_decoder_advances_the_bar_block_by_block(monkeypatch):
    """A decoder at 0.1 s per shot (on a simulated CPU clock) is decoded in blocks of about 10 shots."""
    import time

    clock = [0.0]

    def slow(block):
        clock[0] += 0.1 * len(block)
        return np.zeros((len(block), 1), dtype=np.uint8)

    monkeypatch.setattr(time, "process_time", lambda: clock[0])
    sizes = []
    dec = types.SimpleNamespace(predict_observables_packed=slow)
    decode_blocks(dec, np.zeros((100, 1), dtype=np.uint8), confidence=False, advance=sizes.append)
    assert sizes[0] == 16 and max(sizes[1:]) <= 10 and sum(sizes) == 100
