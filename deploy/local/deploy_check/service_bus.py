"""The local Service Bus stand-in Compose runs (`shoal local-bus`), used as an app would use it:
Microsoft's azure-servicebus Python SDK sends to and receives from a queue of the mounted
configuration, with the connection string the process printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from azure.servicebus import ServiceBusClient, ServiceBusMessage

from .fail import CheckFailed
from .launch import Launch

CONNECTION = re.compile(r"^\s*connection string (Endpoint=sb://([^:;/]+):(\d+);\S+)$", re.MULTILINE)


def round_trip(launch: Launch, service_name: str, banner: str) -> str:
    """Sends one message to the first configured queue and receives it back; returns the queue."""
    match = CONNECTION.search(banner)
    if match is None:
        raise CheckFailed(f"{launch.origin}: printed no connection string: {banner[-2000:]}")
    connection, host, port = match.groups()
    if host != service_name:
        raise CheckFailed(f"{launch.origin}: prints host {host}, but apps in the Compose network "
                          f"reach it as {service_name} (SHOAL_LOCAL_BUS_HOST)")
    config = launch.paths.get(launch.env.get("SHOAL_LOCAL_BUS_CONFIG", ""))
    if config is None:
        raise CheckFailed(f"{launch.origin}: SHOAL_LOCAL_BUS_CONFIG names no mounted file")
    queues = [q["Name"] for ns in json.loads(Path(config).read_text())["UserConfig"]["Namespaces"]
              for q in ns.get("Queues", [])]
    if not queues:
        raise CheckFailed(f"{config}: declares no queue")
    # Here the service's name is this host.
    here = connection.replace(f"sb://{host}:", "sb://127.0.0.1:", 1)
    body = f"check-deploy {port}"
    with ServiceBusClient.from_connection_string(here) as client:
        with client.get_queue_sender(queues[0]) as sender:
            sender.send_messages(ServiceBusMessage(body))
        with client.get_queue_receiver(queues[0], max_wait_time=10) as receiver:
            got = receiver.receive_messages(max_message_count=1, max_wait_time=10)
            for message in got:
                receiver.complete_message(message)
    if [str(m) for m in got] != [body]:
        raise CheckFailed(f"{launch.origin}: queue {queues[0]} gave back {[str(m) for m in got]}, "
                          f"not the message sent")
    return queues[0]
