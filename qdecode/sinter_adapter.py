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
confidence, and ``qd-gap-<label>`` for each label in :data:`ENV_VAR` whose decoder has one (the
others are left to :func:`sinter_decoders`). Sinter's ``count_detection_events`` and
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

import collections
import os
import re
import secrets
import time
from typing import Iterable

import numpy as np
import sinter

from qdecode.decoders.confidence import CONFIDENCE_DECODERS, NoConfidenceError, no_confidence_error
from qdecode.decoders.registry import SINTER_PREFIX, DecoderSpec, decoder_names, get_entry, split_label
from qdecode.problem import DecodingProblem, decoding_dem
from qdecode.sims.gap_bins import gap_bin_counts

__all__ = ["ENV_VAR", "SEPARATOR", "PREFIX", "GAP_PREFIX", "MAX_BATCH_SHOTS", "MAX_BATCH_BYTES", "SinterDecoder",
           "SinterCompiledDecoder", "SinterGapSampler", "SinterCompiledGapSampler", "sinter_decoders",
           "sinter_decoder", "sinter_name", "parse_label", "bare_label", "sinter_gap_samplers", "sinter_gap_sampler",
           "sinter_gap_name", "gap_bare_label"]

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
            raise ValueError(f"unknown decoder {name!r}; decoders with a confidence: {', '.join(CONFIDENCE_DECODERS)}")
        spec = parse_label(bare)
    if spec.kind != "quantum":
        raise ValueError(f"decoder {spec.name!r} is a {spec.kind} decoder; sinter decodes detector error models")
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
            raise ValueError("SinterGapSampler needs the task's circuit (sinter.collect loads circuit_path itself)")
        if max_batch_shots < 1:
            raise ValueError(f"max_batch_shots must be positive, got {max_batch_shots}")
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
                raise ValueError(f"decoder returned predictions {predicted.dtype}{predicted.shape} and gaps "
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
            raise ValueError(f"max_batch_shots must be positive, got {max_batch_shots}")
        self.spec = _confident_spec(label)
        self.max_batch_shots = max_batch_shots

    def compiled_sampler_for_task(self, task: sinter.Task) -> SinterCompiledGapSampler:
        """The decoder built for ``task.detector_error_model`` (the DEM sinter gives its decoders:
        decomposed as sinter decomposes it when the task has none), with the task's circuit."""
        dem = task.detector_error_model
        if dem is None:  # sinter's workers always fill it in; as they do, for a direct call
            if task.circuit is None:
                raise ValueError("SinterGapSampler needs the task's circuit (sinter.collect loads circuit_path "
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


def sinter_gap_samplers(*labels: str | Iterable[str], env: bool = True) -> dict[str, sinter.Sampler]:
    """Sinter samplers with gap histograms: ``qd-gap-<name>`` for every decoder with a confidence, plus the
    labelled ones asked for.

    Args:
        labels: decoder labels (``"relay-bp[bits=0]"``, with or without ``qd-gap-`` or ``qd-``),
            iterables of them, or ``;``-separated strings of them; each must name a decoder with
            a confidence.
        env: also add the labels in :data:`ENV_VAR` whose decoders have a confidence (the others
            are :func:`sinter_decoders`' business and are skipped here).

    Returns:
        ``{sinter name: SinterGapSampler}``; a labelled sampler appears under ``qd-gap-`` + the
        label as written, the same with every space removed, and ``qd-gap-`` + its canonical label
        (so ``qd-gap-pymatching``, ``qd-gap-relay-bp[bits=0]``).

    Raises:
        ValueError: a bad label, or one whose decoder gives no confidence (one line naming the
            decoders that do); for a bad label from :data:`ENV_VAR` the message names the variable.
    """
    out: dict[str, sinter.Sampler] = {
        f"{GAP_PREFIX}{name}": SinterGapSampler(DecoderSpec.from_label(name))
        for name in decoder_names()
        if get_entry(name).kind == "quantum" and name != "auto" and get_entry(name).has_confidence
    }
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
            raise ValueError(f"{prefix}: {exc}") from None
        for name in (sinter_gap_name(label), GAP_PREFIX + re.sub(r"\s+", "", gap_bare_label(label)),
                     GAP_PREFIX + sampler.spec.label()):
            out[name] = sampler
    return out
