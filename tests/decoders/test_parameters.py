"""One source of decoder parameters: the Python classes and the registry entries agree.

For every registered decoder (quantum and classical), the class built from Python with no
arguments and the registry entry with no parameters have the same parameters and label; a
class built with explicit parameters equals ``DecoderSpec.create(name, params).build(...)``.
And every decoder label written in the repository (benchmarks/README.md, tests/, sims/recipes/)
still resolves to the parameters it resolved to before the parameter tables moved into the
decoder modules (:data:`RECORDED`, taken from a run of the code before that change; ``osd_key``, added
later with a default left out of labels, is the one parameter they gained).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import stim

from qdecode.decoders import DecoderSpec, decoder, decoder_names
from qdecode.decoders.registry import BUILTIN_DECODERS, get_entry
from qdecode.problem import DecodingProblem


def _problem() -> DecodingProblem:
    circ = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=3, after_clifford_depolarization=0.02)
    return DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))


def _surface_problem() -> DecodingProblem:  # what the shipped nn-pymatching d5 model decodes
    circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=5, rounds=5,
                                  after_clifford_depolarization=0.003, before_measure_flip_probability=0.003,
                                  after_reset_flip_probability=0.003, before_round_data_depolarization=0.003)
    return DecodingProblem.from_dem(circ.detector_error_model(decompose_errors=True))


def _color_problem() -> DecodingProblem:  # Chromobius needs the basis-and-colour 4th detector coordinate
    from qdecode.sims.color_circuit import superdense_memory_circuit

    return DecodingProblem.from_dem(superdense_memory_circuit(3, rounds=2, noise="sd6", p=0.002).detector_error_model())


def _code(name: str):
    from qdecode.codes.catalog import get_code

    return get_code(name)


def _python(name: str):
    """``(target, constructor)``: the Python class call that corresponds to registry entry ``name``."""
    from qdecode.decoders.bm import BmDecoder
    from qdecode.decoders.bp import BpDecoder
    from qdecode.decoders.bp_matching import BpMatchingDecoder
    from qdecode.decoders.bplsd import BpLsdDecoder
    from qdecode.decoders.bposd import BpOsdDecoder, BpOsdEDecoder
    from qdecode.decoders.chromobius_decoder import ChromobiusDecoder
    from qdecode.decoders.class_escalate import ClassEscalateDecoder
    from qdecode.decoders.classical_entries import binary_generator
    from qdecode.decoders.coset_ml import CosetMlDecoder
    from qdecode.decoders.crisp import CrispDecoder
    from qdecode.decoders.gdg import GdgDecoder
    from qdecode.decoders.matching import MatchingDecoder
    from qdecode.decoders.mle import MleDecoder
    from qdecode.decoders.mwpf_decoder import MwpfDecoder
    from qdecode.decoders.nn_pymatching import NnPymatchingDecoder
    from qdecode.decoders.osd import OsdBlockDecoder
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder, QcSpaDecoder
    from qdecode.decoders.relay_bp import MemBpDecoder, RelayBpDecoder
    from qdecode.decoders.sc_scl import ScDecoder, SclDecoder
    from qdecode.decoders.sem_osd import SemOsdDecoder
    from qdecode.decoders.tesseract_decoder import TesseractDecoder
    from qdecode.decoders.union_find import UnionFindDecoder
    from qdecode.decoders.window import WindowDecoder

    def auto_choose(problem, **kw):
        from qdecode.decoders.auto import choose

        return choose(problem, **kw, specs=DecoderSpec)

    cases = {
        "pymatching": (_problem, lambda p, **kw: MatchingDecoder(p, **kw)),
        "pymatching-correlated": (_problem, lambda p, **kw: MatchingDecoder(p, correlated=True, **kw)),
        "bp": (_problem, lambda p, **kw: BpDecoder(p, **kw)),
        "bp-ps": (_problem, lambda p, **kw: BpDecoder(p, method="productsum", **kw)),
        "bposd": (_problem, lambda p, **kw: BpOsdDecoder(p, **kw)),
        "bposd-e": (_problem, lambda p, **kw: BpOsdEDecoder(p, **kw)),
        "relay-bp": (_problem, lambda p, **kw: RelayBpDecoder(p, **kw)),
        "mem-bp": (_problem, lambda p, **kw: MemBpDecoder(p, **kw)),
        "gdg": (_problem, lambda p, **kw: GdgDecoder(p, **kw)),
        "bp-pymatching": (_problem, lambda p, **kw: BpMatchingDecoder(p, **kw)),
        "nn-pymatching": (_surface_problem, lambda p, **kw: NnPymatchingDecoder(p, **kw)),
        "window": (_problem, lambda p, **kw: WindowDecoder(p, specs=DecoderSpec, **kw)),
        "bm": (lambda: _code("bch63_45"), lambda c, **kw: BmDecoder(c, **kw)),
        "osd": (lambda: _code("bch63_45"), lambda c, **kw: OsdBlockDecoder(G=binary_generator(c), **kw)),
        "sc": (lambda: _code("polar32_16"), lambda c, **kw: ScDecoder(c, **kw)),
        "scl": (lambda: _code("polar32_16"), lambda c, **kw: SclDecoder(c, **kw)),
        "sem-osd": (lambda: _code("bch127_64"), lambda c, **kw: SemOsdDecoder(binary_generator(c), **kw)),
        "crisp": (lambda: _code("polar32_16"), lambda c, **kw: CrispDecoder(c, **kw)),
        "ldpc-ms": (lambda: _code("nr5g_bg2_512_1024"), lambda c, **kw: QcMinSumDecoder(c, **kw)),
        "ldpc-spa": (lambda: _code("nr5g_bg2_512_1024"), lambda c, **kw: QcSpaDecoder(c, **kw)),
        "mle": (_problem, lambda p, **kw: MleDecoder(p, **kw)),
        "coset-ml": (_problem, lambda p, **kw: CosetMlDecoder(p, **kw)),
        "uf": (_problem, lambda p, **kw: UnionFindDecoder(p, **kw)),
        "bplsd": (_problem, lambda p, **kw: BpLsdDecoder(p, **kw)),
        "chromobius": (_color_problem, lambda p, **kw: ChromobiusDecoder(p, **kw)),
        "tesseract": (_problem, lambda p, **kw: TesseractDecoder(p, **kw)),
        "mwpf": (_problem, lambda p, **kw: MwpfDecoder(p, **kw)),
        "class-escalate": (_problem, lambda p, **kw: ClassEscalateDecoder(p, **kw)),
        "bpuf": (_problem, lambda p, **kw: BpLsdDecoder(p, lsd_order=0, lsd_method="lsd_cs", bits_per_step=0,
                                                        lsd_grow=1, lsd_key="last", **kw)),
        # auto has no class of its own: from Python it is choose(...), and it builds the chosen class
        "auto": (_problem, lambda p, **kw: auto_choose(p, **kw).spec.build(p)),
    }
    return cases[name]


#: A non-default value per decoder (registry spelling) for the explicit-parameters check.
EXPLICIT = {
    "bp": {"max_iter": 7, "alpha": 0.625}, "bp-ps": {"max_iter": 9}, "bposd": {"osd_order": 3, "max_iter": 20},
    "bposd-e": {"osd_order": 2}, "mem-bp": {"gamma0": 0.1, "max_iter": 12}, "gdg": {"pre_iter": 5, "max_step": 7},
    "bp-pymatching": {"mode": "accurate", "tau": 0.7}, "nn-pymatching": {"mode": "both"},
    "window": {"W": 2, "inner": "bp"}, "osd": {"order": 1}, "scl": {"list_size": 4, "crc": "false"},
    "sem-osd": {"order": 1, "context": "genie"}, "crisp": {"beam": 2},
    "mle": {"time_limit": 5.0}, "uf": {"growth": "uniform"},
    "bplsd": {"lsd_order": 4, "max_iter": 20}, "bpuf": {"max_iter": 12},
    "tesseract": {"beam": "short", "sparsify": "color", "det_beam": 12},
    "mwpf": {"solver": "single_hair", "cluster_node_limit": 20},
    "ldpc-ms": {"schedule": "flooding", "bits": 16, "max_iter": 20}, "ldpc-spa": {"max_iter": 12},
}


def _build_both(name: str, **params):
    make_target, python = _python(name)
    target = make_target()
    spec = DecoderSpec.create(name, params)
    kw = dict(params)
    if name == "window" and "inner" in kw:  # the Python class takes the inner decoder's parameters apart
        kw = {k: v for k, v in kw.items() if k in get_entry("window").params}
    return python(target, **kw), spec.build(target), spec


def test_every_registered_decoder_is_covered():
    assert sorted(BUILTIN_DECODERS) == decoder_names()
    for name in decoder_names():
        assert _python(name)


@pytest.mark.parametrize("name", sorted(BUILTIN_DECODERS))
def test_class_defaults_are_the_registry_defaults(name):
    ours, built, spec = _build_both(name)
    if name == "auto":  # it builds the decoder it chose, whose parameters are that decoder's own
        assert type(ours) is type(built)
        return
    want = dict(spec.params)
    assert {k: ours.params[k] for k in want} == want
    assert {k: built.params[k] for k in want} == want
    assert DecoderSpec(name, tuple((k, ours.params[k]) for k, _ in spec.params)).label() == spec.label()
    assert type(ours) is type(built)


@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_explicit_params_from_python_equal_the_registry(name):
    ours, built, spec = _build_both(name, **EXPLICIT[name])
    want = dict(spec.params)
    assert {k: ours.params[k] for k in want} == want == {k: built.params[k] for k in want}


def test_signature_defaults_come_from_the_table():
    """Every class that takes its defaults from a table shows them in its signature (``help()``)."""
    classes = [c for c in _classes() if getattr(c, "PARAMS", None) is not None]
    assert len(classes) >= 15
    for cls in classes:
        sig = inspect.signature(cls)
        for k, p in cls.PARAMS.items():
            if k in sig.parameters:
                assert sig.parameters[k].default == p.default, (cls.__name__, k)


def _classes():
    from qdecode.decoders import (
        bm,
        bp,
        bp_matching,
        bposd,
        crisp,
        gdg,
        matching,
        nn_pymatching,
        osd,
        relay_bp,
        sc_scl,
        sem_osd,
        window,
    )

    mods = (bm, bp, bp_matching, bposd, crisp, gdg, matching, nn_pymatching, osd, relay_bp, sc_scl, sem_osd, window)
    return [v for m in mods for v in vars(m).values() if isinstance(v, type) and v.__module__ == m.__name__]


def test_from_dem_and_factory_are_the_cli_decoder():
    from qdecode.decoders.bposd import BpOsdDecoder

    circ = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=3, after_clifford_depolarization=0.02)
    dem = circ.detector_error_model(decompose_errors=True)
    spec = DecoderSpec.create("bposd", ["osd_order=4"])
    a = BpOsdDecoder.from_dem(dem, osd_order=4)
    b = decoder("bposd", dem, osd_order=4)
    assert a.params == b.params == dict(spec.params)
    dets, _ = circ.compile_detector_sampler(seed=3).sample(200, separate_observables=True)
    want = spec.build(DecodingProblem.from_dem(dem)).predict_observables_batch(dets)
    assert np.array_equal(a.predict_observables_batch(dets), want)
    assert np.array_equal(b.predict_observables_batch(dets), want)


# Every decoder label in benchmarks/README.md, tests/ and sims/recipes/ (grep -rhoE
# "(bposd|bp|relay-bp|gdg|window|...)\[[^]]*\]"), plus every bare decoder name, as
# qdecode.sims.recipe.parse_decoder resolved it BEFORE the parameter tables moved into the decoder
# modules: text -> (name, resolved parameters in order, label).
RECORDED = {
    'bm': ('bm', {},
           'bm'),
    'bp': ('bp', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'dtype': 'float64', 'frac_bits': 3, 'max_iter': 100,
           'schedule': 'flooding'},
           'bp[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=100,schedule=flooding]'),
    'bp-ps': ('bp-ps', {'max_iter': 100, 'schedule': 'flooding'},
           'bp-ps[max_iter=100,schedule=flooding]'),
    'bp-pymatching': ('bp-pymatching', {'alpha': 0.8, 'bp_graph': 'auto', 'dtype': 'auto', 'max_iter': 10,
           'method': 'auto', 'mode': 'fast', 'tau': 0.8, 'time_full': False},
           'bp-pymatching[alpha=0.8,bp_graph=auto,dtype=auto,max_iter=10,method=auto,mode=fast,tau=0.8,time_full=false]'),
    'bp-pymatching[mode=accurate]': ('bp-pymatching', {'alpha': 0.8, 'bp_graph': 'auto', 'dtype': 'auto',
           'max_iter': 10, 'method': 'auto', 'mode': 'accurate', 'tau': 0.8, 'time_full': False},
           'bp-pymatching[alpha=0.8,bp_graph=auto,dtype=auto,max_iter=10,method=auto,mode=accurate,tau=0.8,time_full=false]'),
    'bp-pymatching[mode=fast]': ('bp-pymatching', {'alpha': 0.8, 'bp_graph': 'auto', 'dtype': 'auto', 'max_iter': 10,
           'method': 'auto', 'mode': 'fast', 'tau': 0.8, 'time_full': False},
           'bp-pymatching[alpha=0.8,bp_graph=auto,dtype=auto,max_iter=10,method=auto,mode=fast,tau=0.8,time_full=false]'),
    'bp[alpha=0.625]': ('bp', {'alpha': 0.625, 'beta': 0.0, 'bits': 0, 'dtype': 'float64', 'frac_bits': 3,
           'max_iter': 100, 'schedule': 'flooding'},
           'bp[alpha=0.625,beta=0.0,bits=0,frac_bits=3,max_iter=100,schedule=flooding]'),
    'bp[max_iter=7]': ('bp', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'dtype': 'float64', 'frac_bits': 3, 'max_iter': 7,
           'schedule': 'flooding'},
           'bp[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=7,schedule=flooding]'),
    'bposd': ('bposd', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80, 'osd_key': 'last',
           'osd_order': 10,
           'schedule': 'flooding'},
           'bposd[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=10,schedule=flooding]'),
    'bposd-e': ('bposd-e', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80, 'osd_key': 'last',
           'osd_order': 4,
           'schedule': 'flooding'},
           'bposd-e[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=4,schedule=flooding]'),
    'bposd[osd_order=20]': ('bposd', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80,
           'osd_key': 'last',
           'osd_order': 20, 'schedule': 'flooding'},
           'bposd[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=20,schedule=flooding]'),
    'bposd[osd_order=3]': ('bposd', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80,
           'osd_key': 'last',
           'osd_order': 3, 'schedule': 'flooding'},
           'bposd[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=3,schedule=flooding]'),
    'bposd[osd_order=4]': ('bposd', {'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80,
           'osd_key': 'last',
           'osd_order': 4, 'schedule': 'flooding'},
           'bposd[alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=4,schedule=flooding]'),
    'crisp': ('crisp', {'backend': 'onnx', 'beam': 1, 'model': 'auto', 'threads': 1},
           'crisp[model=auto]'),
    'crisp[beam=4,model=auto]': ('crisp', {'backend': 'onnx', 'beam': 4, 'model': 'auto', 'threads': 1},
           'crisp[beam=4,model=auto]'),
    'crisp[model=auto]': ('crisp', {'backend': 'onnx', 'beam': 1, 'model': 'auto', 'threads': 1},
           'crisp[model=auto]'),
    'gdg': ('gdg', {'alpha': 1.0, 'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0, 'max_side_depth': 10,
           'max_step': 25, 'max_tree_depth': 3, 'new_n': 0, 'osd_after': -1, 'osd_method': 'none', 'osd_order': 10,
           'pre_iter': 8, 'side_step': 10, 'step_iter': 6},
           'gdg[alpha=1.0,low_error_mode=false,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,pre_iter=8,side_step=10,step_iter=6]'),
    'gdg[osd_method=osd_cs]': ('gdg', {'alpha': 1.0, 'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0,
           'max_side_depth': 10, 'max_step': 25, 'max_tree_depth': 3, 'new_n': 0, 'osd_after': -1,
           'osd_method': 'osd_cs', 'osd_order': 10, 'pre_iter': 8, 'side_step': 10, 'step_iter': 6},
           'gdg[alpha=1.0,low_error_mode=false,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,osd_method=osd_cs,pre_iter=8,side_step=10,step_iter=6]'),
    'gdg[pre_iter=80,max_iters=81,osd_method=osd_cs]': ('gdg', {'alpha': 1.0, 'branch_threads': 1,
           'low_error_mode': False, 'max_iters': 81, 'max_side_depth': 10, 'max_step': 25, 'max_tree_depth': 3,
           'new_n': 0, 'osd_after': -1, 'osd_method': 'osd_cs', 'osd_order': 10, 'pre_iter': 80, 'side_step': 10,
           'step_iter': 6},
           'gdg[alpha=1.0,low_error_mode=false,max_iters=81,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,osd_method=osd_cs,pre_iter=80,side_step=10,step_iter=6]'),
    'mem-bp': ('mem-bp', {'alpha': 1.0, 'bits': 0, 'frac_bits': 3, 'gamma0': 0.15, 'max_iter': 80},
           'mem-bp[alpha=1.0,bits=0,frac_bits=3,gamma0=0.15,max_iter=80]'),
    'nn-pymatching': ('nn-pymatching', {'any_distance': False, 'backend': 'onnx', 'batch': 1024, 'device': 'cpu',
           'mode': 'commit', 'model': 'd5', 'rule': 'threshold', 'tau': 0.9, 'threads': 0},
           'nn-pymatching[any_distance=false,backend=onnx,batch=1024,device=cpu,mode=commit,model=d5,rule=threshold,tau=0.9,threads=0]'),
    'nn-pymatching[model=d5,mode=both]': ('nn-pymatching', {'any_distance': False, 'backend': 'onnx', 'batch': 1024,
           'device': 'cpu', 'mode': 'both', 'model': 'd5', 'rule': 'threshold', 'tau': 0.9, 'threads': 0},
           'nn-pymatching[any_distance=false,backend=onnx,batch=1024,device=cpu,mode=both,model=d5,rule=threshold,tau=0.9,threads=0]'),
    'nn-pymatching[model=d7,mode=both]': ('nn-pymatching', {'any_distance': False, 'backend': 'onnx', 'batch': 1024,
           'device': 'cpu', 'mode': 'both', 'model': 'd7', 'rule': 'threshold', 'tau': 0.9, 'threads': 0},
           'nn-pymatching[any_distance=false,backend=onnx,batch=1024,device=cpu,mode=both,model=d7,rule=threshold,tau=0.9,threads=0]'),
    'osd': ('osd', {'order': 2},
           'osd[order=2]'),
    'osd[order=1]': ('osd', {'order': 1},
           'osd[order=1]'),
    'osd[order=2]': ('osd', {'order': 2},
           'osd[order=2]'),
    'osd[order=3]': ('osd', {'order': 3},
           'osd[order=3]'),
    'pymatching': ('pymatching', {},
           'pymatching'),
    'pymatching-correlated': ('pymatching-correlated', {},
           'pymatching-correlated'),
    'relay-bp': ('relay-bp', {'alpha': 1.0, 'bits': 0, 'frac_bits': 3, 'gamma0': 0.15, 'gamma_hi': 0.622,
           'gamma_lo': -0.226, 'leg_iter': 60, 'legs': 300, 'pre_iter': 80, 'seed': 0, 'stop_after': 5},
           'relay-bp[alpha=1.0,bits=0,frac_bits=3,gamma0=0.15,gamma_hi=0.622,gamma_lo=-0.226,leg_iter=60,legs=300,pre_iter=80,seed=0,stop_after=5]'),
    'relay-bp[gamma0=0.1]': ('relay-bp', {'alpha': 1.0, 'bits': 0, 'frac_bits': 3, 'gamma0': 0.1, 'gamma_hi': 0.622,
           'gamma_lo': -0.226, 'leg_iter': 60, 'legs': 300, 'pre_iter': 80, 'seed': 0, 'stop_after': 5},
           'relay-bp[alpha=1.0,bits=0,frac_bits=3,gamma0=0.1,gamma_hi=0.622,gamma_lo=-0.226,leg_iter=60,legs=300,pre_iter=80,seed=0,stop_after=5]'),
    'sc': ('sc', {},
           'sc'),
    'scl': ('scl', {'crc': 'auto', 'list_size': 8},
           'scl[crc=auto,list_size=8]'),
    'scl[list_size=32]': ('scl', {'crc': 'auto', 'list_size': 32},
           'scl[crc=auto,list_size=32]'),
    'scl[list_size=8]': ('scl', {'crc': 'auto', 'list_size': 8},
           'scl[crc=auto,list_size=8]'),
    'sem-osd': ('sem-osd', {'beam': 8, 'context': 'decoded', 'lam': 1.0, 'lm_order': 4, 'model': 'auto', 'omega': 1,
           'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8]': ('sem-osd', {'beam': 8,
           'context': 'decoded', 'lam': 1.0, 'lm_order': 4, 'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'ngram',
           'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[beam=8,context=decoded,order=2,prior=transformer]': ('sem-osd', {'beam': 8, 'context': 'decoded',
           'lam': 1.0, 'lm_order': 4, 'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'transformer', 'top_k': 8,
           'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,prior=transformer,top_k=8,top_l=4,union=true]'),
    'sem-osd[beam=8,context=decoded,order=2]': ('sem-osd', {'beam': 8, 'context': 'decoded', 'lam': 1.0, 'lm_order': 4,
           'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[beam=8,context=genie,order=2]': ('sem-osd', {'beam': 8, 'context': 'genie', 'lam': 1.0, 'lm_order': 4,
           'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=genie,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[context=decoded,prior=transformer]': ('sem-osd', {'beam': 8, 'context': 'decoded', 'lam': 1.0,
           'lm_order': 4, 'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'transformer', 'top_k': 8, 'top_l': 4,
           'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,prior=transformer,top_k=8,top_l=4,union=true]'),
    'sem-osd[context=decoded]': ('sem-osd', {'beam': 8, 'context': 'decoded', 'lam': 1.0, 'lm_order': 4,
           'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[context=genie]': ('sem-osd', {'beam': 8, 'context': 'genie', 'lam': 1.0, 'lm_order': 4, 'model': 'auto',
           'omega': 1, 'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=genie,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[order=2,context=genie]': ('sem-osd', {'beam': 8, 'context': 'genie', 'lam': 1.0, 'lm_order': 4,
           'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=genie,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'sem-osd[order=2,prior=transformer]': ('sem-osd', {'beam': 8, 'context': 'decoded', 'lam': 1.0, 'lm_order': 4,
           'model': 'auto', 'omega': 1, 'order': 2, 'prior': 'transformer', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,prior=transformer,top_k=8,top_l=4,union=true]'),
    'sem-osd[order=2]': ('sem-osd', {'beam': 8, 'context': 'decoded', 'lam': 1.0, 'lm_order': 4, 'model': 'auto',
           'omega': 1, 'order': 2, 'prior': 'ngram', 'top_k': 8, 'top_l': 4, 'union': True},
           'sem-osd[beam=8,context=decoded,lam=1.0,lm_order=4,omega=1,order=2,top_k=8,top_l=4,union=true]'),
    'window': ('window', {'F': 1, 'W': 3, 'fallback': 'none', 'inner': 'bposd', 'per_round': 0, 'alpha': 1.0,
           'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80, 'osd_key': 'last',
           'osd_order': 10, 'schedule': 'flooding'},
           'window[F=1,W=3,inner=bposd,per_round=0,alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=10,schedule=flooding]'),
    'window[F=1,W=3,inner=pymatching,per_round=0]': ('window', {'F': 1, 'W': 3, 'fallback': 'none',
           'inner': 'pymatching', 'per_round': 0},
           'window[F=1,W=3,inner=pymatching,per_round=0]'),
    'window[inner=bposd,W=3,F=1]': ('window', {'F': 1, 'W': 3, 'fallback': 'none', 'inner': 'bposd', 'per_round': 0,
           'alpha': 1.0, 'beta': 0.0, 'bits': 0, 'frac_bits': 3, 'max_iter': 80, 'osd_key': 'last',
           'osd_order': 10,
           'schedule': 'flooding'},
           'window[F=1,W=3,inner=bposd,per_round=0,alpha=1.0,beta=0.0,bits=0,frac_bits=3,max_iter=80,osd_order=10,schedule=flooding]'),
    'window[inner=gdg,W=3,F=1,fallback=all]': ('window', {'F': 1, 'W': 3, 'fallback': 'all', 'inner': 'gdg',
           'per_round': 0, 'alpha': 1.0, 'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0,
           'max_side_depth': 10, 'max_step': 25, 'max_tree_depth': 3, 'new_n': 0, 'osd_after': -1, 'osd_method': 'none',
           'osd_order': 10, 'pre_iter': 8, 'side_step': 10, 'step_iter': 6},
           'window[F=1,W=3,fallback=all,inner=gdg,per_round=0,alpha=1.0,low_error_mode=false,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,pre_iter=8,side_step=10,step_iter=6]'),
    'window[inner=gdg,W=3,F=1,max_iters=150,osd_method=osd_cs,osd_after=60]': ('window', {'F': 1, 'W': 3,
           'fallback': 'none', 'inner': 'gdg', 'per_round': 0, 'alpha': 1.0, 'branch_threads': 1,
           'low_error_mode': False, 'max_iters': 150, 'max_side_depth': 10, 'max_step': 25, 'max_tree_depth': 3,
           'new_n': 0, 'osd_after': 60, 'osd_method': 'osd_cs', 'osd_order': 10, 'pre_iter': 8, 'side_step': 10,
           'step_iter': 6},
           'window[F=1,W=3,inner=gdg,per_round=0,alpha=1.0,low_error_mode=false,max_iters=150,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,osd_after=60,osd_method=osd_cs,pre_iter=8,side_step=10,step_iter=6]'),
    'window[inner=gdg,W=3,F=1,osd_method=osd_cs,osd_after=60]': ('window', {'F': 1, 'W': 3, 'fallback': 'none',
           'inner': 'gdg', 'per_round': 0, 'alpha': 1.0, 'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0,
           'max_side_depth': 10, 'max_step': 25, 'max_tree_depth': 3, 'new_n': 0, 'osd_after': 60,
           'osd_method': 'osd_cs', 'osd_order': 10, 'pre_iter': 8, 'side_step': 10, 'step_iter': 6},
           'window[F=1,W=3,inner=gdg,per_round=0,alpha=1.0,low_error_mode=false,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,osd_after=60,osd_method=osd_cs,pre_iter=8,side_step=10,step_iter=6]'),
    'window[inner=gdg,W=3,F=1]': ('window', {'F': 1, 'W': 3, 'fallback': 'none', 'inner': 'gdg', 'per_round': 0,
           'alpha': 1.0, 'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0, 'max_side_depth': 10,
           'max_step': 25, 'max_tree_depth': 3, 'new_n': 0, 'osd_after': -1, 'osd_method': 'none', 'osd_order': 10,
           'pre_iter': 8, 'side_step': 10, 'step_iter': 6},
           'window[F=1,W=3,inner=gdg,per_round=0,alpha=1.0,low_error_mode=false,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,pre_iter=8,side_step=10,step_iter=6]'),
    'window[inner=gdg,W=5,F=2,max_step=40,max_tree_depth=4,max_side_depth=20,side_step=20,fallback=all]': (
           'window', {'F': 2, 'W': 5, 'fallback': 'all', 'inner': 'gdg', 'per_round': 0, 'alpha': 1.0,
           'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0, 'max_side_depth': 20, 'max_step': 40,
           'max_tree_depth': 4, 'new_n': 0, 'osd_after': -1, 'osd_method': 'none', 'osd_order': 10, 'pre_iter': 8,
           'side_step': 20, 'step_iter': 6},
           'window[F=2,W=5,fallback=all,inner=gdg,per_round=0,alpha=1.0,low_error_mode=false,max_side_depth=20,max_step=40,max_tree_depth=4,new_n=0,pre_iter=8,side_step=20,step_iter=6]'),
    'window[inner=gdg]': ('window', {'F': 1, 'W': 3, 'fallback': 'none', 'inner': 'gdg', 'per_round': 0, 'alpha': 1.0,
           'branch_threads': 1, 'low_error_mode': False, 'max_iters': 0, 'max_side_depth': 10, 'max_step': 25,
           'max_tree_depth': 3, 'new_n': 0, 'osd_after': -1, 'osd_method': 'none', 'osd_order': 10, 'pre_iter': 8,
           'side_step': 10, 'step_iter': 6},
           'window[F=1,W=3,inner=gdg,per_round=0,alpha=1.0,low_error_mode=false,max_side_depth=10,max_step=25,max_tree_depth=3,new_n=0,pre_iter=8,side_step=10,step_iter=6]'),
    'window[inner=relay-bp,W=5,F=2]': ('window', {'F': 2, 'W': 5, 'fallback': 'none', 'inner': 'relay-bp',
           'per_round': 0, 'alpha': 1.0, 'bits': 0, 'frac_bits': 3, 'gamma0': 0.15, 'gamma_hi': 0.622,
           'gamma_lo': -0.226, 'leg_iter': 60, 'legs': 300, 'pre_iter': 80, 'seed': 0, 'stop_after': 5},
           'window[F=2,W=5,inner=relay-bp,per_round=0,alpha=1.0,bits=0,frac_bits=3,gamma0=0.15,gamma_hi=0.622,gamma_lo=-0.226,leg_iter=60,legs=300,pre_iter=80,seed=0,stop_after=5]'),
}
#: Labels in those files that were refused before (placeholders, invalid values): still refused.
INVALID = ['bposd[nope=1]', 'bposd[osd_order=-1]', 'crisp[beam=L]', 'gdg[osd_after=N]', 'pymatching[alpha=1]',
           'relay-bp[gamma0=oops]', 'window[...,fallback=all]',
           'window[inner=gdg,W=3,F=1,max_iters=B,osd_method=osd_cs,osd_after=60]',
           'window[inner=gdg,W=3,F=1,max_iters=B,osd_method=osd_cs]']


def _as_recorded(spec, recorded: dict) -> dict:
    """``spec``'s parameters that existed when ``recorded`` was written. Those added since are options
    left out of labels at their implied value (``label_default=False``): at that value, they must be."""
    entry = get_entry(spec.name)
    defs = dict(entry.params)
    if entry.nested is not None:
        defs.update(get_entry(dict(spec.params)[entry.nested]).params)
    for key, value in spec.params:
        if key not in recorded:
            assert not defs[key].label_default, key
            if value != defs[key].implied:
                return {**recorded, key: value}  # differs: the configuration is not the recorded one
    return {k: v for k, v in spec.params if k in recorded}


@pytest.mark.parametrize("text", sorted(RECORDED))
def test_recorded_labels_resolve_as_before(text):
    """Read back as a recorded label (DecoderSpec.from_label), every text means what it meant."""
    name, params, label = RECORDED[text]
    spec = DecoderSpec.from_label(text)
    assert spec.name == name
    assert _as_recorded(spec, params) == params
    assert spec.label() == label
    assert DecoderSpec.from_label(label) == spec


@pytest.mark.parametrize("text", sorted(RECORDED))
def test_a_request_gets_todays_defaults_under_a_label_of_its_own(text):
    """As a request (``--decoder``), a text takes today's defaults. Where one changed since the text
    was recorded (bposd's osd_key, relay-bp's bits), the label is new, so the two are never pooled;
    otherwise it is the recorded label."""
    from qdecode.sims.recipe import parse_decoder

    name, params, label = RECORDED[text]
    spec = parse_decoder(text)
    assert spec.name == name
    assert (spec.label() == label) == (_as_recorded(spec, params) == params)
    assert DecoderSpec.from_label(spec.label()) == spec


def test_changed_defaults_are_spelled_out():
    """The defaults changed after labels were recorded, and what the old spellings mean."""
    now = {name: dict(DecoderSpec.create(name).params) for name in ("bposd", "bposd-e", "relay-bp")}
    assert now["bposd"]["osd_key"] == now["bposd-e"]["osd_key"] == "sum4"
    assert now["relay-bp"]["bits"] == 8
    assert "osd_key=sum4" in DecoderSpec.create("bposd").label()
    assert "osd_key" not in DecoderSpec.create("bposd", {"osd_key": "last"}).label()
    assert dict(DecoderSpec.from_label("bposd[osd_order=4]").params)["osd_key"] == "last"
    assert dict(DecoderSpec.from_label("relay-bp[legs=4]").params)["bits"] == 0
    assert dict(DecoderSpec.from_label("window[inner=bposd]").params)["osd_key"] == "last"
    assert dict(DecoderSpec.create("window", {"inner": "bposd"}).params)["osd_key"] == "sum4"


@pytest.mark.parametrize("text", INVALID)
def test_recorded_invalid_labels_still_refused(text):
    from qdecode.sims.recipe import parse_decoder

    with pytest.raises(ValueError):
        parse_decoder(text)


# ------------------------------------------------------------------ values that used to slip through
def test_a_parameter_given_twice_is_refused():
    from qdecode.sims.recipe import parse_decoder

    with pytest.raises(ValueError, match="decoder 'bposd': parameter 'osd_order' is given twice"):
        DecoderSpec.create("bposd", ["osd_order=3", "osd_order=4"])
    with pytest.raises(ValueError, match="parameter 'osd_order' is given twice"):
        parse_decoder("bposd[osd_order=3, osd_order =4]")


@pytest.mark.parametrize("name, params, message", [
    ("bposd", {"osd_order": True}, "osd_order=True is a bool; osd_order takes an int"),
    ("bposd", {"osd_order": np.bool_(False)}, "is a bool; osd_order takes an int"),
    ("bp", {"alpha": False}, "alpha=False is a bool; alpha takes a float"),
])
def test_bools_are_not_numbers(name, params, message):
    with pytest.raises(ValueError, match=message):
        decoder(name, _problem(), **params)


def test_numbers_of_other_types_still_convert():
    assert decoder("bposd", _problem(), osd_order=np.int64(3), alpha=1).params["osd_order"] == 3
    assert DecoderSpec.create("bp", {"alpha": np.float32(0.5)}).params == DecoderSpec.create("bp", ["alpha=0.5"]).params


def test_decoder_takes_a_problem_or_a_dem_and_says_so():
    circuit = stim.Circuit.generated("repetition_code:memory", distance=3, rounds=3, after_clifford_depolarization=0.02)
    dem = circuit.detector_error_model(decompose_errors=True)
    problem = DecodingProblem.from_dem(dem)
    assert decoder("bposd", dem).predict_observables_batch(np.zeros((1, dem.num_detectors), np.uint8)).shape == (1, 1)
    assert decoder("bposd", problem).params == decoder("bposd", dem).params
    accepted = r"decoder\('bposd', \.\.\.\) takes a DecodingProblem or a stim.DetectorErrorModel, got "
    for target, got in (("model.dem", "the path 'model.dem'; to read a .dem file pass stim.DetectorErrorModel"),
                        (circuit, r"a stim.Circuit; pass circuit.detector_error_model\(decompose_errors=True\)"),
                        (None, "None"), (np.zeros((3, 3)), "numpy.ndarray"), (3, "int")):
        with pytest.raises(TypeError, match=accepted + got) as info:
            decoder("bposd", target)
        assert "\n" not in str(info.value)
