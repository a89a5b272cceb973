"""``qdecode predict``: decode a shot file with the semantics of ``sinter predict``.

Reads detection events (``--dets``, format ``--dets-format``) for the detector error
model ``--dem``, decodes them in one batch (bit-packed, no per-shot Python loop) and
writes the predicted observable flips to ``--obs-out`` in ``--obs-out-format``.
With ``--learned-noise FILE.dem`` the decoder is built from that DEM (same detector and
observable counts as ``--dem``) instead, e.g. the output of ``qdecode learn-noise``.

Bad input is one line naming the file and the problem (exit status 2):

* model files go through :mod:`qdecode.sims.model_files`: a missing, binary, unparsable
  or empty ``.dem`` is an error (an empty DEM -- no detectors, no observables -- would turn
  any shot file into an empty prediction file);
* shot files (:func:`check_shot_file`): missing file, a b8 / ptb64 size that is not a whole
  number of shots, b8 padding bits set past the last detector, 01 lines of the wrong width
  or with other characters, text given as b8 (``looks like 01 text``), and whatever stim
  rejects in the other formats (r8, hits, dets);
* a DEM without detectors (observables only) cannot be matched to a shot file.

A shot file with **zero shots** (a really empty file, 0 bytes) against a non-empty DEM is
valid: the prediction file is written empty, exit status 0 (the natural end of a pipeline
that had nothing to decode).
"""

from __future__ import annotations

import os
import re

from qdecode.cli.help_text import QUANTUM_DECODER_NAMES, HelpFormatter

FORMATS = ("01", "b8", "r8", "ptb64", "hits", "dets")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="decode a detection-event file (like `sinter predict`)",
        description="Predict observable flips for a file of detection events.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--dem", required=True, help="stim detector error model (.dem)")
    p.add_argument("--dets", required=True, help="detection event data file")
    p.add_argument("--dets-format", default="b8", choices=FORMATS, help="format of --dets (default: %(default)s)")
    p.add_argument("--decoder", required=True, help=f"decoder name, one of: {QUANTUM_DECODER_NAMES}")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="decoder parameter (repeatable; default: the decoder's defaults)")
    p.add_argument("--learned-noise", metavar="FILE.dem",
                   help="build the decoder from this DEM (e.g. from `qdecode learn-noise`) instead of --dem; "
                        "it must have --dem's detector and observable counts (default: decode with --dem)")
    p.add_argument("--obs-out", required=True, help="where to write the predicted observable flips (kept shots only "
                                                    "when --postselect is given, as sinter predict)")
    p.add_argument("--postselect", metavar="RULE",
                   help="discard shots where these detectors fire: 'coord4' (non-zero 4th coordinate, sinter's "
                        "rule), indices '3,17,42', or a coordinate range 'c<k>=lo:hi'; needs --discards-out")
    p.add_argument("--discards-out", metavar="PATH", help="where to write one discard bit per shot (with --postselect)")
    p.add_argument("--discards-out-format", default="01", choices=FORMATS, help="format of --discards-out")
    p.add_argument("--obs-out-format", default="01", choices=FORMATS,
                   help="format of --obs-out (default: %(default)s)")
    p.set_defaults(run=run)


def read_dem(path: str):
    """The DEM in ``path`` via :func:`qdecode.sims.model_files.read_dem` (one-line errors)."""
    from qdecode.sims.model_files import read_dem as _read

    return _read(path)


_read_dem = read_dem  # the name other commands (sweep) import


# ------------------------------------------------------------------ shot files
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
        raise ValueError(f"{path}: looks like {guess} text, not {fmt} data (pass --dets-format {guess})")


def _check_b8_padding(path: str, data, num_dets: int, first_shot: int = 0) -> None:
    """Bits past the last detector of a b8 shot must be 0 (stim writes them so)."""
    import numpy as np

    if num_dets % 8 == 0 or not len(data):
        return
    pad = 0xFF & ~((1 << (num_dets % 8)) - 1)
    bad = np.flatnonzero(data[:, -1] & pad)
    if bad.size:
        raise ValueError(
            f"{path}: b8 shot {first_shot + int(bad[0])} has bits set past detector {num_dets - 1} "
            f"(not a b8 file for this DEM's {num_dets} detectors?)"
        )


def check_shot_file(path: str, fmt: str, num_dets: int) -> None:
    """Raise a one-line ``ValueError`` when the shot file cannot hold ``num_dets``-bit shots in ``fmt``.

    Checks the cheap things up front (existence, whole b8 / ptb64 records, 01 line widths and
    characters, text given as a binary format); the rest (r8, hits, dets syntax) is stim's
    reader's job, whose message :func:`read_shots` wraps. An empty file is zero shots, not an error.
    """
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a directory, expected a shot file")
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such shot file")
    if num_dets == 0:
        raise ValueError(f"{path}: the detector error model has no detectors, so there is nothing to decode")
    size = os.path.getsize(path)
    if size == 0:
        return
    if fmt == "b8":
        width = (num_dets + 7) // 8
        _not_text(path, fmt)
        if size % width:
            raise ValueError(
                f"{path}: {size} bytes is not a whole number of b8 shots of {width} bytes "
                f"({num_dets} detectors in the DEM)"
            )
    elif fmt == "ptb64":
        width = num_dets * 8  # 64 shots: one 8-byte word per detector
        _not_text(path, fmt)
        if size % width:
            raise ValueError(
                f"{path}: {size} bytes is not a whole number of ptb64 groups of {width} bytes "
                f"(64 shots of {num_dets} detectors)"
            )
    elif fmt == "01":
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                line = raw.rstrip(b"\r\n")
                if line.strip(b"01"):
                    if any(b < 0x20 or b > 0x7E for b in line.strip(b"01")):
                        raise ValueError(f"{path}:{lineno}: not 01 text (binary data; is it b8? pass --dets-format)")
                    raise ValueError(f"{path}:{lineno}: 01-format line contains characters other than 0/1")
                if len(line) != num_dets:
                    raise ValueError(
                        f"{path}:{lineno}: line has {len(line)} bits but the DEM has {num_dets} detectors"
                    )
                if not raw.endswith(b"\n"):
                    raise ValueError(f"{path}:{lineno}: last line of the 01 file does not end with a newline")


_check_width = check_shot_file  # older name (learn-noise)


def read_shots(path: str, fmt: str, num_dets: int):
    """Bit-packed ``(S, ceil(num_dets / 8))`` uint8 detection events of a checked shot file."""
    import numpy as np
    import stim

    check_shot_file(path, fmt, num_dets)
    width = (num_dets + 7) // 8
    if fmt == "b8":  # raw bytes: stim would mask the padding bits we check
        data = np.fromfile(path, dtype=np.uint8).reshape(-1, width)
        _check_b8_padding(path, data, num_dets)
        return data
    try:
        return stim.read_shot_data_file(path=path, format=fmt, num_detectors=num_dets, bit_packed=True)
    except (ValueError, RuntimeError) as exc:
        first = " ".join(str(exc).split("\n")[0].split())
        raise ValueError(f"{path}: cannot read {fmt} shots for {num_dets} detectors: {first}") from None


def run(args) -> int:
    import stim

    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem

    spec = DecoderSpec.create(args.decoder, args.param)
    dem = read_dem(args.dem)
    decoding = dem
    if args.learned_noise:
        decoding = read_dem(args.learned_noise)
        if (decoding.num_detectors, decoding.num_observables) != (dem.num_detectors, dem.num_observables):
            raise ValueError(
                f"{args.learned_noise}: the learned DEM has {decoding.num_detectors} detectors and "
                f"{decoding.num_observables} observables, --dem has {dem.num_detectors} and {dem.num_observables}"
            )
    if (args.postselect is None) != (args.discards_out is None):
        raise ValueError("--postselect and --discards-out go together (the predictions cover the kept shots only)")
    dets = read_shots(args.dets, args.dets_format, dem.num_detectors)
    if args.postselect is not None:
        import numpy as np

        from qdecode.sims.postselection import Postselection

        discard = np.any(dets & Postselection.parse(args.postselect).mask(dem), axis=1)
        # one bit per shot, bit-packed: shot s is byte s, bit 0
        stim.write_shot_data_file(data=discard.astype(np.uint8).reshape(-1, 1), path=args.discards_out,
                                  format=args.discards_out_format, num_measurements=1)
        dets = dets[~discard]
    problem = DecodingProblem.from_dem(decoding)
    decoder = spec.build(problem)
    predictions = decoder.predict_observables_packed(dets)
    stim.write_shot_data_file(
        data=predictions, path=args.obs_out, format=args.obs_out_format, num_observables=dem.num_observables
    )
    return 0
