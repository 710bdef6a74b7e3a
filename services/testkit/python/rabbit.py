"""Drives a RabbitMQ broker with pika, the Python client, as a user of Shoal's RabbitMQ trigger
would: RABBITMQ_URL names the broker. Prints one JSON document.

  declare <queue> [<dead-letter-queue>]  a durable queue; with a dead-letter queue, the queue
                                          dead-letters to it through the default exchange
  publish <queue> <count> [<prefix>]     persistent messages "<prefix>-<i>" with message ids
                                          "<prefix>-<i>"; prints the ids
  publish-sized <queue> <id> <bytes>     one persistent message of <bytes> bytes ("<id>"
                                          padded with "."), message id <id>
  publish-anon <queue> <body>            one persistent message without a message id
  publish-traced <queue> <id> <traceparent> <tracestate>
                                          one persistent message, message id <id>, carrying
                                          a W3C trace context in its traceparent and
                                          tracestate headers (as OpenTelemetry's pika
                                          instrumentation writes them)
  publish-failed <queue> <count> <prefix>
                                          as publish, each with x-ms-rabbitmq-requeuecount 4
                                          (failed four times, as Shoal's listener leaves it)
  reject <queue> <count>                 takes up to <count> messages and rejects each without
                                          requeueing (the queue's dead-letter exchange gets it)
  get <queue> <count> [<seconds>]        takes up to <count> messages (acknowledging them),
                                          waiting up to <seconds> (default 30); prints bodies
                                          (the first 64 characters), sizes, headers and
                                          message ids
  count <queue>                          messages ready in the queue
  consumers <queue>                      consumers the broker counts on the queue (0 once the
                                          broker has dropped a closed connection's consumer, which
                                          requeues its unacknowledged messages)
  purge <queue>                          removes every message ready in the queue
"""

import json
import os
import sys
import time

import pika


def connect():
    return pika.BlockingConnection(pika.URLParameters(os.environ["RABBITMQ_URL"]))


def headers_of(properties):
    out = {}
    for key, value in (properties.headers or {}).items():
        out[key] = value.decode() if isinstance(value, bytes) else value
    return out


def publish(channel, queue, body, **properties):
    """One persistent message to `queue` through the default exchange."""
    channel.basic_publish(
        exchange="",
        routing_key=queue,
        body=body,
        properties=pika.BasicProperties(delivery_mode=2, **properties),
    )


def main():
    command, queue = sys.argv[1], sys.argv[2]
    connection = connect()
    channel = connection.channel()
    if command == "declare":
        arguments = {}
        if len(sys.argv) > 3:
            dead = sys.argv[3]
            channel.queue_declare(queue=dead, durable=True)
            arguments = {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dead}
        channel.queue_declare(queue=queue, durable=True, arguments=arguments)
        print(json.dumps({"declared": queue}))
    elif command in ("publish", "publish-failed"):
        count = int(sys.argv[3])
        prefix = sys.argv[4] if len(sys.argv) > 4 else "m"
        headers = {"x-ms-rabbitmq-requeuecount": 4} if command == "publish-failed" else None
        channel.confirm_delivery()
        ids = []
        for i in range(count):
            message_id = f"{prefix}-{i}"
            publish(channel, queue, message_id.encode(), message_id=message_id,
                    content_type="text/plain", headers=headers)
            ids.append(message_id)
        print(json.dumps(ids))
    elif command == "publish-sized":
        message_id, size = sys.argv[3], int(sys.argv[4])
        body = message_id.encode().ljust(size, b".")
        channel.confirm_delivery()
        publish(channel, queue, body, message_id=message_id)
        print(json.dumps({"published": message_id, "bytes": len(body)}))
    elif command == "publish-traced":
        message_id, traceparent, tracestate = sys.argv[3], sys.argv[4], sys.argv[5]
        channel.confirm_delivery()
        publish(channel, queue, message_id.encode(), message_id=message_id,
                headers={"traceparent": traceparent, "tracestate": tracestate})
        print(json.dumps({"published": message_id}))
    elif command == "publish-anon":
        channel.confirm_delivery()
        publish(channel, queue, sys.argv[3].encode())
        print(json.dumps({"published": sys.argv[3]}))
    elif command == "reject":
        rejected = 0
        for _ in range(int(sys.argv[3])):
            method, _properties, _body = channel.basic_get(queue=queue, auto_ack=False)
            if method is None:
                break
            channel.basic_reject(delivery_tag=method.delivery_tag, requeue=False)
            rejected += 1
        print(json.dumps(rejected))
    elif command == "get":
        count = int(sys.argv[3])
        deadline = time.time() + (float(sys.argv[4]) if len(sys.argv) > 4 else 30.0)
        found = []
        while len(found) < count and time.time() < deadline:
            method, properties, body = channel.basic_get(queue=queue, auto_ack=True)
            if method is None:
                time.sleep(0.1)
                continue
            found.append({
                "body": body[:64].decode(errors="replace"),
                "size": len(body),
                "headers": headers_of(properties),
                "messageId": properties.message_id,
            })
        # x-death, which the broker adds when it dead-letters, holds timestamps.
        print(json.dumps(found, default=str))
    elif command == "count":
        declared = channel.queue_declare(queue=queue, passive=True)
        print(json.dumps(declared.method.message_count))
    elif command == "consumers":
        declared = channel.queue_declare(queue=queue, passive=True)
        print(json.dumps(declared.method.consumer_count))
    elif command == "purge":
        channel.queue_purge(queue=queue)
        print(json.dumps({"purged": queue}))
    else:
        raise SystemExit(f"unknown command {command}")
    connection.close()


if __name__ == "__main__":
    main()
