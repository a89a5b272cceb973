"""Helpers shared by several sub-commands (public names; each command module keeps its own privates).

The problem options of ``qdecode bench``, ``tune``, ``export-vectors`` and ``export-rtl``: a named code
+ noise (``--code --d --rounds --noise --p --basis``, as in ``qdecode sweep``'s inline form), a stim
circuit (``--circuit``), a detector error model (``--dem``) or a code-capacity check matrix
(``--alist``): :func:`add_problem_args` declares them, :func:`load_problem` builds the
:class:`LoadedProblem` (the problem, its sampler, a description for the output), and
:func:`check_shots` checks ``--shots``. :func:`time_budget_params` reads ``--time-budget`` (``qdecode
sweep`` and ``predict``), which tunes ``--decoder auto`` only.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Sequence

import numpy as np

from qdecode.errors import InputError


def add_problem_args(p, *, alist: bool = False) -> None:
    """Problem options: ``--code/--d/--rounds/--noise/--p/--basis``, ``--circuit``, ``--dem`` (and ``--alist``)."""
    g = p.add_argument_group("problem (one of --code, --circuit, --dem" + (", --alist" if alist else "") + ")")
    g.add_argument("--code", help="code name (see `qdecode codes`); needs --noise and --p (default: none)")
    g.add_argument("--d", type=int, help="distance (required for surface; default: a fixed code's own distance)")
    g.add_argument("--rounds", type=int, help="syndrome rounds (default: the code's default, d for surface)")
    g.add_argument("--noise", help="noise model: sd6, si1000, bb-uniform, code-capacity, phenomenological "
                                  "(no default; required with --code)")
    g.add_argument("--p", type=float, help="physical error rate (no default; required with --code"
                                           + (" and --alist)" if alist else ")"))
    g.add_argument("--basis", default="Z", choices=["X", "Z", "XYZ"],
                   help="memory basis (XYZ: colour code only) (default: %(default)s)")
    g.add_argument("--circuit", metavar="FILE",
                   help="stim circuit; shots are sampled from it and decoded with its DEM as sinter derives it "
                        "(default: none)")
    g.add_argument("--dem", metavar="FILE",
                   help="stim detector error model; shots are sampled from it (default: none)")
    if alist:
        g.add_argument("--alist", metavar="FILE",
                       help="code-capacity check matrix (alist); needs --p; iid errors with probability p "
                            "(default: none)")


@dataclasses.dataclass
class LoadedProblem:
    """A decoding problem, how to sample it, and what to record about it."""

    problem: Any
    sample: Callable[[int, int | None], tuple[np.ndarray, np.ndarray | None]]
    description: dict[str, Any]
    rounds: int | None


def load_problem(args) -> LoadedProblem:
    """Build the problem named by the shared options (see :func:`add_problem_args`)."""
    from qdecode.problem import DecodingProblem

    alist = getattr(args, "alist", None)
    circuit_path = getattr(args, "circuit", None)
    given = [flag for flag, v in (("--code", args.code), ("--circuit", circuit_path), ("--dem", args.dem),
                                  ("--alist", alist)) if v]
    if len(given) != 1:
        choices = "--code, --circuit, --dem or --alist" if hasattr(args, "alist") else "--code, --circuit or --dem"
        raise InputError(f"give exactly one of {choices}" + (f" (got {', '.join(given)})" if given else ""))
    if args.code:
        missing = [f for f, v in (("--noise", args.noise), ("--p", args.p)) if v is None]
        if missing:
            raise InputError(f"--code needs {' and '.join(missing)}")
        from qdecode.problem import decoding_dem
        from qdecode.sims.circuits import build_circuit, circuit_metadata

        kw = dict(d=args.d, rounds=args.rounds, noise=args.noise, p=args.p, basis=args.basis)
        meta = circuit_metadata(args.code, **kw)
        circuit = build_circuit(args.code, **kw)
        problem = DecodingProblem.from_dem(decoding_dem(circuit))

        def sample(shots, seed):
            dets, obs = circuit.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
            return dets.astype(np.uint8), obs.astype(np.uint8)

        desc = {"source": "circuit", "code": args.code, "d": meta["d"], "rounds": meta["rounds"],
                "noise": meta["noise"], "p": meta["p"], "basis": meta["basis"],
                "num_collisions": int(problem.num_collisions),
                "sampler": "stim compile_detector_sampler(seed).sample(shots, separate_observables=True)"}
        return LoadedProblem(problem, sample, desc, int(meta["rounds"]))
    for flag, v in (("--d", args.d), ("--noise", args.noise)):
        if v is not None:
            raise InputError(f"{flag} applies to --code only")
    if circuit_path:
        return _circuit_problem(args, circuit_path)
    if args.dem:
        from qdecode.sims.model_files import read_dem

        dem = read_dem(args.dem)
        if args.p is not None:
            raise InputError("--p applies to --code and --alist, not --dem (the DEM holds the probabilities)")
        problem = DecodingProblem.from_dem(dem)

        def sample(shots, seed):
            dets, obs, _ = dem.compile_sampler(seed=seed).sample(shots)
            return dets.astype(np.uint8), obs.astype(np.uint8)

        desc = {"source": "dem", "path": os.path.abspath(args.dem), "rounds": args.rounds,
                "num_collisions": int(problem.num_collisions),
                "sampler": "stim DetectorErrorModel.compile_sampler(seed).sample(shots)"}
        return LoadedProblem(problem, sample, desc, args.rounds)
    # --alist
    from qdecode.codes.alist import read_alist

    if args.p is None:
        raise InputError("--alist needs --p (the iid error probability)")
    if args.rounds is not None:
        raise InputError("--rounds does not apply to --alist (code capacity)")
    H = read_alist(alist)
    problem = DecodingProblem.from_check_matrix(H, args.p)
    Hc = problem.H.tocsr()
    p = float(args.p)

    def sample(shots, seed):
        rng = np.random.default_rng(seed)
        err = (rng.random((shots, problem.num_errors)) < p).astype(np.uint8)
        synd = (np.asarray((Hc @ err.T.astype(np.int64))).T & 1).astype(np.uint8)
        return synd, None

    desc = {"source": "alist", "path": os.path.abspath(alist), "p": p, "noise": "code-capacity",
            "sampler": "numpy default_rng(seed).random((shots, n)) < p; syndrome = H e mod 2"}
    return LoadedProblem(problem, sample, desc, None)


def _circuit_problem(args, path: str) -> LoadedProblem:
    """``--circuit FILE``: shots from the circuit, decoded with its DEM derived as sinter derives it."""
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.model_files import read_circuit

    if args.p is not None:
        raise InputError("--p applies to --code and --alist, not --circuit (the circuit holds the probabilities)")
    circuit = read_circuit(path)
    problem = DecodingProblem.from_dem(decoding_dem(circuit))

    def sample(shots, seed):
        dets, obs = circuit.compile_detector_sampler(seed=seed).sample(shots, separate_observables=True)
        return dets.astype(np.uint8), obs.astype(np.uint8)

    desc = {"source": "circuit file", "path": os.path.abspath(path), "rounds": args.rounds,
            "num_collisions": int(problem.num_collisions),
            "sampler": "stim compile_detector_sampler(seed).sample(shots, separate_observables=True)"}
    return LoadedProblem(problem, sample, desc, args.rounds)


def check_shots(shots: int) -> int:
    """``--shots`` as an int, checked to be at least 1 (``ValueError`` otherwise)."""
    if shots is None or shots < 1:
        raise InputError(f"--shots must be >= 1, got {shots}")
    return int(shots)


def time_budget_params(ms: float | None, decoders: Sequence[str]) -> list[str]:
    """``--time-budget MS`` as the parameter ``["time_budget=MS"]`` of ``auto`` (``[]`` when not given).

    The flag tunes ``--decoder auto`` only, so with no ``auto`` among ``decoders`` (the ``--decoder``
    texts) it is refused here, naming the flag, instead of as a parameter the decoder lacks.
    """
    from qdecode.decoders.auto import time_budget_param
    from qdecode.decoders.registry import split_label

    if ms is not None and not any(split_label(text)[0] == "auto" for text in decoders):
        given = " --decoder ".join(decoders)
        raise InputError(f"--time-budget applies to --decoder auto only (got --decoder {given}); drop "
                         f"--time-budget, or decode with --decoder auto")
    return time_budget_param(ms)


def check_input_file(path: str, what: str = "a stats CSV file") -> str:
    """``path``, checked to be a readable file; a ``ValueError`` of one line otherwise.

    The one check of the input files of ``plot``, ``threshold`` and ``combine``:
    ``<path>: is a directory, expected <what>``, ``<path>: no such file``,
    ``<path>: not a regular file, expected <what>`` or ``<path>: permission denied``.
    """
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, expected {what}")
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise InputError(f"{path}: not a regular file, expected {what}")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: permission denied")
    return path
