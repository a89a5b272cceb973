"""`qdecode predict --gap-out`: one confidence line per shot beside the observable predictions."""

from __future__ import annotations

import numpy as np
import pytest
import stim

from qdecode.cli.main import main
from qdecode.cli.predict import write_gaps
from qdecode.decoders.matching import MatchingDecoder
from qdecode.problem import DecodingProblem


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("predict_gap")
    c = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                               after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    dem = c.detector_error_model(decompose_errors=True)
    (d / "model.dem").write_text(str(dem))
    dets = c.compile_detector_sampler(seed=5).sample(300)
    stim.write_shot_data_file(data=dets, path=d / "dets.b8", format="b8", num_detectors=dem.num_detectors)
    return d, dem, dets.astype(np.uint8)


def test_gap_out_writes_one_line_per_shot(files, tmp_path):
    d, dem, dets = files
    obs_out, gap_out = tmp_path / "obs.01", tmp_path / "gap.txt"
    assert main(["predict", "--dem", str(d / "model.dem"), "--dets", str(d / "dets.b8"), "--decoder", "pymatching",
                 "--obs-out", str(obs_out), "--gap-out", str(gap_out)]) == 0
    lines = gap_out.read_text().splitlines()
    assert len(lines) == len(dets)
    obs, gap = MatchingDecoder(DecodingProblem.from_dem(dem)).predict_with_confidence(dets)
    assert lines == ["%.3f" % g for g in gap.tolist()]
    got = stim.read_shot_data_file(path=obs_out, format="01", num_observables=1)
    assert np.array_equal(got.astype(np.uint8), obs)
    # the observable output is the one without --gap-out
    plain = tmp_path / "plain.01"
    assert main(["predict", "--dem", str(d / "model.dem"), "--dets", str(d / "dets.b8"), "--decoder", "pymatching",
                 "--obs-out", str(plain)]) == 0
    assert plain.read_text() == obs_out.read_text()


def test_gap_format(tmp_path):
    path = tmp_path / "g.txt"
    write_gaps(str(path), np.array([1.23456, np.inf, np.nan, 0.0], dtype=np.float32))
    assert path.read_text() == "1.235\ninf\nnan\n0.000\n"


def test_decoder_without_a_confidence_is_refused_before_decoding(files, tmp_path, capsys):
    d, _, _ = files
    capsys.readouterr()
    gap_out = tmp_path / "gap.txt"
    # the shot file does not exist: the decoder is refused before it is read
    code = main(["predict", "--dem", str(d / "model.dem"), "--dets", str(tmp_path / "missing.b8"),
                 "--decoder", "uf", "--obs-out", str(tmp_path / "o"), "--gap-out", str(gap_out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "uf gives no confidence" in err and "pymatching" in err
    assert not gap_out.exists() and not (tmp_path / "o").exists()
