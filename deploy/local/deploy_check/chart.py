"""The Helm chart, linted and rendered offline with Helm's own SDK (PyPI helm-python-sdk), for
the value sets the checks use."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import helm_python as helm
import yaml

from .fail import CheckFailed

CHART = Path(__file__).resolve().parents[2] / "helm" / "shoal"
RELEASE = "shoal"
NAMESPACE = "shoal-system"
KUBE_VERSION = "1.33.0"

# A syntactically valid secret key for value sets that need one in the chart's Secret (base64 of
# 32 bytes); the processes get a fresh one at run time.
PLACEHOLDER_KEY = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="


def value_sets(database_url: str = "postgres://shoal@db.example.com:5432/shoal",
               secret_key: str = PLACEHOLDER_KEY) -> dict[str, dict[str, Any]]:
    """The default values and two others covering the chart's alternatives: a chart-written
    Secret with an HPA, an ingress and restricted egress; and a fixed worker count without
    network policies, on IPv6, with a ServiceAccount made elsewhere."""
    return {
        "default": {},
        "inline-secret-hpa": {
            "secrets": {"existingSecret": "", "databaseUrl": database_url, "secretKey": secret_key},
            "config": {"publicUrl": "https://shoal.example.com", "logFormat": "text",
                       "rustLog": "info,shoal_worker=debug",
                       "egressAllow": ["10.40.0.0/16", "*.handlers.svc.cluster.local:80"],
                       "maxResponseBytes": 8388608,
                       "tenantDefaults": "maxApps=20,maxInstances=40",
                       # No collector answers there: the processes run on, dropping spans.
                       "tracing": {"endpoint": "http://otel-collector.observability:4317",
                                   "serviceName": "shoal-prod",
                                   "sampler": "parentbased_traceidratio", "samplerArg": "0.25",
                                   "maxQueueSize": 4096,
                                   "viewerUrl": "https://grafana.example.com/explore?left="
                                                "%7B%22queries%22:%5B%7B%22query%22:%22{traceId}%22%7D%5D%7D"}},
            "api": {"issuer": "https://shoal.example.com", "audience": "api://shoal-prod",
                    "tokenLifetime": "15m", "dbMaxConnections": 16, "maxBodyBytes": 2097152,
                    "ingress": {"enabled": True, "className": "nginx",
                                "host": "shoal.example.com", "tlsSecretName": "shoal-tls"}},
            "worker": {"capacity": 40, "drainDeadlineSeconds": 120,
                       "autoscaling": {"mode": "hpa", "instancesPerWorker": 30}},
            "serviceAccount": {"annotations": {
                "azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000000"}},
            "podLabels": {"azure.workload.identity/use": "true"},
            "networkPolicy": {"egress": {"restrict": True, "postgresCidr": "10.20.0.0/16",
                                         "extraRules": [{"to": [{"namespaceSelector": {
                                             "matchLabels": {"kubernetes.io/metadata.name": "handlers"}}}],
                                             "ports": [{"port": 80, "protocol": "TCP"}]}]},
                              "apiFrom": [{"namespaceSelector": {"matchLabels": {
                                  "kubernetes.io/metadata.name": "ingress-nginx"}}}]},
        },
        "static-ipv6": {
            "config": {"listenHost": "::"},
            "scheduler": {"replicas": 3, "tick": "500ms", "leaseTtl": "5s", "scaleInWindow": "2m"},
            "worker": {"replicas": 3, "leaseTtl": "20s", "autoscaling": {"mode": "none"}},
            "serviceAccount": {"create": False, "name": "shoal-runner"},
            "networkPolicy": {"enabled": False},
            "metrics": {"scrapeAnnotations": False},
        },
    }


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def lint(values: dict[str, Any], label: str) -> None:
    report = helm.lint(str(CHART), values, strict=True, namespace=NAMESPACE,
                       kube_version=f"v{KUBE_VERSION}")
    # Severity 1 is informational ("icon is recommended"); warnings fail under strict.
    problems = [m for m in report["messages"] if m["severity"] >= 2] + report.get("errors", [])
    if problems:
        raise CheckFailed(f"helm lint ({label}): {problems}")


def effective(values: dict[str, Any]) -> dict[str, Any]:
    """The chart's defaults with `values` over them, as an install would use them."""
    return helm.Chart.load(str(CHART)).merge_values(values)


def render(values: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object the chart renders for `values` (hooks included), as an install would."""
    chart = helm.Chart.load(str(CHART))
    manifests = chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
    objects = []
    for path, text in sorted(manifests.items()):
        if path.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc is not None:
                doc.setdefault("metadata", {})["_template"] = path
                objects.append(doc)
    return objects


def without_template(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].pop("_template", None)
    return out


def find(objects: list[dict[str, Any]], kind: str, component: str) -> dict[str, Any] | None:
    for obj in objects:
        labels = obj["metadata"].get("labels", {})
        if obj["kind"] == kind and labels.get("app.kubernetes.io/component") == component:
            return obj
    return None
