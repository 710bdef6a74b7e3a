//! Parsing, defaults and errors of the whole `hostConfig`.

use super::*;
use serde_json::json;

fn errors(written: Value) -> Vec<(String, String)> {
    HostConfig::parse(&written, "hostConfig")
        .unwrap_err()
        .errors
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

fn queues(written: Value) -> Result<QueuesOptions, ValidationError> {
    HostConfig::parse(&json!({"extensions": {"queues": written}}), "hostConfig")
        .map(|c| c.extensions.queues)
}

#[test]
fn absent_or_null_or_empty_is_all_defaults() {
    for written in [Value::Null, json!({}), json!({"extensions": null})] {
        assert_eq!(
            HostConfig::parse(&written, "hostConfig"),
            Ok(HostConfig::default())
        );
    }
    let versioned = HostConfig::parse(&json!({"version": "2.0"}), "").unwrap();
    assert_eq!(versioned.version.as_deref(), Some("2.0"));
    let defaults = HostConfig::default();
    assert!(!defaults.custom_handler.enable_forwarding_http_request);
    assert_eq!(defaults.function_timeout, TimeSpan::from_secs(300));
    let q = &defaults.extensions.queues;
    assert_eq!(
        (q.batch_size, q.new_batch_threshold, q.max_dequeue_count),
        (16, 8, 5)
    );
    assert_eq!(q.max_polling_interval, TimeSpan::from_secs(60));
    assert_eq!(q.visibility_timeout, TimeSpan::ZERO);
    assert_eq!(q.message_encoding, MessageEncoding::Base64);
}

#[test]
fn new_batch_threshold_defaults_to_half_the_effective_batch_size() {
    let cases = [(1, 0), (2, 1), (7, 3), (16, 8), (32, 16)];
    for (batch_size, want) in cases {
        let q = queues(json!({"batchSize": batch_size})).unwrap();
        assert_eq!(q.new_batch_threshold, want, "batchSize {batch_size}");
    }
    let q = queues(json!({"batchSize": 4, "newBatchThreshold": 20})).unwrap();
    assert_eq!(q.new_batch_threshold, 20);
}

#[test]
fn queue_bounds_are_checked_just_inside_and_outside() {
    let cases = [
        (json!({"batchSize": 1}), None),
        (json!({"batchSize": 32}), None),
        (json!({"batchSize": 0}), Some("must be between 1 and 32")),
        (json!({"batchSize": 33}), Some("must be between 1 and 32")),
        (json!({"newBatchThreshold": 0}), None),
        (json!({"newBatchThreshold": 1000}), None),
        (
            json!({"newBatchThreshold": -1}),
            Some("must be between 0 and 1000"),
        ),
        (
            json!({"newBatchThreshold": 1001}),
            Some("must be between 0 and 1000"),
        ),
        (json!({"maxDequeueCount": 1}), None),
        (json!({"maxDequeueCount": 0}), Some("must be at least 1")),
        (json!({"maxPollingInterval": "00:00:00.100"}), None),
        (
            json!({"maxPollingInterval": "00:00:00.099"}),
            Some("must be at least 00:00:00.100"),
        ),
        (json!({"maxPollingInterval": 100}), None),
        (
            json!({"maxPollingInterval": 99}),
            Some("must be at least 100 (milliseconds)"),
        ),
        (json!({"visibilityTimeout": "7.00:00:00"}), None),
        (
            json!({"visibilityTimeout": "7.00:00:01"}),
            Some("must be at most 7.00:00:00"),
        ),
        (json!({"messageEncoding": "none"}), None),
        (json!({"messageEncoding": "Base64"}), None),
        (
            json!({"messageEncoding": "utf8"}),
            Some("must be one of \"base64\", \"none\""),
        ),
    ];
    for (written, want) in cases {
        let got = queues(written.clone())
            .err()
            .map(|e| e.errors[0].message.clone());
        match (want, got) {
            (None, None) => {}
            (Some(want), Some(got)) => assert!(got.starts_with(want), "{written}: {got}"),
            (want, got) => panic!("{written}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn milliseconds_polling_interval_is_read_as_milliseconds() {
    let q = queues(json!({"maxPollingInterval": 2000})).unwrap();
    assert_eq!(q.max_polling_interval, TimeSpan::from_secs(2));
}

#[test]
fn function_timeout_bounds() {
    let ok = |s: &str| HostConfig::parse(&json!({"functionTimeout": s}), "").is_ok();
    assert!(ok("00:00:01") && ok("00:10:00"));
    assert!(!ok("00:00:00.999") && !ok("00:10:01"));
    assert_eq!(
        errors(json!({"functionTimeout": "00:20:00"})),
        [(
            "hostConfig.functionTimeout".into(),
            "must be between 00:00:01 and 00:10:00".into()
        )]
    );
}

#[test]
fn all_range_errors_are_reported_at_once() {
    let got = errors(json!({
        "functionTimeout": "01:00:00",
        "extensions": {
            "queues": {"batchSize": 64, "maxDequeueCount": 0},
            "serviceBus": {"maxConcurrentCalls": 0},
        }
    }));
    let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "hostConfig.functionTimeout",
            "hostConfig.extensions.queues.batchSize",
            "hostConfig.extensions.queues.maxDequeueCount",
            "hostConfig.extensions.serviceBus.maxConcurrentCalls",
        ]
    );
}

#[test]
fn unknown_fields_are_errors_with_their_path() {
    assert_eq!(
        errors(json!({"loging": {}, "extensions": {"queues": {"BatchSize": 1, "foo": 2}}})),
        [
            (
                "hostConfig.loging".into(),
                "unknown field \"loging\"".into()
            ),
            (
                "hostConfig.extensions.queues.BatchSize".into(),
                "unknown field \"BatchSize\", did you mean \"batchSize\"?".into()
            ),
            (
                "hostConfig.extensions.queues.foo".into(),
                "unknown field \"foo\"".into()
            ),
        ]
    );
}

#[test]
fn wrong_types_are_errors_with_their_path() {
    assert_eq!(
        errors(
            json!({"version": "1.0", "extensions": {"queues": {"batchSize": "16", "visibilityTimeout": 5}, "serviceBus": []}})
        ),
        [
            ("hostConfig.version".into(), "must be \"2.0\"".into()),
            (
                "hostConfig.extensions.queues.batchSize".into(),
                "expected an integer".into()
            ),
            (
                "hostConfig.extensions.queues.visibilityTimeout".into(),
                "expected a duration string like \"00:01:00\"".into()
            ),
            (
                "hostConfig.extensions.serviceBus".into(),
                "expected an object".into()
            ),
        ]
    );
    assert_eq!(
        errors(json!([])),
        [("hostConfig".into(), "expected an object".into())]
    );
    assert_eq!(
        errors(json!({"extensions": {"queues": {"batchSize": 1.5}}})),
        [(
            "hostConfig.extensions.queues.batchSize".into(),
            "expected an integer".into()
        )]
    );
}

#[test]
fn local_development_polls_every_two_seconds_unless_set() {
    let dev = HostDefaults::LOCAL_DEVELOPMENT;
    let parsed = HostConfig::parse_with_defaults(&json!({}), "", &dev).unwrap();
    assert_eq!(
        parsed.extensions.queues.max_polling_interval,
        TimeSpan::from_secs(2)
    );
    let written = json!({"extensions": {"queues": {"maxPollingInterval": "00:00:30"}}});
    let parsed = HostConfig::parse_with_defaults(&written, "", &dev).unwrap();
    assert_eq!(
        parsed.extensions.queues.max_polling_interval,
        TimeSpan::from_secs(30)
    );
}

#[test]
fn serializes_full_normalized_form() {
    let parsed =
        HostConfig::parse(&json!({"extensions": {"queues": {"batchSize": 8}}}), "").unwrap();
    let json = serde_json::to_value(&parsed).unwrap();
    assert_eq!(json["functionTimeout"], "00:05:00");
    assert_eq!(
        json["extensions"]["queues"],
        json!({
            "batchSize": 8, "newBatchThreshold": 4, "maxPollingInterval": "00:01:00",
            "visibilityTimeout": "00:00:00", "maxDequeueCount": 5, "messageEncoding": "base64"
        })
    );
    assert_eq!(json["extensions"]["serviceBus"]["maxConcurrentCalls"], 16);
    assert!(json.get("retry").is_none());
    // The normalized form parses back to the same settings.
    assert_eq!(HostConfig::parse(&json, ""), Ok(parsed));
}
