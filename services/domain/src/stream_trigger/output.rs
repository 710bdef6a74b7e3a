//! The records a `kafka` or `eventHub` output binding's value stands for, like the queue and
//! Service Bus outputs: a string is one record as is, an array one record per element, `null`
//! writes nothing, any other JSON value is one record with its JSON text as the value.
//!
//! A `kafka` output also takes the form an out-of-process function writes to set a key and
//! headers (the Kafka extension's `KafkaEventData` as JSON, e.g. the JavaScript sample
//! `{"Value": "one", "Key": "k", "Headers": [{"Key": "test", "Value": "javascript"}]}`): an
//! object — or a string holding one — with a `Value` and no key beyond `KafkaEventData`'s own
//! (`Offset`, `Partition`, `Topic`, `Timestamp`, `LeaderEpoch` and `IsPartitionEOF`, which the
//! broker assigns and Shoal ignores, as the extension does). Header values are text.

use serde_json::{Map, Value};

/// One record to produce.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamRecord {
    pub key: Option<Vec<u8>>,
    pub value: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
}

const EVENT_DATA_KEYS: [&str; 9] = [
    "Value",
    "Key",
    "Headers",
    "Offset",
    "Partition",
    "Topic",
    "Timestamp",
    "LeaderEpoch",
    "IsPartitionEOF",
];

/// The records `value` stands for; `event_data_form` reads the `KafkaEventData` form (`kafka`
/// outputs only).
pub fn stream_output_records(value: &Value, event_data_form: bool) -> Vec<StreamRecord> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items
            .iter()
            .filter(|item| !item.is_null())
            .map(|item| record(item, event_data_form))
            .collect(),
        one => vec![record(one, event_data_form)],
    }
}

fn record(value: &Value, event_data_form: bool) -> StreamRecord {
    if event_data_form {
        let form = match value {
            Value::Object(object) => from_event_data(object),
            Value::String(text) if text.trim_start().starts_with('{') => {
                match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(object)) => from_event_data(&object),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(record) = form {
            return record;
        }
    }
    StreamRecord {
        key: None,
        value: bytes(value),
        headers: Vec::new(),
    }
}

fn from_event_data(object: &Map<String, Value>) -> Option<StreamRecord> {
    if !object.contains_key("Value")
        || object
            .keys()
            .any(|k| !EVENT_DATA_KEYS.contains(&k.as_str()))
    {
        return None;
    }
    let headers = match object.get("Headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(headers)) => headers
            .iter()
            .map(|h| {
                let key = h.get("Key").and_then(Value::as_str)?;
                let value = h.get("Value").map(bytes).unwrap_or_default();
                Some((key.to_owned(), value))
            })
            .collect::<Option<Vec<_>>>()?,
        Some(_) => return None,
    };
    Some(StreamRecord {
        key: object.get("Key").filter(|k| !k.is_null()).map(bytes),
        value: object.get("Value").map(bytes).unwrap_or_default(),
        headers,
    })
}

/// A string's text, or any other value's JSON.
fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => text.clone().into_bytes(),
        Value::Null => Vec::new(),
        other => other.to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn plain(value: &str) -> StreamRecord {
        StreamRecord {
            value: value.as_bytes().to_vec(),
            ..StreamRecord::default()
        }
    }

    #[test]
    fn values_become_records_as_the_other_outputs_do() {
        let cases = [
            (json!(null), vec![]),
            (json!("text"), vec![plain("text")]),
            (
                json!(["a", null, {"n": 1}]),
                vec![plain("a"), plain(r#"{"n":1}"#)],
            ),
            (json!(42), vec![plain("42")]),
        ];
        for (value, expected) in cases {
            assert_eq!(stream_output_records(&value, true), expected, "{value}");
        }
    }

    #[test]
    fn the_kafka_event_data_form_sets_key_and_headers() {
        let form = json!({"Value": "one", "Key": "k", "Offset": 3,
            "Headers": [{"Key": "test", "Value": "javascript"}]});
        let expected = StreamRecord {
            key: Some(b"k".to_vec()),
            value: b"one".to_vec(),
            headers: vec![("test".into(), b"javascript".to_vec())],
        };
        assert_eq!(
            stream_output_records(&form, true),
            std::slice::from_ref(&expected)
        );
        // As a string holding the JSON, the way a function bound to a string writes it.
        assert_eq!(
            stream_output_records(&json!(form.to_string()), true),
            [expected]
        );
        // An eventHub output sends the object whole.
        assert_eq!(
            stream_output_records(&form, false),
            [plain(&form.to_string())]
        );
        // Another key: an ordinary JSON value, sent whole.
        let other = json!({"Value": 1, "Customer": "c"});
        assert_eq!(
            stream_output_records(&other, true),
            [plain(&other.to_string())]
        );
    }
}
