#!/usr/bin/env bash
# Prints a DATABASE_URL that tests and benchmarks can use as an administrator (allowed to
# CREATE DATABASE and CREATE ROLE):
#   1. $DATABASE_URL when it is set;
#   2. else the local server on 127.0.0.1:5432 when it answers (trust auth, user postgres);
#   3. else a private cluster under $REPO/.shoal/test-pg on port 55432, started from the
#      installed server binaries (initialised on first use, started if stopped); also when
#      SHOAL_PRIVATE_PG=1, to keep tests off the local server.
# `postgres.sh stop` stops that private cluster. Progress goes to stderr; stdout is the URL only.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
port=55432
data="$repo/.shoal/test-pg"
url="postgres://postgres@127.0.0.1:$port/postgres"

say() { echo "postgres.sh: $*" >&2; }

# Server binaries: PATH first, then the highest Debian version.
find_bin() {
    if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
        dirname "$(readlink -f "$(command -v pg_ctl)")"
        return
    fi
    local dir
    dir="$(printf "%s\n" /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    if [ -z "$dir" ] || [ ! -x "$dir/initdb" ]; then
        say "Postgres server binaries not found: install the Debian package postgresql" \
            "(deploy/local/ensure-tools.sh does)"
        exit 1
    fi
    echo "$dir"
}

# initdb and postgres refuse to run as root: run them as the postgres system user.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# As root, the postgres user needs to reach the data directory; a repository under /root is out
# of its reach, so the cluster then lives in a directory of its own under /tmp.
choose_data_dir() {
    [ "$(id -u)" -eq 0 ] || return 0
    id -u postgres >/dev/null 2>&1 ||
        useradd --system --user-group --no-create-home --shell /usr/sbin/nologin postgres
    mkdir -p "$repo/.shoal"
    if ! runuser -u postgres -- test -x "$repo/.shoal"; then
        data="/tmp/shoal-test-pg-$(echo "$repo" | cksum | cut -d' ' -f1)"
    fi
}

running() {
    [ -f "$data/postmaster.pid" ] || return 1
    local pid
    pid="$(head -n 1 "$data/postmaster.pid")"
    # After a reboot the PID may belong to another process, and a killed server may linger as a
    # zombie: either way the pid file is stale.
    grep -qE '^(postgres|postmaster)' "/proc/$pid/comm" 2>/dev/null || return 1
    local stat
    stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [ "${stat%% *}" != Z ]
}

# The server answers, and lets user postgres in without a password and create databases and
# roles (a stock Debian cluster asks for a password over TCP: then the private cluster is used).
usable() {
    command -v pg_isready >/dev/null && command -v psql >/dev/null || return 1
    pg_isready -q -h 127.0.0.1 -p 5432 || return 1
    local can
    can="$(PGCONNECT_TIMEOUT=5 psql "$1" -w -XAtc \
        "select rolsuper or (rolcreatedb and rolcreaterole) from pg_roles where rolname = current_user" \
        2>/dev/null)" || return 1
    [ "$can" = t ]
}

start_private() {
    local bin
    bin="$(find_bin)"
    choose_data_dir
    if [ ! -f "$data/PG_VERSION" ]; then
        say "initialising a private cluster in $data"
        mkdir -p "$data"
        chmod 700 "$data"
        [ "$(id -u)" -ne 0 ] || chown postgres:postgres "$data"
        as_owner "$bin/initdb" -D "$data" --auth=trust -U postgres --encoding=UTF8 --no-locale \
            >"$data.initdb.log" 2>&1 || { cat "$data.initdb.log" >&2; exit 1; }
        rm -f "$data.initdb.log"
        # Tests need no durability; these make them faster.
        cat >>"$data/postgresql.conf" <<EOF

# Added by deploy/local/postgres.sh: private to this machine, for tests.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$data'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
    fi
    if ! running; then
        # Left by a server that was killed; their PIDs would make the new one refuse to start.
        rm -f "$data/postmaster.pid" "$data"/.s.PGSQL.*.lock
        say "starting the private cluster on port $port"
        as_owner "$bin/pg_ctl" start -D "$data" -l "$data/server.log" -w -t 60 >/dev/null || {
            tail -n 20 "$data/server.log" >&2
            exit 1
        }
    fi
}

stop_private() {
    choose_data_dir
    if running; then
        as_owner "$(find_bin)/pg_ctl" stop -D "$data" -m fast -w >/dev/null
        say "stopped the private cluster in $data"
    fi
}

case "${1:-url}" in
url)
    if [ -n "${DATABASE_URL:-}" ]; then
        echo "$DATABASE_URL"
    elif [ "${SHOAL_PRIVATE_PG:-0}" != 1 ] && usable "postgres://postgres@127.0.0.1:5432/postgres"; then
        echo "postgres://postgres@127.0.0.1:5432/postgres"
    else
        start_private
        echo "$url"
    fi
    ;;
stop) stop_private ;;
*)
    echo "usage: $0 [url|stop]" >&2
    exit 2
    ;;
esac
