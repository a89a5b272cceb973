"""Two-stage decoding: partial BP, then matching of the residual syndrome (``bp-pymatching``).

Stage 1 runs batched numba BP (product-sum by default, about 10 iterations) on the DEM's
hypergraph (columns merged by detector set, :meth:`DecodingProblem.from_dem`) and turns its
posterior LLRs into probabilities ``q_j = 1 / (1 + exp(llr_j))``. Every column with
``q_j > tau`` is committed: ``s' = s xor H 1_C`` and ``L1 = L 1_C``. Stage 2 matches the
residual ``s'`` (:class:`~qdecode.decoders.residual_matching.ResidualMatcher`):

* ``mode="fast"``: the DEM's prior weights: one graph, batched; the matcher sees fewer
  defects, so it runs faster;
* ``mode="accurate"``: weights from the BP posteriors for that shot (committed columns
  contribute ``1 - q_j``), as belief-matching does; with ``tau > 1`` nothing is committed and
  this *is* belief-matching (Higgott et al. 2023).

The final prediction is ``L1 xor MWPM(s')``. Caune et al. (arXiv:2306.17142) describe the
partial-decoder idea; their exact commit rule is not public, so the rule here is the one
measured in ``../shared/research/predecoder.md`` §2.

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

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderInputError, check_syndromes
from qdecode.decoders.bp import BpDecoder
from qdecode.decoders.residual_matching import ResidualMatcher
from qdecode.problem import DecodingProblem

MODES = ("fast", "accurate")


@dataclasses.dataclass
class TwoStageDecodeInfo(DecodeInfo):
    """BP convergence / iterations plus additive counters of the matching stage."""

    totals: dict = dataclasses.field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = super().counts()
        out.update({k: int(v) for k, v in self.totals.items()})
        return out


def posterior_probabilities(llr: np.ndarray) -> np.ndarray:
    """``q = 1 / (1 + exp(llr))`` without overflow warnings (float64, same shape)."""
    return 0.5 * (1.0 - np.tanh(0.5 * np.asarray(llr, dtype=np.float64)))


class BpMatchingDecoder(Decoder):
    """Partial BP + residual PyMatching.

    Args:
        problem: from a DEM with decomposed hyperedges (or a graphlike check matrix).
        mode: ``"fast"`` (prior weights) or ``"accurate"`` (per-shot BP-posterior weights).
        tau: commit threshold on the posterior probability, in (0, inf); above 1 nothing is
            committed.
        max_iter: BP iterations (>= 1); BP stops early on shots whose hard decision
            already satisfies the syndrome.
        method: ``"productsum"`` or ``"minsum"`` (then ``alpha`` scales the check messages).
        alpha: min-sum scaling in [0, 1] (0 = adaptive); ignored by product-sum.
        time_full: also time matching of the full syndrome (``match_full_ns``).
        dtype: BP message type, ``"float64"`` or ``"float32"``.
        threads: BP threads for batches (default: numba's).
    """

    def __init__(
        self,
        problem: DecodingProblem,
        *,
        mode: str = "fast",
        tau: float = 0.9,
        max_iter: int = 10,
        method: str = "productsum",
        alpha: float = 1.0,
        time_full: bool = False,
        dtype: str = "float64",
        threads: int | None = None,
    ):
        if mode not in MODES:
            raise DecoderInputError(f"mode must be one of {list(MODES)}, got {mode!r}")
        if not (np.isfinite(tau) and tau > 0):
            raise DecoderInputError(f"tau must be a positive number (> 1 commits nothing), got {tau!r}")
        self.problem = problem
        self.mode = mode
        self.tau = float(tau)
        self.time_full = bool(time_full)
        bp_kw = {"alpha": alpha} if method == "minsum" else {}
        self.bp = BpDecoder(problem, method=method, max_iter=max_iter, dtype=dtype, threads=threads, **bp_kw)
        self.matcher = ResidualMatcher(problem)

    def _stage_one(self, s: np.ndarray):
        _, post = self.bp.decode_soft_batch(s)
        q = posterior_probabilities(post)
        commit = q > self.tau
        residual, l1 = self.matcher.commit(s, commit)
        return q, commit, residual, l1

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        q, commit, residual, l1 = self._stage_one(s)
        bp_info = self.bp.last_info
        t0 = time.perf_counter_ns()
        if self.mode == "fast":
            l2 = self.matcher.match(residual)
        else:
            l2 = self.matcher.match_reweighted(residual, np.where(commit, 1.0 - q, q))
        match_ns = time.perf_counter_ns() - t0
        totals = {
            "defects": int(np.count_nonzero(s)),
            "residual_defects": int(np.count_nonzero(residual)),
            "committed": int(np.count_nonzero(commit)),
            "match_ns": match_ns,
        }
        if self.time_full:
            t0 = time.perf_counter_ns()
            if self.mode == "fast":
                self.matcher.match(s)
            else:
                self.matcher.match_reweighted(s, q)
            totals["match_full_ns"] = time.perf_counter_ns() - t0
        self.last_info = TwoStageDecodeInfo(
            converged=bp_info.converged, iterations=bp_info.iterations,
            extra={"defects": s.sum(axis=1), "residual_defects": residual.sum(axis=1)},
            totals=totals,
        )
        return l1 ^ l2

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """Not available: matching returns observable flips, not hyperedge columns.

        Raises:
            DecoderInputError: always; use :meth:`predict_observables_batch`.
        """
        raise DecoderInputError(
            "bp-pymatching predicts observables only (the matcher returns observable flips, "
            "not the hyperedge columns of H); use predict_observables_batch"
        )


def register_bp_matching() -> None:
    """Register ``bp-pymatching`` in the decoder registry."""
    from qdecode.decoders.registry import Param, register

    register(
        "bp-pymatching",
        lambda problem, **kw: BpMatchingDecoder(problem, **kw),
        {
            "mode": Param(str, "fast", "fast: prior weights; accurate: BP-posterior weights per shot", choices=MODES),
            "tau": Param(float, 0.9, "commit columns with posterior probability above tau (> 1: none)", minimum=1e-9),
            "max_iter": Param(int, 10, "BP iterations", minimum=1),
            "method": Param(str, "productsum", "BP flavour", choices=("productsum", "minsum")),
            "alpha": Param(float, 1.0, "min-sum scaling (0 = adaptive); product-sum ignores it", minimum=0, maximum=1),
            "dtype": Param(str, "float64", "BP message type", choices=("float64", "float32")),
            "time_full": Param(bool, False, "also time matching of the full syndrome (match_full_ns)"),
        },
        doc="partial BP (commit posteriors > tau) + PyMatching on the residual syndrome",
    )
