"""The real `shoal` binary started with exactly the argv and environment a deploy file gives a
container, against a real Postgres: it must accept them and become ready."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import rootfs
from .fail import CheckFailed
from .launch import Launch
from .rootfs import Inside

# Where the image puts the binary (deploy/docker/Dockerfile); the check runs the one cargo built.
IMAGE_BINARY = "/usr/local/bin/shoal"

# Per subcommand: the variable holding its listen address and the endpoint that says it is up
# (`serve` answers /readyz once Postgres answers and its keys are loaded; the scheduler and the
# worker have /healthz).
# The local Service Bus stand-in has no health endpoint (its port is AMQP and Service Bus's
# management API): it is ready once it has printed its banner, which follows the bind, and
# accepts a connection; compose then sends and receives through it (check-deploy.py).
LISTEN = {
    "serve": ("SHOAL_LISTEN", "/readyz"),
    "scheduler": ("SHOAL_SCHEDULER_LISTEN", "/healthz"),
    "worker": ("SHOAL_WORKER_LISTEN", "/healthz"),
    "local-bus": ("SHOAL_LOCAL_BUS_LISTEN", None),
}
# The line of the stand-in's banner that ends it.
LOCAL_BUS_BANNER_END = "management API http://"
# Read by the logging filter rather than by a flag.
NOT_FLAGS = {"RUST_LOG"}
READY_WITHIN = 30.0


def help_text(binary: Path, subcommand: str) -> str:
    result = subprocess.run([str(binary), subcommand, "--help"], capture_output=True, text=True)
    if result.returncode != 0:
        raise CheckFailed(f"`shoal {subcommand}` is not a command of {binary}: "
                          f"{result.stderr.strip()[:500]}")
    return result.stdout


def accepted_env(binary: Path, subcommand: str) -> set[str]:
    """The variables `shoal <subcommand>` reads, from its own --help (`[env: NAME=...]`)."""
    return set(re.findall(r"\[env: ([A-Z0-9_]+)", help_text(binary, subcommand)))


def help_default(binary: Path, subcommand: str, variable: str) -> str:
    """The default `shoal <subcommand> --help` shows for the flag read from `variable`."""
    out = help_text(binary, subcommand)
    match = re.search(rf"\[env: {variable}=[^\]]*\]\s*\[default: ([^\]]+)\]", out)
    if not match:
        raise CheckFailed(f"shoal {subcommand} --help shows no default for {variable}")
    return match.group(1)


def check_env_names(launch: Launch, binary: Path) -> None:
    """Every variable set is one the subcommand reads: a misspelt one would be silently ignored."""
    accepted = accepted_env(binary, launch.subcommand)
    names = set(launch.env)
    if launch.subcommand == "serve":
        # The image's ENV reaches every role; `serve` is the one it is for (SHOAL_WEB_DIR).
        names |= set(launch.image_env)
    unknown = sorted(names - accepted - NOT_FLAGS)
    if unknown:
        raise CheckFailed(f"{launch.origin}: `shoal {launch.subcommand}` reads no variable "
                          f"{', '.join(unknown)} (it reads {', '.join(sorted(accepted))})")


def argv_for_host(launch: Launch, binary: Path, inside: Inside | None = None) -> list[str]:
    if not launch.argv or launch.argv[0] not in (IMAGE_BINARY, "shoal"):
        raise CheckFailed(f"{launch.origin}: runs {launch.argv}, not {IMAGE_BINARY}")
    if inside is not None:
        # The image's own copy of the binary, by the path (or PATH lookup) the container uses.
        return rootfs.command(inside.root, inside.user, launch.argv)
    return [str(binary)] + launch.argv[1:]


def run_to_completion(launch: Launch, binary: Path, timeout: float = 120,
                      inside: Inside | None = None) -> None:
    """A Job's container (`shoal migrate`): must exit 0."""
    check_env_names(launch, binary)
    result = subprocess.run(argv_for_host(launch, binary, inside), env=clean_env(launch, inside),
                            capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise CheckFailed(f"{launch.origin}: {' '.join(launch.argv)} exited "
                          f"{result.returncode}: {result.stderr[-2000:]}")


@dataclass
class Running:
    launch: Launch
    process: subprocess.Popen
    log: Path
    url: str
    inside: Inside | None = None

    def stop(self, within: float = 60) -> None:
        """SIGTERM, as Kubernetes and Compose stop a container; it must exit 0 in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise CheckFailed(f"{self.launch.origin}: still running {within:.0f} s after SIGTERM")
        if code != 0:
            raise CheckFailed(f"{self.launch.origin}: exited {code} on SIGTERM: "
                              f"{self.log.read_text()[-2000:]}")


def stop_all(running: list[Running]) -> None:
    """SIGTERM to all at once (as a rollout or `compose down` does), then each must exit 0."""
    for item in running:
        if item.process.poll() is None:
            item.process.send_signal(signal.SIGTERM)
    for item in running:
        item.stop()


def kill_all(running: list[Running]) -> None:
    """After a failure: nothing may outlive the check."""
    for item in running:
        if item.process.poll() is None:
            item.process.kill()
            item.process.wait()


def clean_env(launch: Launch, inside: Inside | None = None) -> dict[str, str]:
    """Only what the container would have (plus PATH): nothing leaks in from this shell. The
    image's ENV comes first, the container's own overrides it; a value naming a path inside the
    container names what is there on this host instead (or, run in the image's root filesystem,
    must be there)."""
    env = {**launch.image_env, **launch.env}
    if inside is not None:
        for name, value in env.items():
            for path in launch.paths:
                if (value == path or value.startswith(path.rstrip("/") + "/")) and \
                        not (inside.root / value.lstrip("/")).exists():
                    raise CheckFailed(f"{launch.origin}: {name}={value}, which the image does "
                                      "not have")
        # The base image's ENV (PATH, SSL_CERT_FILE) under the Dockerfile's and the container's.
        return {**rootfs.BASE_ENV, **env}
    for name, value in env.items():
        for path, host in launch.paths.items():
            if value == path or value.startswith(path.rstrip("/") + "/"):
                env[name] = str(host) + value[len(path.rstrip("/")):]
                if not Path(env[name]).exists():
                    raise CheckFailed(f"{launch.origin}: {name}={value} is {env[name]} here, "
                                      "which does not exist (deploy/local/web.sh build?)")
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}


def start(launch: Launch, binary: Path, log_dir: Path, inside: Inside | None = None) -> Running:
    check_env_names(launch, binary)
    if launch.subcommand not in LISTEN:
        raise CheckFailed(f"{launch.origin}: unexpected subcommand {launch.argv}")
    variable, path = LISTEN[launch.subcommand]
    listen = launch.env.get(variable)
    if listen is None:
        raise CheckFailed(f"{launch.origin}: sets no {variable}; the default 127.0.0.1 is "
                          "unreachable from outside its container")
    host, port = split_listen(listen)
    if launch.probe is not None and path is not None:
        # The manifest's probe must target what the process serves.
        if launch.probe != (path, port):
            raise CheckFailed(f"{launch.origin}: readiness probe {launch.probe} but the process "
                              f"serves {path} on port {port}")
    log = log_dir / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', launch.origin)}.log"
    process = subprocess.Popen(argv_for_host(launch, binary, inside), env=clean_env(launch, inside),
                               stdout=log.open("w"), stderr=subprocess.STDOUT)
    connect = "[::1]" if ":" in host else "127.0.0.1"
    if path is None:
        return Running(launch, process, log, f"tcp://{connect}:{port}", inside)
    return Running(launch, process, log, f"http://{connect}:{port}{path}", inside)


def split_listen(listen: str) -> tuple[str, int]:
    match = re.fullmatch(r"\[?([0-9A-Fa-f.:]+?)\]?:(\d+)", listen)
    if not match:
        raise CheckFailed(f"listen address `{listen}` is not host:port")
    return match.group(1), int(match.group(2))


def wait_ready(running: Running) -> None:
    deadline = time.monotonic() + READY_WITHIN
    last = ""
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            raise CheckFailed(f"{running.launch.origin}: exited {running.process.returncode} "
                              f"before becoming ready: {running.log.read_text()[-2000:]}")
        if running.url.startswith("tcp://"):
            if LOCAL_BUS_BANNER_END in running.log.read_text():
                host, port = split_listen(running.url.removeprefix("tcp://"))
                try:
                    socket.create_connection((host, port), timeout=2).close()
                    return
                except OSError as e:
                    last = str(e)
            time.sleep(0.2)
            continue
        try:
            with urllib.request.urlopen(running.url, timeout=2) as response:
                if response.status == 200:
                    if running.inside is not None:
                        rootfs.confirm(running.process.pid, running.inside, running.launch.origin)
                    return
        except (urllib.error.URLError, OSError) as e:
            last = str(e)
        time.sleep(0.2)
    raise CheckFailed(f"{running.launch.origin}: {running.url} not 200 within "
                      f"{READY_WITHIN:.0f} s ({last}): {running.log.read_text()[-2000:]}")


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()
