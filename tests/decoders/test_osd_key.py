"""OSD ordered by the posterior history: the kernels' history sums, and ``bposd[osd_key=...]``."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders import DecoderSpec, UnknownDecoderError
from qdecode.decoders.bp import BpDecoder
from qdecode.decoders.bposd import BpOsdDecoder, history_length
from qdecode.kernels.minsum import HISTORY_MIN
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit


@pytest.fixture(scope="module")
def surface5():
    c = build_circuit("surface", d=5, noise="sd6", p=0.012, basis="Z", memory_basis_only=True)
    dets = c.compile_detector_sampler(seed=4).sample(40).astype(np.uint8)
    return DecodingProblem.from_dem(decoding_dem(c)), dets


def _history_by_reruns(prob, dets, k, **bp):
    """Independent route: iteration t's posterior is the output of a run limited to t iterations.

    Shots that did not converge get the sum over their last k iterations (``k = HISTORY_MIN``: the minimum over
    all of them); converged ones the last posterior.
    """
    dec = BpDecoder(prob, **bp)
    _, last, conv, iters = dec._run(dec.prior_llr, dets, True)
    assert 0 < conv.sum() < len(dets)  # both kinds of shot are tested
    out = last.copy()
    for s in np.flatnonzero(~conv):
        T = int(iters[s])
        acc = None
        for t in range(1 if k == HISTORY_MIN else max(1, T - k + 1), T + 1):
            limited = BpDecoder(prob, **{**bp, "max_iter": t})
            _, post, _, _ = limited._run(limited.prior_llr, dets[s:s + 1], True)
            fold = np.minimum if k == HISTORY_MIN else np.add
            acc = post[0].copy() if acc is None else fold(acc, post[0])
        out[s] = acc
    return out


@pytest.mark.parametrize("bp", [
    {},
    {"alpha": 0.0},
    {"schedule": "layered"},
    {"method": "productsum"},
    {"bits": 8, "frac_bits": 3, "alpha": 0.625},
    {"bits": 16, "frac_bits": 8},
    {"dtype": "float32"},
    {"schedule": "layered", "bits": 8, "frac_bits": 3},
])
@pytest.mark.parametrize("k", [2, 4, HISTORY_MIN])
def test_history_sum_matches_reruns(surface5, bp, k):
    prob, dets = surface5
    bp = {"max_iter": 12, **bp}
    dec = BpDecoder(prob, **bp)
    want = _history_by_reruns(prob, dets[:12], k, **bp)
    for rows in (slice(0, 12), slice(0, 3)):  # lanes (>= 4 shots) and scalar (< 4 shots) paths
        hard, post, conv, iters = dec._run(dec.prior_llr, dets[rows], True, k)
        np.testing.assert_array_equal(post, want[rows])
        h1, _, c1, i1 = dec._run(dec.prior_llr, dets[rows], True, 1)
        np.testing.assert_array_equal(hard, h1)  # the history changes nothing else
        np.testing.assert_array_equal(iters, i1)


def test_history_of_one_is_the_last_posterior(surface5):
    prob, dets = surface5
    dec = BpDecoder(prob, max_iter=12)
    a = dec._run(dec.prior_llr, dets, True, 1)[1]
    b = dec.decode_soft_batch(dets)[1]
    np.testing.assert_array_equal(a, b)


def test_osd_key_parameter_and_labels(surface5):
    prob, dets = surface5
    before = "bposd[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=10,schedule=flooding]"
    assert DecoderSpec.create("bposd", {"osd_key": "last"}).label() == before  # labels recorded before osd_key
    assert dict(DecoderSpec.from_label(before).params)["osd_key"] == "last"  # ... keep their meaning
    assert DecoderSpec.create("bposd", {}).label() == before.replace("osd_order", "osd_key=sum4,osd_order")
    assert "osd_key=sum4" in DecoderSpec.create("bposd", {"osd_key": "sum4"}).label()
    assert "osd_key=sum4" in DecoderSpec.create("bposd-e", {"osd_key": "sum4"}).label()
    with pytest.raises(UnknownDecoderError, match="osd_key"):
        DecoderSpec.create("bposd", {"osd_key": "sum5"})
    assert [history_length(k) for k in ("last", "sum2", "sum8", "min")] == [1, 2, 8, HISTORY_MIN]
    assert "osd_key=min" in DecoderSpec.create("bposd", {"osd_key": "min"}).label()
    assert "lsd_key=min" in DecoderSpec.create("bplsd", {"lsd_key": "min"}).label()
    last = BpOsdDecoder(prob, max_iter=12, osd_key="last")
    assert last.osd_key == "last"
    summed = BpOsdDecoder(prob, max_iter=12, osd_key="sum4")
    running_min = BpOsdDecoder(prob, max_iter=12, osd_key="min")
    for dec in (last, summed, running_min):  # OSD answers satisfy the syndrome whatever the order
        e = dec.decode_batch(dets)
        np.testing.assert_array_equal((prob.H @ e.T % 2).T, dets)
