use chrono::TimeZone;
use serde_json::json;

use super::*;

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(secs, 0).unwrap()
}

#[test]
fn queue_payload_carries_the_message_and_every_metadata_field() {
    let delivery = QueueDelivery {
        binding: "order",
        function: "process-order",
        text: "{\"id\":1}",
        id: "800ae4b3",
        pop_receipt: "AgAAAAMA",
        dequeue_count: 2,
        insertion_time: at(1_570_643_911),
        expiration_time: at(1_571_248_711),
        next_visible_time: at(1_570_644_512),
        now: at(1_570_643_912),
        rand_guid: "24ad2b68",
    };
    assert_eq!(
        queue_payload(&delivery),
        json!({
            "Data": {"order": "{\"id\":1}"},
            "Metadata": {
                "QueueTrigger": "{\"id\":1}",
                "DequeueCount": 2,
                "ExpirationTime": "2019-10-16T17:58:31+00:00",
                "Id": "800ae4b3",
                "InsertionTime": "2019-10-09T17:58:31+00:00",
                "NextVisibleTime": "2019-10-09T18:08:32+00:00",
                "PopReceipt": "AgAAAAMA",
                "sys": {"MethodName": "process-order", "UtcNow": "2019-10-09T17:58:32Z", "RandGuid": "24ad2b68"}
            }
        })
    );
}

#[test]
fn responses_parse_by_the_documented_shape() {
    let outputs = ["out", "audit"];
    let ok = HandlerResponse::parse(
        br#"{"Outputs": {"OUT": ["a", {"b": 1}]}, "Logs": ["one", "two"], "ReturnValue": 5}"#,
        &outputs,
    )
    .unwrap();
    assert_eq!(ok.outputs.get("out"), Some(&json!(["a", {"b": 1}])));
    assert_eq!(ok.logs, vec!["one", "two"]);
    assert_eq!(ok.return_value, Some(json!(5)));

    assert_eq!(
        HandlerResponse::parse(b"", &outputs).unwrap(),
        HandlerResponse::default()
    );
    assert_eq!(
        HandlerResponse::parse(b" \n", &outputs).unwrap(),
        HandlerResponse::default()
    );
    assert_eq!(
        HandlerResponse::parse(b"{}", &outputs).unwrap(),
        HandlerResponse::default()
    );
    assert_eq!(
        HandlerResponse::parse(br#"{"Outputs": null, "Logs": null}"#, &outputs).unwrap(),
        HandlerResponse::default()
    );
}

#[test]
fn malformed_responses_are_errors() {
    let outputs = ["out"];
    type Check = fn(&ResponseError) -> bool;
    let cases: &[(&[u8], Check)] = &[
        (b"not json", |e| matches!(e, ResponseError::NotJson(_))),
        (b"[1,2]", |e| *e == ResponseError::NotObject),
        (br#"{"Outputs": 3}"#, |e| *e == ResponseError::Outputs),
        (br#"{"Logs": "x"}"#, |e| *e == ResponseError::Logs),
        (br#"{"Logs": [1]}"#, |e| *e == ResponseError::Logs),
        (
            br#"{"retryAfter": "later"}"#,
            |e| matches!(e, ResponseError::RetryAfter(m) if m.starts_with("retryAfter ")),
        ),
    ];
    for (body, check) in cases {
        let err = HandlerResponse::parse(body, &outputs).unwrap_err();
        assert!(
            check(&err),
            "{:?} gave {err:?}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn a_handler_may_ask_for_its_message_to_be_tried_again_later() {
    let response = HandlerResponse::parse(br#"{"retryAfter": "00:05:00"}"#, &[]).unwrap();
    assert_eq!(
        response.retry_after,
        Some(std::time::Duration::from_secs(300))
    );
    let seconds = HandlerResponse::parse(br#"{"retryAfter": 45, "Logs": ["busy"]}"#, &[]).unwrap();
    assert_eq!(
        seconds.retry_after,
        Some(std::time::Duration::from_secs(45))
    );
    assert_eq!(seconds.logs, ["busy"]);
    let none = HandlerResponse::parse(br#"{"retryAfter": null}"#, &[]).unwrap();
    assert_eq!(none.retry_after, None);
}

#[test]
fn outputs_that_name_no_output_binding_are_dropped_and_named() {
    let outputs = ["out"];
    let response = HandlerResponse::parse(
        br#"{"Outputs": {"nope": 1, "Out": "kept", "$return": 2, "also": null}, "ReturnValue": 3}"#,
        &outputs,
    )
    .unwrap();
    assert_eq!(
        response.outputs,
        BTreeMap::from([("out".to_owned(), json!("kept"))]),
        "only declared bindings are read, matched without regard to case"
    );
    let mut undeclared = response.undeclared_outputs.clone();
    undeclared.sort();
    assert_eq!(undeclared, ["$return", "also", "nope"]);
    assert_eq!(response.return_value, Some(json!(3)));

    let clean = HandlerResponse::parse(br#"{"Outputs": {"out": 1}}"#, &outputs).unwrap();
    assert!(clean.undeclared_outputs.is_empty());
}

#[test]
fn output_values_become_messages() {
    let cases = [
        (json!("plain"), vec!["plain"]),
        (json!({"a": 1}), vec!["{\"a\":1}"]),
        (
            json!(["x", 2, null, {"y": true}]),
            vec!["x", "2", "{\"y\":true}"],
        ),
        (json!(null), vec![]),
        (json!(7), vec!["7"]),
    ];
    for (value, want) in cases {
        assert_eq!(queue_output_messages(&value), want, "{value}");
    }
}
