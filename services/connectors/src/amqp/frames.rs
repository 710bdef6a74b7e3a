//! What a broker may make Shoal hold: every frame it sends passes [`ContentFilter`] before
//! `lapin` reads it.
//!
//! `lapin` assembles a message's whole body in memory, however large the broker says it is,
//! and takes the broker's `frame_max` when Shoal names none (a broker answering 0 or 4 GiB
//! would have it allocate 32 frames of that). A tenant chooses the broker, so neither may be
//! left to it:
//! - a frame larger than [`MAX_FRAME`] (the `frame_max` Shoal asks for, RabbitMQ's default)
//!   ends the connection;
//! - a message whose content header announces a body larger than the limit reaches `lapin`
//!   with an empty body, its body frames dropped as they arrive, and its delivery tag is noted
//!   in [`Oversized`], so the listener settles it (to the dead-letter exchange) unread;
//! - a `basic.deliver` past what the client's prefetch allows unsettled ends the connection
//!   (`unsettled.rs`; the filter reads the client's side for that too).
//!
//! The filter holds at most one frame (up to [`MAX_FRAME`]) and what one read brought.
//! The framing is in `wire.rs`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::unsettled::Unsettled;
use super::wire::{
    FRAME_BODY, FRAME_END, FRAME_HEADER, FRAME_METHOD, FrameError, HEADER_LEN, MAX_FRAME,
};

/// The `basic` class and the methods of it that carry content.
const CLASS_BASIC: u16 = 60;
const BASIC_DELIVER: u16 = 60;
const BASIC_GET_OK: u16 = 71;
const BASIC_RETURN: u16 = 50;

/// How many oversized deliveries are remembered until their listener takes them; a broker
/// that sends more than this many unread ones only loses the oldest notes (each of those
/// messages then reaches the listener as an empty body, which it would have refused anyway).
const OVERSIZED_KEPT: usize = 1024;

/// Deliveries whose bodies were dropped for their size, by channel and delivery tag.
#[derive(Debug, Default)]
pub struct Oversized {
    notes: Mutex<VecDeque<OversizedDelivery>>,
}

/// A delivery whose body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OversizedDelivery {
    pub channel: u16,
    pub delivery_tag: u64,
    /// The size the broker announced, in bytes.
    pub body_size: u64,
}

impl Oversized {
    /// The body size of the delivery `delivery_tag` on `channel` if its body was dropped
    /// (once: the note is removed).
    pub fn take(&self, channel: u16, delivery_tag: u64) -> Option<u64> {
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        let at = notes
            .iter()
            .position(|n| n.channel == channel && n.delivery_tag == delivery_tag)?;
        notes.remove(at).map(|n| n.body_size)
    }

    fn note(&self, delivery: OversizedDelivery) {
        let mut notes = self.notes.lock().unwrap_or_else(|e| e.into_inner());
        if notes.len() == OVERSIZED_KEPT {
            notes.pop_front();
        }
        notes.push_back(delivery);
    }
}

#[derive(Debug, Default)]
struct ChannelState {
    /// The delivery tag of the content-bearing method whose header is expected next.
    pending_tag: Option<u64>,
    /// Body bytes still to drop of an oversized message.
    dropping: u64,
}

/// Passes frames through, dropping oversized bodies (see the module's doc).
#[derive(Debug)]
pub struct ContentFilter {
    max_body: u64,
    oversized: Arc<Oversized>,
    /// Bytes read but not yet a whole frame.
    pending: Vec<u8>,
    /// Whether the first bytes (a frame, or the broker's protocol header refusing ours) have
    /// been looked at.
    started: bool,
    channels: HashMap<u16, ChannelState>,
    /// The deliveries not yet settled, against the prefetch the client set.
    unsettled: Unsettled,
}

impl ContentFilter {
    /// A filter letting through bodies of up to `max_body` bytes.
    pub fn new(max_body: u64, oversized: Arc<Oversized>) -> ContentFilter {
        ContentFilter {
            max_body,
            oversized,
            pending: Vec::new(),
            started: false,
            channels: HashMap::new(),
            unsettled: Unsettled::default(),
        }
    }

    /// Takes what the client wrote to the broker (its prefetch and settlements).
    pub fn sent(&mut self, bytes: &[u8]) {
        self.unsettled.sent(bytes);
    }

    /// Takes `input` from the broker and appends to `out` what `lapin` may read: every whole
    /// frame so far, oversized bodies dropped. A partial frame waits for the next input.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), FrameError> {
        self.pending.extend_from_slice(input);
        let mut at = 0;
        if !self.started && !self.pending.is_empty() {
            if self.pending[0] == b'A' {
                // "AMQP" and the version the broker speaks, before it closes: lapin reports it.
                if self.pending.len() < 8 {
                    return Ok(());
                }
                out.extend_from_slice(&self.pending[..8]);
                at = 8;
            }
            self.started = true;
        }
        while let Some(frame) = self.pending.get(at..at + HEADER_LEN) {
            let kind = frame[0];
            let channel = u16::from_be_bytes([frame[1], frame[2]]);
            let size = u32::from_be_bytes([frame[3], frame[4], frame[5], frame[6]]);
            if size > MAX_FRAME {
                return Err(FrameError::TooLarge { size });
            }
            let end = at + HEADER_LEN + size as usize;
            let Some(&last) = self.pending.get(end) else {
                break;
            };
            if last != FRAME_END {
                return Err(FrameError::NoFrameEnd);
            }
            let whole = at..end + 1;
            match kind {
                FRAME_METHOD => {
                    let content = content(&self.pending[at + HEADER_LEN..end]);
                    if let Some(Content::Delivered(tag)) = content {
                        self.unsettled.delivered(channel, tag)?;
                    }
                    if let Some(content) = content {
                        self.channels.entry(channel).or_default().pending_tag = content.tag();
                    }
                    out.extend_from_slice(&self.pending[whole]);
                }
                FRAME_HEADER => {
                    let state = self.channels.entry(channel).or_default();
                    let tag = state.pending_tag.take();
                    let mut frame = self.pending[whole].to_vec();
                    if let Some(size) = body_size(&frame[HEADER_LEN..frame.len() - 1])
                        && size > self.max_body
                    {
                        // class (2) and weight (2) come first; the body size is the next 8.
                        let field = HEADER_LEN + 4..HEADER_LEN + 12;
                        frame[field].copy_from_slice(&0u64.to_be_bytes());
                        state.dropping = size;
                        if let Some(delivery_tag) = tag {
                            self.oversized.note(OversizedDelivery {
                                channel,
                                delivery_tag,
                                body_size: size,
                            });
                        }
                    }
                    out.extend_from_slice(&frame);
                }
                FRAME_BODY => {
                    let state = self.channels.entry(channel).or_default();
                    if state.dropping > 0 {
                        state.dropping = state.dropping.saturating_sub(u64::from(size));
                    } else {
                        out.extend_from_slice(&self.pending[whole]);
                    }
                }
                _ => out.extend_from_slice(&self.pending[whole]),
            }
            at = end + 1;
        }
        self.pending.drain(..at);
        Ok(())
    }
}

/// A method the broker sends content after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Content {
    /// `basic.deliver`: unsolicited, settled by the client with this tag.
    Delivered(u64),
    /// `basic.get-ok`: the answer to the client's `basic.get`, settled with this tag.
    Got(u64),
    /// `basic.return`: a publish handed back, nothing to settle.
    Returned,
}

impl Content {
    fn tag(self) -> Option<u64> {
        match self {
            Content::Delivered(tag) | Content::Got(tag) => Some(tag),
            Content::Returned => None,
        }
    }
}

/// For a method frame's payload: the content-bearing `basic` method it is, if any.
fn content(payload: &[u8]) -> Option<Content> {
    let class = u16::from_be_bytes([*payload.first()?, *payload.get(1)?]);
    let method = u16::from_be_bytes([*payload.get(2)?, *payload.get(3)?]);
    if class != CLASS_BASIC {
        return None;
    }
    let tag = |at: usize| {
        Some(u64::from_be_bytes(
            payload.get(at..at + 8)?.try_into().ok()?,
        ))
    };
    match method {
        // consumer-tag (a short string) comes before the delivery tag
        BASIC_DELIVER => Some(Content::Delivered(tag(5 + usize::from(*payload.get(4)?))?)),
        BASIC_GET_OK => Some(Content::Got(tag(4)?)),
        BASIC_RETURN => Some(Content::Returned),
        _ => None,
    }
}

/// A content header's body size (after its class and weight).
fn body_size(payload: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(payload.get(4..12)?.try_into().ok()?))
}

#[cfg(test)]
mod tests;
