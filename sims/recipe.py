"""Sweep recipes: TOML files listing tasks and stopping rules, validated strictly.

Example (the embedded quick-start, ``sims/recipes/quickstart.toml``)::

    out = "out/quickstart.csv"      # stats CSV (sinter schema), resumed if present
    plot = "out/quickstart.png"     # optional threshold plot drawn after the sweep
    max_shots = 2_000_000
    max_errors = 200
    # seed = 7                      # optional: a reproducible run (else fresh per new file)

    [[tasks]]
    code = "surface"
    d = [3, 5, 7]
    rounds = "d"                    # an int, "d", or "<k>d" (e.g. "3d")
    noise = "sd6"
    basis = "Z"
    p = [0.002, 0.004, 0.006, 0.008, 0.010, 0.012]
    decoders = ["pymatching"]       # names, or "name[key=value,...]"

Every task table expands to the product of its ``d`` x ``p`` x ``decoders`` lists. A catalogue
circuit may add heralded noise (:mod:`qdecode.sims.heralded_noise`), each a number or a list that
multiplies too: ``erasure_fraction`` (of every ``DEPOLARIZE2``, in [0, 1]), ``leakage`` and ``loss``
(per qubit per two-qubit gate, in [0, 1)); 0, the default, adds nothing.
An unknown key, or a value of the wrong type (booleans included), is an error naming the
key and the table it sits in.

A user's own experiment replaces ``code`` / ``noise`` / ``p``: ``circuit`` (a ``.stim``
path, a glob, or a list of them) or ``dem`` (a ``.dem`` file sampled directly). File names
of the form ``key=value,key=value.stim`` give the json_metadata (sinter's
``--metadata_func auto``: values parsed as int, then float, else kept as text), and the
task's ``metadata`` table adds to or overrides it::

    [[tasks]]
    circuit = "circuits/*.stim"         # e.g. circuits/d=5,p=0.001,r=5,b=Z.stim
    decoders = ["bposd", "relay-bp"]
    postselect = "coord4"               # or [3, 17], or "c3=1:" (see qdecode.sims.postselection)
    count_observable_error_combos = true
    count_detection_events = true
    # gap_histogram = true            # shots and errors per 1 dB bin of the decoder's gap (mle, pymatching)
    # latency = true                  # real-time mode: shots and errors per bin of both clocks (qdecode deadline)
    # decoder_dem = "other.dem"         # decode with another model than the one sampled

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
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from qdecode.decoders.registry import SINTER_PREFIX, DecoderSpec, split_label
from qdecode.errors import InputError
from qdecode.sims.classical_points import ClassicalRecipe
from qdecode.sims.heralded_noise import check_erasure_fraction, check_heralded_rate
from qdecode.sims.sweep import SweepOptions
from qdecode.sims.tasks import CircuitRecipe, SweepTask


class RecipeError(InputError):
    """A recipe that cannot be used; the message names the file and the bad key or value."""


TOP_KEYS = {
    "out": "stats CSV path",
    "plot": "threshold plot path (PNG/PDF/SVG)",
    "per_round": "plot per-round logical error rates",
    "max_shots": "stop a task after this many shots",
    "max_errors": "stop a task after this many errors",
    "seed": "root random seed (a reproducible run; omitted: fresh per new file, the recorded one on resume)",
    "workers": "local worker processes",
    "min_batch_size": "first batch size",
    "max_batch_size": "largest batch size",
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
    "erasure_fraction": "erasure conversion: fraction in [0, 1] of every DEPOLARIZE2 made a heralded erasure (or list)",
    "leakage": "leakage per qubit per two-qubit gate, heralded every round, in [0, 1) (or list)",
    "loss": "atom loss per qubit per two-qubit gate, heralded at the qubit's next measurement, in [0, 1) (or list)",
    "decoders": "decoder names, optionally 'name[key=value,...]'",
    "metadata": "extra json_metadata table",
    "ebn0": "Eb/N0 in dB or list (classical codes: awgn, ge-awgn)",
    "channel": "classical channel parameters table (Gilbert-Elliott: p_gb, p_bg, ...)",
    "source": "classical message source: uniform (random bits, default) | text (held-out English, 8-byte blocks)",
    "circuit": "a user's stim circuit: path, glob, or list of them (metadata from key=value file names)",
    "dem": "a user's detector error model file, sampled directly (no circuit)",
    "decoder_dem": "decode with this detector error model instead of the sampled model's own",
    "postselect": "postselected detectors: 'coord4', a list of indices, or 'c<k>=lo:hi'",
    "count_observable_error_combos": "count obs_mistake_mask=... patterns in custom_counts (sinter's flag)",
    "count_detection_events": "count detection_events and detectors_checked in custom_counts (sinter's flag)",
    "gap_histogram": "count shots and errors per 1 dB bin of the decoder's gap in custom_counts (g12, g12E, ...)",
    "latency": "decode in real-time mode (one shot at a time, timed) and count shots and errors per bin of the "
               "wall and work clocks in custom_counts (wall160, wall160E, work12, ...; qdecode deadline)",
}


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A parsed recipe: tasks, options and output paths."""

    tasks: tuple[SweepTask, ...]
    options: SweepOptions
    out: str
    plot: str | None
    per_round: bool
    workers: int | None
    source: str


def parse_decoder(text: str) -> DecoderSpec:
    """``"name"``, ``"name[key=value,...]"`` or a sinter name ``"qd-..."`` -> :class:`DecoderSpec`
    (validated; :meth:`DecoderSpec.parse`)."""
    return DecoderSpec.parse(text)


def accepted_params(name: str, params: Mapping[str, str]) -> set[str]:
    """Parameter names decoder ``name`` accepts, given its own ``params`` (a nested inner decoder's too)."""
    from qdecode.decoders.registry import get_entry

    entry = get_entry(name)
    keys = set(entry.params)
    if entry.nested is not None:
        inner = params.get(entry.nested, entry.params[entry.nested].default)
        try:
            keys |= set(get_entry(str(inner)).params)
        except ValueError:
            pass  # an unknown inner decoder is reported by DecoderSpec.create
    return keys


def compose_decoders(texts: list[str], shared: list[str]) -> list[DecoderSpec]:
    """``--decoder`` values combined with ``--param`` values.

    A ``--param key=value`` applies to every decoder that has a parameter ``key`` (its own
    or, for ``window``, its inner decoder's); a value in a decoder's own brackets wins over
    ``--param``. A ``--param`` that no listed decoder accepts is an error. A sinter name
    (``qd-...``) is recorded verbatim, so ``--param`` never applies to it.
    """
    common: dict[str, str] = {}
    for item in shared:
        if "=" not in item:
            raise InputError(f"--param {item!r} must look like key=value")
        key, value = item.split("=", 1)
        key = key.strip()
        if key in common:
            raise InputError(f"--param {key} is given twice ({key}={common[key]} and {item.strip()})")
        common[key] = value.strip()
    used: set[str] = set()
    specs = []
    for text in texts:
        if text.strip().startswith(SINTER_PREFIX):  # recorded verbatim: a --param it accepts is an error
            name, own = split_label(text.strip()[len(SINTER_PREFIX):])
            specs.append(DecoderSpec.parse(text, {k: v for k, v in common.items() if k in accepted_params(name, own)}))
            continue
        name, own = split_label(text)
        take = {k: v for k, v in common.items() if k in accepted_params(name, own) and k not in own}
        used |= set(take) | (set(common) & set(own))
        specs.append(DecoderSpec.create(name, {**take, **own}))
    unused = sorted(set(common) - used)
    if unused:
        raise InputError(f"--param {unused[0]}: none of the decoders {', '.join(texts)} has this parameter")
    return specs


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
        decoders = [x if isinstance(x, DecoderSpec) else parse_decoder(str(x)) for x in _as_list(entry["decoders"])]
    except ValueError as exc:
        raise RecipeError(f"{where}: {exc}") from None
    metadata = entry.get("metadata", {})
    if not isinstance(metadata, Mapping):
        raise RecipeError(f"{where}: metadata must be a table, got {metadata!r}")
    return decoders, tuple(sorted(metadata.items()))


def is_classical(code: Any) -> bool:
    """Whether ``code`` names a classical code of the catalogue, or a classical spec such as ``nr5g[...]`` (a
    classical point: channel + source, no circuit)."""
    from qdecode.codes.catalog import get_entry

    try:
        entry = get_entry(str(code))
    except InputError:  # not a catalogue name or spec: the caller reports it
        return False
    return entry.kind.startswith("classical")


def expand_classical(entry: Mapping[str, Any], where: str, decoders: list[DecoderSpec],
                     extra: tuple) -> list[SweepTask]:
    """The product ``(ebn0 | p) x decoders`` of a classical task table (``ge``: decoders only)."""
    for key in ("d", "rounds", "basis", "memory_basis_only", *HERALDED_KEYS):
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
                tasks.append(SweepTask(decoder=dec, classical=recipe, extra_metadata=extra))
            except ValueError as exc:
                raise RecipeError(f"{where}: {exc}") from None
    return tasks


def _check_type(
    entry: Mapping[str, Any], key: str, kinds: tuple, what: str, where: str, *, listable: bool = False
) -> None:
    """``entry[key]`` (each element when ``listable``) is one of ``kinds``; bools are never numbers."""
    if key not in entry:
        return
    values = _as_list(entry[key]) if listable else [entry[key]]
    for v in values:
        ok = isinstance(v, kinds) and not (isinstance(v, bool) and bool not in kinds)
        if not ok:
            raise RecipeError(f"{where}: {key} must be {what}, got {v!r}")


#: SweepTask keys whose list values multiply into tasks: an empty list would silently expand to none.
_PRODUCT_KEYS = ("decoders", "d", "p", "basis", "ebn0", "circuit", "erasure_fraction", "leakage", "loss")
#: Heralded-noise keys of a catalogue circuit's table (:mod:`qdecode.sims.heralded_noise`): lists multiply.
HERALDED_KEYS = ("erasure_fraction", "leakage", "loss")


def _check_task_types(entry: Mapping[str, Any], where: str) -> None:
    for key in _PRODUCT_KEYS:
        if isinstance(entry.get(key), (list, tuple)) and not entry[key]:
            raise RecipeError(f"{where}: {key} is an empty list, so this table would run no task")
    _check_type(entry, "code", (str,), "a code name (qdecode codes)", where)
    _check_type(entry, "noise", (str,), "a noise model name", where)
    _check_type(entry, "decoders", (str, DecoderSpec), "a decoder name or a list of them", where, listable=True)
    _check_type(entry, "basis", (str,), "'X' or 'Z' (or a list)", where, listable=True)
    _check_type(entry, "source", (str,), "'uniform' or 'text'", where)
    _check_type(entry, "circuit", (str,), "a path, a glob, or a list of them", where, listable=True)
    _check_type(entry, "dem", (str,), "a path to a .dem file", where)
    _check_type(entry, "decoder_dem", (str,), "a path to a .dem file", where)
    for key in HERALDED_KEYS:
        _check_type(entry, key, (int, float), "a number (or a list)", where, listable=True)
    for key in ("memory_basis_only", "count_observable_error_combos", "count_detection_events", "gap_histogram",
                "latency"):
        _check_type(entry, key, (bool,), "true or false", where)
    for key in ("metadata", "channel"):
        if key in entry and not isinstance(entry[key], Mapping):
            raise RecipeError(f"{where}: {key} must be a table, got {entry[key]!r}")
    for k, v in entry.get("metadata", {}).items():
        if not isinstance(v, (str, int, float, bool)):
            raise RecipeError(f"{where}: metadata.{k} must be a string, number or boolean, got {v!r}")


def _check_code(code: str, where: str) -> None:
    from qdecode.codes.catalog import CATALOG, get_entry, is_code_spec

    if is_code_spec(code):  # a user code such as bb[l=..,m=..,A=..,B=..]: parsed (and k computed) here
        try:
            get_entry(code)
        except ValueError as exc:
            raise RecipeError(f"{where}: {exc}") from None
        return
    if code not in CATALOG:
        raise RecipeError(f"{where}: unknown code {code!r} (known codes: {', '.join(CATALOG)}; "
                          f"for a circuit of your own use circuit = 'file.stim')")


def _resolve(path: str, base_dir: str | None) -> str:
    return path if base_dir is None or os.path.isabs(path) else os.path.join(base_dir, path)


def _user_options(entry: Mapping[str, Any], where: str, base_dir: str | None) -> dict[str, Any]:
    """SweepTask fields shared by catalogue and user experiments: decoder DEM, postselection, counts."""
    from qdecode.sims.model_files import read_dem
    from qdecode.sims.postselection import Postselection

    out: dict[str, Any] = {
        "count_observable_error_combos": bool(entry.get("count_observable_error_combos", False)),
        "count_detection_events": bool(entry.get("count_detection_events", False)),
        "gap_histogram": bool(entry.get("gap_histogram", False)),
        "latency_histogram": bool(entry.get("latency", False)),
    }
    if "postselect" in entry:
        try:
            out["postselect"] = Postselection.parse(entry["postselect"])
        except ValueError as exc:
            raise RecipeError(f"{where}: {exc}") from None
    if "decoder_dem" in entry:
        path = _resolve(entry["decoder_dem"], base_dir)
        out["decoder_dem"] = str(read_dem(path))
        out["decoder_dem_key"] = "decoder_dem"
    return out


def expand_user_tasks(entry: Mapping[str, Any], where: str, decoders: list[DecoderSpec], extra: tuple,
                      base_dir: str | None = None) -> list[SweepTask]:
    """Tasks of a ``circuit`` (paths / globs) or ``dem`` table: files x decoders.

    Each file's json_metadata is its ``key=value`` file name, updated by the table's ``metadata``,
    in that order (the file name's key order is kept: sinter's strong_id hashes the JSON as written).
    """
    from qdecode.sims.model_files import expand_paths, metadata_from_path, read_circuit, read_dem

    for key in ("code", "noise", "p", "d", "rounds", "basis", "memory_basis_only", "ebn0", "channel", "source",
                *HERALDED_KEYS):
        if key in entry:
            raise RecipeError(f"{where}: key {key!r} does not apply to a user's circuit or DEM "
                              f"(put such facts in the file name or the metadata table)")
    if "circuit" in entry and "dem" in entry:
        raise RecipeError(f"{where}: give circuit or dem, not both")
    options = _user_options(entry, where, base_dir)
    tasks = []
    if "circuit" in entry:
        paths = expand_paths([_resolve(x, base_dir) for x in _as_list(entry["circuit"])], what="circuit")
        sources = [("circuit_text", path, str(read_circuit(path))) for path in paths]
    else:
        path = _resolve(entry["dem"], base_dir)
        sources = [("dem_text", path, str(read_dem(path)))]
    for field, path, text in sources:
        meta = {**metadata_from_path(path), **dict(extra)}
        for dec in decoders:
            try:
                tasks.append(SweepTask(decoder=dec, extra_metadata=tuple(meta.items()), **{field: text}, **options))
            except ValueError as exc:
                raise RecipeError(f"{where}: {path}: {exc}") from None
    return tasks


def heralded_points(entry: Mapping[str, Any], where: str) -> list[tuple[float, float, float]]:
    """The product ``erasure_fraction x leakage x loss`` of a task table (each 0 when absent), checked:
    a fraction in [0, 1], a leakage or loss probability in [0, 1)."""
    try:
        fractions = [check_erasure_fraction(x) for x in _as_list(entry.get("erasure_fraction", 0.0))]
        leakages = [check_heralded_rate(x, "leakage") for x in _as_list(entry.get("leakage", 0.0))]
        losses = [check_heralded_rate(x, "loss") for x in _as_list(entry.get("loss", 0.0))]
    except InputError as exc:
        raise RecipeError(f"{where}: {exc}") from None
    return [(f, leak, loss) for f in fractions for leak in leakages for loss in losses]


def expand_tasks(entry: Mapping[str, Any], where: str, base_dir: str | None = None) -> list[SweepTask]:
    """The product ``d x p x basis x decoders`` of one task table (files x decoders for a user's models)."""
    _check_keys(entry, TASK_KEYS, where)
    _check_task_types(entry, where)
    if "circuit" in entry or "dem" in entry:
        decoders, extra = _decoders_and_metadata(entry, where, ("decoders",))
        return expand_user_tasks(entry, where, decoders, extra, base_dir)
    if "code" not in entry:
        raise RecipeError(f"{where}: missing required key 'code' (or 'circuit' / 'dem' for your own models)")
    _check_code(entry["code"], where)
    if is_classical(entry.get("code")):
        for key in ("decoder_dem", "postselect", "count_observable_error_combos", "count_detection_events",
                    "gap_histogram", "latency"):
            if key in entry:
                raise RecipeError(f"{where}: key {key!r} applies to circuits and DEMs, "
                                  f"not to the classical code {entry['code']!r}")
        decoders, extra = _decoders_and_metadata(entry, where, ("code", "noise", "decoders"))
        return expand_classical(entry, where, decoders, extra)
    for key in ("ebn0", "channel", "source"):
        if key in entry:
            raise RecipeError(f"{where}: key {key!r} applies to classical codes only, not {entry.get('code')!r}")
    decoders, extra = _decoders_and_metadata(entry, where, ("code", "noise", "p", "decoders"))
    options = _user_options(entry, where, base_dir)
    tasks = []
    for d in _as_list(entry.get("d")):
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 2):
            raise RecipeError(f"{where}: d must be an integer >= 2, got {d!r}")
        rounds = resolve_rounds(entry.get("rounds"), d, where)
        for basis in _as_list(entry.get("basis", "Z")):
            if basis not in ("X", "Z", "XYZ"):
                raise RecipeError(f"{where}: basis must be 'X' or 'Z' ('XYZ' for the colour code), got {basis!r}")
            for p in _as_list(entry["p"]):
                if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
                    raise RecipeError(f"{where}: p must lie strictly inside (0, 1), got {p!r}")
                for fraction, leakage, loss in heralded_points(entry, where):
                    recipe = CircuitRecipe(
                        code=str(entry["code"]),
                        noise=str(entry["noise"]),
                        p=float(p),
                        d=d,
                        rounds=rounds,
                        basis=basis,
                        memory_basis_only=_optional_bool(entry.get("memory_basis_only"), "memory_basis_only", where),
                        erasure_fraction=fraction,
                        leakage=leakage,
                        loss=loss,
                    )
                    for dec in decoders:
                        try:
                            tasks.append(SweepTask(decoder=dec, recipe=recipe, extra_metadata=extra, **options))
                        except ValueError as exc:
                            raise RecipeError(f"{where}: {exc}") from None
    return tasks


def parse_recipe(data: Mapping[str, Any], *, source: str = "<recipe>", base_dir: str | None = None) -> Recipe:
    """Validate a recipe mapping (parsed TOML) and expand its tasks.

    ``base_dir``: relative ``circuit`` / ``dem`` / ``decoder_dem`` paths are taken from this
    directory (the recipe file's); None takes them from the working directory.
    """
    _check_keys(data, TOP_KEYS, source)
    for key in ("out", "plot"):
        if key in data and not isinstance(data[key], str):
            raise RecipeError(f"{source}: {key} must be a path (a string), got {data[key]!r}")
    entries = data.get("tasks")
    if not entries or not isinstance(entries, list):
        raise RecipeError(f"{source}: needs at least one [[tasks]] table")
    tasks: list[SweepTask] = []
    for i, entry in enumerate(entries, start=1):
        if not isinstance(entry, Mapping):
            raise RecipeError(f"{source}: [[tasks]] #{i} must be a table")
        expanded = expand_tasks(entry, f"{source}: [[tasks]] #{i}", base_dir)
        if not expanded:  # a guard: every product key is checked non-empty above
            raise RecipeError(f"{source}: [[tasks]] #{i} expands to no task")
        tasks.extend(expanded)
    opt_keys = ("max_shots", "max_errors", "seed", "min_batch_size", "max_batch_size")
    kwargs = {k: data[k] for k in opt_keys if k in data}
    for k, v in kwargs.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise RecipeError(f"{source}: {k} must be an integer, got {v!r}")
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
        per_round=bool(_optional_bool(data.get("per_round", False), "per_round", source)),
        workers=workers,
        source=source,
    )


def load_recipe(path: str | Path | None = None) -> Recipe:
    """Load a recipe file, or an embedded recipe by its bare name (default ``quickstart``).

    Anything that looks like a path (a directory part, or a ``.toml`` suffix) must be an
    existing file: an embedded recipe is chosen only by a bare name such as ``polar``, never
    as the fallback of a missing file.
    """
    if path is None:
        path = "quickstart"
    p = Path(path)
    looks_like_path = p.suffix == ".toml" or len(p.parts) > 1 or str(path).startswith(".")
    if p.is_file():
        source, base_dir = str(p), str(p.parent)
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise RecipeError(f"{source}: not a text TOML recipe (binary data, or not UTF-8)") from None
        except OSError as exc:
            raise RecipeError(f"{source}: cannot read the recipe ({exc.strerror or exc})") from None
    elif p.exists():
        raise RecipeError(f"recipe {str(path)!r} is not a file")
    elif looks_like_path:
        raise RecipeError(f"recipe file {str(path)!r} not found")
    else:
        ref = resources.files("qdecode.sims").joinpath("recipes", f"{p.name}.toml")
        if not ref.is_file():
            names = sorted(x.name[:-5] for x in resources.files("qdecode.sims").joinpath("recipes").iterdir()
                           if x.name.endswith(".toml"))
            raise RecipeError(f"recipe {str(path)!r} not found (no such file, and no embedded recipe of that "
                              f"name; embedded: {', '.join(names)})")
        text, source, base_dir = ref.read_text(encoding="utf-8"), f"embedded:{p.name}.toml", None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{source}: invalid TOML: {exc}") from None
    return parse_recipe(data, source=source, base_dir=base_dir)
