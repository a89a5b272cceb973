"""``qdecode`` entry point: one sub-command per module, one-line errors, nonzero exit codes."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence

from qdecode import __version__
from qdecode.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, internal_error_report, is_user_error, one_line

_COMMANDS = ("sweep", "plot", "threshold", "combine", "deadline", "circuit", "predict", "codes", "bench",
             "export-vectors", "export-rtl", "tune", "train", "learn-noise", "stream", "warmup")


class _UsageError(Exception):
    """An argument the parser rejected; ``main`` prints it as one line (exit status 2)."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog, self.message = prog, message


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line, as every other bad input.

    argparse prints the whole usage block (a dozen lines for ``sweep``) before its error; the
    README promises ``qdecode <command>: error: <message>`` and nothing else. ``error`` raises
    instead of printing and exiting, so :func:`main` reports it like any other bad input and
    returns 2 (callers of ``main`` get a status, not a ``SystemExit``). Sub-command parsers
    are built by ``add_subparsers``, which uses the parent's class, so all of them inherit this.
    """

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(self.prog, message)


def build_parser() -> argparse.ArgumentParser:
    from qdecode.cli import (
        bench,
        circuit,
        codes,
        combine,
        deadline,
        export_rtl,
        export_vectors,
        learn_noise,
        plot,
        predict,
        stream,
        sweep,
        train,
        tune,
        warmup,
    )

    parser = ArgumentParser(prog="qdecode", description="Error-correction decoders and sweeps.")
    parser.add_argument("--version", action="version", version=f"qdecode {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sweep.add_parser(sub)
    plot.add_plot_parser(sub)
    plot.add_threshold_parser(sub)
    combine.add_parser(sub)
    deadline.add_parser(sub)
    circuit.add_parser(sub)
    predict.add_parser(sub)
    codes.add_parser(sub)
    bench.add_parser(sub)
    export_vectors.add_parser(sub)
    export_rtl.add_parser(sub)
    tune.add_parser(sub)
    train.add_parser(sub)
    learn_noise.add_parser(sub)
    stream.add_parser(sub)
    warmup.add_parser(sub)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; leftover arguments are the sub-command's error (argparse would blame ``qdecode``)."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        command = getattr(args, "command", None)
        prog = f"{parser.prog} {command}" if command else parser.prog
        raise _UsageError(prog, f"unrecognized arguments: {' '.join(extra)}")
    return args


def _run(args: argparse.Namespace) -> int | None:
    """``args.run(args)``; under a command's ``--quiet`` the library's warnings are silenced too (an
    OSD order clamped at build time...; errors still show), for this run only (restored after)."""
    log = logging.getLogger("qdecode")
    before = log.level
    if getattr(args, "quiet", False):
        log.setLevel(logging.ERROR)
    try:
        return args.run(args)
    finally:
        log.setLevel(before)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = _parse(parser, argv)
    except _UsageError as exc:
        hint = f" (see {exc.prog} --help)"
        print(f"{exc.prog}: error: {' '.join(exc.message.split())}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="qdecode: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return int(_run(args) or 0)
    except BrokenPipeError:  # `qdecode threshold ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("qdecode: interrupted (finished batches are saved; run again to resume)", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every failure is reported as one of qdecode.errors' kinds
        if args.verbose:
            raise
        if is_user_error(exc):
            print(f"qdecode {args.command}: error: {one_line(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(internal_error_report(exc), file=sys.stderr)  # a bug: never reported as bad input
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
