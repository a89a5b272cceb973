"""benchmarks/README.md's tables and the benchmark figures quoted in prose come from benchmarks/results/.

* ``python benchmarks/render.py --check`` passes: every marked table region of benchmarks/README.md
  is what its result file gives (``benchmarks/render.py``).
* A table edited by hand fails the check, with a one-line message naming the table (on a copy).
* :data:`CLAIMS`: each number quoted in prose (README.md's decoder and soft-output statements,
  benchmarks/README.md's readings, the docstrings that cite a benchmark) next to the value its
  result file gives, within a tolerance (the document's whitespace collapsed, so line breaks do not
  matter). A phrase that is no longer in its document fails too, so a figure cannot drift away from
  its file unnoticed: change the file (rerun), then the prose.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RENDER = ROOT / "benchmarks" / "render.py"


def _render(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RENDER), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_tables_are_what_the_result_files_give():
    out = _render("--check")
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_hand_edited_table_fails_the_check(tmp_path):
    text = (ROOT / "benchmarks" / "README.md").read_text()
    m = re.search(r"<!-- table: ([\w.-]+) -->\n((?:.*\n)*?)<!-- end table -->", text)
    assert m, "benchmarks/README.md has no table region"
    name, body = m.group(1), m.group(2)
    row = next(line for line in body.splitlines() if line.startswith("|") and re.search(r"\d", line)
               and not line.startswith("|---"))
    digit = re.search(r"\d", row)
    edited_row = row[:digit.start()] + str((int(digit.group()) + 1) % 10) + row[digit.end():]
    copy = tmp_path / "README.md"
    copy.write_text(text.replace(row, edited_row, 1))
    out = _render("--check", "--readme", str(copy))
    assert out.returncode == 1
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and f"'{name}'" in lines[0], out.stdout
    shutil.copy(copy, tmp_path / "again.md")  # the same file renders back to the original
    assert _render("--readme", str(tmp_path / "again.md")).returncode == 0
    assert (tmp_path / "again.md").read_text() == text


# --- the result files ------------------------------------------------------------------------------------------

@cache
def _json(name: str) -> dict:
    return json.loads((RESULTS / name).read_text(), parse_constant=lambda c: float(c))


def frontier(problem: str, decoder: str, field: str = "failures") -> float:
    (row,) = [r for r in _json(f"frontier_{problem}.json")["rows"] if r["decoder"] == decoder]
    return row[field]


def ms(problem: str, decoder: str) -> float:
    return frontier(problem, decoder, "ms_per_shot")


def time_ratio(problem: str, a: str, b: str) -> float:
    return ms(problem, a) / ms(problem, b)


SURF = "tesseract[beam=short,sparsify=surface]"
COLOUR_PEER = "peer:tesseract-short-beam-sparsify-color-code-like"
BPLSD30 = "bplsd[lsd_order=30,lsd_grow=20]"
CE01 = "class-escalate[flag_frac=0.1]"


def uf(d: int, p: float, decoder: str, field: str = "failures") -> float:
    (row,) = [r for r in _json("uf_vs_pymatching.json")["rows"] if (r["d"], r["p"], r["decoder"]) == (d, p, decoder)]
    return row[field]


def uf_ratios(decoder: str, field: str = "failures") -> list[float]:
    return [uf(d, p, decoder, field) / uf(d, p, "pymatching", field) for d in (5, 7) for p in (0.003, 0.005)]


def confidence(decoder: str, field: str) -> float:
    (row,) = [r for r in _json("confidence_cost.json")["rows"] if r["decoder"] == decoder]
    return row[field]


def nvt(seed: int, decoder: str, field: str) -> float:
    (row,) = [r for r in _json("native_vs_tesseract.json")["rows"] if r["seed"] == seed and r["decoder"] == decoder]
    return row[field]


TESSERACT = "Tesseract tesseract-short-beam-sparsify-color-code-like"


def escalate_k(k: int) -> float:
    (row,) = [r for r in _json("class_escalate_observables.json")["rows"] if r["k"] == k]
    return row["escalate_ms"] / row["relay_ms"]


def relay_lanes_ratio(p: float, kernel: str = "8-bit, 8-bit lanes") -> float:
    (row,) = [r for r in _json("relay_lanes.json")["rows"] if r["p"] == p and r["decoder"].endswith(kernel)]
    return row["ratio_to_relay_bp_f64"]


def gap_discard(d: int, target: float) -> float:
    from qdecode.sims.gap_bins import at_max_discard, discard_curve
    from qdecode.sims.store import merge_rows, read_rows

    for row in merge_rows(read_rows(str(RESULTS / "gap_discard_surface.csv"))).values():
        if row.json_metadata["d"] == d:
            return at_max_discard(discard_curve(row.shots, row.errors, row.discards, row.custom_counts),
                                  target).fit.best
    raise KeyError(d)


def herald(d: int, decoder: str, field: str = "failures") -> float:
    (row,) = [r for r in _json("heralds.json")["rows"] if r["d"] == d and r["decoder"] == decoder
              and r["circuit"] == "heralded"]
    return row[field]


def herald_threshold(decoder: str, f: float) -> float:
    (row,) = [r for r in _json("heralds_threshold.json")["rows"] if r["decoder"] == decoder and r["F"] == f]
    return 100 * row["p_th"]


def nr5g(code: str, fmt: str, ebn0: float, field: str = "fer") -> float:
    (row,) = [r for r in _json("nr5g_aff3ct.json")["rows"] if r["code"] == code and r["format"] == fmt
              and r["ebn0"] == ebn0]
    return row[field]


BG1, BG2 = "nr5g[bg=1,k=6144,n=12288]", "nr5g[bg=2,k=512,n=1024]"
UF8 = "uf[length_steps=8]"
HERALD_BLIND = "pymatching[heralds=ignore]"


def harness_median(path: str, field: str) -> float:
    return statistics.median(_json("harness_overhead.json")["entries"][f"{path}, 1 worker(s)"][field])


def bp_speed(problem: str, ours: str, theirs: str) -> float:
    t = _json("bp_vs_peers_speed.json")["entries"][problem]["ms_per_shot"]
    return t[ours] / t[theirs]


def gdgw(decoder: str, field: str = "failures") -> float:
    """A row of ``gdg_window.json`` (windowed and whole-history GDG against BP+OSD on [[144,12,12]])."""
    (row,) = [r for r in _json("gdg_window.json")["rows"] if r["decoder"] == decoder]
    return row[field]


def joint(key: str, dem: str, field: str = "failures", suffix: str = "") -> float:
    """A row of ``joint_xz_bb144{suffix}.json`` (``bposd[osd_key=KEY]`` on the split or joint DEM of [[144,12,12]])."""
    label = f"bposd[osd_key={key}]"
    (row,) = [r for r in _json(f"joint_xz_bb144{suffix}.json")["rows"] if (r["decoder"], r["dem"]) == (label, dem)]
    return row[field]


def all_shots(field: str) -> float:
    """``field`` summed over the rows of ``coset_ml_all_shots.json`` and ``coset_ml_all_shots_seed1.json``."""
    return sum(r[field] for name in ("coset_ml_all_shots.json", "coset_ml_all_shots_seed1.json")
               for r in _json(name)["rows"])


def mle_floor(problem: str, field: str) -> float:
    """``field`` of ``mle_floor.json``'s rows of ``problem``, summed over the seeds."""
    return sum(r[field] for r in _json("mle_floor.json")["rows"] if r["problem"] == problem)


def nvt_sd(d: int, decoder: str, field: str, seed: int | None = None) -> float:
    """``field`` of ``native_vs_tesseract_superdense-d{d}.json``'s rows of ``decoder``: one seed's, or (``seed``
    None) summed over the seeds."""
    rows = [r for r in _json(f"native_vs_tesseract_superdense-d{d}.json")["rows"] if r["decoder"] == decoder
            and (seed is None or r["seed"] == seed)]
    return rows[0][field] if seed is not None else sum(r[field] for r in rows)


def _superdense_d7_wide_checks() -> list[float]:
    """``[detectors with more than 255 mechanisms, the most]`` of the superdense colour DEM at d = 7 (the frontier's
    ``superdense-d7``), counted from the circuit."""
    import numpy as np

    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit

    H = DecodingProblem.from_dem(decoding_dem(build_circuit("color", d=7, noise="sd6", p=0.002))).H.tocsr()
    deg = np.diff(H.indptr)
    return [int((deg > 255).sum()), int(deg.max())]


GDG_BUDGET = "window[inner=gdg,W=5,F=2,osd_method=osd_cs,pre_iter=40,max_iters=100]"
WINDOW_BPOSD = "window[inner=bposd,W=5,F=2]"


# --- the claims ------------------------------------------------------------------------------------------------

README = "README.md"
BENCH = "benchmarks/README.md"
ESCALATE = "qdecode/decoders/class_escalate.py"
BPOSD = "qdecode/decoders/bposd.py"

#: (document, phrase: a regex whose groups are the quoted numbers, the values the result files give
#: (one per group), relative tolerance). The tolerance is the rounding of the quoted figure.
CLAIMS: list[tuple[str, str, Callable[[], list[float]], float]] = [
    # README.md: the decoder table and soft output
    (README, r"(\d+\.\d)x fewer failures than `last` on \[\[144,12,12\]\] at p = 0.003 and (\d+\.\d)x fewer on the "
             r"colour code d = 5",
     lambda: [frontier("bb144-p0.003", "bposd[osd_key=last]") / frontier("bb144-p0.003", "bposd"),
              frontier("color-xyz-d5", "bposd[osd_key=last]") / frontier("color-xyz-d5", "bposd[osd_key=sum4]")], 0.03),
    (README, r"`bits=8` runs on 64 8-bit lanes, (\d+\.\d)-(\d+)x relay-bp's throughput on the gross code at "
             r"p = 0.003 / 0.001",
     lambda: [relay_lanes_ratio(0.003), relay_lanes_ratio(0.001)], 0.05),
    (README, r"the same failures as float64 within intervals at (0\.\d)x the time",
     lambda: [ms("color-xyz-d5", "relay-bp[bits=8]") / ms("color-xyz-d5", "relay-bp[bits=0]")], 0.1),
    (README, r"(\d\.\d)-(\d\.\d)x PyMatching's failures at d = 5, 7 against (\d\.\d)-(\d\.\d)x by half edges",
     lambda: [min(uf_ratios("uf[length_steps=8]")), max(uf_ratios("uf[length_steps=8]")),
              min(uf_ratios("uf")), max(uf_ratios("uf"))], 0.06),
    (README, r"colour code d = 5 \((\d+) against (\d+); LSD-0 by the last posterior (\d+)\) and on "
             r"\[\[144,12,12\]\] at p = 0.003 \((\d+) against (\d+)\)",
     lambda: [frontier("color-xyz-d5", "bplsd[lsd_key=sum4,lsd_order=30,lsd_grow=20]"),
              frontier("color-xyz-d5", "bposd[osd_key=sum4]"),
              frontier("color-xyz-d5", "bplsd[lsd_order=0,lsd_key=last]"),
              frontier("bb144-p0.003", BPLSD30), frontier("bb144-p0.003", "bposd")], 0),
    (README, r"fails (\d+) times in 20,000 shots at (\d+\.\d) ms per shot, against Tesseract's (\d+) at (\d\.\d+) ms",
     lambda: [frontier("color-xyz-d5", "mwpf"), ms("color-xyz-d5", "mwpf"),
              frontier("color-xyz-d5", COLOUR_PEER),
              ms("color-xyz-d5", COLOUR_PEER)], 0.005),
    (README, r"on the colour code d = 5: (\d+) failures in 20,000 shots against Tesseract's (\d+)",
     lambda: [nvt(2026, "class-escalate", "failures"), nvt(2026, TESSERACT, "failures")], 0),
    (README, r"matching gap fail (\d+) times as often as the rest, at (\d\.\d)x plain matching's time per shot",
     lambda: [confidence("pymatching", "fail_low10") / confidence("pymatching", "fail_rest"),
              confidence("pymatching", "gap_us") / confidence("pymatching", "plain_us")], 0.02),
    (README, r"\| 5 \| 0 % \| (\d\.\d+e-\d) ", lambda: [gap_discard(5, 0.0)], 0.005),
    (README, r"\| 5 \| 0\.91 % \(gap >= 3 dB kept\) \| (\d\.\d+e-\d) ", lambda: [gap_discard(5, 0.01)], 0.005),
    (README, r"\| 5 \| 9\.2 % \(gap >= 17 dB\) \| (\d\.\d+e-\d) ", lambda: [gap_discard(5, 0.10)], 0.005),
    (README, r"\| 7 \| 0 % \| (\d\.\d+e-\d) ", lambda: [gap_discard(7, 0.0)], 0.005),
    (README, r"\| 7 \| 0\.85 % \(gap >= 4 dB\) \| (\d\.\d+e-\d) ", lambda: [gap_discard(7, 0.01)], 0.005),
    (README, r"\| 7 \| 9\.5 % \(gap >= 24 dB\) \| (\d\.\d+e-\d) ", lambda: [gap_discard(7, 0.10)], 0.005),
    (README, r"it fails (\d+) times in 20,000 shots at (\d+\.\d) us per shot, against (\d+) for the herald-blind\s+"
             r"PyMatching at (\d\.\d) us and (\d+) for `bposd` with the heralds as checks at (\d\.\d) ms",
     lambda: [herald(5, UF8), herald(5, UF8, "us_per_shot"), herald(5, HERALD_BLIND),
              herald(5, HERALD_BLIND, "us_per_shot"), herald(5, "bposd[heralds=checks]"),
              herald(5, "bposd[heralds=checks]", "us_per_shot") / 1000], 0.03),
    (README, r"threshold rises from (\d\.\d+) % at F = 0 to (\d\.\d+) % at F = 0\.98, the herald-blind PyMatching's "
             r"from\s+(\d\.\d+) % to (\d\.\d+) %",
     lambda: [herald_threshold("uf[growth=weighted,length_steps=8]", 0.0),
              herald_threshold("uf[growth=weighted,length_steps=8]", 0.98),
              herald_threshold(HERALD_BLIND, 0.0), herald_threshold(HERALD_BLIND, 0.98)], 0.01),
    # docstrings
    (BPOSD, r"one thread, (\d\.\d)x the time of :meth:`~BpOsdDecoder.predict_observables_batch` on a distance-5",
     lambda: [confidence("bposd", "gap_us") / confidence("bposd", "plain_us")], 0.04),
    (BPOSD, r"\((\d\.\d+)x the #: failures of ``last`` on \[\[144,12,12\]\] at p = 0\.003, (\d\.\d+)x on the "
            r"colour code",
     lambda: [frontier("bb144-p0.003", "bposd") / frontier("bb144-p0.003", "bposd[osd_key=last]"),
              frontier("color-xyz-d5", "bposd[osd_key=sum4]") / frontier("color-xyz-d5", "bposd[osd_key=last]")],
     0.02),
    # benchmarks/README.md: the readings under its tables
    (BENCH, r"(\d+) against (\d+)\s+failures on the colour code d = 5, (\d+) against (\d+) on \[\[144,12,12\]\]",
     lambda: [frontier("color-xyz-d5", "bposd[osd_key=sum4]"), frontier("color-xyz-d5", "bposd[osd_key=last]"),
              frontier("bb144-p0.003", "bposd"), frontier("bb144-p0.003", "bposd[osd_key=last]")], 0),
    (BENCH, r"In this run BP took (\d\.\d+)x ldpc's time per shot and (\d\.\d+)x relay-bp's on `bb144`, (\d\.\d+)x "
            r"either's on\s+`surf7`; BP\+OSD-CS10 (\d\.\d+)x and (\d\.\d+)x ldpc's",
     lambda: [bp_speed("bb144", "ours1", "ldpc"), bp_speed("bb144", "ours1", "relay"),
              bp_speed("surf7", "ours1", "ldpc"),
              bp_speed("bb144", "bposd_ours", "bposd_ldpc"), bp_speed("surf7", "bposd_ours", "bposd_ldpc")], 0.05),
    (BENCH, r"`uf\[length_steps=8\]` fails (\d+) times at d = 5 against the herald-blind PyMatching's (\d+), at "
            r"(\d\.\d+)x its\s+time per shot",
     lambda: [herald(5, UF8), herald(5, HERALD_BLIND), herald(5, UF8, "us_per_shot") / herald(5, HERALD_BLIND,
                                                                                             "us_per_shot")], 0.01),
    (BENCH, r"BP\+OSD (\d\.\d)x faster than\s+with the heralds as checks at d = 5, Relay-BP \(each 8-bit lane "
            r"with its shot's priors\) (\d\.\d)x faster",
     lambda: [herald(5, "bposd[heralds=checks]", "us_per_shot") / herald(5, "bposd", "us_per_shot"),
              herald(5, "relay-bp[heralds=checks]", "us_per_shot") / herald(5, "relay-bp", "us_per_shot")], 0.03),
    (BENCH, r"Target: at least 0\.9x sinter's throughput, met on both paths by the median wall ratio",
     lambda: [] if min(harness_median("catalogue", "wall_ratios"), harness_median("circuit", "wall_ratios")) >= 0.9
     else [float("nan")], 0),
    (BENCH, r"By half edges `uf` fails (\d\.\d)-(\d\.\d)x as often as PyMatching; with `length_steps=8` (\d\.\d+)-"
            r"(\d\.\d+)x as\s+often, at (\d\.\d)-(\d\.\d)x its time per shot",
     lambda: [min(uf_ratios("uf")), max(uf_ratios("uf")), min(uf_ratios("uf[length_steps=8]")),
              max(uf_ratios("uf[length_steps=8]")), min(uf_ratios("uf[length_steps=8]", "us_per_shot")),
              max(uf_ratios("uf[length_steps=8]", "us_per_shot"))], 0.03),
    (BENCH, r"`relay-bp` fails (\d+) times in 10,000\s+shots against relay-bp 0\.2\.1's (\d+), at (0\.\d+)x its time",
     lambda: [frontier("bb144-p0.003", "relay-bp"), frontier("bb144-p0.003", "peer:relay-bp"),
              ms("bb144-p0.003", "relay-bp") / ms("bb144-p0.003", "peer:relay-bp")], 0.03),
    (BENCH, r"colour code d = 5: (\d+) against (\d+) failures;\s+d = 7: (\d+) against (\d+)",
     lambda: [frontier("color-xyz-d5", "relay-bp[bits=8]"), frontier("color-xyz-d5", "relay-bp[bits=0]"),
              frontier("color-xyz-d7", "relay-bp[bits=8]"), frontier("color-xyz-d7", "relay-bp[bits=0]")], 0),
    (BENCH, r"costs (\d\.\d)x\s+the time of `relay-bp` for (\d+) % fewer failures here",
     lambda: [ms("color-xyz-d5", "relay-bp[bits=8,stop_after=10]") / ms("color-xyz-d5", "relay-bp[bits=8]"),
              100 * (1 - frontier("color-xyz-d5", "relay-bp[bits=8,stop_after=10]")
                     / frontier("color-xyz-d5", "relay-bp[bits=8]"))], 0.05),
    (BENCH, r"the best native row fails (\d\.\d)x as often \((\d+) against\s+(\d+)\) at (0\.\d+)x its time",
     lambda: [frontier("superdense-d5", "relay-bp[bits=8,stop_after=10]")
              / frontier("superdense-d5", COLOUR_PEER),
              frontier("superdense-d5", "relay-bp[bits=8,stop_after=10]"),
              frontier("superdense-d5", COLOUR_PEER),
              ms("superdense-d5", "relay-bp[bits=8,stop_after=10]")
              / ms("superdense-d5", COLOUR_PEER)], 0.03),
    (BENCH, r"`class-escalate` fails (\d+) times, within the interval of Tesseract's\s+surface preset \((\d+)\), at "
            r"(\d\.\d+)x its time; `bposd` (\d+) and `relay-bp` (\d+) at (0\.\d+)x and (0\.\d+)x",
     lambda: [frontier("surface-d5-si1000", "class-escalate"),
              frontier("surface-d5-si1000", SURF),
              time_ratio("surface-d5-si1000", "class-escalate", SURF),
              frontier("surface-d5-si1000", "bposd"), frontier("surface-d5-si1000", "relay-bp"),
              time_ratio("surface-d5-si1000", "bposd", SURF),
              time_ratio("surface-d5-si1000", "relay-bp", SURF)],
     0.02),
    (BENCH, r"correlated matching's (\d+), which is (\d+)x faster than `bposd`",
     lambda: [frontier("surface-d5-si1000", "pymatching-correlated"),
              ms("surface-d5-si1000", "bposd") / ms("surface-d5-si1000", "pymatching-correlated")], 0.03),
    (BENCH, r"`class-escalate` tie \((\d+) and (\d+) failures, (0\.\d+)x\s+correlated matching's (\d+)\), the "
            r"latter at (\d\.\d)x Tesseract's time",
     lambda: [frontier("surface-d7-uniform", SURF),
              frontier("surface-d7-uniform", "class-escalate"),
              frontier("surface-d7-uniform", SURF)
              / frontier("surface-d7-uniform", "pymatching-correlated"),
              frontier("surface-d7-uniform", "pymatching-correlated"),
              ms("surface-d7-uniform", "class-escalate")
              / ms("surface-d7-uniform", "peer:tesseract-short-beam-sparsify-surface-code-like")], 0.02),
    (BENCH, r"\((\d+) failures, (\d\.\d+)x fewer than correlated matching\) at (\d+\.\d) ms per\s+shot; "
            r"`class-escalate` fails (\d+)\s+times at (\d\.\d)x Tesseract's time, `relay-bp` (\d+) at (0\.\d+)x",
     lambda: [frontier("surface-d7-si1000", SURF),
              frontier("surface-d7-si1000", "pymatching-correlated")
              / frontier("surface-d7-si1000", SURF),
              ms("surface-d7-si1000", SURF),
              frontier("surface-d7-si1000", "class-escalate"),
              time_ratio("surface-d7-si1000", "class-escalate", SURF),
              frontier("surface-d7-si1000", "relay-bp"),
              time_ratio("surface-d7-si1000", "relay-bp", SURF)],
     0.02),
    (BENCH, r"`bposd` \(`sum4`\) (\d+) against `osd_key=last`'s (\d+)\. `bplsd` reaches `bposd` only with order "
            r"30\s+in clusters grown to nullity 20 x 30 \((\d+) against (\d+), at (\d\.\d+)x its time; order 10: "
            r"(\d+), order 20: (\d+)\)",
     lambda: [frontier("bb144-p0.003", "bposd"), frontier("bb144-p0.003", "bposd[osd_key=last]"),
              frontier("bb144-p0.003", BPLSD30), frontier("bb144-p0.003", "bposd"),
              ms("bb144-p0.003", BPLSD30) / ms("bb144-p0.003", "bposd"),
              frontier("bb144-p0.003", "bplsd[lsd_order=10,lsd_grow=10]"),
              frontier("bb144-p0.003", "bplsd[lsd_order=20,lsd_grow=10]")], 0.01),
    (BENCH, r"`class-escalate` fails as `relay-bp` does at (\d+)x its time",
     lambda: [ms("bb144-p0.003", "class-escalate") / ms("bb144-p0.003", "relay-bp")], 0.02),
    (BENCH, r"fails\s+(\d+) times; Tesseract (\d+) \(within its interval.*?`class-escalate` fails (\d+) at (\d\.\d+)x "
            r"Tesseract's time; `relay-bp` (\d+) at (0\.\d+)x the time of relay-bp\s+0\.2\.1, which fails (\d+)",
     lambda: [frontier("hgp58-p0.003", "mle"), frontier("hgp58-p0.003", "tesseract[beam=short,sparsify=color]"),
              frontier("hgp58-p0.003", "class-escalate"),
              ms("hgp58-p0.003", "class-escalate") / ms("hgp58-p0.003", "tesseract[beam=short,sparsify=color]"),
              frontier("hgp58-p0.003", "relay-bp"), time_ratio("hgp58-p0.003", "relay-bp", "peer:relay-bp"),
              frontier("hgp58-p0.003", "peer:relay-bp")], 0.05),
    (BENCH, r"`class-escalate` fails (\d+) times against Tesseract's (\d+) on seed 2026 and (\d+) against (\d+) on "
            r"seed 1",
     lambda: [nvt(2026, "class-escalate", "failures"), nvt(2026, TESSERACT, "failures"),
              nvt(1, "class-escalate", "failures"), nvt(1, TESSERACT, "failures")], 0),
    (BENCH, r"at (0\.\d+)-(0\.\d+)x Tesseract's CPU time in this run; the frontier's run of\s+seed 2026 above gave "
            r"(0\.\d+)x",
     lambda: sorted([nvt(2026, "class-escalate", "time_ratio"), nvt(1, "class-escalate", "time_ratio")])
     + [ms("color-xyz-d5", "class-escalate[flag_frac=0.05]")
        / ms("color-xyz-d5", COLOUR_PEER)], 0.02),
    (BENCH, r"`flag_frac=0\.1` fails (\d+) and (\d+) times \(133 as well\) at (0\.\d+)-(0\.\d+)x",
     lambda: [nvt(2026, CE01, "failures"), nvt(1, CE01, "failures")]
     + sorted([nvt(2026, CE01, "time_ratio"),
               nvt(1, CE01, "time_ratio")]), 0.02),
    (BENCH, r"up to k = 8 within (\d+)x `relay-bp`'s time\s+here, at k = 12 over (\d+)x",
     lambda: [16 if max(escalate_k(k) for k in (1, 2, 4, 6, 8)) <= 16 else float("nan"),
              300 if escalate_k(12) > 300 else float("nan")], 0),
    (BENCH, r"The 10 % of shots with the smallest matching gap fail (\d+) times as often as the rest, at (\d\.\d)x",
     lambda: [confidence("pymatching", "fail_low10") / confidence("pymatching", "fail_rest"),
              confidence("pymatching", "gap_us") / confidence("pymatching", "plain_us")], 0.02),
    (BENCH, r"The 8-bit lanes kernel reaches (\d+)x relay-bp 0\.2\.1's throughput at p = 0\.001 and (\d\.\d)x at\s+"
            r"p = 0\.003; the float64 lanes (\d\.\d)x and (\d\.\d)x",
     lambda: [relay_lanes_ratio(0.001), relay_lanes_ratio(0.003), relay_lanes_ratio(0.001, "float64, lanes"),
              relay_lanes_ratio(0.003, "float64, lanes")], 0.03),
    (BENCH, r"`relay-bp`'s confidence costs (\d\.\d+)x its plain decode",
     lambda: [confidence("relay-bp", "gap_us") / confidence("relay-bp", "plain_us")], 0.01),
    # docstrings that cite a benchmark
    (ESCALATE, r"(\d+) and (\d+) failures in 20,000 shots \(seeds 2026 and 1\) at (0\.\d+)x and (0\.\d+)x the CPU "
               r"time\s+of Tesseract's colour preset, which fails (\d+) and (\d+) times",
     lambda: [nvt(2026, "class-escalate", "failures"), nvt(1, "class-escalate", "failures"),
              nvt(2026, "class-escalate", "time_ratio"), nvt(1, "class-escalate", "time_ratio"),
              nvt(2026, TESSERACT, "failures"), nvt(1, TESSERACT, "failures")], 0.02),
    (ESCALATE, r"at k = 1 to 8 it took (\d+)-(\d+)x ``relay-bp``'s time, at k = 12 \(\[\[72,12,6\]\]\) (\d+)x",
     lambda: [min(escalate_k(k) for k in (1, 2, 4, 6, 8)), max(escalate_k(k) for k in (1, 2, 4, 6, 8)), escalate_k(12)],
     0.01),
    (ESCALATE, r"0\.05: (0\.\d+)-(0\.\d+)x Tesseract's time on the colour code d = 5; 0\.1: the same (\d+) failures in "
               r"40,000 # shots at (0\.\d+)-(0\.\d+)x",
     lambda: sorted([nvt(2026, "class-escalate", "time_ratio"), nvt(1, "class-escalate", "time_ratio")])
     + [nvt(2026, CE01, "failures") + nvt(1, CE01, "failures")]
     + sorted([nvt(2026, CE01, "time_ratio"), nvt(1, CE01, "time_ratio")]), 0.02),
]


CLAIMS += [
    (README, r"`min`: by each posterior's running minimum over the iterations, (\d+) failures against `sum4`'s (\d+) "
             r"on \[\[144,12,12\]\] at p = 0.003",
     lambda: [frontier("bb144-p0.003", "bposd[osd_key=min]"), frontier("bb144-p0.003", "bposd")], 0),
    (BENCH, r"by the last posterior (\d+) times against (\d+), by the sum of the last four (\d+) against (\d+), by the "
            r"running minimum (\d+) against (\d+)\.",
     lambda: [joint(k, dem) for k in ("last", "sum4", "min") for dem in ("joint", "split")], 0),
    (BENCH, r"joint and split tie with the running minimum \((\d+) and (\d+)\), and joint fails (\d+) times against "
            r"split's (\d+) with `sum4`",
     lambda: [joint(k, dem, "failures", "_p0.003") for k in ("min", "sum4") for dem in ("joint", "split")], 0),
    (BENCH, r"joint fails (\d+) times against split's (\d+) with the running minimum, and\s+(\d+) against (\d+) with "
            r"`sum4`\. The two DEMs",
     lambda: [joint(k, dem, "failures", "_p0.003_seed1") for k in ("min", "sum4") for dem in ("joint", "split")], 0),
    (BENCH, r"either key: (\d+) against (\d+) failures with the running minimum, (\d+) against (\d+) with `sum4`",
     lambda: [sum(joint(k, dem, "failures", sfx) for sfx in ("_p0.003", "_p0.003_seed1"))
              for k in ("min", "sum4") for dem in ("joint", "split")], 0),
    (BENCH, r"neither wins nor loses beyond\s+the statistics, at about (\d+)x the CPU time per shot",
     lambda: [sum(joint(k, "joint", "ms_per_shot", "_p0.003_seed1") / joint(k, "split", "ms_per_shot", "_p0.003_seed1")
                  for k in ("min", "sum4")) / 2], 0.1),
    (BENCH, r"By the last posterior joint decoding fails\s+(\d+) times against split's (\d+): on the joint DEM the "
            r"running minimum fails (\d+)x less often than the last\s+posterior, and `sum4` (\d+)x",
     lambda: [joint("last", "joint", "failures", "_p0.003"), joint("last", "split", "failures", "_p0.003"),
              joint("last", "joint", "failures", "_p0.003") / joint("min", "joint", "failures", "_p0.003"),
              joint("last", "joint", "failures", "_p0.003") / joint("sum4", "joint", "failures", "_p0.003")], 0.03),
    (BENCH, r"The exact most likely class fails on (\d+) of Tesseract's (\d+) failing shots: (0\.\d+)x, at least, with "
            r"(0\.\d+)x the\s+lower end of its interval\. Summing over each class's errors is worth (\d+) of those "
            r"shots against the exact most likely\s+error \(`mle`: (\d+) failures there, (\d+) ties\)",
     lambda: [(q := _json("coset_ml_floor.json")["pooled"][0])["coset_ml_fails_on_tesseract_failures"],
              q["tesseract_failures"], q["coset_ml_over_tesseract_at_least"], q["coset_ml_over_tesseract_low"],
              q["mle_fails_on_union"] - q["coset_ml_fails_on_union"], q["mle_fails_on_union"], q["ties"]], 0),
    (BENCH, r"On these 24,000 shots the optimal decoder fails (\d+) times against Tesseract's (\d+) \((0\.\d+)x\): "
            r"it gets (\d+) of\s+Tesseract's failing shots right and fails on (\d+) that Tesseract gets right, at "
            r"about (\d+)x Tesseract's CPU time",
     lambda: [all_shots("coset_ml_failures_all"), all_shots("tesseract_failures_all"),
              all_shots("coset_ml_failures_all") / all_shots("tesseract_failures_all"), all_shots("tesseract_only_all"),
              all_shots("coset_ml_only_all"), all_shots("coset_ml_ms_per_shot") / all_shots("tesseract_ms_per_shot")],
     0.02),
    (BENCH, r"narrows joint decoding's loss from (\d\.\d)x to (\d\.\d)x",
     lambda: [joint(k, "joint") / joint(k, "split") for k in ("last", "sum4")], 0),
    (BENCH, r"the running minimum fails as often as `sum4` at this p \((\d+) against (\d+)\) and less often on the "
            r"frontier's sample at p = 0.003 \((\d+) against (\d+), above\)",
     lambda: [joint("min", "split"), joint("sum4", "split"), frontier("bb144-p0.003", "bposd[osd_key=min]"),
              frontier("bb144-p0.003", "bposd")], 0),
    (BENCH, r"the exact most likely error fails on (\d+) of Tesseract's (\d+) failing shots \(seed 2026\) and on (\d+) "
            r"of (\d+) \(seed 1\), with no ties: at least (\d+) failures against Tesseract's (\d+) over both seeds "
            r"\((0\.\d+)x\)\. At d = 7 it fails on all of them \((\d+) and (\d+)\)\. On the superdense circuit at "
            r"d = 5 it fails on (\d+) of (\d+) and (\d+) of (\d+) \((\d+) of (\d+), (0\.\d+)x\)",
     lambda: [r[f] for r in _json("mle_floor.json")["rows"][:2] for f in ("mle_fails_on_union", "tesseract_failures")]
     + [mle_floor("color-xyz-d5", "mle_fails_on_union"), mle_floor("color-xyz-d5", "tesseract_failures"),
        mle_floor("color-xyz-d5", "mle_fails_on_union") / mle_floor("color-xyz-d5", "tesseract_failures")]
     + [r["mle_fails_on_union"] for r in _json("mle_floor.json")["rows"] if r["problem"] == "color-xyz-d7"
        and r["mle_fails_on_union"] == r["tesseract_failures"] and r["ties"] == 0]
     + [r[f] for r in _json("mle_floor.json")["rows"] if r["problem"] == "superdense-d5"
        for f in ("mle_fails_on_union", "tesseract_failures")]
     + [mle_floor("superdense-d5", "mle_fails_on_union"), mle_floor("superdense-d5", "tesseract_failures"),
        mle_floor("superdense-d5", "mle_fails_on_union") / mle_floor("superdense-d5", "tesseract_failures")], 0),
    (BENCH, r"that DEM has (\d+) detectors with more than 255 mechanisms \((\d+) at most\)",
     lambda: _superdense_d7_wide_checks(), 0),
    (BENCH, r"`relay-bp\[bits=8\]` takes (\d+\.\d) ms per shot in the frontier run",
     lambda: [ms("superdense-d7", "relay-bp[bits=8]")], 0),
    (BENCH, r"At d = 5 `class-escalate` fails (\d+) times against Tesseract's (\d+) over both seeds, at (\d\.\d+)x and "
            r"(\d\.\d+)x its time; `relay-bp\[stop_after=10\]` (\d+) at (0\.\d+)-(0\.\d+)x\. At d = 7 both fail too "
            r"seldom for a statement \(Tesseract (\d+), `relay-bp\[stop_after=10\]` (\d+) in 20,000 shots\), at about "
            r"Tesseract's time \((\d\.\d+)x and (\d\.\d+)x\)",
     lambda: [nvt_sd(5, "class-escalate", "failures"), nvt_sd(5, TESSERACT, "failures")]
     + [nvt_sd(5, "class-escalate", "time_ratio", s) for s in (2026, 1)]
     + [nvt_sd(5, "relay-bp[stop_after=10]", "failures")]
     + sorted(nvt_sd(5, "relay-bp[stop_after=10]", "time_ratio", s) for s in (2026, 1))
     + [nvt_sd(7, TESSERACT, "failures"), nvt_sd(7, "relay-bp[stop_after=10]", "failures")]
     + [nvt_sd(7, "relay-bp[stop_after=10]", "time_ratio", s) for s in (2026, 1)], 0.02),
    ("qdecode/decoders/auto.py", r"\((\d+) of its (\d+) failures on \[\[144,12,12\]\] at p = 0.004 #: against (\d+) "
                                 r"with",
     lambda: [gdgw("gdg", "flagged"), gdgw("gdg"), gdgw("gdg[osd_method=osd_cs]")], 0),
    (BENCH, r"flagged shots: (\d+) of the (\d+) of whole-history `gdg`",
     lambda: [gdgw("gdg", "flagged"), gdgw("gdg")], 0),
    (BENCH, r"removes them \((\d+) failures against `bposd`'s (\d+)\); ordered by the last posterior alone it fails "
            r"(\d+) times",
     lambda: [gdgw("gdg[osd_method=osd_cs]"), gdgw("bposd"), gdgw("gdg[osd_method=osd_cs,osd_key=last]")], 0),
    (BENCH, r"its tail ends in an OSD instead: (\d+) failures against (\d+) at (0\.\d+)x the p99",
     lambda: [gdgw(GDG_BUDGET), gdgw(WINDOW_BPOSD), gdgw(GDG_BUDGET, "p99_vs_first")], 0),
    ("qdecode/decoders/gdg.py", r"the authors' GDG fails (\d+) times, (\d+) of them flagged; with OSD-CS10 ordered by "
                                r"``sum4`` (\d+) times \(by ``last`` (\d+); ``bposd`` (\d+)\)",
     lambda: [gdgw("gdg"), gdgw("gdg", "flagged"), gdgw("gdg[osd_method=osd_cs]"),
              gdgw("gdg[osd_method=osd_cs,osd_key=last]"), gdgw("bposd")], 0),
    ("qdecode/decoders/gdg.py", r"``pre_iter=40,max_iters=100,osd_method=osd_cs`` fails (\d+) times against "
                                r"``window\[inner=bposd\]``'s (\d+) at (0\.\d+)x its p99",
     lambda: [gdgw(GDG_BUDGET), gdgw(WINDOW_BPOSD), gdgw(GDG_BUDGET, "p99_vs_first")], 0),
    (README, r"the 16-bit decoder's ~95 % interval contains AFF3CT's frame error rate at all six points, e\.g\. "
             r"(\d\.\d+)e-3 \[(\d\.\d)e-4, (\d\.\d)e-3\] against 1\.11e-3 for BG2 Z = 64 at 2\.25 dB and (\d\.\d)e-4 "
             r"\[(\d\.\d)e-4, (\d\.\d)e-4\] against 3\.78e-4 for BG1 Z = 288 at 1\.6 dB; the 8-bit decoder matches on "
             r"BG2 and loses on BG1 \((\d\.\d)e-4 at 1\.6 dB\)",
     lambda: [1e3 * nr5g(BG2, "16-bit", 2.25), 1e4 * nr5g(BG2, "16-bit", 2.25, "fer_low"),
              1e3 * nr5g(BG2, "16-bit", 2.25, "fer_high"), 1e4 * nr5g(BG1, "16-bit", 1.6),
              1e4 * nr5g(BG1, "16-bit", 1.6, "fer_low"), 1e4 * nr5g(BG1, "16-bit", 1.6, "fer_high"),
              1e4 * nr5g(BG1, "8-bit", 1.6)]
     if all(r["aff3ct_inside"] for r in _json("nr5g_aff3ct.json")["rows"] if r["format"] == "16-bit")
     and all(r["aff3ct_inside"] for r in _json("nr5g_aff3ct.json")["rows"] if r["code"] == BG2)
     else [float("nan")], 0.06),
    (BENCH, r"The 16-bit decoder's interval contains AFF3CT's value at all six points",
     lambda: [] if all(r["aff3ct_inside"] for r in _json("nr5g_aff3ct.json")["rows"] if r["format"] == "16-bit")
     else [float("nan")], 0),
]


@pytest.mark.parametrize("doc, phrase, values, tol", CLAIMS, ids=[f"{c[0]}: {c[1][:40]}" for c in CLAIMS])
def test_quoted_figures_are_their_result_files(doc, phrase, values, tol):
    text = re.sub(r"\s+", " ", (ROOT / doc).read_text())  # line breaks of the prose do not matter
    m = re.search(phrase, text)
    assert m, f"{doc} no longer says {phrase!r}: change the claim here with the prose, from its result file"
    want = values()
    assert len(m.groups()) == len(want), (m.groups(), want)
    for text, w in zip(m.groups(), want):
        q = float(text)
        assert abs(q - w) <= tol * abs(w) + 0.5 * 10 ** _last_place(text), \
            f"{doc}: {m.group(0)!r} quotes {text}, its result file gives {w:.4g}"


def _last_place(text: str) -> int:
    """The decimal exponent of a quoted figure's last digit (a quoted 0.18 stands for 0.175 ... 0.185)."""
    mant, _, exp = text.lower().partition("e")
    return (int(exp) if exp else 0) - len(mant.partition(".")[2])


def test_the_sinter_decoder_count_is_the_plug_ins():
    import qdecode

    n = int(re.search(r"with sinter [\d.]+ and the (\d+)\s+`qd-` decoders", (ROOT / README).read_text()).group(1))
    assert n == len(qdecode.sinter_decoders())


def test_p0001_confidence_sample_has_no_failures():
    """benchmarks/README.md: at p = 0.001 no decoder failed in the [[144,12,12]] confidence sample."""
    import numpy as np

    assert re.search(r"At\s+p = 0\.001 nothing failed", (ROOT / BENCH).read_text())
    data = np.load(RESULTS / "confidence_bb144_p0.001.npz")
    assert all(not data[k].any() for k in data.files if k.endswith("|fail"))
