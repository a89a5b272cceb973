"""The work clocks of the BP + post-processing decoders (``bposd``, ``bposd-e``, ``bplsd``, ``bpuf``, ``gdg``,
``window`` over them, ``class-escalate``): one int64 per shot in the unit the decoder names, the same on every run,
thread count and path (batch, timed), growing with the work a shot took, and the answers unchanged by the counting.
(Every registered decoder's batch and timed clocks agree on a quiet DEM too: tests/decoders/test_timed_path.py.)"""

from __future__ import annotations

import functools

import numba
import numpy as np
import pytest
import stim

from qdecode.decoders.osd import OPERATIONS_UNIT, OsdPostProcessor
from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem

SPECS = ["bposd", "bposd-e", "bplsd", "bpuf", "gdg", "gdg[osd_method=osd_cs,osd_after=0]", "window",
         "window[inner=gdg]", "class-escalate[calib_shots=100,forced_legs=10,forced_leg_iter=20,flag_frac=0.3]"]
SHOTS = 30


@functools.lru_cache(maxsize=None)
def _case():
    """A d = 3 surface-code memory noisy enough (p = 0.02) that BP fails on many shots: ``(problem, shots (S, m))``."""
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                     after_clifford_depolarization=0.02, before_measure_flip_probability=0.02)
    dem = circuit.detector_error_model(decompose_errors=True)
    dets, _, _ = dem.compile_sampler(seed=3).sample(SHOTS)
    return DecodingProblem.from_dem(dem), dets.astype(np.uint8)


@functools.lru_cache(maxsize=None)
def _decoder(spec: str):
    return DecoderSpec.parse(spec).build(_case()[0])


def _run(dec, dets, threads: int):
    """``(observables, work)`` of the batch path on ``threads`` numba threads."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        obs = dec.predict_observables_batch(dets)
    finally:
        numba.set_num_threads(before)
    return obs, dec.last_info.work.copy()


@pytest.mark.parametrize("spec", SPECS)
def test_work_is_reproducible_across_runs_threads_and_paths(spec):
    _, dets = _case()
    dec = _decoder(spec)
    assert dec.work_unit is not None
    obs, work = _run(dec, dets, 1)
    assert work.dtype == np.int64 and work.shape == (SHOTS,)
    again_obs, again = _run(dec, dets, 1)
    np.testing.assert_array_equal(again, work)
    np.testing.assert_array_equal(again_obs, obs)
    two_obs, two = _run(dec, dets, min(2, numba.config.NUMBA_NUM_THREADS))
    np.testing.assert_array_equal(two, work)
    np.testing.assert_array_equal(two_obs, obs)
    timed = dec.predict_observables_timed(np.packbits(dets, axis=1, bitorder="little"))
    np.testing.assert_array_equal(np.unpackbits(timed, axis=1, count=obs.shape[1], bitorder="little"), obs)
    np.testing.assert_array_equal(dec.last_info.work, work)  # one shot per call: the same clock
    fired = dets.any(axis=1)
    assert np.all(work[fired] > 0)
    if "window" not in spec:
        assert np.all(work[~fired] <= work[fired].min())  # a zero syndrome is the cheapest shot


@pytest.mark.parametrize("spec", ["bposd", "bposd-e", "bplsd", "bpuf"])
def test_post_processing_adds_to_bp(spec):
    """BP's share is ``iterations x nnz(H)``; a shot BP did not converge on counts its OSD / LSD on top."""
    problem, dets = _case()
    dec = _decoder(spec)
    dec.decode_batch(dets)
    info = dec.last_info
    bp = info.iterations.astype(np.int64) * problem.H.nnz
    post = info.extra["osd" if spec.startswith("bposd") else "lsd"]
    assert dec.work_unit == OPERATIONS_UNIT and post.sum() >= 5
    np.testing.assert_array_equal(info.work[~post], bp[~post])
    assert np.all(info.work[post] > bp[post])


def test_gdg_counts_its_iterations_and_its_osd():
    problem, dets = _case()
    plain = _decoder("gdg")
    plain.decode_batch(dets)
    assert "min-sum iterations" in plain.work_unit
    np.testing.assert_array_equal(plain.last_info.work, plain.last_info.iterations)
    with_osd = _decoder("gdg[osd_method=osd_cs,osd_after=0]")
    with_osd.decode_batch(dets)
    info = with_osd.last_info
    assert with_osd.work_unit == OPERATIONS_UNIT
    bp = info.iterations.astype(np.int64) * problem.H.nnz
    ran = ~info.converged | (info.iterations > with_osd.pre_iter)  # the shots OSD ran on (osd_after = 0)
    assert ran.any() and np.all(info.work[ran] > bp[ran])
    np.testing.assert_array_equal(info.work[~ran], bp[~ran])


def test_window_sums_its_inner_work():
    """One window covering every round decodes the problem itself: its work is the inner decoder's (0 where the
    syndrome is zero: no decode); with more windows, the sum over those a shot was decoded in."""
    problem, dets = _case()
    inner = _decoder("bposd")
    inner.decode_batch(dets)
    whole = DecoderSpec.parse("window[W=4]").build(problem)
    whole.decode_batch(dets)
    assert whole.num_windows == 1 and whole.work_unit == inner.work_unit
    fired = dets.any(axis=1)  # a window with a zero syndrome is not decoded: no work
    np.testing.assert_array_equal(whole.last_info.work[fired], inner.last_info.work[fired])
    assert np.all(whole.last_info.work[~fired] == 0)
    dec = _decoder("window")
    dec.decode_batch(dets)
    decoded = dec.last_info.extra["window_decoded"].sum(axis=1)
    assert np.all(dec.last_info.work[decoded == 0] == 0) and np.all(dec.last_info.work[decoded > 0] > 0)
    relay_fallback = DecoderSpec.parse("window[inner=relay-bp,fallback=all]").build(problem)
    assert relay_fallback.work_unit is None  # Relay-BP's iterations and BP+OSD's operations: no common unit


def test_osd_kernel_work_per_shot():
    """The OSD kernel's count: 0 where a shot is masked out, the same shot's count in any batch, and the gap's
    candidate tracking on top of the plain search."""
    problem, dets = _case()
    post = OsdPostProcessor(problem, "osd_cs", 6)
    keys = np.random.default_rng(1).normal(size=(SHOTS, problem.num_errors))
    post.solve_batch(dets, keys)
    full = post.last_work.copy()
    assert np.all(full > 0)
    mask = np.arange(SHOTS) % 3 == 0
    post.solve_batch(dets, keys, mask)
    np.testing.assert_array_equal(post.last_work[mask], full[mask])
    assert np.all(post.last_work[~mask] == 0)
    codes = np.zeros(problem.num_errors, dtype=np.uint64)
    codes[:3] = 1
    post.solve_gap_batch(dets, keys, codes, problem.llr)
    assert np.all(post.last_work > full)
