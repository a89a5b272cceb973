"""A batch decoded in large calls records exactly what one call per chunk records.

- the call plan: deterministic, whole chunks, within ``CALL_SHOTS`` and the byte budget;
- a 4,096-shot batch is one decoder call (it was 8), and lane decoders see it whole;
- every registered syndrome decoder decodes each shot independently of the others in its call
  (the premise of cutting one call's results back into chunks);
- per chunk, shots / errors / discards / every custom count (decoder diagnostics, detection
  events, observable-error patterns, gap bins, postselection) equal those of one call per chunk;
- ``DecodeInfo.take``: per-shot cuts add up, batch totals refuse, and such a decoder falls back
  to one call per chunk with the same counts;
- ``error_cap`` stops on the same chunk, with at most one call decoded past it.
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest

from qdecode.decoders import DecoderSpec
from qdecode.decoders.base import DecodeInfo
from qdecode.sims import sampling
from qdecode.sims.postselection import Postselection
from qdecode.sims.sampling import CALL_SHOTS, call_plan, chunk_sizes, compiled, run_batch
from qdecode.sims.tasks import CircuitRecipe, SweepTask

COLOR3 = CircuitRecipe(code="color", noise="sd6", p=0.01, d=3)
SURFACE3 = CircuitRecipe(code="surface", noise="sd6", p=0.01, d=3)


def _one_call_per_chunk(monkeypatch):
    """The chunking of before issue 43: every chunk its own decoder call."""
    monkeypatch.setattr(sampling, "CALL_SHOTS", 1)


def test_call_plan_takes_whole_chunks_within_the_limits():
    for shots in (1, 31, 256, 1000, 4096, 8192, 65536, 524288):
        sizes = chunk_sizes(shots)
        plan = call_plan(sizes, 1000)
        assert sum(plan) == len(sizes) and min(plan) >= 1
        start = 0
        for count in plan:
            group = sizes[start:start + count]
            assert count == 1 or sum(group) <= CALL_SHOTS
            start += count
        assert call_plan(sizes, 1000) == plan
    assert call_plan(chunk_sizes(4096), 1000) == [8]  # one call (8 calls of 512 before)
    assert call_plan(chunk_sizes(65536), 1000) == [1] * 8  # 8,192-shot chunks: one call each
    # the byte budget: 2**20 error mechanisms allow 256 shots per call
    assert call_plan(chunk_sizes(4096), 1 << 20) == [1] * 8


@contextlib.contextmanager
def _call_sizes(task):
    """A list that records the shots of each ``predict_observables_packed`` call of ``task``'s cached decoder."""
    ct, _ = compiled(task)
    calls: list[int] = []
    real = ct.decoder.predict_observables_packed

    def spy(packed):
        calls.append(packed.shape[0])
        return real(packed)

    ct.decoder.predict_observables_packed = spy
    try:
        yield calls
    finally:
        del ct.decoder.predict_observables_packed


def test_a_batch_is_decoded_in_one_call():
    task = SweepTask(decoder=DecoderSpec.create("bposd"), recipe=SURFACE3)
    with _call_sizes(task) as calls:
        result = run_batch(task, 0, 0, 4096, (1, 2, 3))
    assert calls == [4096]
    assert [c.shots for c in result.chunks] == chunk_sizes(4096)


QUANTUM = ["bp", "bp-ps", "bp-pymatching", "bplsd", "bposd", "bposd-e", "bpuf", "chromobius", "class-escalate",
           "gdg", "mem-bp", "mwpf", "pymatching", "pymatching-correlated", "relay-bp", "relay-bp[stop_after=10]",
           "tesseract", "uf", "window"]


def _build(name, recipe):
    task = SweepTask(decoder=DecoderSpec.parse(name), recipe=recipe)
    return task, compiled(task)[0]


@pytest.mark.parametrize("name", QUANTUM)
def test_each_shot_is_decoded_independently_of_its_call(name):
    """One call of 128 shots predicts what four calls of 32 do, shot for shot (soft output too)."""
    recipe = SURFACE3 if name in ("window",) else COLOR3
    task, ct = _build(name, recipe)
    dets, _ = ct.circuit.compile_detector_sampler(seed=5).sample(128, separate_observables=True, bit_packed=True)
    whole = ct.decoder.predict_observables_packed(dets)
    parts = np.concatenate([ct.decoder.predict_observables_packed(dets[a:a + 32]) for a in range(0, 128, 32)])
    assert np.array_equal(whole, parts)
    if ct.decoder.has_confidence:
        _, g_whole = ct.decoder.predict_with_confidence_packed(dets)
        g_parts = np.concatenate([ct.decoder.predict_with_confidence_packed(dets[a:a + 32])[1]
                                  for a in range(0, 128, 32)])
        assert np.array_equal(g_whole, g_parts, equal_nan=True)


def _flags(name, **kw):
    return SweepTask(decoder=DecoderSpec.parse(name), recipe=COLOR3, **kw)


@pytest.mark.parametrize("task", [
    _flags("relay-bp", count_detection_events=True, count_observable_error_combos=True),
    _flags("bposd", gap_histogram=True, postselect=Postselection(kind="indices", indices=(0, 3, 7))),
    _flags("gdg"),
    _flags("class-escalate[calib_shots=200,flag_frac=0.1]", count_observable_error_combos=True),
    _flags("bp-pymatching", postselect=Postselection(kind="indices", indices=(1,))),  # clocks shared by shots
], ids=lambda t: t.decoder.name)
def test_large_calls_count_each_chunk_as_one_call_per_chunk_does(task, monkeypatch):
    monkeypatch.setattr(sampling, "_per_chunk_calls", set())
    big = run_batch(task, 0, 0, 1024, (7, 11, 13))
    _one_call_per_chunk(monkeypatch)
    small = run_batch(task, 0, 0, 1024, (7, 11, 13))
    assert len(big.chunks) == len(small.chunks) == 8

    def counts(c):  # bp-pymatching's match_ns is a clock reading, not a count of the shots
        return (c.shots, c.errors, c.discards, {k: v for k, v in c.custom_counts.items() if not k.endswith("_ns")})

    for b, s in zip(big.chunks, small.chunks):
        assert counts(b) == counts(s)
    assert big.errors > 0  # not a trivial comparison
    if task.postselect is not None:
        assert sum(c.discards for c in big.chunks) > 0
    assert any(c.custom_counts for c in big.chunks)


def test_take_cuts_per_shot_diagnostics_and_refuses_batch_totals():
    rng = np.random.default_rng(0)
    info = DecodeInfo(converged=rng.random(10) < 0.5, iterations=rng.integers(0, 9, 10).astype(np.int32),
                      extra={"legs": rng.integers(0, 4, 10)})
    a, b = info.take(slice(0, 4), 10), info.take(slice(4, 10), 10)
    assert type(a) is DecodeInfo and a.extra["legs"].shape == (4,)
    assert {k: a.counts()[k] + b.counts()[k] for k in info.counts()} == info.counts()
    assert info.take(slice(0, 4), 11) is None  # not per shot of this batch
    assert DecodeInfo(extra={"scale": np.float64(2.0)}).take(slice(0, 1), 1) is None

    from qdecode.decoders.bp_matching import PER_SHOT_COUNTS, TwoStageDecodeInfo
    from qdecode.decoders.relay_bp import RelayDecodeInfo

    two = TwoStageDecodeInfo(converged=info.converged, extra={k: info.extra["legs"] for k in PER_SHOT_COUNTS},
                             clocks={"match_ns": 1000})
    cut = two.take(slice(0, 4), 10)
    assert cut.counts()["committed"] == int(info.extra["legs"][:4].sum()) and cut.counts()["match_ns"] == 400
    assert TwoStageDecodeInfo(converged=info.converged).take(slice(0, 4), 11) is None
    relay = RelayDecodeInfo(converged=info.converged, iterations=info.iterations, extra=dict(info.extra))
    assert relay.take(slice(0, 4), 10).counts() == {**a.counts(), "legs": int(info.extra["legs"][:4].sum())}


def test_batch_totals_fall_back_to_one_call_per_chunk(monkeypatch):
    from qdecode.decoders.bp_matching import TwoStageDecodeInfo

    monkeypatch.setattr(sampling, "_per_chunk_calls", set())
    monkeypatch.setattr(TwoStageDecodeInfo, "take", lambda self, shots, num_shots: None)  # as batch totals would
    task = _flags("bp-pymatching")
    with _call_sizes(task) as calls:
        run_batch(task, 0, 0, 1024, (1,))
        assert calls == [1024] + [128] * 8  # the first call's counters could not be cut: decoded again
        calls.clear()
        run_batch(task, 0, 1, 1024, (1,))
        assert calls == [128] * 8


def test_error_cap_stops_on_the_same_chunk_within_one_call(monkeypatch):
    task = _flags("bposd")
    full = run_batch(task, 0, 0, 2048, (3,))
    cap = full.chunks[0].errors + full.chunks[1].errors + 1  # reached in the third chunk or later
    stop = next(i for i in range(8) if sum(c.errors for c in full.chunks[:i + 1]) >= cap)
    capped = run_batch(task, 0, 0, 2048, (3,), error_cap=cap)
    assert [dataclasses.replace(c, seconds=0) for c in capped.chunks] == \
        [dataclasses.replace(c, seconds=0) for c in full.chunks[:stop + 1]]
    _one_call_per_chunk(monkeypatch)
    old = run_batch(task, 0, 0, 2048, (3,), error_cap=cap)
    assert [(c.shots, c.errors) for c in old.chunks] == [(c.shots, c.errors) for c in capped.chunks]


def test_sample_plan_groups_chunks_into_stim_calls_of_at_most_sample_shots():
    from qdecode.sims.sampling import SAMPLE_SHOTS, sample_plan, split_plan

    assert sample_plan(chunk_sizes(256)) == [8]  # the first batch: one stim call, not eight of 32 shots
    assert sample_plan(chunk_sizes(4096)) == [8]
    assert sample_plan(chunk_sizes(65536)) == [1] * 8  # chunks of 8192: one call each
    for shots in (1, 33, 1000, 20_000, 100_000):
        sizes = chunk_sizes(shots)
        groups = split_plan(sizes, sample_plan(sizes))
        assert [n for g in groups for n in g] == sizes
        assert all(len(g) == 1 or sum(g) <= SAMPLE_SHOTS for g in groups)
