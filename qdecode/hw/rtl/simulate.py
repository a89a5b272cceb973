"""Run the generated bench on an ``export-vectors`` directory with Icarus Verilog (or Verilator).

:func:`simulate` checks that the vector set belongs to the design (H hash, bits, alpha, beta,
max_iter, priors), writes the bench for its shot count into a build directory, compiles
(``iverilog -g2005`` / ``verilator --binary``), runs the simulation *inside the vector
directory* (the bench opens the vector files by name), and parses the bench's ``RESULT`` and
``MISMATCH`` lines into a :class:`SimReport`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from qdecode.errors import InputError
from qdecode.hw.rtl.emit import check_vectors
from qdecode.hw.rtl.testbench import emit_testbench
from qdecode.hw.vectors import load_vectors

SIMULATORS = ("iverilog", "verilator")
FIELDS = ("hard", "iterations", "converged", "cycles")
_RESULT = re.compile(r"^RESULT shots=(\d+) hard=(\d+) iterations=(\d+) converged=(\d+) cycles=(\d+) "
                     r"failed=(\d+) total_cycles=(\d+)", re.M)
_RELAY = re.compile(r"^RESULT .* legs=(\d+) weight=(\d+)", re.M)


@dataclasses.dataclass
class SimReport:
    """Bench result: ``mismatches[field]`` = shots whose ``field`` differs (hard / iterations /
    converged / cycles; Relay-BP also legs / weight), ``failed`` = shots with any difference,
    ``total_cycles`` = clock edges
    from each ``start`` edge to ``done``, summed; compile and run wall seconds."""

    simulator: str
    shots: int
    mismatches: dict[str, int]
    failed: int
    total_cycles: int
    compile_s: float
    run_s: float
    lines: list[str]

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def summary(self) -> str:
        per = ", ".join(f"{k} {v}" for k, v in self.mismatches.items())
        head = (f"{self.simulator}: {self.shots} shots, {self.shots - self.failed} passed, {self.failed} failed "
                f"(mismatches: {per}); {self.total_cycles} cycles; compile {self.compile_s:.2f} s, "
                f"run {self.run_s:.2f} s")
        return "\n".join([head] + [f"  {ln}" for ln in self.lines])


def simulator_available(simulator: str = "iverilog") -> bool:
    """Whether ``simulator``'s executables are on PATH."""
    exes = {"iverilog": ("iverilog", "vvp"), "verilator": ("verilator",)}[simulator]
    return all(shutil.which(x) for x in exes)


def _run(cmd: list[str], cwd: Path, timeout: float, what: str) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if res.returncode:
        tail = " | ".join((res.stderr + res.stdout).strip().splitlines()[-6:])
        raise RuntimeError(f"{what} failed (exit {res.returncode}): {tail}")
    return res


def run_bench(simulator: str, sources: list[str], build: Path, run_dir: Path, timeout: float,
              verilator_flags: tuple[str, ...] = ()) -> tuple[str, float, float]:
    """Compile a bench's ``sources`` in ``build`` (``iverilog -g2005`` / ``verilator --binary`` with
    ``verilator_flags``) and run it inside ``run_dir``, where its ``$readmemh`` files are: ``(stdout, compile
    seconds, run seconds)``."""
    t0 = time.perf_counter()
    if simulator == "iverilog":
        _run(["iverilog", "-g2005", "-o", str(build / "sim.vvp"), *sources], build, timeout, "iverilog")
        run_cmd = ["vvp", "-n", str(build / "sim.vvp")]
    else:
        _run(["verilator", "--binary", *verilator_flags, "-Wno-fatal", "-Wno-lint", "-Wno-style", "--top-module",
              "tb", "-Mdir", str(build / "obj"), *sources], build, timeout, "verilator")
        run_cmd = [str(build / "obj" / "Vtb")]
    t1 = time.perf_counter()
    out = _run(run_cmd, run_dir, timeout, f"{simulator} simulation").stdout
    return out, t1 - t0, time.perf_counter() - t1


def bench_result(out: str) -> tuple[list[int], list[str]]:
    """A bench's ``RESULT`` line as integers (shots, hard, iterations, converged, cycles, failed, total cycles)
    and its ``MISMATCH`` / ``ERROR`` lines.

    Raises:
        RuntimeError: the bench printed no ``RESULT`` line.
    """
    mres = _RESULT.search(out)
    if not mres:
        tail = " | ".join(out.strip().splitlines()[-6:])
        raise RuntimeError(f"the bench printed no RESULT line: {tail}")
    return [int(x) for x in mres.groups()], [ln for ln in out.splitlines() if ln.startswith(("MISMATCH", "ERROR"))]


def simulate(design_dir: str | Path, vectors_dir: str | Path, *, simulator: str = "iverilog",
             build_dir: str | Path | None = None, timeout: float = 3600) -> SimReport:
    """Replay ``vectors_dir`` through the design in ``design_dir`` (see the module docstring).

    Raises:
        ValueError: unknown simulator, or the vectors do not belong to the design.
        FileNotFoundError: the simulator is not installed (``make rtl-tools``).
        RuntimeError: compilation or simulation failed, or the bench printed no result.
    """
    if simulator not in SIMULATORS:
        raise InputError(f"unknown simulator {simulator!r}; known: {', '.join(SIMULATORS)}")
    if not simulator_available(simulator):
        raise FileNotFoundError(f"{simulator} not installed: make rtl-tools")
    design = Path(design_dir).resolve()
    vdir = Path(vectors_dir).resolve()
    mf = json.loads((design / "rtl_manifest.json").read_text(encoding="utf-8"))
    top = str(mf.get("top", "bp_top"))
    if mf.get("decoder") == "relay-bp":
        from qdecode.hw.relay_vectors import load_relay_vectors
        from qdecode.hw.rtl.relay_top import check_relay_vectors

        vs, relay = load_relay_vectors(vdir)
        check_relay_vectors(mf, vs, relay)
        tb_text = emit_testbench(int(mf["m"]), int(mf["n"]), int(vs.manifest["shots"]), int(mf["iter_bits"]),
                                 int(mf["max_iter"]), relay=(int(mf["legs_bits"]), int(mf["weight_bits"]),
                                                             int(mf["legs"])))
    else:
        vs = load_vectors(vdir)
        check_vectors(mf, vs)
        tb_text = emit_testbench(int(mf["m"]), int(mf["n"]), int(vs.manifest["shots"]), int(mf["iter_bits"]),
                                 int(mf["max_iter"]), cycles_per_iteration=int(mf["cycles_per_iteration"]))
    tmp = None
    if build_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="qdecode-rtl-sim-")
        build = Path(tmp.name)
    else:
        build = Path(build_dir).resolve()
        build.mkdir(parents=True, exist_ok=True)
    try:
        tb = build / "tb_bp.v"
        tb.write_text(tb_text, encoding="ascii")
        sources = [str(design / f"{top}.v"), str(tb)]
        out, compile_s, run_s = run_bench(simulator, sources, build, vdir, timeout)
    finally:
        if tmp is not None:
            tmp.cleanup()
    vals, lines = bench_result(out)
    mism = dict(zip(FIELDS, vals[1:5]))
    extra = _RELAY.search(out)
    if extra:
        mism.update(legs=int(extra.group(1)), weight=int(extra.group(2)))
    return SimReport(simulator, vals[0], mism, vals[5], vals[6], compile_s, run_s, lines)
