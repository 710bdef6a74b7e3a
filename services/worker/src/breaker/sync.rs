//! The task that keeps this worker's breakers and Postgres in step, once per tick or at once
//! when woken: per tenant, in one transaction, it adds the failures counted since the last
//! tick (opening a breaker that crossed its threshold), reports a probe's outcome, claims or
//! renews a due probe, opens a function whose handler throttled it too long, opens or closes
//! every breaker of an app whose handler this worker found unreachable or answering again,
//! and reads which breakers are not closed; then it sets every gate and posts each transition
//! it made to the function's operator webhook.
//!
//! Counting is batched so that it never limits dispatch: an invocation only adds to a counter
//! in memory (see `FunctionBreaker::finished`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use shoal_domain::circuit_breaker::{BreakerCause, BreakerState};
use shoal_domain::names::TenantName;
use shoal_invoker::Invoker;
use shoal_store::breakers::{self, BreakerRecord, FunctionRef, Transition};
use shoal_store::{StoreError, TenantId, begin_tenant};
use tokio_util::sync::CancellationToken;

use super::handler::{HandlerHealth, Report};
use super::{Breakers, FunctionBreaker, Gate};
use crate::spans;

/// A tenant's round: every function's gate, the transitions made, and what Postgres says of
/// each app's handler (unreachable since when, if it is).
type TenantRound = (
    Vec<Gate>,
    Vec<(Arc<FunctionBreaker>, Transition)>,
    Vec<(Arc<HandlerHealth>, Option<chrono::DateTime<Utc>>)>,
);

pub struct Sync {
    pub breakers: Arc<Breakers>,
    pub pool: sqlx::PgPool,
    pub worker: String,
    pub tick: Duration,
    pub invoker: Invoker,
}

impl Sync {
    /// Runs until `stop`; a failed round is logged and the next one tries again (counts taken
    /// for a failed round are lost, which only delays an opening).
    pub async fn run(self, stop: CancellationToken) {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(self.tick) => {}
                _ = self.breakers.sync.notified() => {}
            }
            if let Err(e) = self.round().await {
                tracing::warn!(error = %e, "syncing the circuit breakers with Postgres failed; retrying next tick");
            }
        }
    }

    /// One round over every live breaker of this worker.
    pub async fn round(&self) -> Result<(), StoreError> {
        let mut by_tenant: BTreeMap<String, Vec<Arc<FunctionBreaker>>> = BTreeMap::new();
        for breaker in self.breakers.live() {
            by_tenant
                .entry(breaker.key.tenant.clone())
                .or_default()
                .push(breaker);
        }
        for (tenant, functions) in by_tenant {
            let Ok(name) = TenantName::parse(&tenant) else {
                continue;
            };
            let tenant = TenantId::new(name);
            let (gates, made, handlers) = self.tenant_round(&tenant, &functions).await?;
            for (breaker, gate) in functions.iter().zip(gates) {
                breaker.set_gate(gate);
            }
            // Only after the commit: what they reported is settled by this reading.
            for (health, unreachable_since) in handlers {
                health.in_store(unreachable_since);
            }
            for (breaker, transition) in made {
                spans::breaker_transition(
                    &spans::Function {
                        tenant: &breaker.key.tenant,
                        app: &breaker.key.app,
                        function: &breaker.key.function,
                    },
                    transition.from,
                    transition.to,
                    transition.cause,
                );
                self.notify(&breaker, &transition);
            }
        }
        Ok(())
    }

    async fn tenant_round(
        &self,
        tenant: &TenantId,
        functions: &[Arc<FunctionBreaker>],
    ) -> Result<TenantRound, StoreError> {
        let mut made = Vec::new();
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        // Each app's handler once, whichever of its functions brought it.
        let mut handlers: Vec<&Arc<HandlerHealth>> = Vec::new();
        for breaker in functions {
            if !handlers.iter().any(|h| Arc::ptr_eq(h, &breaker.health)) {
                handlers.push(&breaker.health);
            }
        }
        for health in &handlers {
            let app = &health.key.app;
            let moved = match health.report() {
                Some(Report::Unreachable(why)) => {
                    breakers::handler::handler_unreachable(&mut tx, tenant, app, &why, &self.worker)
                        .await?
                }
                Some(Report::Reachable) => {
                    breakers::handler::handler_reachable(&mut tx, tenant, app, &self.worker).await?
                }
                None => continue,
            };
            for t in moved {
                if let Some(breaker) = functions
                    .iter()
                    .find(|b| b.key.app == t.app && b.key.function == t.function)
                {
                    made.push((breaker.clone(), t));
                }
            }
        }
        for breaker in functions {
            let f = function_ref(tenant, breaker);
            if let Some(why) = breaker.take_pending_throttle()
                && let Some(t) =
                    breakers::handler::throttled(&mut tx, f, &why, &self.worker).await?
            {
                tracing::warn!(
                    function = f.function,
                    app = f.app,
                    "the handler kept asking to slow down for longer than the breaker's window; the function's listeners pause"
                );
                made.push((breaker.clone(), t));
            }
        }
        for breaker in functions {
            let f = function_ref(tenant, breaker);
            if let Some((count, recent)) = breaker.take_pending() {
                let settings = breaker.settings();
                if let Some(t) =
                    breakers::record_failures(&mut tx, f, &settings, count, &recent, &self.worker)
                        .await?
                {
                    tracing::warn!(function = f.function, app = f.app, threshold = settings.failure_threshold,
                        window = %settings.window, "circuit breaker opened: too many final failures; the function's listeners pause");
                    made.push((breaker.clone(), t));
                }
            }
            if let Some(succeeded) = breaker.take_probe_outcome()
                && let Some(t) = breakers::probe_result(&mut tx, f, &self.worker, succeeded).await?
            {
                tracing::info!(
                    function = f.function,
                    app = f.app,
                    succeeded,
                    "circuit breaker probe ended"
                );
                made.push((breaker.clone(), t));
            }
        }
        let open: BTreeMap<(String, String), BreakerRecord> =
            breakers::open_of_tenant(&mut tx, tenant)
                .await?
                .into_iter()
                .map(|r| ((r.app.clone(), r.function.clone()), r))
                .collect();
        let mut readings = Vec::with_capacity(handlers.len());
        for health in &handlers {
            let since = open
                .values()
                .filter(|r| {
                    r.app == health.key.app
                        && r.state == BreakerState::Open
                        && r.cause == Some(BreakerCause::HandlerUnreachable)
                })
                .filter_map(|r| r.failures.first().map(|f| f.at).or(r.changed_at))
                .min();
            readings.push(((*health).clone(), since));
        }
        let mut gates = Vec::with_capacity(functions.len());
        for breaker in functions {
            let f = function_ref(tenant, breaker);
            let Some(record) = open.get(&(breaker.key.app.clone(), breaker.key.function.clone()))
            else {
                gates.push(Gate::Closed);
                continue;
            };
            if record.state == BreakerState::Open
                && record.cause == Some(BreakerCause::HandlerUnreachable)
            {
                let since = record.failures.first().map(|f| f.at).or(record.changed_at);
                gates.push(Gate::Unreachable(since.unwrap_or_else(Utc::now)));
                continue;
            }
            let (holds, transition) = if self.may_probe(breaker, record) {
                let settings = breaker.settings();
                breakers::claim_probe(
                    &mut tx,
                    f,
                    &self.worker,
                    settings.cooldown.as_duration(),
                    self.probe_lease(),
                )
                .await?
            } else {
                (false, None)
            };
            if let Some(t) = transition {
                tracing::info!(
                    function = f.function,
                    app = f.app,
                    "circuit breaker half-open: this worker probes with one message"
                );
                made.push((breaker.clone(), t));
            }
            gates.push(if holds { Gate::Probe } else { Gate::Open });
        }
        shoal_store::commit(tx).await?;
        Ok((gates, made, readings))
    }

    /// Whether to try for the probe: the breaker half-opens by itself, and either it has been
    /// open for its cooldown (by this worker's clock, give or take a tick; Postgres decides),
    /// or it is half-open and the probe is this worker's or its holder's claim lapsed.
    fn may_probe(&self, breaker: &FunctionBreaker, record: &BreakerRecord) -> bool {
        let settings = breaker.settings();
        if !settings.half_open {
            return false;
        }
        let now = Utc::now();
        match record.state {
            BreakerState::Open => {
                matches!(
                    record.cause,
                    Some(
                        BreakerCause::Failures
                            | BreakerCause::ProbeFailed
                            | BreakerCause::Throttled
                    )
                ) && record
                    .changed_at
                    .is_some_and(|at| at + settings.cooldown.as_duration() <= now + self.tick)
            }
            BreakerState::HalfOpen => {
                record.probe_by.as_deref() == Some(self.worker.as_str())
                    || record.probe_until.is_none_or(|until| until < now)
            }
            BreakerState::Closed => false,
        }
    }

    /// How long a probe claim holds without renewal: a few ticks, at least 5 s.
    fn probe_lease(&self) -> Duration {
        (self.tick * 5).max(Duration::from_secs(5))
    }

    /// Posts the transition to the function's operator webhook, if it has one, in the
    /// background (with retries; see `Invoker::deliver_event`).
    fn notify(&self, breaker: &FunctionBreaker, t: &Transition) {
        let Some(url) = breaker.settings().notify_url else {
            return;
        };
        let event = t.event(&breaker.key.tenant);
        let webhook_id = event.webhook_id();
        let body = serde_json::to_vec(&event.body()).unwrap_or_default();
        let (invoker, secret) = (self.invoker.clone(), breaker.secret());
        tokio::spawn(async move {
            invoker
                .deliver_event(&url, &secret, &webhook_id, body)
                .await;
        });
    }
}

fn function_ref<'a>(tenant: &'a TenantId, breaker: &'a FunctionBreaker) -> FunctionRef<'a> {
    FunctionRef {
        tenant,
        app: &breaker.key.app,
        function: &breaker.key.function,
    }
}
