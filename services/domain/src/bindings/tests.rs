//! Tests for `bindings.rs`, kept beside it because the binding types alone fill that file.

use super::*;
use serde_json::json;

fn errors(value: Value) -> Vec<(String, String)> {
    parse_bindings(&value, "bindings")
        .unwrap_err()
        .errors
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

fn e(path: &str, message: &str) -> (String, String) {
    (path.to_owned(), message.to_owned())
}

fn queue_trigger() -> Value {
    json!({"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders", "connection": "OrdersStorage"})
}

#[test]
fn queue_trigger_with_output_parses_and_roundtrips() {
    let written = json!([
        queue_trigger(),
        {"type": "queue", "direction": "out", "name": "$return", "queueName": "%OutQueue%"}
    ]);
    let bindings = parse_bindings(&written, "bindings").unwrap();
    assert_eq!(bindings.len(), 2);
    let trigger = &bindings[0];
    assert_eq!(
        (
            trigger.type_name(),
            trigger.direction(),
            trigger.is_trigger()
        ),
        ("queueTrigger", Direction::In, true)
    );
    assert_eq!(trigger.name().as_str(), "order");
    assert_eq!(trigger.connection(), Some("OrdersStorage"));
    assert_eq!(bindings[1].connection(), None);
    assert_eq!(serde_json::to_value(&bindings).unwrap(), written);
    let stored: Vec<Binding> = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(stored, bindings);
}

#[test]
fn every_known_type_parses() {
    let cases = [
        queue_trigger(),
        json!({"type": "serviceBusTrigger", "direction": "in", "name": "msg", "topicName": "orders", "subscriptionName": "billing", "isSessionsEnabled": true}),
        json!({"type": "httpTrigger", "direction": "in", "name": "req", "authLevel": "function", "methods": ["get", "POST"], "route": "orders/{id:int}"}),
        json!({"type": "eventHubTrigger", "direction": "in", "name": "events", "eventHubName": "telemetry", "consumerGroup": "$Default", "cardinality": "many", "connection": "Hub"}),
        json!({"type": "kafkaTrigger", "direction": "in", "name": "records", "brokerList": "%Brokers%", "topic": "orders", "consumerGroup": "g", "lagThreshold": 100, "protocol": "SASLSSL", "authenticationMode": "PLAIN", "username": "u", "password": "%KafkaPassword%", "sslCaPEM": "%KafkaCa%", "sslCertificateandKeyPEM": "%KafkaClient%", "sslKeyPassword": "%KafkaKeyPassword%"}),
        json!({"type": "cosmosDBTrigger", "direction": "in", "name": "docs", "databaseName": "db", "containerName": "items", "connection": "Cosmos", "leaseContainerName": "leases", "createLeaseContainerIfNotExists": true, "maxItemsPerInvocation": 100}),
    ];
    for trigger in cases {
        let written = json!([
            trigger,
            {"type": "serviceBus", "direction": "out", "name": "sb", "queueName": "out"},
            {"type": "kafka", "direction": "out", "name": "shipped", "brokerList": "%Brokers%", "topic": "shipped", "authenticationMode": "plain", "username": "u", "password": "%KafkaPassword%"},
            {"type": "eventHub", "direction": "out", "name": "hub", "eventHubName": "audit", "connection": "Hub"},
            {"type": "http", "direction": "out", "name": "res", "dataType": "string"}
        ]);
        let bindings =
            parse_bindings(&written, "bindings").unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(serde_json::to_value(&bindings).unwrap(), written);
    }
}

#[test]
fn service_bus_cardinality_many_means_batched() {
    let written = json!([{"type": "serviceBusTrigger", "direction": "in", "name": "msgs", "queueName": "orders", "cardinality": "many"}]);
    let bindings = parse_bindings(&written, "bindings").unwrap();
    let Some(Ok(b)) = crate::binding_kinds::service_bus::trigger(&bindings[0]) else {
        panic!("{bindings:?}")
    };
    assert!(b.batched() && !b.is_sessions_enabled);
    assert_eq!(serde_json::to_value(&bindings).unwrap(), written);
    let conflicting = json!([{"type": "serviceBusTrigger", "direction": "in", "name": "m", "queueName": "q", "cardinality": "one", "isBatched": true}]);
    assert_eq!(
        errors(conflicting),
        [e("bindings[0].cardinality", "contradicts isBatched")]
    );
}

#[test]
fn service_bus_needs_exactly_a_queue_or_a_topic_subscription() {
    let sb = |props: Value| {
        let mut binding = json!({"type": "serviceBusTrigger", "direction": "in", "name": "m"});
        binding
            .as_object_mut()
            .unwrap()
            .extend(props.as_object().unwrap().clone());
        errors(json!([binding]))
    };
    assert_eq!(
        sb(json!({})),
        [e(
            "bindings[0].queueName",
            "queueName, or topicName with subscriptionName, is required"
        )]
    );
    assert_eq!(
        sb(json!({"topicName": "t"})),
        [e(
            "bindings[0].subscriptionName",
            "is required with topicName"
        )]
    );
    assert_eq!(
        sb(json!({"queueName": "q", "subscriptionName": "s"})),
        [e(
            "bindings[0].subscriptionName",
            "is only used with topicName"
        )]
    );
    assert_eq!(
        sb(json!({"queueName": "q", "topicName": "t", "subscriptionName": "s"})),
        [e(
            "bindings[0]",
            "set either queueName or topicName, not both"
        )]
    );
    assert_eq!(
        sb(json!({"queueName": "-bad"}))[0].0,
        "bindings[0].queueName"
    );
    let output = json!([queue_trigger(), {"type": "serviceBus", "direction": "out", "name": "o"}]);
    assert_eq!(
        errors(output),
        [e(
            "bindings[1].queueName",
            "queueName or topicName is required"
        )]
    );
}

#[test]
fn unknown_and_missing_type_are_reported_with_known_types() {
    let got = errors(
        json!([queue_trigger(), {"type": "blobTrigger", "direction": "in", "name": "b"}, {"direction": "out", "name": "x"}, {"type": "QueueTrigger", "direction": "in", "name": "y"}]),
    );
    assert_eq!(
        got,
        [
            e(
                "bindings[1].type",
                "unknown binding type \"blobTrigger\"; known types: queueTrigger, queue, serviceBusTrigger, serviceBus, eventHubTrigger, eventHub, kafkaTrigger, kafka, httpTrigger, http, cosmosDBTrigger, timerTrigger, rabbitMQTrigger, rabbitMQ"
            ),
            e("bindings[2].type", "is required"),
            e(
                "bindings[3].type",
                "unknown binding type \"QueueTrigger\", did you mean \"queueTrigger\"?"
            ),
        ]
    );
}

#[test]
fn direction_must_match_the_type() {
    let cases = [
        (
            json!({"type": "queueTrigger", "direction": "out", "name": "a", "queueName": "abc"}),
            e("bindings[0].direction", "must be \"in\" for queueTrigger"),
        ),
        (
            json!({"type": "queueTrigger", "direction": "inout", "name": "a", "queueName": "abc"}),
            e("bindings[0].direction", "must be \"in\" for queueTrigger"),
        ),
        (
            json!({"type": "queueTrigger", "name": "a", "queueName": "abc"}),
            e("bindings[0].direction", "is required"),
        ),
        (
            json!({"type": "queueTrigger", "direction": 1, "name": "a", "queueName": "abc"}),
            e("bindings[0].direction", "expected a string"),
        ),
    ];
    for (binding, want) in cases {
        assert_eq!(errors(json!([binding])), [want]);
    }
    let output = json!([queue_trigger(), {"type": "queue", "direction": "in", "name": "o", "queueName": "out"}]);
    assert_eq!(
        errors(output),
        [e("bindings[1].direction", "must be \"out\" for queue")]
    );
}

#[test]
fn properties_are_validated_with_their_paths() {
    let cases = [
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "1a", "queueName": "abc"}),
            e(
                "bindings[0].name",
                "must start with a letter or '_' (or be \"$return\")",
            ),
        ),
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "a", "queueName": "Orders_Q"}),
            e(
                "bindings[0].queueName",
                "may contain only letters, digits and hyphens (or app setting references like %QueueName%)",
            ),
        ),
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "a"}),
            e("bindings[0].queueName", "is required"),
        ),
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "a", "queueName": "abc", "queuename": "x"}),
            e("bindings[0].queuename", "unknown field \"queuename\""),
        ),
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "a", "queueName": "abc", "connection": "my storage"}),
            e(
                "bindings[0].connection",
                "must name an app setting: may contain only letters, digits, '_', '.', '-' and ':'",
            ),
        ),
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "a", "queueName": "abc", "dataType": "json"}),
            e(
                "bindings[0].dataType",
                "unknown value \"json\", expected one of \"string\", \"binary\", \"stream\"",
            ),
        ),
        (
            json!({"type": "serviceBusTrigger", "direction": "in", "name": "a", "queueName": "q", "isSessionsEnabled": "yes"}),
            e("bindings[0].isSessionsEnabled", "expected a boolean"),
        ),
        (
            json!({"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get", "fetch"]}),
            e(
                "bindings[0].methods[1]",
                "must be one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS, TRACE",
            ),
        ),
        (
            json!({"type": "httpTrigger", "direction": "in", "name": "req", "authLevel": "system"}),
            e(
                "bindings[0].authLevel",
                "unknown value \"system\", expected one of \"anonymous\", \"function\", \"admin\"",
            ),
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "r", "brokerList": "b:9092", "topic": "t", "password": "hunter2"}),
            e(
                "bindings[0].password",
                "must be an app setting reference like %KafkaPassword% so the secret stays in app settings",
            ),
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "r", "brokerList": "b:9092", "topic": "t", "lagThreshold": 0}),
            e("bindings[0].lagThreshold", "must be at least 1"),
        ),
        (
            json!({"type": "kafka", "direction": "out", "name": "o", "brokerList": "b:9092", "topic": "t", "password": "hunter2"}),
            e(
                "bindings[0].password",
                "must be an app setting reference like %KafkaPassword% so the secret stays in app settings",
            ),
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "r", "brokerList": "b:9092", "topic": "t", "protocol": "ssl", "sslCaLocation": "/etc/ssl/ca.pem"}),
            e(
                "bindings[0].sslCaLocation",
                "names a file on Shoal's workers, where apps cannot place files; put the PEM text in an app setting and reference it with sslCaPEM",
            ),
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "r", "brokerList": "b:9092", "topic": "t", "protocol": "ssl", "sslKeyPEM": "-----BEGIN PRIVATE KEY-----"}),
            e(
                "bindings[0].sslKeyPEM",
                "must be an app setting reference like %KafkaClientKey% so the secret stays in app settings",
            ),
        ),
        (
            json!({"type": "kafka", "direction": "out", "name": "o", "brokerList": "b:9092", "topic": "t", "protocol": "ssl", "sslKeyPassword": "hunter2"}),
            e(
                "bindings[0].sslKeyPassword",
                "must be an app setting reference like %KafkaClientKeyPassword% so the secret stays in app settings",
            ),
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "r", "brokerList": "b:9092", "topic": "t", "protocol": "ssl", "sslCertificateandKeyPEM": "%Both%", "sslKeyPEM": "%Key%"}),
            e(
                "bindings[0].sslCertificateandKeyPEM",
                "set either sslCertificateandKeyPEM or sslCertificatePEM with sslKeyPEM, not both",
            ),
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "r", "brokerList": "b:9092", "topic": "t", "sslCaPEM": "%KafkaCa%"}),
            e(
                "bindings[0].sslCaPEM",
                "takes effect only over TLS: set protocol to ssl or saslSsl",
            ),
        ),
        (
            json!({"type": "kafka", "direction": "out", "name": "o", "brokerList": "b:9092", "topic": "t", "protocol": "saslPlaintext", "sslCertificatePEM": "%Cert%"}),
            e(
                "bindings[0].sslCertificatePEM",
                "takes effect only over TLS: set protocol to ssl or saslSsl",
            ),
        ),
        (
            json!({"type": "kafka", "direction": "out", "name": "o", "brokerList": " ", "topic": "bad topic"}),
            e("bindings[0].brokerList", "must not be empty"),
        ),
        (
            json!({"type": "eventHub", "direction": "out", "name": "o", "eventHubName": "bad name"}),
            e(
                "bindings[0].eventHubName",
                "must be 1 to 256 letters, digits, '.', '-' and '_', starting and ending with a letter or digit (or an app setting reference like %Name%)",
            ),
        ),
        (
            json!({"type": "cosmosDBTrigger", "direction": "in", "name": "d", "databaseName": "db", "containerName": "c"}),
            e("bindings[0].connection", "is required"),
        ),
        (
            json!({"type": "eventHubTrigger", "direction": "in", "name": "ev", "eventHubName": "bad name"}),
            e(
                "bindings[0].eventHubName",
                "must be 1 to 256 letters, digits, '.', '-' and '_', starting and ending with a letter or digit (or an app setting reference like %Name%)",
            ),
        ),
        (
            json!("queueTrigger"),
            e("bindings[0]", "expected an object"),
        ),
    ];
    for (binding, want) in cases {
        let got = errors(json!([binding.clone()]));
        assert!(got.contains(&want), "{binding}: {got:?}");
    }
}

#[test]
fn binding_names_must_be_unique_case_insensitively() {
    let written = json!([queue_trigger(), {"type": "queue", "direction": "out", "name": "Order", "queueName": "out"}]);
    assert_eq!(
        errors(written),
        [e(
            "bindings[1].name",
            "duplicate binding name \"Order\" (also used by bindings[0]; names are case-insensitive)"
        )]
    );
}

#[test]
fn return_name_is_only_for_outputs() {
    let written =
        json!([{"type": "queueTrigger", "direction": "in", "name": "$return", "queueName": "abc"}]);
    assert_eq!(
        errors(written),
        [e(
            "bindings[0].name",
            "\"$return\" is only allowed on output bindings"
        )]
    );
}

#[test]
fn exactly_one_trigger_is_required() {
    let output = json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out"});
    assert_eq!(
        errors(json!([])),
        [e(
            "bindings",
            "must contain exactly one trigger binding, found none"
        )]
    );
    assert_eq!(
        errors(json!([output])),
        [e(
            "bindings",
            "must contain exactly one trigger binding, found none"
        )]
    );
    let two = json!([queue_trigger(), {"type": "httpTrigger", "direction": "in", "name": "req"}]);
    assert_eq!(
        errors(two),
        [e(
            "bindings",
            "must contain exactly one trigger binding, found 2 (queueTrigger, httpTrigger)"
        )]
    );
}

#[test]
fn an_invalid_trigger_still_counts_as_the_trigger() {
    let written =
        json!([{"type": "queueTrigger", "direction": "in", "name": "a", "queueName": "AB"}]);
    let got = errors(written);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "bindings[0].queueName");
}

#[test]
fn errors_across_bindings_are_all_reported() {
    let written = json!([
        {"type": "queueTrigger", "direction": "out", "name": "a", "queueName": "abc", "foo": 1},
        {"type": "queue", "direction": "out", "name": "b"},
        5,
    ]);
    let paths: Vec<String> = errors(written).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        paths,
        [
            "bindings[0].direction",
            "bindings[0].foo",
            "bindings[1].queueName",
            "bindings[2]"
        ]
    );
}

#[test]
fn non_array_is_rejected() {
    assert_eq!(
        errors(json!({"type": "queueTrigger"})),
        [e("bindings", "expected an array")]
    );
}

#[test]
fn schema_is_a_loose_object_with_known_types() {
    let schema = serde_json::to_value(<Binding as PartialSchema>::schema()).unwrap();
    assert_eq!(schema["properties"]["type"]["enum"][7], "kafka");
    assert_eq!(schema["properties"]["type"]["enum"][10], "cosmosDBTrigger");
    assert_eq!(schema["additionalProperties"], true);
}

/// Any valid queue name may be a trigger's, as in Azure: one of 57 to 63 characters simply has
/// no poison queue (`queue_trigger::poison_queue_name`).
#[test]
fn trigger_queue_names_may_have_up_to_63_characters() {
    for len in [56, 57, 63] {
        let bindings = json!([
            {"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q".repeat(len)},
            {"type": "queue", "direction": "out", "name": "o", "queueName": "q".repeat(63)}
        ]);
        assert!(parse_bindings(&bindings, "bindings").is_ok(), "{len}");
    }
    let errs = errors(
        json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q".repeat(64)}]),
    );
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].0, "bindings[0].queueName");
}

/// The trigger's `entity` settings are checked with their paths; every problem at once.
#[test]
fn service_bus_entity_settings_are_checked_with_their_paths() {
    let sb = |extra: Value| {
        let mut binding = json!({"type": "serviceBusTrigger", "direction": "in", "name": "m"});
        for (k, v) in extra.as_object().unwrap() {
            binding[k] = v.clone();
        }
        match parse_bindings(&json!([binding]), "bindings") {
            Ok(_) => Vec::new(),
            Err(err) => err.errors.into_iter().map(|e| e.path).collect::<Vec<_>>(),
        }
    };
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"queueName": "q", "entity": {"tier": "basic", "defaultMessageTimeToLive": "14.00:00:00",
                "deadLetteringOnMessageExpiration": true, "autoDeleteOnIdle": "00:05:00",
                "maxDeliveryCount": 1, "lockDuration": "PT5M"}}),
            vec![],
        ),
        (
            json!({"queueName": "q", "entity": {"autoDeleteOnIdle": "00:04:00"}}),
            vec!["bindings[0].entity.autoDeleteOnIdle"],
        ),
        (
            json!({"queueName": "q", "entity": {"tier": "basic", "defaultMessageTimeToLive": "P15D"}}),
            vec!["bindings[0].entity.defaultMessageTimeToLive"],
        ),
        (
            json!({"queueName": "q", "entity": {"lockDuration": "00:00:01", "maxDeliveryCount": 0}}),
            vec![
                "bindings[0].entity.lockDuration",
                "bindings[0].entity.maxDeliveryCount",
            ],
        ),
        (
            json!({"queueName": "q", "entity": {"requiresSession": true}}),
            vec!["bindings[0].entity.requiresSession"],
        ),
        (
            json!({"queueName": "q", "entity": {"lockDuration": "soon"}}),
            vec!["bindings[0].entity.lockDuration"],
        ),
        (
            json!({"topicName": "t", "subscriptionName": "s", "entity": {"tier": "basic"}}),
            vec!["bindings[0].entity.tier"],
        ),
        (
            json!({"queueName": "q", "isSessionsEnabled": true, "entity": {"tier": "basic"}}),
            vec!["bindings[0].entity.tier"],
        ),
        (
            json!({"queueName": "$DeadLetterQueue"}),
            vec!["bindings[0].queueName"],
        ),
        (
            json!({"topicName": "t", "subscriptionName": "a/b"}),
            vec!["bindings[0].subscriptionName"],
        ),
        (json!({"queueName": "a//b"}), vec!["bindings[0].queueName"]),
    ];
    for (extra, want) in cases {
        assert_eq!(sb(extra.clone()), want, "{extra}");
    }
}

#[test]
fn service_bus_entity_settings_read_back_as_written() {
    let written = json!([{"type": "serviceBusTrigger", "direction": "in", "name": "m", "queueName": "q",
        "entity": {"tier": "standard", "lockDuration": "PT30S", "maxDeliveryCount": 3}}]);
    let bindings = parse_bindings(&written, "bindings").unwrap();
    assert_eq!(serde_json::to_value(&bindings).unwrap(), written);
}

#[test]
fn only_triggers_something_runs_have_a_runner() {
    assert_eq!(
        triggers_with_runner().collect::<Vec<_>>(),
        [
            "queueTrigger",
            "serviceBusTrigger",
            "eventHubTrigger",
            "kafkaTrigger",
            "httpTrigger",
            "timerTrigger",
            "rabbitMQTrigger"
        ]
    );
    let cosmos = parse_binding(
        &json!({"type": "cosmosDBTrigger", "direction": "in", "name": "d", "databaseName": "db",
                "containerName": "c", "connection": "Cosmos"}),
        "bindings[0]",
    )
    .unwrap();
    assert!(cosmos.is_trigger() && !cosmos.has_runner());
    let output = parse_binding(
        &json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out"}),
        "bindings[0]",
    )
    .unwrap();
    assert!(!output.has_runner());
}

#[test]
fn output_names_may_use_the_trigger_s_binding_data() {
    let written = json!([
        queue_trigger(),
        {"type": "queue", "direction": "out", "name": "byId", "queueName": "out-{Id}"},
        {"type": "queue", "direction": "out", "name": "byBody", "queueName": "{region}-%Env%"},
        {"type": "serviceBus", "direction": "out", "name": "sb", "topicName": "audit.{DateTime:yyyyMM}"},
        {"type": "kafka", "direction": "out", "name": "k", "brokerList": "b:9092", "topic": "t-{DequeueCount}"}
    ]);
    let bindings = parse_bindings(&written, "bindings").unwrap();
    assert_eq!(
        serde_json::to_value(&bindings).unwrap(),
        written,
        "stored as written"
    );
}

#[test]
fn output_names_with_expressions_are_checked_with_their_paths() {
    let out = |b: Value| json!([queue_trigger(), b]);
    let cases = [
        (
            out(json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out_{Id}"})),
            "bindings[1].queueName",
            "'_' cannot be part of a queue name",
        ),
        (
            out(json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out-{Id"})),
            "bindings[1].queueName",
            "has no closing '}'",
        ),
        (
            out(
                json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out-{Id.x}"}),
            ),
            "bindings[1].queueName",
            "Id is a value, not an object",
        ),
        (
            out(
                json!({"type": "serviceBus", "direction": "out", "name": "o", "queueName": "q-{DequeueCount.x}"}),
            ),
            "bindings[1].queueName",
            "DequeueCount is a value, not an object",
        ),
        (
            out(
                json!({"type": "serviceBus", "direction": "out", "name": "o", "queueName": "q {Id}"}),
            ),
            "bindings[1].queueName",
            "' ' cannot be part of a Service Bus queue or topic name",
        ),
        (
            out(
                json!({"type": "kafka", "direction": "out", "name": "o", "brokerList": "b:9092", "topic": "t/{Id}"}),
            ),
            "bindings[1].topic",
            "'/' cannot be part of a Kafka topic name",
        ),
        (
            out(
                json!({"type": "eventHub", "direction": "out", "name": "o", "eventHubName": "h-{Id}"}),
            ),
            "bindings[1].eventHubName",
            "not resolved in an eventHub output's eventHubName",
        ),
        (
            json!([
                {"type": "httpTrigger", "direction": "in", "name": "req"},
                {"type": "queue", "direction": "out", "name": "o", "queueName": "out-{Id}"}
            ]),
            "bindings[1].queueName",
            "must be written out",
        ),
        (
            json!([
                {"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "in-{Id}"}
            ]),
            "bindings[0].queueName",
            "a trigger's queue name cannot have binding expressions",
        ),
        (
            json!([
                {"type": "kafkaTrigger", "direction": "in", "name": "m", "brokerList": "b:9092", "topic": "t-{Id}"}
            ]),
            "bindings[0].topic",
            "must be 1 to 249",
        ),
    ];
    for (written, path, want) in cases {
        let found = errors(written.clone());
        assert!(
            found.iter().any(|(p, m)| p == path && m.contains(want)),
            "{want} at {path} for {written}: {found:?}"
        );
    }
}

#[test]
fn the_path_of_an_output_name_counts_invalid_bindings_before_it() {
    // The first output is invalid and not parsed; the second's problem keeps its own index.
    let written = json!([
        queue_trigger(),
        {"type": "queue", "direction": "out", "name": "a"},
        {"type": "queue", "direction": "out", "name": "b", "queueName": "x-{PopReceipt.y}"}
    ]);
    let paths: Vec<String> = errors(written).into_iter().map(|(p, _)| p).collect();
    assert!(
        paths.contains(&"bindings[2].queueName".to_owned()),
        "{paths:?}"
    );
}
