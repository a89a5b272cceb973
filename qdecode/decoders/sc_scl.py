"""SC and SCL decoders for polar and PAC codes (soft input: channel LLRs).

``ScDecoder(code, exact=False)`` and ``SclDecoder(code, list_size=8, crc=None, exact=False)``
take any polar-like code object with the attributes of
:class:`qdecode.codes.polar.PolarCode` (``N``, ``k``, ``info_positions``, ``frozen_mask``,
``conv``, ``crc``), so PAC codes (:class:`qdecode.codes.pac.PacCode`) decode with the same
classes; the kernels track the convolution state per path.

Both are :class:`~qdecode.decoders.block.BlockDecoder` s:

* ``decode_llr_batch(llr float (S, N)) -> uint8 (S, N)`` codewords (positive LLR = bit 0),
* ``message_bits(codewords) -> uint8 (S, k)`` message bits (without the CRC; ``code.extract``),
* ``always_codeword``: the output is always a codeword of the polar code *without* its CRC
  (frozen bits zero); for a code with a CRC only the rows with ``converged`` (CRC holds) are
  codewords of the code itself,
* ``last_info`` (:class:`~qdecode.decoders.base.DecodeInfo`): ``extra["crc_ok"]`` (bool
  ``(S,)``, the decoded CRC holds; all True without a CRC) and, for SCL, ``extra["metric"]``
  (the chosen path metric: in min-sum mode exactly the correlation discrepancy
  ``sum_{j: x_j != hard(y_j)} |llr_j|`` of the output). For a code with a CRC,
  ``converged`` is ``crc_ok`` (so detected failures show in the sweep's ``not_converged``);
  ``None`` otherwise.

``exact=False`` uses the min-sum ``f`` and the ``|llr|`` path-metric increment (the usual
hardware/throughput choice); ``exact=True`` the exact boxplus and ``log(1 + e^-x)``
increments. The reference SC BLERs in ``benchmarks/README.md`` (Polar / PAC) are exact SC;
min-sum SC costs a few per cent more block errors than exact SC on short codes, while SCL-8 is
about the same in both modes (a one-off comparison, no result file kept: measure with
``exact=True`` / ``exact=False`` on the same words). See
:mod:`qdecode.kernels.polar` for the algorithms.

Examples:
    >>> import numpy as np
    >>> from qdecode.codes.polar import PolarCode
    >>> code = PolarCode.from_construction(16, 8, "5g")
    >>> x = code.encode(np.array([[1, 0, 1, 1, 0, 0, 1, 0]], dtype=np.uint8))
    >>> llr = 4.0 * (1.0 - 2.0 * x)
    >>> bool(np.array_equal(SclDecoder(code, list_size=4).decode_llr_batch(llr), x))
    True
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from qdecode.decoders.base import DecodeInfo
from qdecode.decoders.block import BlockDecoder
from qdecode.decoders.block import check_block_llr as _check_llr
from qdecode.decoders.params import Param, uses_params
from qdecode.errors import InputError
from qdecode.kernels import polar as kpolar
from qdecode.kernels.threads import run_ranges

__all__ = ["ScDecoder", "SclDecoder", "MAX_LIST_SIZE", "SC_LANES"]

MAX_LIST_SIZE = 1 << 16
SC_LANES = 32  # blocks the SC kernel decodes side by side (vectorised lane loops; 32 measured best)


class _PolarLayout:
    """The kernel-ready description of a polar-like code (validated once)."""

    def __init__(self, code: Any) -> None:
        needed = ("N", "k", "info_positions", "frozen_mask", "conv", "crc")
        missing = [a for a in needed if not hasattr(code, a)]
        if missing:
            raise InputError(
                f"{type(code).__name__} is not a polar/PAC code (missing {', '.join(missing)}); "
                "build one with qdecode.codes.polar.PolarCode or qdecode.codes.pac.PacCode"
            )
        self.code = code
        self.N = int(code.N)
        self.k = int(code.k)
        self.info_pos = np.ascontiguousarray(code.info_positions, dtype=np.int64)
        self.K = int(self.info_pos.size)
        self.frozen = np.ascontiguousarray(code.frozen_mask, dtype=np.uint8)
        if self.frozen.shape != (self.N,) or int(self.frozen.sum()) != self.N - self.K:
            raise InputError("frozen_mask must be the (N,) complement of info_positions")
        conv = tuple(int(c) for c in code.conv)
        if not conv or conv[0] != 1 or len(conv) > 64:
            raise InputError(f"pre-transform {conv} must start with c_0 = 1 and have memory <= 63")
        self.M = len(conv) - 1
        self.taps = np.uint64(sum(1 << (j - 1) for j, c in enumerate(conv) if j > 0 and c))
        self.crc = code.crc
        self.crc_rows = np.zeros(self.K, dtype=np.uint64)
        if self.crc is not None:
            r = int(self.crc.degree)
            P = np.asarray(self.crc.parity_matrix(self.k), dtype=np.uint64)
            weights = np.uint64(1) << np.arange(r, dtype=np.uint64)
            self.crc_rows[: self.k] = (P * weights).sum(axis=1, dtype=np.uint64)
            self.crc_rows[self.k :] = weights



def check_block_llr(llr: Any, N: int) -> np.ndarray:
    """Validate channel LLRs of shape ``(shots, N)``; return them C-contiguous float64
    (:func:`qdecode.decoders.block.check_block_llr`; kept for callers of this name).

    Raises:
        DecoderInputError: not a real array, wrong shape, or NaN / infinite values.
    """
    return _check_llr(llr, N, length_name="N")


def _threads(threads: Any) -> int | None:
    if threads is None:
        return None
    t = operator.index(threads)
    if t < 1:
        raise InputError(f"threads must be >= 1, got {t}")
    return t


class _PolarDecoder(BlockDecoder):
    """What SC and SCL share: subclasses set ``layout`` and implement ``_decode(llr) -> (codewords, info bits)``."""

    layout: _PolarLayout
    _length_name = "N"

    def _decode(self, llr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    @property
    def n(self) -> int:  # type: ignore[override]
        return self.layout.N

    @property
    def k(self) -> int:  # type: ignore[override]
        return self.layout.k

    @property
    def always_codeword(self) -> bool:  # type: ignore[override]
        return self.layout.crc is None

    def _setup(self, exact: bool, threads: int | None, *, rate1: bool) -> None:
        """The kernel settings both decoders keep: boxplus mode, threads and the schedule of ``layout``."""
        self.exact = bool(exact)
        self.threads = _threads(threads)
        self.ops = kpolar.build_schedule(self.layout.frozen, rate1=rate1)
        self.last_info: DecodeInfo | None = None

    def _outputs(self, S: int) -> tuple[np.ndarray, np.ndarray]:
        """Zeroed kernel outputs for ``S`` blocks: codewords uint8 ``(S, N)`` and info bits uint8 ``(S, K)``."""
        return np.zeros((S, self.layout.N), dtype=np.uint8), np.zeros((S, self.layout.K), dtype=np.uint8)

    def _decode_llr_batch(self, llr: np.ndarray) -> np.ndarray:
        return self._decode(llr)[0]

    def _message_bits(self, codewords: np.ndarray) -> np.ndarray:
        return self.code.extract(codewords)


@uses_params({})
class ScDecoder(_PolarDecoder):
    """Successive-cancellation decoder for a polar or PAC code.

    Args:
        code: a :class:`~qdecode.codes.polar.PolarCode` / :class:`~qdecode.codes.pac.PacCode`.
        exact: exact boxplus ``f`` (default False: min-sum).
        threads: threads for a batch (default: numba's thread count).
    """

    def __init__(self, code: Any, *, exact: bool = False, threads: int | None = None) -> None:
        self.layout = _PolarLayout(code)
        self.code = code
        self._setup(exact, threads, rate1=True)

    def _decode(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lay = self.layout
        S = x.shape[0]
        cw, info = self._outputs(S)
        lanes = max(1, min(SC_LANES, S))  # a lone block should not pay for 32 lanes
        args = (x, self.ops, lay.info_pos, lay.taps, lay.M, self.exact, lanes, cw, info)
        run_ranges(kpolar.sc_decode_range, args, S, self.threads)
        crc_ok = lay.crc.check(info) if lay.crc is not None else np.ones(S, dtype=np.bool_)
        self.last_info = DecodeInfo(converged=crc_ok if lay.crc is not None else None, extra={"crc_ok": crc_ok})
        return cw, info



def _parse_crc(crc: Any) -> bool | None:
    if crc is None or isinstance(crc, bool):
        return crc
    if isinstance(crc, (int, np.integer)) and crc in (0, 1):
        return bool(crc)
    key = str(crc).strip().lower()
    if key in ("auto", "none", ""):
        return None
    if key in ("true", "yes", "on", "1"):
        return True
    if key in ("false", "no", "off", "0"):
        return False
    raise InputError(f"crc must be True, False or None/'auto', got {crc!r}")


#: Parameters of the registry's ``scl`` and of :class:`SclDecoder`.
SCL_PARAMS = {
    "list_size": Param(int, 8, "list size L", minimum=1, maximum=1024),
    "crc": Param(str, "auto", "CRC-aided selection: auto (when the code has a CRC) | true | false",
                 ("auto", "true", "false")),
}


def _scl_record(self, args: dict) -> dict:
    crc = _parse_crc(args["crc"])
    return {"list_size": self.list_size, "crc": "auto" if crc is None else "true" if crc else "false"}


@uses_params(SCL_PARAMS, record=_scl_record)
class SclDecoder(_PolarDecoder):
    """Successive-cancellation list decoder (CRC-aided when the code has a CRC).

    Args:
        code: a :class:`~qdecode.codes.polar.PolarCode` / :class:`~qdecode.codes.pac.PacCode`.
        list_size: ``L >= 1`` (``L = 1`` is SC; ``L >= 2^K`` is ML).
        crc: ``None`` / ``"auto"``: CRC-aided selection when the code has a CRC; ``True``:
            require it (error if the code has none); ``False``: pick the best metric only.
        exact: exact boxplus and exact metric increments (default False: min-sum, ``|llr|``).
        threads: threads for a batch (default: numba's thread count).

    Raises:
        ValueError: ``list_size`` not an integer in ``1..65536``; ``crc=True`` without a code CRC.
    """

    def __init__(
        self,
        code: Any,
        list_size: Any,
        *,
        crc: Any,
        exact: bool = False,
        threads: int | None = None,
    ) -> None:
        self.layout = _PolarLayout(code)
        self.code = code
        if isinstance(list_size, bool):
            raise InputError(f"list_size must be a positive integer, got {list_size!r}")
        try:
            L = operator.index(list_size)
        except TypeError:
            if isinstance(list_size, float) and list_size.is_integer():
                L = int(list_size)
            elif isinstance(list_size, str) and list_size.strip().isdigit():
                L = int(list_size)
            else:
                raise InputError(f"list_size must be a positive integer, got {list_size!r}") from None
        if not 1 <= L <= MAX_LIST_SIZE:
            raise InputError(f"list_size must be in 1..{MAX_LIST_SIZE}, got {L}")
        self.list_size = L
        want = _parse_crc(crc)
        if want and self.layout.crc is None:
            raise InputError("crc=True but the code has no CRC; build it with crc='crc6'/'crc11'/...")
        self.use_crc = self.layout.crc is not None if want is None else bool(want)
        self._setup(exact, threads, rate1=False)

    def _decode(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lay = self.layout
        S = x.shape[0]
        cw, info = self._outputs(S)
        crc_ok = np.zeros(S, dtype=np.bool_)
        metric = np.zeros(S, dtype=np.float64)
        code = kpolar.SclCode(self.ops, lay.info_pos, lay.taps, lay.M, lay.crc_rows, self.use_crc)
        args = (x, code, self.list_size, self.exact, kpolar.SclOut(cw, info, crc_ok, metric))
        run_ranges(kpolar.scl_decode_range, args, S, self.threads)
        self.last_info = DecodeInfo(
            converged=crc_ok if lay.crc is not None else None,
            extra={"crc_ok": crc_ok, "metric": metric},
        )
        return cw, info

