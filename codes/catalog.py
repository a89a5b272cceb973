"""The code catalogue: the names accepted by ``--code`` and ``qdecode circuit``.

Each entry records the parameters, kind and provenance of a code, where its distance comes
from (``d_source``) and a builder. Entries are keyed by the exact CLI spelling. Parametrised
families (``surface``, ``toric``, ``repetition``) take ``d``; fixed codes reject a conflicting
``d``. Classical codes have ``kind="classical-linear"`` and builders returning their own code type.

Besides the names, :func:`get_entry` / :func:`get_code` accept a *code spec* for a
bivariate-bicycle code of the user's choice (so it works wherever ``--code`` does)::

    bb[l=12,m=6,A=x3+y+y2,B=y3+x+x2]          # the [[144, 12, 12]] gross code, d unknown
    bb[l=6,m=6,A=x^3+y+y^2,B=y^3+x+x^2,d=6]  # d stated by the user (not verified)
    bb[l=6,m=6,A=x3+y+y2,B=y3+x+x2,d=exact]  # d computed by MILP (time limit 60 s)

``A`` and ``B`` are sums of three monomials ``x^a y^b`` (``x3`` = ``x^3``, ``x2y`` = ``x^2 y``,
``1``); ``k`` is computed by rank; the distance stays unknown (``None``) unless ``d`` is given.

A 5G NR LDPC code block (:class:`~qdecode.codes.nr5g.Nr5gCode`, classical) is a spec too::

    nr5g[bg=2,k=512,n=1024]                   # base graph 2, K' = 512 bits, rate-matched to E = 1024
    nr5g[bg=1,k=8448,n=16896,rv=2,qm=4]       # redundancy version 2, 16QAM bit interleaving

``k`` is the code-block size ``K'`` and ``n`` the rate-matched length ``E`` (what the channel
carries); optional ``rv`` (0..3, default 0), ``qm`` (1, 2, 4, 6, 8; default 1) and ``nref``
(limited-buffer ``N_ref``). A malformed spec raises a one-line ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Callable

from qdecode.errors import InputError

from .bb import bb_code
from .bicycle import GB_INSTANCES, gb_instance
from .color import PROVENANCE as COLOR_PROVENANCE
from .hgp import hgp_hamming7
from .lifted_product import LP_INSTANCES, lp_instance
from .surface import rotated_surface_code
from .toric import repetition_code, toric_code

__all__ = [
    "CatalogEntry", "UnknownCodeError", "CATALOG", "get_code", "get_entry", "list_codes", "code_names",
    "is_code_spec", "parse_bb_spec", "parse_nr5g_spec",
]


class UnknownCodeError(InputError, KeyError):
    """An unknown code name (an :class:`~qdecode.errors.InputError` and a ``KeyError``); the message lists valid
    names."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


@dataclasses.dataclass(frozen=True)
class CatalogEntry:
    """One catalogue row.

    Attributes:
        name: CLI name.
        kind: ``"quantum-css"`` (later also ``"classical-linear"``).
        family: ``"surface"``, ``"bb"``, ...
        n, k, d: parameters; ``None`` where they depend on ``d`` (parametrised families) or,
            for ``d``, where no value is known.
        provenance: paper / arXiv reference.
        builder: ``builder(d)`` for parametrised entries, ``builder()`` otherwise.
        parametrised: whether ``d`` is required.
        notes: short extra text (polynomials, conventions).
        d_source: where ``d`` comes from: ``"exact: MILP (codes/distance.py)"``, ``"cited: <arXiv id>"``,
            ``"known: ..."`` (a closed form), ``"designed"``, ...
        n_of_d: ``n`` as a function of ``d`` for parametrised entries (default ``d^2``).
        n_expr: that function as shown by ``qdecode codes`` (default ``"d^2"``).
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
    d_source: str = ""
    n_of_d: Callable[[int], int] | None = None
    n_expr: str = "d^2"

    def build(self, d: int | None = None) -> Any:
        """Build the code (``d`` is required for parametrised entries)."""
        if self.parametrised:
            if d is None:
                raise InputError(f"code {self.name!r} needs a distance d (e.g. d=5)")
            return self.builder(d)
        if d is not None and self.d is None:
            raise InputError(f"code {self.name!r} has no known distance, so d={d} cannot be checked; leave d out")
        if d is not None and int(d) != self.d:
            raise InputError(f"code {self.name!r} has fixed distance {self.d}; got d={d}")
        return self.builder()

    def n_at(self, d: int | None = None) -> int | None:
        """``n`` of the code built with distance ``d`` (parametrised entries), else the fixed ``n``."""
        if not self.parametrised:
            return self.n
        if d is None:
            return None
        return self.n_of_d(int(d)) if self.n_of_d is not None else int(d) ** 2


_BRAVYI = "Bravyi et al., Nature 627, 778 (2024), arXiv:2308.07915"
_MILP = "exact: MILP (codes/distance.py)"


def _bb_entry(name: str, l: int, m: int, A: list[str], B: list[str], n: int, k: int, d: int,
              d_source: str = "cited: arXiv:2308.07915") -> CatalogEntry:
    build = functools.lru_cache(maxsize=1)(
        lambda: bb_code(l, m, A, B, name=name, d=d, provenance=_BRAVYI)
    )
    return CatalogEntry(
        name=name, kind="quantum-css", family="bb", n=n, k=k, d=d, provenance=_BRAVYI,
        builder=build, notes=f"l={l}, m={m}, A={'+'.join(A)}, B={'+'.join(B)}", d_source=d_source,
    )


CATALOG: dict[str, CatalogEntry] = {
    "surface": CatalogEntry(
        name="surface", kind="quantum-css", family="surface", n=None, k=1, d=None,
        provenance="rotated surface code; Horsman et al., NJP 14, 123011 (2012), arXiv:1111.4022",
        builder=rotated_surface_code, parametrised=True, notes="[[d^2, 1, d]], pass d", d_source="known: d",
    ),
    "bb72_12_6": _bb_entry("bb72_12_6", 6, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], 72, 12, 6,
                           d_source="cited: arXiv:2308.07915; " + _MILP),
    "bb90_8_10": _bb_entry("bb90_8_10", 15, 3, ["x^9", "y", "y^2"], ["1", "x^2", "x^7"], 90, 8, 10),
    "bb108_8_10": _bb_entry("bb108_8_10", 9, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], 108, 8, 10),
    "bb144_12_12": _bb_entry("bb144_12_12", 12, 6, ["x^3", "y", "y^2"], ["y^3", "x", "x^2"], 144, 12, 12),
    "bb288_12_18": _bb_entry("bb288_12_18", 12, 12, ["x^3", "y^2", "y^7"], ["y^3", "x", "x^2"], 288, 12, 18),
}


# Code constructions (codes/hgp.py, bicycle.py, lifted_product.py, toric.py); the tests
# recompute k by rank and every d whose d_source says "exact" by MILP.
def _fixed_entry(name: str, family: str, n: int, k: int, d: int | None, provenance: str, d_source: str,
                 build: Callable[[], Any], notes: str = "") -> CatalogEntry:
    return CatalogEntry(name=name, kind="quantum-css", family=family, n=n, k=k, d=d, provenance=provenance,
                        builder=functools.lru_cache(maxsize=1)(build), notes=notes, d_source=d_source)


def _exps(e: tuple[int, ...]) -> str:
    return "+".join("1" if v == 0 else f"x^{v}" for v in e)


CATALOG.update({
    "toric": CatalogEntry(
        name="toric", kind="quantum-css", family="toric", n=None, k=2, d=None,
        provenance="toric code, Kitaev, arXiv:quant-ph/9707021 (as HGP of ring codes, arXiv:0903.0566)",
        builder=toric_code, parametrised=True, notes="[[2d^2, 2, d]] on a d x d torus, pass d",
        d_source="known: d", n_of_d=lambda d: 2 * d * d, n_expr="2d^2",
    ),
    "repetition": CatalogEntry(
        name="repetition", kind="quantum-css", family="repetition", n=None, k=1, d=None,
        provenance="bit-flip repetition code (hx empty)", builder=repetition_code, parametrised=True,
        notes="[[d, 1]], pass d; Z-basis memory only is meaningful", d_source="known: d_X = d (bit flips), d_Z = 1",
        n_of_d=lambda d: d, n_expr="d",
    ),
    "hgp58_16_3": _fixed_entry(
        "hgp58_16_3", "hgp", 58, 16, 3, "hypergraph product, Tillich & Zemor, arXiv:0903.0566", _MILP,
        hgp_hamming7, notes="HGP([7,4,3] Hamming, itself)",
    ),
    **{name: _fixed_entry(name, "gb", g.n, g.k, g.d, g.provenance, g.d_source, functools.partial(gb_instance, name),
                          notes=f"GB, l={g.l}, a={_exps(g.a)}, b={_exps(g.b)}")
       for name, g in GB_INSTANCES.items()},
    **{name: _fixed_entry(name, "lp", g.n, g.k, g.d, g.provenance, g.d_source, functools.partial(lp_instance, name),
                          notes=f"GHP / lifted product over Z_{g.l}")
       for name, g in LP_INSTANCES.items()},
})


def _color_code(d: int) -> Any:
    from qdecode.codes.color import triangular_color_code

    return triangular_color_code(d)


CATALOG["color"] = CatalogEntry(
    name="color", kind="quantum-css", family="color", n=None, k=1, d=None, provenance=COLOR_PROVENANCE,
    builder=_color_code, parametrised=True,
    notes="[[(3d^2+1)/4, 1, d]], odd d; superdense circuits (arXiv:2312.08813) for the chromobius decoder",
    d_source="known: d", n_of_d=lambda d: (3 * d * d + 1) // 4, n_expr="(3d^2+1)/4",
)


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
        d_source="designed: 2t+1 (BCH bound, a lower bound)",
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
        d_source="known: n-k+1 (MDS)",
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
        d_source=("exact: weight enumerator (codes/polar.py)" if pac
                  else "exact: min row weight of G_N on the information set"),
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


# ------------------------------------------------------------------ user code specs
_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*$", re.S)
_SPEC_EXAMPLE = "bb[l=12,m=6,A=x3+y+y2,B=y3+x+x2]"
_NR5G_EXAMPLE = "nr5g[bg=2,k=512,n=1024]"
_SPEC_TIME_LIMIT = 60.0  # seconds for d=exact


def is_code_spec(name: object) -> bool:
    """Whether ``name`` is written as a code spec (``family[key=value,...]``) rather than a catalogue name."""
    return isinstance(name, str) and "[" in name


def _spec_error(spec: str, why: str, example: str = _SPEC_EXAMPLE) -> InputError:
    return InputError(f"bad code spec {spec!r}: {why} (expected e.g. {example})")


def _spec_int(spec: str, key: str, value: str) -> int:
    if not re.fullmatch(r"\d+", value) or int(value) < 1:
        raise _spec_error(spec, f"{key} must be a positive integer, got {value!r}")
    return int(value)


def parse_bb_spec(spec: str) -> dict[str, Any]:
    """Parse ``bb[l=..,m=..,A=..,B=..(,d=N|exact)]`` into its parts.

    Returns:
        ``{"l", "m", "A", "B", "d"}`` with ``A``, ``B`` lists of three monomial strings in the
        ``x^a y^b`` form of :func:`qdecode.codes.bb.parse_monomial` and ``d`` an int, ``"exact"`` or
        ``None``.

    Raises:
        ValueError: (one line) not a ``bb[...]`` spec, a missing / repeated / unknown key, or a
            malformed value.
    """
    m = _SPEC.match(spec) if isinstance(spec, str) else None
    if m is None:
        raise _spec_error(str(spec), "not of the form family[key=value,...]")
    family, body = m.group(1).lower(), m.group(2)
    if family != "bb":
        raise _spec_error(spec, f"unknown code family {m.group(1)!r} (specs: bb[...], nr5g[...])")
    fields: dict[str, str] = {}
    for part in body.split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        canon = key if key in ("A", "B") else key.lower() if key.lower() in ("l", "m", "d") else None
        if canon is None and key in ("a", "b"):
            canon = key.upper()
        if not eq or not key or not value:
            raise _spec_error(spec, f"{part.strip()!r} is not key=value")
        if canon is None:
            raise _spec_error(spec, f"unknown key {key!r} (keys: l, m, A, B, d)")
        if canon in fields:
            raise _spec_error(spec, f"key {canon!r} given twice")
        fields[canon] = value
    missing = [k for k in ("l", "m", "A", "B") if k not in fields]
    if missing:
        raise _spec_error(spec, f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    out: dict[str, Any] = {"l": _spec_int(spec, "l", fields["l"]), "m": _spec_int(spec, "m", fields["m"])}
    for key in ("A", "B"):
        terms = [t.strip() for t in fields[key].split("+")]
        if any(not t for t in terms):
            raise _spec_error(spec, f"{key}={fields[key]!r} has an empty term")
        # "x3y2" -> "x^3y^2": the spec's short form for the exponents bb.parse_monomial reads.
        out[key] = [re.sub(r"([xy])(\d+)", r"\1^\2", t.replace(" ", "")) for t in terms]
    d = fields.get("d")
    if d is None or d.lower() == "exact":
        out["d"] = None if d is None else "exact"
    else:
        out["d"] = _spec_int(spec, "d", d)
    return out


_NR5G_KEYS = ("bg", "k", "n", "rv", "qm", "nref")


def parse_nr5g_spec(spec: str) -> dict[str, int]:
    """Parse ``nr5g[bg=..,k=..,n=..(,rv=..)(,qm=..)(,nref=..)]`` (keys in any order, any case).

    Returns:
        ``{"bg", "k", "n", "rv", "qm", "nref"}`` as ints (``rv`` 0 and ``qm`` 1 by default, ``nref``
        ``None``); the ranges are checked by :class:`~qdecode.codes.nr5g.Nr5gCode`.

    Raises:
        ValueError: (one line) not an ``nr5g[...]`` spec, a missing / repeated / unknown key, or a
            value that is not a non-negative integer.
    """
    m = _SPEC.match(spec) if isinstance(spec, str) else None
    if m is None or m.group(1).lower() != "nr5g":
        raise _spec_error(str(spec), "not of the form nr5g[key=value,...]", _NR5G_EXAMPLE)
    fields: dict[str, Any] = {}
    for part in m.group(2).split(","):
        key, eq, value = (t.strip() for t in part.partition("="))
        key = key.lower()
        if not eq or not key or not value:
            raise _spec_error(spec, f"{part.strip()!r} is not key=value", _NR5G_EXAMPLE)
        if key not in _NR5G_KEYS:
            raise _spec_error(spec, f"unknown key {key!r} (keys: {', '.join(_NR5G_KEYS)})", _NR5G_EXAMPLE)
        if key in fields:
            raise _spec_error(spec, f"key {key!r} given twice", _NR5G_EXAMPLE)
        if not re.fullmatch(r"\d+", value):
            raise _spec_error(spec, f"{key} must be a non-negative integer, got {value!r}", _NR5G_EXAMPLE)
        fields[key] = int(value)
    missing = [k for k in ("bg", "k", "n") if k not in fields]
    if missing:
        raise _spec_error(spec, f"missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}", _NR5G_EXAMPLE)
    return {"rv": 0, "qm": 1, "nref": None, **fields}


def _nr5g_entry(spec: str, name: str | None = None) -> CatalogEntry:
    from .nr5g import Nr5gCode

    p = parse_nr5g_spec(spec)
    try:
        code = Nr5gCode.from_params(p["bg"], p["k"], p["n"], rv=p["rv"], Qm=p["qm"], n_ref=p["nref"])
    except InputError as exc:
        raise _spec_error(spec, str(exc), _NR5G_EXAMPLE) from None
    return CatalogEntry(
        name=name or code.name, kind="classical-linear", family="nr5g", n=code.E, k=code.K, d=None,
        provenance=f"5G NR LDPC, 3GPP TS 38.212 §5.3.2 (base graph {code.bg}) with rate matching §5.4.2",
        builder=lambda: code,
        notes=(f"{code.name}: Z={code.Z} (i_LS={code.i_ls}), {code.n_filler} filler bits, mother code "
               f"{code.n_mother} columns (2Z punctured), rv={code.rv}, Qm={code.Qm}"),
        d_source="unknown (not computed)",
    )


# 5G NR LDPC code blocks (builders return qdecode.codes.nr5g.Nr5gCode); any other as a spec nr5g[...].
CATALOG.update({
    "nr5g_bg2_512_1024": _nr5g_entry("nr5g[bg=2,k=512,n=1024]", "nr5g_bg2_512_1024"),
    "nr5g_bg1_6144_12288": _nr5g_entry("nr5g[bg=1,k=6144,n=12288]", "nr5g_bg1_6144_12288"),
})


@functools.lru_cache(maxsize=32)
def _spec_entry(spec: str) -> CatalogEntry:
    family = _SPEC.match(spec)
    if family is not None and family.group(1).lower() == "nr5g":
        return _nr5g_entry(spec)
    parts = parse_bb_spec(spec)
    l, m, A, B, d = parts["l"], parts["m"], parts["A"], parts["B"], parts["d"]
    canonical = f"bb[l={l},m={m},A={'+'.join(A)},B={'+'.join(B)}" + ("" if d is None else f",d={d}") + "]"
    try:
        code = bb_code(l, m, A, B, name=canonical, d=None if d == "exact" else d,
                       provenance="user-specified BB code (construction of arXiv:2308.07915)")
    except ValueError as exc:
        raise _spec_error(spec, str(exc)) from None
    if code.k == 0:
        raise _spec_error(spec, "this BB code encodes no logical qubit (k = 0)")
    d_source = "unknown (not computed)" if d is None else "stated by the user (not verified)"
    if d == "exact":
        from .distance import css_distance

        res = css_distance(code, "both", time_limit=_SPEC_TIME_LIMIT)
        if not res.optimal:
            raise _spec_error(spec, f"d=exact: {res.status}; state d=N instead")
        d, d_source = res.distance, f"exact: MILP (codes/distance.py, {res.seconds:.1f} s)"
        code = dataclasses.replace(code, d=d)
    return CatalogEntry(
        name=canonical, kind="quantum-css", family="bb", n=code.n, k=code.k, d=d,
        provenance=code.provenance, builder=lambda: code, notes=f"l={l}, m={m}, A={'+'.join(A)}, B={'+'.join(B)}",
        d_source=d_source,
    )


def get_entry(name: str) -> CatalogEntry:
    """The catalogue entry for ``name``, or a fresh entry for a code spec (see the module docstring).

    Raises:
        UnknownCodeError: unknown name (message lists the valid names).
        ValueError: a malformed code spec (one line).
    """
    if is_code_spec(name):
        return _spec_entry(name.strip())
    try:
        return CATALOG[name]
    except (KeyError, TypeError):
        raise UnknownCodeError(
            f"unknown code {name!r}; valid names: {', '.join(CATALOG)}; or a code spec such as {_SPEC_EXAMPLE} "
            f"or {_NR5G_EXAMPLE}"
        ) from None


def get_code(name: str, d: int | None = None) -> Any:
    """Build a catalogue code by name (or from a code spec).

    Args:
        name: a catalogue name (see :func:`code_names`) or a spec such as
            ``"bb[l=12,m=6,A=x3+y+y2,B=y3+x+x2]"``.
        d: distance for parametrised families (``surface``, ``toric``, ``repetition``); for fixed
            codes it must be ``None`` or equal the stated distance.

    Returns:
        The code (a :class:`~qdecode.codes.css.CSSCode` for quantum entries).

    Raises:
        UnknownCodeError: unknown name.
        ValueError: ``d`` missing for a family, or inconsistent with a fixed code; a bad spec.
    """
    return get_entry(name).build(d)


def list_codes() -> list[dict[str, Any]]:
    """One row per entry for ``qdecode codes``: name, kind, n, k, d, d_source, provenance, notes."""
    rows = []
    for e in CATALOG.values():
        rows.append({
            "name": e.name,
            "kind": e.kind,
            "n": e.n_expr if e.parametrised else e.n,
            "k": e.k,
            "d": "d" if e.parametrised else e.d,
            "d_source": e.d_source,
            "provenance": e.provenance,
            "notes": e.notes,
        })
    return rows
