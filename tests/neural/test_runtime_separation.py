"""The neural runtime is separate from training.

* No module under ``qdecode/decoders/`` imports a trainer (``qdecode.neural.*_train``) or the
  sequential-MAP teacher (``qdecode.neural.crisp_teacher``), lazy imports included (every
  ``import`` / ``from ... import``, read by ``tests/import_scan.py``).
* :mod:`qdecode.neural.runtime` imports without torch (and without onnxruntime).
* The model directory is located in one place: :func:`qdecode.neural.runtime.models_dir`.
"""

from __future__ import annotations

import subprocess
import sys

from tests.import_scan import ROOT, SOURCES, all_imports


def _is_training_module(name: str) -> bool:
    parts = name.split(".")
    if parts[:2] != ["qdecode", "neural"] or len(parts) < 3:
        return False
    return parts[2].endswith("_train") or parts[2] == "crisp_teacher"


def test_decoders_never_import_trainers_or_the_teacher():
    # tests/import_scan.py reads every import, lazy ones included (its own test: tests/test_layering.py)
    imports = [i for i in all_imports() if i.module.startswith("qdecode.decoders.")]
    assert imports
    bad = [f"{i.file}:{i.line}: {i.target}" for i in imports if _is_training_module(i.target)]
    assert not bad, f"decoder modules import training code: {bad}"
    assert _is_training_module("qdecode.neural.crisp_train") and not _is_training_module("qdecode.neural.runtime")


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
    for folder in SOURCES:  # the source folders, as pyproject's package-dir states them
        for f in sorted((ROOT / folder).rglob("*.py")):
            if f == ROOT / "neural" / "runtime.py":
                continue
            text = f.read_text(encoding="utf-8")
            assert '/ "models"' not in text, f"{f.relative_to(ROOT)} locates the model directory itself"
