"""Yosys synthesis scripts, a synthesis runner (``stat -json`` -> LUT/FF/BRAM) and iCE40 place and route.

Targets (:data:`TARGETS`): ``ice40`` (``synth_ice40``: SB_LUT4 / SB_CARRY / SB_DFF* / SB_RAM40_4K),
``xc7`` (``synth_xilinx -family xc7 -flatten -noiopad``: LUT1..LUT6 / CARRY4 / FD* / RAMB18E1,
RAMB36E1), ``ecp5`` (``synth_ecp5``: LUT4 / CCU2C / TRELLIS_FF / DP16KD). Each script reads the
design, synthesises, and writes ``stat_<target>.json`` (``tee -o ... stat -json``);
``ice40``/``ecp5`` also write the netlist ``<top>_<target>.json`` (nextpnr's input).

:func:`run_pnr` runs ``nextpnr-ice40 --<device> --package <pkg> --freq F --timing-allow-fail
--report`` on the iCE40 netlist and reads ``fmax`` and ``utilization.ICESTORM_LC`` from the report.
Xilinx has no open place and route here: its figures are resource counts only.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from qdecode.errors import InputError

#: target -> (yosys synth command with {top} and {json}, writes a netlist?)
TARGETS: dict[str, tuple[str, bool]] = {
    "ice40": ("synth_ice40 -top {top} -json {json}", True),
    "xc7": ("synth_xilinx -family xc7 -top {top} -flatten -noiopad", False),
    "ecp5": ("synth_ecp5 -top {top} -json {json}", True),
}
#: nextpnr-ice40 device -> (flag, package)
ICE40_DEVICES: dict[str, tuple[str, str]] = {"hx8k": ("--hx8k", "ct256"), "up5k": ("--up5k", "sg48"),
                                              "hx1k": ("--hx1k", "tq144")}


def synth_scripts(verilog: str, top: str, prefix: str = "") -> dict[str, str]:
    """``synth_<prefix><target>.ys`` texts for every target (run inside the design directory); they
    write ``stat_<prefix><target>.json``."""
    out = {}
    for target, (cmd, _netlist) in TARGETS.items():
        name = f"{prefix}{target}"
        lines = [f"# yosys -q -s synth_{name}.ys  (in the design directory)", f"read_verilog {verilog}",
                 cmd.format(top=top, json=f"{top}_{target}.json"), f"tee -q -o stat_{name}.json stat -json"]
        out[f"synth_{name}.ys"] = "\n".join(lines) + "\n"
    return out


def _count(cells: dict[str, int], *prefixes: str) -> int:
    return sum(v for k, v in cells.items() if any(k.startswith(p) for p in prefixes))


def resources(target: str, cells: dict[str, int]) -> dict[str, int]:
    """LUT / carry / FF / BRAM / other counts from yosys ``num_cells_by_type`` for ``target``."""
    if target == "ice40":
        r = {"luts": _count(cells, "SB_LUT4"), "carry": _count(cells, "SB_CARRY"), "ffs": _count(cells, "SB_DFF"),
             "bram": _count(cells, "SB_RAM40_4K"), "dsp": _count(cells, "SB_MAC16")}
    elif target == "xc7":
        r = {"luts": _count(cells, "LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6"), "carry": _count(cells, "CARRY4"),
             "ffs": _count(cells, "FD"), "bram": _count(cells, "RAMB18", "RAMB36"), "dsp": _count(cells, "DSP48"),
             "muxf": _count(cells, "MUXF7", "MUXF8")}
    elif target == "ecp5":
        r = {"luts": _count(cells, "LUT4"), "carry": _count(cells, "CCU2C"), "ffs": _count(cells, "TRELLIS_FF"),
             "bram": _count(cells, "DP16KD"), "dsp": _count(cells, "MULT18X18D"),
             "muxf": _count(cells, "PFUMX", "L6MUX21")}
    else:
        raise InputError(f"unknown target {target!r}; known: {', '.join(TARGETS)}")
    return r


@dataclasses.dataclass
class SynthReport:
    """One yosys run: ``resources`` (luts, carry, ffs, bram, dsp, ...), all ``cells``, wall seconds."""

    target: str
    resources: dict[str, int]
    cells: dict[str, int]
    seconds: float
    tool: str


def tool_version(cmd: list[str]) -> str:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (res.stdout or res.stderr).strip().splitlines()[0] if (res.stdout or res.stderr).strip() else "unknown"


def _parse_stat(path: Path, top: str) -> dict[str, int]:
    text = path.read_text(encoding="utf-8", errors="replace")
    data = json.loads(text[text.index("{"):])
    if "design" in data and "num_cells_by_type" in data["design"]:
        return dict(data["design"]["num_cells_by_type"])
    mods = data.get("modules", {})
    for name in (top, "\\" + top):
        if name in mods:
            return dict(mods[name]["num_cells_by_type"])
    raise InputError(f"{path}: no statistics for module {top}")


def run_synth(design_dir: str | Path, target: str, *, top: str = "bp_top", prefix: str = "",
              timeout: float = 3600) -> SynthReport:
    """Run ``yosys -q -s synth_<prefix><target>.ys`` in ``design_dir``; parse ``stat_<prefix><target>.json``.

    ``top="bp_slice", prefix="slice_"`` synthesises the folded design's PE slice.

    Raises:
        FileNotFoundError: yosys is not installed (``make rtl-tools``).
        RuntimeError: yosys failed (its last output lines are in the message).
        subprocess.TimeoutExpired: the run exceeded ``timeout`` seconds.
    """
    if target not in TARGETS:
        raise InputError(f"unknown target {target!r}; known: {', '.join(TARGETS)}")
    yosys = shutil.which("yosys")
    if yosys is None:
        raise FileNotFoundError("yosys not installed: make rtl-tools")
    d = Path(design_dir)
    t0 = time.perf_counter()
    res = subprocess.run([yosys, "-q", "-s", f"synth_{prefix}{target}.ys"], cwd=d, capture_output=True, text=True,
                         timeout=timeout)
    secs = time.perf_counter() - t0
    if res.returncode:
        tail = " | ".join((res.stderr or res.stdout).strip().splitlines()[-5:])
        raise RuntimeError(f"yosys synth_{target} failed (exit {res.returncode}): {tail}")
    cells = _parse_stat(d / f"stat_{prefix}{target}.json", top)
    return SynthReport(target, resources(target, cells), cells, secs, tool_version([yosys, "-V"]))


@dataclasses.dataclass
class PnrReport:
    """nextpnr-ice40 result: achieved Fmax (MHz) of ``clk``, logic cells used / available."""

    device: str
    fmax_mhz: float
    lc_used: int
    lc_available: int
    seconds: float
    tool: str

    @property
    def ns_per_cycle(self) -> float:
        return 1e3 / self.fmax_mhz


def run_pnr(design_dir: str | Path, device: str = "hx8k", *, top: str = "bp_top", freq_mhz: float = 50,
            seed: int = 1, timeout: float = 3600) -> PnrReport:
    """Place and route the iCE40 netlist ``<top>_ice40.json`` (run :func:`run_synth` ``ice40`` first).

    Raises:
        FileNotFoundError: nextpnr-ice40 not installed, or no netlist.
        RuntimeError: nextpnr failed (e.g. the design does not fit the device).
    """
    if device not in ICE40_DEVICES:
        raise InputError(f"unknown iCE40 device {device!r}; known: {', '.join(ICE40_DEVICES)}")
    exe = shutil.which("nextpnr-ice40")
    if exe is None:
        raise FileNotFoundError("nextpnr-ice40 not installed: make rtl-tools")
    d = Path(design_dir)
    netlist = d / f"{top}_ice40.json"
    if not netlist.exists():
        raise FileNotFoundError(f"{netlist}: run the ice40 synthesis first")
    flag, package = ICE40_DEVICES[device]
    report = d / f"pnr_{device}.json"
    cmd = [exe, flag, "--package", package, "--json", netlist.name, "--freq", str(freq_mhz), "--seed", str(seed),
           "--timing-allow-fail", "--report", report.name, "-q"]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=timeout)
    secs = time.perf_counter() - t0
    if res.returncode or not report.exists():
        tail = " | ".join((res.stderr or res.stdout).strip().splitlines()[-5:])
        raise RuntimeError(f"nextpnr-ice40 {device} failed (exit {res.returncode}): {tail}")
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    fmax = data.get("fmax", {})
    clk = next((v for k, v in fmax.items() if "clk" in k), None) or next(iter(fmax.values()), None)
    if clk is None:
        raise RuntimeError(f"{report}: no fmax entry")
    lc = data.get("utilization", {}).get("ICESTORM_LC", {})
    return PnrReport(device, float(clk["achieved"]), int(lc.get("used", 0)), int(lc.get("available", 0)), secs,
                     tool_version([exe, "--version"]))
