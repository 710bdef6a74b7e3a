//! The stand-in against Rust clients: the `azservicebus` crate Shoal's trigger is built on, and
//! a plain HTTP request to the ATOM API as the scaler makes it.

use std::time::Duration;

use azservicebus::core::BasicRetryPolicy;
use azservicebus::{
    ServiceBusClient, ServiceBusClientOptions, ServiceBusReceiverOptions, ServiceBusSender,
    ServiceBusSenderOptions,
};
use shoal_local_bus::{LocalBus, LocalBusConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CONFIG: &str =
    r#"{"UserConfig":{"Namespaces":[{"Name":"localbus","Queues":[{"Name":"orders"}]}]}}"#;

async fn start() -> LocalBus {
    let config = LocalBusConfig::from_json(CONFIG).expect("valid configuration");
    LocalBus::start(config).await.expect("the stand-in starts")
}

/// azservicebus 0.25 drops the port of the connection string's endpoint and dials 5672.
async fn start_on_standard_port() -> LocalBus {
    let config = LocalBusConfig::from_json(CONFIG).expect("valid configuration");
    LocalBus::start_on_standard_port(config)
        .await
        .expect("the stand-in starts on a loopback address's port 5672")
}

/// A client of the stand-in and a sender to `orders`. `unsecured()`: plain AMQP, what
/// `UseDevelopmentEmulator=true` means to the other SDKs.
async fn client_and_sender(
    bus: &LocalBus,
) -> (ServiceBusClient<BasicRetryPolicy>, ServiceBusSender) {
    let mut client = ServiceBusClient::unsecured()
        .new_from_connection_string(bus.connection_string(), ServiceBusClientOptions::default())
        .await
        .expect("connects");
    let sender = client
        .create_sender("orders", ServiceBusSenderOptions::default())
        .await
        .expect("sender");
    (client, sender)
}

#[tokio::test]
async fn azservicebus_sends_receives_renews_abandons_and_completes() {
    let bus = start_on_standard_port().await;
    assert_eq!(bus.port(), 5672);
    let (mut client, mut sender) = client_and_sender(&bus).await;
    sender.send_message("from rust").await.expect("sent");
    let mut receiver = client
        .create_receiver_for_queue("orders", ServiceBusReceiverOptions::default())
        .await
        .expect("receiver");

    let mut first = receiver
        .receive_message_with_max_wait_time(Some(Duration::from_secs(5)))
        .await
        .expect("receive")
        .expect("a message");
    assert_eq!(first.body().expect("a data body"), b"from rust");
    // azservicebus reports the AMQP header's count + 1, as .NET does (`delivery_count`).
    assert_eq!(first.delivery_count(), Some(1));
    let locked_until = first
        .locked_until()
        .expect("a peek-locked message has locked-until");
    receiver
        .renew_message_lock(&mut first)
        .await
        .expect("renewed with azservicebus's lock token");
    assert!(
        first
            .locked_until()
            .is_some_and(|renewed| renewed >= locked_until)
    );
    receiver
        .abandon_message(&first, None)
        .await
        .expect("abandoned");

    let second = receiver
        .receive_message_with_max_wait_time(Some(Duration::from_secs(5)))
        .await
        .expect("receive")
        .expect("the abandoned message again");
    assert_eq!(second.delivery_count(), Some(2));
    receiver.complete_message(&second).await.expect("completed");
    let none = receiver
        .receive_message_with_max_wait_time(Some(Duration::from_secs(1)))
        .await
        .expect("receive");
    assert!(none.is_none(), "completed message came back");

    receiver.dispose().await.expect("receiver closes");
    sender.dispose().await.expect("sender closes");
    client.dispose().await.expect("client closes");
    bus.shutdown().await;
}

/// One HTTP/1.1 GET over a fresh connection; returns the status and body.
async fn get(bus: &LocalBus, path: &str, authorization: &str) -> (u16, String) {
    let host = bus
        .management_url()
        .host_str()
        .unwrap_or("127.0.0.1")
        .to_owned();
    let mut stream = tokio::net::TcpStream::connect((host.as_str(), bus.port()))
        .await
        .expect("connects");
    let request = format!(
        "GET {path}?api-version=2021-05 HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {authorization}\r\nConnection: close\r\n\r\n",
        bus.port()
    );
    stream
        .write_all(request.as_bytes())
        .await
        .expect("request written");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response read");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

#[tokio::test]
async fn atom_api_answers_plain_http_with_counts_and_refuses_listen_only() {
    let bus = start().await;
    let config = LocalBusConfig::from_json(CONFIG).expect("valid configuration");
    let manage = config.manage_policy().expect("a manage policy").clone();
    let listen = config
        .listen_only_policy()
        .expect("a listen policy")
        .clone();
    let expires = chrono::Utc::now() + chrono::Duration::hours(1);
    let audience = bus.management_url().to_string();
    assert!(audience.starts_with("http://127.0.0.1:"), "{audience}");

    let (status, body) = get(
        &bus,
        "/orders",
        &shoal_local_bus::sas::sign(&audience, &manage, expires),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<QueueDescription"), "{body}");
    assert!(
        body.contains("<d2p1:ActiveMessageCount>0</d2p1:ActiveMessageCount>"),
        "{body}"
    );

    let (status, body) = get(
        &bus,
        "/orders",
        &shoal_local_bus::sas::sign(&audience, &listen, expires),
    )
    .await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = get(
        &bus,
        "/orders",
        "SharedAccessSignature sr=x&sig=y&se=1&skn=z",
    )
    .await;
    assert_eq!(status, 401);
    let (status, body) = get(
        &bus,
        "/missing",
        &shoal_local_bus::sas::sign(&audience, &manage, expires),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    bus.shutdown().await;
}

/// Sends, each settled by the stand-in at once, on a multi-threaded runtime: the stand-in's
/// disposition can reach the client's session (on another thread) before the sending task has
/// recorded the delivery as unsettled. `fe2o3-amqp` 0.14.1 recorded it only after handing the
/// transfer over, dropped such an outcome and waited forever (within the first few dozen
/// sends); the vendored copy records it first (`vendor/fe2o3-amqp/PATCHED.md`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn azservicebus_sends_hundreds_in_a_row_on_many_threads() {
    let bus = start_on_standard_port().await;
    let (client, mut sender) = client_and_sender(&bus).await;
    for i in 0..300 {
        tokio::time::timeout(Duration::from_secs(5), sender.send_message(format!("m{i}")))
            .await
            .unwrap_or_else(|_| panic!("message {i} was not settled within 5 s"))
            .expect("sent");
    }
    sender.dispose().await.expect("sender closes");
    client.dispose().await.expect("client closes");
    bus.shutdown().await;
}

/// Requests to `$management` (and `$cbs`: every receiver's and sender's open puts a token
/// there) are sends too, each accepted by the stand-in as soon as it arrives; the same race
/// made a request wait forever for the acceptance, which is how opening a receiver hung until
/// Shoal's 30 s bound. Without the fix this stalled within the first few requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn azservicebus_management_requests_in_a_row_on_many_threads() {
    let bus = start_on_standard_port().await;
    let (mut client, sender) = client_and_sender(&bus).await;
    let mut receiver = client
        .create_receiver_for_queue("orders", ServiceBusReceiverOptions::default())
        .await
        .expect("receiver");
    for i in 0..1000 {
        tokio::time::timeout(Duration::from_secs(5), receiver.peek_messages(1, None))
            .await
            .unwrap_or_else(|_| panic!("management request {i} got no answer within 5 s"))
            .expect("peeked");
    }
    receiver.dispose().await.expect("receiver closes");
    sender.dispose().await.expect("sender closes");
    client.dispose().await.expect("client closes");
    bus.shutdown().await;
}

/// Opening receivers over and over on one connection, each open putting two tokens on `$cbs`
/// (the entity's and its `$management` node's) and attaching three links.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn azservicebus_opens_receivers_in_a_row_on_many_threads() {
    let bus = start_on_standard_port().await;
    let (mut client, sender) = client_and_sender(&bus).await;
    for i in 0..60 {
        let receiver = tokio::time::timeout(
            Duration::from_secs(5),
            client.create_receiver_for_queue("orders", ServiceBusReceiverOptions::default()),
        )
        .await
        .unwrap_or_else(|_| panic!("receiver {i} was not opened within 5 s"))
        .expect("receiver");
        receiver.dispose().await.expect("receiver closes");
    }
    sender.dispose().await.expect("sender closes");
    client.dispose().await.expect("client closes");
    bus.shutdown().await;
}

/// A response waits for the client's credit on its reply link, as Service Bus's does: a client
/// whose request overtakes its reply link's first flow (fe2o3-amqp's management and CBS links
/// send them separately) would otherwise drop the transfer and wait for an answer that never
/// comes.
#[tokio::test]
async fn a_cbs_response_waits_for_the_reply_links_credit() {
    use fe2o3_amqp::link::receiver::CreditMode;
    use fe2o3_amqp::types::messaging::{ApplicationProperties, Body, Message, Properties};
    use fe2o3_amqp::types::primitives::{SimpleValue, Value};
    use fe2o3_amqp::{Connection, Receiver, Sender, Session};

    let bus = start().await;
    let mut connection = Connection::open(
        "credit-test",
        format!("amqp://127.0.0.1:{}", bus.port()).as_str(),
    )
    .await
    .expect("connects");
    let mut session = Session::begin(&mut connection).await.expect("session");
    let mut replies = Receiver::builder()
        .name("cbs-replies")
        .source("$cbs")
        .target("cbs-client")
        .credit_mode(CreditMode::Manual)
        .attach(&mut session)
        .await
        .expect("reply link");
    let mut requests = Sender::attach(&mut session, "cbs-requests", "$cbs")
        .await
        .expect("request link");
    let request = Message::builder()
        .properties(Properties::builder().reply_to("cbs-client").build())
        .application_properties(
            ApplicationProperties::builder()
                .insert("operation", "put-token")
                .insert("type", "servicebus.windows.net:sastoken")
                .insert("name", "sb://localbus/orders")
                .build(),
        )
        .value(Value::String("not a token".into()))
        .build();
    requests
        .send(request)
        .await
        .expect("the request is accepted");

    let early =
        tokio::time::timeout(Duration::from_millis(500), replies.recv::<Body<Value>>()).await;
    assert!(
        early.is_err(),
        "nothing may arrive before the reply link has credit: {early:?}"
    );
    replies.set_credit(1).await.expect("credit");
    let reply = tokio::time::timeout(Duration::from_secs(5), replies.recv::<Body<Value>>())
        .await
        .expect("answered once there is credit")
        .expect("a reply");
    let status = reply
        .message()
        .application_properties
        .as_ref()
        .and_then(|p| p.get("status-code").cloned());
    assert_eq!(
        status,
        Some(SimpleValue::Int(401)),
        "the bad token is refused"
    );
    let _ = requests.close().await;
    let _ = replies.close().await;
    let _ = session.end().await;
    let _ = connection.close().await;
}
