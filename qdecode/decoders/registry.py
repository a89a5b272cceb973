"""Decoder registry: build any decoder from a name plus parameters.

A :class:`DecoderSpec` is a picklable recipe (registry name + resolved, sorted
parameters) shipped to worker processes; ``spec.build(problem)`` compiles the
decoder there. ``spec.label()`` names the decoder *with* every parameter
(defaults included), e.g. ``bp[alpha=0.625,max_iter=100]``; the label goes into
the stats CSV's ``decoder`` column and the strong_id, so a resumed sweep never
pools two configurations. Parameters registered with ``in_label=False`` change how a
decoder runs but never its results (e.g. GDG's ``branch_threads``); they are left out
of the label. A decoder without parameters is labelled by its bare name (``pymatching``), which
is also sinter's name for the same decoder.

Label versions: a recorded label means forever what it meant when it was written. Two kinds of
string name a decoder. A *request* (``--decoder bposd[osd_order=20]``, ``qdecode.decoder(...)``,
:meth:`DecoderSpec.create`) takes today's defaults for what it leaves out. A *recorded label*
(a CSV's ``decoder`` column, a sinter plug-in name, :meth:`DecoderSpec.from_label`) takes each
parameter's label-implied value (:attr:`Param.implied <qdecode.decoders.params.Param.implied>`).
The two agree until a default changes. Two cases:

* Options added after results were recorded (``label_default=False``, e.g. sem-OSD's ``prior``,
  bp's ``dtype``) appear in a label only when they differ from their implied value, so the
  labels written before them stay valid.
* When a default changes, the parameter keeps its old default as ``label_implied``. Labels
  spelled without it keep their old meaning, and the new default is spelled out. For example,
  ``bposd``'s ``osd_key`` became ``sum4`` (labels without ``osd_key`` mean ``last``), and
  ``relay-bp``'s ``bits`` became 8 (a sinter name ``qd-relay-bp`` still means ``bits=0``).
* Where what a label leaves out depends on what it spells, the parameter declares it
  (:attr:`Param.implied_by <qdecode.decoders.params.Param.implied_by>`): ``relay-bp``'s ``bits`` is 0
  in ``qd-relay-bp`` but 8 in ``qd-relay-bp[ensemble=8]``, since the ensemble runs 8-bit messages only.

Sinter names: ``qd-`` followed by a label (``qd-bposd[osd_order=20]``) is how the sinter plug-in
names a decoder, and sinter records that name verbatim. It is a recorded label, so
:meth:`DecoderSpec.parse` reads it with :meth:`DecoderSpec.from_label` and keeps the name as
written in :attr:`DecoderSpec.recorded_as`; ``qdecode sweep --decoder 'qd-bposd[osd_order=20]'``
then records the same name, and so the same strong_id, as ``sinter collect`` with that name.
A request (no prefix) is recorded by its canonical :meth:`DecoderSpec.label`, which the plug-in
also accepts as a sinter name (``qdecode.sinter_adapter``).

The invariants, tested in ``tests/decoders/test_parameters.py``:

* ``DecoderSpec.from_label(spec.label()) == spec`` for every spec;
* two specs share a label only if they are the same configuration.

Nested decoders: an entry registered with ``nested="inner"`` (the ``window`` decoder) has a
string parameter naming another registered decoder, and it accepts that decoder's parameters
as well, validated against the inner entry (defaults filled in, unknown names rejected).
Its params are its own (sorted) followed by the inner decoder's (sorted), so the label reads
``window[F=1,W=3,inner=bposd,per_round=0,alpha=1.0,...,osd_order=10,...]``; the factory
receives all of them as keyword arguments.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from qdecode.decoders.params import DecoderEntry, Param, UnknownDecoderError
from qdecode.heralds import HERALD_MODES

if TYPE_CHECKING:
    from qdecode.decoders.base import Decoder
    from qdecode.decoders.block import BlockDecoder
    from qdecode.problem import DecodingProblem

__all__ = ["BUILTIN_DECODERS", "DecoderEntry", "DecoderSpec", "Param", "SINTER_PREFIX", "UnknownDecoderError",
           "changed_defaults", "decoder", "decoder_names", "get_entry", "register", "split_label"]

#: Prefix of the sinter plug-in's decoder names (``qd-bposd``): a sinter name is a recorded label.
SINTER_PREFIX = "qd-"

#: A parameter of every quantum decoder: what it does with herald detectors (:mod:`qdecode.heralds`):
#: ``aware`` (the default: per-shot priors where the decoder takes them, else the heralds as checks),
#: ``ignore`` (the heralds marginalised out: the herald-blind reference) or ``checks`` (the heralds as ordinary
#: detectors). It wins over the problem's own mode, appears in a label only when not ``aware``, and changes
#: nothing on a problem without heralds.
HERALDS_PARAM = Param(str, "aware", "herald detectors: aware (per-shot priors where the decoder takes them), "
                      "ignore (marginalised: herald-blind) or checks (ordinary detectors)", HERALD_MODES,
                      label_default=False)


# One loader per decoder module: a plain import (go-to-definition leads to the module's ``ENTRIES``),
# run only when the loader is called, so importing the registry imports no decoder.


def _matching() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.matching import ENTRIES
    return ENTRIES


def _relay() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.relay_bp import ENTRIES
    return ENTRIES


def _gdg() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.gdg import ENTRIES
    return ENTRIES


def _bp() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.bp import ENTRIES
    return ENTRIES


def _bposd() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.bposd import ENTRIES
    return ENTRIES


def _bp_matching() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.bp_matching import ENTRIES
    return ENTRIES


def _nn_pymatching() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.nn_pymatching import ENTRIES
    return ENTRIES


def _window() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.window import ENTRIES
    return ENTRIES


def _classical() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.classical_entries import ENTRIES
    return ENTRIES


def _qc_ldpc() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.qc_ldpc import ENTRIES
    return ENTRIES


def _crisp() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.crisp import ENTRIES
    return ENTRIES


def _mle() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.mle import ENTRIES
    return ENTRIES


def _union_find() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.union_find import ENTRIES
    return ENTRIES


def _bplsd() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.bplsd import ENTRIES
    return ENTRIES


def _chromobius_decoder() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.chromobius_decoder import ENTRIES
    return ENTRIES


def _tesseract_decoder() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.tesseract_decoder import ENTRIES
    return ENTRIES


def _mwpf_decoder() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.mwpf_decoder import ENTRIES
    return ENTRIES


def _coset_ml() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.coset_ml import ENTRIES
    return ENTRIES


def _class_escalate() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.class_escalate import ENTRIES
    return ENTRIES


def _auto() -> Mapping[str, DecoderEntry]:
    from qdecode.decoders.auto import ENTRIES
    return ENTRIES


#: Every built-in entry: its name -> the loader of the ``ENTRIES`` dict that defines it. Registration
#: happens here, in one place; a decoder module is imported only when one of its entries is needed
#: (built, or its parameters read).
BUILTIN_DECODERS: dict[str, Callable[[], Mapping[str, DecoderEntry]]] = {
    "pymatching": _matching,
    "pymatching-correlated": _matching,
    "relay-bp": _relay,
    "mem-bp": _relay,
    "gdg": _gdg,
    "bp": _bp,
    "bp-ps": _bp,
    "bposd": _bposd,
    "bposd-e": _bposd,
    "bp-pymatching": _bp_matching,
    "nn-pymatching": _nn_pymatching,
    "window": _window,
    "bm": _classical,
    "osd": _classical,
    "sc": _classical,
    "scl": _classical,
    "sem-osd": _classical,
    "ldpc-ms": _qc_ldpc,
    "ldpc-spa": _qc_ldpc,
    "crisp": _crisp,
    "mle": _mle,
    "coset-ml": _coset_ml,
    "uf": _union_find,
    "bplsd": _bplsd,
    "bpuf": _bplsd,
    "chromobius": _chromobius_decoder,
    "tesseract": _tesseract_decoder,
    "mwpf": _mwpf_decoder,
    "class-escalate": _class_escalate,
    "auto": _auto,
}

_REGISTRY: dict[str, DecoderEntry] = {}  # entries added by register() (plug-ins, tests)


def register(
    name: str,
    factory: Callable[..., Decoder | BlockDecoder],
    params: Mapping[str, Param] | None = None,
    doc: str = "",
    nested: str | None = None,
    kind: str = "quantum",
) -> None:
    """Register ``factory(problem, **params) -> Decoder`` under ``name`` (a plug-in; built-ins are in
    :data:`BUILTIN_DECODERS`); for ``kind="classical"``, ``factory(code, **params) -> BlockDecoder``.

    ``nested``: name of a ``str`` parameter that names an inner decoder whose parameters this
    decoder also accepts (see the module docstring). ``kind="classical"``: the factory takes a
    classical code object instead (``factory(code, **params)``) and returns a
    :class:`~qdecode.decoders.block.BlockDecoder` (``decode_llr_batch(llr (S, n) float) -> codewords (S, n) uint8``).
    """
    _REGISTRY[name] = DecoderEntry(name=name, factory=factory, params=dict(params or {}), doc=doc, nested=nested,
                                   kind=kind)


def decoder_names() -> list[str]:
    """Every registered decoder name, sorted (imports no decoder module)."""
    return sorted(set(BUILTIN_DECODERS) | set(_REGISTRY))


def get_entry(name: str) -> DecoderEntry:
    """The entry of ``name``; a built-in's module is imported on first use."""
    entry = _REGISTRY.get(name)
    if entry is not None:
        return entry
    loader = BUILTIN_DECODERS.get(name)
    if loader is None:
        bare = name[len(SINTER_PREFIX):] if name.startswith(SINTER_PREFIX) else None
        if bare in BUILTIN_DECODERS or bare in _REGISTRY:
            raise UnknownDecoderError(f"unknown decoder {name!r}: that is the sinter plug-in's name of {bare!r}; "
                                      f"write {bare!r} here (or pass the whole sinter name where a decoder is "
                                      f"parsed from text)")
        raise UnknownDecoderError(f"unknown decoder {name!r}; known decoders: {', '.join(decoder_names())}")
    return loader()[name]


def _known(name: str) -> DecoderEntry | None:
    return _REGISTRY.get(name) if name not in BUILTIN_DECODERS or name in _REGISTRY else get_entry(name)


#: A label's grammar: ``name`` or ``name[key=value,...]`` (values may not contain ``,`` or ``]``).
_LABEL_RE = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\[(.*)\])?\s*$", re.S)


def split_label(text: str) -> tuple[str, dict[str, str]]:
    """``"name[key=value,...]"`` -> ``(name, {key: value})``: the label's syntax, not its values.

    Raises:
        UnknownDecoderError: not ``name`` or ``name[key=value,...]``, a key given twice, or an
            empty entry: empty brackets (``bposd[]``; a decoder without parameters is written bare)
            or a stray comma (``bposd[osd_order=4,]``, ``bposd[,osd_order=4]``): a sinter name is
            recorded verbatim, so a second spelling of one decoder would split its rows.

    Examples:
        >>> split_label("bposd[osd_order=4, max_iter=50]")
        ('bposd', {'osd_order': '4', 'max_iter': '50'})
    """
    m = _LABEL_RE.match(text)
    if not m:
        raise UnknownDecoderError(f"decoder {text!r} must look like name or name[key=value,...]")
    name, inside = m.group(1), m.group(2)
    if inside is None:
        return name, {}
    if not inside.strip():
        raise UnknownDecoderError(f"decoder {text!r}: empty brackets; write {name!r} for its defaults, or "
                                  f"{name}[key=value,...]")
    items = inside.split(",")
    if any(not x.strip() for x in items):
        raise UnknownDecoderError(f"decoder {text!r}: an empty parameter (a stray comma?); write "
                                  f"{name}[key=value,...]")
    return name, _key_values(items, text)


def _key_values(items: Sequence[str], where: str) -> dict[str, str]:
    """``["key=value", ...]`` -> ``{key: value}`` (stripped); a malformed or repeated key is refused."""
    params: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise UnknownDecoderError(f"decoder {where!r}: parameter {item.strip()!r} must look like key=value")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise UnknownDecoderError(f"decoder {where!r}: parameter {item.strip()!r} has no name before '='")
        if key in params:  # last-one-wins would hide a typo or a stale copy of the key
            raise UnknownDecoderError(f"decoder {where!r}: parameter {key!r} is given twice")
        params[key] = value.strip()
    return params


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


@dataclasses.dataclass(frozen=True)
class DecoderSpec:
    """Picklable decoder recipe: registry name and resolved parameters (sorted tuple of pairs).

    Examples:
        >>> DecoderSpec.create("pymatching").label()
        'pymatching'
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    #: The sinter name this spec was read from (``qd-bposd[osd_order=20]``), recorded verbatim in
    #: place of :meth:`label`; ``None`` for a request. Not part of the configuration (equality).
    recorded_as: str | None = dataclasses.field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str, params: Mapping[str, Any] | Sequence[str] | None = None) -> "DecoderSpec":
        """A decoder as a user writes it: a request ``name[key=value,...]`` or a sinter name ``qd-...``.

        A request takes today's defaults (:meth:`create`); ``params`` (a mapping or ``"key=value"``
        strings, e.g. ``--param``) add to its brackets, and a key given in both is an error. A sinter
        name is a recorded label (:meth:`from_label`) kept verbatim in :attr:`recorded_as`, since sinter
        records it as written; it takes no ``params``.

        Examples:
            >>> DecoderSpec.parse("bposd[osd_order=4]") == DecoderSpec.create("bposd", {"osd_order": 4})
            True
            >>> spec = DecoderSpec.parse("qd-bposd[osd_order=4]")
            >>> spec.record_label, dict(spec.params)["osd_key"]
            ('qd-bposd[osd_order=4]', 'last')
        """
        text = text.strip()
        given: dict[str, Any] = {}
        if params:
            given = dict(params) if isinstance(params, Mapping) else _key_values(params, text)
        if text.startswith(SINTER_PREFIX):
            if given:
                raise UnknownDecoderError(f"decoder {text!r} is a sinter name, recorded as written; put its "
                                          f"parameters inside its brackets")
            spec = cls.from_label(text[len(SINTER_PREFIX):])
            return dataclasses.replace(spec, recorded_as=text)
        name, own = split_label(text)
        both = sorted(set(own) & set(given))
        if both:
            raise UnknownDecoderError(f"decoder {text!r}: parameter {both[0]!r} is given twice")
        return cls.create(name, {**given, **own})

    @property
    def record_label(self) -> str:
        """The name a stats CSV records for this spec: :attr:`recorded_as`, else :meth:`label`."""
        return self.recorded_as if self.recorded_as is not None else self.label()

    @classmethod
    def create(cls, name: str, params: Mapping[str, Any] | Sequence[str] | None = None) -> "DecoderSpec":
        """A request: resolve ``params`` (a mapping, or ``"key=value"`` strings) against the registry.

        Unknown names or parameters and unconvertible values raise
        :class:`UnknownDecoderError` naming the problem. Parameters not given take their current
        defaults; the spec's :meth:`label` spells the result out.
        """
        return cls._resolve(name, params, recorded=False)

    @classmethod
    def from_label(cls, label: str) -> "DecoderSpec":
        """A recorded label, ``name`` or ``name[key=value,...]``, read back with the meaning it had.

        Where :meth:`create` fills in today's defaults, this fills each parameter the label leaves
        out with its label-implied value (:attr:`Param.implied
        <qdecode.decoders.params.Param.implied>`): a label written before a default changed keeps
        its meaning, so ``DecoderSpec.from_label(spec.label()) == spec`` for every spec, today's
        and every earlier one.

        Examples:
            >>> spec = DecoderSpec.create("bposd", {"osd_order": 4})
            >>> DecoderSpec.from_label(spec.label()) == spec
            True
            >>> dict(DecoderSpec.from_label("bposd").params)["osd_key"]  # recorded before sum4 was the default
            'last'
            >>> dict(DecoderSpec.create("bposd").params)["osd_key"]
            'sum4'
        """
        name, params = split_label(label)
        return cls._resolve(name, params, recorded=True)

    @classmethod
    def _resolve(cls, name: str, params: Mapping[str, Any] | Sequence[str] | None, recorded: bool) -> "DecoderSpec":
        entry = get_entry(name)
        if params is None:
            params = {}
        given: dict[str, Any] = dict(params) if isinstance(params, Mapping) else _key_values(params, name)
        inner: Mapping[str, Param] = {}
        where = repr(name)
        if entry.nested is not None:
            inner, where = _nested_params(entry, given, recorded)
        extra = {"heralds": HERALDS_PARAM} if entry.kind == "quantum" else {}
        unknown = sorted(set(given) - set(entry.params) - set(inner) - set(extra))
        if unknown:
            known = ", ".join([*sorted(entry.params), *sorted(inner), *extra]) or "none"
            raise UnknownDecoderError(f"decoder {where} has no parameter {unknown[0]!r} (known: {known})")
        resolved = []
        for group in (entry.params, inner):
            values = {key: spec.convert(key, given[key], name) if key in given else
                      (spec.implied if recorded else spec.default) for key, spec in group.items()}
            if recorded:  # implied values that depend on the label's other parameters (Param.implied_by)
                values.update({key: spec.implied_by(dict(values)) for key, spec in group.items()
                               if key not in given and spec.implied_by is not None})
            resolved += sorted(values.items())
        if "heralds" in given:  # every quantum decoder's, kept only where it is not the default (labels unchanged)
            mode = HERALDS_PARAM.convert("heralds", given["heralds"], name)
            if mode != HERALDS_PARAM.default:
                resolved.append(("heralds", mode))
        return cls(name=name, params=tuple(resolved))

    def label(self) -> str:
        """The canonical label: the name and every parameter that the label cannot leave out
        (module docstring), sorted: ``from_label(spec.label()) == spec``."""
        entry = _known(self.name)
        defs = dict(entry.params) if entry is not None else {}
        if entry is not None and entry.nested is not None:
            inner = _known(str(dict(self.params).get(entry.nested)))
            if inner is not None:
                defs = {**inner.params, **defs}
        shown = [(k, v) for k, v in self.params if k not in defs or defs[k].shown_in_label(v)]
        if not shown:
            return self.name
        return f"{self.name}[{','.join(f'{k}={_format_value(v)}' for k, v in shown)}]"

    @property
    def kind(self) -> str:
        """``"quantum"`` (built from a DecodingProblem) or ``"classical"`` (built from a code)."""
        return get_entry(self.name).kind

    def build(self, problem: DecodingProblem | Any) -> Decoder | BlockDecoder:
        """The decoder: a syndrome :class:`~qdecode.decoders.base.Decoder` compiled for a ``DecodingProblem``
        (kind ``quantum``), or a :class:`~qdecode.decoders.block.BlockDecoder` for a code object (``classical``).

        A problem with herald detectors gets a :class:`~qdecode.decoders.heralded.HeraldedDecoder` around the
        decoder (herald-aware where the entry takes per-shot priors). A decoder that cannot decode the problem
        refuses here, before any shot is sampled (sinter's
        ``compile_decoder_for_dem`` calls this), with a :class:`DecoderInputError` whose one line
        starts with the decoder's name (added where the decoder's own message does not).
        """
        from qdecode.decoders.base import DecoderInputError

        entry = get_entry(self.name)
        given = {"specs": type(self)} if entry.builds_decoders else {}
        params = dict(self.params)
        mode = params.pop("heralds", HERALDS_PARAM.default)
        try:
            heralds = getattr(problem, "heralds", None) if entry.kind == "quantum" else None
            if heralds is not None and mode == "checks":
                return entry.factory(problem.without_heralds(), **given, **params)
            if heralds is not None:
                from qdecode.decoders.heralded import HeraldedDecoder

                if mode != HERALDS_PARAM.default:
                    problem = dataclasses.replace(problem, heralds=dataclasses.replace(heralds, mode=mode))
                return HeraldedDecoder(problem, lambda p: entry.factory(p, **given, **params),
                                       entry.takes_shot_priors)
            return entry.factory(problem, **given, **params)
        except DecoderInputError as exc:
            if str(exc).startswith(self.name):
                raise
            raise type(exc)(f"{self.name}: {exc}") from None


def changed_defaults(name: str) -> dict[str, tuple[Any, Any]]:
    """Where the bare name read as a recorded label and as a request differ:
    ``{parameter: (label-implied value, today's default)}``, sorted by parameter.

    ``DecoderSpec.from_label(name)`` (a CSV's ``decoder`` column, the sinter name ``qd-<name>``)
    takes the first value, ``DecoderSpec.create(name)`` (``--decoder <name>``) the second; empty
    for a decoder none of whose defaults changed after labels were recorded.

    Examples:
        >>> changed_defaults("bposd"), changed_defaults("pymatching")
        ({'osd_key': ('last', 'sum4')}, {})
    """
    old, new = dict(DecoderSpec.from_label(name).params), dict(DecoderSpec.create(name).params)
    return {key: (old[key], new[key]) for key in sorted(old) if old[key] != new.get(key)}


def _nested_params(entry: DecoderEntry, given: Mapping[str, Any],
                   recorded: bool) -> tuple[Mapping[str, Param], str]:
    """The inner decoder's parameters of a nested entry, and ``"'window' (inner='bposd')"`` for messages."""
    key = entry.nested
    assert key is not None
    outer = entry.params[key]
    inner_name = outer.convert(key, given.get(key, outer.implied if recorded else outer.default), entry.name)
    if inner_name not in decoder_names():
        raise UnknownDecoderError(
            f"decoder {entry.name!r}: {key}={inner_name!r} is not a registered decoder "
            f"(known: {', '.join(decoder_names())})"
        )
    inner = get_entry(inner_name)
    if inner.kind != entry.kind:
        raise UnknownDecoderError(f"decoder {entry.name!r}: {key}={inner_name!r} is a {inner.kind} decoder")
    if inner.nested is not None or inner_name == "auto":  # auto resolves once per model, not per window
        raise UnknownDecoderError(f"decoder {entry.name!r}: {key}={inner_name!r} cannot be nested inside it")
    clash = sorted(set(inner.params) & set(entry.params))
    if clash:
        raise UnknownDecoderError(
            f"decoder {entry.name!r}: {key}={inner_name!r} has parameter {clash[0]!r}, which clashes with its own"
        )
    return inner.params, f"{entry.name!r} ({key}={inner_name!r})"


def decoder(name: str | DecoderSpec, problem_or_dem: Any, **params: Any) -> Decoder | BlockDecoder:
    """Build registry decoder ``name`` with ``params`` (defaults filled in, validated).

    ``name``: a decoder name or label string, or a :class:`DecoderSpec` (which carries its
    parameters, so it takes no ``params``). ``problem_or_dem``: a
    :class:`~qdecode.problem.DecodingProblem` or a ``stim.DetectorErrorModel`` for quantum decoders,
    a code object for classical ones. ``decoder("bposd", dem, osd_order=4)`` and
    ``decoder("bposd[osd_order=4]", dem)`` are ``--decoder bposd[osd_order=4]``; a sinter name
    (``"qd-bposd[osd_order=4]"``) is read as the plug-in reads it (:meth:`DecoderSpec.parse`).

    Raises:
        UnknownDecoderError: an unknown name or parameter, or a bad value (a bool for a number too).
        TypeError: ``name`` neither a string nor a DecoderSpec (``None``, a number...); a quantum
            decoder given anything but a DecodingProblem or a stim DEM (a path, a circuit, None...);
            a classical decoder given a DEM or a DecodingProblem. Each message says what to pass.
    """
    if isinstance(name, DecoderSpec):
        if params:
            raise TypeError(f"decoder(spec, ...) takes no parameters (got {', '.join(sorted(params))}): a "
                            f"DecoderSpec carries its own; use DecoderSpec.create(name, params)")
        spec = name
    elif isinstance(name, str):
        spec = DecoderSpec.parse(name, params)
    else:
        raise TypeError(f"decoder() takes a decoder name or label string ('bposd', 'bposd[osd_order=4]') or a "
                        f"DecoderSpec as its first argument, got {_type_name(name)}")
    if spec.kind == "quantum":
        return spec.build(_as_problem(name if isinstance(name, str) else spec.name, problem_or_dem))
    if type(problem_or_dem).__name__ in ("DecodingProblem", "DetectorErrorModel"):
        raise TypeError(_classical_on_syndromes(spec.name, type(problem_or_dem).__name__))
    return spec.build(problem_or_dem)


def _type_name(value: Any) -> str:
    """``None``, ``int``, ``numpy.ndarray``...: a value's type as a message names it."""
    if value is None:
        return "None"
    module = type(value).__module__.split(".")[0]
    return type(value).__qualname__ if module == "builtins" else f"{module}.{type(value).__qualname__}"


def _classical_on_syndromes(name: str, got: str) -> str:
    """The message for classical decoder ``name`` given a syndrome problem, naming the syndrome
    decoders of the same family: the quantum entries with a ``-``-separated word ending in ``name``'s
    last word (``osd``, ``sem-osd`` -> ``bposd``, ``bposd-e``)."""
    word = name.rsplit("-", 1)[-1]
    fits = [n for n in decoder_names() if n != name and any(w.endswith(word) for w in n.split("-"))
            and get_entry(n).kind == "quantum"]
    hint = (f"did you mean {' or '.join(fits)}?" if fits else
            "use a syndrome decoder (pymatching, bposd, relay-bp, ...; decoder_names() lists them all)")
    return (f"decoder {name!r} is a classical decoder: it decodes a classical code's words (a qdecode.codes "
            f"object, e.g. with a generator matrix) from channel LLRs, not the syndromes of a {got}; for "
            f"syndrome decoding, {hint}")


def _as_problem(name: str, target: Any) -> DecodingProblem:
    """``target`` as a DecodingProblem: itself, or built from a ``stim.DetectorErrorModel``.

    Anything else is a one-line ``TypeError`` saying what is accepted, instead of an
    ``AttributeError`` from deep inside the decoder (``'str' object has no attribute 'H'``).
    stim objects are recognised by their type's name, so this module never imports stim.
    """
    import os

    from qdecode.problem import DecodingProblem

    if isinstance(target, DecodingProblem):
        return target
    if type(target).__name__ == "DetectorErrorModel":
        return DecodingProblem.from_dem(target)
    kind = _type_name(target)
    hint = ""
    if isinstance(target, (str, os.PathLike)):
        kind = f"the path {os.fspath(target)!r}"
        hint = ("; to read a .dem file pass stim.DetectorErrorModel.from_file(path) "
                "(or DecodingProblem.from_dem(stim.DetectorErrorModel.from_file(path)))")
    elif type(target).__name__ == "Circuit" and hasattr(target, "detector_error_model"):
        kind = "a stim.Circuit"
        hint = "; pass circuit.detector_error_model(decompose_errors=True)"
    raise TypeError(f"decoder({name!r}, ...) takes a DecodingProblem or a stim.DetectorErrorModel, "
                    f"got {kind}{hint}")
