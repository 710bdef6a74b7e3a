#!/usr/bin/env bash
# The dashboard (web/): build it, regenerate or check its API types, and test it.
#   web.sh build     type-check and bundle into web/dist (what `shoal serve` and `shoal dev` serve)
#   web.sh api       regenerate web/src/api/schema.d.ts from openapi/openapi.json
#   web.sh test      fail if schema.d.ts has drifted from openapi/openapi.json, run the Vitest
#                    unit tests, build, then the end-to-end tests: headless Chromium
#                    (/usr/bin/chromium) driven by playwright-core against a real Shoal stack on
#                    a fresh Postgres database ($DATABASE_URL, an administrator's): Azurite's
#                    queue service in memory, the local Service Bus stand-in (`shoal
#                    local-bus`), `shoal serve`, one `shoal scheduler` and two
#                    `shoal worker`s ($SHOAL_BIN, default target/debug/shoal), with the apps'
#                    handler in the test process (web/e2e/stack.mjs). Screenshots go to
#                    web/e2e/artifacts/.
#   web.sh e2e       only the end-to-end tests, against the web/dist already built.
#   web.sh screenshots   build, run the end-to-end tests, and copy their gallery (every view
#                    at 1366×768 and 390×844) to docs/dashboard/, which web/README.md shows.
# web/node_modules and Azurite (deploy/local/node_modules) come from deploy/local/ensure-tools.sh.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
web="$repo/web"
say() { echo "web.sh: $*" >&2; }

generate() {
    (cd "$web" && node_modules/.bin/openapi-typescript ../openapi/openapi.json -o "$1" >&2)
}

build() {
    (cd "$web" && node_modules/.bin/tsc --noEmit && node_modules/.bin/vite build --logLevel warn)
}

check_drift() {
    local fresh
    fresh="$(mktemp --suffix=.d.ts)"
    generate "$fresh"
    if ! diff -q "$fresh" "$web/src/api/schema.d.ts" >/dev/null; then
        diff -u "$web/src/api/schema.d.ts" "$fresh" | head -40 >&2 || true
        rm -f "$fresh"
        say "web/src/api/schema.d.ts differs from openapi/openapi.json: run \`make web-api\` and commit it"
        exit 1
    fi
    rm -f "$fresh"
}

e2e() {
    local bin="${SHOAL_BIN:-$repo/target/debug/shoal}"
    [ -x "$bin" ] || { say "no shoal binary at $bin (cargo build -p shoal)"; exit 1; }
    # The tests run from web/: a path relative to where this was called (make's
    # `target/debug/shoal`) must not be resolved from there.
    bin="$(realpath "$bin")"
    [ -n "${DATABASE_URL:-}" ] || { say "set DATABASE_URL to an administrator's Postgres URL"; exit 1; }
    # Global: the EXIT trap runs after this function has returned.
    e2e_database="shoal_e2e_$$"
    local db_url="${DATABASE_URL%/*}/$e2e_database"
    psql -q "$DATABASE_URL" -c "create database $e2e_database" >/dev/null
    trap 'psql -q "$DATABASE_URL" -c "drop database if exists $e2e_database with (force)" >/dev/null 2>&1 || true' EXIT
    (cd "$web" && SHOAL_BIN="$bin" E2E_DATABASE_URL="$db_url" node --test --test-reporter=spec e2e/journey.test.mjs)
}

case "${1:-}" in
    build) build ;;
    api) generate src/api/schema.d.ts ;;
    test)
        check_drift
        (cd "$web" && node_modules/.bin/vitest run)
        build
        e2e
        ;;
    e2e) e2e ;;
    screenshots)
        build
        e2e
        mkdir -p "$repo/docs/dashboard"
        cp "$web"/e2e/artifacts/gallery/*.jpg "$repo/docs/dashboard/"
        say "copied $(ls "$web"/e2e/artifacts/gallery/*.jpg | wc -l) screenshots to docs/dashboard/"
        ;;
    *)
        echo "usage: web.sh build|api|test|e2e|screenshots" >&2
        exit 2
        ;;
esac
