"""What went wrong, in four kinds, and how the command line reports each.

1. :class:`InputError`: the user's input is wrong (a shape, a non-binary syndrome, ``p`` outside
   (0, 1), a malformed .dem / .stim / .alist / CSV, an unknown option). ``qdecode`` prints one line,
   ``qdecode <command>: error: <message>``, and exits with status 2 (:data:`EXIT_BAD_INPUT`). A file that
   cannot be read (``OSError``) and an optional package that is not installed
   (:class:`MissingPackageError`) are reported the same way.
2. :class:`ModelRefusedError` (an :class:`InputError`): a decoder cannot decode this model (hyperedges
   for a matching decoder, a network trained for another code); the message starts with the decoder's
   name. Status 2.
3. :class:`CapabilityError` (an :class:`InputError`): the decoder lacks what was asked of it (error
   vectors from an observable-only decoder, a confidence). Decoders declare their capabilities as
   attributes (``Decoder.gives_errors``, ``Decoder.has_confidence``), so callers ask first instead of
   catching this. Status 2.
4. Anything else is an *internal error*, a bug in qdecode or a package under it: ``qdecode`` prints
   ``qdecode: internal error (please report): TYPE: message`` with the last frames of the traceback and
   exits with status 1 (:data:`EXIT_INTERNAL`). It never calls a bug bad input.

All three are ``ValueError`` subclasses, so code that caught ``ValueError`` keeps working. The decoders'
own :class:`~qdecode.decoders.base.DecoderInputError` is an :class:`InputError`; ``ModelRefusedError``
and ``CapabilityError`` are raised by decoders as its subclasses
(:class:`~qdecode.decoders.base.DecoderRefusedError`, :class:`~qdecode.decoders.base.DecoderCapabilityError`).
"""

from __future__ import annotations

import traceback

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1
#: Frames of the traceback an internal error prints (the innermost ones).
INTERNAL_FRAMES = 6


class InputError(ValueError):
    """The user's input is wrong; the message says what and how to fix it, on one line."""


class ModelRefusedError(InputError):
    """A decoder cannot decode this model; the message starts with the decoder's name."""


class CapabilityError(InputError):
    """A decoder lacks the capability asked of it (callers should read its declared capabilities first)."""


class MissingPackageError(ImportError):
    """An optional package the asked feature needs is not installed; the message names the ``pip install``.
    Reported like an :class:`InputError` (status 2): the user's environment, not a bug."""


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the user's doing (status 2): an :class:`InputError`, a file that cannot be read
    (``OSError``) or a missing optional package (:class:`MissingPackageError`). Everything else is internal
    (status 1)."""
    return isinstance(exc, (InputError, OSError, MissingPackageError))


def one_line(exc: BaseException) -> str:
    """The exception's message on one line (whitespace runs, newlines included, become one space)."""
    return " ".join(str(exc).split())


def internal_error_report(exc: BaseException, frames: int = INTERNAL_FRAMES) -> str:
    """The report of an internal error: ``qdecode: internal error (please report): TYPE: message`` and
    the last ``frames`` frames of its traceback."""
    tb = traceback.format_list(traceback.extract_tb(exc.__traceback__)[-frames:])
    head = f"qdecode: internal error (please report): {type(exc).__name__}: {one_line(exc)}"
    return head + "\n" + "".join(tb).rstrip()
