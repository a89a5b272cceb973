"""Import direction, enforced on the source tree with an AST walk of every import.

Every ``.py`` under ``qdecode/``, ``sims/``, ``codes/`` and ``neural/`` (mapped to packages as in
pyproject's ``package-dir``) is parsed; every ``import`` / ``from ... import`` anywhere in it counts
(module scope, functions, methods, ``try`` blocks), relative imports resolved. Only bodies of
``if TYPE_CHECKING:`` are skipped (they never run). An import inside a function (or lambda) is
*lazy*; anything else, including a class body or a module-level ``try``, runs at import time.

``RULES`` below is the whole policy, one row per layer, first match wins. An import is checked in
order: ``never`` (forbidden, lazy or not) -> ``ok`` (allowed anywhere) -> ``lazy`` (allowed only
inside a function) -> the row's ``external`` policy for third-party packages. A ``qdecode`` module
that matches no ``ok`` / ``lazy`` pattern is forbidden. The standard library is always allowed, and
so is ``from qdecode import __version__``. Patterns are :mod:`fnmatch` patterns that also match
submodules (``"qdecode.kernels"`` covers ``qdecode.kernels.bp``).

Debt: ``ALLOWED`` lists known violations of a rule that is right, each with its reason. Delete an
entry when the code is fixed; an entry that no longer matches anything fails the test too.
"""

from __future__ import annotations

import fnmatch
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.import_scan import ROOT, Import, all_imports, modules

#: The training side of qdecode.neural: trainers, their shared skeleton and the teacher used only
#: for distillation.
TRAINERS = ("qdecode.neural.*_train", "qdecode.neural.train_common", "qdecode.neural.crisp_teacher")
#: sims modules that read and analyse the stats CSVs.
CSV_READERS = ("qdecode.sims.store", "qdecode.sims.stats", "qdecode.sims.threshold", "qdecode.sims.gap_bins",
               "qdecode.sims.latency_bins")
#: The text source's leaves: the corpus (bytes, splits, hashes) and the n-gram fitting on it.
TEXT = ("qdecode.language_model",)
#: The error taxonomy (what went wrong, and its exit status): the standard library only, usable everywhere
#: above the kernels.
ERRORS = ("qdecode.errors",)
#: The layers below the simulation harness, usable by everything above them.
CORE = ("qdecode.decoders", "qdecode.kernels", "qdecode.codes", "qdecode.problem", "qdecode.heralds", *TEXT, *ERRORS)


@dataclass(frozen=True)
class Rule:
    where: tuple[str, ...]  # importing modules (fnmatch on the dotted name)
    ok: tuple[str, ...] = ()  # allowed anywhere
    lazy: tuple[str, ...] = ()  # allowed only inside a function
    never: tuple[str, ...] = ()  # forbidden, lazy or not (checked first)
    external: str = "no"  # other third-party packages: "no", "lazy" or "any"


# fmt: off
RULES: list[Rule] = [
    # The package root is the public face: `import qdecode` must stay light (numpy + scipy via
    # DecodingProblem), so everything else it offers is reached lazily through __getattr__.
    # It configures the compile cache first (stdlib only), before any jitted module can be imported.
    Rule(("qdecode",), ok=("qdecode.problem", "qdecode.compile_cache"),
         lazy=("qdecode.decoders", "qdecode.sims", "qdecode.sinter_adapter")),
    # Numba's cache directory, keyed on the jitted sources: the standard library only (it runs
    # inside `import qdecode`, which must stay light, and must not import numba).
    Rule(("qdecode.compile_cache*",), ok=("qdecode.compile_cache",)),
    # The error taxonomy: the standard library only (the CLI imports it before anything heavy).
    Rule(ERRORS),
    # Kernels are the numba bottom layer: numpy and numba only, nothing else of qdecode, so they
    # can be read, compiled and benchmarked alone. (scipy belongs in the layer that builds inputs.)
    # llvmlite is numba's own code generator: kernels.clock emits the counter read with it, kernels.arith the
    # saturating-arithmetic intrinsics (llvm.sadd.sat / llvm.ssub.sat).
    Rule(("qdecode.kernels.clock", "qdecode.kernels.arith"), ok=("qdecode.kernels", "numpy", "numba", "llvmlite")),
    Rule(("qdecode.kernels*",), ok=("qdecode.kernels", "numpy", "numba")),
    # Codes are data (matrices, generator polynomials, catalogues): nothing above kernels, no
    # circuits (stim), plots or models; a code can be built and inspected without any decoder.
    Rule(("qdecode.codes*",), ok=("qdecode.codes", "qdecode.kernels", *ERRORS, "numpy", "scipy")),
    # The language model (sem-OSD's priors): the text corpus is data (stdlib + numpy); the n-gram fit
    # on it uses the sem-OSD kernels only.
    # Both sit beside codes, below decoders (lm_prior), sims (text_source) and trainers (lm_train).
    Rule(("qdecode.language_model.corpus",), ok=(*ERRORS, "numpy")),
    Rule(("qdecode.language_model*",), ok=("qdecode.language_model.corpus", "qdecode.kernels", *ERRORS, "numpy")),
    # DecodingProblem is the currency between sims and decoders: numpy/scipy only; stim lazily in
    # from_dem, because decoders (and `import qdecode`) must work without stim.
    Rule(("qdecode.problem",), ok=("qdecode.heralds", *ERRORS, "numpy", "scipy"), lazy=("stim",)),
    # Herald detectors split off a DEM: part of the problem layer (no decoders, no kernels); stim lazily.
    Rule(("qdecode.heralds",), ok=(*ERRORS, "numpy"), lazy=("stim",)),
    # Decoders never see circuits, the harness, the CLI, plots or trainers: they take a
    # DecodingProblem or a code. Optional backends (torch, onnxruntime, pymatching, chromobius,
    # tesseract, mwpf) and the neural *runtime* (model files, inference) load lazily, when such a
    # decoder is built. Decoders use trainers never: trainers sit above decoders (teachers,
    # baselines), so that is a cycle.
    Rule(("qdecode.decoders*",), ok=(*CORE, "numpy", "scipy", "numba"),
         lazy=("qdecode.neural", "torch", "onnxruntime", "pymatching", "chromobius", "tesseract_decoder",
              "mwpf"),
         never=(*TRAINERS, "stim", "sinter", "matplotlib")),
    # Trainers sit above decoders and the harness: they may use decoders as teachers/baselines and
    # the priors they fit (lm_prior), sims to build training circuits, and the neural runtime. Only
    # the CLI and the tools beside it (hw, sinter_adapter) are off limits.
    Rule(TRAINERS, ok=("qdecode.neural", *CORE, "qdecode.sims"), external="any"),
    # The neural runtime (model definitions, model files, inference) is what decoders load: it
    # must not import decoders, the harness or the trainers back ("trainers import the runtime,
    # never the other way round").
    Rule(("qdecode.neural*",), ok=("qdecode.neural", "qdecode.kernels", "qdecode.codes", "qdecode.problem",
                                   *ERRORS, "numpy", "scipy", "torch", "onnx", "onnxruntime"),
         never=TRAINERS),
    # Hardware export and latency measure decoders on problems or codes; no harness, no models.
    Rule(("qdecode.hw*",), ok=("qdecode.hw", *CORE, "numpy", "scipy")),
    # Old stats CSVs must stay readable and analysable without stim, numba or matplotlib (lazy
    # imports included): the CSV readers import only each other, numpy and scipy.
    Rule(CSV_READERS, ok=(*CSV_READERS, *ERRORS, "numpy", "scipy")),
    # Plots read CSVs only (no circuits, no decoders; the registry for the label grammar, which
    # imports no decoder; seed_streams, standard library only, to keep its provenance keys off the
    # y axis); matplotlib loads when a figure is drawn.
    Rule(("qdecode.sims.plots",), ok=(*CSV_READERS, "qdecode.sims.seed_streams", "qdecode.decoders.registry",
                                      *ERRORS, "numpy", "scipy"),
         lazy=("matplotlib",)),
    # The harness runs decoders on circuits; it never imports the CLI (the top), models (reached
    # through decoders) or torch; stim only lazily, so recipes and task lists parse without it;
    # numba kernels belong in qdecode.kernels; matplotlib only in sims.plots.
    Rule(("qdecode.sims*",), ok=("qdecode.sims", *CORE, "numpy", "scipy"), lazy=("stim",),
         never=("qdecode.sims.plots", "torch", "numba", "matplotlib"), external="any"),
    # The sinter plug-in wraps registry decoders; it is imported by sinter, not by qdecode.
    Rule(("qdecode.sinter_adapter",), ok=("qdecode.decoders", "qdecode.problem", "qdecode.sims.gap_bins", *ERRORS,
                                          "numpy", "sinter")),
    # The CLI is the top: it may use everything, but only lazily, so that `qdecode --help` and
    # argument errors answer without loading numba, stim, torch or matplotlib. Nothing imports it
    # (no other row lists it).
    Rule(("qdecode.cli*",), ok=("qdecode.cli", *ERRORS, "numpy"), lazy=("qdecode",), external="lazy"),
]
# fmt: on

#: (file, imported module) -> why the violation is tolerated for now. Delete when fixed.
ALLOWED: dict[tuple[str, str], str] = {}


def _match(name: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name, p + ".*") for p in patterns)


def rule_for(module: str) -> Rule | None:
    return next((r for r in RULES if any(fnmatch.fnmatchcase(module, w) for w in r.where)), None)


def violation(imp: Import) -> str | None:
    """Why ``imp`` breaks its module's rule, or None."""
    t = imp.target
    root = t.split(".")[0]
    if t == "qdecode.__version__" or (root in sys.stdlib_module_names and root != "qdecode"):
        return None
    rule = rule_for(imp.module)
    if rule is None:
        return "no layering rule covers this module"
    if _match(t, rule.never):
        return "forbidden"
    if _match(t, rule.ok):
        return None
    if _match(t, rule.lazy):
        return None if imp.lazy else "allowed only lazily (inside a function)"
    if root == "qdecode":
        return "not an allowed dependency of this layer"
    if rule.external == "any" or (rule.external == "lazy" and imp.lazy):
        return None
    return "third-party package not allowed here" + (" at module level" if rule.external == "lazy" else "")


def test_walk_sees_lazy_imports_and_resolves_relative_ones():
    imps = all_imports()
    lazy = {(i.module, i.target) for i in imps if i.lazy}
    top = {(i.module, i.target) for i in imps if not i.lazy}
    assert ("qdecode.problem", "stim") in lazy  # inside from_dem
    assert ("qdecode.sims.circuits", "qdecode.sims.noise") in top  # `from .noise import ...`
    assert ("qdecode.decoders.bp", "qdecode.kernels.bp") in top


def test_every_module_has_a_rule():
    missing = sorted(m for m in modules() if rule_for(m) is None)
    assert not missing, f"modules without a layering rule: {missing}"


def test_imports_follow_the_layering_rules():
    bad: list[str] = []
    used = set()
    for imp in all_imports():
        why = violation(imp)
        if why is None:
            continue
        if (imp.file, imp.target) in ALLOWED:
            used.add((imp.file, imp.target))
            continue
        kind = "lazy import" if imp.lazy else "import"
        msg = f"{imp.file}:{imp.line}: {kind} of {imp.target} ({imp.module}): {why}"
        if msg not in bad:
            bad.append(msg)
    assert not bad, "layering violations:\n" + "\n".join(bad)
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"ALLOWED entries that no longer match a violation (delete them): {stale}"


def test_rules_reject_what_they_should():
    def v(module, target, lazy=False):
        return violation(Import("x.py", 1, module, target, lazy))

    assert v("qdecode.kernels.bp", "qdecode.codes.gf2") and v("qdecode.kernels.bp", "scipy.sparse", lazy=True)
    assert v("qdecode.decoders.bp", "stim", lazy=True) and v("qdecode.decoders.bp", "qdecode.sims.tasks", lazy=True)
    assert v("qdecode.decoders.crisp", "qdecode.neural.lm_train", lazy=True)
    assert v("qdecode.decoders.crisp", "torch") and not v("qdecode.decoders.crisp", "torch", lazy=True)
    assert v("qdecode.codes.bb", "qdecode.decoders.bp", lazy=True)
    assert v("qdecode.sims.store", "numba", lazy=True) and v("qdecode.sims.tasks", "qdecode.cli.main", lazy=True)
    assert v("qdecode.neural.model_file", "qdecode.neural.crisp_train", lazy=True)
    assert not v("qdecode.neural.lm_train", "qdecode.decoders.lm_prior")
    assert v("qdecode.cli.main", "qdecode.sims.sweep") and not v("qdecode.cli.main", "qdecode.sims.sweep", lazy=True)
    assert v("qdecode.sinter_adapter", "qdecode.sims.sweep", lazy=True)


def _run_blocked(code: str, blocked: tuple[str, ...]) -> None:
    """Run ``code`` in a fresh interpreter where importing any of ``blocked`` raises ImportError."""
    prelude = f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
    subprocess.run([sys.executable, "-c", prelude + code], check=True, cwd=ROOT)


def test_decoders_import_without_stim_or_matplotlib():
    code = (
        "import sys; import qdecode.decoders, qdecode.problem;"
        "bad=[m for m in ('stim','matplotlib','torch','sinter') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_stats_csvs_readable_without_stim_numba_matplotlib(tmp_path):
    csv = tmp_path / "stats.csv"
    csv.write_text(
        "     shots,    errors,  discards, seconds,decoder,strong_id,json_metadata,custom_counts\n"
        '       100,         3,         0,    0.01,bp,abc,"{""p"":0.001,""d"":3}",\n',
        encoding="utf-8")
    _run_blocked(
        "import qdecode.sims.store as s, qdecode.sims.stats, qdecode.sims.threshold\n"
        f"rows = s.read_rows({str(csv)!r})\n"
        "assert len(rows) == 1, rows\n",
        ("stim", "numba", "matplotlib", "torch"))


@pytest.mark.parametrize("module", ["qdecode.cli.main"])
def test_cli_entry_imports_nothing_heavy(module):
    _run_blocked(f"import {module}\n", ("stim", "numba", "matplotlib", "torch", "sinter"))
