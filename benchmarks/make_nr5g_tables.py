"""Write ``codes/data/nr5g_bg1.csv`` and ``nr5g_bg2.csv``: the 5G NR LDPC base-graph shift tables.

The values are those of 3GPP TS 38.212 Tables 5.3.2-2 (BG1, 46 x 68, 316 nonzero blocks) and
5.3.2-3 (BG2, 42 x 52, 197 nonzero blocks): for every nonzero block ``(i, j)`` the shift
``V_{i,j}`` for each of the eight lifting sets ``i_LS = 0..7`` (Table 5.3.2-1). They are read
from py3gpp's ``py3gpp/codes/bg1.csv`` / ``bg2.csv`` and checked entry for entry against
sionna's ``sionna/phy/fec/ldpc/codes/5G_bg1.csv`` / ``5G_bg2.csv`` (both packages are test
oracles of this project; their versions go into each file's header). The script stops if the
two disagree, or if a table does not have the standard's shape and number of nonzero blocks.

Output format (what :mod:`qdecode.codes.nr5g` reads): ``#`` comment lines, then one line per
nonzero block, ``i j V_0 V_1 ... V_7``, rows in increasing ``i`` and, within a row, ``j``.

Usage: python benchmarks/make_nr5g_tables.py [--check]   (--check: compare, write nothing)
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata, util
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "codes" / "data"
SHAPES = {1: (46, 68, 316, "5.3.2-2"), 2: (42, 52, 197, "5.3.2-3")}


def _installed(*dists: str) -> str:
    """The first of ``dists`` that is installed (sionna ships as ``sionna`` or ``sionna-no-rt``)."""
    for dist in dists:
        try:
            metadata.version(dist)
            return dist
        except metadata.PackageNotFoundError:
            continue
    raise SystemExit(f"none of {dists} is installed")


def _package_file(package: str, relpath: str) -> str:
    """Text of a file shipped inside ``package``, found without importing it (sionna imports torch)."""
    spec = util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {package} is not installed")
    return (Path(next(iter(spec.submodule_search_locations))) / relpath).read_text()


def _license(dist: str) -> str:
    """The licence a distribution declares (its License-Expression, License or licence classifier)."""
    meta = metadata.metadata(dist)
    for key in ("License-Expression", "License"):
        value = (meta.get(key) or "").strip()
        if value and "\n" not in value and len(value) < 40:
            return value
    found = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    return found[0] if found else "licence not stated"


def parse_oracle_csv(text: str) -> dict[tuple[int, int], tuple[int, ...]]:
    """py3gpp's / sionna's layout: two header lines, then ``row;col;V0;..;V7`` with the row given only
    on its first line (later lines of the row start with ``;``)."""
    table: dict[tuple[int, int], tuple[int, ...]] = {}
    row = -1
    for line in text.splitlines()[2:]:
        if not line.strip():
            continue
        cells = line.split(";")
        if cells[0].strip():
            row = int(cells[0])
        col = int(cells[1])
        values = tuple(int(c) for c in cells[2:10])
        if len(values) != 8 or row < 0 or (row, col) in table:
            raise SystemExit(f"unexpected line {line!r}")
        table[(row, col)] = values
    return table


def check_shape(bg: int, table: dict[tuple[int, int], tuple[int, ...]], who: str) -> None:
    rows, cols, nnz, _ = SHAPES[bg]
    if len(table) != nnz:
        raise SystemExit(f"{who}: BG{bg} has {len(table)} nonzero blocks, TS 38.212 has {nnz}")
    if max(i for i, _ in table) != rows - 1 or max(j for _, j in table) != cols - 1:
        raise SystemExit(f"{who}: BG{bg} is not {rows} x {cols}")
    if any(not 0 <= v < 384 for vs in table.values() for v in vs):
        raise SystemExit(f"{who}: BG{bg} has a shift outside 0..383")


def render(bg: int, table: dict[tuple[int, int], tuple[int, ...]], sionna: str) -> str:
    """The file's text: header comments (provenance, versions, licences), then one line per block."""
    rows, cols, nnz, tab = SHAPES[bg]
    head = [
        f"# 5G NR LDPC base graph {bg} (BG{bg}): shift values V_i,j of 3GPP TS 38.212 Table {tab}",
        f"# {rows} rows x {cols} columns, {nnz} nonzero blocks; block (i, j) of the parity-check matrix is the",
        "# Z x Z identity cyclically shifted by P_i,j = V_i,j(i_LS) mod Z (38.212 section 5.3.2); absent blocks are 0.",
        "# One line per nonzero block: i j V(i_LS=0) V(i_LS=1) ... V(i_LS=7).",
        f"# Transcribed by benchmarks/make_nr5g_tables.py from py3gpp {metadata.version('py3gpp')} "
        f"(py3gpp/codes/bg{bg}.csv),",
        f"# checked entry for entry against sionna {metadata.version(sionna)} "
        f"(sionna/phy/fec/ldpc/codes/5G_bg{bg}.csv).",
        f"# Licences the packages declare: py3gpp {_license('py3gpp')}; sionna {_license(sionna)}.",
    ]
    body = [" ".join(str(x) for x in (i, j, *table[(i, j)])) for i, j in sorted(table)]
    return "\n".join(head + body) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="check the committed files, write nothing")
    args = ap.parse_args()
    _installed("py3gpp")
    sionna = _installed("sionna-no-rt", "sionna")
    stale = []
    for bg in (1, 2):
        ours = parse_oracle_csv(_package_file("py3gpp", f"codes/bg{bg}.csv"))
        theirs = parse_oracle_csv(_package_file("sionna", f"phy/fec/ldpc/codes/5G_bg{bg}.csv"))
        check_shape(bg, ours, "py3gpp")
        check_shape(bg, theirs, "sionna")
        if ours != theirs:
            diff = sorted(set(ours.items()) ^ set(theirs.items()))[:4]
            raise SystemExit(f"BG{bg}: py3gpp and sionna disagree, e.g. {diff}")
        path = OUT / f"nr5g_bg{bg}.csv"
        text = render(bg, ours, sionna)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(OUT.parent.parent)))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(OUT.parent.parent)} ({len(ours)} blocks)")
    if stale:
        sys.exit(f"out of date: {', '.join(stale)}; run python benchmarks/make_nr5g_tables.py")


if __name__ == "__main__":
    main()
