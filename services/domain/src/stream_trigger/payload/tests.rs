use chrono::DateTime;
use serde_json::json;

use super::*;

fn event(partition: i32, offset: i64, value: &[u8]) -> StreamEvent {
    StreamEvent {
        topic: "orders".into(),
        partition,
        offset,
        key: Some(b"customer-7".to_vec()),
        value: Some(value.to_vec()),
        timestamp: Some(
            DateTime::parse_from_rfc3339("2026-11-27T01:02:03.5Z")
                .unwrap()
                .to_utc(),
        ),
        headers: vec![
            ("trace".into(), Some(b"abc".to_vec())),
            ("none".into(), None),
        ],
        leader_epoch: Some(3),
    }
}

fn context(kind: StreamKind, data_type: Option<DataType>) -> StreamInvocation<'static> {
    StreamInvocation {
        kind,
        binding: "event",
        function: "Process",
        data_type,
        consumer_group: "$Default",
        namespace: "contoso.servicebus.windows.net:9093",
        now: DateTime::parse_from_rfc3339("2026-11-27T02:00:00Z")
            .unwrap()
            .to_utc(),
        rand_guid: "g",
    }
}

#[test]
fn a_kafka_event_is_the_json_of_kafka_event_data_with_its_binding_data() {
    let body = single_payload(
        &context(StreamKind::Kafka, None),
        &event(1, 42, b"{\"id\":1}"),
    );
    let data: serde_json::Value =
        serde_json::from_str(body["Data"]["event"].as_str().expect("a JSON string")).unwrap();
    assert_eq!(
        data,
        json!({"Offset": 42, "Partition": 1, "Topic": "orders",
            "Timestamp": "2026-11-27T01:02:03.500Z", "Value": "{\"id\":1}", "LeaderEpoch": 3,
            "IsPartitionEOF": false, "Key": "customer-7",
            "Headers": [{"Key": "trace", "Value": "YWJj"}, {"Key": "none", "Value": null}]})
    );
    let metadata = &body["Metadata"];
    assert_eq!(metadata["Key"], "customer-7");
    assert_eq!(metadata["Partition"], 1);
    assert_eq!(metadata["Topic"], "orders");
    assert_eq!(metadata["Timestamp"], "2026-11-27T01:02:03.500Z");
    assert_eq!(metadata["Offset"], 42);
    assert_eq!(
        metadata["Headers"][0],
        json!({"Key": "trace", "Value": "YWJj"})
    );
    assert_eq!(metadata["LeaderEpoch"], 3);
    assert_eq!(metadata["IsPartitionEOF"], false);
    assert_eq!(metadata["ItemIdentifier"], "1-42");
    assert_eq!(metadata["sys"]["MethodName"], "Process");
}

#[test]
fn a_binary_kafka_binding_gets_the_value_in_base64() {
    let body = single_payload(
        &context(StreamKind::Kafka, Some(DataType::Binary)),
        &event(0, 1, &[0xde, 0xad]),
    );
    assert_eq!(body["Data"]["event"], "3q0=");
}

#[test]
fn a_kafka_batch_has_arrays_in_event_order() {
    let events = [event(0, 5, b"a"), event(1, 9, b"b"), event(0, 6, b"c")];
    let body = batch_payload(&context(StreamKind::Kafka, None), &events.each_ref());
    let values: Vec<String> = body["Data"]["event"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let parsed: serde_json::Value = serde_json::from_str(v.as_str().unwrap()).unwrap();
            parsed["Value"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(values, ["a", "b", "c"]);
    assert_eq!(body["Metadata"]["PartitionArray"], json!([0, 1, 0]));
    assert_eq!(body["Metadata"]["OffsetArray"], json!([5, 9, 6]));
    assert_eq!(
        body["Metadata"]["ItemIdentifierArray"],
        json!(["0-5", "1-9", "0-6"])
    );
    assert_eq!(
        body["Metadata"]["KeyArray"],
        json!(["customer-7", "customer-7", "customer-7"])
    );
    assert!(body["Metadata"].get("Offset").is_none());
}

#[test]
fn an_event_hubs_event_carries_the_extension_binding_data() {
    let body = single_payload(
        &context(StreamKind::EventHubs, None),
        &event(2, 77, b"hello"),
    );
    assert_eq!(body["Data"]["event"], "hello");
    let m = &body["Metadata"];
    assert_eq!(m["SequenceNumber"], 77);
    assert_eq!(m["Offset"], "77");
    assert_eq!(m["OffsetString"], "77");
    assert_eq!(m["PartitionKey"], "customer-7");
    assert_eq!(m["EnqueuedTimeUtc"], "2026-11-27T01:02:03.500Z");
    assert_eq!(m["Properties"], json!({"trace": "abc", "none": null}));
    assert_eq!(m["SystemProperties"]["x-opt-sequence-number"], 77);
    assert_eq!(
        m["PartitionContext"],
        json!({"EventHubName": "orders", "ConsumerGroup": "$Default",
            "FullyQualifiedNamespace": "contoso.servicebus.windows.net:9093", "PartitionId": "2"})
    );
    assert_eq!(m["TriggerPartitionContext"], m["PartitionContext"]);
}

#[test]
fn an_event_hubs_batch_has_arrays_and_one_partition_context() {
    let events = [event(2, 1, b"x"), event(2, 2, &[0xff])];
    let body = batch_payload(&context(StreamKind::EventHubs, None), &events.each_ref());
    // Not UTF-8: base64, as every trigger hands a binary body on.
    assert_eq!(body["Data"]["event"], json!(["x", "/w=="]));
    assert_eq!(body["Metadata"]["SequenceNumberArray"], json!([1, 2]));
    assert_eq!(body["Metadata"]["PartitionContext"]["PartitionId"], "2");
}
