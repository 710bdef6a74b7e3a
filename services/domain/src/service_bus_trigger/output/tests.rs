use chrono::TimeZone as _;
use serde_json::json;

use super::*;

fn body(text: &str) -> OutgoingMessage {
    OutgoingMessage {
        body: text.as_bytes().to_vec(),
        ..OutgoingMessage::default()
    }
}

fn json_body(text: &str) -> OutgoingMessage {
    OutgoingMessage {
        content_type: Some("application/json".into()),
        ..body(text)
    }
}

#[test]
fn values_arrays_and_json_become_messages() {
    let cases = [
        (json!(null), vec![]),
        (json!("hello"), vec![body("hello")]),
        (json!(["a", null, "b"]), vec![body("a"), body("b")]),
        (json!({"orderId": 7}), vec![json_body(r#"{"orderId":7}"#)]),
        (json!(42), vec![json_body("42")]),
        (
            json!({"Body": "x", "orderId": 7}),
            vec![json_body(r#"{"Body":"x","orderId":7}"#)],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(
            service_bus_output_messages("out", &value),
            Ok(expected),
            "{value}"
        );
    }
}

#[test]
fn the_message_form_sets_properties() {
    let value = json!({
        "Body": {"orderId": 7},
        "MessageId": "m-1",
        "SessionId": "s-1",
        "CorrelationId": "c-1",
        "Label": "order",
        "To": "t",
        "ReplyTo": "r",
        "TimeToLive": "00:05:00",
        "ScheduledEnqueueTimeUtc": "2026-11-24T03:00:00Z",
        "ApplicationProperties": {"tenant": "contoso", "priority": 2, "urgent": true},
    });
    let messages = service_bus_output_messages("out", &value).expect("valid");
    let expected = OutgoingMessage {
        body: br#"{"orderId":7}"#.to_vec(),
        message_id: Some("m-1".into()),
        session_id: Some("s-1".into()),
        correlation_id: Some("c-1".into()),
        content_type: Some("application/json".into()),
        subject: Some("order".into()),
        to: Some("t".into()),
        reply_to: Some("r".into()),
        time_to_live: Some(Duration::from_secs(300)),
        scheduled_enqueue_time: Some(Utc.with_ymd_and_hms(2026, 11, 24, 3, 0, 0).unwrap()),
        application_properties: json!({"tenant": "contoso", "priority": 2, "urgent": true})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..OutgoingMessage::default()
    };
    assert_eq!(messages, vec![expected]);
    let text = service_bus_output_messages(
        "out",
        &json!({"Body": "plain", "ContentType": "text/plain"}),
    )
    .expect("valid");
    assert_eq!(text[0].body, b"plain");
    assert_eq!(text[0].content_type.as_deref(), Some("text/plain"));
}

#[test]
fn bad_message_forms_say_where() {
    let cases = [
        (
            json!({"Body": "x", "MessageId": 1}),
            "Outputs.out.MessageId: must be a string",
        ),
        (
            json!([{"Body": "x", "TimeToLive": "soon"}]),
            "Outputs.out[0].TimeToLive: is not a TimeSpan",
        ),
        (
            json!({"Body": "x", "TimeToLive": "00:00:00"}),
            "Outputs.out.TimeToLive: must be positive",
        ),
        (
            json!({"Body": "x", "ScheduledEnqueueTimeUtc": "tomorrow"}),
            "Outputs.out.ScheduledEnqueueTimeUtc: is not an ISO 8601 time with offset",
        ),
        (
            json!({"Body": "x", "ApplicationProperties": {"a": {}}}),
            "Outputs.out.ApplicationProperties.a: must be a string, number or boolean",
        ),
        (
            json!({"Body": "x", "ApplicationProperties": []}),
            "Outputs.out.ApplicationProperties: must be an object",
        ),
        (
            json!({"Body": "x", "Subject": "a", "Label": "b"}),
            "Outputs.out.Label: differs from Subject (Label is Subject's old name)",
        ),
    ];
    for (value, expected) in cases {
        let error = service_bus_output_messages("out", &value).expect_err(&value.to_string());
        assert!(
            error.to_string().starts_with(expected),
            "{error} vs {expected}"
        );
    }
}
