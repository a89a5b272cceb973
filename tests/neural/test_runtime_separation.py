"""The neural runtime is separate from training (issue 19).

* No module under ``qdecode/decoders/`` imports a trainer (``qdecode.neural.*_train``) or the
  sequential-MAP teacher (``qdecode.neural.crisp_teacher``), lazy imports included (every
  ``import`` / ``from ... import`` in the file, read with :mod:`ast`).
* :mod:`qdecode.neural.runtime` imports without torch (and without onnxruntime).
* The model directory is located in one place: :func:`qdecode.neural.runtime.models_dir`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported_names(path: Path) -> set[str]:
    """Every module name an import statement in ``path`` names (absolute imports; ``from pkg import
    a`` yields ``pkg`` and ``pkg.a``; relative imports resolved against ``qdecode.decoders``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = ["qdecode", "decoders"][: max(0, 2 - (node.level - 1))]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def _is_training_module(name: str) -> bool:
    parts = name.split(".")
    if parts[:2] != ["qdecode", "neural"] or len(parts) < 3:
        return False
    return parts[2].endswith("_train") or parts[2] == "crisp_teacher"


def test_decoders_never_import_trainers_or_the_teacher():
    files = sorted((ROOT / "qdecode" / "decoders").rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): sorted(n for n in _imported_names(f) if _is_training_module(n)) for f in files}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"decoder modules import training code: {bad}"


def test_the_checker_sees_lazy_and_from_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def g():\n    from qdecode.neural.crisp_train import encode_v\n"
                 "    from qdecode.neural import lm_train\n", encoding="utf-8")
    names = _imported_names(f)
    assert _is_training_module("qdecode.neural.crisp_train") and "qdecode.neural.crisp_train" in names
    assert "qdecode.neural.lm_train" in names
    assert not _is_training_module("qdecode.neural.runtime")


def test_runtime_imports_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['onnxruntime'] = None\n"
        "import qdecode.neural.runtime as rt\n"
        "assert rt.models_dir().is_dir() and 'polar32_16' in rt.shipped_models('crisp')\n"
        "import qdecode.decoders.crisp, qdecode.decoders.lm_transformer, qdecode.neural.predecoder_runtime\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_one_model_directory():
    from qdecode.decoders.crisp import models_dir
    from qdecode.decoders.lm_transformer import lm_models_dir
    from qdecode.neural import runtime

    assert models_dir() == lm_models_dir() == runtime.models_dir() == runtime.MODELS_DIR
    assert (runtime.MODELS_DIR / "lm_byte.onnx").is_file()
    # nothing else computes the folder: no other module joins a path with "models" itself
    for folder in ("qdecode", "neural", "sims", "codes"):
        for f in sorted((ROOT / folder).rglob("*.py")):
            if f == ROOT / "neural" / "runtime.py":
                continue
            text = f.read_text(encoding="utf-8")
            assert '/ "models"' not in text, f"{f.relative_to(ROOT)} locates the model directory itself"
