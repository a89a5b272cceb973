"""Exact CSS distance by MILP (qdecode.codes.distance), cross-checked by brute force on tiny codes."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.codes.bicycle import gb_instance
from qdecode.codes.catalog import CATALOG, get_code
from qdecode.codes.css import CSSCode
from qdecode.codes.distance import brute_force_distance, css_distance
from qdecode.codes.hgp import hgp_hamming7, hypergraph_product, repetition_parity_check
from qdecode.codes.surface import rotated_surface_code
from qdecode.codes.toric import repetition_code, toric_code


def _check_witness(code, r):
    """The witness is a nontrivial logical of the reported type and weight."""
    w = r.witness.astype(np.int64)
    check, duals = (code.hz, code.lz) if r.witness_basis == "X" else (code.hx, code.lx)
    assert int(w.sum()) == r.distance
    assert not ((check.astype(np.int64) @ w) % 2).any()
    assert ((duals.astype(np.int64) @ w) % 2).any()


@pytest.mark.parametrize("d", [3, 5, 7])
def test_rotated_surface(d):
    c = rotated_surface_code(d)
    for basis in ("X", "Z", "both"):
        r = css_distance(c, basis)
        assert (r.distance, r.lower_bound, r.optimal, r.status) == (d, d, True, "optimal")
        _check_witness(c, r)


def test_bb72_is_6():
    c = get_code("bb72_12_6")
    r = css_distance(c)
    assert r.distance == 6 and r.optimal and r.solves == 2
    assert r.seconds < 60  # ~1 s on one core
    _check_witness(c, r)


def test_hgp_hamming7_is_3():
    c = hgp_hamming7()
    for basis in ("X", "Z"):
        r = css_distance(c, basis)
        assert r.distance == 3 and r.optimal


@pytest.mark.parametrize("L", [3, 4])
def test_toric(L):
    r = css_distance(toric_code(L))
    assert r.distance == L and r.optimal


def test_repetition_code_bases():
    c = repetition_code(6)
    assert css_distance(c, "X").distance == 6
    assert css_distance(c, "Z").distance == 1
    r = css_distance(c)
    assert r.distance == 1 and r.witness_basis == "Z" and r.optimal


def test_asymmetric_hgp_bases():
    c = hypergraph_product(repetition_parity_check(3), repetition_parity_check(5))
    assert css_distance(c, "X").distance == 5 == brute_force_distance(c, "X")
    assert css_distance(c, "Z").distance == 3 == brute_force_distance(c, "Z")
    assert css_distance(c, "both").distance == 3


@pytest.mark.parametrize("make", [lambda: rotated_surface_code(3), lambda: rotated_surface_code(5),
                                  lambda: toric_code(3), lambda: toric_code(4), hgp_hamming7,
                                  lambda: repetition_code(4)])
def test_milp_matches_brute_force(make):
    c = make()
    for basis in ("X", "Z"):
        assert css_distance(c, basis).distance == brute_force_distance(c, basis)


def test_steane_code():
    steane = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1]])
    c = CSSCode(hx=steane, hz=steane)
    assert css_distance(c).distance == 3 == brute_force_distance(c)


@pytest.mark.parametrize("make", [hgp_hamming7, lambda: rotated_surface_code(5),
                                  lambda: gb_instance("cbb30_4_6")])
def test_per_logical_method_agrees(make):
    c = make()
    a = css_distance(c, method="indicator")
    b = css_distance(c, method="per-logical")
    assert a.distance == b.distance and a.optimal and b.optimal
    assert b.solves == 2 * c.k and a.solves == 2


@pytest.mark.parametrize("name,d", [("cbb30_4_6", 6), ("cbb42_6_6", 6)])
def test_coprime_bb_as_gb(name, d):
    r = css_distance(gb_instance(name))
    assert r.distance == d and r.optimal


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gb48_6_8", "gb46_2_9", "gb126_28_8"])
def test_gb_instances_exact(name):
    """~7 s, ~25 s and ~40-60 s on one core: the exact distances the catalogue states."""
    c = gb_instance(name)
    r = css_distance(c, time_limit=600)
    assert r.optimal and r.distance == c.d


def test_every_exact_catalogue_distance_fast_enough_is_reproduced():
    """Every catalogue entry whose d_source says "exact: MILP" and that solves in seconds."""
    fast = ["bb72_12_6", "hgp58_16_3", "cbb30_4_6", "cbb42_6_6"]
    exact = [n for n, e in CATALOG.items() if "exact: MILP" in e.d_source]
    assert set(fast) <= set(exact) and {"gb48_6_8", "gb46_2_9", "gb126_28_8"} <= set(exact)
    for name in fast:
        r = css_distance(get_code(name))
        assert r.optimal and r.distance == CATALOG[name].d, name


# ------------------------------------------------------------- time limits
def test_zero_time_limit_is_flagged_not_a_number():
    c = get_code("bb72_12_6")
    r = css_distance(c, time_limit=0)
    assert not r.optimal and r.distance is None and r.lower_bound == 1
    assert "time limit" in r.status and "not proven" in r.status


def test_short_time_limit_gives_bounds_not_a_claim():
    c = gb_instance("gb48_6_8")  # ~4 s per basis
    r = css_distance(c, "X", time_limit=0.3)
    assert not r.optimal and "time limit" in r.status
    assert 1 <= r.lower_bound <= 8
    assert r.distance is None or r.distance >= 8
    assert r.seconds < 5


def test_no_time_limit():
    assert css_distance(rotated_surface_code(3), time_limit=None).distance == 3


# ---------------------------------------------------------------- errors
def test_bad_arguments():
    c = rotated_surface_code(3)
    with pytest.raises(ValueError, match="basis"):
        css_distance(c, "Y")
    with pytest.raises(ValueError, match="method"):
        css_distance(c, method="fast")
    h = np.array([[1, 1, 0], [0, 1, 1]])
    zero = CSSCode(hx=np.zeros((0, 3), dtype=np.uint8), hz=np.vstack([h, [[1, 1, 1]]]))  # k = 0
    with pytest.raises(ValueError, match="no logical qubit"):
        css_distance(zero)
    with pytest.raises(ValueError, match="no logical qubit"):
        brute_force_distance(zero)
    with pytest.raises(ValueError, match="brute force"):
        brute_force_distance(get_code("bb72_12_6"), max_combinations=1000)


@pytest.mark.parametrize("d", [3, pytest.param(5, marks=pytest.mark.slow)])  # d = 5: a 30 s MILP proof
def test_circuit_distance_of_surface_memory_equals_stims_graphlike_search(d):
    import stim

    from qdecode.sims.dem_distance import circuit_distance

    circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=d, rounds=d,
                                  after_clifford_depolarization=0.001, before_measure_flip_probability=0.001)
    r = circuit_distance(circ.detector_error_model(), time_limit=120)
    assert r.optimal and r.distance == d == len(circ.shortest_graphlike_error())


def test_circuit_distance_on_a_hyperedge_dem_and_bad_input():
    from qdecode.sims.dem_distance import circuit_distance

    r = circuit_distance("error(0.1) D0 D1 D2\nerror(0.1) D0 D1 L0\nerror(0.1) D2 L0\nerror(0.1) D0 D1 D2 L0")
    assert r.optimal and r.distance == 2  # D0 D1 D2 with D0 D1 D2 L0: only L0 flips
    r = circuit_distance("error(0.1) D0 D1 D2\nerror(0.1) D0 D1 L0\nerror(0.1) D2\n")
    assert r.optimal and r.distance == 3  # all three together: D0 D1 D2 twice over, L0 once
    r = circuit_distance("error(0.1) D0 L0\nerror(0.1) D1\n")
    assert r.optimal and r.distance is None  # every observable flip is detected
    with pytest.raises(ValueError, match="no logical observable"):
        circuit_distance("error(0.1) D0 D1\n")
