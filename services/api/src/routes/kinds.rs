//! The API's part of each trigger kind in `shoal_domain::binding_kinds`: sending a test
//! message to its source, reading and replaying its failed messages, and looking at its
//! source live for diagnostics. The send, poison and diagnostics routes resolve a function's
//! trigger ([`Target::of`]) and find its kind here by the trigger's `type`; a kind with no entry
//! answers 409 (diagnostics: checks nothing live). Adding a kind's routes is a module here and
//! a line in [`KINDS`].
//!
//! A kind answers in plain shapes ([`Sent`], [`FailedMessages`], [`Replayed`]) that the routes
//! turn into their documents, so this module depends on none of them.

mod rabbitmq;
mod service_bus;
mod storage_queue;
mod stream;

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use shoal_domain::binding_kinds::KindBinding;
use shoal_domain::binding_kinds::stream::is_stream;
use shoal_domain::diagnostics::Check;
use shoal_domain::send_message::SendRequest;
use shoal_domain::trigger_source::{TriggerSource, resolve};

use crate::error::ApiError;
use crate::routes::trigger_source::FunctionContext;

/// Every kind with routes, one line each (a kind serving two trigger types has two).
static KINDS: &[&dyn KindRoutes] = &[
    &storage_queue::STORAGE_QUEUE,
    &service_bus::SERVICE_BUS,
    &stream::KAFKA,
    &stream::EVENT_HUBS,
    &rabbitmq::RABBITMQ,
];

/// Longest one read or replay of failed messages waits on the queue service or the brokers.
const STORAGE_TIMEOUT: Duration = Duration::from_secs(30);

/// The routes of the kind whose trigger `type` is `type_name`.
pub(crate) fn find(type_name: &str) -> Option<&'static dyn KindRoutes> {
    KINDS.iter().copied().find(|k| k.type_name() == type_name)
}

/// A trigger of a kind, reached as its app: the function's context, its binding and where it
/// reads.
pub(crate) struct Target<'a> {
    pub context: &'a FunctionContext,
    pub binding: &'a KindBinding,
    pub source: TriggerSource,
}

impl Target<'_> {
    /// The function's trigger and its source, resolved from the app's settings as the worker
    /// resolves it (`shoal_domain::trigger_source::resolve`); None when it has no trigger or one
    /// that reads from nowhere Shoal reaches (`httpTrigger`), 409 when the settings do not
    /// resolve (the function cannot be reached as things stand, whatever the request).
    pub fn of(context: &FunctionContext) -> Result<Option<Target<'_>>, ApiError> {
        let Some(binding) = context.spec.trigger() else {
            return Ok(None);
        };
        match resolve(binding, &context.settings, &context.host) {
            None => Ok(None),
            Some(Ok(source)) => Ok(Some(Target {
                context,
                binding,
                source,
            })),
            Some(Err(e)) => {
                let what = if is_stream(binding) { "topic" } else { "queue" };
                Err(ApiError::Conflict(format!(
                    "the trigger's {what} cannot be used: {e}"
                )))
            }
        }
    }

    /// The answer of a kind given a source it does not read. Not reachable: each trigger type
    /// resolves to its own kind of source, and kinds are found by that type.
    fn unexpected(&self) -> ApiError {
        ApiError::Conflict(format!(
            "the {} reads {}, which its kind's routes do not reach",
            self.binding.type_name(),
            self.source.describe()
        ))
    }
}

pub(crate) trait KindRoutes: Sync {
    /// The trigger's `type`.
    fn type_name(&self) -> &'static str;

    /// Puts `request` on the trigger's source (checked against what it carries: a 422 names
    /// the field).
    fn send<'a>(
        &'a self,
        target: Target<'a>,
        request: SendRequest,
    ) -> BoxFuture<'a, Result<Sent, ApiError>>;

    /// The failed messages' depth and the oldest `top`, with their bodies when `with_bodies`;
    /// nothing is taken from where they are. Bounded in time by the kind (`STORAGE_TIMEOUT`).
    fn failed<'a>(
        &'a self,
        target: Target<'a>,
        top: u8,
        with_bodies: bool,
    ) -> BoxFuture<'a, Result<FailedMessages, ApiError>>;

    /// Moves up to `limit` failed messages (only those in `ids`, when given) back to the
    /// trigger's source, each as a new message with its body intact. Bounded in time by the
    /// kind (`STORAGE_TIMEOUT`).
    fn replay<'a>(
        &'a self,
        target: Target<'a>,
        ids: Option<&'a [String]>,
        limit: u32,
    ) -> BoxFuture<'a, Result<Replayed, ApiError>>;

    /// Whether diagnostics look at the kind's source live ([`KindRoutes::probe`]): a function's
    /// context is loaded for it only then.
    fn probes(&self) -> bool {
        false
    }

    /// What `function`'s trigger source looks like on the broker, as diagnostics checks
    /// (bounded in time: a broker that does not answer is reported, never waited on); none for
    /// a kind whose source diagnostics do not look at live.
    fn probe<'a>(&'a self, _function: &'a str, _target: Target<'a>) -> BoxFuture<'a, Vec<Check>> {
        Box::pin(std::future::ready(Vec::new()))
    }
}

/// What a send put where.
pub(crate) struct Sent {
    pub destination: String,
    pub message_id: Option<String>,
    pub size: u64,
    /// The Service Bus session it went to.
    pub session_id: Option<String>,
    /// The stream record's partition and offset.
    pub partition: Option<i32>,
    pub offset: Option<i64>,
}

/// Where a kind's failed messages are, and the oldest of them.
pub(crate) struct FailedMessages {
    pub source: String,
    pub failed: String,
    pub count: u64,
    pub messages: Vec<FailedMessage>,
}

pub(crate) struct FailedMessage {
    pub message_id: String,
    /// When it was put where failed messages are (written to the poison queue, enqueued on the
    /// dead-letter queue, the dead letter's timestamp, its `x-death` time).
    pub failed_at: DateTime<Utc>,
    /// When the queue drops it; None where the queue's or topic's own rules decide.
    pub expires_at: Option<DateTime<Utc>>,
    pub failures: u32,
    pub reason: Option<String>,
    pub body: Option<String>,
}

/// What a replay moved, and which named messages it did not find.
pub(crate) struct Replayed {
    pub moved: Vec<String>,
    pub not_found: Vec<String>,
}

impl Replayed {
    fn new(moved: Vec<String>, wanted: Wanted<'_>) -> Replayed {
        Replayed {
            moved,
            not_found: wanted.not_found(),
        }
    }
}

/// The failed messages a replay was asked for (`messageIds`), each marked once found; without
/// ids, every message is wanted. Every kind's replay, built-in or of the table, selects with it.
pub(crate) struct Wanted<'a>(Option<BTreeMap<&'a str, bool>>);

impl<'a> Wanted<'a> {
    pub fn new(ids: Option<&'a [String]>) -> Wanted<'a> {
        Wanted(ids.map(|ids| ids.iter().map(|id| (id.as_str(), false)).collect()))
    }

    /// Whether the message `id` is wanted (marking it found).
    pub fn take(&mut self, id: &str) -> bool {
        match &mut self.0 {
            None => true,
            Some(ids) => ids.get_mut(id).map(|found| *found = true).is_some(),
        }
    }

    /// Whether every id asked for has been found: nothing more to look for (never so when no
    /// ids were named).
    pub fn all_found(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|ids| ids.values().all(|found| *found))
    }

    /// The ids asked for and not found, in order.
    pub fn not_found(self) -> Vec<String> {
        self.0
            .map(|ids| {
                ids.into_iter()
                    .filter(|(_, found)| !found)
                    .map(|(id, _)| id.to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A body as text when it is UTF-8, else as base64 (prefixed so the two cannot be confused).
fn body_text(body: &[u8]) -> String {
    match std::str::from_utf8(body) {
        Ok(text) => text.to_owned(),
        Err(_) => format!(
            "base64:{}",
            base64::engine::general_purpose::STANDARD.encode(body)
        ),
    }
}

/// Runs a storage call with the request's time bound, mapping its failure to a 502.
async fn bounded<T, E: std::fmt::Display>(
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, ApiError> {
    match tokio::time::timeout(STORAGE_TIMEOUT, work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(ApiError::Storage(format!("the queue service failed: {e}"))),
        Err(_) => Err(not_answered()),
    }
}

/// Runs a call that answers in the API's own terms with the request's time bound.
async fn timed<T>(work: impl Future<Output = Result<T, ApiError>>) -> Result<T, ApiError> {
    tokio::time::timeout(STORAGE_TIMEOUT, work)
        .await
        .unwrap_or_else(|_| Err(not_answered()))
}

fn not_answered() -> ApiError {
    ApiError::Storage(format!(
        "the queue service did not answer within {} s",
        STORAGE_TIMEOUT.as_secs()
    ))
}

#[cfg(test)]
mod tests {
    use super::Wanted;

    #[test]
    fn named_ids_are_taken_once_found_and_the_rest_reported() {
        let ids = ["b".to_owned(), "a".to_owned()];
        let mut wanted = Wanted::new(Some(&ids));
        assert!(!wanted.take("c"));
        assert!(wanted.take("a"));
        assert!(!wanted.all_found());
        assert_eq!(wanted.not_found(), ["b"]);

        let mut wanted = Wanted::new(Some(&ids));
        assert!(wanted.take("a") && wanted.take("b"));
        assert!(wanted.all_found());

        let mut everything = Wanted::new(None);
        assert!(everything.take("anything"));
        assert!(!everything.all_found());
        assert!(everything.not_found().is_empty());
    }
}
