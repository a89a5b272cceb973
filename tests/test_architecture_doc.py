"""docs/architecture.md names every package and module of the source tree.

The rule, for every ``.py`` under ``qdecode/``, ``codes/``, ``sims/`` and ``neural/`` (the modules of
:mod:`import_scan`; a package's ``__init__.py`` and ``__main__.py`` stand for the package):

* a module ``<parent>/<name>.py`` is mentioned when the doc contains, between backticks, its dotted
  name (``qdecode.hw.rtl.arith``), its path from the parent folder on (``rtl/arith.py``, or any longer
  path ending so, e.g. ``qdecode/hw/rtl/arith.py``), or its bare file name (``arith.py``) when no other
  module has that file name;
* a package ``<parent>/<name>/`` is mentioned by its dotted name (``qdecode.hw.rtl``), its folder from
  the parent on with the trailing slash (``hw/rtl/``, or a longer path ending so), or its bare folder
  (``rtl/``) when no other package has that name; the four top folders by ``qdecode/``, ``codes/``,
  ``sims/``, ``neural/``.

A module added without a line in the map fails here, with the names to add.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from import_scan import ROOT, modules

DOC = ROOT / "docs" / "architecture.md"


def _spans(text: str) -> set[str]:
    """Every code span of the doc (between backticks, possibly across a line break; fenced blocks left
    out), and each of its words."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    out: set[str] = set()
    for span in re.findall(r"`([^`]+)`", text):
        if "\n\n" in span:
            continue
        out.add(span.strip())
        out.update(w.strip(".,;:()") for w in re.split(r"[\s,;()]+", span) if w)
    return out


_PACKAGE_FILES = ("__init__.py", "__main__.py")


def _key(path: Path) -> str:
    """What must be unique for the bare spelling: a module's file name, a package's folder name."""
    return path.parent.name + "/" if path.name in _PACKAGE_FILES else path.name


def _accepted(dotted: str, path: Path, unique: bool) -> list[str]:
    """The spellings that count as a mention of module ``dotted`` (file ``path``)."""
    rel = path.relative_to(ROOT)
    if path.name in _PACKAGE_FILES:
        folder = rel.parent.parts
        package = dotted.removesuffix(".__main__")
        if len(folder) == 1:
            return [package, folder[0] + "/"]
        names = [package, "/".join(folder[-2:]) + "/"]
    else:
        names = [dotted, "/".join(rel.parts[-2:])]
    return names + [_key(path)] if unique else names


def missing_modules(text: str) -> list[str]:
    spans = _spans(text)
    found = modules()
    counts = Counter(_key(p) for p in found.values() if p.name != "__main__.py")
    out = []
    for dotted, path in found.items():
        ok = _accepted(dotted, path, counts[_key(path)] == 1)
        hit = any(s in spans or any(span.endswith("/" + s) for span in spans if "/" in s) for s in ok)
        if not hit:
            out.append(f"{path.relative_to(ROOT)} ({' or '.join(f'`{s}`' for s in ok)})")
    return out


def test_every_module_is_in_the_architecture_doc():
    missing = missing_modules(DOC.read_text(encoding="utf-8"))
    assert not missing, "docs/architecture.md does not mention:\n" + "\n".join(missing)


def test_rule_examples():
    """The rule on a made-up doc: a qualified path counts, an ambiguous bare name does not."""
    text = "`qdecode/hw/rtl/arith.py` and `bp.py` and `hw/rtl/`"
    missing = missing_modules(text)
    assert not any(m.startswith("qdecode/hw/rtl/arith.py") for m in missing)
    assert not any(m.startswith("qdecode/hw/rtl/__init__.py") for m in missing)
    assert any(m.startswith("qdecode/kernels/bp.py") for m in missing)  # bp.py: kernels or decoders?
    assert any(m.startswith("qdecode/kernels/arith.py") for m in missing)
