"""``qdecode combine``: sum the rows of stats CSVs per strong_id, as ``sinter combine`` does.

Rows with the same strong_id are one task sampled in several batches, runs or machines:
their shots, errors, discards, seconds and custom counts add up. The output is a sinter
CSV in the exact format the sweep writes (:data:`~qdecode.sims.store.CSV_HEADER`, then
one :meth:`~qdecode.sims.store.StatsRow.to_csv_line` per strong_id), so ``qdecode plot``,
``sinter plot`` and ``sinter combine`` read it.

Differences from ``sinter combine``: the default ``--order`` is ``preserve`` (first-seen
order; sinter's default is ``metadata``), the output can go to ``--out``, two rows
that share a strong_id but differ in decoder or metadata are a one-line error naming the
files, and so are two files holding shots of one random stream (the same samples twice:
:mod:`qdecode.sims.seed_streams`), unless ``--allow-shared-streams``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Sequence

from qdecode.errors import InputError

ORDERS = ("preserve", "metadata", "error")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "combine",
        help="sum stats rows with the same strong_id (sinter combine)",
        description=(
            "Sum the rows of sinter-format stats CSVs per strong_id (shots, errors, discards, seconds, custom "
            "counts) and write one row per strong_id as a sinter CSV."
        ),
    )
    p.add_argument("csv", nargs="+", help="stats CSV file(s); - reads one from stdin")
    p.add_argument("--out", help="write the combined CSV here (default: stdout)")
    p.add_argument("--order", default="preserve", metavar="{preserve,metadata,error}",
                   help="row order: preserve = first seen across the files in the given order; metadata = "
                        "ascending by the compact sorted json_metadata, numbers compared as numbers (sinter's "
                        "default); error = ascending by errors / (shots - discards), then discards / shots "
                        "(default: preserve)")
    p.add_argument("--allow-shared-streams", action="store_true",
                   help="pool files even where two of them recorded shots of the same random stream (same strong_id "
                        "and seed=<seed>@<start> custom count: the same samples twice, an interval too narrow); "
                        "default: refuse")
    p.add_argument("--strip-custom-counts", action="store_true",
                   help="drop the custom_counts column's values (default: keep and sum them)")
    p.set_defaults(run=run)


def _read_one(path: str):
    from qdecode.sims.store import parse_rows, read_rows

    if path == "-":
        return parse_rows(sys.stdin.read(), where="<stdin>")
    from qdecode.cli.common import check_input_file

    return read_rows(check_input_file(path))


def _same_task(a, b) -> bool:
    dump = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"))  # noqa: E731
    return a.decoder == b.decoder and dump(a.json_metadata) == dump(b.json_metadata)


def combine_files(paths: Sequence[str], *, allow_shared_streams: bool = False) -> list:
    """The rows of all ``paths`` summed per strong_id, in first-seen order.

    Raises:
        ValueError: a missing or unreadable file, two rows with one strong_id but a
            different decoder or json_metadata (the message names both files), or (unless
            ``allow_shared_streams``) two files holding shots of one seed stream
            (:func:`qdecode.sims.seed_streams.shared_streams`; the same path given twice too).
    """
    from qdecode.sims.seed_streams import describe_shared, shared_streams

    per_file = [(path, _read_one(path)) for path in paths]
    if not allow_shared_streams:
        # keyed by position too: the same file given twice is a duplicate like any other
        shared = shared_streams({f"{path} (argument {i + 1})" if paths.count(path) > 1 else path: rows
                                 for i, (path, rows) in enumerate(per_file)})
        if shared:
            raise InputError(f"{describe_shared(shared)}; combine refuses duplicated samples "
                             f"(--allow-shared-streams pools them anyway)")
    total: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for path, rows in per_file:
        for row in rows:
            first = total.get(row.strong_id)
            if first is None:
                total[row.strong_id], origin[row.strong_id] = row, path
                continue
            if not _same_task(first, row):
                raise InputError(
                    f"strong_id {row.strong_id[:16]}... is {first.decoder!r} {json.dumps(first.json_metadata)} in "
                    f"{origin[row.strong_id]} but {row.decoder!r} {json.dumps(row.json_metadata)} in {path}; "
                    f"a strong_id must identify one task"
                )
            total[row.strong_id] = first + row
    return list(total.values())


def natural_key(text: str) -> tuple:
    """Sort key comparing the runs of digits and dots in ``text`` as numbers, so ``d=9`` < ``d=11``.

    Runs with one dot are floats, without a dot integers, with several dots tuples of
    integers (version-like); the text between them compares as text. Each part is a
    ``(rank, value)`` pair (numbers, then tuples, then text) so that parts of different
    kinds at one position compare by rank and never raise.
    """
    key = []
    for part in re.split(r"([0-9.]+)", text):
        if not part:
            continue
        if re.fullmatch(r"[0-9.]+", part):
            try:
                key.append((0, float(part) if "." in part else int(part)))
                continue
            except ValueError:
                pieces = [int(p) for p in part.split(".") if p]
                if pieces:
                    key.append((1, tuple(pieces)))
                    continue
        key.append((2, part))
    return tuple(key)


def _metadata_key(row) -> tuple:
    return natural_key(json.dumps(row.json_metadata, separators=(",", ":"), sort_keys=True))


def _error_key(row) -> tuple[float, float]:
    kept = row.shots - row.discards
    return (row.errors / kept if kept else 0.0, row.discards / row.shots if row.shots else 0.0)


def order_rows(rows: list, order: str) -> list:
    """``rows`` in the ``--order`` (stable: ties keep first-seen order).

    Raises:
        ValueError: an unknown order.
    """
    if order == "preserve":
        return list(rows)
    if order == "metadata":
        return sorted(rows, key=_metadata_key)
    if order == "error":
        return sorted(rows, key=_error_key)
    raise InputError(f"--order must be one of {', '.join(ORDERS)}, got {order!r}")


def combined_csv(rows: Sequence, *, strip_custom_counts: bool = False) -> str:
    """The sinter CSV text of ``rows``: the header and one line per row, newline-terminated."""
    import dataclasses

    from qdecode.sims.store import CSV_HEADER

    if strip_custom_counts:
        rows = [dataclasses.replace(r, custom_counts={}) for r in rows]
    return "".join(line + "\n" for line in [CSV_HEADER, *(r.to_csv_line() for r in rows)])


def run(args) -> int:
    if args.order not in ORDERS:
        raise InputError(f"--order must be one of {', '.join(ORDERS)}, got {args.order!r}")
    rows = order_rows(combine_files(args.csv, allow_shared_streams=args.allow_shared_streams), args.order)
    text = combined_csv(rows, strip_custom_counts=args.strip_custom_counts)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        print(f"qdecode combine: {len(rows)} rows -> {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
