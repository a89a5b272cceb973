"""Conformance of every registered block decoder (registry kind ``classical``) to the protocol.

The classical counterpart of ``test_conformance.py``: the decoder list comes from the registry at
collection time, so a newly registered ``classical`` decoder fails here until :data:`CODES` names
the codes it decodes. The contract is :class:`qdecode.decoders.block.BlockDecoder`'s; per decoder
and code this checks:

* the protocol: a ``BlockDecoder`` with ``code``, ``n`` and ``k`` of the code's binary view;
  ``message_bits`` inverts the encoder;
* the all-zero codeword at high SNR decodes to zero, and so does the noiseless all-zero word;
* outputs are uint8 ``(S, n)`` codewords (``H c = 0``): every row for decoders with
  ``always_codeword`` (osd, sc, scl on codes without CRC, sem-osd, crisp), the rows with
  ``last_info.converged`` for the others (bm);
* the batch path and the single-block path agree (sem-osd with ``context=decoded`` reads the
  previous rows, so there only the first row, which has no context, is compared); the same
  inputs give the same outputs; identical blocks in one batch decode identically; S = 1 and
  S = 0 work;
* ``decode_hard_batch`` on noiseless hard words returns them;
* wrong shapes, a wrong ``n``, NaN (and, except for bm, infinite) LLRs, non-numeric input refuse
  with a one-line ``DecoderInputError`` (a ``ValueError``);
* at a moderate SNR the block errors are no more than those of hard-decision bounded-distance
  decoding (correct iff at most ``t = (d - 1) // 2`` hard-decision errors; ``d`` from the
  catalogue) on the same blocks, with a small slack for the soft decoders (exact for bm, which
  *is* a bounded-distance decoder: never worse); where the catalogue has no distance (5G NR LDPC),
  at most half the blocks with a hard-decision error fail.

crisp and sem-osd are slow per block, so they get few blocks (:data:`BLOCKS`).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from qdecode.codes.catalog import get_code
from qdecode.codes.catalog import get_entry as get_code_entry
from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.block import BlockDecoder
from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.sims.channels import BpskAwgn
from qdecode.sims.classical_points import BinaryCode

CLASSICAL = [name for name in decoder_names() if get_entry(name).kind == "classical"]

#: decoder -> the catalogue codes it is checked on.
CODES = {
    "bm": ["bch63_45", "rs16_8"],
    "osd": ["bch63_45", "polar32_16"],
    "sc": ["polar32_16", "pac32_16"],
    "scl": ["polar32_16", "pac32_16"],
    "crisp": ["polar32_16", "pac32_16"],
    "sem-osd": ["bch127_64"],
    "ldpc-ms": ["nr5g_bg2_512_1024"],
    "ldpc-spa": ["nr5g_bg2_512_1024"],
}
#: (decoder, code) -> registry parameters (defaults otherwise).
PARAMS = {
    ("crisp", "pac32_16"): ["model=pac32_16_map"],  # the shipped PAC model is the MAP-distilled one
}
#: moderate-SNR blocks per decoder (default 400).
BLOCKS = {"crisp": 60, "sem-osd": 40}
#: decoders whose messages are English text (sem-osd's LM prior is the point of the decoder).
TEXT = {"sem-osd"}
#: moderate Eb/N0 (dB) per code: a few to some tens of percent of hard-decision block errors.
EBN0 = {"bch63_45": 4.0, "rs16_8": 6.0, "polar32_16": 3.0, "pac32_16": 3.0, "bch127_64": 3.0,
        "nr5g_bg2_512_1024": 1.75}

CASES = [(name, code) for name in CLASSICAL for code in CODES.get(name, ["<none>"])]


@functools.cache
def _decoder(name: str, code_name: str) -> BlockDecoder:
    return DecoderSpec.create(name, PARAMS.get((name, code_name), [])).build(get_code(code_name))


@functools.cache
def _binary(code_name: str) -> BinaryCode:
    return BinaryCode.of(get_code(code_name))


def _messages(name: str, code: BinaryCode, shots: int, rng: np.random.Generator) -> np.ndarray:
    if name in TEXT:
        from qdecode.sims.text_source import bytes_to_bits, text_batch

        blocks, _ = text_batch(rng, shots, code.k // 8)
        return bytes_to_bits(blocks)
    return rng.integers(0, 2, (shots, code.k), dtype=np.uint8)


def _is_codeword(code: BinaryCode, words: np.ndarray) -> np.ndarray:
    if code.H is None:  # a rate-matched 5G NR code: a codeword re-encodes from its own message
        return (code.encode(code.code.message_bits(words)) == words).all(axis=1)
    return ~((words.astype(np.int64) @ code.H.T.astype(np.int64)) & 1).any(axis=1)


@functools.cache
def _moderate(name: str, code_name: str):
    """(messages, codewords, llr, decoded, last_info) at the code's moderate Eb/N0, fixed seed."""
    code = _binary(code_name)
    rng = np.random.default_rng(20260)
    msgs = _messages(name, code, BLOCKS.get(name, 400), rng)
    cw = code.encode(msgs)
    llr = BpskAwgn(EBN0[code_name], code.rate).transmit(cw, rng)
    dec = _decoder(name, code_name)
    out = dec.decode_llr_batch(llr)
    return msgs, cw, llr, out, dec.last_info


@pytest.fixture(params=CASES, ids=[f"{n}-{c}" for n, c in CASES])
def case(request):
    name, code_name = request.param
    assert code_name != "<none>", f"classical decoder {name!r} has no codes in CODES: add the codes it decodes"
    return name, code_name, _decoder(name, code_name), _binary(code_name)


def test_protocol_attributes_and_messages(case):
    name, code_name, dec, code = case
    assert isinstance(dec, BlockDecoder)
    assert dec.code is get_code(code_name)
    assert (dec.n, dec.k) == (code.n, code.k)
    msgs, cw, *_ = _moderate(name, code_name)
    got = dec.message_bits(cw)
    assert got.dtype == np.uint8 and np.array_equal(got, msgs)


def test_all_zero_codeword_at_high_snr(case):
    name, code_name, dec, code = case
    rng = np.random.default_rng(1)
    zero = np.zeros((8, code.n), dtype=np.uint8)
    llr = BpskAwgn(10.0, code.rate).transmit(zero, rng)
    assert np.array_equal(dec.decode_llr_batch(llr), zero)
    assert np.array_equal(dec.decode_llr_batch(np.full((2, code.n), 6.0)), zero[:2])


def test_outputs_are_codewords(case):
    name, code_name, dec, code = case
    _, cw, llr, out, info = _moderate(name, code_name)
    assert out.dtype == np.uint8 and out.shape == cw.shape
    assert np.isin(out, (0, 1)).all()
    valid = _is_codeword(code, out)
    if dec.always_codeword:
        assert valid.all(), f"{name}: {int((~valid).sum())} outputs are not codewords"
    else:
        assert info is not None and info.converged is not None, f"{name}: always_codeword=False needs converged"
        assert valid[info.converged].all(), f"{name}: converged outputs that are not codewords"
        assert (~info.converged).any() or valid.all()


def test_batch_single_and_repeat_agree(case):
    name, code_name, dec, code = case
    _, cw, llr, out, _ = _moderate(name, code_name)
    few = llr[:6]
    batch = dec.decode_llr_batch(few)
    assert np.array_equal(batch, out[:6]) or getattr(dec, "context", "none") == "decoded"
    rows_independent = getattr(dec, "context", "none") != "decoded"
    singles = np.array([dec.decode_llr(row) for row in (few if rows_independent else few[:1])])
    assert singles.dtype == np.uint8
    assert np.array_equal(singles, batch[: len(singles)])
    # the same inputs give the same outputs
    assert np.array_equal(dec.decode_llr_batch(few), batch)
    # identical blocks in one batch decode identically (after the first for a context-reading decoder)
    rep = dec.decode_llr_batch(np.repeat(llr[3:4], 5, axis=0))
    first = 0 if rows_independent else 1
    assert (rep[first:] == rep[first]).all()
    # a single block, and no blocks
    one = dec.decode_llr_batch(llr[3:4])
    assert one.shape == (1, code.n) and one.dtype == np.uint8
    assert dec.decode_llr_batch(np.zeros((0, code.n))).shape == (0, code.n)


def test_hard_decision_entry(case):
    name, code_name, dec, code = case
    _, cw, llr, _, _ = _moderate(name, code_name)
    clean = cw[:5]
    assert np.array_equal(dec.decode_hard_batch(clean), clean)
    assert np.array_equal(dec.decode_hard(clean[0]), clean[0])
    hard = (llr[:5] <= 0).astype(np.uint8)
    got = dec.decode_hard_batch(hard)
    assert got.shape == hard.shape and got.dtype == np.uint8
    if name == "bm":  # a hard-decision decoder: the LLR path reads the signs only
        assert np.array_equal(got, dec.decode_llr_batch(llr[:5]))


def _refuses(call, what: str) -> None:
    with pytest.raises(DecoderInputError) as exc:
        call()
    assert isinstance(exc.value, ValueError)
    msg = str(exc.value)
    assert msg and "\n" not in msg, f"{what}: not a one-line message: {msg!r}"


def test_bad_inputs_refuse_with_one_line_errors(case):
    name, code_name, dec, code = case
    n = code.n
    _refuses(lambda: dec.decode_llr_batch(np.zeros((2, n + 1))), "wrong n")
    _refuses(lambda: dec.decode_llr_batch(np.zeros((2, n - 1))), "wrong n")
    _refuses(lambda: dec.decode_llr_batch(np.zeros(n)), "1-D batch")
    _refuses(lambda: dec.decode_llr_batch(np.zeros((1, 2, n))), "3-D batch")
    _refuses(lambda: dec.decode_llr(np.zeros((2, n))), "2-D single block")
    _refuses(lambda: dec.decode_llr_batch([["x"] * n]), "strings")
    bad = np.ones((3, n))
    bad[1, 2] = np.nan
    _refuses(lambda: dec.decode_llr_batch(bad), "NaN")
    inf = np.ones((3, n))
    inf[2, 0] = -np.inf
    if dec.accepts_infinite_llr:
        assert dec.decode_llr_batch(inf).shape == (3, n)
    else:
        _refuses(lambda: dec.decode_llr_batch(inf), "inf")
    _refuses(lambda: dec.decode_hard_batch(np.full((2, n), 2, dtype=np.uint8)), "non-binary hard words")
    _refuses(lambda: dec.decode_hard_batch(np.zeros((2, n + 1), dtype=np.uint8)), "hard words of wrong n")
    _refuses(lambda: dec.message_bits(np.zeros((2, n + 1), dtype=np.uint8)), "codewords of wrong n")


def test_block_errors_no_worse_than_hard_decision_bounded_distance(case):
    name, code_name, dec, code = case
    _, cw, llr, out, _ = _moderate(name, code_name)
    d = get_code_entry(code_name).d
    hard_errors = ((llr <= 0) != cw).sum(axis=1)
    if d is None:  # distance unknown (5G NR LDPC): at least half of the uncoded block errors must be corrected
        bdd = int((hard_errors > 0).sum())
        assert bdd > 0 and int((out != cw).any(axis=1).sum()) <= 0.5 * bdd
        return
    t = (d - 1) // 2
    bdd = int((hard_errors > t).sum())
    errors = int((out != cw).any(axis=1).sum())
    assert bdd > 0, "the moderate SNR should give some hard-decision failures"
    limit = bdd if name == "bm" else 1.1 * bdd + 2
    assert errors <= limit, f"{name} on {code_name}: {errors} block errors vs {bdd} for bounded-distance decoding"
