"""The min-sum core: the check-node and variable-node updates of every BP-family kernel.

One iteration of (normalised, offset) min-sum on check ``i`` and variable ``j``::

    mu_{i->j} = (-1)^(s_i + #{j' != j: nu_{j'->i} <= 0}) * clip(max(scale(min_{j' != j} |nu_{j'->i}|) - beta, 0))
    M_j       = clip_post(b_j + sum_i mu_{i->j})            # b_j: the prior (Relay-BP: the memory prior)
    nu_{j->i} = clip(M_j - mu_{i->j})                       # extrinsic message
    e_j       = 1 if M_j <= 0 else 0

``scale(x)`` is ``alpha * x`` (floats) or ``(x * num) >> shift`` (integers), see
:mod:`qdecode.kernels.arith`; a message counts as negative when it is ``<= 0``.

A check's outgoing messages are described by its *compressed state*: the two least incoming
magnitudes ``min1 <= min2``, the variable ``arg`` holding the least one (the first one on ties,
which receives ``min2``), and the parity of the incoming signs with the syndrome bit. Every kernel
keeps this state, in its own layout (one shot: ``[i]``; lanes of shots: ``[i, w]``), and calls
these helpers on scalars, so the arithmetic is written once:

- :func:`fold_min` folds one incoming magnitude into the two-minimum state;
- :func:`check_magnitude` turns a minimum into the scaled, offset, saturated outgoing magnitude;
- :func:`signed` gives a magnitude its sign without a branch;
- :func:`alpha_at` is the scaling of iteration ``t`` (fixed, or adaptive ``1 - 2^-t``);
- :func:`extrinsic` is the variable's outgoing message;
- :func:`prior_state` is the compressed check state of the prior messages;
- :func:`history_start` is the first iteration of a posterior history (the ordering key of OSD), and
  :func:`history_rows` / :func:`keep_history` keep it: the last ``k`` posteriors in a ring of ``k`` rows, or
  their running minimum over every iteration (:data:`HISTORY_MIN`) in a ring of one row;
- :func:`flip_decision` keeps the syndrome of the hard decision, ``H e + s``, up to date when a
  decision flips, so that every kernel's convergence test is a counter test.

They are ``inline="always"``: numba splices them into the callers' loops, so a lane loop still
vectorises (each helper is a handful of selects, no branches) and the scalar kernels pay no call.
The kernels that use them: :mod:`qdecode.kernels.bp` (one-shot flooding on the compressed state,
two-phase flooding and layered on edge messages), :mod:`qdecode.kernels.minsum_lanes` (flooding
over lanes of shots) and :mod:`qdecode.kernels.relay` (Relay-BP legs). GDG's residual-graph loop
(:mod:`qdecode.kernels.gdg`) writes the same fold out, for a measured reason stated there.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from qdecode.kernels.arith import clip, scale


@numba.njit(cache=True, nogil=True, inline="always")
def fold_min(a, j, min1, min2, arg):
    """Fold magnitude ``a`` (of variable or edge ``j``) into a check's state: returns ``(min1, min2, arg)``.

    Branch-free: ``min2' = min(min2, max(a, min1))``, ``min1' = min(min1, a)``; ``arg`` moves to
    ``j`` only on a strict decrease, so the first of equal least magnitudes keeps it.
    """
    hi = a if a > min1 else min1
    lt = a < min1
    return (a if lt else min1), (hi if hi < min2 else min2), (j if lt else arg)


@numba.njit(cache=True, nogil=True, inline="always")
def check_magnitude(minimum, alpha, num, shift, beta, msg_lim):
    """Outgoing magnitude ``clip(max(scale(minimum) - beta, 0), msg_lim)`` (message dtype)."""
    zero = msg_lim - msg_lim
    v = scale(minimum, alpha, num, shift) - beta
    return clip(v if v > zero else zero, msg_lim)


@numba.njit(cache=True, nogil=True, inline="always")
def signed(mag, neg):
    """``-mag`` when ``neg`` (0 or 1) is 1, else ``mag``, without a branch (exact in floats and integers).

    ``neg`` as int64 is what numba computes ``1 - 2 * neg`` in; numpy would keep a uint8 ``neg``'s type (255)."""
    return mag * (1 - 2 * np.int64(neg))


@numba.njit(cache=True, nogil=True, inline="always")
def alpha_at(t, alpha, alpha_num, alpha_shift, adaptive):
    """Scaling of iteration ``t >= 1``: ``(alpha, num, shift)``; adaptive: ``1 - 2^-t``, i.e. ``(2^s - 1) >> s``."""
    if adaptive:
        s = t if t < 30 else 30
        return 1.0 - 0.5**t, (1 << s) - 1, s
    return alpha, alpha_num, alpha_shift


@numba.njit(cache=True, nogil=True, inline="always")
def extrinsic(total, c, msg_lim):
    """Variable-to-check message ``clip(total - c, msg_lim)``: the posterior less the check's own message."""
    return clip(total - c, msg_lim)


@numba.njit(cache=True, nogil=True, inline="always")
def negative(x):
    """1 (uint8) when message ``x`` counts as negative (``x <= 0``), else 0."""
    return np.uint8(x <= 0)


@numba.njit(cache=True, nogil=True, inline="always")
def flip_decision(j, var_ptr, var_chks, parity):
    """Variable ``j``'s hard decision flipped: toggle ``parity`` (``H e + s``, uint8 per check) on its checks.

    Returns the change in the number of unsatisfied checks.
    """
    delta = 0
    for k in range(var_ptr[j], var_ptr[j + 1]):
        i = var_chks[k]
        parity[i] ^= 1
        delta += 1 if parity[i] else -1
    return delta


#: ``hist_k`` of the running-minimum key (``osd_key=min``): ``min_{t <= T} M_j(t)`` over every iteration of the
#: shot, kept in a ring of one row. No sum key needs a one-row ring (the sum of the last posterior is the
#: posterior itself, stored without a ring), so a ring of one row *is* the running minimum.
HISTORY_MIN = -1


@numba.njit(cache=True, nogil=True, inline="always")
def history_rows(hist_k, keep_post):
    """Rows of the posterior history ring of key ``hist_k``: ``k`` for the sum of the last ``k > 1``
    posteriors, 1 for :data:`HISTORY_MIN`, 0 for the last posterior alone or when posteriors are not kept."""
    if not keep_post:
        return 0
    return 1 if hist_k == HISTORY_MIN else (hist_k if hist_k > 1 else 0)


def history_top(ring):
    """The largest value of ``ring``'s dtype (``inf`` for floats): the running minimum of no posterior."""
    return np.inf if np.issubdtype(ring.dtype, np.floating) else np.iinfo(ring.dtype).max


@overload(history_top, inline="always")
def _history_top_impl(ring):
    if isinstance(ring.dtype, types.Float):
        return lambda ring: np.inf
    return lambda ring: np.iinfo(ring.dtype).max


@numba.njit(cache=True, nogil=True, inline="always")
def keep_history(ring, r, j, w, v):
    """Keep lane ``w``'s posterior ``v`` of variable ``j`` in a lane ring ``(k, n, W)``: a one-row ring folds it
    into the running minimum; a ring of ``k > 1`` rows stores it in row ``r`` (skipped when ``r < 0``)."""
    if ring.shape[0] == 1:
        ring[0, j, w] = min(ring[0, j, w], v)
    elif r >= 0:
        ring[r, j, w] = v


@numba.njit(cache=True, nogil=True)
def restart_history(ring, w):
    """Empty lane ``w``'s running minimum (a one-row ring ``(1, n, W)``) for its next shot; other rings are
    overwritten row by row and need nothing."""
    if ring.shape[0] == 1:
        top = history_top(ring)
        for j in range(ring.shape[1]):
            ring[0, j, w] = top


@numba.njit(cache=True, nogil=True, inline="always")
def history_start(iterations, k):
    """First iteration of the last ``k`` of ``iterations`` (all of them when fewer ran).

    A posterior history key is ``sum_{t = history_start(T, k)}^{T} M_j(t)``, summed oldest first,
    with ``M_j(t)`` kept in a ring of ``k`` rows at row ``(t - 1) % k``.
    """
    return iterations - k + 1 if iterations > k else 1


@numba.njit(cache=True, nogil=True)
def prior_state(var_ptr, var_chks, llr0, msg_lim, sgn0, min1_0, min2_0, arg0, par0):
    """Compressed check state of the messages ``nu = clip(lambda)`` (BP's first iteration; every Relay-BP leg).

    ``sgn0`` (nnz,) uint8: the sign of each CSC edge's message; per check ``min1_0``, ``min2_0``,
    ``arg0`` (the variable holding the least magnitude) and ``par0``, the sign parity *without*
    the syndrome bit (the caller XORs it in).
    """
    m = min1_0.shape[0]
    n = llr0.shape[0]
    for i in range(m):
        min1_0[i] = msg_lim
        min2_0[i] = msg_lim
        arg0[i] = -1
        par0[i] = 0
    for j in range(n):
        x = clip(llr0[j], msg_lim)
        neg = negative(x)
        a = abs(x)
        for k in range(var_ptr[j], var_ptr[j + 1]):
            i = var_chks[k]
            sgn0[k] = neg
            par0[i] ^= neg
            min1_0[i], min2_0[i], arg0[i] = fold_min(a, j, min1_0[i], min2_0[i], arg0[i])


@numba.njit(cache=True, nogil=True)
def new_prior_state(var_ptr, var_chks, llr0, msg_lim, m):
    """:func:`prior_state` into new arrays: ``(sgn0 (nnz,) uint8, min1_0 (m,), min2_0 (m,), arg0 (m,) int32,
    par0 (m,) uint8)``, magnitudes in the dtype of ``llr0``."""
    dt = llr0.dtype
    sgn0 = np.zeros(var_chks.shape[0], dtype=np.uint8)
    min1_0 = np.zeros(m, dtype=dt)
    min2_0 = np.zeros(m, dtype=dt)
    arg0 = np.zeros(m, dtype=np.int32)
    par0 = np.zeros(m, dtype=np.uint8)
    prior_state(var_ptr, var_chks, llr0, msg_lim, sgn0, min1_0, min2_0, arg0, par0)
    return sgn0, min1_0, min2_0, arg0, par0
