"""``qdecode export-vectors``: fixed-point min-sum test vectors for an HDL testbench.

Builds the problem (``--code ... --noise --p``, ``--dem FILE`` or ``--alist FILE --p``),
samples ``--shots`` syndromes with ``--seed``, decodes them with the bit-accurate
fixed-point :class:`~qdecode.decoders.bp.BpDecoder` and writes the files described in
:mod:`qdecode.hw.vectors` to ``--out``. ``--replay DIR`` instead re-checks an existing
directory bit for bit (exit 1 on any mismatch).
"""

from __future__ import annotations

import sys

from qdecode.errors import InputError


def add_parser(sub) -> None:
    from qdecode.cli.common import add_problem_args

    p = sub.add_parser(
        "export-vectors",
        help="fixed-point test vectors for an HDL testbench",
        description=(
            "Decode sampled syndromes with the fixed-point min-sum reference model and write "
            "manifest.json, H.alist, priors_q.hex, syndromes.hex, expected_hard.hex, "
            "expected_iters.txt, expected_converged.txt (and per-iteration posterior dumps)."
        ),
    )
    add_problem_args(p, alist=True)
    g = p.add_argument_group("fixed-point min-sum configuration")
    g.add_argument("--bits", type=int, default=8, help="message width in bits (default 8)")
    g.add_argument("--frac-bits", type=int, default=3, help="fraction bits (default 3)")
    g.add_argument("--alpha", type=float,
                   help="min-sum scaling in [0, 1], applied as alpha_num >> 8; 0 = adaptive 1 - 2^-t "
                        "(default 0.625; relay-bp: 1.0)")
    g.add_argument("--beta", type=float, default=0.0, help="offset min-sum beta in LLR units (default 0)")
    g.add_argument("--max-iter", type=int, default=50, help="iteration limit (default 50)")
    g.add_argument("--schedule", default="flooding", choices=["flooding", "layered"], help="default flooding")
    r = p.add_argument_group("Relay-BP (--decoder relay-bp; fixed point, explicit gamma table, integer weights)")
    r.add_argument("--decoder", default="bp", choices=["bp", "relay-bp"], help="reference model (default bp)")
    r.add_argument("--gamma0", type=float, default=0.15, help="leg-0 memory strength (default 0.15)")
    r.add_argument("--gamma-lo", type=float, default=-0.226, help="gamma table ~ U[lo, hi) (default -0.226)")
    r.add_argument("--gamma-hi", type=float, default=0.622, help="(default 0.622)")
    r.add_argument("--gamma-rows", type=int, default=16, help="rows R of the gamma table; leg r uses row r %% R "
                                                              "(default 16)")
    r.add_argument("--gamma-seed", type=int, default=0, help="seed of the gamma table (default 0)")
    r.add_argument("--pre-iter", type=int, default=80, help="leg-0 iterations (default 80)")
    r.add_argument("--legs", type=int, default=300, help="legs after leg 0 (default 300)")
    r.add_argument("--leg-iter", type=int, default=60, help="iterations per later leg (default 60)")
    r.add_argument("--stop-after", type=int, default=5, help="stop after this many converged legs (default 5)")
    o = p.add_argument_group("shots and output")
    o.add_argument("--shots", type=int, default=100, help="syndromes to sample (default 100)")
    o.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    o.add_argument("--dump-messages", type=int, default=0, metavar="K",
                   help="write per-iteration posteriors of the first K shots (default 0)")
    o.add_argument("--out", metavar="DIR", help="output directory (created if missing)")
    o.add_argument("--replay", metavar="DIR",
                   help="instead of exporting, re-decode an exported directory and compare bit for bit")
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.cli.common import check_shots, load_problem
    from qdecode.decoders.bp import BpDecoder
    from qdecode.hw.vectors import export_vectors, replay_vectors

    if args.replay:
        if args.out or args.code or args.dem or args.alist:
            raise InputError("--replay DIR takes no problem or --out options")
        from qdecode.hw.relay_vectors import RELAY_DECODER, replay_relay_vectors
        from qdecode.hw.vectors import load_vectors

        relay = load_vectors(args.replay).manifest.get("decoder") == RELAY_DECODER
        report = (replay_relay_vectors if relay else replay_vectors)(args.replay)
        print(report.summary())
        return 0 if report.ok else 1
    if not args.out:
        raise InputError("--out DIR is required")
    shots = check_shots(args.shots)
    if args.dump_messages < 0:
        raise InputError(f"--dump-messages must be >= 0, got {args.dump_messages}")
    if args.bits < 2:
        raise InputError(f"--bits must be >= 2 (fixed point), got {args.bits}")
    if args.decoder == "relay-bp":
        return _run_relay(args, shots)
    lp = load_problem(args)
    alpha = 0.625 if args.alpha is None else args.alpha
    decoder = BpDecoder(lp.problem, method="minsum", max_iter=args.max_iter, alpha=alpha, beta=args.beta,
                        schedule=args.schedule, bits=args.bits, frac_bits=args.frac_bits)
    dets, _ = lp.sample(shots, args.seed)
    description = {**lp.description, "seed": args.seed}
    manifest = export_vectors(lp.problem, decoder, dets, args.out, description=description,
                              dump_messages=args.dump_messages)
    print(
        f"qdecode export-vectors: {manifest['shots']} shots, m={manifest['m']} n={manifest['n']} "
        f"nnz={manifest['nnz']}, {manifest['bits']}-bit messages -> {args.out}",
        file=sys.stderr,
    )
    if manifest["priors_saturated"]:
        print(f"qdecode export-vectors: warning: {manifest['priors_saturated']} of {manifest['n']} priors saturate "
              f"at msg_lim={manifest['msg_lim']} (more integer bits?)", file=sys.stderr)
    return 0


def _run_relay(args, shots: int) -> int:
    from qdecode.cli.common import load_problem
    from qdecode.decoders.relay_bp import RelayBpDecoder
    from qdecode.hw.relay_vectors import export_relay_vectors, gamma_table

    if args.dump_messages:
        raise InputError("--dump-messages is not supported with --decoder relay-bp")
    if args.schedule != "flooding" or args.beta:
        raise InputError("--decoder relay-bp is flooding min-sum without offset: drop --schedule / --beta")
    if args.gamma_rows < 1:
        raise InputError(f"--gamma-rows must be >= 1, got {args.gamma_rows}")
    if not args.gamma_lo < args.gamma_hi:
        raise InputError(f"--gamma-lo must be < --gamma-hi, got {args.gamma_lo} and {args.gamma_hi}")
    lp = load_problem(args)
    n = lp.problem.num_errors
    gammas = gamma_table(n, args.gamma_rows, args.gamma_lo, args.gamma_hi, args.gamma_seed)
    decoder = RelayBpDecoder(lp.problem, gamma0=args.gamma0, pre_iter=args.pre_iter, legs=args.legs,
                             leg_iter=args.leg_iter, stop_after=args.stop_after,
                             alpha=1.0 if args.alpha is None else args.alpha, seed=0, bits=args.bits,
                             frac_bits=args.frac_bits, explicit_gammas=gammas)
    dets, _ = lp.sample(shots, args.seed)
    description = {**lp.description, "seed": args.seed, "gamma_seed": args.gamma_seed,
                   "gamma_interval": [args.gamma_lo, args.gamma_hi]}
    mf = export_relay_vectors(lp.problem, decoder, dets, args.out, description=description)
    print(f"qdecode export-vectors: relay-bp, {mf['shots']} shots, m={mf['m']} n={mf['n']}, {mf['bits']}-bit "
          f"messages, {mf['gamma_rows']} gamma rows -> {args.out}", file=sys.stderr)
    return 0
