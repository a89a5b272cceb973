"""Detector-volume layout of a circuit decoding problem for the convolutional pre-decoder.

No torch here: the decoder (:mod:`qdecode.decoders.nn_pymatching`) uses this module with
onnxruntime only.

Geometry (stim's rotated surface-code memory circuits): a detector has coordinates
``(x, y, t)`` with even ``x, y`` in ``0..2d`` and ``t`` in ``0..rounds``. It sits on voxel
``(t, y/2, x/2)`` of a volume of shape ``(T, Y, X) = (rounds + 1, d + 1, d + 1)``; X- and
Z-type detectors never share a voxel, so one events channel holds both.

Input tensor, float32 ``(S, 3, T, Y, X)``:

* channel 0: detection events (0/1);
* channel 1: presence of a memory-basis detector (the sector present at ``t = 0``);
* channel 2: presence of an other-basis detector.

The presence channels carry the lattice and time boundaries, so a fully convolutional
network applies to any volume.

Labels in DEM space (this project's design, in place of the homological-equivalence labels of
NVIDIA's pre-decoder, arXiv:2604.12841): every column ``j`` of ``problem.H`` (a merged
error mechanism) flips a set of detectors. Its *footprint* is that set's voxel offsets
``(dt, dy, dx)`` relative to its lowest detector in ``(t, y, x)`` order (the *anchor*). The
footprint classes form the class table; the network has one output channel per class and
predicts column ``j`` on channel ``class(j)`` at voxel ``anchor(j)``. For stim's rotated
memory-Z circuits (both detector bases) the table has 71 classes at every d >= 5.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Sequence

import numpy as np

from qdecode.errors import InputError

Footprint = tuple[tuple[int, int, int], ...]

NUM_INPUT_CHANNELS = 3


class LayoutError(InputError):
    """A problem that cannot be laid out on the detector volume, or a class-table mismatch."""


def _detector_coordinates(problem: Any) -> np.ndarray:
    dem = getattr(problem, "dem", None)
    if dem is None:
        raise LayoutError(
            "the neural pre-decoder needs detector coordinates: build the problem with "
            "DecodingProblem.from_dem(circuit.detector_error_model(decompose_errors=True))"
        )
    coords = dem.get_detector_coordinates()
    m = problem.num_detectors
    if len(coords) != m or any(len(coords.get(i, ())) < 3 for i in range(m)):
        raise LayoutError("every detector needs (x, y, t) coordinates for the neural pre-decoder")
    return np.array([coords[i][:3] for i in range(m)], dtype=np.float64)


def classes_to_json(classes: Sequence[Footprint]) -> str:
    """Class table -> compact JSON string (stored in checkpoints and ONNX metadata)."""
    return json.dumps([[list(v) for v in fp] for fp in classes], separators=(",", ":"))


def classes_from_json(text: str) -> tuple[Footprint, ...]:
    """Inverse of :func:`classes_to_json`."""
    return tuple(tuple(tuple(int(a) for a in v) for v in fp) for fp in json.loads(text))


@dataclasses.dataclass(frozen=True)
class PredecoderLayout:
    """Voxel layout of one problem.

    Attributes:
        shape: ``(T, Y, X)`` volume shape.
        distance: code distance ``d`` (``X - 1``).
        rounds: ``T - 1``.
        classes: the class table (footprints, sorted), length C.
        det_voxel: int64 ``(m,)`` flat voxel index ``t*Y*X + y*X + x`` of each detector.
        presence: float32 ``(2, T, Y, X)`` memory-basis / other-basis presence masks.
        col_class: int64 ``(n,)`` class index of each column.
        col_anchor: int64 ``(n,)`` flat anchor voxel of each column.
        col_flat: int64 ``(n,)`` index into an output flattened to ``(C * T * Y * X)``.
    """

    shape: tuple[int, int, int]
    distance: int
    rounds: int
    classes: tuple[Footprint, ...]
    det_voxel: np.ndarray
    presence: np.ndarray
    col_class: np.ndarray
    col_anchor: np.ndarray
    col_flat: np.ndarray

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def num_voxels(self) -> int:
        T, Y, X = self.shape
        return T * Y * X

    @classmethod
    def from_problem(cls, problem: Any, classes: Sequence[Footprint] | None = None) -> "PredecoderLayout":
        """Lay out ``problem`` (a :class:`qdecode.problem.DecodingProblem` with a DEM).

        Args:
            problem: the problem; needs ``problem.dem`` with detector coordinates.
            classes: a fixed class table (a checkpoint's); ``None`` derives it from the problem.

        Raises:
            LayoutError: no coordinates, odd coordinates, a column without detectors, or a
                footprint class missing from ``classes``.
        """
        xyz = _detector_coordinates(problem)
        if np.any(xyz[:, :2] % 2 != 0) or np.any(xyz[:, 2] % 1 != 0) or np.any(xyz < 0):
            raise LayoutError("detector coordinates must be even x, y and integer t >= 0 (stim rotated surface code)")
        tv = xyz[:, 2].astype(np.int64)
        yv = (xyz[:, 1] // 2).astype(np.int64)
        xv = (xyz[:, 0] // 2).astype(np.int64)
        T, Y, X = int(tv.max()) + 1, int(yv.max()) + 1, int(xv.max()) + 1
        det_voxel = (tv * Y + yv) * X + xv
        if np.unique(det_voxel).size != det_voxel.size:
            raise LayoutError("two detectors share a voxel; the layout needs one detector per (x, y, t)")
        memory = {(a, b) for a, b, t in zip(xv, yv, tv) if t == tv.min()}
        sector = np.array([(a, b) in memory for a, b in zip(xv, yv)])
        presence = np.zeros((2, T * Y * X), dtype=np.float32)
        presence[0, det_voxel[sector]] = 1.0
        presence[1, det_voxel[~sector]] = 1.0
        presence = presence.reshape(2, T, Y, X)

        H = problem.H.tocsc()
        H.sort_indices()
        n = H.shape[1]
        tyx = np.stack([tv, yv, xv], axis=1)
        footprints: list[Footprint] = []
        anchors = np.empty(n, dtype=np.int64)
        for j in range(n):
            dets = H.indices[H.indptr[j]:H.indptr[j + 1]]
            if dets.size == 0:
                raise LayoutError(f"column {j} flips no detector; the pre-decoder cannot place it")
            v = tyx[dets]
            v = v[np.lexsort((v[:, 2], v[:, 1], v[:, 0]))]
            footprints.append(tuple(tuple(int(a) for a in row) for row in (v - v[0])))
            anchors[j] = (v[0, 0] * Y + v[0, 1]) * X + v[0, 2]
        table = tuple(sorted(set(footprints))) if classes is None else tuple(tuple(map(tuple, fp)) for fp in classes)
        index = {fp: i for i, fp in enumerate(table)}
        missing = sorted({fp for fp in footprints if fp not in index})
        if missing:
            raise LayoutError(
                f"this problem has {len(missing)} footprint classes the model does not know "
                f"(e.g. {list(missing[0])}); the model was trained for another circuit family"
            )
        col_class = np.array([index[fp] for fp in footprints], dtype=np.int64)
        V = T * Y * X
        return cls(
            shape=(T, Y, X),
            distance=X - 1,
            rounds=T - 1,
            classes=table,
            det_voxel=det_voxel,
            presence=presence,
            col_class=col_class,
            col_anchor=anchors,
            col_flat=col_class * V + anchors,
        )

    # ------------------------------------------------------------------ tensors
    def inputs(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` detection events -> float32 ``(S, 3, T, Y, X)`` network input."""
        s = np.asarray(syndromes)
        S = s.shape[0]
        T, Y, X = self.shape
        out = np.zeros((S, NUM_INPUT_CHANNELS, T * Y * X), dtype=np.float32)
        out[:, 0, self.det_voxel] = s
        out[:, 1:] = self.presence.reshape(2, -1)
        return out.reshape(S, NUM_INPUT_CHANNELS, T, Y, X)

    def gather(self, volume: np.ndarray) -> np.ndarray:
        """Per-column values ``(S, n)`` from an output ``(S, C, T, Y, X)``."""
        v = np.asarray(volume)
        return v.reshape(v.shape[0], -1)[:, self.col_flat]

    def scatter(self, values: np.ndarray, fill: float = 0.0) -> np.ndarray:
        """Inverse of :meth:`gather`: ``(S, n)`` -> ``(S, C, T, Y, X)`` (other voxels ``fill``)."""
        vals = np.asarray(values)
        out = np.full((vals.shape[0], self.num_classes * self.num_voxels), fill, dtype=vals.dtype)
        out[:, self.col_flat] = vals
        return out.reshape(vals.shape[0], self.num_classes, *self.shape)
