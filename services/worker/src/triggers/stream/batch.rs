//! One fetched batch, from invocation to "done": which events are invoked together, in what
//! order, and what happens to those whose final attempt failed.
//!
//! Order: each partition is a lane whose invocations run one after another in offset order;
//! lanes run side by side (the Kafka extension's `SingleItemFunctionExecutor` does the same:
//! "one task per partition … order in a partition must be followed"). With `cardinality: many`
//! Kafka invokes the whole fetch at once (`MultipleItemFunctionExecutor`) and Event Hubs each
//! partition's part (its extension's batches are per partition).
//!
//! An invocation is done when the handler succeeded, when its events were parked for a
//! far-off retry, or, once the retry policy is exhausted, when its events were written to the
//! dead-letter target. A handler may answer a batch with
//! `batchItemFailures` (the domain's `batch_outcome`): the events it names are retried as a
//! smaller batch under the same policy (with their own `webhook-id`), the others count as
//! succeeded, and only the named ones are dead-lettered when the retries run out. A retry far
//! enough off (`shoal_domain::durable_retry`) is not waited for: the events still failing are
//! parked on the retry topic (`parking`) and are done here. A lane stops early — its remaining
//! events not invoked, so not done — when the circuit breaker holds the function back or the
//! listener is abandoned; the listener then commits only what is done.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::future::join_all;
use shoal_domain::bindings::Cardinality;
use shoal_domain::durable_retry::RetryState;
use shoal_domain::invocation::HandlerResponse;
use shoal_domain::stream_trigger::batch_outcome::{failed_items, reported_failure};
use shoal_domain::stream_trigger::source::StreamKind;
use shoal_domain::stream_trigger::{StreamEvent, StreamInvocation, batch_payload, single_payload};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::breaker::{Admission, Turn};
use crate::invocation::{Accepted, Hold, Outcome, Retries};
use crate::triggers::stream::StreamFunction;

/// What became of a batch.
#[derive(Debug, Default)]
pub struct BatchResult {
    /// `(partition, offset)` of every event that is done.
    pub done: Vec<(i32, i64)>,
    /// The circuit breaker held events back, or the handler could not take them for as long as
    /// the batch can wait: the stream must leave the group and read them again.
    pub held_back: bool,
    /// The listener was abandoned mid-batch: nothing more may be committed.
    pub abandoned: bool,
}

/// How one invocation's events ended.
pub(super) enum End {
    /// Succeeded, dead-lettered or parked on the retry topic: the checkpoint may pass them.
    Done,
    /// The circuit breaker held them back: read them again once it closes.
    HeldBack,
    /// The listener was abandoned: nothing more may be committed.
    Abandoned,
}

/// Invokes `events` (in fetch order, which is offset order within each partition).
pub async fn process(
    ctx: &Arc<StreamFunction>,
    admission: &Admission,
    events: &[StreamEvent],
    abandon: &CancellationToken,
) -> BatchResult {
    let lanes = lanes(ctx.source.kind, ctx.source.cardinality, events);
    let hold = batch_hold();
    let ends = join_all(
        lanes
            .into_iter()
            .map(|units| run_lane(ctx, admission, units, hold, abandon)),
    )
    .await;
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
    admission: &Admission,
    units: Vec<Vec<&StreamEvent>>,
    hold: Hold,
    abandon: &CancellationToken,
) -> (Vec<(i32, i64)>, End) {
    let mut done = Vec::new();
    for unit in units {
        let turn = admission.turn();
        match invoke(ctx, turn, &unit, RetryState::default(), hold, abandon).await {
            End::Done => done.extend(unit.iter().map(|e| (e.partition, e.offset))),
            end => return (done, end),
        }
    }
    (done, End::Done)
}

/// How long a batch fetched now may hold its events while the handler cannot take them
/// (unreachable, or throttling with 429/503): the member must fetch again within
/// `max.poll.interval.ms` (5 minutes at least, see `consumer_properties`) or be thrown out of the
/// group. Past it the events not done are read again from the last commit: the partition
/// pauses, and no attempt is counted.
pub(super) fn batch_hold() -> Hold {
    Hold {
        until: Some(Instant::now() + BATCH_HOLD),
    }
}

const BATCH_HOLD: Duration = Duration::from_secs(180);

/// Invokes `events` together, their retries starting from `from` (a parked record's state, or
/// the first attempt's), until they are done or held back; the handler's unavailability is
/// waited out up to `hold`.
pub(super) async fn invoke(
    ctx: &StreamFunction,
    mut turn: Turn,
    events: &[&StreamEvent],
    from: RetryState,
    hold: Hold,
    abandon: &CancellationToken,
) -> End {
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
        retry_count = from.retries, invocation_id = %invocation_id);
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
        let mut retries = Retries {
            from,
            park: true,
        };
        let failure = loop {
            let outcome = tokio::select! {
                outcome = function.invoke_partly(&mut turn, invocation_id, &request, &accept, &partly_done, hold, retries) => outcome,
                _ = abandon.cancelled() => Outcome::Abandoned,
            };
            match outcome {
                Outcome::Succeeded => {
                    for _ in lock(&left.events).iter() {
                        function.stats.succeeded();
                    }
                    return End::Done;
                }
                Outcome::Abandoned if !abandon.is_cancelled() => {
                    tracing::warn!("the handler could not take the events for as long as the batch can wait; they are read again from the last commit (no attempt counted)");
                    return End::HeldBack;
                }
                Outcome::Abandoned => {
                    tracing::warn!("drain deadline passed or lease lapsed mid-batch; its offsets are not committed, so the batch is read again");
                    return End::Abandoned;
                }
                Outcome::Parked(parked) => {
                    let events = lock(&left.events).clone();
                    // The parked records' group: this park of these events, apart from their
                    // earlier parks that a crash before a commit may let be read again.
                    let batch = format!("{}:retry-{}", webhook_id(&events), parked.state.retries);
                    match ctx.retries.park(&events, &parked, &batch).await {
                        Ok(()) => {
                            for _ in &events {
                                function.stats.parked();
                            }
                            tracing::info!(topic = ctx.retries.topic(), events = events.len(), retry = parked.state.retries,
                                due_in = ?parked.wait, "parked on the retry topic until the retry is due; the checkpoint moves on");
                            return End::Done;
                        }
                        Err(error) => {
                            // The retry topic cannot be written: wait here, as before parking,
                            // and go on under the policy without parking again.
                            tracing::warn!(topic = ctx.retries.topic(), error = %error, wait = ?parked.wait,
                                "the retry topic cannot be written; the retry is waited for on this instance and the partition waits on it");
                            tokio::select! {
                                () = tokio::time::sleep(parked.wait) => {}
                                () = abandon.cancelled() => return End::Abandoned,
                            }
                            retries = Retries {
                                from: parked.state,
                                park: false,
                            };
                        }
                    }
                }
                Outcome::Failed(failure) => break failure,
            }
        };
        let failed = lock(&left.events).clone();
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
pub(super) fn webhook_id(events: &[&StreamEvent]) -> String {
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
