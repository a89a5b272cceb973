"""No dead code: vulture finds nothing in the package at 80% confidence, with no whitelist.

At 80% vulture reports what is certainly unused: unreachable code, unused imports and unused
arguments or local variables. Below that it also lists functions, methods and attributes that
nothing in the scanned folders names, which for a library includes its public API, torch's
``forward``, numba's ``@overload`` implementations and attributes set on foreign objects; those are
reviewed by hand (``vulture qdecode codes sims neural tests benchmarks --min-confidence 60``) rather
than whitelisted. An argument an interface requires but an implementation does not read is the
usual finding: use it (check it) or drop it where no caller passes it; do not add a whitelist.
"""

from __future__ import annotations

import subprocess
import sys

from tests.import_scan import ROOT, SOURCES

#: the source folders, from pyproject's ``[tool.setuptools] package-dir`` (read by tests/import_scan.py)
FOLDERS = tuple(SOURCES)
MIN_CONFIDENCE = 80


def test_vulture_finds_no_dead_code():
    proc = subprocess.run(
        [sys.executable, "-m", "vulture", *FOLDERS, "--min-confidence", str(MIN_CONFIDENCE)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode != 2, f"vulture could not run: {proc.stderr}"  # 2: bad arguments / not installed
    assert proc.returncode == 0 and not proc.stdout.strip(), (
        f"dead code (vulture --min-confidence {MIN_CONFIDENCE}; remove it, or fix the cause):\n"
        + proc.stdout + proc.stderr)
