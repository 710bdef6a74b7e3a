//! The RabbitMQ binding kinds in the domain: their shape, checks, sources, host section,
//! failure rule and payload, through the public API the other layers use.

use std::collections::BTreeMap;

use chrono::TimeZone as _;
use serde_json::{Value, json};

use shoal_domain::binding_kinds::rabbitmq::*;
use shoal_domain::bindings::{Binding, parse_binding, parse_bindings};
use shoal_domain::host_config::HostConfig;
use shoal_domain::scale::{MetricKind, target_rule};
use shoal_domain::trigger_source::{TriggerSource, resolve};

fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn trigger(extra: Value) -> Value {
    let mut t = json!({"type": "rabbitMQTrigger", "direction": "in", "name": "order",
        "queueName": "orders", "connectionStringSetting": "Rabbit"});
    for (k, v) in extra.as_object().unwrap() {
        t[k] = v.clone();
    }
    t
}

fn problems(value: &Value) -> Vec<(String, String)> {
    match parse_binding(value, "bindings[0]") {
        Ok(_) => Vec::new(),
        Err(e) => e
            .errors
            .iter()
            .map(|f| (f.path.clone(), f.message.clone()))
            .collect(),
    }
}

#[test]
fn a_trigger_in_the_extensions_shape_is_read_and_written_back_as_written() {
    let written = trigger(json!({"dataType": "binary"}));
    let binding = parse_binding(&written, "").unwrap();
    assert_eq!(binding.type_name(), "rabbitMQTrigger");
    assert!(binding.is_trigger());
    assert!(binding.has_runner());
    assert_eq!(binding.connection(), Some("Rabbit"));
    assert_eq!(serde_json::to_value(&binding).unwrap(), written);
    let back: Binding = serde_json::from_value(written).unwrap();
    assert_eq!(back, binding);
}

#[test]
fn bad_bindings_are_refused_at_their_fields() {
    let cases: &[(Value, &str, &str)] = &[
        (
            json!({"type": "rabbitMQTrigger", "direction": "in", "name": "m", "queueName": "q"}),
            "bindings[0].connectionStringSetting",
            "is required",
        ),
        (
            trigger(json!({"disableCertificateValidation": true})),
            "bindings[0].disableCertificateValidation",
            "always validates",
        ),
        (
            trigger(json!({"hostName": "rabbit.internal"})),
            "bindings[0].hostName",
            "is not read",
        ),
        (
            trigger(json!({"queueName": "x".repeat(256)})),
            "bindings[0].queueName",
            "at most 255",
        ),
        (
            trigger(json!({"queueName": ""})),
            "bindings[0].queueName",
            "must not be empty",
        ),
        (
            trigger(json!({"prefetchCount": 5})),
            "bindings[0].prefetchCount",
            "unknown",
        ),
        (
            trigger(json!({"connectionStringSetting": "not a setting!"})),
            "bindings[0].connectionStringSetting",
            "must name an app setting",
        ),
        (
            trigger(json!({"direction": "out"})),
            "bindings[0].direction",
            "must be \"in\"",
        ),
        (
            json!({"type": "rabbitMQ", "direction": "out", "name": "o", "queueName": "a{",
                "connectionStringSetting": "Rabbit"}),
            "bindings[0].queueName",
            "",
        ),
    ];
    for (binding, path, message) in cases {
        let found = problems(binding);
        assert!(
            found.iter().any(|(p, m)| p == path && m.contains(message)),
            "{binding}: expected {path}: …{message}…, found {found:?}"
        );
    }
}

#[test]
fn a_misspelt_type_is_pointed_at_the_kind() {
    let found = problems(&json!({"type": "rabbitmqtrigger", "direction": "in", "name": "m"}));
    assert_eq!(found[0].0, "bindings[0].type");
    assert!(
        found[0].1.contains("did you mean \"rabbitMQTrigger\""),
        "{found:?}"
    );
}

#[test]
fn outputs_may_use_the_triggers_binding_data_in_their_queue_name() {
    let output = |queue: &str| {
        json!({"type": "rabbitMQ", "direction": "out", "name": "o", "queueName": queue,
            "connectionStringSetting": "Rabbit"})
    };
    let ok = parse_bindings(
        &json!([trigger(json!({})), output("out-{RoutingKey}")]),
        "b",
    );
    assert!(ok.is_ok(), "{ok:?}");
    // A name the trigger does not supply may be a property of a JSON body, checked per
    // message; a binary body has none, so it is refused on write.
    assert!(parse_bindings(&json!([trigger(json!({})), output("out-{Region}")]), "b").is_ok());
    let binary = trigger(json!({"dataType": "binary"}));
    let refused = parse_bindings(&json!([binary, output("out-{DequeueCount}")]), "b").unwrap_err();
    assert_eq!(refused.errors[0].path, "b[1].queueName");
    assert!(
        refused.errors[0].message.contains("{RoutingKey}"),
        "{refused:?}"
    );
    // A queue output fed by a RabbitMQ trigger checks against the RabbitMQ trigger's data too.
    let queue_out =
        json!({"type": "queue", "direction": "out", "name": "q", "queueName": "x-{Exchange}"});
    assert!(parse_bindings(&json!([trigger(json!({})), queue_out]), "b").is_ok());
}

#[test]
fn the_source_is_the_queue_on_the_broker_the_setting_names_and_never_shows_the_password() {
    let binding = parse_binding(&trigger(json!({"queueName": "%OrdersQueue%"})), "").unwrap();
    let s = settings(&[
        ("Rabbit", "amqp://shoal:s3cret@rabbit.example:5672/%2f"),
        ("OrdersQueue", "orders-eu"),
    ]);
    let Some(Ok(TriggerSource::Broker(source))) = resolve(&binding, &s, &HostConfig::default())
    else {
        panic!("no broker source");
    };
    assert_eq!(source.kind, "rabbitMQTrigger");
    assert_eq!(source.entity, "orders-eu");
    assert_eq!(source.uri, "amqp://shoal:s3cret@rabbit.example:5672/%2f");
    let shown = format!(
        "{:?} {}",
        source,
        TriggerSource::Broker(source.clone()).describe()
    );
    assert!(
        !shown.contains("s3cret") && !shown.contains("shoal:"),
        "{shown}"
    );
    assert!(
        shown.contains("queue orders-eu on amqp://rabbit.example:5672/%2f"),
        "{shown}"
    );
}

#[test]
fn unusable_connections_say_which_setting() {
    let binding = parse_binding(&trigger(json!({})), "").unwrap();
    let cases = [
        (settings(&[]), "app setting Rabbit is not set"),
        (
            settings(&[("Rabbit", "http://rabbit:5672")]),
            "amqp:// or amqps://",
        ),
        (settings(&[("Rabbit", "not a uri")]), "not an AMQP URI"),
    ];
    for (s, expected) in cases {
        let Some(Err(e)) = resolve(&binding, &s, &HostConfig::default()) else {
            panic!("resolved with {s:?}");
        };
        assert!(e.0.contains(expected), "{e}");
        assert!(!e.0.contains("http://rabbit"), "{e}");
    }
}

#[test]
fn queue_names_resolve_their_setting_references() {
    let s = settings(&[("Env", "prod"), ("Long", &"x".repeat(300))]);
    assert_eq!(
        resolve_queue_name("orders-%Env%", &s).unwrap(),
        "orders-prod"
    );
    assert_eq!(resolve_queue_name("Orders", &s).unwrap(), "Orders");
    assert!(
        resolve_queue_name("orders-%Missing%", &s)
            .unwrap_err()
            .contains("Missing")
    );
    assert!(
        resolve_queue_name("orders-%Env", &s)
            .unwrap_err()
            .contains("no closing")
    );
    assert!(
        resolve_queue_name("%Long%", &s)
            .unwrap_err()
            .contains("at most 255")
    );
}

#[test]
fn a_failed_message_is_requeued_four_times_then_rejected() {
    let table = [
        (0, AfterFailure::Republish(1)),
        (1, AfterFailure::Republish(2)),
        (3, AfterFailure::Republish(4)),
        (4, AfterFailure::Reject),
        (9, AfterFailure::Reject),
        (u32::MAX, AfterFailure::Reject),
    ];
    for (counted, expected) in table {
        assert_eq!(after_failure(counted), expected, "after {counted}");
    }
}

#[test]
fn host_json_rabbitmq_section_has_the_extensions_default_and_refuses_what_has_no_effect() {
    let host = HostConfig::parse(&json!({}), "hostConfig").unwrap();
    assert_eq!(
        Options::of(host.extensions.kinds.get(HOST_SECTION)).prefetch_count,
        30
    );
    assert_eq!(host, HostConfig::default());
    let set = HostConfig::parse(
        &json!({"version": "2.0", "extensions": {"rabbitMQ": {"prefetchCount": 100}}}),
        "hostConfig",
    )
    .unwrap();
    assert_eq!(
        Options::of(set.extensions.kinds.get(HOST_SECTION)).prefetch_count,
        100
    );
    let written = serde_json::to_value(&set).unwrap();
    assert_eq!(
        written["extensions"]["rabbitMQ"],
        json!({"prefetchCount": 100})
    );
    for (section, path) in [
        (json!({"prefetchCount": 0}), "prefetchCount"),
        (json!({"prefetchCount": 70000}), "prefetchCount"),
        (
            json!({"connectionString": "amqp://u:p@h"}),
            "connectionString",
        ),
        (json!({"queueName": "q"}), "queueName"),
        (
            json!({"disableCertificateValidation": true}),
            "disableCertificateValidation",
        ),
        (json!({"prefetch": 1}), "prefetch"),
    ] {
        let err = HostConfig::parse(
            &json!({"version": "2.0", "extensions": {"rabbitMQ": section}}),
            "hostConfig",
        )
        .unwrap_err();
        let want = format!("hostConfig.extensions.rabbitMQ.{path}");
        assert!(
            err.errors.iter().any(|e| e.path == want),
            "{section}: {:?}",
            err.errors
        );
    }
}

#[test]
fn it_scales_on_queue_length_with_prefetch_count_per_instance() {
    let binding = parse_binding(&trigger(json!({})), "").unwrap();
    let host = HostConfig::parse(
        &json!({"version": "2.0", "extensions": {"rabbitMQ": {"prefetchCount": 50}}}),
        "hostConfig",
    )
    .unwrap();
    let rule = target_rule(&binding, &host).unwrap();
    assert_eq!(rule.metric, MetricKind::QueueLength);
    assert_eq!(rule.per_instance, 50);
    let output = parse_binding(
        &json!({"type": "rabbitMQ", "direction": "out", "name": "o", "queueName": "q",
            "connectionStringSetting": "Rabbit"}),
        "",
    )
    .unwrap();
    assert_eq!(target_rule(&output, &host), None);
}

#[test]
fn the_handler_gets_the_body_and_the_extensions_binding_data() {
    let properties = Properties {
        content_type: Some("application/json".into()),
        message_id: Some("m-1".into()),
        timestamp: Some(1_700_000_000),
        headers: serde_json::from_value(json!({"x-ms-rabbitmq-requeuecount": 2})).unwrap(),
        ..Properties::default()
    };
    let now = chrono::Utc
        .with_ymd_and_hms(2026, 11, 29, 12, 0, 0)
        .unwrap();
    let delivery = |body: &'static [u8], binary| Delivery {
        binding: "order",
        function: "ProcessOrder",
        body,
        binary,
        consumer_tag: "ctag",
        delivery_tag: 7,
        redelivered: true,
        exchange: "",
        routing_key: "orders",
        properties: &properties,
        now,
        rand_guid: "g",
    };
    let request = payload(&delivery(b"{\"id\":1}", false));
    assert_eq!(request["Data"]["order"], "{\"id\":1}");
    let metadata = &request["Metadata"];
    assert_eq!(metadata["DeliveryTag"], 7);
    assert_eq!(metadata["Redelivered"], true);
    assert_eq!(metadata["RoutingKey"], "orders");
    assert_eq!(metadata["BasicProperties"]["MessageId"], "m-1");
    assert_eq!(
        metadata["BasicProperties"]["Timestamp"],
        "2023-11-14T22:13:20Z"
    );
    assert_eq!(
        metadata["BasicProperties"]["Headers"]["x-ms-rabbitmq-requeuecount"],
        2
    );
    assert_eq!(metadata["sys"]["MethodName"], "ProcessOrder");
    let binary = payload(&delivery(&[0xff, 0x00], true));
    assert_eq!(binary["Data"]["order"], "/wA=");
}

#[test]
fn binary_and_stream_triggers_hand_over_base64_and_string_ones_text() {
    for (data_type, binary) in [
        (None, false),
        (Some("string"), false),
        (Some("binary"), true),
        (Some("stream"), true),
    ] {
        let mut raw = trigger(data_type.map_or(json!({}), |t| json!({"dataType": t})));
        // The binding's own properties, as the worker reads them.
        let properties = raw.as_object_mut().expect("an object");
        properties.remove("type");
        properties.remove("direction");
        let binding: TriggerBinding = serde_json::from_value(raw).expect("a trigger binding");
        assert_eq!(binding.reads_binary(), binary, "{data_type:?}");
    }
}

#[test]
fn the_dead_letter_queue_is_checked_and_resolved_from_settings() {
    for (dead, message) in [
        ("", "must not be empty"),
        ("orders", "must not be the trigger's own queue"),
    ] {
        let found = problems(&trigger(json!({"deadLetterQueueName": dead})));
        assert!(
            found
                .iter()
                .any(|(p, m)| p == "bindings[0].deadLetterQueueName" && m.contains(message)),
            "{dead:?}: {found:?}"
        );
    }
    let written = trigger(json!({"deadLetterQueueName": "%Dead%"}));
    let binding = parse_binding(&written, "").unwrap();
    // Written back as written.
    assert_eq!(serde_json::to_value(&binding).unwrap(), written);
    let kind = &binding;
    let settings = settings(&[
        ("Rabbit", "amqp://shoal:secret@rabbit.example:5672/%2f"),
        ("Dead", "orders-dead"),
    ]);
    let dead = dead_letter_source(kind, &settings).unwrap().unwrap();
    assert_eq!(dead.entity, "orders-dead");
    assert_eq!(dead.address(), "amqp://rabbit.example:5672/%2f");
    let without = parse_binding(&trigger(json!({})), "").unwrap();
    assert_eq!(dead_letter_source(&without, &settings).unwrap(), None);
    let missing = dead_letter_source(kind, &settings_without_dead()).unwrap_err();
    assert!(missing.contains("Dead"), "{missing}");
}

fn settings_without_dead() -> BTreeMap<String, String> {
    settings(&[("Rabbit", "amqp://shoal:secret@rabbit.example:5672/%2f")])
}

#[test]
fn a_replayed_copy_leaves_the_failure_headers_behind_and_counts_the_rejection() {
    for (name, dropped) in [
        (REQUEUE_COUNT_HEADER, true),
        ("x-death", true),
        ("x-first-death-queue", true),
        ("x-last-death-reason", true),
        (WEBHOOK_ID_HEADER, false),
        ("region", false),
    ] {
        assert_eq!(is_failure_header(name), dropped, "{name}");
    }
    assert_eq!(failed_deliveries(4), 5);
    assert_eq!(failed_deliveries(u32::MAX), u32::MAX);
}
