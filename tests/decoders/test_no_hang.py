"""No decoder hangs: every registered syndrome decoder, on a small adversarial set of models.

Each decoder states its work bound in its class docstring (``Work bound:``); this test checks
that the bound is real on models built to stress it, with shots sampled at high noise:

* ``chain``: 80 detectors in a line (a repetition code), both ends on the boundary;
* ``isolated``: 40 detectors, each flipped only by its own mechanism (nothing to match or slice);
* ``dense``: 14 detectors and 60 hyperedges of 3-6 detectors each (BP does not converge, OSD
  and the searches work hardest);
* ``disconnected``: two chains and a dense block side by side, with no mechanism joining them;
* ``near-half``: the chain with every probability at 0.45 (syndromes of maximal weight);
* ``circuit``: the decoder's own accepted circuit DEM (``decoder_problems.accepted_dem``).

A decoder either refuses a model at construction, in one line, or decodes every shot; after one
untimed call (numba compiles), no call may take longer than :data:`CALL_BUDGET_S`. The worst
call of each decoder is printed (``pytest -s``) for the record in ``benchmarks/README.md``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import stim

from qdecode.decoders.base import DecoderInputError
from qdecode.decoders.registry import DecoderSpec
from qdecode.problem import DecodingProblem
from tests.decoders.decoder_problems import QUANTUM, accepted_dem

#: Seconds one call (a batch of :data:`SHOTS` shots, or one shot) may take. Generous: a shared
#: 2-core machine; the point is that no call runs unbounded.
CALL_BUDGET_S = 60.0
SHOTS = 64
#: Shots per batch where one shot is one integer program (HiGHS, about 0.5 s on ``dense``).
FEW_SHOTS = {"mle": 8}


def _chain(n: int, p: float, first: int = 0) -> list[str]:
    lines = [f"error({p}) D{first} L0", f"error({p}) D{first + n - 1}"]
    lines += [f"error({p}) D{first + i} D{first + i + 1}" for i in range(n - 1)]
    return lines + [f"detector({i}, 0, 0) D{first + i}" for i in range(n)]


def _dense(m: int, n: int, p: float, first: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    lines = []
    for j in range(n):
        dets = np.sort(rng.choice(m, size=int(rng.integers(3, 7)), replace=False)) + first
        obs = " L0" if j % 3 == 0 else ""
        lines.append(f"error({p}) " + " ".join(f"D{d}" for d in dets) + obs)
    return lines + [f"detector D{first + i}" for i in range(m)]


def adversarial_dem(kind: str, name: str) -> stim.DetectorErrorModel:
    if kind == "circuit":
        return accepted_dem(name)
    if kind == "chain":
        lines = _chain(80, 0.05)
    elif kind == "isolated":
        lines = [f"error(0.1) D{i}" for i in range(40)] + ["error(0.1) L0"]
    elif kind == "dense":
        lines = _dense(14, 60, 0.08, 0, seed=1)
    elif kind == "disconnected":
        lines = _chain(20, 0.05) + _chain(20, 0.05, first=20) + _dense(10, 30, 0.05, 40, seed=2)
    elif kind == "near-half":
        lines = _chain(80, 0.45)
    else:  # pragma: no cover
        raise KeyError(kind)
    return stim.DetectorErrorModel("\n".join(lines + ["logical_observable L0"]))


KINDS = ["chain", "isolated", "dense", "disconnected", "near-half", "circuit"]


def _timed(fn, arg) -> float:
    t0 = time.perf_counter()
    fn(arg)
    return time.perf_counter() - t0


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", QUANTUM)
def test_every_call_returns_within_budget(name):
    worst = (0.0, "")
    for kind in KINDS:
        dem = adversarial_dem(kind, name)
        try:
            dec = DecoderSpec.create(name).build(DecodingProblem.from_dem(dem))
        except DecoderInputError as exc:
            assert "\n" not in str(exc)
            continue
        dets, _, _ = dem.compile_sampler(seed=3).sample(FEW_SHOTS.get(name, SHOTS))
        dets = dets.astype(np.uint8)
        heaviest = dets[int(np.argmax(dets.sum(axis=1)))][None]
        dec.predict_observables_batch(dets[:2])  # compile outside the timed calls
        for what, arg in (("batch", dets), ("one shot", heaviest)):
            seconds = _timed(dec.predict_observables_batch, arg)
            assert seconds < CALL_BUDGET_S, f"{name} on {kind} ({what}): {seconds:.1f} s"
            worst = max(worst, (seconds, f"{kind}, {what}"))
    print(f"\nworst call: {name}: {worst[0] * 1e3:.1f} ms ({worst[1]})")
