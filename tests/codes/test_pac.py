"""PAC codes: polynomial bit order, pre-transform, generator = (T G_N)[A], distance, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.catalog import get_code
from qdecode.codes.pac import DEFAULT_POLY, PacCode, poly_coefficients
from qdecode.codes.polar import info_set, polar_transform, weight_enumerator


def mod2(a, b):
    return (a.astype(np.int64) @ b.astype(np.int64)) % 2


def toeplitz_T(N, conv):
    """Upper-triangular Toeplitz T with T[i, i + j] = c_j (u = v T)."""
    T = np.zeros((N, N), dtype=np.int64)
    for i in range(N):
        for j, c in enumerate(conv):
            if i + j < N:
                T[i, i + j] = c
    return T


def test_polynomial_bit_order():
    assert DEFAULT_POLY == 0o133 == 91
    assert poly_coefficients(0o133) == (1, 0, 1, 1, 0, 1, 1)  # c_0 .. c_6, MSB first
    assert poly_coefficients(0b1101) == (1, 1, 0, 1)
    assert poly_coefficients(1) == (1,)


@pytest.mark.parametrize(
    "code",
    [
        PacCode.from_profile(32, 16),
        PacCode.from_profile(64, 22, "5g"),
        PacCode.from_profile(128, 64, "rm", poly=0o155),
        PacCode.from_profile(64, 16, "bhattacharyya", crc="crc6"),
    ],
    ids=repr,
)
def test_generator_is_toeplitz_times_polar_transform(code):
    N = code.N
    gn = polar_transform(np.eye(N, dtype=np.uint8)).astype(np.int64)
    if code.crc is None:
        assert np.array_equal(code.G, (toeplitz_T(N, code.conv) @ gn % 2)[code.info_positions])
    assert not mod2(code.G, code.H.T).any()
    assert gf2.rank(code.G) == code.k and gf2.rank(code.H) == N - code.k
    rng = np.random.default_rng(0)
    msgs = rng.integers(0, 2, (300, code.k), dtype=np.uint8)
    x = code.encode(msgs)
    assert np.array_equal(x, mod2(msgs, code.G))
    assert np.array_equal(code.extract(x), msgs)
    # u = v T: the pre-transform is the Toeplitz product
    v = code.place(msgs)
    assert np.array_equal(code.pretransform(v), mod2(v, toeplitz_T(N, code.conv)))


def test_pac32_16_of_the_research_note():
    code = get_code("pac32_16")
    assert (code.n, code.k, code.name) == (32, 16, "pac32_16")
    assert code.conv == (1, 0, 1, 1, 0, 1, 1) and code.memory == 6
    assert code.info_positions.tolist() == info_set(32, 16, "rm").tolist()  # RM(2,5) profile
    A = weight_enumerator(code.G)
    assert code.d == 8 and A[8] == 364  # vs 620 for RM(2,5) itself


def test_poly_one_is_plain_polar():
    pac = PacCode.from_profile(32, 16, poly=1)
    assert pac.is_plain and pac.conv == (1,)
    assert np.array_equal(pac.G, get_code("polar32_16").G)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: PacCode.from_profile(32, 16, poly=0), "positive integer"),
        (lambda: PacCode.from_profile(32, 16, poly=-5), "positive integer"),
        (lambda: PacCode.from_profile(32, 16, poly=1 << 70), "memory above 63"),
        (lambda: PacCode.from_profile(32, 16, "fancy"), "unknown polar construction"),
        (lambda: PacCode.from_profile(32, 0), "positive integer"),
        (lambda: PacCode.from_profile(32, 28, crc="crc6"), "exceeds the length"),
        (lambda: PacCode(32, [5, 6], conv=(1, 1), poly=0o133), "does not match poly"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
