"""Table tests of the checks' own parsing, run before the checks (`check-deploy.py` runs them
first; `--self-test` alone): a parser that saw nothing would make every comparison pass."""

from __future__ import annotations

from .autoscaling import Selector, parse_exposition, parse_query
from .compose import interpolate
from .fail import CheckFailed
from .processes import split_listen
from .rootfs import CC, check_dockerfile, copies


def run() -> int:
    cases = 0

    def expect(got, want, what):
        nonlocal cases
        cases += 1
        if got != want:
            raise CheckFailed(f"self-test {what}: got {got!r}, want {want!r}")

    def refuses(call, what):
        nonlocal cases
        cases += 1
        try:
            call()
        except CheckFailed:
            return
        raise CheckFailed(f"self-test {what}: accepted")

    env = {"SET": "v", "EMPTY": ""}
    for text, want in [
        ("${SET}", "v"), ("${UNSET}", ""), ("${UNSET:-d}", "d"), ("${EMPTY:-d}", "d"),
        ("${EMPTY-d}", ""), ("${UNSET-d}", "d"), ("${SET:-d}", "v"), ("$$HOME", "$HOME"),
        ("a ${SET}:${UNSET:-8080} b", "a v:8080 b"), ("${SET:?must}", "v"),
    ]:
        expect(interpolate(text, env), want, f"interpolate {text}")
    for text in ["${UNSET:?must}", "${EMPTY:?must}", "${UNSET?must}"]:
        refuses(lambda text=text: interpolate(text, env), f"interpolate {text}")

    expect(parse_query('max(m{leader="true",namespace="ns"})'),
           Selector("m", {"leader": "true", "namespace": "ns"}), "parse_query")
    expect(parse_query('sum(rate(a_total{x="1"}[5m]))'), Selector("a_total", {"x": "1"}),
           "parse_query with a range")
    for query in ['max(m{a=~"t.*"})', "max(m)", 'a{x="1"} / b{y="2"}']:
        refuses(lambda query=query: parse_query(query), f"parse_query {query}")

    samples = parse_exposition('# HELP m x\n# TYPE m gauge\nm{leader="true"} 3\nn 1.5\n# EOF\n')
    expect([(s.name, s.labels, s.value) for s in samples],
           [("m", {"leader": "true"}, 3.0), ("n", {}, 1.5)], "parse_exposition")
    expect(Selector("m", {"leader": "true"}).matches(samples[0]), True, "matches")
    expect(Selector("m", {"leader": "false"}).matches(samples[0]), False, "matches a label")
    expect(Selector("m", {"other": "x"}).matches(samples[0]), False, "matches a missing label")

    for listen, want in [("0.0.0.0:8080", ("0.0.0.0", 8080)), ("[::]:9465", ("::", 9465)),
                         ("127.0.0.1:1", ("127.0.0.1", 1))]:
        expect(split_listen(listen), want, f"split_listen {listen}")
    refuses(lambda: split_listen("localhost"), "split_listen without a port")
    # The runtime stage's base and its declared packages (deploy_check/rootfs.py).
    listed = "# runtime-packages: " + " ".join(CC)
    stage = "FROM rust AS build\nRUN x\n{listed}\nFROM {base} AS runtime\nUSER 1\n"
    for base in ("gcr.io/distroless/cc-debian12:nonroot",
                 "gcr.io/distroless/cc-debian12@sha256:ab"):
        expect(check_dockerfile(stage.format(listed=listed, base=base)), CC,
               f"runtime packages of {base}")
    refuses(lambda: check_dockerfile(stage.format(listed=listed + " zlib1g",
                                                  base="gcr.io/distroless/cc-debian12")),
            "a package the base does not have")
    refuses(lambda: check_dockerfile(stage.format(listed=listed, base="debian:bookworm-slim")),
            "a base the check does not know")
    refuses(lambda: check_dockerfile(stage.format(listed="", base="gcr.io/distroless/cc-debian12")),
            "no runtime-packages line")
    expect(copies(["COPY --from=build /out/shoal /usr/local/bin/shoal"]),
           [("build", "/out/shoal", "/usr/local/bin/shoal")], "COPY --from")
    refuses(lambda: copies(["ADD https://example.com/x /x"]), "ADD")
    return cases
