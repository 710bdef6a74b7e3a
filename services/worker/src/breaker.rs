//! The worker's side of the functions' circuit breakers (the shared state lives in Postgres,
//! `shoal_store::breakers`).
//!
//! Each listening function has a [`FunctionBreaker`]: its listener asks it before every
//! receive ([`FunctionBreaker::admit`]) and its invocations tell it how each ended
//! ([`FunctionBreaker::finished`]). Final failures are only counted in memory there; one task
//! per worker ([`sync`]) adds them to Postgres once per tick, in one transaction per tenant,
//! which opens the breaker for every worker when the window holds more than the threshold. The
//! same task reads the breakers that are not closed (at once when `shoal_breakers` announces a
//! change, else every tick) and sets each function's gate: listeners of an open breaker
//! receive nothing until it closes; the worker whose probe claim wins receives one message.
//!
//! Two more things stop a function's listeners the same way: its app's handler taking no
//! connections ([`handler`], every function of the app at once), and its handler asking to
//! slow down for longer than the window ([`throttle`]).

pub mod handler;
pub mod held;
pub mod sync;
pub mod throttle;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use shoal_domain::circuit_breaker::CircuitBreaker;
use shoal_domain::webhooks::WebhookSecret;
use shoal_store::breakers::{FAILURE_SAMPLES, FailureSample};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use handler::{AppKey, HandlerHealth};
use throttle::Throttle;

/// Which function a breaker belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionKey {
    pub tenant: String,
    pub app: String,
    pub function: String,
}

/// What a function's listeners may do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Closed,
    /// Open, or half-open with the probe held elsewhere: receive nothing.
    Open,
    /// Half-open, and this worker holds the probe: receive one message.
    Probe,
    /// Open because the app's handler is unreachable (since then): receive nothing, but the
    /// messages in hand are invoked once it answers (they wait for it, see `invocation`).
    Unreachable(DateTime<Utc>),
}

/// How much a listener may receive once admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// As much as its settings allow.
    Any,
    /// One message: the half-open probe.
    One,
}

/// One function's breaker on this worker; shared by its listener's deliveries.
pub struct FunctionBreaker {
    pub key: FunctionKey,
    gate: watch::Sender<Gate>,
    inner: Mutex<Inner>,
    /// Wakes the sync task (a probe's outcome should not wait for the tick).
    sync: Arc<Notify>,
    /// The app's handler, shared by the app's functions on this worker.
    pub health: Arc<HandlerHealth>,
    throttle: Mutex<Throttle>,
}

struct Inner {
    settings: CircuitBreaker,
    secret: WebhookSecret,
    /// Final failures not yet added to Postgres, and the latest of them (newest first).
    pending: u32,
    recent: VecDeque<FailureSample>,
    /// A probe message was admitted and has not ended yet.
    probing: bool,
    /// A throttle outlasted the window: the pause to ask Postgres for.
    pending_throttle: Option<FailureSample>,
    /// The probe's outcome, not yet reported.
    probe_outcome: Option<bool>,
}

impl FunctionBreaker {
    pub fn gate(&self) -> Gate {
        *self.gate.borrow()
    }

    /// Whether a failed message must be held back rather than retried or poisoned: the
    /// breaker is not closed (on this worker's last reading).
    pub fn holds_back(&self) -> bool {
        self.gate() != Gate::Closed
    }

    /// Whether a message just received may be invoked: not while the breaker is open (it was
    /// received as the breaker opened), but while this worker probes, and while the handler
    /// is unreachable (it waits in hand for the handler).
    pub fn invokes(&self) -> bool {
        self.gate() != Gate::Open
    }

    /// The listener's status line while it is held back.
    pub fn paused_status(&self) -> String {
        match self.gate() {
            Gate::Unreachable(since) => format!(
                "paused: handler unreachable since {}",
                since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
            _ => "paused: the function's circuit breaker is open".into(),
        }
    }

    /// The handler answered 429 or 503 with `retry_after`: how long to defer the message. A
    /// throttle that outlasts the breaker's window asks the sync task to pause the function.
    pub fn throttled(&self, retry_after: Option<Duration>, reason: &str) -> Duration {
        let window = self.settings().window.as_duration();
        let mut throttle = self.throttle();
        let delay = throttle.throttled(Instant::now(), Utc::now(), retry_after, reason, window);
        let pause = throttle.take_pause();
        drop(throttle);
        if let Some(why) = pause
            && self.settings().enabled
            && self.gate() == Gate::Closed
        {
            self.lock().pending_throttle = Some(why);
            self.sync.notify_one();
        }
        delay
    }

    /// A call of the handler succeeded: any throttle is over.
    pub fn answered_ok(&self) {
        self.throttle().succeeded();
    }

    /// How much the listener may receive now, of `most`, and after how long (see `Throttle`).
    pub fn intake(&self, most: u32) -> (u32, Duration) {
        self.throttle().intake(Instant::now(), most)
    }

    fn throttle(&self) -> std::sync::MutexGuard<'_, Throttle> {
        self.throttle.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn settings(&self) -> CircuitBreaker {
        self.lock().settings.clone()
    }

    pub fn secret(&self) -> WebhookSecret {
        self.lock().secret.clone()
    }

    /// Waits until the listener may receive; None once `stop` is cancelled first.
    pub async fn admit(&self, stop: &CancellationToken) -> Option<Admit> {
        let mut gate = self.gate.subscribe();
        loop {
            let current = *gate.borrow_and_update();
            match current {
                Gate::Closed => return Some(Admit::Any),
                Gate::Probe => {
                    let mut inner = self.lock();
                    if !inner.probing && inner.probe_outcome.is_none() {
                        inner.probing = true;
                        return Some(Admit::One);
                    }
                }
                Gate::Open | Gate::Unreachable(_) => {}
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                changed = gate.changed() => if changed.is_err() { return None },
                // A probe that received nothing gives its turn back (see `unused_probe`).
                _ = tokio::time::sleep(std::time::Duration::from_millis(200)), if current == Gate::Probe => {}
            }
        }
    }

    /// The listener was admitted for a probe but received nothing: it may try again.
    pub fn unused_probe(&self) {
        self.lock().probing = false;
    }

    /// How an invocation ended, after its retries. While closed, a failure is counted; while
    /// this worker probes, the outcome closes or reopens the breaker; while open, nothing
    /// counts (the handler's failures have already stopped the function).
    pub fn finished(&self, failure: Option<&str>) {
        let gate = self.gate();
        let mut inner = self.lock();
        match gate {
            Gate::Closed => {
                if let Some(reason) = failure
                    && inner.settings.enabled
                {
                    inner.pending = inner.pending.saturating_add(1);
                    inner.recent.push_front(FailureSample {
                        at: Utc::now(),
                        reason: reason.chars().take(1024).collect(),
                    });
                    inner.recent.truncate(FAILURE_SAMPLES);
                }
            }
            Gate::Probe if inner.probing => {
                inner.probing = false;
                inner.probe_outcome = Some(failure.is_none());
                drop(inner);
                self.sync.notify_one();
            }
            Gate::Probe | Gate::Open | Gate::Unreachable(_) => {}
        }
    }

    /// The probe's message was given back without an outcome (drain, lease lapse).
    pub fn probe_abandoned(&self) {
        if self.gate() == Gate::Probe {
            self.lock().probing = false;
        }
    }

    /// A guard for a delivery that may end without invoking the handler (poisoned on arrival,
    /// parked again, given back): dropped before [`Unreported::reported`], it hands the probe
    /// turn back, so a probe whose message never reached the handler does not keep the function
    /// paused until someone resumes it by hand.
    pub fn unreported(&self) -> Unreported<'_> {
        Unreported {
            breaker: self,
            armed: true,
        }
    }

    /// Takes the failures to add to Postgres.
    fn take_pending(&self) -> Option<(u32, Vec<FailureSample>)> {
        let mut inner = self.lock();
        if inner.pending == 0 {
            return None;
        }
        let count = std::mem::take(&mut inner.pending);
        let recent = inner.recent.drain(..).collect();
        Some((count, recent))
    }

    fn take_pending_throttle(&self) -> Option<FailureSample> {
        self.lock().pending_throttle.take()
    }

    fn take_probe_outcome(&self) -> Option<bool> {
        self.lock().probe_outcome.take()
    }

    fn set_gate(&self, gate: Gate) {
        self.gate.send_if_modified(|current| {
            if *current == gate {
                return false;
            }
            *current = gate;
            true
        });
        if gate != Gate::Probe {
            let mut inner = self.lock();
            inner.probing = false;
            inner.probe_outcome = None;
        }
        if gate != Gate::Closed {
            // Failures counted before the breaker opened elsewhere count for nothing now.
            let mut inner = self.lock();
            inner.pending = 0;
            inner.recent.clear();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// See [`FunctionBreaker::unreported`].
pub struct Unreported<'a> {
    breaker: &'a FunctionBreaker,
    armed: bool,
}

impl Unreported<'_> {
    /// The delivery reached the invocation, which tells the breaker how it ended.
    pub fn reported(mut self) {
        self.armed = false;
    }
}

impl Drop for Unreported<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.breaker.probe_abandoned();
        }
    }
}

/// Every function breaker of this worker, by function. A function hosted again (a restarted
/// instance) gets the same breaker back, with its settings updated.
pub struct Breakers {
    functions: Mutex<HashMap<FunctionKey, Weak<FunctionBreaker>>>,
    handlers: Mutex<HashMap<AppKey, Weak<HandlerHealth>>>,
    sync: Arc<Notify>,
}

impl Default for Breakers {
    fn default() -> Self {
        Breakers {
            functions: Mutex::new(HashMap::new()),
            handlers: Mutex::new(HashMap::new()),
            sync: Arc::new(Notify::new()),
        }
    }
}

impl Breakers {
    pub fn register(
        &self,
        key: FunctionKey,
        settings: CircuitBreaker,
        secret: WebhookSecret,
    ) -> Arc<FunctionBreaker> {
        let mut functions = self.lock();
        functions.retain(|_, weak| weak.strong_count() > 0);
        if let Some(existing) = functions.get(&key).and_then(Weak::upgrade) {
            let mut inner = existing.lock();
            inner.settings = settings;
            inner.secret = secret;
            drop(inner);
            return existing;
        }
        let health = self.health(AppKey {
            tenant: key.tenant.clone(),
            app: key.app.clone(),
        });
        let breaker = Arc::new(FunctionBreaker {
            health,
            throttle: Mutex::new(Throttle::default()),
            key: key.clone(),
            // Closed until the first reading says otherwise: the sync task reads at once when
            // a function registers (see `wake`).
            gate: watch::Sender::new(Gate::Closed),
            inner: Mutex::new(Inner {
                settings,
                secret,
                pending: 0,
                recent: VecDeque::new(),
                probing: false,
                probe_outcome: None,
                pending_throttle: None,
            }),
            sync: self.sync.clone(),
        });
        functions.insert(key, Arc::downgrade(&breaker));
        drop(functions);
        self.wake();
        breaker
    }

    /// The app's handler health, shared by its functions on this worker.
    fn health(&self, key: AppKey) -> Arc<HandlerHealth> {
        let mut handlers = self.handlers.lock().unwrap_or_else(|p| p.into_inner());
        handlers.retain(|_, weak| weak.strong_count() > 0);
        if let Some(existing) = handlers.get(&key).and_then(Weak::upgrade) {
            return existing;
        }
        let health = Arc::new(HandlerHealth::new(key.clone(), self.sync.clone()));
        handlers.insert(key, Arc::downgrade(&health));
        health
    }

    /// Asks the sync task to read the breakers now (a notification, a new function).
    pub fn wake(&self) {
        self.sync.notify_one();
    }

    fn live(&self) -> Vec<Arc<FunctionBreaker>> {
        let mut functions = self.lock();
        functions.retain(|_, weak| weak.strong_count() > 0);
        functions.values().filter_map(Weak::upgrade).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<FunctionKey, Weak<FunctionBreaker>>> {
        self.functions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(settings: CircuitBreaker) -> (Breakers, Arc<FunctionBreaker>) {
        let breakers = Breakers::default();
        let key = FunctionKey {
            tenant: "t".into(),
            app: "a".into(),
            function: "f".into(),
        };
        let secret = WebhookSecret::from_bytes(vec![7; 32]).unwrap();
        let b = breakers.register(key, settings, secret);
        (breakers, b)
    }

    #[tokio::test]
    async fn a_closed_breaker_counts_failures_and_admits_everything() {
        let (_all, b) = breaker(CircuitBreaker::default());
        let stop = CancellationToken::new();
        assert_eq!(b.admit(&stop).await, Some(Admit::Any));
        b.finished(Some("boom"));
        b.finished(None);
        b.finished(Some("bang"));
        let (count, recent) = b.take_pending().unwrap();
        assert_eq!(count, 2);
        assert_eq!(recent[0].reason, "bang", "newest first");
        assert!(b.take_pending().is_none());
    }

    #[tokio::test]
    async fn a_disabled_breaker_counts_nothing() {
        let (_all, b) = breaker(CircuitBreaker {
            enabled: false,
            ..CircuitBreaker::default()
        });
        b.finished(Some("boom"));
        assert!(b.take_pending().is_none());
    }

    #[tokio::test]
    async fn an_open_breaker_admits_nothing_until_it_closes_or_the_listener_stops() {
        let (_all, b) = breaker(CircuitBreaker::default());
        b.finished(Some("counted before"));
        b.set_gate(Gate::Open);
        assert!(b.take_pending().is_none(), "pending failures are dropped");
        assert!(b.holds_back() && !b.invokes());
        let stop = CancellationToken::new();
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(100), b.admit(&stop));
        assert!(waiting.await.is_err(), "still waiting while open");
        let admitted = {
            let b = b.clone();
            let stop = stop.clone();
            tokio::spawn(async move { b.admit(&stop).await })
        };
        b.set_gate(Gate::Closed);
        assert_eq!(admitted.await.unwrap(), Some(Admit::Any));
        b.set_gate(Gate::Open);
        stop.cancel();
        assert_eq!(b.admit(&stop).await, None);
    }

    #[tokio::test]
    async fn an_unreachable_handler_stops_receiving_while_messages_in_hand_wait() {
        let (all, b) = breaker(CircuitBreaker::default());
        b.finished(Some("counted before"));
        let since = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        b.set_gate(Gate::Unreachable(since));
        assert!(b.take_pending().is_none(), "pending failures are dropped");
        assert!(b.holds_back(), "no retry, no poison");
        assert!(b.invokes(), "a message received as it opened waits in hand");
        assert_eq!(
            b.paused_status(),
            "paused: handler unreachable since 2023-11-14T22:13:20Z"
        );
        let stop = CancellationToken::new();
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(100), b.admit(&stop));
        assert!(waiting.await.is_err(), "receives nothing");
        b.finished(Some("not counted"));
        assert!(b.take_pending().is_none());
        // Every function of the app shares the app's handler health.
        let sibling = all.register(
            FunctionKey {
                function: "g".into(),
                ..b.key.clone()
            },
            CircuitBreaker::default(),
            b.secret(),
        );
        assert!(Arc::ptr_eq(&b.health, &sibling.health));
    }

    #[tokio::test]
    async fn a_probe_admits_one_message_and_reports_its_outcome() {
        let (_all, b) = breaker(CircuitBreaker::default());
        b.set_gate(Gate::Probe);
        assert!(b.invokes(), "the probe's message is invoked");
        assert!(b.holds_back(), "and not retried or poisoned when it fails");
        let stop = CancellationToken::new();
        assert_eq!(b.admit(&stop).await, Some(Admit::One));
        let second = tokio::time::timeout(std::time::Duration::from_millis(300), b.admit(&stop));
        assert!(second.await.is_err(), "one probe at a time");
        b.finished(Some("still failing"));
        assert_eq!(b.take_probe_outcome(), Some(false));
        assert!(
            b.take_pending().is_none(),
            "a probe's failure is not counted"
        );
        b.unused_probe();
        assert_eq!(b.admit(&stop).await, Some(Admit::One));
        b.finished(None);
        assert_eq!(b.take_probe_outcome(), Some(true));
    }

    #[tokio::test]
    async fn a_function_hosted_again_gets_its_breaker_back() {
        let (all, b) = breaker(CircuitBreaker::default());
        let again = all.register(
            b.key.clone(),
            CircuitBreaker {
                failure_threshold: 3,
                ..CircuitBreaker::default()
            },
            WebhookSecret::from_bytes(vec![8; 32]).unwrap(),
        );
        assert!(Arc::ptr_eq(&b, &again));
        assert_eq!(b.settings().failure_threshold, 3);
        drop((b, again));
        assert!(all.live().is_empty());
    }
}
