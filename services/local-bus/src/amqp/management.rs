//! The `<entity>/$management` node: Service Bus's request/response operations, named by the
//! `operation` application property and carrying an AMQP map body, answered with
//! `statusCode` / `statusDescription` (`azure-sdk-for-python` `servicebus/_common/constants.py`
//! `REQUEST_RESPONSE_*` and `MGMT_REQUEST_*`; .NET `Amqp/ManagementConstants.cs`).
//!
//! Implemented: renew-lock, schedule-message, cancel-scheduled-message,
//! receive-by-sequence-number, update-disposition, peek-message, renew-session-lock,
//! get-session-state, set-session-state.

use chrono::{DateTime, Utc};
use fe2o3_amqp::types::messaging::{Body, Message};
use fe2o3_amqp::types::primitives::{Array, Binary, SimpleValue, Symbol, Value};

use super::wire::{self, as_i64, as_str, as_uuid, get, items, map};
use crate::config::Rights;
use crate::sas::Grant;
use crate::store::entity::Settlement;
use crate::store::message::{self, StoredMessage, timestamp};
use crate::store::{Store, SubQueue, Target};

/// Lower-case: node addresses are normalized ([`crate::sas::address_path`]) before matching.
pub const MANAGEMENT_SUFFIX: &str = "/$management";
const KEYS: (&str, &str) = ("statusCode", "statusDescription");
const LOCK_LOST: &str = "com.microsoft:message-lock-lost";
const SESSION_LOCK_LOST: &str = "com.microsoft:session-lock-lost";
const NOT_FOUND: &str = "com.microsoft:message-not-found";
const ENTITY_NOT_FOUND: &str = "amqp:not-found";
const UNAUTHORIZED: &str = "amqp:unauthorized-access";
const BAD_REQUEST: &str = "amqp:invalid-field";

type Reply = (i32, String, Option<&'static str>, Value);

fn ok(body: Value) -> Reply {
    (200, "OK".to_owned(), None, body)
}

fn fail(status: i32, condition: &'static str, description: impl Into<String>) -> Reply {
    (status, description.into(), Some(condition), Value::Null)
}

/// Handles one request to `node` (`queue/$management`, `t/Subscriptions/s/$management`, ...).
pub fn handle(
    request: &Message<Body<Value>>,
    node: &str,
    store: &mut Store,
    grants: &[Grant],
    now: DateTime<Utc>,
) -> Message<Body<Value>> {
    let (status, description, condition, body) = dispatch(request, node, store, grants, now);
    wire::response(request, KEYS, status, &description, condition, body)
}

fn dispatch(
    request: &Message<Body<Value>>,
    node: &str,
    store: &mut Store,
    grants: &[Grant],
    now: DateTime<Utc>,
) -> Reply {
    let entity_address = node.strip_suffix(MANAGEMENT_SUFFIX).unwrap_or(node);
    let Some(target) = store.resolve(entity_address) else {
        return fail(
            404,
            ENTITY_NOT_FOUND,
            format!("The messaging entity '{entity_address}' could not be found."),
        );
    };
    let operation = wire::app_property(request, "operation").unwrap_or_default();
    let operation = operation
        .strip_prefix("com.microsoft:")
        .unwrap_or(&operation)
        .to_owned();
    let needed = match operation.as_str() {
        "schedule-message" | "cancel-scheduled-message" => Rights::SEND,
        _ => Rights::LISTEN,
    };
    let authorized = grants
        .iter()
        .any(|g| g.allows(entity_address, needed, now).is_ok());
    if !authorized {
        return fail(
            401,
            UNAUTHORIZED,
            format!(
                "Unauthorized access. '{operation}' needs a token for {entity_address} with that right."
            ),
        );
    }
    let empty = Default::default();
    let body = wire::body_map(request).unwrap_or(&empty);
    match (operation.as_str(), &target) {
        ("schedule-message", _) => schedule(body, &target, store, now),
        ("cancel-scheduled-message", Target::Entity(path, SubQueue::Main)) => {
            cancel(body, std::slice::from_ref(path), store, now)
        }
        ("cancel-scheduled-message", Target::Topic(path)) => {
            let subs = store
                .topics
                .get(path)
                .map(|t| t.subscriptions.clone())
                .unwrap_or_default();
            cancel(body, &subs, store, now)
        }
        (_, Target::Entity(path, sub_queue)) => {
            let (path, sub_queue) = (path.clone(), *sub_queue);
            match store.entities.get_mut(&path) {
                Some(entity) => entity_operation(&operation, body, entity, sub_queue, now),
                None => fail(
                    404,
                    ENTITY_NOT_FOUND,
                    "The messaging entity could not be found.",
                ),
            }
        }
        _ => fail(
            400,
            BAD_REQUEST,
            format!("The operation '{operation}' is not supported on this entity."),
        ),
    }
}

fn entity_operation(
    operation: &str,
    body: &fe2o3_amqp::types::primitives::OrderedMap<Value, Value>,
    entity: &mut crate::store::Entity,
    sub_queue: SubQueue,
    now: DateTime<Utc>,
) -> Reply {
    let tokens = || {
        get(body, "lock-tokens")
            .map(|v| items(v).into_iter().filter_map(as_uuid).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    match operation {
        "renew-lock" => {
            let mut expirations = Vec::new();
            for token in tokens() {
                match entity.renew_lock(sub_queue, token, now) {
                    Ok(until) => expirations.push(Value::Timestamp(timestamp(until))),
                    Err(e) => return fail(410, LOCK_LOST, e.to_string()),
                }
            }
            ok(map(vec![("expirations", Value::Array(Array(expirations)))]))
        }
        "update-disposition" => {
            let status = get(body, "disposition-status")
                .and_then(as_str)
                .unwrap_or_default()
                .to_owned();
            let properties = properties_to_modify(body);
            let reason = get(body, "deadletter-reason")
                .and_then(as_str)
                .map(str::to_owned);
            let description = get(body, "deadletter-description")
                .and_then(as_str)
                .map(str::to_owned);
            for token in tokens() {
                let settlement = match status.as_str() {
                    "completed" => Settlement::Complete,
                    "abandoned" => Settlement::Abandon {
                        properties: properties.clone(),
                    },
                    "defered" | "deferred" => Settlement::Defer {
                        properties: properties.clone(),
                    },
                    "suspended" => Settlement::DeadLetter {
                        reason: reason.clone(),
                        description: description.clone(),
                        properties: properties.clone(),
                    },
                    other => {
                        return fail(
                            400,
                            BAD_REQUEST,
                            format!("Unknown disposition-status {other:?}."),
                        );
                    }
                };
                if let Err(e) = entity.settle(sub_queue, token, settlement, now) {
                    return fail(410, LOCK_LOST, e.to_string());
                }
            }
            ok(map(vec![]))
        }
        "receive-by-sequence-number" => {
            let numbers: Vec<i64> = get(body, "sequence-numbers")
                .map(|v| items(v).into_iter().filter_map(as_i64).collect())
                .unwrap_or_default();
            // 0 = receive-and-delete, 1 = peek-lock (.NET `ReceiverSettleMode` First/Second).
            let delete = get(body, "receiver-settle-mode").and_then(as_i64) == Some(0);
            let found = entity.receive_deferred(sub_queue, &numbers, delete, now);
            if found.is_empty() {
                return fail(
                    404,
                    NOT_FOUND,
                    "Failed to retrieve messages by sequence number: no deferred message has it.",
                );
            }
            let ttl_of = |m: &StoredMessage| entity.effective_ttl(&m.message);
            messages_body(&found, ttl_of, true)
        }
        "peek-message" => {
            let from = get(body, "from-sequence-number")
                .and_then(as_i64)
                .unwrap_or(1);
            let count = get(body, "message-count")
                .and_then(as_i64)
                .unwrap_or(1)
                .clamp(1, 1000) as usize;
            let session = get(body, "session-id").and_then(as_str).map(str::to_owned);
            let found = entity.peek(sub_queue, from, count, session.as_deref(), now);
            if found.is_empty() {
                return (204, "No Content".to_owned(), None, Value::Null);
            }
            let ttl_of = |m: &StoredMessage| entity.effective_ttl(&m.message);
            messages_body(&found, ttl_of, false)
        }
        "renew-session-lock" => {
            let Some(session) = get(body, "session-id").and_then(as_str) else {
                return fail(400, BAD_REQUEST, "session-id is required.");
            };
            let owner = entity.sessions.get(session).map(|l| l.owner).unwrap_or(0);
            match entity.renew_session_lock(session, owner, now) {
                Ok(until) => ok(map(vec![(
                    "expiration",
                    Value::Timestamp(timestamp(until)),
                )])),
                Err(_) => fail(410, SESSION_LOCK_LOST, "The session lock has expired."),
            }
        }
        "get-session-state" | "set-session-state" => {
            let Some(session) = get(body, "session-id").and_then(as_str).map(str::to_owned) else {
                return fail(400, BAD_REQUEST, "session-id is required.");
            };
            if entity.sessions.get(&session).is_none_or(|l| l.until <= now) {
                return fail(410, SESSION_LOCK_LOST, "The session lock has expired.");
            }
            if operation == "set-session-state" {
                let state = match get(body, "session-state") {
                    Some(Value::Binary(b)) => Some(b.to_vec()),
                    _ => None,
                };
                match state {
                    Some(state) => entity.session_states.insert(session, state),
                    None => entity.session_states.remove(&session),
                };
                ok(map(vec![]))
            } else {
                let state = entity
                    .session_states
                    .get(&session)
                    .map(|s| Value::Binary(Binary::from(s.clone())))
                    .unwrap_or(Value::Null);
                ok(map(vec![("session-state", state)]))
            }
        }
        other => fail(
            400,
            BAD_REQUEST,
            format!("The operation '{other}' is not supported by the local stand-in."),
        ),
    }
}

fn properties_to_modify(
    body: &fe2o3_amqp::types::primitives::OrderedMap<Value, Value>,
) -> Vec<(String, SimpleValue)> {
    match get(body, "properties-to-modify") {
        Some(Value::Map(map)) => map
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    as_str(k)?.to_owned(),
                    SimpleValue::try_from(v.clone()).ok()?,
                ))
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn messages_body(
    found: &[StoredMessage],
    ttl_of: impl Fn(&StoredMessage) -> Option<std::time::Duration>,
    with_locks: bool,
) -> Reply {
    let mut list = Vec::new();
    for stored in found {
        let bytes = match message::encode(&stored.to_wire(ttl_of(stored))) {
            Ok(bytes) => bytes,
            Err(e) => {
                return fail(
                    500,
                    "amqp:internal-error",
                    format!("cannot encode a message: {e}"),
                );
            }
        };
        let mut entry = vec![("message", Value::Binary(Binary::from(bytes)))];
        if with_locks && let Some(lock) = stored.lock {
            entry.push(("lock-token", wire::uuid_value(lock.token)));
        }
        list.push(map(entry));
    }
    ok(map(vec![("messages", Value::List(list))]))
}

fn schedule(
    body: &fe2o3_amqp::types::primitives::OrderedMap<Value, Value>,
    target: &Target,
    store: &mut Store,
    now: DateTime<Utc>,
) -> Reply {
    let Some(messages) = get(body, "messages") else {
        return fail(400, BAD_REQUEST, "messages is required.");
    };
    let mut numbers = Vec::new();
    for entry in items(messages) {
        let Value::Map(entry) = entry else { continue };
        let Some(Value::Binary(bytes)) = get(entry, "message") else {
            return fail(400, BAD_REQUEST, "each message needs a binary 'message'.");
        };
        let decoded = match message::decode(bytes) {
            Ok(m) => m,
            Err(e) => return fail(400, BAD_REQUEST, format!("cannot decode the message: {e}")),
        };
        let scheduled_for = scheduled_enqueue_time(&decoded);
        let given = store.send(target, decoded, scheduled_for, now);
        // A topic gives one number per subscription; Azure gives the topic's one.
        numbers.push(Value::Long(given.first().copied().unwrap_or(0)));
    }
    ok(map(vec![(
        "sequence-numbers",
        Value::Array(Array(numbers)),
    )]))
}

fn cancel(
    body: &fe2o3_amqp::types::primitives::OrderedMap<Value, Value>,
    paths: &[String],
    store: &mut Store,
    now: DateTime<Utc>,
) -> Reply {
    let numbers: Vec<i64> = get(body, "sequence-numbers")
        .map(|v| items(v).into_iter().filter_map(as_i64).collect())
        .unwrap_or_default();
    for path in paths {
        if let Some(entity) = store.entities.get_mut(path) {
            for n in &numbers {
                entity.cancel_scheduled(*n, now);
            }
        }
    }
    ok(map(vec![]))
}

/// `x-opt-scheduled-enqueue-time` from a message's annotations.
pub fn scheduled_enqueue_time(message: &Message<Body<Value>>) -> Option<DateTime<Utc>> {
    let annotations = message.message_annotations.as_ref()?;
    let key = fe2o3_amqp::types::messaging::annotations::OwnedKey::Symbol(Symbol::from(
        "x-opt-scheduled-enqueue-time",
    ));
    match annotations.get(&key)? {
        Value::Timestamp(ts) => message::from_timestamp(ts),
        _ => None,
    }
}
