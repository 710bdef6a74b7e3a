//! Small helpers for AMQP values, errors and request/response messages.

use fe2o3_amqp::types::definitions::{self, ErrorCondition};
use fe2o3_amqp::types::messaging::{AmqpValue, ApplicationProperties, Body, Message, Properties};
use fe2o3_amqp::types::primitives::{OrderedMap, SimpleValue, Symbol, Value};

/// An AMQP error with a Service Bus condition (`com.microsoft:...`) or a standard one.
pub fn error(condition: &str, description: impl Into<String>) -> definitions::Error {
    definitions::Error {
        condition: ErrorCondition::Custom(Symbol::from(condition)),
        description: Some(description.into()),
        info: None,
    }
}

/// Looks a key up in an AMQP map body, by string or symbol key.
pub fn get<'a>(map: &'a OrderedMap<Value, Value>, key: &str) -> Option<&'a Value> {
    map.get(&Value::String(key.to_owned()))
        .or_else(|| map.get(&Value::Symbol(Symbol::from(key))))
}

/// The body of a request as a map (`AmqpValue(map)`).
pub fn body_map(message: &Message<Body<Value>>) -> Option<&OrderedMap<Value, Value>> {
    match &message.body {
        Body::Value(AmqpValue(Value::Map(map))) => Some(map),
        _ => None,
    }
}

/// An application property as a string (accepting symbols too).
pub fn app_property(message: &Message<Body<Value>>, key: &str) -> Option<String> {
    let properties = message.application_properties.as_ref()?;
    match properties.0.get(key)? {
        SimpleValue::String(s) => Some(s.clone()),
        SimpleValue::Symbol(s) => Some(s.0.clone()),
        _ => None,
    }
}

/// Values of an array or list.
pub fn items(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(array) => array.0.iter().collect(),
        Value::List(list) => list.iter().collect(),
        other => vec![other],
    }
}

pub fn as_i64(value: &Value) -> Option<i64> {
    match value {
        Value::Long(v) => Some(*v),
        Value::Int(v) => Some(i64::from(*v)),
        Value::Uint(v) => Some(i64::from(*v)),
        Value::Ulong(v) => i64::try_from(*v).ok(),
        Value::Short(v) => Some(i64::from(*v)),
        Value::Ushort(v) => Some(i64::from(*v)),
        Value::Byte(v) => Some(i64::from(*v)),
        Value::Ubyte(v) => Some(i64::from(*v)),
        _ => None,
    }
}

pub fn as_str(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        Value::Symbol(s) => Some(&s.0),
        _ => None,
    }
}

pub fn as_uuid(value: &Value) -> Option<uuid::Uuid> {
    match value {
        Value::Uuid(u) => Some(uuid::Uuid::from_bytes(*u.as_inner())),
        Value::Binary(b) if b.len() == 16 => uuid::Uuid::from_slice_le(b).ok(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

pub fn uuid_value(token: uuid::Uuid) -> Value {
    Value::Uuid(fe2o3_amqp::types::primitives::Uuid::from(*token.as_bytes()))
}

/// A response on a request/response node: the status under `code_key`/`description_key`
/// (`statusCode` on `$management`, `status-code` on `$cbs`), correlated with the request's
/// message id, and an optional error condition (`errorCondition`, which the Python SDK's
/// `mgmt_handlers.py` reads).
pub fn response(
    request: &Message<Body<Value>>,
    keys: (&str, &str),
    status: i32,
    description: &str,
    condition: Option<&str>,
    body: Value,
) -> Message<Body<Value>> {
    let mut properties = ApplicationProperties::default();
    properties
        .0
        .insert(keys.0.to_owned(), SimpleValue::Int(status));
    properties.0.insert(
        keys.1.to_owned(),
        SimpleValue::String(description.to_owned()),
    );
    if let Some(condition) = condition {
        properties.0.insert(
            "errorCondition".to_owned(),
            SimpleValue::Symbol(Symbol::from(condition)),
        );
    }
    let correlation_id = request
        .properties
        .as_ref()
        .and_then(|p| p.message_id.clone());
    Message {
        header: None,
        delivery_annotations: None,
        message_annotations: None,
        properties: Some(Properties {
            correlation_id,
            ..Properties::default()
        }),
        application_properties: Some(properties),
        body: Body::Value(AmqpValue(body)),
        footer: None,
    }
}

/// A map body from string keys.
pub fn map(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::String(k.to_owned()), v))
            .collect(),
    )
}
