"""Prints, per operation of the OpenAPI document, the statuses schemathesis reached and how
often, and fails when an operation never reached a 2xx or any reached a 5xx.

Usage: report.py OPENAPI_JSON STATUSES_JSONL
"""

import collections
import json
import sys

METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


def main():
    spec_path, statuses_path = sys.argv[1:3]
    with open(spec_path) as f:
        spec = json.load(f)
    operations = [f"{m.upper()} {p}" for p, item in spec["paths"].items()
                  for m in item if m in METHODS]
    reached = {op: collections.Counter() for op in operations}
    with open(statuses_path) as f:
        for line in f:
            event = json.loads(line)
            reached.setdefault(event["operation"], collections.Counter())[event["status"]] += 1
    width = max(len(op) for op in reached)
    total = sum(sum(c.values()) for c in reached.values())
    print(f"\nStatuses reached per operation ({total} responses):\n")
    print(f"{'operation':<{width}}  cases  statuses (count)")
    failures = []
    for op, counts in reached.items():
        shown = ", ".join(f"{s}×{n}" for s, n in sorted(counts.items()))
        print(f"{op:<{width}}  {sum(counts.values()):>5}  {shown or '-'}")
        if not any(200 <= s < 300 for s in counts):
            failures.append(f"{op} never reached a 2xx")
        if any(s >= 500 for s in counts):
            failures.append(f"{op} answered a 5xx")
    only_auth = [op for op, c in reached.items() if c and set(c) <= {401, 403}]
    if only_auth:
        failures.append(f"{len(only_auth)} operations answered only 401/403")
    if failures:
        print("\nfuzz: " + "\nfuzz: ".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"\nEvery one of the {len(operations)} operations reached a 2xx; no 5xx.")


if __name__ == "__main__":
    main()
