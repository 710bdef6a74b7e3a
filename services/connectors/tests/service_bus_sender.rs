//! The Service Bus sender against the local Service Bus stand-in on a multi-threaded runtime,
//! where the client library alone stalls within a few dozen sends (see `src/service_bus/sender.rs`).

use std::time::Duration;

use shoal_connectors::{ConnectorOptions, ServiceBusNamespace};
use shoal_domain::service_bus_trigger::{EntityPath, OutgoingMessage};
use shoal_local_bus::{LocalBus, LocalBusConfig};

const CONFIG: &str =
    r#"{"UserConfig":{"Namespaces":[{"Name":"localbus","Queues":[{"Name":"orders"}]}]}}"#;
const MESSAGES: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_sends_in_a_row_are_each_settled_on_a_multi_threaded_runtime() {
    let bus = LocalBus::start(LocalBusConfig::from_json(CONFIG).expect("valid configuration"))
        .await
        .expect("the stand-in starts");
    let namespace = ServiceBusNamespace::from_connection_string(
        &bus.connection_string(),
        &ConnectorOptions::default(),
    )
    .await
    .expect("connects");
    let mut sender = namespace.sender("orders").await.expect("sender");
    for i in 0..MESSAGES {
        let message = OutgoingMessage {
            body: format!("m{i}").into_bytes(),
            ..OutgoingMessage::default()
        };
        tokio::time::timeout(Duration::from_secs(10), sender.send(&[message]))
            .await
            .unwrap_or_else(|_| panic!("message {i} was not settled within 10 s"))
            .expect("sent");
    }
    sender.close().await.expect("closes");

    let mut receiver = namespace
        .receiver(&EntityPath::Queue("orders".into()), 0)
        .await
        .expect("receiver");
    let mut bodies = Vec::new();
    while bodies.len() < MESSAGES {
        let received = receiver
            .receive(100, Duration::from_secs(2))
            .await
            .expect("receives");
        assert!(
            !received.is_empty(),
            "only {} of {MESSAGES} arrived",
            bodies.len()
        );
        for message in received {
            bodies.push(String::from_utf8(message.message.body.clone()).expect("text"));
            receiver
                .settle(
                    &message,
                    &shoal_domain::service_bus_trigger::Settlement::Complete,
                )
                .await
                .expect("completed");
        }
    }
    let expected: Vec<String> = (0..MESSAGES).map(|i| format!("m{i}")).collect();
    assert_eq!(bodies, expected, "every message once, in order");
    bus.shutdown().await;
}
