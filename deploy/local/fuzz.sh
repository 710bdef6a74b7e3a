#!/usr/bin/env bash
# Property-based tests of the API against its own OpenAPI document with schemathesis (PyPI,
# pinned, in a venv cached under ~/.cache/shoal keyed by its version). Part of `make test`.
#
# A private `shoal dev` on a scratch database, authenticated as its platform admin; seeded
# through the API (deploy/local/fuzz/seed.py: a tenant, app, function, identity, service
# principal, user, custom role and role assignment, plus scratch ones for the deletes) so path
# parameters name real resources. Two runs: a fixed seed, then a random one (printed; pass
# FUZZ_RANDOM_SEED to replay it). Fails on any failed check (5xx, a status, content type or
# body the document does not describe), and when an operation never reached a 2xx; prints the
# statuses each operation reached.
#
# Usage: deploy/local/fuzz.sh [extra `st run` arguments]
#   FUZZ_EXAMPLES  cases per operation and phase (default 12: about 3,600 cases a run)
#   FUZZ_SEED      the fixed seed (default 20240611)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

version=4.32.5
venv="${XDG_CACHE_HOME:-$HOME/.cache}/shoal/schemathesis-$version"
# Installed once per version, outside the clone; `.complete` marks a finished install, and the
# lock keeps two runs from installing at once.
mkdir -p "$(dirname "$venv")"
(
    flock 9
    if [[ ! -e "$venv/.complete" ]]; then
        echo "fuzz.sh: installing schemathesis $version into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
        touch "$venv/.complete"
    fi
) 9>"$venv.lock"

examples="${FUZZ_EXAMPLES:-12}"
fixed_seed="${FUZZ_SEED:-20240611}"
random_seed="${FUZZ_RANDOM_SEED:-$(python3 -c 'import secrets; print(secrets.randbelow(2**31))')}"

admin_url="$(deploy/local/postgres.sh)"
database="shoal_fuzz_$$"
work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
psql "$admin_url" -qc "create database $database"
database_url="$(python3 -c 'import sys, urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path="/"+sys.argv[2]).geturl())' "$admin_url" "$database")"

cleanup() {
    [[ -n "${server:-}" ]] && kill -TERM "$server" 2>/dev/null && wait "$server" 2>/dev/null
    psql "$admin_url" -qc "drop database if exists $database with (force)" || true
    rm -rf "$work"
}
trap cleanup EXIT

cargo build -q -p shoal
# The seeded users' issuer (seed.py's ISSUER) must be one Shoal trusts; no token of it is
# ever presented, so its keys are never fetched.
"${CARGO_TARGET_DIR:-target}/debug/shoal" dev --listen "127.0.0.1:$port" --dir "$work" \
    --database-url "$database_url" \
    --external-issuer "issuer=https://login.example.com/contoso/v2.0,audience=api://shoal" \
    >"$work/dev.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
    grep -q "export SHOAL_TOKEN=" "$work/dev.log" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
done
token="$(sed -n 's/.*export SHOAL_TOKEN=//p' "$work/dev.log")"
[[ -n "$token" ]] || { cat "$work/dev.log"; echo "fuzz.sh: shoal dev did not start" >&2; exit 1; }
base="http://127.0.0.1:$port"
curl -fsS "$base/openapi.json" -o "$work/openapi.json"

export SHOAL_FUZZ_STATUSES="$work/statuses.jsonl"
export SCHEMATHESIS_HOOKS=shoal_statuses
export PYTHONPATH="$PWD/deploy/local/fuzz${PYTHONPATH:+:$PYTHONPATH}"
status=0
for seed in "$fixed_seed" "$random_seed"; do
    # Seeded again before each run: the first run's deletes and replacements are undone.
    python3 deploy/local/fuzz/seed.py "$base" "$token" "$work/schemathesis.toml"
    echo "fuzz.sh: schemathesis $version, seed $seed, $examples examples per operation" >&2
    # From the scratch directory, so schemathesis' cache (.schemathesis/) stays out of the
    # clone. One worker: with two, the coverage phase stopped on an internal error (a
    # SystemError from `ast.parse` in hypothesis, called from both threads, on CPython 3.11).
    (cd "$work" && "$venv/bin/st" --config-file "$work/schemathesis.toml" run "$work/openapi.json" \
        --url "$base" -H "Authorization: Bearer $token" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
        --phases examples,coverage,fuzzing --max-examples "$examples" --seed "$seed" \
        --workers 1 --no-color "$@") && run=0 || run=$?
    if [[ $run -ne 0 ]]; then
        status=$run
        echo "fuzz.sh: the run with seed $seed failed (replay it with FUZZ_RANDOM_SEED=$seed)" >&2
    fi
done
"$venv/bin/python" deploy/local/fuzz/report.py "$work/openapi.json" "$SHOAL_FUZZ_STATUSES" || status=1
echo "fuzz.sh: seeds $fixed_seed (fixed) and $random_seed (random)" >&2
exit "$status"
