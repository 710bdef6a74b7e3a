//! Delivers invocations queued with `?mode=async`. Every API process runs one: it claims due
//! invocations from Postgres (`FOR UPDATE SKIP LOCKED`, so processes share the work without a
//! coordinator), delivers each through the same path as a synchronous call, and records the
//! outcome fenced by the attempt it claimed. It wakes on the enqueue notification and polls
//! every second besides, for retries coming due and for claims a crashed process left to lapse.
//!
//! A claim holds for [`DispatchConfig::lease`] and is extended while a slow handler is still
//! working, so a crashed process's invocations are taken over within one lease, never while
//! their process is alive. Completed invocations are pruned after 24 hours.
//!
//! Why a Postgres table and not an Azure Storage queue: the invocation is durable before the
//! 202 is sent without another service or connection string to deploy, its status and response
//! can be read by id at any time (a queue can only be peeked at its front), and attempts,
//! claims and retention are ordinary columns the status endpoint and the fencing read.

use std::sync::Arc;
use std::time::Duration;

use shoal_domain::async_invocation::{MAX_ATTEMPTS, RETENTION, retry_delay};
use shoal_domain::invocation_log::facts_of;
use shoal_store::crypto::Cipher;
use shoal_store::webhook_invocations::{self, ClaimedInvocation};
use shoal_store::{StoreError, begin_tenant};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::catalog::Catalog;
use super::delivery::{Call, deliver, response_document};
use super::errors::HandlerFailure;
use super::recording::Recording;

#[derive(Clone, Debug)]
pub struct DispatchConfig {
    /// Deliveries in flight per API process.
    pub concurrency: usize,
    /// Look for due work at least this often.
    pub poll: Duration,
    /// How long a claim holds before another process may take it over.
    pub lease: Duration,
    pub prune_every: Duration,
    /// How long in-flight deliveries may finish after shutdown begins.
    pub drain: Duration,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            concurrency: 16,
            poll: Duration::from_secs(1),
            lease: Duration::from_secs(30),
            prune_every: Duration::from_secs(600),
            drain: Duration::from_secs(5),
        }
    }
}

pub struct Dispatcher {
    pub pool: sqlx::PgPool,
    pub cipher: Cipher,
    /// Each app's entry carries the invoker its handler is called through.
    pub catalog: Arc<Catalog>,
    pub wake: Arc<Notify>,
    pub config: DispatchConfig,
    /// Who holds a claim (diagnostics only; claims are fenced by attempt).
    pub claimant: String,
    /// Each attempt goes to the invocation log as the synchronous calls do.
    pub recording: Recording,
}

impl Dispatcher {
    pub async fn run(self: Arc<Self>, stop: CancellationToken) {
        let slots = Arc::new(Semaphore::new(self.config.concurrency));
        let mut deliveries = JoinSet::new();
        let mut prune = tokio::time::interval(self.config.prune_every);
        prune.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            let free = slots.available_permits();
            let mut claimed_all = false;
            if free > 0 {
                match webhook_invocations::claim(
                    &self.pool,
                    &self.cipher,
                    &self.claimant,
                    self.config.lease,
                    u32::try_from(free).unwrap_or(u32::MAX),
                )
                .await
                {
                    Ok(claimed) => {
                        if failing {
                            tracing::info!("webhook dispatcher: claiming again");
                            failing = false;
                        }
                        claimed_all = claimed.len() == free;
                        for invocation in claimed {
                            let Ok(slot) = slots.clone().try_acquire_owned() else {
                                break;
                            };
                            let this = self.clone();
                            deliveries.spawn(async move {
                                this.deliver(invocation).await;
                                drop(slot);
                            });
                        }
                    }
                    Err(error) if !failing => {
                        tracing::warn!(%error, "webhook dispatcher: cannot claim invocations; retrying");
                        failing = true;
                    }
                    Err(error) => tracing::debug!(%error, "webhook dispatcher: still cannot claim"),
                }
            }
            if claimed_all {
                // There may be more due right now.
                continue;
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(self.config.poll) => {}
                Some(_) = deliveries.join_next(), if !deliveries.is_empty() => {}
                _ = prune.tick() => self.prune().await,
            }
        }
        // Let what is in flight finish briefly; anything cut off is taken over after its
        // lease by another process (its attempt counts).
        let drain = async { while deliveries.join_next().await.is_some() {} };
        if tokio::time::timeout(self.config.drain, drain)
            .await
            .is_err()
        {
            deliveries.abort_all();
        }
    }

    async fn prune(&self) {
        match webhook_invocations::prune(&self.pool, RETENTION).await {
            Ok(0) => {}
            Ok(pruned) => {
                tracing::info!(pruned, "webhook dispatcher: pruned completed invocations")
            }
            Err(error) => tracing::debug!(%error, "webhook dispatcher: pruning failed"),
        }
    }

    async fn deliver(&self, invocation: ClaimedInvocation) {
        let outcome = {
            let attempt = self.attempt(&invocation);
            let extend = self.keep_claim(&invocation);
            tokio::pin!(attempt);
            tokio::select! {
                outcome = &mut attempt => outcome,
                never = extend => match never {},
            }
        };
        if let Err(error) = self.record(&invocation, outcome).await {
            // The claim lapses and another attempt follows; nothing is lost.
            tracing::warn!(
                tenant = %invocation.tenant, invocation = %invocation.id, %error,
                "webhook dispatcher: could not record an outcome"
            );
        }
    }

    /// Extends the claim every third of the lease until the attempt ends (it never returns).
    async fn keep_claim(&self, invocation: &ClaimedInvocation) -> std::convert::Infallible {
        let every = self.config.lease / 3;
        loop {
            tokio::time::sleep(every).await;
            let extended = async {
                let mut tx = begin_tenant(&self.pool, &invocation.tenant).await?;
                let held = webhook_invocations::extend(
                    &mut tx,
                    &invocation.tenant,
                    invocation.id,
                    invocation.attempt,
                    self.config.lease,
                )
                .await?;
                shoal_store::commit(tx).await?;
                Ok::<_, StoreError>(held)
            }
            .await;
            if let Err(error) = extended {
                tracing::debug!(invocation = %invocation.id, %error, "could not extend a claim");
            }
        }
    }

    /// One attempt: the function's response as stored, or why it failed.
    async fn attempt(
        &self,
        invocation: &ClaimedInvocation,
    ) -> Result<serde_json::Value, HandlerFailure> {
        let fail = |detail: &str| HandlerFailure {
            detail: detail.to_owned(),
            field: None,
        };
        if invocation.attempt > MAX_ATTEMPTS {
            // The last attempt's process stopped before recording it.
            return Err(fail(
                "the last attempt was interrupted before the handler's answer was recorded",
            ));
        }
        let app = self
            .catalog
            .app(&invocation.tenant, &invocation.app)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "webhook dispatcher: cannot read the app");
                fail("Shoal could not read the app's configuration")
            })?
            .ok_or_else(|| fail("the app no longer exists"))?;
        let function = app
            .function(&invocation.function)
            .ok_or_else(|| fail("the function no longer exists or has no enabled httpTrigger"))?
            .clone();
        if !app.running {
            return Err(fail("the app is stopped"));
        }
        // Kept from the stored request when calls are recorded (the caller's request is gone).
        let preview = self
            .recording
            .is_on()
            .then(|| serde_json::from_slice(&invocation.payload).ok())
            .flatten()
            .and_then(|body| facts_of(&body, &function.trigger).payload);
        let call = Call {
            app: &app,
            function: &function,
            invocation_id: invocation.id,
            retry_count: invocation.attempt.saturating_sub(1),
            request_id: invocation.request_id.as_deref(),
            caller: None,
            preview,
        };
        let result = deliver(
            &app.invoker,
            &self.recording,
            call,
            invocation.payload.clone(),
        )
        .await?;
        Ok(response_document(&result))
    }

    async fn record(
        &self,
        invocation: &ClaimedInvocation,
        outcome: Result<serde_json::Value, HandlerFailure>,
    ) -> Result<(), StoreError> {
        let (tenant, id, attempt) = (&invocation.tenant, invocation.id, invocation.attempt);
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        let recorded = match &outcome {
            Ok(response) => {
                webhook_invocations::succeed(&mut tx, tenant, &self.cipher, id, attempt, response)
                    .await?
            }
            Err(failure) => match retry_delay(attempt) {
                Some(delay) => {
                    webhook_invocations::retry(
                        &mut tx,
                        tenant,
                        id,
                        attempt,
                        delay,
                        &failure.message(),
                    )
                    .await?
                }
                None => {
                    webhook_invocations::fail(&mut tx, tenant, id, attempt, &failure.message())
                        .await?
                }
            },
        };
        shoal_store::commit(tx).await?;
        if !recorded {
            tracing::info!(
                %tenant, invocation = %id, attempt,
                "webhook dispatcher: the claim was taken over meanwhile; this attempt's outcome is dropped"
            );
        }
        Ok(())
    }
}
