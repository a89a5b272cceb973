"""Rotated surface code as a CSSCode."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.css import search_min_logical_weight
from qdecode.codes.surface import rotated_surface_code


@pytest.mark.parametrize("d", [3, 5, 7, 9])
def test_parameters(d):
    c = rotated_surface_code(d)
    assert (c.n, c.k, c.d) == (d * d, 1, d)
    assert c.hx.shape == ((d * d - 1) // 2, d * d) and c.hz.shape == ((d * d - 1) // 2, d * d)
    assert gf2.rank(c.hx) == c.hx.shape[0] and gf2.rank(c.hz) == c.hz.shape[0]
    w = np.concatenate([c.hx.sum(1), c.hz.sum(1)])
    assert set(w.tolist()) == {2, 4}
    assert c.lx.sum() == d and c.lz.sum() == d


@pytest.mark.parametrize("d", [3, 5, 7])
def test_distance_found_by_search(d):
    c = rotated_surface_code(d)
    for basis in "XZ":
        w, op = search_min_logical_weight(c, basis, trials=30, seed=d)
        assert w == d
        check = c.hz if basis == "X" else c.hx
        assert not ((check.astype(int) @ op) % 2).any()


def test_d3_exhaustive_distance():
    c = rotated_surface_code(3)
    for basis in "XZ":
        check = (c.hz if basis == "X" else c.hx).astype(int)
        dual = (c.lz if basis == "X" else c.lx).astype(int)
        best = 10
        for bits in itertools.product([0, 1], repeat=9):
            v = np.array(bits)
            if not ((check @ v) % 2).any() and ((dual @ v) % 2).any():
                best = min(best, int(v.sum()))
        assert best == 3


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, "x", None])
def test_bad_distance(bad):
    with pytest.raises(ValueError, match="distance"):
        rotated_surface_code(bad)
