"""Kernel signatures stay narrow and functions stay short, or say why not.

Two rules, measured by ``benchmarks/code_shape.py`` (the same code, imported from there):

- no function in ``qdecode/kernels`` takes more than :data:`MAX_PARAMS` positional parameters: what
  travels together goes into a named tuple (graph / problem arrays, per-lane state, scratch buffers,
  parameters; ``typing.NamedTuple``, which numba types as a tuple, so jitted code and
  ``NUMBA_DISABLE_JIT=1`` both take it);
- no function in ``qdecode/``, ``codes/``, ``sims/`` or ``neural/`` is longer than :data:`MAX_LINES`
  lines (``def`` to its last line) unless a comment containing ``long:`` says why it must be, as the
  first line of its body (after the docstring) or on the line right above its ``def`` / decorators,
  e.g. ``# long: one function on purpose (helper splits measured 1.6-2x slower)``.

The allow-lists hold what is not done yet, each with its reason; an entry that no longer applies fails
:func:`test_allow_lists_are_current`, so they only shrink.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_PARAMS = 12
MAX_LINES = 120

_SPEC = importlib.util.spec_from_file_location("code_shape", ROOT / "benchmarks" / "code_shape.py")
code_shape = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("code_shape", code_shape)  # dataclasses look their module up there
_SPEC.loader.exec_module(code_shape)

#: (file, function) -> reason, for kernel functions over MAX_PARAMS positional parameters (empty since 2026-12-05:
#: the last 18, the BP family and the range kernels, take named tuples)
PARAMS_ALLOWED: dict[tuple[str, str], str] = {}

#: (file, function) -> reason, for functions over MAX_LINES lines without a 'long:' comment
LONG_ALLOWED: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def functions():
    return code_shape.shapes(ROOT)


def test_kernel_signatures_are_narrow(functions):
    wide = sorted(f"{f.file}:{f.line} {f.name} ({f.params} positional parameters)" for f in functions
                  if f.file.startswith("qdecode/kernels/") and f.params > MAX_PARAMS
                  and (f.file, f.name) not in PARAMS_ALLOWED)
    assert not wide, (f"kernel functions over {MAX_PARAMS} parameters (group them in named tuples):\n"
                      + "\n".join(wide))


def test_long_functions_say_why(functions):
    long_ = sorted(f"{f.file}:{f.line} {f.name} ({f.lines} lines)" for f in functions
                   if f.lines > MAX_LINES and not f.justified and (f.file, f.name) not in LONG_ALLOWED)
    assert not long_, (f"functions over {MAX_LINES} lines without a '{code_shape.LONG_MARKER}' comment (split "
                       "them, or say why they must be long):\n" + "\n".join(long_))


def test_allow_lists_are_current(functions):
    """Every allow-listed function still exists and still breaks its rule (fixed ones leave the list)."""
    by_key = {(f.file, f.name): f for f in functions}
    stale = [k for k in PARAMS_ALLOWED if k not in by_key or by_key[k].params <= MAX_PARAMS]
    stale += [k for k in LONG_ALLOWED if k not in by_key or by_key[k].lines <= MAX_LINES or by_key[k].justified]
    assert not stale, f"allow-list entries that no longer apply (remove them): {stale}"


def test_long_marker_is_found():
    """The marker is recognised above the def and as the body's first line after the docstring."""
    src = ('@deco\n# long: above\ndef f(a):\n    """doc."""\n    return a\n\n\n'
           'def g(a):\n    """doc."""\n    # long: first line\n    return a\n\n\n'
           'def h(a):\n    """doc."""\n    x = a  # long: not the first line\n    return x\n')
    import ast

    tree = ast.parse(src)
    lines = src.splitlines()
    found = {n.name: code_shape.has_long_comment(n, lines) for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert found == {"f": True, "g": True, "h": False}
