"""No decoder ever hangs: every registered syndrome decoder states its work bound per decode call.

For every registered quantum decoder, the class its registry entry builds must carry, in its own
docstring, a paragraph that begins with ``Work bound:`` (the iterations, legs, branches, growth
steps or solver time that bound one shot). Entries built by lambdas are resolved by building them
on a small DEM they accept.
"""

from __future__ import annotations

import functools
import inspect
import re

import pytest
import stim

import qdecode
from qdecode.decoders.registry import decoder_names, get_entry

QUANTUM = [name for name in decoder_names() if get_entry(name).kind == "quantum"]

_TINY = "error(0.1) D0 D1 L0\nerror(0.1) D1\ndetector(0,0,0) D0\ndetector(1,0,0) D1"


@functools.cache
def _surface_dem() -> stim.DetectorErrorModel:  # what the shipped nn-pymatching d5 model decodes
    circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=5, rounds=5,
                                  after_clifford_depolarization=0.005)
    return circ.detector_error_model(decompose_errors=True)


@functools.cache
def _color_dem() -> stim.DetectorErrorModel:  # Chromobius needs the basis-and-colour 4th coordinate
    from qdecode.sims.color_circuit import color_memory_circuit

    return color_memory_circuit(3, rounds=3, noise="sd6", p=0.001).detector_error_model()


def _decoder_class(name: str) -> type:
    """The class of the decoder registry entry ``name`` builds (the first DEM it accepts)."""
    refusals = []
    for dem in (lambda: stim.DetectorErrorModel(_TINY), _surface_dem, _color_dem):
        try:
            return type(qdecode.decoder(name, dem()))
        except ValueError as exc:  # DecoderInputError and the model loaders' refusals
            refusals.append(str(exc).splitlines()[0])
    factory = get_entry(name).factory
    if inspect.isclass(factory):
        return factory
    pytest.fail(f"{name}: no test DEM is accepted ({refusals})")


def _work_bound(cls: type) -> str | None:
    """The ``Work bound:`` paragraph of ``cls``'s own docstring (not an inherited one), or None."""
    doc = cls.__dict__.get("__doc__")
    if not doc:
        return None
    for para in re.split(r"\n\s*\n", inspect.cleandoc(doc)):
        if para.startswith("Work bound:"):
            return para
    return None


def test_there_are_quantum_decoders():
    assert {"bp", "bposd", "relay-bp", "gdg", "window", "mle", "pymatching"} <= set(QUANTUM)


@pytest.mark.parametrize("name", QUANTUM)
def test_decoder_class_states_its_work_bound(name):
    cls = _decoder_class(name)
    para = _work_bound(cls)
    assert para is not None, (f"{cls.__module__}.{cls.__qualname__} (registry {name!r}) has no "
                              "'Work bound:' paragraph in its class docstring")
    assert len(para.split()) > 6, f"{cls.__qualname__}: the 'Work bound:' paragraph states nothing"
