"""Microsoft's azure-servicebus SDK with its OpenTelemetry tracing plugin
(azure-core-tracing-opentelemetry), as an application that traces its Service Bus traffic runs
it: the trace tests start their trace here and read what comes out at the end.

Usage (SB_CONNECTION holds the connection string):
  service_bus_traced.py send <queue> <body>
      Sends one message inside an application span `place-order`, then peeks it back from the
      queue (without taking it) to show what reached the namespace. Prints
      {"spans": [...], "application_properties": {...}}: every span the SDK and the application
      made while sending (name, trace_id, span_id, parent_span_id, kind), and the message's
      application properties as stored.
  service_bus_traced.py receive <queue> <count>
      Receives and completes `count` messages with tracing on. Prints
      {"messages": [{"body", "application_properties"}], "spans": [...]}, the spans with the
      links the SDK's receive span made to each message's context.
"""

import os
import time

from azure.core.settings import settings
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from opentelemetry import trace

from otel_memory import record_spans, run, span_json, text

# azure-core hands its spans to the plugin azure-core-tracing-opentelemetry registers under this
# name; the plugin writes them to OpenTelemetry's global tracer provider.
settings.tracing_implementation = "opentelemetry"
exporter = record_spans()


def properties(message):
    return {text(k): text(v) for k, v in (message.application_properties or {}).items()}


def client():
    return ServiceBusClient.from_connection_string(os.environ["SB_CONNECTION"])


def send(queue, body):
    tracer = trace.get_tracer("shoal-trace-test")
    with client() as namespace, namespace.get_queue_sender(queue) as sender:
        with tracer.start_as_current_span("place-order"):
            sender.send_messages(ServiceBusMessage(body))
    spans = [span_json(s) for s in exporter.get_finished_spans()]
    # Peeking does not lock or take the message: the worker receives it afterwards.
    with client() as namespace, namespace.get_queue_receiver(queue) as receiver:
        peeked = receiver.peek_messages(max_message_count=1)
    if len(peeked) != 1:
        raise SystemExit(f"peeked {len(peeked)} messages on {queue}, expected 1")
    return {"spans": spans, "application_properties": properties(peeked[0])}


def receive(queue, count):
    count = int(count)
    found = []
    deadline = time.time() + 30
    with client() as namespace, namespace.get_queue_receiver(queue) as receiver:
        while len(found) < count and time.time() < deadline:
            for message in receiver.receive_messages(max_message_count=count - len(found), max_wait_time=2):
                found.append({"body": str(message), "application_properties": properties(message)})
                receiver.complete_message(message)
    return {"messages": found, "spans": [span_json(s) for s in exporter.get_finished_spans()]}


run({"send": send, "receive": receive})
