"""The code catalogue: the names accepted by ``--code`` and ``qdecode circuit``.

Each entry records the parameters, kind and provenance of a code and a builder.
Entries are keyed by the exact CLI spelling. Parametrised families (``surface``)
take ``d``; fixed codes reject a conflicting ``d``. Classical codes will be added
with ``kind="classical-linear"`` and a builder returning their own code type.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from .bb import bb_code
from .surface import rotated_surface_code

__all__ = ["CatalogEntry", "UnknownCodeError", "CATALOG", "get_code", "list_codes", "code_names"]


class UnknownCodeError(KeyError, ValueError):
    """An unknown code name (a ``KeyError`` and a ``ValueError``); the message lists valid names."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


@dataclasses.dataclass(frozen=True)
class CatalogEntry:
    """One catalogue row.

    Attributes:
        name: CLI name.
        kind: ``"quantum-css"`` (later also ``"classical-linear"``).
        family: ``"surface"``, ``"bb"``, ...
        n, k, d: parameters; ``None`` where they depend on ``d`` (parametrised families).
        provenance: paper / arXiv reference.
        builder: ``builder(d)`` for parametrised entries, ``builder()`` otherwise.
        parametrised: whether ``d`` is required.
        notes: short extra text (polynomials, conventions).
    """

    name: str
    kind: str
    family: str
    n: int | None
    k: int | None
    d: int | None
    provenance: str
    builder: Callable[..., Any]
    parametrised: bool = False
    notes: str = ""

    def build(self, d: int | None = None) -> Any:
        """Build the code (``d`` is required for parametrised entries)."""
        if self.parametrised:
            if d is None:
                raise ValueError(f"code {self.name!r} needs a distance d (e.g. d=5)")
            return self.builder(d)
        if d is not None and self.d is not None and int(d) != self.d:
            raise ValueError(f"code {self.name!r} has fixed distance {self.d}; got d={d}")
        return self.builder()


_BRAVYI = "Bravyi et al., Nature 627, 778 (2024), arXiv:2308.07915"


def _bb_entry(name: str, l: int, m: int, A: list[str], B: list[str], n: int, k: int, d: int) -> CatalogEntry:
    build = functools.lru_cache(maxsize=1)(
        lambda: bb_code(l, m, A, B, name=name, d=d, provenance=_BRAVYI)
    )
    return CatalogEntry(
        name=name, kind="quantum-css", family="bb", n=n, k=k, d=d, provenance=_BRAVYI,
        builder=build, notes=f"l={l}, m={m}, A={'+'.join(A)}, B={'+'.join(B)}",
    )


CATALOG: dict[str, CatalogEntry] = {
    "surface": CatalogEntry(
        name="surface", kind="quantum-css", family="surface", n=None, k=1, d=None,
        provenance="rotated surface code; Horsman et al., NJP 14, 123011 (2012), arXiv:1111.4022",
        builder=rotated_surface_code, parametrised=True, notes="[[d^2, 1, d]], pass d",
    ),
    "bb72_12_6": _bb_entry("bb72_12_6", 6, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], 72, 12, 6),
    "bb90_8_10": _bb_entry("bb90_8_10", 15, 3, ["x^9", "y", "y^2"], ["1", "x^2", "x^7"], 90, 8, 10),
    "bb108_8_10": _bb_entry("bb108_8_10", 9, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], 108, 8, 10),
    "bb144_12_12": _bb_entry("bb144_12_12", 12, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], 144, 12, 12),
    "bb288_12_18": _bb_entry("bb288_12_18", 12, 12, ["x^3", "y^2", "y^7"], ["y^3", "x", "x^2"], 288, 12, 18),
}


# Classical BCH / Reed-Solomon codes (builders return qdecode.codes.bch.BCHCode / rs.RSCode).
def _bch_entry(name: str, m: int, t: int, n: int, k: int) -> CatalogEntry:
    def build() -> Any:
        from .bch import BCHCode

        return BCHCode(m=m, t=t, name=name)

    return CatalogEntry(
        name=name, kind="classical-linear", family="bch", n=n, k=k, d=2 * t + 1,
        provenance="narrow-sense primitive binary BCH (Bose, Ray-Chaudhuri, Hocquenghem 1959-60); "
                   "galois.BCH convention",
        builder=functools.lru_cache(maxsize=1)(build),
        notes=f"t={t}, GF(2^{m}) default primitive poly, systematic; d = designed distance",
    )


def _rs_entry(name: str, n: int, k: int, m: int) -> CatalogEntry:
    def build() -> Any:
        from .rs import RSCode

        return RSCode(n=n, k=k, m=m, name=name)

    return CatalogEntry(
        name=name, kind="classical-linear", family="rs", n=n, k=k, d=n - k + 1,
        provenance="Reed-Solomon (Reed & Solomon 1960), narrow-sense, shortened; galois.ReedSolomon convention",
        builder=functools.lru_cache(maxsize=1)(build),
        notes=f"GF(2^{m}) symbols (n, k, d in symbols), binary image ({n * m}, {k * m}), LSB-first bits",
    )


CATALOG.update({
    "bch63_45": _bch_entry("bch63_45", 6, 3, 63, 45),
    "bch127_64": _bch_entry("bch127_64", 7, 10, 127, 64),
    "bch255_131": _bch_entry("bch255_131", 8, 18, 255, 131),
    "rs16_8": _rs_entry("rs16_8", 16, 8, 8),
})


# Polar / PAC codes (builders return qdecode.codes.polar.PolarCode / pac.PacCode): the
# CRISP paper's codes (arXiv:2210.00313), whose SC / ML BLERs are in benchmarks/README.md.
def _polar_entry(name: str, N: int, k: int, d: int, pac: bool = False) -> CatalogEntry:
    def build() -> Any:
        if pac:
            from .pac import PacCode

            return PacCode.from_profile(N, k, "rm", name=name)
        from .polar import PolarCode

        return PolarCode.from_construction(N, k, "5g", name=name)

    return CatalogEntry(
        name=name, kind="classical-linear", family="pac" if pac else "polar", n=N, k=k, d=d,
        provenance=("PAC code, Arikan 2019, arXiv:1908.09594" if pac
                    else "polar code, Arikan 2009; 5G NR reliability sequence, 3GPP TS 38.212 Table 5.3.1.2-1"),
        builder=functools.lru_cache(maxsize=1)(build),
        notes=("RM rate profile, convolution g=0o133, no CRC" if pac
               else "5G NR information set, G_N = F^(x)m natural order, no CRC"),
    )


CATALOG.update({
    "polar32_16": _polar_entry("polar32_16", 32, 16, 8),
    "polar64_22": _polar_entry("polar64_22", 64, 22, 8),
    "polar128_64": _polar_entry("polar128_64", 128, 64, 8),
    "pac32_16": _polar_entry("pac32_16", 32, 16, 8, pac=True),
})


def code_names() -> list[str]:
    """All catalogue names, in catalogue order."""
    return list(CATALOG)


def get_entry(name: str) -> CatalogEntry:
    """The catalogue entry for ``name``.

    Raises:
        UnknownCodeError: unknown name (message lists the valid names).
    """
    try:
        return CATALOG[name]
    except (KeyError, TypeError):
        raise UnknownCodeError(
            f"unknown code {name!r}; valid names: {', '.join(CATALOG)}"
        ) from None


def get_code(name: str, d: int | None = None) -> Any:
    """Build a catalogue code by name.

    Args:
        name: a catalogue name (see :func:`code_names`).
        d: distance for parametrised families (``surface``); for fixed codes it
            must be ``None`` or equal the stated distance.

    Returns:
        The code (a :class:`~qdecode.codes.css.CSSCode` for quantum entries).

    Raises:
        UnknownCodeError: unknown name.
        ValueError: ``d`` missing for a family, or inconsistent with a fixed code.
    """
    return get_entry(name).build(d)


def list_codes() -> list[dict[str, Any]]:
    """One row per entry for ``qdecode codes``: name, kind, n, k, d, provenance, notes."""
    rows = []
    for e in CATALOG.values():
        rows.append({
            "name": e.name,
            "kind": e.kind,
            "n": "d^2" if e.parametrised else e.n,
            "k": e.k,
            "d": "d" if e.parametrised else e.d,
            "provenance": e.provenance,
            "notes": e.notes,
        })
    return rows
