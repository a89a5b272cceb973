"""`qdecode codes` (d_source column) and user BB codes given as a spec to --code / `qdecode circuit`."""

from __future__ import annotations

import pytest

from qdecode.cli.main import main
from qdecode.sims.store import read_rows

SPEC = "bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2]"


def test_codes_lists_d_source(capsys):
    assert main(["codes"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header[:6] == ["name", "n", "k", "d", "d_source", "kind"]
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for name in ("toric", "repetition", "hgp58_16_3", "gb48_6_8", "gb254_28", "cbb30_4_6", "lp882_24",
                 "surface", "bb72_12_6", "bch63_45", "polar32_16"):
        assert name in lines, name
    assert "exact: MILP" in lines["hgp58_16_3"] and "exact: MILP" in lines["gb48_6_8"]
    assert "cited: arXiv:2308.07915" in lines["bb144_12_12"]
    assert "known: d" in lines["surface"] and "2d^2" in lines["toric"]
    assert "designed" in lines["bch63_45"]
    assert " ? " in lines["gb254_28"] and "14 <= d <= 20" in lines["gb254_28"]
    assert "bb[l=12,m=6,A=x3+y+y2,B=y3+x+x2]" in out  # how to give a BB code of one's own


def test_circuit_from_a_bb_spec(capsys):
    assert main(["circuit", SPEC, "--noise", "code-capacity", "--p", "0.01"]) == 0
    spec_text = capsys.readouterr().out
    assert main(["circuit", "bb72_12_6", "--noise", "code-capacity", "--p", "0.01"]) == 0
    assert spec_text == capsys.readouterr().out and "DETECTOR" in spec_text
    assert main(["circuit", SPEC, "--noise", "bb-uniform", "--p", "0.001", "--rounds", "2", "--dem"]) == 0
    assert "error(" in capsys.readouterr().out


def test_sweep_a_bb_spec_and_a_construction_at_code_capacity(tmp_path):
    out = tmp_path / "s.csv"
    common = ["--noise", "code-capacity", "--p", "0.03", "--decoder", "bposd", "--max-shots", "300",
              "--max-errors", "1000", "--workers", "0", "--quiet", "--out", str(out)]
    assert main(["sweep", "--code", SPEC, *common]) == 0
    assert main(["sweep", "--code", "toric", "--d", "3", *common]) == 0
    rows = read_rows(out)
    codes = {r.json_metadata["code"] for r in rows}
    assert codes == {SPEC, "toric"}
    assert sum(r.shots for r in rows) == 600
    assert all("d" not in r.json_metadata for r in rows if r.json_metadata["code"] == SPEC)  # d unknown


@pytest.mark.parametrize("argv,match", [
    (["circuit", "bb[l=6,m=6,A=x3+y+y2]", "--noise", "code-capacity", "--p", "0.01"], "missing key B"),
    (["circuit", "bb[l=6,m=6,A=x3+y+y2,B=y3+x+w]", "--noise", "code-capacity", "--p", "0.01"],
     "cannot parse monomial 'w'"),
    (["circuit", SPEC, "--noise", "bb-uniform", "--p", "0.01"], "rounds has no default"),
    (["circuit", SPEC, "--d", "6", "--noise", "code-capacity", "--p", "0.01"], "no known distance"),
    (["sweep", "--code", "bb[l=0,m=6,A=x3+y+y2,B=y3+x+x2]", "--noise", "code-capacity", "--p", "0.01",
      "--decoder", "bposd", "--workers", "0", "--quiet"], "l must be a positive integer"),
    (["bench", "--code", "bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2,e=1]", "--noise", "code-capacity", "--p", "0.01",
      "--decoder", "bposd"], "unknown key 'e'"),
])
def test_bad_bb_specs_exit_2_with_one_line(argv, match, cli_error, tmp_path):
    if argv[0] == "sweep":
        argv = argv + ["--out", str(tmp_path / "x.csv")]
    err = cli_error(argv)
    assert match in err
