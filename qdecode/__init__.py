"""qdecode: error-correction decoders for quantum and classical codes.

The core (problem, decoders, kernels) imports without stim, torch or matplotlib.
"""

from __future__ import annotations

__version__ = "0.1.0"

from qdecode.problem import DecodingProblem  # noqa: E402


def sinter_decoders(*labels: str, env: bool = True):
    """qdecode decoders as ``{name: sinter.Decoder}``: ``qd-<name>`` for every syndrome decoder,
    plus ``qd-<label>`` for each labelled decoder in ``labels`` (``"relay-bp[gamma0=0.1]"``) and,
    when ``env``, in the ``QDECODE_SINTER_DECODERS`` environment variable (``;``-separated), which
    is how ``sinter collect --custom_decoders_module_function qdecode:sinter_decoders`` gets them.
    See :mod:`qdecode.sinter_adapter`."""
    from qdecode.sinter_adapter import sinter_decoders as _impl

    return _impl(*labels, env=env)


__all__ = ["DecodingProblem", "sinter_decoders", "__version__"]
