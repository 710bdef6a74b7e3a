#!/usr/bin/env python3
"""Says whether the workspace has any doc test, so `make test` builds them only when there are.

`cargo test --workspace --doc` compiles every library of the workspace again for rustdoc (about
ten minutes on two cores) even when no doc comment holds a Rust example, and nextest does not
run doc tests. This script finds the code blocks rustdoc would run:

* fenced blocks (```` ``` ```` or ``~~~``) inside `///`, `//!`, `/** */` and `/*! */` doc
  comments and `#[doc = "…"]` attributes of the Rust files of the workspace's members (the
  root Cargo.toml's `members`; an excluded crate's doc tests are not the workspace's);
* whose info string is empty or has only rustdoc's own words (`rust`, `ignore`, `no_run`,
  `should_panic`, `compile_fail`, `edition2021`, `test_harness`, `standalone_crate`, and
  `{.class}` or `class=…` attributes). A block tagged with any other word (`text`, `json`,
  `sh`) is not Rust to rustdoc and is never compiled. An `ignore` block is still counted: it
  is listed as an ignored test and the step is cheap next to being blind to it.

Usage:

    doc-tests.py [--root DIR]     # prints each doc test's place; exit 0 if any, 1 if none
    doc-tests.py --self-test

Standard library only.
"""

import argparse
import os
import re
import sys
import tempfile
import tomllib

RUSTDOC_WORDS = {
    "rust",
    "ignore",
    "no_run",
    "should_panic",
    "compile_fail",
    "test_harness",
    "standalone_crate",
    "standalone-crate",
}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*(.*?)\s*$")
LINE_DOC = re.compile(r"^\s*//[/!](?![/!])\s?(.*)$")
ATTR_DOC = re.compile(r'^\s*#!?\[doc\s*=\s*"(.*)"\s*\]\s*$')
SKIPPED_DIRS = {"target", "node_modules", ".git", ".shoal", "web"}


def is_rust_info(info):
    """Whether a fence's info string makes rustdoc compile the block."""
    words = [w for w in re.split(r"[\s,]+", info.strip()) if w]
    for word in words:
        if word in RUSTDOC_WORDS or re.fullmatch(r"edition\d{4}", word):
            continue
        if word.startswith("{") or word.startswith("class=") or word.startswith("ignore-"):
            continue
        return False
    return True


def doc_lines(text):
    """(line number, doc text) for each line of documentation in a Rust file."""
    in_block_doc = False
    for number, line in enumerate(text.splitlines(), start=1):
        if in_block_doc:
            end = line.find("*/")
            content = line if end < 0 else line[:end]
            yield number, re.sub(r"^\s*\*?\s?", "", content)
            if end >= 0:
                in_block_doc = False
            continue
        stripped = line.strip()
        if stripped.startswith("/**") and not stripped.startswith("/***") or stripped.startswith(
            "/*!"
        ):
            rest = stripped[3:]
            end = rest.find("*/")
            if end >= 0:
                yield number, rest[:end]
            else:
                in_block_doc = True
                yield number, rest
            continue
        match = LINE_DOC.match(line) or ATTR_DOC.match(line)
        if match:
            yield number, match.group(1)


def doc_tests_in(text):
    """Line numbers where a Rust code block of the documentation starts."""
    found = []
    open_fence = None
    for number, doc in doc_lines(text):
        match = FENCE.match(doc)
        if not match:
            continue
        fence, info = match.groups()
        if open_fence is None:
            open_fence = fence[0]
            if is_rust_info(info):
                found.append(number)
        elif fence[0] == open_fence and not info:
            open_fence = None
    return found


def rust_files(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith(".rs"):
                yield os.path.join(directory, name)


def members(root):
    """The directories of the workspace's members, from the root Cargo.toml."""
    with open(os.path.join(root, "Cargo.toml"), "rb") as f:
        workspace = tomllib.load(f).get("workspace", {})
    return [os.path.join(root, m) for m in workspace.get("members", [])]


def find(root):
    places = []
    paths = [path for member in members(root) for path in rust_files(member)]
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in doc_tests_in(f.read()):
                places.append(f"{os.path.relpath(path, root)}:{line}")
    return places


def self_test():
    cases = [
        ("/// ```\n/// let x = 1;\n/// ```\n", [1]),
        ("/// ```rust,no_run\n/// f();\n/// ```\n", [1]),
        ("//! ```text\n//! a \\n b\n//! ```\n", []),
        ("/// ```json\n/// {}\n/// ```\n/// ```\n/// g();\n/// ```\n", [4]),
        ("// ```\n// not documentation\n// ```\n", []),
        ("//// ```\n//// four slashes are a plain comment\n", []),
        ("/**\n * ```\n * h();\n * ```\n */\n", [2]),
        ('#[doc = "```"]\n', [1]),
        ("/// ~~~sh\n/// ls\n/// ~~~\n", []),
        ("/// ```edition2021\n/// f();\n/// ```\n", [1]),
        ("let s = \"```\";\n", []),
    ]
    failures = 0
    for text, expected in cases:
        got = doc_tests_in(text)
        if got != expected:
            failures += 1
            print(f"self-test: {text!r}: expected {expected}, got {got}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as root:
        for crate in ["a", "b"]:
            os.makedirs(os.path.join(root, crate, "src"))
            with open(os.path.join(root, crate, "src", "lib.rs"), "w") as f:
                f.write(f"//! ```\n//! {crate}::f();\n//! ```\n")
        os.makedirs(os.path.join(root, "a", "target", "debug"))
        with open(os.path.join(root, "a", "target", "debug", "gen.rs"), "w") as f:
            f.write("/// ```\n/// generated();\n/// ```\n")
        with open(os.path.join(root, "Cargo.toml"), "w") as f:
            f.write('[workspace]\nmembers = ["a"]\nexclude = ["b"]\n')
        got = find(root)
        if got != [os.path.join("a", "src", "lib.rs") + ":1"]:
            failures += 1
            print(f"self-test: the tree walk found {got}", file=sys.stderr)
    if failures:
        print(f"self-test: {failures} failure(s)", file=sys.stderr)
        return 1
    print("doc-tests.py self-test: ok")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    places = find(os.path.abspath(args.root))
    for place in places:
        print(place)
    return 0 if places else 1


if __name__ == "__main__":
    sys.exit(main())
