"""What a container runs, read from the deploy files the way the runtime reads them: the argv
(the image's ENTRYPOINT/CMD from deploy/docker/Dockerfile, overridden as Kubernetes or Compose
override them) and the environment (secret and field references resolved as the kubelet does)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fail import CheckFailed

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "deploy" / "docker" / "Dockerfile"
COMPOSE_DIR = REPO / "deploy" / "compose"


@dataclass
class Launch:
    """One process to start: where it came from, its argv and its exact environment."""
    origin: str
    argv: list[str]
    env: dict[str, str]
    # The readiness probe the manifest declares, if any: (path, port).
    probe: tuple[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The image's ENV, which the container's own environment overrides.
    image_env: dict[str, str] = field(default_factory=dict)
    # Paths inside the container and what is there on this host (files the image copies in,
    # Compose's bind mounts): a value naming one is rewritten before the process starts.
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def subcommand(self) -> str:
        return self.argv[1] if len(self.argv) > 1 else ""


@dataclass
class Image:
    """The final stage of the Dockerfile: what `docker run` executes."""
    entrypoint: list[str]
    cmd: list[str]
    user: str
    text: str
    env: dict[str, str] = field(default_factory=dict)
    # Directories the final stage copies from the dashboard's build stage, and the host
    # directory `deploy/local/web.sh build` fills by the same `npm run build`.
    paths: dict[str, Path] = field(default_factory=dict)


def image() -> Image:
    text = DOCKERFILE.read_text()
    # Instructions of the last stage only, continuation lines joined.
    joined = re.sub(r"\\\n", " ", text)
    lines = [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    starts = [i for i, ln in enumerate(lines) if ln.upper().startswith("FROM ")]
    if not starts:
        raise CheckFailed(f"{DOCKERFILE}: no FROM")
    final = lines[starts[-1]:]

    def exec_form(keyword: str) -> list[str]:
        found = [ln for ln in final if ln.upper().startswith(keyword + " ")]
        if not found:
            return []
        value = found[-1][len(keyword) + 1:].strip()
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise CheckFailed(f"{DOCKERFILE}: {keyword} must be in exec (JSON) form: {value}")
        if not (isinstance(parsed, list) and all(isinstance(p, str) for p in parsed)):
            raise CheckFailed(f"{DOCKERFILE}: {keyword} must be a JSON list of strings")
        return parsed

    users = [ln.split(None, 1)[1] for ln in final if ln.upper().startswith("USER ")]
    env: dict[str, str] = {}
    for ln in final:
        if ln.upper().startswith("ENV "):
            for pair in ln[4:].split():
                if "=" not in pair:
                    raise CheckFailed(f"{DOCKERFILE}: write ENV as KEY=value: {ln}")
                key, value = pair.split("=", 1)
                env[key] = value
    paths = {}
    for ln in final:
        copied = re.fullmatch(r"COPY\s+--from=web\s+/web/dist\s+(\S+)", ln)
        if copied:
            paths[copied.group(1)] = REPO / "web" / "dist"
    return Image(exec_form("ENTRYPOINT"), exec_form("CMD"), users[-1] if users else "", text,
                 env, paths)


def from_pod(obj: dict[str, Any], container_name: str, img: Image,
             secrets: dict[str, dict[str, str]], pod_name: str) -> Launch:
    """The container of a Deployment or Job as the kubelet starts it in pod `pod_name`."""
    spec = obj["spec"]["template"]["spec"]
    container = next((c for c in spec["containers"] if c["name"] == container_name), None)
    if container is None:
        raise CheckFailed(f"{obj['kind']} {obj['metadata']['name']}: no container {container_name}")
    # Kubernetes: `command` replaces ENTRYPOINT (and drops CMD); `args` replaces CMD.
    if "command" in container:
        argv = container["command"] + container.get("args", [])
    else:
        argv = img.entrypoint + container.get("args", img.cmd)
    if container.get("envFrom"):
        raise CheckFailed(f"{obj['metadata']['name']}: envFrom is not resolved by this check")
    env: dict[str, str] = {}
    for entry in container.get("env", []):
        env[entry["name"]] = env_value(entry, secrets, pod_name, obj)
    probe = None
    http = container.get("readinessProbe", {}).get("httpGet")
    if http:
        port = http["port"]
        if isinstance(port, str):
            port = next(p["containerPort"] for p in container.get("ports", []) if p["name"] == port)
        probe = (http["path"], int(port))
    return Launch(f"{obj['kind']} {obj['metadata']['name']} (pod {pod_name})", argv, env, probe,
                  image_env=dict(img.env), paths=dict(img.paths))


def env_value(entry: dict[str, Any], secrets: dict[str, dict[str, str]], pod_name: str,
              obj: dict[str, Any]) -> str:
    if "value" in entry:
        return str(entry["value"])
    source = entry.get("valueFrom", {})
    if "secretKeyRef" in source:
        ref = source["secretKeyRef"]
        secret = secrets.get(ref["name"])
        if secret is None or ref["key"] not in secret:
            raise CheckFailed(f"{obj['metadata']['name']}: {entry['name']} names key "
                              f"{ref['key']} of Secret {ref['name']}, which has no such key")
        return secret[ref["key"]]
    if source.get("fieldRef", {}).get("fieldPath") == "metadata.name":
        return pod_name
    raise CheckFailed(f"{obj['metadata']['name']}: cannot resolve {entry['name']}: {entry}")


def secrets_of(objects: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The Secrets a render creates, by name (stringData; data is base64)."""
    import base64
    out: dict[str, dict[str, str]] = {}
    for obj in objects:
        if obj["kind"] == "Secret":
            data = {k: base64.b64decode(v).decode() for k, v in obj.get("data", {}).items()}
            data.update(obj.get("stringData", {}))
            out[obj["metadata"]["name"]] = data
    return out


def from_compose(service_name: str, service: dict[str, Any], img: Image) -> Launch:
    """A Compose service as `docker compose up` starts it (after interpolation)."""
    if "build" not in service and "image" not in service:
        raise CheckFailed(f"compose service {service_name}: neither build nor image")
    entrypoint = service.get("entrypoint", img.entrypoint)
    if isinstance(entrypoint, str):
        raise CheckFailed(f"compose service {service_name}: use the list form of entrypoint")
    command = service.get("command", img.cmd if "entrypoint" not in service else [])
    if isinstance(command, str):
        raise CheckFailed(f"compose service {service_name}: use the list form of command")
    environment = service.get("environment", {})
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    env = {k: "" if v is None else str(v) for k, v in environment.items()}
    paths = dict(img.paths)
    for volume in service.get("volumes", []):
        if not isinstance(volume, str):
            raise CheckFailed(f"compose service {service_name}: use the short form of volumes")
        source, target = volume.split(":")[:2]
        if source.startswith("."):  # a bind mount, relative to the Compose file
            host = (COMPOSE_DIR / source).resolve()
            if not host.exists():
                raise CheckFailed(f"compose service {service_name}: mounts {source}, which "
                                  f"does not exist ({host})")
            paths[target] = host
    return Launch(f"compose service {service_name}", list(entrypoint) + list(command), env,
                  image_env=dict(img.env), paths=paths)
