"""Docstring examples run as doctests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "qdecode.problem", "qdecode.decoders.registry", "qdecode.sims.stats", "qdecode.sims.store",
    "qdecode.sims.channels", "qdecode.sims.finite_length", "qdecode.decoders.bm", "qdecode.codes.gf2m",
    "qdecode.codes.bch", "qdecode.codes.rs", "qdecode.codes.crc", "qdecode.codes.polar", "qdecode.codes.pac",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
