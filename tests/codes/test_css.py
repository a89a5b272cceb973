"""GF(2) helpers and the CSSCode container."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.css import CSSCode, logical_operators, search_min_logical_weight

STEANE = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]], dtype=np.uint8)


def _rank_oracle(M: np.ndarray) -> int:
    import galois
    return int(np.linalg.matrix_rank(galois.GF2(M)))


@pytest.mark.parametrize("shape", [(1, 1), (5, 9), (9, 5), (30, 60), (64, 64)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_nullspace_match_oracle(shape, seed):
    rng = np.random.default_rng(seed)
    M = (rng.random(shape) < 0.3).astype(np.uint8)
    r = gf2.rank(M)
    assert r == _rank_oracle(M)
    N = gf2.nullspace(M)
    assert N.shape == (shape[1] - r, shape[1])
    assert not ((M.astype(np.int64) @ N.T) % 2).any()
    assert gf2.rank(N) == N.shape[0]


def test_row_reduce_is_rref_and_rowspace_preserved():
    rng = np.random.default_rng(7)
    M = (rng.random((20, 40)) < 0.4).astype(np.uint8)
    R, piv = gf2.row_reduce(M)
    assert piv == sorted(piv)
    for i, c in enumerate(piv):
        assert R[:, c].sum() == 1 and R[i, c] == 1
    assert not R[len(piv):].any()
    assert gf2.rank(np.vstack([M, R])) == gf2.rank(M)
    assert gf2.in_rowspace(R[: len(piv)], piv, M).all()


def test_inverse_and_singular_error():
    rng = np.random.default_rng(3)
    while True:
        A = (rng.random((12, 12)) < 0.5).astype(np.uint8)
        if gf2.rank(A) == 12:
            break
    Ai = gf2.inverse(A)
    assert np.array_equal((A.astype(np.int64) @ Ai) % 2, np.eye(12, dtype=np.int64))
    with pytest.raises(ValueError, match="singular"):
        gf2.inverse(np.array([[1, 1], [1, 1]]))


def test_as_gf2_rejects_bad_input():
    with pytest.raises(ValueError, match="integer"):
        gf2.as_gf2(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        gf2.as_gf2(np.zeros((2, 2, 2), dtype=np.uint8))


def test_rank_288_is_fast():
    import time

    rng = np.random.default_rng(0)
    M = (rng.random((288, 576)) < 0.05).astype(np.uint8)
    t = time.perf_counter()
    gf2.nullspace(M)
    assert time.perf_counter() - t < 2.0


def test_steane_code():
    c = CSSCode(hx=STEANE, hz=STEANE, d=3, name="steane")
    assert (c.n, c.k, c.d) == (7, 1, 3)
    assert not ((c.lx.astype(int) @ c.hz.T) % 2).any()
    assert not ((c.lz.astype(int) @ c.hx.T) % 2).any()
    assert np.array_equal((c.lx.astype(int) @ c.lz.T) % 2, np.eye(1, dtype=int))
    assert search_min_logical_weight(c, "X", trials=20)[0] == 3
    assert search_min_logical_weight(c, "Z", trials=20)[0] == 3
    assert c.hx.dtype == np.uint8 and not c.hx.flags.writeable


def test_non_commuting_checks_raise():
    hx = np.array([[1, 1, 0]])
    hz = np.array([[0, 1, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match=r"hx @ hz.T != 0.*X check 0 and Z check 0"):
        CSSCode(hx=hx, hz=hz)


def test_width_mismatch_and_bad_logicals():
    with pytest.raises(ValueError, match="columns"):
        CSSCode(hx=np.ones((1, 4)), hz=np.ones((1, 3)))
    lx, lz = logical_operators(STEANE, STEANE)
    with pytest.raises(ValueError, match="anticommutes"):
        CSSCode(hx=STEANE, hz=STEANE, lx=np.array([[1, 0, 0, 0, 0, 0, 0]]), lz=lz)
    with pytest.raises(ValueError, match="both"):
        CSSCode(hx=STEANE, hz=STEANE, lx=lx)


def test_logicals_of_random_hypergraph_product():
    # Hypergraph product of two random classical codes: always a valid CSS code.
    rng = np.random.default_rng(11)
    h1 = (rng.random((4, 7)) < 0.4).astype(np.uint8)
    h2 = (rng.random((3, 6)) < 0.5).astype(np.uint8)
    m1, n1 = h1.shape
    m2, n2 = h2.shape
    hx = np.hstack([np.kron(h1, np.eye(n2, dtype=np.uint8)), np.kron(np.eye(m1, dtype=np.uint8), h2.T)])
    hz = np.hstack([np.kron(np.eye(n1, dtype=np.uint8), h2), np.kron(h1.T, np.eye(m2, dtype=np.uint8))])
    c = CSSCode(hx=hx % 2, hz=hz % 2)
    assert c.k == c.n - gf2.rank(hx % 2) - gf2.rank(hz % 2)
    assert np.array_equal((c.lx.astype(int) @ c.lz.T) % 2, np.eye(c.k, dtype=int))
    # Logicals are independent of the stabilisers.
    assert gf2.rank(np.vstack([c.hx, c.lx])) == gf2.rank(c.hx) + c.k
    assert gf2.rank(np.vstack([c.hz, c.lz])) == gf2.rank(c.hz) + c.k
