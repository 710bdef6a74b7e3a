#!/usr/bin/env bash
# Prints an AMQP URL of a RabbitMQ broker that tests and benchmarks can use (declare queues,
# publish, consume), as user `shoal`:
#   1. $SHOAL_RABBITMQ_URL when it is set;
#   2. else a private broker of this checkout, started from Debian's rabbitmq-server on free
#      ports (AMQP, Erlang distribution and epmd all its own, so a broker the machine runs as a
#      system service is neither used nor disturbed), under $REPO/.shoal/test-rabbitmq (or
#      /tmp when the checkout is out of reach); started if it is not running. Several callers
#      at once wait for one start (flock).
# `rabbitmq.sh stop` stops that private broker. Progress goes to stderr; stdout is the URL only.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
say() { echo "rabbitmq.sh: $*" >&2; }

if [ -n "${SHOAL_RABBITMQ_URL:-}" ] && [ "${1:-}" != stop ]; then
    echo "$SHOAL_RABBITMQ_URL"
    exit 0
fi

base="$repo/.shoal/test-rabbitmq"
mkdir -p "$repo/.shoal" 2>/dev/null || true
if ! mkdir -p "$base" 2>/dev/null; then
    base="/tmp/shoal-test-rabbitmq-$(echo "$repo" | cksum | cut -d' ' -f1)"
    mkdir -p "$base"
fi
bin=/usr/lib/rabbitmq/bin
[ -x "$bin/rabbitmq-server" ] || {
    say "RabbitMQ not found at $bin: install the Debian package rabbitmq-server (deploy/local/ensure-tools.sh does)"
    exit 1
}

# The node's environment: everything under $base, the ports chosen once and kept in ports.env.
node_env() {
    export HOME="$base" RABBITMQ_HOME=/usr/lib/rabbitmq
    export RABBITMQ_MNESIA_BASE="$base/mnesia" RABBITMQ_LOG_BASE="$base/log"
    export RABBITMQ_CONFIG_FILE="$base/rabbitmq" RABBITMQ_ENABLED_PLUGINS_FILE="$base/enabled_plugins"
    export RABBITMQ_PID_FILE="$base/rabbitmq.pid"
    export RABBITMQ_NODENAME="shoal-test-$(echo "$repo" | cksum | cut -d' ' -f1)@localhost"
    # shellcheck disable=SC1091
    . "$base/ports.env"
    export RABBITMQ_NODE_PORT="$amqp_port" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    export RABBITMQ_DIST_PORT="$dist_port" ERL_EPMD_PORT="$epmd_port" ERL_EPMD_ADDRESS=127.0.0.1
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

url() {
    # shellcheck disable=SC1091
    . "$base/ports.env"
    echo "amqp://shoal:shoal@127.0.0.1:$amqp_port/%2f"
}

answers() {
    [ -f "$base/ports.env" ] || return 1
    node_env
    "$bin/rabbitmqctl" -q status >/dev/null 2>&1
}

start() {
    if [ ! -f "$base/ports.env" ]; then
        printf 'amqp_port=%s\ndist_port=%s\nepmd_port=%s\n' \
            "$(free_port)" "$(free_port)" "$(free_port)" >"$base/ports.env"
        # No management plugin: the tests and Shoal speak AMQP only.
        echo "[]." >"$base/enabled_plugins"
        cat >"$base/rabbitmq.conf" <<'EOF'
# Written by deploy/local/rabbitmq.sh: a private broker for tests.
loopback_users = none
default_user = shoal
default_pass = shoal
disk_free_limit.absolute = 50MB
log.console = false
log.file.level = warning
EOF
        # A fresh cookie: the Erlang tools talk to this node only.
        head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$base/.erlang.cookie"
        chmod 400 "$base/.erlang.cookie"
    fi
    node_env
    say "starting a private broker on 127.0.0.1:$RABBITMQ_NODE_PORT ($base)"
    # 9>&-: the broker must not inherit the lock, or it would hold it for as long as it runs.
    "$bin/rabbitmq-server" -detached >"$base/start.log" 2>&1 9>&- || true
    for _ in $(seq 1 120); do
        if "$bin/rabbitmqctl" -q await_startup >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.5
    done
    say "the broker did not start; its log:"
    tail -n 30 "$base/log/"*.log "$base/start.log" >&2 2>/dev/null || true
    exit 1
}

stop() {
    [ -f "$base/ports.env" ] || return 0
    node_env
    "$bin/rabbitmqctl" -q stop >/dev/null 2>&1 || true
    # The node's own epmd, on its own port (ERL_EPMD_PORT, exported by node_env).
    epmd -kill >/dev/null 2>&1 || /usr/lib/erlang/bin/epmd -kill >/dev/null 2>&1 || true
}

exec 9>"$base.lock"
flock 9
case "${1:-}" in
    stop) stop ;;
    "")
        answers || start
        url
        ;;
    *)
        say "usage: rabbitmq.sh [stop]"
        exit 2
        ;;
esac
