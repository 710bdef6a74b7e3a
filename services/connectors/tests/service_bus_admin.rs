//! The Service Bus management API client against the local Service Bus stand-in
//! (`shoal-local-bus`), filled with Microsoft's `azure-servicebus` SDK: runtime counts of a
//! queue and a subscription, a missing entity, and listen-only rights.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use shoal_connectors::{ConnectorOptions, QueueError, ServiceBusAdmin};
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::connection::{ConnectionKind, ConnectionSpec, resolve};
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_local_bus::{LocalBus, LocalBusConfig};

const CONFIG: &str = r#"{
  "UserConfig": {
    "Namespaces": [{
      "Name": "localbus",
      "Queues": [
        { "Name": "orders", "Properties": { "MaxDeliveryCount": 7, "LockDuration": "PT30S" } },
        { "Name": "empty" }
      ],
      "Topics": [{ "Name": "events", "Subscriptions": [ { "Name": "audit" } ] }]
    }]
  }
}"#;

fn spec(connection_string: &str) -> ConnectionSpec {
    let settings = std::collections::BTreeMap::from([(
        "AzureWebJobsServiceBus".to_owned(),
        connection_string.to_owned(),
    )]);
    resolve(ConnectionKind::ServiceBus, None, &settings).expect("the stand-in's string resolves")
}

fn admin(connection_string: &str) -> ServiceBusAdmin {
    ServiceBusAdmin::connect_for_app(
        &spec(connection_string),
        &ConnectorOptions::default(),
        &AppIdentities::default(),
    )
    .expect("a connection string needs no sign-in")
}

async fn fill(bus: &LocalBus, entity: &str, active: u32, scheduled: u32, dead: u32) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/service_bus_admin/fill.py");
    let env = HashMap::from([("SB_CONNECTION".to_owned(), bus.connection_string())]);
    let (active, scheduled, dead) = (active.to_string(), scheduled.to_string(), dead.to_string());
    shoal_testkit::python::run_json(
        &script,
        &[entity, &active, &scheduled, &dead],
        &env,
        Duration::from_secs(120),
    )
    .await
    .expect("the SDK fills the entity");
}

async fn start() -> LocalBus {
    LocalBus::start(LocalBusConfig::from_json(CONFIG).expect("valid configuration"))
        .await
        .expect("the stand-in starts")
}

#[tokio::test]
async fn reads_active_scheduled_and_dead_lettered_counts_and_settings() {
    let bus = start().await;
    fill(&bus, "orders", 5, 2, 1).await;
    let description = admin(&bus.connection_string())
        .entity(&EntityPath::Queue("orders".into()))
        .await
        .expect("the queue is described");
    assert_eq!(
        (
            description.counts.active,
            description.counts.scheduled,
            description.counts.dead_letter
        ),
        (5, 2, 1)
    );
    assert_eq!(description.settings.max_delivery_count, 7);
    assert_eq!(description.settings.lock_duration, Duration::from_secs(30));
    bus.shutdown().await;
}

#[tokio::test]
async fn reads_a_topic_subscription() {
    let bus = start().await;
    fill(&bus, "events", 3, 0, 0).await;
    let subscription = EntityPath::Subscription {
        topic: "events".into(),
        subscription: "audit".into(),
    };
    let description = admin(&bus.connection_string())
        .entity(&subscription)
        .await
        .expect("the subscription is described");
    assert_eq!(description.counts.active, 3);
    bus.shutdown().await;
}

#[tokio::test]
async fn a_missing_entity_is_entity_not_found() {
    let bus = start().await;
    let err = admin(&bus.connection_string())
        .entity(&EntityPath::Queue("nobody".into()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, QueueError::EntityNotFound { entity } if entity == "queue nobody"),
        "{err:?}"
    );
    bus.shutdown().await;
}

/// A listen-only key may receive but not read the entity: `Unauthorized`, telling Manage
/// rights are needed, and never quoting the key or the signature.
#[tokio::test]
async fn listen_only_rights_are_unauthorized_without_secrets() {
    let bus = start().await;
    let listen = bus.listen_only_connection_string();
    let err = admin(&listen)
        .entity(&EntityPath::Queue("orders".into()))
        .await
        .unwrap_err();
    let QueueError::Unauthorized(message) = &err else {
        panic!("expected Unauthorized, got {err:?}");
    };
    assert!(message.contains("401"), "{message}");
    assert!(message.contains("Manage"), "{message}");
    let key = listen
        .split(';')
        .find_map(|p| p.strip_prefix("SharedAccessKey="))
        .unwrap();
    assert!(!message.contains(key), "{message}");
    assert!(!message.contains("sig="), "{message}");
    bus.shutdown().await;
}

/// Nothing listening: `Unavailable`, distinct from the rights errors.
#[tokio::test]
async fn an_unreachable_namespace_is_unavailable() {
    let bus = start().await;
    let connection_string = bus.connection_string();
    bus.shutdown().await;
    let err = admin(&connection_string)
        .entity(&EntityPath::Queue("orders".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, QueueError::Unavailable(_)), "{err:?}");
}

/// An update that changes nothing makes no write; one that changes a setting writes the whole
/// description back (`If-Match: *`) and the entity reads back changed; a listen-only key's
/// update is refused as unauthorized.
#[tokio::test]
async fn updates_write_only_what_differs_and_report_a_refusal() {
    let bus = start().await;
    let admin_client = admin(&bus.connection_string());
    let orders = EntityPath::Queue("orders".into());
    let live = admin_client
        .entity(&orders)
        .await
        .expect("described")
        .settings;
    assert!(
        !admin_client
            .update_settings(&orders, &live)
            .await
            .expect("no write needed")
    );
    let mut wanted = live.clone();
    wanted.max_delivery_count = 3;
    assert!(
        admin_client
            .update_settings(&orders, &wanted)
            .await
            .expect("written")
    );
    let read_back = admin_client.entity(&orders).await.expect("described");
    assert_eq!(read_back.settings.max_delivery_count, 3);
    assert_eq!(read_back.settings, wanted);

    let mut refused = wanted.clone();
    refused.max_delivery_count = 4;
    let err = admin(&bus.listen_only_connection_string())
        .update_settings(&orders, &refused)
        .await
        .unwrap_err();
    assert!(matches!(&err, QueueError::Unauthorized(_)), "{err:?}");
    bus.shutdown().await;
}
