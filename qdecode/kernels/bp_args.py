"""The argument groups of the BP kernel family: one set of named tuples for every min-sum kernel.

:func:`qdecode.kernels.bp.minsum_flooding` (the RTL contract), :func:`~qdecode.kernels.bp.bp_decode`,
:func:`~qdecode.kernels.bp.bp_decode_range` and the lane range kernels
(:func:`qdecode.kernels.minsum_lanes.minsum_lanes_range`, its narrow drop-ins in
:mod:`qdecode.kernels.minsum_lanes_narrow`, :func:`qdecode.kernels.minsum_lanes_layered.minsum_layered_lanes_range`)
take the Tanner graph as a :class:`TannerGraph`, the min-sum parameters as a :class:`MinSumParams` and their
per-shot outputs as a :class:`BpOut`. numba types a ``typing.NamedTuple`` as a tuple and passes it to a jitted
callee as its flattened members, so the grouping costs nothing in the loops, and the same call runs with
``NUMBA_DISABLE_JIT=1``.

Shapes: ``m`` checks, ``n`` variables, ``nnz`` edges (nonzeros of ``H``), ``S`` shots; "message dtype" is the
dtype of the messages and priors (float64, float32, or int32 fixed point).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class TannerGraph(NamedTuple):
    """The Tanner graph of an ``(m, n)`` 0/1 matrix ``H`` (:func:`qdecode.kernels.bp.tanner_graph_csr` builds it).

    Edges are ``H``'s stored entries in CSR order (check-major): ``chk_ptr[i]:chk_ptr[i + 1]`` are check ``i``'s
    edges; ``var_ptr[j]:var_ptr[j + 1]`` index variable ``j``'s entries of ``var_edges`` / ``var_chks`` (CSC
    order: variable-major, ascending check inside). Indices are uint32: unsigned indices spare numba's
    negative-index wraparound test in the hot loops.
    """

    chk_ptr: np.ndarray  # (m + 1,) int64: CSR index pointer, check i's edges chk_ptr[i]:chk_ptr[i + 1]
    chk_var: np.ndarray  # (nnz,) uint32: the variable of each edge (CSR order)
    var_ptr: np.ndarray  # (n + 1,) int64: CSC index pointer into var_edges / var_chks
    var_edges: np.ndarray  # (nnz,) uint32: the CSR edge number of each CSC entry
    var_chks: np.ndarray  # (nnz,) uint32: the check of each CSC entry


class MinSumParams(NamedTuple):
    """The parameters of a min-sum decode: iteration limit, check scaling and offset, saturation.

    Check update magnitude ``max(scale(t, min) - beta, 0)``, saturated to ``msg_lim``, with ``scale(t, x) =
    alpha * x`` on float messages and ``(x * alpha_num) >> alpha_shift`` on integer ones; ``adaptive``
    replaces both by ``alpha(t) = 1 - 2^-t`` (:func:`qdecode.kernels.minsum.alpha_at`). Posteriors saturate
    to ``[-post_lim, post_lim]``. Product-sum reads ``max_iter`` and the limits only.
    """

    max_iter: int  # iteration limit (>= 1)
    alpha: float  # float64 check scaling (float messages)
    alpha_num: int  # integer scaling numerator (fixed point): (x * alpha_num) >> alpha_shift
    alpha_shift: int  # ... and its shift
    adaptive: bool  # alpha(t) = 1 - 2^-t instead of alpha / alpha_num
    beta: object  # message dtype scalar: offset subtracted from the scaled magnitudes (offset min-sum)
    msg_lim: object  # message dtype scalar: messages saturate to [-msg_lim, msg_lim]
    post_lim: object  # message dtype scalar: posteriors saturate to [-post_lim, post_lim]


class BpOut(NamedTuple):
    """Per-shot outputs of a BP range kernel (``S`` shots; a range kernel writes its rows ``start:stop``)."""

    hard: np.ndarray  # (S, n) uint8: hard decisions
    post: np.ndarray  # (S, n) message dtype (or the narrow kernel's sum type): posterior LLRs, or the posterior
    #                   history key of a shot that did not converge (hist_k > 1: the sum; HISTORY_MIN: the running
    #                   minimum); (0, n): not stored
    converged: np.ndarray  # (S,) bool: the decisions satisfy the syndrome
    iters: np.ndarray  # (S,) int32: iterations run
