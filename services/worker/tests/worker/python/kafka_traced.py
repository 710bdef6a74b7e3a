"""A Kafka producer and consumer nobody here wrote (PyPI confluent-kafka, librdkafka inside)
with OpenTelemetry's SDK, as an instrumented application runs them: the trace tests start their
trace here and read what comes out at the end.

Usage (KAFKA_BROKERS holds the bootstrap servers):
  kafka_traced.py produce <topic> <value>
      Produces one record to partition 0 under a producer span `orders publish` whose context
      OpenTelemetry's propagator (W3C Trace Context, the global default) injects into the
      record's headers, as opentelemetry-instrumentation-confluent-kafka does. The span state
      carries `vendor=abc`, so a `tracestate` header goes too. Prints {"spans": [...],
      "headers": {...}}: the span (name, trace_id, span_id, parent_span_id, kind) and the
      headers sent.
  kafka_traced.py consume <topic> <count>
      Reads `count` records of partition 0 from its start. Prints [{"value", "headers"}].
"""

import os
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from opentelemetry import propagate, trace
from opentelemetry.trace import NonRecordingSpan, SpanKind, TraceState, set_span_in_context

from otel_memory import record_spans, run, span_json, text

exporter = record_spans()


def produce(topic, value):
    tracer = trace.get_tracer("shoal-trace-test")
    # A root whose trace carries vendor state: an upstream caller's `tracestate`, which the SDK
    # keeps on every span of the trace, so the record's headers carry it as well.
    upstream = tracer.start_span("checkout")
    upstream_ctx = upstream.get_span_context()
    with_state = trace.SpanContext(
        upstream_ctx.trace_id, upstream_ctx.span_id, upstream_ctx.is_remote,
        upstream_ctx.trace_flags, TraceState([("vendor", "abc")]))
    parent = set_span_in_context(NonRecordingSpan(with_state))
    headers = {}
    with tracer.start_as_current_span(f"{topic} publish", context=parent, kind=SpanKind.PRODUCER):
        propagate.inject(headers)
        producer = Producer({"bootstrap.servers": os.environ["KAFKA_BROKERS"]})
        failures = []
        producer.produce(topic, value=value.encode(), partition=0, headers=list(headers.items()),
                         on_delivery=lambda err, _msg: err and failures.append(str(err)))
        left = producer.flush(30)
        if left or failures:
            raise SystemExit(f"{left} records not delivered: {failures}")
    upstream.end()
    spans = [span_json(s) for s in exporter.get_finished_spans() if s.name != "checkout"]
    return {"spans": spans, "headers": headers}


def consume(topic, count):
    count = int(count)
    consumer = Consumer({"bootstrap.servers": os.environ["KAFKA_BROKERS"], "group.id": "trace-test-reader",
                         "enable.auto.commit": False})
    # Assigned, not subscribed: the test reads the partition, it does not join a group.
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    found = []
    deadline = time.time() + 30
    try:
        while len(found) < count and time.time() < deadline:
            record = consumer.poll(1)
            if record is None:
                continue
            if record.error():
                raise KafkaException(record.error())
            found.append({"value": text(record.value()),
                          "headers": {k: text(v) for k, v in (record.headers() or [])}})
    finally:
        consumer.close()
    return found


run({"produce": produce, "consume": consume})
