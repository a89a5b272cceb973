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
"""

from __future__ import annotations

import itertools
import json
import sys

BATCH_SHOTS = 65536


def add_parser(sub) -> None:
    from qdecode.cli.predict import FORMATS
    from qdecode.sims.noise_learning import MIXED_POLICIES

    p = sub.add_parser(
        "learn-noise",
        help="estimate mechanism probabilities from detection events (reweighted .dem)",
        description=(
            "Learn error probabilities from detection-event statistics (pairwise and boundary "
            "estimators per detector sector) and write a reference DEM rescaled class by class."
        ),
    )
    f = p.add_argument_group("data from a file")
    f.add_argument("--dets", help="detection event file")
    f.add_argument("--dets-format", default="b8", choices=FORMATS, help="format of --dets (default b8)")
    f.add_argument("--reference-dem", help="reference detector error model (.dem): structure to rescale")
    f.add_argument("--reference-circuit", help="reference stim circuit: its decomposed DEM and detector bases")
    s = p.add_argument_group("data sampled on the fly (studies)")
    s.add_argument("--code", help="code name (see `qdecode codes`)")
    s.add_argument("--d", type=int, help="distance")
    s.add_argument("--rounds", help="rounds: an int, 'd' or '<k>d' (default: the code's default)")
    s.add_argument("--noise", help="noise model (sd6, si1000, ...)")
    s.add_argument("--p", type=float, help="physical error rate of the sampled (true) circuit")
    s.add_argument("--basis", default="Z", choices=["X", "Z"], help="memory basis (default Z)")
    s.add_argument("--reference-p", type=float, help="physical error rate of the reference DEM")
    s.add_argument("--shots", type=int, help="shots to sample")
    s.add_argument("--seed", type=int, help="stim sampler seed (default: random)")
    o = p.add_argument_group("learning and output")
    o.add_argument("--mixed", default="fit", choices=MIXED_POLICIES,
                   help="instructions with a class in two sectors: 'fit' (geometric mean of the class "
                        "factors, refined until every class total matches its estimate; default) or "
                        "'geomean' (one-shot geometric mean)")
    o.add_argument("--min-shots", type=int, default=1000, help="fewer shots is an error (default 1000)")
    o.add_argument("--out", help="write the learned DEM here")
    o.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def _read_circuit(path: str):
    import stim

    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        return stim.Circuit(text)
    except ValueError as exc:
        raise ValueError(f"{path}: malformed stim circuit: {exc}") from None


def iter_shot_file(path: str, fmt: str, num_detectors: int, batch: int = BATCH_SHOTS):
    """Batches of a shot file: bit-packed ``(S, ceil(m/8))`` for b8 and the stim-read formats,
    unpacked 0/1 ``(S, m)`` for ``01``. b8 and 01 are streamed; other formats are read whole."""
    import numpy as np
    import stim

    if fmt == "b8":
        width = (num_detectors + 7) // 8
        with open(path, "rb") as fh:
            while True:
                buf = fh.read(width * batch)
                if not buf:
                    return
                yield np.frombuffer(buf, dtype=np.uint8).reshape(-1, width)
    elif fmt == "01":
        with open(path, encoding="ascii") as fh:
            while True:
                lines = list(itertools.islice(fh, batch))
                if not lines:
                    return
                text = "".join(line.rstrip("\r\n") for line in lines).encode("ascii")
                yield (np.frombuffer(text, dtype=np.uint8) - ord("0")).reshape(len(lines), num_detectors)
    else:
        try:
            data = stim.read_shot_data_file(path=path, format=fmt, num_detectors=num_detectors, bit_packed=True)
        except ValueError as exc:
            raise ValueError(f"{path}: cannot read {fmt} shots for {num_detectors} detectors: {exc}") from None
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
    from qdecode.cli.predict import _check_width, _read_dem
    from qdecode.sims.tasks import decoding_dem

    study = [flag for flag, v in (("--code", args.code), ("--d", args.d), ("--rounds", args.rounds),
                                  ("--noise", args.noise), ("--p", args.p), ("--reference-p", args.reference_p),
                                  ("--shots", args.shots), ("--seed", args.seed)) if v is not None]
    if study:
        raise ValueError(f"{study[0]} belongs to sampling on the fly; with --dets give only the reference")
    if (args.reference_dem is None) == (args.reference_circuit is None):
        raise ValueError("with --dets give exactly one of --reference-dem FILE or --reference-circuit FILE")
    if args.reference_dem:
        reference, sectors = _read_dem(args.reference_dem), None
    else:
        sectors = _read_circuit(args.reference_circuit)
        reference = decoding_dem(sectors)
    m = reference.num_detectors
    if m == 0:
        raise ValueError("the reference has no detectors")
    _check_width(args.dets, args.dets_format, m)
    batches = iter_shot_file(args.dets, args.dets_format, m)
    return reference, sectors, batches, args.dets_format != "01"


def _from_sampling(args):
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.recipe import resolve_rounds
    from qdecode.sims.tasks import decoding_dem

    if args.reference_dem or args.reference_circuit:
        raise ValueError("--reference-dem / --reference-circuit go with --dets; on the fly, give --reference-p")
    missing = [flag for flag, v in (("--noise", args.noise), ("--p", args.p), ("--reference-p", args.reference_p),
                                    ("--shots", args.shots)) if v is None]
    if missing:
        raise ValueError(f"sampling on the fly needs {', '.join(missing)}")
    for flag, v in (("--p", args.p), ("--reference-p", args.reference_p)):
        if not 0 < v < 1:
            raise ValueError(f"{flag} must lie strictly inside (0, 1), got {v}")
    if args.shots < args.min_shots:
        raise ValueError(f"--shots {args.shots} is below --min-shots {args.min_shots}")
    rounds = args.rounds
    if rounds is not None:
        rounds = resolve_rounds(int(rounds) if rounds.strip().isdigit() else rounds, args.d, "--rounds")
    kw = dict(d=args.d, rounds=rounds, noise=args.noise, basis=args.basis)
    truth = build_circuit(args.code, p=args.p, **kw)
    reference = decoding_dem(build_circuit(args.code, p=args.reference_p, **kw))
    return reference, truth, _sampled(truth, args.shots, args.seed), True


def run(args) -> int:
    from qdecode.sims.noise_learning import learn_noise

    if (args.dets is None) == (args.code is None):
        raise ValueError("give --dets FILE (with a reference) or --code ... to sample on the fly")
    if args.min_shots < 1:
        raise ValueError(f"--min-shots must be >= 1, got {args.min_shots}")
    reference, sectors, batches, packed = _from_file(args) if args.dets else _from_sampling(args)
    learned, report = learn_noise(reference, batches, sectors, bit_packed=packed, mixed=args.mixed,
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
