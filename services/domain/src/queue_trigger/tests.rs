use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::timespan::TimeSpan;

fn options(batch: u32, threshold: u32, max_dequeue: u32, visibility: TimeSpan) -> QueuesOptions {
    QueuesOptions {
        batch_size: batch,
        new_batch_threshold: threshold,
        max_dequeue_count: max_dequeue,
        visibility_timeout: visibility,
        ..QueuesOptions::default()
    }
}

#[test]
fn default_capacity_is_sixteen_plus_eight() {
    let defaults = QueuesOptions::default();
    assert_eq!(max_in_flight(&defaults), 24);
    assert!(may_fetch(8, &defaults));
    assert!(!may_fetch(9, &defaults));
}

#[test]
fn arrival_past_max_dequeue_count_goes_straight_to_poison() {
    let o = options(16, 8, 5, TimeSpan::ZERO);
    assert_eq!(on_arrival(1, &o, true), Arrival::Process);
    assert_eq!(on_arrival(5, &o, true), Arrival::Process);
    assert_eq!(on_arrival(6, &o, true), Arrival::Poison);
    // Without a poison queue it is left where it is.
    assert_eq!(on_arrival(5, &o, false), Arrival::Process);
    assert_eq!(on_arrival(6, &o, false), Arrival::LeaveInvisible);
}

#[test]
fn failure_releases_until_the_last_attempt_then_poisons() {
    let o = options(16, 8, 3, TimeSpan::from_secs(7));
    assert_eq!(
        after_failure(1, &o, true),
        AfterFailure::Release(Duration::from_secs(7))
    );
    assert_eq!(
        after_failure(2, &o, true),
        AfterFailure::Release(Duration::from_secs(7))
    );
    assert_eq!(after_failure(3, &o, true), AfterFailure::Poison);
    assert_eq!(after_failure(9, &o, true), AfterFailure::Poison);
    assert!(!is_last_attempt(2, &o));
    assert!(is_last_attempt(3, &o));
}

#[test]
fn without_a_poison_queue_every_failure_leaves_the_message_invisible() {
    let o = options(16, 8, 3, TimeSpan::from_secs(7));
    for dequeue_count in [1, 2, 3, 9] {
        assert_eq!(
            after_failure(dequeue_count, &o, false),
            AfterFailure::LeaveInvisible,
            "{dequeue_count}"
        );
    }
}

#[test]
fn poison_queues_are_named_as_azure_names_them_or_not_at_all() {
    assert_eq!(poison_queue_name("orders"), Ok("orders-poison".to_owned()));
    // The longest name that still has one: 56 characters, whose poison queue has 63.
    let longest = "a".repeat(56);
    assert_eq!(poison_queue_name(&longest).unwrap().len(), 63);
    // 57 to 63 characters are valid queue names without a poison queue.
    for len in [57, 63] {
        let name = "a".repeat(len);
        assert_eq!(
            poison_queue_name(&name),
            Err(NoPoisonQueue::NameTooLong(name.clone()))
        );
    }
    // A poison queue has no poison queue of its own.
    assert_eq!(
        poison_queue_name("orders-poison"),
        Err(NoPoisonQueue::IsPoisonQueue("orders-poison".into()))
    );
    assert_eq!(
        poison_queue_name("orders-poison").unwrap_err().to_string(),
        "queue orders-poison is itself a poison queue (its name ends in -poison)"
    );
    assert_eq!(
        poison_queue_name(&"a".repeat(60)).unwrap_err().to_string(),
        format!(
            "{}-poison would be longer than 63 characters",
            "a".repeat(60)
        )
    );
    // Only the exact suffix counts, as Azure's ordinal `EndsWith`.
    assert_eq!(
        poison_queue_name("poisonous"),
        Ok("poisonous-poison".to_owned())
    );
}

#[test]
fn renewal_happens_at_half_the_invisibility() {
    assert_eq!(renewal_period(INVISIBILITY), Duration::from_secs(300));
}

#[test]
fn bodies_decode_by_encoding() {
    type Case<'a> = (&'a str, MessageEncoding, Result<&'a [u8], DecodeError>);
    let cases: &[Case] = &[
        ("aGVsbG8=", MessageEncoding::Base64, Ok(b"hello")),
        ("aGVsbG8=", MessageEncoding::None, Ok(b"aGVsbG8=")),
        ("{\"a\":1}", MessageEncoding::None, Ok(b"{\"a\":1}")),
        (
            "not base64!",
            MessageEncoding::Base64,
            Err(DecodeError::NotBase64),
        ),
        ("//79", MessageEncoding::Base64, Ok(&[0xff, 0xfe, 0xfd])),
        ("", MessageEncoding::Base64, Ok(b"")),
    ];
    for (raw, encoding, want) in cases {
        let got = decode_body(raw, *encoding);
        assert_eq!(
            got.as_deref().map_err(Clone::clone),
            want.clone(),
            "{raw:?} {encoding:?}"
        );
    }
}

#[test]
fn text_goes_as_text_and_bytes_as_base64() {
    use crate::bindings::DataType::{Binary, Stream, String as Text};
    let b64 = MessageEncoding::Base64;
    let none = MessageEncoding::None;
    // (raw body, messageEncoding, dataType, Data.<trigger>)
    let cases = [
        ("aGVsbG8=", b64, None, "hello"),
        ("aGVsbG8=", b64, Some(Text), "hello"),
        ("//79", b64, None, "//79"),
        ("//79", b64, Some(Text), "//79"),
        (" //79\n", b64, None, "//79"),
        ("aGVsbG8=", b64, Some(Binary), "aGVsbG8="),
        ("//79", b64, Some(Binary), "//79"),
        ("//79", b64, Some(Stream), "//79"),
        ("hello", none, None, "hello"),
        ("hello", none, Some(Binary), "aGVsbG8="),
        ("", b64, Some(Binary), ""),
    ];
    for (raw, encoding, data_type, want) in cases {
        assert_eq!(
            trigger_value(raw, encoding, data_type).as_deref(),
            Ok(want),
            "{raw:?} {encoding:?} {data_type:?}"
        );
    }
    assert_eq!(
        trigger_value("not base64!", b64, Some(Binary)),
        Err(DecodeError::NotBase64)
    );
}

#[test]
fn encoding_round_trips() {
    for text in ["", "hello", "{\"ünï\":\"cödé\"}"] {
        for encoding in [MessageEncoding::Base64, MessageEncoding::None] {
            assert_eq!(
                trigger_value(&encode_body(text, encoding), encoding, None).unwrap(),
                text
            );
        }
    }
}

#[test]
fn idle_polls_back_off_exponentially_and_messages_reset_it() {
    let mut b = PollingBackoff::new(Duration::from_secs(60));
    // A jitter of 0.5 is a factor of exactly 1.0.
    let idle: Vec<u64> = (0..5)
        .map(|_| b.after_empty_poll(0.5).as_millis() as u64)
        .collect();
    assert_eq!(idle, [200, 300, 500, 900, 1700]);
    b.found_messages();
    assert_eq!(b.current(), Duration::ZERO);
    assert_eq!(b.after_empty_poll(0.5), Duration::from_millis(100));
    assert_eq!(b.after_empty_poll(0.5), Duration::from_millis(200));
}

#[test]
fn polling_reaches_and_stays_at_the_maximum() {
    let mut b = PollingBackoff::new(Duration::from_secs(2));
    let waits: Vec<Duration> = (0..10).map(|_| b.after_empty_poll(0.99)).collect();
    assert_eq!(waits[9], Duration::from_secs(2));
    assert_eq!(b.after_empty_poll(0.0), Duration::from_secs(2));
}

#[test]
fn polling_maximum_is_never_below_the_minimum() {
    let mut b = PollingBackoff::new(Duration::from_millis(10));
    assert_eq!(b.after_empty_poll(0.5), Duration::from_millis(100));
}

proptest! {
    #[test]
    fn polling_stays_within_bounds_and_never_shrinks_while_idle(
        max_ms in 100u64..120_000,
        steps in proptest::collection::vec((any::<bool>(), 0.0f64..1.0), 1..80),
    ) {
        let max = Duration::from_millis(max_ms);
        let mut b = PollingBackoff::new(max);
        let mut previous: Option<Duration> = None;
        for (found, jitter) in steps {
            if found {
                b.found_messages();
                previous = None;
                continue;
            }
            let wait = b.after_empty_poll(jitter);
            prop_assert!(wait >= MINIMUM_POLLING_INTERVAL && wait <= max);
            if let Some(p) = previous {
                prop_assert!(wait >= p);
            }
            previous = Some(wait);
        }
    }
}

#[test]
fn trigger_queue_from_a_setting_may_be_any_queue_name() {
    let settings = std::collections::BTreeMap::from([
        ("Long".to_owned(), "q".repeat(63)),
        ("Bad".to_owned(), "Not A Queue".to_owned()),
    ]);
    let name = |n: &str| crate::names::QueueName::parse(n).unwrap();
    assert_eq!(
        trigger_queue_name(&name("%Long%"), &settings)
            .unwrap()
            .as_str(),
        "q".repeat(63)
    );
    let err = trigger_queue_name(&name("%Bad%"), &settings).unwrap_err();
    assert!(err.contains("app setting Bad"), "{err}");
    assert_eq!(
        trigger_queue_name(&name("orders"), &settings)
            .unwrap()
            .as_str(),
        "orders"
    );
}
