"""Belief-propagation decoders (min-sum, product-sum; float or fixed point) over the kernels.

``BpDecoder(problem, method="minsum", max_iter=100, alpha=1.0, beta=0.0,
schedule="flooding", bits=0, frac_bits=3, dtype="float64")``.

* ``alpha = 0`` selects the adaptive scaling ``alpha(t) = 1 - 2^-t`` (ldpc's
  ``ms_scaling_factor=0``); ``beta`` is the offset of offset-min-sum.
* ``bits > 0`` runs the min-sum kernel on saturating integers: messages of ``bits``
  bits with ``frac_bits`` fraction bits (``llr_q = round(llr * 2^frac_bits)``, clipped
  to ``+-(2^(bits-1) - 1)``), posteriors two bits wider, ``alpha`` applied as
  ``(|x| * round(alpha * 256)) >> 8``. This is the bit-accurate reference model.
* ``decode_llr_batch`` is the classical soft-decoding entry: per-shot channel LLRs and
  an all-zero syndrome through the same kernel.

Batches are decoded in chunks (bounded memory), each split over threads running the
GIL-free range kernel; ``last_info`` carries per-shot convergence flags and iteration counts.

Confidence (:meth:`BpDecoder.predict_with_confidence`): BP searches no second logical class, so its
gap is the posterior estimate of :func:`qdecode.decoders.confidence.posterior_gap_db` (the LLR of
the least certain observable's parity from the final posteriors, ``nan`` where BP did not converge).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from qdecode.decoders.base import (
    DecodeInfo,
    Decoder,
    DecoderInputError,
    check_syndromes,
    observables_from_errors,
    unpacked_shots,
)
from qdecode.decoders.confidence import ConfidentPrediction, class_codes, posterior_gap_db
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.kernels.answer_trail import AnswerTrailOut, answer_trail_out
from qdecode.kernels.bp import bp_decode_range, bp_decode_timed_range, tanner_graph_csr
from qdecode.kernels.bp_args import BpOut, MinSumParams
from qdecode.kernels.clock import ticks_per_ns
from qdecode.kernels.herald_priors import ShotPriors, fill_llrs
from qdecode.kernels.minsum_lanes import LANES, minsum_lanes_range
from qdecode.kernels.minsum_lanes_layered import LAYERED_LANES, minsum_layered_lanes_range
from qdecode.kernels.minsum_lanes_narrow import narrow_kernel, narrow_lanes
from qdecode.kernels.threads import run_ranges
from qdecode.problem import DecodingProblem

METHODS = {"minsum": 0, "ms": 0, "min_sum": 0, "productsum": 1, "ps": 1, "product_sum": 1}
SCHEDULES = ("flooding", "layered")
ALPHA_SHIFT = 8  # fixed-point alpha resolution: alpha = alpha_num / 256
FLOAT_LIMIT = 1e30  # float messages/posteriors are clipped here (keeps inf - inf out)
# Shots per kernel call: bounds the (shots x n) buffers to ~16M entries.
_CHUNK_ENTRIES = 1 << 24


def bp_info(converged: np.ndarray, iterations: np.ndarray) -> DecodeInfo:
    """BP's :class:`DecodeInfo`: convergence, iterations, and the work clock (its iterations, int64)."""
    return DecodeInfo(converged=converged, iterations=iterations, work=iterations.astype(np.int64))


def bp_params(max_iter: int) -> dict[str, Param]:
    """The min-sum BP parameter table (``bp``; ``bposd`` and ``bposd-e`` with ``max_iter=80``)."""
    return {
        "max_iter": Param(int, max_iter, "iteration limit (>= 1)", minimum=1),
        "alpha": Param(float, 1.0, "min-sum scaling in [0, 1]; 0 = adaptive 1 - 2^-t", minimum=0, maximum=1),
        "beta": Param(float, 0.0, "min-sum offset (LLR units)", minimum=0),
        "schedule": Param(str, "flooding", "flooding | layered (check-serial)", SCHEDULES),
        "bits": Param(int, 0, "0 = floating point, else fixed-point message bits (2..24)", minimum=0, maximum=24),
        "frac_bits": Param(int, 3, "fixed-point fraction bits", minimum=0),
    }


#: Parameters of ``bp`` and of :class:`BpDecoder` (one table: the class takes its defaults from it).
#: ``dtype`` (added after labels were recorded) shows in a label only when it is not float64.
BP_PARAMS = {**bp_params(100),
             "dtype": Param(str, "float64", "floating-point message storage: float64 | float32 (float32 batches "
                            "run on 32 float32 lanes, benchmarks/README)", ("float64", "float32"),
                            label_default=False)}
#: Parameters of ``bp-ps`` (product-sum has no scaling, offset or fixed point).
BP_PS_PARAMS = {k: v for k, v in BP_PARAMS.items() if k in ("max_iter", "schedule")}


@dataclasses.dataclass(frozen=True)
class MessageFormat:
    """The kernels' message arithmetic: floating point, or saturating fixed point.

    Fixed point (``bits > 0``): int32 storage, ``llr_q = round(llr * 2^frac_bits)``,
    messages saturate at ``+-(2^(bits-1) - 1)``, posteriors two bits wider. Floating
    point: ``dtype`` storage, messages and posteriors clipped at ``+-FLOAT_LIMIT``.
    """

    bits: int
    frac_bits: int
    dtype: np.dtype
    scale: float
    msg_lim: object
    post_lim: object

    @classmethod
    def create(cls, bits: int, frac_bits: int, float_dtype: str = "float64") -> "MessageFormat":
        if bits:
            dt = np.dtype(np.int32)
            return cls(bits, frac_bits, dt, float(1 << frac_bits),
                       dt.type((1 << (bits - 1)) - 1), dt.type((1 << (bits + 1)) - 1))
        dt = np.dtype(float_dtype)
        return cls(0, frac_bits, dt, 1.0, dt.type(FLOAT_LIMIT), dt.type(FLOAT_LIMIT))

    def quantize(self, llr: np.ndarray) -> np.ndarray:
        """LLRs (float) -> message dtype (rounded and saturated in fixed point), C-contiguous."""
        llr = np.asarray(llr, dtype=np.float64)
        if self.bits:
            q = np.clip(np.rint(llr * self.scale), -int(self.msg_lim), int(self.msg_lim))
            return np.ascontiguousarray(q, dtype=self.dtype)
        return np.ascontiguousarray(np.clip(llr, -FLOAT_LIMIT, FLOAT_LIMIT), dtype=self.dtype)

    def alpha_num(self, alpha: float) -> int:
        """``alpha`` as ``alpha_num / 2^ALPHA_SHIFT`` for the integer kernels."""
        return int(round(alpha * (1 << ALPHA_SHIFT))) if self.bits else 1 << ALPHA_SHIFT


def bp_outputs(S: int, n: int, dtype: np.dtype, want_post: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The zeroed output arrays a BP kernel fills for ``S`` shots of ``n`` columns: ``(hard uint8 (S, n),
    post dtype (S, n) when want_post else (0, n), converged bool (S,), iterations int32 (S,))``."""
    hard = np.zeros((S, n), dtype=np.uint8)
    post = np.zeros((S if want_post else 0, n), dtype=dtype)
    conv = np.zeros(S, dtype=np.bool_)
    iters = np.zeros(S, dtype=np.int32)
    return hard, post, conv, iters


@uses_params(BP_PARAMS)
class BpDecoder(Decoder):
    """Min-sum or product-sum BP for one decoding problem.

    Args:
        problem: H, L and priors.
        method: ``"minsum"`` or ``"productsum"`` (float only).
        max_iter: iteration limit, >= 1.
        alpha: min-sum scaling in [0, 1]; 0 = adaptive ``1 - 2^-t``.
        beta: min-sum offset (LLR units), >= 0.
        schedule: ``"flooding"`` or ``"layered"`` (check-serial).
        bits: 0 for floating point, else total message bits (2..24) of the fixed-point kernel.
        frac_bits: fraction bits of the fixed-point messages (0 <= frac_bits < bits).
        dtype: ``"float64"`` or ``"float32"`` (floating point only).
        threads: decoding threads for batches (default: ``numba.get_num_threads()``).

    Work bound: at most ``max_iter`` iterations per shot (default 100, for ``bp`` and ``bp-ps``).
    One iteration is one sweep over the Tanner graph, O(n + m + nnz(H)) operations, in every
    schedule and number format. A shot stops earlier once its hard decision satisfies the syndrome.
    No loop waits for convergence without this cap.

    Work clock (:attr:`work_unit`): the BP iterations of each shot. Wall clock
    (:meth:`predict_observables_timed`): measured in the scalar kernel, per shot.
    """

    has_confidence = True
    work_unit = "BP iterations"
    wall_method = "kernel"
    takes_shot_priors = True

    def __init__(
        self,
        problem: DecodingProblem,
        *,
        method: str = "minsum",
        max_iter: int,
        alpha: float,
        beta: float,
        schedule: str,
        bits: int,
        frac_bits: int,
        dtype: str,
        threads: int | None = None,
    ):
        if method not in METHODS:
            raise DecoderInputError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        if int(max_iter) != max_iter or max_iter < 1:
            raise DecoderInputError(f"max_iter must be an integer >= 1, got {max_iter!r}")
        if not (math.isfinite(alpha) and 0 <= alpha <= 1):
            raise DecoderInputError(f"alpha must lie in [0, 1] (0 = adaptive 1 - 2^-t), got {alpha!r}")
        if not (math.isfinite(beta) and beta >= 0):
            raise DecoderInputError(f"beta must be a finite number >= 0, got {beta!r}")
        if schedule not in SCHEDULES:
            raise DecoderInputError(f"schedule must be one of {list(SCHEDULES)}, got {schedule!r}")
        if bits and not 2 <= bits <= 24:
            raise DecoderInputError(f"bits must be 0 (floating point) or in 2..24, got {bits!r}")
        if bits and not 0 <= frac_bits < bits:
            raise DecoderInputError(f"frac_bits must satisfy 0 <= frac_bits < bits={bits}, got {frac_bits!r}")
        if dtype not in ("float64", "float32"):
            raise DecoderInputError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        self.method = METHODS[method]
        if bits and self.method != 0:
            raise DecoderInputError("fixed point (bits > 0) is available for min-sum only")
        self.problem = problem
        self.threads = threads  # None: numba.get_num_threads()
        self.max_iter = int(max_iter)
        self._class_code = None  # (n,) uint64 class codes (confidence.class_codes), made by the first traced call
        self.layered = schedule == "layered"
        self.adaptive = alpha == 0
        self.alpha = float(alpha)
        self.bits = int(bits)
        self.frac_bits = int(frac_bits)
        self.graph = tanner_graph_csr(problem.H.indptr, problem.H.indices, problem.H.shape[1])
        self.format = MessageFormat.create(self.bits, self.frac_bits, dtype)
        self.msg_dtype, self.scale = self.format.dtype, self.format.scale
        self.msg_lim, self.post_lim = self.format.msg_lim, self.format.post_lim
        self.alpha_num = self.format.alpha_num(self.alpha)
        self.beta = self.msg_dtype.type(int(round(beta * self.scale)) if self.bits else beta)
        self.prior_llr = self.quantize(problem.llr[None, :])
        # flooding min-sum batches in 8- / 16-bit fixed-point or float32 lanes where those kernels accept the format
        # (bit-identical to the reference lanes kernel, several times faster)
        self.narrow = None if self.method != 0 or self.layered else narrow_kernel(
            self.prior_llr, self.graph[2], self.graph[0], self.msg_lim, self.post_lim, self.alpha_num, ALPHA_SHIFT,
            self.adaptive)
        # layered min-sum batches on lanes (bit-identical to the scalar layered kernel)
        self.layered_lanes = self.method == 0 and bool(self.layered)

    # ------------------------------------------------------------ conversions
    def quantize(self, llr: np.ndarray) -> np.ndarray:
        """LLRs (float) -> the kernel's message dtype (see :class:`MessageFormat`)."""
        return self.format.quantize(llr)

    # ----------------------------------------------------------------- decode
    def kernel_params(self, max_iter: int | None = None) -> MinSumParams:
        """The kernels' :class:`~qdecode.kernels.bp_args.MinSumParams` of this decoder (``max_iter`` overrides
        the iteration limit)."""
        return MinSumParams(self.max_iter if max_iter is None else int(max_iter), self.alpha, self.alpha_num,
                            ALPHA_SHIFT, self.adaptive, self.beta, self.msg_lim, self.post_lim)

    def _run(self, llr0: np.ndarray, syndromes: np.ndarray, want_post: bool, history: int = 1):
        """Decode ``syndromes`` (S, m); returns the :class:`~qdecode.kernels.bp_args.BpOut` ``(hard (S, n) uint8,
        post, converged (S,), iterations (S,))``.

        ``post`` (message dtype) is ``(S, n)`` when ``want_post``, else ``(0, n)``: the posterior of the last
        iteration; with ``history = k > 1``, for the shots that did not converge, the sum of the posteriors of
        the last ``k`` iterations (the history key OSD orders by; :func:`qdecode.kernels.bp.posterior_history`).
        """
        S = syndromes.shape[0]
        n = self.problem.num_errors
        out = BpOut(*bp_outputs(S, n, self.msg_dtype, want_post))
        prm = self.kernel_params()
        if self.narrow is not None and S >= 4 and llr0 is self.prior_llr:  # few shots: the scalar kernel
            args = (self.graph, llr0, syndromes, prm, out, history, narrow_lanes(self.narrow))
            run_ranges(self.narrow, args, S, self.threads)
        elif self.layered_lanes and S >= 4 and llr0 is self.prior_llr:
            args = (self.graph, llr0, syndromes, prm, out, history, LAYERED_LANES)
            run_ranges(minsum_layered_lanes_range, args, S, self.threads)
        elif self.method == 0 and not self.layered:
            # flooding min-sum: the lane kernel, on any number of shots. The scalar kernel is quicker on 1-3
            # shots, but batches that small are rare (a chunk's tail) and it would be compiled for them alone
            # (~9 s of a first run); the answers are the same (bit-identical kernels)
            args = (self.graph, llr0, syndromes, prm, out, history, LANES)
            run_ranges(minsum_lanes_range, args, S, self.threads)
        else:  # product-sum, layered
            args = (self.graph, llr0, syndromes, self.method, self.layered, prm, out, history)
            run_ranges(bp_decode_range, args, S, self.threads)
        return out

    def _chunks(self, S: int):
        step = max(1, _CHUNK_ENTRIES // max(1, self.problem.num_errors))
        return [(a, min(S, a + step)) for a in range(0, S, step)] or [(0, 0)]

    def decode_soft_batch(self, syndromes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(errors uint8 (S, n), posterior LLRs float64 (S, n))`` for syndromes ``(S, m)``."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        hard, post, conv, iters = self._run(self.prior_llr, s, True)
        self.last_info = bp_info(conv, iters)
        return hard, post.astype(np.float64) / self.scale

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        hard, _, conv, iters = self._run(self.prior_llr, s, False)
        self.last_info = bp_info(conv, iters)
        return hard

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` posterior gap estimate in dB).

        The observables are those of :meth:`predict_observables_batch`; the gap is
        :func:`~qdecode.decoders.confidence.posterior_gap_db` of the last iteration's posteriors.

        Examples:
            >>> rep3 = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
            >>> obs, gap = BpDecoder(rep3, max_iter=10).predict_with_confidence(np.array([[0, 0], [1, 0]], np.uint8))
            >>> obs.ravel().tolist(), [round(float(g), 2) for g in gap]  # the exact gaps: 28.63 and 9.54 dB
            ([0, 1], [19.08, 0.0])

            BP stops at the first iteration whose decision satisfies the syndrome, before its
            posteriors have seen the whole code: an estimate, and a rough one on short runs.
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        obs = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        gap = np.zeros(s.shape[0], dtype=np.float32)
        convs, iters = [], []
        for a, b in self._chunks(s.shape[0]):
            hard, post, conv, it = self._run(self.prior_llr, s[a:b], True)
            obs[a:b] = observables_from_errors(hard, self.problem)
            gap[a:b] = posterior_gap_db(post.astype(np.float64) / self.scale, self.problem.L, conv)
            convs.append(conv)
            iters.append(it)
        self.last_info = bp_info(np.concatenate(convs), np.concatenate(iters))
        return ConfidentPrediction(obs, gap)

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        convs, iters = [], []
        for a, b in self._chunks(s.shape[0]):
            hard, _, conv, it = self._run(self.prior_llr, s[a:b], False)
            out[a:b] = observables_from_errors(hard, self.problem)
            convs.append(conv)
            iters.append(it)
        self.last_info = bp_info(np.concatenate(convs), np.concatenate(iters))
        return out

    def shot_llrs(self, priors: ShotPriors, a: int, b: int) -> np.ndarray:
        """The kernel's ``(b - a, n)`` prior LLRs (message dtype) of shots ``a:b`` of per-shot ``priors``."""
        llr = np.empty((b - a, self.problem.num_errors), dtype=np.float64)
        fill_llrs(self.problem.llr, ShotPriors(priors.ptr[a:b + 1], priors.col, priors.prior), llr)
        return self.quantize(llr)

    def predict_observables_with_priors(self, syndromes: np.ndarray, priors: ShotPriors) -> np.ndarray:
        """:meth:`predict_observables_batch` with per-shot priors (:meth:`Decoder.predict_observables_with_priors`):
        the same kernels, each shot's LLRs its own row (the flooding lanes kernel of the message format)."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        convs, iters = [], []
        for a, b in self._chunks(s.shape[0]):
            hard, _, conv, it = self._run(self.shot_llrs(priors, a, b), s[a:b], False)
            out[a:b] = observables_from_errors(hard, self.problem)
            convs.append(conv)
            iters.append(it)
        self.last_info = bp_info(np.concatenate(convs), np.concatenate(iters))
        return out

    def predict_observables_timed(self, packed: np.ndarray) -> np.ndarray:
        """Real-time mode (:meth:`Decoder.predict_observables_timed`): the scalar kernel decodes the shots one
        after another on one thread and reads :func:`~qdecode.kernels.clock.ticks` around each
        (:func:`~qdecode.kernels.bp.bp_decode_timed_range`); the answers are the batch path's."""
        m, n = self.problem.num_detectors, self.problem.num_errors
        s = unpacked_shots(packed, m)
        S = s.shape[0]
        out = BpOut(*bp_outputs(S, n, self.msg_dtype, False))
        elapsed = np.zeros(S, dtype=np.int64)
        trails = self._trail_out(S)
        bp_decode_timed_range(self.graph, self.prior_llr, s, self.method, self.layered, self.kernel_params(), out,
                              elapsed, trails, 0, S)
        info = bp_info(out.converged, out.iters)
        per_ns = ticks_per_ns()
        self.last_info = dataclasses.replace(info, wall_ns=elapsed / per_ns)
        if trails.work.shape[1]:  # the anytime policy's trail (sims/latency_bins.py)
            self.last_info.extra.update(trail_work=trails.work, trail_wall_ns=trails.ticks / per_ns,
                                        trail_obs=trails.code, trail_len=trails.count)
        return np.packbits(observables_from_errors(out.hard, self.problem), axis=1, bitorder="little")

    def _trail_out(self, S: int) -> AnswerTrailOut:
        """Room for each shot's trail of hard decisions (:mod:`~qdecode.kernels.answer_trail`): one event per
        iteration at most, plus the priors' decision; none above 64 observables, where class codes are hashes
        rather than the observables' bits."""
        cap = self.max_iter + 1 if 0 < self.problem.num_observables <= 64 else 0
        if cap and self._class_code is None:
            self._class_code = class_codes(self.problem.L)
        return answer_trail_out(self._class_code if cap else np.zeros(0, np.uint64), S, cap)

    def decode_llr_batch(self, llr: np.ndarray) -> np.ndarray:
        """Classical soft decoding: channel LLRs ``(S, n)`` float -> codeword estimates ``(S, n)`` uint8.

        Runs the same kernel with per-shot LLRs and an all-zero syndrome.
        """
        x = np.asarray(llr, dtype=np.float64)
        n = self.problem.num_errors
        if x.ndim != 2 or x.shape[1] != n:
            raise DecoderInputError(f"llr must have shape (shots, {n}), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise DecoderInputError("llr contains NaN or infinite values")
        zeros = np.zeros((x.shape[0], self.problem.num_detectors), dtype=np.uint8)
        hard, _, conv, iters = self._run(self.quantize(x), zeros, False)
        self.last_info = bp_info(conv, iters)
        return hard


ENTRIES = {
    "bp": DecoderEntry("bp", lambda problem, **kw: BpDecoder(problem, method="minsum", **kw), BP_PARAMS,
                       has_confidence=True, takes_shot_priors=True,
                       doc="min-sum belief propagation (numba; float or fixed point)"),
    "bp-ps": DecoderEntry("bp-ps", lambda problem, **kw: BpDecoder(problem, method="productsum", **kw), BP_PS_PARAMS,
                          has_confidence=True, takes_shot_priors=True,
                          doc="product-sum belief propagation (numba, float)"),
}
