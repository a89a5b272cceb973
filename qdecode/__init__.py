"""qdecode: error-correction decoders for quantum and classical codes.

The core (problem, decoders, kernels) imports without stim, torch or matplotlib.
"""

from __future__ import annotations

__version__ = "0.1.0"

from qdecode.problem import DecodingProblem  # noqa: E402


def sinter_decoders():
    """All qdecode decoders as ``{name: sinter.Decoder}`` for
    ``sinter collect --custom_decoders_module_function qdecode:sinter_decoders``."""
    from qdecode.sinter_adapter import sinter_decoders as _impl

    return _impl()


__all__ = ["DecodingProblem", "sinter_decoders", "__version__"]
