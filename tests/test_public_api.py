"""The public face: what ``import qdecode`` offers, that it is all there is, and that it is light."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import qdecode

#: Dunders a module has anyway, plus the PEP 562 hooks that make the lazy names work.
DUNDERS = {"__all__", "__builtins__", "__cached__", "__doc__", "__file__", "__loader__", "__name__",
           "__package__", "__path__", "__spec__", "__version__", "__getattr__", "__dir__"}


def test_dir_is_exactly_all_plus_dunders():
    import qdecode.decoders.bp  # noqa: F401  binds submodules as package attributes
    import qdecode.sims.circuits  # noqa: F401

    assert dir(qdecode) == sorted(set(qdecode.__all__) | DUNDERS)
    assert len(set(qdecode.__all__)) == len(qdecode.__all__)
    for name in qdecode.__all__:
        assert getattr(qdecode, name) is not None, name


def test_lazy_names_are_the_library_objects():
    from qdecode.decoders.registry import DecoderSpec, decoder
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.sweep import SweepOptions, run_sweep
    from qdecode.sims.tasks import Task

    assert qdecode.decoder is decoder and qdecode.DecoderSpec is DecoderSpec
    assert qdecode.build_circuit is build_circuit and qdecode.run_sweep is run_sweep
    assert qdecode.SweepOptions is SweepOptions and qdecode.Task is Task
    try:
        qdecode.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("unknown attribute did not raise")


def test_common_path_end_to_end(tmp_path):
    circuit = qdecode.build_circuit("surface", d=3, rounds=3, noise="si1000", p=0.002)
    dem = circuit.detector_error_model(decompose_errors=True)
    problem = qdecode.DecodingProblem.from_dem(dem)
    dets, obs = circuit.compile_detector_sampler(seed=5).sample(200, separate_observables=True)
    preds = [qdecode.decoder("pymatching", target).predict_observables_batch(np.asarray(dets, dtype=np.uint8))
             for target in (problem, dem)]  # a DecodingProblem or a stim DEM
    assert preds[0].shape == obs.shape and np.array_equal(preds[0], preds[1])
    assert np.mean(np.any(preds[0] != obs, axis=1)) < 0.2
    task = qdecode.Task(decoder=qdecode.DecoderSpec.create("pymatching"), circuit_text=str(circuit))
    rows = qdecode.run_sweep([task], out_path=tmp_path / "s.csv",
                             options=qdecode.SweepOptions(max_shots=512, max_errors=10**6))
    assert len(rows) == 1 and rows[0].shots == 512
    sd = qdecode.sinter_decoders(env=False)
    assert "qd-pymatching" in sd


def test_import_qdecode_is_light():
    code = (
        "import sys, qdecode\n"
        "heavy = [m for m in ('stim', 'numba', 'matplotlib', 'torch', 'sinter', 'pymatching') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_public_functions_have_type_hints():
    import inspect

    for name in ("decoder", "build_circuit", "run_sweep", "sinter_decoders"):
        sig = inspect.signature(getattr(qdecode, name))
        assert sig.return_annotation is not inspect.Signature.empty, name
        for p in sig.parameters.values():
            if p.kind not in (p.VAR_KEYWORD,):
                assert p.annotation is not inspect.Parameter.empty, (name, p.name)
