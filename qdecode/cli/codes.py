"""``qdecode codes``: the code catalogue (names accepted by --code and `qdecode circuit`)."""

from __future__ import annotations

#: Printed under the table: the catalogue also takes user BB codes written as a spec.
SPEC_HELP = ("user BB codes: --code 'bb[l=12,m=6,A=x3+y+y2,B=y3+x+x2]' (k by rank; d unknown unless "
             "given: ',d=N' states it, ',d=exact' computes it by MILP)")


def add_parser(sub) -> None:
    from qdecode.cli.help_text import HelpFormatter

    p = sub.add_parser("codes", help="list the code catalogue",
                       description="List every code with n, k, d, where d comes from, and provenance. "
                                   + SPEC_HELP + ".",
                       formatter_class=HelpFormatter)
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.codes.catalog import list_codes

    rows = list_codes()
    columns = ("name", "n", "k", "d", "d_source", "kind")
    table = [columns] + [tuple("?" if row[c] is None else str(row[c]) for c in columns) for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    for r, row in zip(table, [None] + rows):
        provenance = "provenance" if row is None else row["provenance"]
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + provenance)
    print()
    print(SPEC_HELP)
    return 0
