//! The reader of a stream trigger's retry topic (`parking`; the domain's
//! `stream_trigger::retry_topic`): on every app instance, one member of the consumer group
//! `<consumerGroup>-retry`, so the retry topic's partitions are spread over the instances as the
//! trigger's are and a dead instance's records are read by the others.
//!
//! It joins once the retry topic exists: at once when it does, when this instance first parks
//! something, or at its next look at the brokers (every minute, for a function with a retry
//! policy; without one nothing is parked, so it looks once), so the records of an instance that
//! died are read by the others. A retry-topic partition is read in order: a record that is
//! due is resumed — invoked with the retries it parked with, by `batch::invoke`, which parks it
//! again, dead-letters it or succeeds — and one that is not yet due pauses its partition (the
//! member goes on fetching, so it stays in the group however long the wait) until it is; the
//! offsets are committed after each fetch's records are done, up to the first that waits. The
//! records of one park that sit side by side (a batch's events) are invoked together.
//!
//! A record Shoal did not write (its headers unreadable) goes to the dead-letter target as it
//! is. The circuit breaker stops the reader as it stops the trigger: the member leaves and
//! joins again once the breaker lets invocations through.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use shoal_connectors::kafka::{KafkaError, KafkaProperties, StreamConsumer, partition_count};
use shoal_domain::bindings::Cardinality;
use shoal_domain::stream_trigger::retry_topic::{ParkedEvent, parked_event, retry_group};
use shoal_domain::stream_trigger::{StartFrom, StreamEvent, next_offsets};
use tokio_util::sync::CancellationToken;

use crate::error::WorkerError;
use crate::triggers::backoff::Retry;
use crate::triggers::stream::StreamFunction;
use crate::triggers::stream::batch::{self, End};
use crate::triggers::stream::listener::join_group;

/// How often a reader without a retry topic looks whether one was made (by another instance).
const LOOK_EVERY: Duration = Duration::from_secs(60);
/// How long one fetch waits for a first record.
const FETCH_WAIT: Duration = Duration::from_secs(1);
/// How many records one fetch takes for `cardinality: one`: they are invoked one after another,
/// and the member must fetch again within `max.poll.interval.ms`.
const SINGLE_FETCH: usize = 16;

pub async fn run(
    ctx: Arc<StreamFunction>,
    properties: KafkaProperties,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let mut retry = Retry::default();
    while retry_topic_exists(&ctx, &properties, &stop).await {
        let group = retry_group(&ctx.source.consumer_group);
        let topic = ctx.retries.topic();
        let consumer = match join_group(&ctx, &properties, &group, topic, StartFrom::Earliest).await
        {
            Ok(consumer) => {
                retry.reset();
                consumer
            }
            Err(e) => {
                report(&ctx, "joining the retry topic's group", &e);
                if !retry.pause(&stop).await {
                    return;
                }
                continue;
            }
        };
        let ended = read(&ctx, &consumer, &stop, &abandon).await;
        consumer.close().await;
        match ended {
            Ended::Stopped | Ended::Abandoned => return,
            Ended::HeldBack => {
                if !breaker_lets_through(&ctx, &stop).await {
                    return;
                }
            }
            Ended::Failed(e) => {
                report(&ctx, "reading the retry topic", &e);
                if !retry.pause(&stop).await {
                    return;
                }
            }
        }
    }
}

/// Waits until the retry topic exists; false if stopped first.
async fn retry_topic_exists(
    ctx: &StreamFunction,
    properties: &KafkaProperties,
    stop: &CancellationToken,
) -> bool {
    loop {
        let answered = match look(ctx, properties).await {
            Ok(true) => return true,
            Ok(false) => true,
            Err(e) => {
                tracing::debug!(topic = ctx.retries.topic(), error = %e,
                    "cannot tell whether the retry topic exists; looking again later");
                false
            }
        };
        // Without a retry policy nothing is parked: one answered look (for what an earlier
        // policy parked) is enough.
        let look_again = ctx.function.retry.is_some() || !answered;
        tokio::select! {
            () = stop.cancelled() => return false,
            () = ctx.retries.written() => {}
            () = tokio::time::sleep(LOOK_EVERY), if look_again => {}
        }
    }
}

/// Whether the brokers have the retry topic, asked once they pass the egress policy.
async fn look(ctx: &StreamFunction, properties: &KafkaProperties) -> Result<bool, KafkaError> {
    shoal_connectors::kafka::check_cluster(
        properties,
        &ctx.source.topic,
        crate::connections::BROKER_SETTING,
        &ctx.egress,
    )
    .await?;
    Ok(partition_count(properties, ctx.retries.topic())
        .await?
        .is_some())
}

/// Waits while the circuit breaker holds the function back; false if stopped first.
async fn breaker_lets_through(ctx: &StreamFunction, stop: &CancellationToken) -> bool {
    while ctx.function.breaker.holds_back() {
        tokio::select! {
            () = stop.cancelled() => return false,
            () = tokio::time::sleep(FETCH_WAIT) => {}
        }
    }
    true
}

/// A retry-topic partition paused at the record `offset`, which is due at `due`.
struct Paused {
    due: DateTime<Utc>,
    offset: i64,
    /// Paused by an earlier fetch than the one being read.
    fetch_before: bool,
}

enum Ended {
    Stopped,
    Abandoned,
    HeldBack,
    Failed(KafkaError),
}

async fn read(
    ctx: &StreamFunction,
    consumer: &StreamConsumer,
    stop: &CancellationToken,
    abandon: &CancellationToken,
) -> Ended {
    // The partitions paused on a record not yet due.
    let mut paused: BTreeMap<i32, Paused> = BTreeMap::new();
    let want = match ctx.source.cardinality {
        Cardinality::One => SINGLE_FETCH.min(ctx.source.max_batch_size as usize),
        Cardinality::Many => ctx.source.max_batch_size as usize,
    }
    .max(1);
    loop {
        if ctx.function.breaker.holds_back() {
            return Ended::HeldBack;
        }
        let now = Utc::now();
        paused.retain(|&partition, pause| {
            if pause.due > now {
                return true;
            }
            if let Err(e) = consumer.resume(partition) {
                // Taken away by a rebalance meanwhile: its new owner reads it from the commit.
                tracing::debug!(partition, error = %e, "resuming a retry-topic partition failed");
            }
            false
        });
        let wait = paused
            .values()
            .map(|pause| pause.due)
            .min()
            .and_then(|due| (due - now).to_std().ok())
            .map_or(FETCH_WAIT, |until| until.min(FETCH_WAIT))
            .max(Duration::from_millis(10));
        let records = tokio::select! {
            () = stop.cancelled() => return Ended::Stopped,
            fetched = consumer.fetch(want, wait) => match fetched {
                Ok(records) => records,
                Err(e) => return Ended::Failed(e),
            },
        };
        if records.is_empty() {
            continue;
        }
        let (done, ended) = resume_due(ctx, consumer, &records, &mut paused, abandon).await;
        if matches!(ended, Some(Ended::Abandoned)) {
            return Ended::Abandoned;
        }
        let next = next_offsets(done);
        if let Err(e) = consumer.commit(ctx.retries.topic(), &next).await {
            // The records are read again: by this member, or the partition's next owner.
            tracing::warn!(topic = ctx.retries.topic(), error = %e,
                "committing the retry topic's offsets failed; its records are read again");
            ctx.function
                .stats
                .error(&WorkerError::SettleMessage(e.into()));
        }
        if let Some(ended) = ended {
            return ended;
        }
    }
}

/// Invokes the fetched records that are due, in order within each partition, and pauses a
/// partition at its first record that is not. Returns the `(partition, offset)` of every record
/// done — per partition, an unbroken run from the fetch's first — and why it stopped early.
async fn resume_due(
    ctx: &StreamFunction,
    consumer: &StreamConsumer,
    records: &[StreamEvent],
    paused: &mut BTreeMap<i32, Paused>,
    abandon: &CancellationToken,
) -> (Vec<(i32, i64)>, Option<Ended>) {
    let mut done = Vec::new();
    // Paused partitions whose records came anyway, paused again in this call.
    let mut paused_again = BTreeSet::new();
    let hold = batch::batch_hold();
    let units = units(records, ctx.source.cardinality);
    for unit in units {
        let (partition, offset) = unit.first_record();
        // A partition paused by an earlier record of this fetch is read again from there once
        // resumed. Records of one paused by an earlier fetch mean the pause did not hold (a
        // rebalance took the partition away and gave it back, read from the last commit): it is
        // paused again at the earlier of the two offsets, so nothing is skipped.
        if let Some(pause) = paused.get_mut(&partition) {
            if pause.fetch_before && paused_again.insert(partition) {
                pause.offset = pause.offset.min(offset);
                if let Err(e) = consumer.pause_at(partition, pause.offset).await {
                    return (done, Some(Ended::Failed(e)));
                }
            }
            continue;
        }
        let parked = match unit {
            Unit::Unreadable(record, reason) => {
                let reason = format!("not a retry record Shoal wrote: {reason}");
                tracing::warn!(
                    topic = record.topic,
                    partition,
                    offset,
                    reason,
                    "writing the record to the dead-letter target"
                );
                let f = &ctx.function;
                if !ctx
                    .dead_letters
                    .write(&[record], &f.function, &reason, &f.stats, abandon)
                    .await
                {
                    return (done, Some(Ended::Abandoned));
                }
                done.push((partition, offset));
                continue;
            }
            Unit::Parked(parked) => parked,
        };
        // Not `durable_retry::on_return`'s leeway for a broker's clock: the wait is this
        // reader's own, so a record is never tried before its due time by the workers' clocks.
        if parked[0].due > Utc::now() {
            if let Err(e) = consumer.pause_at(partition, offset).await {
                return (done, Some(Ended::Failed(e)));
            }
            paused.insert(
                partition,
                Paused {
                    due: parked[0].due,
                    offset,
                    fetch_before: false,
                },
            );
            continue;
        }
        let events: Vec<&StreamEvent> = parked.iter().map(|p| &p.event).collect();
        let from = parked[0].state.clone();
        let turn = ctx.function.breaker.counted_turn();
        match batch::invoke(ctx, turn, &events, from, hold, abandon).await {
            End::Done => done.extend(parked.iter().map(|p| p.record)),
            End::HeldBack => return (done, Some(Ended::HeldBack)),
            End::Abandoned => return (done, Some(Ended::Abandoned)),
        }
    }
    for pause in paused.values_mut() {
        pause.fetch_before = true;
    }
    (done, None)
}

/// What one invocation of the reader takes: the parked events of one park that sit side by
/// side in a partition (one each for `cardinality: one`), or a record it cannot read.
enum Unit<'a> {
    Parked(Vec<ParkedEvent>),
    Unreadable(&'a StreamEvent, String),
}

impl Unit<'_> {
    fn first_record(&self) -> (i32, i64) {
        match self {
            Unit::Parked(parked) => parked[0].record,
            Unit::Unreadable(record, _) => (record.partition, record.offset),
        }
    }
}

/// `records` (in fetch order, which is offset order within each partition) as the units they
/// are invoked in.
fn units(records: &[StreamEvent], cardinality: Cardinality) -> Vec<Unit<'_>> {
    let mut units: Vec<Unit<'_>> = Vec::new();
    // Where the last unit of each partition is in `units`, to extend it.
    let mut last: BTreeMap<i32, usize> = BTreeMap::new();
    for record in records {
        let parked = match parked_event(record) {
            Ok(parked) => parked,
            Err(reason) => {
                last.insert(record.partition, units.len());
                units.push(Unit::Unreadable(record, reason));
                continue;
            }
        };
        if cardinality == Cardinality::Many
            && let Some(&at) = last.get(&record.partition)
            && let Unit::Parked(unit) = &mut units[at]
            && unit[0].batch == parked.batch
        {
            unit.push(parked);
            continue;
        }
        last.insert(record.partition, units.len());
        units.push(Unit::Parked(vec![parked]));
    }
    units
}

fn report(ctx: &StreamFunction, step: &str, error: &KafkaError) {
    let stats = &ctx.function.stats;
    tracing::warn!(function = stats.key.function, topic = ctx.retries.topic(), error = %error,
        "{step} failed; parked retries wait until it succeeds");
    stats.error(&WorkerError::PollTrigger(error.clone().into()));
}

#[cfg(test)]
mod tests {
    use shoal_domain::durable_retry::RetryState;
    use shoal_domain::stream_trigger::retry_topic::retry_headers;

    use super::*;

    fn record(partition: i32, offset: i64, batch: &str) -> StreamEvent {
        let due = DateTime::from_timestamp_millis(1_000).unwrap();
        let event = StreamEvent::at("orders", 0, offset * 10);
        let headers = retry_headers(&event, &RetryState::default(), due, batch);
        StreamEvent {
            headers: headers.into_iter().map(|(k, v)| (k, Some(v))).collect(),
            ..StreamEvent::at("orders-retry", partition, offset)
        }
    }

    fn shape(units: &[Unit<'_>]) -> Vec<Vec<(i32, i64)>> {
        units
            .iter()
            .map(|u| match u {
                Unit::Parked(p) => p.iter().map(|p| p.record).collect(),
                Unit::Unreadable(r, _) => vec![(r.partition, -r.offset)],
            })
            .collect()
    }

    #[test]
    fn a_parks_records_side_by_side_are_invoked_together_only_for_batches() {
        let junk = StreamEvent::at("orders-retry", 0, 4);
        let records = [
            record(0, 1, "a"),
            record(1, 7, "a"),
            record(0, 2, "a"),
            record(0, 3, "b"),
            junk,
            record(0, 5, "b"),
            record(0, 6, "a"),
        ];
        assert_eq!(
            shape(&units(&records, Cardinality::Many)),
            [
                vec![(0, 1), (0, 2)],
                vec![(1, 7)],
                vec![(0, 3)],
                vec![(0, -4)],
                vec![(0, 5)],
                vec![(0, 6)],
            ],
            "a park's records are grouped while they sit side by side in their partition"
        );
        assert_eq!(
            shape(&units(&records, Cardinality::One)).len(),
            records.len(),
            "one event per invocation"
        );
    }
}
