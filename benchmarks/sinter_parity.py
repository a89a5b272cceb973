"""Parity with ``sinter collect`` on circuits qdecode did not write.

Writes stim-generated circuits (``color_code:memory_xyz`` at d = 3, 5, 7 and
``repetition_code:memory`` at d = 3, 5, 7, two p values each) to files with sinter-style
``key=value`` names, then collects them twice on the same files:

* ``qdecode sweep --circuit 'DIR/*.stim' --decoder bposd --decoder relay-bp``;
* ``sinter collect --circuits DIR/*.stim --metadata_func auto --decoders <bposd's label> <relay-bp's label>
  --custom_decoders_module_function qdecode:sinter_decoders`` (our plug-in in sinter's harness), with
  the labels ``qdecode sweep`` records (``default_label``: today's defaults spelled out; the bare
  ``qd-bposd`` / ``qd-relay-bp`` keep their old meanings, ``osd_key=last`` and float64).

For every (file, decoder) it prints both logical error rates with sinter's ``fit_binomial``
likelihood intervals (factor 1000) and whether they overlap. A postselection check follows:
a repetition-code circuit whose first-round detectors carry a non-zero 4th coordinate,
collected with ``--postselect coord4`` and with sinter's
``--postselect_detectors_with_non_zero_4th_coord``; discard and error counts are compared the
same way. Last, ``qdecode threshold`` and ``qdecode plot`` run on qdecode's CSV, reading d and p
from the file-name metadata.

Usage::

    python benchmarks/sinter_parity.py [--out DIR] [--max-errors 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import stim

from qdecode.sims.stats import fit_binomial
from qdecode.sims.store import merge_rows, read_rows
from qdecode.sinter_adapter import default_label

BIN = Path(sys.executable).parent


def write_circuits(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for d in (3, 5, 7):
        for p in (0.003, 0.006):
            c = stim.Circuit.generated("color_code:memory_xyz", distance=d, rounds=d,
                                       after_clifford_depolarization=p, before_round_data_depolarization=p,
                                       before_measure_flip_probability=p, after_reset_flip_probability=p)
            c.to_file(folder / f"code=color,d={d},p={p},r={d},b=XYZ.stim")
        for p in (0.03, 0.06):
            c = stim.Circuit.generated("repetition_code:memory", distance=d, rounds=d,
                                       after_clifford_depolarization=p, before_measure_flip_probability=p)
            c.to_file(folder / f"code=rep,d={d},p={p},r={d},b=Z.stim")


def postselected_circuit(d: int, p: float) -> stim.Circuit:
    """Repetition code whose first-round detectors get 4th coordinate 1 (postselected by sinter's rule)."""
    base = stim.Circuit.generated("repetition_code:memory", distance=d, rounds=d,
                                  after_clifford_depolarization=p, before_measure_flip_probability=p)
    out = stim.Circuit()
    for inst in base.flattened():
        if inst.name == "DETECTOR":
            c = (list(inst.gate_args_copy()) + [0.0, 0.0])[:2]
            out.append("DETECTOR", inst.targets_copy(), c + [0.0, 1.0 if c[1] == 0 else 0.0])
        else:
            out.append(inst)
    return out


def run(cmd: list[str], env=None) -> None:
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, env=env)


def key_of(row):
    """(recorded decoder name, metadata): both harnesses record ``default_label(name)`` verbatim."""
    return row.decoder, tuple(sorted(row.json_metadata.items()))


def interval(hits: int, shots: int):
    return fit_binomial(num_shots=shots, num_hits=hits, max_likelihood_factor=1e3)


def compare(ours_csv: Path, theirs_csv: Path, *, what: str) -> bool:
    ours = {key_of(r): r for r in merge_rows(read_rows(ours_csv)).values()}
    theirs = {key_of(r): r for r in merge_rows(read_rows(theirs_csv)).values()}
    all_ok = True
    print(f"\n| file metadata | decoder | qdecode {what} | sinter + plug-in {what} | intervals overlap |")
    print("|---|---|---|---|---|")
    for key in sorted(ours, key=lambda k: (k[1], k[0])):
        a, b = ours[key], theirs.get(key)
        if b is None:
            print(f"| {dict(key[1])} | {key[0].split('[')[0]} | missing in sinter's CSV | | no |")
            all_ok = False
            continue
        cells, fits = [], []
        for row in (a, b):
            hits = row.errors if what == "LER" else row.discards
            shots = row.shots - row.discards if what == "LER" else row.shots
            fit = interval(hits, shots)
            fits.append(fit)
            cells.append(f"{fit.best:.4g} [{fit.low:.4g}, {fit.high:.4g}] ({hits} / {shots})")
        ok = fits[0].low <= fits[1].high and fits[1].low <= fits[0].high
        all_ok &= ok
        meta = ",".join(f"{k}={v}" for k, v in key[1])
        print(f"| {meta} | {key[0].split('[')[0]} | {cells[0]} | {cells[1]} | {'yes' if ok else 'NO'} |")
    return all_ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="out/sinter_parity")
    ap.add_argument("--max-errors", type=int, default=200)
    ap.add_argument("--max-shots", type=int, default=2_000_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--compare-only", action="store_true", help="only compare the CSVs already in --out")
    args = ap.parse_args()
    out = Path(args.out)
    if args.compare_only:
        ok = compare(out / "qdecode.csv", out / "sinter.csv", what="LER")
        for what in ("discard rate", "LER"):
            ok &= compare(out / "post_qdecode.csv", out / "post_sinter.csv", what=what)
        print(f"\nall intervals overlap: {ok}")
        return 0 if ok else 1
    circuits = out / "circuits"
    write_circuits(circuits)
    q_csv, s_csv = out / "qdecode.csv", out / "sinter.csv"
    common = ["--max-errors", str(args.max_errors), "--max-shots", str(args.max_shots)]
    run([str(BIN / "qdecode"), "sweep", "--circuit", str(circuits / "*.stim"), "--decoder", "bposd",
         "--decoder", "relay-bp", *common, "--workers", str(args.workers), "--quiet", "--out", str(q_csv)])
    files = sorted(str(p) for p in circuits.glob("*.stim"))
    run([str(BIN / "sinter"), "collect", "--circuits", *files, "--metadata_func", "auto",
         "--decoders", default_label("bposd"), default_label("relay-bp"),
         "--custom_decoders_module_function", "qdecode:sinter_decoders",
         "--max_errors", str(args.max_errors), "--max_shots", str(args.max_shots),
         "--processes", str(args.workers), "--save_resume_filepath", str(s_csv), "--quiet"])
    ok = compare(q_csv, s_csv, what="LER")

    post = out / "postselect"
    post.mkdir(exist_ok=True)
    path = post / "code=rep,d=5,p=0.03,r=5.stim"
    postselected_circuit(5, 0.03).to_file(path)
    pq, ps = out / "post_qdecode.csv", out / "post_sinter.csv"
    shots = ["--max-shots", "200000"]
    run([str(BIN / "qdecode"), "sweep", "--circuit", str(path), "--decoder", "pymatching", "--postselect", "coord4",
         "--max-errors", "100000000", *shots, "--workers", str(args.workers), "--quiet", "--out", str(pq)])
    run([str(BIN / "sinter"), "collect", "--circuits", str(path), "--metadata_func", "auto", "--decoders",
         "pymatching", "--postselect_detectors_with_non_zero_4th_coord", "--max_shots", "200000",
         "--processes", str(args.workers), "--save_resume_filepath", str(ps), "--quiet"])
    ok &= compare(pq, ps, what="discard rate")
    ok &= compare(pq, ps, what="LER")
    same_ids = {r.strong_id for r in read_rows(pq)} == {r.strong_id for r in read_rows(ps)}
    print(f"\npostselected task strong_id equal to sinter's: {same_ids}")

    run([str(BIN / "qdecode"), "threshold", str(q_csv), "--filter", "code=rep"])
    run([str(BIN / "qdecode"), "plot", str(q_csv), "--out", str(out / "parity.png")])
    print(f"\nall intervals overlap: {ok}")
    return 0 if ok and same_ids else 1


if __name__ == "__main__":
    sys.exit(main())
