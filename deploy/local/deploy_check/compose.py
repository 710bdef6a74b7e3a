"""deploy/compose/compose.yaml, parsed as Compose parses it: `${VAR}` interpolation from the
environment, YAML anchors and merge keys, then the Compose Specification's strict parser
(PyPI compose-spec, the Rust compose_spec crate): unknown keys and bad values are errors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from compose_spec import PyCompose

from .fail import CheckFailed
from .launch import Image, Launch, from_compose

COMPOSE = Path(__file__).resolve().parents[2] / "compose" / "compose.yaml"

VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\?|\?)([^}]*))?\}|\$)")


def interpolate(text: str, environment: dict[str, str]) -> str:
    """Compose's interpolation: ${V}, ${V:-default}, ${V-default}, ${V:?error}, ${V?error}, $$."""
    def one(match: re.Match[str]) -> str:
        name, op, arg = match.groups()
        if name is None:
            return "$"
        value = environment.get(name)
        unset_or_empty = value is None or (op in (":-", ":?") and value == "")
        if op in (":-", "-") and unset_or_empty:
            return arg
        if op in (":?", "?") and unset_or_empty:
            raise CheckFailed(f"compose: {name} is required: {arg}")
        return value or ""
    return VARIABLE.sub(one, text)


def load(environment: dict[str, str]) -> dict[str, Any]:
    data = yaml.safe_load(interpolate(COMPOSE.read_text(), environment))
    try:
        PyCompose.from_json(json.dumps(data))
    except Exception as e:  # the binding raises plain exceptions with the parser's message
        raise CheckFailed(f"{COMPOSE}: not a valid Compose file: {e}")
    services = data.get("services") or {}
    for name, service in services.items():
        for dependency in service.get("depends_on") or {}:
            if dependency not in services:
                raise CheckFailed(f"compose service {name} depends on {dependency}, "
                                  "which does not exist")
    return data


def shoal_launches(data: dict[str, Any], img: Image) -> list[Launch]:
    """The services running the Shoal image, in the order Compose starts them (migrate first)."""
    launches = []
    for name, service in data["services"].items():
        if service.get("build", {}).get("dockerfile") == "deploy/docker/Dockerfile":
            launches.append(from_compose(name, service, img))
    launches.sort(key=lambda launch: launch.subcommand != "migrate")
    return launches
