//! How an invocation ended, as the trigger that settles its message sees it.

use std::time::{Duration, Instant};

use shoal_domain::durable_retry::RetryState;

/// What a trigger made of a handler's successful answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Accepted<T> {
    /// Everything the invocation carried is done.
    Done(T),
    /// Part of it failed, for this reason (a batch's `batchItemFailures`): the answer's
    /// outputs are written and the rest is retried.
    Partly(String),
}

/// How long a delivery can hold its message while the handler cannot take it: None for as
/// long as it takes (a queue message's invisibility is renewed without end), else until then
/// (a Service Bus lock is renewed only up to `maxAutoLockRenewalDuration`; a stream's batch
/// must be done before its member has to fetch again).
#[derive(Clone, Copy, Debug)]
pub struct Hold {
    pub until: Option<Instant>,
}

/// A failure the retry policy did not (or could no longer) retry.
#[derive(Debug, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    /// The handler asked for the message to be tried again no sooner than this (`retryAfter`,
    /// or `Retry-After` on a failure): the trigger gives it back after that long, where it can.
    pub retry_after: Option<Duration>,
}

impl Failure {
    pub fn new(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            retry_after: None,
        }
    }
}

/// A retry far enough off that the trigger parks the message at its source for `wait` (already
/// divided, see [`FunctionHost::retry_divisor`]) and keeps `state` for when it comes back.
#[derive(Debug, PartialEq, Eq)]
pub struct Parked {
    pub state: RetryState,
    pub wait: Duration,
}

/// Why a held invocation did not succeed.
#[derive(Debug, PartialEq, Eq)]
pub enum Unsettled {
    /// The handler failed it (after the retry policy): the trigger's failure path.
    Failed(Failure),
    /// The hold's bound came while the handler could not take the message: give it back.
    HoldEnded(String),
    /// Its next retry is far off: park it (only when the caller said it can).
    Parked(Parked),
}

impl Unsettled {
    /// Why the last attempt failed, for the breaker; None for a parked message, whose
    /// failed attempt is told to the breaker when it happens.
    pub(super) fn breaker_reason(&self) -> Option<&str> {
        match self {
            Unsettled::Failed(f) => Some(&f.reason),
            Unsettled::HoldEnded(r) => Some(r),
            Unsettled::Parked(_) => None,
        }
    }
}

/// Where a delivery's retries start (a parked message's state, else the first attempt), and
/// whether a retry far enough off ends the call with [`Unsettled::Parked`] for the trigger to
/// park the message at its source.
#[derive(Clone, Debug, Default)]
pub struct Retries {
    pub from: RetryState,
    pub park: bool,
}

/// How a delivery ended, for the trigger to settle by.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed(Failure),
    /// The next retry is far off: the trigger parks the message (see [`Parked`]).
    Parked(Parked),
    /// The drain deadline passed, or the lease lapsed, before the invocation finished; or
    /// the handler could not take it for as long as the message could be held.
    Abandoned,
}
