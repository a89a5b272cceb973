"""Gap histograms from ``sinter collect``: :class:`qdecode.sinter_adapter.SinterGapSampler`.

The sampler seeds stim afresh from :mod:`secrets` on every call (no two batches share samples), so
sinter's rows cannot be pinned: the tests check what holds for any sample (the histogram adds up to
the row, postselection discards) and agreement with the plain decoder within binomial noise.
"""

from __future__ import annotations

import numpy as np
import pytest
import sinter
import stim

from qdecode.cli.main import main
from qdecode.decoders.confidence import CONFIDENCE_DECODERS
from qdecode.sims.gap_bins import discard_curve, has_gap_bins
from qdecode.sims.store import merge_rows, read_rows
from qdecode.sinter_adapter import (
    MAX_BATCH_SHOTS,
    SinterGapSampler,
    sinter_decoders,
    sinter_gap_name,
    sinter_gap_samplers,
)

SHOTS = 20000


def _circuit() -> stim.Circuit:
    return stim.Circuit.generated("surface_code:rotated_memory_x", distance=3, rounds=3,
                                  after_clifford_depolarization=0.01)


def _histogram_sums(custom_counts) -> tuple[int, int]:
    """(shots, errors) in the gap bins of ``custom_counts``."""
    shots = sum(v for k, v in custom_counts.items() if k.startswith("g") and not k.endswith("E"))
    errors = sum(v for k, v in custom_counts.items() if k.startswith("g") and k.endswith("E"))
    return shots, errors


def _first_detectors_mask(circuit: stim.Circuit, count: int) -> np.ndarray:
    bits = np.zeros(circuit.num_detectors, dtype=np.uint8)
    bits[:count] = 1
    return np.packbits(bits, bitorder="little")


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, bool], sinter.TaskStats]:
    """One ``sinter.collect`` (one worker): gap and plain pymatching, without and with postselection.

    Keyed by ``(decoder, postselected)``.
    """
    circuit = _circuit()
    tasks = [sinter.Task(circuit=circuit, json_metadata={"d": 3, "ps": 0}),
             sinter.Task(circuit=circuit, postselection_mask=_first_detectors_mask(circuit, 2),
                         json_metadata={"d": 3, "ps": 1})]
    stats = sinter.collect(num_workers=1, tasks=tasks, decoders=["qd-gap-pymatching", "qd-pymatching"],
                           custom_decoders={**sinter_decoders(env=False), **sinter_gap_samplers("pymatching")},
                           max_shots=SHOTS, max_errors=10**9)
    out = {(s.decoder, bool(s.json_metadata["ps"])): s for s in stats}
    assert len(out) == 4
    return out


def test_collect_runs_and_the_histogram_adds_up_to_the_row(rows):
    row = rows["qd-gap-pymatching", False]
    assert row.shots == SHOTS and row.discards == 0 and row.errors > 0
    assert has_gap_bins(row.custom_counts)
    assert _histogram_sums(row.custom_counts) == (row.shots - row.discards, row.errors)
    # qdecode's post-selection curve reads the row as a sweep's (it raises if the histogram does not add up)
    curve = discard_curve(row.shots, row.errors, row.discards, row.custom_counts)
    assert curve[0].threshold is None and curve[0].kept == row.shots and curve[0].kept_errors == row.errors
    # the plain decoder counts no gaps
    assert not has_gap_bins(rows["qd-pymatching", False].custom_counts)


def test_postselected_detectors_discard_and_the_histogram_still_adds_up(rows):
    row = rows["qd-gap-pymatching", True]
    assert row.shots == SHOTS and 0 < row.discards < row.shots
    assert _histogram_sums(row.custom_counts) == (row.shots - row.discards, row.errors)
    # the same postselection as sinter's own sampler: the discard rates agree within binomial noise
    plain = rows["qd-pymatching", True]
    _assert_rates_agree(row.discards, row.shots, plain.discards, plain.shots)


def _assert_rates_agree(hits_a: int, shots_a: int, hits_b: int, shots_b: int) -> None:
    """The two rates' sinter.fit_binomial intervals (likelihood within 1000x of the max) overlap."""
    a = sinter.fit_binomial(num_shots=shots_a, num_hits=hits_a, max_likelihood_factor=1e3)
    b = sinter.fit_binomial(num_shots=shots_b, num_hits=hits_b, max_likelihood_factor=1e3)
    assert a.low <= b.high and b.low <= a.high, (a, b)


def test_the_error_rate_agrees_with_the_plain_decoder(rows):
    gap, plain = rows["qd-gap-pymatching", False], rows["qd-pymatching", False]
    assert gap.strong_id != plain.strong_id  # never pooled
    _assert_rates_agree(gap.errors, gap.shots, plain.errors, plain.shots)
    # and a decoder-level check: one sample, decoded both ways, predicts the same observables
    circuit = _circuit()
    dem = circuit.detector_error_model(decompose_errors=True)
    compiled = SinterGapSampler("pymatching").compiled_sampler_for_task(sinter.Task(circuit=circuit,
                                                                                     detector_error_model=dem))
    dets, _ = circuit.compile_detector_sampler(seed=7).sample(2000, bit_packed=True, separate_observables=True)
    predicted, gaps = compiled.decoder.predict_with_confidence_packed(dets)
    plain_decoder = sinter_decoders(env=False)["qd-pymatching"].compile_decoder_for_dem(dem=dem)
    assert np.array_equal(predicted, plain_decoder.decode_shots_bit_packed(bit_packed_detection_event_data=dets))
    assert gaps.shape == (2000,)


@pytest.mark.parametrize("label", ["mem-bp", "uf", "nonsense", "relay-bp[nope=1]", "pymatching[", "auto"])
def test_a_label_without_a_confidence_is_refused_in_one_line(label):
    with pytest.raises(ValueError) as info:
        sinter_gap_samplers(label, env=False)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(sinter_gap_name(label) + ": ")
    if label in ("mem-bp", "uf", "nonsense"):  # the decoders that do give a confidence are named
        assert all(name in msg for name in CONFIDENCE_DECODERS), msg
    with pytest.raises(ValueError):
        SinterGapSampler(label)


def test_names_are_qd_gap_labels():
    labels = ["pymatching", "relay-bp[bits=0]", " qd-gap-mle ", "qd-tesseract"]
    samplers = sinter_gap_samplers(*labels, env=False)
    for name in ["qd-gap-pymatching", "qd-gap-relay-bp[bits=0]", "qd-gap-mle", "qd-gap-tesseract"]:
        assert isinstance(samplers[name], SinterGapSampler), name
    assert dict(samplers["qd-gap-relay-bp[bits=0]"].spec.params)["bits"] == 0
    assert all(name.startswith("qd-gap-") for name in samplers)  # never a plain qd-<label> name
    separated = sinter_gap_samplers("relay-bp[bits=0]; pymatching", env=False)
    assert "qd-gap-relay-bp[bits=0]" in separated and set(separated) <= set(samplers)


def test_environment_labels_without_a_confidence_are_left_to_sinter_decoders(monkeypatch):
    monkeypatch.setenv("QDECODE_SINTER_DECODERS", "mem-bp[max_iter=5];relay-bp[gamma0=0.2]")
    samplers = sinter_gap_samplers()
    assert "qd-gap-relay-bp[gamma0=0.2]" in samplers
    assert not any(name.startswith("qd-gap-mem-bp") for name in samplers)
    monkeypatch.setenv("QDECODE_SINTER_DECODERS", "nonsense")
    with pytest.raises(ValueError, match="QDECODE_SINTER_DECODERS"):
        sinter_gap_samplers()


def test_postselected_observables_discard_mispredicted_shots():
    circuit = _circuit()
    task = sinter.Task(circuit=circuit, postselected_observables_mask=np.array([1], dtype=np.uint8))
    compiled = SinterGapSampler("pymatching").compiled_sampler_for_task(task)  # the DEM as sinter derives it
    stats = compiled.sample(5000)
    # every mispredicted shot mispredicts the one observable: a discard, never an error
    assert stats.shots == 5000 and stats.errors == 0 and stats.discards > 0
    assert _histogram_sums(stats.custom_counts) == (stats.shots - stats.discards, 0)


def test_batches_respect_the_suggestion_and_the_cap():
    circuit = _circuit()
    task = sinter.Task(circuit=circuit, detector_error_model=circuit.detector_error_model(decompose_errors=True))
    compiled = SinterGapSampler("pymatching", max_batch_shots=100).compiled_sampler_for_task(task)
    assert compiled.sample(1).shots == 1 and compiled.sample(0).shots == 1  # at least one shot
    assert compiled.sample(10**9).shots == 100
    assert SinterGapSampler("pymatching").compiled_sampler_for_task(task).batch_shots(10**9) == MAX_BATCH_SHOTS
    with pytest.raises(ValueError):
        SinterGapSampler("pymatching", max_batch_shots=0)


def test_qdecode_reads_the_sinter_csv_without_the_metadata_tag(rows, tmp_path, capsys):
    path = tmp_path / "stats.csv"
    path.write_text("\n".join([sinter.CSV_HEADER] + [r.to_csv_line() for r in rows.values()]) + "\n")
    read = merge_rows(read_rows(path))
    assert {r.decoder for r in read.values() if has_gap_bins(r.custom_counts)} == {"qd-gap-pymatching"}
    capsys.readouterr()
    assert main(["threshold", str(path), "--max-discard", "0.2"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert len(table) == 2 and all(line.startswith("qd-gap-pymatching") for line in table)
