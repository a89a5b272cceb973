"""The repository stands alone: a plain clone has everything its documents and tests refer to.

* No tracked text file (README, docs, sources, recipes, model cards) refers to a path outside the
  repository (a parent-relative path, a machine's absolute path, the sibling ``shared`` folder)
  or to the project's research notes (their folder, their file names, or the words naming them).
  Cite papers by arXiv id or DOI and repository documents by path instead.
* No Python file builds a path that leaves the repository from ``__file__`` (``parents[k]`` or
  ``.parent`` chains above the root, a ``".."`` component).
* No test skips because a file is missing: a skip (``pytest.skip`` under an ``if``, or
  ``pytest.mark.skipif``) whose condition checks that a path derived from ``__file__`` exists is
  an error, since every fixture lives in ``tests/data/`` (see ``tests/data/PROVENANCE.md``).
  Skipping for a missing optional package (``pytest.importorskip``) stays allowed.

This file spells the forbidden forms in its own checks, so the text scan skips it; the
parent-directory component is assembled from pieces so that the path scan does not flag it.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TEXT_SUFFIXES = {".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".json", ".yml", ".yaml", ".sh"}
TEXT_NAMES = {"Makefile", "run"}  # .ci/run
SKIP_DIRS = {".git", ".venv", "build", "out", "__pycache__", ".pytest_cache", ".hypothesis", ".numba_cache"}

_UP = "." + "."
_NOTES = "|".join(["qldpc", "classical", "simd", "rtl", "ecosystem", "aesthetics", "codes_decoders_2"])
FORBIDDEN = [
    ("a parent-relative path", re.compile(re.escape(_UP + "/") + "|" + re.escape(_UP + "\\"))),
    ("the sibling shared folder", re.compile(r"\bshared/(?:research|fixtures|hooks|DESIGN|papers)\b")),
    ("the design note outside the repository", re.compile(r"\b(?:DESIGN|papers)\.md\b")),
    ("a research note path", re.compile(r"\bresearch/[\w.-]+" + r"|\b(?:" + _NOTES + r")\.md\b")),
    ("a research note", re.compile(r"\bresearch[ \t]+(?:note|brief)s?\b", re.IGNORECASE)),
    ("a machine's absolute path", re.compile(r"(?<![\w.:/])/(?:work|home|Users|mnt|root)/")),
]


def repository_files() -> list[Path]:
    """Tracked files plus untracked ones git does not ignore; without git, a walk of the tree."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout.decode()
        files = [ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = [p for p in ROOT.rglob("*")
                 if not any(part in SKIP_DIRS or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)]
    return sorted(p for p in files if p.is_file())


def text_files() -> list[Path]:
    here = Path(__file__).resolve()
    return [p for p in repository_files()
            if (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES) and p.resolve() != here]


def python_files() -> list[Path]:
    return [p for p in repository_files() if p.suffix == ".py"]


# ----------------------------------------------------------------------------- text references
def forbidden_references(text: str) -> list[tuple[int, str, str]]:
    """``(line, what, excerpt)`` for every forbidden reference in ``text``."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN:
            m = pattern.search(line)
            if m:
                found.append((lineno, what, line.strip()[:120]))
    return found


@pytest.mark.parametrize("path", text_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_outside_the_repository(path):
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        pytest.skip("not a text file")  # a binary with a text suffix: nothing to read
    bad = forbidden_references(text)
    assert not bad, "\n".join(f"{path.relative_to(ROOT)}:{n}: {what}: {line}" for n, what, line in bad)


# ----------------------------------------------------------------------------- paths built in code
def _is_file_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "__file__"


def levels_up(node: ast.AST) -> int | None:
    """How many directories above ``__file__`` a path expression points (0 = the file itself).

    Understands ``Path(__file__)``, ``.resolve()`` / ``.absolute()``, ``.parent``, ``.parents[k]``,
    ``os.path.dirname`` / ``abspath`` / ``realpath``; returns None for anything else.
    """
    if _is_file_name(node):
        return 0
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, (ast.Name, ast.Attribute)) and node.args:
            fname = f.id if isinstance(f, ast.Name) else f.attr
            if fname in ("Path", "PurePath", "abspath", "realpath", "normpath"):
                return levels_up(node.args[0])
            if fname == "dirname":
                inner = levels_up(node.args[0])
                return None if inner is None else inner + 1
        if isinstance(f, ast.Attribute) and f.attr in ("resolve", "absolute") and not node.args:
            return levels_up(f.value)
        return None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = levels_up(node.value)
        return None if inner is None else inner + 1
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        inner = levels_up(node.value.value)
        k = node.slice
        if inner is not None and isinstance(k, ast.Constant) and isinstance(k.value, int):
            return inner + k.value + 1
    return None


def escaping_paths(tree: ast.AST, rel: Path) -> list[tuple[int, str]]:
    """``(line, why)`` for path expressions that leave the repository (``rel``: the file's path in it)."""
    depth = len(rel.parts)  # levels_up == depth is the repository root
    found = []
    for node in ast.walk(tree):
        n = levels_up(node) if isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)) else None
        if n is not None and n > depth:
            found.append((node.lineno, f"{n - depth} level(s) above the repository root"))
        if isinstance(node, ast.Constant) and node.value == _UP:
            found.append((node.lineno, f"a {_UP!r} path component"))
    return found


# ----------------------------------------------------------------------------- skips for missing files
_EXISTS = {"exists", "is_file", "is_dir", "isfile", "isdir", "lexists"}


def _assignments(scope: ast.AST) -> dict[str, ast.AST]:
    out: dict[str, ast.AST] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def _derived_from_file(node: ast.AST, names: dict[str, ast.AST], seen: frozenset = frozenset()) -> bool:
    """Whether ``node`` uses ``__file__`` (directly or through the assignments in ``names``)."""
    for sub in ast.walk(node):
        if _is_file_name(sub):
            return True
        if isinstance(sub, ast.Name) and sub.id in names and sub.id not in seen:
            if _derived_from_file(names[sub.id], names, seen | {sub.id}):
                return True
    return False


def _checks_repo_file(cond: ast.AST, names: dict[str, ast.AST]) -> bool:
    for sub in ast.walk(cond):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Attribute) and f.attr in _EXISTS:
                target = sub.args[0] if sub.args else f.value  # os.path.exists(p) or p.exists()
                if _derived_from_file(target, names):
                    return True
    return False


def _is_pytest_attr(node: ast.AST, *chain: str) -> bool:
    """``node`` spells ``pytest.<chain...>``."""
    for name in reversed(chain):
        if not (isinstance(node, ast.Attribute) and node.attr == name):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == "pytest"


def skips_for_missing_files(tree: ast.Module) -> list[int]:
    """Lines of skips conditioned on the existence of a path derived from ``__file__``."""
    module_names = _assignments(tree)
    found = []

    def visit(node: ast.AST, names: dict[str, ast.AST], conds: list[ast.AST]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                visit(dec, names, conds)
            local = {**names, **_assignments(node)}
            for child in node.body:
                visit(child, local, conds)
            return
        if isinstance(node, ast.If):
            visit(node.test, names, conds)
            for child in node.body + node.orelse:
                visit(child, names, [*conds, node.test])
            return
        if isinstance(node, ast.Call):
            if _is_pytest_attr(node.func, "skip") and any(_checks_repo_file(c, names) for c in conds):
                found.append(node.lineno)
            if _is_pytest_attr(node.func, "mark", "skipif"):
                cond = (node.args[0] if node.args
                        else next((k.value for k in node.keywords if k.arg == "condition"), None))
                if cond is not None and _checks_repo_file(cond, names):
                    found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, names, conds)

    visit(tree, module_names, [])
    return sorted(set(found))


@pytest.mark.parametrize("path", python_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_path_outside_the_repository_and_no_skip_for_a_missing_file(path):
    rel = path.relative_to(ROOT)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(rel))
    bad = [f"{rel}:{n}: path {why}" for n, why in escaping_paths(tree, rel)]
    if rel.parts[0] == "tests":
        bad += [f"{rel}:{n}: skips when a repository file is missing (put it in tests/data/)"
                for n in skips_for_missing_files(tree)]
    assert not bad, "\n".join(bad)


# ----------------------------------------------------------------------------- the checks catch what they should
_OUTSIDE = "Path(__file__).resolve().parents[2].parent / 'shared' / 'fixtures'"
BAD_TESTS = [
    f"F = {_OUTSIDE}\ndef load(name):\n    p = F / name\n    if not p.exists():\n        pytest.skip('gone')\n",
    f"F = {_OUTSIDE}\n@pytest.mark.skipif(not F.exists(), reason='gone')\ndef test_x():\n    pass\n",
    "import os\nF = os.path.join(os.path.dirname(__file__), 'data', 'x.csv')\n"
    "def test_x():\n    if not os.path.exists(F):\n        pytest.skip('gone')\n",
]
GOOD_TESTS = [
    "import os, sys\nS = os.path.join(os.path.dirname(sys.executable), 'sinter')\n"
    "@pytest.mark.skipif(not os.path.exists(S), reason='sinter not installed')\ndef test_x():\n    pass\n",
    "def test_x():\n    lib = pytest.importorskip('ldpc')\n",
    "@pytest.mark.skipif(not os.path.isdir('/proc'), reason='needs /proc')\ndef test_x():\n    pass\n",
]


@pytest.mark.parametrize("src", BAD_TESTS)
def test_detects_skips_for_missing_files(src):
    assert skips_for_missing_files(ast.parse(src))


@pytest.mark.parametrize("src", GOOD_TESTS)
def test_allows_skips_for_missing_packages(src):
    assert not skips_for_missing_files(ast.parse(src))


def test_detects_paths_above_the_root():
    tree = ast.parse(f"F = {_OUTSIDE}\nG = Path(__file__).parents[1] / ('.' + '.')\nH = ROOT / {_UP!r}\n")
    lines = sorted(n for n, _ in escaping_paths(tree, Path("tests/sims/test_x.py")))
    assert lines == [1, 3]  # parents[2].parent is 4 levels up from tests/sims/test_x.py (3 deep)
    ok = ast.parse("R = Path(__file__).resolve().parents[2]\n")
    assert not escaping_paths(ok, Path("tests/sims/test_x.py"))


@pytest.mark.parametrize("text", [
    "See `" + _UP + "/shared/DESIGN.md` for the architecture.",
    "measured in ``" + _UP + "/shared/research/predecoder.md`` §2",
    "Notation as in ``shared/research/qldpc" + ".md`` §1",
    "(research" + " note §4.1)",
    "the reference table of research" + "/classical.md §2.4",
    "fixtures in /work" + "/shared/fixtures",
])
def test_detects_forbidden_text(text):
    assert forbidden_references(text)


@pytest.mark.parametrize("text", [
    "See [docs/architecture.md](docs/architecture.md).",
    "Relay-BP (arXiv:2506.01779), doi:10.1109/TIT.2010.2043769, benchmarks/README.md",
    "def test_info_sets_of_the_research_note():",
    "github.com/trmue/relay, tests/testdata/bicycle_bivariate/",
])
def test_allows_citations_and_repository_paths(text):
    assert not forbidden_references(text)


def test_every_package_is_listed_for_the_wheel():
    """A subpackage missing from ``[tool.setuptools] packages`` works in the editable install that
    ``make test`` uses but is absent from a built wheel (``qdecode.hw.rtl`` once was)."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    cfg = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = set()
    for name, folder in cfg["package-dir"].items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder)
            found.add(".".join([name, *rel.parts]))
    assert found <= listed, sorted(found - listed)
