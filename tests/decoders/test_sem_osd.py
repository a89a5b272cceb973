"""sem-OSD: lambda = 0 is OSD, the pruned search equals scoring every candidate, fused LLRs and
forward-backward priors against brute force, table look-ups equal direct evaluation, bad input."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from qdecode.codes.catalog import get_code
from qdecode.decoders import lm_prior
from qdecode.decoders.classical_entries import binary_generator
from qdecode.decoders.lm_prior import KneserNey, LmPriorError, NgramPrior, corpus_split
from qdecode.decoders.osd import OsdBlockDecoder
from qdecode.decoders.sem_osd import SemOsdDecoder, message_bytes
from qdecode.kernels import sem_osd as ksem
from tests.kernels.sem_osd_reference import sem_osd_reference_decode


@pytest.fixture(scope="module")
def small_model() -> KneserNey:
    lm, _ = corpus_split()
    return KneserNey.train(lm[:60000], 4)


def _text_llr(code_name: str, ebn0: float, S: int, seed: int):
    code = get_code(code_name)
    G = binary_generator(code)
    _, test = corpus_split()
    blocks = np.frombuffer(test, dtype=np.uint8)[: S * 8].reshape(S, 8)
    msg = np.unpackbits(blocks, axis=1, bitorder="little")
    enc = getattr(code, "encode_bits", None) or code.encode
    cw = np.asarray(enc(msg), dtype=np.uint8)
    n, k = G.shape[1], G.shape[0]
    sigma2 = 1.0 / (2.0 * (k / n) * 10 ** (ebn0 / 10))
    rng = np.random.default_rng(seed)
    llr = 2.0 * ((1.0 - 2.0 * cw) + rng.normal(0.0, np.sqrt(sigma2), cw.shape)) / sigma2
    return G, blocks, cw, llr


@pytest.mark.parametrize("code_name,order", [("bch127_64", 1), ("bch127_64", 2), ("rs16_8", 2)])
def test_lambda_zero_is_plain_osd_exactly(code_name, order, small_model):
    G, _, _, llr = _text_llr(code_name, 1.0, 120, seed=7)
    osd = OsdBlockDecoder(G=G, order=order).decode_llr_batch(llr)
    sem = SemOsdDecoder(G, NgramPrior(model=small_model), order=order, lam=0.0, omega=2, union=True)
    out = sem.decode_llr_batch(llr)
    assert np.array_equal(out, osd)
    assert sem.last_info.counts()["lm_calls"] == 0


def test_sem_osd_beats_osd_on_text(small_model):
    G, blocks, cw, llr = _text_llr("bch127_64", 1.5, 150, seed=3)
    osd_err = int((OsdBlockDecoder(G=G, order=2).decode_llr_batch(llr) != cw).any(axis=1).sum())
    prior = NgramPrior(model=small_model)
    for context in ("decoded", "none"):
        sem = SemOsdDecoder(G, prior, order=2, context=context)
        dec = sem.decode_llr_batch(llr)
        err = int((dec != cw).any(axis=1).sum())
        assert err < osd_err, (context, err, osd_err)
        assert sem.last_info.counts()["reencodings"] >= 150 * 2 * 2081
    genie = SemOsdDecoder(G, prior, order=2, context="genie")
    ctx = np.zeros((150, 3), dtype=np.uint8)
    ctx[1:] = blocks[:-1, -3:]
    dec = genie.decode_llr_batch(llr, context_bytes=ctx)
    assert int((dec != cw).any(axis=1).sum()) < osd_err
    assert np.array_equal(message_bytes(cw, 8), blocks)


@pytest.mark.parametrize("code_name", ["bch127_64", "rs16_8"])
def test_pruned_search_equals_reference(code_name, small_model):
    """Bounds and table metrics only skip candidates that could not change the result."""
    G, _, cw, llr = _text_llr(code_name, 1.0, 60, seed=13)
    prior = NgramPrior(model=small_model)
    for kw in ({"omega": 1}, {"omega": 0}, {"omega": 2, "top_k": 3, "top_l": 2}, {"omega": 0, "union": False},
               {"order": 1}):
        sem = SemOsdDecoder(G, prior, **{"order": 2, **kw})
        ref, scored = sem_osd_reference_decode(sem, llr)
        got = sem.decode_llr_batch(llr)
        c = sem.last_info.counts()
        assert np.array_equal(got, ref), kw
        assert c["reencodings"] == int(scored.sum()), kw  # same candidates visited as scored there
        assert c["metric_evals"] < c["reencodings"] / 10, (kw, c)
    # lam = 0 with the bounds on: plain OSD
    osd = OsdBlockDecoder(G=G, order=2).decode_llr_batch(llr)
    assert np.array_equal(SemOsdDecoder(G, prior, order=2, lam=0.0).decode_llr_batch(llr), osd)


def test_order3_pruned_equals_reference(small_model):
    G, _, _, llr = _text_llr("bch127_64", 0.5, 6, seed=21)
    sem = SemOsdDecoder(G, NgramPrior(model=small_model), order=3, omega=0)
    assert np.array_equal(sem.decode_llr_batch(llr), sem_osd_reference_decode(sem, llr)[0])


def test_kn_table_lookup_is_bit_identical(small_model):
    rng = np.random.default_rng(4)
    _, test = corpus_split()
    t = np.frombuffer(test, dtype=np.uint8)
    ctx = rng.integers(0, 256, size=(300, 3)).astype(np.uint8)
    starts = rng.integers(0, t.size - 3, size=200)
    ctx[:200] = np.stack([t[s: s + 3] for s in starts])
    lens = rng.integers(0, 4, size=300)
    direct = small_model.dist_batch(ctx, lens)
    tab = small_model.dist_table()
    assert tab.shape == (1 + small_model.arrays.keys.size, 256)
    rows = [ksem.kn_row(ctx[i], lens[i], small_model.arrays) for i in range(300)]
    assert np.array_equal(tab[rows], direct)
    assert len(set(rows)) > 50


def test_fb_prior_table_equals_direct(small_model, monkeypatch):
    """The prior with table look-ups is bit for bit the prior evaluating the n-gram directly."""
    rng = np.random.default_rng(9)
    S = 40
    llr = rng.normal(1.5, 2.5, (S, 64)) * np.where(rng.random((S, 64)) < 0.5, 1, -1)
    ctx = rng.integers(32, 127, size=(S, 3)).astype(np.uint8)
    lens = rng.integers(0, 4, size=S)
    def fresh() -> KneserNey:  # a model without a cached table
        return KneserNey(small_model.order, small_model.arrays, small_model.inv_temp)

    with_table = NgramPrior(model=fresh()).batch(ctx, lens, llr)
    monkeypatch.setattr(lm_prior, "TABLE_MAX_BYTES", 0)
    direct_model = fresh()
    assert direct_model.dist_table().shape == (0, 256)
    direct = NgramPrior(model=direct_model).batch(ctx, lens, llr)
    assert np.array_equal(with_table, direct)


def test_byte_evidence_is_the_sequential_sum():
    rng = np.random.default_rng(1)
    llr = rng.normal(0.0, 4.0, 24)
    le = np.empty((3, 256))
    ksem.byte_evidence(llr, 3, le)
    for j in range(3):
        for b in (0, 1, 77, 128, 200, 255):
            s = 0.0
            for l in range(8):
                v = 0.5 * llr[8 * j + l]
                s = s - v if (b >> l) & 1 else s + v
            assert le[j, b] == s


def test_fused_llr_equals_brute_force_marginals():
    rng = np.random.default_rng(5)
    nb, lam = 2, 0.7
    llr = rng.normal(0.0, 3.0, 8 * nb + 5)
    logits = rng.normal(0.0, 2.0, (nb, 256))
    logpri = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    out = np.empty_like(llr)
    ksem.fused_llr(llr, nb, lam, logpri, out)
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1  # LSB first
    for j in range(nb):
        # P(byte) proportional to prior^lam * prod_l P(y_l | bit_l)
        logpost = lam * logpri[j] + ((1 - 2 * bits) * llr[8 * j: 8 * j + 8] / 2).sum(axis=1)
        post = np.exp(logpost - logpost.max())
        for l in range(8):
            want = np.log(post[bits[:, l] == 0].sum()) - np.log(post[bits[:, l] == 1].sum())
            assert out[8 * j + l] == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert np.array_equal(out[8 * nb:], llr[8 * nb:])  # parity keeps the channel LLRs
    ksem.fused_llr(llr, nb, 0.0, logpri, out)
    assert np.array_equal(out, llr)


@pytest.mark.parametrize("inv_temp", [1.0, 0.8])
def test_kneser_ney_sums_to_one(small_model, inv_temp):
    rng = np.random.default_rng(11)
    _, test = corpus_split()
    t = np.frombuffer(test, dtype=np.uint8)
    ctx = rng.integers(0, 256, size=(40, 3)).astype(np.uint8)
    starts = rng.integers(0, t.size - 3, size=20)
    ctx[:20] = np.stack([t[s: s + 3] for s in starts])
    lens = rng.integers(0, 4, size=40)
    p = small_model.dist_batch(ctx, lens, inv_temp=inv_temp)
    assert np.all(p > 0)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-12)


def test_forward_backward_equals_enumeration_two_bytes(small_model):
    """nb = 2 with an order-4 model: the chain is exact, so FB = brute force over 65536 pairs."""
    rng = np.random.default_rng(2)
    prior = NgramPrior(model=small_model, beam=256, prune=0.0)
    context = b"the"
    llr = rng.normal(2.0, 2.5, 16) * np.where(rng.random(16) < 0.5, 1, -1)
    got = prior(context, llr)
    ctx = np.frombuffer(context, dtype=np.uint8)
    p0 = small_model.dist(context)  # (256,)
    rows = np.stack([np.concatenate([ctx[1:], [a]]) for a in range(256)]).astype(np.uint8)
    T = small_model.dist_batch(rows, np.full(256, 3))  # T[a, b] = P(b | ctx[-2:], a)
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1
    ev = [np.exp(((1 - 2 * bits) * llr[8 * j: 8 * j + 8] / 2).sum(axis=1)) for j in range(2)]
    joint = p0[:, None] * T  # P(b0, b1 | context)
    want0 = (joint * ev[1][None, :]).sum(axis=1)
    want1 = (joint * ev[0][:, None]).sum(axis=0)
    for j, w in enumerate((want0, want1)):
        w = w / w.sum()
        assert np.allclose(np.exp(got[j]), w, rtol=1e-9, atol=1e-15)
        assert np.argmax(got[j]) == np.argmax(w)


def test_bad_inputs(small_model, tmp_path, monkeypatch):
    G = binary_generator(get_code("bch127_64"))
    prior = NgramPrior(model=small_model)
    with pytest.raises(ValueError, match="lam"):
        SemOsdDecoder(G, prior, lam=-0.5)
    with pytest.raises(ValueError, match="context"):
        SemOsdDecoder(G, prior, context="oracle")
    dec = SemOsdDecoder(G, prior)
    with pytest.raises(ValueError, match="shape"):
        dec.decode_llr_batch(np.zeros((2, 126)))
    with pytest.raises(ValueError, match="finite"):
        dec.decode_llr_batch(np.full((2, 127), np.nan))
    with pytest.raises(ValueError, match="only for context=genie"):
        dec.decode_llr_batch(np.ones((2, 127)), context_bytes=np.zeros((2, 3), dtype=np.uint8))
    genie = SemOsdDecoder(G, prior, context="genie")
    with pytest.raises(ValueError, match="needs context_bytes"):
        genie.decode_llr_batch(np.ones((2, 127)))
    with pytest.raises(ValueError, match="whole number of message bytes"):
        SemOsdDecoder(np.hstack([np.eye(12, dtype=np.uint8), np.ones((12, 5), dtype=np.uint8)]), prior)
    # registry: parameters validated
    from qdecode.decoders.registry import DecoderSpec, UnknownDecoderError

    with pytest.raises(UnknownDecoderError):
        DecoderSpec.create("sem-osd", {"lam": -1})
    # a corrupt cache file is a clear error
    monkeypatch.setenv("QDECODE_LM_CACHE", str(tmp_path))
    lm_prior.load_kneser_ney(2)  # trains and caches the (cheap) bigram
    (path,) = tmp_path.glob("kn_byte_o2_*.npz")
    path.write_bytes(b"not an npz")
    with pytest.raises(LmPriorError, match="corrupt"):
        lm_prior.load_kneser_ney(2)
    # a missing corpus is a clear error
    lm_prior.corpus_bytes.cache_clear()
    monkeypatch.setitem(sys.modules, "pydoc_data.topics", None)
    try:
        with pytest.raises(LmPriorError, match="pydoc_data.topics"):
            lm_prior.corpus_bytes()
    finally:
        monkeypatch.delitem(sys.modules, "pydoc_data.topics")
        lm_prior.corpus_bytes.cache_clear()


class _RecordingPrior:
    """A flat prior that records the contexts it is given (context longer than one block)."""

    context_len = 20
    label = "flat"

    def batch(self, contexts, lengths, llr):
        self.seen = (np.array(contexts), np.array(lengths))
        return np.full((llr.shape[0], llr.shape[1] // 8, 256), -np.log(256.0))


def test_decoded_context_reads_back_over_several_blocks():
    G, blocks, cw, _ = _text_llr("bch127_64", 1.0, 6, seed=1)
    llr = 9.0 * (1.0 - 2.0 * cw.astype(np.float64))  # noiseless: pass 1 decides the truth
    prior = _RecordingPrior()
    sem = SemOsdDecoder(G, prior, order=1, context="decoded")
    assert np.array_equal(sem.decode_llr_batch(llr), cw)
    ctx, lens = prior.seen
    assert ctx.shape == (6, 20) and list(lens) == [0, 8, 16, 20, 20, 20]
    flat = blocks.reshape(-1)
    for s in range(1, 6):
        assert np.array_equal(ctx[s, : lens[s]], flat[8 * s - lens[s]: 8 * s])


def test_transformer_prior_in_sem_osd():
    from qdecode.decoders.lm_transformer import TransformerPrior
    from qdecode.decoders.registry import DecoderSpec

    code = get_code("bch127_64")
    spec = DecoderSpec.create("sem-osd", {"prior": "transformer"})
    ngram_spec = DecoderSpec.create("sem-osd")
    assert "prior=transformer" in spec.label() and "prior" not in ngram_spec.label()
    assert spec.label() != ngram_spec.label()
    dec = spec.build(code)
    assert isinstance(dec.prior, TransformerPrior) and dec.context_len == dec.prior.context_len
    assert dec.prior.label != NgramPrior(order=4).label
    G, blocks, cw, llr = _text_llr("bch127_64", 1.5, 40, seed=5)
    noiseless = 6.0 * (1.0 - 2.0 * cw.astype(np.float64))
    for context in ("decoded", "none"):
        d = SemOsdDecoder(G, "transformer", order=1, context=context)
        assert np.array_equal(d.decode_llr_batch(noiseless), cw)
        assert d.last_info.counts()["lm_calls"] == 40  # one network evaluation per block
    genie = SemOsdDecoder(G, "transformer", order=1, context="genie")
    flat = np.concatenate([np.zeros(32, np.uint8), blocks.reshape(-1)])
    prev = np.stack([flat[8 * s: 8 * s + 32] for s in range(40)])  # the true 32 bytes before each block
    assert np.array_equal(genie.decode_llr_batch(noiseless, context_bytes=prev), cw)
    # lam = 0 is still plain OSD with the transformer prior
    osd = OsdBlockDecoder(G=G, order=2).decode_llr_batch(llr)
    assert np.array_equal(SemOsdDecoder(G, "transformer", order=2, lam=0.0).decode_llr_batch(llr), osd)
    with pytest.raises(ValueError, match="prior must be"):
        SemOsdDecoder(G, "bigram")
