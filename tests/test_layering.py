"""Import direction (DESIGN §2), enforced on the source tree with an AST walk.

Only top-level (module-scope) imports count: lazy imports inside functions are
the documented way to reach optional or heavy dependencies.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# package folder -> (dotted prefix, forbidden top-level imports)
RULES = {
    "qdecode/kernels": ("qdecode.kernels", {"scipy", "stim", "pymatching", "torch", "matplotlib", "qdecode.sims", "qdecode.decoders", "qdecode.codes", "qdecode.neural", "qdecode.cli"}),
    "qdecode/decoders": ("qdecode.decoders", {"stim", "sinter", "matplotlib", "torch", "qdecode.sims", "qdecode.cli", "pymatching"}),
    "codes": ("qdecode.codes", {"stim", "sinter", "matplotlib", "torch", "qdecode.sims", "qdecode.cli", "qdecode.decoders"}),
    "qdecode/problem.py": ("qdecode.problem", {"stim", "sinter", "matplotlib", "torch", "qdecode.sims", "qdecode.decoders"}),
    "sims/store.py": ("qdecode.sims.store", {"stim", "numba", "matplotlib", "torch"}),
    "sims/stats.py": ("qdecode.sims.stats", {"stim", "numba", "matplotlib", "torch"}),
    "sims/threshold.py": ("qdecode.sims.threshold", {"stim", "numba", "matplotlib", "torch"}),
}


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("where", sorted(RULES))
def test_no_forbidden_top_level_imports(where):
    _, forbidden = RULES[where]
    target = ROOT / where
    files = [target] if target.suffix == ".py" else sorted(target.rglob("*.py"))
    files = [f for f in files if f.exists()]
    for f in files:
        for name in _top_level_imports(f):
            for bad in forbidden:
                assert not (name == bad or name.startswith(bad + ".")), f"{f.relative_to(ROOT)} imports {name}"


def test_decoders_import_without_stim_or_matplotlib():
    code = (
        "import sys; import qdecode.decoders, qdecode.problem;"
        "bad=[m for m in ('stim','matplotlib','torch','sinter') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
