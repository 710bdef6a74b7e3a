"""Reads a queue's dead-letter queue with Microsoft's azure-servicebus SDK, as a user would to
inspect what Shoal's Service Bus trigger dead-lettered.

Usage: dead_letters.py <queue> <count> — SB_CONNECTION holds the connection string. Prints one
JSON array: per message its body, application properties, dead-letter reason, description and
source, and delivery count. Completes what it read.
"""

import json
import os
import sys
import time

from azure.servicebus import ServiceBusClient, ServiceBusSubQueue


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def main():
    queue, count = sys.argv[1], int(sys.argv[2])
    found = []
    deadline = time.time() + 30
    with ServiceBusClient.from_connection_string(os.environ["SB_CONNECTION"]) as client:
        with client.get_queue_receiver(queue, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as receiver:
            while len(found) < count and time.time() < deadline:
                for message in receiver.receive_messages(max_message_count=count - len(found), max_wait_time=2):
                    found.append({
                        "body": b"".join(message.body).decode(),
                        "application_properties": {text(k): text(v) for k, v in (message.application_properties or {}).items()},
                        "dead_letter_reason": message.dead_letter_reason,
                        "dead_letter_error_description": message.dead_letter_error_description,
                        "dead_letter_source": message.dead_letter_source,
                        "delivery_count": message.delivery_count,
                    })
                    receiver.complete_message(message)
    print(json.dumps(found))


main()
