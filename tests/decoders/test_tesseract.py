"""``tesseract``: the registry entry against Tesseract's own sinter presets, on the same shots."""

from __future__ import annotations

import numpy as np
import pytest
import stim
import tesseract_decoder

import qdecode
from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.tesseract_decoder import BEAM_PRESETS, SPARSIFY_BASE_DEGREE

#: registry parameters -> the authors' sinter preset they reproduce
PRESETS = {
    ("long", "none"): "tesseract-long-beam",
    ("short", "none"): "tesseract-short-beam",
    ("short", "color"): "tesseract-short-beam-sparsify-color-code-like",
    ("long", "surface"): "tesseract-long-beam-sparsify-surface-code-like",
}


def _colour_shots(shots: int = 400):
    circuit = stim.Circuit.generated("color_code:memory_xyz", distance=3, rounds=3,
                                     after_clifford_depolarization=0.004, before_measure_flip_probability=0.004)
    dem = circuit.detector_error_model()
    dets, obs = circuit.compile_detector_sampler(seed=5).sample(shots, separate_observables=True, bit_packed=True)
    return dem, dets, obs


def test_preset_table_matches_the_authors_presets():
    presets = tesseract_decoder.make_tesseract_sinter_decoders_dict()
    for (beam, sparsify), name in PRESETS.items():
        theirs = presets[name]
        assert (theirs.det_beam, theirs.num_det_orders, theirs.pqlimit) == BEAM_PRESETS[beam], name
        assert theirs.sparsify_errors == (sparsify != "none") and theirs.sparsify_base_degree == \
            SPARSIFY_BASE_DEGREE[sparsify], name
    assert presets["tesseract"].det_beam == BEAM_PRESETS["long"][0]


@pytest.mark.parametrize("beam,sparsify", sorted(PRESETS))
def test_same_predictions_as_the_preset_on_the_same_shots(beam, sparsify):
    dem, dets, obs = _colour_shots()
    ours = qdecode.decoder("tesseract", dem, beam=beam, sparsify=sparsify).predict_observables_packed(dets)
    preset = tesseract_decoder.make_tesseract_sinter_decoders_dict()[PRESETS[(beam, sparsify)]]
    theirs = preset.compile_decoder_for_dem(dem=dem).decode_shots_bit_packed(bit_packed_detection_event_data=dets)
    assert np.array_equal(ours, np.asarray(theirs, dtype=np.uint8).reshape(ours.shape))
    assert np.count_nonzero(np.any(ours != obs, axis=1)) < 0.1 * dets.shape[0]  # it decodes


def test_errors_above_one_half_are_complemented_exactly():
    """Tesseract searches positive weights only: a p > 1/2 error is decoded as its complement; the
    answers equal exact MLE on every syndrome of a small model."""
    dem = stim.DetectorErrorModel("error(0.7) D0 L0\nerror(0.1) D0 D1\nerror(0.2) D1 L0\nerror(0.05) D1")
    dets = np.array([[a, b] for a in (0, 1) for b in (0, 1)], dtype=np.uint8)
    ours = qdecode.decoder("tesseract", dem).predict_observables_batch(dets)
    exact = qdecode.decoder("mle", dem).predict_observables_batch(dets)
    assert np.array_equal(ours, exact)


def test_decode_batch_says_observables_only():
    dem, _, _ = _colour_shots(1)
    dec = qdecode.decoder("tesseract", dem, beam="short")
    with pytest.raises(DecoderInputError, match="observable flips only"):
        dec.decode_batch(np.zeros((1, dem.num_detectors), dtype=np.uint8))
