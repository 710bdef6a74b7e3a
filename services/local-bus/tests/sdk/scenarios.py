"""Scenarios that drive the local Service Bus stand-in with Microsoft's azure-servicebus SDK.

Usage: scenarios.py <scenario> — connection strings come from the environment
(SB_CONNECTION, SB_LISTEN_CONNECTION, SB_BAD_CONNECTION); REQUESTS_CA_BUNDLE trusts the
stand-in's HTTPS certificate for the administration client. Each scenario prints one JSON
document of what it observed; the Rust tests (../sdk.rs) assert on it.
"""

import datetime
import json
import os
import sys
import time

from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.servicebus import (
    NEXT_AVAILABLE_SESSION,
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.exceptions import (
    ServiceBusAuthenticationError,
    ServiceBusAuthorizationError,
    ServiceBusError,
    SessionCannotBeLockedError,
)
from azure.servicebus.management import ServiceBusAdministrationClient

CONN = os.environ["SB_CONNECTION"]

if os.environ.get("SB_DEBUG"):
    import logging

    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)


def client(conn=CONN):
    return ServiceBusClient.from_connection_string(conn, retry_total=0, logging_enable=bool(os.environ.get("SB_DEBUG")))


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def delivery_count(message):
    # AMQP leaves a header field at its default (0) out; the SDK then reports None.
    return message.delivery_count or 0


def describe(message):
    return {
        "body": b"".join(message.body).decode() if message.body_type.value == "data" else str(message),
        "message_id": message.message_id,
        "subject": message.subject,
        "content_type": message.content_type,
        "correlation_id": message.correlation_id,
        "session_id": message.session_id,
        "application_properties": {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in (message.application_properties or {}).items()
        },
        "delivery_count": delivery_count(message),
        "sequence_number": message.sequence_number,
        "enqueued_time": message.enqueued_time_utc.isoformat() if message.enqueued_time_utc else None,
        "locked_until": message.locked_until_utc.isoformat() if message.locked_until_utc else None,
        "lock_token": str(message.lock_token) if message.lock_token else None,
        "dead_letter_reason": message.dead_letter_reason,
        "dead_letter_error_description": message.dead_letter_error_description,
        "dead_letter_source": message.dead_letter_source,
        "time_to_live": message.time_to_live.total_seconds() if message.time_to_live else None,
    }


def receive(receiver, count=1, wait=2):
    return receiver.receive_messages(max_message_count=count, max_wait_time=wait)


def receive_until(receiver, deadline_seconds, count=1):
    """Receives until something arrives or the deadline passes (no fixed sleeps)."""
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        got = receive(receiver, count=count, wait=1)
        if got:
            return got
    return []


def send_receive_complete(queue="orders"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(
                ServiceBusMessage(
                    "hello",
                    message_id="m-1",
                    subject="greeting",
                    content_type="text/plain",
                    correlation_id="c-1",
                    application_properties={"tenant": "t-1", "attempt": 3},
                    time_to_live=datetime.timedelta(minutes=5),
                )
            )
            sender.send_messages([ServiceBusMessage("batched-1"), ServiceBusMessage("batched-2")])
        with sb.get_queue_receiver(queue) as receiver:
            got = receive(receiver, count=3, wait=3)
            if len(got) < 3:
                got += receive(receiver, count=3 - len(got), wait=3)
            first = [describe(m) for m in got]
            for m in got:
                receiver.complete_message(m)
            after = receive(receiver, wait=1)
    return {"received": first, "after_complete": len(after)}


def abandon(queue="orders"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("retry me"))
        with sb.get_queue_receiver(queue) as receiver:
            first = receive(receiver)[0]
            counts = [delivery_count(first)]
            receiver.abandon_message(first)
            second = receive_until(receiver, 10)[0]
            counts.append(delivery_count(second))
            receiver.complete_message(second)
    return {"delivery_counts": counts}


def dead_letter(queue="orders"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("poison", application_properties={"k": "v"}))
        with sb.get_queue_receiver(queue) as receiver:
            message = receive(receiver)[0]
            receiver.dead_letter_message(message, reason="BadOrder", error_description="total is negative")
            remaining = len(receive(receiver, wait=1))
        with sb.get_queue_receiver(queue, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = receive_until(dlq, 10)[0]
            result = describe(dead)
            dlq.complete_message(dead)
    return {"dead_lettered": result, "remaining": remaining}


def max_delivery(queue="fragile"):
    """`fragile` has MaxDeliveryCount 2: two abandons move the message to the DLQ."""
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("fragile body", application_properties={"order": "o-9"}))
        seen = []
        with sb.get_queue_receiver(queue) as receiver:
            for _ in range(5):
                got = receive_until(receiver, 5)
                if not got:
                    break
                seen.append(delivery_count(got[0]))
                receiver.abandon_message(got[0])
        with sb.get_queue_receiver(queue, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = receive_until(dlq, 10)[0]
            result = describe(dead)
            dlq.complete_message(dead)
    return {"deliveries": seen, "dead_lettered": result}


def defer(queue="orders"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("later"))
        with sb.get_queue_receiver(queue) as receiver:
            message = receive(receiver)[0]
            sequence_number = message.sequence_number
            receiver.defer_message(message)
            visible = len(receive(receiver, wait=1))
            deferred = receiver.receive_deferred_messages([sequence_number])
            bodies = [str(m) for m in deferred]
            for m in deferred:
                receiver.complete_message(m)
            again = receiver.receive_deferred_messages([sequence_number]) if False else []
    return {"visible_after_defer": visible, "deferred_bodies": bodies, "again": len(again)}


def renew_lock(queue="short-lock"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("hold me"))
        with sb.get_queue_receiver(queue) as receiver:
            message = receive(receiver)[0]
            before = message.locked_until_utc
            time.sleep(1.1)  # so the renewed lock ends measurably later
            after = receiver.renew_message_lock(message)
            receiver.complete_message(message)
    return {"before": before.isoformat(), "after": after.isoformat(), "extended": after > before}


def lock_expiry(queue="short-lock"):
    """`short-lock` locks for 5 s: an unsettled message comes back with delivery count + 1."""
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("forgotten"))
        with sb.get_queue_receiver(queue) as receiver:
            first = receive(receiver)[0]
            started = time.monotonic()
            again = receive_until(receiver, 20)
            waited = time.monotonic() - started
            result = {"first": delivery_count(first), "again": [delivery_count(m) for m in again], "waited": waited}
            lost = None
            try:
                receiver.complete_message(first)
            except ServiceBusError as e:
                lost = type(e).__name__
            for m in again:
                receiver.complete_message(m)
            result["complete_expired_lock"] = lost
    return result


def schedule(queue="orders"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            at = utcnow() + datetime.timedelta(seconds=3)
            (kept,) = sender.schedule_messages(ServiceBusMessage("scheduled"), at)
            (cancelled,) = sender.schedule_messages(ServiceBusMessage("cancelled"), at)
            sender.cancel_scheduled_messages(cancelled)
        with sb.get_queue_receiver(queue) as receiver:
            peeked = [str(m) for m in receiver.peek_messages(max_message_count=10)]
            early = len(receive(receiver, wait=1))
            got = receive_until(receiver, 15)
            bodies = [str(m) for m in got]
            enqueued = got[0].enqueued_time_utc if got else None
            for m in got:
                receiver.complete_message(m)
            later = [str(m) for m in receive(receiver, wait=1)]
    return {
        "sequence_number": kept,
        "peeked": peeked,
        "early": early,
        "received": bodies,
        "later": later,
        "enqueued_not_before_schedule": bool(enqueued and enqueued >= at - datetime.timedelta(milliseconds=5)),
    }


def receive_and_delete(queue="orders"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("gone"))
        with sb.get_queue_receiver(queue, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as receiver:
            got = [str(m) for m in receive(receiver)]
            after = len(receive(receiver, wait=1))
    return {"received": got, "after": after}


def expiry(queue):
    """Sends a message with a 1 s TTL, waits until it has expired, then looks for it."""
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("short-lived", time_to_live=datetime.timedelta(seconds=1)))
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            time.sleep(0.1)
        with sb.get_queue_receiver(queue) as receiver:
            live = [str(m) for m in receive(receiver, wait=1)]
        with sb.get_queue_receiver(queue, sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = [describe(m) for m in receive(dlq, wait=1)]
            for m in receive(dlq, wait=0.5):
                dlq.complete_message(m)
    return {"live": live, "dead_lettered": dead}


def locked_not_expired(queue="expiring-dlq"):
    """A message whose TTL ends while it is locked stays completable until its lock ends."""
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages(ServiceBusMessage("held", time_to_live=datetime.timedelta(seconds=2)))
        with sb.get_queue_receiver(queue) as receiver:
            message = receive(receiver)[0]
            deadline = time.monotonic() + 2.5
            while time.monotonic() < deadline:
                time.sleep(0.1)
            error = None
            try:
                receiver.complete_message(message)
            except ServiceBusError as e:
                error = type(e).__name__
    return {"completed_after_ttl": error is None, "error": error}


def scheduled_expiry(queue="orders"):
    """Scheduled 2 s ahead with a 3 s TTL: expires 5 s after sending, so it is received at ~2 s."""
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.schedule_messages(
                ServiceBusMessage("scheduled-ttl", time_to_live=datetime.timedelta(seconds=3)),
                utcnow() + datetime.timedelta(seconds=2),
            )
        with sb.get_queue_receiver(queue) as receiver:
            got = receive_until(receiver, 10)
            bodies = [str(m) for m in got]
            for m in got:
                receiver.complete_message(m)
    return {"received": bodies}


def admin_counts(queue="counted"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            sender.send_messages([ServiceBusMessage(f"m{i}") for i in range(3)])
            sender.schedule_messages(ServiceBusMessage("later"), utcnow() + datetime.timedelta(hours=1))
        with sb.get_queue_receiver(queue) as receiver:
            message = receive(receiver)[0]
            receiver.dead_letter_message(message, reason="counted")
    with ServiceBusAdministrationClient.from_connection_string(CONN) as admin:
        runtime = admin.get_queue_runtime_properties(queue)
        properties = admin.get_queue(queue)
    return {
        "active": runtime.active_message_count,
        "dead_letter": runtime.dead_letter_message_count,
        "scheduled": runtime.scheduled_message_count,
        "total": runtime.total_message_count,
        "max_delivery_count": properties.max_delivery_count,
        "lock_duration": properties.lock_duration.total_seconds(),
    }


def admin_listen_only(queue="orders"):
    with ServiceBusAdministrationClient.from_connection_string(os.environ["SB_LISTEN_CONNECTION"]) as admin:
        try:
            admin.get_queue_runtime_properties(queue)
            return {"refused": False}
        except (ClientAuthenticationError, HttpResponseError) as e:
            return {"refused": True, "status": getattr(e, "status_code", None), "error": type(e).__name__}


def admin_create_update():
    with ServiceBusAdministrationClient.from_connection_string(CONN) as admin:
        admin.create_queue("created", max_delivery_count=4, lock_duration=datetime.timedelta(seconds=30))
        created = admin.get_queue("created")
        created_max_delivery_count = created.max_delivery_count
        created_lock_duration = created.lock_duration.total_seconds()
        created.max_delivery_count = 7
        created.auto_delete_on_idle = datetime.timedelta(minutes=10)
        admin.update_queue(created)
        updated = admin.get_queue("created")
        updated_max_delivery_count = updated.max_delivery_count
        updated_auto_delete = updated.auto_delete_on_idle.total_seconds()
        refused = None
        try:
            updated.auto_delete_on_idle = datetime.timedelta(minutes=1)
            admin.update_queue(updated)
        except HttpResponseError as e:
            refused = e.status_code
        admin.create_topic("created-topic", default_message_time_to_live=datetime.timedelta(minutes=10))
        admin.create_subscription("created-topic", "sub")
        subscription = admin.get_subscription("created-topic", "sub")
    with client() as sb:
        with sb.get_topic_sender("created-topic") as sender:
            sender.send_messages(ServiceBusMessage("to a created subscription"))
        with sb.get_subscription_receiver("created-topic", "sub") as receiver:
            got = [str(m) for m in receive_until(receiver, 5)]
    return {
        "created_max_delivery_count": created_max_delivery_count,
        "created_lock_duration": created_lock_duration,
        "updated_max_delivery_count": updated_max_delivery_count,
        "updated_auto_delete_on_idle": updated_auto_delete,
        "refused_status": refused,
        "subscription_ttl": subscription.default_message_time_to_live.total_seconds(),
        "received": got,
    }


def bad_key(queue="orders"):
    outcome = {}
    with client(os.environ["SB_BAD_CONNECTION"]) as sb:
        try:
            with sb.get_queue_sender(queue) as sender:
                sender.send_messages(ServiceBusMessage("nope"))
            outcome["send"] = "sent"
        except (ServiceBusAuthenticationError, ServiceBusAuthorizationError, ServiceBusError) as e:
            outcome["send"] = type(e).__name__
    with client(os.environ["SB_LISTEN_CONNECTION"]) as sb:
        try:
            with sb.get_queue_sender(queue) as sender:
                sender.send_messages(ServiceBusMessage("nope"))
            outcome["listen_only_send"] = "sent"
        except (ServiceBusAuthenticationError, ServiceBusAuthorizationError, ServiceBusError) as e:
            outcome["listen_only_send"] = type(e).__name__
    return outcome


def sessions(queue="sessions"):
    with client() as sb:
        with sb.get_queue_sender(queue) as sender:
            for i in range(3):
                sender.send_messages(ServiceBusMessage(f"a{i}", session_id="A"))
            sender.send_messages(ServiceBusMessage("b0", session_id="B"))
        with sb.get_queue_receiver(queue, session_id="A") as a:
            exclusive = None
            try:
                with sb.get_queue_receiver(queue, session_id="A", max_wait_time=2) as other:
                    receive(other, wait=1)
                exclusive = "second receiver got the session"
            except (SessionCannotBeLockedError, ServiceBusError) as e:
                exclusive = type(e).__name__
            got = []
            while len(got) < 3:
                batch = receive_until(a, 5, count=3)
                if not batch:
                    break
                for m in batch:
                    got.append((str(m), m.session_id))
                    a.complete_message(m)
            renewed = a.session.renew_lock()
            a.session.set_state(b"checkpoint")
            state = a.session.get_state()
        with sb.get_queue_receiver(queue, session_id=NEXT_AVAILABLE_SESSION) as any_session:
            session_id = any_session.session.session_id
            rest = [(str(m), m.session_id) for m in receive_until(any_session, 5)]
            for m in receive(any_session, wait=0.5):
                any_session.complete_message(m)
    return {
        "a": got,
        "exclusive": exclusive,
        "renewed": renewed is not None,
        "state": state.decode() if state else None,
        "next_available": session_id,
        "rest": rest,
    }


def topics(topic="events"):
    with client() as sb:
        with sb.get_topic_sender(topic) as sender:
            sender.send_messages(ServiceBusMessage("fan-out", application_properties={"kind": "created"}))
        result = {}
        for sub in ("audit", "billing"):
            with sb.get_subscription_receiver(topic, sub) as receiver:
                got = receive_until(receiver, 5)
                result[sub] = [str(m) for m in got]
                if sub == "billing" and got:
                    receiver.dead_letter_message(got[0], reason="billing-failed")
                else:
                    for m in got:
                        receiver.complete_message(m)
        with sb.get_subscription_receiver(topic, "billing", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as dlq:
            dead = receive_until(dlq, 5)
            result["billing_dlq"] = [(str(m), m.dead_letter_reason) for m in dead]
            for m in dead:
                dlq.complete_message(m)
    with ServiceBusAdministrationClient.from_connection_string(CONN) as admin:
        result["subscription_count"] = admin.get_topic_runtime_properties(topic).subscription_count
        sub = admin.get_subscription_runtime_properties(topic, "audit")
        result["audit_active"] = sub.active_message_count
    return result


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    print(json.dumps(globals()[name](*args), default=str))
