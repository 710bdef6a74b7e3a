# Developer entry points. Each installs what is missing first (deploy/local/ensure-tools.sh);
# the logic lives in the scripts under deploy/, the recipes stay short.
#   make dev      build and run Shoal with embedded defaults (`shoal dev`)
#   make test     formatting, clippy, every test of the workspace against a real Postgres, the
#                 deploy files' checks (make deploy-check), then schemathesis against the API
#                 (deploy/local/fuzz.sh)
#   make deploy-check  the Helm chart, Dockerfile and Compose file: lint, render, validate, and
#                 the binary started with what they set (deploy/local/check-deploy.py)
#   make bench    Shoal's API against pgbench, its queue dispatch against the SDK and Python, its
#                 scheduler against references of the same run, as ratios, the dashboard's bundle,
#                 first render and telemetry cost, trace export's cost to dispatch and to the
#                 webhook ingress; then `terraform apply` through the provider
#                 against plain PUTs of the same resources
#   make fuzz     the schemathesis part of test alone (FUZZ_EXAMPLES=50 for a longer run)
#   make live-servicebus  the Service Bus trigger against a real namespace
#                 (SHOAL_LIVE_SERVICEBUS_CONNECTION, SHOAL_LIVE_SERVICEBUS_QUEUE; docs/testing.md)
#   make web      build the dashboard into web/dist (`make dev` and `make test` do it too)
#   make web-api  regenerate the dashboard's API types from openapi/openapi.json
#   make lint | fmt | openapi

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
# A CI run builds once from a clean clone: incremental compilation's caches would only cost disk
# (several GB across the workspace's test binaries).
ifeq ($(CI),true)
export CARGO_INCREMENTAL := 0
endif
# Queries live in one module per aggregate (services/store), checked by the tests against a
# real Postgres; sqlx's macros are not used, so nothing here reads DATABASE_URL at build time.

.PHONY: dev test bench fuzz lint fmt openapi tools live-servicebus deploy-check web web-api

tools:
	@deploy/local/ensure-tools.sh

# No import circles between a crate's modules, in any crate (see the script's header for what
# counts as an edge).
IMPORT_CHECK = python3 deploy/local/check-imports.py --self-test && \
	python3 deploy/local/check-imports.py --enforce all

# nextest runs no doc tests, and `cargo test --doc` rebuilds every library for rustdoc (~10 min on
# two cores): it runs only when a doc comment of the workspace holds a Rust example
# (deploy/local/doc-tests.py says which, and is checked by its own self-test first).
DOC_TESTS = python3 deploy/local/doc-tests.py --self-test >/dev/null; \
	if python3 deploy/local/doc-tests.py >/dev/null; then $(CARGO) test --workspace --doc; \
	else echo "make test: no doc tests in the workspace (deploy/local/doc-tests.py); cargo test --doc skipped" >&2; fi

# The Helm chart, the Dockerfile and the Compose file, checked offline, and the binary started
# with exactly what they give each container (deploy/local/check-deploy.py), the dashboard the
# image copies in included (built first into web/dist); the chart's processes run inside the
# image's runtime filesystem, rebuilt from its Debian packages (cached in ~/.cache/shoal; root,
# for chroot). Needs DATABASE_URL.
# `;`, not `&&`: under `set -e` a failed build must stop the recipe, which `&&` would not.
DEPLOY_CHECK = $(CARGO) build -q -p shoal; deploy/local/web.sh build; \
	.shoal/python/bin/python deploy/local/check-deploy.py --shoal $(TARGET_DIR)/debug/shoal

dev: tools
	deploy/local/web.sh build
	$(CARGO) build -p shoal
	exec $(TARGET_DIR)/debug/shoal dev

test: tools
	@DATABASE_URL="$$(deploy/local/postgres.sh)"; export DATABASE_URL; \
	$(CARGO) fmt --all --check; \
	$(CARGO) clippy --workspace --all-targets -- -D warnings; \
	$(IMPORT_CHECK); \
	if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(DOC_TESTS); \
		$(CARGO) nextest run --workspace; \
	else \
		$(CARGO) test --workspace; \
	fi; \
	$(DEPLOY_CHECK); \
	if [ -n "$${SHOAL_LIVE_SERVICEBUS_CONNECTION:-}" ]; then \
		$(MAKE) --no-print-directory live-servicebus; \
	else \
		echo "make test: SKIPPED the live Service Bus suite (set SHOAL_LIVE_SERVICEBUS_CONNECTION to run it against a real namespace; docs/testing.md)" >&2; \
	fi; \
	$(CARGO) build -p shoal; \
	SHOAL_BIN=$(TARGET_DIR)/debug/shoal deploy/local/web.sh test; \
	deploy/local/fuzz.sh

# The dashboard (deploy/local/web.sh): `shoal serve` and `shoal dev` serve web/dist at /.
web: tools
	deploy/local/web.sh build

web-api: tools
	deploy/local/web.sh api

bench: tools
	$(CARGO) build --release -p shoal -p shoal-bench -p terraform-provider-shoal --bins
	$(CARGO) build --release -p terraform-provider-shoal --example bench
	@# The dashboard part measures and serves the built bundle.
	deploy/local/web.sh build
	@DATABASE_URL="$$(deploy/local/postgres.sh)"; export DATABASE_URL; \
	SHOAL_BIN=$(TARGET_DIR)/release/shoal $(TARGET_DIR)/release/shoal-bench $(BENCH_ARGS)
	@# The Terraform provider's part (deploy/terraform/provider/examples/bench.rs).
	@DATABASE_URL="$$(deploy/local/postgres.sh)"; export DATABASE_URL; \
	SHOAL_BIN=$(TARGET_DIR)/release/shoal $(TARGET_DIR)/release/examples/bench

# The live suite's tests are #[ignore]d in every other run; without a namespace this fails.
live-servicebus: tools
	@if [ -z "$${SHOAL_LIVE_SERVICEBUS_CONNECTION:-}" ]; then \
		echo "make live-servicebus: set SHOAL_LIVE_SERVICEBUS_CONNECTION to a Service Bus connection string (docs/testing.md)" >&2; \
		exit 2; \
	fi
	@DATABASE_URL="$$(deploy/local/postgres.sh)"; export DATABASE_URL; \
	$(CARGO) nextest run -p shoal-worker --run-ignored only -E 'test(/^service_bus_live::/)'

deploy-check: tools
	@DATABASE_URL="$$(deploy/local/postgres.sh)"; export DATABASE_URL; \
	$(DEPLOY_CHECK)

# Also the last step of `test`: see deploy/local/fuzz.sh.
fuzz: tools
	deploy/local/fuzz.sh $(FUZZ_ARGS)

lint: tools
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(IMPORT_CHECK)

fmt:
	$(CARGO) fmt --all

# Through a temporary file, so a failed build leaves the committed spec as it was; the
# dashboard's API types follow it.
openapi: tools
	$(CARGO) run -q -p shoal -- openapi > openapi/openapi.json.tmp
	mv openapi/openapi.json.tmp openapi/openapi.json
	deploy/local/web.sh api
