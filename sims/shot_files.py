"""Reading detection-event files (stim's shot data formats), with one-line errors.

``qdecode predict`` and ``qdecode learn-noise`` read their ``--dets`` file through these
functions, so a shot file that cannot belong to the detector error model gives the same
message everywhere: ``<path>: <what is wrong>`` as a ``ValueError``, which the command line
reports as one line with exit status 2.

What can be checked depends on the format:

* ``01``: every line must have one character per detector, so a wrong width is always caught;
* ``b8`` and ``ptb64`` are raw bits with **no record of their own width**. A file whose size is
  not a whole number of shots (groups of 64 for ptb64) is refused, and so is a b8 shot with bits
  set in the padding past the last detector; but a file written for a circuit with another
  detector count whose byte size happens to divide (120 detectors = 15 bytes per shot, read
  against a 24-detector model as 5 shots of 3 bytes) reads as five times as many wrong shots.
  Only the caller can tell: pass the expected shot count to :func:`check_shot_count`
  (the commands' ``--num-shots``);
* ``r8``, ``hits`` and ``dets``: stim's reader checks them (:func:`read_shots` wraps its message).

An empty file is zero shots, not an error.
"""

from __future__ import annotations

import os
import re

from qdecode.errors import InputError

__all__ = ["FORMATS", "check_shot_file", "check_b8_padding", "count_shots", "check_shot_count", "read_shots"]

#: stim's shot data formats.
FORMATS = ("01", "b8", "r8", "ptb64", "hits", "dets")

_LINE_01 = re.compile(rb"^[01]*\r?$")
_LINE_DETS = re.compile(rb"^shot( [DL]\d+)*\r?$")


def _text_guess(path: str) -> str | None:
    """``"01"`` or ``"dets"`` when the file's first 4 KB are complete lines of that text format."""
    with open(path, "rb") as f:
        sample = f.read(4096)
    lines = sample.split(b"\n")[:-1]  # complete lines only
    if not lines:
        return None
    if all(_LINE_01.match(x) for x in lines) and any(x.strip(b"\r") for x in lines):
        return "01"
    if all(_LINE_DETS.match(x) for x in lines):
        return "dets"
    return None


def _not_text(path: str, fmt: str) -> None:
    guess = _text_guess(path)
    if guess is not None:
        raise InputError(f"{path}: looks like {guess} text, not {fmt} data (pass --dets-format {guess})")


def _b8_width(num_dets: int) -> int:
    return (num_dets + 7) // 8


def check_b8_padding(path: str, data, num_dets: int, first_shot: int = 0) -> None:
    """Bits past the last detector of a b8 shot must be 0 (stim writes them so).

    Args:
        data: ``(S, ceil(num_dets / 8))`` uint8 rows of the file (a batch of it when streaming).
        first_shot: index in the file of ``data``'s first row, for the message.
    """
    import numpy as np

    if num_dets % 8 == 0 or not len(data):
        return
    pad = 0xFF & ~((1 << (num_dets % 8)) - 1)
    bad = np.flatnonzero(data[:, -1] & pad)
    if bad.size:
        raise InputError(
            f"{path}: b8 shot {first_shot + int(bad[0])} has bits set past detector {num_dets - 1} "
            f"(not a b8 file for this DEM's {num_dets} detectors?)"
        )


def check_shot_file(path: str, fmt: str, num_dets: int) -> None:
    """Raise a one-line ``ValueError`` when the shot file cannot hold ``num_dets``-bit shots in ``fmt``.

    Checks the cheap things up front (existence, whole b8 / ptb64 records, 01 line widths and
    characters, text given as a binary format); the rest (r8, hits, dets syntax) is stim's
    reader's job, whose message :func:`read_shots` wraps. An empty file is zero shots, not an
    error. A b8 / ptb64 file of the wrong width whose size still divides passes: see the module
    docstring and :func:`check_shot_count`.
    """
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, expected a shot file")
    if not os.path.exists(path):
        raise InputError(f"{path}: no such shot file")
    if num_dets == 0:
        raise InputError(f"{path}: the detector error model has no detectors, so there is nothing to decode")
    size = os.path.getsize(path)
    if size == 0:
        return
    if fmt == "b8":
        width = _b8_width(num_dets)
        _not_text(path, fmt)
        if size % width:
            raise InputError(
                f"{path}: {size} bytes is not a whole number of b8 shots of {width} bytes "
                f"({num_dets} detectors in the DEM)"
            )
    elif fmt == "ptb64":
        width = num_dets * 8  # 64 shots: one 8-byte word per detector
        _not_text(path, fmt)
        if size % width:
            raise InputError(
                f"{path}: {size} bytes is not a whole number of ptb64 groups of {width} bytes "
                f"(64 shots of {num_dets} detectors)"
            )
    elif fmt == "01":
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                line = raw.rstrip(b"\r\n")
                if line.strip(b"01"):
                    if any(b < 0x20 or b > 0x7E for b in line.strip(b"01")):
                        raise InputError(f"{path}:{lineno}: not 01 text (binary data; is it b8? pass --dets-format)")
                    raise InputError(f"{path}:{lineno}: 01-format line contains characters other than 0/1")
                if len(line) != num_dets:
                    raise InputError(
                        f"{path}:{lineno}: line has {len(line)} bits but the DEM has {num_dets} detectors"
                    )
                if not raw.endswith(b"\n"):
                    raise InputError(f"{path}:{lineno}: last line of the 01 file does not end with a newline")


def count_shots(path: str, fmt: str, num_dets: int) -> int:
    """The number of shots in a shot file that passed :func:`check_shot_file`.

    From the size for b8 and ptb64, by counting lines for 01, by reading the file otherwise.
    """
    if fmt == "b8":
        return os.path.getsize(path) // _b8_width(num_dets)
    if fmt == "ptb64":
        return os.path.getsize(path) // (num_dets * 8) * 64
    if fmt == "01":
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return len(read_shots(path, fmt, num_dets))


def check_shot_count(path: str, fmt: str, num_dets: int, expected: int, found: int | None = None) -> None:
    """Refuse a shot file that does not hold ``expected`` shots (the commands' ``--num-shots``).

    The one check that catches a b8 (or ptb64) file written for another detector count whose
    size happens to be a whole number of this model's shots. ``found``: the count when the
    caller has already read the shots; otherwise it is counted with :func:`count_shots`.
    """
    if expected < 0:
        raise InputError(f"--num-shots must be >= 0, got {expected}")
    found = count_shots(path, fmt, num_dets) if found is None else found
    if found == expected:
        return
    why = ""
    if fmt == "b8" and expected > 0:
        size = os.path.getsize(path)
        if size % expected == 0:
            per_shot = size // expected
            why = (f"; {expected} shots would be {per_shot} bytes each ({8 * per_shot - 7} to {8 * per_shot} "
                   f"detectors), so the file was probably written for another circuit")
    raise InputError(
        f"{path}: holds {found} {fmt} shots of {num_dets} detectors, but --num-shots says {expected}{why}"
    )


def read_shots(path: str, fmt: str, num_dets: int):
    """Bit-packed ``(S, ceil(num_dets / 8))`` uint8 detection events of a checked shot file."""
    import numpy as np
    import stim

    check_shot_file(path, fmt, num_dets)
    width = _b8_width(num_dets)
    if fmt == "b8":  # raw bytes: stim would mask the padding bits we check
        data = np.fromfile(path, dtype=np.uint8).reshape(-1, width)
        check_b8_padding(path, data, num_dets)
        return data
    try:
        return stim.read_shot_data_file(path=path, format=fmt, num_detectors=num_dets, bit_packed=True)
    except (ValueError, RuntimeError) as exc:
        first = " ".join(str(exc).split("\n")[0].split())
        raise InputError(f"{path}: cannot read {fmt} shots for {num_dets} detectors: {first}") from None
