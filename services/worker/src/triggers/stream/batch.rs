//! One fetched batch, from invocation to "done": which events are invoked together, in what
//! order, and what happens to those whose final attempt failed.
//!
//! Order: each partition is a lane whose invocations run one after another in offset order;
//! lanes run side by side (the Kafka extension's `SingleItemFunctionExecutor` does the same:
//! "one task per partition … order in a partition must be followed"). With `cardinality: many`
//! Kafka invokes the whole fetch at once (`MultipleItemFunctionExecutor`) and Event Hubs each
//! partition's part (its extension's batches are per partition).
//!
//! An invocation is done when the handler succeeded or, once the retry policy is exhausted,
//! its events were written to the dead-letter target. A handler may answer a batch with
//! `batchItemFailures` (the domain's `batch_outcome`): the events it names are retried as a
//! smaller batch under the same policy (with their own `webhook-id`), the others count as
//! succeeded, and only the named ones are dead-lettered when the retries run out. A lane stops early — its remaining
//! events not invoked, so not done — when the circuit breaker holds the function back or the
//! listener is abandoned; the listener then commits only what is done.

use std::sync::{Arc, Mutex};

use chrono::Utc;
use futures::future::join_all;
use shoal_domain::bindings::Cardinality;
use shoal_domain::invocation::HandlerResponse;
use shoal_domain::stream_trigger::batch_outcome::{failed_items, reported_failure};
use shoal_domain::stream_trigger::source::StreamKind;
use shoal_domain::stream_trigger::{StreamEvent, StreamInvocation, batch_payload, single_payload};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::invocation::{Accepted, Outcome};
use crate::triggers::stream::StreamFunction;

/// What became of a batch.
#[derive(Debug, Default)]
pub struct BatchResult {
    /// `(partition, offset)` of every event that is done.
    pub done: Vec<(i32, i64)>,
    /// The circuit breaker held events back: the stream must stop and leave the group.
    pub held_back: bool,
    /// The listener was abandoned mid-batch: nothing more may be committed.
    pub abandoned: bool,
}

enum End {
    Done,
    HeldBack,
    Abandoned,
}

/// Invokes `events` (in fetch order, which is offset order within each partition).
pub async fn process(
    ctx: &Arc<StreamFunction>,
    events: &[StreamEvent],
    abandon: &CancellationToken,
) -> BatchResult {
    let lanes = lanes(ctx.source.kind, ctx.source.cardinality, events);
    let ends = join_all(lanes.into_iter().map(|units| run_lane(ctx, units, abandon))).await;
    let mut result = BatchResult::default();
    for (done, end) in ends {
        result.done.extend(done);
        match end {
            End::Done => {}
            End::HeldBack => result.held_back = true,
            End::Abandoned => result.abandoned = true,
        }
    }
    result
}

/// The invocations of a batch, grouped into lanes that run side by side; each lane's
/// invocations (each a slice of events) run in order.
fn lanes(
    kind: StreamKind,
    cardinality: Cardinality,
    events: &[StreamEvent],
) -> Vec<Vec<Vec<&StreamEvent>>> {
    let mut partitions: Vec<(i32, Vec<&StreamEvent>)> = Vec::new();
    for event in events {
        match partitions.iter_mut().find(|(p, _)| *p == event.partition) {
            Some((_, lane)) => lane.push(event),
            None => partitions.push((event.partition, vec![event])),
        }
    }
    match (cardinality, kind) {
        (Cardinality::One, _) => partitions
            .into_iter()
            .map(|(_, lane)| lane.into_iter().map(|e| vec![e]).collect())
            .collect(),
        (Cardinality::Many, StreamKind::Kafka) => vec![vec![events.iter().collect()]],
        (Cardinality::Many, StreamKind::EventHubs) => {
            partitions.into_iter().map(|(_, lane)| vec![lane]).collect()
        }
    }
}

async fn run_lane(
    ctx: &Arc<StreamFunction>,
    units: Vec<Vec<&StreamEvent>>,
    abandon: &CancellationToken,
) -> (Vec<(i32, i64)>, End) {
    let mut done = Vec::new();
    for unit in units {
        match invoke(ctx, &unit, abandon).await {
            End::Done => done.extend(unit.iter().map(|e| (e.partition, e.offset))),
            end => return (done, end),
        }
    }
    (done, End::Done)
}

async fn invoke(ctx: &StreamFunction, events: &[&StreamEvent], abandon: &CancellationToken) -> End {
    let function = &ctx.function;
    // Fetched as the breaker opened: not invoked, read again after it closes.
    if !function.breaker.invokes() {
        return End::HeldBack;
    }
    for _ in events {
        function.stats.received();
    }
    let invocation_id = Uuid::now_v7();
    let first = events[0];
    let span = tracing::info_span!("delivery", tenant = function.tenant, app = function.app,
        instance = function.instance, function = function.function, topic = first.topic,
        partition = first.partition, offset = first.offset, events = events.len(),
        invocation_id = %invocation_id);
    let left = Left::new(events);
    async {
        let request = || {
            let events = lock(&left.events);
            let rand_guid = Uuid::new_v4().to_string();
            let context = StreamInvocation {
                kind: ctx.source.kind,
                binding: &ctx.binding,
                function: &function.function,
                data_type: ctx.data_type,
                consumer_group: &ctx.source.consumer_group,
                namespace: ctx.source.property("bootstrap.servers").unwrap_or_default(),
                now: Utc::now(),
                rand_guid: &rand_guid,
            };
            let payload = match events.as_slice() {
                [one] if ctx.source.cardinality == Cardinality::One => {
                    single_payload(&context, one)
                }
                _ => batch_payload(&context, &events),
            };
            // A retry of fewer events is other events: it gets their own idempotency key.
            Ok((webhook_id(&events), payload))
        };
        let accept = |response: &HandlerResponse| left.accept(response);
        let partly_done = || {
            let succeeded = left.partly_done();
            for _ in 0..succeeded {
                function.stats.succeeded();
            }
        };
        let outcome = tokio::select! {
            outcome = function.invoke_partly(invocation_id, request, accept, partly_done) => outcome,
            _ = abandon.cancelled() => Outcome::Abandoned,
        };
        let failed = lock(&left.events).clone();
        match outcome {
            Outcome::Succeeded => {
                for _ in &failed {
                    function.stats.succeeded();
                }
                End::Done
            }
            Outcome::Abandoned => {
                function.breaker.probe_abandoned();
                tracing::warn!("drain deadline passed or lease lapsed mid-batch; its offsets are not committed, so the batch is read again");
                End::Abandoned
            }
            // Never: `invoke_partly` parks nothing. Reading the batch again loses nothing.
            Outcome::Parked(_) => End::Abandoned,
            Outcome::Failed(failure) => {
                let reason = failure.reason;
                if let Some(wait) = failure.retry_after {
                    tracing::warn!(reason, retry_after = ?wait,
                        "the handler asked for a later try once the retry policy was spent; a stream's events go to the dead-letter target now, not later (docs/triggers.md)");
                }
                for _ in &failed {
                    function.stats.failed();
                }
                if function.breaker.holds_back() {
                    tracing::warn!(reason, "invocation failed while the function's circuit breaker is open; the stream stops here and resumes from the last checkpoint");
                    return End::HeldBack;
                }
                tracing::warn!(reason, target = ctx.dead_letters.describe(), events = failed.len(),
                    "invocation failed after its retries; writing its failed events to the dead-letter target before the checkpoint moves on");
                let stats = &function.stats;
                if ctx
                    .dead_letters
                    .write(&failed, &function.function, &reason, stats, abandon)
                    .await
                {
                    End::Done
                } else {
                    End::Abandoned
                }
            }
        }
    }
    .instrument(span)
    .await
}

/// The events of one invocation that are not done yet: every event at first, then those the
/// handler reported failed in `batchItemFailures` (see the domain's `batch_outcome`).
struct Left<'a> {
    events: Mutex<Vec<&'a StreamEvent>>,
    /// A partial answer's failed events, until its outputs are written.
    reported: Mutex<Option<Vec<&'a StreamEvent>>>,
}

impl<'a> Left<'a> {
    fn new(events: &[&'a StreamEvent]) -> Left<'a> {
        Left {
            events: Mutex::new(events.to_vec()),
            reported: Mutex::new(None),
        }
    }

    /// Reads a successful answer: done, done in part, or (an unreadable `batchItemFailures`)
    /// a failed attempt.
    fn accept(&self, response: &HandlerResponse) -> Result<Accepted<()>, String> {
        let events = lock(&self.events);
        let failed = failed_items(response.batch_item_failures.as_ref(), &events)?;
        if failed.is_empty() {
            return Ok(Accepted::Done(()));
        }
        let reason = reported_failure(failed.len(), events.len());
        *lock(&self.reported) = Some(failed.iter().map(|&i| events[i]).collect());
        Ok(Accepted::Partly(reason))
    }

    /// The partial answer's outputs are written: only its failed events are left. Returns how
    /// many succeeded.
    fn partly_done(&self) -> usize {
        let Some(failed) = lock(&self.reported).take() else {
            return 0;
        };
        let mut events = lock(&self.events);
        let succeeded = events.len() - failed.len();
        *events = failed;
        succeeded
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The idempotency key the handler sees (`webhook-id`), the same whenever the same events are
/// read again: the topic, partition and offset, or for a batch the range it spans.
fn webhook_id(events: &[&StreamEvent]) -> String {
    match events {
        [one] => format!("{}-{}-{}", one.topic, one.partition, one.offset),
        [first, .., last] => format!(
            "{}-{}-{}-{}-{}-{}",
            first.topic,
            first.partition,
            first.offset,
            last.partition,
            last.offset,
            events.len()
        ),
        [] => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(partition: i32, offset: i64) -> StreamEvent {
        StreamEvent::at("t", partition, offset)
    }

    fn shape(lanes: Vec<Vec<Vec<&StreamEvent>>>) -> Vec<Vec<Vec<(i32, i64)>>> {
        lanes
            .into_iter()
            .map(|l| {
                l.into_iter()
                    .map(|u| u.into_iter().map(|e| (e.partition, e.offset)).collect())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn events_are_invoked_in_order_per_partition_and_batched_as_each_extension_does() {
        let events = [event(0, 1), event(1, 7), event(0, 2), event(1, 8)];
        assert_eq!(
            shape(lanes(StreamKind::Kafka, Cardinality::One, &events)),
            [
                vec![vec![(0, 1)], vec![(0, 2)]],
                vec![vec![(1, 7)], vec![(1, 8)]]
            ]
        );
        assert_eq!(
            shape(lanes(StreamKind::Kafka, Cardinality::Many, &events)),
            [vec![vec![(0, 1), (1, 7), (0, 2), (1, 8)]]]
        );
        assert_eq!(
            shape(lanes(StreamKind::EventHubs, Cardinality::Many, &events)),
            [vec![vec![(0, 1), (0, 2)]], vec![vec![(1, 7), (1, 8)]]]
        );
    }

    #[test]
    fn webhook_ids_are_stable_for_the_same_events() {
        let (a, b) = (event(3, 10), event(3, 12));
        assert_eq!(webhook_id(&[&a]), "t-3-10");
        assert_eq!(webhook_id(&[&a, &b]), "t-3-10-3-12-2");
    }
}
