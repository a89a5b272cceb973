"""Kernels are their own reference: every kernel family decodes the same with numba's JIT on and off.

With ``NUMBA_DISABLE_JIT=1`` numba's decorators return the plain Python functions, so the kernels run
as Python; the helpers that jitted code gets through ``numba.extending.overload`` (``arith.scale``,
``relay.mix_prior``, ``arith.as_type_of``, ``minsum_lanes_narrow._step`` / ``_coeffs``, the trailing-zero count
under ``gf2.ctz64``) run their Python bodies, which are the reference (``docs/architecture.md``,
section 5). This file decodes a tiny problem with every kernel family twice, jitted in this process
and as Python in a subprocess (this file run as a script), and asserts identical outputs: hard
decisions, predicted observables, convergence flags, iteration counts and extras, and BP's
posteriors bit for bit (no tolerance: the Python run does the same float operations in the same
order, with libm's transcendental functions as the jitted code). The problems are tiny because the
Python run is slow.

Families: BP min-sum (flooding: the scalar kernel on one shot, the float64 lanes, the float32 and the
8- and 16-bit fixed-point narrow lanes, 24-bit fixed point; layered: scalar and lanes), product-sum,
BP+OSD (OSD-CS, OSD-E), BP+LSD, BP+UF, Mem-BP, Relay-BP (float and 8-bit lanes, one-shot scalar, the timed
kernels, ensembles of chains on lanes),
union-find, GDG (sequential and branch-parallel, with OSD), and on classical codes polar / PAC SC and
SCL (min-sum and exact boxplus), OSD, Berlekamp-Massey and sem-OSD (n-gram prior). Each decoder with a
confidence also gives it both ways (the soft-output kernels).

:func:`test_python_bodies_equal_overloads` checks the overloaded helpers one by one: the value and the
type of each Python body equal its overload's (as numba types the jitted call) on integer, unsigned,
wrapping and float arguments.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SHOTS = 8  # >= 4 so that the BP batch paths take the lane kernels (one shot: the scalar kernels)

#: label -> registry spec of the syndrome decoders, decoding a d=3 rotated surface-code DEM (one round).
QUANTUM = {
    "bp": "bp[max_iter=12]",
    "bp-alpha": "bp[max_iter=12,alpha=0.75,beta=0.1]",
    "bp-adaptive": "bp[max_iter=12,alpha=0]",
    "bp-f32": "bp[max_iter=12,dtype=float32]",
    "bp-i8": "bp[max_iter=12,bits=8]",
    "bp-i8-adaptive": "bp[max_iter=12,bits=8,alpha=0]",
    "bp-i16": "bp[max_iter=12,bits=12]",
    "bp-int24": "bp[max_iter=12,bits=24,frac_bits=16]",
    "bp-layered": "bp[max_iter=12,schedule=layered]",
    "bp-layered-i8": "bp[max_iter=12,schedule=layered,bits=8]",
    "bp-ps": "bp-ps[max_iter=12]",
    "bp-ps-layered": "bp-ps[max_iter=12,schedule=layered]",
    "bposd": "bposd[max_iter=6,osd_order=4]",
    "bposd-e": "bposd-e[max_iter=6,osd_order=2]",
    "bplsd": "bplsd[max_iter=6,lsd_order=4]",
    "bpuf": "bpuf[max_iter=6]",
    "mem-bp": "mem-bp[max_iter=12]",
    "mem-bp-i8": "mem-bp[max_iter=12,bits=8]",
    "relay-bp": "relay-bp[bits=0,pre_iter=6,legs=6,leg_iter=6,stop_after=2]",
    "relay-bp-i8": "relay-bp[bits=8,pre_iter=6,legs=6,leg_iter=6,stop_after=2]",
    "relay-bp-ensemble": "relay-bp[bits=8,pre_iter=6,legs=6,leg_iter=6,stop_after=2,ensemble=3]",
    "bplsd-e": "bplsd[max_iter=4,lsd_order=3,lsd_method=lsd_e,bits_per_step=0]",
    "uf": "uf",
    "uf-uniform": "uf[growth=uniform,length_steps=3]",
    "gdg": "gdg[pre_iter=4,step_iter=3,max_step=6,max_tree_depth=2]",
    "gdg-branches": "gdg[pre_iter=2,step_iter=4,max_step=6,max_tree_depth=2,branch_threads=2,osd_method=osd_cs,"
                    "osd_order=2,osd_after=0]",
}
#: label -> (registry spec, catalogue code, Eb/N0 in dB) of the block decoders.
CLASSICAL = {
    "sc": ("sc", "polar32_16", 2.0),
    "scl": ("scl[list_size=4]", "polar32_16", 2.0),
    "scl-pac": ("scl[list_size=4]", "pac32_16", 2.0),
    "osd": ("osd[order=2]", "polar32_16", 2.0),
    "bm": ("bm", "bch63_45", 5.0),
    "sem-osd": ("sem-osd[order=1,top_k=4,top_l=2,beam=4]", "bch127_64", 3.0),
}
#: label -> (keyword arguments, catalogue code) of the exact-boxplus polar decoders (no registry parameter).
POLAR_EXACT = {
    "sc-exact": ({"exact": True}, "polar32_16"),
    "scl-exact": ({"exact": True, "list_size": 4}, "polar32_16"),
}


def _problem():
    import stim

    from qdecode.problem import DecodingProblem

    circ = stim.Circuit.generated("surface_code:rotated_memory_z", distance=3, rounds=1,
                                  after_clifford_depolarization=0.03, before_measure_flip_probability=0.03)
    dem = circ.detector_error_model(decompose_errors=True)
    dets = dem.compile_sampler(seed=20250).sample(SHOTS)[0].astype(np.uint8)
    return DecodingProblem.from_dem(dem), dets


def _info(out: dict, label: str, info) -> None:
    if info is None:
        return
    for key in ("converged", "iterations", "work"):
        if getattr(info, key) is not None:
            out[f"{label}/{key}"] = np.asarray(getattr(info, key))
    for key, value in info.extra.items():
        if not key.endswith("wall_ns"):  # measured times differ from run to run; everything else is exact
            out[f"{label}/extra-{key}"] = np.asarray(value)


def decode_all() -> dict[str, np.ndarray]:
    """Every family's outputs on the fixed inputs, as ``{"label/what": array}``."""
    from qdecode.decoders.registry import decoder
    from qdecode.sims.channels import BpskAwgn
    from qdecode.sims.classical_points import BinaryCode

    problem, dets = _problem()
    out: dict[str, np.ndarray] = {}
    for label, spec in QUANTUM.items():
        dec = decoder(spec, problem)
        out[f"{label}/obs"] = dec.predict_observables_batch(dets)
        _info(out, label, dec.last_info)
        if dec.gives_errors:  # uf: observables only on DEMs with decomposed hyperedges
            out[f"{label}/errors"] = dec.decode_batch(dets)
            out[f"{label}/one"] = dec.decode_batch(dets[1:2])  # one shot: the scalar kernels
        if dec.wall_method == "kernel":  # the kernels that time each shot: the same answers, one shot at a time
            packed = np.packbits(dets, axis=1, bitorder="little")
            out[f"{label}/timed"] = dec.predict_observables_timed(packed)
            _info(out, f"{label}/timed", dec.last_info)
        if dec.has_confidence:  # the soft-output kernels (relay legs, LSD clusters, OSD candidates)
            obs, gap = dec.predict_with_confidence(dets)
            out[f"{label}/conf-obs"], out[f"{label}/gap"] = obs, gap
            _info(out, f"{label}/conf", dec.last_info)
        if hasattr(dec, "decode_soft_batch"):
            hard, post = dec.decode_soft_batch(dets)
            out[f"{label}/soft-hard"], out[f"{label}/post"] = hard, post
            _info(out, f"{label}/soft", dec.last_info)
    for label, (spec, code_name, ebn0) in CLASSICAL.items():
        from qdecode.codes.catalog import get_code

        code = BinaryCode.of(get_code(code_name))
        rng = np.random.default_rng(7)
        cw = code.encode(rng.integers(0, 2, (SHOTS, code.k), dtype=np.uint8))
        llr = BpskAwgn(ebn0, code.rate).transmit(cw, rng)
        dec = decoder(spec, get_code(code_name))
        out[f"{label}/words"] = dec.decode_llr_batch(llr)
        _info(out, label, dec.last_info)
    for label, (kwargs, code_name) in POLAR_EXACT.items():
        from qdecode.codes.catalog import get_code
        from qdecode.decoders.sc_scl import ScDecoder, SclDecoder

        code = get_code(code_name)
        rng = np.random.default_rng(8)
        cw = BinaryCode.of(code).encode(rng.integers(0, 2, (SHOTS, code.k), dtype=np.uint8))
        llr = BpskAwgn(1.5, code.k / code.n).transmit(cw, rng)
        dec = (SclDecoder if "list_size" in kwargs else ScDecoder)(code, **kwargs)
        out[f"{label}/words"] = dec.decode_llr_batch(llr)
    return out


@pytest.fixture(scope="module")
def jit_off(tmp_path_factory) -> dict[str, np.ndarray]:
    """:func:`decode_all` run as plain Python, in a subprocess with ``NUMBA_DISABLE_JIT=1``."""
    path = tmp_path_factory.mktemp("jit_off") / "out.npz"
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    root = Path(__file__).resolve().parents[2]
    # numpy warns where a uint64 hash or a uint8 mask wraps (as in jitted code, modulo 2^bits): not an error here
    quiet = "ignore:overflow encountered in scalar:RuntimeWarning"
    proc = subprocess.run([sys.executable, "-W", quiet, __file__, str(path)], env=env, cwd=root, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with np.load(path) as data:
        return dict(data)


@pytest.fixture(scope="module")
def jit_on() -> dict[str, np.ndarray]:
    import numba

    assert not numba.config.DISABLE_JIT
    return decode_all()


@pytest.mark.parametrize("label", [*QUANTUM, *CLASSICAL, *POLAR_EXACT])
def test_jit_off_decodes_identically(label, jit_on, jit_off):
    keys = sorted(k for k in jit_on if k.split("/")[0] == label)
    assert keys and keys == sorted(k for k in jit_off if k.split("/")[0] == label)
    for key in keys:
        a, b = jit_on[key], jit_off[key]
        assert a.dtype == b.dtype and a.shape == b.shape, key
        nan_ok = a.dtype.kind == "f"  # a gap is nan where the decoder cannot tell, on both sides
        assert np.array_equal(a, b, equal_nan=nan_ok), f"{key}: jitted {a.tolist()} != Python {b.tolist()}"


if __name__ == "__main__":  # the subprocess of ``jit_off``
    np.savez(sys.argv[1], **decode_all())


def _jit_twin(fn, arity):
    """A jitted caller of ``fn`` (so ``fn`` resolves to its overload), fresh per test (no disk cache)."""
    import numba

    callers = {1: lambda a: fn(a), 2: lambda a, b: fn(a, b), 4: lambda a, b, c, d: fn(a, b, c, d),
               5: lambda a, b, c, d, e: fn(a, b, c, d, e)}  # numba inlines no overload into a *args call
    return numba.njit(callers[arity])


STUB_CASES = {
    "scale": [(np.int32(100), 0.75, np.int32(192), 8), (np.uint8(127), 0.5, np.int32(255), np.int32(8)),
              (np.int64(2**40 + 3), 1.0, np.int64(2**30 - 1), 30), (np.float32(1.5), 0.625, 0, 0),
              (np.float32(3.25), np.float64(0.875), np.int32(224), np.int32(8)), (2.5, 0.75, 0, 0)],
    "mix_prior": [(np.int32(-37), np.int32(250), 0.3, np.int64(77), 8), (np.int16(5), np.int16(-9), -0.2,
                                                                              np.int64(-51), np.int64(8)),
                  (np.float64(-1.75), np.float64(3.5), np.float64(0.15), np.int64(0), 0),
                  (np.float32(2.5), np.float32(-0.5), np.float64(0.6), np.int64(0), 0)],
    "_as": [(np.int64(300), np.uint8(0)), (np.int64(-3), np.uint8(0)), (np.int32(70000), np.int16(0)),
            (np.int64(-40000), np.int32(0)), (np.float32(-3.7), np.int32(0)), (np.int64(5), np.float32(0)),
            (np.uint8(200), np.int16(0)), (7, np.uint16(0)), (np.int16(-2), 0)],
    "sat_add": [(np.int8(100), np.int8(100)), (np.int8(-100), np.int8(-100)), (np.int8(5), np.int8(-7)),
                (np.int16(30000), np.int16(5000)), (np.int16(-30000), np.int16(-5000)), (np.int16(3), np.int16(4))],
    "sat_sub": [(np.int8(100), np.int8(-100)), (np.int8(-100), np.int8(100)), (np.int8(5), np.int8(7)),
                (np.int16(30000), np.int16(-5000)), (np.int16(-30000), np.int16(5000)), (np.int16(3), np.int16(4))],
    "_trailing_zeros64": [(np.uint64(1),), (np.uint64(0),), (np.uint64(2**63),), (np.uint64(0xF0F0_0000_0000),),
                          (np.uint64(12345678912345),)],
}


@pytest.mark.parametrize("name", sorted(STUB_CASES))
def test_python_bodies_equal_overloads(name):
    """Each overloaded helper's Python body gives the value and the type that its overload gives for the same
    argument types (the type as numba infers it for the jitted call)."""
    import numba
    from numba.np.numpy_support import as_dtype

    from qdecode.kernels import arith, gf2, relay

    fn = {"scale": arith.scale, "mix_prior": relay.mix_prior, "_as": arith.as_type_of, "sat_add": arith.sat_add,
          "sat_sub": arith.sat_sub,
          "_trailing_zeros64": gf2._trailing_zeros64}[name]
    twin = _jit_twin(fn, len(STUB_CASES[name][0]))
    for args in STUB_CASES[name]:
        py = fn(*args)
        jit = twin(*args)
        rtype = twin.overloads[tuple(numba.typeof(a) for a in args)].signature.return_type
        assert np.asarray(py).dtype == as_dtype(rtype), (args, type(py), rtype)
        assert py == jit and np.signbit(py) == np.signbit(jit), (args, py, jit)
