# newsclean: `make demo` sets up a virtualenv and runs the built-in demo; `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test eval models lodo clean-venv

setup: $(VENV)/.installed

# The compiled kernel (transforms/_kernel/*.pyx) is built by the editable install: a changed source rebuilds it.
$(VENV)/.installed: pyproject.toml evaluation/pyproject.toml setup.py $(wildcard transforms/_kernel/*.pyx transforms/_kernel/*.pxi)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip "setuptools>=77"
	$(BIN)/pip install --quiet -e ".[test,lint]" -e ./evaluation
	touch $@

demo: setup
	$(BIN)/newsclean demo

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

# The leave-one-data-set-out section is added when out/lodo holds the LODO models (make lodo).
eval: setup
	$(BIN)/pip install --quiet -e "./evaluation[peers]"
	$(BIN)/newsclean eval --out docs/eval.md $(if $(wildcard out/lodo),--lodo out/lodo,)

# Retrain the shipped block classifier (tune half) and its cross-fitted twin (test half, eval only).
models: setup
	$(BIN)/python scripts/train_block_classifier.py
	$(BIN)/python scripts/train_block_classifier.py --train-split test

# Leave-one-data-set-out models (one per held-out set, out/lodo/<set>/): issue 11's selection protocol.
lodo: setup
	$(BIN)/python scripts/train_block_classifier.py --holdout-set all

clean-venv:
	rm -rf $(VENV)
