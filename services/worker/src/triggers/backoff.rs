//! The pause between a listener's failed attempts to reach its source (connect, receive,
//! write a dead letter): it grows while the source keeps failing and starts small again once
//! it answers, so a listener neither hammers a broken source nor waits long after it recovers.
//! And [`settle`]: the few quick tries a message's settlement (delete, poison, complete,
//! abandon) gets before the message is left to come back on its own.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::spans;

const FIRST_PAUSE: Duration = Duration::from_secs(1);
const LONGEST_PAUSE: Duration = Duration::from_secs(30);

/// Grows the pause after each failure (×2 up to 30 s); reset by a success.
pub struct Retry(Duration);

impl Default for Retry {
    fn default() -> Retry {
        Retry(FIRST_PAUSE)
    }
}

impl Retry {
    /// Waits the current pause (false if stopped meanwhile) and doubles it.
    pub async fn pause(&mut self, stop: &CancellationToken) -> bool {
        let wait = self.0;
        self.0 = (self.0 * 2).min(LONGEST_PAUSE);
        tokio::select! {
            _ = stop.cancelled() => false,
            _ = tokio::time::sleep(wait) => true,
        }
    }

    pub fn reset(&mut self) {
        self.0 = FIRST_PAUSE;
    }
}

/// How often a settlement is tried while it fails with a transient error.
const SETTLE_ATTEMPTS: u32 = 4;

/// Runs the settlement step `op` (named `step` in the logs and its span), again after 100, 200
/// and 300 ms while it fails with an error `transient` says may pass. The error that ended it
/// otherwise: a lost receipt or lock is not retried, since the message is received again anyway.
pub async fn settle<F, Fut, E>(step: &str, transient: impl Fn(&E) -> bool, op: F) -> Result<(), E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
    E: std::fmt::Display,
{
    let span = spans::settlement(step);
    let (result, tries) = settle_counted(step, transient, op).await;
    end_settlement(span, tries, result.is_ok());
    result
}

/// [`settle`] without its span, for a step taken on behalf of several deliveries (one
/// acknowledgement for a run of them), with the tries it took; each delivery ends a span of
/// its own with [`end_settlement`].
pub async fn settle_counted<F, Fut, E>(
    step: &str,
    transient: impl Fn(&E) -> bool,
    mut op: F,
) -> (Result<(), E>, u32)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
    E: std::fmt::Display,
{
    let mut attempt = 1;
    loop {
        match op().await {
            Ok(()) => return (Ok(()), attempt),
            Err(e) if transient(&e) && attempt < SETTLE_ATTEMPTS => {
                tracing::debug!(step, attempt, error = %e, "settlement step failed; retrying");
                tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
                attempt += 1;
            }
            Err(e) => return (Err(e), attempt),
        }
    }
}

/// Ends a settlement's span (from `spans::settlement`), with the tries it took.
pub fn end_settlement(span: Option<spans::WorkerSpan>, tries: u32, settled: bool) {
    if let Some(mut span) = span {
        spans::settle_tries(&mut span, tries);
        if settled {
            span.end("settled", false);
        } else {
            span.end("failed", true);
        }
    }
}
