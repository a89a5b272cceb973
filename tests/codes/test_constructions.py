"""Code constructions (HGP, GB, lifted product, toric, repetition), their catalogue entries and BB specs."""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.codes import gf2
from qdecode.codes.bb import bb_code
from qdecode.codes.bicycle import GB_INSTANCES, circulant, gb_code, gb_dimension, gb_instance
from qdecode.codes.catalog import CATALOG, get_code, get_entry, list_codes, parse_bb_spec
from qdecode.codes.distance import brute_force_distance
from qdecode.codes.hgp import hamming_parity_check, hgp_hamming7, hypergraph_product, repetition_parity_check
from qdecode.codes.lifted_product import (
    LP_INSTANCES,
    conjugate_transpose,
    lift,
    lifted_product_code,
    lp_instance,
    poly_matrix,
)
from qdecode.codes.toric import repetition_code, toric_code

NEW_FAMILIES = ("hgp", "gb", "lp", "toric", "repetition")


def _commute(c) -> bool:
    return not ((c.hx.astype(np.int64) @ c.hz.T.astype(np.int64)) % 2).any()


# ---------------------------------------------------------------------- HGP
def test_hamming_matrix():
    H = hamming_parity_check(3)
    assert H.shape == (3, 7) and gf2.rank(H) == 3
    assert len({tuple(col) for col in H.T}) == 7 and H.any(axis=0).all()  # all nonzero columns, distinct


@pytest.mark.parametrize("seed", range(4))
def test_hgp_n_and_k_formula(seed):
    rng = np.random.default_rng(seed)
    m1, n1, m2, n2 = rng.integers(2, 6, size=4)
    h1 = rng.integers(0, 2, size=(m1, n1), dtype=np.uint8)
    h2 = rng.integers(0, 2, size=(m2, n2), dtype=np.uint8)
    c = hypergraph_product(h1, h2)
    assert _commute(c)
    k1, k2 = n1 - gf2.rank(h1), n2 - gf2.rank(h2)
    k1t, k2t = m1 - gf2.rank(h1), m2 - gf2.rank(h2)
    assert c.n == n1 * n2 + m1 * m2
    assert c.k == k1 * k2 + k1t * k2t
    assert c.hx.shape == (m1 * n2, c.n) and c.hz.shape == (n1 * m2, c.n)


def test_hgp_hamming7_is_58_16_3():
    c = hgp_hamming7()
    assert c.params == (58, 16, 3) and _commute(c)
    assert brute_force_distance(c, "X") == 3 and brute_force_distance(c, "Z") == 3


def test_hgp_distance_labelling():
    """d_X = min(d1', d2), d_Z = min(d1, d2'): rep3 x rep5 (full-rank checks, no transpose codewords)."""
    c = hypergraph_product(repetition_parity_check(3), repetition_parity_check(5))
    assert c.params[:2] == (23, 1)
    assert brute_force_distance(c, "X") == 5
    assert brute_force_distance(c, "Z") == 3


# ---------------------------------------------------------------- toric / rep
@pytest.mark.parametrize("L", [2, 3, 4, 5])
def test_toric_params(L):
    c = toric_code(L)
    assert c.params == (2 * L * L, 2, L) and _commute(c)
    assert c.hx.sum(axis=1).tolist() == [4] * (L * L) and c.hz.sum(axis=1).tolist() == [4] * (L * L)


def test_toric_brute_force_distance():
    assert brute_force_distance(toric_code(3)) == 3


def test_repetition_code_has_empty_hx():
    c = repetition_code(5)
    assert c.hx.shape == (0, 5) and c.hz.shape == (4, 5) and c.k == 1 and c.d == 5
    assert brute_force_distance(c, "X") == 5 and brute_force_distance(c, "Z") == 1
    assert c.lx.tolist() == [[1, 1, 1, 1, 1]]


@pytest.mark.parametrize("bad", [1, 0, 2.5, "x", None])
def test_toric_and_repetition_reject_bad_sizes(bad):
    with pytest.raises(ValueError, match=">= 2"):
        toric_code(bad)
    with pytest.raises(ValueError, match=">= 2"):
        repetition_code(bad)


# ------------------------------------------------------------------------ GB
def test_circulant_is_a_ring_homomorphism():
    l = 7
    a, b = [0, 1, 3], [2, 5]
    prod = [(i + j) for i in a for j in b]  # exponents of a*b (repeats cancel in circulant)
    A, B = circulant(a, l), circulant(b, l)
    assert np.array_equal((A.astype(int) @ B) % 2, circulant(prod, l))
    assert np.array_equal(A @ B % 2, B @ A % 2)
    assert np.array_equal(circulant([-e for e in a], l), A.T)  # a(x^-1) lifts to the transpose


@pytest.mark.parametrize("name", list(GB_INSTANCES))
def test_gb_instances(name):
    g = GB_INSTANCES[name]
    c = gb_instance(name)
    assert _commute(c)
    assert (c.n, c.k, c.d) == (g.n, g.k, g.d)
    assert c.k == gb_dimension(g.a, g.b, g.l)  # k = 2 deg gcd(a, b, x^l - 1)
    assert c.hx.sum(axis=1).tolist() == [len(g.a) + len(g.b)] * g.l


def test_gb_rejects_string_polynomials():
    with pytest.raises(ValueError, match="list of exponents"):
        gb_code("1+x", [0, 1], 5)


# ----------------------------------------------------------------------- LP
def test_lp_of_1x1_matrices_is_the_gb_code():
    a, b, l = (0, 2, 8, 15), (0, 2, 12, 17), 24
    lp = lifted_product_code([[a]], [[b]], l)
    gb = gb_code(a, b, l)
    assert np.array_equal(lp.hx, gb.hx) and np.array_equal(lp.hz, gb.hz)


def test_lp_over_trivial_group_is_hgp():
    h1, h2 = hamming_parity_check(3), repetition_parity_check(4)
    to_entries = lambda h: [[0 if v else None for v in row] for row in h]  # noqa: E731
    lp = lifted_product_code(to_entries(h1), to_entries(h2.T), 1)  # LP(A, B) = HGP(A, B^T) at l = 1
    hgp = hypergraph_product(h1, h2)
    assert np.array_equal(lp.hx, hgp.hx) and np.array_equal(lp.hz, hgp.hz)


def test_conjugate_transpose_lifts_to_transpose():
    P = poly_matrix([[(0, 3), None, 5], [1, (2, 4, 6), None]], 7)
    assert np.array_equal(lift(conjugate_transpose(P)), lift(P).T)


def test_lp_random_commutes():
    rng = np.random.default_rng(7)
    l = 5
    A = [[tuple(rng.choice(l, size=2, replace=False)) for _ in range(3)] for _ in range(2)]
    B = [[tuple(rng.choice(l, size=1)) for _ in range(2)] for _ in range(2)]
    c = lifted_product_code(A, B, l)
    assert _commute(c) and c.n == l * (3 * 2 + 2 * 2)


@pytest.mark.parametrize("name", list(LP_INSTANCES))
def test_lp_instances(name):
    g = LP_INSTANCES[name]
    c = lp_instance(name)
    assert _commute(c)
    assert (c.n, c.k, c.d) == (g.n, g.k, g.d)


def test_lp_without_conjugation_breaks_commutation():
    """H_Z must use A*, B* (conjugate transposes): with plain transposes it does not commute with H_X."""
    from qdecode.codes.lifted_product import _kron_eye

    g = LP_INSTANCES["lp882_24"]
    PA, PB = poly_matrix(g.A, g.l), poly_matrix(g.B, g.l)
    nA, nB = PA.shape[1], PB.shape[1]
    plain = lambda P: np.ascontiguousarray(P.transpose(1, 0, 2))  # noqa: E731 - transpose without x -> x^-1
    wrong_hz = np.hstack([lift(_kron_eye(plain(PB), nA, left=True)), lift(_kron_eye(plain(PA), nB, left=False))])
    c = lp_instance("lp882_24")
    assert ((c.hx.astype(np.int64) @ wrong_hz.T.astype(np.int64)) % 2).any()
    assert wrong_hz.shape == c.hz.shape


# ----------------------------------------------------------------- catalogue
def test_every_entry_has_a_d_source():
    for e in CATALOG.values():
        assert e.d_source, e.name
    rows = list_codes()
    assert all("d_source" in r for r in rows)
    assert {r["name"]: r["n"] for r in rows}["toric"] == "2d^2"


@pytest.mark.parametrize("name", [n for n, e in CATALOG.items() if e.family in NEW_FAMILIES and not e.parametrised])
def test_new_catalogue_entries_build_with_their_parameters(name):
    e = get_entry(name)
    assert e.kind == "quantum-css"
    c = get_code(name)
    assert (c.n, c.k, c.d) == (e.n, e.k, e.d)
    assert e.d_source.startswith(("exact", "cited", "unknown"))
    if e.d_source.startswith("exact"):
        assert e.d is not None


@pytest.mark.parametrize("name,d,n", [("toric", 3, 18), ("toric", 4, 32), ("repetition", 5, 5)])
def test_parametrised_families(name, d, n):
    e = get_entry(name)
    c = get_code(name, d)
    assert c.n == n == e.n_at(d) and c.d == d and c.k == e.k
    with pytest.raises(ValueError, match="needs a distance"):
        get_code(name)


def test_unknown_d_rejects_a_given_d():
    with pytest.raises(ValueError, match="no known distance"):
        get_code("gb254_28", d=14)


def test_existing_entries_unchanged():
    assert get_code("bb72_12_6").params == (72, 12, 6)
    assert get_code("surface", 5).params == (25, 1, 5)
    with pytest.raises(ValueError, match="fixed distance 6"):
        get_code("bb72_12_6", d=5)


# --------------------------------------------------------------- BB specs
def test_bb_spec_builds_the_same_code():
    c = get_code("bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2]")
    ref = bb_code(6, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"])
    assert np.array_equal(c.hx, ref.hx) and np.array_equal(c.hz, ref.hz)
    assert c.params == (72, 12, None)
    e = get_entry(" bb[ l = 6, m=6, A = x^3 + y + y^2, B=y^3+x+x^2 ] ")
    assert (e.n, e.k, e.d, e.family) == (72, 12, None, "bb") and e.d_source.startswith("unknown")


def test_bb_spec_mixed_monomials_and_d():
    e = get_entry("bb[l=12,m=6,A=x3+y+y2,B=y3+x+x2,d=12]")
    assert (e.n, e.k, e.d) == (144, 12, 12) and "stated" in e.d_source
    assert parse_bb_spec("bb[l=3,m=3,A=1+x2y+xy2,B=x*y+y+x]")["A"] == ["1", "x^2y", "xy^2"]


def test_bb_spec_exact_distance():
    e = get_entry("bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2,d=exact]")
    assert e.d == 6 and e.d_source.startswith("exact: MILP")
    assert get_code("bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2,d=exact]").d == 6


@pytest.mark.parametrize("spec,match", [
    ("bb[l=6,m=6,A=x3+y+y2]", "missing key B"),
    ("bb[l=6,A=x3+y+y2]", "missing keys m, B"),
    ("bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2,q=1]", "unknown key 'q'"),
    ("bb[l=6,l=6,m=6,A=x3+y+y2,B=y3+x+x2]", "given twice"),
    ("bb[l=6,m=6,A=x3+y+y2,B=y3+x+z]", "cannot parse monomial 'z'"),
    ("bb[l=6,m=6,A=x3+y,B=y3+x+x2]", "exactly 3 monomials"),
    ("bb[l=6,m=6,A=x3+y+y7,B=y3+x+x2]", "not distinct"),
    ("bb[l=0,m=6,A=x3+y+y2,B=y3+x+x2]", "l must be a positive integer"),
    ("bb[l=6,m=six,A=x3+y+y2,B=y3+x+x2]", "m must be a positive integer"),
    ("bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2,d=-1]", "d must be a positive integer"),
    ("bb[l=6,m=6,A=x3++y2,B=y3+x+x2]", "empty term"),
    ("bb[l=6,m=6,A]", "not key=value"),
    ("gb[l=6]", "unknown code family 'gb'"),
    ("bb[l=6,m=6", "not of the form"),
    ("bb[l=2,m=2,A=1+y+x,B=1+y+x]", "k = 0"),
])
def test_bad_bb_specs_are_one_line_value_errors(spec, match):
    with pytest.raises(ValueError, match=match) as info:
        get_entry(spec)
    assert "\n" not in str(info.value) and "expected e.g. bb[" in str(info.value)


# --------------------------------------------------- circuits (code capacity)
@pytest.mark.parametrize("name,d", [("toric", 3), ("repetition", 3), ("hgp58_16_3", None), ("gb48_6_8", None),
                                    ("cbb30_4_6", None), ("bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2]", None)])
def test_code_capacity_circuits(name, d):
    from qdecode.sims.circuits import build_circuit, circuit_metadata

    code = get_code(name, d)
    circ = build_circuit(name, d=d, noise="code-capacity", p=0.05, basis="Z")
    assert circ.num_observables == code.k
    assert circ.num_detectors == code.hz.shape[0]  # memory basis only: one detector per Z check
    circ.detector_error_model(decompose_errors=False)  # deterministic detectors and observables
    meta = circuit_metadata(name, d=d, noise="code-capacity", p=0.05)
    assert meta["n"] == code.n and meta["k"] == code.k and meta["rounds"] == 1


def test_user_bb_spec_circuit_needs_rounds():
    from qdecode.sims.circuits import build_circuit

    spec = "bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2]"
    with pytest.raises(ValueError, match="rounds has no default"):
        build_circuit(spec, noise="bb-uniform", p=0.001)
    with pytest.raises(ValueError, match="no known distance"):
        build_circuit(spec, d=6, noise="bb-uniform", p=0.001, rounds=2)
    ref = build_circuit("bb72_12_6", noise="bb-uniform", p=0.001, rounds=2)
    assert str(build_circuit(spec, noise="bb-uniform", p=0.001, rounds=2)) == str(ref)
    stated = spec[:-1] + ",d=6]"
    assert build_circuit(stated, noise="bb-uniform", p=0.001).num_detectors == \
        build_circuit("bb72_12_6", noise="bb-uniform", p=0.001).num_detectors
