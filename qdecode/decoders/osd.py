"""OSD post-processing (BP+OSD) and classical soft-decision OSD: Python layer over ``kernels.osd``.

* :class:`OsdConfig` validates a method/order pair (``osd0``/``osd_e``/``osd_cs``, aliases
  ``0``/``e``/``cs`` and ldpc's spellings).
* :class:`OsdPostProcessor` precomputes the packed columns of ``H``, ``rank(H)`` and the
  column costs ``ln(1/p_j)`` once per problem; ``solve_batch`` runs OSD on the shots a
  BP decoder did not converge on, ordered by that decoder's posterior LLRs;
  ``solve_gap_batch`` runs it on every shot and also records, for the gap
  (:mod:`qdecode.decoders.confidence`), the lightest tested candidates of two classes.
* :class:`OsdBlockDecoder` decodes binary linear block codes from channel LLRs
  (Fossorier-Lin order-i reprocessing), for classical codes: a
  :class:`~qdecode.decoders.block.BlockDecoder` (``decode_llr_batch``; every output is a codeword).

Examples:
    >>> import numpy as np
    >>> from qdecode.problem import DecodingProblem
    >>> prob = DecodingProblem.from_check_matrix([[1, 1, 0], [0, 1, 1]], 0.1)
    >>> post = OsdPostProcessor(prob, "osd_cs", 1)
    >>> post.solve_batch(np.array([[1, 0]], dtype=np.uint8), np.zeros((1, 3)))
    array([[1, 0, 0]], dtype=uint8)
    >>> dec = OsdBlockDecoder(H=[[1, 1, 1]], order=1)
    >>> dec.decode_llr_batch(np.array([[2.0, -0.5, 1.0]]))
    array([[0, 0, 0]], dtype=uint8)
"""

from __future__ import annotations

import dataclasses
import logging
import math
import operator
from typing import Any

import numba
import numpy as np

from qdecode.decoders.block import BlockDecoder, LinearCode
from qdecode.decoders.params import Param, uses_params
from qdecode.kernels import gf2
from qdecode.kernels import osd as kosd
from qdecode.kernels.threads import run_dynamic, run_ranges
from qdecode.problem import DecodingProblem

__all__ = ["OsdConfig", "normalize_osd_method", "OsdPostProcessor", "other_class_weight", "OsdBlockDecoder",
           "OPERATIONS_UNIT", "bp_operations"]

log = logging.getLogger(__name__)

_METHOD_ALIASES = {
    "osd0": "osd0",
    "osd_0": "osd0",
    "0": "osd0",
    "osd_e": "osd_e",
    "osde": "osd_e",
    "e": "osd_e",
    "exhaustive": "osd_e",
    "osd_cs": "osd_cs",
    "osdcs": "osd_cs",
    "cs": "osd_cs",
    "combination_sweep": "osd_cs",
}
_METHOD_CODE = {"osd0": kosd.METHOD_OSD0, "osd_e": kosd.METHOD_E, "osd_cs": kosd.METHOD_CS}
_MAX_E_ORDER = 24  # 2^24 candidates per shot is already far past useful

#: The work clock's unit (:attr:`qdecode.decoders.base.Decoder.work_unit`) of the decoders that run BP and then
#: OSD or LSD (``bposd``, ``bposd-e``, ``bplsd``, ``bpuf``, ``gdg`` with an OSD, ``class-escalate``; ``window``
#: over them): elementary operations, ``nnz(H)`` edge updates per BP iteration (:func:`bp_operations`) plus the
#: post-processor's count of the 64-bit words its GF(2) row operations touch (:mod:`qdecode.kernels.osd` and
#: :mod:`qdecode.kernels.lsd`, "Work clock").
OPERATIONS_UNIT = "operations (nnz(H) edge updates per BP iteration; 64-bit words of OSD/LSD row operations)"


def bp_operations(iterations: np.ndarray, H) -> np.ndarray:
    """int64 ``(S,)``: the work of ``iterations`` (``(S,)``) BP iterations on ``H`` in :data:`OPERATIONS_UNIT`,
    ``iterations x nnz(H)`` (one message update per Tanner-graph edge and iteration)."""
    return np.asarray(iterations, dtype=np.int64) * np.int64(H.nnz)


def normalize_osd_method(method: Any) -> str:
    """Canonical method name (``"osd0"``, ``"osd_e"`` or ``"osd_cs"``) for an alias.

    Raises:
        ValueError: unknown method (the message lists the accepted names).
    """
    key = str(method).strip().lower().replace("-", "_")
    if key not in _METHOD_ALIASES:
        raise ValueError(
            f"unknown OSD method {method!r}; use one of 'osd0' ('0'), 'osd_e' ('e'), 'osd_cs' ('cs')"
        )
    return _METHOD_ALIASES[key]


def _check_order(order: Any) -> int:
    if isinstance(order, bool):
        raise ValueError(f"OSD order must be a non-negative integer, got {order!r}")
    try:
        o = operator.index(order)
    except TypeError:
        if isinstance(order, float) and order.is_integer():
            o = int(order)
        else:
            raise ValueError(f"OSD order must be a non-negative integer, got {order!r}") from None
    if o < 0:
        raise ValueError(f"OSD order must be >= 0, got {o}")
    return o


@dataclasses.dataclass(frozen=True)
class OsdConfig:
    """A validated OSD method and order.

    ``method`` accepts aliases (normalised on construction). ``osd0`` forces order 0. As
    in ldpc, order 0 with any method is plain OSD-0. ``osd_e`` orders above 24 are
    rejected (2^order candidates per shot).

    Raises:
        ValueError: unknown method, negative / non-integer order, or an ``osd_e`` order > 24.
    """

    method: str = "osd_cs"
    order: int = 0

    def __post_init__(self) -> None:
        method = normalize_osd_method(self.method)
        order = _check_order(self.order)
        if method == "osd0":
            order = 0
        if method == "osd_e" and order > _MAX_E_ORDER:
            raise ValueError(
                f"OSD order {order} is too large for osd_e (2^{order} candidates per shot); "
                f"use osd_cs or an order <= {_MAX_E_ORDER}"
            )
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "order", order)

    def clamped(self, k: int) -> "OsdConfig":
        """This config with the order clamped to ``k = n - rank(H)`` (logs a warning if it changes)."""
        if self.order > k:
            log.warning("OSD order %d exceeds k = n - rank(H) = %d; clamping to %d", self.order, k, k)
            return dataclasses.replace(self, order=int(k))
        return self

    @property
    def code(self) -> int:
        """Kernel method constant (``kernels.osd.METHOD_*``)."""
        return _METHOD_CODE[self.method]


def _default_chunks(count: int) -> int:
    return max(1, min(count, 4 * numba.get_num_threads()))


class OsdPostProcessor:
    """OSD for one decoding problem: precomputed packed ``H``, ``rank(H)`` and costs.

    Args:
        problem: the :class:`DecodingProblem` (``H`` and ``priors`` are used).
        method: ``"osd0"``, ``"osd_e"`` or ``"osd_cs"`` (or an alias).
        order: OSD order (clamped to ``k = n - rank(H)`` with a warning).

    Attributes:
        config: the validated, clamped :class:`OsdConfig`.
        rank: ``rank(H)`` over GF(2).
        k: ``n - rank``, the number of non-pivot columns per shot.
        weights: ``(n,)`` float64 candidate costs ``ln(1/p_j)`` (ldpc's cost).
        last_status: int8 ``(S,)`` per-shot status of the latest ``solve_batch``:
            0 ok, 1 syndrome outside H's column space, -1 not processed (mask false).
        last_work: int64 ``(S,)`` per-shot work of the latest ``solve_batch`` or ``solve_gap_batch``
            (0 where not processed): the 64-bit words of OSD's GF(2) row operations, a deterministic
            count (:mod:`qdecode.kernels.osd`, "Work clock").
    """

    def __init__(self, problem: DecodingProblem, method: Any = "osd_cs", order: Any = 0) -> None:
        if not isinstance(problem, DecodingProblem):
            raise ValueError(f"problem must be a DecodingProblem, got {type(problem).__name__}")
        self.problem = problem
        H = problem.H
        m, n = H.shape
        self.num_detectors = int(m)
        self.num_errors = int(n)
        csc = H.tocsc()
        csc.sort_indices()
        self.col_ptr = np.ascontiguousarray(csc.indptr, dtype=np.int64)
        self.row_idx = np.ascontiguousarray(csc.indices, dtype=np.int64)
        self.colbits = np.zeros((n, gf2.num_words(m)), dtype=np.uint64)
        gf2.pack_csc_columns(self.col_ptr, self.row_idx, self.colbits)
        self.rank = int(gf2.csc_column_rank(self.col_ptr, self.row_idx, self.colbits)) if m and n else 0
        self.k = n - self.rank
        # ln(1/p) exactly as ldpc computes it (libm log of the correctly rounded 1/p)
        self.weights = np.array([math.log(1.0 / p) for p in problem.priors], dtype=np.float64)
        self.config = OsdConfig(method, order).clamped(self.k)
        self.last_status: np.ndarray | None = None
        self.last_work: np.ndarray | None = None

    @property
    def method(self) -> str:
        return self.config.method

    @property
    def order(self) -> int:
        return self.config.order

    def _check(self, syndromes: Any, order_llr: Any, mask: Any, out: Any):
        m, n = self.num_detectors, self.num_errors
        s = np.asarray(syndromes)
        if s.ndim != 2 or s.shape[1] != m:
            raise ValueError(f"syndromes must have shape (shots, {m}), got {s.shape}")
        S = s.shape[0]
        s = np.ascontiguousarray(s, dtype=np.uint8)
        if s.size and s.max() > 1:
            raise ValueError("syndromes must be binary (0/1)")
        key = np.asarray(order_llr)
        if key.shape != (S, n):
            raise ValueError(f"order_llr must have shape ({S}, {n}) to match the syndromes, got {key.shape}")
        key = np.ascontiguousarray(key, dtype=np.float64)
        if mask is None:
            mk = np.ones(S, dtype=np.bool_)
        else:
            mk = np.asarray(mask)
            if mk.shape != (S,):
                raise ValueError(f"mask must have shape ({S},), got {mk.shape}")
            mk = np.ascontiguousarray(mk, dtype=np.bool_)
        if out is None:
            out = np.zeros((S, n), dtype=np.uint8)
        elif not (isinstance(out, np.ndarray) and out.shape == (S, n) and out.dtype == np.uint8
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous uint8 array of shape ({S}, {n})")
        return s, key, mk, out

    def solve_batch(
        self,
        syndromes: Any,
        order_llr: Any,
        mask: Any = None,
        out: np.ndarray | None = None,
        *,
        out_osd0: np.ndarray | None = None,
        shot_weights: np.ndarray | None = None,
    ) -> np.ndarray:
        """Run OSD on the masked shots.

        Args:
            syndromes: ``(S, m)`` 0/1.
            order_llr: ``(S, n)`` float, the ordering key per shot (BP posterior LLRs;
                ascending = most likely flipped first).
            mask: ``(S,)`` bool, shots to process (default: all). Rows of ``out`` for
                unmasked shots are left as they are.
            out: ``(S, n)`` uint8 to write into (allocated, zero-filled, when ``None``).
            out_osd0: optional ``(S, n)`` uint8 receiving the OSD-0 decisions.
            shot_weights: optional float64 ``(S, n)``, each shot's column costs ``ln(1/p)`` (per-shot priors)
                in place of the problem's.

        Returns:
            ``out``. Per-shot status in :attr:`last_status`, work in :attr:`last_work`.

        Raises:
            ValueError: shape or dtype mismatches, non-binary syndromes.
        """
        s, key, mk, out = self._check(syndromes, order_llr, mask, out)
        S, n = out.shape
        if out_osd0 is None:
            out0 = np.zeros((0, n), dtype=np.uint8)
        else:
            out0 = out_osd0
            if not (isinstance(out0, np.ndarray) and out0.shape == (S, n) and out0.dtype == np.uint8
                    and out0.flags.c_contiguous and out0.flags.writeable):
                raise ValueError(f"out_osd0 must be a writeable C-contiguous uint8 array of shape ({S}, {n})")
        status = np.full(S, kosd.STATUS_SKIPPED, dtype=np.int8)
        work = np.zeros(S, dtype=np.int64)
        if S:
            mat = kosd.OsdMatrix(self.col_ptr, self.row_idx, self.colbits, self.weights, self.rank)
            shots = np.flatnonzero(mk).astype(np.int64)
            bout = kosd.OsdBatchOut(out, out0, status, work)
            if shot_weights is None:
                run_dynamic(kosd.osd_range, (mat, self.config.code, self.config.order, s, key, shots, bout),
                            len(shots), None)
            else:
                w = np.ascontiguousarray(shot_weights, dtype=np.float64)
                if w.shape != (S, n):
                    raise ValueError(f"shot_weights must have shape ({S}, {n}), got {w.shape}")
                run_dynamic(kosd.osd_shot_weights_range, (mat, w, self.config.code, self.config.order, s, key,
                                                          shots, bout), len(shots), None)
        self.last_status = status
        self.last_work = work
        return out

    def solve_gap_batch(self, syndromes: Any, order_llr: Any, class_code: np.ndarray,
                        gap_weights: np.ndarray) -> tuple[np.ndarray, kosd.OsdGapOut]:
        """OSD on every shot (the decisions of :meth:`solve_batch`, bit for bit), recording the candidates.

        Every candidate the search tests (OSD-0, then the OSD-CS singles and pairs or the OSD-E
        patterns) is weighed with the gap's weights ``V(e) = sum_{e_j=1} gap_weights[j]`` (not the
        OSD costs, which still choose the decision) and classed by the XOR of ``class_code`` over its
        support (:func:`~qdecode.decoders.confidence.class_codes`). Per shot the result keeps
        ``weight`` = the least ``V`` of a tested candidate, ``code`` = its class and ``weight_other``
        = the least ``V`` of a tested candidate of a class other than ``code`` (``inf``: none). The
        least ``V`` among tested candidates of any class other than ``c`` is then ``weight_other``
        where ``code == c``, else ``weight`` (:func:`other_class_weight`). Costs the exact ``V``
        and class of the candidates lighter than ``weight_other`` (the others stop summing early,
        when every weight is >= 0); see :mod:`qdecode.kernels.osd`.

        Args:
            syndromes, order_llr: as in :meth:`solve_batch` (no mask: every shot).
            class_code: ``(n,)`` uint64 class code of each column.
            gap_weights: ``(n,)`` float64 weights ``ln((1 - p_j) / p_j)`` (``problem.llr``).

        Returns:
            ``(decisions uint8 (S, n), OsdGapOut(status int8, weight float64, code uint64,
            weight_other float64, work int64, each (S,)))``; ``weight`` and ``weight_other`` are ``inf`` where
            the syndrome is outside H's column space (status 1). :attr:`last_status` and :attr:`last_work`
            are set too.
        """
        s, key, _, out = self._check(syndromes, order_llr, None, None)
        S, n = out.shape
        code = np.ascontiguousarray(class_code, dtype=np.uint64)
        wgap = np.ascontiguousarray(gap_weights, dtype=np.float64)
        if code.shape != (n,) or wgap.shape != (n,):
            raise ValueError(f"class_code and gap_weights must have shape ({n},), got {code.shape}, {wgap.shape}")
        gout = kosd.OsdGapOut(np.full(S, kosd.STATUS_SKIPPED, dtype=np.int8), np.full(S, np.inf),
                              np.zeros(S, dtype=np.uint64), np.full(S, np.inf), np.zeros(S, dtype=np.int64))
        if S:
            mat = kosd.OsdMatrix(self.col_ptr, self.row_idx, self.colbits, self.weights, self.rank)
            kosd.osd_gap_batch(mat, self.config.code, self.config.order, s, key, out, code, wgap, gout,
                               _default_chunks(S))
        self.last_status = gout.status
        self.last_work = gout.work
        return out, gout

    def solve(self, syndrome: Any, order_llr: Any) -> np.ndarray:
        """One shot: ``(m,)`` syndrome, ``(n,)`` ordering key -> ``(n,)`` uint8."""
        s = np.asarray(syndrome).reshape(1, -1)
        key = np.asarray(order_llr).reshape(1, -1)
        return self.solve_batch(s, key)[0]


def other_class_weight(gout: kosd.OsdGapOut, code: np.ndarray) -> np.ndarray:
    """float64 ``(S,)``: the least ``V`` among the tested candidates whose class is not ``code`` (uint64 ``(S,)``).

    From the top two classes of :meth:`OsdPostProcessor.solve_gap_batch` (or of any tuple with the same
    ``weight``, ``code`` and ``weight_other`` fields: :class:`qdecode.kernels.lsd.LsdOut`): ``weight_other``
    where ``code`` is the lightest candidate's class, else ``weight`` (that candidate is then of another
    class); ``inf``: none.
    """
    return np.where(gout.code == np.asarray(code, dtype=np.uint64), gout.weight_other, gout.weight)


#: Parameters of the registry's classical ``osd`` and of :class:`OsdBlockDecoder`.
OSD_BLOCK_PARAMS = {"order": Param(int, 2, "OSD reprocessing order (0..4 typical)", minimum=0, maximum=8)}


@uses_params(OSD_BLOCK_PARAMS)
class OsdBlockDecoder(BlockDecoder):
    """Soft-decision OSD (Fossorier & Lin) for a binary linear block code.

    Give exactly one of ``H`` (parity checks, ``G`` derived as its null space) or ``G``
    (generator rows; dependent rows are dropped).

    Args:
        H: ``(m, n)`` 0/1 parity-check matrix (dense or scipy sparse).
        G: ``(k, n)`` 0/1 generator matrix.
        order: reprocessing order ``i`` (clamped to ``k`` with a warning).
        code: the code object the matrix came from (the registry passes the catalogue code), so
            that :attr:`code` and :meth:`message_bits` follow its encoder; default: a
            :class:`~qdecode.decoders.block.LinearCode` of the kernel's generator rows.

    Attributes:
        G: ``(k, n)`` uint8 full-rank generator rows used by the kernel.
        n, k, order, code.
    """

    def __init__(self, H: Any = None, G: Any = None, *, order: Any, code: Any = None) -> None:
        if (H is None) == (G is None):
            raise ValueError("give exactly one of H (parity-check matrix) or G (generator matrix)")
        order = _check_order(order)
        if H is not None:
            Hd = _as_binary_dense(H, "H")
            Gm = gf2.gf2_nullspace(Hd)
        else:
            Gm = gf2.gf2_row_basis(_as_binary_dense(G, "G"))
        if Gm.shape[0] == 0:
            raise ValueError("the code has dimension 0 (no nonzero codewords); nothing to decode")
        self.G = np.ascontiguousarray(Gm, dtype=np.uint8)
        self.k, self.n = self.G.shape
        if order > self.k:
            log.warning("OSD order %d exceeds the code dimension k = %d; clamping to %d", order, self.k, self.k)
            order = self.k
        self.order = order
        self.code = code if code is not None else LinearCode(self.G)
        self._g_packed = np.zeros((self.k, gf2.num_words(self.n)), dtype=np.uint64)
        gf2.pack_rows(self.G, self._g_packed)

    def decode_llr_batch(self, llr: Any, *, threads: int | None = None) -> np.ndarray:
        """Channel LLRs ``(S, n)`` (positive = bit 0) -> codewords ``(S, n)`` uint8.

        Args:
            llr: ``(S, n)`` channel LLRs.
            threads: worker threads over blocks (default: numba's thread count).

        Raises:
            DecoderInputError: wrong shape or non-finite LLRs (a ``ValueError``).
        """
        return super().decode_llr_batch(llr, threads=threads)

    def _decode_llr_batch(self, x: np.ndarray, *, threads: int | None = None) -> np.ndarray:
        out = np.zeros(x.shape, dtype=np.uint8)
        if x.shape[0]:
            run_ranges(kosd.osd_classical_range, (x, self._g_packed, self.order, out),
                       x.shape[0], threads)
        return out  # last_info stays None: OSD has no per-block diagnostics


def _as_binary_dense(matrix: Any, name: str) -> np.ndarray:
    if hasattr(matrix, "toarray"):
        matrix = matrix.toarray()
    a = np.asarray(matrix)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {a.shape}")
    if a.size and not np.all((a == 0) | (a == 1)):
        raise ValueError(f"{name} must be binary (entries 0 or 1)")
    return np.ascontiguousarray(a, dtype=np.uint8)
