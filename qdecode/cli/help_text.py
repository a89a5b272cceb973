"""Shared ``--help`` text: every default stated, registered decoder names listed.

Two pieces for any sub-command's parser:

* :class:`HelpFormatter` (pass ``formatter_class=HelpFormatter`` to ``add_parser``): appends
  ``(default: VALUE)`` to every option whose help does not already mention its default, and
  expands the markers :data:`DECODER_NAMES`, :data:`QUANTUM_DECODER_NAMES` and
  :data:`CONFIDENCE_DECODER_NAMES` in a help string to the registered decoder names of that kind.
  The expansion happens only when the help is printed, so building the parser (every
  ``qdecode`` call) does not import the decoder registry.
* :func:`decoder_choices_help`: the same list as an ordinary string, for callers that build
  their help text eagerly (e.g. ``qdecode sweep``'s ``--decoder``).

Example::

    p = sub.add_parser("bench", formatter_class=HelpFormatter)
    p.add_argument("--decoder", help=f"decoder name, one of: {DECODER_NAMES}")
    p.add_argument("--shots", type=int, default=1000, help="shots to decode")  # -> "(default: 1000)"
"""

from __future__ import annotations

import argparse

__all__ = ["CONFIDENCE_DECODER_NAMES", "DECODER_NAMES", "NUM_SHOTS_HELP", "QUANTUM_DECODER_NAMES", "HelpFormatter",
           "decoder_choices_help"]

#: Marker replaced by every registered decoder name when the help is printed.
DECODER_NAMES = "<<registered decoders>>"
#: Marker replaced by the registered quantum decoders (those built from a DEM).
QUANTUM_DECODER_NAMES = "<<registered quantum decoders>>"
#: Marker replaced by the registered decoders with a confidence (entries with ``has_confidence``).
CONFIDENCE_DECODER_NAMES = "<<registered decoders with a confidence>>"
#: ``--num-shots`` of the commands that read a ``--dets`` file (predict, learn-noise): why it exists.
NUM_SHOTS_HELP = ("the number of shots the --dets file should hold; a different count is an error. The b8 "
                  "and ptb64 formats cannot carry their own width, so a file written for a circuit with "
                  "another number of detectors is read as wrong shots whenever its size happens to divide; "
                  "this catches it (default: no check)")


def decoder_choices_help(kind: str | None = None) -> str:
    """Comma-separated registered decoder names (``kind``: ``"quantum"``, ``"classical"``,
    ``"confidence"`` (the entries with ``has_confidence``: a gap from ``predict_with_confidence``) or all).

    Examples:
        >>> "pymatching" in decoder_choices_help("quantum")
        True
        >>> "bposd" in decoder_choices_help("confidence").split(", ")
        True
    """
    from qdecode.decoders.registry import decoder_names, get_entry

    def wanted(name: str) -> bool:
        entry = get_entry(name)
        return kind is None or (entry.has_confidence if kind == "confidence" else entry.kind == kind)

    return ", ".join(n for n in decoder_names() if wanted(n))


def _no_default_to_state(action: argparse.Action) -> bool:
    if action.required or not action.option_strings or action.default is argparse.SUPPRESS:
        return True
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction,
                           argparse._VersionAction, argparse._SubParsersAction)):
        return True
    return action.default is None or action.default == []


class HelpFormatter(argparse.HelpFormatter):
    """States each option's default and expands the decoder-name markers (module docstring)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if QUANTUM_DECODER_NAMES in text:
            text = text.replace(QUANTUM_DECODER_NAMES, decoder_choices_help("quantum"))
        if CONFIDENCE_DECODER_NAMES in text:
            text = text.replace(CONFIDENCE_DECODER_NAMES, decoder_choices_help("confidence"))
        if DECODER_NAMES in text:
            text = text.replace(DECODER_NAMES, decoder_choices_help())
        if "default" not in text.lower() and not _no_default_to_state(action):
            text += " (default: %(default)s)"
        return text
