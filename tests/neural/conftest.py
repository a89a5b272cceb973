"""Shared fixtures of the neural pre-decoder tests: small SD6 problems (built once per session)."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def sd6_problem(d: int, p: float = 0.005):
    from qdecode.problem import DecodingProblem
    from qdecode.sims.circuits import build_circuit

    circ = build_circuit("surface", d=d, rounds=d, noise="sd6", p=p)
    return circ, DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))


@pytest.fixture(scope="session")
def d5():
    return sd6_problem(5)


@pytest.fixture(scope="session")
def d7():
    return sd6_problem(7)


@pytest.fixture(scope="session")
def sd6():
    """``sd6(d, p) -> (circuit, problem)``, cached."""
    return sd6_problem
