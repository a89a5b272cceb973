"""Conformance of every registered syndrome decoder on detector error models our circuits never make.

Like sinter's single test file for all its decoders: the decoder list comes from the registry at
collection time, so a newly registered ``quantum`` decoder is covered automatically. Each DEM kind
is built by stim (hand-written DEM text, or stim's own circuit generators with the DETECTOR
coordinates rewritten) and is foreign to ``qdecode.sims``:

* ``nocoord``: repetition code, detectors without coordinates;
* ``onecoord``: rotated surface code (X memory), one coordinate = the detector's last measurement
  index (as some published circuits have; it carries no round);
* ``fourcoord``: rotated surface code (Z memory), four coordinates ``(x, y, t, basis)``;
* ``hyper_cc``: color code ``memory_xyz``: hyperedges that do not decompose into graph edges;
* ``hyper_text``: hand-written DEM with 3-detector hyperedges and no coordinates;
* ``obs_only``: ``nocoord`` plus ``error(0.1) L0`` (a mechanism flipping only an observable).

Every decoder must either refuse at construction with a one-line ``ValueError`` (the table
:data:`REFUSALS` pins which refusals are expected and what they must say) or decode correctly:
zero syndrome -> no flip, batch / single-shot / bit-packed paths agree, the same inputs give the
same outputs (repeated identical shots included), a reported decoded error satisfies ``H e = s``
where the decoder says it converged, and the logical error rate on sampled shots is within a few
times the reference (PyMatching for graphlike DEMs, BP+OSD for hyperedge DEMs).
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.problem import DecodingProblem

REGISTERED = [name for name in decoder_names() if get_entry(name).kind == "quantum"]
KINDS = ["nocoord", "onecoord", "fourcoord", "hyper_cc", "hyper_text", "obs_only"]
HYPER = {"hyper_cc", "hyper_text"}
SHOTS = 600

#: Tight iteration limits so the whole file stays fast; decoders not listed run their defaults.
FAST = {
    "bp": ["max_iter=30"],
    "bp-ps": ["max_iter=30"],
    "bposd": ["max_iter=30"],
    "bposd-e": ["max_iter=30"],
    "mem-bp": ["max_iter=30"],
    "relay-bp": ["legs=20", "pre_iter=30", "leg_iter=20", "stop_after=2"],
    "gdg": ["max_iters=200"],
    "window": ["max_iter=30"],
}
#: Configurations run as decoders of their own: test id -> (registry name, parameters).
VARIANTS = {"relay-bp[ensemble=4]": ("relay-bp", [*FAST["relay-bp"], "ensemble=4"])}
QUANTUM = REGISTERED + list(VARIANTS)

#: Shots of the logical-error-rate check for decoders too slow for SHOTS (one integer program per syndrome).
SLOW_SHOTS = {"mle": 200}

_NO_DECOMPOSITION = r"no '\^' decomposition into graph edges"
#: (decoder, kind) -> regex the refusal must match. A listed pair that decodes fails the test,
#: and so does an unlisted refusal (a new decoder must decode these DEMs or declare its refusal).
REFUSALS = {
    ("pymatching", "hyper_cc"): _NO_DECOMPOSITION,
    ("pymatching", "hyper_text"): _NO_DECOMPOSITION,
    ("pymatching-correlated", "hyper_cc"): _NO_DECOMPOSITION,
    ("pymatching-correlated", "hyper_text"): _NO_DECOMPOSITION,
    ("bp-pymatching", "hyper_cc"): "decomposed hyperedges",
    ("bp-pymatching", "hyper_text"): "decomposed hyperedges",
    ("window", "hyper_text"): "cannot tell the detectors' rounds.*per_round",
    ("uf", "hyper_cc"): "decomposed hyperedges",
    ("uf", "hyper_text"): "decomposed hyperedges",
    **{("chromobius", kind): "needs a 4th coordinate naming its basis and colour"
       for kind in ("nocoord", "onecoord", "hyper_cc", "hyper_text", "obs_only")},
}
#: Decoders that may refuse any of these DEMs (the shipped nn-pymatching models are for the
#: rotated surface code at specific distances, with (x, y, t) coordinates).
MAY_REFUSE = {"nn-pymatching": "coordinates|footprint|distance|surface"}


# ------------------------------------------------------------------ DEM kinds
def rewrite_detector_coordinates(circuit: stim.Circuit, coords) -> stim.Circuit:
    """``circuit`` flattened, each DETECTOR's coordinates replaced by ``coords(k, old, last_meas)``.

    ``k``: detector index; ``old``: its flattened coordinates; ``last_meas``: the absolute index of
    the latest measurement it compares (a measurement-like index, distinct across rounds).
    """
    out = stim.Circuit()
    num_meas = 0
    k = 0
    for inst in circuit.flattened():
        if inst.name == "DETECTOR":
            last = max(num_meas + t.value for t in inst.targets_copy())
            out.append("DETECTOR", inst.targets_copy(), coords(k, inst.gate_args_copy(), last))
            k += 1
            continue
        out.append(inst)
        if inst.name not in ("OBSERVABLE_INCLUDE", "SHIFT_COORDS", "QUBIT_COORDS", "TICK"):
            num_meas += stim.Circuit(str(inst)).num_measurements
    return out


HYPER_TEXT = """
error(0.05) D0 D1 D2
error(0.05) D2 D3 D4 L0
error(0.05) D1 D3 D5
error(0.03) D0
error(0.03) D4
error(0.03) D5 L0
error(0.03) D0 D3
error(0.03) D1 D4
error(0.03) D2 D5
"""


@functools.lru_cache(maxsize=None)
def dem_kind(kind: str) -> tuple[stim.DetectorErrorModel, np.ndarray, np.ndarray]:
    """``(dem, dets uint8 (SHOTS, m), obs uint8 (SHOTS, k))`` of one DEM kind, fixed seeds."""
    if kind in ("nocoord", "obs_only"):
        circ = stim.Circuit.generated("repetition_code:memory", distance=5, rounds=6,
                                      after_clifford_depolarization=0.03, before_measure_flip_probability=0.03)
        circ = rewrite_detector_coordinates(circ, lambda k, old, last: [])
        dem = circ.detector_error_model(decompose_errors=True)
        if kind == "obs_only":
            dem = dem + stim.DetectorErrorModel("error(0.1) L0")
    elif kind == "onecoord":
        circ = stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=6,
                                      after_clifford_depolarization=0.01, before_measure_flip_probability=0.01,
                                      after_reset_flip_probability=0.01)
        circ = rewrite_detector_coordinates(circ, lambda k, old, last: [last])
        dem = circ.detector_error_model(decompose_errors=True)
    elif kind == "fourcoord":
        circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=4,
                                      after_clifford_depolarization=0.01, before_measure_flip_probability=0.01)
        circ = rewrite_detector_coordinates(circ, lambda k, old, last: [*old, k % 2])
        dem = circ.detector_error_model(decompose_errors=True)
    elif kind == "hyper_cc":
        circ = stim.Circuit.generated("color_code:memory_xyz", distance=3, rounds=3, after_clifford_depolarization=0.01)
        dem = circ.detector_error_model()  # stim cannot decompose the color code's hyperedges
    elif kind == "hyper_text":
        dem = stim.DetectorErrorModel(HYPER_TEXT)
    else:  # pragma: no cover
        raise KeyError(kind)
    dets, obs, _ = dem.compile_sampler(seed=20240611).sample(SHOTS)
    return dem, dets.astype(np.uint8), obs.astype(np.uint8)


@functools.lru_cache(maxsize=None)
def problem_of(kind: str) -> DecodingProblem:
    return DecodingProblem.from_dem(dem_kind(kind)[0])


def _build(name: str, kind: str):
    entry, params = VARIANTS.get(name, (name, FAST.get(name, [])))
    return DecoderSpec.create(entry, params).build(problem_of(kind))


@functools.lru_cache(maxsize=None)
def built(name: str, kind: str):
    """The decoder, or the exception it refused with."""
    try:
        return _build(name, kind)
    except ValueError as exc:
        return exc


def decoder_or_skip(name: str, kind: str):
    dec = built(name, kind)
    if isinstance(dec, Exception):
        pytest.skip(f"{name} refuses {kind}: {dec}")
    return dec


def _fails(pred: np.ndarray, obs: np.ndarray) -> int:
    return int(np.any(pred != obs, axis=1).sum())


@functools.lru_cache(maxsize=None)
def predictions(name: str, kind: str, shots: int = SHOTS) -> np.ndarray:
    return decoder_or_skip(name, kind).predict_observables_batch(dem_kind(kind)[1][:shots])


def _errors_or_none(dec, dets: np.ndarray):
    """``decode_batch``'s estimate, or ``None`` where the decoder has no per-column estimate."""
    try:
        return dec.decode_batch(dets)
    except DecoderInputError as exc:
        assert "\n" not in str(exc)
        return None


PAIRS = [(name, kind) for name in QUANTUM for kind in KINDS]


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("name,kind", PAIRS)
def test_decodes_or_refuses_clearly(name, kind):
    dec = built(name, kind)
    expected = REFUSALS.get((name, kind))
    if isinstance(dec, Exception):
        msg = str(dec)
        assert "\n" not in msg and msg, f"{name} on {kind}: refusal must be one non-empty line: {msg!r}"
        pattern = expected or MAY_REFUSE.get(name)
        assert pattern is not None, f"{name} unexpectedly refuses {kind}: {type(dec).__name__}: {msg}"
        assert re.search(pattern, msg), msg
    else:
        assert expected is None, f"{name} should refuse {kind} ({expected}) but built {dec!r}"
        prob = problem_of(kind)
        out = dec.predict_observables_batch(dem_kind(kind)[1][:3])
        assert out.shape == (3, prob.num_observables) and out.dtype == np.uint8


@pytest.mark.parametrize("name,kind", PAIRS)
def test_zero_syndrome_decodes_to_no_flip(name, kind):
    dec = decoder_or_skip(name, kind)
    prob = problem_of(kind)
    m, k = prob.num_detectors, prob.num_observables
    zeros = np.zeros((4, m), dtype=np.uint8)
    assert not dec.predict_observables_batch(zeros).any()
    assert not dec.predict_observables_batch(zeros[:1]).any()
    packed = dec.predict_observables_packed(np.zeros((4, (m + 7) // 8), dtype=np.uint8))
    assert packed.shape == (4, (k + 7) // 8) and not packed.any()
    e = _errors_or_none(dec, zeros)
    if e is not None:
        assert e.shape == (4, prob.num_errors) and not e.any()
        assert not dec.decode(zeros[0]).any()


@pytest.mark.parametrize("name,kind", PAIRS)
def test_batch_single_shot_and_packed_paths_agree(name, kind):
    dec = decoder_or_skip(name, kind)
    dets = dem_kind(kind)[1][:40]
    m = dets.shape[1]
    batch = dec.predict_observables_batch(dets)
    single = np.concatenate([dec.predict_observables_batch(dets[i:i + 1]) for i in range(dets.shape[0])])
    assert np.array_equal(batch, single)
    packed = dec.predict_observables_packed(np.packbits(dets, axis=1, bitorder="little"))
    k = batch.shape[1]
    assert np.array_equal(np.unpackbits(packed, axis=1, count=k, bitorder="little"), batch)
    e = _errors_or_none(dec, dets)
    if e is not None:
        for i in range(0, dets.shape[0], 7):
            assert np.array_equal(dec.decode(dets[i]), e[i]), i
    assert m == problem_of(kind).num_detectors


@pytest.mark.parametrize("name,kind", PAIRS)
def test_deterministic_and_repeated_shots_identical(name, kind):
    dec = decoder_or_skip(name, kind)
    dets = dem_kind(kind)[1]
    sub = dets[:60]
    first = dec.predict_observables_batch(sub)
    assert np.array_equal(dec.predict_observables_batch(sub), first)  # same decoder, again
    assert np.array_equal(_build(name, kind).predict_observables_batch(sub), first)  # fresh build, same seed
    busy = int(np.argmax(dets.sum(axis=1)))  # the shot with the most detection events
    tiled = np.repeat(dets[busy:busy + 1], 50, axis=0)
    out = dec.predict_observables_batch(tiled)
    assert np.all(out == out[0])
    assert np.array_equal(out[0], dec.predict_observables_batch(dets[busy:busy + 1])[0])


@pytest.mark.parametrize("name,kind", PAIRS)
def test_decoded_error_satisfies_syndrome_where_converged(name, kind):
    """``H e = s`` on shots the decoder reports converged (all shots when it reports nothing);
    observable-only columns are never flipped; predictions equal ``L e`` for per-column decoders."""
    dec = decoder_or_skip(name, kind)
    prob = problem_of(kind)
    dets = dem_kind(kind)[1][:200]
    dec.last_info = None
    e = _errors_or_none(dec, dets)
    if e is None:
        pytest.skip(f"{name} has no per-column estimate on {kind}")
    info = dec.last_info
    H = prob.H.toarray().astype(np.int64)
    residual = ((e.astype(np.int64) @ H.T) & 1).astype(np.uint8) ^ dets
    if info is not None and info.converged is not None:
        conv = np.asarray(info.converged, dtype=bool)
        assert conv.shape == (dets.shape[0],)
        assert conv.mean() > 0.5, f"{name} converged on only {conv.mean():.0%} of {kind} shots"
    else:
        conv = np.ones(dets.shape[0], dtype=bool)
    bad = np.flatnonzero(residual[conv].any(axis=1))
    assert bad.size == 0, f"{name} on {kind}: {bad.size} 'converged' shots with H e != s"
    obs_only = np.flatnonzero(np.diff(prob.H.tocsc().indptr) == 0)
    assert not e[:, obs_only].any()
    L = prob.L.toarray().astype(np.int64)
    pred = dec.predict_observables_batch(dets)
    agree = np.all(pred == ((e.astype(np.int64) @ L.T) & 1), axis=1)
    assert agree[conv].mean() > 0.97  # matching's two graphs may break exact ties differently


def _reference(kind: str) -> str:
    return "bposd" if kind in HYPER else "pymatching"


@pytest.mark.parametrize("name,kind", PAIRS)
def test_logical_error_rate_is_sane(name, kind):
    dec = decoder_or_skip(name, kind)
    n = SLOW_SHOTS.get(name, SHOTS)
    obs = dem_kind(kind)[2][:n]
    ours = _fails(predictions(name, kind, n), obs)
    ref = _fails(predictions(_reference(kind), kind)[:n], obs)
    assert ref < 0.3 * n  # the reference itself decodes
    # a few times the reference, plus slack for the small samples
    assert ours <= 3 * ref + 10, f"{name} on {kind}: {ours} failures vs {ref} for {_reference(kind)}"
    assert dec is not None


@pytest.mark.parametrize("name", QUANTUM)
def test_observable_only_mechanism_leaves_predictions_unaffected(name):
    """``error(0.1) L0`` flips no detector: no decoder can see it, so adding it must not change any
    prediction (it only raises every decoder's logical error rate by the same shots)."""
    base, extra = built(name, "nocoord"), built(name, "obs_only")
    if isinstance(base, Exception) or isinstance(extra, Exception):
        assert isinstance(extra, Exception) and isinstance(base, Exception)
        pytest.skip(f"{name} refuses both")
    dets = dem_kind("obs_only")[1]
    assert problem_of("obs_only").num_detectors == problem_of("nocoord").num_detectors
    assert np.array_equal(extra.predict_observables_batch(dets), base.predict_observables_batch(dets))


def test_every_refusal_and_reference_is_registered():
    """The tables above name only registered decoders and known kinds (a rename must update them)."""
    for name, kind in REFUSALS:
        assert name in QUANTUM and kind in KINDS
    assert set(MAY_REFUSE) <= set(QUANTUM) and set(FAST) <= set(REGISTERED)
    assert all(entry in REGISTERED for entry, _ in VARIANTS.values())
    assert {"bposd", "pymatching"} <= set(QUANTUM)
