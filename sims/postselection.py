"""Detector postselection: which detectors discard a shot when they fire.

A shot in which any postselected detector produced a detection event is *discarded*: it
is not decoded, it never counts as an error, and it is counted in the CSV's ``discards``
column (sinter's convention; ``errors`` then counts among the ``shots - discards`` kept
shots). Three ways to name the detectors, all resolved against the sampled model's
detector coordinates into sinter's bit-packed mask (``uint8``, ``ceil(m / 8)`` bytes,
little-endian bit order within a byte):

* ``coord4``: detectors whose 4th coordinate is non-zero (sinter's
  ``--postselect_detectors_with_non_zero_4th_coord``);
* an explicit list of detector indices;
* a coordinate range ``c<k>=<lo>:<hi>``: detectors with coordinate ``k`` in the closed
  interval ``[lo, hi]`` (either end may be empty for an open end).

The mask enters the strong_id exactly as sinter's ``Task.postselection_mask`` does (the
list of mask bytes), so a postselected qdecode task and the same ``sinter collect`` task
share a strong_id.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Sequence

import numpy as np

from qdecode.errors import InputError


class PostselectionError(InputError):
    """A postselection rule that cannot be parsed or does not fit the model."""


@dataclasses.dataclass(frozen=True)
class Postselection:
    """A postselection rule (picklable, hashable).

    Attributes:
        kind: ``"coord4"``, ``"indices"`` or ``"range"``.
        indices: detector indices (``kind == "indices"``).
        coord: coordinate index (``kind == "range"``).
        lo / hi: closed range ends (``None`` = unbounded).
    """

    kind: str
    indices: tuple[int, ...] = ()
    coord: int = 0
    lo: float | None = None
    hi: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("coord4", "indices", "range"):
            raise PostselectionError(f"unknown postselection kind {self.kind!r}")
        if self.kind == "indices" and (not self.indices or min(self.indices) < 0):
            raise PostselectionError(f"postselection indices must be non-negative integers, got {list(self.indices)}")
        if self.kind == "range" and self.coord < 0:
            raise PostselectionError(f"postselection coordinate index must be >= 0, got {self.coord}")

    @classmethod
    def parse(cls, text: Any) -> "Postselection":
        """From a flag / recipe value: ``"coord4"``, ``"3,17,42"`` or a list of ints, ``"c2=0:1.5"``."""
        if isinstance(text, (list, tuple)):
            if not text or any(isinstance(x, bool) or not isinstance(x, int) for x in text):
                raise PostselectionError(f"postselect: a list must hold detector indices (integers), got {text!r}")
            return cls(kind="indices", indices=tuple(int(x) for x in text))
        if not isinstance(text, str):
            raise PostselectionError(f"postselect must be 'coord4', a list of detector indices or 'c<k>=lo:hi', "
                                     f"got {text!r}")
        t = text.strip()
        if t == "coord4":
            return cls(kind="coord4")
        m = re.fullmatch(r"c(\d+)\s*=\s*([^:]*):([^:]*)", t)
        if m:
            try:
                lo = float(m.group(2)) if m.group(2).strip() else None
                hi = float(m.group(3)) if m.group(3).strip() else None
            except ValueError:
                raise PostselectionError(f"postselect {text!r}: range ends must be numbers") from None
            if lo is not None and hi is not None and lo > hi:
                raise PostselectionError(f"postselect {text!r}: empty range (lo > hi)")
            return cls(kind="range", coord=int(m.group(1)), lo=lo, hi=hi)
        if re.fullmatch(r"\d+(\s*,\s*\d+)*", t):
            return cls(kind="indices", indices=tuple(int(x) for x in t.split(",")))
        raise PostselectionError(
            f"postselect {text!r}: expected 'coord4', detector indices like '3,17,42', or a range like 'c3=1:'"
        )

    def describe(self) -> str:
        if self.kind == "coord4":
            return "coord4"
        if self.kind == "indices":
            return ",".join(map(str, self.indices))
        fmt = lambda v: "" if v is None else f"{v:g}"  # noqa: E731
        return f"c{self.coord}={fmt(self.lo)}:{fmt(self.hi)}"

    def detector_flags(self, num_detectors: int, coords: dict[int, Sequence[float]]) -> np.ndarray:
        """(num_detectors,) bool: which detectors are postselected.

        ``coords`` maps detector index to its coordinates (``dem.get_detector_coordinates()``).
        """
        flags = np.zeros(num_detectors, dtype=bool)
        if self.kind == "indices":
            bad = [i for i in self.indices if i >= num_detectors]
            if bad:
                raise PostselectionError(f"postselect: detector index {bad[0]} out of range "
                                         f"(the model has {num_detectors} detectors)")
            flags[list(self.indices)] = True
            return flags
        k = 3 if self.kind == "coord4" else self.coord
        for det, c in coords.items():
            if len(c) <= k:
                continue
            v = c[k]
            if self.kind == "coord4":
                flags[det] = v != 0
            else:
                flags[det] = (self.lo is None or v >= self.lo) and (self.hi is None or v <= self.hi)
        if not flags.any():
            raise PostselectionError(f"postselect {self.describe()!r} selects no detector of this model")
        return flags

    def mask(self, model) -> np.ndarray:
        """sinter's bit-packed mask (uint8, ceil(m / 8)) for a ``stim.Circuit`` or ``stim.DetectorErrorModel``."""
        m = model.num_detectors
        flags = self.detector_flags(m, model.get_detector_coordinates())
        packed = np.packbits(flags, bitorder="little")
        out = np.zeros(math.ceil(m / 8), dtype=np.uint8)
        out[: packed.size] = packed
        return out
