"""Sweep recipes: TOML files listing tasks and stopping rules, validated strictly.

Example (the embedded quick-start, ``sims/recipes/quickstart.toml``)::

    out = "out/quickstart.csv"      # stats CSV (sinter schema), resumed if present
    plot = "out/quickstart.png"     # optional threshold plot drawn after the sweep
    max_shots = 2_000_000
    max_errors = 200
    seed = 2026

    [[tasks]]
    code = "surface"
    d = [3, 5, 7]
    rounds = "d"                    # an int, "d", or "<k>d" (e.g. "3d")
    noise = "sd6"
    basis = "Z"
    p = [0.002, 0.004, 0.006, 0.008, 0.010, 0.012]
    decoders = ["pymatching"]       # names, or "name[key=value,...]"

Every task table expands to the product of its ``d`` x ``p`` x ``decoders`` lists.
An unknown key is an error naming the key and the table it sits in.

A classical code (``bch127_64``, ``rs16_8``, ``polar64_22``, ...) takes a channel instead of a
circuit noise model and expands ``ebn0`` (dB; ``awgn``, ``ge-awgn``) or ``p`` (``bsc``) x decoders::

    [[tasks]]
    code = "bch127_64"
    noise = "awgn"
    ebn0 = [2.0, 2.5, 3.0]
    decoders = ["bm", "osd[order=2]"]
    # channel = { p_gb = 0.01, p_bg = 0.2, eps_good = 0.001, eps_bad = 0.2, csi = true }   (noise = "ge")
"""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from qdecode.decoders.registry import DecoderSpec
from qdecode.sims.sweep import SweepOptions
from qdecode.sims.classical import ClassicalRecipe
from qdecode.sims.tasks import CircuitRecipe, Task


class RecipeError(ValueError):
    """A recipe that cannot be used; the message names the file and the bad key or value."""


TOP_KEYS = {
    "out": "stats CSV path",
    "plot": "threshold plot path (PNG/PDF/SVG)",
    "per_round": "plot per-round logical error rates",
    "max_shots": "stop a task after this many shots",
    "max_errors": "stop a task after this many errors",
    "seed": "root random seed",
    "workers": "local worker processes",
    "min_batch_size": "first batch size",
    "max_batch_size": "largest batch size",
    "target_batch_seconds": "adaptive batch-time cap",
    "tasks": "list of task tables",
}
TASK_KEYS = {
    "code": "code name (qdecode codes)",
    "d": "distance or list of distances",
    "rounds": "syndrome rounds: int, 'd' or '<k>d'",
    "noise": "noise model name",
    "p": "physical error rate or list",
    "basis": "memory basis X or Z (or list)",
    "memory_basis_only": "keep only the memory basis' detectors",
    "decoders": "decoder names, optionally 'name[key=value,...]'",
    "metadata": "extra json_metadata table",
    "ebn0": "Eb/N0 in dB or list (classical codes: awgn, ge-awgn)",
    "channel": "classical channel parameters table (Gilbert-Elliott: p_gb, p_bg, ...)",
    "source": "classical message source: uniform (random bits, default) | text (held-out English, 8-byte blocks)",
}


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A parsed recipe: tasks, options and output paths."""

    tasks: tuple[Task, ...]
    options: SweepOptions
    out: str
    plot: str | None
    per_round: bool
    workers: int | None
    source: str


_DECODER_RE = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\[(.*)\])?\s*$")


def parse_decoder(text: str) -> DecoderSpec:
    """``"name"`` or ``"name[key=value,...]"`` -> :class:`DecoderSpec` (validated)."""
    m = _DECODER_RE.match(text)
    if not m:
        raise ValueError(f"decoder {text!r} must look like name or name[key=value,...]")
    params = [p for p in (m.group(2) or "").split(",") if p.strip()]
    return DecoderSpec.create(m.group(1), params)


def resolve_rounds(rounds: Any, d: int | None, where: str) -> int | None:
    """``rounds`` as an int: an int, ``"d"`` or ``"<k>d"``; None means the generator's default."""
    if rounds is None:
        return None
    if isinstance(rounds, bool):
        raise RecipeError(f"{where}: rounds must be an int, 'd' or '<k>d', got {rounds!r}")
    if isinstance(rounds, int):
        if rounds < 1:
            raise RecipeError(f"{where}: rounds must be >= 1, got {rounds}")
        return rounds
    m = re.fullmatch(r"\s*(\d*)\s*\*?\s*d\s*", str(rounds))
    if not m:
        raise RecipeError(f"{where}: rounds must be an int, 'd' or '<k>d', got {rounds!r}")
    if d is None:
        raise RecipeError(f"{where}: rounds={rounds!r} needs a distance d")
    return (int(m.group(1)) if m.group(1) else 1) * d


def _optional_bool(value: Any, key: str, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise RecipeError(f"{where}: {key} must be true or false, got {value!r}")


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _check_keys(table: Mapping[str, Any], known: Mapping[str, str], where: str) -> None:
    for key in table:
        if key not in known:
            raise RecipeError(f"{where}: unknown key {key!r} (known keys: {', '.join(sorted(known))})")


def _decoders_and_metadata(entry: Mapping[str, Any], where: str, required: tuple[str, ...]):
    """Check the required keys; parse ``decoders`` and the ``metadata`` table (as sorted pairs)."""
    for key in required:
        if key not in entry:
            raise RecipeError(f"{where}: missing required key {key!r}")
    try:
        decoders = [parse_decoder(str(x)) for x in _as_list(entry["decoders"])]
    except ValueError as exc:
        raise RecipeError(f"{where}: {exc}") from None
    metadata = entry.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise RecipeError(f"{where}: metadata must be a table, got {metadata!r}")
    return decoders, tuple(sorted(metadata.items()))


def _is_classical(code: Any) -> bool:
    from qdecode.codes.catalog import CATALOG

    entry = CATALOG.get(str(code))
    return entry is not None and entry.kind.startswith("classical")


def expand_classical(entry: Mapping[str, Any], where: str, decoders: list[DecoderSpec], extra: tuple) -> list[Task]:
    """The product ``(ebn0 | p) x decoders`` of a classical task table (``ge``: decoders only)."""
    for key in ("d", "rounds", "basis", "memory_basis_only"):
        if key in entry:
            raise RecipeError(f"{where}: key {key!r} does not apply to the classical code {entry['code']!r}")
    channel = entry.get("channel", {})
    if not isinstance(channel, Mapping):
        raise RecipeError(f"{where}: channel must be a table, got {channel!r}")
    noise = str(entry["noise"])
    if "ebn0" in entry and "p" in entry:
        raise RecipeError(f"{where}: give ebn0 or p, not both")
    points: list[tuple[float | None, float | None]] = [(None, None)]
    if "ebn0" in entry:
        points = []
        for x in _as_list(entry["ebn0"]):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise RecipeError(f"{where}: ebn0 must be a number of dB, got {x!r}")
            points.append((float(x), None))
    elif "p" in entry:
        points = []
        for x in _as_list(entry["p"]):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 < x < 1:
                raise RecipeError(f"{where}: p must lie strictly inside (0, 1), got {x!r}")
            points.append((None, float(x)))
    tasks = []
    for ebn0, p in points:
        try:
            recipe = ClassicalRecipe(code=str(entry["code"]), noise=noise, ebn0=ebn0, p=p,
                                     channel=tuple(sorted(channel.items())), source=str(entry.get("source", "uniform")))
        except (TypeError, ValueError) as exc:
            raise RecipeError(f"{where}: {exc}") from None
        for dec in decoders:
            try:
                tasks.append(Task(decoder=dec, classical=recipe, extra_metadata=extra))
            except ValueError as exc:
                raise RecipeError(f"{where}: {exc}") from None
    return tasks


def expand_tasks(entry: Mapping[str, Any], where: str) -> list[Task]:
    """The product ``d x p x basis x decoders`` of one task table."""
    _check_keys(entry, TASK_KEYS, where)
    if _is_classical(entry.get("code")):
        decoders, extra = _decoders_and_metadata(entry, where, ("code", "noise", "decoders"))
        return expand_classical(entry, where, decoders, extra)
    for key in ("ebn0", "channel", "source"):
        if key in entry:
            raise RecipeError(f"{where}: key {key!r} applies to classical codes only, not {entry.get('code')!r}")
    decoders, extra = _decoders_and_metadata(entry, where, ("code", "noise", "p", "decoders"))
    tasks = []
    for d in _as_list(entry.get("d")):
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 2):
            raise RecipeError(f"{where}: d must be an integer >= 2, got {d!r}")
        rounds = resolve_rounds(entry.get("rounds"), d, where)
        for basis in _as_list(entry.get("basis", "Z")):
            if basis not in ("X", "Z"):
                raise RecipeError(f"{where}: basis must be 'X' or 'Z', got {basis!r}")
            for p in _as_list(entry["p"]):
                if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
                    raise RecipeError(f"{where}: p must lie strictly inside (0, 1), got {p!r}")
                recipe = CircuitRecipe(
                    code=str(entry["code"]),
                    noise=str(entry["noise"]),
                    p=float(p),
                    d=d,
                    rounds=rounds,
                    basis=basis,
                    memory_basis_only=_optional_bool(entry.get("memory_basis_only"), "memory_basis_only", where),
                )
                for dec in decoders:
                    try:
                        tasks.append(Task(decoder=dec, recipe=recipe, extra_metadata=extra))
                    except ValueError as exc:
                        raise RecipeError(f"{where}: {exc}") from None
    return tasks


def parse_recipe(data: Mapping[str, Any], *, source: str = "<recipe>") -> Recipe:
    """Validate a recipe mapping (parsed TOML) and expand its tasks."""
    _check_keys(data, TOP_KEYS, source)
    entries = data.get("tasks")
    if not entries or not isinstance(entries, list):
        raise RecipeError(f"{source}: needs at least one [[tasks]] table")
    tasks: list[Task] = []
    for i, entry in enumerate(entries, start=1):
        if not isinstance(entry, Mapping):
            raise RecipeError(f"{source}: [[tasks]] #{i} must be a table")
        tasks.extend(expand_tasks(entry, f"{source}: [[tasks]] #{i}"))
    opt_keys = ("max_shots", "max_errors", "seed", "min_batch_size", "max_batch_size", "target_batch_seconds")
    kwargs = {k: data[k] for k in opt_keys if k in data}
    for k, v in kwargs.items():
        kind = (int, float) if k == "target_batch_seconds" else int
        if isinstance(v, bool) or not isinstance(v, kind):
            raise RecipeError(f"{source}: {k} must be a number, got {v!r}")
    try:
        options = SweepOptions(**kwargs)
    except ValueError as exc:
        raise RecipeError(f"{source}: {exc}") from None
    workers = data.get("workers")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise RecipeError(f"{source}: workers must be an integer >= 0, got {workers!r}")
    return Recipe(
        tasks=tuple(tasks),
        options=options,
        out=str(data.get("out", "out/stats.csv")),
        plot=str(data["plot"]) if data.get("plot") else None,
        per_round=bool(data.get("per_round", False)),
        workers=workers,
        source=source,
    )


def load_recipe(path: str | Path | None = None) -> Recipe:
    """Load a recipe file, or the embedded quick-start recipe when ``path`` is None.

    A bare name (``quickstart``) that is not a file names an embedded recipe.
    """
    if path is None:
        path = "quickstart"
    p = Path(path)
    if p.is_file():
        text, source = p.read_text(encoding="utf-8"), str(p)
    else:
        name = p.name if p.suffix == ".toml" else f"{p.name}.toml"
        ref = resources.files("qdecode.sims").joinpath("recipes", name)
        if not ref.is_file():
            raise RecipeError(f"recipe {str(path)!r} not found (no such file, and no embedded recipe {name!r})")
        text, source = ref.read_text(encoding="utf-8"), f"embedded:{name}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{source}: invalid TOML: {exc}") from None
    return parse_recipe(data, source=source)
