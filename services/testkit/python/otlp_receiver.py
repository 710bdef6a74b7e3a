"""An OpenTelemetry collector's trace intake, for tests: serves OTLP/gRPC TraceService (the
service and messages generated from OpenTelemetry's own protobuf definitions, PyPI
`opentelemetry-proto`, served by `grpcio`) on 127.0.0.1 and writes every span it receives as one
JSON line to <spans-file>.

  otlp_receiver.py <spans-file>

Prints {"port": <port>} once it listens, then serves until it is killed. Each line holds the
span's ids in lowercase hex (traceId, spanId, parentSpanId: "" for a root), name, kind (the
protobuf enum's number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer), attributes,
events, status, flags, its resource's attributes and its scope's name.
"""

import json
import sys
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes(key_values):
    return {kv.key: value(kv.value) for kv in key_values}


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, path):
        self.out = open(path, "a", encoding="utf-8")
        self.lock = threading.Lock()

    def Export(self, request, context):
        lines = []
        for resource_spans in request.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    lines.append(json.dumps({
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex(),
                        "traceState": span.trace_state,
                        "flags": span.flags,
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "attributes": attributes(span.attributes),
                        "events": [
                            {"name": e.name, "attributes": attributes(e.attributes)}
                            for e in span.events
                        ],
                        "status": {"code": span.status.code, "message": span.status.message},
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                    }))
        with self.lock:
            for line in lines:
                self.out.write(line + "\n")
            self.out.flush()
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(sys.argv[1]), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(json.dumps({"port": port}), flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
