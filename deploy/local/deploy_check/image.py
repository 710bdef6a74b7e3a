"""deploy/docker/Dockerfile, checked without a Docker engine: what the final stage runs, as
whom, and how the binary is built."""

from __future__ import annotations

import re

from .fail import CheckFailed
from .launch import REPO, Image
from .processes import IMAGE_BINARY

DOCKERIGNORE = REPO / ".dockerignore"


def check(img: Image) -> None:
    if img.entrypoint != [IMAGE_BINARY]:
        raise CheckFailed(f"Dockerfile: ENTRYPOINT is {img.entrypoint}, expected [{IMAGE_BINARY!r}]")
    user = img.user.split(":")[0]
    if user in ("", "0", "root"):
        raise CheckFailed(f"Dockerfile: the final stage runs as `{img.user or 'root'}`; it must "
                          "name a non-root user")
    code = "\n".join(ln for ln in img.text.splitlines() if not ln.lstrip().startswith("#"))
    if re.search(r"^\s*HEALTHCHECK\b", code, re.MULTILINE | re.IGNORECASE):
        raise CheckFailed("Dockerfile: HEALTHCHECK present; Kubernetes probes do that")
    if not re.search(r"cargo build[^\n]*--locked[^\n]*--release", code):
        raise CheckFailed("Dockerfile: the binary must be built with `cargo build --locked --release`")
    if len(re.findall(r"^\s*FROM\s", code, re.MULTILINE | re.IGNORECASE)) < 2:
        raise CheckFailed("Dockerfile: expected a build stage and a runtime stage")
    web_dirs = [inside for inside in img.paths]
    if len(web_dirs) != 1:
        raise CheckFailed("Dockerfile: the final stage must copy the dashboard once "
                          "(COPY --from=web /web/dist <dir>)")
    if img.env.get("SHOAL_WEB_DIR") != web_dirs[0]:
        raise CheckFailed(f"Dockerfile: ENV SHOAL_WEB_DIR must name {web_dirs[0]}, where the "
                          f"dashboard is copied (it is {img.env.get('SHOAL_WEB_DIR')!r})")
    if not re.search(r"^\s*RUN npm ci\b", code, re.MULTILINE):
        raise CheckFailed("Dockerfile: the dashboard's packages must come from `npm ci` (the "
                          "committed lock file)")
    ignore = DOCKERIGNORE.read_text().split() if DOCKERIGNORE.exists() else []
    for needed in ("target/", "**/node_modules/"):
        if needed not in ignore:
            raise CheckFailed(f"{DOCKERIGNORE}: must list {needed}, or the build context carries "
                              "this checkout's build output into the image")
