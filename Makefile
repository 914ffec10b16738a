# newsclean: `make demo` sets up a virtualenv and runs the built-in demo; `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test eval models lodo clean-venv prism

setup: $(VENV)/.installed

# The compiled kernel (transforms/_kernel/*.pyx) is built by the editable install: a changed source rebuilds it.
$(VENV)/.installed: pyproject.toml evaluation/pyproject.toml setup.py $(wildcard transforms/_kernel/*.pyx transforms/_kernel/*.pxi)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip "setuptools>=77"
	$(BIN)/pip install --quiet -e ".[test,lint]" -e ./evaluation
	touch $@

demo: setup
	$(BIN)/newsclean demo

# The suite in TEST_JOBS processes (pytest-xdist; on 2 cores a fresh-clone run's tests took 661 s on a quiet machine,
# 1,103 s in one process before: the kernel-identity test runs 2 processes of its own); TEST_JOBS=0: this process.
TEST_JOBS ?= 2
test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n $(TEST_JOBS)

# The leave-one-data-set-out section is added when out/lodo holds the LODO models (make lodo).
eval: setup
	$(BIN)/pip install --quiet -e "./evaluation[peers]"
	$(BIN)/newsclean eval --out evaluation/results/eval.md $(if $(wildcard out/lodo),--lodo out/lodo,)

# Retrain the shipped block classifier (tune half) and its cross-fitted twin (test half, eval only).
models: setup
	$(BIN)/python scripts/train_block_classifier.py
	$(BIN)/python scripts/train_block_classifier.py --train-split test

# Leave-one-data-set-out models (one per held-out set, out/lodo/<set>/): the selection protocol (docs/DECISIONS.md).
lodo: setup
	$(BIN)/python scripts/train_block_classifier.py --holdout-set all

# Beam's Prism runner from the Go module proxy (go verifies the module against its checksum database), at the Beam
# version of infra/flink/versions.env, into the cache the tests read (tests/test_engines.py); --runner PrismRunner
# --prism_location ~/.cache/newsclean-infra/bin/prism uses it. Cached: bin/prism.version (or the binary's own module
# version, `go version -m`) names the version built, and a binary of the pinned one is not rebuilt. GOTOOLCHAIN=auto
# lets an older go fetch the toolchain that Beam's go.mod asks for (go 1.21 and later).
INFRA_CACHE ?= $(HOME)/.cache/newsclean-infra
prism:
	@. infra/flink/versions.env && bin=$(INFRA_CACHE)/bin && \
	if [ -x $$bin/prism ] && { [ "$$(cat $$bin/prism.version 2>/dev/null)" = "$$PRISM_VERSION" ] || \
	    go version -m $$bin/prism 2>/dev/null | grep -Eq "^\s+mod\s+github.com/apache/beam/sdks/v2\s+v$$PRISM_VERSION\s"; }; \
	then echo "prism $$PRISM_VERSION: $$bin/prism (cached)"; \
	else GOTOOLCHAIN=auto GOBIN=$$bin GOFLAGS=-trimpath go install github.com/apache/beam/sdks/v2/go/cmd/prism@v$$PRISM_VERSION; \
	fi && echo "$$PRISM_VERSION" > $$bin/prism.version

clean-venv:
	rm -rf $(VENV)
