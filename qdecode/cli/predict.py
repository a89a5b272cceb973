"""``qdecode predict``: decode a shot file with the semantics of ``sinter predict``.

Reads detection events (``--dets``, format ``--dets-format``) for the detector error
model ``--dem``, decodes them in one batch (bit-packed, no per-shot Python loop) and
writes the predicted observable flips to ``--obs-out`` in ``--obs-out-format``.
With ``--learned-noise FILE.dem`` the decoder is built from that DEM (same detector and
observable counts as ``--dem``) instead, e.g. the output of ``qdecode learn-noise``.
"""

from __future__ import annotations

import os

FORMATS = ("01", "b8", "r8", "ptb64", "hits", "dets")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "predict",
        help="decode a detection-event file (like `sinter predict`)",
        description="Predict observable flips for a file of detection events.",
    )
    p.add_argument("--dem", required=True, help="stim detector error model (.dem)")
    p.add_argument("--dets", required=True, help="detection event data file")
    p.add_argument("--dets-format", default="b8", choices=FORMATS, help="format of --dets (default b8)")
    p.add_argument("--decoder", required=True, help="decoder name")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="decoder parameter (repeatable)")
    p.add_argument("--learned-noise", metavar="FILE.dem",
                   help="build the decoder from this DEM (e.g. from `qdecode learn-noise`) instead of --dem; "
                        "it must have --dem's detector and observable counts")
    p.add_argument("--obs-out", required=True, help="where to write the predicted observable flips")
    p.add_argument("--obs-out-format", default="01", choices=FORMATS, help="format of --obs-out (default 01)")
    p.set_defaults(run=run)


def _read_dem(path: str):
    import stim

    from qdecode.problem import ProblemError

    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return stim.DetectorErrorModel(text)
    except ValueError as exc:
        raise ProblemError(f"{path}: malformed detector error model: {exc}") from None


def _check_width(path: str, fmt: str, num_dets: int) -> None:
    """Shot files whose size or line width does not fit ``num_dets`` bits give a precise error."""
    if fmt == "b8":
        width = (num_dets + 7) // 8
        size = os.path.getsize(path)
        if width and size % width:
            raise ValueError(
                f"{path}: {size} bytes is not a whole number of b8 shots of {width} bytes "
                f"({num_dets} detectors in the DEM)"
            )
    elif fmt == "01":
        with open(path, encoding="ascii", errors="replace") as f:
            for lineno, line in enumerate(f, start=1):
                line = line.rstrip("\r\n")
                if len(line) != num_dets:
                    raise ValueError(
                        f"{path}:{lineno}: line has {len(line)} bits but the DEM has {num_dets} detectors"
                    )
                if line.strip("01"):
                    raise ValueError(f"{path}:{lineno}: 01-format line contains characters other than 0/1")


def run(args) -> int:
    import stim

    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem

    spec = DecoderSpec.create(args.decoder, args.param)
    dem = _read_dem(args.dem)
    decoding = dem
    if args.learned_noise:
        decoding = _read_dem(args.learned_noise)
        if (decoding.num_detectors, decoding.num_observables) != (dem.num_detectors, dem.num_observables):
            raise ValueError(
                f"{args.learned_noise}: the learned DEM has {decoding.num_detectors} detectors and "
                f"{decoding.num_observables} observables, --dem has {dem.num_detectors} and {dem.num_observables}"
            )
    problem = DecodingProblem.from_dem(decoding)
    _check_width(args.dets, args.dets_format, dem.num_detectors)
    try:
        dets = stim.read_shot_data_file(
            path=args.dets, format=args.dets_format, num_detectors=dem.num_detectors, bit_packed=True
        )
    except ValueError as exc:
        raise ValueError(f"{args.dets}: cannot read {args.dets_format} shots for {dem.num_detectors} detectors: {exc}") from None
    decoder = spec.build(problem)
    predictions = decoder.predict_observables_packed(dets)
    stim.write_shot_data_file(
        data=predictions, path=args.obs_out, format=args.obs_out_format, num_observables=dem.num_observables
    )
    return 0
