//! Table tests for the sign-in of stream bindings, asserted on the JSON the API answers with,
//! so a secret can be looked for exactly where a tenant would see it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::connection::outbound::AppIdentities;
use crate::diagnostics::Check;
use crate::diagnostics::sign_in::{ConnectionSignIn, SignInContext, sign_ins};
use crate::functions::FunctionSpec;

const PASSWORD: &str = "s3cret-kafka-password";
const EH_KEY: &str = "c2VjcmV0LWV2ZW50LWh1Yi1rZXk=";
const CLIENT_CERTIFICATE: &str = "-----BEGIN CERTIFICATE-----\nMIIBcl\n-----END CERTIFICATE-----";
const CLIENT_KEY: &str = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQ\n-----END EC PRIVATE KEY-----";

fn event_hub_connection() -> String {
    format!(
        "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=listen;SharedAccessKey={EH_KEY};EntityPath=orders"
    )
}

fn settings() -> BTreeMap<String, String> {
    [
        ("Brokers", "broker-1:9092, broker-2:9092".to_owned()),
        ("KafkaUser", "alice".to_owned()),
        ("KafkaPassword", PASSWORD.to_owned()),
        ("Hub", event_hub_connection()),
        ("KafkaCert", CLIENT_CERTIFICATE.to_owned()),
        ("KafkaKey", CLIENT_KEY.to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// What `spec` signs in as under [`settings`] and no identities.
fn sign_ins_of(spec: &FunctionSpec) -> (Vec<ConnectionSignIn>, Vec<Check>) {
    let settings = settings();
    let identities = AppIdentities::default();
    let context = SignInContext {
        settings: &settings,
        identities: &identities,
        issuer: None,
        token_errors: &[],
    };
    sign_ins("stream", spec, &context)
}

/// The `connections` entries of a function with one binding, as JSON.
fn connections(binding: Value) -> Vec<Value> {
    // A function needs a trigger; an output's has none to report.
    let bindings = if binding["direction"] == "out" {
        json!([{"type": "httpTrigger", "direction": "in", "name": "req"}, binding])
    } else {
        json!([binding])
    };
    let spec = FunctionSpec::parse("stream", &json!({ "bindings": bindings }))
        .expect("test function is valid")
        .spec;
    let (sign_ins, checks) = sign_ins_of(&spec);
    assert!(checks.is_empty(), "{checks:?}");
    let answer = serde_json::to_string(&sign_ins).unwrap();
    for secret in [PASSWORD, EH_KEY, "SharedAccessKey", "MHcCAQ", "MIIBcl"] {
        assert!(!answer.contains(secret), "{secret} in {answer}");
    }
    serde_json::from_str(&answer).unwrap()
}

fn kafka_trigger(extra: Value) -> Value {
    let mut binding = json!({"type": "kafkaTrigger", "direction": "in", "name": "event",
        "brokerList": "%Brokers%", "topic": "orders"});
    for (k, v) in extra.as_object().unwrap() {
        binding[k] = v.clone();
    }
    binding
}

#[test]
fn each_stream_binding_says_how_it_signs_in() {
    let cases = [
        (
            "kafka plaintext, the protocol librdkafka defaults to",
            kafka_trigger(json!({})),
            json!({"function": "stream", "binding": "event", "connection": "%Brokers%",
                "signsInAs": "anonymous", "protocol": "PLAINTEXT",
                "brokers": ["broker-1:9092", "broker-2:9092"]}),
        ),
        (
            "kafka SASL_SSL PLAIN, the user name from a %Setting%",
            kafka_trigger(json!({"protocol": "saslSsl", "authenticationMode": "plain",
                "username": "%KafkaUser%", "password": "%KafkaPassword%"})),
            json!({"function": "stream", "binding": "event", "connection": "%Brokers%",
                "signsInAs": "password", "protocol": "SASL_SSL", "mechanism": "PLAIN",
                "username": "alice", "brokers": ["broker-1:9092", "broker-2:9092"]}),
        ),
        (
            "kafka output with SCRAM, the user name naming a setting",
            json!({"type": "kafka", "direction": "out", "name": "out", "brokerList": "Brokers",
                "topic": "shipped", "protocol": "SaslPlaintext",
                "authenticationMode": "ScramSha512", "username": "KafkaUser",
                "password": "%KafkaPassword%"}),
            json!({"function": "stream", "binding": "out", "connection": "Brokers",
                "signsInAs": "password", "protocol": "SASL_PLAINTEXT",
                "mechanism": "SCRAM-SHA-512", "username": "alice",
                "brokers": ["broker-1:9092", "broker-2:9092"]}),
        ),
        (
            "kafka SCRAM-SHA-256",
            kafka_trigger(
                json!({"protocol": "saslSsl", "authenticationMode": "scramSha256",
                "username": "KafkaUser", "password": "%KafkaPassword%"}),
            ),
            json!({"function": "stream", "binding": "event", "connection": "%Brokers%",
                "signsInAs": "password", "protocol": "SASL_SSL", "mechanism": "SCRAM-SHA-256",
                "username": "alice", "brokers": ["broker-1:9092", "broker-2:9092"]}),
        ),
        (
            "kafka SSL with a client certificate",
            kafka_trigger(
                json!({"protocol": "ssl", "sslCertificatePEM": "%KafkaCert%",
                "sslKeyPEM": "%KafkaKey%"}),
            ),
            json!({"function": "stream", "binding": "event", "connection": "%Brokers%",
                "signsInAs": "clientCertificate", "protocol": "SSL",
                "brokers": ["broker-1:9092", "broker-2:9092"]}),
        ),
        (
            "an event hub trigger signs in with its connection string as $ConnectionString",
            json!({"type": "eventHubTrigger", "direction": "in", "name": "order",
                "connection": "Hub"}),
            json!({"function": "stream", "binding": "order", "connection": "Hub",
                "signsInAs": "connectionString", "protocol": "SASL_SSL", "mechanism": "PLAIN",
                "username": "$ConnectionString",
                "brokers": ["contoso.servicebus.windows.net:9093"]}),
        ),
        (
            "an event hub output too",
            json!({"type": "eventHub", "direction": "out", "name": "out", "connection": "Hub"}),
            json!({"function": "stream", "binding": "out", "connection": "Hub",
                "signsInAs": "connectionString", "protocol": "SASL_SSL", "mechanism": "PLAIN",
                "username": "$ConnectionString",
                "brokers": ["contoso.servicebus.windows.net:9093"]}),
        ),
    ];
    for (case, binding, expected) in cases {
        assert_eq!(connections(binding), [expected], "{case}");
    }
}

#[test]
fn a_mechanism_without_a_sasl_protocol_is_not_reported() {
    // librdkafka ignores `sasl.mechanisms` (and the user) unless the protocol is SASL_*.
    let entries = connections(kafka_trigger(json!({"protocol": "ssl",
        "authenticationMode": "plain", "username": "KafkaUser",
        "password": "%KafkaPassword%"})));
    assert_eq!(entries[0]["signsInAs"], "anonymous");
    assert_eq!(entries[0]["protocol"], "SSL");
    assert_eq!(entries[0].get("mechanism"), None);
    assert_eq!(entries[0].get("username"), None);
}

#[test]
fn a_stream_connection_that_does_not_resolve_has_no_entry() {
    // The `stream` check of `check_function` already says what is missing, as a queue
    // connection that does not resolve has only its `connection` check.
    let entries = connections(json!({"type": "eventHubTrigger", "direction": "in",
        "name": "order", "connection": "Missing"}));
    assert!(entries.is_empty(), "{entries:?}");
}

#[test]
fn a_sasl_protocol_without_a_mechanism_falls_back_to_kerberos_and_says_so() {
    let spec = FunctionSpec::parse(
        "stream",
        &json!({"bindings": [kafka_trigger(json!({"protocol": "saslSsl",
            "username": "KafkaUser", "password": "%KafkaPassword%"}))]}),
    )
    .unwrap()
    .spec;
    let (sign_ins, checks) = sign_ins_of(&spec);
    let entry = serde_json::to_value(&sign_ins).unwrap()[0].clone();
    assert_eq!(entry["mechanism"], "GSSAPI", "{entry}");
    assert!(
        entry["error"]
            .as_str()
            .unwrap()
            .contains("authenticationMode"),
        "{entry}"
    );
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0].subject, "stream");
    assert_eq!(checks[0].status, crate::diagnostics::CheckStatus::Error);
}
