"""``qdecode codes``: the code catalogue (names accepted by --code and `qdecode circuit`)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("codes", help="list the code catalogue", description="List every code with n, k, d and provenance.")
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.codes.catalog import list_codes

    rows = list_codes()
    header = ("name", "n", "k", "d", "kind", "provenance")
    table = [header] + [tuple("" if v is None else str(v) for v in row) for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header) - 1)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1])
    return 0
