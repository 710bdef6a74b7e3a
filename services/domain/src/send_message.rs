//! A test message to send to a function's trigger (`POST …/functions/{f}/send`, and `shoal
//! send`), checked without I/O: the body in one of three forms,
//! the options each trigger kind can carry, and each kind's real message-size limit.

use std::collections::BTreeMap;

use crate::validation::FieldError;
use base64::Engine as _;
use serde_json::{Map, Value};

/// Azure Storage queues take messages of up to 64 KiB, counted on the text as stored (after
/// base64 when the app's `messageEncoding` is `base64`, so about 48 KiB of body then).
pub const STORAGE_QUEUE_MAX_BYTES: usize = 64 * 1024;
/// Service Bus Standard takes messages of up to 256 KiB, application properties included
/// (Premium takes more; a test message keeps to what every tier takes). Counted here on the
/// body, the session id and the properties' names and values; the broker's own headers are
/// small and it refuses what is still too large (a 502 naming its answer).
pub const SERVICE_BUS_MAX_BYTES: usize = 256 * 1024;
/// Kafka's default `message.max.bytes` and Event Hubs' event limit (Standard): 1 MiB for the
/// key, value and headers together. The API's request limit (1 MiB by default) usually
/// refuses such a body first, with 413.
pub const STREAM_MAX_BYTES: usize = 1024 * 1024;
/// What Shoal's workers take of a RabbitMQ message by default (their `--max-message-bytes`):
/// a test message keeps to it, headers included.
pub const AMQP_MAX_BYTES: usize = 1024 * 1024;
/// Most application properties or headers one message carries.
pub const MAX_PROPERTIES: usize = 64;
/// Longest session id Service Bus takes.
const MAX_SESSION_ID_CHARS: usize = 128;

const FIELDS: &str = "body, bodyBase64, sessionId, key, properties";

/// How the body was given: it decides the Service Bus content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyForm {
    /// `body` as a JSON string: its text, as is.
    Text,
    /// `body` as any other JSON value: its compact serialization.
    Json,
    /// `bodyBase64`: the decoded bytes.
    Binary,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    pub body: Vec<u8>,
    pub form: BodyForm,
    pub session_id: Option<String>,
    pub key: Option<String>,
    pub properties: BTreeMap<String, String>,
}

/// What the function's trigger is, as far as what a message may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// A Storage queue; `base64` when the app's `messageEncoding` is base64.
    StorageQueue { base64: bool },
    /// A Service Bus queue or topic; `sessions` when the trigger reads sessions.
    ServiceBus { sessions: bool },
    /// A Kafka topic or an event hub.
    Stream,
    /// A RabbitMQ queue: `properties` become the message's headers.
    Amqp,
}

/// Parses `{body | bodyBase64, sessionId?, key?, properties?}`; every bad field is reported
/// with its path.
pub fn parse(document: &Value) -> Result<SendRequest, Vec<FieldError>> {
    let Value::Object(fields) = document else {
        return Err(vec![problem(
            "",
            format!("expected an object with {FIELDS}"),
        )]);
    };
    let mut problems = Vec::new();
    for key in fields.keys() {
        if !matches!(
            key.as_str(),
            "body" | "bodyBase64" | "sessionId" | "key" | "properties"
        ) {
            problems.push(problem(
                key,
                format!("is not a field of a send request ({FIELDS})"),
            ));
        }
    }
    let present = |name: &str| fields.get(name).filter(|v| !v.is_null());
    let body = match (present("body"), present("bodyBase64")) {
        (Some(_), Some(_)) => {
            problems.push(problem("bodyBase64", "give body or bodyBase64, not both"));
            None
        }
        (None, None) => {
            problems.push(problem(
                "body",
                "is required (text or any JSON value), or bodyBase64 for bytes",
            ));
            None
        }
        (Some(Value::String(text)), None) => Some((text.clone().into_bytes(), BodyForm::Text)),
        (Some(json), None) => Some((json.to_string().into_bytes(), BodyForm::Json)),
        (None, Some(Value::String(encoded))) => {
            match base64::engine::general_purpose::STANDARD.decode(encoded.trim()) {
                Ok(bytes) => Some((bytes, BodyForm::Binary)),
                Err(_) => {
                    problems.push(problem("bodyBase64", "is not valid base64"));
                    None
                }
            }
        }
        (None, Some(_)) => {
            problems.push(problem("bodyBase64", "must be a base64 string"));
            None
        }
    };
    let text = |name: &str, problems: &mut Vec<FieldError>| match present(name) {
        None => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => {
            problems.push(problem(name, "must be a non-empty string"));
            None
        }
    };
    let session_id = text("sessionId", &mut problems);
    if session_id
        .as_ref()
        .is_some_and(|s| s.chars().count() > MAX_SESSION_ID_CHARS)
    {
        problems.push(problem(
            "sessionId",
            format!("must be at most {MAX_SESSION_ID_CHARS} characters"),
        ));
    }
    let key = text("key", &mut problems);
    let properties = match present("properties") {
        None => BTreeMap::new(),
        Some(Value::Object(map)) => properties(map, &mut problems),
        Some(_) => {
            problems.push(problem(
                "properties",
                "must be an object of names to string values",
            ));
            BTreeMap::new()
        }
    };
    match body {
        Some((body, form)) if problems.is_empty() => Ok(SendRequest {
            body,
            form,
            session_id,
            key,
            properties,
        }),
        _ => Err(problems),
    }
}

fn properties(
    map: &Map<String, Value>,
    problems: &mut Vec<FieldError>,
) -> BTreeMap<String, String> {
    if map.len() > MAX_PROPERTIES {
        problems.push(problem(
            "properties",
            format!("at most {MAX_PROPERTIES} properties"),
        ));
    }
    let mut out = BTreeMap::new();
    for (name, value) in map {
        let path = format!("properties.{name}");
        if name.is_empty() {
            problems.push(problem("properties", "a property name must not be empty"));
            continue;
        }
        match value {
            Value::String(s) => {
                out.insert(name.clone(), s.clone());
            }
            // Numbers and booleans as the text a header or property would show.
            Value::Number(_) | Value::Bool(_) => {
                out.insert(name.clone(), value.to_string());
            }
            _ => problems.push(problem(&path, "must be a string, number or boolean")),
        }
    }
    out
}

impl SendRequest {
    /// The request against what the trigger's source takes: options another kind of trigger
    /// would use are refused by name, and the message must fit the source's limit. Returns the
    /// Storage queue's message text (encoded as the app's `messageEncoding` says) where that
    /// is the carrier.
    pub fn check(&self, carrier: Carrier) -> Result<Option<String>, Vec<FieldError>> {
        let mut problems = Vec::new();
        let not_here = |field: &str, carries: &str| {
            problem(field, format!("only a message for {carries} carries it"))
        };
        let stream = "a kafkaTrigger or eventHubTrigger";
        let service_bus = "a serviceBusTrigger";
        let mut queue_text = None;
        let size = match carrier {
            Carrier::StorageQueue { base64 } => {
                for (field, set, carries) in [
                    ("sessionId", self.session_id.is_some(), service_bus),
                    ("key", self.key.is_some(), stream),
                    (
                        "properties",
                        !self.properties.is_empty(),
                        "a serviceBusTrigger, kafkaTrigger or eventHubTrigger",
                    ),
                ] {
                    if set {
                        problems.push(not_here(field, carries));
                    }
                }
                let text = if base64 {
                    Some(base64::engine::general_purpose::STANDARD.encode(&self.body))
                } else {
                    match String::from_utf8(self.body.clone()) {
                        Ok(text) => Some(text),
                        Err(_) => {
                            problems.push(problem(
                                "bodyBase64",
                                "the app's messageEncoding is none, so a queue message is text: bytes that are not UTF-8 cannot be sent",
                            ));
                            None
                        }
                    }
                };
                let size = text.as_ref().map_or(0, String::len);
                queue_text = text;
                (size, STORAGE_QUEUE_MAX_BYTES, "a Storage queue message")
            }
            Carrier::ServiceBus { sessions } => {
                if self.key.is_some() {
                    problems.push(not_here("key", stream));
                }
                if sessions && self.session_id.is_none() {
                    problems.push(problem(
                        "sessionId",
                        "is required: the trigger reads a session-enabled entity (isSessionsEnabled)",
                    ));
                }
                let size = self.body.len()
                    + self.session_id.as_ref().map_or(0, String::len)
                    + self.properties_len();
                (
                    size,
                    SERVICE_BUS_MAX_BYTES,
                    "a Service Bus message (Standard tier)",
                )
            }
            Carrier::Stream => {
                if self.session_id.is_some() {
                    problems.push(not_here("sessionId", service_bus));
                }
                let size = self.body.len()
                    + self.key.as_ref().map_or(0, String::len)
                    + self.properties_len();
                (size, STREAM_MAX_BYTES, "a Kafka record or event")
            }
            Carrier::Amqp => {
                for (field, set, carries) in [
                    ("sessionId", self.session_id.is_some(), service_bus),
                    ("key", self.key.is_some(), stream),
                ] {
                    if set {
                        problems.push(not_here(field, carries));
                    }
                }
                let size = self.body.len() + self.properties_len();
                (
                    size,
                    AMQP_MAX_BYTES,
                    "a RabbitMQ message (what Shoal's workers take by default)",
                )
            }
        };
        let (size, limit, what) = size;
        if size > limit {
            let field = match self.form {
                BodyForm::Binary => "bodyBase64",
                BodyForm::Text | BodyForm::Json => "body",
            };
            problems.push(problem(
                field,
                format!(
                    "is too large: {what} takes at most {limit} bytes ({} KiB) and this one is {size} bytes{}",
                    limit / 1024,
                    match carrier {
                        Carrier::StorageQueue { base64: true } =>
                            " as stored (base64, since the app's messageEncoding is base64)",
                        Carrier::StorageQueue { base64: false } => "",
                        Carrier::Amqp => " with its headers",
                        _ => " with its key, session id and properties",
                    }
                ),
            ));
        }
        if problems.is_empty() {
            Ok(queue_text)
        } else {
            Err(problems)
        }
    }

    fn properties_len(&self) -> usize {
        self.properties.iter().map(|(k, v)| k.len() + v.len()).sum()
    }
}

fn problem(path: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        path: path.to_owned(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(result: Result<SendRequest, Vec<FieldError>>) -> Vec<String> {
        result.unwrap_err().into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn a_body_is_text_json_or_base64_bytes() {
        let cases = [
            (json!({"body": "hello"}), b"hello".to_vec(), BodyForm::Text),
            (
                json!({"body": {"id": 1}}),
                br#"{"id":1}"#.to_vec(),
                BodyForm::Json,
            ),
            (json!({"body": 42}), b"42".to_vec(), BodyForm::Json),
            (
                json!({"bodyBase64": "AAH/"}),
                vec![0, 1, 255],
                BodyForm::Binary,
            ),
        ];
        for (document, bytes, form) in cases {
            let request = parse(&document).unwrap();
            assert_eq!((request.body, request.form), (bytes, form), "{document}");
        }
    }

    #[test]
    fn bad_fields_are_named_by_path() {
        let cases = [
            (json!([]), vec![""]),
            (json!({}), vec!["body"]),
            (
                json!({"body": "a", "bodyBase64": "YQ=="}),
                vec!["bodyBase64"],
            ),
            (json!({"bodyBase64": "not base64!"}), vec!["bodyBase64"]),
            (json!({"body": "a", "colour": "red"}), vec!["colour"]),
            (json!({"body": "a", "sessionId": ""}), vec!["sessionId"]),
            (
                json!({"body": "a", "sessionId": "s".repeat(129)}),
                vec!["sessionId"],
            ),
            (json!({"body": "a", "key": 7}), vec!["key"]),
            (json!({"body": "a", "properties": []}), vec!["properties"]),
            (
                json!({"body": "a", "properties": {"x": {"y": 1}}}),
                vec!["properties.x"],
            ),
        ];
        for (document, want) in cases {
            assert_eq!(paths(parse(&document)), want, "{document}");
        }
    }

    #[test]
    fn options_of_another_trigger_kind_are_refused_by_name() {
        let request =
            parse(&json!({"body": "a", "sessionId": "s", "key": "k", "properties": {"p": 1}}))
                .unwrap();
        let refused = |carrier| -> Vec<String> {
            request
                .check(carrier)
                .unwrap_err()
                .into_iter()
                .map(|e| e.path)
                .collect()
        };
        assert_eq!(
            refused(Carrier::StorageQueue { base64: true }),
            ["sessionId", "key", "properties"]
        );
        assert_eq!(refused(Carrier::ServiceBus { sessions: false }), ["key"]);
        assert_eq!(refused(Carrier::Stream), ["sessionId"]);
    }

    #[test]
    fn a_session_enabled_trigger_needs_a_session_id() {
        let request = parse(&json!({"body": "a"})).unwrap();
        let errors = request
            .check(Carrier::ServiceBus { sessions: true })
            .unwrap_err();
        assert_eq!(errors[0].path, "sessionId");
        assert!(
            request
                .check(Carrier::ServiceBus { sessions: false })
                .is_ok()
        );
    }

    #[test]
    fn each_carrier_keeps_to_its_size_limit() {
        // (body bytes, carrier, fits)
        let base64 = Carrier::StorageQueue { base64: true };
        let plain = Carrier::StorageQueue { base64: false };
        let sb = Carrier::ServiceBus { sessions: false };
        let cases = [
            (48 * 1024, base64, true),
            (48 * 1024 + 1, base64, false),
            (64 * 1024, plain, true),
            (64 * 1024 + 1, plain, false),
            (256 * 1024, sb, true),
            (256 * 1024 + 1, sb, false),
            (1024 * 1024, Carrier::Stream, true),
            (1024 * 1024 + 1, Carrier::Stream, false),
        ];
        for (size, carrier, fits) in cases {
            let request = parse(&json!({"body": "x".repeat(size)})).unwrap();
            let checked = request.check(carrier);
            assert_eq!(checked.is_ok(), fits, "{size} bytes to {carrier:?}");
            if let Err(errors) = checked {
                assert_eq!(errors[0].path, "body");
                assert!(
                    errors[0].message.contains("too large"),
                    "{}",
                    errors[0].message
                );
            }
        }
    }

    #[test]
    fn a_queue_message_is_encoded_as_the_app_reads_it() {
        let request = parse(&json!({"body": "hi"})).unwrap();
        assert_eq!(
            request
                .check(Carrier::StorageQueue { base64: true })
                .unwrap(),
            Some("aGk=".to_owned())
        );
        assert_eq!(
            request
                .check(Carrier::StorageQueue { base64: false })
                .unwrap(),
            Some("hi".to_owned())
        );
        let bytes = parse(&json!({"bodyBase64": "/w=="})).unwrap();
        let errors = bytes
            .check(Carrier::StorageQueue { base64: false })
            .unwrap_err();
        assert_eq!(errors[0].path, "bodyBase64");
    }
}
