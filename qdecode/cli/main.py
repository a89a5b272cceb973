"""``qdecode`` entry point: one sub-command per module, one-line errors, nonzero exit codes."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence

from qdecode import __version__

EXIT_BAD_INPUT = 2

_COMMANDS = ("sweep", "plot", "threshold", "combine", "circuit", "predict", "codes", "bench", "export-vectors",
             "export-rtl", "tune", "train", "learn-noise")


class CliError(ValueError):
    """A command-line problem reported as one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    from qdecode.cli import (
        bench,
        circuit,
        codes,
        combine,
        export_rtl,
        export_vectors,
        learn_noise,
        plot,
        predict,
        sweep,
        train,
        tune,
    )

    parser = argparse.ArgumentParser(prog="qdecode", description="Error-correction decoders and sweeps.")
    parser.add_argument("--version", action="version", version=f"qdecode {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sweep.add_parser(sub)
    plot.add_plot_parser(sub)
    plot.add_threshold_parser(sub)
    combine.add_parser(sub)
    circuit.add_parser(sub)
    predict.add_parser(sub)
    codes.add_parser(sub)
    bench.add_parser(sub)
    export_vectors.add_parser(sub)
    export_rtl.add_parser(sub)
    tune.add_parser(sub)
    train.add_parser(sub)
    learn_noise.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="qdecode: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return int(args.run(args) or 0)
    except BrokenPipeError:  # `qdecode threshold ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("qdecode: interrupted (finished batches are saved; run again to resume)", file=sys.stderr)
        return 130
    except (ValueError, KeyError, OSError, ImportError) as exc:
        if args.verbose:
            raise
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        message = " ".join(message.split())  # one line, whatever the source message looked like
        print(f"qdecode {args.command}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
