//! What the client sends: messages to a queue or topic (single or batched), and requests to
//! `$cbs` and `$management`, answered on the reply link.

use super::*;

/// The Service Bus batch message format (`azure-sdk-for-python` `_pyamqp/constants.py`
/// `BATCH_MESSAGE_FORMAT`).
const BATCH_MESSAGE_FORMAT: u32 = 0x8001_3700;

impl Connection {
    pub(super) fn on_transfer(&mut self, channel: u16, transfer: Transfer, payload: &[u8]) {
        let Some(session) = self.sessions.get_mut(&channel) else {
            return;
        };
        session.next_incoming_id = session.next_incoming_id.wrapping_add(1);
        let handle = transfer.handle.0;
        let Some(link) = session.links.get_mut(&handle) else {
            return;
        };
        let partial = link.partial.get_or_insert_with(|| Partial {
            delivery_id: transfer.delivery_id,
            settled: transfer.settled.unwrap_or(false),
            message_format: transfer.message_format.unwrap_or(0),
            payload: BytesMut::new(),
        });
        partial.payload.extend_from_slice(payload);
        if transfer.more {
            return;
        }
        let Some(partial) = link.partial.take() else {
            return;
        };
        if transfer.aborted {
            return;
        }
        link.delivery_count = link.delivery_count.wrapping_add(1);
        link.credit = link.credit.saturating_sub(1);
        let top_up = link.credit < SENDER_CREDIT / 2;
        let delivery_count = link.delivery_count;
        let state = self.on_delivery(channel, handle, &partial);
        if let (Some(delivery_id), false) = (partial.delivery_id, partial.settled) {
            let disposition = Disposition {
                role: Role::Receiver,
                first: delivery_id,
                last: None,
                settled: true,
                state: Some(state),
                batchable: false,
            };
            self.send(channel, FrameBody::Disposition(disposition));
        }
        if top_up {
            self.grant_credit(channel, handle, delivery_count);
        }
    }

    /// A complete message from the client: enqueue it, or answer a request.
    fn on_delivery(&mut self, channel: u16, handle: u32, partial: &Partial) -> DeliveryState {
        let kind = match self
            .sessions
            .get(&channel)
            .and_then(|s| s.links.get(&handle))
        {
            Some(Link {
                kind: LinkKind::Inbound { target, address },
                ..
            }) => Some((Some((target.clone(), address.clone())), None)),
            Some(Link {
                kind: LinkKind::Requests { node },
                ..
            }) => Some((None, Some(node.clone()))),
            _ => None,
        };
        let message = match store::message::decode(&partial.payload) {
            Ok(message) => message,
            Err(e) => {
                return rejected(wire::error(
                    "amqp:decode-error",
                    format!("The message cannot be decoded: {e}"),
                ));
            }
        };
        match kind {
            Some((Some((target, address)), _)) => {
                self.enqueue(&target, &address, message, partial.message_format)
            }
            Some((None, Some(node))) => {
                let response = if node == cbs::CBS_NODE {
                    cbs::handle(&message, &self.bus.config.policies, &mut self.grants, now())
                } else {
                    let mut store = self.bus.maintained_store();
                    let response =
                        management::handle(&message, &node, &mut store, &self.grants, now());
                    drop(store);
                    self.bus.changed.notify_waiters();
                    response
                };
                let reply_to = message.properties.as_ref().and_then(|p| p.reply_to.clone());
                self.respond(channel, &node, reply_to, response);
                DeliveryState::Accepted(Accepted {})
            }
            _ => rejected(wire::error(
                "amqp:not-allowed",
                "This link does not accept messages.",
            )),
        }
    }

    fn enqueue(
        &mut self,
        target: &store::Target,
        address: &str,
        message: Message<Body<Value>>,
        format: u32,
    ) -> DeliveryState {
        let messages = if format == BATCH_MESSAGE_FORMAT {
            match unbatch(message) {
                Ok(messages) => messages,
                Err(e) => return rejected(wire::error("amqp:decode-error", e)),
            }
        } else {
            vec![message]
        };
        let now = now();
        let mut store = self.bus.maintained_store();
        if store.resolve(address).is_none() {
            return rejected(not_found(address));
        }
        for message in messages {
            let scheduled_for = management::scheduled_enqueue_time(&message);
            store.send(target, message, scheduled_for, now);
        }
        drop(store);
        self.bus.changed.notify_waiters();
        DeliveryState::Accepted(Accepted {})
    }

    /// Answers on the client's receiver from `node` whose target is `reply_to`: queued on
    /// that link, and sent as its credit allows.
    fn respond(
        &mut self,
        channel: u16,
        node: &str,
        reply_to: Option<String>,
        response: Message<Body<Value>>,
    ) {
        let Some(session) = self.sessions.get_mut(&channel) else {
            return;
        };
        let mut candidates: Vec<(u32, bool)> = session
            .links
            .iter()
            .filter_map(|(handle, link)| match &link.kind {
                LinkKind::Replies {
                    node: n,
                    reply_to: r,
                } if n.eq_ignore_ascii_case(node) => Some((*handle, r.is_some() && *r == reply_to)),
                _ => None,
            })
            .collect();
        candidates.sort_by_key(|(_, exact)| !exact);
        let Some((handle, _)) = candidates.first().copied() else {
            return;
        };
        let Ok(payload) = store::message::encode(&response) else {
            return;
        };
        if let Some(link) = session.links.get_mut(&handle) {
            link.replies.push_back(payload);
        }
        self.send_replies(channel, handle);
    }

    /// Sends the link's queued responses while it has credit.
    pub(super) fn send_replies(&mut self, channel: u16, handle: u32) {
        loop {
            let Some(session) = self.sessions.get_mut(&channel) else {
                return;
            };
            let Some(link) = session.links.get_mut(&handle) else {
                return;
            };
            if link.credit == 0 {
                return;
            }
            let Some(payload) = link.replies.pop_front() else {
                return;
            };
            link.credit -= 1;
            link.delivery_count = link.delivery_count.wrapping_add(1);
            let delivery_id = session.next_outgoing_id;
            session.next_outgoing_id = session.next_outgoing_id.wrapping_add(1);
            session.next_delivery_tag += 1;
            let tag = session.next_delivery_tag.to_be_bytes().to_vec();
            self.send(
                channel,
                FrameBody::Transfer {
                    performative: transfer(handle, delivery_id, tag, true),
                    payload: payload.into(),
                },
            );
        }
    }
}

/// Splits a batch (format `0x80013700`): each data section is one encoded message.
fn unbatch(batch: Message<Body<Value>>) -> Result<Vec<Message<Body<Value>>>, String> {
    match batch.body {
        Body::Data(sections) => sections
            .into_iter()
            .map(|data| {
                store::message::decode(&data.0)
                    .map_err(|e| format!("a batched message cannot be decoded: {e}"))
            })
            .collect(),
        _ => Err("a batch must carry its messages as data sections".to_owned()),
    }
}
