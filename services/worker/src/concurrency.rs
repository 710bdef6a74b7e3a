//! This instance's part of a function's `maxConcurrency` (see `shoal_domain::concurrency` for
//! the rule and why the bound holds fleet-wide): the slots it leases from Postgres, renewed in
//! the background, and the local gate every handler call of the function passes.
//!
//! A call waits for a slot only while the instance already runs `limit` calls or its lease was
//! not renewed in time; nothing here touches Postgres per message. The listeners also receive
//! no more messages than the instance has room for ([`CallSlots::room`]: twice its limit), so
//! messages do not wait in hand, their locks running down, for slots another instance holds.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shoal_domain::concurrency::Allotment;
use shoal_domain::names::TenantName;
use shoal_domain::workers::ConcurrencyReport;
use shoal_store::breakers::FunctionRef;
use shoal_store::concurrency_slots::{self, Holder, Renewal};
use shoal_store::{StoreError, TenantId, begin_tenant};
use tokio::sync::watch;
// Tokio's clock, so that tests can move it.
use tokio::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::breaker::FunctionKey;

/// How long a renewed lease lasts.
pub const LEASE: Duration = Duration::from_secs(15);
/// How often a settled holder renews (its slots are its fair share).
pub const RENEW_SETTLED: Duration = Duration::from_secs(3);
/// How often a holder renews while it holds more or fewer slots than its share, so a slot one
/// instance gives up reaches the next within a second or so.
pub const RENEW_UNSETTLED: Duration = Duration::from_millis(500);
/// The instance stops starting calls this long before its lease ends by its own clock, which
/// started counting before the renewal did: clocks that run at slightly different rates
/// cannot make it start a call after Postgres considers the lease over.
const MARGIN: Duration = Duration::from_secs(1);

/// The gate of one function on one instance.
#[derive(Debug)]
pub struct CallSlots {
    cap: u32,
    state: Mutex<State>,
    /// Bumped on every change that may let a waiting call start.
    changed: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct State {
    held: u32,
    limit: u32,
    in_use: u32,
    /// No call starts after this (the lease, less the margin); None before the first renewal.
    valid_until: Option<Instant>,
}

impl State {
    fn may_start(&self, now: Instant) -> bool {
        self.in_use < self.effective_limit(now)
    }

    fn effective_limit(&self, now: Instant) -> u32 {
        match self.valid_until {
            Some(until) if now < until => self.limit,
            _ => 0,
        }
    }
}

/// One call's slot, given back when dropped.
pub struct SlotPermit(Arc<CallSlots>);

impl Drop for SlotPermit {
    fn drop(&mut self) {
        self.0.lock().in_use -= 1;
        self.0.changed.send_modify(|v| *v += 1);
    }
}

impl CallSlots {
    pub fn new(cap: u32) -> Arc<CallSlots> {
        Arc::new(CallSlots {
            cap,
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(0),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a slot for one handler call.
    pub async fn acquire(self: &Arc<Self>) -> SlotPermit {
        let mut changed = self.changed.subscribe();
        loop {
            let wake = {
                let mut state = self.lock();
                let now = Instant::now();
                if state.may_start(now) {
                    state.in_use += 1;
                    return SlotPermit(self.clone());
                }
                // A lease that lapses frees nothing; one that is renewed says so.
                state.valid_until.filter(|until| *until > now)
            };
            match wake {
                Some(until) => {
                    tokio::select! {
                        _ = changed.changed() => {}
                        _ = tokio::time::sleep_until(until) => {}
                    }
                }
                None => {
                    let _ = changed.changed().await;
                }
            }
        }
    }

    /// How many more messages the listener may take in while `in_hand` are in hand: up to
    /// twice its limit, so that a message is ready for each slot the moment it frees (as Azure's
    /// queue listener fetches its next batch at `newBatchThreshold`, before the last one ends),
    /// and no more, so messages do not wait in hand for slots other instances hold. 0 while the
    /// lease is not renewed, or the instance's share is 0.
    pub fn room(&self, in_hand: usize) -> u32 {
        let state = self.lock();
        state
            .effective_limit(Instant::now())
            .saturating_mul(2)
            .saturating_sub(u32::try_from(in_hand).unwrap_or(u32::MAX))
    }

    /// Waits until the listener has room for a message while `in_hand()` are in hand, and says
    /// how many it may take in; None once `stop` is cancelled. `status` is told why it waits,
    /// and `listening` once it no longer does.
    pub async fn wait_for_room(
        &self,
        in_hand: impl Fn() -> usize,
        status: impl Fn(String),
        stop: &CancellationToken,
    ) -> Option<u32> {
        let mut waited = false;
        loop {
            let mut changed = self.changed.subscribe();
            let room = self.room(in_hand());
            if room > 0 {
                if waited {
                    status("listening".into());
                }
                return Some(room);
            }
            if !waited {
                status(format!(
                    "waiting for a slot: the function's maxConcurrency {} is in use across its instances",
                    self.cap
                ));
                waited = true;
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                _ = changed.changed() => {}
                // A settled message frees room without a slot changing: look again soon.
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    }

    pub fn report(&self) -> ConcurrencyReport {
        let state = self.lock();
        ConcurrencyReport {
            max_concurrency: self.cap,
            held: state.held,
            limit: state.effective_limit(Instant::now()),
            in_use: state.in_use,
        }
    }

    fn in_use(&self) -> u32 {
        self.lock().in_use
    }

    fn renewed(&self, allotment: Allotment, valid_until: Instant) {
        {
            let mut state = self.lock();
            state.held = allotment.hold;
            state.limit = allotment.limit;
            state.valid_until = Some(valid_until);
        }
        self.changed.send_modify(|v| *v += 1);
    }

    /// The function is gone: nothing starts.
    fn gone(&self) {
        let mut state = self.lock();
        state.held = 0;
        state.limit = 0;
    }
}

/// Where one instance's slots of one function are kept.
pub struct SlotLease {
    pub slots: Arc<CallSlots>,
    pub pool: sqlx::PgPool,
    pub key: FunctionKey,
    pub worker: String,
    pub instance: u32,
    /// This run of the listener (see `concurrency_slots::Holder`).
    pub generation: uuid::Uuid,
    /// The longest one call can run (the handler's timeout).
    pub longest_call: Duration,
}

impl SlotLease {
    /// Runs `listening` with the slots renewed meanwhile; when it ends (its deliveries have
    /// drained), gives the slots up.
    pub async fn renewed_while(self, listening: impl Future<Output = ()>) {
        tokio::select! {
            () = listening => {}
            () = self.keep_renewed() => {}
        }
        // The listener drained, so no call runs; if one still did, the row's `calls_end_by`
        // would cover it, so a failed release only leaves the slots idle until then.
        if let Err(e) = self.release().await {
            tracing::warn!(function = self.key.function, error = %e,
                "giving up the function's concurrency slots failed; they free themselves when the lease ends");
        }
    }

    async fn keep_renewed(&self) {
        let mut failing = false;
        loop {
            let started = Instant::now();
            let next = match self.renew().await {
                Ok(Some(allotment)) => {
                    if failing {
                        tracing::info!(
                            function = self.key.function,
                            "concurrency slots renewed again"
                        );
                        failing = false;
                    }
                    self.slots.renewed(allotment, started + LEASE - MARGIN);
                    if allotment.hold == allotment.share && allotment.limit == allotment.share {
                        RENEW_SETTLED
                    } else {
                        RENEW_UNSETTLED
                    }
                }
                Ok(None) => {
                    self.slots.gone();
                    RENEW_SETTLED
                }
                Err(e) => {
                    if !failing {
                        tracing::warn!(function = self.key.function, error = %e,
                            "renewing the function's concurrency slots failed; no new handler call starts once the lease ends");
                        failing = true;
                    }
                    RENEW_UNSETTLED
                }
            };
            tokio::time::sleep(next).await;
        }
    }

    async fn renew(&self) -> Result<Option<Allotment>, StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, &tenant).await?;
        let allotment = concurrency_slots::renew(
            &mut tx,
            self.function(&tenant),
            self.holder(),
            Renewal {
                cap: self.slots.cap,
                in_use: self.slots.in_use(),
                lease: LEASE,
                longest_call: self.longest_call,
            },
        )
        .await?;
        shoal_store::commit(tx).await?;
        Ok(allotment)
    }

    async fn release(&self) -> Result<(), StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, &tenant).await?;
        concurrency_slots::release(&mut tx, self.function(&tenant), self.holder()).await?;
        shoal_store::commit(tx).await
    }

    fn tenant(&self) -> Result<TenantId, StoreError> {
        TenantName::parse(&self.key.tenant)
            .map(TenantId::new)
            .map_err(|_| StoreError::NotFound)
    }

    fn function<'a>(&'a self, tenant: &'a TenantId) -> FunctionRef<'a> {
        FunctionRef {
            tenant,
            app: &self.key.app,
            function: &self.key.function,
        }
    }

    fn holder(&self) -> Holder<'_> {
        Holder {
            worker: &self.worker,
            instance: self.instance,
            generation: self.generation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allotment(hold: u32, limit: u32) -> Allotment {
        Allotment {
            hold,
            limit,
            share: limit,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn calls_wait_for_a_slot_and_none_start_without_a_lease() {
        let slots = CallSlots::new(2);
        assert_eq!(slots.room(0), 0, "no room before the first renewal");
        let waiting = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiting.is_finished());

        slots.renewed(allotment(2, 2), Instant::now() + Duration::from_secs(10));
        let first = waiting.await.unwrap();
        let second = slots.acquire().await;
        assert_eq!(
            (slots.room(2), slots.room(4), slots.report().in_use),
            (2, 0, 2)
        );
        let third = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(
            !third.is_finished(),
            "a third call must wait at a limit of 2"
        );
        drop(first);
        let third = third.await.unwrap();

        // A lowered limit lets nothing new start until calls end below it.
        slots.renewed(allotment(2, 1), Instant::now() + Duration::from_secs(10));
        drop(second);
        let fourth = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!fourth.is_finished(), "one call runs at a limit of 1");
        drop(third);
        let fourth = fourth.await.unwrap();
        drop(fourth);

        // A lease that is not renewed stops new calls when it ends.
        tokio::time::sleep(Duration::from_secs(11)).await;
        assert_eq!((slots.room(0), slots.report().limit), (0, 0));
        let late = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire().await }
        });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!late.is_finished(), "no call starts on a lapsed lease");
        slots.renewed(allotment(2, 2), Instant::now() + Duration::from_secs(10));
        late.await.unwrap();
    }
}
