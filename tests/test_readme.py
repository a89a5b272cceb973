"""Every command block of the README runs, in order, at small sizes, in one scratch directory.

The README promises this (section "Command line"). Blocks are read from ``README.md`` itself,
so an example that breaks, or a flag that is renamed, fails here:

* ```` ```bash ```` blocks: each command (backslash continuations joined, comments dropped).
  ``qdecode ...`` runs in this process through :func:`qdecode.cli.main.main`; other programs
  (``stim``, ``sinter``, ``python - <<'PY'`` here-documents) run in ``bash`` with the virtual
  environment's ``bin`` first on ``PATH``. ``make ...`` lines are what CI itself runs, and the
  command that runs sinter's test file is ``tests/test_sinter_suite.py``: both are skipped.
* ```` ```toml ```` blocks: a recipe, written to ``recipe.toml`` and swept.
* ```` ```python ```` blocks: executed as a script.

Sizes are cut by :func:`shrink` (shots, errors), the one place that changes a command.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from qdecode.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK_RE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
HEREDOC_RE = re.compile(r"^(.*<<\s*'(\w+)'\n.*?\n\2)$", re.S | re.M)
#: Commands not run here, and why (matched on the command's start).
SKIPPED = {
    "make ": "CI runs make itself",
    "SINTER_PYTEST_CUSTOM_DECODERS=": "tests/test_sinter_suite.py runs sinter's test file",
}
SMALL_SHOTS = 400


def shrink(command: str) -> str:
    """The command at test size: at most 400 shots, 10 errors per task (sinter: 800 shots, 20 errors)."""
    command = re.sub(r"--max-shots\s+[\d_]+", f"--max-shots {SMALL_SHOTS}", command)
    command = re.sub(r"--max-errors\s+[\d_]+", "--max-errors 10", command)
    command = re.sub(r"(--(?:num-)?shots)\s+(\d+)", lambda m: f"{m.group(1)} {min(int(m.group(2)), SMALL_SHOTS)}",
                     command)
    if command.startswith("qdecode learn-noise"):
        command += f" --min-shots {SMALL_SHOTS}"
    if command.startswith("qdecode sweep") and "--max-shots" not in command:
        command += f" --max-shots {SMALL_SHOTS} --max-errors 10"  # a recipe's own stopping rule, cut
    if " sinter collect " in f" {command} ":  # more than qdecode's cut, so a resumed qdecode CSV grows
        command = re.sub(r"--max_errors\s+\d+", "--max_errors 20", command) + f" --max_shots {2 * SMALL_SHOTS}"
    return command


def commands(block: str) -> list[str]:
    """The commands of a bash block: here-documents whole, continuations joined, comments dropped."""
    out: list[str] = []
    pieces = HEREDOC_RE.split(block)
    # re.split with two groups yields: text, heredoc, delimiter, text, ...
    for i in range(0, len(pieces), 3):
        text = pieces[i].replace("\\\n", " ")
        for line in text.splitlines():
            line = _drop_comment(line).strip()
            if line:
                out.append(" ".join(line.split()))
        if i + 1 < len(pieces):
            out.append(pieces[i + 1])
    return out


def _drop_comment(line: str) -> str:
    """``line`` without a trailing ``# comment`` (a ``#`` inside quotes is kept)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def readme_steps() -> list[tuple[str, str]]:
    """``(kind, text)`` for every step of the README in order: ``cmd``, ``toml`` or ``python``."""
    steps: list[tuple[str, str]] = []
    for lang, body in BLOCK_RE.findall(README.read_text()):
        if lang == "bash":
            steps += [("cmd", c) for c in commands(body)]
        elif lang in ("toml", "python"):
            steps.append((lang, body))
    return steps


def _run_shell(command: str, cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "NUMBA_NUM_THREADS": "1"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def _run(kind: str, text: str, cwd: Path) -> None:
    if kind == "toml":
        (cwd / "recipe.toml").write_text(text)
        text = "qdecode sweep recipe.toml"
    if kind == "python":
        done = subprocess.run([sys.executable, "-c", text], cwd=cwd, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{text}\n{done.stderr[-2000:]}"
        return
    command = shrink(text)
    if command.startswith("qdecode "):
        assert main(shlex.split(command)[1:]) == 0, command
    else:
        _run_shell(command, cwd)


def test_the_readme_lists_its_blocks_as_expected():
    steps = readme_steps()
    kinds = {k for k, _ in steps}
    assert kinds == {"cmd", "toml", "python"}
    assert any(t.startswith("qdecode predict") for _, t in steps)
    assert commands("a \\\n  --b 1  # note\nc '#x'\n") == ["a --b 1", "c '#x'"]
    assert shrink("qdecode sweep --max-shots 1_000_000 --max-errors 1000") == \
        "qdecode sweep --max-shots 400 --max-errors 10"


def test_every_readme_command_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    ran = 0
    for kind, text in readme_steps():
        if kind == "cmd" and any(text.startswith(prefix) for prefix in SKIPPED):
            continue
        if kind == "cmd" and "--simulate" in text and shutil.which("iverilog") is None:
            warnings.warn(f"not run (Icarus Verilog missing; make test installs it): {text}")
            continue
        _run(kind, text, tmp_path)
        ran += 1
    assert ran >= 25
    # "Your own circuits": sinter resumed qdecode's CSV under the same strong_ids: qdecode stopped at 10 errors
    # or 400 shots, sinter carried each row on to its own stopping rule (20 errors or 800 shots)
    from qdecode.sims.store import merge_rows, read_rows

    pooled = [r for r in merge_rows(read_rows(tmp_path / "pooled.csv")).values() if r.decoder.startswith("qd-bposd")]
    assert len(pooled) == 6 and all(r.errors >= 20 or r.shots >= 2 * SMALL_SHOTS for r in pooled), \
        [(r.json_metadata, r.shots, r.errors) for r in pooled]
