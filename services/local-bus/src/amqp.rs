//! The AMQP 1.0 side of the stand-in, on `fe2o3-amqp`'s frame types and codecs.
//!
//! Why not `fe2o3-amqp`'s acceptor links: its sender link numbers deliveries with 4-byte
//! delivery tags (`link/sender_link.rs` `get_delivery_tag_or_detached`), while Service Bus
//! clients read the lock token from a 16-byte delivery tag (`azure-sdk-for-python`
//! `servicebus/_common/message.py` `lock_token`: `uuid.UUID(bytes_le=delivery_tag)`; .NET's
//! `AmqpMessageConverter` likewise). So the stand-in runs the connection, session and link
//! state itself, with `fe2o3-amqp`'s performatives, frame encoder/decoder and transport.
//!
//! * [`connection`]: protocol headers, SASL, the frame loop, sessions and links (attaching in
//!   `connection/attach.rs`, deliveries and their dispositions in `connection/outbound.rs`);
//! * [`cbs`]: `$cbs` put-token (SAS tokens);
//! * [`management`]: the `$management` request/response node;
//! * [`wire`]: helpers for AMQP values and errors.

pub mod cbs;
pub mod connection;
pub mod management;
pub mod wire;
