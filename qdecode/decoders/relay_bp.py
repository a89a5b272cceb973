"""Relay-BP (IBM, arXiv:2506.01779) and Mem-BP decoders over the numba kernels in :mod:`qdecode.kernels.relay`.

``RelayBpDecoder(problem, gamma0=0.15, gamma_interval=(-0.226, 0.622), pre_iter=80, legs=300,
leg_iter=60, stop_after=5, alpha=1.0, seed=0, bits=0, frac_bits=3, threads=None)``; the defaults
are IBM's gross-code tuning (γ0 0.15, interval [-0.226, 0.622], 80 / 60 iterations, 300 legs, S = 5).

* Leg 0 runs ``pre_iter`` min-sum iterations with memory strength ``gamma0`` on every variable;
  each of up to ``legs`` further legs redraws ``gamma_j ~ U[gamma_interval)`` per variable,
  restarts the messages from the priors and keeps the posteriors (the relayed memory), for at
  most ``leg_iter`` iterations. Decoding stops after ``stop_after`` converged legs (leg 0 counts)
  and returns the converged solution of least weight ``sum_{e_j=1} ln((1-p_j)/p_j)``; when no leg
  converges it returns leg 0's final hard decision with ``converged = False``.
* The gammas of a shot come from a counter-based hash of ``(seed, syndrome)``, so every shot's
  result is a pure function of (problem, parameters, seed, syndrome): batch order, batch size and
  thread count never change it (relay-bp instead advances one RNG stream across shots).
  ``explicit_gammas`` (``(rows, n)``, leg ``r`` uses row ``r % rows``, as in relay-bp) replaces the
  draws.
* ``bits > 0`` runs the same kernel on saturating integers (message bits ``bits``, ``frac_bits``
  fraction bits, posteriors two bits wider, alpha as ``num >> 8``, gammas with
  :data:`GAMMA_FRAC_BITS` fraction bits; see :mod:`qdecode.kernels.relay`).
* ``last_info`` (:class:`RelayDecodeInfo`): ``converged``, ``iterations`` (total over legs) and
  ``extra = {"legs": legs run after leg 0, "weight": W of the returned solution}``.
* Confidence (:meth:`RelayBpDecoder.predict_with_confidence`, the unit in
  :mod:`qdecode.decoders.confidence`): the weight gap between the returned solution and the lightest
  converged leg of another logical class, ``inf`` when every converged leg found the same class (no
  other class *found*: more legs, ``stop_after``, may find one) and ``nan`` when no leg converged.
  ``extra["classes"]`` counts the distinct classes among the converged legs. Each converged leg's
  weight and class are recorded (O(n) per converged leg on top of the decoding) by the 8-bit lanes
  kernel (:func:`~qdecode.kernels.relay_lanes_narrow.relay_lanes_i8_gap_range`) where the plain path
  runs it (``i8_lanes``, batches of at least :data:`MIN_LANE_SHOTS`), else by the scalar kernel
  (:func:`~qdecode.kernels.relay.relay_gap_range`); both give the same outputs, bit for bit.

* ``ensemble = N > 1`` (``relay-bp[ensemble=N]``; a label without it means 1, this serial decoder): ``N``
  Relay-BP chains per shot side by side on the lanes of the 8-bit kernel (so ``bits <= 8``: a request's
  default 8, and what a recorded label that spells the ensemble but not ``bits`` means, such as the sinter
  name ``qd-relay-bp[ensemble=8]``; an explicit ``bits`` above 8, or 0, is refused), chain 0 the serial
  chain, the others with gammas drawn from their own keys, the legs budget shared (``ceil(legs / N)`` legs per
  chain); the shot stops at ``stop_after`` converged legs over all chains and returns the one of least weight
  (:mod:`qdecode.kernels.relay_ensemble`). Its work clock counts lane-group steps. Its confidence is the
  serial one's over all the chains' converged legs (recorded in the ensemble's sweep,
  :func:`~qdecode.kernels.relay_ensemble.relay_ensemble_gap_range`), and its timed path records the trail of
  answers for the anytime deadline policy as the serial one does (work in steps).

``MemBP`` (registry ``mem-bp``) is the same decoder with a single leg: ``legs=0``, ``stop_after=1``,
``pre_iter=max_iter``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from qdecode.decoders.base import (
    DecodeInfo,
    Decoder,
    DecoderCapabilityError,
    DecoderInputError,
    check_syndromes,
    observables_from_errors,
    unpacked_shots,
)
from qdecode.decoders.bp import ALPHA_SHIFT, MessageFormat
from qdecode.decoders.confidence import ConfidentPrediction, class_codes, gap_db
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.kernels.bp import tanner_graph
from qdecode.kernels.clock import ticks_per_ns
from qdecode.kernels.herald_priors import ShotPriors, fill_llrs
from qdecode.kernels.minsum_lanes_narrow import MAX_SLOTS_U8
from qdecode.kernels.relay import (
    MessageArith,
    RelayGapOut,
    RelayGraph,
    RelayOut,
    RelaySchedule,
    RelayTrailOut,
    relay_decode_range,
    relay_decode_timed_range,
    relay_gap_range,
    relay_shot_priors_range,
)
from qdecode.kernels.relay_ensemble import (
    MAX_CHAINS,
    EnsembleGapOut,
    EnsembleOut,
    relay_ensemble_gap_range,
    relay_ensemble_range,
    relay_ensemble_timed_range,
)
from qdecode.kernels.relay_lanes import LANES, relay_lanes_range
from qdecode.kernels.relay_lanes_narrow import (
    RELAY_NARROW_LANES,
    relay_i8_accepts,
    relay_i8_kernels,
)
from qdecode.kernels.threads import run_dynamic, run_ranges
from qdecode.problem import DecodingProblem

GAMMA_FRAC_BITS = 8  # fixed-point gamma = g / 256
_CHUNK_ENTRIES = 1 << 24  # shots per kernel call bounded to ~16M (shots x n) entries
_MAX_SEED = (1 << 64) - 1
MIN_LANE_SHOTS = 4  # batches of fewer shots run the scalar kernel (single-shot latency)


@dataclasses.dataclass
class RelayDecodeInfo(DecodeInfo):
    """:class:`DecodeInfo` whose counters also sum the legs run (``extra["legs"]``)."""

    def counts(self) -> dict[str, int]:
        out = super().counts()
        legs = self.extra.get("legs") if self.extra else None
        if legs is not None:
            out["legs"] = int(np.sum(legs, dtype=np.int64))
        return out


def _int_param(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) or int(value) != value:
        raise DecoderInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise DecoderInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _float_param(value, name: str) -> float:
    if isinstance(value, bool):
        raise DecoderInputError(f"{name} must be a finite number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise DecoderInputError(f"{name} must be a finite number, got {value!r}") from None
    if not math.isfinite(x):
        raise DecoderInputError(f"{name} must be a finite number, got {value!r}")
    return x


#: The message bits of ``ensemble > 1`` (its kernel runs the 8-bit lanes): what a label that spells an ensemble
#: but not ``bits`` means (``qd-relay-bp[ensemble=8]``), where a label with neither means float64.
ENSEMBLE_BITS = 8


def _label_bits(others: dict) -> int:
    """``bits`` where a recorded label leaves it out (:attr:`Param.implied_by
    <qdecode.decoders.params.Param.implied_by>`): float64 (0) for the serial decoder, as labels were recorded
    before the default became 8; :data:`ENSEMBLE_BITS` for an ensemble, which runs nothing else."""
    return ENSEMBLE_BITS if others.get("ensemble", 1) > 1 else 0


_FIXED = {
    "bits": Param(int, 0, "0 = float64, else fixed-point message bits (2..24)", minimum=0, maximum=24),
    "frac_bits": Param(int, 3, "fixed-point fraction bits", minimum=0),
}
#: Parameters of ``relay-bp`` and :class:`RelayBpDecoder` (``gamma_lo`` / ``gamma_hi`` are the class's
#: ``gamma_interval``).
RELAY_PARAMS = {
    "gamma0": Param(float, 0.15, "memory strength of leg 0"),
    "gamma_lo": Param(float, -0.226, "later legs draw gamma ~ U[gamma_lo, gamma_hi)"),
    "gamma_hi": Param(float, 0.622, "upper end of the gamma interval (> gamma_lo)"),
    "pre_iter": Param(int, 80, "leg-0 iteration limit", minimum=1),
    "legs": Param(int, 300, "relay legs after leg 0 (num_sets)", minimum=0),
    "leg_iter": Param(int, 60, "iteration limit per later leg (set_max_iter)", minimum=1),
    "stop_after": Param(int, 5, "stop after this many converged legs (S)", minimum=1),
    "alpha": Param(float, 1.0, "min-sum scaling in (0, 1]", minimum=0, maximum=1, min_exclusive=True),
    "seed": Param(int, 0, "seed of the per-shot gamma draws (hashed with the syndrome)", minimum=0),
    **_FIXED,
    # 8-bit lanes: the same failures within intervals as float64 lanes at 0.2-0.25x the time
    # (benchmarks/README, "The accuracy frontier"). A label that leaves ``bits`` out (a sinter
    # name such as ``qd-relay-bp``) means float64, the default when such labels were recorded, except with an
    # ensemble (``qd-relay-bp[ensemble=8]``), which runs 8-bit messages only.
    "bits": dataclasses.replace(_FIXED["bits"], default=8, label_implied=0, implied_by=_label_bits),
    # added after labels were recorded: a label without it means the serial decoder (ensemble=1)
    "ensemble": Param(int, 1, "Relay-BP chains per shot side by side (1 = serial; > 1 needs bits <= 8)",
                      minimum=1, maximum=MAX_CHAINS, label_default=False),
}
#: Parameters of ``mem-bp`` and :class:`MemBpDecoder`.
MEM_BP_PARAMS = {
    "gamma0": Param(float, 0.15, "memory strength"),
    "max_iter": Param(int, 80, "iteration limit", minimum=1),
    "alpha": Param(float, 1.0, "min-sum scaling in (0, 1]", minimum=0, maximum=1, min_exclusive=True),
    **_FIXED,
}


def _relay_record(self, args: dict) -> dict:
    lo, hi = self.gamma_interval
    return {**{k: args[k] for k in RELAY_PARAMS if k in args}, "gamma_lo": lo, "gamma_hi": hi}


@uses_params(RELAY_PARAMS, record=_relay_record)
class RelayBpDecoder(Decoder):
    """Relay-BP for one decoding problem (min-sum with relayed memory; float64 or fixed point).

    Args:
        problem: H, L and priors.
        gamma0: memory strength of leg 0 (finite; typical 0..1).
        gamma_interval: ``(lo, hi)`` with ``lo < hi``: later legs draw ``gamma_j ~ U[lo, hi)``.
        pre_iter: leg-0 iteration limit, >= 1.
        legs: number of relay legs after leg 0 (relay-bp's ``num_sets``), >= 0.
        leg_iter: iteration limit per later leg (``set_max_iter``), >= 1.
        stop_after: stop after this many converged legs (``stop_nconv``, S), >= 1.
        alpha: min-sum scaling in (0, 1].
        seed: non-negative integer < 2^64; the per-shot gammas hash ``(seed, syndrome)``.
        bits: 0 for float64, else fixed-point message bits (2..24).
        frac_bits: fraction bits of fixed-point messages (0 <= frac_bits < bits).
        threads: decoding threads for batches (default: ``numba.get_num_threads()``).
        explicit_gammas: optional ``(rows, n)`` finite gammas for legs >= 1 (row ``leg % rows``).
        ensemble: ``N``, 1..64 Relay-BP chains per shot side by side (:mod:`qdecode.kernels.relay_ensemble`):
            1 is the serial decoder; ``N > 1`` runs the 8-bit lanes kernel, so it needs ``bits <= 8`` (and
            what :func:`~qdecode.kernels.relay_lanes_narrow.relay_i8_accepts` checks); the same confidence.

    Work bound: at most ``pre_iter`` + ``legs`` * ``leg_iter`` min-sum iterations per shot
    (defaults 80 + 300 * 60 = 18,080), each O(n + m + nnz(H)). Leg 0 runs at most ``pre_iter``
    iterations and each of at most ``legs`` later legs at most ``leg_iter``; each leg adds O(n)
    work for its gammas and its solution weight. A shot stops earlier after ``stop_after``
    converged legs (default 5).

    With ``ensemble = N > 1`` a shot runs ``N`` chains of ``ceil(legs / N)`` legs after their leg 0 each (the
    leg budget shared), so at most ``pre_iter + ceil(legs / N) * leg_iter`` steps of ``N`` iterations each.

    Work clock (:attr:`work_unit`): the min-sum iterations of each shot, summed over all its legs; with
    ``ensemble > 1`` the shot's lane-group steps (one step = one min-sum iteration of all ``N`` chains at
    once; ``last_info.iterations`` still counts the chains' iterations). Wall clock
    (:meth:`predict_observables_timed`): measured in the kernel, per shot (the scalar kernel; with
    ``ensemble > 1`` the ensemble kernel on ``N`` lanes).
    """

    has_confidence = True
    work_unit = "min-sum iterations over all legs"
    wall_method = "kernel"

    def __init__(
        self,
        problem: DecodingProblem,
        *,
        gamma0: float,
        gamma_interval: tuple[float, float] = (RELAY_PARAMS["gamma_lo"].default, RELAY_PARAMS["gamma_hi"].default),
        pre_iter: int,
        legs: int,
        leg_iter: int,
        stop_after: int,
        alpha: float,
        seed: int,
        bits: int,
        frac_bits: int,
        threads: int | None = None,
        explicit_gammas: np.ndarray | None = None,
        ensemble: int,
    ):
        self.gamma0 = _float_param(gamma0, "gamma0")
        try:
            lo, hi = gamma_interval
        except (TypeError, ValueError):
            raise DecoderInputError(f"gamma_interval must be a pair (lo, hi), got {gamma_interval!r}") from None
        lo = _float_param(lo, "gamma_interval[0]")
        hi = _float_param(hi, "gamma_interval[1]")
        if not lo < hi:
            raise DecoderInputError(f"gamma_interval must satisfy lo < hi, got ({lo!r}, {hi!r})")
        self.gamma_interval = (lo, hi)
        self.pre_iter = _int_param(pre_iter, "pre_iter", 1)
        self.legs = _int_param(legs, "legs", 0)
        self.leg_iter = _int_param(leg_iter, "leg_iter", 1)
        self.stop_after = _int_param(stop_after, "stop_after", 1)
        self.alpha = _float_param(alpha, "alpha")
        if not 0 < self.alpha <= 1:
            raise DecoderInputError(f"alpha must lie in (0, 1], got {alpha!r}")
        self.seed = _int_param(seed, "seed", 0)
        if self.seed > _MAX_SEED:
            raise DecoderInputError(f"seed must be < 2^64, got {seed!r}")
        self.bits = _int_param(bits, "bits", 0)
        if self.bits and not 2 <= self.bits <= 24:
            raise DecoderInputError(f"bits must be 0 (floating point) or in 2..24, got {bits!r}")
        self.frac_bits = _int_param(frac_bits, "frac_bits", 0)
        if self.bits and not self.frac_bits < self.bits:
            raise DecoderInputError(f"frac_bits must satisfy 0 <= frac_bits < bits={self.bits}, got {frac_bits!r}")
        if threads is not None:
            threads = _int_param(threads, "threads", 1)
        self.threads = threads
        self.problem = problem
        self._class_code = None  # (n,) uint64 class codes, made by the first predict_with_confidence
        n = problem.num_errors
        if explicit_gammas is None:
            self.gammas = np.zeros((0, n), dtype=np.float64)
        else:
            g = np.asarray(explicit_gammas, dtype=np.float64)
            if g.ndim != 2 or g.shape[1] != n or g.shape[0] < 1:
                raise DecoderInputError(f"explicit_gammas must have shape (rows >= 1, {n}), got {g.shape}")
            if not np.all(np.isfinite(g)):
                raise DecoderInputError("explicit_gammas contains NaN or infinite values")
            self.gammas = np.ascontiguousarray(g)
        biggest = max(abs(self.gamma0), abs(lo), abs(hi), float(np.abs(self.gammas).max(initial=0.0)))
        if biggest > 1e6:
            raise DecoderInputError(f"memory strengths must have magnitude <= 1e6, got {biggest!r}")
        _, _, var_ptr, _, var_chks = tanner_graph(problem.H)
        self.var_ptr, self.var_chks = var_ptr.astype(np.int64), var_chks.astype(np.uint32)
        self.weight_llr = np.ascontiguousarray(problem.llr)  # ln((1-p)/p), as relay-bp evaluates it
        self.format = fmt = MessageFormat.create(self.bits, self.frac_bits)
        self.msg_dtype, self.scale = fmt.dtype, fmt.scale
        self.msg_lim, self.post_lim = fmt.msg_lim, fmt.post_lim
        self.alpha_num = fmt.alpha_num(self.alpha)
        self.prior_llr = fmt.quantize(self.weight_llr)
        # messages of <= 8 bits whose sums fit int16 take the 8-bit lanes kernel (bit-identical, faster)
        max_check_degree = int(np.max(np.bincount(self.var_chks, minlength=1)))
        self.i8_lanes = relay_i8_accepts(self.var_ptr, max_check_degree, self.prior_llr, self.gamma0, lo, hi,
                                         self.gammas, GAMMA_FRAC_BITS, self.msg_lim, self.post_lim, self.alpha_num,
                                         ALPHA_SHIFT)
        self._max_check_degree = max_check_degree
        self._i8 = relay_i8_kernels(max_check_degree)  # uint8 slots, or uint16 above check degree 255
        self.ensemble = _int_param(ensemble, "ensemble", 1)
        if self.ensemble > MAX_CHAINS:
            raise DecoderInputError(f"ensemble must be an integer in 1..{MAX_CHAINS}, got {ensemble!r}")
        if self.ensemble > 1:
            if not self.i8_lanes:
                raise DecoderInputError(f"relay-bp: ensemble={self.ensemble} runs on the 8-bit lanes kernel, which "
                                        f"needs fixed-point bits <= 8 (got bits={self.bits}) and its word ranges; "
                                        f"leave bits out for bits={ENSEMBLE_BITS}")
            if max_check_degree > MAX_SLOTS_U8:
                raise DecoderInputError(f"relay-bp: ensemble={self.ensemble} runs on uint8 edge slots, which hold "
                                        f"check degrees <= {MAX_SLOTS_U8} (this problem has {max_check_degree})")
            self.work_unit = "lane-group steps (one min-sum iteration of all ensemble chains at once)"

    # ----------------------------------------------------------------- decode
    def _kernel_args(self) -> tuple:
        """``(graph, schedule, arithmetic, seed)``: the leading arguments of every relay range kernel."""
        lo, hi = self.gamma_interval
        return (
            RelayGraph(self.var_ptr, self.var_chks, self.prior_llr, self.weight_llr),
            RelaySchedule(self.gamma0, lo, hi, self.gammas, self.pre_iter, self.legs, self.leg_iter, self.stop_after),
            MessageArith(self.alpha, self.alpha_num, ALPHA_SHIFT, GAMMA_FRAC_BITS, self.msg_lim, self.post_lim),
            np.uint64(self.seed),
        )

    def _run(self, syndromes: np.ndarray):
        S = syndromes.shape[0]
        n = self.problem.num_errors
        hard = np.zeros((S, n), dtype=np.uint8)
        conv = np.zeros(S, dtype=np.bool_)
        iters = np.zeros(S, dtype=np.int32)
        legs = np.zeros(S, dtype=np.int32)
        weight = np.zeros(S, dtype=np.float64)
        if self.ensemble > 1:
            out = EnsembleOut(hard, conv, iters, legs, weight, np.zeros(S, dtype=np.int32))
            run_ranges(relay_ensemble_range, (*self._kernel_args(), syndromes, out, self.ensemble,
                                              RELAY_NARROW_LANES), S, self.threads)
            return hard, conv, iters, legs, weight, out.steps
        args = (*self._kernel_args(), syndromes, RelayOut(hard, conv, iters, legs, weight))
        if S >= MIN_LANE_SHOTS:  # persistent lanes; a thread's range drains on compacted lanes
            if self.i8_lanes:
                run_ranges(self._i8.plain, (*args, RELAY_NARROW_LANES), S, self.threads)
            else:
                run_ranges(relay_lanes_range, (*args, LANES), S, self.threads)
        else:
            run_dynamic(relay_decode_range, args, S, self.threads)
        return hard, conv, iters, legs, weight, iters

    def _chunks(self, S: int):
        step = max(1, _CHUNK_ENTRIES // max(1, self.problem.num_errors))
        return [(a, min(S, a + step)) for a in range(0, S, step)] or [(0, 0)]

    @staticmethod
    def _info(conv, iters, legs, weight, work, wall_ns=None) -> RelayDecodeInfo:
        return RelayDecodeInfo(converged=conv, iterations=iters, extra={"legs": legs, "weight": weight},
                               work=work.astype(np.int64), wall_ns=wall_ns)

    def _trail_out(self, S: int) -> RelayTrailOut:
        """Room for each shot's trail of answers (:class:`~qdecode.kernels.relay.RelayTrail`: leg 0's decision,
        then up to ``stop_after`` lighter converged legs; an ensemble's: at most one event per step, as many);
        none above 64 observables, where class codes are hashes rather than the observables' bits."""
        cap = self.stop_after + 1 if self.problem.num_observables <= 64 else 0
        if cap and self._class_code is None:
            self._class_code = class_codes(self.problem.L)
        codes = self._class_code if cap else np.zeros(0, np.uint64)
        return RelayTrailOut(codes, np.zeros((S, cap), np.int64), np.zeros((S, cap), np.int64),
                             np.zeros((S, cap), np.uint64), np.zeros(S, np.int64))

    def predict_observables_timed(self, packed: np.ndarray) -> np.ndarray:
        """Real-time mode (:meth:`Decoder.predict_observables_timed`): the scalar kernel decodes the shots one
        after another on one thread and reads :func:`~qdecode.kernels.clock.ticks` around each
        (:func:`~qdecode.kernels.relay.relay_decode_timed_range`; with ``ensemble > 1`` the ensemble kernel on
        ``ensemble`` lanes, :func:`~qdecode.kernels.relay_ensemble.relay_ensemble_timed_range`); ``last_info.wall_ns``
        is each shot's time in ns, the answers those of the batch path, bit for bit.

        With at most 64 observables ``last_info.extra`` also holds each shot's trail of answers, the *anytime*
        deadline policy's input (:class:`~qdecode.kernels.relay.RelayTrail`): ``trail_len`` ``(S,)`` events,
        ``trail_work`` int64 / ``trail_wall_ns`` float64 ``(S, stop_after + 1)`` the work clock (iterations;
        ensembles: steps) and the time at which the answer changed, ``trail_obs`` uint64 the observables of the
        answer from then on (bit ``i`` = observable ``i``); its last answer is the returned one."""
        m, n = self.problem.num_detectors, self.problem.num_errors
        s = unpacked_shots(packed, m)
        S = s.shape[0]
        fields = (np.zeros((S, n), np.uint8), np.zeros(S, np.bool_), np.zeros(S, np.int32),
                  np.zeros(S, np.int32), np.zeros(S, np.float64))
        elapsed = np.zeros(S, dtype=np.int64)
        trails = self._trail_out(S)
        if self.ensemble > 1:
            out = EnsembleOut(*fields, np.zeros(S, np.int32))
            relay_ensemble_timed_range(*self._kernel_args(), s, out, elapsed, trails, self.ensemble, 0, S)
            work = out.steps
        else:
            out = RelayOut(*fields)
            relay_decode_timed_range(*self._kernel_args(), s, out, elapsed, trails, 0, S)
            work = out.iterations
        self.last_info = self._info(out.converged, out.iterations, out.legs, out.weight, work,
                                    elapsed / ticks_per_ns())
        if trails.work.shape[1]:  # the anytime policy's trail (RelayTrail), on the work clock's unit
            self.last_info.extra.update(trail_work=trails.work, trail_wall_ns=trails.ticks / ticks_per_ns(),
                                        trail_obs=trails.code, trail_len=trails.count)
        obs = observables_from_errors(out.hard, self.problem)
        return np.packbits(obs, axis=1, bitorder="little")

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        hard, conv, iters, legs, weight, work = self._run(s)
        self.last_info = self._info(conv, iters, legs, weight, work)
        return hard

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.zeros((s.shape[0], self.problem.num_observables), dtype=np.uint8)
        parts = []
        for a, b in self._chunks(s.shape[0]):
            hard, conv, iters, legs, weight, work = self._run(s[a:b])
            out[a:b] = observables_from_errors(hard, self.problem)
            parts.append((conv, iters, legs, weight, work))
        self.last_info = self._info(*(np.concatenate(x) for x in zip(*parts)))
        return out

    def _i8_accepts(self, llr0: np.ndarray) -> bool:
        """Whether the 8-bit lanes compute exactly what the scalar kernel computes with these per-shot priors
        (:func:`~qdecode.kernels.relay_lanes_narrow.relay_i8_accepts` on every row at once)."""
        lo, hi = self.gamma_interval
        return relay_i8_accepts(self.var_ptr, self._max_check_degree, llr0.ravel(), self.gamma0, lo, hi, self.gammas,
                                GAMMA_FRAC_BITS, self.msg_lim, self.post_lim, self.alpha_num, ALPHA_SHIFT)

    @property
    def takes_shot_priors(self) -> bool:
        """Per-shot priors run on the 8-bit lanes where the plain path does (each lane with its shot's priors,
        :func:`~qdecode.kernels.relay_lanes_narrow.relay_lanes_i8_shot_priors_range`), else on the scalar kernel
        (:func:`~qdecode.kernels.relay.relay_shot_priors_range`), bit-identical; an ensemble (``ensemble > 1``)
        takes none."""
        return self.ensemble == 1

    def predict_observables_with_priors(self, syndromes: np.ndarray, priors: ShotPriors) -> np.ndarray:
        """:meth:`predict_observables_batch` with per-shot priors (:meth:`Decoder.predict_observables_with_priors`):
        each shot's LLRs (quantised as the decoder's) and weights, on the kernels :attr:`takes_shot_priors` names."""
        if not self.takes_shot_priors:
            raise DecoderCapabilityError("relay-bp: an ensemble takes no per-shot priors")
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S, n = s.shape[0], self.problem.num_errors
        out = np.zeros((S, self.problem.num_observables), dtype=np.uint8)
        graph, sched, arith, seed = self._kernel_args()
        parts = []
        for a, b in self._chunks(S):
            wllr = np.empty((b - a, n), dtype=np.float64)
            fill_llrs(self.weight_llr, ShotPriors(priors.ptr[a:b + 1], priors.col, priors.prior), wllr)
            llr0 = np.ascontiguousarray(self.format.quantize(wllr))
            r = RelayOut(np.zeros((b - a, n), np.uint8), np.zeros(b - a, np.bool_), np.zeros(b - a, np.int32),
                         np.zeros(b - a, np.int32), np.zeros(b - a, np.float64))
            if b - a >= MIN_LANE_SHOTS and self.i8_lanes and self._i8_accepts(llr0):
                run_ranges(self._i8.shot_priors, (graph, sched, arith, seed, llr0, wllr, s[a:b], r,
                                                  RELAY_NARROW_LANES), b - a, self.threads)
            else:
                run_dynamic(relay_shot_priors_range, (graph, sched, arith, seed, llr0, wllr, s[a:b], r), b - a,
                            self.threads)
            out[a:b] = observables_from_errors(r.hard, self.problem)
            parts.append((r.converged, r.iterations, r.legs, r.weight, r.iterations))
        self.last_info = self._info(*(np.concatenate(x) for x in zip(*parts)))
        return out

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` gap between legs in dB).

        The observables are those of :meth:`predict_observables_batch`. The gap is ``(W_other - W) * 10 /
        ln 10`` with ``W`` the returned solution's weight and ``W_other`` the least weight of a converged
        leg in another logical class (module docstring). ``last_info.extra`` adds ``weight_other``
        (float64 ``(S,)``) and ``classes`` (int32 ``(S,)``, distinct classes among converged legs).
        Runs the 8-bit lanes kernel (:func:`~qdecode.kernels.relay_lanes_narrow.relay_lanes_i8_gap_range`)
        when the plain path does (``i8_lanes`` and at least :data:`MIN_LANE_SHOTS` shots), else the scalar
        :func:`~qdecode.kernels.relay.relay_gap_range`: the same outputs either way, bit for bit. With
        ``ensemble > 1`` the converged legs are every chain's, recorded in the ensemble's own sweep
        (:func:`~qdecode.kernels.relay_ensemble.relay_ensemble_gap_range`; the answers and ``last_info.work``,
        in steps, those of the plain path).

        Examples:
            >>> rep3 = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1, L=[[1, 0, 0]])
            >>> dec = RelayBpDecoder(rep3, gamma0=0.1, pre_iter=20, legs=4, leg_iter=20, stop_after=5,
            ...                      alpha=1.0, seed=0, bits=0, frac_bits=3)
            >>> obs, gap = dec.predict_with_confidence(np.array([[1, 0]], np.uint8))
            >>> obs.ravel().tolist(), gap.tolist(), dec.last_info.extra["classes"].tolist()  # all legs agree
            ([1], [inf], [1])
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S, n = s.shape[0], self.problem.num_errors
        if self._class_code is None:
            self._class_code = class_codes(self.problem.L)
        obs = np.zeros((S, self.problem.num_observables), dtype=np.uint8)
        fields = {f: [] for f in ("converged", "iterations", "legs", "weight", "weight_other", "classes", "work")}
        for a, b in self._chunks(S):
            T = b - a
            common = (np.zeros((T, n), np.uint8), np.zeros(T, np.bool_), np.zeros(T, np.int32),
                      np.zeros(T, np.int32), np.zeros(T, np.float64))
            gap = (np.zeros(T, np.float64), np.zeros(T, np.int32))
            if self.ensemble > 1:  # every chain's converged legs, recorded in the ensemble's sweep
                out = EnsembleGapOut(*common, np.zeros(T, np.int32), *gap)
                run_ranges(relay_ensemble_gap_range, (*self._kernel_args(), s[a:b], self._class_code, out,
                                                      self.ensemble, RELAY_NARROW_LANES), T, self.threads)
                work = out.steps
            else:
                out = RelayGapOut(*common, *gap)
                args = (*self._kernel_args(), s[a:b], self._class_code, out)
                if self.i8_lanes and T >= MIN_LANE_SHOTS:  # the plain path's lanes, recording converged legs
                    run_ranges(self._i8.gap, (*args, RELAY_NARROW_LANES), T, self.threads)
                else:
                    run_dynamic(relay_gap_range, args, T, self.threads)
                work = out.iterations
            obs[a:b] = observables_from_errors(out.hard, self.problem)
            for f in fields:
                fields[f].append(work if f == "work" else getattr(out, f))
        got = {f: np.concatenate(v) for f, v in fields.items()}
        self.last_info = RelayDecodeInfo(converged=got["converged"], iterations=got["iterations"],
                                         extra={"legs": got["legs"], "weight": got["weight"],
                                                "weight_other": got["weight_other"], "classes": got["classes"]},
                                         work=got["work"].astype(np.int64))
        return ConfidentPrediction(obs, gap_db(got["weight"], got["weight_other"]))


@uses_params(MEM_BP_PARAMS)
class MemBpDecoder(RelayBpDecoder):
    """Mem-BP: min-sum with memory strength ``gamma0`` on every variable, one leg of ``max_iter``.

    No confidence: a single leg finds a single class (``predict_with_confidence`` raises).

    Work bound: one leg of at most ``max_iter`` min-sum iterations per shot (default 80), each
    O(n + m + nnz(H)); no relay legs follow. A shot stops earlier once its decision satisfies the
    syndrome.
    """

    has_confidence = False

    def __init__(self, problem: DecodingProblem, *, gamma0: float, max_iter: int, alpha: float, bits: int,
                 frac_bits: int, threads: int | None = None):
        super().__init__(problem, gamma0=gamma0, pre_iter=max_iter, legs=0, leg_iter=1, stop_after=1,
                         alpha=alpha, bits=bits, frac_bits=frac_bits, threads=threads)


def mem_bp(problem: DecodingProblem, **params) -> MemBpDecoder:
    """Mem-BP (registry ``mem-bp``): :class:`MemBpDecoder` (``gamma0``, ``max_iter``, ``alpha``, ``bits``, ...)."""
    return MemBpDecoder(problem, **params)


def _relay_factory(problem, *, gamma_lo, gamma_hi, **kw):
    return RelayBpDecoder(problem, gamma_interval=(gamma_lo, gamma_hi), **kw)


ENTRIES = {
    "relay-bp": DecoderEntry("relay-bp", _relay_factory, RELAY_PARAMS, has_confidence=True, takes_shot_priors=True,
                             doc="Relay-BP (IBM): min-sum with memory relayed over legs of random gammas (numba)"),
    "mem-bp": DecoderEntry("mem-bp", MemBpDecoder, MEM_BP_PARAMS, takes_shot_priors=True,
                           doc="Mem-BP: min-sum with memory (a single Relay-BP leg)"),
}
