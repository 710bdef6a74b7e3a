//! The custom-handler request for one RabbitMQ delivery: the body in `Data.<binding>` (UTF-8
//! text, as the extension's `BasicDeliverEventArgsValueProvider.ToInvokeString` reads it, or
//! base64 for `dataType: binary`), and in `Metadata` the binding data of
//! `RabbitMQTriggerBinding.CreateBindingData` (`ConsumerTag`, `DeliveryTag`, `Redelivered`,
//! `Exchange`, `RoutingKey`, `BasicProperties`) beside `sys`.

use base64::Engine as _;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

/// A message's AMQP basic properties, as far as they were set, named as the .NET client's
/// `IBasicProperties` names them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Properties {
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    /// Headers as JSON (AMQP field tables have no other common form).
    pub headers: Map<String, Value>,
    pub delivery_mode: Option<u8>,
    pub priority: Option<u8>,
    pub correlation_id: Option<String>,
    pub reply_to: Option<String>,
    pub expiration: Option<String>,
    pub message_id: Option<String>,
    /// Seconds since the epoch, as AMQP carries it.
    pub timestamp: Option<u64>,
    pub kind: Option<String>,
    pub user_id: Option<String>,
    pub app_id: Option<String>,
}

/// One delivery, as the trigger hands it to the handler.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery<'a> {
    /// The trigger binding's name (`Data.<name>`).
    pub binding: &'a str,
    pub function: &'a str,
    pub body: &'a [u8],
    pub binary: bool,
    pub consumer_tag: &'a str,
    pub delivery_tag: u64,
    pub redelivered: bool,
    pub exchange: &'a str,
    pub routing_key: &'a str,
    pub properties: &'a Properties,
    pub now: DateTime<Utc>,
    /// `sys.RandGuid`, supplied by the caller to keep this pure.
    pub rand_guid: &'a str,
}

/// The request body for a RabbitMQ-triggered invocation.
pub fn payload(delivery: &Delivery<'_>) -> Value {
    let value = if delivery.binary {
        base64::engine::general_purpose::STANDARD.encode(delivery.body)
    } else {
        String::from_utf8_lossy(delivery.body).into_owned()
    };
    let mut data = Map::new();
    data.insert(delivery.binding.to_owned(), Value::String(value));
    json!({
        "Data": data,
        "Metadata": {
            "ConsumerTag": delivery.consumer_tag,
            "DeliveryTag": delivery.delivery_tag,
            "Redelivered": delivery.redelivered,
            "Exchange": delivery.exchange,
            "RoutingKey": delivery.routing_key,
            "BasicProperties": basic_properties(delivery.properties),
            "sys": {
                "MethodName": delivery.function,
                "UtcNow": delivery.now.to_rfc3339_opts(SecondsFormat::AutoSi, true),
                "RandGuid": delivery.rand_guid,
            }
        }
    })
}

fn basic_properties(p: &Properties) -> Value {
    let mut out = Map::new();
    let mut text = |name: &str, value: &Option<String>| {
        if let Some(v) = value {
            out.insert(name.to_owned(), Value::String(v.clone()));
        }
    };
    text("ContentType", &p.content_type);
    text("ContentEncoding", &p.content_encoding);
    text("CorrelationId", &p.correlation_id);
    text("ReplyTo", &p.reply_to);
    text("Expiration", &p.expiration);
    text("MessageId", &p.message_id);
    text("Type", &p.kind);
    text("UserId", &p.user_id);
    text("AppId", &p.app_id);
    if let Some(mode) = p.delivery_mode {
        out.insert("DeliveryMode".into(), json!(mode));
    }
    if let Some(priority) = p.priority {
        out.insert("Priority".into(), json!(priority));
    }
    if let Some(seconds) = p.timestamp {
        let at = i64::try_from(seconds)
            .ok()
            .and_then(|s| DateTime::<Utc>::from_timestamp(s, 0));
        out.insert(
            "Timestamp".into(),
            at.map_or(json!(seconds), |t| {
                json!(t.to_rfc3339_opts(SecondsFormat::Secs, true))
            }),
        );
    }
    if !p.headers.is_empty() {
        out.insert("Headers".into(), Value::Object(p.headers.clone()));
    }
    Value::Object(out)
}
