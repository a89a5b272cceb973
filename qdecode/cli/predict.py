"""``qdecode predict``: decode a shot file with the semantics of ``sinter predict``.

Reads detection events (``--dets``, format ``--dets-format``) for the detector error
model ``--dem``, decodes them in blocks (bit-packed, no per-shot Python loop; progress below) and
writes the predicted observable flips to ``--obs-out`` in ``--obs-out-format``.
With ``--learned-noise FILE.dem`` the decoder is built from that DEM (same detector and
observable counts as ``--dem``) instead, e.g. the output of ``qdecode learn-noise``.

Bad input is one line naming the file and the problem (exit status 2):

* model files go through :mod:`qdecode.sims.model_files`: a missing, binary, unparsable
  or empty ``.dem`` is an error (an empty DEM -- no detectors, no observables -- would turn
  any shot file into an empty prediction file);
* shot files (:mod:`qdecode.sims.shot_files`): missing file, a b8 / ptb64 size that is not a
  whole number of shots, b8 padding bits set past the last detector, 01 lines of the wrong
  width or with other characters, text given as b8 (``looks like 01 text``), and whatever stim
  rejects in the other formats (r8, hits, dets). b8 records no width: a file written for
  another detector count whose size still divides is caught only by ``--num-shots N``;
* a DEM without detectors (observables only) cannot be matched to a shot file.

With ``--gap-out PATH`` it also writes each kept shot's confidence, the gap in dB
(:mod:`qdecode.decoders.confidence`), as text: one line per shot, ``%.3f``, ``inf`` (no other
logical class) or ``nan`` (the decoder cannot tell). A decoder without a confidence is refused
(one line, exit status 2) before any shot is read.

Progress: the shots are decoded in blocks (:func:`decode_blocks`; a decoder decodes each shot
independently of the others in its call, so the output is the same whatever the blocks), and a
:class:`qdecode.cli.progress.ProgressBar` on stderr advances after each block: a bar on a
terminal, a plain line at most every 30 s without one, nothing with ``--quiet``. stdout and the
output files are the same with and without it.

A shot file with **zero shots** (a really empty file, 0 bytes) against a non-empty DEM is
valid: the prediction file is written empty, exit status 0 (the natural end of a pipeline
that had nothing to decode).
"""

from __future__ import annotations

import math
from typing import Iterable

from qdecode.cli.help_text import CONFIDENCE_DECODER_NAMES, NUM_SHOTS_HELP, QUANTUM_DECODER_NAMES, HelpFormatter
from qdecode.errors import InputError


def add_parser(sub) -> None:
    from qdecode.sims.shot_files import FORMATS

    p = sub.add_parser(
        "predict",
        help="decode a detection-event file (like `sinter predict`)",
        description="Predict observable flips for a file of detection events.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--dem", required=True, help="stim detector error model (.dem)")
    p.add_argument("--dets", required=True, help="detection event data file")
    p.add_argument("--dets-format", default="b8", choices=FORMATS,
                   help="format of --dets; b8 records no width, so pass --num-shots to make sure the file was "
                        "written for --dem's detectors (default: %(default)s)")
    p.add_argument("--num-shots", type=int, metavar="N", help=NUM_SHOTS_HELP)
    p.add_argument("--decoder", required=True,
                   help=f"decoder name or label (bposd[osd_order=4]; a sinter name qd-... too), one of: "
                        f"{QUANTUM_DECODER_NAMES}")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="decoder parameter (repeatable; default: the decoder's defaults)")
    p.add_argument("--time-budget", type=float, metavar="MS",
                   help="--decoder auto only: CPU milliseconds per shot the chosen decoder may take (default 1.0)")
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
    p.add_argument("--gap-out", metavar="PATH",
                   help="also write each shot's confidence: the gap in dB between the best correction and the best "
                        "one of another logical class, one text line per shot (%%.3f, inf, nan); decoders with a "
                        f"confidence: {CONFIDENCE_DECODER_NAMES}")
    p.add_argument("--latency-out", metavar="PATH",
                   help="decode in real-time mode (one shot after another, each timed; same predictions) and write "
                        "one text line per decoded shot: its wall time in microseconds (%%.3f) and, where the decoder "
                        "has a work clock, its work count (BP iterations, ...), space-separated; not with --gap-out")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args) -> int:
    import stim

    from qdecode.cli.common import time_budget_params
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem
    from qdecode.sims.model_files import read_dem
    from qdecode.sims.shot_files import check_shot_count, read_shots

    spec = DecoderSpec.parse(args.decoder, args.param + time_budget_params(args.time_budget, [args.decoder]))
    if args.gap_out is not None:
        from qdecode.decoders.confidence import no_confidence_error
        from qdecode.decoders.registry import get_entry

        if not get_entry(spec.name).has_confidence:  # refused before reading or decoding anything
            raise no_confidence_error(spec.name)
        if args.latency_out is not None:
            raise InputError("--latency-out and --gap-out cannot be combined: the timed decoding path gives no "
                             "confidence")
    dem = read_dem(args.dem)
    decoding = dem
    if args.learned_noise:
        decoding = read_dem(args.learned_noise)
        if (decoding.num_detectors, decoding.num_observables) != (dem.num_detectors, dem.num_observables):
            raise InputError(
                f"{args.learned_noise}: the learned DEM has {decoding.num_detectors} detectors and "
                f"{decoding.num_observables} observables, --dem has {dem.num_detectors} and {dem.num_observables}"
            )
    if (args.postselect is None) != (args.discards_out is None):
        raise InputError("--postselect and --discards-out go together (the predictions cover the kept shots only)")
    dets = read_shots(args.dets, args.dets_format, dem.num_detectors)
    if args.num_shots is not None:
        check_shot_count(args.dets, args.dets_format, dem.num_detectors, args.num_shots, found=len(dets))
    if args.postselect is not None:
        import numpy as np

        from qdecode.sims.postselection import Postselection

        discard = np.any(dets & Postselection.parse(args.postselect).mask(dem), axis=1)
        # one bit per shot, bit-packed: shot s is byte s, bit 0
        stim.write_shot_data_file(data=discard.astype(np.uint8).reshape(-1, 1), path=args.discards_out,
                                  format=args.discards_out_format, num_measurements=1)
        dets = dets[~discard]
    from qdecode.cli.compile_notice import compile_notice
    from qdecode.cli.progress import ProgressBar

    problem = DecodingProblem.from_dem(decoding)
    gaps = None
    with compile_notice(spec.label(), quiet=args.quiet):
        decoder = spec.build(problem)
        with ProgressBar(len(dets), desc="predict", unit="shot", quiet=args.quiet) as bar:
            if args.latency_out is not None:
                predictions, wall_ns, work = decode_timed_blocks(decoder, dets, advance=bar.update)
                write_latency(args.latency_out, wall_ns, work)
            else:
                predictions, gaps = decode_blocks(decoder, dets, confidence=args.gap_out is not None,
                                                  advance=bar.update)
    if gaps is not None:
        write_gaps(args.gap_out, gaps)
    stim.write_shot_data_file(
        data=predictions, path=args.obs_out, format=args.obs_out_format, num_observables=dem.num_observables
    )
    return 0


# Blocks: the first has FIRST_BLOCK shots; each next one is sized to take about BLOCK_SECONDS at the
# time per shot measured so far, between MIN_BLOCK and MAX_BLOCK shots and at most 8x the last one. So
# progress advances every second or so on a slow decoder (Tesseract: ~0.5 s per shot), while a fast one
# gets the large calls on which lane decoders are fastest (MAX_BLOCK = the sweep's CALL_SHOTS).
FIRST_BLOCK = 16
MIN_BLOCK = 1
MAX_BLOCK = 8192
BLOCK_SECONDS = 1.0


def next_block(done: int, seconds: float, last: int) -> int:
    """Shots of the next block after ``done`` shots decoded in ``seconds`` (the last block had ``last``)."""
    if done <= 0:
        return FIRST_BLOCK
    target = BLOCK_SECONDS * done / seconds if seconds > 0 else MAX_BLOCK
    return int(max(MIN_BLOCK, min(MAX_BLOCK, 8 * last, target)))


def decode_blocks(decoder, packed, *, confidence: bool, advance=lambda n: None):
    """Decode bit-packed uint8 ``(S, ceil(m/8))`` detection events block by block (:func:`next_block`).

    Returns:
        (bit-packed uint8 ``(S, ceil(k/8))`` predicted observables, float ``(S,)`` gaps in dB or None
        without ``confidence``): the same arrays as one call on all shots, since each shot is decoded
        independently of the others in its call. ``advance(n)`` is called after each block of ``n``.
    """
    import time

    import numpy as np

    preds, gaps = [], []
    start, seconds, size = 0, 0.0, 0
    while start < len(packed) or not preds:
        size = next_block(start, seconds, size)
        block = packed[start:start + size]
        t0 = time.process_time()
        if confidence:
            p, g = decoder.predict_with_confidence_packed(block)
            gaps.append(np.asarray(g))
        else:
            p = decoder.predict_observables_packed(block)
        seconds += time.process_time() - t0
        preds.append(p)
        start += len(block)
        advance(len(block))
    return np.concatenate(preds), (np.concatenate(gaps) if confidence else None)


TIMED_BLOCK = 256  # shots per call of the timed path: progress about every 256 shots


def decode_timed_blocks(decoder, packed, *, advance=lambda n: None):
    """Decode bit-packed uint8 ``(S, ceil(m/8))`` detection events in real-time mode, :data:`TIMED_BLOCK`
    shots per ``predict_observables_timed`` call.

    Returns:
        (bit-packed uint8 ``(S, ceil(k/8))`` predicted observables, float64 ``(S,)`` wall times in ns,
        int64 ``(S,)`` work counts or None when the decoder has no work clock).
    """
    import numpy as np

    preds, walls, works = [], [], []
    for start in range(0, max(1, len(packed)), TIMED_BLOCK):
        block = packed[start:start + TIMED_BLOCK]
        preds.append(decoder.predict_observables_timed(block))
        info = decoder.last_info
        walls.append(np.asarray(info.wall_ns, dtype=np.float64))
        works.append(None if info.work is None else np.asarray(info.work, dtype=np.int64))
        advance(len(block))
    work = None if any(w is None for w in works) else np.concatenate(works)
    return np.concatenate(preds), np.concatenate(walls), work


def write_latency(path: str, wall_ns, work) -> None:
    """Write one line per shot: the wall time in microseconds (``%.3f``) and, when ``work`` is given, the work count."""
    walls = [f"{w / 1e3:.3f}" for w in map(float, wall_ns)]
    lines = walls if work is None else [f"{w} {int(k)}" for w, k in zip(walls, work)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def write_gaps(path: str, gaps: Iterable[float]) -> None:
    """Write float ``(S,)`` gaps in dB to ``path``: one line per shot, ``%.3f``, ``inf`` or ``nan``."""
    lines = ["nan" if math.isnan(x) else ("inf" if x == math.inf else "%.3f" % x) for x in map(float, gaps)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
