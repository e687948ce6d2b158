# Two commands matter: `make demo` and `make test`. Each installs what it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The test suite also runs the transformers backend on a tiny model it builds; PyPI's torch is
# the CUDA build (~5 GB installed, about a minute), so only `make test` installs it. It also
# starts a real Ray cluster on loopback for --executor ray (the ray extra).
TEST_STAMP := $(VENV)/.installed-test
# One pytest worker more than the 2 cores CI has: much of the suite waits rather than computes
# (samples that run into their wall time, JVMs and Ray nodes starting, builds on the network),
# and a third worker fills those waits. `make test TEST_WORKERS=2` for the old setting.
TEST_WORKERS ?= 3

.PHONY: demo test lint setup system clean wheel-smoke

# uv installs the packages (pinned in pyproject.toml, where codereval itself depends on it): it
# downloads in parallel and links from its cache. On a new machine the test extras, torch
# included, take about a minute with it and three and a half with pip.
# Compiled as pip compiles a wheel's modules when it installs them: uv does not by default, and
# where PYTHONDONTWRITEBYTECODE is set (CI images) every command would compile codereval and
# its dependencies from source again (0.1-0.2 s of each command's start). data/ holds
# templates, not modules.
UV := $(VENV)/bin/uv
UV_VERSION := $(shell sed -n 's/^ *"uv==\([^"]*\)",.*/\1/p' pyproject.toml)

$(STAMP): pyproject.toml scripts/setup-system.sh
	bash scripts/setup-system.sh
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) pip install -q --python $(PY) --compile-bytecode -e '.[dev]'
	$(PY) -m compileall -q -x '/data/' src/codereval
	$(PY) -m codereval.java.build
	$(PY) -m codereval.java.recording
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(UV) pip install -q --python $(PY) --compile-bytecode -e '.[dev,hf,ray]'
	touch $(TEST_STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/codereval demo

test: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest -n $(TEST_WORKERS) -q --durations=25

# Build the wheel, install it into a fresh venv, run the demo and docs/api.md's example from it
# (also run by the test suite, tests/test_wheel_smoke.py).
wheel-smoke: $(STAMP)
	bash scripts/wheel-smoke.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) build *.egg-info
