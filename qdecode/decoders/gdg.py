"""GDG decoder: BP + guided decimation guessing (arXiv:2403.18901), numba kernels in :mod:`qdecode.kernels.gdg`.

``GdgDecoder(problem, pre_iter=8, step_iter=6, max_step=25, max_tree_depth=3, max_side_depth=10,
side_step=10, new_n=0, low_error_mode=False, alpha=1.0, max_iters=0, branch_threads=1)``; defaults are the
authors' (3,1)-window settings for the BB codes (use ``pre_iter=16``-ish and deeper trees for larger windows, as in the
authors' notebook ``Sliding Window GDG.ipynb``, github.com/gongaa/SlidingWindowDecoder). Usually the
inner decoder of ``window`` (sliding windows), but it decodes any problem whole.

``branch_threads > 1`` replays the guessing tree's alternatives on that many threads, shot after
shot (for the latency of one shot; batches are otherwise parallel over shots): same outputs and
counters as the sequential schedule (:func:`qdecode.kernels.gdg.gdg_decode_branch_parallel`).
It needs ``step_iter >= 4``; with fewer iterations per step the sequential schedule runs.

``osd_method`` (default ``"none"``: the authors' decoder): OSD (``osd0`` / ``osd_e`` / ``osd_cs``
of order ``osd_order``, :class:`OsdPostProcessor`) on the whole problem, its columns in ascending order
of ``osd_key`` (:data:`GDG_OSD_KEYS`: ``bposd``'s choices but ``min``) over pre-BP's
posteriors ``M_j(t)``, ``t = 1 .. T = pre_iter``: ``"last"`` is ``M_j(T)``, ``"sumK"`` is
``sum_{t = T-K+1}^{T} M_j(t)`` (the prior ``lambda_j`` standing in for iterations ``t <= 0`` when
``K > pre_iter``); the default ``sum4`` is the key that drove the shortening, the one this OSD always used
(summing averages min-sum's oscillation). Pre-BP is GDG's only BP on the whole problem (the branches
run on the shortened, partly decimated graph), so its posteriors are the history the key can sum; the
kernel keeps the last ``max(4, K)`` of them (:func:`~qdecode.kernels.gdg.reliability_key`). Where no
branch converged OSD's estimate replaces the flagged decision (it satisfies the syndrome). On
[[144,12,12]] (``bb-uniform`` p = 0.004, 12 rounds, 3,000 shots; ``benchmarks/results/gdg_window.json``) the
authors' GDG fails 78 times, 70 of them flagged; with OSD-CS10 ordered by ``sum4`` 32 times (by ``last`` 44;
``bposd`` 39). In windows (W = 5, F = 2), ``pre_iter=40,max_iters=100,osd_method=osd_cs`` fails 39 times
against ``window[inner=bposd]``'s 51 at 0.27x its p99 window-step CPU time. With
``osd_after >= 0`` (default -1: off; 60 recommended), where a branch converged only after more than
``osd_after`` BP iterations past pre-BP, OSD's estimate also competes with the chosen branch on the same path metric
``PM = sum_{e_j = 1} lambda_j`` and the lighter one is returned (ties: the branch): the deep
branches of a long guessing tree often converge to a heavier estimate than OSD's. Much cheaper
than a BP+OSD redo of the shot (``window[...,fallback=...]``): no further BP iterations, only OSD, where
the redo runs BP on the whole window again before its OSD.

``last_info``: ``converged`` (a branch satisfied the syndrome; False = flagged shot: the main
branch's decision is returned, or OSD's with ``osd_method``), ``iterations`` (pre-BP + every step
of every branch), ``extra["branches"]`` (0 when pre-BP converged, else 1 + replayed alternatives),
and with ``osd_method`` ``extra["osd"]`` (bool, shots whose returned estimate is OSD's).
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderInputError, check_syndromes, observables_from_errors
from qdecode.decoders.bposd import OSD_KEYS, history_length
from qdecode.decoders.osd import OPERATIONS_UNIT, OsdPostProcessor, bp_operations, normalize_osd_method
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.kernels.gdg import (
    GdgGraph,
    GdgOut,
    GdgParams,
    gdg_decode_branch_parallel,
    gdg_decode_range,
    gdg_decode_range_work,
    make_gdg_work,
    pushes_per_branch,
    reliability_key,
    reliability_keys,
)
from qdecode.kernels.threads import num_threads, run_dynamic
from qdecode.problem import DecodingProblem

_CHUNK_ENTRIES = 1 << 24


@dataclasses.dataclass
class GdgDecodeInfo(DecodeInfo):
    """:class:`DecodeInfo` whose counters also sum the GDG branches explored."""

    def counts(self) -> dict[str, int]:
        out = super().counts()
        br = self.extra.get("branches") if self.extra else None
        if br is not None:
            out["branches"] = int(np.sum(br, dtype=np.int64))
        return out


def _int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or int(value) != value \
            or value < minimum:
        raise DecoderInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def csr_csc_graph(H: sp.spmatrix) -> tuple[np.ndarray, ...]:
    """``(chk_ptr, chk_vars, var_ptr, var_chks, csc_to_csr)`` of a 0/1 matrix, int64, sorted indices.

    ``csc_to_csr[k]`` is the CSR position of the k-th CSC entry, so per-edge messages stored in
    CSR order can be read variable by variable. The graph is the one Tanner-graph builder's
    (:func:`qdecode.kernels.bp.tanner_graph_csr`) on ``H`` made canonical, in GDG's int64 indices.
    """
    from qdecode.kernels.bp import tanner_graph_csr

    csr = sp.csr_matrix(H, dtype=np.int64)
    csr.sum_duplicates()
    csr.sort_indices()
    chk_ptr, chk_var, var_ptr, var_edges, var_chks = tanner_graph_csr(csr.indptr, csr.indices, csr.shape[1])
    return chk_ptr, chk_var.astype(np.int64), var_ptr, var_chks.astype(np.int64), var_edges.astype(np.int64)


#: Keys of GDG's OSD fallback: ``bposd``'s but ``min``, a running minimum that GDG's pre-BP ring does not keep.
GDG_OSD_KEYS = tuple(key for key in OSD_KEYS if key != "min")

#: Parameters of ``gdg`` and :class:`GdgDecoder` (the class takes its defaults from here).
GDG_PARAMS = {
    "pre_iter": Param(int, 8, "min-sum iterations before decimation", minimum=1),
    "step_iter": Param(int, 6, "min-sum iterations per decimation step", minimum=1),
    "max_step": Param(int, 25, "decimation steps of the main branch", minimum=1),
    "max_tree_depth": Param(int, 3, "depth up to which replayed branches push alternatives", minimum=0,
                            maximum=16),
    "max_side_depth": Param(int, 10, "depth up to which the main branch pushes alternatives", minimum=0),
    "side_step": Param(int, 10, "steps per replayed branch", minimum=1),
    "new_n": Param(int, 0, "columns kept by the shortening (0 = min(n, 2m))", minimum=0),
    "low_error_mode": Param(bool, False, "disable aggressive decimation (for p <= 0.002)"),
    "alpha": Param(float, 1.0, "min-sum scaling in (0, 1]", minimum=0, maximum=1, min_exclusive=True),
    "max_iters": Param(int, 0, "iteration budget per shot incl. pre-BP (0 = none; a real-time deadline)",
                       minimum=0, label_default=False),
    "branch_threads": Param(int, 1, "threads replaying one shot's guessing tree (1 = sequential; same "
                            "results, so not part of the label)", minimum=1, in_label=False),
    "osd_method": Param(str, "none", "OSD where no branch converged (see osd_after), ordered by the pre-BP "
                        "posteriors: none | osd0 | osd_e | osd_cs", label_default=False),
    "osd_order": Param(int, 10, "order of that OSD", minimum=0, label_default=False),
    "osd_key": Param(str, "sum4", "that OSD's column order: the last pre-BP posterior, or sumK = the sum of the "
                     "last K pre-BP posteriors (bposd's osd_key choices but min)", GDG_OSD_KEYS, label_default=False),
    "osd_after": Param(int, -1, "with osd_method: OSD also competes (lighter path metric wins) with answers "
                       "converged after more than this many iterations past pre-BP (-1 = only where none "
                       "converged; 60 recommended)", minimum=-1, label_default=False),
}


@uses_params(GDG_PARAMS)
class GdgDecoder(Decoder):
    """BP + guided decimation guessing for one decoding problem.

    Args:
        problem: H, L and priors.
        pre_iter: min-sum iterations before decimation (>= 1; authors: 8 for BB72..144 windows).
        step_iter: min-sum iterations per decimation step (>= 1; authors: 6).
        max_step: decimation steps of the main branch (>= 1).
        max_tree_depth: depth up to which replayed branches push their own alternatives.
        max_side_depth: depth up to which the main branch pushes alternatives (>= max_tree_depth).
        side_step: steps per replayed branch (>= 1).
        new_n: columns kept by the shortening (0: ``min(n, 2 m)``).
        low_error_mode: disable aggressive decimation (authors: for p <= 0.002 in (3,1) windows).
        alpha: min-sum scaling in (0, 1].
        max_iters: iteration budget per shot, pre-BP included (0: none; else > ``pre_iter``): a
            deadline for real-time use. Branches stop at the first step boundary where the total
            reaches it and no further alternative starts; the least-metric converged branch so
            far is returned (the main branch's decision, flagged, if none converged).
        threads: decoding threads for batches (default: numba's thread count).
        branch_threads: threads replaying the guessing tree of one shot (1: sequential; > 1:
            shots are decoded one after the other, each on that many threads, same results).
        osd_method: ``"none"`` (default) or an OSD method (``"osd0"``, ``"osd_e"``, ``"osd_cs"``)
            run where no branch converged (module docstring).
        osd_order: that OSD's order (>= 0, clamped to ``n - rank(H)``).
        osd_key: that OSD's column order, one of :data:`GDG_OSD_KEYS` (default ``"sum4"``):
            the last pre-BP posterior, or the sum of the last K (module docstring). Labels leave ``sum4`` out
            (labels recorded before the option meant it).
        osd_after: with ``osd_method``, OSD also competes (lighter path metric wins) with the
            converged answer of shots that took more than this many BP iterations after
            pre-BP (0: every shot that went past pre-BP; -1, the default: OSD only where no branch
            converged, so that labels written before this option mean what they meant). Recommended:
            60 (ten steps): on gross-code windows 0 and 60 fail on the same shots, and 60 runs OSD on
            fewer windows.

    Work bound: per shot, pre-BP runs at most ``pre_iter`` iterations (default 8); the main branch
    runs at most ``max_step`` steps (default 25); at most Q queued alternatives are replayed, each
    once and for at most ``side_step`` steps (default 10). Q = max(1, 2 (2^``max_tree_depth`` - 1)
    + ``max_side_depth`` - ``max_tree_depth``) is the capacity of the guessing queue (21 with the
    defaults ``max_tree_depth`` 3 and ``max_side_depth`` 10); nothing is queued once it is full. A
    step is at most ``step_iter`` min-sum iterations (default 6) of O(n + m + nnz(H)) each, then one
    selection pass over the variables and peeling, whose every pass over the checks fixes at least
    one variable or ends it. So a shot runs at most ``pre_iter`` + ``step_iter`` (``max_step`` +
    Q ``side_step``) iterations: 8 + 6 (25 + 21 * 10) = 1,418 with the defaults, whatever
    ``branch_threads``. With ``max_iters`` > 0 (default 0: no budget) the branches also stop at the
    first step boundary where the shot's iterations reach ``max_iters``. With ``osd_method``
    (default ``"none"``) a shot may add one OSD as in :class:`~qdecode.decoders.bposd.BpOsdDecoder`
    (``osd_order`` default 10) and, in batches, one more pre-BP run to rebuild its ordering key.

    Work clock (:attr:`work_unit`): the min-sum iterations of each shot, pre-BP and every step of every
    branch (``last_info.iterations``; 0 on a zero syndrome): the same count in both schedules, whatever
    ``branch_threads``. With ``osd_method`` the unit is elementary operations instead
    (:data:`~qdecode.decoders.osd.OPERATIONS_UNIT`): ``nnz(H)`` per min-sum iteration (the whole problem's edges,
    which the shortened residual graph never exceeds) plus the OSD's 64-bit word operations
    (:mod:`qdecode.kernels.osd`, "Work clock") on the shots it runs on. The batch path's rerun of pre-BP to
    rebuild an OSD key (the one-shot paths keep it) is not counted: it is the batch's bookkeeping, not the
    shot's decoding. Wall clock: one call per shot (:attr:`wall_method` ``"call"``).
    """

    work_unit = "min-sum iterations (pre-BP and every step of every branch)"

    def __init__(self, problem: DecodingProblem, *, pre_iter: int, step_iter: int, max_step: int,
                 max_tree_depth: int, max_side_depth: int, side_step: int, new_n: int, low_error_mode: bool,
                 alpha: float, max_iters: int, threads: int | None = None, branch_threads: int, osd_method: str,
                 osd_order: int, osd_after: int, osd_key: str):
        self.problem = problem
        self.pre_iter = _int(pre_iter, "pre_iter", 1)
        self.step_iter = _int(step_iter, "step_iter", 1)
        self.max_step = _int(max_step, "max_step", 1)
        self.max_tree_depth = _int(max_tree_depth, "max_tree_depth", 0)
        self.max_side_depth = _int(max_side_depth, "max_side_depth", 0)
        if self.max_side_depth < self.max_tree_depth:
            raise DecoderInputError(f"max_side_depth ({max_side_depth}) must be >= max_tree_depth ({max_tree_depth})")
        if self.max_tree_depth > 16:
            raise DecoderInputError(f"max_tree_depth must be <= 16 (2^depth snapshots), got {max_tree_depth}")
        self.side_step = _int(side_step, "side_step", 1)
        self.new_n = _int(new_n, "new_n", 0)
        self.low_error_mode = bool(low_error_mode)
        try:
            self.alpha = float(alpha)
        except (TypeError, ValueError):
            raise DecoderInputError(f"alpha must be a number in (0, 1], got {alpha!r}") from None
        if not 0 < self.alpha <= 1:
            raise DecoderInputError(f"alpha must lie in (0, 1], got {alpha!r}")
        self.max_iters = _int(max_iters, "max_iters", 0)
        if 0 < self.max_iters <= self.pre_iter:
            raise DecoderInputError(f"max_iters must be 0 (no budget) or > pre_iter ({self.pre_iter}), "
                                    f"got {max_iters!r}")
        if threads is not None:
            threads = _int(threads, "threads", 1)
        self.threads = threads
        self.branch_threads = _int(branch_threads, "branch_threads", 1)
        osd_order = _int(osd_order, "osd_order", 0)
        if osd_key not in GDG_OSD_KEYS:
            raise DecoderInputError(f"osd_key={osd_key!r} must be one of {list(GDG_OSD_KEYS)}")
        self.key_len = history_length(osd_key)
        self.osd_key = osd_key
        self.osd_after = _int(osd_after, "osd_after", -1)
        self.osd = None
        if not (isinstance(osd_method, str) and osd_method.strip().lower() == "none"):
            try:
                self.osd = OsdPostProcessor(problem, normalize_osd_method(osd_method), osd_order)
            except ValueError as exc:
                raise DecoderInputError(str(exc)) from None
        if self.osd is None and self.osd_after >= 0:
            raise DecoderInputError(f"osd_after={self.osd_after} needs an OSD: set osd_method (osd0 | osd_e | osd_cs)")
        if self.osd is not None:
            self.work_unit = OPERATIONS_UNIT  # min-sum iterations and OSD's word operations in one unit
        # snapshot capacity of the authors' single-thread schedule
        self.max_guess = max(1, (2 ** self.max_tree_depth - 1) * 2 + self.max_side_depth - self.max_tree_depth)
        self.graph = csr_csc_graph(problem.H)
        self.llr = np.ascontiguousarray(problem.llr, dtype=np.float64)
        self._local = threading.local()  # per-thread work buffers of the one-thread path

    def kernel_args(self) -> tuple[GdgGraph, GdgParams]:
        """The problem and the parameters as the kernels (:mod:`qdecode.kernels.gdg`) take them."""
        params = GdgParams(self.pre_iter, self.step_iter, self.max_step, self.max_tree_depth, self.max_side_depth,
                           self.side_step, self.new_n, self.low_error_mode, self.alpha, self.max_iters)
        return GdgGraph(*self.graph, self.llr), params

    def _own_work(self):
        """This thread's reusable :func:`make_gdg_work` buffers (one-thread decodes, e.g. a stream's windows)."""
        work = getattr(self._local, "work", None)
        if work is None:
            n, m, nnz = self.problem.num_errors, self.problem.num_detectors, self.graph[1].shape[0]
            work = make_gdg_work(n, m, nnz, self.max_guess, 1, self.side_step,
                                 pushes_per_branch(self.max_tree_depth, self.side_step), self.key_len)
            self._local.work = work
        return work

    def _own_parallel_works(self):
        """This thread's reusable buffers of the branch-parallel schedule: ``branch_threads`` work sets,
        the first with the shared record slots (allocated once per thread, not once per window)."""
        works = getattr(self._local, "parallel_works", None)
        if works is None:
            T = self.branch_threads
            n, m, nnz = self.problem.num_errors, self.problem.num_detectors, self.graph[1].shape[0]
            pushes = pushes_per_branch(self.max_tree_depth, self.side_step)
            slots = 2 * T + self.max_side_depth  # the main branch queues up to max_side_depth meanwhile
            works = [make_gdg_work(n, m, nnz, self.max_guess, slots if t == 0 else 1, self.side_step, pushes,
                                   self.key_len) for t in range(T)]
            self._local.parallel_works = works
        return works

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_local", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()

    def _run(self, s: np.ndarray):
        """Decode ``s`` (S, m) -> (out, converged, iterations, branches, OSD mask or None, work int64 (S,))."""
        S, n = s.shape[0], self.problem.num_errors
        out = np.zeros((S, n), dtype=np.uint8)
        conv = np.zeros(S, dtype=np.bool_)
        iters = np.zeros(S, dtype=np.int64)
        branches = np.zeros(S, dtype=np.int64)
        kept = {}  # shot -> OSD key, kept by the one-shot paths (no pre-BP rerun needed)
        graph, params = self.kernel_args()
        if self.branch_threads > 1 and self.step_iter >= 4:
            works = self._own_parallel_works()
            for i in range(S):
                conv[i], iters[i], branches[i] = gdg_decode_branch_parallel(graph, s[i], params, works, out[i])
                if self.osd is not None and self._wants_osd(conv[i], iters[i]):
                    kept[i] = self._key_of(works[0])
        else:
            res = GdgOut(out, conv, iters, branches)
            if S == 1 or (self.threads or num_threads()) == 1:  # reuse this thread's buffers
                work = self._own_work()
                gdg_decode_range_work(graph, s, params, work, res, 0, S)
                if S == 1 and self.osd is not None and self._wants_osd(conv[0], iters[0]):
                    kept[0] = self._key_of(work)
            else:
                run_dynamic(gdg_decode_range, (graph, s, params, self.max_guess, res), S, self.threads)
        if self.osd is None:
            return out, conv, iters, branches, None, iters.astype(np.int64)
        work = bp_operations(iters, self.problem.H)
        idx = np.flatnonzero(self._wants_osd(conv, iters))
        decided = np.zeros(S, dtype=np.bool_)  # shots whose returned estimate is OSD's
        if idx.size:
            keys = np.zeros((idx.size, n), dtype=np.float64)
            rerun = []
            for r, i in enumerate(idx):
                if i in kept:
                    keys[r] = kept[i]
                else:
                    rerun.append(r)
            rerun = np.array(rerun, dtype=np.int64)
            if rerun.size:  # batch buffers were reused: rerun those shots' pre-BP (rare, ~8 iterations each)
                rerun_keys = np.zeros((rerun.size, n), dtype=np.float64)
                reliability_keys(graph, s, idx[rerun].astype(np.int64), params, self._own_work(), rerun_keys,
                                 self.key_len)
                keys[rerun] = rerun_keys
            cand = self.osd.solve_batch(s[idx], keys)
            work[idx] += self.osd.last_work
            take = ~conv[idx]  # flagged: OSD's estimate; converged: the lighter of the two (ties: GDG's)
            rival = np.flatnonzero(conv[idx])
            if rival.size:
                take[rival] = cand[rival] @ self.llr < out[idx[rival]] @ self.llr
            out[idx[take]] = cand[take]
            decided[idx[take]] = True
        return out, conv, iters, branches, decided, work

    def _wants_osd(self, conv, iters):
        """Shots OSD runs on (bool, like ``conv``): no branch converged, or (``osd_after >= 0``) one
        converged after more than ``osd_after`` iterations past pre-BP (so pre-BP did not converge)."""
        if self.osd_after < 0:
            return ~conv
        return ~conv | (iters > self.pre_iter + self.osd_after)

    def _key_of(self, work) -> np.ndarray:
        """The OSD key of the shot just decoded on ``work`` (:func:`reliability_key` of ``osd_key``), (n,) float64."""
        key = np.zeros(self.problem.num_errors, dtype=np.float64)
        reliability_key(work, key, self.pre_iter, self.key_len)
        return key

    def _info(self, conv, iters, br, osd, work) -> GdgDecodeInfo:
        extra = {"branches": br}
        if osd is not None:
            extra["osd"] = osd
        return GdgDecodeInfo(converged=conv, iterations=iters, extra=extra, work=work)

    def _chunks(self, S: int):
        step = max(1, _CHUNK_ENTRIES // max(1, self.problem.num_errors))
        return [(a, min(S, a + step)) for a in range(0, S, step)] or [(0, 0)]

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out, conv, iters, br, osd, work = self._run(s)
        self.last_info = self._info(conv, iters, br, osd, work)
        return out

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        pred = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        parts = []
        for a, b in self._chunks(s.shape[0]):
            out, conv, iters, br, osd, work = self._run(s[a:b])
            pred[a:b] = observables_from_errors(out, self.problem)
            parts.append((conv, iters, br, np.zeros(0, np.bool_) if osd is None else osd, work))
        conv, iters, br, osd, work = (np.concatenate(x) for x in zip(*parts))
        self.last_info = self._info(conv, iters, br, osd if self.osd is not None else None, work)
        return pred


ENTRIES = {
    "gdg": DecoderEntry("gdg", GdgDecoder, GDG_PARAMS, doc="BP + guided decimation guessing (Gong et al.; numba)"),
}
