use chrono::TimeZone as _;

use super::*;

fn message(n: i64) -> ReceivedMessage {
    let mut properties = Map::new();
    properties.insert("tenant".into(), json!("contoso"));
    properties.insert("attempt".into(), json!(n));
    ReceivedMessage {
        body: format!("body {n}").into_bytes(),
        message_id: Some(format!("m{n}")),
        lock_token: format!("00000000-0000-0000-0000-00000000000{n}"),
        delivery_count: 2,
        sequence_number: 40 + n,
        enqueued_time: Utc.with_ymd_and_hms(2026, 11, 24, 2, 0, 0).unwrap(),
        expires_at: Utc.with_ymd_and_hms(2026, 11, 25, 2, 0, 0).unwrap(),
        content_type: Some("text/plain".into()),
        correlation_id: Some("c".into()),
        session_id: Some("s".into()),
        reply_to: Some("replies".into()),
        reply_to_session_id: None,
        to: Some("to".into()),
        subject: Some("order".into()),
        partition_key: None,
        transaction_partition_key: None,
        dead_letter_source: None,
        application_properties: properties,
    }
}

fn context() -> InvocationContext<'static> {
    InvocationContext {
        binding: "msg",
        function: "process",
        data_type: None,
        now: Utc.with_ymd_and_hms(2026, 11, 24, 2, 30, 0).unwrap(),
        rand_guid: "g",
    }
}

#[test]
fn a_single_message_carries_every_field_of_the_binding_contract() {
    let payload = single_payload(&context(), &message(1));
    assert_eq!(payload["Data"]["msg"], "body 1");
    let metadata = &payload["Metadata"];
    let expected = json!({
        "DeliveryCount": 2,
        "DeadLetterSource": null,
        "LockToken": "00000000-0000-0000-0000-000000000001",
        "ExpiresAtUtc": "2026-11-25T02:00:00Z",
        "EnqueuedTimeUtc": "2026-11-24T02:00:00Z",
        "MessageId": "m1",
        "ContentType": "text/plain",
        "ReplyTo": "replies",
        "SequenceNumber": 41,
        "To": "to",
        "Label": "order",
        "Subject": "order",
        "CorrelationId": "c",
        "ApplicationProperties": {"tenant": "contoso", "attempt": 1},
        "UserProperties": {"tenant": "contoso", "attempt": 1},
        "SessionId": "s",
        "ReplyToSessionId": null,
        "PartitionKey": null,
        "TransactionPartitionKey": null,
        "sys": {"MethodName": "process", "UtcNow": "2026-11-24T02:30:00Z", "RandGuid": "g"},
    });
    assert_eq!(metadata, &expected);
}

#[test]
fn a_batch_gets_the_array_form_of_every_field_in_message_order() {
    let payload = batch_payload(&context(), &[message(1), message(2)]);
    assert_eq!(payload["Data"]["msg"], json!(["body 1", "body 2"]));
    let metadata = payload["Metadata"].as_object().expect("object");
    assert_eq!(metadata["SequenceNumberArray"], json!([41, 42]));
    assert_eq!(metadata["MessageIdArray"], json!(["m1", "m2"]));
    assert_eq!(metadata["DeliveryCountArray"], json!([2, 2]));
    assert_eq!(
        metadata["UserPropertiesArray"][1],
        json!({"tenant": "contoso", "attempt": 2})
    );
    // Every single-dispatch field has its array form, and nothing else is there but sys.
    let single = single_payload(&context(), &message(1));
    for name in single["Metadata"].as_object().expect("object").keys() {
        if name != "sys" {
            assert!(
                metadata.contains_key(&format!("{name}Array")),
                "{name}Array"
            );
        }
    }
    assert_eq!(
        metadata.len(),
        single["Metadata"].as_object().map_or(0, Map::len)
    );
}

#[test]
fn bodies_are_text_or_base64() {
    let cases: [(&[u8], Option<DataType>, &str); 4] = [
        (b"hello", None, "hello"),
        (b"hello", Some(DataType::String), "hello"),
        (b"hello", Some(DataType::Binary), "aGVsbG8="),
        (&[0xff, 0x00], None, "/wA="),
    ];
    for (body, data_type, expected) in cases {
        assert_eq!(
            trigger_value(body, data_type),
            expected,
            "{body:?} {data_type:?}"
        );
    }
}
