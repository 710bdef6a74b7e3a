//! AMQP 0-9-1 framing as the filter reads it (spec section 4.2.3): type (1 byte), channel (2),
//! payload size (4), the payload, and the frame-end octet `0xCE`.

/// The largest frame Shoal negotiates or accepts, in bytes: RabbitMQ's default `frame_max`.
pub const MAX_FRAME: u32 = 131_072;

pub(super) const FRAME_METHOD: u8 = 1;
pub(super) const FRAME_HEADER: u8 = 2;
pub(super) const FRAME_BODY: u8 = 3;
pub(super) const FRAME_END: u8 = 0xCE;
pub(super) const HEADER_LEN: usize = 7;

/// Why the connection is ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("the broker sent a {size}-byte frame; at most {MAX_FRAME} bytes were negotiated")]
    TooLarge { size: u32 },
    #[error("the broker sent a frame without its end octet")]
    NoFrameEnd,
    #[error(
        "the broker delivered {held} messages unsettled on channel {channel}; its prefetch \
         allows {allowed}"
    )]
    OverPrefetch {
        channel: u16,
        held: u64,
        allowed: u64,
    },
}
