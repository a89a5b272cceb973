"""OSD kernels and decoders: syndrome OSD (vs a slow reference and vs ldpc) and classical OSD.

* (a) hypothesis: any method/order returns ``e'`` with ``H e' = H e``, and the kernel equals a
  slow pure-numpy transcription of ldpc's OSD definitions (ties included: priors and keys
  are drawn from small sets so equal costs and equal keys are common);
* (b) bit-for-bit agreement with ldpc 2.4.1's ``BpOsdDecoder`` fed the same BP posteriors;
* (c) classical OSD: order k = brute-force ML on Hamming(7,4) and extended Golay(24,12);
  BCH(127,64) BLER against an earlier independent Monte-Carlo run (benchmarks/README.md);
* (d) bad input -> ValueError naming the problem.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qdecode.codes import gf2 as np_gf2
from qdecode.decoders.osd import OsdBlockDecoder, OsdConfig, OsdPostProcessor, normalize_osd_method
from qdecode.kernels import gf2
from qdecode.kernels.sort import stable_argsort, stable_argsort_prefix
from qdecode.problem import DecodingProblem

METHODS = [("osd0", 0), ("osd_e", 1), ("osd_e", 3), ("osd_cs", 0), ("osd_cs", 1), ("osd_cs", 3), ("osd_cs", 10)]


# ------------------------------------------------------- slow reference (ldpc's definitions)


def _solve_on(H, cols, t):
    """x over ``cols`` (independent columns) with ``H[:, cols] x = t``, or None if t is not in their span."""
    A = H[:, cols]
    if not cols:
        return np.zeros(0, dtype=np.uint8) if not t.any() else None
    rows = []  # r independent rows of A
    for i in range(A.shape[0]):
        if np_gf2.rank(A[rows + [i]]) > len(rows):
            rows.append(i)
    inv = np_gf2.inverse(A[rows])
    x = (inv.astype(np.int64) @ t[rows].astype(np.int64)) % 2
    if np.any((A.astype(np.int64) @ x) % 2 != t):
        return None
    return x.astype(np.uint8)


def reference_osd(H, s, key, priors, method, order):
    """Transcription of ldpc v2's osd.hpp semantics in plain numpy (slow, small problems)."""
    m, n = H.shape
    w = [math.log(1.0 / p) for p in priors]
    perm = np.argsort(key, kind="stable")
    rank_h = np_gf2.rank(H)
    piv, nonpiv = [], []
    for j in perm:
        if len(piv) < rank_h and np_gf2.rank(H[:, piv + [int(j)]]) > len(piv):
            piv.append(int(j))
        else:
            nonpiv.append(int(j))
    k = len(nonpiv)

    def solution(T):
        t = s.copy()
        for j in T:
            t ^= H[:, j]
        x = _solve_on(H, piv, t)
        if x is None:
            return None
        e = np.zeros(n, dtype=np.uint8)
        e[piv] = x
        e[list(T)] = 1
        return e

    def cost(e):
        c = 0.0
        for i in range(n):
            if e[i]:
                c += w[i]
        return c

    e0 = solution(())
    if e0 is None:
        return None
    if method == "osd0" or order == 0 or k == 0:
        return e0
    order = min(order, k)
    if method == "osd_e":
        cands = [tuple(nonpiv[b] for b in range(order) if (i >> b) & 1) for i in range(1, 1 << order)]
    else:
        cands = [(j,) for j in nonpiv] + [(nonpiv[a], nonpiv[b]) for a in range(order) for b in range(a + 1, order)]
    best, best_c = e0, cost(e0)
    for T in cands:
        e = solution(T)
        c = cost(e)
        if c < best_c:
            best, best_c = e, c
    return best


@st.composite
def small_instances(draw):
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 11))
    H = np.array(draw(st.lists(st.integers(0, 1), min_size=m * n, max_size=m * n)), dtype=np.uint8).reshape(m, n)
    e = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.uint8)
    priors = np.array(draw(st.lists(st.sampled_from([0.01, 0.05, 0.2, 0.45]), min_size=n, max_size=n)))
    key = np.array(draw(st.lists(st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.5]), min_size=n, max_size=n)))
    return H, e, priors, key


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances())
def test_osd_solves_syndrome_and_matches_reference(inst):
    H, e, priors, key = inst
    prob = DecodingProblem.from_check_matrix(H, priors)
    s = (H.astype(np.int64) @ e % 2).astype(np.uint8)
    for method, order in METHODS:
        post = OsdPostProcessor(prob, method, order)
        out = post.solve_batch(s[None, :], key[None, :])[0]
        assert post.last_status[0] == 0
        assert np.array_equal(H.astype(np.int64) @ out % 2, s), (method, order)
        ref = reference_osd(H, s, key, priors, method, min(order, post.k))
        assert np.array_equal(out, ref), (method, order, out, ref)


def test_syndrome_outside_column_space_is_flagged():
    H = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=np.uint8)  # rows 0 and 1 equal
    post = OsdPostProcessor(DecodingProblem.from_check_matrix(H, 0.1), "osd_cs", 1)
    s = np.array([[1, 0, 0], [1, 1, 1]], dtype=np.uint8)
    out = post.solve_batch(s, np.zeros((2, 3)))
    assert list(post.last_status) == [1, 0]
    assert np.array_equal(H @ out[1] % 2, s[1])


def test_batch_equals_single_and_mask_leaves_rows():
    rng = np.random.default_rng(7)
    H = (rng.random((12, 30)) < 0.25).astype(np.uint8)
    prob = DecodingProblem.from_check_matrix(H, rng.uniform(0.01, 0.3, 30))
    post = OsdPostProcessor(prob, "osd_cs", 4)
    E = (rng.random((40, 30)) < 0.1).astype(np.uint8)
    S = (E.astype(np.int64) @ H.T % 2).astype(np.uint8)
    K = rng.normal(size=(40, 30))
    full = post.solve_batch(S, K)
    for i in range(0, 40, 7):
        assert np.array_equal(post.solve(S[i], K[i]), full[i])
    mask = np.arange(40) % 3 == 0
    out = np.full((40, 30), 7, dtype=np.uint8)
    post.solve_batch(S, K, mask, out)
    assert np.array_equal(out[mask], full[mask])
    assert np.all(out[~mask] == 7)
    assert np.all(post.last_status[~mask] == -1)


def test_stable_argsort_matches_numpy():
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 8, 9, 16, 17, 100, 1000):
        for keys in (rng.integers(-3, 4, n).astype(np.float64),  # many ties
                     rng.choice([-np.inf, -1.0, 0.0, 2.0, np.inf], n),  # infinite keys at run ends
                     rng.standard_normal(n)):
            perm = np.empty(n, np.int64)
            stable_argsort(keys, perm, np.empty(n), np.empty(n), np.empty(n, np.int64))
            assert np.array_equal(perm, np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("n", [0, 3, 64, 65, 130])
def test_stable_argsort_prefix_matches_numpy(n):
    """Rank counting (n <= 64) and the merge sort (longer) sort a prefix the same way."""
    keys = np.concatenate([np.random.default_rng(n).integers(-2, 3, n).astype(np.float64), np.full(7, -9.0)])
    order = np.full(n + 7, -1, np.int64)
    scratch = (np.empty(n + 7), np.empty(n + 7), np.empty(n + 7, np.int64))
    stable_argsort_prefix(keys, n, order, *scratch)
    assert np.array_equal(order[:n], np.argsort(keys[:n], kind="stable"))


def test_gf2_helpers_agree_with_numpy_reference():
    rng = np.random.default_rng(11)
    for shape in [(5, 9), (70, 130), (130, 70)]:
        A = (rng.random(shape) < 0.3).astype(np.uint8)
        A[3] = A[1] ^ A[2]
        assert gf2.gf2_rank(A) == np_gf2.rank(A)
        csc = sp.csc_matrix(A)
        ptr, idx = csc.indptr.astype(np.int64), csc.indices.astype(np.int64)
        cols = np.zeros((shape[1], gf2.num_words(shape[0])), dtype=np.uint64)
        gf2.pack_csc_columns(ptr, idx, cols)
        assert gf2.csc_column_rank(ptr, idx, cols) == np_gf2.rank(A)
        N = gf2.gf2_nullspace(A)
        assert N.shape == (shape[1] - np_gf2.rank(A), shape[1])
        assert not np.any(A.astype(np.int64) @ N.T % 2)
        assert np_gf2.rank(N) == N.shape[0]
        B = gf2.gf2_row_basis(A)
        assert np.array_equal(B, np_gf2.rowspace_basis(A))


# ------------------------------------------------------------ ldpc agreement (bit for bit)


def _ldpc_cases(prob, dets, method, order, max_iter):
    import ldpc
    dec = ldpc.BpOsdDecoder(prob.H, error_channel=list(prob.priors), max_iter=max_iter, bp_method="ms",
                            osd_method=method, osd_order=order)
    S, K, D, D0 = [], [], [], []
    for s in dets:
        d = dec.decode(s)
        if dec.converge:
            continue
        S.append(s)
        K.append(np.array(dec.log_prob_ratios))
        D.append(np.array(d))
        D0.append(np.array(dec.osd0_decoding))
    return np.array(S), np.array(K), np.array(D), np.array(D0)


@pytest.fixture(scope="module")
def ldpc_problems():
    from qdecode.problem import decoding_dem
    from qdecode.sims.circuits import build_circuit

    cases = {}
    for name, kw, shots in [
        ("surface_d5_sd6", dict(code="surface", d=5, noise="sd6", p=0.008), 500),
        ("bb72_code_capacity", dict(code="bb72_12_6", noise="code-capacity", p=0.08), 600),
        ("bb72_circuit_r2", dict(code="bb72_12_6", noise="bb-uniform", p=0.004, rounds=2), 150),
    ]:
        code = kw.pop("code")
        circ = build_circuit(code, basis="Z", **kw)
        prob = DecodingProblem.from_dem(decoding_dem(circ))
        dets = circ.compile_detector_sampler(seed=5).sample(shots, separate_observables=True)[0].astype(np.uint8)
        cases[name] = (prob, dets)
    return cases


@pytest.mark.parametrize("case", ["surface_d5_sd6", "bb72_code_capacity", "bb72_circuit_r2"])
@pytest.mark.parametrize("method,order", [("osd0", 0), ("osd_e", 4), ("osd_cs", 0), ("osd_cs", 10)])
def test_agrees_with_ldpc_bit_for_bit(ldpc_problems, case, method, order):
    prob, dets = ldpc_problems[case]
    S, K, D, D0 = _ldpc_cases(prob, dets, method, order, max_iter=10)
    assert len(S) >= 20, "too few non-converged shots to compare"
    post = OsdPostProcessor(prob, method, order)
    out0 = np.zeros_like(D)
    out = post.solve_batch(S, K, out_osd0=out0)
    agree = np.all(out == D, axis=1)
    agree0 = np.all(out0 == D0, axis=1)
    print(f"{case} {method}{order}: agreement {agree.sum()}/{len(S)} (OSD-0 {agree0.sum()}/{len(S)})")
    assert agree0.all()
    assert agree.all()
    assert np.all((prob.H @ out.T % 2).T == S)


# ------------------------------------------------------------------------- classical OSD


def _hamming74():
    H = np.array([[(j >> b) & 1 for j in range(1, 8)] for b in range(3)], dtype=np.uint8)
    return H


def _golay24():
    g = [1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1]  # x^11+x^10+x^6+x^5+x^4+x^2+1, low degree first
    G = np.zeros((12, 24), dtype=np.uint8)
    for i in range(12):
        G[i, i:i + 12] = g
    G[:, 23] = G[:, :23].sum(1) % 2  # overall parity
    return G


def _codewords(G):
    k = G.shape[0]
    msgs = np.array(list(itertools.product([0, 1], repeat=k)), dtype=np.int64)
    return (msgs @ G % 2).astype(np.uint8)


def test_golay_construction():
    C = _codewords(_golay24())
    w = C.sum(1)
    assert sorted(set(w.tolist())) == [0, 8, 12, 16, 24]


@pytest.mark.parametrize("which", ["hamming74_H", "golay24_G"])
def test_order_k_is_maximum_likelihood(which):
    rng = np.random.default_rng(17)
    if which == "hamming74_H":
        H = _hamming74()
        dec = OsdBlockDecoder(H=H, order=4)
        C = _codewords(gf2.gf2_nullspace(H))
    else:
        G = _golay24()
        dec = OsdBlockDecoder(G=G, order=12)
        C = _codewords(G)
    n = C.shape[1]
    llr = rng.normal(1.0, 1.5, size=(300, n)) * rng.choice([-1, 1], size=(300, n))
    out = dec.decode_llr_batch(llr)
    hard = (llr <= 0).astype(np.uint8)
    disc = (C[None, :, :] != hard[:, None, :]) @ np.abs(llr)[:, :, None]  # (S, |C|, 1)
    ml = C[np.argmin(disc[:, :, 0], axis=1)]
    assert np.array_equal(out, ml)


def test_classical_outputs_are_codewords_and_low_order_is_worse_or_equal():
    G = _golay24()
    H = gf2.gf2_nullspace(G)
    rng = np.random.default_rng(2)
    llr = rng.normal(0.8, 1.2, size=(200, 24))
    mets = []
    for order in range(0, 4):
        out = OsdBlockDecoder(G=G, order=order).decode_llr_batch(llr)
        assert not np.any(out.astype(np.int64) @ H.T % 2)
        mets.append(((out != (llr <= 0)) * np.abs(llr)).sum(1))
    for a, b in zip(mets, mets[1:]):
        assert np.all(b <= a + 1e-12)
    same = OsdBlockDecoder(H=H, order=2).decode_llr_batch(llr)
    assert np.array_equal(same, OsdBlockDecoder(G=G, order=2).decode_llr_batch(llr))


def _bch127_64_generator():
    bits = bin(int("1206534025570773100045", 8))[2:][::-1]  # galois 0.4.11: galois.BCH(127, 64), in octal
    g = np.array([int(b) for b in bits], dtype=np.uint8)
    G = np.zeros((64, 127), dtype=np.uint8)
    for i in range(64):
        G[i, i:i + 64] = g
    return G


def test_bch127_64_osd2_bler_matches_reference():
    """BCH(127,64) OSD-2 at Eb/N0 = 2.0 dB: reference 711/15686 = 4.5e-2 (an earlier independent run)."""
    G = _bch127_64_generator()
    # g(x) divides x^127 + 1 iff a cyclic shift of a codeword stays in the code
    assert gf2.gf2_rank(np.vstack([G, np.roll(G[-1], 1)])) == 64
    dec = OsdBlockDecoder(G=G, order=2)
    rng = np.random.default_rng(20260101)
    N, R, ebn0 = 2500, 64 / 127, 2.0
    msg = rng.integers(0, 2, (N, 64))
    cw = (msg @ G % 2).astype(np.uint8)
    sigma2 = 1.0 / (2 * R * 10 ** (ebn0 / 10))
    y = (1.0 - 2.0 * cw) + rng.normal(0.0, math.sqrt(sigma2), cw.shape)
    out = dec.decode_llr_batch(2 * y / sigma2)
    errs = int(np.any(out != cw, axis=1).sum())
    p_ref, n_ref = 711 / 15686, 15686
    p = errs / N
    z = (p - p_ref) / math.sqrt(p_ref * (1 - p_ref) * (1 / N + 1 / n_ref))
    print(f"BCH(127,64) OSD-2 @ 2.0 dB: {errs}/{N} = {p:.4f} (reference {p_ref:.4f}), z = {z:.2f}")
    assert abs(z) < 4


# ------------------------------------------------------------------------------ bad input


def test_bad_config_raises():
    with pytest.raises(ValueError, match="-1"):
        OsdConfig("osd_cs", -1)
    with pytest.raises(ValueError, match="'osd_x'"):
        OsdConfig("osd_x", 2)
    with pytest.raises(ValueError, match="non-negative integer"):
        OsdConfig("cs", 2.5)
    with pytest.raises(ValueError, match="osd_e"):
        OsdConfig("e", 40)
    assert OsdConfig("CS", 3) == OsdConfig("osd_cs", 3)
    assert OsdConfig("0", 5).order == 0
    assert normalize_osd_method("exhaustive") == "osd_e"


def test_order_clamped_to_k_with_warning(caplog):
    prob = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
    with caplog.at_level("WARNING"):
        post = OsdPostProcessor(prob, "osd_e", 9)
    assert post.k == 1 and post.order == 1
    assert "clamping" in caplog.text


def test_shape_mismatches_raise():
    prob = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
    post = OsdPostProcessor(prob, "osd_cs", 1)
    s = np.zeros((2, 2), dtype=np.uint8)
    with pytest.raises(ValueError, match=r"shape \(shots, 2\)"):
        post.solve_batch(np.zeros((2, 3), dtype=np.uint8), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="order_llr"):
        post.solve_batch(s, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="mask"):
        post.solve_batch(s, np.zeros((2, 3)), np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="out must be"):
        post.solve_batch(s, np.zeros((2, 3)), None, np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="binary"):
        post.solve_batch(s + 2, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="exactly one"):
        OsdBlockDecoder(order=1)
    with pytest.raises(ValueError, match="exactly one"):
        OsdBlockDecoder(H=[[1, 1]], G=[[1, 1]], order=1)
    with pytest.raises(ValueError, match="-2"):
        OsdBlockDecoder(H=[[1, 1, 1]], order=-2)
    dec = OsdBlockDecoder(H=[[1, 1, 1]], order=1)
    with pytest.raises(ValueError, match=r"shape \(shots, 3\)"):
        dec.decode_llr_batch(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="finite"):
        dec.decode_llr_batch(np.full((1, 3), np.nan))
    with pytest.raises(ValueError, match="binary"):
        OsdBlockDecoder(G=[[1, 2, 0]], order=1)
