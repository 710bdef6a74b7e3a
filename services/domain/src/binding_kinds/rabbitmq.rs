//! RabbitMQ: the `rabbitMQTrigger` and the `rabbitMQ` output, in the binding shape of the Azure
//! Functions RabbitMQ extension (Azure/azure-functions-rabbitmq-extension,
//! `extension/WebJobs.Extensions.RabbitMQ/`): `queueName`, `connectionStringSetting` (the app
//! setting holding an AMQP URI), `disableCertificateValidation`, and `host.json`'s
//! `extensions.rabbitMQ.prefetchCount` (`Config/RabbitMQOptions.cs`, default 30).
//!
//! What happens to a failed message is the extension's (`Trigger/RabbitMQListener.cs`): once
//! the function's retry policy is spent, the message is published again to its queue with
//! `x-ms-rabbitmq-requeuecount` raised by one and the delivery acknowledged; at the fifth
//! failure it is rejected without requeueing, so the broker dead-letters it to the queue's
//! dead-letter exchange (`x-dead-letter-exchange`) or drops it when the queue has none
//! (diagnostics say to set one).
//!
//! Shoal departs from the extension in three places, each refused with a message rather than
//! accepted without effect: the connection comes only from an app setting (the extension's
//! fallback to `extensions.rabbitMQ.connectionString` would keep the URI's password in
//! `host.json`, which is not masked); certificate validation cannot be turned off; and the
//! deprecated `hostName`, `userName`, `password` and `port` properties are not read.
//!
//! Scaling follows KEDA's RabbitMQ scaler in `QueueLength` mode (messages ready in the queue)
//! with `prefetchCount` as its `value`: one instance is meant to take what it holds at once,
//! as Azure's target scalers use a Storage queue's `batchSize`. A worker holds no more than its
//! own limit allows, so what an instance holds is [`held_at_once`], which both the worker's
//! `basic.qos` and the scheduler's per-instance target are.

mod kinds;
mod payload;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::names::{BindingName, setting_value};

pub use kinds::{OUTPUT, TRIGGER, dead_letter_source, trigger_source};
pub use payload::{Delivery, Properties, payload};

/// The trigger's `type`.
pub const TRIGGER_TYPE: &str = "rabbitMQTrigger";
/// The output's `type`.
pub const OUTPUT_TYPE: &str = "rabbitMQ";

/// The header a failed message's republished copy counts its failures in
/// (`RabbitMQListener.RequeueCountHeaderName`).
pub const REQUEUE_COUNT_HEADER: &str = "x-ms-rabbitmq-requeuecount";

/// The header a requeued copy of a message published without a `MessageId` carries the
/// handler's idempotency key in (`webhook-id`), so its next invocations have the same one.
/// Shoal's own: the extension sets no key.
pub const WEBHOOK_ID_HEADER: &str = "x-shoal-webhook-id";

/// Whether a header is one the broker or Shoal's listener added on a message's way to the
/// dead-letter queue, which a replayed copy starts afresh without: the requeue count, and
/// RabbitMQ's `x-death` with its `x-first-death-*` and `x-last-death-*` summaries.
pub fn is_failure_header(name: &str) -> bool {
    name == REQUEUE_COUNT_HEADER
        || name == "x-death"
        || name.starts_with("x-first-death-")
        || name.starts_with("x-last-death-")
}

/// The failed deliveries a dead-lettered message's requeue count stands for: the count, and
/// the delivery that rejected it.
pub fn failed_deliveries(requeue_count: u32) -> u32 {
    requeue_count.saturating_add(1)
}

/// The failures after which a message is rejected rather than published again
/// (`RabbitMQListener`: `requeueCount >= 5`).
pub const MAX_FAILURES: u32 = 5;

/// The longest queue name AMQP 0-9-1 allows, in bytes (a `shortstr`).
const MAX_QUEUE_NAME: usize = 255;

/// How the body is handed over: `stream` is read as `binary` would be by the extension's value
/// provider; Shoal refuses it on outputs.
pub use crate::binding_kinds::DataType;

/// The name of the `host.json` section, `extensions.rabbitMQ`.
pub const HOST_SECTION: &str = "rabbitMQ";

/// `rabbitMQTrigger`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TriggerBinding {
    pub name: BindingName,
    /// The queue consumed; `%Setting%` references are resolved from the app's settings.
    pub queue_name: String,
    /// The app setting holding the AMQP URI (`amqp://user:password@host:5672/vhost`).
    // Required, but read as optional so that its absence gets the message saying why
    // (`kinds::common`).
    #[serde(default)]
    #[schema(required = true, examples("RabbitMQConnection"))]
    pub connection_string_setting: Option<String>,
    /// Refused when true: Shoal always validates the broker's certificate.
    #[serde(default)]
    pub disable_certificate_validation: bool,
    /// `binary` hands the handler the body in base64; otherwise it is read as UTF-8.
    #[serde(default)]
    pub data_type: Option<DataType>,
    /// Shoal's own: the queue the trigger queue's dead-letter exchange leads to (its
    /// `x-dead-letter-exchange` and `x-dead-letter-routing-key`), which the poison endpoints
    /// list and replay from. The broker decides where rejected messages go; this only names
    /// where to read them. `%Setting%` references are resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dead_letter_queue_name: Option<String>,
}

impl TriggerBinding {
    /// Whether the handler gets the body in base64: `binary`, and `stream`, which the
    /// extension's value provider reads as bytes as it does `binary`.
    pub fn reads_binary(&self) -> bool {
        matches!(self.data_type, Some(DataType::Binary | DataType::Stream))
    }
}

/// `rabbitMQ` (out): publishes the handler's output to a queue through the default exchange,
/// as the extension's `RabbitMQAsyncCollector` does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputBinding {
    pub name: BindingName,
    /// May hold binding expressions (`orders-{region}`), resolved per invocation.
    pub queue_name: String,
    /// The app setting holding the AMQP URI, as on the trigger.
    #[serde(default)]
    #[schema(required = true, examples("RabbitMQConnection"))]
    pub connection_string_setting: Option<String>,
    /// Refused when true: Shoal always validates the broker's certificate.
    #[serde(default)]
    pub disable_certificate_validation: bool,
    #[serde(default)]
    pub data_type: Option<DataType>,
}

/// `host.json` `extensions.rabbitMQ`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Options {
    /// Messages a listener holds unacknowledged at once (AMQP `basic.qos`), 1–65535.
    #[serde(default = "default_prefetch")]
    pub prefetch_count: u16,
    /// Refused when set (see the module's doc); kept to say why.
    #[serde(default, skip_serializing)]
    pub connection_string: Option<String>,
    #[serde(default, skip_serializing)]
    pub queue_name: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disable_certificate_validation: bool,
}

fn default_prefetch() -> u16 {
    30
}

/// How many messages one instance holds unacknowledged at once when the app asks for
/// `prefetch_count` and a worker's listener may hold at most `hold_limit` (what the worker's
/// held-bytes limit holds of its largest messages): the worker's `basic.qos`, and so what the
/// scheduler counts one instance as taking. One function for both, so the scale target never
/// counts on messages a listener would not take. At least 1: a `basic.qos` of 0 is no limit.
pub fn held_at_once(prefetch_count: u16, hold_limit: u16) -> u16 {
    prefetch_count.min(hold_limit).max(1)
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefetch_count: default_prefetch(),
            connection_string: None,
            queue_name: None,
            disable_certificate_validation: false,
        }
    }
}

impl Options {
    /// The options in an app's `extensions.rabbitMQ` section (validated when written; the
    /// defaults if it is absent or cannot be read).
    pub fn of(section: Option<&serde_json::Value>) -> Options {
        section
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

/// What to do with a message whose invocation failed for good, by the failures counted in
/// its [`REQUEUE_COUNT_HEADER`] before this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterFailure {
    /// Publish a copy carrying this count, then acknowledge the delivery.
    Republish(u32),
    /// Reject without requeueing: the queue's dead-letter exchange takes it, if it has one.
    Reject,
}

pub fn after_failure(counted: u32) -> AfterFailure {
    let count = counted.saturating_add(1);
    if count >= MAX_FAILURES {
        AfterFailure::Reject
    } else {
        AfterFailure::Republish(count)
    }
}

/// A queue name with its `%Setting%` references resolved; errors name settings, never values.
pub fn resolve_queue_name(
    written: &str,
    settings: &BTreeMap<String, String>,
) -> Result<String, String> {
    let mut resolved = String::with_capacity(written.len());
    let mut rest = written;
    while let Some(start) = rest.find('%') {
        resolved.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(end) = after.find('%') else {
            return Err(format!("{written:?} has a % with no closing %"));
        };
        resolved.push_str(setting_value(settings, &after[..end])?);
        rest = &after[end + 1..];
    }
    resolved.push_str(rest);
    check_queue_name(&resolved).map_err(|e| {
        if written.contains('%') {
            format!("{written} resolves to a name that {e}")
        } else {
            e
        }
    })?;
    Ok(resolved)
}

/// Bytes as text when they are UTF-8, else in base64 (header values, for the handler's JSON).
pub fn text_or_base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// The bytes an output message is published as: its UTF-8, or for `dataType: binary` the
/// base64 the handler wrote, decoded.
pub fn output_body(message: &str, binary: bool) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    if binary {
        base64::engine::general_purpose::STANDARD
            .decode(message)
            .map_err(|_| "a binary rabbitMQ output's value must be base64".to_owned())
    } else {
        Ok(message.as_bytes().to_vec())
    }
}

/// What AMQP 0-9-1 allows a queue name to be: 1–255 bytes of UTF-8 with no control character.
pub fn check_queue_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > MAX_QUEUE_NAME {
        return Err(format!(
            "is {} bytes long; RabbitMQ allows at most {MAX_QUEUE_NAME}",
            name.len()
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    Ok(())
}

/// The AMQP URI in the app setting `setting`: `amqp://` or `amqps://` with a host. Errors name
/// the setting, never its value.
pub fn connection_uri(
    setting: Option<&str>,
    settings: &BTreeMap<String, String>,
) -> Result<String, String> {
    let Some(setting) = setting.filter(|s| !s.is_empty()) else {
        return Err(
            "connectionStringSetting is required: name the app setting holding the AMQP URI".into(),
        );
    };
    let uri = setting_value(settings, setting)?;
    let parsed = url::Url::parse(uri)
        .map_err(|e| format!("app setting {setting} is not an AMQP URI: {e}"))?;
    if !matches!(parsed.scheme(), "amqp" | "amqps") {
        return Err(format!(
            "app setting {setting} must be an amqp:// or amqps:// URI, not {}://",
            parsed.scheme()
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("app setting {setting} names no host"));
    }
    Ok(uri.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_holds_the_prefetch_count_or_the_workers_limit_whichever_is_smaller() {
        // (case, prefetchCount, the worker's hold limit, held at once)
        let cases = [
            ("default prefetch under the default limit", 30, 32, 30),
            ("prefetch at the limit", 32, 32, 32),
            ("prefetch above the default limit", 250, 32, 32),
            ("largest prefetch", u16::MAX, 32, 32),
            ("a worker with room for more", 250, 512, 250),
            ("a limit of one message", 250, 1, 1),
            ("prefetch of one", 1, 32, 1),
            ("no limit at all", u16::MAX, u16::MAX, u16::MAX),
            ("zero is never held (basic.qos 0 means no limit)", 0, 0, 1),
            ("zero prefetch", 0, 32, 1),
            ("zero limit", 30, 0, 1),
        ];
        for (name, prefetch, limit, want) in cases {
            assert_eq!(held_at_once(prefetch, limit), want, "{name}");
        }
    }
}
