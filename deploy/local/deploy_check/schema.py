"""values.schema.json (and the chart's own `fail`s) must refuse bad values: each case below
must make rendering fail, naming what is wrong."""

from __future__ import annotations

from typing import Any

import helm_python as helm

from .chart import CHART, NAMESPACE, RELEASE, merge, value_sets
from .fail import CheckFailed

# (what is wrong, the values, a word the error must contain)
BAD_VALUES: list[tuple[str, dict[str, Any], str]] = [
    ("an unknown key (a typo)", {"worker": {"replicaCount": 3}}, "replicaCount"),
    ("a chart-written Secret without a database URL",
     {"secrets": {"existingSecret": "", "secretKey": "A" * 43 + "="}}, "databaseUrl"),
    ("a secret key that is not base64 of 32 bytes",
     {"secrets": {"existingSecret": "", "databaseUrl": "postgres://db/shoal",
                  "secretKey": "too-short"}}, "secretKey"),
    ("inline secrets beside an existing Secret",
     {"secrets": {"existingSecret": "shoal", "databaseUrl": "postgres://db/shoal"}},
     "databaseUrl"),
    ("a duration Shoal cannot parse", {"scheduler": {"tick": "1.5s"}}, "tick"),
    ("an autoscaling mode that does not exist", {"worker": {"autoscaling": {"mode": "vpa"}}},
     "mode"),
    ("a port out of range", {"api": {"port": 70000}}, "port"),
    ("zero API replicas", {"api": {"replicas": 0}}, "replicas"),
    ("a drain deadline as a string", {"worker": {"drainDeadlineSeconds": "30s"}},
     "drainDeadlineSeconds"),
    ("a public URL with a query", {"config": {"publicUrl": "https://x.example.com/?a=1"}},
     "publicUrl"),
    ("an unknown log format", {"config": {"logFormat": "xml"}}, "logFormat"),
    ("a trace sampler Shoal does not implement", {"config": {"tracing": {"sampler": "xray"}}},
     "sampler"),
    ("a collector endpoint without a scheme",
     {"config": {"tracing": {"endpoint": "otel-collector:4317"}}}, "endpoint"),
    ("a trace viewer URL without {traceId}",
     {"config": {"tracing": {"viewerUrl": "https://jaeger.example.com/trace/"}}}, "viewerUrl"),
    ("a trace viewer URL that is not http(s)",
     {"config": {"tracing": {"viewerUrl": "javascript:alert('{traceId}')"}}}, "viewerUrl"),
    ("a scheduler lease shorter than two ticks",
     {"scheduler": {"tick": "2s", "leaseTtl": "3000ms"}}, "leaseTtl"),
    ("more minimum than maximum workers",
     {"worker": {"autoscaling": {"minReplicas": 5, "maxReplicas": 2}}}, "minReplicas"),
    ("more instances per worker than a worker takes",
     {"worker": {"capacity": 10, "autoscaling": {"instancesPerWorker": 20}}},
     "instancesPerWorker"),
]


def check_refusals() -> int:
    """Every bad case fails; returns how many were tried."""
    chart = helm.Chart.load(str(CHART))
    base = value_sets()["default"]
    for what, bad, word in BAD_VALUES:
        try:
            chart.render(merge(base, bad), name=RELEASE, namespace=NAMESPACE, is_install=True)
        except (helm.HelmValuesError, helm.HelmRenderError) as e:
            if word not in str(e):
                raise CheckFailed(f"values with {what} were refused, but the error does not "
                                  f"name `{word}`: {e}")
            continue
        raise CheckFailed(f"values with {what} rendered; the chart must refuse them: {bad}")
    return len(BAD_VALUES)
