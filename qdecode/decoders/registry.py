"""Decoder registry: build any decoder from a name plus parameters.

A :class:`DecoderSpec` is a picklable recipe (registry name + resolved, sorted
parameters) shipped to worker processes; ``spec.build(problem)`` compiles the
decoder there. ``spec.label()`` names the decoder *with* every parameter
(defaults included), e.g. ``bp[alpha=0.625,max_iter=100]``; the label goes into
the stats CSV's ``decoder`` column and the strong_id, so a resumed sweep never
pools two configurations. Parameters registered with ``in_label=False`` change how a
decoder runs but never its results (e.g. GDG's ``branch_threads``); they are left out
of the label. Parameters registered with ``label_default=False`` (options added to a decoder
after results were recorded, e.g. sem-OSD's ``prior``) appear in the label only when they
differ from their default, so the existing labels stay valid. A decoder without parameters is labelled by its bare
name (``pymatching``), which is also sinter's name for the same decoder.

Nested decoders: an entry registered with ``nested="inner"`` (the ``window`` decoder) has a
string parameter naming another registered decoder, and it accepts that decoder's parameters
as well, validated against the inner entry (defaults filled in, unknown names rejected).
Its params are its own (sorted) followed by the inner decoder's (sorted), so the label reads
``window[F=1,W=3,inner=bposd,per_round=0,alpha=1.0,...,osd_order=10,...]``; the factory
receives all of them as keyword arguments.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from qdecode.decoders.base import Decoder
from qdecode.problem import DecodingProblem


class UnknownDecoderError(ValueError):
    """A decoder name or parameter that the registry does not know, or a bad value."""


@dataclasses.dataclass(frozen=True)
class Param:
    """One decoder parameter: its type (int, float, bool or str), default and meaning."""

    type: type
    default: Any
    doc: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None
    in_label: bool = True  # False: execution only (results unchanged), left out of DecoderSpec.label()
    label_default: bool = True  # False: left out of the label while it has its default (a later-added option)

    def convert(self, name: str, value: Any, decoder: str) -> Any:
        """Coerce ``value`` (possibly a command-line string) to this parameter's type."""
        try:
            if self.type is bool:
                if isinstance(value, str):
                    low = value.strip().lower()
                    if low not in ("1", "0", "true", "false", "yes", "no"):
                        raise ValueError(value)
                    out: Any = low in ("1", "true", "yes")
                else:
                    out = bool(value)
            elif self.type is int:
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                out = int(value)
            elif self.type is float:
                out = float(value)
            else:
                out = str(value)
        except (TypeError, ValueError):
            raise UnknownDecoderError(
                f"decoder {decoder!r}: parameter {name}={value!r} is not a valid {self.type.__name__}"
            ) from None
        if self.choices is not None and out not in self.choices:
            raise UnknownDecoderError(f"decoder {decoder!r}: {name}={out!r} must be one of {list(self.choices)}")
        if self.type in (int, float) and not (out == out):  # NaN
            raise UnknownDecoderError(f"decoder {decoder!r}: {name} must be a number, got {value!r}")
        if self.minimum is not None and out < self.minimum:
            raise UnknownDecoderError(f"decoder {decoder!r}: {name}={out!r} must be >= {self.minimum}")
        if self.maximum is not None and out > self.maximum:
            raise UnknownDecoderError(f"decoder {decoder!r}: {name}={out!r} must be <= {self.maximum}")
        return out


@dataclasses.dataclass(frozen=True)
class DecoderEntry:
    name: str
    factory: Callable[..., Decoder]
    params: Mapping[str, Param]
    doc: str
    nested: str | None = None  # a str parameter naming a decoder whose parameters this one also takes
    kind: str = "quantum"  # "quantum": factory(DecodingProblem); "classical": factory(code), decode_llr_batch


_REGISTRY: dict[str, DecoderEntry] = {}


def register(
    name: str,
    factory: Callable[..., Decoder],
    params: Mapping[str, Param] | None = None,
    doc: str = "",
    nested: str | None = None,
    kind: str = "quantum",
) -> None:
    """Register ``factory(problem, **params) -> Decoder`` under ``name``.

    ``nested``: name of a ``str`` parameter that names an inner decoder whose parameters this
    decoder also accepts (see the module docstring). ``kind="classical"``: the factory takes a
    classical code object instead (``factory(code, **params)``) and the decoder exposes
    ``decode_llr_batch(llr (S, n) float) -> codewords (S, n) uint8``.
    """
    if kind not in ("quantum", "classical"):
        raise ValueError(f"decoder {name!r}: kind must be 'quantum' or 'classical', got {kind!r}")
    params = dict(params or {})
    if nested is not None and (nested not in params or params[nested].type is not str):
        raise ValueError(f"decoder {name!r}: nested parameter {nested!r} must be one of its str parameters")
    _REGISTRY[name] = DecoderEntry(name=name, factory=factory, params=params, doc=doc, nested=nested, kind=kind)


def decoder_names() -> list[str]:
    return sorted(_REGISTRY)


def get_entry(name: str) -> DecoderEntry:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownDecoderError(f"unknown decoder {name!r}; known decoders: {', '.join(decoder_names())}") from None


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

    @classmethod
    def create(cls, name: str, params: Mapping[str, Any] | Sequence[str] | None = None) -> "DecoderSpec":
        """Resolve ``params`` (a mapping, or ``"key=value"`` strings) against the registry.

        Unknown names or parameters and unconvertible values raise
        :class:`UnknownDecoderError` naming the problem. Defaults are filled in.
        """
        entry = get_entry(name)
        given: dict[str, Any] = {}
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            for item in params:
                if "=" not in item:
                    raise UnknownDecoderError(f"decoder {name!r}: parameter {item!r} must look like key=value")
                key, value = item.split("=", 1)
                given[key.strip()] = value.strip()
        else:
            given = dict(params)
        inner: Mapping[str, Param] = {}
        where = repr(name)
        if entry.nested is not None:
            inner, where = _nested_params(entry, given)
        unknown = sorted(set(given) - set(entry.params) - set(inner))
        if unknown:
            known = ", ".join([*sorted(entry.params), *sorted(inner)]) or "none"
            raise UnknownDecoderError(f"decoder {where} has no parameter {unknown[0]!r} (known: {known})")
        resolved = []
        for group in (entry.params, inner):
            resolved += sorted(
                (key, spec.convert(key, given[key], name) if key in given else spec.default)
                for key, spec in group.items()
            )
        return cls(name=name, params=tuple(resolved))

    def label(self) -> str:
        entry = _REGISTRY.get(self.name)
        defs = dict(entry.params) if entry is not None else {}
        if entry is not None and entry.nested is not None:
            inner = dict(self.params).get(entry.nested)
            if inner in _REGISTRY:
                defs = {**_REGISTRY[inner].params, **defs}
        shown = [(k, v) for k, v in self.params
                 if k not in defs or (defs[k].in_label and (defs[k].label_default or v != defs[k].default))]
        if not shown:
            return self.name
        return f"{self.name}[{','.join(f'{k}={_format_value(v)}' for k, v in shown)}]"

    @property
    def kind(self) -> str:
        """``"quantum"`` (built from a DecodingProblem) or ``"classical"`` (built from a code)."""
        return get_entry(self.name).kind

    def build(self, problem: DecodingProblem) -> Decoder:
        return get_entry(self.name).factory(problem, **dict(self.params))


def _nested_params(entry: DecoderEntry, given: Mapping[str, Any]) -> tuple[Mapping[str, Param], str]:
    """The inner decoder's parameters of a nested entry, and ``"'window' (inner='bposd')"`` for messages."""
    key = entry.nested
    assert key is not None
    inner_name = entry.params[key].convert(key, given.get(key, entry.params[key].default), entry.name)
    if inner_name not in _REGISTRY:
        raise UnknownDecoderError(
            f"decoder {entry.name!r}: {key}={inner_name!r} is not a registered decoder "
            f"(known: {', '.join(decoder_names())})"
        )
    inner = _REGISTRY[inner_name]
    if inner.kind != entry.kind:
        raise UnknownDecoderError(f"decoder {entry.name!r}: {key}={inner_name!r} is a {inner.kind} decoder")
    if inner.nested is not None:
        raise UnknownDecoderError(f"decoder {entry.name!r}: {key}={inner_name!r} cannot be nested inside it")
    clash = sorted(set(inner.params) & set(entry.params))
    if clash:
        raise UnknownDecoderError(
            f"decoder {entry.name!r}: {key}={inner_name!r} has parameter {clash[0]!r}, which clashes with its own"
        )
    return inner.params, f"{entry.name!r} ({key}={inner_name!r})"


def _bp_params(max_iter: int) -> dict[str, Param]:
    return {
        "max_iter": Param(int, max_iter, "iteration limit (>= 1)", minimum=1),
        "alpha": Param(float, 1.0, "min-sum scaling in [0, 1]; 0 = adaptive 1 - 2^-t", minimum=0, maximum=1),
        "beta": Param(float, 0.0, "min-sum offset (LLR units)", minimum=0),
        "schedule": Param(str, "flooding", "flooding | layered (check-serial)", ("flooding", "layered")),
        "bits": Param(int, 0, "0 = floating point, else fixed-point message bits (2..24)", minimum=0, maximum=24),
        "frac_bits": Param(int, 3, "fixed-point fraction bits", minimum=0),
    }


def _register_builtins() -> None:
    from qdecode.decoders.bp import BpDecoder
    from qdecode.decoders.bposd import BpOsdDecoder
    from qdecode.decoders.matching import MatchingDecoder

    register(
        "pymatching",
        lambda problem: MatchingDecoder(problem, correlated=False),
        doc="minimum-weight perfect matching (PyMatching)",
    )
    register(
        "pymatching-correlated",
        lambda problem: MatchingDecoder(problem, correlated=True),
        doc="PyMatching two-pass correlated matching (needs a DEM with decomposed hyperedges)",
    )
    from qdecode.decoders.relay import register_relay

    register_relay()
    from qdecode.decoders.gdg import register_gdg

    register_gdg()
    register("bp", lambda problem, **kw: BpDecoder(problem, method="minsum", **kw), _bp_params(100),
             doc="min-sum belief propagation (numba; float or fixed point)")
    ps = {k: v for k, v in _bp_params(100).items() if k not in ("alpha", "beta", "bits", "frac_bits")}
    register("bp-ps", lambda problem, **kw: BpDecoder(problem, method="productsum", **kw), ps,
             doc="product-sum belief propagation (numba, float)")
    osd = {"osd_order": Param(int, 10, "OSD order w (clamped to n - rank H)", minimum=0)}
    register("bposd", lambda problem, **kw: BpOsdDecoder(problem, osd_method="osd_cs", method="minsum", **kw),
             {**_bp_params(80), **osd}, doc="min-sum BP + OSD-CS (combination sweep) on non-converged shots")
    register("bposd-e", lambda problem, **kw: BpOsdDecoder(problem, osd_method="osd_e", method="minsum", **kw),
             {**_bp_params(80), "osd_order": Param(int, 4, "OSD-E order w (2^w - 1 candidates)", minimum=0, maximum=24)},
             doc="min-sum BP + exhaustive OSD-E on non-converged shots")
    from qdecode.decoders.bp_matching import register_bp_matching

    register_bp_matching()
    from qdecode.decoders.nn_pymatching import register_nn_pymatching

    register_nn_pymatching()
    from qdecode.decoders.window import register_window

    register_window()
    from qdecode.decoders.classical import register_classical

    register_classical()


_register_builtins()
