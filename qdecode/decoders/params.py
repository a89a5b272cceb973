"""Decoder parameters, stated once: the :class:`Param` type, registry entries, and class defaults.

A leaf module (standard library only) that every decoder module imports instead of the registry.

* :class:`Param`: one parameter (type, default, bounds, doc, label flags).
* :class:`DecoderEntry`: one registry entry (factory, parameter table, doc, kind). Each decoder
  module defines its entries in a module-level ``ENTRIES`` dict; the registry
  (:mod:`qdecode.decoders.registry`) maps entry names to those modules and imports one only
  when an entry is needed.
* :func:`uses_params`: a class decorator that makes a decoder class's ``__init__`` take its
  defaults (and validation) from the same table as its registry entry, so ``BpOsdDecoder(problem)``
  from Python and ``--decoder bposd`` from the command line are the same decoder. The
  resolved values are kept in ``decoder.params``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Mapping

from qdecode.errors import InputError

__all__ = ["Param", "DecoderEntry", "UnknownDecoderError", "uses_params", "defaults"]


class UnknownDecoderError(InputError):
    """A decoder name or parameter that the registry does not know, or a bad value."""


def _is_bool(value: Any) -> bool:
    """A Python or numpy boolean (numpy's ``bool_`` is not a ``bool`` subclass; matched by name, so
    this leaf module needs no numpy)."""
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool")


class _SameAsDefault:
    """Marker of :attr:`Param.label_implied` left unset (the implied value is the default)."""

    def __repr__(self) -> str:
        return "SAME_AS_DEFAULT"


_SAME_AS_DEFAULT = _SameAsDefault()


@dataclasses.dataclass(frozen=True)
class Param:
    """One decoder parameter: its type (int, float, bool or str), default and meaning.

    ``minimum`` / ``maximum`` bound numbers (inclusive; ``min_exclusive=True`` makes the
    minimum strict, e.g. a min-sum scaling in (0, 1]).
    """

    type: type
    default: Any
    doc: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None
    in_label: bool = True  # False: execution only (results unchanged), left out of DecoderSpec.label()
    label_default: bool = True  # False: left out of the label while it has its label-implied value
    min_exclusive: bool = False  # True: the value must be > minimum
    #: The value this parameter takes when a recorded label leaves it out (see :attr:`implied`).
    label_implied: Any = _SAME_AS_DEFAULT
    #: Where that value depends on the label's other parameters: ``implied_by(others)`` gives it, ``others``
    #: being ``{name: value}`` of the decoder's other parameters as the label gives them or implies them
    #: (relay-bp's ``bits``: 8 for an ``ensemble > 1``, whose kernel runs 8-bit messages, else float64's 0).
    #: Such a parameter is always spelled out in labels (``label_default``), so a label's meaning never
    #: depends on it. None: :attr:`implied`.
    implied_by: Callable[[Mapping[str, Any]], Any] | None = None

    def __post_init__(self) -> None:
        if self.implied_by is not None and not self.label_default:
            raise TypeError("Param: a parameter with implied_by must keep label_default=True (always in labels)")

    @property
    def implied(self) -> Any:
        """The value a recorded label that leaves this parameter out stands for.

        Labels are permanent: a CSV's ``decoder`` column, and a sinter plug-in name, mean forever
        what they meant when written. A parameter leaves a label out while it has this value
        (with ``label_default=False``), and :meth:`DecoderSpec.from_label
        <qdecode.decoders.registry.DecoderSpec.from_label>` fills it in where a label is silent.
        It is the default, except where the default changed after labels were recorded: then
        ``label_implied`` keeps the old default, so the old spelling keeps its meaning and the new
        default is spelled out (``bposd[...,osd_key=sum4,...]``).
        """
        return self.default if self.label_implied is _SAME_AS_DEFAULT else self.label_implied

    def shown_in_label(self, value: Any) -> bool:
        """Whether a label spells this parameter at ``value``."""
        return self.in_label and (self.label_default or value != self.implied)

    def convert(self, name: str, value: Any, decoder: str) -> Any:
        """Coerce ``value`` (possibly a command-line string) to this parameter's type.

        A bool is refused for an int or float parameter: ``int(True) == 1`` would quietly turn
        ``osd_order=True`` into order 1.
        """
        if self.type in (int, float) and _is_bool(value):
            raise UnknownDecoderError(
                f"decoder {decoder!r}: parameter {name}={value!r} is a bool; {name} takes "
                f"{'an int' if self.type is int else 'a float'}"
            )
        try:
            if self.type is bool:
                if isinstance(value, str):
                    low = value.strip().lower()
                    if low not in ("1", "0", "true", "false", "yes", "no"):
                        raise InputError(value)
                    out: Any = low in ("1", "true", "yes")
                else:
                    out = bool(value)
            elif self.type is int:
                if isinstance(value, float) and not value.is_integer():
                    raise InputError(value)
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
        if self.minimum is not None and (out <= self.minimum if self.min_exclusive else out < self.minimum):
            raise UnknownDecoderError(
                f"decoder {decoder!r}: {name}={out!r} must be {'>' if self.min_exclusive else '>='} {self.minimum}"
            )
        if self.maximum is not None and out > self.maximum:
            raise UnknownDecoderError(f"decoder {decoder!r}: {name}={out!r} must be <= {self.maximum}")
        return out


@dataclasses.dataclass(frozen=True)
class DecoderEntry:
    """A registry entry: ``factory(problem_or_code, **params) -> decoder`` and its parameter table.

    ``has_confidence``: the decoder's ``predict_with_confidence`` gives a gap
    (:mod:`qdecode.decoders.confidence`); asked through ``get_entry(name).has_confidence`` without
    building a decoder (``qdecode predict --gap-out`` refuses the others before decoding).
    """

    name: str
    factory: Callable[..., Any]
    params: Mapping[str, Param]
    doc: str
    nested: str | None = None  # a str parameter naming a decoder whose parameters this one also takes
    kind: str = "quantum"  # "quantum": factory(DecodingProblem) -> Decoder; "classical": factory(code) -> BlockDecoder
    has_confidence: bool = False  # predict_with_confidence gives a gap (same as the decoder's class attribute)
    #: The factory builds other decoders (``window``'s inner, ``auto``'s candidates): the registry passes it
    #: ``specs=``, its spec class (``DecoderSpec``: ``create`` / ``parse`` / ``from_label``, then ``build``), so
    #: that a nested decoder's module never imports the registry (no import cycle, no service locator).
    builds_decoders: bool = False
    #: The decoder takes per-shot priors (``Decoder.takes_shot_priors``): on a problem with herald detectors
    #: the registry runs it herald-aware (:mod:`qdecode.decoders.heralded`); others see the heralds as checks.
    takes_shot_priors: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("quantum", "classical"):
            raise InputError(f"decoder {self.name!r}: kind must be 'quantum' or 'classical', got {self.kind!r}")
        object.__setattr__(self, "params", dict(self.params))
        if self.nested is not None and (self.nested not in self.params or self.params[self.nested].type is not str):
            raise InputError(f"decoder {self.name!r}: nested parameter {self.nested!r} "
                             f"must be one of its str parameters")


def defaults(params: Mapping[str, Param]) -> dict[str, Any]:
    """``{name: default}`` of a parameter table."""
    return {k: p.default for k, p in params.items()}


def uses_params(
    params: Mapping[str, Param],
    *,
    record: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None,
) -> Callable[[type], type]:
    """Class decorator: ``__init__`` takes its defaults and validation from ``params``.

    Every name in ``params`` that is a parameter of ``__init__`` must be written there
    *without* a default (the table's default is installed), so the value is stated once.
    Values passed from Python are checked by the class itself (its own error types and
    messages); the registry checks command-line values against the same table. After
    construction ``self.params`` holds the resolved registry-level parameters: the
    table's names bound from the call, or ``record(self, arguments)`` where the class
    spells some of them differently (e.g. Relay-BP's ``gamma_interval``).
    """
    table = dict(params)

    def wrap(cls: type) -> type:
        init = cls.__init__
        sig = inspect.signature(init)
        named = {k: p for k, p in sig.parameters.items() if k in table}
        new_params = []
        for k, p in sig.parameters.items():
            if k in table:
                if p.default is not inspect.Parameter.empty:
                    raise TypeError(f"{cls.__name__}.__init__: {k} has a default; it comes from the parameter table")
                if p.kind not in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
                    raise TypeError(f"{cls.__name__}.__init__: {k} must be a named parameter")
                p = p.replace(default=table[k].default)
            new_params.append(p)
        sig = sig.replace(parameters=new_params)
        kwdefaults = dict(init.__kwdefaults__ or {})
        kwdefaults.update({k: table[k].default for k, p in named.items() if p.kind is inspect.Parameter.KEYWORD_ONLY})
        init.__kwdefaults__ = kwdefaults
        pos = [p for p in new_params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        init.__defaults__ = tuple(p.default for p in pos if p.default is not inspect.Parameter.empty) or None

        @functools.wraps(init)
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            init(*bound.args, **bound.kwargs)
            if type(self).__init__ is __init__:  # the outermost decorated class records its parameters
                args_ = dict(bound.arguments)
                self.params = record(self, args_) if record is not None else {k: args_[k] for k in named}

        __init__.__signature__ = sig  # type: ignore[attr-defined]
        cls.__init__ = __init__  # type: ignore[misc]
        cls.PARAMS = table  # type: ignore[attr-defined]
        return cls

    return wrap
