"""GDG kernel helpers (:mod:`qdecode.kernels.gdg`) tested in isolation."""

import numpy as np
import pytest


@pytest.mark.parametrize("seed", range(6))
def test_stable_smallest_is_the_stable_argsort_prefix(seed):
    from qdecode.kernels.gdg import _stable_smallest

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    values = rng.integers(-5, 6, size=n).astype(np.float64) * (0.5 if seed % 2 else 1.0)  # many ties
    if seed == 5:
        values[:] = 1.0  # all tied
    ref = np.argsort(values, kind="mergesort")
    for k in sorted({0, 1, n // 3, n - 1, n, n + 4}):
        order = np.full(n, -7, dtype=np.int64)
        _stable_smallest(values, k, order)
        kk = min(k, n)
        assert np.array_equal(order[:kk], ref[:kk]), (n, k)
        assert np.all(order[kk:] == -7)


@pytest.mark.parametrize("osd_key", ["last", "sum4", "sum8"])
def test_range_kernels_and_reliability_keys_agree_with_one_shot_decodes(osd_key):
    """The range kernels (:class:`GdgOut`, fresh or caller-owned buffers) equal one :func:`gdg_decode` per
    shot, and :func:`reliability_keys` rebuilds each unconverged shot's key (it is set before the
    shortening, so ``new_n_cap`` does not change it). The decoder's own buffers keep a pre-BP ring of
    ``max(4, K)`` posteriors (8 for ``sum8``, more than ``pre_iter``), the range kernels' of 4: the same
    decisions."""
    from qdecode.decoders.gdg import GdgDecoder
    from qdecode.kernels import gdg
    from qdecode.problem import DecodingProblem

    rng = np.random.default_rng(7)
    m, n = 24, 60
    H = np.zeros((m, n), dtype=np.uint8)
    for j in range(n):
        H[rng.choice(m, 3, replace=False), j] = 1
    dec = GdgDecoder(DecodingProblem.from_check_matrix(H, 0.08), threads=1, pre_iter=3, step_iter=3, max_step=6,
                     max_tree_depth=2, max_side_depth=4, side_step=3, new_n=40, osd_key=osd_key)
    graph, params = dec.kernel_args()
    e = (rng.random((40, n)) < 0.08).astype(np.uint8)
    s = ((H.astype(np.int64) @ e.T).T % 2).astype(np.uint8)
    S = s.shape[0]

    def outs():
        return gdg.GdgOut(np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int64),
                          np.zeros(S, np.int64))

    work = dec._own_work()
    assert work.hist.shape[1] == max(4, dec.key_len)
    one, keys = outs(), {}
    for i in range(S):
        one.converged[i], one.iterations[i], one.branches[i] = gdg.gdg_decode(graph, s[i], params, work,
                                                                              one.decision[i])
        if not one.converged[i] and one.iterations[i] > params.pre_iter:
            keys[i] = np.zeros(n)
            gdg.reliability_key(work, keys[i], params.pre_iter, dec.key_len)
    fresh, owned = outs(), outs()
    gdg.gdg_decode_range(graph, s, params, dec.max_guess, fresh, 0, S)
    gdg.gdg_decode_range_work(graph, s, params, work, owned, 0, S)
    for a, b in ((one, fresh), (one, owned)):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert keys, "no shot left pre-BP unconverged: the problem is too easy to test the keys"
    shots = np.array(sorted(keys), dtype=np.int64)
    rebuilt = np.zeros((shots.size, n))
    gdg.reliability_keys(graph, s, shots, params, work, rebuilt, dec.key_len)
    assert np.array_equal(rebuilt, np.stack([keys[i] for i in shots]))
