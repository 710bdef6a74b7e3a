//! Closing a Service Bus receiver gives back, uncounted, the messages that reached its link but
//! were never returned by a receive (see `vendor/azservicebus/PATCHED.md`): another receiver
//! gets them at once as first deliveries, not after their locks expire as second ones.

use std::time::Duration;

use shoal_connectors::{ConnectorOptions, ServiceBusNamespace};
use shoal_domain::service_bus_trigger::{EntityPath, OutgoingMessage, Settlement};
use shoal_local_bus::{LocalBus, LocalBusConfig};

/// A lock far longer than the test waits: a message left locked does not come back in time.
const CONFIG: &str = r#"{"UserConfig":{"Namespaces":[{"Name":"localbus","Queues":[
    {"Name":"orders","Properties":{"LockDuration":"PT5M"}}]}]}}"#;
const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn closing_a_receiver_releases_what_it_holds_without_counting_a_delivery() {
    let bus = LocalBus::start(LocalBusConfig::from_json(CONFIG).expect("valid configuration"))
        .await
        .expect("the stand-in starts");
    let namespace = ServiceBusNamespace::from_connection_string(
        &bus.connection_string(),
        &ConnectorOptions::default(),
    )
    .await
    .expect("connects");
    let orders = EntityPath::Queue("orders".into());
    let mut sender = namespace.sender("orders").await.expect("sender");
    let messages: Vec<OutgoingMessage> = ["a", "b", "c"]
        .iter()
        .map(|body| OutgoingMessage {
            body: body.as_bytes().to_vec(),
            ..OutgoingMessage::default()
        })
        .collect();
    sender.send(&messages).await.expect("sent");
    sender.close().await.expect("closes");

    // With prefetch the link holds credit before any receive: all three are delivered to it
    // (locked) as soon as they exist; the receive hands out one, the link keeps two.
    let mut retiring = namespace.receiver(&orders, 10).await.expect("receiver");
    let first = retiring.receive(1, WAIT).await.expect("receives");
    assert_eq!(first.len(), 1);
    retiring
        .settle(&first[0], &Settlement::Complete)
        .await
        .expect("completed");
    retiring.close().await.expect("closes");

    let mut next = namespace.receiver(&orders, 0).await.expect("receiver");
    let mut given_back = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while given_back.len() < 2 && tokio::time::Instant::now() < deadline {
        given_back.extend(
            next.receive(2, Duration::from_millis(500))
                .await
                .expect("receives"),
        );
    }
    let mut bodies: Vec<&[u8]> = given_back
        .iter()
        .map(|m| m.message.body.as_slice())
        .collect();
    bodies.sort();
    assert_eq!(
        bodies,
        [b"b".as_slice(), b"c".as_slice()],
        "the two the closed link held are available at once, not after their 5-minute locks"
    );
    for message in &given_back {
        // azservicebus reports the AMQP header's count + 1, as .NET does.
        assert_eq!(
            message.message.delivery_count, 1,
            "a released delivery is not counted"
        );
    }
}
