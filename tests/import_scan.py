"""The source tree's imports, read with :mod:`ast` (shared by the layering and import-graph tests).

Every ``.py`` under ``qdecode/``, ``sims/``, ``codes/`` and ``neural/`` maps to its module name as in
pyproject's ``package-dir`` (``sims/ -> qdecode.sims``, ``codes/ -> qdecode.codes``, ``neural/ ->
qdecode.neural``), read from ``pyproject.toml`` itself (:data:`SOURCES`), the one place the mapping is
stated. :func:`all_imports` lists every ``import`` / ``from ... import`` anywhere in a
module (module scope, functions, methods, ``try`` blocks), relative imports resolved, skipping only
bodies of ``if TYPE_CHECKING:``; an import inside a function or lambda is *lazy*. ``from pkg import
name`` targets ``pkg.name`` when that is a module, else ``pkg``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli backport (a dependency there)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
#: Source folder -> package name, from pyproject's ``[tool.setuptools] package-dir``.
SOURCES = {folder: package for package, folder in
           tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
           ["package-dir"].items()}


@dataclass(frozen=True)
class Import:
    file: str  # relative to the repository root
    line: int
    module: str  # the importing module
    target: str  # the imported module (qdecode modules resolved; externals as written)
    lazy: bool


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for folder, prefix in SOURCES.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if all(p.isidentifier() for p in parts):
                out[".".join([prefix, *parts])] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    t = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING")
        or (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"))


def _walk(node: ast.AST, lazy: bool = False):
    """(import node, lazy) for every import under ``node``, skipping TYPE_CHECKING bodies."""
    for child in ast.iter_child_nodes(node):
        if _is_type_checking(child):
            for sub in child.orelse:
                yield from _walk_one(sub, lazy)
            continue
        yield from _walk_one(child, lazy)


def _walk_one(node: ast.AST, lazy: bool):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node, lazy
    yield from _walk(node, lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def all_imports() -> list[Import]:
    known = modules()
    out: list[Import] = []
    for mod, path in known.items():
        rel = str(path.relative_to(ROOT))
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node, lazy in _walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for a in node.names:
                    full = f"{base}.{a.name}"
                    if base == "qdecode" and a.name == "__version__":
                        targets.append(full)
                    else:
                        targets.append(full if full in known else base)
            out.extend(Import(rel, node.lineno, mod, t, lazy) for t in targets)
    return out


def resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a known module, or None (an external package)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in known:
            return cand
    return None
