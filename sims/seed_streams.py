"""Which random stream a stats row's shots came from, recorded in the row itself.

A sweep samples task ``t`` from the stream ``(seed, strong_id, shots recorded at start)``
(:mod:`qdecode.sims.sweep`). Two runs that start one task from the same seed and the same
recorded shot count draw *the same shots*: pooled, they count every sample twice and the
binomial interval shrinks by about 1/sqrt(2) for nothing. So every row a sweep writes carries
one provenance entry in its ``custom_counts``::

    "seed=<seed>@<shots at start>": <shots of this row drawn from that stream>

It is an ordinary additive counter (the value is a shot count), so sinter's and qdecode's CSV
readers, ``sinter combine`` and ``qdecode combine`` keep it and sum it; summed over a file's
rows for one strong_id, each key's value is the number of shots drawn from that stream.

What this buys:

* **Resume continues the file's streams.** With no ``--seed``, a sweep resuming a file takes the
  seed its rows recorded (:func:`recorded_seed`), so ``--seed`` reproducibility survives a kill;
  a new file gets a fresh 63-bit seed (:func:`fresh_seed`), as ``sinter collect`` samples fresh.
* **Duplicates are found.** Within one file, rows of one stream are consecutive batches of it.
  The same ``(strong_id, key)`` in two files means both hold the stream's first shots:
  :func:`shared_streams` finds them and ``qdecode combine`` refuses to pool them.

Rows written by ``sinter collect`` (or by qdecode before this record) carry no such key: they
are never reported as shared, and they never supply a seed.

The keys are provenance, not per-shot statistics: a custom count plotted per shot must skip
them (:func:`is_seed_key`). This module imports only the standard library, like the CSV
readers it serves.
"""

from __future__ import annotations

import re
import secrets
from typing import Iterable, Mapping, NamedTuple, Sequence

#: Prefix of the provenance keys in ``custom_counts``.
SEED_KEY_PREFIX = "seed="
_KEY = re.compile(r"seed=(\d+)@(\d+)\Z")


class SharedStream(NamedTuple):
    """One stream recorded in two sources: the strong_id, the key, the two sources, and the
    shots each drew from it (their minimum is the number of samples counted twice)."""

    strong_id: str
    key: str
    first: str
    second: str
    first_shots: int
    second_shots: int


def seed_key(seed: int, shots_at_start: int) -> str:
    """The custom-count key of the stream ``(seed, strong_id, shots_at_start)`` (strong_id: the row's)."""
    return f"{SEED_KEY_PREFIX}{int(seed)}@{int(shots_at_start)}"


def is_seed_key(key: str) -> bool:
    """Whether a ``custom_counts`` key is a seed-stream record (not a per-shot statistic)."""
    return key.startswith(SEED_KEY_PREFIX)


def parse_seed_key(key: str) -> tuple[int, int] | None:
    """``(seed, shots_at_start)`` of a seed key, or None for any other key."""
    match = _KEY.match(key)
    return (int(match.group(1)), int(match.group(2))) if match else None


def fresh_seed() -> int:
    """A new 63-bit seed from the operating system's entropy (fits ``--seed`` and any int64)."""
    return secrets.randbits(63)


def recorded_seed(rows: Sequence) -> int | None:
    """The seed of the last row (file order) that records one, or None.

    Args:
        rows: :class:`~qdecode.sims.store.StatsRow` s of one file, in file order.
    """
    for row in reversed(rows):
        seeds = [parsed[0] for parsed in map(parse_seed_key, row.custom_counts) if parsed is not None]
        if seeds:
            return max(seeds)  # a row of one sweep carries one seed; max only makes the choice total
    return None


def shared_streams(sources: Mapping[str, Iterable]) -> list[SharedStream]:
    """Streams that two sources both drew from: the same strong_id and the same seed key.

    Args:
        sources: source name (a file path) -> its rows. Rows of one source never conflict
            with each other (a file's rows of one stream are its consecutive batches).

    Returns:
        One :class:`SharedStream` per (strong_id, key) found in a second source, in the order
        found; empty when every recorded stream is in one source only.
    """
    owner: dict[tuple[str, str], tuple[str, int]] = {}
    shared: list[SharedStream] = []
    for name, rows in sources.items():
        mine: dict[tuple[str, str], int] = {}
        for row in rows:
            for key, shots in row.custom_counts.items():
                if is_seed_key(key):
                    mine[(row.strong_id, key)] = mine.get((row.strong_id, key), 0) + int(shots)
        for (strong_id, key), shots in mine.items():
            if (strong_id, key) in owner:
                first, first_shots = owner[(strong_id, key)]
                shared.append(SharedStream(strong_id, key, first, name, first_shots, shots))
            else:
                owner[(strong_id, key)] = (name, shots)
    return shared


def describe_shared(shared: Sequence[SharedStream]) -> str:
    """One line naming the first shared stream and how many there are."""
    s = shared[0]
    more = f" (and {len(shared) - 1} more task streams)" if len(shared) > 1 else ""
    return (f"{s.first} and {s.second} both hold shots of strong_id {s.strong_id[:16]}... from the random stream "
            f"{s.key} ({min(s.first_shots, s.second_shots)} samples would count twice){more}: they are copies of "
            f"one run or reruns with one --seed")
