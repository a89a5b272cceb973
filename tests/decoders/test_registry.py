"""Registry and DecoderSpec: names, parameters, labels, errors."""

from __future__ import annotations

import pickle

import pytest

from qdecode.decoders import DecoderSpec, Param, UnknownDecoderError, decoder_names, register
from qdecode.decoders.matching import MatchingDecoder


@pytest.fixture
def toy_decoder():
    register(
        "toy-test",
        lambda problem, alpha, max_iter, flooding: MatchingDecoder(problem),
        {"alpha": Param(float, 0.625), "max_iter": Param(int, 100), "flooding": Param(bool, True)},
    )
    yield "toy-test"
    from qdecode.decoders.registry import _REGISTRY

    _REGISTRY.pop("toy-test", None)  # later tests see only the built-in decoders


def test_builtins_registered():
    assert {"pymatching", "pymatching-correlated"} <= set(decoder_names())
    assert DecoderSpec.create("pymatching").label() == "pymatching"


def test_label_carries_every_parameter_sorted(toy_decoder):
    spec = DecoderSpec.create(toy_decoder, ["max_iter=30", "alpha=0.75"])
    assert spec.label() == "toy-test[alpha=0.75,flooding=true,max_iter=30]"
    assert DecoderSpec.create(toy_decoder, {"max_iter": 30, "alpha": 0.75}) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec


def test_unknown_names_and_params_are_named(toy_decoder):
    with pytest.raises(UnknownDecoderError, match="unknown decoder 'nope'.*pymatching"):
        DecoderSpec.create("nope")
    with pytest.raises(UnknownDecoderError, match="no parameter 'gamma'.*alpha"):
        DecoderSpec.create(toy_decoder, ["gamma=1"])
    with pytest.raises(UnknownDecoderError, match="max_iter='ten' is not a valid int"):
        DecoderSpec.create(toy_decoder, ["max_iter=ten"])
    with pytest.raises(UnknownDecoderError, match="key=value"):
        DecoderSpec.create(toy_decoder, ["alpha"])
    with pytest.raises(UnknownDecoderError, match="not a valid bool"):
        DecoderSpec.create(toy_decoder, ["flooding=maybe"])


def _loader_source(loader) -> str:
    """The one module a built-in loader imports: its body must be ``from M import ENTRIES; return ENTRIES``."""
    import ast
    import inspect
    import textwrap

    fn = ast.parse(textwrap.dedent(inspect.getsource(loader))).body[0]
    assert isinstance(fn, ast.FunctionDef) and len(fn.body) == 2, ast.dump(fn)
    imp, ret = fn.body
    assert isinstance(imp, ast.ImportFrom) and imp.level == 0 and [a.name for a in imp.names] == ["ENTRIES"]
    assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name) and ret.value.id == "ENTRIES"
    return imp.module


def test_builtin_entries_are_static_imports_defined_where_they_say():
    """Every built-in name leads, by a plain import that go-to-definition follows, to the module
    whose ``ENTRIES`` defines it, and its factory (class or function) is defined in that module."""
    import importlib

    from qdecode.decoders import registry

    assert registry.BUILTIN_DECODERS
    for name, loader in registry.BUILTIN_DECODERS.items():
        assert loader.__module__ == registry.__name__, name  # defined in the registry, next to the table
        module = _loader_source(loader)
        assert module.startswith("qdecode.decoders."), (name, module)
        entries = loader()
        assert entries is importlib.import_module(module).ENTRIES, name
        entry = entries[name]
        assert entry.name == name and registry.get_entry(name) is entry
        assert callable(entry.factory) and entry.factory.__module__ == module, (name, entry.factory)


def test_registry_imports_decoders_statically_and_lazily():
    """No module path is built from a string (``importlib``), and importing the registry imports no decoder."""
    import ast
    import subprocess
    import sys
    from pathlib import Path

    from qdecode.decoders import registry

    tree = ast.parse(Path(registry.__file__).read_text(encoding="utf-8"))
    names = {a.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    calls = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
             for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert "importlib" not in names and not {"import_module", "__import__"} & calls
    modules = sorted({_loader_source(loader) for loader in registry.BUILTIN_DECODERS.values()})
    code = ("import sys, qdecode.decoders.registry as r; r.decoder_names(); "
            f"loaded = [m for m in {modules!r} if m in sys.modules]; assert not loaded, loaded")
    subprocess.run([sys.executable, "-c", code], check=True)
