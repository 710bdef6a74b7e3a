"""What the trace tests' producer scripts (service_bus_traced.py, kafka_traced.py) share:
OpenTelemetry's SDK as the process's tracer provider, keeping its spans in memory, and spans and
header values as the JSON the tests read. (A script's own folder is on Python's path, so they
import this by name.)"""

import json
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def record_spans():
    """Installs the provider; returns the exporter that holds every span once it ends
    (synchronously, so nothing is pending when the script prints)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter


def span_json(span):
    """The span's name, kind, ids in lowercase hex and links."""
    context = span.get_span_context()
    return {
        "name": span.name,
        "trace_id": format(context.trace_id, "032x"),
        "span_id": format(context.span_id, "016x"),
        "parent_span_id": format(span.parent.span_id, "016x") if span.parent else None,
        "kind": span.kind.name,
        "links": [
            {"trace_id": format(link.context.trace_id, "032x"),
             "span_id": format(link.context.span_id, "016x")}
            for link in span.links
        ],
    }


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def run(commands):
    """`<script> <command> <name> <argument>`: prints what `commands[command](name, argument)`
    returns, as JSON."""
    command, name, argument = sys.argv[1], sys.argv[2], sys.argv[3]
    if command not in commands:
        raise SystemExit(f"unknown command {command}; one of {sorted(commands)}")
    print(json.dumps(commands[command](name, argument)))
