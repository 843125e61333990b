# The two commands of the README, and the manual's (make docs, make docs-serve). Each creates
# .venv and installs what it needs on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STACK ?= dev

.PHONY: plan test lint typecheck schema prometheus e2e e2e-build draft-proof draft-proof-env docs docs-serve docs-reference docs-check chromium docs-figures

# First run only (again when pyproject.toml changes): say what takes minutes, and let pip show
# each package as it downloads and installs instead of staying silent.
$(BIN)/mlcc: pyproject.toml
	@echo "==> Creating $(VENV): mlcc, its pinned Pulumi SDKs and the test tools (first run only)."
	@echo "    About 1.3 GB installed, mostly pulumi-aws and pulumi-aws-native: typically 3-8"
	@echo "    minutes; the longest quiet stretch is 'Installing collected packages' (2-4 min)."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	@echo "==> $(VENV) is ready; later runs reuse it."
	touch $@

plan: $(BIN)/mlcc
	$(BIN)/mlcc plan --stack $(STACK)

# The manual: MkDocs (Material) over docs/, mkdocs.yml. Strict: a broken link or anchor, or a
# page missing from the nav, fails the build. The site is build/site.
# (Material 9.7+ prints a notice about MkDocs 2.0 at every build; the pinned MkDocs is 1.6.1.)
docs: $(BIN)/mlcc
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(BIN)/mlcc
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve -a 127.0.0.1:8000

# Pulumi.yaml's config block is generated from the key table in mlcc/config/schema.py.
schema: $(BIN)/mlcc
	$(BIN)/python -m mlcc.config.schema Pulumi.yaml

lint: $(BIN)/mlcc
	$(BIN)/ruff check mlcc tests images benchmarks scripts __main__.py
	$(BIN)/ruff format --check mlcc tests images benchmarks scripts __main__.py
	$(BIN)/python -m mlcc.config.schema --check Pulumi.yaml
	$(BIN)/python scripts/docs_reference.py --check

typecheck: $(BIN)/mlcc
	$(BIN)/mypy
	$(BIN)/mypy --strict images/serve/serve.py benchmarks scripts

# The suite runs on every core and one worker more (`-n auto` in pyproject.toml, see
# tests/conftest.py); `-n 0` in PYTEST_ARGS runs it in one process.
PYTEST_ARGS ?=
test: lint typecheck prometheus
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The tests start a real Prometheus on 127.0.0.1 (tests/observability/): Debian's package, which
# brings /usr/bin/prometheus and promtool. Installed here when missing (as root, or with sudo).
prometheus:
	@if [ ! -x /usr/bin/prometheus ]; then \
	  echo "==> Installing Prometheus for the tests (apt-get install prometheus)"; \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get update -qq >/dev/null && \
	  $$sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null || \
	  echo "==> Could not install Prometheus: the tests that need it will fail; see docs/getting-started.md"; \
	fi

# The end-to-end stories (docs/e2e.md): the real Pulumi CLI and engine, the Kubernetes provider
# and a Kubernetes API server (etcd, kube-apiserver, controller-manager, scheduler, kwok), each
# built from its Go module at a pinned version by scripts/build_e2e.sh into
# $${MLCC_E2E_CACHE:-~/.cache/mlcc-e2e}. The first build takes about 45 minutes on 2 cores; later
# runs reuse the cache. `make test` does not run them.
e2e-build:
	bash scripts/build_e2e.sh

e2e: $(BIN)/mlcc e2e-build
	$(BIN)/python -m pytest -n 0 -m e2e tests/e2e

# The offline proof that a trained draft is real (docs/draft-proof.md): a tiny target made
# locally, speculators 0.9.0's dry run and a few training steps on the CPU, the program's
# preflight, the serve wrapper and vLLM 0.34.0's own config validation. Its interpreter (torch,
# speculators, vLLM: about 7 GB) is created by scripts/draft_proof_env.sh in
# $${MLCC_DRAFT_PROOF_CACHE:-~/.cache/mlcc-draft-proof} from tests/draft_proof/requirements.txt;
# later runs reuse it. `make test` does not run it.
DRAFT_PROOF_CACHE := $(or $(MLCC_DRAFT_PROOF_CACHE),$(HOME)/.cache/mlcc-draft-proof)
draft-proof-env:
	bash scripts/draft_proof_env.sh

draft-proof: $(BIN)/mlcc draft-proof-env
	MLCC_DRAFT_PROOF_PYTHON=$(DRAFT_PROOF_CACHE)/venv/bin/python \
	  $(BIN)/python -m pytest -n 0 -m draft_proof tests/draft_proof

# docs/reference/ (configuration, CLI, engine releases) is generated from the code; the test
# tests/docs/test_references.py fails when a page is stale.
docs-reference: $(BIN)/mlcc
	$(BIN)/python scripts/docs_reference.py

# The built site in a real headless Chromium (tests/docs/test_site_browser.py, marked `docs`;
# `make test` deselects it): start page, configuration reference, search. Leaves
# build/docs-start-page.png to look at. Debian's chromium, installed here when missing.
docs-check: docs chromium
	$(BIN)/python -m pytest -m docs tests/docs/test_site_browser.py -n 0

chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "==> Installing Chromium for the docs check (apt-get install chromium)"; \
	  sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get update -qq >/dev/null && \
	  $$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null || \
	  echo "==> Could not install Chromium: the docs check will fail with one line saying so"; \
	fi

# docs/figures/: the bench and sweep figures of the real `mlcc bench --plot` against the fake
# engines (tests/bench), and the dev stack's cost headline of `mlcc plan` (under a minute).
docs-figures: $(BIN)/mlcc
	$(BIN)/python scripts/docs_figures.py
