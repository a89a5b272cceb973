"""Block decoders of rate-matched QC-LDPC codes (5G NR, :class:`qdecode.codes.nr5g.Nr5gCode`) from channel LLRs.

Both decoders see the ``E`` transmitted LLRs of each frame, undo the rate matching (``code.rate_recover``: repeated
bits summed, punctured and unsent bits at 0, filler bits known zeros), decode the mother code (``n_mother`` bits)
and return the rate-matched hard decisions ``(S, E)`` (``code.rate_match`` of the decoded word without its
first ``2Z`` columns), so that a frame error is any transmitted bit wrong. :meth:`QcLdpcDecoder.decode_mother_llr_batch`
returns the whole decoded mother word, whose first ``K`` bits are the message; ``decode_llr_batch`` also leaves
those in ``last_info.extra["message_bits"]`` (``(S, K)`` uint8), where the classical sweep counts a frame error as
a wrong message, as AFF3CT and a 5G transport-block CRC do (a frame that ends with its message right and a
parity bit wrong is no error).

* ``ldpc-ms``: min-sum on lanes of frames (:mod:`qdecode.kernels.qc_minsum`): layered or flooding schedule, offset
  (OMS) or normalised (NMS) correction, 8-bit (64 frames per vector) or 16-bit (32) saturating fixed point with
  ``frac_bits`` fractional bits: posteriors within ``lim = 2^(bits-1) - 1`` steps, check-to-variable messages
  within ``msg_lim = 2^(bits-3) - 1`` (:mod:`qdecode.kernels.qc_minsum`: why), channel LLRs
  ``clip(round(llr * 2^frac_bits), +-(o(msg_lim) - 1))`` (``o`` the OMS / NMS correction: the largest message) so
  that one check message can overturn any channel value (with channel LLRs up to ``lim``, a wrong degree-1 parity
  bit with a large channel LLR stayed wrong: ``tests/decoders/test_qc_ldpc.py`` decodes 512 frames at 8 dB), fillers
  at ``+lim``; the OMS offset ``beta`` (LLR units) becomes ``round(beta * 2^frac_bits)`` steps and the NMS factor
  ``alpha`` becomes ``round(alpha * 256) / 256``.
* ``ldpc-spa``: the float64 flooding sum-product reference (``tanh`` rule) on the lifted mother matrix: the same
  kernel as the syndrome decoder ``bp-ps`` (:class:`qdecode.decoders.bp.BpDecoder`), here with per-frame LLRs
  and an all-zero syndrome.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo
from qdecode.decoders.block import BlockDecoder
from qdecode.decoders.params import DecoderEntry, Param, uses_params
from qdecode.errors import InputError

__all__ = ["QcLdpcDecoder", "QcMinSumDecoder", "QcSpaDecoder", "LDPC_MS_PARAMS", "LDPC_SPA_PARAMS"]

#: ``last_info.extra`` key of the decoded messages ``(S, K)`` (:mod:`qdecode.decoders.block`: rate-matched codes)
MESSAGE_BITS = "message_bits"
#: LLR magnitude standing in for a filler bit's known zero in the float reference (tanh(FILLER_LLR / 2) == 1.0)
FILLER_LLR = 100.0
#: NMS factor alpha as alpha_num / 2^NMS_SHIFT
NMS_SHIFT = 8

LDPC_MS_PARAMS = {
    "schedule": Param(str, "layered", "layered (horizontal layers, one per base row) | flooding",
                      ("layered", "flooding")),
    "correction": Param(str, "offset", "offset (OMS: max(m - beta, 0)) | normalized (NMS: alpha m)",
                        ("offset", "normalized")),
    "beta": Param(float, 0.5, "OMS offset in LLR units (rounded to the fixed-point grid)", minimum=0.0),
    "alpha": Param(float, 0.75, "NMS factor (rounded to k / 256)", minimum=0.0, maximum=1.0, min_exclusive=True),
    "bits": Param(int, 8, "fixed-point width: 8 (64 frames per 512-bit vector) | 16 (32 frames)", (8, 16)),
    "frac_bits": Param(int, 2, "fractional bits of the fixed-point LLRs", minimum=0, maximum=12),
    "max_iter": Param(int, 10, "iterations", minimum=1, maximum=100_000),
    "early_stop": Param(bool, True, "stop a frame at its first zero syndrome"),
    "threads": Param(int, 0, "threads for a batch (0: numba's thread count)", minimum=0, in_label=False),
}

LDPC_SPA_PARAMS = {
    "max_iter": Param(int, 10, "iterations", minimum=1, maximum=100_000),
}


def _rate_matched(code: Any, name: str) -> Any:
    """``code`` if it is a rate-matched QC-LDPC code (5G NR), else a one-line InputError."""
    if not all(hasattr(code, a) for a in ("shifts", "Z", "rate_recover", "rate_match")):
        raise InputError(f"decoder {name!r} needs a 5G NR LDPC code (nr5g[...]), "
                         f"got {getattr(code, 'name', '') or type(code).__name__}")
    return code


class QcLdpcDecoder(BlockDecoder):
    """Shared part: rate recovery in, rate-matched hard decisions out (module docstring)."""

    always_codeword = False  # a frame that does not converge keeps its hard decisions

    def __init__(self, code: Any, name: str):
        self.code = _rate_matched(code, name)
        self.n = int(code.n)
        self.k = int(code.k)

    def decode_mother_llr_batch(self, llr: Any) -> np.ndarray:
        """Transmitted LLRs ``(S, E)`` -> the decoded mother codewords uint8 ``(S, n_mother)`` (message first)."""
        return self._decode_sent(self.check_llr(llr))

    def _decode_llr_batch(self, llr: np.ndarray, **options: Any) -> np.ndarray:
        mother = self._decode_sent(llr)
        self.last_info.extra[MESSAGE_BITS] = mother[:, :self.k]  # the decoder's own message decisions
        return self.code.rate_match(mother[:, 2 * self.code.Z:])

    def _decode_sent(self, llr: np.ndarray) -> np.ndarray:
        """Validated ``(S, E)`` LLRs -> decoded mother words; default: rate recovery, then the mother decoder."""
        return self._decode_mother(self.code.rate_recover(llr))

    def _message_bits(self, codewords: np.ndarray) -> np.ndarray:
        return self.code.message_bits(codewords)

    def _decode_mother(self, mother_llr: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@uses_params(LDPC_MS_PARAMS)
class QcMinSumDecoder(QcLdpcDecoder):
    """Min-sum on lanes of frames (module docstring; the kernel: :mod:`qdecode.kernels.qc_minsum`).

    >>> from qdecode.codes.nr5g import Nr5gCode
    >>> dec = QcMinSumDecoder(Nr5gCode.from_params(bg=2, K=512, E=1024))
    >>> dec.params["schedule"], dec.params["bits"], dec.params["max_iter"]
    ('layered', 8, 10)
    """

    def __init__(self, code: Any, *, schedule: str, correction: str, beta: float, alpha: float, bits: int,
                 frac_bits: int, max_iter: int, early_stop: bool, threads: int):
        super().__init__(code, "ldpc-ms")
        from qdecode.kernels.qc_minsum import QcParams, qc_graph

        self.graph = qc_graph(code.shifts, code.Z)
        self.dtype = np.dtype(np.int8 if bits == 8 else np.int16)
        self.scale = float(1 << frac_bits)
        self.lim = (1 << (bits - 1)) - 1
        t = self.dtype.type
        self.kernel_params = QcParams(
            max_iter=int(max_iter), flooding=schedule == "flooding", normalized=correction == "normalized",
            beta=t(min(int(round(beta * self.scale)), self.lim)), num=int(round(alpha * (1 << NMS_SHIFT))),
            shift=NMS_SHIFT, lim=t(self.lim), msg_lim=t((1 << (bits - 3)) - 1), early_stop=bool(early_stop))
        self.threads = int(threads) or None
        # channel LLRs saturate one step below the largest check message o(msg_lim), which can then overturn any
        m = int(self.kernel_params.msg_lim)
        top = ((m * self.kernel_params.num) >> NMS_SHIFT if correction == "normalized"
               else m - int(self.kernel_params.beta))
        self.channel_lim = max(top - 1, 1)

    def quantize(self, mother_llr: np.ndarray) -> np.ndarray:
        """Float LLRs ``(S, n_mother)`` (``+inf`` at fillers) -> the kernel's fixed point, C-contiguous: channel
        values clipped to ``+-channel_lim`` steps, fillers at ``+lim``."""
        q = np.clip(np.rint(mother_llr * self.scale), -self.channel_lim, self.channel_lim)
        q[np.isposinf(mother_llr)] = self.lim
        return np.ascontiguousarray(q, dtype=self.dtype)

    def quantize_sent(self, llr: np.ndarray) -> np.ndarray:
        """:meth:`quantize` of ``code.rate_recover(llr)`` in one numba pass (no float mother array): ``(S, E)``
        float64 -> ``(S, n_mother)`` fixed point."""
        from qdecode.kernels.qc_minsum import quantize_frames

        code = self.code
        out = np.empty((llr.shape[0], code.n_mother), self.dtype)
        quantize_frames(np.ascontiguousarray(llr, dtype=np.float64), np.asarray(code.transmitted_columns, np.int64),
                        code.K, code.k_cb, self.scale, float(self.channel_lim), self.dtype.type(self.lim), out)
        return out

    def _decode_sent(self, llr: np.ndarray) -> np.ndarray:
        return self.decode_quantized(self.quantize_sent(llr))

    def _decode_mother(self, mother_llr: np.ndarray) -> np.ndarray:
        return self.decode_quantized(self.quantize(mother_llr))

    def decode_quantized(self, llr_q: np.ndarray) -> np.ndarray:
        """The lane kernel on fixed-point mother LLRs ``(S, n_mother)`` (:meth:`quantize_sent`) -> decoded mother
        words uint8 ``(S, n_mother)``; sets ``last_info``."""
        from qdecode.kernels.qc_minsum import QcOut, qc_minsum_range
        from qdecode.kernels.threads import run_ranges

        S, n = llr_q.shape
        out = QcOut(np.zeros((S, n), np.uint8), np.zeros(S, np.int32), np.zeros(S, np.bool_))
        if S:
            run_ranges(qc_minsum_range, (self.graph, self.kernel_params, llr_q, out), S, self.threads)
        self.last_info = DecodeInfo(converged=out.converged, iterations=out.iterations)
        return out.bits


@uses_params(LDPC_SPA_PARAMS)
class QcSpaDecoder(QcLdpcDecoder):
    """Float64 flooding sum-product on the lifted mother matrix (the reference of ``ldpc-ms``)."""

    def __init__(self, code: Any, *, max_iter: int):
        super().__init__(code, "ldpc-spa")
        from qdecode.decoders.bp import BpDecoder
        from qdecode.problem import DecodingProblem

        H = code.H
        problem = DecodingProblem.from_check_matrix(H, np.full(H.shape[1], 0.1))  # priors unused: LLRs per frame
        self.bp = BpDecoder(problem, method="productsum", max_iter=max_iter)

    def _decode_mother(self, mother_llr: np.ndarray) -> np.ndarray:
        hard = self.bp.decode_llr_batch(np.clip(mother_llr, -FILLER_LLR, FILLER_LLR))
        info = self.bp.last_info
        self.last_info = DecodeInfo(converged=info.converged, iterations=info.iterations)
        return hard


ENTRIES = {
    "ldpc-ms": DecoderEntry("ldpc-ms", lambda code, **kw: QcMinSumDecoder(code, **kw), LDPC_MS_PARAMS,
                            kind="classical",
                            doc="layered / flooding offset or normalised min-sum of 5G NR LDPC codes on 8- or "
                                "16-bit lanes of frames"),
    "ldpc-spa": DecoderEntry("ldpc-spa", lambda code, **kw: QcSpaDecoder(code, **kw), LDPC_SPA_PARAMS,
                             kind="classical",
                             doc="float64 flooding sum-product of 5G NR LDPC codes (reference)"),
}
