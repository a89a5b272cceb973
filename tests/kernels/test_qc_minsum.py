"""The QC min-sum lanes kernel against a plain per-frame reference, bit for bit.

The reference below is written from the update rules in :mod:`qdecode.kernels.qc_minsum`'s docstring, one frame
and one lifted check at a time with Python integers (saturation as ``clip``), on the lifted edge list built here
from the base matrix: it shares no code with the kernel. Frames are the all-zero codeword (a codeword of every
code) through a noisy channel, so that some frames converge early and some do not.
"""

from __future__ import annotations

import numpy as np
import pytest

from qdecode.kernels.qc_minsum import LANES_I8, LANES_I16, QcOut, QcParams, qc_graph, qc_minsum_range


def _lifted_checks(shifts, Z):
    """Per lifted check (base row i, check z): the list of (lifted edge index, variable)."""
    checks = []
    e = 0
    edges_of_row = []
    for i in range(shifts.shape[0]):
        row = []
        for j in range(shifts.shape[1]):
            if shifts[i, j] >= 0:
                row.append((e, j, int(shifts[i, j]) % Z))
                e += 1
        edges_of_row.append(row)
    for row in edges_of_row:
        for z in range(Z):
            checks.append([(be * Z + z, j * Z + (z + s) % Z) for be, j, s in row])
    return checks, e


def _reference(shifts, Z, llr, *, lim, msg_lim, flooding, normalized, beta, num, shift, max_iter, early_stop):
    checks, nnz = _lifted_checks(shifts, Z)
    clip = lambda x: max(-lim, min(lim, x))  # noqa: E731
    llr = [int(x) for x in llr]
    post = list(llr)
    msg = [0] * (nnz * Z)

    def syndrome_ok(p):
        return all(sum(p[v] <= 0 for _, v in c) % 2 == 0 for c in checks)

    for it in range(1, max_iter + 1):
        read = list(post) if flooding else post
        if flooding:
            post = list(llr)
        for c in checks:
            q = [max(msg_lim - lim, min(lim - msg_lim, read[v] - msg[r])) for r, v in c]
            mags = [abs(x) for x in q]
            m1, m2, arg = msg_lim, msg_lim, 0
            for t, a in enumerate(mags):
                m2 = min(m2, max(a, m1))
                if a < m1:
                    m1, arg = a, t
            par = sum(x < 0 for x in q) % 2
            corr = (lambda m: (m * num) >> shift) if normalized else (lambda m: max(m - beta, 0))
            o1, o2 = corr(m1), corr(m2)
            for t, (r, v) in enumerate(c):
                mag = o2 if t == arg else o1
                rn = -mag if (par ^ (q[t] < 0)) else mag
                msg[r] = rn
                post[v] = clip((post[v] if flooding else q[t]) + rn)
        if early_stop and syndrome_ok(post):
            return np.array([p <= 0 for p in post], np.uint8), it, True
    return np.array([p <= 0 for p in post], np.uint8), max_iter, syndrome_ok(post)


CASES = [  # (bits, flooding, normalized, early_stop, frames)
    (8, False, False, True, 70),
    (8, False, True, False, 64),
    (8, True, False, True, 40),
    (16, False, False, True, 33),
    (16, True, True, False, 32),
]


@pytest.mark.parametrize("bits, flooding, normalized, early_stop, frames", CASES)
def test_kernel_equals_reference(bits, flooding, normalized, early_stop, frames):
    rng = np.random.default_rng(7 + bits + 2 * flooding + 4 * normalized)
    Z = 5
    base = rng.integers(0, Z, size=(4, 9))
    base[rng.random(base.shape) < 0.45] = -1
    base[:, 0] = rng.integers(0, Z, size=4)  # no empty row
    dtype = np.int8 if bits == 8 else np.int16
    lim = 127 if bits == 8 else 32767
    frac = 2 if bits == 8 else 6
    sigma = 0.9
    y = 1.0 + sigma * rng.standard_normal((frames, base.shape[1] * Z))
    llr = np.clip(np.rint(2 * y / sigma**2 * 2**frac), -lim, lim).astype(dtype)
    beta = 2 if bits == 8 else 32
    msg_lim = lim // 4
    prm = QcParams(max_iter=8, flooding=flooding, normalized=normalized, beta=dtype(beta), num=192, shift=8,
                   lim=dtype(lim), msg_lim=dtype(msg_lim), early_stop=early_stop)
    out = QcOut(np.zeros(llr.shape, np.uint8), np.zeros(frames, np.int32), np.zeros(frames, np.bool_))
    qc_minsum_range(qc_graph(base, Z), prm, llr, out, 0, frames)
    for s in range(frames):
        bits_ref, it_ref, ok_ref = _reference(base, Z, llr[s], lim=lim, msg_lim=msg_lim, flooding=flooding,
                                              normalized=normalized, beta=beta, num=192, shift=8, max_iter=8,
                                              early_stop=early_stop)
        assert np.array_equal(out.bits[s], bits_ref), s
        assert (out.iterations[s], bool(out.converged[s])) == (it_ref, ok_ref), s
    if early_stop:  # the cases exercise both outcomes
        assert out.converged.any() and (out.iterations < 8).any()


def test_range_writes_only_its_rows():
    rng = np.random.default_rng(3)
    base = np.array([[0, 1, -1, 2], [1, -1, 0, 0]])
    llr = rng.integers(-20, 40, size=(LANES_I16 + 3, 12)).astype(np.int16)
    prm = QcParams(5, False, False, np.int16(2), 192, 8, np.int16(32767), np.int16(8191), True)
    out = QcOut(np.full(llr.shape, 9, np.uint8), np.full(len(llr), -1, np.int32), np.zeros(len(llr), np.bool_))
    qc_minsum_range(qc_graph(base, 3), prm, llr, out, 2, LANES_I16 + 1)
    assert (out.bits[:2] == 9).all() and (out.bits[LANES_I16 + 1:] == 9).all()
    assert (out.iterations[2:LANES_I16 + 1] >= 1).all() and (out.iterations[:2] == -1).all()


def test_lane_counts_are_vector_widths():
    assert LANES_I8 * 8 == 512 and LANES_I16 * 16 == 512


def test_wrong_dtype_is_refused():
    base = np.array([[0, 1]])
    out = QcOut(np.zeros((1, 2), np.uint8), np.zeros(1, np.int32), np.zeros(1, np.bool_))
    with pytest.raises(TypeError, match="int8 or int16"):
        qc_minsum_range(qc_graph(base, 1), QcParams(1, False, False, 0.5, 1, 0, 1.0, 0.5, True),
                        np.zeros((1, 2)), out, 0, 1)
