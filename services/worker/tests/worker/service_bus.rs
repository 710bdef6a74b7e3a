//! The Service Bus trigger against the local Service Bus stand-in: delivery with Azure's
//! metadata, completion, abandon → redelivery → dead-letter at MaxDeliveryCount, the handler's
//! own settlement, lock renewal, and an unreachable namespace.

use std::time::Duration;

use serde_json::{Value, json};
use shoal_domain::service_bus_trigger::OutgoingMessage;
use shoal_testkit::handler::Behaviour;

use crate::service_bus_support::*;

fn orders(max_delivery_count: u32, lock_seconds: u32) -> Value {
    namespace(
        json!([queue_entity(
            "orders",
            json!({"MaxDeliveryCount": max_delivery_count,
                                              "LockDuration": format!("PT{lock_seconds}S")})
        )]),
        json!([]),
    )
}

#[tokio::test]
async fn delivers_every_metadata_field_and_completes_on_success() -> anyhow::Result<()> {
    let (h, bus) = start(Behaviour::Respond(json!({})), orders(10, 30)).await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function("ship", trigger(json!({"queueName": "%OrdersQueue%"})))
        .await?;
    let mut message = text(r#"{"order": 42}"#);
    message.message_id = Some("order-42".into());
    message.content_type = Some("application/json".into());
    message.correlation_id = Some("corr-1".into());
    message.subject = Some("new-order".into());
    message.to = Some("shipping".into());
    message.reply_to = Some("replies".into());
    message.time_to_live = Some(Duration::from_secs(3600));
    message.application_properties = json!({"tenant": "contoso", "priority": 2, "rush": true})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bus.send("orders", &[message]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let requests = h.handler.wait_for(1, WAIT).await?;
    let body = &requests[0].body;
    assert_eq!(body["Data"]["msg"], r#"{"order": 42}"#);
    let meta = &body["Metadata"];
    assert_eq!(meta["MessageId"], "order-42");
    assert_eq!(meta["DeliveryCount"], 1);
    assert_eq!(meta["ContentType"], "application/json");
    assert_eq!(meta["CorrelationId"], "corr-1");
    assert_eq!(meta["Subject"], "new-order");
    assert_eq!(meta["Label"], "new-order");
    assert_eq!(meta["To"], "shipping");
    assert_eq!(meta["ReplyTo"], "replies");
    assert_eq!(meta["SessionId"], Value::Null);
    let properties = json!({"tenant": "contoso", "priority": 2, "rush": true});
    assert_eq!(meta["ApplicationProperties"], properties);
    assert_eq!(meta["UserProperties"], properties);
    assert!(meta["SequenceNumber"].as_i64().is_some());
    let lock_token = meta["LockToken"].as_str().expect("LockToken");
    assert_eq!(lock_token.len(), 36, "a GUID: {lock_token}");
    let enqueued = time(&meta["EnqueuedTimeUtc"]);
    let expires = time(&meta["ExpiresAtUtc"]);
    assert_eq!(
        expires - enqueued,
        chrono::TimeDelta::hours(1),
        "enqueued + TimeToLive"
    );
    assert_eq!(meta["sys"]["MethodName"], "ship");
    assert_eq!(requests[0].header("webhook-id"), Some("order-42"));

    // Completed: nothing left once the invocation ended, and never delivered again.
    wait_for_line(&worker, "ship", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    assert!(bus.is_empty(&queue("orders")).await?);
    assert_eq!(h.handler.count(), 1);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn failures_are_redelivered_then_dead_lettered_at_max_delivery_count() -> anyhow::Result<()> {
    let (h, bus) = start(Behaviour::Status(500), orders(3, 30)).await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function("ship", trigger(json!({"queueName": "orders"})))
        .await?;
    let mut message = text("poison me");
    message.application_properties = json!({"tenant": "contoso"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    bus.send("orders", &[message]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let requests = h.handler.wait_for(3, WAIT).await?;
    let counts: Vec<i64> = requests
        .iter()
        .map(|r| r.body["Metadata"]["DeliveryCount"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(
        counts,
        [1, 2, 3],
        "abandoned, and delivered again with DeliveryCount + 1"
    );
    // As a user inspects it, with Microsoft's SDK: body and properties intact, the reason given.
    let dead = dead_letters_seen_by_python(&bus, "orders", 1).await?;
    assert_eq!(dead[0]["body"], "poison me");
    assert_eq!(dead[0]["application_properties"]["tenant"], "contoso");
    assert_eq!(dead[0]["dead_letter_reason"], "MaxDeliveryCountExceeded");
    wait_for_line(&worker, "ship", |r| r.failed == 3 && r.in_flight == 0).await?;
    assert_eq!(
        h.handler.count(),
        3,
        "not delivered again once dead-lettered"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn the_handler_can_dead_letter_defer_abandon_or_fail_on_a_bad_settlement()
-> anyhow::Result<()> {
    let (h, bus) = start(Behaviour::Respond(json!({})), orders(10, 30)).await?;
    h.handler.script(vec![
        Behaviour::Respond(
            json!({"Settlement": {"action": "deadLetter", "reason": "InvalidOrder",
            "description": "no customer", "propertiesToModify": {"stage": "validate"}}}),
        ),
        Behaviour::Respond(json!({"Settlement": {"action": "defer"}})),
        Behaviour::Respond(json!({"Settlement": {"action": "retry"}})),
    ]);
    put_app(
        &h,
        &bus,
        json!({"extensions": {"serviceBus": {"maxConcurrentCalls": 1}}}),
    )
    .await?;
    h.put_function("ship", trigger(json!({"queueName": "orders"})))
        .await?;
    bus.send_text("orders", &["first", "second", "third"])
        .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    // third: the bad settlement fails the invocation, so it is abandoned and delivered again.
    let requests = h.handler.wait_for(4, WAIT).await?;
    let bodies: Vec<&str> = requests
        .iter()
        .map(|r| r.body["Data"]["msg"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(bodies, ["first", "second", "third", "third"]);
    assert_eq!(requests[3].body["Metadata"]["DeliveryCount"], 2);
    let dead = bus.take(&queue("orders"), 1, true).await?;
    let dead = &dead[0].message;
    assert_eq!(dead.body, b"first");
    assert_eq!(
        dead.application_properties["DeadLetterReason"],
        "InvalidOrder"
    );
    assert_eq!(
        dead.application_properties["DeadLetterErrorDescription"],
        "no customer"
    );
    // `propertiesToModify` travels in the dead-letter disposition's error info and is applied.
    assert_eq!(dead.application_properties["stage"], "validate");
    // second is deferred: not delivered again, not in the dead-letter queue.
    wait_for_line(&worker, "ship", |r| {
        r.succeeded == 3 && r.failed == 1 && r.poisoned == 1 && r.in_flight == 0
    })
    .await?;
    assert!(
        bus.is_empty(&queue("orders")).await?,
        "second deferred, the others settled"
    );
    assert_eq!(h.handler.count(), 4);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn the_lock_is_renewed_while_the_handler_outlives_it() -> anyhow::Result<()> {
    let (h, bus) = start(
        Behaviour::Delay(Duration::from_secs(13), json!({})),
        orders(10, 5),
    )
    .await?;
    put_app_with_timeout(&h, &bus, json!({}), 30).await?;
    h.put_function("slow", trigger(json!({"queueName": "orders"})))
        .await?;
    bus.send_text("orders", &["slow one"]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    wait_for_line(&worker, "slow", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    assert_eq!(
        h.handler.count(),
        1,
        "the 5 s lock never lapsed during the 13 s invocation"
    );
    assert_eq!(h.handler.overlapping_deliveries(), 0);
    assert!(bus.is_empty(&queue("orders")).await?);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn batches_carry_array_metadata_and_settle_per_message() -> anyhow::Result<()> {
    let (h, bus) = start(Behaviour::Respond(json!({})), orders(10, 30)).await?;
    put_app(&h, &bus, json!({"extensions": {"serviceBus": {"maxMessageBatchSize": 4, "minMessageBatchSize": 4, "maxBatchWaitTime": "00:00:05"}}})).await?;
    h.put_function(
        "bulk",
        trigger(json!({"queueName": "orders", "cardinality": "many"})),
    )
    .await?;
    let texts: Vec<String> = (0..8).map(|i| format!("m{i}")).collect();
    bus.send_text(
        "orders",
        &texts.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    wait_for_line(&worker, "bulk", |r| r.succeeded == 8 && r.in_flight == 0).await?;
    let requests = h.handler.requests();
    let mut seen = Vec::new();
    for request in &requests {
        let data = request.body["Data"]["msg"]
            .as_array()
            .expect("an array of bodies");
        assert!(data.len() <= 4, "at most maxMessageBatchSize");
        let meta = &request.body["Metadata"];
        assert_eq!(
            meta["MessageIdArray"].as_array().map(Vec::len),
            Some(data.len())
        );
        assert_eq!(
            meta["DeliveryCountArray"].as_array().map(Vec::len),
            Some(data.len())
        );
        assert_eq!(
            meta["LockTokenArray"].as_array().map(Vec::len),
            Some(data.len())
        );
        seen.extend(data.iter().filter_map(|v| v.as_str().map(str::to_owned)));
    }
    seen.sort();
    assert_eq!(seen, texts);
    assert!(
        requests.len() <= 3,
        "batched: {} invocations for 8 messages",
        requests.len()
    );
    assert!(bus.is_empty(&queue("orders")).await?);
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn an_unreachable_namespace_is_reported_not_fatal() -> anyhow::Result<()> {
    let h = crate::support::Harness::start(Behaviour::Respond(json!({}))).await?;
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    h.put_app(
        json!({}),
        json!({"appSettings": {
            "AzureWebJobsStorage": h.azurite.connection_string(),
            "AzureWebJobsServiceBus": format!("Endpoint=sb://127.0.0.1:{port};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=c2VjcmV0LWtleS12YWx1ZQ==;UseDevelopmentEmulator=true"),
        }}),
    )
    .await?;
    h.put_function("ship", trigger(json!({"queueName": "orders"})))
        .await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let line = wait_for_line(&worker, "ship", |r| {
        r.status.starts_with("error: connecting to the namespace")
    })
    .await?;
    assert!(
        !line.status.contains("c2VjcmV0"),
        "no key in {}",
        line.status
    );
    let errors = worker.stats.errors().snapshot();
    assert!(
        errors
            .iter()
            .any(|(label, n)| *label == "poll_trigger" && *n >= 1),
        "{errors:?}"
    );
    worker.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn outputs_go_to_a_queue_and_a_topic_with_properties() -> anyhow::Result<()> {
    let (h, bus) = start(
        Behaviour::Respond(json!({"Outputs": {
            "toQueue": ["plain", {"Body": {"n": 1}, "MessageId": "out-1", "SessionId": "s1",
                "CorrelationId": "c1", "Subject": "made", "TimeToLive": "00:10:00",
                "ApplicationProperties": {"source": "ship", "n": 1}}],
            "toTopic": {"Body": "to all", "ContentType": "text/plain", "ApplicationProperties": {"kind": "event"}},
        }})),
        namespace(
            json!([queue_entity("orders", json!({})), queue_entity("shipped", json!({}))]),
            json!([{"Name": "events", "Subscriptions": [{"Name": "audit"}]}]),
        ),
    )
    .await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function(
        "ship",
        json!([
            {"type": "serviceBusTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
            {"type": "serviceBus", "direction": "out", "name": "toQueue", "queueName": "shipped"},
            {"type": "serviceBus", "direction": "out", "name": "toTopic", "topicName": "events"},
        ]),
    )
    .await?;
    bus.send_text("orders", &["go"]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let shipped = bus.take(&queue("shipped"), 2, false).await?;
    let plain = shipped
        .iter()
        .find(|m| m.message.body == b"plain")
        .expect("plain");
    assert_eq!(plain.message.content_type, None);
    let formed = shipped
        .iter()
        .find(|m| m.message.message_id.as_deref() == Some("out-1"))
        .expect("message form");
    assert_eq!(formed.message.body, br#"{"n":1}"#);
    assert_eq!(
        formed.message.content_type.as_deref(),
        Some("application/json")
    );
    assert_eq!(formed.message.session_id.as_deref(), Some("s1"));
    assert_eq!(formed.message.correlation_id.as_deref(), Some("c1"));
    assert_eq!(formed.message.subject.as_deref(), Some("made"));
    assert_eq!(
        formed.message.expires_at - formed.message.enqueued_time,
        chrono::TimeDelta::minutes(10)
    );
    assert_eq!(formed.message.application_properties["source"], "ship");
    assert_eq!(formed.message.application_properties["n"], 1);
    let audit = shoal_domain::service_bus_trigger::EntityPath::Subscription {
        topic: "events".into(),
        subscription: "audit".into(),
    };
    let events = bus.take(&audit, 1, false).await?;
    assert_eq!(events[0].message.body, b"to all");
    assert_eq!(
        events[0].message.content_type.as_deref(),
        Some("text/plain")
    );
    assert_eq!(events[0].message.application_properties["kind"], "event");
    wait_for_line(&worker, "ship", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    worker.shut_down().await?;
    let _ = OutgoingMessage::default();
    Ok(())
}

/// A `serviceBus` output's name with a binding expression is resolved for each message, here
/// from a property of the message's JSON body.
#[tokio::test]
async fn an_output_name_with_an_expression_sends_to_the_entity_it_resolves_to() -> anyhow::Result<()>
{
    let (h, bus) = start(
        Behaviour::Respond(json!({"Outputs": {"routed": "on its way"}})),
        namespace(
            json!([
                queue_entity("orders", json!({})),
                queue_entity("shipped-eu", json!({}))
            ]),
            json!([]),
        ),
    )
    .await?;
    put_app(&h, &bus, json!({})).await?;
    h.put_function(
        "route",
        json!([
            {"type": "serviceBusTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
            {"type": "serviceBus", "direction": "out", "name": "routed", "queueName": "shipped-{dest}"},
        ]),
    )
    .await?;
    bus.send_text("orders", &[r#"{"dest": "eu"}"#]).await?;
    let worker = h.start_worker(h.worker_config("w1"))?;

    let shipped = bus.take(&queue("shipped-eu"), 1, false).await?;
    assert_eq!(shipped[0].message.body, b"on its way");
    wait_for_line(&worker, "route", |r| r.succeeded == 1 && r.in_flight == 0).await?;
    worker.shut_down().await?;
    Ok(())
}
