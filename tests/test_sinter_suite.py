"""sinter's own decoder test suite, unmodified, over every qdecode decoder of the sinter plug-in.

sinter ships ``sinter/_decoding/_decoding_test.py``, which runs each test on every decoder it
knows, including those a plug-in names in ``SINTER_PYTEST_CUSTOM_DECODERS``. This file runs the
installed copy of that file in a subprocess, as a user would::

    SINTER_PYTEST_CUSTOM_DECODERS=qdecode:sinter_decoders \\
        pytest <site-packages>/sinter/_decoding/_decoding_test.py -k qd- --timeout 300

and reads its JUnit report. Every case passes, except the expected refusals of :data:`REFUSALS`:
a decoder that cannot decode a model says so in ``compile_decoder_for_dem``, in one line. Each
row is a (decoder, sinter test) pair with the exact reason, and each row must be seen, for both
of sinter's decoding paths (in memory and through files); any other failure, and any timeout,
fails this test. No trivial model (the empty circuit, no detectors, no observables, invincible
observables, observable offsets) may be refused: :data:`TRIVIAL_TESTS` is checked against the table.

The table was made for :data:`SINTER_VERSION` (pinned in the ``test`` extra). To rerun it against
a newer sinter: install it, run this file (``pytest tests/test_sinter_suite.py``); the failure
message lists every unexpected failure and every row no longer seen, with sinter's messages;
update :data:`REFUSALS` and :data:`SINTER_VERSION` from it.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

SINTER_VERSION = "1.16.0"
#: pytest-timeout for each sinter case (seconds). A case's first call may compile numba kernels
#: on a fresh clone; a hang is what this catches.
CASE_TIMEOUT_S = 300

_NO_COLOUR = "chromobius cannot decode this DEM: each detector needs a 4th coordinate naming its basis and colour"
_NO_XYT = "nn-pymatching (model d5): every detector needs (x, y, t) coordinates for the neural pre-decoder"
_NOT_SURFACE = ("nn-pymatching (model d5): detector coordinates must be even x, y and integer t >= 0 "
                "(stim rotated surface code)")
_UNKNOWN_FOOTPRINT = "nn-pymatching (model d5): this problem has 3 footprint classes the model does not know"

#: (sinter decoder name, sinter test function) -> the start of the one-line refusal. Chromobius needs
#: colour-code detectors (4th coordinate = basis and colour); the shipped pre-decoders are for the
#: rotated surface code's (x, y, t) layout at the distance they were trained for.
REFUSALS = {
    ("qd-chromobius", "test_decode_repetition_code"): _NO_COLOUR,
    ("qd-chromobius", "test_decode_surface_code"): _NO_COLOUR,
    ("qd-chromobius", "test_post_selection"): _NO_COLOUR,
    ("qd-chromobius", "test_detector_counting"): _NO_COLOUR,
    ("qd-nn-pymatching", "test_decode_repetition_code"): _NO_XYT,
    ("qd-nn-pymatching", "test_decode_surface_code"): _UNKNOWN_FOOTPRINT,
    ("qd-nn-pymatching", "test_post_selection"): _NOT_SURFACE,
    ("qd-nn-pymatching", "test_detector_counting"): _NO_XYT,
}
#: sinter's tests on models with an obvious answer: no decoder may refuse them.
TRIVIAL_TESTS = frozenset({"test_empty", "test_no_detectors", "test_no_detectors_with_post_mask",
                           "test_no_observables", "test_invincible_observables", "test_observable_offsets_mod8",
                           "test_full_scale"})
#: sinter's decoding paths: in memory (``None``) and forced through files (``True``).
PATHS = ("None", "True")


def sinter_suite_file() -> pathlib.Path:
    """The installed ``sinter/_decoding/_decoding_test.py``."""
    spec = importlib.util.find_spec("sinter")
    assert spec is not None and spec.origin is not None, "sinter is not installed"
    return pathlib.Path(spec.origin).parent / "_decoding" / "_decoding_test.py"


def parse_case(name: str) -> tuple[str, str, str]:
    """``test_x[qd-bposd-None-3]`` -> ``("test_x", "qd-bposd", "None")`` (path ``""`` where the test has none)."""
    m = re.fullmatch(r"(\w+)\[(.*)\]", name)
    assert m, name
    test, params = m.groups()
    params = re.sub(r"-\d+$", "", params) if test == "test_observable_offsets_mod8" else params
    for path in PATHS:
        if params.endswith("-" + path):
            return test, params[: -len(path) - 1], path
    return test, params, ""


def read_junit(path: pathlib.Path) -> dict[str, tuple[str, str]]:
    """``{case name: (outcome, message)}``, outcome ``passed`` | ``failed`` | ``skipped``."""
    out = {}
    for case in ET.parse(path).iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", (child.get("message") or "") + "\n" + (child.text or "")
            elif child.tag == "skipped":
                outcome, message = "skipped", child.get("message") or ""
        out[case.get("name")] = (outcome, message)
    return out


def test_refusal_table_is_well_formed():
    """Rows name plug-in decoders and sinter tests that exist; no trivial model is refused."""
    import sinter

    from qdecode.sinter_adapter import sinter_decoders

    assert sinter.__version__ == SINTER_VERSION, (
        f"REFUSALS was made for sinter {SINTER_VERSION}, {sinter.__version__} is installed (module docstring)")
    text = sinter_suite_file().read_text()
    names = set(sinter_decoders(env=False))
    for (decoder, test), reason in REFUSALS.items():
        assert decoder in names, decoder
        assert re.search(rf"^def {test}\(", text, re.M), test
        assert test not in TRIVIAL_TESTS, (decoder, test)
        assert reason and "\n" not in reason
    for test in TRIVIAL_TESTS:
        assert re.search(rf"^def {test}\(", text, re.M), test
    assert parse_case("test_observable_offsets_mod8[qd-bp-True-7]") == ("test_observable_offsets_mod8", "qd-bp", "True")
    assert parse_case("test_full_scale[qd-relay-bp]") == ("test_full_scale", "qd-relay-bp", "")


@pytest.mark.timeout(3600)
def test_sinter_decoding_suite_passes_through_the_plugin(tmp_path):
    env = {**os.environ, "SINTER_PYTEST_CUSTOM_DECODERS": "qdecode:sinter_decoders", "NUMBA_NUM_THREADS": "1"}
    env.pop("QDECODE_SINTER_DECODERS", None)
    report = tmp_path / "sinter.xml"
    cmd = [sys.executable, "-m", "pytest", str(sinter_suite_file()), "-k", "qd-", "-q", "-p", "no:cacheprovider",
           "-n", "2", "--timeout", str(CASE_TIMEOUT_S), f"--junitxml={report}"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert report.exists(), f"sinter's suite did not run (exit {proc.returncode}): {proc.stdout[-3000:]}{proc.stderr}"
    cases = read_junit(report)

    outcomes = collections.Counter(outcome for outcome, _ in cases.values())
    seen_refusals = collections.Counter()
    problems = []
    for name, (outcome, message) in sorted(cases.items()):
        test, decoder, path = parse_case(name)
        if "Timeout >" in message:  # pytest-timeout's failure
            problems.append(f"{name}: timed out after {CASE_TIMEOUT_S} s")
            continue
        expected = REFUSALS.get((decoder, test))
        if outcome == "failed":
            if expected is None:
                problems.append(f"{name}: unexpected failure: {message.strip()[:400]}")
            elif expected not in message:
                problems.append(f"{name}: refused, but not with {expected!r}: {message.strip()[:400]}")
            else:
                seen_refusals[(decoder, test)] += 1
        elif outcome == "passed" and expected is not None:
            problems.append(f"{name}: passes, but REFUSALS expects {expected!r} (remove the row)")
        elif outcome == "skipped":
            problems.append(f"{name}: skipped: {message}")
    for key in REFUSALS:
        if seen_refusals[key] != len(PATHS):
            problems.append(f"{key}: refused on {seen_refusals[key]} of sinter's {len(PATHS)} decoding paths")
    decoders = {parse_case(name)[1] for name in cases}
    from qdecode.sinter_adapter import sinter_decoders

    assert decoders == set(sinter_decoders(env=False)), decoders ^ set(sinter_decoders(env=False))
    assert not problems, (f"sinter {SINTER_VERSION} suite: {dict(outcomes)}; " + "\n".join(problems))
    assert outcomes["failed"] == sum(seen_refusals.values()) == len(PATHS) * len(REFUSALS)
    print(f"sinter's suite over {len(decoders)} plug-in decoders: {outcomes['passed']} passed, "
          f"{outcomes['failed']} refused as expected ({len(REFUSALS)} rows x {len(PATHS)} paths), 0 timeouts")
