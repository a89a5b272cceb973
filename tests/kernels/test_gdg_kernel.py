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
