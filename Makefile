# Felt — developer commands. `make dev` once, then `make run` / `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PROTO_SRC := $(shell find protos -name '*.proto')

.PHONY: dev protos ext run test test-fast bench lint check-deploy clean

dev: $(VENV)/.installed protos ext

$(VENV)/.installed: requirements.lock pyproject.toml setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(MAKE) protos
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e . --config-settings editable_mode=compat
	# compat mode puts libs/ on the path; services/ lives at the repository root.
	echo "$(CURDIR)" > $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/felt-root.pth
	touch $@

# Generated code is not committed: libs/poker/** comes from protos/ here.
protos: $(VENV)/.installed-protos
$(VENV)/.installed-protos: $(PROTO_SRC)
	rm -rf libs/poker
	mkdir -p libs/poker
	$(PY) -m grpc_tools.protoc -I protos --python_out=libs --pyi_out=libs --grpc_python_out=libs $(PROTO_SRC)
	find libs/poker -type d -exec touch {}/__init__.py \;
	touch $@

# The evaluator's C extension, built in place (libs/handeval/_core*.so).
ext:
	$(PY) setup.py --quiet build_ext --inplace

# The stack, and a Prometheus server beside it when one is installed (Debian package `prometheus`).
run: dev
	$(VENV)/bin/felt monitor --stack

test: dev
	$(PY) -m pytest -q

test-fast: dev
	$(PY) -m pytest -q -m "not slow"

bench: dev
	$(PY) bench/run.py

lint: dev
	$(VENV)/bin/ruff check libs services tests bench
	$(VENV)/bin/ruff format --check libs services tests bench
	$(VENV)/bin/mypy libs/refusal libs/servicekit libs/handeval libs/felt libs/dealing libs/ledger libs/pokerrules services
	cd protos && ../$(VENV)/bin/buf lint && ../$(VENV)/bin/buf format --diff --exit-code

check-deploy: dev
	$(PY) deploy/check.py

clean:
	rm -rf $(VENV) libs/poker build *.egg-info libs/*.egg-info libs/handeval/_core*.so
