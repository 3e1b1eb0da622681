# Felt — developer commands. `make dev` once, then `make run` / `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# Python code for Felt's own contracts; google/rpc comes generated with googleapis-common-protos.
PROTO_SRC := $(shell find protos/poker -name '*.proto')
NAIKO_BUILD = libs/felt_naiko__mypyc*.so libs/pokerrules/naiko/*.so

.PHONY: dev protos ext web run test test-fast node-deps bench load lint breaking check-deploy operator-rules clean

dev: $(VENV)/.installed protos ext web

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

# The evaluator's C extension (libs/handeval/_core*.so) and the Naiko core compiled by mypyc
# (libs/pokerrules/naiko/{state,rules}*.so and libs/felt_naiko__mypyc*.so), built in place. The touch
# marks the build as made from the sources as they are now (setuptools skips a module whose C code did
# not change): tests/pokerrules/naiko/test_compiled.py fails on a build older than its sources.
ext:
	$(PY) setup.py --quiet build_ext --inplace
	touch $(NAIKO_BUILD)

# The web table (web/, TypeScript; web/README.md): its npm packages from web/package-lock.json, code
# generated from protos/ by buf with the local protoc-gen-es, type-checked, and bundled by esbuild into
# web/dist, which `felt up` serves (none of it in git). Without npm it is skipped, saying so.
WEB := web
WEB_SRC := $(shell find $(WEB)/src -name '*.ts' -not -path '$(WEB)/src/gen/*' 2>/dev/null) $(wildcard $(WEB)/static/*)
web:
	@if command -v npm >/dev/null; then \
		$(MAKE) --no-print-directory $(WEB)/dist/.built; \
	else \
		echo "web: npm is not installed; the web table is not built (felt up's page says so)" >&2; \
	fi
$(WEB)/node_modules/.installed: $(WEB)/package.json $(WEB)/package-lock.json
	npm ci --prefix $(WEB) --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@
$(WEB)/dist/.built: $(WEB)/node_modules/.installed $(WEB_SRC) $(PROTO_SRC) $(WEB)/buf.gen.yaml $(WEB)/tsconfig.json
	cd $(WEB) && npm run --silent build
	touch $@

# The stack, and a Prometheus server beside it when one is installed (Debian package `prometheus`).
run: dev
	$(VENV)/bin/felt monitor --stack

test: dev node-deps
	$(PY) -m pytest -q --durations=30

test-fast: dev node-deps
	$(PY) -m pytest -q -m "not slow"

# The Node.js tests' packages, each from its package-lock.json into its node_modules (not in git): the
# client of tests/node, and the OpenID Connect provider (oidc-provider) of tests/oidc that issues players'
# tokens in tests/servicekit/test_oidc_provider.py, and playwright-core of tests/web driving Debian's
# chromium in the web table's browser tests, and the Connect client of tests/node_connect, whose code buf
# generates from protos/ with the local protoc-gen-es. tests/web also gets protos/ as a descriptor set
# (gen/felt.binpb, by the local buf): its checks decode the page's binary Connect messages with it. Without
# node those tests skip, saying so.
NODE_TEST := tests/node
OIDC_TEST := tests/oidc
WEB_TEST := tests/web
CONNECT_TEST := tests/node_connect
node-deps: $(NODE_TEST)/node_modules/.installed $(OIDC_TEST)/node_modules/.installed $(WEB_TEST)/node_modules/.installed $(WEB_TEST)/gen/felt.binpb $(CONNECT_TEST)/gen/.built
$(WEB_TEST)/gen/felt.binpb: $(WEB_TEST)/node_modules/.installed $(PROTO_SRC)
	@if [ -f $(WEB_TEST)/node_modules/.installed ]; then \
		cd $(WEB_TEST) && npm run --silent descriptors; \
	fi
$(CONNECT_TEST)/gen/.built: $(CONNECT_TEST)/node_modules/.installed $(PROTO_SRC) $(CONNECT_TEST)/buf.gen.yaml
	@if [ -f $(CONNECT_TEST)/node_modules/.installed ]; then \
		cd $(CONNECT_TEST) && npm run --silent generate && touch gen/.built; \
	fi
%/node_modules/.installed: %/package.json %/package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --prefix $* --ignore-scripts --no-audit --no-fund --loglevel=error && touch $@; \
	else \
		echo "node-deps: npm is not installed; the Node.js tests of $* will skip" >&2; \
	fi

bench: dev
	$(PY) bench/run.py

# The stack under a mixed load for a set time (bench/load/run.py); LOAD_ARGS="--level 2 --seconds 30 [--flood]"
# runs one level. By default: the largest level holding zero errors and Act p99 < 50 ms, and with a flooder.
LOAD_ARGS ?= --find --runs 3 --seconds 30 --warmup 15
load: dev
	$(PY) bench/load/run.py $(LOAD_ARGS)

lint: dev
	$(VENV)/bin/ruff check libs services tests bench
	$(VENV)/bin/ruff format --check libs services tests bench
	$(VENV)/bin/mypy libs/refusal libs/servicekit libs/handeval libs/felt libs/dealing libs/ledger libs/pokerrules services
	cd protos && ../$(VENV)/bin/buf lint && ../$(VENV)/bin/buf format --diff --exit-code
	$(MAKE) --no-print-directory breaking

# The contracts in protos/ stay compatible with main's (buf's FILE rules, offline from the local git
# repository). A field whose meaning changes is a breaking change this cannot see: protos/README.md. main is the baseline from the commit that brought this check there; against a main that
# predates it (nothing was released), the change that brings the check may still reshape v1.
breaking: dev
	@git rev-parse --verify --quiet main >/dev/null || { echo "buf breaking: no local branch main to compare with" >&2; exit 1; }
	@if git show main:Makefile | grep -q 'buf breaking'; then \
		$(VENV)/bin/buf breaking protos --against '.git#branch=main,subdir=protos'; \
	else \
		echo "buf breaking: main predates this check (this change brings it), so main is not a baseline yet"; \
	fi

check-deploy: dev
	$(PY) deploy/check.py

# deploy/k8s/monitoring/prometheusrules.yaml from deploy/prometheus/rules (check-deploy fails when stale).
operator-rules: dev
	$(PY) -m deploy.validate.operator --write

clean:
	rm -rf $(VENV) libs/poker build *.egg-info libs/*.egg-info libs/handeval/_core*.so $(NAIKO_BUILD) \
		$(NODE_TEST)/node_modules $(OIDC_TEST)/node_modules $(WEB_TEST)/node_modules $(WEB_TEST)/gen \
		$(WEB)/node_modules $(WEB)/dist $(WEB)/src/gen
