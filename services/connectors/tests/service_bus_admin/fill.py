"""Fills a Service Bus entity for the connectors' management API tests, with Microsoft's
`azure-servicebus` SDK: `fill.py <queue-or-topic> <active> <scheduled> <dead-lettered>` sends
that many messages, schedules that many an hour ahead, and dead-letters that many of the sent
ones. Prints {"sent": …}."""

import datetime
import json
import os
import sys

from azure.servicebus import ServiceBusClient, ServiceBusMessage


def main():
    entity, active, scheduled, dead = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    with ServiceBusClient.from_connection_string(os.environ["SB_CONNECTION"], retry_total=0) as client:
        with client.get_queue_sender(entity) as sender:
            sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(active + dead)])
            for i in range(scheduled):
                sender.schedule_messages(ServiceBusMessage(f"s{i}"), later)
        if dead:
            with client.get_queue_receiver(entity) as receiver:
                done = 0
                while done < dead:
                    for message in receiver.receive_messages(max_message_count=dead - done, max_wait_time=5):
                        receiver.dead_letter_message(message, reason="test")
                        done += 1
    print(json.dumps({"sent": active + dead, "scheduled": scheduled, "dead": dead}))


main()
