"""Reading users' ``.stim`` circuits and ``.dem`` detector error models, with one-line errors.

Every command that reads a model file (``sweep --circuit / --dem / --decoder-dem /
--learned-noise``, ``predict``, ``learn-noise``) goes through these two functions, so a
missing, unreadable, garbage or empty file gives the same clear message everywhere:
``<path>: <what is wrong>``. They raise :class:`ModelFileError` (a ``ValueError``), which
the command line reports as one line with exit status 2.

"Empty" means no detectors and no observables: such a model decodes nothing, and a shot
file read against it would silently produce an empty prediction file.
"""

from __future__ import annotations

import os

from qdecode.errors import InputError


class ModelFileError(InputError):
    """A circuit or detector-error-model file that cannot be used; the message names the file."""


def _read_text(path: str | os.PathLike, what: str) -> str:
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ModelFileError(f"{path}: is a directory, expected a {what} file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such {what} file") from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read {what} file ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelFileError(f"{path}: not a text {what} file (binary data)") from None


def _first_line(message: str) -> str:
    return " ".join(str(message).split("\n")[0].split()) or "parse error"


def _stim_message(exc: Exception) -> str:
    """stim's parse error as text.

    When stim's parser hits the end of a truncated file it puts the end-of-file marker (byte
    0xFF) into its message ("Expected a digit but got '\\xff'"), which pybind11 then fails to
    decode: the exception that arrives is a ``UnicodeDecodeError`` whose ``object`` is stim's
    message. Recover that message and name the end of the file, instead of reporting a UTF-8
    problem for a pure-ASCII file.
    """
    if isinstance(exc, UnicodeDecodeError) and isinstance(exc.object, (bytes, bytearray)):
        text = bytes(exc.object).replace(b"'\xff'", b"the end of the file").replace(b"\xff", b"<end of file>")
        return _first_line(text.decode("utf-8", "replace")) + " (is the file truncated?)"
    return _first_line(str(exc))


def _parse(make, text: str, *, where: str, what: str, empty: str | None):
    """``make(text)`` with stim's parse error as one line; ``empty``: the message for a model with
    no detectors and no observables (None allows it)."""
    try:
        model = make(text)
    except (ValueError, RuntimeError, IndexError) as exc:
        raise ModelFileError(f"{where}: not a valid {what}: {_stim_message(exc)}") from None
    if empty is not None and model.num_detectors == 0 and model.num_observables == 0:
        raise ModelFileError(f"{where}: {empty}")
    return model


def parse_dem(text: str, *, where: str, allow_empty: bool = False):
    """``stim.DetectorErrorModel`` from ``text``; ``where`` names the source in errors."""
    import stim

    return _parse(stim.DetectorErrorModel, text, where=where, what="detector error model",
                  empty=None if allow_empty else "the detector error model is empty (no detectors and no observables)")


def parse_circuit(text: str, *, where: str, allow_empty: bool = False):
    """``stim.Circuit`` from ``text``; ``where`` names the source in errors."""
    import stim

    return _parse(stim.Circuit, text, where=where, what="stim circuit",
                  empty=None if allow_empty else
                  "the circuit declares no DETECTOR and no OBSERVABLE_INCLUDE (nothing to decode)")


def read_dem(path: str | os.PathLike, *, allow_empty: bool = False):
    """The detector error model in the file ``path``.

    Raises:
        ModelFileError: missing or unreadable file, binary data, text stim cannot parse,
            or (unless ``allow_empty``) a model with no detectors and no observables.
    """
    return parse_dem(_read_text(path, "detector error model"), where=os.fspath(path), allow_empty=allow_empty)


def read_circuit(path: str | os.PathLike, *, allow_empty: bool = False):
    """The stim circuit in the file ``path``; errors as :func:`read_dem`."""
    return parse_circuit(_read_text(path, "circuit"), where=os.fspath(path), allow_empty=allow_empty)


def parse_metadata_value(text: str):
    """A metadata value from text: int, else float, else the text itself (sinter's rule)."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def metadata_from_path(path: str | os.PathLike) -> dict:
    """json_metadata from a file name ``key=value,key=value.stim`` (sinter's ``--metadata_func auto``).

    The extension is dropped and each comma-separated ``key=value`` term gives one entry,
    values parsed by :func:`parse_metadata_value`. A name without any ``=`` gives no
    metadata; a name with some terms that are not ``key=value`` is an error (it would
    silently lose keys). A value that is not a number stays text, even for a key such as
    ``p`` (``d=5,p=abc.stim``): sinter does the same, so the strong_id matches its. Plotting
    or fitting such a key as a number is then a one-line error naming the key and the value
    (:func:`qdecode.sims.stats.metadata_number`).
    """
    name = os.path.basename(os.fspath(path))
    if "." in name:
        name = name[: name.rindex(".")]
    if "=" not in name:
        return {}
    out = {}
    for term in name.split(","):
        parts = term.split("=")
        if len(parts) != 2 or not parts[0]:
            raise ModelFileError(
                f"{path}: file name term {term!r} is not key=value (names look like 'd=5,p=0.001,r=5.stim')"
            )
        out[parts[0]] = parse_metadata_value(parts[1])
    return out


def expand_paths(patterns, *, what: str = "circuit") -> list[str]:
    """Files named by paths or glob patterns, in order, each once; a pattern matching nothing is an error."""
    import glob

    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    out: list[str] = []
    for pattern in patterns:
        pattern = os.fspath(pattern)
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern))
            if not matches:
                raise ModelFileError(f"{pattern}: no {what} file matches this pattern")
        else:
            matches = [pattern]
        for m in matches:
            if m not in out:
                out.append(m)
    return out
