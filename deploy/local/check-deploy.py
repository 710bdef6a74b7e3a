#!/usr/bin/env python3
"""What deploys Shoal, checked as far as this machine can (no Kubernetes, no Docker engine).
Part of `make test`; run with the project's venv (deploy/local/ensure-tools.sh):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
        .shoal/python/bin/python deploy/local/check-deploy.py [--shoal target/debug/shoal]

1. deploy/helm/shoal lints (strict) and renders for the default values and two other sets;
   every rendered object validates against the Kubernetes 1.33 schemas (strict) or, for KEDA's
   ScaledObject, KEDA's CRD schema.
2. values.schema.json and the chart refuse each of a list of bad values.
3. deploy/docker/Dockerfile: exec-form ENTRYPOINT of the binary, non-root, no HEALTHCHECK,
   `cargo build --locked --release`, the dashboard built after `npm ci` and copied where
   ENV SHOAL_WEB_DIR points; .dockerignore leaves build output out of the context.
4. deploy/compose/compose.yaml parses under the Compose Specification (strict).
5. The image's runtime root filesystem is built from its base's Debian packages (the
   Dockerfile's `# runtime-packages:`, which must be its FROM's; cached under ~/.cache/shoal),
   the binary and the dashboard are put where the final stage COPYs them, and every shared
   library the binary needs (readelf -d, transitively) must be one of those packages' files.
   The real binary runs with exactly the argv (the Dockerfile's ENTRYPOINT plus the container's
   args/command) and environment (Secrets and field references resolved) of every chart value
   set and of compose (with the image's ENV; each chart value set's processes run inside the
   image's root filesystem with chroot, as the image's USER; Compose's on this host, with paths
   the image or Compose puts in the container found here): the migration Job or service exits
   0; `serve`, `scheduler` and `worker` become ready and show their configuration took effect
   in Postgres; `serve` answers / with the dashboard and tells it the trace viewer template
   it was given; Compose's `local-bus` takes a message
   from Microsoft's Service Bus SDK and gives it back; all stop cleanly on SIGTERM. Every
   variable set must be one the subcommand reads (its --help).
6. The worker autoscaler (ScaledObject and HPA) selects a series the leading scheduler really
   exports, and not a standby's.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from deploy_check import (  # noqa: E402
    autoscaling, chart, compose, image, launch, manifests, processes, rootfs, schema, self_test,
    service_bus)
from deploy_check.fail import CheckFailed  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def say(message: str) -> None:
    print(f"check-deploy: {message}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                          capture_output=True, text=True, check=True).stdout.strip()


def with_database(url: str, database: str) -> str:
    head, _, tail = url.rpartition("/")
    query = "?" + tail.split("?", 1)[1] if "?" in tail else ""
    return f"{head}/{database}{query}"


def wait_for(what: str, condition, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise CheckFailed(f"not within {within:.0f} s: {what}")


def static_checks() -> None:
    for label, values in chart.value_sets().items():
        chart.lint(values, label)
        objects = chart.render(values)
        count = manifests.validate(objects, label)
        check_grace_period(objects, label)
        check_metadata_denied(objects, label)
        say(f"chart `{label}`: lint clean, {count} objects valid "
            f"(Kubernetes {chart.KUBE_VERSION}, strict)")
    say(f"chart: {schema.check_refusals()} bad value sets refused")
    image.check(launch.image())
    say("Dockerfile: ENTRYPOINT, non-root user, no HEALTHCHECK, locked release build, the "
        "dashboard from `npm ci` at SHOAL_WEB_DIR; .dockerignore keeps build output out")
    packages = rootfs.check_dockerfile()
    say(f"Dockerfile: the runtime stage's `# runtime-packages:` are its base's ({len(packages)} "
        "Debian 12 packages)")


def seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    number = duration.rstrip("mshd")
    return int(number) * units.get(duration[len(number):] or "s", 1)


def check_metadata_denied(objects: list[dict[str, Any]], label: str) -> None:
    """Where egress is restricted, no rule that opens a port to any address may include the
    cloud's metadata service (169.254.169.254, fd00:ec2::254)."""
    import ipaddress
    metadata = [ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")]
    for obj in objects:
        if obj.get("kind") != "NetworkPolicy" or "Egress" not in obj["spec"]["policyTypes"]:
            continue
        for rule in obj["spec"].get("egress", []):
            for peer in rule.get("to", []):
                block = peer.get("ipBlock")
                if not block:
                    continue
                network = ipaddress.ip_network(block["cidr"])
                excepted = [ipaddress.ip_network(e) for e in block.get("except", [])]
                for address in metadata:
                    if address in network and not any(address in e for e in excepted):
                        raise CheckFailed(
                            f"chart `{label}`: NetworkPolicy {obj['metadata']['name']} lets "
                            f"{address} through ({block})")


def check_grace_period(objects: list[dict[str, Any]], label: str) -> None:
    """Kubernetes must not kill a draining worker before its drain deadline."""
    worker = chart.find(objects, "Deployment", "worker")
    spec = worker["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace <= seconds(env["SHOAL_DRAIN_DEADLINE"]):
        raise CheckFailed(f"chart `{label}`: worker terminationGracePeriodSeconds {grace} is not "
                          f"longer than SHOAL_DRAIN_DEADLINE {env['SHOAL_DRAIN_DEADLINE']}")


def run_chart(label: str, values: dict[str, Any], url: str, key: str, binary: Path,
              logs: Path, inside: rootfs.Inside) -> None:
    ports = {"api": free_port(), "scheduler": free_port(), "worker": free_port()}
    values = chart.merge(values, {c: {"port": p} for c, p in ports.items()})
    objects = chart.render(values)
    given = chart.effective(values)["secrets"]
    # The Secret an operator creates beforehand for existingSecret, under the keys it names.
    store = {}
    if given["existingSecret"]:
        store[given["existingSecret"]] = {given["databaseUrlKey"]: url, given["secretKeyKey"]: key}
    store.update(launch.secrets_of(objects))
    img = launch.image()

    def pod(kind: str, component: str, container: str) -> launch.Launch:
        obj = chart.find(objects, kind, component)
        if obj is None:
            raise CheckFailed(f"chart `{label}`: no {kind} for {component}")
        return launch.from_pod(obj, container, img, store, f"{obj['metadata']['name']}-0")

    processes.run_to_completion(pod("Job", "migrate", "migrate"), binary, inside=inside)
    launches = [pod("Deployment", c, c) for c in ("api", "scheduler", "worker")]
    running: list[processes.Running] = []
    try:
        for item in launches:
            running.append(processes.start(item, binary, logs, inside))
        for item in running:
            processes.wait_ready(item)
        api, scheduler, worker = running
        check_dashboard(api)
        check_trace_viewer(api, chart.effective(values)["config"]["tracing"]["viewerUrl"])
        check_in_postgres(url, binary, scheduler.launch, [worker.launch])
        scaler = chart.find(objects, "ScaledObject", "worker") or \
            chart.find(objects, "HorizontalPodAutoscaler", "worker")
        detail = ""
        if scaler is not None:
            metrics_url = scheduler.url.replace("/healthz", "/metrics")
            wait_for("the scheduler leads", lambda: autoscaling.leads(processes.get(metrics_url)))
            sample = autoscaling.check(scaler, chart.NAMESPACE, processes.get(metrics_url), [])
            detail = f"; its {scaler['kind']} reads {sample.name}{sample.labels}"
    except BaseException:
        processes.kill_all(running)
        raise
    processes.stop_all(running)
    say(f"chart `{label}`: migrate, serve (the dashboard at /), scheduler and worker ran in the "
        f"image's root filesystem as {inside.user} with the manifests' argv and environment, "
        f"became ready and stopped cleanly{detail}")


def check_dashboard(api: processes.Running) -> None:
    """The image's dashboard (its ENV SHOAL_WEB_DIR, over what it copies from the web stage) is
    what `serve` answers at /."""
    page = processes.get(api.url.replace("/readyz", "/"))
    if "<title>Shoal</title>" not in page or 'id="app"' not in page:
        raise CheckFailed(f"{api.launch.origin}: / is not the dashboard: {page[:300]}")


def check_trace_viewer(api: processes.Running, template: str) -> None:
    """The trace viewer template the deployment gives `serve` is what the dashboard is told
    (`/dashboard/config`); none (null) when it gives none or an empty one."""
    config = json.loads(processes.get(api.url.replace("/readyz", "/dashboard/config")))
    if config.get("traceViewerUrl") != (template or None):
        raise CheckFailed(f"{api.launch.origin}: /dashboard/config says traceViewerUrl "
                          f"{config.get('traceViewerUrl')!r}, not {template!r}")


def check_in_postgres(url: str, binary: Path, scheduler: launch.Launch,
                      workers: list[launch.Launch]) -> None:
    """The names and capacity the deploy files set took effect: the scheduler holds the lease
    under its name, each worker heartbeats under its name with its capacity."""
    names = set(scheduler.extra.get("peers", [])) | {scheduler.env["SHOAL_SCHEDULER_NAME"]}
    wait_for(f"one of the schedulers {sorted(names)} holds the lease",
             lambda: psql(url, "select holder from scheduler_lease where expires_at > now()")
             in names)
    for worker in workers:
        wname = worker.env["SHOAL_WORKER_NAME"]
        capacity = worker.env.get("SHOAL_WORKER_CAPACITY") or \
            processes.help_default(binary, "worker", "SHOAL_WORKER_CAPACITY")
        wait_for(f"worker {wname} registered with capacity {capacity}",
                 lambda: psql(url, f"select capacity from workers where name = '{wname}' "
                                   "and state = 'running'") == capacity)


def run_compose(url: str, key: str, binary: Path, logs: Path) -> None:
    environment = {"SHOAL_DATABASE_URL": url, "SHOAL_SECRET_KEY": key}
    for variable in ("SHOAL_API_1_PORT", "SHOAL_API_2_PORT", "SHOAL_SCHEDULER_1_PORT",
                     "SHOAL_SCHEDULER_2_PORT", "SHOAL_WORKER_1_PORT", "SHOAL_WORKER_2_PORT",
                     "SHOAL_WORKER_3_PORT", "SHOAL_LOCAL_BUS_PORT"):
        environment[variable] = str(free_port())
    data = compose.load(environment)
    say(f"compose: parses, {len(data['services'])} services")
    launches = compose.shoal_launches(data, launch.image())
    migrate = [item for item in launches if item.subcommand == "migrate"]
    if len(migrate) != 1:
        raise CheckFailed("compose: expected one migrate service")
    processes.run_to_completion(migrate[0], binary)
    running: list[processes.Running] = []
    try:
        for item in launches[1:]:
            running.append(processes.start(item, binary, logs))
        for item in running:
            processes.wait_ready(item)
        check_worker_grace(data, binary)
        for item in running:
            if item.launch.subcommand == "serve":
                check_dashboard(item)
                check_trace_viewer(item, item.launch.env.get("SHOAL_TRACE_VIEWER_URL", ""))
        buses = [r for r in running if r.launch.subcommand == "local-bus"]
        if len(buses) != 1:
            raise CheckFailed(f"compose: expected one local-bus service, found {len(buses)}")
        bus_name = buses[0].launch.origin.removeprefix("compose service ")
        queue = service_bus.round_trip(buses[0].launch, bus_name, buses[0].log.read_text())
        schedulers = [r for r in running if r.launch.subcommand == "scheduler"]
        workers = [r.launch for r in running if r.launch.subcommand == "worker"]
        names = [s.launch.env["SHOAL_SCHEDULER_NAME"] for s in schedulers]
        for s in schedulers:
            s.launch.extra["peers"] = names
        check_in_postgres(url, binary, schedulers[0].launch, workers)
        urls = [s.url.replace("/healthz", "/metrics") for s in schedulers]
        wait_for("exactly one scheduler leads",
                 lambda: sum(autoscaling.leads(processes.get(u)) for u in urls) == 1)
        scrapes = [processes.get(u) for u in urls]
        leader = next(t for t in scrapes if autoscaling.leads(t))
        standbys = [t for t in scrapes if not autoscaling.leads(t)]
        counts = {
            s: sum(1 for r in running if r.launch.subcommand == s)
            for s in ("serve", "scheduler", "worker", "local-bus")
        }
        # The chart's autoscalers against a real leader and a real standby.
        for label in ("default", "inline-secret-hpa"):
            objects = chart.render(chart.value_sets()[label])
            scaler = chart.find(objects, "ScaledObject", "worker") or \
                chart.find(objects, "HorizontalPodAutoscaler", "worker")
            sample = autoscaling.check(scaler, chart.NAMESPACE, leader, standbys)
            say(f"chart `{label}`: {scaler['kind']} selects {sample.name}{sample.labels} of the "
                "leading scheduler and no standby's")
    except BaseException:
        processes.kill_all(running)
        raise
    processes.stop_all(running)
    say(f"compose: migrate, {counts['serve']}× serve (the dashboard at /), "
        f"{counts['scheduler']}× scheduler (one leads), {counts['worker']}× worker and "
        f"{counts['local-bus']}× local-bus (the SDK sent to and received from queue {queue}) ran "
        "with the file's commands, environment and mounts, became ready and stopped cleanly")


def check_worker_grace(data: dict[str, Any], binary: Path) -> None:
    """Compose must wait longer than the worker's drain deadline before SIGKILL."""
    default = processes.help_default(binary, "worker", "SHOAL_DRAIN_DEADLINE")
    for name, service in data["services"].items():
        if service.get("command") == ["worker"]:
            deadline = service.get("environment", {}).get("SHOAL_DRAIN_DEADLINE", default)
            grace = seconds(service.get("stop_grace_period", "10s"))
            if grace <= seconds(deadline):
                raise CheckFailed(f"compose service {name}: stop_grace_period {grace:.0f} s is "
                                  f"not longer than its drain deadline {deadline}")


def image_root(binary: Path, into: Path) -> rootfs.Inside:
    """The image's runtime filesystem: its base's Debian packages (cached) with what the final
    stage copies in, every library the binary needs found there."""
    packages = rootfs.check_dockerfile()
    started = time.monotonic()
    cached = rootfs.build(packages)
    root = rootfs.populate(cached, binary, into)
    found = rootfs.check_libraries(cached, root, processes.IMAGE_BINARY, packages)
    owners = ", ".join(f"{lib} ({pkg})" for lib, pkg in sorted(found.items()))
    say(f"image root filesystem ({cached}, {time.monotonic() - started:.1f} s): every shared "
        f"library the binary needs is in the runtime's packages: {owners}")
    return rootfs.Inside(root, launch.image().user)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    parser.add_argument("--shoal", type=Path, default=target / "debug" / "shoal")
    parser.add_argument("--self-test", action="store_true",
                        help="only the table tests of the checks' own parsing")
    parser.add_argument("--static-only", action="store_true",
                        help="skip the parts that start processes (no Postgres needed)")
    args = parser.parse_args()
    try:
        say(f"self-test: {self_test.run()} parsing cases")
        if args.self_test:
            return 0
        static_checks()
        if args.static_only:
            return 0
        admin = os.environ.get("DATABASE_URL")
        if not admin:
            raise CheckFailed("DATABASE_URL (an administrator's) is not set: "
                              "DATABASE_URL=\"$(deploy/local/postgres.sh)\"")
        if not args.shoal.exists():
            raise CheckFailed(f"{args.shoal} does not exist: cargo build -p shoal")
        database = f"shoal_deploy_{os.getpid()}"
        psql(admin, f"create database {database}")
        url = with_database(admin, database)
        key = base64.b64encode(secrets.token_bytes(32)).decode()
        try:
            with tempfile.TemporaryDirectory(prefix="check-deploy-") as logs:
                inside = image_root(args.shoal, Path(logs))
                for label, values in chart.value_sets(url, key).items():
                    run_chart(label, values, url, key, args.shoal, Path(logs), inside)
                run_compose(url, key, args.shoal, Path(logs))
        finally:
            psql(admin, f"drop database if exists {database} with (force)")
    except CheckFailed as e:
        print(f"check-deploy: FAILED: {e}", file=sys.stderr)
        return 1
    say("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
