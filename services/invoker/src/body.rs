//! How much of a handler's answer is read: the reading itself is `shoal_egress::read_capped`,
//! shared with every other answer from a tenant's destination.

/// What a handler's answer may weigh unless the process is told otherwise
/// (`--max-response-bytes`).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
