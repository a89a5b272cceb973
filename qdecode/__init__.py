"""qdecode: error-correction decoders for quantum and classical codes.

The common path, all from ``import qdecode``::

    circuit = qdecode.build_circuit("surface", d=5, rounds=5, noise="si1000", p=1e-3)  # stim
    problem = qdecode.DecodingProblem.from_detector_error_model(circuit.detector_error_model())
    dec = qdecode.decoder("bposd", problem, osd_order=4)  # == --decoder bposd[osd_order=4]
    rows = qdecode.run_sweep([qdecode.SweepTask(decoder=qdecode.DecoderSpec.create("pymatching"),
                                                circuit_text=str(circuit))],
                             out_path="stats.csv", options=qdecode.SweepOptions(max_shots=10_000))

``qdecode.decoder_names()`` lists the decoders; each is a :class:`Decoder`. ``SweepTask`` was called
``Task`` (still served, with a DeprecationWarning): it is not ``sinter.Task``, whose fields differ.

``import qdecode`` loads only :class:`DecodingProblem` (numpy and scipy); the rest is imported on
first use (PEP 562 module ``__getattr__``), so stim, numba, sinter, matplotlib and torch stay out
until a function that needs them runs. ``dir(qdecode)`` lists exactly ``__all__`` (and dunders).
"""

from typing import TYPE_CHECKING

__version__ = "0.1.0"

# First, before any module with @numba.njit(cache=True) functions can be imported: key numba's disk
# cache on the source of all jitted code (see qdecode.compile_cache). Stdlib only; numba stays out.
from qdecode.compile_cache import configure as _configure_compile_cache  # noqa: E402

_configure_compile_cache()
del _configure_compile_cache

from qdecode.problem import DecodingProblem  # noqa: E402

if TYPE_CHECKING:  # the lazy attributes' real types, for type checkers and IDEs
    import sinter

    from qdecode.decoders.base import Decoder
    from qdecode.decoders.registry import DecoderSpec, decoder, decoder_names
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.sweep import SweepOptions, run_sweep
    from qdecode.sims.tasks import SweepTask

del TYPE_CHECKING

#: Public name -> (module, attribute), imported on first access.
_LAZY = {
    "decoder": ("qdecode.decoders.registry", "decoder"),
    "decoder_names": ("qdecode.decoders.registry", "decoder_names"),
    "Decoder": ("qdecode.decoders.base", "Decoder"),
    "DecoderSpec": ("qdecode.decoders.registry", "DecoderSpec"),
    "build_circuit": ("qdecode.sims.circuits", "build_circuit"),
    "run_sweep": ("qdecode.sims.sweep", "run_sweep"),
    "SweepOptions": ("qdecode.sims.sweep", "SweepOptions"),
    "SweepTask": ("qdecode.sims.tasks", "SweepTask"),
}

#: Former public names -> (their new name, why), still served with a DeprecationWarning.
_RENAMED = {
    "Task": ("SweepTask", "so that it is not mistaken for sinter.Task, whose fields differ"),
}

__all__ = [
    "Decoder",
    "DecodingProblem",
    "DecoderSpec",
    "SweepOptions",
    "SweepTask",
    "__version__",
    "build_circuit",
    "decoder",
    "decoder_names",
    "run_sweep",
    "sinter_decoders",
]


def sinter_decoders(*labels: str, env: bool = True) -> "dict[str, sinter.Decoder]":
    """qdecode decoders as ``{name: sinter.Decoder}`` (the plug-in of ``sinter collect
    --custom_decoders_module_function qdecode:sinter_decoders``): ``qd-<name>`` for every syndrome
    decoder, the name ``qdecode sweep`` records for each of ``labels``, and, resolved when sinter
    looks it up, any other ``qd-<label>`` or recorded label. Every name is read as a recorded
    label, so the bare ``qd-bposd`` and ``qd-relay-bp`` keep their old meanings (``osd_key=last``,
    ``bits=0``; all of them: ``qdecode.sinter_adapter.legacy_bare_names()``). ``env``: also the
    labels of ``QDECODE_SINTER_DECODERS`` and of this process's ``sinter collect --decoders``.
    See :mod:`qdecode.sinter_adapter`."""
    from qdecode.sinter_adapter import sinter_decoders as _impl

    return _impl(*labels, env=env)


def __getattr__(name: str) -> object:
    """The lazy public names of ``_LAZY`` (imported once, then cached in the module)."""
    if name in _RENAMED:
        import warnings

        new, why = _RENAMED[name]
        warnings.warn(f"qdecode.{name} is now qdecode.{new} ({why})", DeprecationWarning, stacklevel=2)
        return __getattr__(new)
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'qdecode' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """``__all__`` and the module's dunders; not the helpers, nor the submodules that importing
    ``qdecode.x`` binds as attributes (those are reachable, just not advertised)."""
    return sorted(set(__all__) | {n for n in globals() if n.startswith("__") and n.endswith("__")})
