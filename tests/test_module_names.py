"""A module name says what it holds: a file name repeats only for one concept at two layers.

The layer pairs are listed in ``docs/architecture.md`` (section 5, "Module names that repeat");
this test keeps the code and that table in step, so a new ``relay.py`` beside another cannot slip in.
"""

from __future__ import annotations

import re
from collections import defaultdict

from tests.import_scan import ROOT, SOURCES


def _repeated_names() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name != "__init__.py" and "__pycache__" not in path.parts:
                where[path.name].append(str(path.relative_to(ROOT)))
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def _documented_names() -> set[str]:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    table = doc.split("Module names that repeat", 1)[1].split("\n\n", 2)[1]
    return {name for row in table.splitlines()[2:] for name in re.findall(r"`([a-z_0-9]+\.py)`", row.split("|")[1])}


def test_repeated_module_names_are_the_documented_layer_pairs():
    repeated = _repeated_names()
    documented = _documented_names()
    assert set(repeated) == documented, (
        f"undocumented repeats: {sorted(set(repeated) - documented)} "
        f"({[repeated[n] for n in sorted(set(repeated) - documented)]}); "
        f"documented but no longer repeated: {sorted(documented - set(repeated))}")
    assert all(len(paths) == 2 for paths in repeated.values()), repeated
