"""Write ``tests/data/bp_golden.json``: digests of every BP-family decoder's output on fixed shots.

The digests pin the results of the min-sum kernels (flooding, lanes, layered, product-sum, fixed
point, Relay-BP, GDG, BP+OSD) bit for bit, so that a refactor of the kernels can prove it changed
nothing: ``tests/kernels/test_bp_golden.py`` recomputes them. Regenerate only when a change of
results is intended, and say so in the commit::

    python tests/data/generate_bp_golden.py

Problems: the d = 3 rotated surface-code memory-Z DEM under SD6 noise at p = 0.01 (circuit level,
hyperedges), and the d = 5 one at p = 0.005; syndromes sampled by stim with fixed seeds.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "bp_golden.json"

#: (decoder name, parameters): every BP-family kernel path and arithmetic
CONFIGS: list[tuple[str, dict]] = [
    ("bp", {}),
    ("bp", {"alpha": 0.625}),
    ("bp", {"alpha": 0.0}),
    ("bp", {"alpha": 0.75, "beta": 0.5}),
    ("bp", {"schedule": "layered"}),
    ("bp", {"bits": 8, "frac_bits": 3, "alpha": 0.625}),
    ("bp", {"bits": 8, "frac_bits": 3, "alpha": 0.0}),
    ("bp", {"bits": 8, "frac_bits": 3, "schedule": "layered"}),
    ("bp", {"dtype": "float32"}),
    ("bp-ps", {}),
    ("bp-ps", {"schedule": "layered"}),
    ("bposd", {"osd_key": "last"}),  # the defaults when the digests were written
    ("bposd-e", {"osd_key": "last"}),
    ("relay-bp", {"legs": 20, "bits": 0}),
    ("relay-bp", {"legs": 20, "bits": 8, "frac_bits": 3}),
    ("mem-bp", {}),
    ("gdg", {}),
]

PROBLEMS = {"surface3_sd6_p0.01": (3, 0.01, 300), "surface5_sd6_p0.005": (5, 0.005, 200)}
#: shots decoded one at a time as well: batches below 4 shots take the scalar kernels
SMALL = 3


def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:32]


def problems():
    from qdecode import DecodingProblem, build_circuit
    from qdecode.problem import decoding_dem

    for key, (d, p, shots) in PROBLEMS.items():
        c = build_circuit("surface", d=d, noise="sd6", p=p, basis="Z", memory_basis_only=True)
        dets = c.compile_detector_sampler(seed=11).sample(shots).astype(np.uint8)
        yield key, DecodingProblem.from_dem(decoding_dem(c)), dets


def outputs(name: str, params: dict, problem, dets) -> dict[str, str]:
    """Digests of the decoder's errors (with convergence and iterations, where reported) on ``dets``."""
    from qdecode import decoder
    from qdecode.decoders.registry import get_entry

    if any(k not in get_entry(name).params for k in params):
        return {}  # a parameter this version does not have
    dec = decoder(name, problem, **params)
    out = {}
    if hasattr(dec, "decode_soft_batch"):
        hard, post = dec.decode_soft_batch(dets)
        out["soft"] = digest(hard, post)
    hard = dec.decode_batch(dets)
    info = getattr(dec, "last_info", None)
    extra = [] if info is None else [np.asarray(info.converged), np.asarray(info.iterations)]
    out["batch"] = digest(hard, *extra)
    fired = np.flatnonzero(dets.any(axis=1))[:SMALL]  # shots with detection events
    out["small"] = digest(*[dec.decode_batch(dets[i:i + 1]) for i in fired])
    if hasattr(dec, "decode_soft_batch"):  # posteriors of one-shot calls (flooding min-sum: the lane kernel)
        out["small_soft"] = digest(*[a for i in fired for a in dec.decode_soft_batch(dets[i:i + 1])])
    return out


def compute() -> dict[str, dict[str, str]]:
    table = {}
    for key, problem, dets in problems():
        for name, params in CONFIGS:
            label = f"{key}/{name}[{','.join(f'{k}={v}' for k, v in params.items())}]"
            got = outputs(name, params, problem, dets)
            if got:
                table[label] = got
    return table


def main() -> int:
    import numba
    import stim

    import qdecode

    table = compute()
    OUT.write_text(json.dumps({"versions": {"qdecode": qdecode.__version__, "stim": stim.__version__,
                                            "numba": numba.__version__, "numpy": np.__version__},
                               "digests": table}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(table)} configurations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
