//! AMQP frames written out for the filter's tests.

use super::wire::{FRAME_END, FRAME_METHOD};

/// A frame of `kind` on `channel` carrying `payload`.
pub fn frame(kind: u8, channel: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![kind];
    f.extend_from_slice(&channel.to_be_bytes());
    f.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
    f.extend_from_slice(payload);
    f.push(FRAME_END);
    f
}

/// A method frame: `class`, `method`, then `args`.
pub fn method(channel: u16, class: u16, method: u16, args: &[u8]) -> Vec<u8> {
    let mut p = class.to_be_bytes().to_vec();
    p.extend_from_slice(&method.to_be_bytes());
    p.extend_from_slice(args);
    frame(FRAME_METHOD, channel, &p)
}

/// The protocol header a client sends first.
pub const CLIENT_HEADER: &[u8] = b"AMQP\x00\x00\x09\x01";

/// `basic.qos` with `count` per consumer, or for the channel with `global`.
pub fn qos(channel: u16, count: u16, global: bool) -> Vec<u8> {
    let mut args = 0u32.to_be_bytes().to_vec();
    args.extend_from_slice(&count.to_be_bytes());
    args.push(u8::from(global));
    method(channel, 60, 10, &args)
}

/// `basic.consume` on queue "q" as consumer "ctag".
pub fn consume(channel: u16) -> Vec<u8> {
    let mut args = 0u16.to_be_bytes().to_vec();
    args.extend_from_slice(&[1, b'q', 4, b'c', b't', b'a', b'g', 0]);
    args.extend_from_slice(&0u32.to_be_bytes()); // no arguments
    method(channel, 60, 20, &args)
}

/// `basic.ack` (80), `basic.reject` (90) or `basic.nack` (120) of `tag`, with `bits`.
pub fn settle(channel: u16, which: u16, tag: u64, bits: u8) -> Vec<u8> {
    let mut args = tag.to_be_bytes().to_vec();
    args.push(bits);
    method(channel, 60, which, &args)
}
