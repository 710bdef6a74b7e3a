use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::bindings::{Cardinality, parse_bindings};

fn trigger(value: serde_json::Value) -> Binding {
    parse_bindings(&json!([value]), "bindings")
        .expect("test binding is valid")
        .remove(0)
}

fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn host(value: serde_json::Value) -> HostConfig {
    HostConfig::parse(&value, "hostConfig").expect("test hostConfig is valid")
}

fn kafka(extra: serde_json::Value) -> Binding {
    let mut b = json!({"type": "kafkaTrigger", "direction": "in", "name": "event",
        "brokerList": "%Brokers%", "topic": "orders"});
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    trigger(b)
}

const EH: &str = "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=listen;SharedAccessKey=c2VjcmV0;EntityPath=orders";

#[test]
fn a_kafka_trigger_resolves_its_settings_like_azure() {
    let s = settings(&[
        ("Brokers", "broker-1:9092,broker-2:9092"),
        ("KafkaUser", "alice"),
        ("KafkaPassword", "s3cret"),
        ("Group", "billing"),
    ]);
    let source = stream_source(
        &kafka(json!({"consumerGroup": "%Group%", "protocol": "SaslSsl",
            "authenticationMode": "ScramSha512", "username": "KafkaUser",
            "password": "%KafkaPassword%", "cardinality": "many"})),
        &s,
        &HostConfig::default(),
    )
    .unwrap();
    assert_eq!(source.kind, StreamKind::Kafka);
    assert_eq!(source.topic, "orders");
    assert_eq!(source.consumer_group, "billing");
    assert_eq!(
        source.properties,
        [
            ("bootstrap.servers", "broker-1:9092,broker-2:9092"),
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanisms", "SCRAM-SHA-512"),
            // A value that names an app setting becomes its value (ResolveSecureSetting).
            ("sasl.username", "alice"),
            ("sasl.password", "s3cret"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    assert_eq!(source.cardinality, Cardinality::Many);
    assert_eq!(source.max_batch_size, DEFAULT_KAFKA_MAX_BATCH_SIZE);
    assert_eq!(source.start_from, StartFrom::Earliest);
    assert_eq!(source.checkpoint_every, 1);
    let debug = format!("{source:?}");
    assert!(!debug.contains("s3cret"), "{debug}");
    assert!(source.describe().contains("broker-1:9092"));
}

#[test]
fn a_kafka_trigger_without_a_group_reads_as_default_one_event_at_a_time() {
    let source = stream_source(
        &kafka(json!({})),
        &settings(&[("Brokers", "127.0.0.1:9092")]),
        &HostConfig::default(),
    )
    .unwrap();
    assert_eq!(source.consumer_group, "$Default");
    assert_eq!(source.cardinality, Cardinality::One);
    assert_eq!(source.property("security.protocol"), None);
}

const CA_1: &str = "-----BEGIN CERTIFICATE-----\nMIIBca1\n-----END CERTIFICATE-----";
const CA_2: &str = "-----BEGIN CERTIFICATE-----\nMIIBca2\n-----END CERTIFICATE-----";
const CLIENT: &str = "-----BEGIN CERTIFICATE-----\nMIIBcl\n-----END CERTIFICATE-----";
const KEY: &str = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQ\n-----END EC PRIVATE KEY-----";

#[test]
fn tls_material_becomes_librdkafka_pem_properties_as_the_extension_sets_them() {
    let bundle = format!("Bag Attributes: ignored\n{CA_1}\n{CA_2}\n");
    let both = format!("{KEY}\n{CLIENT}\n");
    let s = settings(&[
        ("Brokers", "b:9093"),
        ("KafkaCa", bundle.as_str()),
        ("KafkaClient", both.as_str()),
        ("KeyPassword", "k3y-pass"),
    ]);
    let source = stream_source(
        &kafka(json!({"protocol": "ssl", "sslCaPEM": "KafkaCa",
            "sslCertificateandKeyPEM": "%KafkaClient%", "sslKeyPassword": "%KeyPassword%"})),
        &s,
        &HostConfig::default(),
    )
    .unwrap();
    let expected_ca = format!("{CA_1}\n{CA_2}");
    assert_eq!(
        source.properties,
        [
            ("bootstrap.servers", "b:9093"),
            ("security.protocol", "SSL"),
            // Every certificate of the bundle and nothing else (`ExtractAllCertificates`).
            ("ssl.ca.pem", expected_ca.as_str()),
            // The combined text split into its certificate and its key (`PEMExtractor`).
            ("ssl.certificate.pem", CLIENT),
            ("ssl.key.pem", KEY),
            ("ssl.key.password", "k3y-pass"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    let debug = format!("{source:?}");
    assert!(
        !debug.contains("MHcCAQ") && !debug.contains("k3y-pass"),
        "{debug}"
    );

    let literal = stream_source(
        &kafka(json!({"protocol": "ssl", "sslCaPEM": CA_1,
            "sslCertificatePEM": "%Cert%", "sslKeyPEM": "%Key%"})),
        &settings(&[("Brokers", "b:9093"), ("Cert", CLIENT), ("Key", KEY)]),
        &HostConfig::default(),
    )
    .unwrap();
    let pem: Vec<(&str, &str)> = literal
        .properties
        .iter()
        .filter(|(k, _)| k.starts_with("ssl."))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        pem,
        [
            ("ssl.ca.pem", CA_1),
            ("ssl.certificate.pem", CLIENT),
            ("ssl.key.pem", KEY)
        ]
    );
}

#[test]
fn tls_settings_without_pem_say_which_field_never_the_text() {
    let cases = [
        (
            json!({"protocol": "ssl", "sslCaPEM": "%KafkaCa%"}),
            ("KafkaCa", "not a certificate"),
            "sslCaPEM holds no PEM certificate",
        ),
        (
            json!({"protocol": "ssl", "sslCertificatePEM": "%Cert%", "sslKeyPEM": "%Key%"}),
            ("Cert", CLIENT),
            "sslKeyPEM: app setting Key is not set",
        ),
        (
            json!({"protocol": "ssl", "sslCertificateandKeyPEM": "%Both%"}),
            ("Both", CLIENT),
            "sslCertificateandKeyPEM holds no PEM private key",
        ),
    ];
    for (extra, (name, value), expected) in cases {
        let s = settings(&[("Brokers", "b:1"), (name, value)]);
        let err = stream_source(&kafka(extra), &s, &HostConfig::default()).unwrap_err();
        assert_eq!(err, expected);
        assert!(!err.contains("MIIB"), "{err}");
    }
}

#[test]
fn unresolvable_or_unsupported_kafka_settings_say_which() {
    let cases = [
        (
            kafka(json!({})),
            settings(&[]),
            "brokerList: app setting Brokers is not set",
        ),
        (
            kafka(json!({"topic": "%T%"})),
            settings(&[("Brokers", "b:1"), ("T", "not a topic")]),
            "topic: must resolve",
        ),
        (
            kafka(json!({"authenticationMode": "gssapi"})),
            settings(&[("Brokers", "b:1")]),
            "authenticationMode gssapi (Kerberos) is not supported",
        ),
        (
            kafka(json!({"authenticationMode": "OAuthBearer"})),
            settings(&[("Brokers", "b:1")]),
            "authenticationMode oauthBearer is not supported yet",
        ),
        (
            kafka(json!({"password": "%Missing%"})),
            settings(&[("Brokers", "b:1")]),
            "password: app setting Missing is not set",
        ),
    ];
    for (binding, s, expected) in cases {
        let err = stream_source(&binding, &s, &HostConfig::default()).unwrap_err();
        assert!(err.starts_with(expected), "{err}");
    }
}

#[test]
fn an_event_hub_is_read_through_the_namespace_kafka_endpoint() {
    let binding = trigger(
        json!({"type": "eventHubTrigger", "direction": "in", "name": "e",
        "connection": "Hub"}),
    );
    let h = host(json!({"extensions": {"eventHubs": {
        "maxEventBatchSize": 50, "minEventBatchSize": 10, "maxWaitTime": "00:00:05",
        "batchCheckpointFrequency": 3, "prefetchCount": 500,
        "initialOffsetOptions": {"type": "fromEnd"}}}}));
    let source = stream_source(&binding, &settings(&[("Hub", EH)]), &h).unwrap();
    assert_eq!(source.kind, StreamKind::EventHubs);
    assert_eq!(source.topic, "orders");
    assert_eq!(source.consumer_group, "$Default");
    assert_eq!(
        source.properties,
        [
            ("bootstrap.servers", "contoso.servicebus.windows.net:9093"),
            ("security.protocol", "SASL_SSL"),
            ("sasl.mechanisms", "PLAIN"),
            ("sasl.username", "$ConnectionString"),
            ("sasl.password", EH),
            ("queued.min.messages", "500"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    assert_eq!(source.max_batch_size, 50);
    assert_eq!(source.min_batch_size, 10);
    assert_eq!(source.max_wait, Duration::from_secs(5));
    assert_eq!(source.checkpoint_every, 3);
    assert_eq!(source.start_from, StartFrom::Latest);
    assert!(!format!("{source:?}").contains("c2VjcmV0"));
}

#[test]
fn the_event_hubs_emulator_is_reached_without_tls() {
    let binding = trigger(
        json!({"type": "eventHubTrigger", "direction": "in", "name": "e",
        "eventHubName": "orders"}),
    );
    let cases = [
        (
            "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
            "localhost:9092",
        ),
        (
            "Endpoint=sb://127.0.0.1:19092;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
            "127.0.0.1:19092",
        ),
    ];
    for (connection, servers) in cases {
        // No `connection`: AzureWebJobsEventHub, then EventHub.
        let s = settings(&[("AzureWebJobsEventHub", connection)]);
        let source = stream_source(&binding, &s, &HostConfig::default()).unwrap();
        assert_eq!(source.property("bootstrap.servers"), Some(servers));
        assert_eq!(source.property("security.protocol"), Some("SASL_PLAINTEXT"));
        assert_eq!(source.cardinality, Cardinality::One);
        assert_eq!(source.max_batch_size, 100);
    }
}

#[test]
fn event_hub_names_and_connections_that_do_not_fit_say_why() {
    let eh = |extra: serde_json::Value| {
        let mut b =
            json!({"type": "eventHubTrigger", "direction": "in", "name": "e", "connection": "Hub"});
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        trigger(b)
    };
    let no_path =
        "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v";
    let cases = [
        (
            eh(json!({"eventHubName": "other"})),
            settings(&[("Hub", EH)]),
            HostConfig::default(),
            "eventHubName \"other\" differs",
        ),
        (
            eh(json!({})),
            settings(&[("Hub", no_path)]),
            HostConfig::default(),
            "no event hub named",
        ),
        (
            eh(json!({})),
            settings(&[(
                "Hub__fullyQualifiedNamespace",
                "contoso.servicebus.windows.net",
            )]),
            HostConfig::default(),
            "connection Hub is identity-based",
        ),
        (
            eh(json!({})),
            settings(&[]),
            HostConfig::default(),
            "no connection settings found",
        ),
        (
            eh(json!({})),
            settings(&[("Hub", EH)]),
            host(
                json!({"extensions": {"eventHubs": {"initialOffsetOptions": {"type": "fromEnqueuedTime", "enqueuedTimeUtc": "2026-01-01T00:00:00Z"}}}}),
            ),
            "hostConfig.extensions.eventHubs.initialOffsetOptions.type fromEnqueuedTime",
        ),
    ];
    for (binding, s, h, expected) in cases {
        let err = stream_source(&binding, &s, &h).unwrap_err();
        assert!(err.starts_with(expected), "{err}");
    }
}

#[test]
fn references_resolve_anywhere_in_a_value() {
    let s = settings(&[("Host", "kafka"), ("Port", "9092"), ("Whole", "w:1")]);
    let cases = [
        ("%Host%:%Port%", Ok("kafka:9092")),
        ("Whole", Ok("w:1")),
        ("plain:1", Ok("plain:1")),
        ("50%", Ok("50%")),
        ("%%", Ok("%%")),
        ("%Nope%", Err("app setting Nope is not set")),
    ];
    for (value, expected) in cases {
        assert_eq!(
            resolve_secure(value, &s).as_deref(),
            expected.map_err(str::to_owned).as_deref(),
            "{value}"
        );
    }
}

#[test]
fn output_bindings_resolve_to_a_topic_and_a_producer() {
    let output = |v: serde_json::Value| crate::bindings::parse_binding(&v, "b").unwrap();
    let kafka_out = output(json!({"type": "kafka", "direction": "out", "name": "out",
        "brokerList": "%Brokers%", "topic": "%Shipped%", "protocol": "saslPlaintext",
        "authenticationMode": "plain", "username": "u", "password": "%Pw%"}));
    let s = settings(&[("Brokers", "b:9092"), ("Shipped", "shipped"), ("Pw", "pw")]);
    let target = stream_output(&kafka_out, &s).unwrap();
    assert_eq!(target.topic, "shipped");
    assert_eq!(
        target.properties[0],
        ("bootstrap.servers".into(), "b:9092".into())
    );
    assert!(
        target
            .properties
            .contains(&("sasl.password".into(), "pw".into()))
    );
    assert!(!format!("{target:?}").contains("\"pw\""));

    let hub_out = output(
        json!({"type": "eventHub", "direction": "out", "name": "out",
        "connection": "Hub"}),
    );
    let target = stream_output(&hub_out, &settings(&[("Hub", EH)])).unwrap();
    assert_eq!(target.topic, "orders");
    assert_eq!(
        target.properties[0],
        (
            "bootstrap.servers".into(),
            "contoso.servicebus.windows.net:9093".into()
        )
    );
    let err = stream_output(&kafka_out, &settings(&[])).unwrap_err();
    assert!(
        err.starts_with("brokerList: app setting Brokers is not set"),
        "{err}"
    );
}
