//! One queue of an account: receive, delete, update visibility, send, peek at its length.

use std::sync::Arc;
use std::time::Duration;

use azure_core::http::StatusCode;
use azure_core::time::OffsetDateTime;
use azure_storage_queue::QueueClient;
use azure_storage_queue::models::{
    QueueClientGetPropertiesResultHeaders, QueueClientPeekMessagesOptions,
    QueueClientReceiveMessagesOptions, QueueMessage as Body, ReceivedMessage,
};
use chrono::{DateTime, Utc};

use super::Account;
use crate::QueueError;
use crate::error::{Op, from_azure};

/// One queue of a [`StorageQueues`] account; cheap to clone.
#[derive(Clone)]
pub struct Queue {
    inner: Arc<QueueInner>,
}

struct QueueInner {
    name: String,
    client: QueueClient,
    account: Arc<Account>,
}

/// A received message and its metadata, as the queue trigger hands them to the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueMessage {
    pub message_id: String,
    pub pop_receipt: String,
    pub dequeue_count: u32,
    pub insertion_time: DateTime<Utc>,
    pub expiration_time: DateTime<Utc>,
    pub next_visible_time: DateTime<Utc>,
    /// The message text as stored (base64 or not, as the sender wrote it).
    pub text: String,
}

/// A message seen without receiving it (peeked): it stays visible and its dequeue count is
/// unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeekedMessage {
    pub message_id: String,
    pub dequeue_count: u32,
    pub insertion_time: DateTime<Utc>,
    pub expiration_time: DateTime<Utc>,
    pub text: String,
}

/// What a visibility update returns: the receipt to use from now on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub pop_receipt: String,
    pub next_visible_time: DateTime<Utc>,
}

/// Whole seconds, rounded up, within what the service accepts.
fn seconds(duration: Duration, min: i32) -> i32 {
    let secs = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    i32::try_from(secs).unwrap_or(i32::MAX).max(min)
}

fn to_chrono(t: OffsetDateTime) -> DateTime<Utc> {
    DateTime::from_timestamp(t.unix_timestamp(), t.nanosecond()).unwrap_or_default()
}

fn message(m: ReceivedMessage) -> Result<QueueMessage, QueueError> {
    let missing = |field: &str| QueueError::Other(format!("received message without {field}"));
    Ok(QueueMessage {
        message_id: m.message_id.ok_or_else(|| missing("MessageId"))?,
        pop_receipt: m.pop_receipt.ok_or_else(|| missing("PopReceipt"))?,
        dequeue_count: m
            .dequeue_count
            .and_then(|c| u32::try_from(c).ok())
            .ok_or_else(|| missing("DequeueCount"))?,
        insertion_time: to_chrono(m.insertion_time.ok_or_else(|| missing("InsertionTime"))?),
        expiration_time: to_chrono(m.expiration_time.ok_or_else(|| missing("ExpirationTime"))?),
        next_visible_time: to_chrono(
            m.time_next_visible
                .ok_or_else(|| missing("TimeNextVisible"))?,
        ),
        text: m.message_text.unwrap_or_default(),
    })
}

impl Queue {
    pub(super) fn new(name: &str, client: QueueClient, account: Arc<Account>) -> Queue {
        Queue {
            inner: Arc::new(QueueInner {
                name: name.to_owned(),
                client,
                account,
            }),
        }
    }

    /// Why the account's last token request failed, if it did.
    pub fn last_token_error(&self) -> Option<String> {
        self.inner.account.health.last_error()
    }

    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The queue's URL without its query (so never a SAS): the same for every connection to
    /// this queue, whichever credential it uses.
    pub fn address(&self) -> String {
        let mut url = self.inner.client.url().clone();
        url.set_query(None);
        url.to_string()
    }

    fn error(&self, err: &azure_core::Error, op: Op<'_>) -> QueueError {
        from_azure(err, op, &self.inner.name, &self.inner.account.redactor)
    }

    /// Creates the queue; one request, and an existing queue is fine (204, or 409 when its
    /// metadata differs).
    pub async fn create_if_missing(&self) -> Result<(), QueueError> {
        match self.inner.client.create(None).await {
            Ok(_) => Ok(()),
            Err(e) if e.http_status() == Some(StatusCode::Conflict) => Ok(()),
            Err(e) => Err(self.error(&e, Op::Create)),
        }
    }

    /// Up to `max_messages` (1..=32) messages, invisible to others for `visibility_timeout`
    /// (at least one second).
    pub async fn receive(
        &self,
        max_messages: u8,
        visibility_timeout: Duration,
    ) -> Result<Vec<QueueMessage>, QueueError> {
        if !(1..=32).contains(&max_messages) {
            return Err(QueueError::Other(format!(
                "max_messages must be between 1 and 32, not {max_messages}"
            )));
        }
        let options = QueueClientReceiveMessagesOptions {
            number_of_messages: Some(i32::from(max_messages)),
            visibility_timeout: Some(seconds(visibility_timeout, 1)),
            ..Default::default()
        };
        let received = self
            .inner
            .client
            .receive_messages(Some(options))
            .await
            .and_then(|r| r.into_model())
            .map_err(|e| self.error(&e, Op::Receive))?;
        received
            .items
            .unwrap_or_default()
            .into_iter()
            .map(message)
            .collect()
    }

    pub async fn delete(&self, message_id: &str, pop_receipt: &str) -> Result<(), QueueError> {
        self.inner
            .client
            .delete_message(message_id, pop_receipt, None)
            .await
            .map(|_| ())
            .map_err(|e| self.error(&e, Op::Delete { message_id }))
    }

    /// Changes visibility only (no new text); returns the new receipt. A zero timeout makes
    /// the message visible again at once.
    pub async fn update_visibility(
        &self,
        message_id: &str,
        pop_receipt: &str,
        visibility_timeout: Duration,
    ) -> Result<Receipt, QueueError> {
        let op = Op::UpdateVisibility { message_id };
        let response = self
            .inner
            .client
            .update_message(
                message_id,
                pop_receipt,
                seconds(visibility_timeout, 0),
                None,
            )
            .await
            .map_err(|e| self.error(&e, op))?;
        // The SDK models no response headers for this operation; the new receipt and time are
        // only in `x-ms-popreceipt` and `x-ms-time-next-visible`.
        let headers = response.headers();
        let header = |name: &'static str| {
            headers
                .get_optional_str(&azure_core::http::headers::HeaderName::from_static(name))
                .map(str::to_owned)
                .ok_or_else(|| QueueError::Other(format!("update message answered without {name}")))
        };
        let pop_receipt = header("x-ms-popreceipt")?;
        let next_visible = header("x-ms-time-next-visible")?;
        let next_visible_time = DateTime::parse_from_rfc2822(&next_visible)
            .map_err(|_| {
                QueueError::Other(format!(
                    "update message answered an invalid x-ms-time-next-visible: {next_visible}"
                ))
            })?
            .to_utc();
        Ok(Receipt {
            pop_receipt,
            next_visible_time,
        })
    }

    /// Enqueues `text` exactly as given (the caller base64-encodes when the app's
    /// messageEncoding is base64). The SDK escapes it for the XML body.
    pub async fn enqueue(&self, text: &str) -> Result<(), QueueError> {
        self.send(text).await.map(|_| ())
    }

    /// [`Queue::enqueue`], answering the id the service gave the message (None if its answer
    /// named none).
    pub async fn send(&self, text: &str) -> Result<Option<String>, QueueError> {
        let body = Body {
            message_text: Some(text.to_owned()),
        };
        let content = body
            .try_into()
            .map_err(|e: azure_core::Error| self.error(&e, Op::Enqueue))?;
        self.inner
            .client
            .send_message(content, None)
            .await
            .and_then(|r| r.into_model())
            .map(|sent| {
                sent.items
                    .unwrap_or_default()
                    .into_iter()
                    .find_map(|m| m.message_id)
            })
            .map_err(|e| self.error(&e, Op::Enqueue))
    }

    /// The service's approximate message count (never lower than the actual count).
    pub async fn approximate_length(&self) -> Result<u64, QueueError> {
        let response = self
            .inner
            .client
            .get_properties(None)
            .await
            .map_err(|e| self.error(&e, Op::Properties))?;
        let count = response
            .approximate_messages_count()
            .map_err(|e| self.error(&e, Op::Properties))?
            .ok_or_else(|| {
                QueueError::Other("queue properties without x-ms-approximate-messages-count".into())
            })?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// When the oldest visible message was inserted (None when none is visible): the scaler's
    /// "queue time", as Azure's queue scale monitor reads it. Peeking changes nothing.
    pub async fn oldest_visible_inserted_at(&self) -> Result<Option<DateTime<Utc>>, QueueError> {
        Ok(self.peek(1).await?.first().map(|m| m.insertion_time))
    }

    /// Up to `max_messages` (1..=32) visible messages from the front, without receiving them.
    pub async fn peek(&self, max_messages: u8) -> Result<Vec<PeekedMessage>, QueueError> {
        if !(1..=32).contains(&max_messages) {
            return Err(QueueError::Other(format!(
                "max_messages must be between 1 and 32, not {max_messages}"
            )));
        }
        let options = QueueClientPeekMessagesOptions {
            number_of_messages: Some(i32::from(max_messages)),
            ..Default::default()
        };
        let peeked = self
            .inner
            .client
            .peek_messages(Some(options))
            .await
            .and_then(|r| r.into_model())
            .map_err(|e| self.error(&e, Op::Peek))?;
        let missing = |field: &str| QueueError::Other(format!("peeked message without {field}"));
        peeked
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                Ok(PeekedMessage {
                    message_id: m.message_id.ok_or_else(|| missing("MessageId"))?,
                    dequeue_count: m
                        .dequeue_count
                        .and_then(|c| u32::try_from(c).ok())
                        .unwrap_or(0),
                    insertion_time: to_chrono(
                        m.insertion_time.ok_or_else(|| missing("InsertionTime"))?,
                    ),
                    expiration_time: to_chrono(
                        m.expiration_time.ok_or_else(|| missing("ExpirationTime"))?,
                    ),
                    text: m.message_text.unwrap_or_default(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_up_to_whole_seconds() {
        let cases = [
            (Duration::ZERO, 0, 0),
            (Duration::ZERO, 1, 1),
            (Duration::from_millis(1), 0, 1),
            (Duration::from_millis(1500), 0, 2),
            (Duration::from_secs(600), 1, 600),
            (Duration::from_secs(u64::MAX), 0, i32::MAX),
        ];
        for (duration, min, want) in cases {
            assert_eq!(seconds(duration, min), want, "{duration:?}");
        }
    }
}
