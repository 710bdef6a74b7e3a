use proptest::prelude::*;

use super::*;
use crate::amqp::test_frames::{CLIENT_HEADER, consume, frame, method, qos, settle};

const ACK: u16 = BASIC_ACK;
const REJECT: u16 = BASIC_REJECT;
const NACK: u16 = BASIC_NACK;

/// A tracker that has seen the client send `writes` (after its protocol header).
fn after(writes: &[Vec<u8>]) -> Unsettled {
    let mut unsettled = Unsettled::default();
    unsettled.sent(CLIENT_HEADER);
    unsettled.sent(&writes.concat());
    unsettled
}

/// Delivers `tags` on `channel`; the first refused one and what it said.
fn deliver(
    unsettled: &mut Unsettled,
    channel: u16,
    tags: impl IntoIterator<Item = u64>,
) -> Option<(u64, FrameError)> {
    tags.into_iter()
        .find_map(|tag| unsettled.delivered(channel, tag).err().map(|e| (tag, e)))
}

#[test]
fn a_consumer_holds_its_prefetch_and_not_one_more() {
    let mut u = after(&[qos(1, 3, false), consume(1)]);
    assert_eq!(deliver(&mut u, 1, 1..=3), None);
    assert_eq!(
        deliver(&mut u, 1, [4]),
        Some((
            4,
            FrameError::OverPrefetch {
                channel: 1,
                held: 4,
                allowed: 3
            }
        ))
    );
}

#[test]
fn settling_makes_room() {
    // (what the client sends after delivering 1..=3 with prefetch 3, tags it may then get)
    let cases: &[(&str, Vec<u8>, std::ops::RangeInclusive<u64>)] = &[
        ("ack one", settle(1, ACK, 2, 0), 4..=4),
        ("ack multiple", settle(1, ACK, 2, 1), 4..=5),
        ("ack all (tag 0, multiple)", settle(1, ACK, 0, 1), 4..=6),
        (
            "reject (its bit is requeue, not multiple)",
            settle(1, REJECT, 3, 1),
            4..=4,
        ),
        ("nack one, requeued", settle(1, NACK, 1, 2), 4..=4),
        ("nack multiple", settle(1, NACK, 3, 3), 4..=6),
        ("recover", method(1, 60, BASIC_RECOVER, &[1]), 4..=6),
        (
            "recover-async",
            method(1, 60, BASIC_RECOVER_ASYNC, &[1]),
            4..=6,
        ),
    ];
    for (what, settlement, room) in cases {
        let mut u = after(&[qos(1, 3, false), consume(1)]);
        assert_eq!(deliver(&mut u, 1, 1..=3), None, "{what}");
        u.sent(settlement);
        assert_eq!(deliver(&mut u, 1, room.clone()), None, "{what}: within");
        let next = room.end() + 1;
        assert!(
            deliver(&mut u, 1, [next]).is_some(),
            "{what}: {next} is one too many"
        );
    }
}

#[test]
fn settling_an_unknown_tag_changes_nothing() {
    let mut u = after(&[qos(1, 2, false), consume(1)]);
    assert_eq!(deliver(&mut u, 1, 1..=2), None);
    u.sent(&settle(1, ACK, 9, 0));
    u.sent(&settle(2, ACK, 1, 1));
    assert!(deliver(&mut u, 1, [3]).is_some());
}

#[test]
fn the_allowance_follows_consumers_and_the_largest_prefetch() {
    // Two consumers at 2 each.
    let mut u = after(&[qos(1, 2, false), consume(1), consume(1)]);
    assert_eq!(deliver(&mut u, 1, 1..=4), None);
    assert!(deliver(&mut u, 1, [5]).is_some());
    // A channel-wide prefetch larger than the consumers' share.
    let mut u = after(&[qos(1, 2, false), qos(1, 5, true), consume(1)]);
    assert_eq!(deliver(&mut u, 1, 1..=5), None);
    assert!(deliver(&mut u, 1, [6]).is_some());
    // A prefetch lowered later: deliveries the broker sent under the old one stay allowed.
    let mut u = after(&[qos(1, 4, false), consume(1), qos(1, 1, false)]);
    assert_eq!(deliver(&mut u, 1, 1..=4), None);
}

#[test]
fn a_channel_without_a_prefetch_may_hold_nothing() {
    let mut u = after(&[consume(1)]);
    assert!(deliver(&mut u, 1, [1]).is_some());
    let mut u = after(&[qos(1, 0, false), consume(1)]);
    assert!(deliver(&mut u, 1, [1]).is_some());
}

#[test]
fn channels_are_kept_apart_and_a_reopened_one_starts_again() {
    let mut u = after(&[qos(1, 1, false), consume(1), qos(2, 2, false), consume(2)]);
    assert_eq!(deliver(&mut u, 1, [1]), None);
    assert_eq!(deliver(&mut u, 2, 1..=2), None);
    assert!(deliver(&mut u, 1, [2]).is_some());
    // channel.open on 2 again: nothing held, and no prefetch until it sets one.
    let mut u = after(&[qos(2, 2, false), consume(2), method(2, 20, 10, &[0])]);
    assert!(deliver(&mut u, 2, [1]).is_some());
}

#[test]
fn content_and_heartbeats_are_passed_over_unheld() {
    // A publish's method, header and a body frame that looks like a qos inside.
    let inner = qos(1, 100, false);
    let publish = [
        method(1, 60, 40, &[0, 0, 0, 1, b'q', 0]),
        frame(
            2,
            1,
            &[0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, inner.len() as u8, 0, 0],
        ),
        frame(3, 1, &inner),
        frame(8, 0, &[]),
    ]
    .concat();
    let mut u = after(&[qos(1, 1, false), consume(1), publish]);
    assert_eq!(deliver(&mut u, 1, [1]), None);
    assert!(
        deliver(&mut u, 1, [2]).is_some(),
        "the body's bytes were not read as a qos"
    );
    assert!(u.sent.frame.is_empty());
}

proptest! {
    /// Against a model (the set of tags delivered and not settled, at most the prefetch):
    /// deliveries and settlements in any order, each settlement's bytes cut anywhere across
    /// writes, give the same answers.
    #[test]
    fn the_tracker_agrees_with_a_set_of_tags(
        prefetch in 1u16..6,
        steps in proptest::collection::vec(
            prop_oneof![
                Just(None),
                (0u64..12, 0u8..4, prop_oneof![Just(ACK), Just(REJECT), Just(NACK)])
                    .prop_map(Some),
            ],
            1..40,
        ),
        cuts in proptest::collection::vec(1usize..12, 1..30),
    ) {
        let mut u = after(&[qos(1, prefetch, false), consume(1)]);
        let mut model = std::collections::BTreeSet::new();
        let mut next_tag = 1;
        let mut cut = cuts.iter().cycle();
        for step in steps {
            match step {
                None => {
                    model.insert(next_tag);
                    let refused = u.delivered(1, next_tag).is_err();
                    prop_assert_eq!(refused, model.len() > usize::from(prefetch));
                    if refused {
                        return Ok(());
                    }
                    next_tag += 1;
                }
                Some((tag, bits, which)) => {
                    let bytes = settle(1, which, tag, bits);
                    let mut rest = bytes.as_slice();
                    while !rest.is_empty() {
                        let n = (*cut.next().unwrap()).min(rest.len());
                        u.sent(&rest[..n]);
                        prop_assert!(u.sent.frame.len() <= bytes.len());
                        rest = &rest[n..];
                    }
                    let multiple = which != REJECT && bits & 1 == 1;
                    match (multiple, tag) {
                        (false, _) => {
                            model.remove(&tag);
                        }
                        (true, 0) => model.clear(),
                        (true, _) => model.retain(|t| *t > tag),
                    }
                }
            }
        }
    }
}
