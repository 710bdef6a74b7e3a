use std::time::Duration;

use chrono::TimeZone;
use fe2o3_amqp::types::messaging::{AmqpValue, Header, Properties};
use fe2o3_amqp::types::primitives::SimpleValue;

use super::entity::{MAX_DELIVERY_COUNT_EXCEEDED, Settlement};
use super::*;
use crate::config::{EntitySettings, QueueConfig};

fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0)
        .single()
        .expect("valid")
}

fn message(body: &str, ttl_ms: Option<u32>, session: Option<&str>) -> Message<Body<Value>> {
    Message {
        header: ttl_ms.map(|ms| Header {
            ttl: Some(ms),
            ..Header::default()
        }),
        delivery_annotations: None,
        message_annotations: None,
        properties: Some(Properties {
            group_id: session.map(str::to_owned),
            ..Properties::default()
        }),
        application_properties: None,
        body: Body::Value(AmqpValue(Value::String(body.to_owned()))),
        footer: None,
    }
}

fn store_with(settings: EntitySettings) -> Store {
    let config = LocalBusConfig {
        queues: vec![QueueConfig {
            name: "q".into(),
            settings,
        }],
        ..LocalBusConfig::default()
    };
    Store::new(&config, t(0))
}

fn queue(store: &mut Store) -> &mut Entity {
    store.entities.get_mut("q").expect("the queue exists")
}

fn body(m: &StoredMessage) -> String {
    match &m.message.body {
        Body::Value(AmqpValue(Value::String(s))) => s.clone(),
        other => format!("{other:?}"),
    }
}

#[test]
fn lock_expiry_redelivers_with_a_higher_count_then_dead_letters_at_the_maximum() {
    let settings = EntitySettings {
        max_delivery_count: 2,
        lock_duration: Duration::from_secs(10),
        ..EntitySettings::default()
    };
    let mut store = store_with(settings);
    let target = store.resolve("q").expect("resolves");
    store.send(&target, message("m", None, None), None, t(0));
    let q = queue(&mut store);
    let first = q.lock_next(SubQueue::Main, None, t(0)).expect("delivered");
    assert_eq!(first.delivery_count, 0);
    assert!(
        q.lock_next(SubQueue::Main, None, t(5)).is_none(),
        "locked messages are not delivered twice"
    );
    let second = q
        .lock_next(SubQueue::Main, None, t(10))
        .expect("redelivered after the lock ended");
    assert_eq!(second.delivery_count, 1);
    // The second lock ends too: 2 failed deliveries reach MaxDeliveryCount 2.
    assert!(q.lock_next(SubQueue::Main, None, t(20)).is_none());
    let dead = q.dead_letter.values().next().expect("dead-lettered");
    assert_eq!(body(dead), "m");
    let reason = dead
        .message
        .application_properties
        .as_ref()
        .and_then(|p| p.0.get("DeadLetterReason").cloned());
    assert_eq!(
        reason,
        Some(SimpleValue::String(MAX_DELIVERY_COUNT_EXCEEDED.into()))
    );
}

#[test]
fn a_released_delivery_is_not_counted_and_an_abandoned_one_is() {
    let settings = EntitySettings {
        max_delivery_count: 2,
        ..EntitySettings::default()
    };
    let mut store = store_with(settings);
    let target = store.resolve("q").expect("resolves");
    store.send(&target, message("m", None, None), None, t(0));
    let q = queue(&mut store);
    // Released any number of times: available again at once, never counted, never dead.
    for at in 0..3 {
        let locked = q.lock_next(SubQueue::Main, None, t(at)).expect("delivered");
        assert_eq!(locked.delivery_count, 0, "release {at}");
        let token = locked.lock.expect("locked").token;
        q.settle(SubQueue::Main, token, Settlement::Release, t(at))
            .expect("released");
    }
    let locked = q.lock_next(SubQueue::Main, None, t(3)).expect("delivered");
    assert_eq!(locked.delivery_count, 0);
    let token = locked.lock.expect("locked").token;
    let abandon = Settlement::Abandon {
        properties: Vec::new(),
    };
    q.settle(SubQueue::Main, token, abandon, t(3))
        .expect("abandoned");
    let again = q.lock_next(SubQueue::Main, None, t(3)).expect("delivered");
    assert_eq!(again.delivery_count, 1, "an abandon counts the delivery");
    assert!(q.dead_letter.is_empty());
}

#[test]
fn settlement_needs_a_live_lock() {
    let mut store = store_with(EntitySettings::default());
    let target = store.resolve("q").expect("resolves");
    store.send(&target, message("m", None, None), None, t(0));
    let q = queue(&mut store);
    let locked = q.lock_next(SubQueue::Main, None, t(0)).expect("delivered");
    let token = locked.lock.expect("locked").token;
    assert_eq!(
        q.settle(
            SubQueue::Main,
            uuid::Uuid::new_v4(),
            Settlement::Complete,
            t(1)
        ),
        Err(SettleError::LockLost)
    );
    assert_eq!(
        q.settle(SubQueue::Main, token, Settlement::Complete, t(61)),
        Err(SettleError::LockLost),
        "lock ended"
    );
    let again = q
        .lock_next(SubQueue::Main, None, t(61))
        .expect("redelivered");
    let token = again.lock.expect("locked").token;
    // Only the token itself: the byte-swapped form (a delivery tag read as raw bytes instead
    // of a little-endian GUID) is another token, as at Service Bus.
    let swapped = uuid::Uuid::from_bytes_le(*token.as_bytes());
    assert_eq!(
        q.settle(SubQueue::Main, swapped, Settlement::Complete, t(62)),
        Err(SettleError::LockLost)
    );
    assert_eq!(
        q.settle(SubQueue::Main, token, Settlement::Complete, t(62)),
        Ok(())
    );
    assert!(q.main.is_empty());
}

#[test]
fn expiry_follows_document_001() {
    let cases = [
        // (entity default TTL s, dead-letter on expiry, message TTL ms, check at s, live, dead-lettered)
        (None, false, Some(1_000), 0, true, false),
        (None, false, Some(1_000), 1, false, false),
        (None, true, Some(1_000), 1, false, true),
        (Some(2), false, None, 1, true, false),
        (Some(2), true, None, 2, false, true),
        // The entity default caps a longer message TTL.
        (Some(2), false, Some(60_000), 2, false, false),
    ];
    for (default, dlq, ttl, at, live, dead) in cases {
        let settings = EntitySettings {
            default_ttl: default.map(Duration::from_secs),
            dead_lettering_on_expiration: dlq,
            ..EntitySettings::default()
        };
        let mut store = store_with(settings);
        let target = store.resolve("q").expect("resolves");
        store.send(&target, message("m", ttl, None), None, t(0));
        let q = queue(&mut store);
        q.maintain(t(at));
        assert_eq!(
            !q.main.is_empty(),
            live,
            "{default:?} {dlq} {ttl:?} at {at}"
        );
        assert_eq!(
            !q.dead_letter.is_empty(),
            dead,
            "{default:?} {dlq} {ttl:?} at {at}"
        );
    }
}

#[test]
fn a_locked_message_expires_when_its_lock_ends() {
    let settings = EntitySettings {
        dead_lettering_on_expiration: true,
        lock_duration: Duration::from_secs(30),
        ..EntitySettings::default()
    };
    let mut store = store_with(settings);
    let target = store.resolve("q").expect("resolves");
    store.send(&target, message("m", Some(5_000), None), None, t(0));
    let q = queue(&mut store);
    let locked = q.lock_next(SubQueue::Main, None, t(1)).expect("delivered");
    q.maintain(t(10));
    assert!(
        q.main.contains_key(&locked.sequence_number),
        "still held under its lock"
    );
    let token = locked.lock.expect("locked").token;
    q.settle(
        SubQueue::Main,
        token,
        Settlement::Abandon {
            properties: Vec::new(),
        },
        t(10),
    )
    .expect("abandoned");
    assert!(
        q.main.is_empty(),
        "abandoning ends the lock and expiry takes effect at once"
    );
    let reason = q.dead_letter.values().next().and_then(|m| {
        m.message
            .application_properties
            .as_ref()?
            .0
            .get("DeadLetterReason")
            .cloned()
    });
    assert_eq!(
        reason,
        Some(SimpleValue::String("TTLExpiredException".into()))
    );
}

#[test]
fn scheduled_messages_wait_and_expire_from_their_enqueue_time() {
    let mut store = store_with(EntitySettings::default());
    let target = store.resolve("q").expect("resolves");
    let seq = store.send(
        &target,
        message("later", Some(10_000), None),
        Some(t(60)),
        t(0),
    )[0];
    let q = queue(&mut store);
    assert!(q.lock_next(SubQueue::Main, None, t(59)).is_none());
    assert_eq!(q.counts(t(59)).scheduled, 1);
    // Enqueued at 60 with a 10 s TTL: alive at 65 although 65 s passed since sending.
    let got = q
        .lock_next(SubQueue::Main, None, t(65))
        .expect("delivered at its time");
    assert_eq!(got.sequence_number, seq);
    assert_eq!(got.enqueued_at, t(60));
}

#[test]
fn sessions_are_exclusive_and_fifo() {
    let settings = EntitySettings {
        requires_session: true,
        ..EntitySettings::default()
    };
    let mut store = store_with(settings);
    let target = store.resolve("q").expect("resolves");
    for (body, session) in [("a0", "A"), ("b0", "B"), ("a1", "A")] {
        store.send(&target, message(body, None, Some(session)), None, t(0));
    }
    let q = queue(&mut store);
    assert_eq!(
        q.lock_session(Some("A"), 1, t(0)).map(|(id, _)| id),
        Some("A".into())
    );
    assert!(
        q.lock_session(Some("A"), 2, t(1)).is_none(),
        "one receiver per session"
    );
    assert_eq!(
        q.lock_session(None, 2, t(1)).map(|(id, _)| id),
        Some("B".into()),
        "next available skips A"
    );
    let a: Vec<String> = (0..2)
        .filter_map(|_| q.take_next(SubQueue::Main, Some("A"), t(2)))
        .map(|m| body(&m))
        .collect();
    assert_eq!(a, ["a0", "a1"]);
    q.release_sessions(1);
    assert!(
        q.lock_session(Some("A"), 3, t(3)).is_some(),
        "released on detach"
    );
}

#[test]
fn topics_fan_out_and_addresses_resolve() {
    let config = LocalBusConfig::from_json(
        r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Topics":[{"Name":"T","Subscriptions":[{"Name":"a"},{"Name":"b"}]}]}]}}"#,
    )
    .expect("valid");
    let mut store = Store::new(&config, t(0));
    let topic = store.resolve("amqps://127.0.0.1:5672/T").expect("resolves");
    assert_eq!(topic, Target::Topic("t".into()));
    assert_eq!(
        store
            .send(&topic, message("m", None, None), None, t(0))
            .len(),
        2
    );
    assert_eq!(
        store.resolve("t/Subscriptions/b/$DeadLetterQueue"),
        Some(Target::Entity(
            "t/subscriptions/b".into(),
            SubQueue::DeadLetter
        ))
    );
    assert_eq!(store.resolve("t/$DeadLetterQueue"), None);
    assert_eq!(store.resolve("nope"), None);
}

#[test]
fn idle_entities_are_deleted_after_auto_delete_on_idle() {
    let settings = EntitySettings {
        auto_delete_on_idle: Some(Duration::from_secs(300)),
        ..EntitySettings::default()
    };
    let mut store = store_with(settings);
    store.maintain(t(299));
    assert!(store.resolve("q").is_some());
    let target = store.resolve("q").expect("resolves");
    store.send(&target, message("m", None, None), None, t(200));
    store.maintain(t(499));
    assert!(store.resolve("q").is_some(), "the send kept it alive");
    store.maintain(t(500));
    assert!(store.resolve("q").is_none(), "idle for 5 minutes");
}

#[test]
fn renewing_a_session_lock_renews_the_locks_of_its_messages() {
    let settings = EntitySettings {
        requires_session: true,
        lock_duration: Duration::from_secs(5),
        ..EntitySettings::default()
    };
    let mut store = store_with(settings);
    let target = store.resolve("q").expect("resolves");
    store.send(&target, message("a0", None, Some("A")), None, t(0));
    let q = queue(&mut store);
    q.lock_session(Some("A"), 1, t(0)).expect("A is free");
    let held = q
        .lock_next(SubQueue::Main, Some("A"), t(0))
        .expect("a0 is delivered");
    let token = held.lock.expect("peek-lock").token;
    for at in [4, 8, 12] {
        assert_eq!(q.renew_session_lock("A", 1, t(at)), Ok(t(at + 5)));
    }
    assert!(
        q.lock_next(SubQueue::Main, Some("A"), t(16)).is_none(),
        "a0 stays locked past its own 5 s lock while the session lock is renewed"
    );
    assert!(
        q.settle(SubQueue::Main, token, Settlement::Complete, t(16))
            .is_ok(),
        "and it can be completed then"
    );
    assert_eq!(q.counts(t(16)).active, 0, "completed");
}
