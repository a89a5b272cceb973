"""Regenerate the golden vectors in tests/data/ from the oracle packages; records their versions.

    python tests/data/generate.py

Writes, for a d=3 rotated surface code memory-Z circuit (SD6, p = 0.01, 3 rounds):
``surface_d3.dem`` (stim, decompose_errors=True), ``surface_d3_dets.b8`` (500 shots,
seed 2026), ``surface_d3_obs.01`` (the sampled observable flips),
``surface_d3_pymatching.01`` (PyMatching's predictions), ``surface_d3_columns.json``
(merged column count, collision count, sum of merged priors), and ``versions.json``.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import numpy as np
import pymatching
import stim

HERE = Path(__file__).resolve().parent
SHOTS = 500


def main() -> None:
    circuit = stim.Circuit.generated(
        "surface_code:rotated_memory_z", distance=3, rounds=3,
        after_clifford_depolarization=0.01, before_round_data_depolarization=0.01,
        before_measure_flip_probability=0.01, after_reset_flip_probability=0.01,
    )
    dem = circuit.detector_error_model(decompose_errors=True)
    (HERE / "surface_d3.dem").write_text(str(dem) + "\n")
    dets, obs = circuit.compile_detector_sampler(seed=2026).sample(SHOTS, separate_observables=True)
    stim.write_shot_data_file(data=dets, path=HERE / "surface_d3_dets.b8", format="b8", num_detectors=dem.num_detectors)
    stim.write_shot_data_file(data=obs, path=HERE / "surface_d3_obs.01", format="01", num_observables=1)
    pred = pymatching.Matching.from_detector_error_model(dem).decode_batch(dets)
    stim.write_shot_data_file(data=pred.astype(bool), path=HERE / "surface_d3_pymatching.01", format="01",
                              num_observables=1)
    # Independent merge of identical detector sets (oracle for DecodingProblem.from_dem).
    merged: dict[tuple, float] = {}
    for inst in dem.flattened():
        if inst.type != "error":
            continue
        key = tuple(sorted({t.val for t in inst.targets_copy() if t.is_relative_detector_id()}))
        q = merged.get(key, 0.0)
        p = inst.args_copy()[0]
        merged[key] = q * (1 - p) + p * (1 - q)
    (HERE / "surface_d3_columns.json").write_text(
        json.dumps({"num_columns": len(merged), "sum_priors": float(np.sum(list(merged.values())))}, indent=2) + "\n"
    )
    versions = {pkg: metadata.version(pkg) for pkg in ("stim", "pymatching", "numpy")}
    (HERE / "versions.json").write_text(json.dumps(versions, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
