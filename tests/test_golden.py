"""Golden vectors from tests/data/generate.py (stim + PyMatching as oracles)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import stim

from qdecode.cli.main import main
from qdecode.decoders import DecoderSpec
from qdecode.problem import DecodingProblem

DATA = Path(__file__).resolve().parent / "data"


def test_problem_columns_match_independent_merge():
    prob = DecodingProblem.from_dem(stim.DetectorErrorModel.from_file(DATA / "surface_d3.dem"))
    ref = json.loads((DATA / "surface_d3_columns.json").read_text())
    assert prob.num_errors == ref["num_columns"]
    np.testing.assert_allclose(prob.priors.sum(), ref["sum_priors"], rtol=1e-12)


def test_predictions_match_pymatching_golden(tmp_path):
    dem = stim.DetectorErrorModel.from_file(DATA / "surface_d3.dem")
    dets = stim.read_shot_data_file(path=DATA / "surface_d3_dets.b8", format="b8", num_detectors=dem.num_detectors,
                                    bit_packed=True)
    dec = DecoderSpec.create("pymatching").build(DecodingProblem.from_dem(dem))
    got = np.unpackbits(dec.predict_observables_packed(dets), axis=1, count=1, bitorder="little")
    want = stim.read_shot_data_file(path=DATA / "surface_d3_pymatching.01", format="01", num_observables=1)
    np.testing.assert_array_equal(got.astype(bool), want)
    out = tmp_path / "pred.01"
    assert main(["predict", "--dem", str(DATA / "surface_d3.dem"), "--dets", str(DATA / "surface_d3_dets.b8"),
                 "--decoder", "pymatching", "--obs-out", str(out)]) == 0
    assert out.read_text() == (DATA / "surface_d3_pymatching.01").read_text()
