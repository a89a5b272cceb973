"""``qdecode codes``: the code catalogue (names accepted by --code and `qdecode circuit`)."""

from __future__ import annotations


def add_parser(sub) -> None:
    from qdecode.cli.help_text import HelpFormatter

    p = sub.add_parser("codes", help="list the code catalogue",
                       description="List every code with n, k, d and provenance.",
                       formatter_class=HelpFormatter)
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.codes.catalog import list_codes

    rows = list_codes()
    columns = ("name", "n", "k", "d", "kind")
    table = [columns] + [tuple(str(row[c]) for c in columns) for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
    for r, row in zip(table, [None] + rows):
        provenance = "provenance" if row is None else row["provenance"]
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + provenance)
    return 0
