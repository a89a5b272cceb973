# qdecode: `make demo` runs the quick-start threshold sweep, `make test` runs the test suite.
# Both create .venv and install everything from the package registries first.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test test-all bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,neural]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/qdecode sweep

# Two or more workers (one per core; --dist loadfile keeps each file's cached fixtures in one worker):
# the suite is mostly numba compiles, which parallelise.
test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n auto --dist loadfile -m "not slow and not gpu" tests

test-all: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q -n auto --dist loadfile tests

bench: $(STAMP)
	$(PY) benchmarks/harness_overhead.py

clean:
	rm -rf $(VENV) out build *.egg-info
