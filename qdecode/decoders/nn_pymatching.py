"""``nn-pymatching``: a convolutional neural pre-decoder chained before PyMatching.

The network (:mod:`qdecode.neural`; trained by ``qdecode train predecoder``) reads the
detection events on the detector volume and returns, for every column ``j`` of the problem
(a merged DEM mechanism), the calibrated probability ``q_j`` that it fired. Then, per shot:

* ``mode=commit``: commit ``C = {j : q_j > tau}``; residual ``s' = s xor H 1_C``, committed
  observable flip ``O_C = L 1_C``; answer ``O_C xor MWPM(s')`` with the DEM's prior weights;
* ``mode=reweight``: commit nothing; MWPM of ``s`` with per-shot edge weights from ``q``
  (as belief-matching does with BP posteriors);
* ``mode=both``: commit as above, then match the residual with weights from ``q``, where a
  committed column enters as ``1 - q_j`` (the probability it is in the residual error).

Inference runs in chunks of ``batch`` shots on onnxruntime (``backend=onnx``, default: no torch
needed) or torch (``backend=torch``); ``device=cpu|cuda`` chooses where, with the same code.
The shipped models are named ``d5`` and ``d7``; a model trained at another distance than the
problem's is refused unless ``any_distance=true`` (the network is fully convolutional, so this
runs, but it is not what the model was validated for).

``rule=consistent`` additionally keeps only commits whose detectors are all defects and that
share no detector with a likelier commit. It did not help in our one measurement (an
intermediate d5 checkpoint, p = 0.005, 10k shots: same errors at tau = 0.9 and 0.95, one or
14 more at tau = 0.8 and 0.6), so the default is ``threshold``.

Measured with ``benchmarks/nn_predecoder.py`` (shipped d5 model, SD6; no result file is committed, so
run it for the figures): ``reweight`` and ``both`` failed less often than plain PyMatching at p = 0.005
and 0.003, and ``both`` gave the reweight answer while leaving PyMatching fewer defects; ``commit``
alone failed more often than PyMatching on the same shots.

``last_info.extra`` holds per-shot ``defects_before``, ``defects_after`` (residual weight) and
``committed`` (number of committed columns). Importing this module needs neither torch nor
onnxruntime.
"""

from __future__ import annotations

import numpy as np

from qdecode.decoders.base import (
    DecodeInfo,
    Decoder,
    DecoderCapabilityError,
    DecoderInputError,
    check_syndromes,
    constant_prediction,
)
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.problem import DecodingProblem

MODES = ("commit", "reweight", "both")
RULES = ("threshold", "consistent")

#: Parameters of ``nn-pymatching`` and :class:`NnPymatchingDecoder` (the class takes its defaults from here).
NN_PYMATCHING_PARAMS = {
    "model": Param(str, "d5", "shipped model name (d5, d7) or a .onnx / .pt path"),
    "mode": Param(str, "commit", "commit | reweight | both", choices=MODES),
    "tau": Param(float, 0.9, "commit threshold on the calibrated probability, in (0, 1)",
                 minimum=0.5, maximum=0.999999),
    "backend": Param(str, "onnx", "onnx (onnxruntime, no torch) | torch", choices=("onnx", "torch")),
    "device": Param(str, "cpu", "cpu | cuda", choices=("cpu", "cuda")),
    "batch": Param(int, 1024, "shots per inference chunk", minimum=1),
    "any_distance": Param(bool, False, "apply a model trained at another code distance"),
    "rule": Param(str, "threshold", "threshold | consistent (commit only columns whose detectors are all defects)",
                  choices=RULES),
    "threads": Param(int, 0, "CPU inference threads (0 = backend default)", minimum=0),
}


@uses_params(NN_PYMATCHING_PARAMS)
class NnPymatchingDecoder(Decoder):
    """Neural pre-decoder + PyMatching on the residual (see the module docstring).

    Args:
        problem: a problem from a circuit DEM with detector coordinates
            (``DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=True))``).
        model: shipped name (``d5``, ``d7``) or a ``.onnx`` / ``.pt`` path.
        mode: ``commit`` | ``reweight`` | ``both``.
        tau: commit threshold on the calibrated probability.
        backend: ``onnx`` (onnxruntime) | ``torch``.
        device: ``cpu`` | ``cuda``.
        batch: shots per inference chunk.
        any_distance: apply a model trained at another code distance.
        threads: CPU inference threads (0 = the backend's default).
        rule: ``threshold`` commits every column above ``tau``; ``consistent`` keeps only
            those whose detectors are all defects, and of candidates sharing a detector only
            the likeliest (so every commit removes defects and none creates one).

    Where the observables do not depend on the detectors (no detectors, no observables, ...),
    every shot gets :func:`~qdecode.decoders.base.constant_prediction`, without the network.

    Work bound: one forward pass of the network per shot (a fixed stack of Conv3d layers over the
    detector volume: a fixed cost per shot, no recurrence and no iteration), O(n) to gather and
    threshold the column probabilities, one sparse product to commit, then one PyMatching decode of
    the residual syndrome: exact minimum-weight perfect matching by sparse blossom, which always
    ends in time polynomial in the size of the matching graph and the number of detection events.
    With ``mode`` ``"reweight"`` or ``"both"`` (default ``"commit"``) a matching graph is built
    for each shot with a nonzero residual, O(edges). No loop depends on convergence.

    Work clock (:attr:`work_unit`): none. The network's cost is the same for every shot and the residual
    matching is PyMatching's, which reports no count of its work; the wall clock alone
    (:meth:`predict_observables_timed`).

    Raises:
        qdecode.neural.predecoder_runtime.PredecoderLoadError: missing or corrupt model (a
            ``ValueError``).
        DecoderInputError: a problem the model cannot read (detector layout, or a distance
            other than the model's without ``any_distance``), a bad ``mode`` / ``rule`` / ``tau``.
    """

    #: Observable flips only: :meth:`decode_batch` raises :class:`DecoderCapabilityError`.
    gives_errors = False

    def __init__(self, problem: DecodingProblem, *, model: str, mode: str, tau: float, backend: str, device: str,
                 batch: int, any_distance: bool, threads: int, rule: str):
        from qdecode.decoders.residual_matching import ResidualMatcher
        from qdecode.neural.predecoder_layout import LayoutError, PredecoderLayout
        from qdecode.neural.predecoder_runtime import load_predecoder

        if mode not in MODES:
            raise DecoderInputError(f"mode must be one of {list(MODES)}, got {mode!r}")
        if rule not in RULES:
            raise DecoderInputError(f"rule must be one of {list(RULES)}, got {rule!r}")
        self.rule = rule
        if not 0.0 < tau < 1.0:
            raise DecoderInputError(f"tau must be in (0, 1), got {tau}")
        self.problem = problem
        self.mode, self.tau, self.batch = mode, float(tau), max(1, int(batch))
        self.runner = load_predecoder(model, backend=backend, device=device, threads=threads)
        meta = self.runner.meta
        self._constant = constant_prediction(problem)
        if self._constant is not None:  # the detectors say nothing about the observables: no network
            self.layout = self.matcher = None
            return
        try:
            self.layout = PredecoderLayout.from_problem(problem, classes=meta.classes)
        except LayoutError as exc:
            raise DecoderInputError(f"nn-pymatching (model {model}): {exc}") from None
        if not any_distance and (self.layout.distance, self.layout.rounds) != (meta.distance, meta.rounds):
            raise DecoderInputError(
                f"nn-pymatching: model {model} was trained at d={meta.distance}, rounds={meta.rounds} but the "
                f"problem has d={self.layout.distance}, rounds={self.layout.rounds}; use the matching model or "
                "any_distance=true"
            )
        self.matcher = ResidualMatcher(problem)
        self._H_csc = problem.H.tocsc()
        self._H_csc.sort_indices()

    # ------------------------------------------------------------------ network
    def column_logits(self, syndromes: np.ndarray) -> np.ndarray:
        """float32 ``(S, n)`` calibrated per-column logits for uint8 ``(S, m)`` syndromes."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = np.empty((s.shape[0], self.problem.num_errors), dtype=np.float32)
        for a in range(0, s.shape[0], self.batch):
            b = min(a + self.batch, s.shape[0])
            out[a:b] = self.layout.gather(self.runner.logits(self.layout.inputs(s[a:b])))
        return out

    # ------------------------------------------------------------------ decoding
    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)``: ``O_C xor MWPM(residual)``."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        S, k = s.shape[0], self.problem.num_observables
        if S == 0:
            self.last_info = DecodeInfo(extra={})
            return np.zeros((0, k), dtype=np.uint8)
        if self._constant is not None:
            self.last_info = DecodeInfo(extra={})
            return np.tile(self._constant, (S, 1))
        return self.predict_from_logits(s, self.column_logits(s))

    def _consistent(self, s: np.ndarray, z: np.ndarray, commit: np.ndarray) -> np.ndarray:
        """Keep a candidate only if all its detectors are defects and no likelier candidate shares one."""
        si, ji = np.nonzero(commit)
        out = np.zeros_like(commit)
        if si.size == 0:
            return out
        ptr, idx = self._H_csc.indptr, self._H_csc.indices
        sizes = ptr[ji + 1] - ptr[ji]
        cand = np.repeat(np.arange(si.size), sizes)
        starts = np.repeat(ptr[ji] - np.cumsum(sizes) + sizes, sizes)
        det = idx[np.arange(cand.size) + starts]
        shot = si[cand]
        bad = np.bincount(cand, weights=(s[shot, det] == 0), minlength=si.size) > 0
        score = z[si, ji].astype(np.float64) - 1e-9 * ji  # distinct scores: ties go to the lower column
        key = shot.astype(np.int64) * s.shape[1] + det
        best = np.full(key.max() + 1, -np.inf)
        alive = ~bad[cand]
        np.maximum.at(best, key[alive], score[cand][alive])
        lose = np.bincount(cand, weights=(score[cand] < best[key]), minlength=si.size) > 0
        keep = ~bad & ~lose
        out[si[keep], ji[keep]] = True
        return out

    def predict_from_logits(self, syndromes: np.ndarray, logits: np.ndarray, mode: str | None = None,
                            tau: float | None = None, rule: str | None = None) -> np.ndarray:
        """Commit / reweight / both from precomputed ``column_logits`` -> uint8 ``(S, k)``.

        ``mode``, ``tau`` and ``rule`` default to the decoder's; benchmarks use this to compare modes on
        one network pass. Sets ``last_info``.
        """
        s = check_syndromes(syndromes, self.problem.num_detectors)
        z = np.asarray(logits)
        if z.shape != (s.shape[0], self.problem.num_errors):
            raise DecoderInputError(f"logits must have shape {(s.shape[0], self.problem.num_errors)}, got {z.shape}")
        mode = self.mode if mode is None else mode
        if mode not in MODES:
            raise DecoderInputError(f"mode must be one of {list(MODES)}, got {mode!r}")
        tau = self.tau if tau is None else float(tau)
        logit_tau = np.log(tau / (1.0 - tau))
        rule = self.rule if rule is None else rule
        if mode in ("commit", "both"):
            commit = z > logit_tau
            if rule == "consistent":
                commit = self._consistent(s, z, commit)
        else:
            commit = np.zeros(z.shape, dtype=bool)
        residual, obs_c = self.matcher.commit(s, commit)
        if mode == "commit":
            obs_m = self.matcher.match(residual)
        else:
            q = 0.5 * (1.0 + np.tanh(0.5 * z.astype(np.float64)))
            q = np.where(commit, 1.0 - q, q)
            obs_m = self.matcher.match_reweighted(residual, q)
        self.last_info = DecodeInfo(extra={
            "defects_before": s.sum(axis=1, dtype=np.int64),
            "defects_after": residual.sum(axis=1, dtype=np.int64),
            "committed": commit.sum(axis=1, dtype=np.int64),
        })
        return (obs_c ^ obs_m).astype(np.uint8)

    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        raise DecoderCapabilityError(
            "nn-pymatching predicts observables only (circuit DEMs have hyperedges); use predict_observables_batch"
        )


ENTRIES = {
    "nn-pymatching": DecoderEntry(
        "nn-pymatching", NnPymatchingDecoder, NN_PYMATCHING_PARAMS,
        doc="neural (Conv3d) pre-decoder, then PyMatching on the residual (commit / reweight / both)"),
}
