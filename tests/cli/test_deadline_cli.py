"""`qdecode sweep --latency`, `qdecode deadline`, `combine` of latency bins, `plot --y deadline`,
`predict --latency-out` (issue 44: the two clocks, LER under a deadline from one run)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import stim

from qdecode.cli.main import main
from qdecode.sims.latency_bins import (
    LATENCY_BINS_KEY,
    deadline_failures,
    histogram,
    latency_bin_counts,
    row_histograms,
)
from qdecode.sims.seed_streams import is_seed_key
from qdecode.sims.store import StatsWriter, merge_rows, read_rows

SWEEP = ["sweep", "--code", "surface", "--d", "3", "--rounds", "3", "--noise", "si1000", "--p", "0.004",
         "--max-shots", "1200", "--max-errors", "1000000", "--quiet", "--seed", "5", "--latency"]
RELAY = "relay-bp[legs=20,stop_after=2]"


def _one_line_error(capsys, code, *needles):
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, err


def _deadline_json(capsys, *args) -> list[dict]:
    capsys.readouterr()
    assert main(["deadline", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def latency_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("lat") / "l.csv"
    assert main(SWEEP + ["--decoder", RELAY, "--decoder", "pymatching", "--workers", "0", "--out", str(out)]) == 0
    return out


def _work_counts(path) -> dict[str, dict[str, int]]:
    return {r.decoder: {k: v for k, v in r.custom_counts.items() if k.startswith("work")}
            for r in merge_rows(read_rows(path)).values()}


def test_bins_cover_every_shot_and_error_and_the_flag_is_in_the_strong_id(latency_csv, tmp_path):
    rows = list(merge_rows(read_rows(latency_csv)).values())
    assert len(rows) == 2
    for row in rows:
        assert row.json_metadata[LATENCY_BINS_KEY] == "2^(k/8)"
        hists = row_histograms(row)  # checks the bins against the row
        assert hists["wall"].total == row.shots - row.discards == 1200
        assert hists["work"].total == 1200  # relay-bp: iterations over all legs; pymatching: detection events
        assert deadline_failures(hists["wall"], 1200, np.inf) == row.errors
    plain = tmp_path / "plain.csv"
    assert main(SWEEP[:-1] + ["--decoder", "pymatching", "--workers", "0", "--out", str(plain)]) == 0
    (other,) = merge_rows(read_rows(plain)).values()
    pm = next(r for r in rows if r.decoder == "pymatching")
    assert other.strong_id != pm.strong_id  # never pooled with the histogram rows
    assert not [k for k in other.custom_counts if not is_seed_key(k)]


def test_deadline_without_limit_is_the_plain_error_rate(latency_csv, capsys):
    reports = _deadline_json(capsys, str(latency_csv), "--at", "1ms,100ms", "--at-work", "50")
    for rep in reports:
        assert rep["wall"]["error_rate_no_deadline"] == rep["errors"] / rep["decoded"] == rep["error_rate"]
        rates = [d["error_rate"] for d in rep["wall"]["deadlines"]]
        assert rates[0] >= rates[1] >= rep["error_rate"]  # a later deadline never fails more shots
    relay = next(r for r in reports if r["decoder"].startswith("relay-bp"))
    work = relay["work"]
    assert work["error_rate_no_deadline"] == relay["error_rate"]
    q = work["quantiles"]
    assert q["p50"] <= q["p99"] <= q["p99.9"] <= q["max"] <= 80 + 20 * 60  # the schedule's iteration bound
    hist = histogram(merge_rows(read_rows(latency_csv))[relay["strong_id"]].custom_counts, "work")
    late = int(hist.shots[hist.edges > 50].sum())
    assert work["deadlines"][0]["late"] == late and late > 0  # some shots need more than 50 iterations


def test_deadline_of_combined_halves_equals_the_whole(latency_csv, tmp_path, capsys):
    rows = read_rows(latency_csv)
    assert len(rows) >= 4  # several batches per task: the halves differ
    halves = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for path, part in zip(halves, (rows[::2], rows[1::2])):
        with StatsWriter(path) as w:
            for r in part:
                w.append(r)
    merged = tmp_path / "m.csv"
    # the halves are disjoint batches of one run, which share its stream's record: combine is told so
    assert main(["combine", *map(str, halves), "--allow-shared-streams", "--out", str(merged)]) == 0
    args = ["--at", "20us,200us,2ms", "--at-work", "10,100"]
    whole = _deadline_json(capsys, str(latency_csv), *args)
    combined = _deadline_json(capsys, str(merged), *args)
    split = _deadline_json(capsys, *map(str, halves), *args)
    key = lambda reps: sorted(reps, key=lambda r: r["strong_id"])  # noqa: E731
    assert key(whole) == key(combined) == key(split)


def test_work_clock_is_identical_across_runs_workers_and_threads(tmp_path):
    import numba

    outs = []
    before = numba.get_num_threads()
    try:
        for i, (workers, threads) in enumerate([("0", 1), ("0", 1), ("2", min(2, numba.config.NUMBA_NUM_THREADS))]):
            numba.set_num_threads(threads)  # the decoder's threads (in-process with --workers 0)
            out = tmp_path / f"w{i}.csv"
            assert main(SWEEP + ["--decoder", RELAY, "--workers", workers, "--out", str(out)]) == 0
            outs.append(_work_counts(out))
    finally:
        numba.set_num_threads(before)
    assert outs[0] == outs[1] == outs[2]
    (counts,) = outs[0].values()
    assert len([k for k in counts if not k.endswith("E")]) >= 5  # a spread of work, not one bin


def test_bad_inputs_are_one_line_errors(latency_csv, tmp_path, capsys):
    capsys.readouterr()
    _one_line_error(capsys, main(["deadline", str(latency_csv), "--at", "5"]), "not a time with a unit")
    _one_line_error(capsys, main(["deadline", str(latency_csv), "--at", "-1ms"]), "--at")
    _one_line_error(capsys, main(["deadline", str(latency_csv), "--at-work", "x"]), "--at-work")
    plain = tmp_path / "p.csv"
    assert main(SWEEP[:-1] + ["--decoder", "pymatching", "--workers", "0", "--out", str(plain)]) == 0
    capsys.readouterr()
    _one_line_error(capsys, main(["deadline", str(plain)]), "no row has a latency histogram")
    # rows without bins pooled into a latency strong_id (an edited file): refused, not understated
    (row,) = [r for r in merge_rows(read_rows(latency_csv)).values() if r.decoder == "pymatching"]
    bad = tmp_path / "bad.csv"
    with StatsWriter(bad) as w:
        w.append(row)
        w.append(type(row)(strong_id=row.strong_id, decoder=row.decoder, json_metadata=row.json_metadata,
                          shots=100, errors=0))
    _one_line_error(capsys, main(["deadline", str(bad)]), "histogram holds 1200 shots", "1300 decoded shots")
    code = main(SWEEP + ["--decoder", "relay-bp", "--gap-histogram", "--workers", "0",
                         "--out", str(tmp_path / "g.csv")])
    _one_line_error(capsys, code, "--latency and --gap-histogram")


def test_plot_deadline_draws_both_clocks(latency_csv, tmp_path, capsys):
    for clock in ("wall", "work"):
        out = tmp_path / f"{clock}.png"
        assert main(["plot", str(latency_csv), "--y", "deadline", "--x", clock, "--out", str(out)]) == 0
        assert out.stat().st_size > 10_000
    out = tmp_path / "anytime.png"  # relay-bp's rows only: pymatching records no trail of answers
    assert main(["plot", str(latency_csv), "--y", "deadline", "--policy", "anytime", "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000
    capsys.readouterr()
    code = main(["plot", str(latency_csv), "--y", "deadline", "--x", "p", "--out", str(tmp_path / "x.png")])
    _one_line_error(capsys, code, "--x wall or --x work")
    code = main(["plot", str(latency_csv), "--y", "deadline", "--policy", "anytime", "--filter", "decoder=pymatching",
                 "--out", str(tmp_path / "y.png")])
    _one_line_error(capsys, code, "with a trail of answers")
    _one_line_error(capsys, main(["plot", str(latency_csv), "--policy", "anytime", "--out", str(tmp_path / "z.png")]),
                    "--policy applies to --y deadline")


def test_predict_latency_out_writes_one_line_per_shot(tmp_path):
    circuit = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=3,
                                     after_clifford_depolarization=0.01)
    dem_path, dets_path = tmp_path / "m.dem", tmp_path / "d.b8"
    circuit.detector_error_model(decompose_errors=True).to_file(dem_path)
    circuit.compile_detector_sampler(seed=2).sample_write(300, filepath=str(dets_path), format="b8")
    common = ["predict", "--dem", str(dem_path), "--dets", str(dets_path), "--decoder", RELAY, "--quiet"]
    lat = tmp_path / "lat.txt"
    assert main(common + ["--obs-out", str(tmp_path / "a.01"), "--latency-out", str(lat)]) == 0
    assert main(common + ["--obs-out", str(tmp_path / "b.01")]) == 0
    assert (tmp_path / "a.01").read_text() == (tmp_path / "b.01").read_text()  # the same predictions
    lines = [line.split() for line in lat.read_text().splitlines()]
    assert len(lines) == 300 and all(len(p) == 2 and float(p[0]) > 0 and int(p[1]) >= 1 for p in lines)


def test_bin_counts_of_random_values():
    rng = np.random.default_rng(1)
    wall = rng.lognormal(10, 2, size=5000)
    work = rng.integers(0, 5000, size=5000)
    wrong = rng.random(5000) < 0.1
    counts = latency_bin_counts(wall, work, wrong)
    for clock, values in (("wall", wall), ("work", work)):
        hist = histogram(counts, clock)
        assert hist.total == 5000 and hist.errors.sum() == wrong.sum()
        for t in (hist.edges[3], hist.edges[len(hist.edges) // 2], np.inf):
            exact = int(np.sum((values > t) | wrong))  # LER(t) * n computed from the shots themselves
            assert deadline_failures(hist, 5000, t) == exact
        assert hist.quantile(0.5) >= np.median(values) and hist.quantile(0.5) / np.median(values) < 2 ** (1 / 8)


def test_rtl_latency_from_the_work_clock(tmp_path, capsys):
    """--rtl: each shot takes iterations x CPI + 2 cycles of the exported design (the identity its bench checks)."""
    bp = "bp[bits=8,frac_bits=3,max_iter=20,alpha=0.625]"
    csv = tmp_path / "bp.csv"
    assert main(SWEEP + ["--decoder", bp, "--decoder", "pymatching", "--workers", "0", "--out", str(csv)]) == 0
    design = tmp_path / "rtl"
    assert main(["export-vectors", "--code", "surface", "--d", "3", "--rounds", "3", "--noise", "si1000", "--p",
                 "0.004", "--bits", "8", "--frac-bits", "3", "--max-iter", "20", "--shots", "20",
                 "--out", str(tmp_path / "vec")]) == 0
    assert main(["export-rtl", "--vectors", str(tmp_path / "vec"), "--out", str(design)]) == 0
    (design / "pnr_hx8k.json").write_text(json.dumps({"fmax": {"clk$SB_IO_IN_$glb_clk": {"achieved": 40.0}}}))
    reports = _deadline_json(capsys, str(csv), "--rtl", str(design), "--at", "100ns,250ns,1us")
    rep = next(r for r in reports if r["decoder"].startswith("bp["))
    assert next(r for r in reports if r["decoder"] == "pymatching")["rtl"] is None  # not the design's decoder
    rtl = rep["rtl"]
    assert rtl["fmax_mhz"] == 40.0 and rtl["cycles_per_iteration"] == 1  # the fully parallel design
    (row,) = [r for r in merge_rows(read_rows(csv)).values() if r.decoder == rep["decoder"]]
    hist = histogram(row.custom_counts, "work")
    for point, t in zip(rtl["deadlines"], (100.0, 250.0, 1000.0)):
        iters = int(t / 25.0) - 2  # 25 ns per cycle at 40 MHz, two cycles of start and done
        assert point["failures"] == deadline_failures(hist, row.shots, iters)
    assert rtl["deadlines"][-1]["error_rate"] == rep["error_rate"]  # 1 us = 38 iterations > max_iter
    assert rtl["quantiles"]["max"] <= (20 + 2) * 25.0
    capsys.readouterr()
    other = tmp_path / "other.csv"
    assert main(SWEEP + ["--decoder", "bp[bits=8,frac_bits=3,max_iter=30,alpha=0.625]", "--workers", "0",
                         "--out", str(other)]) == 0
    capsys.readouterr()
    _one_line_error(capsys, main(["deadline", str(other), "--rtl", str(design)]), "max_iter=20")
    (design / "pnr_hx8k.json").unlink()
    _one_line_error(capsys, main(["deadline", str(csv), "--rtl", str(design)]), "give --fmax-mhz")
    _one_line_error(capsys, main(["deadline", str(csv), "--fmax-mhz", "50"]), "--fmax-mhz applies with --rtl")


def test_anytime_policy_rescues_late_shots(latency_csv, capsys):
    args = [str(latency_csv), "--at", "20us,200us,2ms", "--at-work", "10,40,100"]
    miss = {r["decoder"]: r for r in _deadline_json(capsys, *args)}
    anytime = {r["decoder"]: r for r in _deadline_json(capsys, *args, "--policy", "anytime")}
    relay = next(k for k in miss if k.startswith("relay-bp"))
    assert anytime["pymatching"]["wall"] is None  # no answer before its last: nothing to report
    for clock in ("wall", "work"):
        m, a = miss[relay][clock], anytime[relay][clock]
        assert a["policy"] == "anytime" and a["error_rate_no_deadline"] == m["error_rate_no_deadline"]
        for pm, pa in zip(m["deadlines"], a["deadlines"]):
            assert pa["failures"] <= pm["failures"] and pa["late"] == pm["late"]
    rescued = [pm["failures"] - pa["failures"] for pm, pa in zip(miss[relay]["work"]["deadlines"],
                                                                 anytime[relay]["work"]["deadlines"])]
    assert rescued[-1] > 0  # at 100 iterations some late shots already hold their right answer


def test_anytime_policy_for_bp_takes_the_hard_decision(tmp_path, capsys):
    """BP's late shots take the hard decision of their last finished iteration (the trail of ``bp``'s timed
    kernel): fewer failures than ``miss`` at a tight iteration deadline, the same without one."""
    out = tmp_path / "bp.csv"
    sweep = [a if a != "0.004" else "0.01" for a in SWEEP]  # noisier: BP needs several iterations per shot
    assert main(sweep + ["--decoder", "bp[max_iter=30]", "--workers", "0", "--out", str(out)]) == 0
    args = [str(out), "--at", "1ms", "--at-work", "1,2,4"]
    (miss,) = _deadline_json(capsys, *args)
    (anytime,) = _deadline_json(capsys, *args, "--policy", "anytime")
    for clock in ("wall", "work"):
        m, a = miss[clock], anytime[clock]
        assert a["error_rate_no_deadline"] == m["error_rate_no_deadline"]
        for pm, pa in zip(m["deadlines"], a["deadlines"]):
            assert pa["failures"] <= pm["failures"] and pa["late"] == pm["late"]
    first = miss["work"]["deadlines"][0], anytime["work"]["deadlines"][0]
    assert first[0]["late"] > 0 and first[1]["failures"] < first[0]["failures"]


def test_anytime_policy_for_a_relay_ensemble(tmp_path, capsys):
    """``relay-bp[ensemble=8]`` records its trail of answers (chain 0's leg 0, then each lighter converged leg of any
    chain; work in lane-group steps): ``--policy anytime`` reports both clocks, its LER without a deadline is the
    plain LER, and at every deadline it fails no more shots than ``miss`` (as many late)."""
    out = tmp_path / "ens.csv"
    ens = "relay-bp[ensemble=8,legs=20,stop_after=2]"
    assert main(SWEEP + ["--decoder", ens, "--workers", "0", "--out", str(out)]) == 0
    args = [str(out), "--at", "20us,200us,2ms", "--at-work", "5,20,100"]
    (miss,) = _deadline_json(capsys, *args)
    (anytime,) = _deadline_json(capsys, *args, "--policy", "anytime")
    assert "ensemble=8" in anytime["decoder"] and "bits=8" in anytime["decoder"]
    for clock in ("wall", "work"):
        m, a = miss[clock], anytime[clock]
        assert a["policy"] == "anytime"
        assert a["error_rate_no_deadline"] == m["error_rate_no_deadline"] == anytime["error_rate"]
        for pm, pa in zip(m["deadlines"], a["deadlines"]):
            assert pa["failures"] <= pm["failures"] and pa["late"] == pm["late"]
    first = miss["work"]["deadlines"][0], anytime["work"]["deadlines"][0]
    assert first[0]["late"] > 0 and first[1]["failures"] < first[0]["failures"]  # late shots rescued at 5 steps
