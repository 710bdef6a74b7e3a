//! Attaching links: what a client may attach to (entities, `$cbs`, `$management`), with which
//! rights, and the session filter of sessionful receivers.

use super::*;

impl Connection {
    fn authorize(&self, path: &str, needed: Rights) -> Result<(), String> {
        let now = now();
        let mut last = "no token was put on $cbs for this entity".to_owned();
        for grant in &self.grants {
            match grant.allows(path, needed, now) {
                Ok(()) => return Ok(()),
                Err(e) => last = e.to_string(),
            }
        }
        Err(format!("Unauthorized access to '{path}': {last}."))
    }

    pub(super) fn on_attach(&mut self, channel: u16, attach: Attach) {
        let handle = attach.handle.0;
        let client_receives = attach.role == Role::Receiver;
        if client_receives && accepts_next_session(&attach) && self.bus.session_attaches.arrived() {
            tracing::debug!(
                handle,
                "leaving an accept-next-session attach unanswered (test-only fault)"
            );
            return;
        }
        let source_address = attach.source.as_ref().and_then(|s| s.address.clone());
        let target_address = match attach.target.as_deref() {
            Some(TargetArchetype::Target(t)) => t.address.clone(),
            _ => None,
        };
        let mut reply = Attach {
            name: attach.name.clone(),
            handle: attach.handle.clone(),
            role: if client_receives {
                Role::Sender
            } else {
                Role::Receiver
            },
            snd_settle_mode: attach.snd_settle_mode.clone(),
            rcv_settle_mode: attach.rcv_settle_mode.clone(),
            source: attach.source.clone(),
            target: attach.target.clone(),
            unsettled: None,
            incomplete_unsettled: false,
            initial_delivery_count: client_receives.then_some(0),
            max_message_size: Some(u64::from(MAX_FRAME_SIZE) * 4),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        let outcome = if client_receives {
            self.attach_outbound(
                source_address.unwrap_or_default(),
                target_address,
                &attach,
                &mut reply,
            )
        } else {
            self.attach_inbound(target_address.unwrap_or_default())
        };
        match outcome {
            Ok(kind) => {
                let inbound = !client_receives;
                let link = Link {
                    kind,
                    credit: 0,
                    delivery_count: 0,
                    drain: false,
                    partial: None,
                    replies: Default::default(),
                };
                self.send(channel, FrameBody::Attach(reply));
                if let Some(session) = self.sessions.get_mut(&channel) {
                    session.links.insert(handle, link);
                }
                if inbound {
                    let delivery_count = attach.initial_delivery_count.unwrap_or(0);
                    self.grant_credit(channel, handle, delivery_count);
                }
            }
            Err(error) => {
                // Azure answers a refused attach with an attach without terminus, then a detach
                // carrying the error.
                if client_receives {
                    reply.source = None;
                } else {
                    reply.target = None;
                }
                self.send(channel, FrameBody::Attach(reply));
                self.send(
                    channel,
                    FrameBody::Detach(Detach {
                        handle: Handle(handle),
                        closed: true,
                        error: Some(error),
                    }),
                );
            }
        }
    }

    fn attach_inbound(&mut self, address: String) -> Result<LinkKind, definitions::Error> {
        let path = crate::sas::address_path(&address);
        if path == cbs::CBS_NODE || path.ends_with(management::MANAGEMENT_SUFFIX) {
            return Ok(LinkKind::Requests { node: path });
        }
        let target = self
            .bus
            .maintained_store()
            .resolve(&address)
            .ok_or_else(|| not_found(&address))?;
        if matches!(target, store::Target::Entity(_, SubQueue::DeadLetter)) {
            return Err(wire::error(
                "amqp:not-allowed",
                "Messages cannot be sent to a dead-letter queue.",
            ));
        }
        self.authorize(&path, Rights::SEND)
            .map_err(|e| wire::error("amqp:unauthorized-access", e))?;
        Ok(LinkKind::Inbound { target, address })
    }

    fn attach_outbound(
        &mut self,
        address: String,
        target_address: Option<String>,
        attach: &Attach,
        reply: &mut Attach,
    ) -> Result<LinkKind, definitions::Error> {
        let path = crate::sas::address_path(&address);
        if path == cbs::CBS_NODE || path.ends_with(management::MANAGEMENT_SUFFIX) {
            return Ok(LinkKind::Replies {
                node: path,
                reply_to: target_address,
            });
        }
        let target = self
            .bus
            .maintained_store()
            .resolve(&address)
            .ok_or_else(|| not_found(&address))?;
        let store::Target::Entity(entity, sub_queue) = target else {
            return Err(wire::error(
                "amqp:not-allowed",
                "A topic cannot be received from; receive from one of its subscriptions.",
            ));
        };
        // The token covers what was attached to (`q/$DeadLetterQueue` for a dead-letter queue).
        self.authorize(&path, Rights::LISTEN)
            .map_err(|e| wire::error("amqp:unauthorized-access", e))?;
        let receive_and_delete = attach.snd_settle_mode == SenderSettleMode::Settled;
        let owner = self.bus.next_owner();
        let filter = attach
            .source
            .as_ref()
            .and_then(|s| s.filter.as_ref())
            .and_then(|f| f.get(&Symbol::from(SESSION_FILTER)));
        let mut store = self.bus.store();
        let requires_session = store
            .entities
            .get(&entity)
            .is_some_and(|e| e.settings.requires_session)
            && sub_queue == SubQueue::Main;
        let session = match (filter, requires_session) {
            (None, false) => None,
            (None, true) => {
                return Err(wire::error(
                    "amqp:not-allowed",
                    "It is not possible for an entity that requires sessions to create a non-sessionful message receiver.",
                ));
            }
            (Some(_), false) => {
                return Err(wire::error(
                    "amqp:not-allowed",
                    "It is not possible for an entity that does not require sessions to create a sessionful message receiver.",
                ));
            }
            (Some(wanted), true) => {
                let wanted = wire::as_str(wanted).map(str::to_owned);
                let entity_state = store
                    .entities
                    .get_mut(&entity)
                    .ok_or_else(|| not_found(&address))?;
                let Some((session_id, until)) =
                    entity_state.lock_session(wanted.as_deref(), owner, now())
                else {
                    return Err(match wanted {
                        Some(id) => wire::error(
                            "com.microsoft:session-cannot-be-locked",
                            format!(
                                "The requested session '{id}' cannot be accepted. It may be locked by another receiver."
                            ),
                        ),
                        None => wire::error(
                            "com.microsoft:timeout",
                            "No unlocked session with messages is available.",
                        ),
                    });
                };
                let mut source = attach.source.as_deref().cloned().unwrap_or_else(|| Source {
                    address: Some(address.clone()),
                    ..Source::default()
                });
                source.filter.get_or_insert_with(Default::default).insert(
                    Symbol::from(SESSION_FILTER),
                    Value::String(session_id.clone()),
                );
                reply.source = Some(Box::new(source));
                let ticks = until.timestamp_millis() * 10_000 + DOTNET_EPOCH_TICKS;
                let mut properties = definitions::Fields::default();
                properties.insert(Symbol::from(LOCKED_UNTIL_UTC), Value::Long(ticks));
                reply.properties = Some(properties);
                Some(session_id)
            }
        };
        Ok(LinkKind::Outbound {
            entity,
            sub_queue,
            receive_and_delete,
            session,
            owner,
        })
    }
}

/// Whether `attach` asks for the next available session: a session filter that names none.
fn accepts_next_session(attach: &Attach) -> bool {
    attach
        .source
        .as_ref()
        .and_then(|s| s.filter.as_ref())
        .and_then(|f| f.get(&Symbol::from(SESSION_FILTER)))
        .is_some_and(|wanted| wire::as_str(wanted).is_none())
}
