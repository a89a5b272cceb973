"""Every BP-family kernel path gives bit for bit the results pinned in ``tests/data/bp_golden.json``.

The digests were written by ``tests/data/generate_bp_golden.py`` before the min-sum updates were
gathered into :mod:`qdecode.kernels.minsum`; they cover flooding (lanes and scalar), layered,
product-sum, fixed point, Relay-BP, memory BP, GDG and BP+OSD.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_bp_golden", DATA / "generate_bp_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOLDEN = json.loads((DATA / "bp_golden.json").read_text())["digests"]


@pytest.fixture(scope="module")
def generated():
    return _generator().compute()


def test_every_configuration_is_pinned(generated):
    assert sorted(generated) == sorted(GOLDEN)


@pytest.mark.parametrize("label", sorted(GOLDEN))
def test_bit_identical_to_golden(generated, label):
    assert generated[label] == GOLDEN[label]
