"""Every qdecode decoder as a ``sinter.Decoder``, at its default parameters or at given ones.

The compiled decoder's ``decode_shots_bit_packed`` goes straight to
``Decoder.predict_observables_packed``: bit-packed in, bit-packed out, no per-shot Python.
Errors from compilation propagate (sinter falls back to files only on
``NotImplementedError``, which we never raise).

Decoder names
-------------
A *label* names a decoder as recipes do: ``name`` or ``name[key=value,...]``
(``relay-bp[gamma0=0.1]``, ``bposd[osd_order=20,max_iter=50]``). Its sinter name is ``qd-``
followed by the label. :func:`sinter_decoders` returns

* ``qd-<name>`` for every registered quantum decoder, at the parameters that name has always
  meant (always; see below);
* for each label asked for (written with or without ``qd-``), the same :class:`SinterDecoder`
  under the name as written with the prefix (``qd-relay-bp[gamma0=0.1]``; surrounding whitespace
  dropped, and also with every space removed), and under its canonical label
  (:meth:`DecoderSpec.label <qdecode.decoders.registry.DecoderSpec.label>`) both bare and with
  ``qd-`` (bare only when it has brackets: ``pymatching`` stays sinter's own decoder).

Sinter records whichever name is passed to ``decoders=`` / ``--decoders`` in its CSV, so a
sinter name is a recorded label and is read as one (:meth:`DecoderSpec.from_label
<qdecode.decoders.registry.DecoderSpec.from_label>`): a parameter it leaves out takes the value
such a label has always meant, not today's default. ``qd-bposd`` is BP+OSD ordered by the last
posterior (``osd_key=last``), as it was before ``bposd``'s default became ``sum4``, and
``qd-relay-bp`` runs float64 lanes (``bits=0``); spell a parameter out
(``qd-bposd[osd_key=sum4]``), or use the canonical label, to get today's default.

Pooling with ``qdecode sweep``: one decoder has one name, hence one strong_id, on both sides,
in either of two ways (tested in ``tests/test_sinter_pooling.py``):

* the sinter name on both sides: ``qdecode sweep --decoder 'qd-bposd[osd_order=20]'`` records
  the sinter name verbatim, as ``sinter collect --decoders 'qd-bposd[osd_order=20]'`` does;
* the canonical label on both sides: ``qdecode sweep --decoder 'bposd[osd_order=20]'`` records
  ``DecoderSpec.parse('bposd[osd_order=20]').label()``, and sinter records the same string when
  it is given that label as the decoder name.

From Python::

    import sinter
    from qdecode.sinter_adapter import sinter_decoders

    sinter.collect(num_workers=4, tasks=tasks, max_shots=10**6,
                   decoders=["qd-relay-bp[gamma0=0.1]", "qd-bposd[osd_order=20]"],
                   custom_decoders=sinter_decoders("relay-bp[gamma0=0.1]", "bposd[osd_order=20]"))

From sinter's command line, which calls ``qdecode:sinter_decoders`` without arguments, name the
labelled decoders in the environment variable ``QDECODE_SINTER_DECODERS``, separated by ``;``
(parameters are comma-separated inside the brackets, so a comma cannot separate labels)::

    QDECODE_SINTER_DECODERS='relay-bp[gamma0=0.1];bposd[osd_order=20]' \\
    sinter collect --circuits c.stim --decoders 'qd-relay-bp[gamma0=0.1]' \\
        --custom_decoders_module_function qdecode:sinter_decoders --max_shots 100000 \\
        --processes 4 --save_resume_filepath stats.csv

Empty entries and whitespace around labels are ignored. A label that does not parse, names an
unknown or classical decoder, or gives an unknown parameter or a bad value raises a
``ValueError`` naming the variable and the label. The variable is read on every call (also
by explicit-label calls; ``env=False`` ignores it).
"""

from __future__ import annotations

import os
import re
from typing import Iterable

import numpy as np
import sinter

from qdecode.decoders.registry import SINTER_PREFIX, DecoderSpec, decoder_names, get_entry
from qdecode.problem import DecodingProblem

__all__ = ["ENV_VAR", "SEPARATOR", "PREFIX", "SinterDecoder", "SinterCompiledDecoder", "sinter_decoders",
           "sinter_decoder", "sinter_name", "parse_label", "bare_label"]

#: Environment variable naming labelled decoders for sinter's command line.
ENV_VAR = "QDECODE_SINTER_DECODERS"
#: Separator of labels in :data:`ENV_VAR` (never inside a label: parameters use ``,``).
SEPARATOR = ";"
#: Prefix of every sinter name this module defines (the registry's; a sinter name is a recorded label).
PREFIX = SINTER_PREFIX

class SinterCompiledDecoder(sinter.CompiledDecoder):
    def __init__(self, decoder):
        self.decoder = decoder

    def decode_shots_bit_packed(self, *, bit_packed_detection_event_data: np.ndarray) -> np.ndarray:
        return self.decoder.predict_observables_packed(bit_packed_detection_event_data)


class SinterDecoder(sinter.Decoder):
    """Picklable sinter decoder wrapping a :class:`DecoderSpec`."""

    def __init__(self, spec: DecoderSpec):
        self.spec = spec

    def compile_decoder_for_dem(self, *, dem) -> SinterCompiledDecoder:
        return SinterCompiledDecoder(self.spec.build(DecodingProblem.from_dem(dem)))

    def __repr__(self) -> str:
        return f"SinterDecoder({self.spec.label()!r})"


def parse_label(label: str) -> DecoderSpec:
    """``"name"`` or ``"name[key=value,...]"`` (or either with ``qd-`` before it) -> a validated
    quantum :class:`DecoderSpec`, read as a recorded label.

    Raises:
        ValueError: malformed label, unknown or classical decoder, unknown parameter, bad value.

    Examples:
        >>> parse_label("bposd[osd_order=4]").name
        'bposd'
    """
    spec = DecoderSpec.from_label(bare_label(label))
    if spec.name == "auto":
        raise ValueError("decoder 'auto' resolves per model, and sinter would record 'qd-auto' for whatever it "
                         "chose; name the decoder (qdecode sweep --decoder auto records the concrete one)")
    if spec.kind != "quantum":
        raise ValueError(f"decoder {spec.name!r} is a {spec.kind} decoder; sinter decodes detector error models")
    return spec


def bare_label(label: str) -> str:
    """``label`` without surrounding whitespace and without the ``qd-`` prefix, if it has one."""
    label = label.strip()
    return label[len(PREFIX):] if label.startswith(PREFIX) else label


def sinter_name(label: str) -> str:
    """The sinter name of a label as written: ``"qd-" + label`` (surrounding whitespace dropped;
    a label that already starts with ``qd-`` is its own sinter name)."""
    return PREFIX + bare_label(label)


def sinter_decoder(label: str) -> SinterDecoder:
    """The :class:`SinterDecoder` of one label (see :func:`parse_label`)."""
    return SinterDecoder(parse_label(label))


def _split(labels: Iterable[str | Iterable[str]]) -> list[str]:
    out: list[str] = []
    for item in labels:
        if isinstance(item, str):
            out += [x.strip() for x in item.split(SEPARATOR) if x.strip()]
        else:
            out += _split(item)
    return out


def sinter_decoders(*labels: str | Iterable[str], env: bool = True) -> dict[str, sinter.Decoder]:
    """Sinter decoders: ``qd-<name>`` for every quantum decoder, plus the labelled ones asked for.

    Args:
        labels: decoder labels (``"relay-bp[gamma0=0.1]"``, with or without ``qd-``), iterables of
            them, or ``;``-separated strings of them.
        env: also add the labels in :data:`ENV_VAR` (what sinter's command line uses).

    Returns:
        ``{sinter name: SinterDecoder}``; a labelled decoder appears under its name as written
        (with ``qd-``) and under its canonical label, bare and with ``qd-`` (module docstring).

    Raises:
        ValueError: a bad label; for one from :data:`ENV_VAR` the message names the variable.
    """
    out: dict[str, sinter.Decoder] = {
        f"{PREFIX}{name}": SinterDecoder(DecoderSpec.from_label(name))
        for name in decoder_names() if get_entry(name).kind == "quantum" and name != "auto"
    }
    asked = [(label, None) for label in _split(labels)]
    if env:
        asked += [(label, ENV_VAR) for label in _split([os.environ.get(ENV_VAR, "")])]
    for label, source in asked:
        try:
            dec = sinter_decoder(label)
        except ValueError as exc:
            if source is None:
                raise
            raise ValueError(f"{source}: bad decoder label {label!r}: {exc}") from None
        canonical = dec.spec.label()
        names = [sinter_name(label), PREFIX + re.sub(r"\s+", "", bare_label(label)), PREFIX + canonical]
        if "[" in canonical:  # a bare name (``pymatching``) stays sinter's own decoder of that name
            names.append(canonical)
        for name in names:
            out[name] = dec
    return out
