"""The decoder protocol: one compiled object per decoding problem, batch-first.

Shapes and dtypes (S = shots, m = detectors, n = error mechanisms, k = observables):

* ``decode_batch(syndromes uint8 (S, m)) -> errors uint8 (S, n)``
* ``decode(syndrome uint8 (m,)) -> errors uint8 (n,)`` (same code path, S = 1)
* ``predict_observables_batch(syndromes (S, m)) -> uint8 (S, k)`` = ``errors @ L.T mod 2``
* ``predict_observables_packed(packed uint8 (S, ceil(m/8))) -> uint8 (S, ceil(k/8))``,
  little-endian bit order within each byte (stim's ``b8``); the harness and the sinter
  adapter use this path, so a decoder with a native packed path (PyMatching) never
  unpacks in Python.

``last_info`` holds per-shot diagnostics of the latest call (``DecodeInfo``), e.g. BP
convergence flags and iteration counts; decoders without such notions leave it ``None``.

Soft output (decoders with ``has_confidence = True``; the unit is defined in
:mod:`qdecode.decoders.confidence`):

* ``predict_with_confidence(syndromes (S, m)) -> (observables uint8 (S, k), gap_db float32 (S,))``
* ``predict_with_confidence_packed(packed (S, ceil(m/8))) -> (packed (S, ceil(k/8)), gap_db (S,))``

Other decoders raise :class:`~qdecode.decoders.confidence.NoConfidenceError` from both.
"""

from __future__ import annotations

import abc
import dataclasses
import time
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from qdecode.decoders.confidence import ConfidentPrediction, no_confidence_error
from qdecode.errors import CapabilityError, InputError, ModelRefusedError
from qdecode.problem import DecodingProblem

if TYPE_CHECKING:
    from qdecode.kernels.herald_priors import ShotPriors


class DecoderInputError(InputError):
    """Bad input to a decoder: syndromes of the wrong shape, dtype or values, a parameter out of range
    (:mod:`qdecode.errors`, kind 1). Its two subclasses are the decoder's refusal of a model and a
    capability it lacks."""


class DecoderRefusedError(DecoderInputError, ModelRefusedError):
    """The decoder cannot decode this model (:mod:`qdecode.errors`, kind 2); the registry prefixes the
    decoder's name."""


class DecoderCapabilityError(DecoderInputError, CapabilityError):
    """The decoder lacks what was asked (:mod:`qdecode.errors`, kind 3): e.g. error vectors from a decoder
    that predicts observables only (:attr:`Decoder.gives_errors` is False)."""


@dataclasses.dataclass
class DecodeInfo:
    """Per-shot diagnostics of the latest batch.

    Attributes:
        converged: bool ``(S,)``; for BP: the estimate satisfies ``H e = s``.
        iterations: int32 ``(S,)`` iterations used.
        extra: further named per-shot arrays (legs, branches, ...).
        work: int64 ``(S,)``: the decoder's *work clock*, a deterministic count of the work each shot
            took, in the unit its class names (:attr:`Decoder.work_unit`); identical across runs,
            batch sizes, thread counts and machines. None when the decoder has none.
        wall_ns: float64 ``(S,)``: each shot's decoding time in nanoseconds, measured by
            :meth:`Decoder.predict_observables_timed` only (None after the other calls).
    """

    converged: np.ndarray | None = None
    iterations: np.ndarray | None = None
    extra: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    work: np.ndarray | None = None
    wall_ns: np.ndarray | None = None

    def counts(self) -> dict[str, int]:
        """Additive counters for the stats CSV's ``custom_counts`` (never hide non-convergence)."""
        out: dict[str, int] = {}
        if self.converged is not None:
            out["not_converged"] = int(np.count_nonzero(~self.converged))
        if self.iterations is not None:
            out["iterations"] = int(np.sum(self.iterations, dtype=np.int64))
        return out

    def take(self, shots: slice, num_shots: int) -> "DecodeInfo | None":
        """The diagnostics of the batch's shots ``shots`` alone (same class), or None if they cannot be cut.

        ``info.take(sl, S).counts()`` is what ``counts()`` would give had only those shots been
        decoded, provided every field is per shot: ``converged``, ``iterations``, ``work``, ``wall_ns``
        and each ``extra`` array with first axis ``num_shots`` (= S, the batch's shots). None when one
        is not (a scalar, another length) or when a subclass adds fields of its own (e.g. batch totals).
        """
        if {f.name for f in dataclasses.fields(self)} != set(PER_SHOT_FIELDS) | {"extra"}:
            return None
        arrays = [a for a in (*(getattr(self, f) for f in PER_SHOT_FIELDS), *self.extra.values()) if a is not None]
        if any(np.ndim(a) == 0 or np.shape(a)[0] != num_shots for a in arrays):
            return None
        cut = (lambda a: None if a is None else a[shots])  # noqa: E731
        return dataclasses.replace(self, **{f: cut(getattr(self, f)) for f in PER_SHOT_FIELDS},
                                   extra={k: v[shots] for k, v in self.extra.items()})


#: The per-shot array fields of :class:`DecodeInfo` (``extra`` aside).
PER_SHOT_FIELDS = ("converged", "iterations", "work", "wall_ns")


def joined_infos(infos: Sequence[DecodeInfo | None], wall_ns: np.ndarray) -> DecodeInfo:
    """One :class:`DecodeInfo` for consecutive calls of one shot each, with the measured ``wall_ns``.

    The calls' per-shot fields (and ``extra`` arrays every call has) are concatenated, keeping the class of
    the first when every call's info is of that class and carries no fields beyond :class:`DecodeInfo`'s;
    otherwise (batch totals, no info) a plain :class:`DecodeInfo` keeps what is per shot everywhere.
    """
    first = infos[0] if infos else None
    plain = first is not None and all(
        type(i) is type(first) and {f.name for f in dataclasses.fields(i)} == set(PER_SHOT_FIELDS) | {"extra"}
        for i in infos)
    fields = {}
    for f in ("converged", "iterations", "work"):
        got = [getattr(i, f, None) for i in infos]
        if got and all(g is not None and np.ndim(g) == 1 and len(g) == 1 for g in got):
            fields[f] = np.concatenate(got)
    extra = {}
    if plain:
        for key in first.extra:
            got = [i.extra.get(key) for i in infos]
            if all(g is not None and np.ndim(g) >= 1 and len(g) == 1 for g in got):
                extra[key] = np.concatenate(got)
    cls = type(first) if plain else DecodeInfo
    return cls(**fields, extra=extra, wall_ns=wall_ns)


def check_syndromes(syndromes: np.ndarray, num_detectors: int) -> np.ndarray:
    """Validate ``(S, m)`` 0/1 syndromes; return them as C-contiguous uint8.

    The one gate of every decoder's array input. Accepted: any layout (transposed views, strided
    slices, Fortran order are copied to C order), and values exactly 0 or 1 of a boolean,
    integer or real dtype. Values are checked *before* the cast to uint8, so ``-1`` or ``257``
    is refused rather than wrapped to 255 or 1.

    Raises:
        DecoderInputError: wrong number of dimensions or columns, a dtype that is not boolean,
            integer or real (strings, objects, complex), or a value other than 0/1 (NaN included).
    """
    s = np.asarray(syndromes)
    if s.ndim != 2:
        raise DecoderInputError(f"syndromes must be 2-D (shots, {num_detectors}), got shape {s.shape}")
    if s.shape[1] != num_detectors:
        raise DecoderInputError(
            f"syndromes have {s.shape[1]} columns but the problem has {num_detectors} detectors"
        )
    if s.dtype == np.bool_:
        return np.ascontiguousarray(s, dtype=np.uint8)
    if s.dtype.kind not in "iuf":
        raise DecoderInputError(f"syndromes must be a boolean, integer or real array of 0/1, got dtype {s.dtype}")
    if s.dtype != np.uint8 and s.size:
        bad = (s != 0) & (s != 1)
        if bad.any():
            raise DecoderInputError(f"syndromes must be binary (0/1), found value {s[bad].flat[0].item()!r}")
        return np.ascontiguousarray(s, dtype=np.uint8)
    s = np.ascontiguousarray(s, dtype=np.uint8)
    if s.size and s.max() > 1:
        raise DecoderInputError(f"syndromes must be binary (0/1), found value {int(s.max())}")
    return s


def check_packed(packed: np.ndarray, num_bits: int) -> np.ndarray:
    """Validate bit-packed ``(S, ceil(num_bits/8))`` uint8 shots; return them C-contiguous.

    Padding bits (beyond ``num_bits`` in the last byte) are ignored, as stim and sinter do: where
    any is set, they are cleared in a copy (Chromobius would read them as detection events of
    nodes it does not have).

    Raises:
        DecoderInputError: another dtype, number of dimensions or width.
    """
    a = np.asarray(packed)
    width = (num_bits + 7) // 8
    if a.ndim != 2 or a.shape[1] != width or a.dtype != np.uint8:
        raise DecoderInputError(
            f"bit-packed shots must be uint8 of shape (shots, {width}) for {num_bits} bits, "
            f"got {a.dtype} {a.shape}"
        )
    a = np.ascontiguousarray(a)
    used = num_bits % 8
    if used and a.shape[0] and np.any(a[:, -1] >> used):
        a = a.copy()
        a[:, -1] &= np.uint8((1 << used) - 1)
    return a


def unpacked_shots(packed: np.ndarray, num_bits: int) -> np.ndarray:
    """Bit-packed ``(S, ceil(num_bits/8))`` shots, checked (:func:`check_packed`), as uint8 0/1 ``(S, num_bits)``."""
    return np.unpackbits(check_packed(packed, num_bits), axis=1, count=num_bits, bitorder="little")


def observables_from_errors(errors: np.ndarray, problem: DecodingProblem) -> np.ndarray:
    """``errors @ L.T mod 2`` as uint8 ``(S, k)`` (sparse product, no per-shot loop).

    ``errors`` is made sparse first: corrections have few ones, and the dense route (an int32 copy
    of ``errors.T``) cost six times as much on a d = 7 circuit DEM (34 against 5.7 us per shot).
    """
    if problem.num_observables == 0:
        return np.zeros((errors.shape[0], 0), dtype=np.uint8)
    prod = sp.csr_matrix(errors, dtype=np.int32) @ problem.L.T.astype(np.int32)
    return (prod.toarray() & 1).astype(np.uint8)


def constant_prediction(problem: DecodingProblem) -> np.ndarray | None:
    """uint8 ``(k,)`` when the observables do not depend on the detectors, else ``None``.

    When no mechanism flips both a detector and an observable (no detectors, no observables,
    observables flipped only by mechanisms no detector sees, ...), the detectors say nothing
    about the observables. The mechanisms that flip observables are then independent of
    everything observed, and the most likely error fires exactly those with ``p > 1/2``: the
    best prediction for every shot is ``L (p > 1/2) mod 2`` (zero when every probability is
    below one half). Decoders that cannot run on such models (Chromobius needs colour
    coordinates, a network needs its detector volume) answer with it instead of refusing.
    """
    k = problem.num_observables
    sees = np.diff(problem.H.tocsc().indptr) > 0  # columns that flip some detector
    if k and np.any(sees & (np.diff(problem.L.tocsc().indptr) > 0)):
        return None
    likely = (problem.priors > 0.5).astype(np.int64)
    if k == 0:
        return np.zeros(0, dtype=np.uint8)
    return (np.asarray(problem.L @ likely).reshape(-1) & 1).astype(np.uint8)


def packed_rows(bits: np.ndarray, shots: int) -> np.ndarray:
    """uint8 ``(shots, ceil(k/8))``: the 0/1 vector ``bits`` ``(k,)`` bit-packed (little-endian), on every row."""
    row = np.packbits(np.asarray(bits, dtype=np.uint8), bitorder="little")
    return np.tile(row, (shots, 1)).reshape(shots, row.size)


class Decoder(abc.ABC):
    """A decoder compiled for one :class:`DecodingProblem`; cheap to call repeatedly."""

    problem: DecodingProblem
    last_info: DecodeInfo | None = None
    #: Whether :meth:`predict_with_confidence` gives a gap (the registry entry says the same:
    #: ``DecoderEntry.has_confidence``).
    has_confidence: bool = False
    #: Whether :meth:`decode_batch` gives error vectors (one bit per mechanism). False for the decoders
    #: that predict observable flips only (``tesseract``, ``chromobius``, ``bp-pymatching``,
    #: ``nn-pymatching``); per instance for those that decode a graphlike form of a hypergraph model
    #: (``pymatching``, ``uf``, ``window``). Where it is False, :meth:`decode_batch` raises
    #: :class:`DecoderCapabilityError`: ask first; :meth:`predict_observables_batch` always works.
    gives_errors: bool = True

    #: Whether :meth:`predict_observables_with_priors` decodes with per-shot priors (the herald-aware path,
    #: :mod:`qdecode.decoders.heralded`); the registry entry says the same (``DecoderEntry.takes_shot_priors``).
    takes_shot_priors: bool = False

    #: What :attr:`DecodeInfo.work` counts per shot (the deterministic work clock), e.g. ``"min-sum
    #: iterations"``; None: the decoder has no work clock. Each decoder's docstring says the same.
    work_unit: str | None = None
    #: How :meth:`predict_observables_timed` measures each shot's wall clock: ``"call"`` (each shot its
    #: own call, timed in Python with ``time.perf_counter_ns``: the API's overhead included, about
    #: 1-10 us) or ``"kernel"`` (the kernel reads :func:`qdecode.kernels.clock.ticks` before and after
    #: each shot: the decoding alone, to about 30 ns).
    wall_method: str = "call"

    @classmethod
    def from_detector_error_model(cls, dem, **params):
        """Build from a ``stim.DetectorErrorModel`` (PyMatching's name; :meth:`from_dem` is the same):
        ``BpOsdDecoder.from_detector_error_model(dem, osd_order=4)`` is ``--decoder bposd[osd_order=4]``."""
        return cls(DecodingProblem.from_detector_error_model(dem), **params)

    from_dem = from_detector_error_model  # the short name, kept

    @abc.abstractmethod
    def decode_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` syndromes -> uint8 ``(S, n)`` error estimates: one bit per error mechanism
        (column of the check matrix), as ldpc's ``BpOsdDecoder.decode``.

        PyMatching's ``Matching.decode_batch`` returns *observable flips* instead; that is
        :meth:`predict_observables_batch` here (and sinter's ``decode_shots_bit_packed`` is
        :meth:`predict_observables_packed`).

        Raises:
            DecoderCapabilityError: :attr:`gives_errors` is False (the decoder predicts observables only)."""

    def decode(self, syndrome: np.ndarray) -> np.ndarray:
        """One shot: uint8 ``(m,)`` -> uint8 ``(n,)``; the batch path with S = 1."""
        s = np.asarray(syndrome)
        if s.ndim != 1:
            raise DecoderInputError(f"decode takes one syndrome of shape ({self.problem.num_detectors},), "
                                    f"got {s.shape}")
        return self.decode_batch(s[None, :])[0]

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)`` predicted observable flips."""
        return observables_from_errors(self.decode_batch(syndromes), self.problem)

    def predict_observables_packed(self, packed: np.ndarray) -> np.ndarray:
        """Bit-packed ``(S, ceil(m/8))`` -> bit-packed ``(S, ceil(k/8))``, little-endian bits."""
        dets = unpacked_shots(packed, self.problem.num_detectors)
        obs = self.predict_observables_batch(dets)
        return np.packbits(obs, axis=1, bitorder="little")

    def predict_observables_timed(self, packed: np.ndarray) -> np.ndarray:
        """Real-time mode: :meth:`predict_observables_packed`'s answers, every shot decoded alone and timed.

        Shots are decoded one after another on one thread, as a control system would hand them over,
        and ``last_info.wall_ns`` (float64 ``(S,)``) holds each shot's time; ``last_info.work`` the work
        clock where the decoder has one. The answers are the batch path's, bit for bit. This default
        makes one call per shot and times it in Python (:attr:`wall_method` ``"call"``); decoders
        whose kernels time each shot override it (``"kernel"``).
        """
        m, k = self.problem.num_detectors, self.problem.num_observables
        packed = check_packed(packed, m)
        S = packed.shape[0]
        out = np.zeros((S, (k + 7) // 8), dtype=np.uint8)
        wall = np.zeros(S, dtype=np.float64)
        infos = []
        clock = time.perf_counter_ns
        for s in range(S):  # one call per shot is what is measured
            t0 = clock()
            out[s] = self.predict_observables_packed(packed[s:s + 1])[0]
            wall[s] = clock() - t0
            infos.append(self.last_info)
        self.last_info = joined_infos(infos, wall)
        return out

    @property
    def prior_problem(self) -> DecodingProblem:
        """The problem whose columns per-shot priors index: :attr:`problem`, or the graphlike form a matching
        decoder builds from it (``ShotPriors.col`` refers to its columns)."""
        return self.problem

    def predict_observables_with_priors(self, syndromes: np.ndarray, priors: ShotPriors) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)``, shot ``s`` decoded with its own priors: those of
        :attr:`prior_problem`, with the columns ``priors`` lists for it replaced
        (:class:`~qdecode.kernels.herald_priors.ShotPriors`).

        Raises:
            DecoderCapabilityError: the decoder takes no per-shot priors (:attr:`takes_shot_priors` False).
        """
        raise DecoderCapabilityError(f"{type(self).__name__} takes no per-shot priors")

    def predict_with_confidence(self, syndromes: np.ndarray) -> ConfidentPrediction:
        """uint8 ``(S, m)`` -> (uint8 ``(S, k)`` observables, float32 ``(S,)`` gap in dB).

        The observables are those of :meth:`predict_observables_batch`; the gap is defined in
        :mod:`qdecode.decoders.confidence`. This default is for decoders without one.

        Raises:
            NoConfidenceError: the decoder gives no confidence (``has_confidence`` is False).
        """
        raise no_confidence_error(self)

    def predict_with_confidence_packed(self, packed: np.ndarray) -> ConfidentPrediction:
        """Bit-packed ``(S, ceil(m/8))`` -> (bit-packed ``(S, ceil(k/8))`` observables, float32 ``(S,)`` gap).

        Unpacks, calls :meth:`predict_with_confidence` and packs its observables (little-endian bits).

        Raises:
            NoConfidenceError: the decoder gives no confidence.
        """
        if not self.has_confidence:  # before the unpacking: the error is the same, sooner
            raise no_confidence_error(self)
        m = self.problem.num_detectors
        dets = unpacked_shots(packed, m)
        obs, gap = self.predict_with_confidence(dets)
        return ConfidentPrediction(np.packbits(obs, axis=1, bitorder="little"), gap)


class PackedDecoder(Decoder):
    """A decoder whose native path is bit-packed (a peer package's packed call, say).

    Subclasses implement :meth:`predict_observables_packed`; :meth:`predict_observables_batch`
    packs the syndromes, calls it and unpacks, so both paths give the same answers.
    """

    def predict_observables_batch(self, syndromes: np.ndarray) -> np.ndarray:
        """uint8 ``(S, m)`` -> uint8 ``(S, k)``: packed, decoded, unpacked."""
        s = check_syndromes(syndromes, self.problem.num_detectors)
        out = self.predict_observables_packed(np.packbits(s, axis=1, bitorder="little"))
        return np.unpackbits(out, axis=1, count=self.problem.num_observables, bitorder="little").astype(
            np.uint8, copy=False)
