//! How many deliveries a broker may push at Shoal unsettled: what the client's own `basic.qos`
//! allows, and no more.
//!
//! A consumer's deliveries are unsolicited: `lapin` queues every `basic.deliver` it reads
//! until the listener takes it, whatever the count. A correct broker keeps within the
//! channel's prefetch; a broker a tenant chose need not, and each delivery may be up to the
//! body limit (`frames.rs`), so the count must be bounded too. [`Unsettled`] reads what the
//! client writes (its `basic.qos`, `basic.consume`, acks, nacks and rejects) and what the
//! broker delivers, per channel, and ends the connection when the deliveries not yet settled
//! exceed what the client's prefetch allows:
//! - a per-consumer prefetch (`global` false, RabbitMQ's meaning) times the consumers the
//!   client started on the channel (each `basic.consume` counts, cancelled ones too, so the
//!   bound never drops below what a correct broker may already have sent), or a channel-wide
//!   one (`global` true), whichever is larger; the largest value the client ever set counts;
//! - a channel that set no prefetch (or 0, unlimited) may hold no delivery at all: Shoal
//!   never consumes that way, and a consumer acknowledging nothing (`no-ack`) is not
//!   supported either (its deliveries would count until the bound ends the connection);
//! - `basic.get-ok` is not counted: it answers the client's own `basic.get`, one each.
//!
//! AMQP 0-9-1 (spec section 4.2.3 for framing; the `basic` class's methods by their ids).

use std::collections::{BTreeSet, HashMap};

use super::wire::{FRAME_END, FRAME_METHOD, FrameError, HEADER_LEN, MAX_FRAME};

const CLASS_CHANNEL: u16 = 20;
const CHANNEL_OPEN: u16 = 10;

const CLASS_BASIC: u16 = 60;
const BASIC_QOS: u16 = 10;
const BASIC_CONSUME: u16 = 20;
const BASIC_ACK: u16 = 80;
const BASIC_REJECT: u16 = 90;
const BASIC_RECOVER_ASYNC: u16 = 100;
const BASIC_RECOVER: u16 = 110;
const BASIC_NACK: u16 = 120;

/// The protocol header a client sends before its first frame ("AMQP", 0, 0, 9, 1).
const PROTOCOL_HEADER_LEN: usize = 8;

/// The deliveries each channel holds unsettled, and what its prefetch allows.
#[derive(Debug, Default)]
pub(super) struct Unsettled {
    channels: HashMap<u16, ChannelHolds>,
    sent: ClientFrames,
}

#[derive(Debug, Default)]
struct ChannelHolds {
    /// The largest per-consumer prefetch count the client set.
    per_consumer: u16,
    /// The largest channel-wide prefetch count the client set.
    channel_wide: u16,
    /// Consumers the client started on the channel.
    consumers: u32,
    /// Delivery tags delivered and not yet settled (tags grow within a channel).
    tags: BTreeSet<u64>,
}

impl ChannelHolds {
    fn allowed(&self) -> u64 {
        let per_consumer = u64::from(self.per_consumer) * u64::from(self.consumers.max(1));
        per_consumer.max(u64::from(self.channel_wide))
    }

    /// Settles `tag`, or every tag up to it with `multiple` (tag 0 with `multiple`: all).
    fn settle(&mut self, tag: u64, multiple: bool) {
        if !multiple {
            self.tags.remove(&tag);
        } else if tag == 0 {
            self.tags.clear();
        } else {
            self.tags = self.tags.split_off(&tag.saturating_add(1));
        }
    }
}

impl Unsettled {
    /// The broker delivered `tag` on `channel` (a `basic.deliver`).
    pub(super) fn delivered(&mut self, channel: u16, tag: u64) -> Result<(), FrameError> {
        let holds = self.channels.entry(channel).or_default();
        holds.tags.insert(tag);
        let held = holds.tags.len() as u64;
        let allowed = holds.allowed();
        if held > allowed {
            return Err(FrameError::OverPrefetch {
                channel,
                held,
                allowed,
            });
        }
        Ok(())
    }

    /// The client wrote `bytes` to the broker (any part of its stream, in order).
    pub(super) fn sent(&mut self, bytes: &[u8]) {
        let Unsettled { channels, sent } = self;
        sent.push(bytes, |channel, payload| {
            client_method(channels, channel, payload)
        });
    }
}

/// What one of the client's method frames changes.
fn client_method(channels: &mut HashMap<u16, ChannelHolds>, channel: u16, payload: &[u8]) {
    let Some((class, method)) = ids(payload) else {
        return;
    };
    let args = &payload[4..];
    match (class, method) {
        // A channel id is reused only after a close: a new channel starts with nothing.
        (CLASS_CHANNEL, CHANNEL_OPEN) => {
            channels.remove(&channel);
        }
        (CLASS_BASIC, BASIC_QOS) => {
            // prefetch-size (long, unused by RabbitMQ), prefetch-count (short), global (bit)
            let (Some(count), Some(&bits)) = (args.get(4..6), args.get(6)) else {
                return;
            };
            let count = u16::from_be_bytes([count[0], count[1]]);
            let holds = channels.entry(channel).or_default();
            if bits & 1 == 1 {
                holds.channel_wide = holds.channel_wide.max(count);
            } else {
                holds.per_consumer = holds.per_consumer.max(count);
            }
        }
        (CLASS_BASIC, BASIC_CONSUME) => {
            let holds = channels.entry(channel).or_default();
            holds.consumers = holds.consumers.saturating_add(1);
        }
        (CLASS_BASIC, BASIC_ACK | BASIC_REJECT | BASIC_NACK) => {
            // delivery-tag (longlong), then bits: ack's and nack's first is `multiple`;
            // reject's only is `requeue` (a reject settles one).
            let Some(tag) = args.get(..8) else {
                return;
            };
            let tag = u64::from_be_bytes(tag.try_into().unwrap_or_default());
            let multiple = method != BASIC_REJECT && args.get(8).is_some_and(|b| b & 1 == 1);
            if let Some(holds) = channels.get_mut(&channel) {
                holds.settle(tag, multiple);
            }
        }
        // The broker requeues or redelivers (with new tags) everything unsettled.
        (CLASS_BASIC, BASIC_RECOVER | BASIC_RECOVER_ASYNC) => {
            if let Some(holds) = channels.get_mut(&channel) {
                holds.tags.clear();
            }
        }
        _ => {}
    }
}

/// A method frame's class and method ids.
fn ids(payload: &[u8]) -> Option<(u16, u16)> {
    let id = |at: usize| {
        Some(u16::from_be_bytes([
            *payload.get(at)?,
            *payload.get(at + 1)?,
        ]))
    };
    Some((id(0)?, id(2)?))
}

/// The client's stream cut into frames: method frames are handed on whole, every other frame
/// (content, heartbeats) is passed over without being held.
#[derive(Debug)]
struct ClientFrames {
    /// Protocol-header bytes still to pass over.
    preamble: usize,
    /// The frame being read: its header, then (a method frame's) payload and end octet.
    frame: Vec<u8>,
    /// Bytes still to pass over of a frame that is not a method.
    skip: usize,
}

impl Default for ClientFrames {
    fn default() -> Self {
        ClientFrames {
            preamble: PROTOCOL_HEADER_LEN,
            frame: Vec::new(),
            skip: 0,
        }
    }
}

impl ClientFrames {
    fn push(&mut self, mut bytes: &[u8], mut method: impl FnMut(u16, &[u8])) {
        pass_over(&mut self.preamble, &mut bytes);
        while !bytes.is_empty() {
            if self.skip > 0 {
                pass_over(&mut self.skip, &mut bytes);
                continue;
            }
            let want = match self.frame.get(..HEADER_LEN) {
                None => HEADER_LEN,
                Some(header) => {
                    let size = u32::from_be_bytes([header[3], header[4], header[5], header[6]]);
                    if header[0] != FRAME_METHOD || size > MAX_FRAME {
                        // Not needed, or not a frame Shoal's client writes: passed over.
                        self.skip = size as usize + 1;
                        self.frame.clear();
                        continue;
                    }
                    HEADER_LEN + size as usize + 1
                }
            };
            let n = (want - self.frame.len()).min(bytes.len());
            self.frame.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.frame.len() == want && want > HEADER_LEN {
                if self.frame[want - 1] == FRAME_END {
                    let channel = u16::from_be_bytes([self.frame[1], self.frame[2]]);
                    method(channel, &self.frame[HEADER_LEN..want - 1]);
                }
                self.frame.clear();
            }
        }
    }
}

/// Passes over up to `count` of `bytes`, counting down.
fn pass_over(count: &mut usize, bytes: &mut &[u8]) {
    let n = (*count).min(bytes.len());
    *count -= n;
    *bytes = &bytes[n..];
}

#[cfg(test)]
mod tests;
