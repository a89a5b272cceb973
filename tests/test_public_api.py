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
    from qdecode.sims.tasks import SweepTask

    assert qdecode.decoder is decoder and qdecode.DecoderSpec is DecoderSpec
    assert qdecode.build_circuit is build_circuit and qdecode.run_sweep is run_sweep
    assert qdecode.SweepOptions is SweepOptions and qdecode.SweepTask is SweepTask
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
    task = qdecode.SweepTask(decoder=qdecode.DecoderSpec.create("pymatching"), circuit_text=str(circuit))
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


def test_the_ecosystems_names():
    """PyMatching's constructor name, the decoder base class and the names at the top; ``Task`` renamed."""
    import warnings

    from qdecode.decoders.base import Decoder
    from qdecode.decoders.registry import decoder_names
    from qdecode.sims.tasks import SweepTask

    assert qdecode.Decoder is Decoder and qdecode.decoder_names is decoder_names and "bposd" in decoder_names()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert qdecode.Task is SweepTask
    assert caught and issubclass(caught[0].category, DeprecationWarning) and "SweepTask" in str(caught[0].message)
    circuit = qdecode.build_circuit("surface", d=3, rounds=2, noise="si1000", p=0.002)
    dem = circuit.detector_error_model(decompose_errors=True)
    a = qdecode.DecodingProblem.from_detector_error_model(dem)
    b = qdecode.DecodingProblem.from_dem(dem)
    assert (a.H != b.H).nnz == 0 and np.array_equal(a.priors, b.priors)
    from qdecode.decoders.bposd import BpOsdDecoder

    dec = BpOsdDecoder.from_detector_error_model(dem, osd_order=2)
    assert isinstance(dec, Decoder) and dec.problem.num_detectors == dem.num_detectors
