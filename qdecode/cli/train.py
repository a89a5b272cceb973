"""``qdecode train ...``: training commands, one sub-command per trainable model.

``qdecode train predecoder --config CONFIG.json --out DIR`` trains the convolutional
pre-decoder of ``nn-pymatching`` (:mod:`qdecode.neural.predecoder_train`): tqdm bar on stderr,
checkpoints in ``DIR`` (a second call resumes), seeded data stream, model card, ``.pt`` and
``.onnx`` export. ``qdecode train crisp --config CONFIG.json --out DIR`` trains a CRISP polar / PAC decoder
(:mod:`qdecode.neural.crisp_train`) the same way, and ``qdecode train lm --config CONFIG.json --out DIR``
the byte-level Transformer prior of sem-OSD (:mod:`qdecode.neural.lm_train`).

Progress goes to stderr unless ``--no-progress`` or ``--quiet`` is given: a tqdm bar when stderr
is a terminal; in a pipe or a log file a plain line (step, elapsed, ETA) at most every 30 s.
stdout holds only the JSON summary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from qdecode.cli.help_text import HelpFormatter
from qdecode.errors import InputError, MissingPackageError


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a neural model (pre-decoder, ...)",
                       description="Train a neural model; each model is a sub-command.", formatter_class=HelpFormatter)
    tsub = p.add_subparsers(dest="model", metavar="MODEL")
    p.set_defaults(run=lambda args: _no_model(p))
    _add_predecoder(tsub)
    _add_crisp(tsub)
    _add_lm(tsub)


def _no_model(parser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _common_options(p, *, config: str, stem: str, batch: str) -> None:
    """The options every trainer shares: config, output, name, steps, batch, seed, threads, stop / resume.

    Options left out take the value of ``--config``, or the trainer's built-in config without one.
    """
    cfg = "default: from --config, else the built-in config"
    p.add_argument("--config", help=f"JSON training config (shipped: {config}; default: the built-in config)")
    p.add_argument("--out", required=True, help="output folder: checkpoint, log, exported model and card")
    p.add_argument("--name", help=f"model name (files {stem}_NAME.*; {cfg})")
    p.add_argument("--steps", type=int, help=f"training steps ({cfg})")
    p.add_argument("--batch", type=int, help=f"{batch} ({cfg})")
    p.add_argument("--seed", type=int, help=f"seed of the initialisation and the data stream ({cfg})")
    p.add_argument("--threads", type=int, help=f"torch CPU threads ({cfg})")
    p.add_argument("--max-wall-s", type=float,
                   help="stop after this many seconds (checkpoint, no export); resume later (default: no limit)")
    p.add_argument("--no-resume", action="store_true",
                   help="ignore an existing checkpoint in --out (it is overwritten)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress on stderr (a bar on a terminal, else a line every 30 s)")
    p.add_argument("--quiet", action="store_true", help="same as --no-progress")


def _progress(args) -> bool:
    """Report progress (the trainer picks a bar or plain lines): no --no-progress, no --quiet."""
    return not (args.no_progress or args.quiet)


def _import_trainer(module: str):
    """``qdecode.neural.<module>``, or an ImportError saying how to install torch."""
    import importlib

    try:
        return importlib.import_module(f"qdecode.neural.{module}")
    except ImportError as exc:
        raise MissingPackageError(f"training needs torch: pip install 'qdecode[neural]' ({exc})") from None


def _override(cfg, args, keys) -> None:
    """Command-line values (those given) replace the config's."""
    for key in keys:
        value = getattr(args, key)
        if value is not None:
            setattr(cfg, key, value)


def _report(card: dict, model: Path, fields: dict) -> int:
    """Print the finished run's summary as JSON, or say where an early stop left the checkpoint."""
    if not card.get("finished", True):
        print(f"stopped at step {card['step']} after {card['wall_s']:.0f} s; run again to resume", file=sys.stderr)
        return 0
    print(json.dumps({"model": str(model), "steps": card["steps"], "samples": card["samples"],
                      "wall_s": round(card["wall_s"], 1), **fields, "val": card["val"]}, indent=2))
    return 0


def _add_predecoder(tsub) -> None:
    p = tsub.add_parser(
        "predecoder",
        formatter_class=HelpFormatter,
        help="train the nn-pymatching convolutional pre-decoder",
        description=(
            "Train the fully convolutional pre-decoder on DEM-mechanism labels of an SD6 surface-code circuit. "
            "Options given here override the --config file. Re-running with the same --out resumes from its checkpoint."
        ),
    )
    _common_options(p, config="qdecode/neural/configs/predecoder_d5.json", stem="predecoder", batch="shots per step")
    p.add_argument("--d", type=int, dest="distance",
                   help="code distance (default: from --config, else the built-in config)")
    p.add_argument("--init-from",
                   help="start from this predecoder .pt "
                        "(fine-tuning; default: from --config, else a random initialisation)")
    p.add_argument("--export-checkpoint", action="store_true",
                   help="do not train: calibrate and export the checkpoint in --out as it is now "
                        "(predecoder_NAME_stepN.*)")
    p.set_defaults(run=run_predecoder)


def run_predecoder(args) -> int:
    trainer = _import_trainer("predecoder_train")
    cfg = trainer.TrainConfig.from_json(args.config) if args.config else trainer.TrainConfig()
    _override(cfg, args, ("name", "distance", "steps", "batch", "seed", "threads", "init_from"))
    if cfg.distance < 3 or cfg.steps < 1 or cfg.batch < 1:
        raise InputError("--d must be >= 3, --steps and --batch >= 1")
    if cfg.init_from and not Path(cfg.init_from).exists():
        raise InputError(f"--init-from file not found: {cfg.init_from}")
    if args.export_checkpoint:
        if not (Path(args.out) / "checkpoint.pt").exists():
            raise InputError(f"no checkpoint.pt in {args.out}")
        card = trainer.export_checkpoint(cfg, args.out)
        print(json.dumps({"step": card["steps"], "temperature": card["temperature"], "val": card["val"]}, indent=2))
        return 0
    card = trainer.train(cfg, args.out, resume=not args.no_resume, progress=_progress(args),
                         max_wall_s=args.max_wall_s)
    return _report(card, Path(args.out) / f"predecoder_{cfg.name}.onnx", {"temperature": card.get("temperature")})


def _add_crisp(tsub) -> None:
    p = tsub.add_parser(
        "crisp",
        formatter_class=HelpFormatter,
        help="train a CRISP sequential neural decoder for a polar / PAC code",
        description=(
            "Train a CRISP GRU (or dilated-conv) decoder on on-the-fly BPSK-AWGN data of a polar / PAC code, with "
            "the l2r (reliability), n2c (noisy-to-clean) or abrupt curriculum. Options given here override the "
            "--config file. Re-running with the same --out resumes from its checkpoint."
        ),
    )
    _common_options(p, config="qdecode/neural/configs/crisp_polar32_16.json, ...", stem="crisp",
                    batch="blocks per step")
    p.add_argument("--code",
                   help="catalogue code: polar32_16, polar64_22, pac32_16, ... "
                        "(default: from --config, else the built-in config)")
    p.add_argument("--curriculum", choices=("l2r", "n2c", "abrupt"),
                   help="training curriculum (default: from --config, else the built-in config)")
    p.add_argument("--kind", choices=("gru", "conv"),
                   help="network: GRU or dilated causal Conv1d (default: from --config, else the built-in config)")
    p.add_argument("--width", type=int,
                   help="hidden units (GRU) / channels (conv) (default: from --config, else the built-in config)")
    p.add_argument("--depth", type=int,
                   help="GRU layers / conv layers (default: from --config, else the built-in config)")
    p.set_defaults(run=run_crisp)


def run_crisp(args) -> int:
    trainer = _import_trainer("crisp_train")
    cfg = trainer.CrispConfig.from_json(args.config) if args.config else trainer.CrispConfig()
    _override(cfg, args, ("name", "code", "curriculum", "kind", "width", "depth", "steps", "batch", "seed", "threads"))
    card = trainer.train(cfg, args.out, resume=not args.no_resume, progress=_progress(args),
                         max_wall_s=args.max_wall_s)
    fields = {"final_loss": round(card["final_loss"], 5)} if card.get("finished", True) else {}
    return _report(card, Path(args.out) / f"crisp_{cfg.name}.onnx", fields)


def _add_lm(tsub) -> None:
    p = tsub.add_parser(
        "lm",
        formatter_class=HelpFormatter,
        help="train the byte-level Transformer prior of sem-OSD",
        description=(
            "Train the byte-level denoising Transformer prior of sem-OSD on the LM part of the offline corpus "
            "(BPSK-AWGN LLRs of 8-byte blocks, on the fly), fit its temperature on held-out text and export "
            "lm_NAME.{pt,onnx} with a model card. Options given here override the --config file. Re-running with "
            "the same --out resumes from its checkpoint."
        ),
    )
    _common_options(p, config="qdecode/neural/configs/lm_byte.json", stem="lm", batch="blocks per step")
    p.add_argument("--export-checkpoint", action="store_true",
                   help="do not train: calibrate and export the checkpoint in --out as it is now")
    p.set_defaults(run=run_lm)


def run_lm(args) -> int:
    trainer = _import_trainer("lm_train")
    cfg = trainer.LmConfig.from_json(args.config) if args.config else trainer.LmConfig()
    _override(cfg, args, ("name", "steps", "batch", "seed", "threads"))
    cfg.validate()
    if args.export_checkpoint:
        if not (Path(args.out) / "checkpoint.pt").exists():
            raise InputError(f"no checkpoint.pt in {args.out}")
        card = trainer.export_checkpoint(cfg, args.out)
    else:
        card = trainer.train(cfg, args.out, resume=not args.no_resume, progress=_progress(args),
                             max_wall_s=args.max_wall_s)
    fields = {"temperature": round(card["temperature"], 4)} if card.get("finished", True) else {}
    return _report(card, Path(args.out) / f"lm_{cfg.name}.onnx", fields)
