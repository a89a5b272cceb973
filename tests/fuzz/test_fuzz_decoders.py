"""Property-based fuzzing of every registered syndrome decoder over random detector error models.

For each quantum decoder in the registry (at its default parameters) and each DEM drawn by
:func:`tests.fuzz.dem_strategy.dems`, the decoder either refuses at construction with a one-line
:class:`~qdecode.decoders.base.DecoderInputError`, or it decodes, and then:

* predictions are uint8 ``(S, k)`` and bit-packed ones uint8 ``(S, ceil(k/8))``;
* a zero syndrome gives no flip when every probability is below one half;
* the batch, single-shot and bit-packed paths agree;
* the same input gives the same output, from the same decoder and from a fresh build;
* where the decoder gives a per-column estimate, it is uint8 ``(S, n)``, and on the shots it
  reports converged (all shots when it reports nothing) ``H e = s``;
* every exception is a one-line :class:`DecoderInputError`.

Syndromes: shots sampled from the DEM itself and the all-zero one (feasible: every invariant
applies), and random ones, which no error of the model may produce: a decoder answers them with
the right shape, or refuses in one line (exact and matching decoders cannot answer them).

How many DEMs: the hypothesis profile ``ci`` (``make test``: derandomized, :data:`CI_EXAMPLES`
per decoder) or ``fuzz`` (``make fuzz``: random, ``QDECODE_FUZZ_EXAMPLES`` per decoder,
default 2000), chosen by ``HYPOTHESIS_PROFILE``. Every model that once failed is kept in
:data:`REGRESSIONS` and runs on every decoder, whatever the profile.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import stim
from hypothesis import HealthCheck, given, settings

from qdecode.decoders.base import DecoderCapabilityError, DecoderInputError
from qdecode.decoders.registry import DecoderSpec, decoder_names, get_entry
from qdecode.problem import DecodingProblem
from tests.fuzz.dem_strategy import dems, describe

QUANTUM = [name for name in decoder_names() if get_entry(name).kind == "quantum"]
CI_EXAMPLES = 25
#: pytest-timeout per test (seconds): a hang fails the test instead of stalling the suite. Generous,
#: because a test's first calls compile kernels on a fresh clone (per-call budgets, with the
#: compiles warmed up: tests/decoders/test_no_hang.py).
TIMEOUT_S = 1200

settings.register_profile("ci", max_examples=CI_EXAMPLES, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                          print_blob=True)
settings.register_profile("fuzz", max_examples=int(os.environ.get("QDECODE_FUZZ_EXAMPLES", "2000")), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                          print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

#: DEMs that once broke a decoder (found by this fuzzer or reported by users), with what broke.
REGRESSIONS = {
    # window: isolated detectors made the round inference loop forever (issue: qd-window hung on
    # sinter's observable-offset circuits)
    "isolated-detectors": "error(0.1) D0\nerror(0.1) D1\nerror(0.1) D2\nerror(0.1) L0\n"
                          "detector D0\ndetector D1\ndetector D2\nlogical_observable L0\n",
    # nn-pymatching / chromobius: no detectors at all (IndexError; zero-stride packed array)
    "no-detectors": "error(0.1) L0\nlogical_observable L0\n",
    "empty": "",
    # pymatching-correlated: a '^' component flipping only an observable raised PyMatching's ValueError
    "undetectable-component": "error(0.5) D0\nerror(0.5) D0 ^ L0\ndetector[herald] D0\nlogical_observable L0\n",
    # heralds (not a past failure: the herald paths on every decoder whatever hypothesis draws): an erasure-like
    # herald D3 on a repetition code, its effect split off by '^', and a herald whose only effect is an observable
    "heralds": "error(0.05) D0 D1\nerror(0.05) D1 D2\nerror(0.05) D0 L0\nerror(0.05) D2\nerror(0.1) D3\n"
               "error(0.1) D3 ^ D0 D1\nerror(0.02) D4\nerror(0.02) D4 L0\ndetector D0\ndetector D1\ndetector D2\n"
               "detector[herald] D3\ndetector[herald] D4\nlogical_observable L0\n",
    "no-observables": "error(0.1) D0\ndetector D0\n",
    # matching decoders: a random syndrome on detectors no mechanism touches raised PyMatching's
    # multi-line ValueError ("No perfect matching could be found...") instead of a one-line refusal
    "detectors-without-mechanisms": "repeat 2 {\n    detector D0\n    shift_detectors 1\n}\ndetector D2\n",
    # chromobius: 4th coordinates that are not a colour code; it compiled, then failed on sampled
    # shots ("No perfect matching"); now refused at compile time
    "chromobius-not-a-colour-code": (
        "error(0.003421995) L0\nerror(0.000118492) D0 L0\nerror(0.5) L0\nerror(8.437e-05) D0\n"
        "error(0.00999977) D1 D2 D3 L0\nerror(0.5) D1 D2 D3\nerror(0.025471141) D3 L0\nerror(3.532e-06) D3\n"
        "error(0.043042164) D1 D2 D3 L0\ndetector(6, 6, 4, 0) D0\ndetector(-1, -3, 1, 3) D1\n"
        "detector(-3, 0, 2, 0) D2\ndetector(1, -2, -3, 3) D3\nlogical_observable L0\n"),
}


SAMPLED = 24


def _syndromes(dem: stim.DetectorErrorModel, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(feasible, random)`` uint8 syndromes: shots sampled from the model then the zero one
    ``(SAMPLED + 1, m)``, and 6 uniformly random ones (which no error of the model may produce)."""
    m = dem.num_detectors
    sampled, _, _ = dem.compile_sampler(seed=seed).sample(SAMPLED)
    rng = np.random.default_rng(seed)
    feasible = np.concatenate([sampled.astype(np.uint8), np.zeros((1, m), dtype=np.uint8)])
    return feasible, rng.integers(0, 2, size=(6, m), dtype=np.uint8)


def _one_line_refusal(name: str, exc: Exception) -> None:
    assert isinstance(exc, DecoderInputError), f"{name}: {type(exc).__name__} instead of DecoderInputError: {exc}"
    assert str(exc) and "\n" not in str(exc), f"{name}: refusal must be one line: {exc!r}"


def check_decoder_on(name: str, text: str) -> None:
    """Every invariant of the module docstring for decoder ``name`` on the DEM ``text``."""
    dem = stim.DetectorErrorModel(text)
    problem = DecodingProblem.from_dem(dem)
    n, k = problem.num_errors, problem.num_observables
    try:
        dec = DecoderSpec.create(name).build(problem)
    except Exception as exc:  # noqa: BLE001 - the refusal's type is what is checked
        _one_line_refusal(name, exc)
        return
    dets, random = _syndromes(dem, seed=len(text))
    S = dets.shape[0]

    pred = dec.predict_observables_batch(dets)
    assert pred.shape == (S, k) and pred.dtype == np.uint8
    assert set(np.unique(pred)) <= {0, 1}
    if np.all(problem.priors < 0.5):
        assert not pred[-1].any(), "zero syndrome must give no flip"

    packed = dec.predict_observables_packed(np.packbits(dets, axis=1, bitorder="little"))
    assert packed.shape == (S, (k + 7) // 8) and packed.dtype == np.uint8
    assert np.array_equal(np.unpackbits(packed, axis=1, count=k, bitorder="little"), pred), "packed != batch"
    for i in (0, S // 2, S - 1):
        assert np.array_equal(dec.predict_observables_batch(dets[i:i + 1])[0], pred[i]), f"shot {i} alone"

    assert np.array_equal(dec.predict_observables_batch(dets), pred), "same decoder, same input"
    fresh = DecoderSpec.create(name).build(problem)
    assert np.array_equal(fresh.predict_observables_batch(dets), pred), "fresh build, same input"

    try:  # random syndromes: an answer of the right shape, or a one-line refusal (no error produces them)
        out = dec.predict_observables_batch(random)
        assert out.shape == (random.shape[0], k) and out.dtype == np.uint8
        assert np.array_equal(dec.predict_observables_batch(random[:1])[0], out[0]), "random shot alone"
    except Exception as exc:  # noqa: BLE001
        _one_line_refusal(name, exc)

    dec.last_info = None
    if not dec.gives_errors:  # observable-only decoders (matching graphs, Chromobius, networks) say so
        with pytest.raises(DecoderCapabilityError) as info:
            dec.decode_batch(dets)
        _one_line_refusal(name, info.value)
        return
    errors = dec.decode_batch(dets)
    assert errors.shape == (S, n) and errors.dtype == np.uint8
    info = dec.last_info
    converged = (np.ones(S, dtype=bool) if info is None or info.converged is None
                 else np.asarray(info.converged, dtype=bool))
    H = problem.H.toarray().astype(np.int64)
    residual = ((errors.astype(np.int64) @ H.T) & 1).astype(np.uint8) ^ dets
    bad = np.flatnonzero(converged & residual.any(axis=1))
    assert bad.size == 0, f"{name}: shots {bad.tolist()} reported converged (or unflagged) but H e != s"
    assert np.array_equal(dec.decode(dets[0]), errors[0]), "decode(s) != decode_batch row"


@pytest.mark.timeout(TIMEOUT_S)
@pytest.mark.parametrize("case", sorted(REGRESSIONS))
@pytest.mark.parametrize("name", QUANTUM)
def test_regressions(name, case):
    check_decoder_on(name, REGRESSIONS[case])


@pytest.mark.timeout(TIMEOUT_S)
@pytest.mark.parametrize("name", QUANTUM)
def test_random_dems(name):
    """Hypothesis over :func:`dems` (profile in the module docstring); a failure prints the DEM."""

    @settings(settings.get_profile(PROFILE))
    @given(text=dems())
    def run(text):
        try:
            check_decoder_on(name, text)
        except AssertionError as exc:
            raise AssertionError(f"{name} on DEM [{describe(text)}]: {exc}") from None

    run()
