#!/usr/bin/env python3
"""The reference consumer of `make bench`: what a user would write with the official Azure
Storage Queue SDK for Python instead of Shoal, at the concurrency Shoal's worker uses.

The main thread receives up to BATCH messages at a time (invisible for 10 minutes, as Shoal
receives them) and hands each to a pool of THREADS threads, which POST a custom-handler style
JSON body to the handler and delete the message when the handler answered 2xx. It receives again
as soon as no more than THREADS - BATCH messages are in flight, so at most THREADS are: Shoal's
batchSize + newBatchThreshold rule. An empty receive waits 100 ms (Shoal's first back-off step).
Each pool thread has its own QueueClient and requests.Session (keep-alive connections, no shared
connection pool to run short of).

shoal-bench starts it after preloading the queue, times it from the first handler call until the
queue is empty, and stops it with SIGTERM. It also stops by itself after --max-seconds.

The connection string comes from the environment (BENCH_CONNECTION_STRING), not the command line.
"""

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from azure.storage.queue import QueueClient

# Azurite 3.35 rejects newer service versions; Shoal pins the same one (shoal-connectors).
API_VERSION = "2025-11-05"
# Messages stay invisible this long once received, as in Shoal's worker.
VISIBILITY_TIMEOUT = 600


class Consumer:
    def __init__(self, connection_string, queue_name, url, threads, batch):
        self.connection_string = connection_string
        self.queue_name = queue_name
        self.url = url
        self.threads = threads
        self.batch = batch
        self.local = threading.local()
        self.in_flight = 0
        self.changed = threading.Condition()
        self.failures = 0

    def client(self):
        return QueueClient.from_connection_string(
            self.connection_string, self.queue_name, api_version=API_VERSION
        )

    def fail(self, what):
        with self.changed:
            self.failures += 1
            first = self.failures <= 3
        if first:
            print(f"python-consumer: {what}", file=sys.stderr, flush=True)

    def handle(self, message):
        try:
            if not hasattr(self.local, "client"):
                self.local.client = self.client()
                self.local.session = requests.Session()
            body = {
                "Data": {"msg": message.content},
                "Metadata": {
                    "Id": message.id,
                    "DequeueCount": message.dequeue_count,
                    "InsertionTime": message.inserted_on.isoformat(),
                    "ExpirationTime": message.expires_on.isoformat(),
                    "NextVisibleTime": message.next_visible_on.isoformat(),
                    "PopReceipt": message.pop_receipt,
                },
            }
            response = self.local.session.post(self.url, json=body, timeout=30)
            if 200 <= response.status_code < 300:
                self.local.client.delete_message(message)
            else:
                self.fail(f"handler answered {response.status_code}")
        except Exception as error:  # a user's consumer logs and goes on
            self.fail(repr(error))
        finally:
            with self.changed:
                self.in_flight -= 1
                self.changed.notify()

    def run(self, deadline):
        receiver = self.client()
        threshold = max(self.threads - self.batch, 0)
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            while time.monotonic() < deadline:
                with self.changed:
                    self.changed.wait_for(lambda: self.in_flight <= threshold)
                try:
                    messages = list(
                        receiver.receive_messages(
                            messages_per_page=self.batch,
                            max_messages=self.batch,
                            visibility_timeout=VISIBILITY_TIMEOUT,
                        )
                    )
                except Exception as error:
                    self.fail(repr(error))
                    messages = []
                if not messages:
                    time.sleep(0.1)
                    continue
                with self.changed:
                    self.in_flight += len(messages)
                for message in messages:
                    pool.submit(self.handle, message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue", required=True)
    parser.add_argument("--handler", required=True, help="URL to POST each message to")
    parser.add_argument("--threads", type=int, default=24, help="messages in flight at most")
    parser.add_argument("--batch", type=int, default=16, help="messages per receive (1-32)")
    parser.add_argument("--max-seconds", type=float, default=600)
    args = parser.parse_args()
    consumer = Consumer(
        os.environ["BENCH_CONNECTION_STRING"],
        args.queue,
        args.handler,
        args.threads,
        args.batch,
    )
    consumer.run(time.monotonic() + args.max_seconds)
    if consumer.failures:
        print(f"python-consumer: {consumer.failures} failures", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
