# qdecode: `make demo` runs the quick-start threshold sweep, `make test` runs the test suite.
# Both create .venv and install everything from the package registries first, then fill the compile
# cache (`qdecode warmup`: the native decoders' numba kernels, so a first run does not compile them).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-all fuzz bench rtl-sim rtl-tools rtl-test clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,neural]'
	$(VENV)/bin/qdecode warmup --quiet
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/qdecode sweep

# Two or more workers (one per core; --dist loadfile keeps each file's cached fixtures in one worker):
# the suite is mostly numba compiles, which parallelise.
# It first installs the RTL tools when missing (make rtl-tools: Icarus Verilog, yosys, nextpnr-ice40,
# Verilator; apt-get, so root), so that the bit-exact, lint and synthesis tests run here as in CI; without
# root they skip and say so.
test: $(STAMP)
	@$(MAKE) --no-print-directory rtl-tools || $(MAKE) --no-print-directory rtl-sim || echo "warning: could not install the RTL tools (needs root): the RTL simulation and synthesis tests will skip"
	$(VENV)/bin/ruff check .
	$(PY) benchmarks/render.py --check
	$(PY) -m pytest -q -n auto --dist loadfile -m "not slow and not gpu" tests

test-all: $(STAMP)
	@$(MAKE) --no-print-directory rtl-tools || $(MAKE) --no-print-directory rtl-sim || echo "warning: could not install the RTL tools (needs root): the RTL simulation and synthesis tests will skip"
	$(VENV)/bin/ruff check .
	$(PY) benchmarks/render.py --check
	$(PY) -m pytest -q -n auto --dist loadfile tests

# The decoder fuzzer at length: random (not derandomized) DEMs, QDECODE_FUZZ_EXAMPLES per decoder
# (default 2000; make test runs 25 each, derandomized). A failure prints the DEM and hypothesis' seed.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q -n auto tests/fuzz

bench: $(STAMP)
	$(PY) benchmarks/harness_overhead.py

# RTL simulation and synthesis tools (Debian packages; needs root): Icarus Verilog, yosys,
# nextpnr-ice40, Verilator. Installed only when one of them is missing.
RTL_TOOLS := iverilog vvp yosys nextpnr-ice40 verilator

rtl-tools:
	@missing=$$(for t in $(RTL_TOOLS); do command -v $$t >/dev/null || echo $$t; done); \
	if [ -n "$$missing" ]; then \
		echo "installing RTL tools (missing: $$missing)"; \
		apt-get update -qq && apt-get install -y -qq iverilog yosys nextpnr-ice40 verilator; \
	fi

# Icarus Verilog alone: what `make test`'s small bit-exact RTL case needs (CI installs it first).
rtl-sim:
	@command -v iverilog >/dev/null || (apt-get update -qq && apt-get install -y -qq iverilog)

# The RTL tests with the simulator present (generator, bit-exact replay, mutants; slow ones included).
rtl-test: $(STAMP) rtl-tools
	$(PY) -m pytest -q tests/hw/test_rtl.py tests/hw/test_rtl_folded.py tests/hw/test_rtl_relay.py

clean:
	rm -rf $(VENV) out build *.egg-info
