"""Sweep statistics rows and their CSV file, in sinter's exact schema.

A :class:`StatsRow` is one additive partial sum for one task (identified by its
``strong_id``). Files hold many rows; rows with the same strong_id add up. The
text format is byte-for-byte the one ``sinter collect`` writes, so ``sinter
plot`` / ``sinter combine`` read our files and we read theirs::

         shots,    errors,  discards, seconds,decoder,strong_id,json_metadata,custom_counts
         10000,        42,         0,    1.23,pymatching,9f...,"{""d"":5,""p"":0.005}",

Numbers are right-justified to widths 10/10/10/8; ``seconds`` is written with
3 decimals below 1 s, 2 below 10 s and 1 otherwise; ``json_metadata`` and
``custom_counts`` are compact sorted JSON, CSV-quoted.

Crash safety: the writer appends one line per finished batch and flushes+fsyncs
it. A row is complete only when it has all its columns *and* ends with its newline
(every row is written with its newline in one call). A process killed mid-write can
leave a final line without its newline, even one that happens to parse (cut right
after the ``json_metadata`` field, say, losing its ``custom_counts``); such a line is
never read as a row: the reader skips it and the appender cuts it off, with one
warning, so no finished batch is lost and nothing is counted twice.

One writer at a time: :class:`StatsWriter` takes an exclusive POSIX lock
(``fcntl.lockf``) on the side file ``<csv>.lock`` and holds it until closed (or until
the process dies); a second writer fails at once with :class:`CsvLockedError`. POSIX
locks also work across machines on NFS. ``<csv>`` is the file's real path (symbolic links
resolved), so two spellings of one file (``link.csv`` -> ``stats.csv``) share one lock.

This module imports only the standard library and numpy, so old CSVs can be
re-read and re-plotted without stim or numba.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import logging
import os
from collections import Counter
from typing import Any, Iterable, Mapping

from qdecode.errors import InputError

log = logging.getLogger("qdecode.sims.store")

BASE_COLUMNS = ("shots", "errors", "discards", "seconds", "decoder", "strong_id", "json_metadata")


def _csv_field(value: Any, width: int | None = None) -> str:
    """One CSV-escaped field (quotes doubled where needed), right-justified to ``width``."""
    buf = io.StringIO()
    csv.writer(buf).writerow([value])
    text = buf.getvalue().rstrip("\r\n")
    return text.rjust(width) if width is not None else text


def _format_seconds(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds:0.3f}"
    if seconds < 10:
        return f"{seconds:0.2f}"
    return f"{seconds:0.1f}"


def _compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


CSV_HEADER = ",".join(
    [
        _csv_field("shots", 10),
        _csv_field("errors", 10),
        _csv_field("discards", 10),
        _csv_field("seconds", 8),
        "decoder",
        "strong_id",
        "json_metadata",
        "custom_counts",
    ]
)


@dataclasses.dataclass(frozen=True)
class StatsRow:
    """Additive Monte-Carlo counts for one task (sinter's ``TaskStats``).

    Attributes:
        strong_id: hex SHA-256 identifying the task (circuit, decoder label, metadata).
        decoder: the decoder label, parameters included (``"bp[alpha=0.625]"``).
        json_metadata: JSON-serialisable metadata (``d``, ``p``, ``r``, ``b``, ``noise``, ``code``...).
        shots: shots sampled.
        errors: shots where any observable was mispredicted.
        discards: post-selected shots (never counted as errors).
        seconds: CPU-core seconds spent sampling and decoding.
        custom_counts: additive named counters (``bp_not_converged``...).
    """

    strong_id: str
    decoder: str
    json_metadata: Any
    shots: int = 0
    errors: int = 0
    discards: int = 0
    seconds: float = 0.0
    custom_counts: Mapping[str, int] = dataclasses.field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.shots < 0 or self.errors < 0 or self.discards < 0 or self.seconds < 0:
            raise InputError(f"negative count in {self!r}")
        if self.errors + self.discards > self.shots:
            raise InputError(
                f"errors + discards > shots: errors={self.errors}, "
                f"discards={self.discards}, shots={self.shots}"
            )
        if not isinstance(self.custom_counts, Counter):
            object.__setattr__(self, "custom_counts", Counter(self.custom_counts))

    def __add__(self, other: "StatsRow") -> "StatsRow":
        if other.strong_id != self.strong_id:
            raise InputError(f"cannot add rows of different tasks: {self.strong_id} vs {other.strong_id}")
        if other.decoder != self.decoder or _compact_json(other.json_metadata) != _compact_json(self.json_metadata):
            raise InputError(f"rows share strong_id {self.strong_id[:16]}... but differ in {_difference(self, other)}; "
                             f"a strong_id must identify one task")
        counts = Counter(self.custom_counts)
        counts.update(other.custom_counts)  # not `+`, which drops a count that sums to 0: "0 recorded" is not "absent"
        return dataclasses.replace(
            self,
            shots=self.shots + other.shots,
            errors=self.errors + other.errors,
            discards=self.discards + other.discards,
            seconds=self.seconds + other.seconds,
            custom_counts=counts,
        )

    def to_csv_line(self) -> str:
        """The row as one line of sinter's CSV (no trailing newline)."""
        counts = {k: int(v) for k, v in self.custom_counts.items()}
        return ",".join(
            [
                _csv_field(self.shots, 10),
                _csv_field(self.errors, 10),
                _csv_field(self.discards, 10),
                _csv_field(_format_seconds(float(self.seconds)), 8),
                _csv_field(self.decoder),
                _csv_field(self.strong_id),
                _csv_field(_compact_json(self.json_metadata)),
                _csv_field(_compact_json(counts)) if counts else "",
            ]
        )


def _difference(a: StatsRow, b: StatsRow) -> str:
    """What tells two rows' tasks apart: ``decoder 'x' vs 'y'`` and/or ``json_metadata noise: 'sd6' vs 'si1000'``."""
    parts = [f"decoder {a.decoder!r} vs {b.decoder!r}"] if a.decoder != b.decoder else []
    ma, mb = a.json_metadata, b.json_metadata
    if isinstance(ma, Mapping) and isinstance(mb, Mapping):
        keys = [k for k in sorted(set(ma) | set(mb), key=str)
                if k not in ma or k not in mb or _compact_json(ma[k]) != _compact_json(mb[k])]
        absent = "(absent)"
        parts += [f"json_metadata {k}: {_compact_json(ma[k]) if k in ma else absent} vs "
                  f"{_compact_json(mb[k]) if k in mb else absent}" for k in keys]
    elif _compact_json(ma) != _compact_json(mb):
        parts.append(f"json_metadata {_compact_json(ma)} vs {_compact_json(mb)}")
    return ", ".join(parts)


class CsvFormatError(InputError):
    """A stats CSV that cannot be read (missing columns, unparsable row)."""


def _parse_row(record: Mapping[str, str], where: str) -> StatsRow:
    try:
        counts_text = (record.get("custom_counts") or "").strip()
        return StatsRow(
            shots=int(record["shots"]),
            errors=int(record["errors"]),
            discards=int(record["discards"]),
            seconds=float(record["seconds"]),
            decoder=record["decoder"].strip(),
            strong_id=record["strong_id"].strip(),
            json_metadata=json.loads(record["json_metadata"]),
            custom_counts=Counter(json.loads(counts_text)) if counts_text else Counter(),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CsvFormatError(f"{where}: unreadable stats row ({exc})") from exc


def _header_fields(line: str, where: str, what: str) -> list[str]:
    """The column names of a header line; a line the csv module rejects (a stray carriage return
    inside it, say) is a :class:`CsvFormatError` ``"<where>: <what> (...)"``, not a ``csv.Error``."""
    if not line.strip():
        return []
    try:
        return [h.strip() for h in next(csv.reader([line]))]
    except csv.Error as exc:
        reason = str(exc).split(" - ")[0]  # drop the csv module's advice about opening modes
        raise CsvFormatError(f"{where}: {what}: unparsable header line {line[:40]!r} ({reason})") from None


def read_rows(path: str | os.PathLike, *, skip_truncated_last_line: bool = True,
              warn_truncated: bool = True) -> list[StatsRow]:
    """Read every row of a sinter-format stats CSV.

    Args:
        path: CSV file written by qdecode or ``sinter collect``.
        skip_truncated_last_line: a last line without a newline (the trace of a killed
            writer, whether or not it parses) is skipped, with a warning when
            ``warn_truncated``, instead of raising.

    Raises:
        CsvFormatError: missing base columns, a header without its newline, or a row that is
            not a truncated last line and lacks columns or does not parse.
    """
    try:
        with open(path, "r", newline="", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise CsvFormatError(f"{path}: no such stats CSV") from None
    except UnicodeDecodeError:
        raise CsvFormatError(f"{path}: not a text CSV file (binary data)") from None
    return parse_rows(text, where=str(path), skip_truncated_last_line=skip_truncated_last_line,
                      warn_truncated=warn_truncated)


def parse_rows(text: str, *, where: str = "<text>", skip_truncated_last_line: bool = True,
               warn_truncated: bool = True) -> list[StatsRow]:
    """Parse CSV text; see :func:`read_rows`."""
    if not text.strip():
        return []
    lines = text.splitlines(keepends=True)
    truncated_tail = not text.endswith("\n")
    header = _header_fields(lines[0], where, "not a sinter stats CSV")
    missing = [c for c in BASE_COLUMNS if c not in header]
    if missing:
        raise CsvFormatError(f"{where}: not a sinter stats CSV, missing column(s) {', '.join(missing)}")
    if not lines[0].endswith("\n"):
        raise CsvFormatError(f"{where}: the header line is incomplete (no newline)")
    rows: list[StatsRow] = []
    for lineno, line in enumerate(lines[1:], start=2):
        if lineno == len(lines) and truncated_tail:
            # An unterminated last line is the fragment of an interrupted write, even when it parses.
            if skip_truncated_last_line:
                if warn_truncated:
                    log.warning("%s:%d: skipping truncated last line (interrupted write): %r", where, lineno, line[:80])
                continue
            raise CsvFormatError(f"{where}:{lineno}: truncated last line (no newline)")
        if not line.strip():
            continue
        try:
            values = next(csv.reader([line]))
        except (csv.Error, StopIteration) as exc:
            raise CsvFormatError(f"{where}:{lineno}: unparsable line ({exc})") from exc
        if len(values) != len(header):
            raise CsvFormatError(f"{where}:{lineno}: expected {len(header)} fields, got {len(values)}")
        rows.append(_parse_row(dict(zip(header, values)), f"{where}:{lineno}"))
    return rows


def merge_rows(rows: Iterable[StatsRow]) -> dict[str, StatsRow]:
    """Sum rows per strong_id (``sinter combine``), preserving first-seen order."""
    total: dict[str, StatsRow] = {}
    for row in rows:
        total[row.strong_id] = total[row.strong_id] + row if row.strong_id in total else row
    return total


class CsvLockedError(InputError):
    """Another process holds the write lock of a stats CSV."""


def lock_path_for(csv_path: str | os.PathLike) -> str:
    """The side file whose lock guards ``csv_path``: ``<real path of the CSV>.lock``.

    Keyed on the real path (symbolic links in the name and its folders resolved, even when
    the CSV does not exist yet), not on the name given: otherwise ``--out link.csv`` (a link
    to ``stats.csv``) would take ``link.csv.lock`` and write beside a sweep holding
    ``stats.csv.lock``, recording every batch twice. (Hard links are not detected: they have
    no single real name.)
    """
    return os.path.realpath(os.fspath(csv_path)) + ".lock"


def _acquire_lock(lock_path: str, csv_path: str):
    """Exclusive POSIX lock on the side file ``lock_path`` (kept open: closing it releases the lock).

    The lock sits on a side file that nothing else opens, because a POSIX lock is dropped
    when the process closes *any* descriptor of the locked file, and the sweep reads the
    CSV while it holds the lock. The side file is left in place (removing it would race
    with a waiting writer). ``lock_path`` comes from :func:`lock_path_for`.
    """
    import fcntl

    real = lock_path[: -len(".lock")]
    spelled = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(csv_path))), os.path.basename(csv_path))
    same = f" (the same file as {real})" if spelled != real else ""  # the name given is a link
    busy = CsvLockedError(
        f"{csv_path}{same}: another qdecode sweep is writing this file; wait for it to finish "
        f"(then run again to resume) or choose another --out"
    )
    key = os.path.realpath(lock_path)
    if key in _LOCKS_HELD:  # POSIX locks never conflict within one process: track our own
        raise busy
    f = open(lock_path, "a+b")
    try:
        fcntl.lockf(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise busy from None
    _LOCKS_HELD.add(key)
    return _HeldLock(f, key)


_LOCKS_HELD: set[str] = set()


class _HeldLock:
    """An acquired CSV lock: the open side file and its key in this process's registry."""

    def __init__(self, file, key: str):
        self._file, self._key = file, key

    def close(self) -> None:
        if self._file is not None:
            _LOCKS_HELD.discard(self._key)
            self._file.close()
            self._file = None


class StatsWriter:
    """Append-only, exclusively locked writer: one flushed, fsynced line per finished batch.

    Opening takes an exclusive lock on ``<csv>.lock`` (:func:`lock_path_for`: the CSV's real
    path, so a symbolic link to a locked CSV is locked too; released by :meth:`close` or when the
    process dies) and fails at once with :class:`CsvLockedError` if another writer holds
    it. Then it checks an existing file's header and, if the last line lacks its newline
    (the fragment of a killed writer: rows are written with their newline in one call),
    cuts that fragment off with one warning, so the file stays a valid CSV.
    """

    def __init__(self, path: str | os.PathLike, *, fsync: bool = True):
        self.path = os.fspath(path)
        self._fsync = fsync
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self._lock = _acquire_lock(lock_path_for(self.path), self.path)
        try:
            self._file = open(self.path, "a+b")
            self._repair()
        except BaseException:
            self._release()
            raise

    def _repair(self) -> None:
        self._file.seek(0)
        data = self._file.read()
        if not data:
            self._write(CSV_HEADER + "\n")
            return
        first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
        header = _header_fields(first, self.path, "refusing to append, not a sinter stats CSV")
        missing = [c for c in BASE_COLUMNS if c not in header]
        if missing:
            raise CsvFormatError(
                f"{self.path}: refusing to append, not a sinter stats CSV (missing {', '.join(missing)})"
            )
        if not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            if keep == 0:
                raise CsvFormatError(f"{self.path}: header line is incomplete")
            log.warning("%s: cutting truncated last line (interrupted write): %r", self.path, data[keep:][:80])
            self._file.truncate(keep)

    def _write(self, text: str) -> None:
        self._file.write(text.encode("utf-8"))
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def append(self, row: StatsRow) -> None:
        self._write(row.to_csv_line() + "\n")

    def _release(self) -> None:
        if getattr(self, "_file", None) is not None:
            self._file.close()
        self._lock.close()  # closing the lock file's only descriptor releases the lock

    def close(self) -> None:
        self._release()

    def __enter__(self) -> "StatsWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
