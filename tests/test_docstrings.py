"""Every docstring example runs: the doctests of every module under qdecode/, codes/, sims/ and neural/.

This is the one place doctests run. The modules are those of the source tree
(:func:`tests.import_scan.modules`, folders mapped to packages as in pyproject's ``package-dir``)
whose source has a line starting with ``>>>``, so a new module's examples run without being listed
anywhere. Each module's examples run as :func:`doctest.testmod` runs them (the module's globals,
``NORMALIZE_WHITESPACE``). An example is never skipped on its own (``+SKIP`` fails the test): an
example that cannot run here is not an example. A module whose import, or whose examples
(:data:`NEEDS`), need an optional package that is not installed is skipped with the reason.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import io
import re

import pytest

from tests.import_scan import modules

#: Import names of the packages a core install may lack (pyproject's extras, and the decoder
#: backends that the core imports lazily).
OPTIONAL = ("torch", "onnx", "onnxruntime", "dask", "distributed", "ldpc", "relay_bp", "galois", "beliefmatching",
            "chromobius", "tesseract_decoder", "mwpf")
#: Optional packages that a module's examples use although its import does not.
NEEDS: dict[str, tuple[str, ...]] = {
    "qdecode.decoders.crisp": ("onnxruntime",),  # the example builds a decoder from a shipped .onnx model
}

_EXAMPLE = re.compile(r"^\s*>>>( |$)", re.M)


def modules_with_examples() -> list[str]:
    return sorted(m for m, path in modules().items() if _EXAMPLE.search(path.read_text(encoding="utf-8")))


def _import(name: str):
    missing = [p for p in NEEDS.get(name, ()) if importlib.util.find_spec(p) is None]
    if missing:
        pytest.skip(f"{name}: its examples need {', '.join(missing)} (not installed)")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name}: needs {exc.name} (not installed)")
        raise


def test_the_source_tree_is_seen():
    names = modules_with_examples()
    assert "qdecode.problem" in names and "qdecode.codes.bch" in names and "qdecode.sims.channels" in names
    assert len(names) >= 30


@pytest.mark.parametrize("name", modules_with_examples())
def test_doctests(name):
    module = _import(name)
    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    assert tests, f"{name}: a line starts with '>>>' but doctest finds no example"
    skipped = [f"{t.name} line {(t.lineno or 0) + ex.lineno + 1}" for t in tests for ex in t.examples
               if ex.options.get(doctest.SKIP)]
    assert not skipped, f"examples marked +SKIP (make them run, or not examples): {skipped}"
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()
    assert result.attempted == sum(len(t.examples) for t in tests)
