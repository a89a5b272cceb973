"""The import graph among qdecode modules has no cycle, lazy imports included.

Every ``.py`` under ``qdecode/``, ``sims/``, ``codes/`` and ``neural/`` is parsed with :mod:`ast`;
every ``import`` / ``from ... import`` anywhere in it (module scope, inside functions, methods,
``try`` blocks) is an edge, relative imports resolved. Source folders map to packages as in
pyproject's ``package-dir``: ``sims/ -> qdecode.sims``, ``codes/ -> qdecode.codes``,
``neural/ -> qdecode.neural``. Not edges: imports under ``if TYPE_CHECKING:`` (never run), and
the implicit import of a module's parent packages (``import qdecode.decoders.base`` runs
``qdecode/decoders/__init__.py`` too, but that is the package's own choice, not a dependency of
the importer). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg``.

The decoder registry (:mod:`qdecode.decoders.registry`) names its built-in decoder modules in a
static table of strings and imports them with :func:`importlib.import_module`, so it has no edge
to them; the decoder modules import the leaf :mod:`qdecode.decoders.params`, never the registry
at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"qdecode": "qdecode", "sims": "qdecode.sims", "codes": "qdecode.codes", "neural": "qdecode.neural"}

#: Cycles known to remain outside the decoder registry, each with its reason. A cycle is allowed
#: when all of its modules are in one of these sets. Remove an entry once its cycle is broken.
ALLOWED_CYCLES: list[tuple[frozenset[str], str]] = [
]


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for folder, prefix in SOURCES.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(not p.isidentifier() for p in parts):
                continue
            out[".".join([prefix, *parts])] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in known:
            return cand
    return None


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for mod, path in known.items():
        is_pkg = path.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base_parts = package.split(".")
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for a in node.names:
                    full = f"{base}.{a.name}"
                    targets.append(full if full in known else base)
            for t in targets:
                r = _resolve(t, known)
                if r is not None and r != mod:
                    graph[mod].add(r)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _a_cycle(comp: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One concrete cycle through the component's first module, for the failure message."""
    members = set(comp)
    start = comp[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, v, start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def test_graph_sees_the_source_tree():
    graph = import_graph()
    assert "qdecode.decoders.registry" in graph and "qdecode.sims.recipe" in graph
    assert "qdecode.decoders.params" in graph["qdecode.decoders.bp"]
    assert "qdecode.decoders.registry" in graph["qdecode.sims.recipe"]  # module-level import
    assert "qdecode.decoders.registry" in graph["qdecode.decoders.window"]  # a lazy import counts


def test_no_import_cycle_among_qdecode_modules():
    graph = import_graph()
    bad = [c for c in cycles(graph) if not any(set(c) <= allowed for allowed, _ in ALLOWED_CYCLES)]
    msg = "\n".join(f"cycle of {len(c)} modules: {' -> '.join(_a_cycle(c, graph))}\n  all: {', '.join(c)}"
                    for c in bad)
    assert not bad, msg


def test_decoder_modules_do_not_import_the_registry_at_import_time():
    known = _modules()
    for mod, path in known.items():
        if not mod.startswith("qdecode.decoders.") or mod == "qdecode.decoders.registry":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "qdecode.decoders.registry":
                raise AssertionError(f"{mod} imports the registry at module level")
            if isinstance(node, ast.Import) and any(a.name == "qdecode.decoders.registry" for a in node.names):
                raise AssertionError(f"{mod} imports the registry at module level")
