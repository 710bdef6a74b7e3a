//! Settling a Service Bus message after its invocation.
//!
//! **What Azure does** (azure-sdk-for-net
//! `sdk/servicebus/Azure.Messaging.ServiceBus/src/Processor/ReceiverManager.cs`,
//! `ProcessOneMessage`, which the Functions extension's `ServiceBusListener` drives): when the
//! function succeeds and `autoCompleteMessages` is on, the message is completed unless the
//! function settled it itself; when the function fails, the message is abandoned (whatever
//! `autoCompleteMessages` says) unless it was settled or its lock was lost — the broker then
//! counts the delivery and dead-letters the message once `MaxDeliveryCount` is reached. With
//! `autoCompleteMessages` off a successful function must settle the message itself; one that
//! does not leaves it locked until the lock expires, and it is delivered again.
//!
//! **What a custom handler may ask** (Shoal's counterpart of `ServiceBusMessageActions`, which
//! a custom handler cannot call): a top-level `Settlement` in its 2xx response,
//!
//! ```json
//! {"Settlement": {"action": "deadLetter", "reason": "InvalidOrder",
//!                 "description": "no customer id", "propertiesToModify": {"stage": "validate"}}}
//! ```
//!
//! with `action` one of `complete`, `abandon`, `deadLetter` (optional `reason`, `description`)
//! or `defer`, and optional `propertiesToModify` (application properties to set, with string,
//! number or boolean values) for all but `complete`. For a batch, `Settlement` is an array of
//! such objects, each naming its message by `lockToken` (from `LockTokenArray`); messages it
//! does not name are settled automatically. A single message's settlement may name its
//! `lockToken` too, which must then match. Anything else — an unknown action or key, a lock
//! token of no message of the invocation, one named twice — fails the invocation with a message
//! saying why, and the message is abandoned as for any failure.

use std::time::Duration;

use serde_json::{Map, Value};

/// What is done with a message.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    Complete,
    /// Give it back now; the broker counts the delivery.
    Abandon {
        properties_to_modify: Map<String, Value>,
    },
    DeadLetter {
        reason: Option<String>,
        description: Option<String>,
        properties_to_modify: Map<String, Value>,
    },
    /// Set aside; it can be received only by sequence number.
    Defer {
        properties_to_modify: Map<String, Value>,
    },
}

impl Settlement {
    pub fn abandon() -> Settlement {
        Settlement::Abandon {
            properties_to_modify: Map::new(),
        }
    }

    /// The action's name as a handler writes it.
    pub fn action(&self) -> &'static str {
        match self {
            Settlement::Complete => "complete",
            Settlement::Abandon { .. } => "abandon",
            Settlement::DeadLetter { .. } => "deadLetter",
            Settlement::Defer { .. } => "defer",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettlementError {
    #[error("Settlement must be an object, or for a batch an array of objects")]
    Shape,
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
}

fn invalid(at: &str, message: impl Into<String>) -> SettlementError {
    SettlementError::Invalid {
        at: at.to_owned(),
        message: message.into(),
    }
}

const KEYS: [&str; 5] = [
    "action",
    "lockToken",
    "reason",
    "description",
    "propertiesToModify",
];

/// The settlement the handler asked for, per message of the invocation (`lock_tokens` in
/// message order): `None` where it asked nothing. `value` is the response's `Settlement`.
pub fn requested_settlements(
    value: Option<&Value>,
    lock_tokens: &[&str],
) -> Result<Vec<Option<Settlement>>, SettlementError> {
    let mut settled = vec![None; lock_tokens.len()];
    let items: Vec<(String, &Map<String, Value>)> = match value {
        None | Some(Value::Null) => return Ok(settled),
        Some(Value::Object(one)) => vec![("Settlement".to_owned(), one)],
        Some(Value::Array(many)) => many
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Object(o) => Ok((format!("Settlement[{i}]"), o)),
                _ => Err(invalid(&format!("Settlement[{i}]"), "must be an object")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(SettlementError::Shape),
    };
    for (at, item) in items {
        let index = match item.get("lockToken") {
            None | Some(Value::Null) if lock_tokens.len() == 1 => 0,
            None | Some(Value::Null) => {
                return Err(invalid(
                    &at,
                    "lockToken is required when the invocation has several messages",
                ));
            }
            Some(Value::String(token)) => lock_tokens
                .iter()
                .position(|t| t.eq_ignore_ascii_case(token))
                .ok_or_else(|| invalid(&at, "lockToken names no message of this invocation"))?,
            Some(_) => return Err(invalid(&at, "lockToken must be a string")),
        };
        if settled[index].is_some() {
            return Err(invalid(
                &at,
                "settles a message already settled by an earlier entry",
            ));
        }
        settled[index] = Some(parse_one(&at, item)?);
    }
    Ok(settled)
}

fn parse_one(at: &str, item: &Map<String, Value>) -> Result<Settlement, SettlementError> {
    if let Some(unknown) = item.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(invalid(
            at,
            format!("unknown key {unknown:?}; known keys: {}", KEYS.join(", ")),
        ));
    }
    let text = |key: &str| -> Result<Option<String>, SettlementError> {
        match item.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(at, format!("{key} must be a string"))),
        }
    };
    let action = text("action")?.ok_or_else(|| {
        invalid(
            at,
            "action is required: complete, abandon, deadLetter or defer",
        )
    })?;
    let properties_to_modify = match item.get("propertiesToModify") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(properties)) => {
            if let Some((name, _)) = properties
                .iter()
                .find(|(_, v)| !matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)))
            {
                return Err(invalid(
                    at,
                    format!("propertiesToModify.{name} must be a string, number or boolean"),
                ));
            }
            properties.clone()
        }
        Some(_) => return Err(invalid(at, "propertiesToModify must be an object")),
    };
    let (reason, description) = (text("reason")?, text("description")?);
    if action != "deadLetter" && (reason.is_some() || description.is_some()) {
        return Err(invalid(
            at,
            "reason and description apply to deadLetter only",
        ));
    }
    Ok(match action.as_str() {
        "complete" if properties_to_modify.is_empty() => Settlement::Complete,
        "complete" => {
            return Err(invalid(at, "complete takes no propertiesToModify"));
        }
        "abandon" => Settlement::Abandon {
            properties_to_modify,
        },
        "deadLetter" => Settlement::DeadLetter {
            reason,
            description,
            properties_to_modify,
        },
        "defer" => Settlement::Defer {
            properties_to_modify,
        },
        other => {
            return Err(invalid(
                at,
                format!("unknown action {other:?}; one of complete, abandon, deadLetter, defer"),
            ));
        }
    })
}

/// What the trigger does with a message once its invocation ended.
#[derive(Clone, Debug, PartialEq)]
pub enum AfterInvocation {
    Settle(Settlement),
    /// Nothing: with `autoCompleteMessages` off and no settlement asked for, the lock runs out
    /// and the broker delivers the message again, as in Azure.
    LeaveLocked,
}

/// The rule of [`ReceiverManager.ProcessOneMessage`](self): success → what the handler asked,
/// else complete when auto-completing; failure → abandon.
pub fn after_invocation(
    succeeded: bool,
    requested: Option<Settlement>,
    auto_complete: bool,
) -> AfterInvocation {
    match (succeeded, requested) {
        (false, _) => AfterInvocation::Settle(Settlement::abandon()),
        (true, Some(settlement)) => AfterInvocation::Settle(settlement),
        (true, None) if auto_complete => AfterInvocation::Settle(Settlement::Complete),
        (true, None) => AfterInvocation::LeaveLocked,
    }
}

/// When to renew a lock that has `remaining` left: at the latest 10 s before it ends, and at
/// the latest halfway there; at once when under 400 ms remain (`CalculateRenewDelay` of
/// `ReceiverManager.cs`, whose `MaximumRenewBufferDuration` is 10 s).
pub fn lock_renewal_delay(remaining: Duration) -> Duration {
    const MAXIMUM_RENEW_BUFFER: Duration = Duration::from_secs(10);
    if remaining < Duration::from_millis(400) {
        return Duration::ZERO;
    }
    remaining - (remaining / 2).min(MAXIMUM_RENEW_BUFFER)
}

#[cfg(test)]
mod tests;
