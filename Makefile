# newsclean: `make demo` sets up a virtualenv and runs the built-in demo; `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test eval clean-venv

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

demo: setup
	$(BIN)/newsclean demo

test: setup
	$(BIN)/python -m pytest -q

eval: setup
	$(BIN)/pip install --quiet -e ".[test,eval]"
	$(BIN)/newsclean eval

clean-venv:
	rm -rf $(VENV)
