"""Relay-BP / Mem-BP: relay-bp 0.2.1 as oracle, an independent numpy reference, determinism, fixed point.

Every decoder here is built with ``bits`` given: float64 lanes (``bits=0``) are relay-bp's own
arithmetic, which its oracle tests need; the registry default is 8-bit lanes.
"""

from __future__ import annotations

import numpy as np
import pytest
import relay_bp
import scipy.sparse as sp

from qdecode.decoders import DecoderInputError
from qdecode.decoders.base import observables_from_errors
from qdecode.decoders.relay_bp import GAMMA_FRAC_BITS, RelayBpDecoder, mem_bp
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.circuits import build_circuit
from tests.stats_checks import assert_ratio_at_most


def _problem(code="bb72_12_6", p=0.004, rounds=3, shots=200, seed=1):
    c = build_circuit(code, noise="bb-uniform", p=p, rounds=rounds, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(c))
    dets, obs = c.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
    return prob, dets.astype(np.uint8), obs.astype(np.uint8)


@pytest.fixture(scope="module")
def bb72():
    return _problem(p=0.004, shots=300)


@pytest.fixture(scope="module")
def bb72_hard():
    """p = 0.008: many shots need later legs, some never converge."""
    return _problem(p=0.008, shots=300, seed=5)


@pytest.fixture(scope="module")
def surface():
    c = build_circuit("surface", d=3, noise="sd6", p=0.03, basis="Z", memory_basis_only=True)
    prob = DecodingProblem.from_dem(decoding_dem(c))
    return prob, c.compile_detector_sampler(seed=4).sample(40).astype(np.uint8)


# ------------------------------------------------------------ numpy reference


def reference_relay(H, priors, s, *, gamma0, gammas, pre_iter, leg_iter, stop_after, bits=0, frac_bits=3,
                    alpha_num=256):
    """Relay-BP written edge by edge (independent of the kernels).

    Sources: arXiv:2506.01779 and relay-bp's ``crates/relay_bp/src/bp/min_sum.rs`` / ``relay.rs``.

    Float mode follows relay-bp's arithmetic order (prefix + suffix extrinsic sums); integer mode
    is the documented fixed-point rule. ``gammas[r - 1]`` are leg r's memory strengths.
    Returns ``(e, converged, iterations, legs_run, converged_solutions)``.
    """
    H = sp.csc_matrix(H)
    H.sort_indices()
    m, n = H.shape
    lam_w = np.log((1.0 - priors) / priors)
    if bits:
        msg_lim, post_lim = (1 << (bits - 1)) - 1, (1 << (bits + 1)) - 1
        lam = np.clip(np.rint(lam_w * (1 << frac_bits)), -msg_lim, msg_lim).astype(np.int64)
    else:
        msg_lim = post_lim = 1e30
        lam = lam_w.copy()
    cols = [H.indices[H.indptr[j]:H.indptr[j + 1]] for j in range(n)]
    rows = [[] for _ in range(m)]
    for j in range(n):
        for i in cols[j]:
            rows[i].append(j)

    def clip(x, lim):
        return min(max(x, -lim), lim)

    def leg(gam, M, iters):
        nu = {(i, j): clip(lam[j], msg_lim) for j in range(n) for i in cols[j]}
        for it in range(1, iters + 1):
            mu = {}
            for i in range(m):
                for j in rows[i]:
                    others = [nu[(i, k)] for k in rows[i] if k != j]
                    mag = min((abs(x) for x in others), default=msg_lim)
                    neg = (int(s[i]) + sum(x <= 0 for x in others)) % 2
                    mag = clip((mag * alpha_num) >> 8, msg_lim) if bits else mag * (alpha_num / 256)
                    mu[(i, j)] = -mag if neg else mag
            newM = M.copy()
            for j in range(n):
                if bits:
                    g = int(np.rint(gam[j] * (1 << GAMMA_FRAC_BITS)))
                    b = (int(lam[j]) * ((1 << GAMMA_FRAC_BITS) - g) + int(M[j]) * g
                         + (1 << (GAMMA_FRAC_BITS - 1))) >> GAMMA_FRAC_BITS
                    b = clip(b, post_lim)
                else:
                    b = lam[j] * (1.0 - gam[j]) + M[j] * gam[j]
                ms = [mu[(i, j)] for i in cols[j]]
                prefix = [b]
                for x in ms:
                    prefix.append(prefix[-1] + x)
                newM[j] = clip(prefix[-1], post_lim)
                suffix = 0 * b
                for k in range(len(ms) - 1, -1, -1):
                    nu[(cols[j][k], j)] = clip(prefix[k] + suffix, msg_lim)
                    suffix += ms[k]
            M = newM
            e = (M <= 0).astype(np.uint8)
            if np.array_equal(H @ e % 2, s):
                return e, True, it, M
        return e, False, iters, M

    e0, ok, its, M = leg(np.full(n, gamma0), lam.copy(), pre_iter)
    sols = [(float(lam_w[e0 == 1].sum()), 0, e0)] if ok else []
    legs_run = 0
    if len(sols) < stop_after:
        for r in range(1, len(gammas) + 1):
            e, ok, it, M = leg(gammas[r - 1], M, leg_iter)
            its += it
            legs_run = r
            if ok:
                sols.append((float(lam_w[e == 1].sum()), r, e))
                if len(sols) >= stop_after:
                    break
    if not sols:
        return e0, False, its, legs_run, sols
    best = min(sols, key=lambda t: (t[0], t[1]))
    return best[2], True, its, legs_run, sols


# ------------------------------------------------------------ relay-bp oracle


def test_leg0_bit_exact_against_relay_bp(bb72):
    """legs = 0 (Mem-BP leg only): hard decisions, convergence equal relay-bp's bit for bit.

    relay-bp 0.2.1 reports one iteration fewer for a converged leg (pre-PR #37 counter).
    """
    prob, dets, _ = bb72
    ours = RelayBpDecoder(prob, bits=0, gamma0=0.15, pre_iter=80, legs=0, stop_after=1)
    hard = ours.decode_batch(dets)
    ref = relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, gamma0=0.15, pre_iter=80, num_sets=0,
                                   set_max_iter=60, stop_nconv=1)
    res = [ref.decode_detailed(s) for s in dets]
    assert np.array_equal(hard, np.array([r.decoding for r in res]))
    conv = np.array([r.success for r in res])
    assert np.array_equal(ours.last_info.converged, conv)
    assert np.array_equal(ours.last_info.iterations, np.array([r.iterations for r in res]) + conv)


@pytest.mark.parametrize("stop_after", [1, 3])
def test_relay_legs_bit_exact_with_explicit_gammas(bb72_hard, stop_after):
    """The whole relay loop (relayed posteriors, S, least weight) equals relay-bp given the same gammas."""
    prob, dets, _ = bb72_hard
    n = prob.num_errors
    G = np.random.default_rng(5).uniform(-0.24, 0.66, size=(7, n))
    ours = RelayBpDecoder(prob, bits=0, gamma0=0.15, pre_iter=20, legs=6, leg_iter=10, stop_after=stop_after,
                          explicit_gammas=G)
    hard = ours.decode_batch(dets)
    ref = relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, gamma0=0.15, pre_iter=20, num_sets=6,
                                   set_max_iter=10, stop_nconv=stop_after, explicit_gammas=G)
    res = [ref.decode_detailed(s) for s in dets]
    assert np.array_equal(hard, np.array([r.decoding for r in res]))
    assert np.array_equal(ours.last_info.converged, np.array([r.success for r in res]))
    legs = ours.last_info.extra["legs"]
    assert legs.max() == 6 and (legs > 0).mean() > 0.3  # the later legs are exercised
    assert (~ours.last_info.converged).any()


@pytest.mark.slow
def test_ler_matches_relay_bp_statistically():
    """Own RNG vs relay-bp's stream: LER intervals overlap (bb72, p = 0.006, 6 rounds)."""
    from qdecode.sims.stats import fit_binomial

    prob, dets, obs = _problem(p=0.006, rounds=6, shots=3000, seed=21)
    ours = RelayBpDecoder(prob, bits=0).predict_observables_batch(dets)
    ref = relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, gamma0=0.15, pre_iter=80, num_sets=300,
                                   set_max_iter=60, stop_nconv=5, gamma_dist_interval=(-0.226, 0.622))
    theirs = observables_from_errors(ref.decode_batch(dets), prob)
    a = fit_binomial(num_shots=len(dets), num_hits=int((ours != obs).any(axis=1).sum()), max_likelihood_factor=1e3)
    b = fit_binomial(num_shots=len(dets), num_hits=int((theirs != obs).any(axis=1).sum()), max_likelihood_factor=1e3)
    assert a.low <= b.high and b.low <= a.high


# ------------------------------------------------------------ numpy reference


@pytest.mark.parametrize("bits", [0, 8])
def test_against_numpy_reference(surface, bits):
    """Float and 8-bit: outputs, flags, iterations, legs equal the edge-by-edge reference; the
    returned solution is the least-weight (earliest) of the converged legs, and satisfies H e = s."""
    prob, dets = surface
    n = prob.num_errors
    G = np.random.default_rng(9).uniform(-0.3, 0.9, size=(8, n))
    dec = RelayBpDecoder(prob, gamma0=0.3, pre_iter=6, legs=8, leg_iter=4, stop_after=3, explicit_gammas=G,
                         bits=bits, frac_bits=3)
    hard = dec.decode_batch(dets)
    info = dec.last_info
    H = prob.H.toarray()
    multi = 0
    for k, s in enumerate(dets):
        # leg r uses row r % rows of explicit_gammas: rows 1..7, then row 0 for leg 8
        e, ok, its, legs, sols = reference_relay(
            H, prob.priors, s, gamma0=0.3, gammas=np.vstack([G[1:8], G[:1]]), pre_iter=6, leg_iter=4,
            stop_after=3, bits=bits, frac_bits=3)
        assert np.array_equal(hard[k], e), k
        assert info.converged[k] == ok and info.iterations[k] == its and info.extra["legs"][k] == legs
        w = float(dec.weight_llr[hard[k] == 1].sum())
        assert info.extra["weight"][k] == pytest.approx(w)
        if ok:
            assert np.array_equal(H @ hard[k] % 2, s)
            assert all(w <= ws + 1e-12 for ws, _, _ in sols)
            multi += len({round(ws, 9) for ws, _, _ in sols}) > 1
    assert info.converged.any() and multi > 0  # some shot chose between different-weight solutions


# ------------------------------------------------------------ determinism, properties


def test_determinism_over_order_threads_and_batches(bb72_hard):
    prob, dets, _ = bb72_hard
    dets = dets[:120]
    kw = dict(pre_iter=20, legs=8, leg_iter=10, stop_after=2, seed=17)
    a = RelayBpDecoder(prob, bits=0, threads=1, **kw)
    ha = a.decode_batch(dets)
    ia = a.last_info
    perm = np.random.default_rng(0).permutation(len(dets))
    b = RelayBpDecoder(prob, bits=0, threads=2, **kw)
    hb = b.decode_batch(dets[perm])
    inv = np.argsort(perm)
    assert np.array_equal(hb[inv], ha)
    for key in ("legs", "weight"):
        assert np.array_equal(b.last_info.extra[key][inv], ia.extra[key])
    assert np.array_equal(b.last_info.iterations[inv], ia.iterations)
    parts = np.concatenate([b.decode_batch(dets[i:i + 7]) for i in range(0, len(dets), 7)])
    assert np.array_equal(parts, ha)
    assert np.array_equal(b.decode(dets[5]), ha[5])
    c = RelayBpDecoder(prob, bits=0, threads=1, **{**kw, "seed": 18})
    assert not np.array_equal(c.decode_batch(dets), ha) or not np.array_equal(c.last_info.iterations, ia.iterations)


def test_converged_outputs_satisfy_syndrome_and_predict_observables(bb72_hard):
    prob, dets, obs = bb72_hard
    dec = RelayBpDecoder(prob, bits=0, pre_iter=30, legs=20, leg_iter=20, stop_after=2)
    hard = dec.decode_batch(dets)
    info = dec.last_info
    synd = (prob.H @ hard.T).T % 2
    assert np.array_equal(synd[info.converged], dets[info.converged])
    assert info.converged.mean() > 0.9
    pred = dec.predict_observables_batch(dets)
    assert np.array_equal(pred, observables_from_errors(hard, prob))
    counts = dec.last_info.counts()
    assert counts["legs"] == int(info.extra["legs"].sum()) and counts["iterations"] == int(info.iterations.sum())
    assert counts["not_converged"] == int((~info.converged).sum())
    zero = dec.decode_batch(np.zeros((2, prob.num_detectors), np.uint8))
    # stop_after=2: leg 0 and leg 1 each converge in their first iteration
    assert not zero.any() and dec.last_info.iterations.tolist() == [2, 2]
    assert dec.last_info.extra["legs"].tolist() == [1, 1] and dec.last_info.extra["weight"].tolist() == [0.0, 0.0]


def test_mem_bp_is_a_single_leg(bb72):
    prob, dets, _ = bb72
    a = mem_bp(prob, gamma0=0.2, max_iter=30)
    b = RelayBpDecoder(prob, bits=0, gamma0=0.2, pre_iter=30, legs=0)
    assert np.array_equal(a.decode_batch(dets), b.decode_batch(dets))
    assert a.last_info.extra["legs"].max() == 0


def test_registry_entries(bb72):
    from qdecode.decoders.registry import DecoderSpec, UnknownDecoderError

    prob, dets, _ = bb72
    spec = DecoderSpec.create("relay-bp", ["legs=4", "leg_iter=10", "gamma_lo=-0.1", "gamma_hi=0.5"])
    assert "gamma_lo=-0.1" in spec.label() and "stop_after=5" in spec.label()
    dec = spec.build(prob)
    assert dec.gamma_interval == (-0.1, 0.5) and dec.legs == 4
    assert dec.decode_batch(dets[:3]).shape == (3, prob.num_errors)
    mem = DecoderSpec.create("mem-bp", {"max_iter": 12}).build(prob)
    assert mem.pre_iter == 12 and mem.legs == 0
    with pytest.raises(UnknownDecoderError):
        DecoderSpec.create("relay-bp", ["gamma_interval=1"])
    with pytest.raises(DecoderInputError):
        DecoderSpec.create("relay-bp", ["gamma_lo=0.5", "gamma_hi=0.1"]).build(prob)


# ------------------------------------------------------------ fixed point, bad input


def test_fixed_point_8bit_sensible(bb72_hard):
    prob, dets, obs = bb72_hard
    kw = dict(pre_iter=40, legs=20, leg_iter=30, stop_after=3)
    fl = RelayBpDecoder(prob, bits=0, **kw).predict_observables_batch(dets)
    fx_dec = RelayBpDecoder(prob, bits=8, frac_bits=3, **kw)
    fx = fx_dec.predict_observables_batch(dets)
    fails_fl = int((fl != obs).any(axis=1).sum())
    fails_fx = int((fx != obs).any(axis=1).sum())
    assert fx_dec.last_info.converged.mean() > 0.9
    # README: 8-bit Relay-BP fails as float64 does, within intervals (99.9 % one-sided here)
    assert_ratio_at_most(fails_fx, len(dets), fails_fl, len(dets), 1.0, what="relay-bp[bits=8]")
    assert fx_dec.prior_llr.dtype == np.int32 and np.abs(fx_dec.prior_llr).max() <= 127


@pytest.mark.parametrize("kw,match", [
    (dict(gamma0=float("nan")), "gamma0"),
    (dict(gamma_interval=(0.5, 0.5)), "lo < hi"),
    (dict(gamma_interval=0.3), "pair"),
    (dict(gamma_interval=(0.0, float("inf"))), "gamma_interval"),
    (dict(pre_iter=0), "pre_iter"),
    (dict(legs=-1), "legs"),
    (dict(leg_iter=2.5), "leg_iter"),
    (dict(stop_after=0), "stop_after"),
    (dict(alpha=0.0), "alpha"),
    (dict(alpha=1.5), "alpha"),
    (dict(seed=-1), "seed"),
    (dict(seed=1 << 64), "seed"),
    (dict(bits=1), "bits"),
    (dict(bits=8, frac_bits=8), "frac_bits"),
    (dict(threads=0), "threads"),
    (dict(explicit_gammas=np.zeros((2, 3))), "explicit_gammas"),
    (dict(explicit_gammas=np.full((1, 1152), np.nan)), "explicit_gammas"),
    (dict(gamma0=1e9), "magnitude"),
])
def test_bad_parameters(bb72, kw, match):
    prob = bb72[0]
    with pytest.raises(DecoderInputError, match=match):
        RelayBpDecoder(prob, **{"bits": 0, **kw})


def test_bad_syndromes(bb72):
    prob = bb72[0]
    dec = RelayBpDecoder(prob, bits=0, legs=1)
    with pytest.raises(DecoderInputError):
        dec.decode_batch(np.zeros((2, prob.num_detectors + 1), np.uint8))
    with pytest.raises(DecoderInputError):
        dec.decode_batch(np.full((1, prob.num_detectors), 2, np.uint8))
    assert dec.decode_batch(np.zeros((0, prob.num_detectors), np.uint8)).shape == (0, prob.num_errors)


def test_xyz_decoding_on_the_surface_code_dem():
    """XYZ decoding: both detector bases, Y errors kept as single columns touching X and Z detectors."""
    from qdecode.decoders.matching import MatchingDecoder
    from qdecode.problem import decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    circ = build_circuit("surface", d=5, rounds=5, noise="sd6", p=0.006, basis="Z")
    dem = decoding_dem(circ)
    prob = DecodingProblem.from_dem(dem)
    # detectors of both bases: the X-type ones are not deterministic in a Z memory, yet they are in the DEM
    assert prob.num_detectors == circ.num_detectors == 120
    # Y correlations kept: some column flips detectors that no single decomposed X or Z component
    # covers, i.e. a column with more than two detectors
    assert int(np.diff(prob.H.tocsc().indptr).max()) > 2
    dets, obs = circ.compile_detector_sampler(seed=5).sample(1200, separate_observables=True)
    dets, obs = dets.astype(np.uint8), obs.astype(np.uint8)
    # IBM's surface tuning
    relay = RelayBpDecoder(prob, bits=0, gamma0=0.65, gamma_interval=(-0.25454, 0.98518), legs=100)
    errs = relay.decode_batch(dets)
    conv = relay.last_info.converged
    assert conv.mean() > 0.99
    synd = (prob.H @ errs[conv].T.astype(np.int64)).T % 2
    assert np.array_equal(synd.astype(np.uint8), dets[conv])
    k_relay = int(np.any(observables_from_errors(errs, prob) != obs, axis=1).sum())
    k_match = int(np.any(MatchingDecoder(prob).predict_observables_batch(dets) != obs, axis=1).sum())
    # IBM: XYZ Relay-BP is on par with or better than matching on the surface code; require the
    # relay count to lie below matching's upper 1e3-likelihood bound
    hi = fit_binomial(num_shots=1200, num_hits=k_match, max_likelihood_factor=1e3).high
    assert k_relay / 1200 <= hi, (k_relay, k_match)
    assert k_match >= 15  # enough failures for the comparison to mean something
