//! Message expiry as Service Bus defines it (reference document 001), enforced by the local
//! Service Bus stand-in. The trigger does not apply these rules: against Azure the broker does,
//! and a delivered message's expiry is what the broker sent.
//!
//! * `expires-at-utc = enqueued-time-utc + time-to-live`;
//! * the entity's default TTL applies to a message without one and caps a longer one;
//! * a scheduled message is enqueued at its scheduled time, so its expiry counts from there;
//! * a locked message does not expire while the lock holds; when the lock ends (or the message
//!   is abandoned) expiry takes effect at once;
//! * an expired message goes to the dead-letter queue, reason `TTLExpiredException`, only when
//!   the entity says `deadLetteringOnMessageExpiration`; otherwise it is dropped;
//! * Basic tier: default and maximum TTL 14 days; `autoDeleteOnIdle` is at least 5 minutes.
//!
//! A TTL of `None` stands for .NET's `TimeSpan.MaxValue`, Service Bus's "never expires".

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The dead-letter reason Service Bus writes on messages that expired.
pub const TTL_EXPIRED_REASON: &str = "TTLExpiredException";

/// The dead-letter description Service Bus writes alongside [`TTL_EXPIRED_REASON`].
pub const TTL_EXPIRED_DESCRIPTION: &str = "The message expired and was dead lettered.";

/// Basic tier: an entity's default message TTL, which is also the largest TTL allowed.
pub const BASIC_TIER_MAX_TTL: Duration = Duration::from_secs(14 * 24 * 60 * 60);

/// Basic tier: the default message TTL of a new entity (the maximum, per document 001).
pub const BASIC_TIER_DEFAULT_TTL: Duration = BASIC_TIER_MAX_TTL;

/// The smallest `autoDeleteOnIdle` Service Bus accepts.
pub const AUTO_DELETE_ON_IDLE_MIN: Duration = Duration::from_secs(5 * 60);

/// What the entity says about expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityExpiry {
    /// The entity's `defaultMessageTimeToLive`; `None` = never.
    pub default_ttl: Option<Duration>,
    /// The entity's `deadLetteringOnMessageExpiration`.
    pub dead_lettering_on_expiration: bool,
}

/// The TTL a message lives by: its own, capped by the entity's default; the entity's default
/// when it has none.
pub fn effective_ttl(
    message_ttl: Option<Duration>,
    entity_default: Option<Duration>,
) -> Option<Duration> {
    match (message_ttl, entity_default) {
        (Some(own), Some(default)) => Some(own.min(default)),
        (Some(own), None) => Some(own),
        (None, default) => default,
    }
}

/// When a message becomes enqueued: when it arrived, or for a scheduled message its scheduled
/// enqueue time (a schedule in the past enqueues it on arrival).
pub fn enqueued_time(
    arrived_at: DateTime<Utc>,
    scheduled_enqueue_time: Option<DateTime<Utc>>,
) -> DateTime<Utc> {
    match scheduled_enqueue_time {
        Some(scheduled) if scheduled > arrived_at => scheduled,
        _ => arrived_at,
    }
}

/// `enqueued + ttl`; `None` when the message never expires (no TTL, or one so long the sum
/// leaves the calendar, as `TimeSpan.MaxValue` does).
pub fn expires_at(enqueued: DateTime<Utc>, ttl: Option<Duration>) -> Option<DateTime<Utc>> {
    let ttl = chrono::Duration::from_std(ttl?).ok()?;
    enqueued.checked_add_signed(ttl)
}

/// What happens to an expired message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpiryAction {
    /// Dropped: the entity does not dead-letter on expiry.
    Discard,
    /// Moved to the dead-letter queue with [`TTL_EXPIRED_REASON`].
    DeadLetter,
}

/// A message's standing at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpiryVerdict {
    /// Deliverable (or still held under its lock).
    Live,
    /// Expired: never delivered again.
    Expired(ExpiryAction),
}

/// Whether a message that `expires_at` (see [`expires_at`]) has expired at `now`. A message
/// locked until after `now` is not expired yet, whatever its expiry says: the lock protects it.
pub fn verdict(
    expires_at: Option<DateTime<Utc>>,
    locked_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    entity: &EntityExpiry,
) -> ExpiryVerdict {
    if locked_until.is_some_and(|until| until > now) {
        return ExpiryVerdict::Live;
    }
    match expires_at {
        Some(at) if at <= now => ExpiryVerdict::Expired(if entity.dead_lettering_on_expiration {
            ExpiryAction::DeadLetter
        } else {
            ExpiryAction::Discard
        }),
        _ => ExpiryVerdict::Live,
    }
}

/// An entity setting outside what Service Bus accepts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpirySettingError {
    #[error("defaultMessageTimeToLive must be at most 14 days on the Basic tier")]
    BasicTierTtlTooLong,
    #[error("autoDeleteOnIdle must be at least 5 minutes")]
    AutoDeleteOnIdleTooShort,
}

/// The entity default TTL on the given tier: Basic allows at most 14 days and defaults to it;
/// Standard and Premium default to never (`None`).
pub fn entity_default_ttl(
    configured: Option<Duration>,
    basic_tier: bool,
) -> Result<Option<Duration>, ExpirySettingError> {
    if !basic_tier {
        return Ok(configured);
    }
    match configured {
        None => Ok(Some(BASIC_TIER_DEFAULT_TTL)),
        Some(ttl) if ttl > BASIC_TIER_MAX_TTL => Err(ExpirySettingError::BasicTierTtlTooLong),
        Some(ttl) => Ok(Some(ttl)),
    }
}

/// `autoDeleteOnIdle` must be at least [`AUTO_DELETE_ON_IDLE_MIN`]; `None` means never.
pub fn check_auto_delete_on_idle(value: Option<Duration>) -> Result<(), ExpirySettingError> {
    match value {
        Some(idle) if idle < AUTO_DELETE_ON_IDLE_MIN => {
            Err(ExpirySettingError::AutoDeleteOnIdleTooShort)
        }
        _ => Ok(()),
    }
}

/// Whether an entity idle since `last_activity` is due for deletion at `now`.
pub fn auto_delete_due(
    last_activity: DateTime<Utc>,
    auto_delete_on_idle: Option<Duration>,
    now: DateTime<Utc>,
) -> bool {
    expires_at(last_activity, auto_delete_on_idle).is_some_and(|due| due <= now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + secs, 0)
            .single()
            .expect("valid timestamp")
    }
    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn effective_ttl_takes_the_entity_default_as_default_and_cap() {
        let cases = [
            // (message, entity default, expected)
            (None, None, None),
            (None, Some(10 * MIN), Some(10 * MIN)),
            (Some(5 * MIN), None, Some(5 * MIN)),
            (Some(5 * MIN), Some(10 * MIN), Some(5 * MIN)),
            (Some(20 * MIN), Some(10 * MIN), Some(10 * MIN)),
            (Some(10 * MIN), Some(10 * MIN), Some(10 * MIN)),
        ];
        for (message, default, expected) in cases {
            assert_eq!(
                effective_ttl(message, default),
                expected,
                "{message:?} {default:?}"
            );
        }
    }

    #[test]
    fn expires_at_is_enqueued_time_plus_ttl() {
        let cases = [
            (t(0), Some(MIN), Some(t(60))),
            (t(100), Some(Duration::ZERO), Some(t(100))),
            (t(0), None, None),
            // TimeSpan.MaxValue-sized TTLs leave the calendar: never.
            (t(0), Some(Duration::from_secs(u64::MAX / 2)), None),
        ];
        for (enqueued, ttl, expected) in cases {
            assert_eq!(expires_at(enqueued, ttl), expected, "{enqueued} {ttl:?}");
        }
    }

    #[test]
    fn scheduled_message_expiry_counts_from_its_enqueue_time() {
        // Document 001's example: scheduled 5 min ahead, TTL 10 min → expires after 15 min.
        let sent = t(0);
        let enqueued = enqueued_time(sent, Some(t(300)));
        assert_eq!(enqueued, t(300));
        assert_eq!(expires_at(enqueued, Some(10 * MIN)), Some(t(900)));
        // A schedule in the past enqueues on arrival.
        assert_eq!(enqueued_time(t(50), Some(t(10))), t(50));
        assert_eq!(enqueued_time(t(50), None), t(50));
    }

    #[test]
    fn verdict_table() {
        let keep = EntityExpiry {
            default_ttl: None,
            dead_lettering_on_expiration: false,
        };
        let dlq = EntityExpiry {
            default_ttl: None,
            dead_lettering_on_expiration: true,
        };
        let expired_discard = ExpiryVerdict::Expired(ExpiryAction::Discard);
        let expired_dlq = ExpiryVerdict::Expired(ExpiryAction::DeadLetter);
        let cases = [
            // (expires_at, locked_until, now, entity, expected)
            (None, None, t(1_000_000), keep, ExpiryVerdict::Live),
            (Some(t(10)), None, t(9), keep, ExpiryVerdict::Live),
            (Some(t(10)), None, t(10), keep, expired_discard),
            (Some(t(10)), None, t(11), dlq, expired_dlq),
            // Locked: not expired until the lock ends, then at once.
            (Some(t(10)), Some(t(20)), t(15), dlq, ExpiryVerdict::Live),
            (Some(t(10)), Some(t(20)), t(20), dlq, expired_dlq),
            (Some(t(10)), Some(t(20)), t(21), keep, expired_discard),
            // A lock that ended long ago protects nothing.
            (Some(t(10)), Some(t(5)), t(11), keep, expired_discard),
        ];
        for (at, locked, now, entity, expected) in cases {
            assert_eq!(
                verdict(at, locked, now, &entity),
                expected,
                "{at:?} {locked:?} {now}"
            );
        }
    }

    #[test]
    fn basic_tier_ttl_defaults_to_and_is_capped_at_14_days() {
        let day = Duration::from_secs(86_400);
        let cases = [
            (None, false, Ok(None)),
            (Some(30 * day), false, Ok(Some(30 * day))),
            (None, true, Ok(Some(14 * day))),
            (Some(day), true, Ok(Some(day))),
            (Some(14 * day), true, Ok(Some(14 * day))),
            (
                Some(15 * day),
                true,
                Err(ExpirySettingError::BasicTierTtlTooLong),
            ),
        ];
        for (configured, basic, expected) in cases {
            assert_eq!(
                entity_default_ttl(configured, basic),
                expected,
                "{configured:?} {basic}"
            );
        }
        assert_eq!(BASIC_TIER_DEFAULT_TTL, BASIC_TIER_MAX_TTL);
    }

    #[test]
    fn auto_delete_on_idle_is_at_least_five_minutes() {
        let cases = [
            (None, Ok(())),
            (Some(5 * MIN), Ok(())),
            (Some(60 * MIN), Ok(())),
            (
                Some(5 * MIN - Duration::from_secs(1)),
                Err(ExpirySettingError::AutoDeleteOnIdleTooShort),
            ),
            (
                Some(Duration::ZERO),
                Err(ExpirySettingError::AutoDeleteOnIdleTooShort),
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(check_auto_delete_on_idle(value), expected, "{value:?}");
        }
        assert!(auto_delete_due(t(0), Some(5 * MIN), t(300)));
        assert!(!auto_delete_due(t(0), Some(5 * MIN), t(299)));
        assert!(!auto_delete_due(t(0), None, t(1_000_000)));
    }
}
