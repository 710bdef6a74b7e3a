use proptest::prelude::*;

use super::*;
use crate::amqp::test_frames::{CLIENT_HEADER, consume, frame, qos, settle};

/// A filter whose client has set a prefetch of 100 on channels 1 to 3 and consumes there.
fn filter(max_body: u64, oversized: Arc<Oversized>) -> ContentFilter {
    let mut filter = ContentFilter::new(max_body, oversized);
    filter.sent(CLIENT_HEADER);
    for channel in 1..=3 {
        filter.sent(&[qos(channel, 100, false), consume(channel)].concat());
    }
    filter
}

fn deliver(channel: u16, consumer_tag: &str, delivery_tag: u64) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&CLASS_BASIC.to_be_bytes());
    p.extend_from_slice(&BASIC_DELIVER.to_be_bytes());
    p.push(u8::try_from(consumer_tag.len()).unwrap());
    p.extend_from_slice(consumer_tag.as_bytes());
    p.extend_from_slice(&delivery_tag.to_be_bytes());
    p.push(0); // redelivered
    p.extend_from_slice(&[0, 1, b'q']); // exchange "", routing key "q"
    frame(FRAME_METHOD, channel, &p)
}

fn get_ok(channel: u16, delivery_tag: u64) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&CLASS_BASIC.to_be_bytes());
    p.extend_from_slice(&BASIC_GET_OK.to_be_bytes());
    p.extend_from_slice(&delivery_tag.to_be_bytes());
    p.extend_from_slice(&[0, 0, 1, b'q', 0, 0, 0, 0]);
    frame(FRAME_METHOD, channel, &p)
}

fn header(channel: u16, body_size: u64) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&CLASS_BASIC.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes());
    p.extend_from_slice(&body_size.to_be_bytes());
    p.extend_from_slice(&0u16.to_be_bytes()); // no properties
    frame(FRAME_HEADER, channel, &p)
}

/// A message of `size` bytes in body frames of at most `chunk` bytes.
fn message(channel: u16, tag: u64, size: usize, chunk: usize) -> Vec<Vec<u8>> {
    let mut frames = vec![deliver(channel, "ctag", tag), header(channel, size as u64)];
    let body: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    frames.extend(
        body.chunks(chunk.max(1))
            .map(|c| frame(FRAME_BODY, channel, c)),
    );
    frames
}

fn filtered(max_body: u64, input: &[u8]) -> (Vec<u8>, Arc<Oversized>) {
    let oversized = Arc::new(Oversized::default());
    let mut filter = filter(max_body, oversized.clone());
    let mut out = Vec::new();
    filter.push(input, &mut out).unwrap();
    (out, oversized)
}

#[test]
fn small_messages_pass_unchanged() {
    let input: Vec<u8> = message(1, 1, 100, 40).concat();
    let (out, oversized) = filtered(100, &input);
    assert_eq!(out, input);
    assert_eq!(oversized.take(1, 1), None);
}

#[test]
fn an_oversized_body_is_dropped_and_its_delivery_noted() {
    let big = message(1, 7, 300, 128);
    let small = message(1, 8, 10, 128);
    let input = [big.concat(), small.concat()].concat();
    let (out, oversized) = filtered(100, &input);
    // The big one's method, then its header saying 0 bytes, then the small message whole.
    let expected = [big[0].clone(), header(1, 0), small.concat()].concat();
    assert_eq!(out, expected);
    assert_eq!(oversized.take(1, 7), Some(300));
    assert_eq!(oversized.take(1, 7), None, "a note is taken once");
    assert_eq!(oversized.take(1, 8), None);
}

#[test]
fn get_ok_and_returned_content_are_bounded_too() {
    let input = [
        get_ok(2, 5),
        header(2, 1_000),
        frame(FRAME_BODY, 2, &[1; 1_000]),
    ]
    .concat();
    let (out, oversized) = filtered(10, &input);
    assert_eq!(out, [get_ok(2, 5), header(2, 0)].concat());
    assert_eq!(oversized.take(2, 5), Some(1_000));

    // basic.return: content with nothing to settle, dropped without a note.
    let mut p = CLASS_BASIC.to_be_bytes().to_vec();
    p.extend_from_slice(&50u16.to_be_bytes());
    p.extend_from_slice(&312u16.to_be_bytes()); // reply code
    p.extend_from_slice(&[0, 0, 0]); // reply text, exchange, routing key: empty
    let returned = frame(FRAME_METHOD, 3, &p);
    let input = [
        returned.clone(),
        header(3, 50),
        frame(FRAME_BODY, 3, &[0; 50]),
    ]
    .concat();
    let (out, oversized) = filtered(10, &input);
    assert_eq!(out, [returned, header(3, 0)].concat());
    assert_eq!(oversized.notes.lock().unwrap().len(), 0);
}

#[test]
fn channels_are_kept_apart() {
    // Channel 1's oversized body interleaved with channel 2's small one.
    let one = message(1, 1, 50, 20);
    let two = message(2, 1, 5, 20);
    let input = [
        one[0].clone(),
        one[1].clone(),
        two[0].clone(),
        one[2].clone(),
        two[1].clone(),
        two[2].clone(),
        one[3].clone(),
        one[4].clone(),
    ]
    .concat();
    let (out, oversized) = filtered(10, &input);
    let expected = [one[0].clone(), header(1, 0), two.concat()].concat();
    assert_eq!(out, expected);
    assert_eq!(oversized.take(1, 1), Some(50));
    assert_eq!(oversized.take(2, 1), None);
}

#[test]
fn a_frame_over_the_negotiated_size_ends_the_connection() {
    let mut huge = vec![FRAME_BODY, 0, 1];
    huge.extend_from_slice(&(MAX_FRAME + 1).to_be_bytes());
    let mut filter = ContentFilter::new(10, Arc::default());
    let mut out = Vec::new();
    // Refused from its 7-byte header alone, before any of its payload is held.
    assert_eq!(
        filter.push(&huge, &mut out),
        Err(FrameError::TooLarge {
            size: MAX_FRAME + 1
        })
    );
    let mut bad_end = frame(FRAME_BODY, 1, b"abc");
    *bad_end.last_mut().unwrap() = 0;
    let mut filter = ContentFilter::new(10, Arc::default());
    assert_eq!(filter.push(&bad_end, &mut out), Err(FrameError::NoFrameEnd));
}

#[test]
fn the_brokers_protocol_header_passes_through() {
    let refusal = b"AMQP\x00\x00\x09\x01";
    let (out, _) = filtered(10, refusal);
    assert_eq!(out, refusal);
    // A frame after a refusal is still read as one (a broker never sends both).
    let input = [refusal.to_vec(), header(1, 5)].concat();
    let (out, _) = filtered(10, &input);
    assert_eq!(out, input);
}

#[test]
fn deliveries_past_the_clients_prefetch_end_the_connection() {
    let mut filter = ContentFilter::new(10, Arc::default());
    filter.sent(&[CLIENT_HEADER.to_vec(), qos(1, 2, false), consume(1)].concat());
    let mut out = Vec::new();
    let two = [message(1, 1, 5, 5).concat(), message(1, 2, 5, 5).concat()].concat();
    filter.push(&two, &mut out).unwrap();
    assert_eq!(out, two);
    // A third before either is settled is one too many: refused at its method frame.
    let third = message(1, 3, 5, 5);
    assert_eq!(
        filter.push(&third.concat(), &mut out),
        Err(FrameError::OverPrefetch {
            channel: 1,
            held: 3,
            allowed: 2
        })
    );
    // Once the client has acknowledged the first, a third fits; basic.get-ok is not counted.
    let mut filter = ContentFilter::new(10, Arc::default());
    filter.sent(&[CLIENT_HEADER.to_vec(), qos(1, 2, false), consume(1)].concat());
    filter.push(&two, &mut out).unwrap();
    filter.sent(&settle(1, 80, 1, 0));
    filter.push(&third.concat(), &mut out).unwrap();
    filter.push(&get_ok(1, 4), &mut out).unwrap();
}

#[test]
fn the_oldest_notes_go_first() {
    let oversized = Oversized::default();
    for tag in 0..=OVERSIZED_KEPT as u64 {
        oversized.note(OversizedDelivery {
            channel: 1,
            delivery_tag: tag,
            body_size: 1,
        });
    }
    assert_eq!(oversized.take(1, 0), None);
    assert_eq!(oversized.take(1, OVERSIZED_KEPT as u64), Some(1));
}

proptest! {
    /// However the bytes are split across reads, the output is what one read of them all
    /// gives, and it is whole frames: no body frame of a message over the limit, every other
    /// frame unchanged, and the filter holds no more than a frame and a read.
    #[test]
    fn splits_do_not_change_the_output(
        sizes in proptest::collection::vec(0usize..400, 1..8),
        chunk in 1usize..200,
        max_body in 0u64..300,
        cuts in proptest::collection::vec(1usize..64, 1..40),
    ) {
        let messages: Vec<Vec<Vec<u8>>> = sizes
            .iter()
            .enumerate()
            .map(|(i, size)| message(1, i as u64 + 1, *size, chunk))
            .collect();
        let input: Vec<u8> = messages.iter().map(|m| m.concat()).collect::<Vec<_>>().concat();
        let (whole, _) = filtered(max_body, &input);

        let oversized = Arc::new(Oversized::default());
        let mut filter = filter(max_body, oversized.clone());
        let mut out = Vec::new();
        let mut rest = input.as_slice();
        let mut cut = cuts.iter().cycle();
        while !rest.is_empty() {
            let n = (*cut.next().unwrap()).min(rest.len());
            filter.push(&rest[..n], &mut out).unwrap();
            prop_assert!(filter.pending.len() <= MAX_FRAME as usize + HEADER_LEN + 1 + 64);
            rest = &rest[n..];
        }
        prop_assert_eq!(&out, &whole);

        let expected: Vec<u8> = messages
            .iter()
            .zip(&sizes)
            .map(|(m, size)| {
                if *size as u64 > max_body {
                    [m[0].clone(), header(1, 0)].concat()
                } else {
                    m.concat()
                }
            })
            .collect::<Vec<_>>()
            .concat();
        prop_assert_eq!(&out, &expected);
        for (i, size) in sizes.iter().enumerate() {
            let noted = oversized.take(1, i as u64 + 1);
            prop_assert_eq!(noted, (*size as u64 > max_body).then_some(*size as u64));
        }
    }
}
