//! The pause between a listener's failed attempts to reach its source (connect, receive,
//! write a dead letter): it grows while the source keeps failing and starts small again once
//! it answers, so a listener neither hammers a broken source nor waits long after it recovers.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

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
