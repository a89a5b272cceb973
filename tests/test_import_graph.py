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

The decoder registry (:mod:`qdecode.decoders.registry`) is the one module that knows every
built-in decoder: one loader function per decoder module, ``from qdecode.decoders.X import
ENTRIES``, called when an entry is needed. Those loader imports are edges like any other. So no
decoder module may import the registry, lazily or not: a nested decoder (``window``, ``auto``) gets
the registry's spec class passed in (``DecoderEntry.builds_decoders``: the registry gives its factory
``specs=DecoderSpec``), and builds its inner decoders with it.
"""

from __future__ import annotations

import ast

from tests.import_scan import ROOT, all_imports, modules, resolve

REGISTRY = "qdecode.decoders.registry"

#: Cycles known to remain outside the decoder registry, each with its reason. A cycle is allowed
#: when all of its modules are in one of these sets. Remove an entry once its cycle is broken.
ALLOWED_CYCLES: list[tuple[frozenset[str], str]] = [
]


def import_graph() -> dict[str, set[str]]:
    """Module -> the qdecode modules it imports (lazy imports included; no self edges)."""
    known = modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for imp in all_imports():
        r = resolve(imp.target, known)
        if r is not None and r != imp.module:
            graph[imp.module].add(r)
    return graph


def registry_table_lines() -> set[int]:
    """Lines of the registry's loader imports (``from qdecode.decoders.X import ENTRIES`` in a function)."""
    tree = ast.parse((ROOT / "qdecode" / "decoders" / "registry.py").read_text(encoding="utf-8"))
    return {node.lineno for fn in tree.body if isinstance(fn, ast.FunctionDef) for node in ast.walk(fn)
            if isinstance(node, ast.ImportFrom) and [a.name for a in node.names] == ["ENTRIES"]
            and (node.module or "").startswith("qdecode.decoders.")}


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
    assert "qdecode.decoders.window" in graph[REGISTRY]  # a lazy import (a loader of the registry) counts
    assert len(registry_table_lines()) >= 10


def test_no_import_cycle_among_qdecode_modules():
    graph = import_graph()
    bad = [c for c in cycles(graph) if not any(set(c) <= allowed for allowed, _ in ALLOWED_CYCLES)]
    msg = "\n".join(f"cycle of {len(c)} modules: {' -> '.join(_a_cycle(c, graph))}\n  all: {', '.join(c)}"
                    for c in bad)
    assert not bad, msg


def test_decoder_modules_never_import_the_registry():
    """Not even lazily: the registry passes its spec class to the decoders that build others."""
    found = [i for i in all_imports() if i.module.startswith("qdecode.decoders.")
             and i.module != REGISTRY and i.target.startswith(REGISTRY)]
    assert not found, [f"{i.file}:{i.line}" for i in found]
