//! A stream listener: one consumer-group member per app instance. Each turn it asks the
//! circuit breaker, fetches a batch (up to the trigger's batch size; Event Hubs waits up to
//! `maxWaitTime` for `minEventBatchSize`), processes it (`batch`) and commits the partitions'
//! next offsets before it fetches again — so a rebalance, which librdkafka serves only while
//! fetching, never takes a partition with work in progress from it.
//!
//! * Breaker open: the member commits what is done and leaves the group, so the partitions'
//!   pointers stay at the last commit; on resume (or for the half-open probe, one event) it
//!   joins again and reads on from there, in order.
//! * Stop: no more fetches; the batch in hand finishes, is committed, and the member leaves.
//! * Abandon (drain deadline, lost lease): the member leaves without committing the batch in
//!   hand, which the partition's next owner reads again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use shoal_connectors::kafka::{KafkaError, KafkaProperties, StreamConsumer, check_cluster};
use shoal_domain::stream_trigger::{Checkpoints, StartFrom, StreamEvent, next_offsets};
use tokio_util::sync::CancellationToken;

use crate::breaker::Admit;
use crate::connections::BROKER_SETTING;
use crate::error::WorkerError;
use crate::stats::ListenerStats;
use crate::triggers::backoff::Retry;
use crate::triggers::stream::StreamFunction;
use crate::triggers::stream::batch;

/// How long one fetch waits for a first event.
const FETCH_WAIT: Duration = Duration::from_secs(1);

pub async fn run(
    ctx: Arc<StreamFunction>,
    properties: KafkaProperties,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let stats = ctx.function.stats.clone();
    let breaker = ctx.function.breaker.clone();
    let mut member: Option<Member> = None;
    let mut checkpoints = Checkpoints::new(ctx.source.checkpoint_every);
    let mut retry = Retry::default();
    loop {
        if breaker.holds_back() {
            if let Some(m) = member.take() {
                m.leave(&ctx, &mut checkpoints).await;
            }
            stats.set_status("paused: the function's circuit breaker is open");
        }
        // Dropped on every way out before a batch takes it, which hands a probe back.
        let Some(admission) = breaker.admit(&stop).await else {
            break;
        };
        let admit = admission.kind();
        if member.is_none() {
            match Member::join(&ctx, &properties).await {
                Ok(joined) => {
                    stats.set_status("listening");
                    member = Some(joined);
                }
                Err(e) => {
                    report(&stats, "joining the consumer group", &e);
                    drop(admission);
                    if !retry.pause(&stop).await {
                        break;
                    }
                    continue;
                }
            }
        }
        let Some(current) = member.as_ref() else {
            continue;
        };
        let want = if admit == Admit::One {
            1
        } else {
            ctx.source.max_batch_size as usize
        };
        // While the handler throttles: one event at a time, none before its latest deferral.
        let (most, wait) = breaker.intake(u32::try_from(want).unwrap_or(u32::MAX));
        if !wait.is_zero() {
            stats.set_status("throttled: the handler asked to slow down");
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(wait) => {}
            }
            stats.set_status("listening");
        }
        let want = (most as usize).clamp(1, want);
        let fetched = tokio::select! {
            _ = stop.cancelled() => break,
            fetched = fetch(&ctx, &current.consumer, want) => fetched,
        };
        let events = match fetched {
            Ok(events) => {
                retry.reset();
                events
            }
            Err(e) => {
                report(&stats, "fetching events", &e);
                drop(admission);
                if !retry.pause(&stop).await {
                    break;
                }
                continue;
            }
        };
        if events.is_empty() {
            continue;
        }
        stats.set_in_flight(events.len());
        let result = batch::process(&ctx, &admission, &events, &abandon).await;
        stats.set_in_flight(0);
        if result.abandoned {
            // Nothing of this batch is committed: its partitions' next owner reads it again.
            member = None;
            break;
        }
        let next = next_offsets(result.done.iter().copied());
        current.commit(&ctx, &mut checkpoints, &next).await;
        if result.held_back
            && let Some(m) = member.take()
        {
            m.leave(&ctx, &mut checkpoints).await;
        }
    }
    stats.set_status("draining");
    if let Some(m) = member {
        if abandon.is_cancelled() {
            m.consumer.close().await;
        } else {
            m.leave(&ctx, &mut checkpoints).await;
        }
    }
    stats.set_in_flight(0);
}

/// This instance's membership of the trigger's consumer group.
struct Member {
    consumer: StreamConsumer,
}

impl Member {
    async fn join(
        ctx: &StreamFunction,
        properties: &KafkaProperties,
    ) -> Result<Member, KafkaError> {
        let source = &ctx.source;
        let consumer = join_group(
            ctx,
            properties,
            &source.consumer_group,
            &source.topic,
            source.start_from,
        )
        .await?;
        Ok(Member { consumer })
    }

    /// Records a finished batch and commits what is due. A failed commit is reported and
    /// offered again after the next batch; until then a crash would read the batch again.
    async fn commit(
        &self,
        ctx: &StreamFunction,
        checkpoints: &mut Checkpoints,
        next: &[(i32, i64)],
    ) {
        if let Ok(assigned) = self.consumer.assignment() {
            checkpoints.retain(&assigned);
        }
        let due = checkpoints.finished(next);
        self.commit_due(ctx, checkpoints, due).await;
    }

    async fn commit_due(
        &self,
        ctx: &StreamFunction,
        checkpoints: &mut Checkpoints,
        due: Vec<(i32, i64)>,
    ) {
        if due.is_empty() {
            return;
        }
        match self.consumer.commit(&ctx.source.topic, &due).await {
            Ok(()) => checkpoints.committed(&due),
            Err(e) => {
                let stats = &ctx.function.stats;
                tracing::warn!(function = stats.key.function, error = %e,
                    "committing the batch's offsets failed; they are committed with the next batch, or the batch is read again");
                stats.error(&WorkerError::SettleMessage(e.into()));
            }
        }
    }

    /// Commits what is done and not yet committed, then leaves the group cleanly, so the
    /// other members take its partitions at once.
    async fn leave(self, ctx: &StreamFunction, checkpoints: &mut Checkpoints) {
        let pending = checkpoints.pending();
        self.commit_due(ctx, checkpoints, pending).await;
        self.consumer.close().await;
    }
}

/// Checks the brokers (bootstrap and advertised) against the app's egress policy, then joins
/// `group` on `topic` (the trigger's, or its retry topic): a broker advertising a refused
/// address is never dialled.
pub(super) async fn join_group(
    ctx: &StreamFunction,
    properties: &KafkaProperties,
    group: &str,
    topic: &str,
    start_from: StartFrom,
) -> Result<StreamConsumer, KafkaError> {
    check_cluster(properties, &ctx.source.topic, BROKER_SETTING, &ctx.egress).await?;
    let f = &ctx.function;
    // Names the member in the broker's group listing; unique per instance, function and group.
    let client_id = format!("shoal-{}-{}-{}-{}", f.tenant, f.app, f.instance, f.function);
    StreamConsumer::subscribe(properties, group, topic, start_from, &client_id)
}

/// Up to `want` events. A first fetch that finds nothing returns at once, so the loop can
/// see a stop or the breaker; otherwise it keeps fetching until `minEventBatchSize` arrived or
/// `maxWaitTime` passed, as Azure's Event Hubs batches do.
async fn fetch(
    ctx: &StreamFunction,
    consumer: &StreamConsumer,
    want: usize,
) -> Result<Vec<StreamEvent>, KafkaError> {
    let stats = &ctx.function.stats;
    stats.polled(chrono::Utc::now());
    let mut events = consumer.fetch(want, FETCH_WAIT).await?;
    let min = (ctx.source.min_batch_size as usize).min(want);
    let started = Instant::now();
    while !events.is_empty() && events.len() < min && started.elapsed() < ctx.source.max_wait {
        let wait = FETCH_WAIT.min(ctx.source.max_wait.saturating_sub(started.elapsed()));
        stats.polled(chrono::Utc::now());
        events.extend(consumer.fetch(want - events.len(), wait).await?);
    }
    Ok(events)
}

fn report(stats: &ListenerStats, step: &str, error: &KafkaError) {
    tracing::warn!(function = stats.key.function, source = stats.key.source, error = %error, "{step} failed");
    stats.set_status(format!("error: {step}: {error}"));
    stats.error(&WorkerError::PollTrigger(error.clone().into()));
}
