"""``qdecode learn-noise``: estimate a detector error model from detection events alone.

Two ways to get the data:

* from a file: ``--dets FILE [--dets-format b8|01|...]`` with the reference structure from
  ``--reference-dem FILE.dem`` (sectors: components of its graphlike pieces) or
  ``--reference-circuit FILE.stim`` (its decomposed DEM; sectors: detector bases);
* sampled on the fly, for studies: ``--code surface --d 5 --rounds 5 --noise sd6 --p 0.005
  --shots 1000000 --reference-p 0.001 --seed S`` (the reference is the same circuit family at
  ``--reference-p``).

The estimator, the per-sector restriction and the class rescaling are described in
:mod:`qdecode.sims.noise_learning`. ``--out`` writes the learned DEM; the report goes to
stdout (``--json`` for a JSON object). Decode with it through ``qdecode predict
--learned-noise`` or ``qdecode sweep ... --learned-noise``.

Model files are read through :mod:`qdecode.sims.model_files` and shot files checked by
:mod:`qdecode.sims.shot_files` (plus the b8 padding bits, batch by batch), so a missing,
binary, garbage or empty model and a shot file of the wrong size or format are one-line
errors. b8 records no width: ``--num-shots N`` catches a file written for another detector
count whose size still divides. An empty shot file is zero shots, which ``--min-shots``
rejects. A bar over the shots read goes to stderr when it is a terminal and ``--quiet`` is
not given.
"""

from __future__ import annotations

import itertools
import json
import sys

from qdecode.errors import InputError

BATCH_SHOTS = 65536


def add_parser(sub) -> None:
    from qdecode.cli.help_text import NUM_SHOTS_HELP, HelpFormatter
    from qdecode.sims.noise_learning import MIXED_POLICIES
    from qdecode.sims.shot_files import FORMATS

    p = sub.add_parser(
        "learn-noise",
        help="estimate mechanism probabilities from detection events (reweighted .dem)",
        description=(
            "Learn error probabilities from detection-event statistics (pairwise and boundary "
            "estimators per detector sector) and write a reference DEM rescaled class by class."
        ),
        formatter_class=HelpFormatter,
    )
    f = p.add_argument_group("data from a file")
    f.add_argument("--dets", help="detection event file (default: none, sample on the fly)")
    f.add_argument("--dets-format", default="b8", choices=FORMATS,
                   help="format of --dets; b8 records no width, so pass --num-shots to make sure the file was "
                        "written for the reference's detectors (default: %(default)s)")
    f.add_argument("--num-shots", type=int, metavar="N", help=NUM_SHOTS_HELP)
    f.add_argument("--reference-dem",
                   help="reference detector error model (.dem): structure to rescale (default: none)")
    f.add_argument("--reference-circuit",
                   help="reference stim circuit: its decomposed DEM and detector bases (default: none)")
    s = p.add_argument_group("data sampled on the fly (studies)")
    s.add_argument("--code", help="code name (see `qdecode codes`; default: none, read --dets)")
    s.add_argument("--d", type=int, help="distance (required for surface; default: a fixed code's own distance)")
    s.add_argument("--rounds", help="rounds: an int, 'd' or '<k>d' (default: the code's default)")
    s.add_argument("--noise", help="noise model (sd6, si1000, ...; no default, required with --code)")
    s.add_argument("--p", type=float,
                   help="physical error rate of the sampled (true) circuit (no default, required with --code)")
    s.add_argument("--basis", default="Z", choices=["X", "Z"], help="memory basis (default: %(default)s)")
    s.add_argument("--reference-p", type=float,
                   help="physical error rate of the reference DEM (no default, required with --code)")
    s.add_argument("--shots", type=int, help="shots to sample (no default, required with --code)")
    s.add_argument("--seed", type=int, help="stim sampler seed (default: random)")
    o = p.add_argument_group("learning and output")
    o.add_argument("--mixed", default="fit", choices=MIXED_POLICIES,
                   help="instructions with a class in two sectors: 'fit' (geometric mean of the class "
                        "factors, refined until every class total matches its estimate; default) or "
                        "'geomean' (one-shot geometric mean)")
    o.add_argument("--min-shots", type=int, default=1000, help="fewer shots is an error (default: %(default)s)")
    o.add_argument("--out", help="write the learned DEM here (default: report only)")
    o.add_argument("--json", action="store_true", help="print the report as JSON")
    o.add_argument("--quiet", action="store_true", help="no progress on stderr (it is off anyway when not a terminal)")
    p.set_defaults(run=run)


def _read_circuit(path: str):
    from qdecode.sims.model_files import read_circuit

    return read_circuit(path)


def iter_shot_file(path: str, fmt: str, num_detectors: int, batch: int = BATCH_SHOTS):
    """Batches of a shot file: bit-packed ``(S, ceil(m/8))`` for b8 and the stim-read formats,
    unpacked 0/1 ``(S, m)`` for ``01``. b8 and 01 are streamed; other formats are read whole."""
    import numpy as np

    from qdecode.sims.shot_files import check_b8_padding, read_shots

    if fmt == "b8":
        width = (num_detectors + 7) // 8
        done = 0
        with open(path, "rb") as fh:
            while True:
                buf = fh.read(width * batch)
                if not buf:
                    return
                data = np.frombuffer(buf, dtype=np.uint8).reshape(-1, width)
                check_b8_padding(path, data, num_detectors, done)
                done += len(data)
                yield data
    elif fmt == "01":
        with open(path, encoding="ascii") as fh:
            while True:
                lines = list(itertools.islice(fh, batch))
                if not lines:
                    return
                text = "".join(line.rstrip("\r\n") for line in lines).encode("ascii")
                yield (np.frombuffer(text, dtype=np.uint8) - ord("0")).reshape(len(lines), num_detectors)
    else:
        data = read_shots(path, fmt, num_detectors)
        for start in range(0, len(data), batch):
            yield data[start:start + batch]


def _sampled(circuit, shots: int, seed: int | None, batch: int = BATCH_SHOTS):
    sampler = circuit.compile_detector_sampler(seed=seed)
    left = shots
    while left > 0:
        n = min(left, batch)
        yield sampler.sample(n, bit_packed=True)
        left -= n


def _from_file(args):
    from qdecode.problem import decoding_dem
    from qdecode.sims.model_files import read_dem
    from qdecode.sims.shot_files import check_shot_count, check_shot_file

    study = [flag for flag, v in (("--code", args.code), ("--d", args.d), ("--rounds", args.rounds),
                                  ("--noise", args.noise), ("--p", args.p), ("--reference-p", args.reference_p),
                                  ("--shots", args.shots), ("--seed", args.seed)) if v is not None]
    if study:
        raise InputError(f"{study[0]} belongs to sampling on the fly; with --dets give only the reference")
    if (args.reference_dem is None) == (args.reference_circuit is None):
        raise InputError("with --dets give exactly one of --reference-dem FILE or --reference-circuit FILE")
    if args.reference_dem:
        reference, sectors = read_dem(args.reference_dem), None
    else:
        sectors = _read_circuit(args.reference_circuit)
        reference = decoding_dem(sectors)
    m = reference.num_detectors
    if m == 0:
        raise InputError(f"{args.reference_dem or args.reference_circuit}: the reference has no detectors")
    check_shot_file(args.dets, args.dets_format, m)
    if args.num_shots is not None:
        check_shot_count(args.dets, args.dets_format, m, args.num_shots)
    batches = iter_shot_file(args.dets, args.dets_format, m)
    return reference, sectors, batches, args.dets_format != "01", _shots_in_file(args.dets, args.dets_format, m)


def _shots_in_file(path: str, fmt: str, num_detectors: int) -> int | None:
    """The shot count of a checked b8 / 01 file (for the progress bar); None for other formats."""
    import os

    size = os.path.getsize(path)
    if fmt == "b8":
        return size // ((num_detectors + 7) // 8)
    if fmt == "01":
        return size // (num_detectors + 1)  # "\r\n" files: a bar that ends early, never an error
    return None


def _from_sampling(args):
    from qdecode.problem import decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.recipe import resolve_rounds

    if args.reference_dem or args.reference_circuit:
        raise InputError("--reference-dem / --reference-circuit go with --dets; on the fly, give --reference-p")
    missing = [flag for flag, v in (("--noise", args.noise), ("--p", args.p), ("--reference-p", args.reference_p),
                                    ("--shots", args.shots)) if v is None]
    if missing:
        raise InputError(f"sampling on the fly needs {', '.join(missing)}")
    for flag, v in (("--p", args.p), ("--reference-p", args.reference_p)):
        if not 0 < v < 1:
            raise InputError(f"{flag} must lie strictly inside (0, 1), got {v}")
    if args.shots < args.min_shots:
        raise InputError(f"--shots {args.shots} is below --min-shots {args.min_shots}")
    rounds = args.rounds
    if rounds is not None:
        rounds = resolve_rounds(int(rounds) if rounds.strip().isdigit() else rounds, args.d, "--rounds")
    kw = dict(d=args.d, rounds=rounds, noise=args.noise, basis=args.basis)
    truth = build_circuit(args.code, p=args.p, **kw)
    reference = decoding_dem(build_circuit(args.code, p=args.reference_p, **kw))
    return reference, truth, _sampled(truth, args.shots, args.seed), True, args.shots


def run(args) -> int:
    from qdecode.sims.noise_learning import learn_noise

    if (args.dets is None) == (args.code is None):
        raise InputError("give --dets FILE (with a reference) or --code ... to sample on the fly")
    if args.num_shots is not None and args.dets is None:
        raise InputError("--num-shots checks a --dets file; to sample on the fly give --shots")
    if args.min_shots < 1:
        raise InputError(f"--min-shots must be >= 1, got {args.min_shots}")
    from qdecode.cli.progress import ProgressBar

    reference, sectors, batches, packed, total = _from_file(args) if args.dets else _from_sampling(args)
    with ProgressBar(total, desc="learn-noise", unit="shot", quiet=args.quiet) as bar:
        learned, report = learn_noise(reference, bar.wrap(batches), sectors, bit_packed=packed, mixed=args.mixed,
                                      min_shots=args.min_shots)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(str(learned) + "\n")
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(report.format())
        if args.out:
            print(f"learned DEM -> {args.out}")
    sys.stdout.flush()
    return 0
