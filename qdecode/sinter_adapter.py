"""Every qdecode decoder as a ``sinter.Decoder``, at its default parameters or at given ones.

The compiled decoder's ``decode_shots_bit_packed`` goes straight to
``Decoder.predict_observables_packed``: bit-packed in, bit-packed out, no per-shot Python.
Errors from compilation propagate (sinter falls back to files only on
``NotImplementedError``, which we never raise).

Decoder names
-------------
A *label* names a decoder as recipes do: ``name`` or ``name[key=value,...]``
(``relay-bp[gamma0=0.1]``, ``bposd[osd_order=20,max_iter=50]``). Sinter records the name it is
given (``decoders=`` / ``--decoders``) verbatim in its CSV's ``decoder`` column, so every sinter
name this plug-in answers to is a *recorded label* and means what a CSV row with that label means
(:func:`name_spec`, which is :meth:`DecoderSpec.from_label
<qdecode.decoders.registry.DecoderSpec.from_label>`): a parameter the name leaves out takes the
value such a label has always meant, not today's default. Two spellings are ours:

* ``qd-`` + a label (``qd-bposd``, ``qd-relay-bp[bits=8]``), any label of a quantum decoder;
* a bare label of a quantum decoder, unless sinter has a built-in decoder of that name
  (``pymatching`` and ``pymatching-correlated`` stay sinter's own): this is how sinter takes the
  canonical labels ``qdecode sweep`` records (``bposd[alpha=1.0,...,osd_key=sum4,...]``).

The dict :func:`sinter_decoders` returns (a :class:`SinterDecoders`) lists ``qd-<name>`` for
every registered quantum decoder and the names of the labels asked for, and *resolves every other
such name when sinter looks it up*, so any ``qd-...[...]`` name and any label ``sweep`` recorded
works in ``sinter.collect`` with no argument. Sinter's command line copies the dict into a plain
one before looking names up, so there :func:`sinter_decoders` also reads this process's ``sinter
collect --decoders`` arguments (:func:`collect_command_line_names`) and adds ours among them: no
environment variable is needed; a name of ours that does not parse fails with one line naming it.

The bare names keep their old meanings. Old CSVs recorded ``qd-bposd`` when ``bposd`` meant
``osd_key=last``; if ``qd-bposd`` now meant ``sum4``, resuming such a CSV would pool two decoders
under one strong_id, silently. So ``qd-<name>`` means the label ``<name>`` as recorded, which
differs from ``qdecode sweep --decoder <name>`` (today's defaults) exactly where a default changed
after labels were recorded (:func:`~qdecode.decoders.registry.changed_defaults`):

>>> for name, changed in legacy_bare_names().items():
...     print(name, changed)
qd-bplsd {'lsd_grow': (10, 20), 'lsd_key': ('last', 'sum4'), 'lsd_order': (0, 30)}
qd-bposd {'osd_key': ('last', 'sum4')}
qd-bposd-e {'osd_key': ('last', 'sum4')}
qd-relay-bp {'bits': (0, 8)}
qd-window {'osd_key': ('last', 'sum4')}

(``{parameter: (what qd-<name> means, today's default)}``; ``qd-relay-bp``'s ``bits=0`` is
float64 lanes.) Today's defaults under sinter: the canonical label ``sweep`` records, which
:func:`default_label` gives (``default_label("bposd")``), or spell the parameter out
(``qd-bposd[osd_key=sum4]``). ``qdecode sweep --help`` says the same.

The label contract: one decoder, one name, one strong_id, between ``qdecode sweep`` and ``sinter
collect``. The name ``sweep`` records for ``--decoder L`` is :func:`recorded_name` ``(L)``
(``DecoderSpec.parse(L).record_label``: the sinter name verbatim for ``qd-...``, else the
canonical label of the request, every parameter spelled out), and :func:`name_spec` reads that
name back as the same configuration, so sinter given the recorded name records the same string
and decodes with the same decoder. For each label asked of :func:`sinter_decoders` (an argument,
or :data:`ENV_VAR`) the dict lists ``recorded_name(L)``, the canonical label with and without
``qd-``, and ``qd-`` + ``L`` as written (without surrounding whitespace, and with every space
removed), each meaning what :func:`name_spec` reads in it: ``sinter_decoders("bposd[osd_order=4]")``
lists ``bposd[...,osd_key=sum4,osd_order=4,...]`` (the request, today's ``sum4``) and
``qd-bposd[osd_order=4]`` (a recorded label: ``osd_key=last``), two decoders under two names.
Tested over every registered decoder in ``tests/test_sinter_label_contract.py``. From Python::

    import sinter
    from qdecode.sinter_adapter import recorded_name, sinter_decoders

    sinter.collect(num_workers=4, tasks=tasks, max_shots=10**6,
                   decoders=["qd-relay-bp[bits=8,gamma0=0.1]", recorded_name("bposd[osd_order=20]")],
                   custom_decoders=sinter_decoders())

From sinter's command line::

    sinter collect --circuits c.stim --decoders 'qd-relay-bp[bits=8,gamma0=0.1]' \\
        'qd-bposd[osd_key=sum4,osd_order=20]' \\
        --custom_decoders_module_function qdecode:sinter_decoders --max_shots 100000 \\
        --processes 4 --save_resume_filepath stats.csv

The environment variable ``QDECODE_SINTER_DECODERS`` (:data:`ENV_VAR`) still adds labels,
separated by ``;`` (parameters are comma-separated inside the brackets): for a program that
calls ``sinter``'s command line without this process's arguments. Empty entries and whitespace
around labels are ignored. A label that does not parse, names an unknown or classical decoder,
or gives an unknown parameter or a bad value raises a ``ValueError`` naming the variable and the
label. The variable and the command line are read on every call (``env=False`` ignores both).

Confidence: gap histograms through a ``sinter.Sampler``
--------------------------------------------------------
A sinter ``CompiledDecoder`` returns predictions only, so the per-shot confidence of a decoder
with one (``predict_with_confidence_packed``, :mod:`qdecode.decoders.confidence`) cannot travel
through a :class:`SinterDecoder`. Sinter (>= 1.14) also takes ``sinter.Sampler`` objects in
``custom_decoders``; a sampler does the whole job (sample, postselect, decode, count) and returns
``sinter.AnonTaskStats`` whose ``custom_counts`` sinter adds up into the task's row.
:class:`SinterGapSampler` is one: it samples the task's circuit with stim, drops the shots of
the task's ``postselection_mask`` (discards), decodes the others with their confidence, discards
the shots mispredicting an observable of ``postselected_observables_mask`` (sinter's own rules),
counts the errors among the rest and their gaps per 1 dB bin, as ``qdecode sweep --gap-histogram``
does: the ``custom_counts`` keys are those of :mod:`qdecode.sims.gap_bins` (``g<i>``, ``gneg``,
``gnan`` and their ``E`` error counts), so the shot bins of a row sum to ``shots - discards`` and
the ``E`` bins to ``errors``.

Its sinter name is ``qd-gap-`` followed by the label (``qd-gap-pymatching``,
``qd-gap-relay-bp[bits=0]``); :func:`sinter_gap_samplers` returns them. The name differs from
the plain ``qd-<label>`` decoder's, hence so does the strong_id: rows with and without a gap
histogram never pool (a pooled row's histogram would not add up to it).

Reading sinter's CSV: ``qdecode threshold --max-discard`` and ``qdecode plot --y
discard_vs_error`` take a row as a gap-histogram row when its json_metadata has
``gap_bins`` (what ``qdecode sweep --gap-histogram`` records) *or* its ``custom_counts`` hold any
gap bin (:func:`qdecode.sims.gap_bins.has_gap_bins`), so ``qd-gap-...`` rows are read without
the metadata key. A row every one of whose shots was discarded has no bin and is skipped. Putting
``gap_bins=<GAP_BINS_TAG>`` (``"1dB..100"``) into the task's json_metadata is optional; it makes
the bin scheme part of the strong_id, as in a sweep's rows, and the plots drop it from labels.

From Python::

    sinter.collect(num_workers=4, tasks=tasks, max_shots=10**6,
                   decoders=["qd-gap-pymatching", "qd-gap-relay-bp[bits=0]"],
                   custom_decoders=sinter_gap_samplers("pymatching", "relay-bp[bits=0]"))

From sinter's command line, ``--custom_decoders_module_function
qdecode.sinter_adapter:sinter_gap_samplers`` offers ``qd-gap-<name>`` for every decoder with a
confidence, and ``qd-gap-<label>`` for each such name in ``sinter collect --decoders`` and each
label in :data:`ENV_VAR` whose decoder has one (the others are left to :func:`sinter_decoders`);
from Python, the :class:`SinterGapSamplers` dict resolves any ``qd-gap-<label>`` on lookup, as
:class:`SinterDecoders` does. Sinter's ``count_detection_events`` and
``count_observable_error_combos`` are refused by sinter itself for a custom sampler.

Examples:
    >>> sinter_gap_name("relay-bp[bits=0]")
    'qd-gap-relay-bp[bits=0]'
    >>> samplers = sinter_gap_samplers("relay-bp[bits=0]", env=False)
    >>> "qd-gap-relay-bp[bits=0]" in samplers, "qd-gap-pymatching" in samplers, "qd-pymatching" in samplers
    (True, True, False)
    >>> sinter_gap_samplers("mem-bp", env=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    qdecode.decoders.confidence.NoConfidenceError: qd-gap-mem-bp: decoder mem-bp gives no confidence (gap); ...
"""

from __future__ import annotations

import argparse
import collections
import os
import pathlib
import re
import secrets
import sys
import time
from typing import Iterable, Sequence

import numpy as np
import sinter

from qdecode.decoders.confidence import CONFIDENCE_DECODERS, NoConfidenceError, no_confidence_error
from qdecode.decoders.registry import (
    SINTER_PREFIX,
    DecoderSpec,
    changed_defaults,
    decoder_names,
    get_entry,
    split_label,
)
from qdecode.errors import InputError
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.gap_bins import gap_bin_counts

__all__ = ["ENV_VAR", "SEPARATOR", "PREFIX", "GAP_PREFIX", "MAX_BATCH_SHOTS", "MAX_BATCH_BYTES", "SinterDecoder",
           "SinterCompiledDecoder", "SinterDecoders", "SinterGapSampler", "SinterCompiledGapSampler",
           "SinterGapSamplers", "sinter_decoders", "sinter_decoder", "sinter_name", "parse_label", "bare_label",
           "recorded_name", "default_label", "legacy_bare_names", "name_spec", "collect_command_line_names",
           "sinter_gap_samplers", "sinter_gap_sampler", "sinter_gap_name", "gap_bare_label"]

#: Environment variable naming labelled decoders for sinter's command line.
ENV_VAR = "QDECODE_SINTER_DECODERS"
#: Separator of labels in :data:`ENV_VAR` (never inside a label: parameters use ``,``).
SEPARATOR = ";"
#: Prefix of every sinter name this module defines (the registry's; a sinter name is a recorded label).
PREFIX = SINTER_PREFIX
#: Prefix of the sinter names of :class:`SinterGapSampler` (``qd-gap-pymatching``).
GAP_PREFIX = PREFIX + "gap-"
#: Most shots a :class:`SinterCompiledGapSampler` samples and decodes in one call (the sweep's chunk size).
MAX_BATCH_SHOTS = 65536
#: Most bytes of bit-packed detection events in one call: bounds memory on circuits with many detectors.
MAX_BATCH_BYTES = 1 << 26

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


def _sinter_spec(spec: DecoderSpec) -> DecoderSpec:
    """``spec``, refused unless sinter can run it: a quantum decoder, and not ``auto``."""
    if spec.name == "auto":
        raise InputError("decoder 'auto' resolves per model, and sinter would record 'qd-auto' for whatever it "
                         "chose; name the decoder (qdecode sweep --decoder auto records the concrete one)")
    if spec.kind != "quantum":
        raise InputError(f"decoder {spec.name!r} is a {spec.kind} decoder; sinter decodes detector error models")
    return spec


def parse_label(label: str) -> DecoderSpec:
    """``"name"`` or ``"name[key=value,...]"`` (or either with ``qd-`` before it) -> a validated
    quantum :class:`DecoderSpec`, read as a recorded label.

    Raises:
        ValueError: malformed label, unknown or classical decoder, unknown parameter, bad value.

    Examples:
        >>> parse_label("bposd[osd_order=4]").name
        'bposd'
    """
    return _sinter_spec(DecoderSpec.from_label(bare_label(label)))


def recorded_name(label: str) -> str:
    """The decoder name ``qdecode sweep --decoder <label>`` records: a sinter name (``qd-...``)
    verbatim, else the canonical label of the request, today's defaults spelled out
    (:attr:`DecoderSpec.record_label <qdecode.decoders.registry.DecoderSpec.record_label>`).

    Raises:
        ValueError: a bad label, or one sinter cannot run (classical, ``auto``).

    Examples:
        >>> recorded_name(" qd-bposd ")
        'qd-bposd'
        >>> "osd_key=sum4" in recorded_name("bposd[osd_order=4]")
        True
    """
    return _sinter_spec(DecoderSpec.parse(label)).record_label


def default_label(name: str) -> str:
    """The canonical label of decoder ``name`` at today's defaults: what ``--decoder <name>`` records,
    and the sinter name of that decoder (:func:`recorded_name` of the bare name).

    Examples:
        >>> default_label("relay-bp").startswith("relay-bp[") and "bits=8" in default_label("relay-bp")
        True
    """
    return recorded_name(bare_label(name))


def legacy_bare_names() -> dict[str, dict]:
    """``{"qd-<name>": {parameter: (what qd-<name> means, today's default)}}`` for every bare sinter
    name that is not ``qdecode sweep --decoder <name>`` (module docstring), sorted by name."""
    out: dict[str, dict] = {}
    for name in _sinter_names():
        changed = changed_defaults(name)
        if changed:
            out[PREFIX + name] = changed
    return out


def _sinter_names() -> list[str]:
    """The registered decoders sinter can run: quantum, and not ``auto``."""
    return [name for name in decoder_names() if get_entry(name).kind == "quantum" and name != "auto"]


def name_spec(name: str) -> DecoderSpec | None:
    """The decoder a sinter decoder name stands for, read as a recorded label; ``None`` when the name
    is not ours (module docstring: ``qd-<label>``, or a bare label of a quantum decoder that sinter
    has no built-in decoder of).

    Raises:
        ValueError: a name of ours that does not parse (an unknown parameter, a bad value).

    Examples:
        >>> dict(name_spec("qd-bposd").params)["osd_key"], name_spec("pymatching"), name_spec("qd-gap-bp")
        ('last', None, None)
    """
    text = name.strip()
    if text.startswith(GAP_PREFIX):
        return None
    if text.startswith(PREFIX):
        return parse_label(text)
    if text in sinter.BUILT_IN_SAMPLERS:
        return None
    try:
        base = split_label(text)[0]
    except ValueError:
        return None
    if base not in _sinter_names():
        return None
    return parse_label(text)


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


def collect_command_line_names(argv: Sequence[str] | None = None) -> list[str]:
    """The decoder names of ``sinter collect --decoders ...`` when ``argv`` (default ``sys.argv``) is
    sinter's collect command line, else ``[]``.

    Sinter's command line calls ``--custom_decoders_module_function`` without arguments and copies
    the result into a plain dict before checking the names, so the plug-in reads them here. The
    program is sinter's when ``argv[0]`` is its script (``<venv>/bin/sinter``) or a file of its package
    (``python -m sinter._command._main``); ``--decoders`` is read as sinter's argparse reads it (one
    or more values, repeatable, abbreviations allowed).

    Examples:
        >>> collect_command_line_names(["/venv/bin/sinter", "collect", "--circuits", "a.stim",
        ...                             "--decoders", "qd-bp", "pymatching", "--max_shots", "9"])
        ['qd-bp', 'pymatching']
        >>> collect_command_line_names(["pytest", "collect", "--decoders", "qd-bp"])
        []
    """
    argv = list(sys.argv if argv is None else argv)
    if len(argv) < 2 or argv[1] != "collect":
        return []
    program = pathlib.PurePath(argv[0])
    if not (program.stem == "sinter" or "sinter" in program.parts[:-1]):
        return []
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    parser.add_argument("--decoders", nargs="+", action="extend", default=[])
    try:
        known, _ = parser.parse_known_args(argv[2:])
    except argparse.ArgumentError:
        return []  # sinter's own parser reports it
    return list(known.decoders)


class _LazyNames(dict):
    """A dict of sinter names that also answers, on lookup, every name :meth:`resolve` knows.

    Sinter looks a decoder up with ``name in custom_decoders`` and ``custom_decoders[name]`` (or
    ``.get(name)``); those resolve a name that is not listed without storing it, so iterating
    lists only the names put in. A name of ours that does not parse raises its ``ValueError``
    from all three (sinter would otherwise say only that the name is not recognised).
    """

    def resolve(self, name: str):
        raise NotImplementedError

    def __missing__(self, key):
        value = self.resolve(key) if isinstance(key, str) else None
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str) and self.resolve(key) is not None)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


class SinterDecoders(_LazyNames):
    """``{sinter name: SinterDecoder}`` that resolves any other name of ours on lookup (:func:`name_spec`)."""

    def resolve(self, name: str) -> SinterDecoder | None:
        spec = name_spec(name)
        return None if spec is None else SinterDecoder(spec)


def sinter_decoders(*labels: str | Iterable[str], env: bool = True) -> SinterDecoders:
    """Sinter decoders: ``qd-<name>`` for every quantum decoder, the names of the labels asked for,
    and on lookup every other name of ours (module docstring).

    Args:
        labels: decoder labels as ``qdecode sweep --decoder`` takes them (``"bposd[osd_order=20]"``
            is a request at today's defaults, ``"qd-bposd[osd_order=20]"`` a sinter name), iterables
            of them, or ``;``-separated strings of them.
        env: also add the labels in :data:`ENV_VAR` and the names of ours on this process's
            ``sinter collect`` command line (:func:`collect_command_line_names`).

    Returns:
        a :class:`SinterDecoders` ``{sinter name: SinterDecoder}``. Each asked label ``L`` is listed
        under :func:`recorded_name` ``(L)`` (what ``sweep`` records for it), its canonical label
        with and without ``qd-`` (without it unless sinter has a built-in of that name), and
        ``qd-`` + ``L`` as written (also with every space removed). Every name, listed or resolved,
        means :func:`name_spec` of it; equal configurations share one :class:`SinterDecoder`.

    Raises:
        ValueError: a bad label; for one from :data:`ENV_VAR` or the command line the message says
            where it came from.
    """
    names = [f"{PREFIX}{name}" for name in _sinter_names()]
    asked = [(label, None) for label in _split(labels)]
    if env:
        asked += [(label, ENV_VAR) for label in _split([os.environ.get(ENV_VAR, "")])]
    for label, source in asked:
        try:
            recorded = recorded_name(label)
            canonical = parse_label(PREFIX + bare_label(recorded))
            bare = bare_label(label)
            names += [recorded, PREFIX + canonical.label(), canonical.label(), PREFIX + bare,
                      PREFIX + re.sub(r"\s+", "", bare)]
            for name in names[-5:]:
                name_spec(name)  # the name as written must parse too (a space inside a value)
        except ValueError as exc:
            if source is None:
                raise
            raise InputError(f"{source}: bad decoder label {label!r}: {exc}") from None
    if env:
        for name in collect_command_line_names():
            try:
                if name_spec(name) is not None:
                    names.append(name)
            except ValueError as exc:
                # a ValueError: sinter prints its type
                raise ValueError(f"sinter collect --decoders: bad decoder name {name!r}: {exc}") from None
    out = SinterDecoders()
    shared: dict[DecoderSpec, SinterDecoder] = {}
    for name in names:
        spec = name_spec(name)
        if spec is not None:
            out[name] = shared.setdefault(spec, SinterDecoder(spec))
    return out


def gap_bare_label(label: str) -> str:
    """``label`` without surrounding whitespace and without a ``qd-gap-`` or ``qd-`` prefix.

    Examples:
        >>> gap_bare_label(" qd-gap-pymatching "), gap_bare_label("qd-relay-bp[bits=0]")
        ('pymatching', 'relay-bp[bits=0]')
    """
    label = label.strip()
    return label[len(GAP_PREFIX):] if label.startswith(GAP_PREFIX) else bare_label(label)


def sinter_gap_name(label: str) -> str:
    """The sinter name of a label's gap sampler as written: ``"qd-gap-" + label`` (see :func:`gap_bare_label`)."""
    return GAP_PREFIX + gap_bare_label(label)


def _confident_spec(label: str | DecoderSpec) -> DecoderSpec:
    """The spec of ``label`` (read as :func:`parse_label` reads it); refused unless its decoder gives a confidence."""
    if isinstance(label, DecoderSpec):
        spec = label
    else:
        bare = gap_bare_label(label)
        try:
            name = split_label(bare)[0]
        except ValueError:
            name = None  # malformed: parse_label says how
        if name is not None and name not in decoder_names():
            raise InputError(f"unknown decoder {name!r}; decoders with a confidence: {', '.join(CONFIDENCE_DECODERS)}")
        spec = parse_label(bare)
    if spec.kind != "quantum":
        raise InputError(f"decoder {spec.name!r} is a {spec.kind} decoder; sinter decodes detector error models")
    if not get_entry(spec.name).has_confidence:
        raise no_confidence_error(spec.name)
    return spec


class SinterCompiledGapSampler(sinter.CompiledSampler):
    """The :class:`SinterGapSampler` of one task: its decoder, built for the task's DEM, and its circuit.

    Each :meth:`sample` call samples a fresh batch (a new stim sampler seeded from
    :mod:`secrets`, so no two calls, processes or copies of this object ever share samples),
    postselects, decodes with the confidence and counts, as sinter's own stim-then-decode sampler
    does plus the gap histogram.

    Args:
        decoder: a qdecode decoder with ``predict_with_confidence_packed``, built for ``task``'s DEM.
        task: a sinter task with its circuit (sinter's workers fill it in from ``circuit_path``).
        max_batch_shots: the most shots per call (besides :data:`MAX_BATCH_BYTES`).
    """

    def __init__(self, decoder, task: sinter.Task, *, max_batch_shots: int = MAX_BATCH_SHOTS):
        if task.circuit is None:
            raise InputError("SinterGapSampler needs the task's circuit (sinter.collect loads circuit_path itself)")
        if max_batch_shots < 1:
            raise InputError(f"max_batch_shots must be positive, got {max_batch_shots}")
        self.decoder = decoder
        self.task = task
        self.circuit = task.circuit
        self.num_dets = self.circuit.num_detectors
        det_bytes = max(1, (self.num_dets + 7) // 8)
        self.batch_cap = max(1, min(max_batch_shots, MAX_BATCH_BYTES // det_bytes))

    def batch_shots(self, suggested_shots: int) -> int:
        """Shots of one call: ``suggested_shots``, at least 1, at most the batch cap.

        Sinter's collector ramps ``suggested_shots`` up towards a batch of about a second and never
        above its ``max_batch_size`` (1024 by default); the cap bounds memory beyond that.
        """
        return max(1, min(int(suggested_shots), self.batch_cap))

    def sample(self, suggested_shots: int) -> sinter.AnonTaskStats:
        """Sample, postselect, decode with the confidence and count one batch.

        Returns:
            ``sinter.AnonTaskStats``: ``shots`` sampled, ``discards`` (a postselected detector
            fired, or a postselected observable mispredicted), ``errors`` among the other shots
            (any observable mispredicted), ``seconds`` (wall clock, as sinter's own sampler) and
            ``custom_counts`` their gap histogram (:func:`qdecode.sims.gap_bins.gap_bin_counts`).

        Raises:
            ValueError: the decoder's output has the wrong shape.
        """
        t0 = time.monotonic()
        num_shots = self.batch_shots(suggested_shots)
        stim_sampler = self.circuit.compile_detector_sampler(seed=secrets.randbits(64))
        dets, actual = stim_sampler.sample(shots=num_shots, bit_packed=True, separate_observables=True)
        discards = 0
        mask = self.task.postselection_mask
        if mask is not None:  # sinter's rule: any postselected detector that fired discards the shot
            drop = np.any(dets & mask, axis=1)
            discards += int(np.count_nonzero(drop))
            if discards:
                dets, actual = dets[~drop], actual[~drop]
        errors = 0
        counts: collections.Counter = collections.Counter()
        if dets.shape[0]:
            predicted, gaps = self.decoder.predict_with_confidence_packed(dets)
            predicted = np.asarray(predicted)
            gaps = np.asarray(gaps)
            if predicted.dtype != np.uint8 or predicted.shape != actual.shape or gaps.shape != (dets.shape[0],):
                raise InputError(f"decoder returned predictions {predicted.dtype}{predicted.shape} and gaps "
                                 f"{gaps.shape}, expected uint8{actual.shape} and ({dets.shape[0]},)")
            obs_mask = self.task.postselected_observables_mask
            if obs_mask is not None:  # sinter's rule: mispredicting a postselected observable discards the shot
                drop = np.any((actual ^ predicted) & obs_mask, axis=1)
                n_drop = int(np.count_nonzero(drop))
                if n_drop:
                    discards += n_drop
                    actual, predicted, gaps = actual[~drop], predicted[~drop], gaps[~drop]
            failed = np.any(actual != predicted, axis=1)
            errors = int(np.count_nonzero(failed))
            counts.update(gap_bin_counts(gaps, failed))
        return sinter.AnonTaskStats(shots=num_shots, errors=errors, discards=discards,
                                    seconds=time.monotonic() - t0, custom_counts=counts)


class SinterGapSampler(sinter.Sampler):
    """Picklable sinter sampler: a qdecode decoder with a confidence, counting gap histograms.

    See the module docstring (why a sampler, the ``qd-gap-`` names, the ``custom_counts``).

    Args:
        label: a label (``"relay-bp[bits=0]"``, with or without ``qd-gap-`` / ``qd-``, read as
            :func:`parse_label` reads it) or a :class:`DecoderSpec`.
        max_batch_shots: the most shots one ``sample`` call takes (sinter's own batches are
            usually smaller: 1024 at most by default).

    Raises:
        ValueError: a bad label, or a decoder without a confidence
            (:class:`~qdecode.decoders.confidence.NoConfidenceError`).
    """

    def __init__(self, label: str | DecoderSpec, *, max_batch_shots: int = MAX_BATCH_SHOTS):
        if max_batch_shots < 1:
            raise InputError(f"max_batch_shots must be positive, got {max_batch_shots}")
        self.spec = _confident_spec(label)
        self.max_batch_shots = max_batch_shots

    def compiled_sampler_for_task(self, task: sinter.Task) -> SinterCompiledGapSampler:
        """The decoder built for ``task.detector_error_model`` (the DEM sinter gives its decoders:
        decomposed as sinter decomposes it when the task has none), with the task's circuit."""
        dem = task.detector_error_model
        if dem is None:  # sinter's workers always fill it in; as they do, for a direct call
            if task.circuit is None:
                raise InputError("SinterGapSampler needs the task's circuit (sinter.collect loads circuit_path "
                                 "itself)")
            dem = decoding_dem(task.circuit)
        decoder = self.spec.build(DecodingProblem.from_dem(dem))
        if not getattr(decoder, "has_confidence", False):
            raise no_confidence_error(decoder)
        return SinterCompiledGapSampler(decoder, task, max_batch_shots=self.max_batch_shots)

    def __repr__(self) -> str:
        return f"SinterGapSampler({self.spec.label()!r})"


def sinter_gap_sampler(label: str | DecoderSpec) -> SinterGapSampler:
    """The :class:`SinterGapSampler` of one label (see :func:`parse_label`); refused without a confidence."""
    return SinterGapSampler(label)


class SinterGapSamplers(_LazyNames):
    """``{sinter name: SinterGapSampler}`` that resolves any other ``qd-gap-<label>`` on lookup."""

    def resolve(self, name: str) -> SinterGapSampler | None:
        return SinterGapSampler(name) if name.strip().startswith(GAP_PREFIX) else None


def sinter_gap_samplers(*labels: str | Iterable[str], env: bool = True) -> SinterGapSamplers:
    """Sinter samplers with gap histograms: ``qd-gap-<name>`` for every decoder with a confidence, the
    labelled ones asked for, and on lookup every other ``qd-gap-<label>``.

    Args:
        labels: decoder labels (``"relay-bp[bits=0]"``, with or without ``qd-gap-`` or ``qd-``, read
            as recorded labels), iterables of them, or ``;``-separated strings of them; each must
            name a decoder with a confidence.
        env: also add the labels in :data:`ENV_VAR` whose decoders have a confidence (the others
            are :func:`sinter_decoders`' business and are skipped here), and the ``qd-gap-`` names
            on this process's ``sinter collect`` command line (:func:`collect_command_line_names`).

    Returns:
        a :class:`SinterGapSamplers` ``{sinter name: SinterGapSampler}``; a labelled sampler
        appears under ``qd-gap-`` + the label as written, the same with every space removed, and
        ``qd-gap-`` + its canonical label (so ``qd-gap-pymatching``, ``qd-gap-relay-bp[bits=0]``).

    Raises:
        ValueError: a bad label, or one whose decoder gives no confidence (one line naming the
            decoders that do); for a bad label from :data:`ENV_VAR` or the command line the message
            says where it came from.
    """
    out = SinterGapSamplers({
        f"{GAP_PREFIX}{name}": SinterGapSampler(DecoderSpec.from_label(name))
        for name in _sinter_names() if get_entry(name).has_confidence
    })
    asked = [(label, None) for label in _split(labels)]
    if env:
        asked += [(label, ENV_VAR) for label in _split([os.environ.get(ENV_VAR, "")])]
    for label, source in asked:
        try:
            sampler = SinterGapSampler(label)
        except NoConfidenceError as exc:
            if source is None:
                raise NoConfidenceError(f"{sinter_gap_name(label)}: {exc}") from None
            continue  # a label for sinter_decoders only
        except ValueError as exc:
            prefix = sinter_gap_name(label) if source is None else f"{source}: bad decoder label {label!r}"
            raise InputError(f"{prefix}: {exc}") from None
        for name in (sinter_gap_name(label), GAP_PREFIX + re.sub(r"\s+", "", gap_bare_label(label)),
                     GAP_PREFIX + sampler.spec.label()):
            out[name] = sampler
    if env:
        for name in collect_command_line_names():
            if name.strip().startswith(GAP_PREFIX):
                try:
                    out[name] = SinterGapSampler(name)
                except ValueError as exc:
                    # a ValueError: sinter prints its type
                    raise ValueError(f"sinter collect --decoders: bad decoder name {name!r}: {exc}") from None
    return out
