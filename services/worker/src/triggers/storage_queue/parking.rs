//! A queue message's retries across receives: how many of its receives were attempts (not a
//! circuit breaker's hold or a park, see `breaker::held`), and parking it for a retry whose
//! wait is long (`shoal_domain::durable_retry`): the visibility timeout carries the wait, and
//! Postgres where its retries stand.

use std::time::Duration;

use shoal_connectors::QueueMessage;
use shoal_domain::durable_retry::{self, Return};
use shoal_store::parked_retries::ParkedRetry;

use crate::invocation::{FunctionHost, Parked};

/// A message's attempts so far, this one included: its dequeue count less the receives a
/// circuit breaker held back or that parked it (those invoked nothing). `known` is false when
/// Postgres could not say, and the count is then the dequeue count itself. `parked`: where its
/// retries stand if it was parked.
pub struct Attempts {
    pub count: u32,
    pub known: bool,
    pub parked: Option<ParkedRetry>,
}

/// Only a message received before can have been held back or parked, so a first delivery
/// reads nothing.
pub async fn attempts(function: &FunctionHost, message: &QueueMessage) -> Attempts {
    let raw = message.dequeue_count;
    if raw <= 1 {
        return Attempts {
            count: raw,
            known: true,
            parked: None,
        };
    }
    match function.held.arrival(&message.message_id).await {
        Ok((holds, parked)) => Attempts {
            count: raw.saturating_sub(holds).max(1),
            known: true,
            parked,
        },
        Err(e) => {
            tracing::warn!(error = %e, "reading whether the message was held back or parked failed; counting every receive as an attempt");
            Attempts {
                count: raw,
                known: false,
                parked: None,
            }
        }
    }
}

/// What to do with a parked message that came back: resume its retries once due, or park it
/// again for what remains — unless it would expire first, when it is tried now rather than lost.
pub fn returned(parked: &ParkedRetry, message: &QueueMessage) -> Return {
    let now = chrono::Utc::now();
    match durable_retry::on_return(parked.due_at, now) {
        Return::ParkAgain(_) if parked.due_at >= message.expiration_time - EXPIRY_MARGIN => {
            Return::Resume
        }
        other => other,
    }
}

/// How close to its expiry a message is never parked until: it must come back in time to be
/// tried.
const EXPIRY_MARGIN: chrono::Duration = chrono::Duration::seconds(5);

/// `wait`, cut so that the message comes back before it expires.
pub fn until_expiry(message: &QueueMessage, wait: Duration) -> Duration {
    let left = (message.expiration_time - EXPIRY_MARGIN - chrono::Utc::now())
        .to_std()
        .unwrap_or(Duration::ZERO);
    wait.min(left)
}

/// Parks the message for its next retry: records where its retries stand (and the receive as a
/// hold), and returns how long the message is to be invisible — the caller releases it for
/// that long. If the record cannot be written the message still comes back after the wait, as
/// an ordinary new attempt (a raised dequeue count, the retries counted afresh): never lost,
/// never sooner.
pub async fn park(function: &FunctionHost, message: &QueueMessage, p: Parked) -> Duration {
    let wait = until_expiry(message, p.wait);
    let due_at =
        chrono::Utc::now() + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::zero());
    let parked = ParkedRetry {
        state: p.state,
        due_at,
    };
    if let Err(e) = function
        .held
        .park(&message.message_id, &parked, message.expiration_time)
        .await
    {
        tracing::warn!(error = %e, "recording the parked retry failed; the message comes back after the wait as a new attempt");
    }
    function.stats.parked();
    wait
}
