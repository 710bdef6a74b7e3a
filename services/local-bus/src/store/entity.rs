//! A queue or subscription: its settings, its messages and dead-letter queue, its session
//! locks — and the rules Service Bus applies to them (peek-lock, settlement, delivery count and
//! `MaxDeliveryCount`, expiry per reference document 001 through `shoal_domain`).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};
use fe2o3_amqp::types::messaging::{Body, Message};
use fe2o3_amqp::types::primitives::{SimpleValue, Value};
use shoal_domain::service_bus_entity::expiry::{self, EntityExpiry, ExpiryAction, ExpiryVerdict};
use uuid::Uuid;

use super::message::{Lock, MessageState, StoredMessage};
use crate::config::EntitySettings;

/// The dead-letter reason Service Bus gives a message that exhausted its deliveries.
pub const MAX_DELIVERY_COUNT_EXCEEDED: &str = "MaxDeliveryCountExceeded";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntityKind {
    Queue,
    /// A topic's subscription (the topic's normalized path).
    Subscription {
        topic: String,
    },
}

/// The entity itself or its dead-letter queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubQueue {
    Main,
    DeadLetter,
}

/// Why a settlement by lock token failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettleError {
    /// `com.microsoft:message-lock-lost`: the lock expired or the token is unknown.
    #[error("the lock supplied is invalid: it expired, or the message was already settled")]
    LockLost,
}

/// How a locked message is settled.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    Complete,
    /// The AMQP `released` outcome: the lock ends and the message is available again at once,
    /// its delivery count unchanged. Service Bus does not count a released delivery (the
    /// Service Bus team in Azure/amqpnetlite#342; azure-sdk-for-python#47999 releases what a
    /// closing receiver holds for that reason); it counts an abandon (`modified`).
    Release,
    /// Released again; `properties` are merged into its application properties.
    Abandon {
        properties: Vec<(String, SimpleValue)>,
    },
    DeadLetter {
        reason: Option<String>,
        description: Option<String>,
        properties: Vec<(String, SimpleValue)>,
    },
    Defer {
        properties: Vec<(String, SimpleValue)>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLock {
    pub owner: u64,
    pub until: DateTime<Utc>,
}

#[derive(Debug)]
pub struct Entity {
    /// As configured (`queue`, `topic/Subscriptions/sub`).
    pub name: String,
    pub kind: EntityKind,
    pub settings: EntitySettings,
    pub main: BTreeMap<i64, StoredMessage>,
    pub dead_letter: BTreeMap<i64, StoredMessage>,
    pub sessions: HashMap<String, SessionLock>,
    /// Session state set through `set-session-state`.
    pub session_states: HashMap<String, Vec<u8>>,
    next_sequence: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub accessed_at: DateTime<Utc>,
}

impl Entity {
    pub fn new(
        name: String,
        kind: EntityKind,
        settings: EntitySettings,
        now: DateTime<Utc>,
    ) -> Entity {
        Entity {
            name,
            kind,
            settings,
            main: BTreeMap::new(),
            dead_letter: BTreeMap::new(),
            sessions: HashMap::new(),
            session_states: HashMap::new(),
            next_sequence: 1,
            created_at: now,
            updated_at: now,
            accessed_at: now,
        }
    }

    fn expiry_rules(&self) -> EntityExpiry {
        EntityExpiry {
            default_ttl: self.settings.default_ttl,
            dead_lettering_on_expiration: self.settings.dead_lettering_on_expiration,
        }
    }

    pub fn last_activity(&self) -> DateTime<Utc> {
        self.accessed_at.max(self.updated_at)
    }

    pub fn has_scheduled(&self) -> bool {
        self.main
            .values()
            .any(|m| m.state == MessageState::Scheduled)
    }

    /// The TTL a message lives by (its own capped by the entity's default).
    pub fn effective_ttl(&self, message: &Message<Body<Value>>) -> Option<Duration> {
        let own = message
            .header
            .as_ref()
            .and_then(|h| h.ttl)
            .map(|ms| Duration::from_millis(u64::from(ms)));
        expiry::effective_ttl(own, self.settings.default_ttl)
    }

    /// Enqueues (or schedules) a message; returns its sequence number.
    pub fn enqueue(
        &mut self,
        message: Message<Body<Value>>,
        scheduled_for: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> i64 {
        self.accessed_at = now;
        let sequence_number = self.next_sequence;
        self.next_sequence += 1;
        let enqueued_at = expiry::enqueued_time(now, scheduled_for);
        let expires_at = expiry::expires_at(enqueued_at, self.effective_ttl(&message));
        let session_id = message.properties.as_ref().and_then(|p| p.group_id.clone());
        let state = if enqueued_at > now {
            MessageState::Scheduled
        } else {
            MessageState::Active
        };
        self.main.insert(
            sequence_number,
            StoredMessage {
                sequence_number,
                message,
                enqueued_at,
                expires_at,
                state,
                delivery_count: 0,
                lock: None,
                session_id,
                dead_letter_source: None,
            },
        );
        sequence_number
    }

    /// Cancels a scheduled message; false when there is none with that number.
    pub fn cancel_scheduled(&mut self, sequence_number: i64, now: DateTime<Utc>) -> bool {
        self.accessed_at = now;
        match self.main.get(&sequence_number) {
            Some(m) if m.state == MessageState::Scheduled => {
                self.main.remove(&sequence_number);
                true
            }
            _ => false,
        }
    }

    /// Applies time: due schedules enqueue; ended locks release the message with its delivery
    /// count raised (dead-lettering it past `MaxDeliveryCount`); expired messages are dropped or
    /// dead-lettered (document 001, through `shoal_domain`).
    pub fn maintain(&mut self, now: DateTime<Utc>) {
        let rules = self.expiry_rules();
        let max = self.settings.max_delivery_count;
        let mut to_dead_letter: Vec<(i64, &'static str, String)> = Vec::new();
        let mut to_drop = Vec::new();
        for message in self.main.values_mut() {
            if message.state == MessageState::Scheduled && message.enqueued_at <= now {
                message.state = MessageState::Active;
            }
            let lock_ended = message.lock.is_some_and(|lock| lock.until <= now);
            if lock_ended {
                message.lock = None;
                message.delivery_count += 1;
                if message.delivery_count >= max {
                    to_dead_letter.push((
                        message.sequence_number,
                        MAX_DELIVERY_COUNT_EXCEEDED,
                        format!("Message could not be consumed after {max} delivery attempts."),
                    ));
                    continue;
                }
            }
            if message.state == MessageState::Scheduled {
                continue;
            }
            match expiry::verdict(
                message.expires_at,
                message.lock.map(|l| l.until),
                now,
                &rules,
            ) {
                ExpiryVerdict::Live => {}
                ExpiryVerdict::Expired(ExpiryAction::Discard) => {
                    to_drop.push(message.sequence_number)
                }
                ExpiryVerdict::Expired(ExpiryAction::DeadLetter) => to_dead_letter.push((
                    message.sequence_number,
                    expiry::TTL_EXPIRED_REASON,
                    expiry::TTL_EXPIRED_DESCRIPTION.to_owned(),
                )),
            }
        }
        for sequence_number in to_drop {
            self.main.remove(&sequence_number);
        }
        for (sequence_number, reason, description) in to_dead_letter {
            self.move_to_dead_letter(
                sequence_number,
                Some(reason.to_owned()),
                Some(description),
                Vec::new(),
            );
        }
        // Dead-letter queues: only locks end there (no expiry, no MaxDeliveryCount in Azure).
        for message in self.dead_letter.values_mut() {
            if message.lock.is_some_and(|lock| lock.until <= now) {
                message.lock = None;
                message.delivery_count += 1;
            }
        }
        self.sessions.retain(|_, lock| lock.until > now);
    }

    fn move_to_dead_letter(
        &mut self,
        sequence_number: i64,
        reason: Option<String>,
        description: Option<String>,
        properties: Vec<(String, SimpleValue)>,
    ) {
        let Some(mut message) = self.main.remove(&sequence_number) else {
            return;
        };
        message.lock = None;
        message.state = MessageState::Active;
        for (key, value) in properties {
            message.set_application_property(&key, value);
        }
        // Where the Python SDK reads them (`_common/message.py` `dead_letter_reason`).
        if let Some(reason) = reason {
            message.set_application_property("DeadLetterReason", SimpleValue::String(reason));
        }
        if let Some(description) = description {
            message.set_application_property(
                "DeadLetterErrorDescription",
                SimpleValue::String(description),
            );
        }
        message.dead_letter_source = Some(self.name.clone());
        self.dead_letter.insert(sequence_number, message);
    }

    fn list(&self, sub_queue: SubQueue) -> &BTreeMap<i64, StoredMessage> {
        match sub_queue {
            SubQueue::Main => &self.main,
            SubQueue::DeadLetter => &self.dead_letter,
        }
    }

    fn list_mut(&mut self, sub_queue: SubQueue) -> &mut BTreeMap<i64, StoredMessage> {
        match sub_queue {
            SubQueue::Main => &mut self.main,
            SubQueue::DeadLetter => &mut self.dead_letter,
        }
    }

    /// The next deliverable message in sequence order (of `session` when given), not locked,
    /// not scheduled, not deferred.
    fn next_deliverable(
        &self,
        sub_queue: SubQueue,
        session: Option<&str>,
        now: DateTime<Utc>,
    ) -> Option<i64> {
        self.list(sub_queue)
            .values()
            .find(|m| {
                m.state == MessageState::Active
                    && !m.is_locked(now)
                    && session.is_none_or(|s| m.session_id.as_deref() == Some(s))
            })
            .map(|m| m.sequence_number)
    }

    /// Peek-lock: locks the next message; returns a copy with its lock.
    pub fn lock_next(
        &mut self,
        sub_queue: SubQueue,
        session: Option<&str>,
        now: DateTime<Utc>,
    ) -> Option<StoredMessage> {
        self.maintain(now);
        self.accessed_at = now;
        let sequence_number = self.next_deliverable(sub_queue, session, now)?;
        let lock = Lock {
            token: Uuid::new_v4(),
            until: now + self.lock_duration(),
        };
        let message = self.list_mut(sub_queue).get_mut(&sequence_number)?;
        message.lock = Some(lock);
        Some(message.clone())
    }

    /// Receive-and-delete: removes the next message and returns it.
    pub fn take_next(
        &mut self,
        sub_queue: SubQueue,
        session: Option<&str>,
        now: DateTime<Utc>,
    ) -> Option<StoredMessage> {
        self.maintain(now);
        self.accessed_at = now;
        let sequence_number = self.next_deliverable(sub_queue, session, now)?;
        self.list_mut(sub_queue).remove(&sequence_number)
    }

    fn lock_duration(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.settings.lock_duration)
            .unwrap_or(chrono::Duration::seconds(60))
    }

    fn find_locked(
        &self,
        sub_queue: SubQueue,
        token: Uuid,
        now: DateTime<Utc>,
    ) -> Result<i64, SettleError> {
        // One byte order, as Service Bus has it: the token of the `x-opt-lock-token`
        // annotation, which is the delivery tag read as a little-endian GUID (.NET's
        // `new Guid(deliveryTag)`, Python's `uuid.UUID(bytes_le=…)`).
        self.list(sub_queue)
            .values()
            .find(|m| m.lock.is_some_and(|l| l.token == token && l.until > now))
            .map(|m| m.sequence_number)
            .ok_or(SettleError::LockLost)
    }

    /// Settles a locked message by its lock token.
    pub fn settle(
        &mut self,
        sub_queue: SubQueue,
        token: Uuid,
        settlement: Settlement,
        now: DateTime<Utc>,
    ) -> Result<(), SettleError> {
        self.maintain(now);
        self.accessed_at = now;
        let sequence_number = self.find_locked(sub_queue, token, now)?;
        let max = self.settings.max_delivery_count;
        match settlement {
            Settlement::Complete => {
                self.list_mut(sub_queue).remove(&sequence_number);
            }
            Settlement::Release => {
                let Some(message) = self.list_mut(sub_queue).get_mut(&sequence_number) else {
                    return Err(SettleError::LockLost);
                };
                message.lock = None;
                // The lock has ended, so expiry takes effect at once (document 001).
                self.maintain(now);
            }
            Settlement::Abandon { properties } => {
                let Some(message) = self.list_mut(sub_queue).get_mut(&sequence_number) else {
                    return Err(SettleError::LockLost);
                };
                message.lock = None;
                message.delivery_count += 1;
                for (key, value) in properties {
                    message.set_application_property(&key, value);
                }
                let exhausted = message.delivery_count >= max;
                if sub_queue == SubQueue::Main && exhausted {
                    self.move_to_dead_letter(
                        sequence_number,
                        Some(MAX_DELIVERY_COUNT_EXCEEDED.to_owned()),
                        Some(format!(
                            "Message could not be consumed after {max} delivery attempts."
                        )),
                        Vec::new(),
                    );
                }
                // Abandoning ends the lock, so expiry takes effect at once (document 001).
                self.maintain(now);
            }
            Settlement::DeadLetter {
                reason,
                description,
                properties,
            } => {
                if sub_queue == SubQueue::DeadLetter {
                    // Azure refuses dead-lettering a dead-lettered message; the lock stays.
                    return Err(SettleError::LockLost);
                }
                self.move_to_dead_letter(sequence_number, reason, description, properties);
            }
            Settlement::Defer { properties } => {
                let Some(message) = self.list_mut(sub_queue).get_mut(&sequence_number) else {
                    return Err(SettleError::LockLost);
                };
                message.lock = None;
                message.state = MessageState::Deferred;
                for (key, value) in properties {
                    message.set_application_property(&key, value);
                }
            }
        }
        Ok(())
    }

    /// Renews a message lock; returns the new locked-until.
    pub fn renew_lock(
        &mut self,
        sub_queue: SubQueue,
        token: Uuid,
        now: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, SettleError> {
        self.maintain(now);
        self.accessed_at = now;
        let sequence_number = self.find_locked(sub_queue, token, now)?;
        let until = now + self.lock_duration();
        let message = self
            .list_mut(sub_queue)
            .get_mut(&sequence_number)
            .ok_or(SettleError::LockLost)?;
        if let Some(lock) = message.lock.as_mut() {
            lock.until = until;
        }
        Ok(until)
    }

    /// Receives deferred messages by sequence number: locked (peek-lock) or removed
    /// (receive-and-delete). Unknown numbers are skipped; Azure answers with what it found.
    pub fn receive_deferred(
        &mut self,
        sub_queue: SubQueue,
        sequence_numbers: &[i64],
        delete: bool,
        now: DateTime<Utc>,
    ) -> Vec<StoredMessage> {
        self.maintain(now);
        self.accessed_at = now;
        let until = now + self.lock_duration();
        let mut found = Vec::new();
        for sequence_number in sequence_numbers {
            let list = self.list_mut(sub_queue);
            let Some(message) = list.get_mut(sequence_number) else {
                continue;
            };
            if message.state != MessageState::Deferred || message.is_locked(now) {
                continue;
            }
            if delete {
                if let Some(message) = list.remove(sequence_number) {
                    found.push(message);
                }
            } else {
                message.lock = Some(Lock {
                    token: Uuid::new_v4(),
                    until,
                });
                found.push(message.clone());
            }
        }
        found
    }

    /// Browses messages from `from` on, at most `count`, in sequence order (locked, scheduled
    /// and deferred ones included, as Azure's peek returns them).
    pub fn peek(
        &mut self,
        sub_queue: SubQueue,
        from: i64,
        count: usize,
        session: Option<&str>,
        now: DateTime<Utc>,
    ) -> Vec<StoredMessage> {
        self.maintain(now);
        self.accessed_at = now;
        self.list(sub_queue)
            .range(from..)
            .map(|(_, m)| m)
            .filter(|m| session.is_none_or(|s| m.session_id.as_deref() == Some(s)))
            .take(count)
            .cloned()
            .collect()
    }

    /// Locks a session for `owner`: the one asked for, or (None) the first with a deliverable
    /// message that nobody holds. Returns the session id and its locked-until.
    pub fn lock_session(
        &mut self,
        wanted: Option<&str>,
        owner: u64,
        now: DateTime<Utc>,
    ) -> Option<(String, DateTime<Utc>)> {
        self.maintain(now);
        self.accessed_at = now;
        let free = |sessions: &HashMap<String, SessionLock>, id: &str| {
            sessions
                .get(id)
                .is_none_or(|lock| lock.owner == owner || lock.until <= now)
        };
        let session_id = match wanted {
            Some(id) => free(&self.sessions, id).then(|| id.to_owned())?,
            None => self
                .main
                .values()
                .filter(|m| m.state == MessageState::Active && !m.is_locked(now))
                .filter_map(|m| m.session_id.clone())
                .find(|id| free(&self.sessions, id))?,
        };
        let until = now + self.lock_duration();
        self.sessions
            .insert(session_id.clone(), SessionLock { owner, until });
        Some((session_id, until))
    }

    /// Renews a session lock held by `owner`.
    pub fn renew_session_lock(
        &mut self,
        session_id: &str,
        owner: u64,
        now: DateTime<Utc>,
    ) -> Result<DateTime<Utc>, SettleError> {
        let until = now + self.lock_duration();
        match self.sessions.get_mut(session_id) {
            Some(lock) if lock.owner == owner && lock.until > now => {
                lock.until = until;
            }
            _ => return Err(SettleError::LockLost),
        }
        // A session's messages are held by the session lock: .NET's session receiver has no
        // message-lock renewal (`ServiceBusSessionReceiver` renews the session only), so the
        // messages it holds must live as long as the session lock does.
        for message in self.main.values_mut() {
            if message.session_id.as_deref() == Some(session_id)
                && let Some(lock) = message.lock.as_mut()
                && lock.until > now
            {
                lock.until = until;
            }
        }
        Ok(until)
    }

    /// Whether `owner` still holds `session_id`.
    pub fn holds_session(&self, session_id: &str, owner: u64, now: DateTime<Utc>) -> bool {
        self.sessions
            .get(session_id)
            .is_some_and(|lock| lock.owner == owner && lock.until > now)
    }

    /// Releases every session `owner` holds (its link closed).
    pub fn release_sessions(&mut self, owner: u64) {
        self.sessions.retain(|_, lock| lock.owner != owner);
    }

    /// Runtime counts as the ATOM API reports them.
    pub fn counts(&mut self, now: DateTime<Utc>) -> Counts {
        self.maintain(now);
        let mut counts = Counts {
            dead_letter: self.dead_letter.len() as u64,
            ..Counts::default()
        };
        for message in self.main.values() {
            match message.state {
                // Deferred messages stay in the entity and count as active.
                MessageState::Active | MessageState::Deferred => counts.active += 1,
                MessageState::Scheduled => counts.scheduled += 1,
            }
        }
        counts
    }
}

/// `CountDetails` of an entity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub active: u64,
    pub dead_letter: u64,
    pub scheduled: u64,
}

impl Counts {
    pub fn total(&self) -> u64 {
        self.active + self.dead_letter + self.scheduled
    }
}
