# ioukit developer commands. Each target creates .venv and installs what it needs when missing,
# so a fresh clone with only Python 3.11 and make works.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
BENCH_VENV := .venv-bench

.PHONY: demo test lint fuzz bench bench-startup wheel wheel-test docs clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# the compiled kernels are rebuilt (by pip, through setup.py) whenever one of these changes
KERNEL_SOURCES := setup.py $(wildcard src/ioukit/_kernels/*.pyx src/ioukit/_kernels/*.pxd)

# One install serves every target: ioukit in editable mode with the test extra (which includes
# all the optional features) and the dev group (ruff, mypy, Cython, the CPU torch pin and the
# torch-based references), so `make test` after `make demo` compiles nothing. `--group` needs
# pip >= 25.1 (upgraded above).
$(VENV)/.installed: pyproject.toml $(KERNEL_SOURCES) | $(BIN)/python
	@echo "Installing ioukit into $(VENV) and compiling its $(words $(wildcard src/ioukit/_kernels/*.pyx)) kernels: this takes a few minutes (pip is quiet meanwhile) ..."
	$(BIN)/python -m pip install --quiet -e ".[test]" --group dev
	touch $@

# the demo owns demo-output/: a second run replaces what the first wrote
demo: $(VENV)/.installed
	$(BIN)/python -m ioukit.demo demo-output

lint: $(VENV)/.installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -q

# longer, freshly random fuzzing of the readers and the convert round trip (CI runs a
# bounded, derandomized slice of the same tests); FUZZ_EXAMPLES per test
FUZZ_EXAMPLES ?= 3000
fuzz: $(VENV)/.installed
	IOUKIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q -p no:cacheprovider \
		tests/io/test_fuzz_readers.py tests/io/test_convert_roundtrip.py

# --- documentation ------------------------------------------------------------------------------
# `make docs`: the site in docs/_build/html (Sphinx, numpydoc, pydata-sphinx-theme, MyST),
# warnings as errors; the API pages are generated afresh from ioukit.__all__ on every build
$(VENV)/.installed-docs: pyproject.toml | $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --group docs
	touch $@

docs: $(VENV)/.installed-docs
	rm -rf docs/_build docs/generated docs/_extra
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "the site: docs/_build/html/index.html"

# --- wheels -----------------------------------------------------------------------------------
# `make wheel`: the sdist, a wheel built from it, and the wheel repaired by auditwheel into a
# manylinux wheel (libgomp vendored, symbols stripped) in dist/
$(VENV)/.installed-release: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --group release
	touch $@

wheel: $(VENV)/.installed-release
	rm -rf dist
	@echo "Building the sdist and a wheel from it (compiles the kernels: a few minutes) ..."
	$(BIN)/python -m build --outdir dist/unrepaired .
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/auditwheel repair --strip --wheel-dir dist dist/unrepaired/*.whl
	mv dist/unrepaired/*.tar.gz dist/
	rm -rf dist/unrepaired
	@ls -l dist

# `make wheel-test`: install the manylinux wheel into a fresh venv (no source tree on the path)
# and evaluate the bundled sample against pycocotools (.ci/check_wheel.py)
WHEEL_VENV := build/wheel-venv
wheel-test: wheel
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install --quiet dist/*manylinux*.whl "pycocotools>=2.0.8"
	cd $(WHEEL_VENV) && bin/python -I $(CURDIR)/.ci/check_wheel.py

$(BENCH_VENV)/.installed: pyproject.toml $(KERNEL_SOURCES)
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found" >&2; exit 2; }
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e ".[all]" --group bench pycocotools faster-coco-eval lvis supervision \
		ensemble-boxes ultralytics "torch==2.14.1" "torchvision==0.29.1"
	touch $@

bench: $(BENCH_VENV)/.installed
	$(BENCH_VENV)/bin/python benchmarks/run_all.py

# start-up and first-call costs in fresh processes; needs only the test environment
bench-startup: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) $(BENCH_VENV) .venv-ultralytics .venv-panopticapi .venv-py313 build dist \
		docs/_build docs/generated docs/_extra \
		docs/api.rst demo-output .pytest_cache .mypy_cache .ruff_cache
