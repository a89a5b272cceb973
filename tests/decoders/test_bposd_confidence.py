"""Soft output of BP+OSD (``bposd``, ``bposd-e``; :meth:`BpOsdDecoder.predict_with_confidence`).

* the kernel's candidate tracking (:meth:`OsdPostProcessor.solve_gap_batch`) against a plain enumeration of
  the candidates each OSD method tests, on random small problems (ties and negative weights included), and
  its decisions against :meth:`OsdPostProcessor.solve_batch`, bit for bit;
* exhaustive OSD-E (order ``n - rank H``: every correction of the syndrome) against ``mle``'s exact gap;
* on a circuit DEM: the observables of ``predict_observables_batch``, ``last_info``, the sign of the gap
  where BP did not converge, the packed path;
* the gap path with numba's JIT off (this file run as a script) against the jitted one, bit for bit.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import stim

import qdecode
from qdecode.decoders.bposd import BpOsdDecoder, BpOsdEDecoder
from qdecode.decoders.confidence import DB_PER_NEPER, class_codes
from qdecode.decoders.mle import MleDecoder
from qdecode.decoders.osd import OsdPostProcessor, other_class_weight
from qdecode.decoders.registry import get_entry
from qdecode.problem import DecodingProblem

METHODS = [("osd0", 0), ("osd_e", 1), ("osd_e", 3), ("osd_cs", 1), ("osd_cs", 3), ("osd_cs", 10)]
GAP_TOL_DB = 1e-4  # float32 gaps of weights that agree to 1e-9


# ------------------------------------------------------------ candidate enumeration (reference)


def _rank(A: np.ndarray) -> int:
    A = A.copy() % 2
    r = 0
    for c in range(A.shape[1]):
        rows = np.flatnonzero(A[r:, c]) + r
        if rows.size == 0:
            continue
        A[[r, rows[0]]] = A[[rows[0], r]]
        for i in np.flatnonzero(A[:, c]):
            if i != r:
                A[i] ^= A[r]
        r += 1
        if r == A.shape[0]:
            break
    return r


def reference_candidates(H, s, key, method, order):
    """The corrections OSD tests, in test order (ldpc's definitions; ``tests/kernels/test_osd.py``), or None
    when ``s`` is outside H's column space."""
    m, n = H.shape
    rank_h = _rank(H)
    piv, nonpiv = [], []
    for j in np.argsort(key, kind="stable"):
        if len(piv) < rank_h and _rank(H[:, piv + [int(j)]]) > len(piv):
            piv.append(int(j))
        else:
            nonpiv.append(int(j))
    solve = {}  # H_S x -> x over the pivot columns (unique: they are independent)
    for bits in itertools.product((0, 1), repeat=len(piv)):
        x = np.array(bits, dtype=np.uint8)
        solve[((H[:, piv].astype(np.int64) @ x) % 2).astype(np.uint8).tobytes()] = x

    def correction(T):
        t = s.astype(np.int64).copy()
        for j in T:
            t = (t + H[:, j]) % 2
        x = solve.get(t.astype(np.uint8).tobytes())
        if x is None:
            return None
        e = np.zeros(n, dtype=np.uint8)
        e[piv] = x
        e[list(T)] = 1
        return e

    e0 = correction(())
    if e0 is None:
        return None
    k = len(nonpiv)
    order = min(order, k)
    if method == "osd0" or order == 0 or k == 0:
        return [e0]
    if method == "osd_e":
        flips = [tuple(nonpiv[b] for b in range(order) if (i >> b) & 1) for i in range(1, 1 << order)]
    else:
        flips = [(j,) for j in nonpiv] + [(nonpiv[a], nonpiv[b]) for a in range(order) for b in range(a + 1, order)]
    return [e0] + [correction(T) for T in flips]


def _seq_weight(e, w) -> float:
    """``W(e)`` summed in column order from 0.0 (the kernel's and the decoder's order)."""
    acc = 0.0
    for j in np.flatnonzero(e):
        acc += float(w[j])
    return acc


@pytest.mark.parametrize("chunk", range(3))
def test_tracking_equals_enumeration(chunk):
    """V1 = least W of a tested candidate; for every class c, the least W of another class is V2 where
    c = code1, else V1 (exact: the same sequential sums); decisions are solve_batch's."""
    from tests.decoders.decoder_problems import random_check_matrix  # here: the JIT-off script runs without tests/

    rng = np.random.default_rng(500 + chunk)
    checked = 0
    for _ in range(100):
        problem, H = random_check_matrix(rng)
        n = problem.num_errors
        L = problem.L.toarray().astype(np.int64)
        codes = class_codes(problem.L)
        e = (rng.random((3, n)) < 0.3).astype(np.int64)
        s = ((e @ H.T.astype(np.int64)) % 2).astype(np.uint8)
        s[2] = rng.integers(0, 2, s.shape[1])  # possibly outside the column space
        keys = rng.choice([-2.0, -0.5, 0.0, 1.0, 3.5], (3, n))
        for method, order in METHODS:
            post = OsdPostProcessor(problem, method, order)
            out, found = post.solve_gap_batch(s, keys, codes, problem.llr)
            assert np.array_equal(out, post.solve_batch(s, keys)), (method, order)
            for i in range(3):
                cands = reference_candidates(H, s[i], keys[i], method, post.order)
                if cands is None:
                    assert found.status[i] == 1 and found.weight[i] == np.inf and found.weight_other[i] == np.inf
                    continue
                assert found.status[i] == 0
                W = np.array([_seq_weight(c, problem.llr) for c in cands])
                cls = [tuple((L @ c) % 2) for c in cands]
                assert found.weight[i] == W.min()
                for c in set(cls):
                    code = np.bitwise_xor.reduce(codes[np.flatnonzero(cands[cls.index(c)])], initial=np.uint64(0))
                    others = [w for w, c2 in zip(W, cls) if c2 != c]
                    want = min(others) if others else np.inf
                    assert other_class_weight(found, np.full(3, code, np.uint64))[i] == want, (method, order, i, c)
                absent = np.full(3, 1 << 40, np.uint64)  # a class no candidate has: the lightest of all
                assert other_class_weight(found, absent)[i] == W.min()
                checked += 1
    assert checked > 800


def test_negative_gap_from_unequal_priors():
    """OSD chooses by ln(1/p): {0} (p = 0.1) over {1, 2} (p = 0.3 each), whose W is smaller (documented sign)."""
    problem = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], [0.1, 0.3, 0.3], L=[[1, 0, 0]])
    post = OsdPostProcessor(problem, "osd_cs", 1)
    out, found = post.solve_gap_batch(np.array([[1, 0]], np.uint8), np.zeros((1, 3)), class_codes(problem.L),
                                      problem.llr)
    assert out[0].tolist() == [1, 0, 0]
    other = other_class_weight(found, np.array([1], np.uint64))[0]
    assert np.isclose(other, 2 * np.log(0.7 / 0.3)) and other < np.log(9.0)


# ------------------------------------------------------------ exhaustive OSD-E = mle


@pytest.mark.parametrize("kind,d,random_priors", [("repetition", 5, True), ("repetition", 7, True),
                                                  ("surface", 3, False), ("surface", 3, True),
                                                  ("surface", 5, False)])
def test_exhaustive_osd_e_gap_equals_mle(kind, d, random_priors):
    """OSD-E of order n - rank(H) tests every correction of the syndrome: ``weight_other`` is the lightest
    correction of another class than the returned one, and the gap is mle's where the decision is a lightest."""
    from tests.decoders.decoder_problems import code_capacity  # here: the JIT-off script runs without tests/

    rng = np.random.default_rng(11 * d + random_priors)
    problem, s = code_capacity(kind, d, rng, random_priors)
    k = OsdPostProcessor(problem).k
    dec = BpOsdEDecoder(problem, osd_order=k)
    obs, gap = dec.predict_with_confidence(s)
    info = dec.last_info
    assert np.array_equal(obs, dec.predict_observables_batch(s))
    mle = MleDecoder(problem)
    mle_obs, mle_gap = mle.predict_with_confidence(s)
    best, other = mle.last_info.extra["weight_best"], mle.last_info.extra["weight_other"]
    assert problem.num_observables == 1  # two classes: the lightest of the other one is mle's best or other
    want_other = np.where((obs == mle_obs).all(axis=1), other, best)
    np.testing.assert_allclose(info.extra["weight_other"], want_other, rtol=0, atol=1e-9)
    np.testing.assert_allclose(gap, (want_other - info.extra["weight_best"]) * DB_PER_NEPER, rtol=0, atol=GAP_TOL_DB)
    lightest = np.isclose(info.extra["weight_best"], best, rtol=0, atol=1e-9)
    assert lightest.mean() > 0.9
    np.testing.assert_allclose(gap[lightest], mle_gap[lightest], rtol=0, atol=GAP_TOL_DB)
    failed = ~info.converged
    if not random_priors:  # equal priors: OSD's cost orders like W, so OSD's choice is a lightest correction
        assert np.all(lightest[failed]) and np.all(gap[failed] >= 0)


# ------------------------------------------------------------ circuit DEM


def _circuit():
    circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                  after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
    dem = circ.detector_error_model(decompose_errors=True)
    dets = dem.compile_sampler(seed=4242).sample(600)[0].astype(np.uint8)
    return dem, dets


@pytest.mark.parametrize("spec", ["bposd", "bposd-e", "bposd[max_iter=3]", "bposd-e[max_iter=3,osd_order=6]"])
def test_circuit_observables_info_and_sign(spec):
    dem, dets = _circuit()
    dec = qdecode.decoder(spec, dem)
    assert dec.has_confidence and get_entry(spec.split("[")[0]).has_confidence
    obs, gap = dec.predict_with_confidence(dets)
    info = dec.last_info
    assert obs.dtype == np.uint8 and obs.shape == (len(dets), 1) and gap.dtype == np.float32 and gap.shape == (600,)
    assert np.array_equal(obs, dec.predict_observables_batch(dets))
    assert np.array_equal(info.converged, dec.last_info.converged)
    assert np.array_equal(info.extra["osd"], ~info.converged)
    problem = dec.problem
    errors = dec.decode_batch(dets)
    wb, wo = info.extra["weight_best"], info.extra["weight_other"]
    assert wb.dtype == wo.dtype == np.float64
    np.testing.assert_allclose(wb, errors @ problem.llr, rtol=1e-12, atol=1e-12)
    assert not np.isnan(gap).any()  # every syndrome is in H's column space
    np.testing.assert_allclose(gap, ((wo - wb) * DB_PER_NEPER).astype(np.float32), rtol=0, atol=0)
    if not spec.startswith("bposd-e"):  # OSD-CS's singles over all non-pivots find another class on most shots
        assert np.mean(np.isfinite(gap)) > 0.9  # (OSD-E of order 4 flips only the first 4: on about a quarter)
    # BP did not converge: OSD's choice is the cheapest tested candidate by ln(1/p) = W + ln(1/(1-p)), so any
    # candidate of another class is lighter by at most the returned decision's sum of ln(1/(1-p))
    failed = ~info.converged
    slack = errors.astype(np.float64) @ -np.log1p(-problem.priors)
    assert np.all(wo[failed] >= wb[failed] - slack[failed] - 1e-9)
    if "max_iter=3" in spec:
        assert failed.sum() >= 20


@pytest.mark.parametrize("name", ["bposd", "bposd-e"])
def test_packed_and_unpacked_agree(name):
    dem, dets = _circuit()
    dec = qdecode.decoder(name, dem)
    obs, gap = dec.predict_with_confidence(dets)
    packed_obs, packed_gap = dec.predict_with_confidence_packed(np.packbits(dets, axis=1, bitorder="little"))
    assert np.array_equal(packed_obs, np.packbits(obs, axis=1, bitorder="little"))
    assert np.array_equal(packed_gap, gap, equal_nan=True)


def test_gap_is_inf_without_another_class():
    fixed = DecodingProblem.from_check_matrix([[1, 0], [0, 1]], 0.1, L=[[1, 0]])  # the syndrome fixes the class
    no_obs = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
    for problem in (fixed, no_obs):
        for cls in (BpOsdDecoder, BpOsdEDecoder):
            dec = cls(problem)
            s = np.array([[0, 0], [1, 0], [1, 1]], dtype=np.uint8)
            obs, gap = dec.predict_with_confidence(s)
            assert obs.shape == (3, problem.num_observables) and np.all(np.isposinf(gap))


# ------------------------------------------------------------ JIT off


def gap_outputs() -> dict[str, np.ndarray]:
    """The gap path's outputs on a d = 3 surface-code DEM (one round; small, for the Python run)."""
    circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=1,
                                  after_clifford_depolarization=0.03, before_measure_flip_probability=0.03)
    dem = circ.detector_error_model(decompose_errors=True)
    dets = dem.compile_sampler(seed=20250).sample(8)[0].astype(np.uint8)
    out = {}
    for spec in ("bposd[max_iter=6,osd_order=4]", "bposd-e[max_iter=6,osd_order=2]", "bposd[max_iter=1,osd_order=4]",
                 "bposd-e[max_iter=1,osd_order=3]"):
        dec = qdecode.decoder(spec, dem)
        out[f"{spec}/obs"], out[f"{spec}/gap"] = dec.predict_with_confidence(dets)
        for key, value in dec.last_info.extra.items():
            out[f"{spec}/{key}"] = np.asarray(value)
    return out


def test_jit_off_gives_the_same_gaps(tmp_path):
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    path = tmp_path / "out.npz"
    quiet = "ignore:overflow encountered in scalar:RuntimeWarning"
    proc = subprocess.run([sys.executable, "-W", quiet, __file__, str(path)], env=env,
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    jit_on = gap_outputs()
    with np.load(path) as data:
        jit_off = dict(data)
    assert sorted(jit_on) == sorted(jit_off)
    for key, a in jit_on.items():
        b = jit_off[key]
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), key


if __name__ == "__main__":  # the subprocess of test_jit_off_gives_the_same_gaps
    np.savez(sys.argv[1], **gap_outputs())
