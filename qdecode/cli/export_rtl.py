"""``qdecode export-rtl``: synthesizable Verilog of the fixed-point flooding min-sum decoder.

The decoder comes from a problem (``--code ... --noise --p``, ``--dem FILE`` or ``--alist FILE
--p``) and the fixed-point options, exactly as ``qdecode export-vectors`` builds its reference
model; or, with ``--vectors DIR`` and no problem option, from an exported vector set alone (its
H, priors and manifest). ``--out DIR`` receives the files of :mod:`qdecode.hw.rtl.emit`;
``--vectors DIR`` also writes the bench for that vector set, and ``--simulate`` runs it
(exit 1 on any mismatch). ``--parallelism P`` (alias ``--fold``) writes the folded design of
:mod:`qdecode.hw.rtl.folded` (``ceil(m/P) + ceil(n/P)`` cycles per iteration) instead of the fully
parallel one. ``--synth`` runs yosys for the listed targets, ``--pnr`` nextpnr-ice40.

With a 5G NR LDPC code (``--code 'nr5g[bg=2,k=512,n=1024]'`` or a catalogue ``nr5g_*`` name) it writes instead
the Z-wide layered min-sum design of :mod:`qdecode.hw.rtl.qc_layered` for the decoder ``ldpc-ms`` (its
defaults: 8 bits, 2 fraction bits, offset min-sum beta 0.5, 10 iterations; ``--alpha`` selects normalised
min-sum); ``--frames N --ebn0 X [--seed S]`` exports N random BPSK/AWGN frames as vectors (``DIR/vectors``) with
the bench ``tb_qc.v``, which ``--simulate`` runs (exit 1 on any mismatch).
"""

from __future__ import annotations

import sys

from qdecode.errors import InputError

_DEFAULTS = {"bits": 8, "frac_bits": 3, "alpha": 0.625, "beta": 0.0, "max_iter": 50}


def add_parser(sub) -> None:
    from qdecode.cli.common import add_problem_args

    p = sub.add_parser(
        "export-rtl",
        help="synthesizable Verilog of the fixed-point min-sum decoder (+ bench, synthesis)",
        description=(
            "Write Verilog-2005 of a fully parallel flooding min-sum decoder (one iteration per clock) "
            "for a check matrix, bit-exact with the fixed-point reference model of export-vectors; "
            "optionally a $readmemh test bench for a vector set, its simulation, and yosys / nextpnr runs. "
            "With --code nr5g[...] (a 5G NR LDPC code): the Z-wide layered min-sum design of its base matrix, "
            "bit-exact with the ldpc-ms decoder (--frames N --ebn0 DB: random frames as vectors)."
        ),
    )
    add_problem_args(p, alist=True)
    g = p.add_argument_group("fixed-point min-sum configuration (as export-vectors)")
    g.add_argument("--bits", type=int, help="message width in bits (default 8)")
    g.add_argument("--frac-bits", type=int, help="fraction bits (default 3)")
    g.add_argument("--alpha", type=float, help="min-sum scaling in (0, 1], applied as alpha_num >> 8 (default 0.625)")
    g.add_argument("--beta", type=float, help="offset min-sum beta in LLR units (default 0)")
    g.add_argument("--max-iter", type=int, help="iteration limit (default 50)")
    a = p.add_argument_group("architecture")
    a.add_argument("--parallelism", "--fold", type=int, metavar="P", dest="parallelism",
                   help="folded design with P check and P variable processing elements, ceil(m/P) + ceil(n/P) "
                        "cycles per iteration (default: fully parallel, 1 cycle per iteration)")
    o = p.add_argument_group("output and checks")
    o.add_argument("--out", metavar="DIR", required=True, help="output directory (created if missing)")
    o.add_argument("--vectors", metavar="DIR",
                   help="export-vectors directory: write its bench tb_bp.v (and, without a problem option, "
                        "build the decoder from it)")
    o.add_argument("--simulate", action="store_true", help="run the bench on --vectors (exit 1 on a mismatch)")
    o.add_argument("--simulator", default="iverilog", choices=["iverilog", "verilator"], help="default iverilog")
    o.add_argument("--synth", metavar="TARGETS", help="comma-separated yosys targets: ice40, xc7, ecp5")
    o.add_argument("--pnr", metavar="DEVICE", help="nextpnr-ice40 device after ice40 synthesis: hx8k, up5k, hx1k")
    q = p.add_argument_group("QC-LDPC codes (--code nr5g[...]): the layered Z-wide design, random frames as vectors")
    q.add_argument("--frames", type=int, metavar="N", help="export N random frames as vectors to DIR/vectors")
    q.add_argument("--ebn0", type=float, metavar="DB", help="Eb/N0 in dB of those frames (BPSK over AWGN)")
    q.add_argument("--seed", type=int, default=1, help="seed of the frames (default %(default)s)")
    p.set_defaults(run=run)


def run(args) -> int:
    from qdecode.cli.common import load_problem
    from qdecode.decoders.bp import BpDecoder
    from qdecode.hw.rtl import design_from_decoder, design_from_vectors, export_rtl
    from qdecode.hw.vectors import load_vectors

    if args.code and args.code.strip().lower().startswith("nr5g"):
        return _run_qc(args, _targets(args))
    if args.frames is not None or args.ebn0 is not None:
        raise InputError("--frames / --ebn0 need a QC-LDPC code (--code nr5g[...])")
    if args.parallelism is not None and args.parallelism < 1:
        raise InputError(f"--parallelism must be >= 1, got {args.parallelism}")
    if args.simulate and not args.vectors:
        raise InputError("--simulate needs --vectors DIR")
    targets = _targets(args)
    vs = load_vectors(args.vectors) if args.vectors else None
    if vs is not None and vs.manifest.get("decoder") == "relay-bp":
        return _run_relay(args, targets)
    if vs is not None and not (args.code or args.dem or args.alist):
        given = [k for k in _DEFAULTS if getattr(args, k) is not None]
        if given:
            raise InputError(f"--vectors without a problem option takes the configuration from the vector set; "
                             f"drop --{given[0].replace('_', '-')}")
        H, cfg = design_from_vectors(vs)
    else:
        opts = {k: (getattr(args, k) if getattr(args, k) is not None else v) for k, v in _DEFAULTS.items()}
        if opts["bits"] < 2:
            raise InputError(f"--bits must be >= 2 (fixed point), got {opts['bits']}")
        lp = load_problem(args)
        decoder = BpDecoder(lp.problem, method="minsum", max_iter=opts["max_iter"], alpha=opts["alpha"],
                            beta=opts["beta"], schedule="flooding", bits=opts["bits"], frac_bits=opts["frac_bits"])
        H, cfg = design_from_decoder(decoder)
    mf = export_rtl(H, cfg, args.out, vectors=vs, parallelism=args.parallelism)
    arch = (f"folded P={mf['parallelism']}, {mf['cycles_per_iteration']} cycles/iteration"
            if mf["architecture"] == "folded" else "fully parallel, 1 cycle/iteration")
    print(f"qdecode export-rtl: m={mf['m']} n={mf['n']} edges={mf['edges']}, {mf['bits']}-bit messages, {arch}, "
          f"{mf['flip_flops']} flip-flops -> {args.out}", file=sys.stderr)
    return _check_and_synthesize(args, targets, int(mf["cycles_per_iteration"]), top=None)


def _targets(args) -> list[str]:
    """The ``--synth`` targets (``ice40`` added for ``--pnr``), checked."""
    from qdecode.hw.rtl.synth import ICE40_DEVICES, TARGETS

    targets = [t.strip() for t in args.synth.split(",") if t.strip()] if args.synth else []
    for t in targets:
        if t not in TARGETS:
            raise InputError(f"unknown --synth target {t!r}; known: {', '.join(TARGETS)}")
    if args.pnr:
        if args.pnr not in ICE40_DEVICES:
            raise InputError(f"unknown --pnr device {args.pnr!r}; known: {', '.join(ICE40_DEVICES)}")
        if "ice40" not in targets:
            targets.append("ice40")
    return targets


def _qc_decoder(args, code):
    """The layered ``ldpc-ms`` decoder of ``code`` with the fixed-point options given (its defaults otherwise)."""
    from qdecode.decoders.qc_ldpc import LDPC_MS_PARAMS, QcMinSumDecoder

    if args.alpha is not None and args.beta is not None:
        raise InputError("give --alpha (normalised min-sum) or --beta (offset min-sum), not both")
    kw = {k: LDPC_MS_PARAMS[k].convert(k, getattr(args, k), "ldpc-ms")
          for k in ("bits", "frac_bits", "max_iter", "alpha", "beta") if getattr(args, k) is not None}
    if "alpha" in kw:
        kw["correction"] = "normalized"
    return QcMinSumDecoder(code, schedule="layered", early_stop=False, **kw)


def _run_qc(args, targets: list[str]) -> int:
    """The Z-wide layered design of a QC-LDPC (5G NR) code; random frames as vectors; simulation, synthesis."""
    import argparse
    import json
    from pathlib import Path

    import numpy as np

    from qdecode.codes.catalog import get_code
    from qdecode.hw.rtl.qc_layered import (
        TOP,
        design_from_qc_decoder,
        export_qc_vectors,
        generate_qc_layered,
        simulate_qc,
    )
    from qdecode.sims.channels import BpskAwgn

    given = [f for f, v in (("--noise", args.noise), ("--p", args.p), ("--d", args.d), ("--rounds", args.rounds),
                            ("--circuit", args.circuit), ("--dem", args.dem), ("--alist", args.alist),
                            ("--vectors", args.vectors), ("--parallelism", args.parallelism)) if v is not None]
    if given:
        raise InputError(f"{given[0]} does not apply to a QC-LDPC code; use --frames N --ebn0 DB for vectors")
    if args.frames is not None and args.frames < 1:
        raise InputError(f"--frames must be >= 1, got {args.frames}")
    if (args.frames is None) != (args.ebn0 is None):
        raise InputError("--frames and --ebn0 go together")
    if args.simulate and args.frames is None:
        raise InputError("--simulate needs --frames N --ebn0 DB")
    code = get_code(args.code)
    if not hasattr(code, "shifts"):
        raise InputError(f"{args.code} is not a QC-LDPC code")
    decoder = _qc_decoder(args, code)
    out = Path(args.out)
    generate_qc_layered(*design_from_qc_decoder(decoder), out, frames=args.frames)
    mf = json.loads((out / "rtl_manifest.json").read_text(encoding="utf-8"))
    corr = f"NMS {mf['num']}/2^{mf['shift']}" if mf["normalized"] else f"OMS beta {mf['beta']}"
    print(f"qdecode export-rtl: {code.name} layered Z={mf['Z']} ({mf['rows']}x{mf['cols']} base, {mf['nnz']} blocks), "
          f"{mf['bits']}-bit {corr}, {mf['max_iter']} iterations: {mf['cycles_per_iteration']} cycles/iteration, "
          f"{mf['latency_cycles']} start to done -> {args.out}", file=sys.stderr)
    status = 0
    if args.frames is not None:
        rng = np.random.default_rng(args.seed)
        words = code.encode(rng.integers(0, 2, (args.frames, code.K), dtype=np.uint8))
        llr = BpskAwgn(args.ebn0, code.rate).transmit(words, rng)
        vm = export_qc_vectors(decoder, llr, out / "vectors", description={"ebn0": args.ebn0, "seed": args.seed})
        print(f"vectors: {args.frames} frames at Eb/N0 {args.ebn0} dB, {vm['converged_frames']} converged -> "
              f"{out / 'vectors'}", file=sys.stderr)
    if args.simulate:
        report = simulate_qc(out, out / "vectors", simulator=args.simulator)
        print(report.summary())
        status = 0 if report.ok else 1
    rest = argparse.Namespace(**{**vars(args), "simulate": False})
    return max(status, _check_and_synthesize(rest, targets, int(mf["cycles_per_iteration"]), top=TOP))


def _run_relay(args, targets: list[str]) -> int:
    """Relay-BP design from a relay vector set alone (its H, priors, gamma table and parameters)."""
    import json
    from pathlib import Path

    from qdecode.hw.relay_vectors import load_relay_vectors
    from qdecode.hw.rtl.relay_top import TOP, generate_relay, relay_config_from_vectors

    if args.code or args.dem or args.alist:
        raise InputError("a relay-bp vector set defines the decoder: drop the problem options")
    given = [k for k in _DEFAULTS if getattr(args, k) is not None]
    if given:
        raise InputError(f"a relay-bp vector set defines the configuration; drop --{given[0].replace('_', '-')}")
    if args.parallelism is not None:
        raise InputError("--parallelism is not implemented for the Relay-BP design (fully parallel only)")
    vs, relay = load_relay_vectors(args.vectors)
    cfg = relay_config_from_vectors(vs, relay)
    files = generate_relay(vs.H, cfg, vectors=vs, relay=relay)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        with open(out / name, "w", encoding="ascii", newline="\n") as f:
            f.write(text)
    mf = json.loads(files["rtl_manifest.json"])
    print(f"qdecode export-rtl: relay-bp m={mf['m']} n={mf['n']} edges={mf['edges']}, {mf['bits']}-bit messages, "
          f"{mf['gamma_rows']} gamma rows, {mf['flip_flops']} flip-flops -> {args.out}", file=sys.stderr)
    return _check_and_synthesize(args, targets, 1, top=TOP)  # relay: one cycle per iteration


def _check_and_synthesize(args, targets: list[str], cycles_per_iteration: int, *, top: str | None) -> int:
    """``--simulate`` (exit 1 on a mismatch), then the ``--synth`` targets and ``--pnr`` of the design in
    ``args.out`` (``top``: its top module, ``None`` for the min-sum designs' default)."""
    from qdecode.hw.rtl import run_pnr, run_synth, simulate

    kw = {} if top is None else {"top": top}
    status = 0
    if args.simulate:
        report = simulate(args.out, args.vectors, simulator=args.simulator)
        print(report.summary())
        status = 0 if report.ok else 1
    for t in targets:
        r = run_synth(args.out, t, **kw)
        res = ", ".join(f"{k} {v}" for k, v in r.resources.items())
        print(f"synth {t}: {res} ({r.seconds:.1f} s, {r.tool})")
    if args.pnr:
        pr = run_pnr(args.out, args.pnr, **kw)
        print(f"pnr {args.pnr}: Fmax {pr.fmax_mhz:.1f} MHz ({pr.ns_per_cycle * cycles_per_iteration:.1f} ns per "
              f"iteration), {pr.lc_used}/{pr.lc_available} LCs ({pr.seconds:.1f} s, {pr.tool})")
    return status
