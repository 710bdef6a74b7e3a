//! The worker's side of the functions' circuit breakers (the shared state lives in Postgres,
//! `shoal_store::breakers`).
//!
//! Each listening function has a [`FunctionBreaker`]: its listener asks it before every
//! receive ([`FunctionBreaker::admit`]), and each delivery's invocation tells it how it ended
//! through the delivery's [`Turn`] ([`Turn::finished`]); a turn dropped unreported hands a
//! probe back. Final failures are only counted in memory there; one task
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
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// Which admission holds the probe (each probe admitted gets the next number), so a turn
    /// handed back late cannot end a later probe.
    probe_id: u64,
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

    /// Waits until the listener may receive; None once `stop` is cancelled first. The
    /// admission is the listener's leave to receive: it hands each delivery a [`Turn`]
    /// ([`Admission::turn`]), through which the invocation reports how it ended. A probe's
    /// admission or turn dropped before that (nothing received, a message poisoned on arrival,
    /// held back or given back) hands the probe back, so no listener path can leave the
    /// half-open breaker waiting for an outcome that never comes.
    pub async fn admit(self: &Arc<Self>, stop: &CancellationToken) -> Option<Admission> {
        let mut gate = self.gate.subscribe();
        loop {
            let current = *gate.borrow_and_update();
            match current {
                Gate::Closed => return Some(self.admission(None)),
                Gate::Probe => {
                    let mut inner = self.lock();
                    if !inner.probing && inner.probe_outcome.is_none() {
                        inner.probing = true;
                        inner.probe_id += 1;
                        let id = inner.probe_id;
                        drop(inner);
                        return Some(self.admission(Some(id)));
                    }
                }
                Gate::Open | Gate::Unreachable(_) => {}
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                changed = gate.changed() => if changed.is_err() { return None },
                // A probe whose turn was handed back may be taken again.
                _ = tokio::time::sleep(std::time::Duration::from_millis(200)), if current == Gate::Probe => {}
            }
        }
    }

    fn admission(self: &Arc<Self>, probe: Option<u64>) -> Admission {
        Admission {
            breaker: self.clone(),
            probe: AtomicU64::new(probe.unwrap_or(NO_PROBE)),
        }
    }

    /// A turn for a delivery no admission covers (a stream's parked retries, read on their
    /// own schedule): its failures count while the breaker is closed; it is never the probe.
    pub fn counted_turn(self: &Arc<Self>) -> Turn {
        Turn {
            breaker: self.clone(),
            probe: None,
        }
    }

    /// How an invocation that was not the probe ended, after its retries: while closed, a
    /// failure is counted; otherwise nothing counts (the handler's failures have already
    /// stopped the function, or the probe decides).
    fn counted(&self, failure: Option<&str>) {
        if self.gate() != Gate::Closed {
            return;
        }
        let mut inner = self.lock();
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

    /// The probe `id` ended: its outcome closes or reopens the breaker.
    fn probe_ended(&self, id: u64, failure: Option<&str>) {
        let mut inner = self.lock();
        if self.gate() == Gate::Probe && inner.probing && inner.probe_id == id {
            inner.probing = false;
            inner.probe_outcome = Some(failure.is_none());
            drop(inner);
            self.sync.notify_one();
        }
    }

    /// The probe `id` was given back without an outcome: another may be admitted.
    fn probe_handed_back(&self, id: u64) {
        let mut inner = self.lock();
        if inner.probing && inner.probe_id == id {
            inner.probing = false;
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

/// Probe numbers start at 1: an admission holding this holds none.
const NO_PROBE: u64 = 0;

/// A listener's leave to receive, from [`FunctionBreaker::admit`]; see there.
pub struct Admission {
    breaker: Arc<FunctionBreaker>,
    /// The probe this admission holds until a delivery takes it ([`NO_PROBE`]: none). Atomic,
    /// so deliveries running side by side (a stream batch's lanes) can each ask for a turn.
    probe: AtomicU64,
}

impl Admission {
    /// As much as the breaker allows, or the half-open breaker's one probe message.
    pub fn kind(&self) -> Admit {
        if self.probe.load(Ordering::Acquire) == NO_PROBE {
            Admit::Any
        } else {
            Admit::One
        }
    }

    /// The turn of one delivery of what was received: the probe's for the first (a probe
    /// receives one message), a counted one for every other.
    pub fn turn(&self) -> Turn {
        let probe = self.probe.swap(NO_PROBE, Ordering::AcqRel);
        Turn {
            breaker: self.breaker.clone(),
            probe: (probe != NO_PROBE).then_some(probe),
        }
    }
}

impl Drop for Admission {
    /// Nothing received took the probe: it is handed back.
    fn drop(&mut self) {
        drop(self.turn());
    }
}

/// One delivery's part in its function's circuit breaker: the invocation reports through it
/// how the delivery ended ([`Turn::finished`]). A probe's turn dropped unreported hands the
/// probe back.
pub struct Turn {
    breaker: Arc<FunctionBreaker>,
    /// The probe this delivery is, if it is one and has not ended.
    probe: Option<u64>,
}

impl Turn {
    /// How the invocation ended, after its retries (`failure`: why it failed finally). The
    /// probe's outcome closes or reopens the breaker; any other delivery's failure counts
    /// while the breaker is closed. Reported once: later calls count nothing.
    pub fn finished(&mut self, failure: Option<&str>) {
        match self.probe.take() {
            Some(id) => self.breaker.probe_ended(id, failure),
            None => self.breaker.counted(failure),
        }
    }

    /// The delivery ends without an outcome (given back, parked, held back): a probe is
    /// handed back.
    pub fn hand_back(&mut self) {
        if let Some(id) = self.probe.take() {
            self.breaker.probe_handed_back(id);
        }
    }

    /// Whether this delivery is the half-open breaker's probe.
    #[cfg(test)]
    fn is_probe(&self) -> bool {
        self.probe.is_some()
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.hand_back();
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
                probe_id: 0,
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
        let admission = b.admit(&stop).await.unwrap();
        assert_eq!(admission.kind(), Admit::Any);
        admission.turn().finished(Some("boom"));
        admission.turn().finished(None);
        admission.turn().finished(Some("bang"));
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
        b.counted_turn().finished(Some("boom"));
        assert!(b.take_pending().is_none());
    }

    #[tokio::test]
    async fn an_open_breaker_admits_nothing_until_it_closes_or_the_listener_stops() {
        let (_all, b) = breaker(CircuitBreaker::default());
        b.counted_turn().finished(Some("counted before"));
        b.set_gate(Gate::Open);
        assert!(b.take_pending().is_none(), "pending failures are dropped");
        assert!(b.holds_back() && !b.invokes());
        let stop = CancellationToken::new();
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(100), b.admit(&stop));
        assert!(waiting.await.is_err(), "still waiting while open");
        let admitted = {
            let b = b.clone();
            let stop = stop.clone();
            tokio::spawn(async move { b.admit(&stop).await.map(|a| a.kind()) })
        };
        b.set_gate(Gate::Closed);
        assert_eq!(admitted.await.unwrap(), Some(Admit::Any));
        b.set_gate(Gate::Open);
        stop.cancel();
        assert!(b.admit(&stop).await.is_none());
    }

    #[tokio::test]
    async fn an_unreachable_handler_stops_receiving_while_messages_in_hand_wait() {
        let (all, b) = breaker(CircuitBreaker::default());
        b.counted_turn().finished(Some("counted before"));
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
        b.counted_turn().finished(Some("not counted"));
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
        let admission = b.admit(&stop).await.unwrap();
        assert_eq!(admission.kind(), Admit::One);
        let second = tokio::time::timeout(std::time::Duration::from_millis(300), b.admit(&stop));
        assert!(second.await.is_err(), "one probe at a time");
        let mut turn = admission.turn();
        assert!(turn.is_probe());
        assert!(!admission.turn().is_probe(), "a probe receives one message");
        drop(admission);
        turn.finished(Some("still failing"));
        assert_eq!(b.take_probe_outcome(), Some(false));
        assert!(
            b.take_pending().is_none(),
            "a probe's failure is not counted"
        );
        drop(turn);
        let admission = b.admit(&stop).await.unwrap();
        assert_eq!(admission.kind(), Admit::One);
        admission.turn().finished(None);
        assert_eq!(b.take_probe_outcome(), Some(true));
    }

    #[tokio::test]
    async fn a_probe_that_never_reports_hands_its_turn_back() {
        let (_all, b) = breaker(CircuitBreaker::default());
        b.set_gate(Gate::Probe);
        let stop = CancellationToken::new();
        let admit_kind = |b: Arc<FunctionBreaker>| {
            let stop = stop.clone();
            async move {
                tokio::time::timeout(std::time::Duration::from_millis(300), b.admit(&stop))
                    .await
                    .ok()
                    .flatten()
                    .map(|a| a.kind())
            }
        };
        // Nothing received: the admission is dropped.
        drop(b.admit(&stop).await.unwrap());
        assert_eq!(admit_kind(b.clone()).await, Some(Admit::One));
        // Received, then given back without an outcome (poisoned on arrival, held back).
        let admission = b.admit(&stop).await.unwrap();
        let turn = admission.turn();
        drop(admission);
        assert_eq!(admit_kind(b.clone()).await, None, "the turn is still out");
        drop(turn);
        assert_eq!(b.take_probe_outcome(), None, "no outcome was made up");
        assert_eq!(admit_kind(b.clone()).await, Some(Admit::One));
    }

    #[tokio::test]
    async fn only_the_probe_decides_the_probe() {
        let (_all, b) = breaker(CircuitBreaker::default());
        let stop = CancellationToken::new();
        // A delivery admitted while closed ends while this worker probes: its outcome is not
        // the probe's.
        let earlier = b.admit(&stop).await.unwrap().turn();
        b.set_gate(Gate::Probe);
        let probe = b.admit(&stop).await.unwrap();
        let mut earlier = earlier;
        earlier.finished(None);
        assert_eq!(b.take_probe_outcome(), None);
        // A probe turn handed back late (its probe long ended) does not end a later probe.
        let mut old = probe.turn();
        old.finished(Some("failing"));
        assert_eq!(b.take_probe_outcome(), Some(false));
        let stale = b.admit(&stop).await.unwrap();
        let mut late = Turn {
            breaker: b.clone(),
            probe: Some(1),
        };
        late.hand_back();
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(300), b.admit(&stop));
        assert!(waiting.await.is_err(), "the current probe is still out");
        stale.turn().finished(None);
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
