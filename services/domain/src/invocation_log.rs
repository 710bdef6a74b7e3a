//! What the invocation log keeps of a handler attempt's request and answer, whatever the
//! trigger: the source's message id and delivery count, read from the custom-handler body's
//! `Metadata` (every trigger already names them there), a bounded preview of the trigger's
//! data, and the handler's `Logs` cut to a byte budget.
//!
//! Bounded so that keeping every invocation (successes too) costs a known amount per attempt:
//! [`MAX_PREVIEW_BYTES`] of payload and [`MAX_LOG_BYTES`] of logs. Nothing of `Metadata` is
//! kept beyond the id and count: it carries `PopReceipt` and `LockToken`, which let whoever
//! holds them settle the message; an HTTP request's `Headers` (its bearer token) are dropped
//! from the preview.

use serde_json::Value;

/// How much of the trigger's data is kept, in bytes of its text.
pub const MAX_PREVIEW_BYTES: usize = 4096;
/// How much of the handler's `Logs` an attempt keeps, in bytes of text over all its lines.
pub const MAX_LOG_BYTES: usize = 8192;

/// What the log keeps of one request body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestFacts {
    /// `Metadata.Id` (Storage Queue) or `Metadata.MessageId` (Service Bus, RabbitMQ).
    pub message_id: Option<String>,
    /// `Metadata.DequeueCount` (Storage Queue) or `Metadata.DeliveryCount` (Service Bus).
    pub delivery_count: Option<i64>,
    pub payload: Option<Preview>,
}

/// The start of a payload as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub text: String,
    /// True when `text` is not all of it.
    pub truncated: bool,
}

/// The facts of a custom-handler request `body` whose trigger binding is `trigger`.
pub fn facts_of(body: &Value, trigger: &str) -> RequestFacts {
    let metadata = &body["Metadata"];
    let text = |name: &str| {
        metadata
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let count = |name: &str| match metadata.get(name)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    RequestFacts {
        message_id: text("Id").or_else(|| text("MessageId")),
        delivery_count: count("DequeueCount").or_else(|| count("DeliveryCount")),
        payload: body["Data"].get(trigger).map(preview),
    }
}

/// A string as it is, anything else as compact JSON (an HTTP request without its headers),
/// cut to [`MAX_PREVIEW_BYTES`] on a character boundary. Runs for every attempt, so a large
/// payload costs only the bytes kept: the string is cut before it is copied, the JSON written
/// no further than the cut.
pub fn preview(data: &Value) -> Preview {
    match data {
        Value::String(s) => Preview {
            text: cut(s, MAX_PREVIEW_BYTES).to_owned(),
            truncated: s.len() > MAX_PREVIEW_BYTES,
        },
        Value::Object(map) if map.contains_key("Headers") => {
            let without: serde_json::Map<String, Value> = map
                .iter()
                .filter(|(k, _)| k.as_str() != "Headers")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            json_preview(&Value::Object(without))
        }
        other => json_preview(other),
    }
}

/// `value` as compact JSON, written up to one byte past [`MAX_PREVIEW_BYTES`] and no further.
fn json_preview(value: &Value) -> Preview {
    let mut out = Bounded(Vec::with_capacity(256));
    // Stopping early is the point: the error only says the bound was reached.
    let _ = serde_json::to_writer(&mut out, value);
    let bytes = out.0;
    let truncated = bytes.len() > MAX_PREVIEW_BYTES;
    let kept = &bytes[..bytes.len().min(MAX_PREVIEW_BYTES)];
    // JSON text is UTF-8; the bound may have split a character, which is left out.
    let text = match std::str::from_utf8(kept) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&kept[..e.valid_up_to()]).unwrap_or_default(),
    };
    Preview {
        text: text.to_owned(),
        truncated,
    }
}

/// A writer that takes [`MAX_PREVIEW_BYTES`] + 1 bytes, then refuses.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = (MAX_PREVIEW_BYTES + 1).saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::io::Error::other("preview bound reached"));
        }
        let n = buf.len().min(room);
        self.0.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The handler's `Logs` in order, within [`MAX_LOG_BYTES`] in all: the line that crosses the
/// budget is cut, and a last line says how many were not kept.
pub fn bounded_logs(lines: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut left = MAX_LOG_BYTES;
    for (n, line) in lines.iter().enumerate() {
        if left == 0 {
            kept.push(format!("… {} more lines not kept", lines.len() - n));
            break;
        }
        let part = cut(line, left);
        left -= part.len();
        kept.push(part.to_owned());
    }
    kept
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_and_counts_come_from_each_triggers_metadata() {
        let cases = [
            (
                json!({"Data": {"m": "hi"}, "Metadata": {"Id": "q-1", "DequeueCount": 3, "PopReceipt": "secret"}}),
                Some("q-1"),
                Some(3),
            ),
            (
                json!({"Data": {"m": {"a": 1}}, "Metadata": {"MessageId": "sb-1", "DeliveryCount": "2", "LockToken": "t"}}),
                Some("sb-1"),
                Some(2),
            ),
            (json!({"Data": {"m": 1}, "Metadata": {}}), None, None),
            (json!({"Data": {}}), None, None),
        ];
        for (body, id, count) in cases {
            let facts = facts_of(&body, "m");
            assert_eq!(facts.message_id.as_deref(), id, "{body}");
            assert_eq!(facts.delivery_count, count, "{body}");
        }
    }

    #[test]
    fn the_preview_is_text_or_json_without_headers_and_cut_on_a_char_boundary() {
        let body = json!({"Data": {"m": "plain"}});
        assert_eq!(
            facts_of(&body, "m").payload,
            Some(Preview {
                text: "plain".into(),
                truncated: false
            })
        );
        assert_eq!(facts_of(&body, "other").payload, None);
        let req =
            json!({"Url": "/x", "Headers": {"Authorization": ["Bearer s3cret"]}, "Body": "b"});
        let shown = preview(&req).text;
        assert!(
            !shown.contains("s3cret") && shown.contains("\"Body\":\"b\""),
            "{shown}"
        );
        assert_eq!(
            preview(&json!({"a": [1, 2]})),
            Preview {
                text: r#"{"a":[1,2]}"#.into(),
                truncated: false
            }
        );
        // JSON larger than the bound is written only as far as it, and cut on a character.
        let big = json!({"items": vec!["é"; MAX_PREVIEW_BYTES]});
        let shown = preview(&big);
        assert!(shown.truncated);
        assert!(shown.text.len() <= MAX_PREVIEW_BYTES && shown.text.len() > MAX_PREVIEW_BYTES - 4);
        assert!(big.to_string().starts_with(&shown.text));
        // "é" is two bytes: the cut never splits it.
        let long = "é".repeat(MAX_PREVIEW_BYTES);
        let cut = preview(&Value::String(long));
        assert!(cut.truncated);
        assert_eq!(cut.text.len(), MAX_PREVIEW_BYTES);
        assert!(cut.text.chars().all(|c| c == 'é'));
    }

    #[test]
    fn logs_are_kept_in_order_within_the_byte_budget() {
        let short = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(bounded_logs(&short), short);
        let line = "x".repeat(3000);
        let many: Vec<String> = (0..10).map(|_| line.clone()).collect();
        let kept = bounded_logs(&many);
        let bytes: usize = kept[..kept.len() - 1].iter().map(String::len).sum();
        assert_eq!(bytes, MAX_LOG_BYTES);
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[2].len(), MAX_LOG_BYTES - 6000);
        assert_eq!(kept[3], "… 7 more lines not kept");
    }
}
