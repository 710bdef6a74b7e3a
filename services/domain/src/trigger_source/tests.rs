//! One resolution for every trigger kind that reads from somewhere: what each resolves to, and
//! what each says when its settings do not resolve.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::bindings::parse_bindings;
use crate::service_bus_entity::path::EntityPath;

fn trigger(binding: Value) -> Binding {
    let mut bindings = parse_bindings(&json!([binding]), "bindings").expect("a valid binding");
    bindings.remove(0)
}

fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn resolved(binding: Value, pairs: &[(&str, &str)]) -> Option<Result<TriggerSource, SourceError>> {
    resolve(&trigger(binding), &settings(pairs), &HostConfig::default())
}

const STORAGE: &str = "UseDevelopmentStorage=true";
const BUS: &str = "Endpoint=sb://bus.example.com/;SharedAccessKeyName=k;SharedAccessKey=c2VjcmV0";

#[test]
fn each_kind_resolves_to_its_source() {
    let queue = resolved(
        json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "%Q%"}),
        &[("AzureWebJobsStorage", STORAGE), ("Q", "orders")],
    )
    .unwrap()
    .unwrap();
    assert_eq!(queue.kind(), "storageQueue");
    assert_eq!(queue.describe(), "queue orders");
    assert!(queue.connection().is_some());

    let bus = resolved(
        json!({"type": "serviceBusTrigger", "direction": "in", "name": "m", "topicName": "events",
               "subscriptionName": "audit", "connection": "Bus"}),
        &[("Bus", BUS)],
    )
    .unwrap()
    .unwrap();
    let TriggerSource::ServiceBus { entity, .. } = &bus else {
        panic!("{bus:?}");
    };
    assert_eq!(
        *entity,
        EntityPath::Subscription {
            topic: "events".into(),
            subscription: "audit".into()
        }
    );
    assert_eq!(bus.describe(), "subscription audit of topic events");

    let stream = resolved(
        json!({"type": "kafkaTrigger", "direction": "in", "name": "e", "brokerList": "%B%",
               "topic": "orders", "consumerGroup": "billing"}),
        &[("B", "b:9092")],
    )
    .unwrap()
    .unwrap();
    assert_eq!(stream.kind(), "stream");
    assert_eq!(
        stream.describe(),
        "orders on b:9092 (consumer group billing)"
    );
    assert!(stream.connection().is_none());
}

#[test]
fn a_trigger_that_reads_from_nowhere_has_no_source() {
    for binding in [
        json!({"type": "httpTrigger", "direction": "in", "name": "req"}),
        json!({"type": "cosmosDBTrigger", "direction": "in", "name": "d", "databaseName": "db",
               "containerName": "c", "connection": "Cosmos"}),
    ] {
        assert_eq!(resolved(binding.clone(), &[]), None, "{binding}");
    }
}

#[test]
fn unresolved_settings_say_which_setting_and_never_a_value() {
    let cases = [
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}),
            vec![],
            "AzureWebJobsStorage",
        ),
        (
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "%Q%"}),
            vec![("AzureWebJobsStorage", STORAGE)],
            "Q",
        ),
        (
            json!({"type": "serviceBusTrigger", "direction": "in", "name": "m",
                   "queueName": "%Q%", "connection": "Bus"}),
            vec![("Bus", BUS)],
            "Q",
        ),
        (
            json!({"type": "serviceBusTrigger", "direction": "in", "name": "m",
                   "queueName": "orders", "connection": "Bus"}),
            vec![],
            "Bus",
        ),
        (
            json!({"type": "kafkaTrigger", "direction": "in", "name": "e", "brokerList": "%B%",
                   "topic": "orders"}),
            vec![],
            "B",
        ),
    ];
    for (binding, pairs, named) in cases {
        let err = resolved(binding.clone(), &pairs)
            .expect("a source is wanted")
            .expect_err("the settings do not resolve")
            .to_string();
        assert!(err.contains(named), "{binding}: {err}");
        assert!(!err.contains("c2VjcmV0"), "{err}");
    }
}
