# Two commands matter: `make demo` and `make test`. Each installs what it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup system clean

$(STAMP): pyproject.toml scripts/setup-system.sh
	bash scripts/setup-system.sh
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/codereval demo

test: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -n 2 -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build *.egg-info
