"""``qdecode circuit``: write a generated stim circuit (surface or BB memory experiment), optionally with
heralded noise (``--erasure-fraction``, ``--leakage``, ``--loss``: :mod:`qdecode.sims.heralded_noise`)."""

from __future__ import annotations

import sys

from qdecode.cli.help_text import HelpFormatter
from qdecode.errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("circuit", help="write a stim circuit", description="Write a noisy memory-experiment circuit.",
                       formatter_class=HelpFormatter)
    p.add_argument("name", help="quantum code name (see `qdecode codes`)")
    p.add_argument("--d", type=int, help="distance (required for surface; default: a fixed code's own distance)")
    p.add_argument("--rounds", help="syndrome rounds: an int, 'd' or '<k>d' (default: d)")
    p.add_argument("--p", type=float, required=True, help="physical error rate")
    p.add_argument("--noise", default="sd6",
                   help="noise model: sd6, si1000, phenomenological, code-capacity (surface), bb-uniform, "
                        "code-capacity (BB codes) (default: %(default)s)")
    p.add_argument("--basis", default="Z", choices=["X", "Z", "XYZ"], help="memory basis (XYZ: colour code only)")
    dets = p.add_mutually_exclusive_group()
    dets.add_argument("--both-bases", dest="memory_basis_only", action="store_false", default=None,
                      help="keep the detectors of both bases (default for the surface code)")
    dets.add_argument("--memory-basis-only", dest="memory_basis_only", action="store_true",
                      help="keep only the memory basis's detectors (default for BB codes)")
    h = p.add_argument_group("heralded noise (qdecode.sims.heralded_noise; the circuit comes out flattened)")
    h.add_argument("--erasure-fraction", type=float, default=0.0, metavar="F",
                   help="erasure conversion: DEPOLARIZE2(p) -> DEPOLARIZE2((1-F) p) + HERALDED_ERASE(F p / 2) on each "
                        "of its qubits, each herald read by a DETECTOR[herald]; F in [0, 1] (default: 0)")
    h.add_argument("--leakage", type=float, default=0.0, metavar="P",
                   help="leakage: HERALDED_ERASE(P) on both qubits after every two-qubit gate, a qubit's heralds read "
                        "by one DETECTOR[herald] at its next measurement or at any syndrome measurement (a "
                        "leakage-reduction unit every round); P in [0, 1) (default: 0)")
    h.add_argument("--loss", type=float, default=0.0, metavar="P",
                   help="atom loss: as --leakage, but a qubit's heralds are read only at its own next measurement or "
                        "reset (data qubits: the final readout); P in [0, 1) (default: 0)")
    p.add_argument("--out", help="output file (default: stdout)")
    p.add_argument("--dem", action="store_true", help="write the detector error model instead of the circuit")
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.problem import decoding_dem
    from qdecode.sims.heralded_noise import check_erasure_fraction, check_heralded_rate
    from qdecode.sims.recipe import resolve_rounds
    from qdecode.sims.tasks import CircuitRecipe

    if not 0 < args.p < 1:
        raise InputError(f"--p must lie strictly inside (0, 1), got {args.p}")
    check_erasure_fraction(args.erasure_fraction, "--erasure-fraction")
    check_heralded_rate(args.leakage, "--leakage")
    check_heralded_rate(args.loss, "--loss")
    rounds = resolve_rounds(int(args.rounds) if args.rounds and args.rounds.isdigit() else args.rounds,
                            args.d, "--rounds")
    recipe = CircuitRecipe(
        code=args.name, noise=args.noise, p=args.p, d=args.d, rounds=rounds,
        basis=args.basis, memory_basis_only=args.memory_basis_only,
        erasure_fraction=args.erasure_fraction, leakage=args.leakage, loss=args.loss,
    )
    circuit = recipe.build()
    text = str(decoding_dem(circuit)) if args.dem else str(circuit)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0
