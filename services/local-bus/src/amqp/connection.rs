//! One AMQP connection: protocol headers and SASL (ANONYMOUS and PLAIN, both accepted without
//! checking, since authorization is CBS's job — as Service Bus and its emulator do), then the
//! frame loop with its sessions and links.
//!
//! Links the client attaches:
//! * a sender to a queue or topic → messages enqueued (batches, format `0x80013700`, split);
//! * a sender to `$cbs` or `<entity>/$management` and a receiver from the same node → requests
//!   and their responses;
//! * a receiver from a queue, subscription or dead-letter queue → deliveries in peek-lock
//!   (unsettled, lock token as the 16-byte delivery tag) or receive-and-delete (settled), with
//!   an optional `com.microsoft:session-filter`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use chrono::{DateTime, Utc};
use fe2o3_amqp::frames::amqp::{Frame, FrameBody};
use fe2o3_amqp::frames::sasl::{self, FrameCodec as SaslCodec};
use fe2o3_amqp::transport::Transport;
use fe2o3_amqp::types::definitions::{self, Handle, Role, SenderSettleMode};
use fe2o3_amqp::types::messaging::{
    Accepted, Body, DeliveryState, Message, Modified, Rejected, Source, TargetArchetype,
};
use fe2o3_amqp::types::performatives::{
    Attach, Begin, Close, Detach, Disposition, End, Flow, Open, Transfer,
};
use fe2o3_amqp::types::primitives::{Array, Binary, SimpleValue, Symbol, Value};
use fe2o3_amqp::types::sasl::{SaslCode, SaslMechanisms, SaslOutcome};
use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::{Decoder, Encoder};
use uuid::Uuid;

mod attach;
mod inbound;
mod outbound;

use super::{cbs, management, wire};
use crate::bus::Bus;
use crate::config::Rights;
use crate::sas::Grant;
use crate::store::entity::Settlement;
use crate::store::{self, SubQueue};

const AMQP_HEADER: [u8; 8] = *b"AMQP\x00\x01\x00\x00";
const SASL_HEADER: [u8; 8] = *b"AMQP\x03\x01\x00\x00";
/// What the stand-in accepts per frame; larger messages arrive in several transfer frames.
const MAX_FRAME_SIZE: u32 = 256 * 1024;
/// Link credit granted to clients' senders, topped up when half is used.
const SENDER_CREDIT: u32 = 1000;
const SESSION_FILTER: &str = "com.microsoft:session-filter";
const LOCKED_UNTIL_UTC: &str = "com.microsoft:locked-until-utc";
/// .NET ticks at the Unix epoch (`_common/constants.py` `DATETIMEOFFSET_EPOCH`).
const DOTNET_EPOCH_TICKS: i64 = 621_355_968_000_000_000;
const TICK: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("framing: {0}")]
    Frame(#[from] fe2o3_amqp::frames::Error),
    #[error("transport: {0}")]
    Transport(#[from] fe2o3_amqp::transport::Error),
    #[error("protocol: {0}")]
    Protocol(String),
}

/// Serves one connection whose first bytes (`AMQP…`) are still unread.
pub async fn serve<Io>(mut io: Io, bus: Arc<Bus>) -> Result<(), ConnectionError>
where
    Io: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug + 'static,
{
    let mut header = [0u8; 8];
    io.read_exact(&mut header).await?;
    if header == SASL_HEADER {
        io.write_all(&SASL_HEADER).await?;
        sasl_exchange(&mut io).await?;
        io.read_exact(&mut header).await?;
    }
    if header != AMQP_HEADER {
        io.write_all(&AMQP_HEADER).await?;
        return Err(ConnectionError::Protocol(format!(
            "unsupported protocol header {header:?}"
        )));
    }
    io.write_all(&AMQP_HEADER).await?;
    let mut transport = Transport::<Io, Frame>::bind(io, MAX_FRAME_SIZE as usize, None);
    transport.set_decoder_max_frame_size(MAX_FRAME_SIZE as usize);
    let mut connection = Connection {
        bus,
        grants: Vec::new(),
        sessions: HashMap::new(),
        out: Vec::new(),
        closed: false,
        idle: None,
        frame_size: None,
    };
    let mut tick = tokio::time::interval(TICK);
    let mut last_sent = tokio::time::Instant::now();
    while !connection.closed {
        tokio::select! {
            frame = transport.next() => match frame {
                Some(frame) => connection.on_frame(frame?),
                None => break,
            },
            _ = connection.bus.changed.notified() => {}
            _ = tick.tick() => {}
        }
        connection.pump();
        if let Some(idle) = connection.idle
            && connection.out.is_empty()
            && last_sent.elapsed() >= idle / 2
        {
            connection.out.push(Frame::new(0u16, FrameBody::Empty));
        }
        if let Some(max) = connection.take_frame_size() {
            transport.set_encoder_max_frame_size(max);
        }
        if !connection.out.is_empty() {
            for frame in connection.out.drain(..) {
                transport.feed(frame).await?;
            }
            transport.flush().await?;
            last_sent = tokio::time::Instant::now();
        }
    }
    connection.release_all();
    Ok(())
}

/// SASL: offer ANONYMOUS and PLAIN (and MSSBCBS, which .NET asks for), accept the client's
/// choice. Frames are length-prefixed; the codec handles the rest.
async fn sasl_exchange<Io: AsyncRead + AsyncWrite + Unpin>(
    io: &mut Io,
) -> Result<(), ConnectionError> {
    let mechanisms = SaslMechanisms {
        sasl_server_mechanisms: Array(vec![
            Symbol::from("MSSBCBS"),
            Symbol::from("ANONYMOUS"),
            Symbol::from("PLAIN"),
        ]),
    };
    write_sasl(io, sasl::Frame::Mechanisms(mechanisms)).await?;
    let length = io.read_u32().await? as usize;
    if !(8..=64 * 1024).contains(&length) {
        return Err(ConnectionError::Protocol(format!(
            "SASL frame of {length} bytes"
        )));
    }
    let mut body = BytesMut::zeroed(length - 4);
    io.read_exact(&mut body).await?;
    let init = (SaslCodec {}).decode(&mut body)?;
    match init {
        Some(sasl::Frame::Init(_)) => {}
        other => {
            return Err(ConnectionError::Protocol(format!(
                "expected sasl-init, got {other:?}"
            )));
        }
    }
    write_sasl(
        io,
        sasl::Frame::Outcome(SaslOutcome {
            code: SaslCode::Ok,
            additional_data: None,
        }),
    )
    .await
}

async fn write_sasl<Io: AsyncWrite + Unpin>(
    io: &mut Io,
    frame: sasl::Frame,
) -> Result<(), ConnectionError> {
    let mut body = BytesMut::new();
    SaslCodec {}.encode(frame, &mut body)?;
    let mut out = BytesMut::with_capacity(body.len() + 4);
    out.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    out.extend_from_slice(&body);
    io.write_all(&out).await?;
    io.flush().await?;
    Ok(())
}

struct Connection {
    bus: Arc<Bus>,
    grants: Vec<Grant>,
    /// By the client's channel; the stand-in answers on the same channel number.
    sessions: HashMap<u16, Session>,
    out: Vec<Frame>,
    closed: bool,
    idle: Option<Duration>,
    frame_size: Option<usize>,
}

#[derive(Default)]
struct Session {
    next_outgoing_id: u32,
    next_incoming_id: u32,
    /// By the client's handle; the stand-in uses the same handle number.
    links: HashMap<u32, Link>,
    /// Peek-locked deliveries awaiting the client's disposition, by delivery id.
    unsettled: HashMap<u32, Unsettled>,
    next_delivery_tag: u64,
}

struct Unsettled {
    entity: String,
    sub_queue: SubQueue,
    token: Uuid,
}

struct Link {
    kind: LinkKind,
    /// Credit and delivery count: the client's receivers' (our sending side).
    credit: u32,
    delivery_count: u32,
    drain: bool,
    /// A transfer spread over several frames.
    partial: Option<Partial>,
    /// Responses (encoded) waiting for the client's credit on a `Replies` link: a sender may
    /// not transfer without credit (AMQP 1.0 2.6.7), and a client that has not yet granted
    /// any drops the transfer (fe2o3-amqp's `TransferLimitExceeded`), so the request behind
    /// it would never be answered.
    replies: std::collections::VecDeque<Vec<u8>>,
}

struct Partial {
    delivery_id: Option<u32>,
    settled: bool,
    message_format: u32,
    payload: BytesMut,
}

enum LinkKind {
    /// The client sends messages to a queue or topic.
    Inbound {
        target: store::Target,
        address: String,
    },
    /// The client sends requests to `$cbs` or `<entity>/$management`.
    Requests { node: String },
    /// The client receives responses from a node, addressed by its target (the reply-to).
    Replies {
        node: String,
        reply_to: Option<String>,
    },
    /// The client receives an entity's messages.
    Outbound {
        entity: String,
        sub_queue: SubQueue,
        receive_and_delete: bool,
        session: Option<String>,
        owner: u64,
    },
}

fn now() -> DateTime<Utc> {
    Utc::now()
}

/// A one-frame transfer of a whole message to the client.
fn transfer(handle: u32, delivery_id: u32, tag: Vec<u8>, settled: bool) -> Transfer {
    Transfer {
        handle: Handle(handle),
        delivery_id: Some(delivery_id),
        delivery_tag: Some(Binary::from(tag)),
        message_format: Some(0),
        settled: Some(settled),
        more: false,
        rcv_settle_mode: None,
        state: None,
        resume: false,
        aborted: false,
        batchable: false,
    }
}

impl Connection {
    fn take_frame_size(&mut self) -> Option<usize> {
        self.frame_size.take()
    }

    fn send(&mut self, channel: u16, body: FrameBody) {
        self.out.push(Frame::new(channel, body));
    }

    fn on_frame(&mut self, frame: Frame) {
        let channel = frame.channel();
        match frame.into_body() {
            FrameBody::Open(open) => self.on_open(open),
            FrameBody::Begin(begin) => self.on_begin(channel, begin),
            FrameBody::Attach(attach) => self.on_attach(channel, attach),
            FrameBody::Flow(flow) => self.on_flow(channel, flow),
            FrameBody::Transfer {
                performative,
                payload,
            } => self.on_transfer(channel, performative, &payload),
            FrameBody::Disposition(disposition) => self.on_disposition(channel, disposition),
            FrameBody::Detach(detach) => self.on_detach(channel, detach),
            FrameBody::End(_) => {
                if let Some(session) = self.sessions.remove(&channel) {
                    self.release_session(session);
                }
                self.send(channel, FrameBody::End(End { error: None }));
            }
            FrameBody::Close(_) => {
                self.send(0, FrameBody::Close(Close { error: None }));
                self.closed = true;
            }
            FrameBody::Empty => {}
        }
    }

    fn on_open(&mut self, open: Open) {
        self.idle = open
            .idle_time_out
            .filter(|ms| *ms > 0)
            .map(|ms| Duration::from_millis(u64::from(ms)));
        // Frames to the client stay within its max-frame-size; the loop applies it.
        let peer_max = open.max_frame_size.0 as usize;
        self.frame_size = Some(peer_max.clamp(512, MAX_FRAME_SIZE as usize));
        let reply = Open {
            container_id: format!("local-bus-{}", Uuid::new_v4()),
            hostname: None,
            max_frame_size: MAX_FRAME_SIZE.into(),
            channel_max: open.channel_max,
            idle_time_out: None,
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        self.send(0, FrameBody::Open(reply));
    }

    fn on_begin(&mut self, channel: u16, begin: Begin) {
        let session = Session {
            next_incoming_id: begin.next_outgoing_id,
            ..Session::default()
        };
        self.sessions.insert(channel, session);
        let reply = Begin {
            remote_channel: Some(channel),
            next_outgoing_id: 0,
            incoming_window: 65_536,
            outgoing_window: 65_536,
            handle_max: Handle(u32::MAX),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        self.send(channel, FrameBody::Begin(reply));
    }

    fn grant_credit(&mut self, channel: u16, handle: u32, delivery_count: u32) {
        let Some(session) = self.sessions.get_mut(&channel) else {
            return;
        };
        let Some(link) = session.links.get_mut(&handle) else {
            return;
        };
        link.credit = SENDER_CREDIT;
        link.delivery_count = delivery_count;
        let flow = Flow {
            next_incoming_id: Some(session.next_incoming_id),
            incoming_window: 65_536,
            next_outgoing_id: session.next_outgoing_id,
            outgoing_window: 65_536,
            handle: Some(Handle(handle)),
            delivery_count: Some(delivery_count),
            link_credit: Some(SENDER_CREDIT),
            available: None,
            drain: false,
            echo: false,
            properties: None,
        };
        self.send(channel, FrameBody::Flow(flow));
    }

    fn on_flow(&mut self, channel: u16, flow: Flow) {
        let Some(session) = self.sessions.get_mut(&channel) else {
            return;
        };
        let Some(handle) = flow.handle else { return };
        let Some(link) = session.links.get_mut(&handle.0) else {
            return;
        };
        if matches!(
            link.kind,
            LinkKind::Outbound { .. } | LinkKind::Replies { .. }
        ) {
            // credit = receiver's delivery-count + link-credit − sender's delivery-count (2.6.7).
            let theirs = flow.delivery_count.unwrap_or(0);
            let credit = flow.link_credit.unwrap_or(0);
            link.credit = theirs
                .wrapping_add(credit)
                .wrapping_sub(link.delivery_count);
            if link.credit > credit {
                link.credit = credit;
            }
            link.drain = flow.drain;
            if matches!(link.kind, LinkKind::Replies { .. }) {
                self.send_replies(channel, handle.0);
            }
        }
        if flow.echo {
            let reply = self.link_flow(channel, handle.0);
            if let Some(reply) = reply {
                self.send(channel, FrameBody::Flow(reply));
            }
        }
    }

    fn link_flow(&self, channel: u16, handle: u32) -> Option<Flow> {
        let session = self.sessions.get(&channel)?;
        let link = session.links.get(&handle)?;
        Some(Flow {
            next_incoming_id: Some(session.next_incoming_id),
            incoming_window: 65_536,
            next_outgoing_id: session.next_outgoing_id,
            outgoing_window: 65_536,
            handle: Some(Handle(handle)),
            delivery_count: Some(link.delivery_count),
            link_credit: Some(link.credit),
            available: None,
            drain: link.drain,
            echo: false,
            properties: None,
        })
    }

    fn on_detach(&mut self, channel: u16, detach: Detach) {
        let link = self
            .sessions
            .get_mut(&channel)
            .and_then(|s| s.links.remove(&detach.handle.0));
        // A handle the stand-in does not hold is one it detached itself (a refused attach):
        // the client's detach answers that one and must not be answered again (AMQP 1.0
        // §2.7.7). A second detach names a handle the client has already freed, and
        // fe2o3-amqp ends the whole session on it (`UnattachedHandle`), dropping every other
        // link on it — e.g. a held session receiver when a sibling's accept-next-session was
        // refused for want of a free session.
        let Some(link) = link else {
            return;
        };
        if let Link {
            kind: LinkKind::Outbound { entity, owner, .. },
            ..
        } = link
            && let Some(entity) = self.bus.store().entities.get_mut(&entity)
        {
            entity.release_sessions(owner);
        }
        self.send(
            channel,
            FrameBody::Detach(Detach {
                handle: detach.handle,
                closed: true,
                error: None,
            }),
        );
    }

    fn release_session(&mut self, session: Session) {
        let mut store = self.bus.store();
        for link in session.links.values() {
            if let LinkKind::Outbound { entity, owner, .. } = &link.kind
                && let Some(entity) = store.entities.get_mut(entity)
            {
                entity.release_sessions(*owner);
            }
        }
    }

    fn release_all(&mut self) {
        let sessions: Vec<Session> = self.sessions.drain().map(|(_, s)| s).collect();
        for session in sessions {
            self.release_session(session);
        }
    }
}

fn rejected(error: definitions::Error) -> DeliveryState {
    DeliveryState::Rejected(Rejected { error: Some(error) })
}

fn not_found(address: &str) -> definitions::Error {
    wire::error(
        "amqp:not-found",
        format!("The messaging entity '{address}' could not be found."),
    )
}
