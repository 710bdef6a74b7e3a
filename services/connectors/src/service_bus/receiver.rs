//! A peek-lock receiver of a queue or subscription, or of one session of it: receive, settle,
//! renew. The client library's operations take `&mut self`, so the caller serializes them (the
//! worker keeps a receiver behind a mutex and receives with a short wait, so settlements never
//! wait long).

use std::time::Duration;

use azservicebus::prelude::{ServiceBusReceiver, ServiceBusSessionReceiver};
use azservicebus::receiver::DeadLetterOptions;
use chrono::{DateTime, Utc};
use shoal_domain::service_bus_trigger::Settlement;

use super::error::ServiceBusError;
use super::message::{PeekedServiceBusMessage, Received, peeked, properties_to_modify};
use crate::error::Redactor;

/// How long closing a receiver may take (see [`MessageReceiver::close`]).
pub(crate) const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// A peek-lock receiver of an entity, or of one session of it.
#[derive(Debug)]
pub struct MessageReceiver {
    link: Link,
    redactor: Redactor,
}

#[derive(Debug)]
enum Link {
    Plain(ServiceBusReceiver),
    Session(ServiceBusSessionReceiver),
}

/// Runs the same call on whichever receiver it is.
macro_rules! on_link {
    ($self:ident, $r:ident => $call:expr) => {
        match &mut $self.link {
            Link::Plain($r) => Box::pin(async { $call }).await,
            Link::Session($r) => Box::pin(async { $call }).await,
        }
    };
}

impl MessageReceiver {
    pub(crate) fn plain(receiver: ServiceBusReceiver, redactor: Redactor) -> MessageReceiver {
        MessageReceiver {
            link: Link::Plain(receiver),
            redactor,
        }
    }

    pub(crate) fn session(
        receiver: ServiceBusSessionReceiver,
        redactor: Redactor,
    ) -> MessageReceiver {
        MessageReceiver {
            link: Link::Session(receiver),
            redactor,
        }
    }

    /// The session this receiver holds, if it is a session receiver.
    pub fn session_id(&self) -> Option<&str> {
        match &self.link {
            Link::Plain(_) => None,
            Link::Session(r) => Some(r.session_id()),
        }
    }

    /// When the session's lock ends (session receivers only).
    pub fn session_locked_until(&self) -> Option<DateTime<Utc>> {
        match &self.link {
            Link::Plain(_) => None,
            Link::Session(r) => {
                let t = r.session_locked_until();
                DateTime::from_timestamp(t.unix_timestamp(), t.nanosecond())
            }
        }
    }

    /// Up to `max` messages, waiting at most `wait` for the first; possibly none.
    pub async fn receive(
        &mut self,
        max: u32,
        wait: Duration,
    ) -> Result<Vec<Received>, ServiceBusError> {
        let messages = on_link!(self, r => r.receive_messages_with_max_wait_time(max, wait).await)
            .map_err(|e| self.error("receive messages", &e))?;
        Ok(messages.into_iter().map(Received::new).collect())
    }

    /// Up to `max` messages from the front, without locking them or counting a delivery.
    pub async fn peek(
        &mut self,
        max: u32,
    ) -> Result<Vec<PeekedServiceBusMessage>, ServiceBusError> {
        let messages = on_link!(self, r => r.peek_messages(max, None).await)
            .map_err(|e| self.error("peek messages", &e))?;
        Ok(messages.iter().map(peeked).collect())
    }

    /// Settles `message` as asked.
    pub async fn settle(
        &mut self,
        message: &Received,
        settlement: &Settlement,
    ) -> Result<(), ServiceBusError> {
        let raw = &message.raw;
        let result = match settlement {
            Settlement::Complete => on_link!(self, r => r.complete_message(raw).await),
            Settlement::Abandon {
                properties_to_modify: p,
            } => on_link!(self, r => r.abandon_message(raw, properties_to_modify(p)).await),
            Settlement::Defer {
                properties_to_modify: p,
            } => on_link!(self, r => r.defer_message(raw, properties_to_modify(p)).await),
            Settlement::DeadLetter {
                reason,
                description,
                properties_to_modify: p,
            } => {
                let options = DeadLetterOptions {
                    dead_letter_reason: reason.clone(),
                    dead_letter_error_description: description.clone(),
                    properties_to_modify: properties_to_modify(p),
                };
                on_link!(self, r => r.dead_letter_message(raw, options).await)
            }
        };
        result.map_err(|e| self.error(settlement.action(), &e))
    }

    /// Renews `message`'s lock; returns when it now ends.
    pub async fn renew_message_lock(
        &mut self,
        message: &mut Received,
    ) -> Result<Option<DateTime<Utc>>, ServiceBusError> {
        let raw = &mut message.raw;
        on_link!(self, r => r.renew_message_lock(raw).await)
            .map_err(|e| self.error("renew message lock", &e))?;
        Ok(message.locked_until())
    }

    /// Renews the session's lock (session receivers only; a plain receiver has none).
    pub async fn renew_session_lock(&mut self) -> Result<(), ServiceBusError> {
        match &mut self.link {
            Link::Plain(_) => Ok(()),
            Link::Session(r) => Box::pin(r.renew_session_lock())
                .await
                .map_err(|e| ServiceBusError::from_sdk(&self.redactor, "renew session lock", &e)),
        }
    }

    /// Closes the link (a session receiver thereby gives its session back), waiting at most
    /// `CLOSE_TIMEOUT` (5 s) for the broker: a worker that is stopping must not hang on a close
    /// the broker never answers. Messages that reached the link but were never returned by
    /// [`receive`](Self::receive) (the answer to a receive's closing drain arrives after it
    /// returned) are released first, uncounted, so the entity's other receivers get them at
    /// once as first deliveries (`vendor/azservicebus/PATCHED.md`). A link given up on is
    /// dropped; the broker releases its locks when they expire, and the messages are delivered
    /// again.
    pub async fn close(self) -> Result<(), ServiceBusError> {
        let redactor = self.redactor;
        let closing = async move {
            match self.link {
                Link::Plain(r) => r.dispose().await,
                Link::Session(r) => r.dispose().await,
            }
        };
        match tokio::time::timeout(CLOSE_TIMEOUT, closing).await {
            Ok(closed) => {
                closed.map_err(|e| ServiceBusError::from_sdk(&redactor, "close receiver", &e))
            }
            Err(_) => Err(ServiceBusError::Unavailable {
                op: "close receiver".into(),
                message: format!("no answer within {CLOSE_TIMEOUT:?}; the link was dropped"),
            }),
        }
    }

    fn error(&self, op: &str, e: &azure_core_025::Error) -> ServiceBusError {
        ServiceBusError::from_sdk(&self.redactor, op, e)
    }
}
