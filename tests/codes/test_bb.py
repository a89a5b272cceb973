"""Bivariate-bicycle codes and the code catalogue."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.bb import bb_code, monomial_matrix, parse_monomial
from qdecode.codes.catalog import CATALOG, UnknownCodeError, get_code, list_codes
from qdecode.codes.css import search_min_logical_weight

BB_NAMES = ["bb72_12_6", "bb90_8_10", "bb108_8_10", "bb144_12_12", "bb288_12_18"]
PARAMS = {"bb72_12_6": (72, 12, 6), "bb90_8_10": (90, 8, 10), "bb108_8_10": (108, 8, 10),
          "bb144_12_12": (144, 12, 12), "bb288_12_18": (288, 12, 18)}


@pytest.mark.parametrize("name", BB_NAMES)
def test_catalogue_bb_parameters(name):
    c = get_code(name)
    n, k, d = PARAMS[name]
    assert (c.n, c.k, c.d) == (n, k, d)
    assert c.n - gf2.rank(c.hx) - gf2.rank(c.hz) == k  # k by GF(2) rank
    assert (c.hx.sum(1) == 6).all() and (c.hz.sum(1) == 6).all()
    assert (c.hx.sum(0) == 3).all() and (c.hz.sum(0) == 3).all()
    spec = c.meta
    h = spec.half
    assert np.array_equal(c.hx, np.hstack([spec.A[0] ^ spec.A[1] ^ spec.A[2], spec.B[0] ^ spec.B[1] ^ spec.B[2]]))
    assert np.array_equal(c.hz[:, :h], c.hx[:, h:].T) and np.array_equal(c.hz[:, h:], c.hx[:, :h].T)
    for M in spec.A + spec.B:
        assert (M.sum(0) == 1).all() and (M.sum(1) == 1).all()  # permutation matrices
    e = CATALOG[name]
    assert (e.n, e.k, e.d, e.kind) == (n, k, d, "quantum-css") and "2308.07915" in e.provenance


def test_monomials():
    assert parse_monomial("x^3") == (3, 0)
    assert parse_monomial("y") == (0, 1)
    assert parse_monomial("1") == (0, 0)
    assert parse_monomial("x^2y^3") == (2, 3)
    assert parse_monomial("x*y") == (1, 1)
    assert parse_monomial((4, 5)) == (4, 5)
    with pytest.raises(ValueError, match="cannot parse"):
        parse_monomial("z^2")
    # x and y commute; x^l = 1
    x = monomial_matrix(6, 6, "x")
    y = monomial_matrix(6, 6, "y")
    assert np.array_equal(x @ y % 2, y @ x % 2)
    assert np.array_equal(np.linalg.matrix_power(x, 6), np.eye(36))
    # Shift convention (matches IBM's circuits): x[0, m] = 1.
    assert x[0, 6] == 1


def test_bb_code_validation():
    with pytest.raises(ValueError, match="exactly 3"):
        bb_code(6, 6, ["x", "y"], ["x", "y", "y^2"])
    with pytest.raises(ValueError, match="not distinct"):
        bb_code(6, 6, ["x", "x^7", "y"], ["x", "y", "y^2"])


def test_bb72_distance_is_6():
    c = get_code("bb72_12_6")
    for basis in "XZ":
        w, op = search_min_logical_weight(c, basis, trials=60, seed=1)
        assert w == 6
        check = c.hz if basis == "X" else c.hx
        dual = c.lz if basis == "X" else c.lx
        assert not ((check.astype(int) @ op) % 2).any() and ((dual.astype(int) @ op) % 2).any()


def test_bb144_no_logical_below_12():
    # Bounded randomised search (~4 s): finds weight-12 logicals, never lighter ones.
    c = get_code("bb144_12_12")
    for basis in "XZ":
        w, _ = search_min_logical_weight(c, basis, trials=300, seed=2)
        assert w == 12


def test_catalogue_lookup_and_listing():
    assert {"surface", *BB_NAMES} <= {name for name, e in CATALOG.items() if e.kind == "quantum-css"}
    s = get_code("surface", d=5)
    assert (s.n, s.k, s.d) == (25, 1, 5)
    with pytest.raises(ValueError, match="needs a distance"):
        get_code("surface")
    with pytest.raises(ValueError, match="fixed distance 6"):
        get_code("bb72_12_6", d=5)
    assert get_code("bb72_12_6", d=6).n == 72
    with pytest.raises(KeyError):
        get_code("bb73")
    with pytest.raises(ValueError) as exc:
        get_code("nope")
    assert isinstance(exc.value, UnknownCodeError)
    for name in ["surface", *BB_NAMES]:
        assert name in str(exc.value)
    rows = list_codes()
    assert [r["name"] for r in rows] == list(CATALOG)
    assert all({"name", "kind", "n", "k", "d", "provenance"} <= set(r) for r in rows)
