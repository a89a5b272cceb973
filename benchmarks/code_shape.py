"""Shape of the source: the widest function signatures and the longest functions.

For every ``.py`` under ``qdecode/``, ``codes/``, ``sims/`` and ``neural/`` (functions, methods and
nested functions, each on its own): the top ``--top`` functions by positional parameter count
(positional-only and ordinary parameters; ``self`` / ``cls`` of a method not counted) and by length
(lines from the ``def`` to the last line of the body, decorators excluded), and how many exceed
``--max-params`` parameters / ``--max-lines`` lines. A long function may say why it must be long
with a comment containing ``long:`` as the first line of its body (after the docstring, or before
it) or on the line right above its ``def`` / decorators; such functions are marked ``[long:]``.
``tests/test_code_shape.py`` holds the limits (12 parameters in ``qdecode/kernels``, 120 lines
everywhere without the marker).

Usage:
  python benchmarks/code_shape.py [--root .] [--top 10] [--max-params 12] [--max-lines 120]
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("qdecode", "codes", "sims", "neural")
#: the marker a long function's why-comment carries
LONG_MARKER = "long:"


@dataclass(frozen=True)
class FunctionShape:
    """One function: ``file`` relative to the root, ``name`` qualified (``Class.method``, ``outer.inner``)."""

    file: str
    line: int
    name: str
    params: int
    lines: int
    justified: bool  # carries a ``long:`` comment


def positional_params(node: ast.FunctionDef | ast.AsyncFunctionDef, is_method: bool) -> int:
    """Positional-only plus ordinary parameters, without a method's ``self`` / ``cls``."""
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    if is_method and names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def has_long_comment(node: ast.FunctionDef | ast.AsyncFunctionDef, src: list[str]) -> bool:
    """A comment with :data:`LONG_MARKER` right above the def (or its decorators), or before the first
    statement of the body that is not the docstring."""
    top = min([node.lineno] + [d.lineno for d in node.decorator_list])
    body = node.body
    first = body[0]
    after = node.lineno + 1  # comments between the def and the first statement (after a docstring)
    doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
    if doc and len(body) > 1:
        after = first.end_lineno + 1
        first = body[1]
    candidates = [top - 1, *range(top, node.lineno), *range(after, first.lineno)]
    for ln in candidates:
        if 1 <= ln <= len(src):
            text = src[ln - 1].strip()
            if text.startswith("#") and LONG_MARKER in text:
                return True
    return False


def shapes(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[FunctionShape]:
    """Every function under ``root / package`` for each package."""
    out: list[FunctionShape] = []
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            src = text.splitlines()
            tree = ast.parse(text)
            rel = path.relative_to(root).as_posix()

            def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        name = prefix + child.name
                        out.append(FunctionShape(rel, child.lineno, name, positional_params(child, in_class),
                                                 child.end_lineno - child.lineno + 1, has_long_comment(child, src)))
                        visit(child, name + ".", False)
                    elif isinstance(child, ast.ClassDef):
                        visit(child, prefix + child.name + ".", True)
                    else:
                        visit(child, prefix, in_class)

            visit(tree, "", False)
    return out


def report(fs: list[FunctionShape], top: int, max_params: int, max_lines: int) -> str:
    """Two markdown tables and the counts."""
    rows = [f"widest signatures (positional parameters), top {top}:", "", "| params | function | file:line |",
            "|---|---|---|"]
    for f in sorted(fs, key=lambda f: (-f.params, f.file, f.line))[:top]:
        rows.append(f"| {f.params} | `{f.name}` | {f.file}:{f.line} |")
    rows += ["", f"longest functions (lines), top {top}:", "", "| lines | function | file:line |", "|---|---|---|"]
    for f in sorted(fs, key=lambda f: (-f.lines, f.file, f.line))[:top]:
        mark = " [long:]" if f.justified else ""
        rows.append(f"| {f.lines} | `{f.name}`{mark} | {f.file}:{f.line} |")
    wide = [f for f in fs if f.params > max_params]
    wide_k = [f for f in wide if f.file.startswith("qdecode/kernels/")]
    long_ = [f for f in fs if f.lines > max_lines]
    long_bare = [f for f in long_ if not f.justified]
    rows += ["", f"functions: {len(fs)}; over {max_params} parameters: {len(wide)} ({len(wide_k)} in qdecode/kernels); "
             f"over {max_lines} lines: {len(long_)} ({len(long_bare)} without a '{LONG_MARKER}' comment)"]
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]), help="repository root")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max-params", type=int, default=12)
    ap.add_argument("--max-lines", type=int, default=120)
    args = ap.parse_args()
    print(report(shapes(Path(args.root)), args.top, args.max_params, args.max_lines))


if __name__ == "__main__":
    main()
