"""Class escalation: the lightest of cheap candidates, then a class-forced search on heavy shots.

Shapes: H ``(m, n)``, L ``(k, n)``, syndromes uint8 ``(S, m)``, corrections uint8 ``(S, n)``; the
weight of a correction is ``W(e) = sum_j e_j w_j`` with ``w_j = ln((1 - p_j) / p_j)``
(``problem.llr``), so the lightest correction is the most likely single error.

1. Candidates: Relay-BP (``relay-bp[bits=8]``, ``stop_after`` converged legs) and, with ``osd=1``,
   BP+OSD-CS (``bposd[osd_key=sum4]``). Each candidate that satisfies ``H e = s`` competes on
   ``W``; the lightest wins (ties: Relay-BP). A candidate that violates the syndrome has
   ``W = inf``.
2. Flag: a shot is *heavy* when its winner's ``W`` is at least the threshold ``t``, or when no
   candidate satisfies the syndrome. ``t`` is the ``1 - flag_frac`` quantile of the winners'
   weights on ``calib_shots`` shots drawn from the model itself (``e ~ Bernoulli(p)``, ``s = H e``,
   seed ``calib_seed``) at construction, so about ``flag_frac`` of the shots are flagged.
3. Escalation (flagged shots only), once per observable ``i = 0..k-1``: the syndrome is extended
   by the row ``L_i`` with target ``1 - L_i e`` (``e`` the current winner), i.e. the decoder is
   asked for a correction whose observable ``i`` differs from the winner's; Relay-BP with
   ``forced_*`` parameters decodes ``[H; L_i] x = [s; 1 - L_i e]``. A solution ``x`` of the
   extended system replaces ``e`` when ``W(x) < W(e)``.

The winners' observables can therefore only change towards a lighter correction: the returned
correction is never heavier than the lightest candidate of step 1 and always satisfies the
syndrome when some candidate did. On stim's colour code (``memory_xyz``, d = 5, p = 0.002) the
wrong corrections of the candidates differ from the exact minimum-weight one by a single
connected logical of 4 to 9 mechanisms, and those shots lie among the heaviest few per cent,
which is what the flag exploits.

Measured (``benchmarks/native_vs_tesseract.py``, ``benchmarks/results/native_vs_tesseract.json``; same
shots, time ratio within one run): on that colour code, 64 and 69 failures in 20,000 shots (seeds 2026
and 1) at 0.73x and 0.72x the CPU time of Tesseract's colour preset, which fails 65 and 63 times. It
reaches Tesseract on one seed, not on the other: 133 against 128 failures over both.

Observables: escalation runs one forced Relay-BP per observable on each flagged shot, so its cost
grows as k. A model with more than ``max_observables`` (default :data:`MAX_OBSERVABLES` = 8)
observables is refused at construction, naming the cost and the way out (``relay-bp``, ``bposd``,
or the parameter raised). Measured (``benchmarks/class_escalate_observables.py``, benchmarks/README.md):
at k = 1 to 8 it took 4-15x ``relay-bp``'s time, at k = 12 ([[72,12,6]]) 364x for the same failures.

``last_info``: ``converged`` (the returned correction satisfies the syndrome), ``extra =
{"flagged": bool, "switched": bool (escalation replaced the winner), "weight": W}``, ``work`` (the work clock,
:class:`ClassEscalateDecoder`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.base import DecodeInfo, Decoder, DecoderInputError, check_syndromes
from qdecode.decoders.bposd import BpOsdDecoder
from qdecode.decoders.osd import OPERATIONS_UNIT, bp_operations
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.decoders.relay_bp import RelayBpDecoder
from qdecode.problem import DecodingProblem

#: The most observables ``class-escalate`` accepts by default (module docstring, "Observables").
MAX_OBSERVABLES = 8

#: Parameters of ``class-escalate`` and :class:`ClassEscalateDecoder`.
CLASS_ESCALATE_PARAMS = {
    "stop_after": Param(int, 10, "candidate Relay-BP: stop after this many converged legs", minimum=1),
    "osd": Param(int, 1, "1: BP+OSD-CS (osd_key=sum4) is a second candidate; 0: Relay-BP only", choices=(0, 1)),
    # 0.05: 0.72-0.73x Tesseract's time on the colour code d = 5; 0.1: the same 133 failures in 40,000
    # shots at 0.88-0.91x (benchmarks/results/native_vs_tesseract.json)
    "flag_frac": Param(float, 0.05, "fraction of shots (by calibrated weight threshold) escalated", minimum=0,
                       maximum=1),
    "forced_pre_iter": Param(int, 40, "escalation Relay-BP: leg-0 iteration limit", minimum=1),
    "forced_legs": Param(int, 100, "escalation Relay-BP: legs after leg 0", minimum=0),
    "forced_leg_iter": Param(int, 30, "escalation Relay-BP: iteration limit per later leg", minimum=1),
    "forced_stop_after": Param(int, 5, "escalation Relay-BP: stop after this many converged legs", minimum=1),
    "calib_shots": Param(int, 2000, "shots sampled from the model to calibrate the flag threshold", minimum=1),
    "calib_seed": Param(int, 0, "seed of the calibration shots", minimum=0),
    "max_observables": Param(int, MAX_OBSERVABLES, "refuse a model with more observables (escalation decodes "
                             "each flagged shot once per observable); whether it runs, never what it returns",
                             minimum=0, in_label=False),
}

#: The candidates' own parameters that class-escalate's label does not spell: the ``relay-bp`` and ``bposd``
#: defaults of their parameter tables (``RELAY_PARAMS``, ``BPOSD_PARAMS``), read from there, not copied. A
#: test pins them to the values of when class-escalate's labels were first recorded, so changing either
#: table's defaults is caught before it changes what a recorded ``class-escalate`` label means.
CANDIDATE_DEFAULTS_AT_FIRST_LABEL = {
    "relay-bp": {"gamma0": 0.15, "gamma_lo": -0.226, "gamma_hi": 0.622, "alpha": 1.0, "seed": 0, "bits": 8,
                 "frac_bits": 3, "pre_iter": 80, "legs": 300, "leg_iter": 60, "ensemble": 1},
    "bposd": {"osd_order": 10, "osd_key": "sum4", "max_iter": 80, "alpha": 1.0, "beta": 0.0,
              "schedule": "flooding", "bits": 0, "frac_bits": 3, "dtype": "float64"},
}


def syndrome_ok(problem_H: sp.csr_matrix, errors: np.ndarray, syndromes: np.ndarray) -> np.ndarray:
    """bool ``(S,)``: ``H e = s`` (mod 2) for every shot (one sparse product, no per-shot loop)."""
    if errors.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    prod = (sp.csr_matrix(errors, dtype=np.int32) @ problem_H.T.astype(np.int32)).toarray() & 1
    return np.all(prod == syndromes, axis=1)


@uses_params(CLASS_ESCALATE_PARAMS)
class ClassEscalateDecoder(Decoder):
    """Lightest of Relay-BP and BP+OSD, then class-forced Relay-BP on the heaviest shots.

    Args:
        problem: H, L and priors.
        stop_after: the candidate Relay-BP stops after this many converged legs (80 + 300 x 60
            iterations at most, 8-bit messages, gammas as ``relay-bp``'s defaults).
        osd: 1 adds the BP+OSD-CS candidate (min-sum 80 iterations, OSD-CS order 10, ``sum4``).
        flag_frac: fraction of shots escalated (0: none, 1: all), through a weight threshold
            calibrated at construction.
        forced_pre_iter, forced_legs, forced_leg_iter, forced_stop_after: the escalation Relay-BP.
        calib_shots, calib_seed: the calibration sample (module docstring).
        max_observables: a model with more observables is refused (``DecoderInputError``; module
            docstring, "Observables"); changes whether it runs, never what it returns (not in the label).
        threads: decoding threads of the inner decoders (default: numba's).

    Work bound: per shot, one Relay-BP of at most 80 + 300 * 60 min-sum iterations and (``osd=1``)
    one BP of at most 80 iterations followed by at most one OSD-CS of order 10 (the ``bposd``
    bounds), each iteration O(n + m + nnz(H)); a flagged shot then runs k escalation Relay-BPs of
    at most ``forced_pre_iter`` + ``forced_legs`` * ``forced_leg_iter`` iterations (defaults
    40 + 100 * 30) on ``[H; L_i]``, O(n + m + nnz(H) + nnz(L_i)) each. Construction decodes
    ``calib_shots`` shots the same way without escalation. Nothing else loops.

    Work clock (:attr:`work_unit`): the stages' work summed in one unit, elementary operations
    (:data:`~qdecode.decoders.osd.OPERATIONS_UNIT`): the candidate Relay-BP's min-sum iterations (all its legs)
    x ``nnz(H)``, the BP+OSD candidate's own count (``nnz(H)`` per BP iteration plus OSD's 64-bit word
    operations), and on a flagged shot each escalation Relay-BP's iterations x ``nnz([H; L_i])``. The
    construction's calibration is not counted. Wall clock: one call per shot (:attr:`wall_method` ``"call"``).
    """

    work_unit = OPERATIONS_UNIT

    def __init__(self, problem: DecodingProblem, *, stop_after: int, osd: int, flag_frac: float,
                 forced_pre_iter: int, forced_legs: int, forced_leg_iter: int, forced_stop_after: int,
                 calib_shots: int, calib_seed: int, max_observables: int, threads: int | None = None):
        if problem.num_observables > int(max_observables):
            raise DecoderInputError(
                f"class-escalate: the model has {problem.num_observables} observables, over its limit "
                f"max_observables={max_observables}: escalation decodes each flagged shot once per observable "
                f"({problem.num_observables} forced Relay-BPs), so its cost grows with their number; use relay-bp "
                f"or bposd, or class-escalate[max_observables={problem.num_observables}] to run it anyway")
        if osd not in (0, 1):
            raise DecoderInputError(f"osd must be 0 or 1, got {osd!r}")
        if not 0.0 <= float(flag_frac) <= 1.0:
            raise DecoderInputError(f"flag_frac must lie in [0, 1], got {flag_frac!r}")
        if int(calib_shots) < 1:
            raise DecoderInputError(f"calib_shots must be >= 1, got {calib_shots!r}")
        self.problem = problem
        self.flag_frac = float(flag_frac)
        self.H = problem.H.tocsr()
        self.weights = np.ascontiguousarray(problem.llr, dtype=np.float64)
        # the candidates at their classes' defaults (their parameter tables), but for the parameters named here
        self.relay = RelayBpDecoder(problem, stop_after=stop_after, threads=threads)
        self.bposd = BpOsdDecoder(problem, threads=threads) if osd else None
        L = problem.L.tocsr()
        self.forced = []  # (extended problem, its H, decoder) per observable
        for i in range(problem.num_observables):
            ext = DecodingProblem.from_check_matrix(sp.vstack([self.H, L[i]]).tocsr(), problem.priors)
            dec = RelayBpDecoder(ext, pre_iter=forced_pre_iter, legs=forced_legs, leg_iter=forced_leg_iter,
                                 stop_after=forced_stop_after, threads=threads)
            self.forced.append((ext.H.tocsr(), dec))
        self.L = L
        relays = [self.relay, *(dec for _, dec in self.forced)]
        if any(dec.work_unit != RelayBpDecoder.work_unit for dec in relays):
            self.work_unit = None  # a Relay-BP that does not count min-sum iterations: no common unit
        self.threshold = self._calibrate(int(calib_shots), int(calib_seed))

    # ------------------------------------------------------------ candidates
    def _candidates(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The lightest syndrome-satisfying candidate ``(S, n)``, its weight ``(S,)`` (inf: none) and the candidates'
        work (int64 ``(S,)``, :attr:`work_unit`; None without a work clock)."""
        best = self.relay.decode_batch(s)
        work = None if self.work_unit is None else bp_operations(self.relay.last_info.work, self.H)
        wbest = np.where(syndrome_ok(self.H, best, s), best @ self.weights, np.inf)
        if self.bposd is not None:
            e = self.bposd.decode_batch(s)
            if work is not None:
                work += self.bposd.last_info.work
            w = np.where(syndrome_ok(self.H, e, s), e @ self.weights, np.inf)
            use = w < wbest
            best[use] = e[use]
            wbest = np.where(use, w, wbest)
        return best, wbest, work

    def _calibrate(self, shots: int, seed: int) -> float:
        if self.flag_frac <= 0.0:
            return np.inf
        if self.flag_frac >= 1.0 or self.problem.num_observables == 0:
            return -np.inf if self.flag_frac >= 1.0 else np.inf
        rng = np.random.default_rng(seed)
        errs = (rng.random((shots, self.problem.num_errors)) < self.problem.priors).astype(np.uint8)
        synd = ((sp.csr_matrix(errs, dtype=np.int32) @ self.H.T.astype(np.int32)).toarray() & 1).astype(np.uint8)
        _, w, _ = self._candidates(synd)
        return float(np.quantile(w, 1.0 - self.flag_frac, method="lower"))

    # ---------------------------------------------------------------- decode
    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        s = check_syndromes(syndromes, self.problem.num_detectors)
        best, wbest, work = self._candidates(s)
        flagged = wbest >= self.threshold
        switched = np.zeros(s.shape[0], dtype=bool)
        idx = np.flatnonzero(flagged)
        if idx.size:
            sub, wsub, ssub = best[idx], wbest[idx], s[idx]
            moved = np.zeros(idx.size, dtype=bool)
            for i, (ext_H, dec) in enumerate(self.forced):
                target = 1 - ((sp.csr_matrix(sub, dtype=np.int32) @ self.L[i].T.astype(np.int32)).toarray() & 1)
                ext_s = np.hstack([ssub, target.astype(np.uint8)])
                x = dec.decode_batch(ext_s)
                if work is not None:
                    work[idx] += bp_operations(dec.last_info.work, ext_H)
                wx = np.where(syndrome_ok(ext_H, x, ext_s), x @ self.weights, np.inf)
                fin = np.isfinite(wx)  # a solution of the extended system; only a strictly lighter one moves
                use = fin & (wx < wsub - 1e-9 * np.maximum(1.0, np.abs(np.where(fin, wx, 0.0))))
                sub[use] = x[use]
                wsub = np.where(use, wx, wsub)
                moved |= use
            best[idx], wbest[idx], switched[idx] = sub, wsub, moved
        self.last_info = DecodeInfo(converged=np.isfinite(wbest),
                                    extra={"flagged": flagged, "switched": switched, "weight": wbest}, work=work)
        return best


ENTRIES = {
    "class-escalate": DecoderEntry(
        "class-escalate", ClassEscalateDecoder, CLASS_ESCALATE_PARAMS,
        doc="lightest of Relay-BP and BP+OSD; heavy shots re-decoded forced into each other logical class"),
}
