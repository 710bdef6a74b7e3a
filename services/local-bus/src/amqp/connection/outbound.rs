//! Deliveries to the client's receivers: the pump that locks (or takes) messages while the link
//! has credit, drain, and the dispositions that settle them.

use super::*;

impl Connection {
    pub(super) fn on_disposition(&mut self, channel: u16, disposition: Disposition) {
        if disposition.role != Role::Receiver {
            return;
        }
        let last = disposition.last.unwrap_or(disposition.first);
        let now = now();
        let mut replies = Vec::new();
        for delivery_id in disposition.first..=last {
            let Some(session) = self.sessions.get_mut(&channel) else {
                return;
            };
            let Some(unsettled) = session.unsettled.remove(&delivery_id) else {
                continue;
            };
            let outcome = match &disposition.state {
                Some(state) => settle(&self.bus, &unsettled, state, now),
                None => continue,
            };
            if !disposition.settled {
                replies.push((delivery_id, outcome));
            }
        }
        self.bus.changed.notify_waiters();
        for (delivery_id, state) in replies {
            let reply = Disposition {
                role: Role::Sender,
                first: delivery_id,
                last: None,
                settled: true,
                state: Some(state),
                batchable: false,
            };
            self.send(channel, FrameBody::Disposition(reply));
        }
    }

    /// Delivers messages to every receiver with credit, then answers drains.
    pub(super) fn pump(&mut self) {
        let channels: Vec<u16> = self.sessions.keys().copied().collect();
        for channel in channels {
            let handles: Vec<u32> = self
                .sessions
                .get(&channel)
                .map(|s| s.links.keys().copied().collect())
                .unwrap_or_default();
            for handle in handles {
                self.pump_link(channel, handle);
            }
        }
    }

    fn pump_link(&mut self, channel: u16, handle: u32) {
        let bus = self.bus.clone();
        let Some(session) = self.sessions.get_mut(&channel) else {
            return;
        };
        let Some(link) = session.links.get_mut(&handle) else {
            return;
        };
        let LinkKind::Outbound {
            entity,
            sub_queue,
            receive_and_delete,
            session: session_id,
            owner,
        } = &link.kind
        else {
            return;
        };
        let mut frames = Vec::new();
        let now = now();
        while link.credit > 0 {
            let mut store = bus.store();
            let Some(state) = store.entities.get_mut(entity) else {
                break;
            };
            if let Some(id) = session_id
                && !state.holds_session(id, *owner, now)
            {
                break;
            }
            let taken = if *receive_and_delete {
                state.take_next(*sub_queue, session_id.as_deref(), now)
            } else {
                state.lock_next(*sub_queue, session_id.as_deref(), now)
            };
            let Some(message) = taken else { break };
            let ttl = state.effective_ttl(&message.message);
            drop(store);
            let mut wire_message = message.to_wire(ttl);
            if let Some(lock) = message.lock {
                // `x-opt-lock-token`, which `azservicebus` reads before the delivery tag
                // (`amqp/amqp_receiver.rs`); Python and .NET read the tag.
                let annotations = wire_message
                    .delivery_annotations
                    .get_or_insert_with(Default::default);
                annotations.insert("x-opt-lock-token".into(), wire::uuid_value(lock.token));
            }
            let Ok(payload) = store::message::encode(&wire_message) else {
                break;
            };
            let token = message.lock.map(|l| l.token).unwrap_or_else(Uuid::new_v4);
            let delivery_id = session.next_outgoing_id;
            session.next_outgoing_id = session.next_outgoing_id.wrapping_add(1);
            if !*receive_and_delete {
                session.unsettled.insert(
                    delivery_id,
                    Unsettled {
                        entity: entity.clone(),
                        sub_queue: *sub_queue,
                        token,
                    },
                );
            }
            link.credit -= 1;
            link.delivery_count = link.delivery_count.wrapping_add(1);
            // The lock token, in .NET's GUID byte order (`uuid.UUID(bytes_le=...)`).
            let tag = token.to_bytes_le().to_vec();
            let transfer = transfer(handle, delivery_id, tag, *receive_and_delete);
            frames.push(FrameBody::Transfer {
                performative: transfer,
                payload: payload.into(),
            });
        }
        if link.drain && link.credit > 0 {
            link.delivery_count = link.delivery_count.wrapping_add(link.credit);
            link.credit = 0;
            link.drain = false;
            frames.push(FrameBody::Flow(Flow {
                next_incoming_id: Some(session.next_incoming_id),
                incoming_window: 65_536,
                next_outgoing_id: session.next_outgoing_id,
                outgoing_window: 65_536,
                handle: Some(Handle(handle)),
                delivery_count: Some(link.delivery_count),
                link_credit: Some(0),
                available: None,
                drain: true,
                echo: false,
                properties: None,
            }));
        }
        for body in frames {
            self.send(channel, body);
        }
    }
}

/// Applies a client's disposition to a peek-locked message; returns the state to echo (the
/// outcome applied, or `rejected` with `com.microsoft:message-lock-lost`).
fn settle(
    bus: &Bus,
    unsettled: &Unsettled,
    state: &DeliveryState,
    now: DateTime<Utc>,
) -> DeliveryState {
    let settlement = match state {
        DeliveryState::Accepted(_) => Settlement::Complete,
        DeliveryState::Released(_) => Settlement::Release,
        DeliveryState::Modified(Modified {
            undeliverable_here,
            message_annotations,
            ..
        }) => {
            let properties = fields_to_properties(message_annotations.as_ref());
            if *undeliverable_here == Some(true) {
                Settlement::Defer { properties }
            } else {
                Settlement::Abandon { properties }
            }
        }
        DeliveryState::Rejected(Rejected { error }) => {
            let info = error.as_ref().and_then(|e| e.info.as_deref());
            let text = |key: &str| {
                info.and_then(|i| i.get(&Symbol::from(key)))
                    .and_then(wire::as_str)
                    .map(str::to_owned)
            };
            // Clients put `propertiesToModify` into the error's info beside the two
            // dead-letter headers (azure-sdk-for-net `Amqp/AmqpReceiver.cs`
            // `DeadLetterInternalAsync`; azservicebus `amqp_receiver.rs` `dead_letter_message`).
            let properties = fields_to_properties(info)
                .into_iter()
                .filter(|(key, _)| {
                    key != DEAD_LETTER_REASON && key != DEAD_LETTER_ERROR_DESCRIPTION
                })
                .collect();
            Settlement::DeadLetter {
                reason: text(DEAD_LETTER_REASON),
                description: text(DEAD_LETTER_ERROR_DESCRIPTION)
                    .or_else(|| error.as_ref().and_then(|e| e.description.clone())),
                properties,
            }
        }
        _ => return state.clone(),
    };
    let mut store = bus.store();
    let result = match store.entities.get_mut(&unsettled.entity) {
        Some(entity) => entity.settle(unsettled.sub_queue, unsettled.token, settlement, now),
        None => Err(store::SettleError::LockLost),
    };
    match result {
        // Echo the outcome applied; a dead-letter is echoed as `rejected` without an error,
        // since the Python SDK raises on a rejected outcome that carries one
        // (`_pyamqp/receiver.py` `send_disposition`).
        Ok(()) => match state {
            DeliveryState::Rejected(_) => DeliveryState::Rejected(Rejected { error: None }),
            other => other.clone(),
        },
        Err(e) => rejected(wire::error(
            "com.microsoft:message-lock-lost",
            e.to_string(),
        )),
    }
}

/// The dead-letter headers a `rejected` outcome's error info carries (.NET `AmqpMessageConstants`).
const DEAD_LETTER_REASON: &str = "DeadLetterReason";
const DEAD_LETTER_ERROR_DESCRIPTION: &str = "DeadLetterErrorDescription";

fn fields_to_properties(fields: Option<&definitions::Fields>) -> Vec<(String, SimpleValue)> {
    fields
        .map(|f| {
            f.iter()
                .filter_map(|(k, v)| Some((k.0.clone(), SimpleValue::try_from(v.clone()).ok()?)))
                .collect()
        })
        .unwrap_or_default()
}
