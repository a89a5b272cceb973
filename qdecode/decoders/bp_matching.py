"""Two-stage decoding: partial BP, then matching of the residual syndrome (``bp-pymatching``).

Stage 1 runs batched numba BP (10 iterations) and turns its posterior LLRs into
probabilities ``q_j = 1 / (1 + exp(llr_j))``. By default fast mode runs min-sum (scaling 0.8)
on the matching graph's edges (the DEM's ``^`` components, :func:`graphlike_problem`: about
5x fewer Tanner edges), accurate mode product-sum on the DEM's hyperedge columns (merged by
detector set, :meth:`DecodingProblem.from_dem`), which see the Y correlations. Every column with
``q_j > tau`` is committed: ``s' = s xor H 1_C`` and ``L1 = L 1_C``. Stage 2 matches the
residual ``s'`` (:class:`~qdecode.decoders.residual_matching.ResidualMatcher`):

* ``mode="fast"``: the DEM's prior weights: one graph, batched; the matcher sees fewer
  defects, so it runs faster;
* ``mode="accurate"``: weights from the BP posteriors for that shot (committed columns
  contribute ``1 - q_j``), as belief-matching does; with ``tau > 1`` nothing is committed and
  this *is* belief-matching (Higgott et al. 2023).

The final prediction is ``L1 xor MWPM(s')``. Caune et al. (arXiv:2306.17142) describe the
partial-decoder idea; their exact commit rule is not public, so the rule here is this project's,
measured in ``benchmarks/README.md`` (bp-pymatching).

Diagnostics (``last_info``, summed into the stats CSV's ``custom_counts``): BP convergence and
iterations, ``defects`` (|s|) and ``residual_defects`` (|s'|), ``committed`` columns, and
the matcher's wall time ``match_ns``; with ``time_full=True`` the full syndrome is matched as
well (result discarded) and timed as ``match_full_ns``, so the CSV carries the matching-time
ratio ``match_full_ns / match_ns`` measured on the same shots.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderCapabilityError, DecoderInputError, check_syndromes
from qdecode.decoders.bp import BpDecoder
from qdecode.decoders.graphlike import graphlike_problem
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.decoders.residual_matching import ResidualMatcher
from qdecode.problem import DecodingProblem

MODES = ("fast", "accurate")
METHODS = ("auto", "productsum", "minsum")
CHUNK_SHOTS = 1024  # shots per BP + commit + match pass
BP_GRAPHS = ("auto", "hyper", "edges")


#: Parameters of ``bp-pymatching`` and :class:`BpMatchingDecoder` (the class takes its defaults from here).
BP_MATCHING_PARAMS = {
    "mode": Param(str, "fast", "fast: prior weights; accurate: BP-posterior weights per shot", choices=MODES),
    "tau": Param(float, 0.8, "commit columns with posterior probability above tau (> 1: none)", minimum=1e-9),
    "max_iter": Param(int, 10, "BP iterations", minimum=1),
    "method": Param(str, "auto", "BP flavour (auto: min-sum for fast, product-sum for accurate)",
                    choices=METHODS),
    "alpha": Param(float, 0.8, "min-sum scaling (0 = adaptive); product-sum ignores it", minimum=0, maximum=1),
    "bp_graph": Param(str, "auto", "BP on the DEM hyperedges or the matching-graph edges (auto: edges "
                      "for fast, hyper for accurate)", choices=BP_GRAPHS),
    "dtype": Param(str, "auto", "BP message type (auto: float32 for fast, float64 for accurate)",
                   choices=("auto", "float64", "float32")),
    "time_full": Param(bool, False, "also time matching of the full syndrome (match_full_ns)"),
}


#: The per-shot counters of the two stages, int64 ``(S,)`` arrays in ``extra``, summed by ``counts()``.
PER_SHOT_COUNTS = ("defects", "residual_defects", "committed")


@dataclasses.dataclass
class TwoStageDecodeInfo(DecodeInfo):
    """BP convergence / iterations, the per-shot counters :data:`PER_SHOT_COUNTS` (in ``extra``),
    and the matcher's wall clocks over the batch (``clocks``: ``match_ns``, ``match_full_ns``)."""

    clocks: dict = dataclasses.field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = super().counts()
        out.update({k: int(np.sum(self.extra[k], dtype=np.int64)) for k in PER_SHOT_COUNTS})
        out.update({k: int(v) for k, v in self.clocks.items()})
        return out

    def take(self, shots: slice, num_shots: int) -> "TwoStageDecodeInfo | None":
        """The shots ``shots`` alone: the per-shot arrays cut, the clocks shared by shots (a clock has no
        per-shot reading; its share is what the sweep's chunk rows record)."""
        cut = DecodeInfo(self.converged, self.iterations, self.extra).take(shots, num_shots)
        if cut is None:
            return None
        share = len(range(*shots.indices(num_shots))) / max(1, num_shots)
        return TwoStageDecodeInfo(cut.converged, cut.iterations, cut.extra,
                                  clocks={k: round(v * share) for k, v in self.clocks.items()})


def posterior_probabilities(llr: np.ndarray) -> np.ndarray:
    """``q = 1 / (1 + exp(llr))`` without overflow warnings (float64, same shape)."""
    return 0.5 * (1.0 - np.tanh(0.5 * np.asarray(llr, dtype=np.float64)))


@uses_params(BP_MATCHING_PARAMS)
class BpMatchingDecoder(Decoder):
    """Partial BP + residual PyMatching.

    Args:
        problem: from a DEM with decomposed hyperedges (or a graphlike check matrix).
        mode: ``"fast"`` (prior weights) or ``"accurate"`` (per-shot BP-posterior weights).
        tau: commit threshold on the posterior probability, in (0, inf); above 1 nothing is
            committed.
        max_iter: BP iterations (>= 1); BP stops early on shots whose hard decision
            already satisfies the syndrome.
        method: ``"productsum"``, ``"minsum"`` (then ``alpha`` scales the check messages) or
            ``"auto"``: min-sum for ``fast`` (the SIMD lane kernel, much quicker than
            product-sum here at about the same LER), product-sum for
            ``accurate`` (its posteriors set the weights; the matcher dominates the cost).
        alpha: min-sum scaling in [0, 1] (0 = adaptive); ignored by product-sum.
        bp_graph: where BP runs and what it commits: ``"hyper"``: the DEM's hyperedge columns
            (5004 Tanner edges at d = 5); ``"edges"``: the matching graph's edges (the ``^``
            components, 932 Tanner edges at d = 5: about 5x cheaper, blind to the Y
            correlations); ``"auto"``: edges for ``fast``, hyper for ``accurate``.
        time_full: also time matching of the full syndrome (``match_full_ns``).
        dtype: BP message type, ``"float64"``, ``"float32"`` or ``"auto"``: float32 for
            ``fast`` (twice the SIMD lanes; same decisions within noise), float64 for ``accurate``.
        threads: BP threads for batches (default: numba's).

    Work bound: BP runs at most ``max_iter`` iterations per shot (default 10), each O(n + m +
    nnz) on the graph ``bp_graph`` chooses. Committing is one sparse product. Then each shot gets
    one PyMatching decode of its residual syndrome: exact minimum-weight perfect matching by
    sparse blossom, which always ends in time polynomial in the size of the matching graph and the
    number of detection events; it has no iteration cap and no search. With ``mode`` ``"accurate"``
    (default ``"fast"``) a matching graph is built for each shot with a nonzero residual, O(edges).
    With ``time_full`` (default False) each shot's full syndrome is matched once more.

    Work clock (:attr:`work_unit`): none. BP's iterations are counted (``last_info.iterations``) but the
    matching is PyMatching's, which reports no count of its work; BP's edge updates and a residual's
    detection events (``pymatching``'s size proxy) are no common unit, so only the wall clock
    (:meth:`predict_observables_timed`) measures a whole shot.
    """

    #: Observable flips only: :meth:`decode_batch` raises :class:`DecoderCapabilityError`.
    gives_errors = False

    def __init__(
        self,
        problem: DecodingProblem,
        *,
        mode: str,
        tau: float,
        max_iter: int,
        method: str,
        bp_graph: str,
        alpha: float,
        time_full: bool,
        dtype: str,
        threads: int | None = None,
    ):
        if mode not in MODES:
            raise DecoderInputError(f"mode must be one of {list(MODES)}, got {mode!r}")
        if method not in METHODS:
            raise DecoderInputError(f"method must be one of {list(METHODS)}, got {method!r}")
        if method == "auto":
            method = "minsum" if mode == "fast" else "productsum"
        if dtype == "auto":
            dtype = "float32" if mode == "fast" else "float64"
        if bp_graph not in BP_GRAPHS:
            raise DecoderInputError(f"bp_graph must be one of {list(BP_GRAPHS)}, got {bp_graph!r}")
        if bp_graph == "auto":
            bp_graph = "edges" if mode == "fast" else "hyper"
        if not (np.isfinite(tau) and tau > 0):
            raise DecoderInputError(f"tau must be a positive number (> 1 commits nothing), got {tau!r}")
        self.problem = problem
        self.bp_graph = bp_graph
        if bp_graph == "edges":
            problem = graphlike_problem(problem)  # BP, commits and matching all on the graph's edges
        self.mode = mode
        self.tau = float(tau)
        self.time_full = bool(time_full)
        bp_kw = {"alpha": alpha} if method == "minsum" else {}
        self.bp = BpDecoder(problem, method=method, max_iter=max_iter, dtype=dtype, threads=threads, **bp_kw)
        self.matcher = ResidualMatcher(problem)

    def _stage_one(self, s: np.ndarray):
        _, post = self.bp.decode_soft_batch(s)
        if self.mode == "fast":  # q > tau  <=>  llr < ln((1 - tau) / tau): no tanh needed
            q = None
            commit = post < np.log((1.0 - self.tau) / self.tau) if self.tau < 1 else np.zeros(post.shape, bool)
        else:
            q = posterior_probabilities(post)
            commit = q > self.tau
        residual, l1 = self.matcher.commit(s, commit)
        return q, commit, residual, l1

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        clocks = {"match_ns": 0}
        if self.time_full:
            clocks["match_full_ns"] = 0
        conv, iters, residual_defects, committed = [], [], [], []
        for a in range(0, s.shape[0], CHUNK_SHOTS):  # chunks keep the (shots, n) posteriors in cache
            chunk = s[a:a + CHUNK_SHOTS]
            q, commit, residual, l1 = self._stage_one(chunk)
            conv.append(self.bp.last_info.converged)
            iters.append(self.bp.last_info.iterations)
            t0 = time.perf_counter_ns()
            if self.mode == "fast":
                l2 = self.matcher.match(residual)
            else:
                l2 = self.matcher.match_reweighted(residual, np.where(commit, 1.0 - q, q))
            clocks["match_ns"] += time.perf_counter_ns() - t0
            out[a:a + CHUNK_SHOTS] = l1 ^ l2
            residual_defects.append(np.count_nonzero(residual, axis=1).astype(np.int64))
            committed.append(np.count_nonzero(commit, axis=1).astype(np.int64))
            if self.time_full:
                t0 = time.perf_counter_ns()
                if self.mode == "fast":
                    self.matcher.match(chunk)
                else:
                    self.matcher.match_reweighted(chunk, q)  # the same posteriors, nothing committed
                clocks["match_full_ns"] += time.perf_counter_ns() - t0
        def cat(xs, dt):
            return np.concatenate(xs) if xs else np.zeros(0, dt)

        self.last_info = TwoStageDecodeInfo(
            converged=cat(conv, bool), iterations=cat(iters, np.int32),
            extra={"defects": np.count_nonzero(s, axis=1).astype(np.int64),
                   "residual_defects": cat(residual_defects, np.int64), "committed": cat(committed, np.int64)},
            clocks=clocks,
        )
        return out

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """Not available: matching returns observable flips, not hyperedge columns.

        Raises:
            DecoderCapabilityError: always; use :meth:`predict_observables_batch`.
        """
        raise DecoderCapabilityError(
            "bp-pymatching predicts observables only (the matcher returns observable flips, "
            "not the hyperedge columns of H); use predict_observables_batch"
        )


ENTRIES = {
    "bp-pymatching": DecoderEntry("bp-pymatching", BpMatchingDecoder, BP_MATCHING_PARAMS,
                                  doc="partial BP (commit posteriors > tau) + PyMatching on the residual syndrome"),
}
