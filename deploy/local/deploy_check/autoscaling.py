"""The worker autoscaler (KEDA ScaledObject or HPA) must read a series the scheduler really
exports: the metric name and label matchers of the rendered object are compared with a live
scrape of `shoal scheduler`'s /metrics, leader and standby."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .fail import CheckFailed

# Labels Prometheus itself attaches when it scrapes a pod through Kubernetes service discovery;
# the exporter cannot carry them, so the query may select on them.
SCRAPE_LABELS = {"namespace"}

LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class Selector:
    """A metric name with equality label matchers."""
    metric: str
    labels: dict[str, str]

    def matches(self, sample: "Sample") -> bool:
        return sample.name == self.metric and all(
            sample.labels.get(k) == v for k, v in self.labels.items())


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def parse_exposition(text: str) -> list[Sample]:
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?", line)
        if not match:
            raise CheckFailed(f"/metrics: cannot parse `{line}`")
        labels = {k: v for k, op, v in LABEL.findall(match.group(3) or "")}
        samples.append(Sample(match.group(1), labels, float(match.group(4))))
    return samples


def parse_query(query: str) -> Selector:
    """The one selector of a PromQL query like `max(name{a="b",c="d"})`."""
    selectors = re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}", query)
    if len(selectors) != 1:
        raise CheckFailed(f"query `{query}`: expected exactly one selector with labels")
    name, body = selectors[0]
    matchers = LABEL.findall(body)
    if any(op != "=" for _, op, _ in matchers):
        raise CheckFailed(f"query `{query}`: only equality matchers are compared")
    return Selector(name, {k: v for k, _, v in matchers})


def selector_of(obj: dict[str, Any], namespace: str) -> Selector:
    """What the rendered autoscaler asks for, less the labels Prometheus adds (checked here)."""
    if obj["kind"] == "ScaledObject":
        triggers = [t for t in obj["spec"]["triggers"] if t["type"] == "prometheus"]
        if len(triggers) != 1:
            raise CheckFailed("ScaledObject: expected one prometheus trigger")
        selector = parse_query(triggers[0]["metadata"]["query"])
    elif obj["kind"] == "HorizontalPodAutoscaler":
        external = [m["external"] for m in obj["spec"]["metrics"] if m["type"] == "External"]
        if len(external) != 1:
            raise CheckFailed("HorizontalPodAutoscaler: expected one external metric")
        metric = external[0]["metric"]
        selector = Selector(metric["name"], dict(metric.get("selector", {}).get("matchLabels", {})))
    else:
        raise CheckFailed(f"not an autoscaler: {obj['kind']}")
    scrape = {k: v for k, v in selector.labels.items() if k in SCRAPE_LABELS}
    if scrape.get("namespace", namespace) != namespace:
        raise CheckFailed(f"{obj['kind']}: selects namespace {scrape['namespace']}, but the "
                          f"release is in {namespace}")
    return Selector(selector.metric,
                    {k: v for k, v in selector.labels.items() if k not in SCRAPE_LABELS})


def check(obj: dict[str, Any], namespace: str, leader: str, standbys: list[str]) -> Sample:
    """The autoscaler's selector matches exactly one series of the leader's scrape and none of
    any standby's (whose desired count is stale). Returns the leader's sample."""
    selector = selector_of(obj, namespace)
    found = [s for s in parse_exposition(leader) if selector.matches(s)]
    if len(found) != 1:
        exported = sorted({f"{s.name}{s.labels}" for s in parse_exposition(leader)
                           if s.name == selector.metric})
        raise CheckFailed(f"{obj['kind']} reads {selector.metric}{selector.labels}; the leading "
                          f"scheduler exports {exported or 'no series of that name'}")
    for text in standbys:
        stale = [s for s in parse_exposition(text) if selector.matches(s)]
        if stale:
            raise CheckFailed(f"{obj['kind']} reads {selector.metric}{selector.labels}, which "
                              f"a standby scheduler also exports: {stale}")
    return found[0]


def leads(metrics: str) -> bool:
    return any(s.name == "shoal_scheduler_leader" and s.value == 1
               for s in parse_exposition(metrics))
