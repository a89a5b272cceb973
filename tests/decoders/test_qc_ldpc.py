"""The 5G NR LDPC block decoders: fixed-point formats, schedules, and no error floor from saturation."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from qdecode.codes.nr5g import Nr5gCode
from qdecode.decoders.qc_ldpc import QcMinSumDecoder, QcSpaDecoder
from qdecode.errors import InputError
from qdecode.sims.channels import BpskAwgn


@functools.cache
def _frames(ebn0: float, frames: int = 512):
    code = Nr5gCode.from_params(bg=2, K=512, E=1024)
    rng = np.random.default_rng(int(ebn0 * 100))
    msgs = rng.integers(0, 2, size=(frames, code.k), dtype=np.uint8)
    sent = code.encode(msgs)
    return code, msgs, sent, BpskAwgn(ebn0_db=ebn0, rate=0.5).transmit(sent, rng)


@pytest.mark.parametrize("kw", [{}, {"bits": 16, "frac_bits": 6}, {"schedule": "flooding", "max_iter": 30},
                                {"correction": "normalized"}])
def test_no_error_floor_at_high_snr(kw):
    """At 8 dB every frame decodes: large channel LLRs are clipped below one message, so a check can overturn
    any wrong bit (with channel LLRs up to the posterior limit, some of these frames kept a wrong parity bit)."""
    code, msgs, sent, llr = _frames(8.0)
    dec = QcMinSumDecoder(code, **kw)
    assert np.array_equal(dec.decode_llr_batch(llr), sent)
    assert dec.last_info.converged.all() and (dec.last_info.iterations <= dec.params["max_iter"]).all()


def test_early_stop_saves_iterations_and_keeps_decisions():
    code, msgs, sent, llr = _frames(2.25)
    stop = QcMinSumDecoder(code)
    full = QcMinSumDecoder(code, early_stop=False)
    a, b = stop.decode_llr_batch(llr), full.decode_llr_batch(llr)
    assert stop.last_info.iterations.mean() < 0.6 * full.last_info.iterations.mean()
    both = stop.last_info.converged & full.last_info.converged
    assert both.sum() > 400 and np.array_equal(a[both], b[both])


def test_mother_word_carries_the_message_and_formats_agree_on_clean_frames():
    code, msgs, sent, llr = _frames(3.0)
    for kw in ({}, {"bits": 16, "frac_bits": 6}):
        mother = QcMinSumDecoder(code, **kw).decode_mother_llr_batch(llr)
        assert mother.shape == (len(msgs), code.n_mother)
        assert np.array_equal(mother[:, :code.k], msgs)


def test_spa_reference_is_at_least_as_good_as_flooding_min_sum():
    code, msgs, sent, llr = _frames(1.5, 600)
    spa = QcSpaDecoder(code, max_iter=20)
    ms = QcMinSumDecoder(code, bits=16, frac_bits=6, max_iter=20, schedule="flooding")
    e_spa = int((spa.decode_llr_batch(llr) != sent).any(axis=1).sum())
    e_ms = int((ms.decode_llr_batch(llr) != sent).any(axis=1).sum())
    assert e_ms > 20 and e_spa <= e_ms


def test_quantisation_grid():
    code = Nr5gCode.from_params(bg=2, K=500, E=1000)  # 140 fillers
    dec = QcMinSumDecoder(code)
    q = dec.quantize(code.rate_recover(np.array([[100.0] * 500 + [-0.3] * 500])))
    assert q.dtype == np.int8 and q.max() == 127  # fillers: known zeros at the posterior limit
    assert dec.channel_lim == 31 - 2 - 1 and set(np.unique(q)) <= {-1, 0, 28, 127}


def test_not_a_5g_code_is_refused():
    from qdecode.codes.catalog import get_code

    with pytest.raises(InputError, match="needs a 5G NR LDPC code"):
        QcMinSumDecoder(get_code("bch63_45"))


@pytest.mark.parametrize("spec", [dict(bg=2, K=500, E=1000), dict(bg=2, K=100, E=2000, Qm=2, rv=1),
                                  dict(bg=1, K=600, E=1212, Qm=6, rv=3)])
@pytest.mark.parametrize("bits", [8, 16])
def test_one_pass_quantisation_equals_rate_recovery_then_quantisation(spec, bits):
    """The numba pass (fillers, repetitions, interleaving, clipping) against the numpy path of the same grid."""
    code = Nr5gCode.from_params(**spec)
    dec = QcMinSumDecoder(code, bits=bits, frac_bits=2 if bits == 8 else 6)
    llr = 4.0 * np.random.default_rng(5).standard_normal((7, code.E))
    assert np.array_equal(dec.quantize_sent(llr), dec.quantize(code.rate_recover(llr)))
