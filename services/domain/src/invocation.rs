//! The custom-handler protocol between a worker and an app's handler, as Azure Functions
//! custom handlers define it: the request body `{"Data": {...}, "Metadata": {...}}` and the
//! response `{"Outputs": {...}, "Logs": [...], "ReturnValue": ...}`. The HTTP trigger's
//! shape of both is in [`http`].

pub mod forward;
pub mod http;
mod retry_context;

pub use retry_context::RetryContext;

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

/// A queue message as the trigger hands it to the handler.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueDelivery<'a> {
    /// The trigger binding's name (`Data.<name>`).
    pub binding: &'a str,
    pub function: &'a str,
    /// What the handler receives for the message: its text, or its bytes in base64 (see
    /// [`crate::queue_trigger::trigger_value`]).
    pub text: &'a str,
    pub id: &'a str,
    pub pop_receipt: &'a str,
    pub dequeue_count: u32,
    pub insertion_time: DateTime<Utc>,
    pub expiration_time: DateTime<Utc>,
    pub next_visible_time: DateTime<Utc>,
    pub now: DateTime<Utc>,
    /// `sys.RandGuid`, supplied by the caller to keep this pure.
    pub rand_guid: &'a str,
}

/// The request body for a queue-triggered invocation, shaped like Azure's documented example:
/// the message is a string in `Data`, the metadata fields sit beside `sys` in `Metadata`.
pub fn queue_payload(delivery: &QueueDelivery<'_>) -> Value {
    let mut data = Map::new();
    data.insert(
        delivery.binding.to_owned(),
        Value::String(delivery.text.to_owned()),
    );
    json!({
        "Data": data,
        "Metadata": {
            "QueueTrigger": delivery.text,
            "DequeueCount": delivery.dequeue_count,
            "ExpirationTime": azure_time(delivery.expiration_time),
            "Id": delivery.id,
            "InsertionTime": azure_time(delivery.insertion_time),
            "NextVisibleTime": azure_time(delivery.next_visible_time),
            "PopReceipt": delivery.pop_receipt,
            "sys": {
                "MethodName": delivery.function,
                "UtcNow": delivery.now.to_rfc3339_opts(SecondsFormat::AutoSi, true),
                "RandGuid": delivery.rand_guid,
            }
        }
    })
}

/// `2019-10-16T17:58:31+00:00`, the form Azure's examples show for queue metadata.
fn azure_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// A handler's successful response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandlerResponse {
    /// Output binding values by binding name.
    pub outputs: BTreeMap<String, Value>,
    pub logs: Vec<String>,
    pub return_value: Option<Value>,
    /// Names in `Outputs` that are no output binding of the function, in the response's order.
    /// Their values are dropped, as Azure's host drops them; the caller reports the names.
    pub undeclared_outputs: Vec<String>,
    /// `Settlement`: what a Service Bus-triggered handler asks done with its message(s), read
    /// and validated by the trigger (see [`crate::service_bus_trigger::settlement`]).
    pub settlement: Option<Value>,
    /// `batchItemFailures`: the events of a stream batch the handler says failed, read and
    /// validated by the trigger (see [`crate::stream_trigger::batch_outcome`]).
    pub batch_item_failures: Option<Value>,
    /// `retryAfter`: the handler did not do the work and asks for this message to be tried
    /// again after this long (see [`crate::durable_retry`]). The attempt counts as failed.
    pub retry_after: Option<std::time::Duration>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    #[error("the response body is not JSON: {0}")]
    NotJson(String),
    #[error("the response body must be a JSON object")]
    NotObject,
    #[error("Outputs must be an object of output binding values")]
    Outputs,
    #[error("Logs must be an array of strings")]
    Logs,
    #[error("{0}")]
    RetryAfter(String),
}

impl HandlerResponse {
    /// Parses a 2xx response body. An empty body means "nothing to return" (a handler that
    /// only acknowledges); anything else must have the documented shape, because a handler
    /// that answers garbage has most likely not done its work. `outputs` lists the function's
    /// output bindings. A value for any other name is not an error: Azure's host builds the
    /// invocation result by walking the function's declared output bindings and looking each
    /// up in `Outputs` (azure-functions-host,
    /// `src/WebJobs.Script/Workers/Http/HttpScriptInvocationResultExtensions.cs`,
    /// `ToScriptInvocationResult`), so anything else is never read. Failing the invocation
    /// instead would run work the handler already did again and end the message in poison.
    /// The names are kept in [`HandlerResponse::undeclared_outputs`] so they can be reported.
    pub fn parse(body: &[u8], outputs: &[&str]) -> Result<HandlerResponse, ResponseError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(HandlerResponse::default());
        }
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            // serde's message names line and column only, never the body.
            ResponseError::NotJson(e.to_string())
        })?;
        let Value::Object(mut map) = value else {
            return Err(ResponseError::NotObject);
        };
        let mut response = HandlerResponse {
            return_value: map.remove("ReturnValue").filter(|v| !v.is_null()),
            settlement: map.remove("Settlement").filter(|v| !v.is_null()),
            batch_item_failures: map.remove("batchItemFailures").filter(|v| !v.is_null()),
            ..HandlerResponse::default()
        };
        response.retry_after = match map.remove("retryAfter") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                crate::durable_retry::parse_retry_after_field(&value)
                    .map_err(ResponseError::RetryAfter)?,
            ),
        };
        match map.remove("Outputs") {
            None | Some(Value::Null) => {}
            Some(Value::Object(values)) => {
                for (name, value) in values {
                    match outputs.iter().find(|o| o.eq_ignore_ascii_case(&name)) {
                        Some(known) => {
                            response.outputs.insert((*known).to_owned(), value);
                        }
                        None => response.undeclared_outputs.push(name),
                    }
                }
            }
            Some(_) => return Err(ResponseError::Outputs),
        }
        match map.remove("Logs") {
            None | Some(Value::Null) => {}
            Some(Value::Array(lines)) => {
                for line in lines {
                    match line {
                        Value::String(s) => response.logs.push(s),
                        _ => return Err(ResponseError::Logs),
                    }
                }
            }
            Some(_) => return Err(ResponseError::Logs),
        }
        Ok(response)
    }
}

/// The messages a queue output binding's value stands for: a string as is, an array as one
/// message per element, any other JSON value serialized. `null` writes nothing.
pub fn queue_output_messages(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .filter(|v| !v.is_null())
            .map(message_text)
            .collect(),
        other => vec![message_text(other)],
    }
}

fn message_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
