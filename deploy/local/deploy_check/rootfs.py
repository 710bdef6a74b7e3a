"""The image's runtime root filesystem, built here without a Docker engine or a registry, and
the binary run inside it.

The runtime stage of deploy/docker/Dockerfile starts FROM a distroless image. Distroless does
not install packages: it unpacks a fixed list of Debian debs (no maintainer scripts, no
dependency resolution) and adds /etc/passwd, /etc/group, /etc/nsswitch.conf, /tmp, /home/nonroot
and a CA bundle (GoogleContainerTools/distroless static/static.bzl, base/config.bzl,
cc/config.bzl). BASES below is that list per base image; the Dockerfile repeats it on its
`# runtime-packages:` line and `check_dockerfile` refuses any difference, or a base it does not
know, so the two cannot drift apart silently.

`build` unpacks the same debs, downloaded with apt from Debian 12's archive (not the host's
sources, so the host's release does not matter), into a cache outside the clone keyed by the
list. debootstrap is not used: it installs the `required` set and every dependency and runs
maintainer scripts, a different (larger) filesystem than the image's. `populate` copies that
into a fresh directory and adds what the final stage COPYs; `check_libraries` proves every
library the binary needs (readelf -d, transitively) is in it; `command` runs the binary there
with chroot as the image's USER.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .fail import CheckFailed
from .launch import DOCKERFILE, REPO

# The Debian 12 packages of each runtime base the Dockerfile may use, in distroless's order:
# static (base-files, netbase, tzdata, media-types; the CA bundle from ca-certificates), then
# base (libc6, libssl3), then cc (libgomp1, libstdc++6, libgcc-s1, gcc-12-base). Distroless's
# debian12 cc has no zlib1g (its debian13 cc has): hence rdkafka's `libz-static` (Cargo.toml).
STATIC = ["base-files", "netbase", "tzdata", "media-types", "ca-certificates"]
BASE = STATIC + ["libc6", "libssl3"]
CC = BASE + ["libgomp1", "libstdc++6", "libgcc-s1", "gcc-12-base"]
BASES = {
    "gcr.io/distroless/static-debian12": STATIC,
    "gcr.io/distroless/base-debian12": BASE,
    "gcr.io/distroless/cc-debian12": CC,
}
# The ENV distroless's images set (static/static.bzl).
BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
}
SOURCES = """\
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
"""
# Bumped when what `build` writes changes, so a stale cache is not reused.
LAYOUT = "1"
# Where glibc's loader looks without an ld.so.cache (distroless runs no ldconfig): the multiarch
# directories first (lib/<triplet>, usr/lib/<triplet>), then these.
LIBRARY_DIRS = ["lib64", "lib", "usr/lib"]
PASSWD = ("root:x:0:0:root:/root:/sbin/nologin\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
          "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
GROUP = "root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n"
NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\n"


def runtime_stage(text: str | None = None) -> tuple[str, list[str], list[str]]:
    """The final stage's base image (no tag), its `# runtime-packages:` list and its lines."""
    text = DOCKERFILE.read_text() if text is None else text
    lines = re.sub(r"\\\n", " ", text).splitlines()
    starts = [i for i, ln in enumerate(lines) if re.match(r"\s*FROM\s", ln, re.IGNORECASE)]
    if not starts:
        raise CheckFailed(f"{DOCKERFILE}: no FROM")
    base = lines[starts[-1]].split()[1].split("@")[0]
    base = re.sub(r":[^/]*$", "", base)
    previous = starts[-2] if len(starts) > 1 else 0
    declared = [ln.split(":", 1)[1].split() for ln in lines[previous:]
                if re.match(r"\s*#\s*runtime-packages:", ln)]
    if len(declared) != 1:
        raise CheckFailed(f"{DOCKERFILE}: the runtime stage must list its Debian packages once, "
                          "on a `# runtime-packages:` comment line")
    return base, declared[0], lines[starts[-1]:]


def check_dockerfile(text: str | None = None) -> list[str]:
    """The Dockerfile's runtime base and its declared package set are ones this check builds."""
    base, declared, _ = runtime_stage(text)
    if base not in BASES:
        raise CheckFailed(f"Dockerfile: the runtime stage is FROM {base}, whose package set "
                          f"this check does not know ({', '.join(BASES)}): add it to "
                          "deploy/local/deploy_check/rootfs.py from the image's definition")
    if declared != BASES[base]:
        raise CheckFailed(f"Dockerfile: `# runtime-packages: {' '.join(declared)}` is not "
                          f"{base}'s package set ({' '.join(BASES[base])})")
    return BASES[base]


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "shoal"


def build(packages: list[str]) -> Path:
    """The packages unpacked as distroless unpacks them, once per package list: a directory
    under ~/.cache/shoal with `manifest.json` (file -> package) beside `root/`."""
    key = hashlib.sha256(json.dumps([LAYOUT, SOURCES, architecture(), packages]).encode()) \
        .hexdigest()[:16]
    out = cache_root() / f"rootfs-{key}"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{out}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (out / ".complete").exists():
            return out
        shutil.rmtree(out, ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="shoal-apt-") as apt:
            debs = download(packages, Path(apt))
            root = out / "root"
            root.mkdir(parents=True)
            manifest: dict[str, str] = {}
            for package, deb in debs.items():
                subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
                listing = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)],
                                         capture_output=True, check=True).stdout
                names = subprocess.run(["tar", "-t"], input=listing, capture_output=True,
                                       check=True).stdout.decode().splitlines()
                for name in names:
                    manifest[name.removeprefix("./").rstrip("/")] = package
        finish(root)
        (out / "manifest.json").write_text(json.dumps(manifest, indent=0, sort_keys=True))
        (out / ".complete").touch()
    return out


def download(packages: list[str], apt: Path) -> dict[str, Path]:
    """Debian 12's current debs of `packages` (and nothing they depend on), with a private apt
    state: the host's sources and package database are neither read nor changed."""
    for d in ("state/lists/partial", "cache/archives/partial", "debs"):
        (apt / d).mkdir(parents=True)
    (apt / "state" / "status").touch()
    (apt / "sources.list").write_text(SOURCES)
    options = []
    for name, value in [("Dir::Etc::SourceList", apt / "sources.list"),
                        ("Dir::Etc::SourceParts", "/dev/null"), ("Dir::State", apt / "state"),
                        ("Dir::State::status", apt / "state" / "status"),
                        ("Dir::Cache", apt / "cache"), ("Debug::NoLocking", "1"),
                        ("APT::Sandbox::User", "root"), ("APT::Architecture", architecture())]:
        options += ["-o", f"{name}={value}"]
    for step in (["update"], ["download", *packages]):
        result = subprocess.run(["apt-get", "-qq", *options, *step], cwd=apt / "debs",
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise CheckFailed(f"apt-get {step[0]} (Debian 12's archive) failed: "
                              f"{result.stderr.strip()[-1500:]}")
    debs = {}
    for package in packages:
        found = sorted((apt / "debs").glob(f"{package}_*.deb"))
        if len(found) != 1:
            raise CheckFailed(f"apt-get download {package}: got {[f.name for f in found]}")
        debs[package] = found[0]
    return debs


def architecture() -> str:
    """This host's Debian architecture: the image is built for the machine it runs on."""
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def finish(root: Path) -> None:
    """What distroless adds beside the debs: users and groups (nonroot is 65532), name-service
    config, /tmp, the nonroot home, and the CA bundle its cacerts rule concatenates (a deb's
    maintainer script, which is not run, would otherwise write it)."""
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc" / "passwd").write_text(PASSWD)
    (root / "etc" / "group").write_text(GROUP)
    (root / "etc" / "nsswitch.conf").write_text(NSSWITCH)
    (root / "tmp").mkdir(exist_ok=True)
    (root / "tmp").chmod(0o1777)
    home = root / "home" / "nonroot"
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, 65532, 65532)
    certs = sorted((root / "usr" / "share" / "ca-certificates").rglob("*.crt"))
    if not certs:
        raise CheckFailed("ca-certificates unpacked no certificates")
    bundle = root / "etc" / "ssl" / "certs" / "ca-certificates.crt"
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_text("".join(c.read_text() for c in certs))


def copies(stage: list[str]) -> list[tuple[str, str, str]]:
    """The final stage's `COPY --from=<stage> <source> <destination>` lines."""
    out = []
    for ln in stage:
        if re.match(r"\s*(COPY|ADD)\s", ln, re.IGNORECASE):
            match = re.fullmatch(r"\s*COPY\s+--from=(\S+)\s+(\S+)\s+(\S+)\s*", ln)
            if not match:
                raise CheckFailed(f"Dockerfile: the runtime stage's `{ln.strip()}` is not a "
                                  "`COPY --from=<stage> <source> <destination>` this check knows")
            out.append(match.groups())
    return out


def populate(cached: Path, binary: Path, into: Path) -> Path:
    """A fresh copy of the cached root with what the final stage COPYs (owned by root, as COPY
    without --chown leaves it)."""
    _, _, stage = runtime_stage()
    # What the final stage's COPY --from sources are: the build stage installs the release binary
    # at /out/shoal (the check uses the debug one cargo built here: the same crates and features,
    # so the same libraries); the web stage builds web/dist by deploy/local/web.sh's `npm run
    # build`.
    known = {("build", "/out/shoal"): binary, ("web", "/web/dist"): REPO / "web" / "dist"}
    root = into / "root"
    shutil.copytree(cached / "root", root, symlinks=True)
    os.chown(root / "home" / "nonroot", 65532, 65532)
    for stage_name, source, destination in copies(stage):
        host = known.get((stage_name, source))
        if host is None:
            raise CheckFailed(f"Dockerfile: COPY --from={stage_name} {source}: this check does "
                              "not know what that is here (deploy_check/rootfs.py, populate)")
        if not host.exists():
            raise CheckFailed(f"Dockerfile: COPY --from={stage_name} {source} is {host} here, "
                              "which does not exist (cargo build -p shoal; "
                              "deploy/local/web.sh build)")
        target = root / destination.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if host.is_dir():
            shutil.copytree(host, target, symlinks=True)
        else:
            shutil.copy2(host, target)
    return root


def needed(path: Path) -> tuple[list[str], str | None]:
    """The DT_NEEDED entries of an ELF file and its program interpreter, from readelf."""
    dynamic = subprocess.run(["readelf", "-d", "-l", "-W", str(path)], capture_output=True,
                             text=True)
    if dynamic.returncode != 0:
        raise CheckFailed(f"readelf {path}: {dynamic.stderr.strip()}")
    libraries = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic.stdout)
    interpreter = re.search(r"Requesting program interpreter: ([^\]]+)\]", dynamic.stdout)
    return libraries, interpreter.group(1) if interpreter else None


def check_libraries(cached: Path, root: Path, binary_inside: str,
                    packages: list[str]) -> dict[str, str]:
    """Every shared library the binary needs, and those need, is a file of one of the runtime
    packages: library name -> package. The first missing one fails the check, named."""
    manifest: dict[str, str] = json.loads((cached / "manifest.json").read_text())
    found: dict[str, str] = {}
    directories = [str(d.relative_to(root)) for pattern in ("lib/*-linux-gnu*",
                                                          "usr/lib/*-linux-gnu*")
                   for d in sorted(root.glob(pattern))] + LIBRARY_DIRS
    pending = [(binary_inside, "the image's binary")]
    while pending:
        inside, label = pending.pop()
        inside = "/" + inside.lstrip("/")
        libraries, interpreter = needed(root / inside.lstrip("/"))
        if interpreter is not None and interpreter not in found:
            real = resolve(root, interpreter)
            if real is None or real not in manifest:
                raise CheckFailed(f"{label} ({inside}) needs the program interpreter "
                                  f"{interpreter}, which none of the runtime image's packages "
                                  f"has ({' '.join(packages)})")
            found[interpreter] = manifest[real]
        for library in libraries:
            if library in found:
                continue
            real = next((r for d in directories
                         if (r := resolve(root, f"{d}/{library}")) in manifest), None)
            if real is None:
                raise CheckFailed(f"{label} ({inside}) needs {library} (readelf -d), which none "
                                  f"of the runtime image's packages has ({' '.join(packages)}): "
                                  "the container would fail at start with `cannot open shared "
                                  "object file`")
            found[library] = manifest[real]
            pending.append((real, library))
    return found


def resolve(root: Path, inside: str) -> str | None:
    """`inside` with its symlinks followed within `root` (an absolute target names a file of the
    image, not of this host), relative to `root`; None when nothing is there."""
    path = inside.strip("/")
    for _ in range(20):
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            here = root.joinpath(*parts[:i])
            if here.is_symlink():
                target = os.readlink(here)
                base = [] if target.startswith("/") else parts[:i - 1]
                path = os.path.normpath("/".join([*base, target.strip("/"), *parts[i:]])).strip("/")
                break
        else:
            return path if (root / path).exists() else None
    return None


@dataclass
class Inside:
    """Where processes run instead of on this host: the populated root, as the image's USER."""
    root: Path
    user: str


def command(root: Path, user: str, argv: list[str]) -> list[str]:
    """argv run inside `root` as the image's USER, as the container runtime would (the check runs
    as root; chroot shares this host's network, so 127.0.0.1 is the test Postgres)."""
    if os.geteuid() != 0:
        raise CheckFailed("running the binary in the image's root filesystem needs root (chroot)")
    if not re.fullmatch(r"\d+(:\d+)?", user):
        raise CheckFailed(f"Dockerfile: USER {user} must be numeric uid[:gid] (Kubernetes' "
                          "runAsNonRoot cannot check a name)")
    return ["chroot", f"--userspec={user if ':' in user else user + ':' + user}", str(root), *argv]


def confirm(pid: int, inside: Inside, origin: str) -> None:
    """What answered is the process chroot started, inside the root and as the image's USER
    (chroot execs it: same pid), not something else on this host."""
    root = os.readlink(f"/proc/{pid}/root")
    if Path(root) != inside.root.resolve():
        raise CheckFailed(f"{origin}: runs in {root}, not in the image's root {inside.root}")
    status = Path(f"/proc/{pid}/status").read_text()
    uid = re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE).group(1)
    gid = re.search(r"^Gid:\s+(\d+)", status, re.MULTILINE).group(1)
    want = inside.user if ":" in inside.user else f"{inside.user}:{inside.user}"
    if f"{uid}:{gid}" != want:
        raise CheckFailed(f"{origin}: runs as {uid}:{gid}, not as the image's USER {want}")
