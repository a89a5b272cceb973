"""Python API inputs, for every registered syndrome decoder: a one-line error or the right answer.

Every array a decoder takes passes ``check_syndromes`` / ``check_packed``
(``qdecode/decoders/base.py``). Bad inputs (wrong number of dimensions or columns, non-binary
values, strings, complex numbers, packed arrays of another dtype or width) must raise a
one-line :class:`DecoderInputError`, never a numba typing error or a traceback from inside a
kernel. Unusual but valid inputs (bool, int64 or float 0/1 arrays, Fortran order, transposed
views, strided slices, padding bits set in packed shots) must give exactly the answer of the
plain C-contiguous uint8 array.
"""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.decoders.base import DecoderInputError
from tests.decoders.decoder_problems import QUANTUM, accepted_decoder, sampled_shots


def _bad_syndromes(s: np.ndarray) -> dict[str, np.ndarray]:
    m = s.shape[1]
    two = s.copy()
    two[0, 0] = 2
    neg = s.astype(np.int64)
    neg[0, 0] = -1
    wraps = s.astype(np.int64)
    wraps[0, 0] = 257  # would wrap to 1 in uint8
    half = s.astype(np.float64)
    half[0, 0] = 0.5
    nan = s.astype(np.float64)
    nan[0, 0] = np.nan
    return {
        "1-D": s[0],
        "3-D": s[None],
        "one column more": np.zeros((2, m + 1), dtype=np.uint8),
        "transposed": np.ascontiguousarray(s[:3].T),
        "value 2": two,
        "value -1": neg,
        "value 257": wraps,
        "value 0.5": half,
        "NaN": nan,
        "strings": s.astype(str),
        "complex": s.astype(np.complex128),
    }


def _one_line(exc: pytest.ExceptionInfo) -> None:
    assert str(exc.value) and "\n" not in str(exc.value), repr(exc.value)


@pytest.mark.parametrize("name", QUANTUM)
def test_bad_arrays_give_one_line_errors(name):
    dec = accepted_decoder(name)
    s = sampled_shots(name)
    per_column = dec.gives_errors
    for what, bad in _bad_syndromes(s).items():
        with pytest.raises(DecoderInputError) as exc:
            dec.predict_observables_batch(bad)
        _one_line(exc)
        if per_column:
            with pytest.raises(DecoderInputError) as exc:
                dec.decode_batch(bad)
            _one_line(exc)
    for bad in (s, s[0, :-1], s[0].astype(np.float64) + 0.5):
        with pytest.raises(DecoderInputError) as exc:
            (dec.decode if per_column else (lambda x: dec.predict_observables_batch(x[None])))(bad)
        _one_line(exc)
    packed = np.packbits(s, axis=1, bitorder="little")
    for bad in (packed[:, :-1], np.pad(packed, ((0, 0), (0, 1))), packed.astype(np.int64), packed[0],
                packed.astype(bool), packed[None]):
        with pytest.raises(DecoderInputError) as exc:
            dec.predict_observables_packed(bad)
        _one_line(exc)


@pytest.mark.parametrize("name", QUANTUM)
def test_unusual_valid_arrays_give_the_plain_answer(name):
    dec = accepted_decoder(name)
    s = sampled_shots(name)
    want = dec.predict_observables_batch(s)
    wide = np.zeros((2 * s.shape[0], s.shape[1]), dtype=np.uint8)
    wide[::2] = s
    variants = {
        "bool": s.astype(bool),
        "int64": s.astype(np.int64),
        "float": s.astype(np.float64),
        "int8": s.astype(np.int8),
        "Fortran order": np.asfortranarray(s),
        "transposed view": np.ascontiguousarray(s.T).T,
        "strided rows": wide[::2],
    }
    for what, arr in variants.items():
        assert np.array_equal(dec.predict_observables_batch(arr), want), what
    packed = np.packbits(s, axis=1, bitorder="little")
    k = want.shape[1]
    unpack = lambda p: np.unpackbits(p, axis=1, count=k, bitorder="little")  # noqa: E731
    assert np.array_equal(unpack(dec.predict_observables_packed(packed)), want)
    assert np.array_equal(unpack(dec.predict_observables_packed(np.asfortranarray(packed))), want)
    wide_packed = np.zeros((2 * packed.shape[0], packed.shape[1]), dtype=np.uint8)
    wide_packed[::2] = packed
    assert np.array_equal(unpack(dec.predict_observables_packed(wide_packed[::2])), want)
    pad = s.shape[1] % 8
    if pad:  # padding bits beyond the last detector are ignored, as stim and sinter do
        padded = packed.copy()
        padded[:, -1] |= np.uint8((0xFF << pad) & 0xFF)
        assert np.array_equal(unpack(dec.predict_observables_packed(padded)), want)
    empty = dec.predict_observables_batch(np.zeros((0, s.shape[1]), dtype=np.uint8))
    assert empty.shape == (0, k) and empty.dtype == np.uint8
