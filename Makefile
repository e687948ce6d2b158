# Two commands matter: `make demo` and `make test`. Each installs what it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The test suite also runs the transformers backend on a tiny model it builds; PyPI's torch is
# the CUDA build (~5 GB installed, about a minute), so only `make test` installs it. It also
# starts a real Ray cluster on loopback for --executor ray (the ray extra).
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test lint setup system clean wheel-smoke

$(STAMP): pyproject.toml scripts/setup-system.sh
	bash scripts/setup-system.sh
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m codereval.java.build
	$(PY) -m codereval.java.recording
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[dev,hf,ray]'
	touch $(TEST_STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/codereval demo

test: $(TEST_STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest -n 2 -q --durations=25

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
