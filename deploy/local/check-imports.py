#!/usr/bin/env python3
"""Finds import circles between the modules of each crate of the workspace.

What counts as an edge
----------------------
Every Rust file is a module: src/lib.rs and src/main.rs are the crate root, src/a.rs and
src/a/mod.rs are `a`, src/a/b.rs is `a::b`. The script reads these paths in a file (test
modules, i.e. everything from a `#[cfg(test)]` attribute followed by `mod` to the end of
the file, comments, and the text of string and character literals are skipped):

* `use crate::…;` and `use super::…;` statements, brace groups expanded;
* `crate::a::b::…` and `super::…` paths anywhere else in the code.

Each path is resolved to the longest known module it names (`crate::a::b::Item` is module
`a::b` when src/a/b.rs exists, else `a`). A reference from module S to module T becomes an
edge between the two siblings under their lowest common ancestor: from the child of that
ancestor that holds S to the child that holds T. So `auth` using `crate::tokens::x::Y` is the
edge auth -> tokens, and `webhooks::invoke` using `crate::webhooks::catalog::Z` is the edge
invoke -> catalog inside `webhooks`. A module using its own ancestors (a submodule importing
its parent, `use super::*`) or its own descendants is the normal shape of a Rust module tree
and is not an edge. Relative paths without `crate::`/`super::`/`self::` (which name a
module's own children or other crates) are not read.

A cycle among the edges is an import circle. Usage:

    check-imports.py [--root DIR] [--enforce CRATE ...]   # default root: the repository
    check-imports.py --self-test

The crates are the root Cargo.toml's workspace `members` (each one's `src`). Circles in the
crates named by --enforce (a member's path, e.g. `deploy/terraform/provider`, or its last
component, e.g. `api`, or `all`) make the exit status 1; circles elsewhere are printed as
warnings. Standard library only.
"""

import argparse
import os
import re
import sys
import tempfile
import tomllib

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
TEST_MODULE = re.compile(r"^\s*#\[cfg\(test\)\]\s*\n\s*(pub(\([^)]*\))?\s+)?mod\s", re.M)
USE_STATEMENT = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]*);", re.S)
CODE_PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:::" + IDENT + r")+)")


def module_of(src, path):
    """The module path (tuple of names) of a file under src."""
    rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
    if rel[-1] == "mod" or (len(rel) == 1 and rel[0] in ("lib", "main")):
        rel = rel[:-1]
    return tuple(rel)


def blank_literals_and_comments(text):
    """`text` with comments and the insides of string and character literals replaced by
    spaces (newlines kept, so line numbers hold): `"use `x`"` must not read as a use."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (raw := re.match(r'b?r(#*)"', text[i : i + 260])) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            close = '"' + raw.group(1)
            start = i + raw.end()
            end = text.find(close, start)
            end = n if end < 0 else end
            blank(start, end)
            i = end + len(close)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        elif c == "'":
            # A character literal ('x', '\n', '\u{..}', '"'); otherwise a lifetime or label.
            char = re.match(r"'(\\(u\{[0-9A-Fa-f]*\}|x[0-9A-Fa-f]{2}|.)|[^\\'\n])'", text[i : i + 12])
            if char:
                blank(i + 1, i + char.end() - 1)
                i += char.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def strip(text):
    """The code of a file without its test module, comments and literals' text."""
    match = TEST_MODULE.search(text)
    if match:
        text = text[: match.start()]
    return blank_literals_and_comments(text)


def expand(tree):
    """Expands a use tree (`crate::{a::X, b::{Y, Z}}`) into its paths (as strings)."""
    tree = re.sub(r"\s+", "", tree)
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix, inner = tree[:i], tree[i + 1 : tree.rindex("}")]
                parts, start, level = [], 0, 0
                for j, c in enumerate(inner):
                    if c == "{":
                        level += 1
                    elif c == "}":
                        level -= 1
                    elif c == "," and level == 0:
                        parts.append(inner[start:j])
                        start = j + 1
                parts.append(inner[start:])
                out = []
                for part in filter(None, parts):
                    for sub in expand(part):
                        out.append(prefix + sub if sub != "self" else prefix.rstrip(":"))
                return out
            depth += 1
    return [re.sub(r"\bas\b.*$", "", tree)]


def references(text):
    """The crate-relative paths a file's code names, with the line each is on."""
    code = strip(text)
    found = []
    spans = []
    for match in USE_STATEMENT.finditer(code):
        line = code.count("\n", 0, match.start()) + 1
        spans.append(match.span())
        for path in expand(match.group(1)):
            if re.match(r"(crate|super|self)\b", path):
                found.append((path, line))
    for match in CODE_PATH.finditer(code):
        if any(a <= match.start() < b for a, b in spans):
            continue
        found.append((match.group(1), code.count("\n", 0, match.start()) + 1))
    return found


def resolve(module, path, modules):
    """The module a path names from `module`, or None when it leaves the crate."""
    segments = path.split("::")
    if segments[0] == "crate":
        base, rest = (), segments[1:]
    else:
        base = module
        rest = segments
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            rest = rest[1:]
    target = base
    for name in rest:
        if target + (name,) in modules:
            target = target + (name,)
        else:
            break
    return target


def edge(source, target):
    """The sibling edge a reference from `source` to `target` stands for, or None."""
    common = 0
    while common < min(len(source), len(target)) and source[common] == target[common]:
        common += 1
    if common == len(source) or common == len(target):
        return None  # an ancestor or a descendant: the module tree itself
    return source[: common + 1], target[: common + 1]


def crate_graph(src):
    """Edges between sibling modules of one crate: {(a, b): [(file, line, path)]}."""
    files = {}
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                files[path] = module_of(src, path)
    modules = set(files.values())
    edges = {}
    for path, module in sorted(files.items()):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for ref, line in references(text):
            target = resolve(module, ref, modules)
            if target is None:
                continue
            pair = edge(module, target)
            if pair:
                edges.setdefault(pair, []).append((os.path.relpath(path, src), line, ref))
    return edges


def cycles(edges):
    """One cycle (list of modules) per strongly connected component with more than one node."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(component)

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            connect(node)
    found = []
    for component in components:
        members = set(component)
        start = min(component)
        # Shortest way back to the start through the component (breadth-first).
        previous, frontier = {start: None}, [start]
        cycle = None
        while frontier and cycle is None:
            following = []
            for node in frontier:
                for nxt in sorted(graph[node] & members):
                    if nxt == start:
                        cycle = [node]
                        while previous[cycle[-1]] is not None:
                            cycle.append(previous[cycle[-1]])
                        cycle.reverse()
                        break
                    if nxt not in previous:
                        previous[nxt] = node
                        following.append(nxt)
                if cycle:
                    break
            frontier = following
        found.append((cycle, sorted(members)))
    return found


def name(module):
    return "::".join(module) or "crate"


def report(crate, edges, out):
    """Prints the crate's cycles; returns how many there are."""
    found = cycles(edges)
    for cycle, members in found:
        ring = cycle + [cycle[0]]
        print(f"{crate}: import circle {' -> '.join(name(m) for m in ring)}", file=out)
        for a, b in zip(ring, ring[1:]):
            file, line, path = edges[(a, b)][0]
            print(f"    {name(a)} -> {name(b)}: {file}:{line} names {path}", file=out)
        if len(members) > len(cycle):
            print(f"    (all entangled: {', '.join(name(m) for m in members)})", file=out)
    return len(found)


def workspace_crates(root):
    """{member path: its src directory} for the workspace's members that have one."""
    with open(os.path.join(root, "Cargo.toml"), "rb") as f:
        members = tomllib.load(f).get("workspace", {}).get("members", [])
    crates = {}
    for member in members:
        src = os.path.join(root, member, "src")
        if os.path.isdir(src):
            crates[member] = src
    return crates


def check(root, enforce, out=sys.stdout):
    crates = workspace_crates(root)

    def named(crate, names):
        return "all" in names or crate in names or crate.rsplit("/", 1)[-1] in names

    failed = False
    for crate, src in sorted(crates.items()):
        count = report(crate, crate_graph(src), out)
        if count and named(crate, enforce):
            failed = True
        elif count:
            print(f"{crate}: {count} circle(s), not enforced", file=out)
    for name in enforce:
        if name != "all" and not any(named(c, [name]) for c in crates):
            print(f"no workspace crate {name}", file=out)
            failed = True
    return 1 if failed else 0


def self_test():
    """A tiny synthetic tree: the check must fail on a circle and pass on a tree shape."""
    import io

    def tree(files, member="services/demo"):
        root = tempfile.mkdtemp()
        with open(os.path.join(root, "Cargo.toml"), "w", encoding="utf-8") as f:
            f.write(f'[workspace]\nmembers = ["{member}"]\n')
        for rel, text in files.items():
            path = os.path.join(root, member, "src", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return root

    failures = []

    def expect(label, files, status, needle=None):
        out = io.StringIO()
        got = check(tree(files), ["demo"], out)
        if got != status or (needle and needle not in out.getvalue()):
            failures.append(f"{label}: status {got}, output:\n{out.getvalue()}")

    lib = "mod a;\nmod b;\nmod c;\n"
    expect(
        "a three-module circle through a brace group and a code path",
        {
            "lib.rs": lib,
            "a.rs": "use crate::{b::{self, B as Bee}};\n",
            "b.rs": "pub struct B;\nfn f() { let _ = crate::c::C; }\n",
            "c/mod.rs": "mod inner;\n",
            "c/inner.rs": "use super::super::a::A;\n",
        },
        1,
        "import circle a -> b -> c -> a",
    )
    expect(
        "a submodule importing its parent, a parent using its child, siblings one way",
        {
            "lib.rs": lib + "pub struct Root;\n",
            "a.rs": "use crate::b::B;\nuse crate::Root;\n",
            "b.rs": "mod x;\nmod y;\nuse self::x::X;\npub struct B;\n",
            "b/x.rs": "use super::B;\nuse super::y::Y;\npub struct X;\n",
            "b/y.rs": "use crate::b::B;\npub struct Y;\n",
            "c.rs": "use crate::a::A; // crate::c::C in a comment\n"
            "#[cfg(test)]\nmod tests {\n    use crate::c;\n    use super::*;\n}\n",
        },
        0,
    )
    expect(
        "a circle between two submodules of one module",
        {
            "lib.rs": "mod w;\n",
            "w/mod.rs": "mod p;\nmod q;\n",
            "w/p.rs": "use crate::w::q::Q;\n",
            "w/q.rs": "use super::p::{self, P as Other};\n",
        },
        1,
        "import circle w::p -> w::q -> w::p",
    )
    expect(
        "an enforced crate that does not exist",
        {"lib.rs": ""},
        0,
    )
    expect(
        "literals and comments that look like paths or uses are not read",
        {
            "lib.rs": lib,
            "a.rs": 'const HELP: &str = "use `crate::b::{x` to see";\n'
            'const RAW: &str = r#"crate::c::C"#;\nconst Q: char = \'"\';\n'
            "fn f<'a>(x: &'a str) -> &'a str { /* crate::b::B */ x }\n"
            'const AFTER: &str = "use crate::c::C;";\n',
            "b.rs": "use crate::a::HELP;\n",
            "c.rs": "use crate::b::B;\n",
        },
        0,
    )
    out = io.StringIO()
    if check(tree({"lib.rs": ""}), ["missing"], out) != 1:
        failures.append("a missing enforced crate must fail")
    out = io.StringIO()
    provider_circle = {
        "lib.rs": "mod provider;\nmod resource;\n",
        "provider.rs": "use crate::resource::R;\n",
        "resource.rs": "use crate::provider::P;\n",
    }
    if check(tree(provider_circle, "deploy/terraform/provider"), ["all"], out) != 1:
        failures.append(f"a crate outside services/ must be checked too:\n{out.getvalue()}")
    for failure in failures:
        print("self-test failed:", failure, file=sys.stderr)
    if not failures:
        print("check-imports self-test: ok")
    return 1 if failures else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--enforce", nargs="*", default=[], metavar="CRATE")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    return check(args.root, args.enforce)


if __name__ == "__main__":
    sys.exit(main())
