"""No private name crosses a module boundary.

The rule: a name with one leading underscore (``_x``, not a dunder) belongs to the module that
defines it. No other module may import it (``from m import _x``, relative imports included) or read
it off an imported module (``m._x``, ``pkg.m._x``, ``alias._x`` for ``import m as alias``). What
two modules share is public in the module where it belongs, with a docstring. A private *module*
(``_common.py``) is private to its folder: only its siblings import it.

Scope: every ``.py`` under ``qdecode/``, ``codes/``, ``sims/``, ``neural/`` (the modules of
:mod:`import_scan`) and ``benchmarks/``, every import anywhere in a file (functions, ``try`` and
``if TYPE_CHECKING:`` bodies included), for the names of this repository's modules (``qdecode.*``
and the benchmarks' own helpers). Other packages' underscored names (``os._exit``,
``argparse._StoreTrueAction``) are their maintainers' business. ``tests/`` is exempt: a test may pin
the internals of the code it tests (white-box tests, reference transcriptions).

The allow-list is empty and must stay so; promote the name instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_scan import ROOT, SOURCES, modules

#: (file, name) pairs allowed to cross; each would need its reason. Empty on purpose.
ALLOWED: dict[tuple[str, str], str] = {}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _files() -> list[tuple[Path, str | None]]:
    """(path, module name) of every file in scope; benchmark scripts have no package (None)."""
    out: list[tuple[Path, str | None]] = [(p, m) for m, p in modules().items()]
    out += [(p, None) for p in sorted((ROOT / "benchmarks").rglob("*.py"))]
    return out


def _private_module_crossing(importer: Path, dotted: str) -> str | None:
    """The first private component of module ``dotted`` if ``importer`` is not its sibling, else None."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if _is_private(part):
            owner = ".".join(parts[:i])  # the package the private module belongs to
            here = _package_of(importer)
            return None if here == owner else part
    return None


def _package_of(path: Path) -> str:
    """The dotted package a file sits in ("" for a script folder such as benchmarks/, by folder name)."""
    rel = path.relative_to(ROOT)
    folder = rel.parts[0]
    prefix = SOURCES.get(folder)
    if prefix is None:  # a script folder: its modules import each other by bare name
        return ""
    return ".".join([prefix, *rel.parts[1:-1]])


def _ours(dotted: str, path: Path) -> bool:
    """Whether module ``dotted`` is one of this repository's (a qdecode module, or a script's sibling)."""
    return dotted.split(".")[0] == "qdecode" or (path.parent / (dotted.split(".")[0] + ".py")).exists()


def crossings(path: Path, module: str | None, source: str | None = None) -> list[tuple[int, str]]:
    """(line, what) for every private name that ``path`` takes from another module of this repository."""
    known = modules()
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source, str(path))
    package = _package_of(path) if module is None else (module if path.name == "__init__.py"
                                                          else module.rpartition(".")[0])
    aliases: dict[str, str] = {}  # local name -> the module it is bound to
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _ours(a.name, path) and _private_module_crossing(path, a.name):
                    found.append((node.lineno, f"import {a.name}"))
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if not _ours(base, path):
                continue
            if _private_module_crossing(path, base):
                found.append((node.lineno, f"from {base} import ..."))
            for a in node.names:
                full = f"{base}.{a.name}" if base else a.name
                if _is_private(a.name):
                    if full in known and _package_of(path) == base:
                        continue  # a private submodule imported by a sibling in its package
                    found.append((node.lineno, f"from {base} import {a.name}"))
                elif full in known:
                    aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            chain: list[str] = []
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in aliases and _ours(aliases[value.id], path):
                found.append((node.lineno, ".".join([aliases[value.id], *reversed(chain), node.attr])))
    return found


def _all_crossings() -> list[str]:
    out = []
    for path, module in _files():
        rel = str(path.relative_to(ROOT))
        for line, what in crossings(path, module):
            if (rel, what.rpartition(".")[2].rpartition(" ")[2]) not in ALLOWED:
                out.append(f"{rel}:{line}: {what}")
    return out


def test_no_private_name_crosses_a_module_boundary():
    bad = _all_crossings()
    assert not bad, ("private names used outside their module (make them public where they belong, "
                     "with a docstring):\n" + "\n".join(bad))


def test_allow_list_is_empty():
    assert ALLOWED == {}


@pytest.mark.parametrize("source, expected", [
    ("from qdecode.kernels.bp import _x\n", ["from qdecode.kernels.bp import _x"]),
    ("from .bp import _x\n", ["from qdecode.kernels.bp import _x"]),
    ("from qdecode.kernels import bp\nbp._x\n", ["qdecode.kernels.bp._x"]),
    ("import qdecode.kernels.bp as kb\ndef f():\n    return kb._x\n", ["qdecode.kernels.bp._x"]),
    ("import qdecode.kernels.bp\nqdecode.kernels.bp._x\n", ["qdecode.kernels.bp._x"]),
    ("import numpy as np\nnp._x\nfrom sinter._decoding import f\n", []),
    ("from qdecode.decoders._impl import f\n", ["from qdecode.decoders._impl import ..."]),
    ("from qdecode.kernels._impl import f\n", []),  # a sibling's private module
    ("from qdecode.kernels.bp import bp_decode, __doc__\nself._x\n", []),
])
def test_scanner_sees_each_form(source, expected):
    """The scanner's forms, on a source placed at ``qdecode/kernels/probe.py``."""
    path = ROOT / "qdecode" / "kernels" / "probe.py"
    assert [what for _, what in crossings(path, "qdecode.kernels.probe", source)] == expected
